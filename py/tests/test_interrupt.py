"""Interruptible runs (issue 22, point 4): Ctrl-C ends a real engine run within a
second, from the command line and from ``Scenario.run()``, with nothing partial left;
the check for signals changes no result."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import mobiflow
from mobiflow import _mobiflow

from .conftest import ROOT, start_cli

# The long runs' simulated length. The tiny scenario simulates about 30,000 s per second
# of wall time without its series (2026-11-28: 100,000 s in 3.4 s; a piped run
# interrupted after 3.5 s no longer outlasted 100,000 s once the engine got faster), so
# this is about six minutes: far longer than any test waits, with room for the engine
# to grow faster still.
LONG_S = 10_000_000.0


def long_scenario(tiny: Path, tmp_path: Path) -> Path:
    """The tiny scenario made to run for far longer than any test waits (`LONG_S`)."""
    text = tiny.read_text(encoding="utf-8").replace(
        'duration = "5s"', f'duration = "{LONG_S:.0f}s"'
    )
    text = text.replace('intervals = { first = ["0s", "2s"], rest = ["2s", "5s"] }', "")
    # No series: sampled every 100 ms over `LONG_S` it would exceed any memory budget.
    text = text.replace('sample_interval = "100ms"', 'sample_interval = "0s"')
    path = tmp_path / "long.toml"
    path.write_text(text, encoding="utf-8")
    return path


def interrupt_after(proc: subprocess.Popen[str], wait_s: float) -> tuple[float, str, str]:
    """Send SIGINT after ``wait_s``; the seconds until the process ended, its output."""
    time.sleep(wait_s)
    assert proc.poll() is None, "still running when interrupted"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    return time.monotonic() - sent, stdout, stderr


def test_ctrl_c_ends_a_long_mobiflow_run_with_130(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = start_cli("run", long_scenario(tiny, tmp_path), "--out", out, "--budget", "64GB")
    took, stdout, stderr = interrupt_after(proc, 3.0)
    assert proc.returncode == 130, stderr
    assert took < 1.5, f"took {took:.2f} s to stop"
    assert "Traceback" not in stderr
    assert stdout == "", "no summary is presented"
    assert not (out / "summary.json").exists(), "nothing partial is written"


def test_ctrl_c_raises_keyboard_interrupt_out_of_scenario_run(tiny: Path, tmp_path: Path) -> None:
    # The engine runs on the main thread here, as in a notebook: only the engine's own
    # check for signals can stop it.
    script = textwrap.dedent(
        """
        import sys, time
        import mobiflow
        s = mobiflow.Scenario.load(sys.argv[1])
        print("ready", flush=True)
        try:
            s.run(budget="64GB")
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(130)
        print("finished", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, os.fspath(long_scenario(tiny, tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    line = proc.stdout.readline()
    assert line == "ready\n", proc.stderr.read()
    took, stdout, stderr = interrupt_after(proc, 2.0)
    assert stdout == "KeyboardInterrupt\n", stderr
    assert proc.returncode == 130
    assert took < 1.0, f"took {took:.2f} s to stop"


def test_progress_reports_simulated_time_and_its_exception_stops_the_run(
    tiny: Path, tmp_path: Path
) -> None:
    seen: list[tuple[float, float]] = []

    class Enough(Exception):
        pass

    def progress(now_s: float, duration_s: float) -> None:
        seen.append((now_s, duration_s))
        if len(seen) >= 3:
            raise Enough

    scenario = mobiflow.Scenario.load(long_scenario(tiny, tmp_path))
    out = tmp_path / "stopped"
    with pytest.raises(Enough):
        scenario.run(out=out, budget="64GB", progress=progress)
    assert len(seen) == 3
    assert seen[0] == (0.0, LONG_S)
    assert seen[1][0] < seen[2][0] < LONG_S, seen
    assert not (out / "summary.json").exists()


def test_watching_a_run_changes_none_of_its_bytes(tiny: Path) -> None:
    calls: list[float] = []
    text = tiny.read_text(encoding="utf-8")
    sets = [("run.duration", "60s")]
    watched = _mobiflow.run_str_results(
        text, sets, progress=lambda now, _duration: calls.append(now)
    )
    plain = _mobiflow.run_str_results(text, sets)
    assert calls, "the hook was called"
    assert watched == plain


def test_ctrl_c_ends_mobiflow_reproduce_with_130(tmp_path: Path) -> None:
    # afc at full length: minutes, so still running when interrupted
    proc = start_cli("reproduce", "afc", "--no-validation", "--out", tmp_path / "repro")
    took, _stdout, stderr = interrupt_after(proc, 2.0)
    assert proc.returncode == 130, stderr
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert "Traceback" not in stderr
    assert not (tmp_path / "repro" / "report.html").exists()


def test_a_long_run_shows_progress_on_a_terminal_only(tiny: Path, tmp_path: Path) -> None:
    import pty

    scenario = os.fspath(long_scenario(tiny, tmp_path))
    argv = [sys.executable, "-m", "mobiflow", "run", scenario, "--budget", "64GB"]
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    # On a terminal (stdout and stderr on one pty): a bar of simulated time after 2 s.
    main_fd, child_fd = pty.openpty()
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=child_fd, stderr=child_fd
    )
    os.close(child_fd)
    # Read until the bar shows (a loaded machine may take seconds to start Python and
    # the engine), then interrupt; the bar must appear within a generous minute.
    seen = b""
    deadline = time.monotonic() + 60.0
    bar = f"of {LONG_S:.1f} s".encode()
    while bar not in seen and time.monotonic() < deadline and proc.poll() is None:
        ready, _, _ = select.select([main_fd], [], [], 0.5)
        if ready:
            with contextlib.suppress(OSError):
                seen += os.read(main_fd, 65536)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=10)
    with contextlib.suppress(OSError):  # EIO once the child side is closed
        while chunk := os.read(main_fd, 65536):
            seen += chunk
    os.close(main_fd)
    assert proc.returncode == 130
    assert b"simulated" in seen, seen
    assert bar in seen, seen
    # Piped: nothing is drawn.
    piped = start_cli("run", scenario, "--budget", "64GB")
    _took, stdout, stderr = interrupt_after(piped, 3.5)
    assert piped.returncode == 130
    assert "simulated" not in stdout + stderr
