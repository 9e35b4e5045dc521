"""Live mode that cleans up after itself (issue 22, point 5): a ``kill -9`` of the
emulator or of its ``mobiflow live`` front end leaves nothing behind after the next
start or ``mobiflow live cleanup``, and junk written into the TUN device is counted and
dropped while the forwarder keeps forwarding. Needs root and /dev/net/tun (skips with
the reason elsewhere)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mobiflow import live

from .conftest import ROOT, live_unavailable, run_cli, run_live

SCENARIO = ROOT / "scenarios" / "examples" / "rwnd_limited.toml"


REASON = live_unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"live mode unavailable: {REASON}")


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def ns_pids(ns: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def sleeping_in(ns: str) -> list[int]:
    """The ``sleep`` processes in namespace ``ns`` (not the short-lived ``ip`` and
    ``sysctl`` processes of its set-up)."""
    found = []
    for pid in ns_pids(ns):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sleep":
                found.append(pid)
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def start_emulator(
    argv_prefix: list[str],
    command: tuple[str, ...] = ("sleep", "1000"),
    stderr: Any = subprocess.DEVNULL,
) -> tuple[subprocess.Popen[bytes], int, list[str]]:
    """Start a live run of ``command`` (one that runs ``sleep``) behind the link, in a
    session of its own; the process, the emulator's pid and its two namespaces, once
    the command's ``sleep`` runs inside them."""
    proc = subprocess.Popen(
        [*argv_prefix, os.fspath(SCENARIO), "--", *command],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )
    found: list[str] = []

    def started() -> bool:
        ours = sorted(n for n in namespaces() if n.startswith("mf-") and n.endswith("-b"))
        for ns in ours:
            if ns not in before and sleeping_in(ns):
                found.append(ns)
                return True
        return False

    before = namespaces()
    wait_for(started, 20, "the live run to start its command")
    ns_b = found[0]
    pid = int(ns_b.split("-")[1])
    return proc, pid, [f"mf-{pid}-a", ns_b]


def test_kill_9_of_the_emulator_ends_the_command_and_cleanup_removes_the_rest() -> None:
    binary = live.find_binary()
    proc, pid, names = start_emulator([os.fspath(binary), "run", "--quiet"])
    assert pid == proc.pid
    (command,) = sleeping_in(names[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    # The command got the parent-death signal.
    wait_for(lambda: not alive(command), 2, "the command to end with its emulator")
    # The namespaces outlive a SIGKILL; `mobiflow live cleanup` removes them.
    assert set(names) <= namespaces()
    result = run_cli("live", "cleanup")
    assert result.returncode == 0, result.stderr
    for name in names:
        assert name in result.stdout
    assert not set(names) & namespaces()
    again = run_cli("live", "cleanup")
    assert again.stdout.strip() == "cleanup: nothing left behind"


def test_the_next_start_removes_what_a_killed_emulator_left(tmp_path: Path) -> None:
    binary = live.find_binary()
    proc, _pid, names = start_emulator([os.fspath(binary), "run", "--quiet"])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert set(names) <= namespaces()
    code = live.run_command(SCENARIO, ["true"], extra=["--quiet"])
    assert code == 0
    assert not set(names) & namespaces()


def test_kill_9_of_mobiflow_live_ends_the_emulator_which_removes_everything() -> None:
    front, pid, names = start_emulator([sys.executable, "-m", "mobiflow", "live", "run"])
    assert pid != front.pid
    (command,) = sleeping_in(names[1])
    os.kill(front.pid, signal.SIGKILL)
    front.wait(timeout=10)
    # The emulator gets SIGTERM from its parent's death and stops in order.
    wait_for(lambda: not alive(pid), 10, "the emulator to stop")
    assert not alive(command)
    assert not set(names) & namespaces()


def test_junk_written_to_the_tun_device_is_counted_and_dropped(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    junk = Path(__file__).with_name("_tun_junk.py")
    proc = run_live(SCENARIO, report, sys.executable, junk, timeout=120)
    assert proc.returncode == 0, proc.stderr
    sent = json.loads(proc.stdout)["sent"]
    assert sent == {"non_ip": 4, "malformed": 6, "oversize": 3}
    b_to_a = json.loads(report.read_text())["dirs"][1]
    assert b_to_a["dir"] == "b->a"
    assert b_to_a["non_ip_packets"] == sent["non_ip"]
    assert b_to_a["malformed_packets"] == sent["malformed"]
    assert b_to_a["oversize_packets"] == sent["oversize"]
    # Only the TCP connection's packets went through the link.
    junk = sum(sent.values())
    assert b_to_a["delivered_packets"] <= b_to_a["packets_in"] - junk


STUBBORN = ("sh", "-c", 'trap "" TERM INT; sleep 1000')
"""A command that ignores SIGTERM and SIGINT: only SIGKILL ends it."""


@pytest.mark.parametrize(
    ("whom", "command"),
    [
        ("terminal", ("sleep", "1000")),
        ("terminal", STUBBORN),
        ("front end", ("sleep", "1000")),
        ("front end", STUBBORN),
    ],
)
def test_ctrl_c_ends_mobiflow_live_within_a_second_and_removes_everything(
    whom: str, command: tuple[str, ...], tmp_path: Path
) -> None:
    """Ctrl-C at a terminal signals the whole foreground group (front end, emulator,
    command); a SIGINT may also reach the front end alone. Either way: status 130
    within a second, the namespaces deleted, nothing left running in them, and no
    summary or report presented for the part of the run that happened."""
    report = tmp_path / "report.json"
    report.write_text("an earlier run's report")
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "wb") as err:
        front, pid, names = start_emulator(
            [sys.executable, "-m", "mobiflow", "live", "run", "--report", os.fspath(report)],
            command,
            stderr=err,
        )
        inside = ns_pids(names[0]) + ns_pids(names[1])
        assert sleeping_in(names[1])
        sent = time.monotonic()
        if whom == "terminal":
            os.killpg(front.pid, signal.SIGINT)
        else:
            os.kill(front.pid, signal.SIGINT)
        code = front.wait(timeout=10)
        took = time.monotonic() - sent
    stderr = err_path.read_text(errors="replace")
    assert code == 130, stderr
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert not alive(pid), "the emulator ended"
    assert not set(names) & namespaces(), "both namespaces are deleted"
    for p in inside:
        assert not alive(p), f"process {p} of the namespaces still runs"
    assert "Traceback" not in stderr
    assert f"removed {names[0]} and {names[1]}" in stderr, stderr
    assert "valid run" not in stderr, "no summary of a partial run"
    assert "packets in" not in stderr, "no summary of a partial run"
    assert not report.exists(), "no report of a partial run (nor an earlier run's)"
