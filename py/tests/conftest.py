"""Shared fixtures: the repository's example scenario and a CLI runner."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""


def _load_tool(name: str) -> ModuleType:
    """A script of the repository's ``tools/`` folder, imported as a module."""
    spec = importlib.util.spec_from_file_location(
        f"mobiflow_tools_{name}", ROOT / "tools" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through it
    spec.loader.exec_module(module)
    return module


golden = _load_tool("golden")
"""``tools/golden.py``: the golden tables and summary hashes (see golden/README.md)."""

EXAMPLE = ROOT / "scenarios" / "examples" / "rwnd_limited.toml"
"""The example scenario most tests run (written with the engine)."""

TINY_TOML = """\
# A small, fast scenario for tests: two flows sharing a 10 Mb/s link for 5 s.
name = "tiny"

[run]
duration = "5s"
seed = 3

[[links]]
name = "access"
a = "server"
b = "phone"
rate = "10Mbps"
delay = "20ms"

[[flows]]
name = "bulk"
from = "server"
to = "phone"
cc = "newreno"
app = "bulk"
reader = { kind = "constant", rate = "4Mbps" }

[[flows]]
name = "short, sized"
from = "server"
to = "phone"
cc = "cubic"
start = "1s"
app = { kind = "sized", size = "200KB" }
reader = "greedy"

[measure]
sample_interval = "100ms"
intervals = { first = ["0s", "2s"], rest = ["2s", "5s"] }
"""

Cli = Callable[..., subprocess.CompletedProcess[str]]


def cli_argv(*args: str | os.PathLike[str]) -> list[str]:
    """``python -m mobiflow ARGS`` with this interpreter."""
    return [sys.executable, "-m", "mobiflow", *(os.fspath(a) for a in args)]


def cli_env() -> dict[str, str]:
    """The CLI's environment in the tests: no colour, 200 columns, no debug tracebacks."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    env.pop("MOBIFLOW_DEBUG", None)
    return env


def start_cli(
    *args: str | os.PathLike[str], output: int = subprocess.PIPE, new_session: bool = False
) -> subprocess.Popen[str]:
    """Start ``python -m mobiflow ARGS`` in a child process, from the repository root,
    without waiting: stdin closed, stdout and stderr to ``output`` (piped by default),
    in a session (process group) of its own with ``new_session``."""
    return subprocess.Popen(
        cli_argv(*args),
        cwd=ROOT,
        env=cli_env(),
        stdout=output,
        stderr=output,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=new_session,
    )


def run_cli(
    *args: str | os.PathLike[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mobiflow ARGS`` as :func:`start_cli` starts it and wait for it (as
    ``subprocess.run`` does: killed and ``TimeoutExpired`` after ``timeout`` s)."""
    with start_cli(*args) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.fixture
def cli() -> Cli:
    """The CLI runner, see :func:`run_cli`."""
    return run_cli


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small scenario of the tests' own (:data:`TINY_TOML`), as an absolute path."""
    path = tmp_path_factory.mktemp("scenarios") / "tiny.toml"
    path.write_text(TINY_TOML, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def example() -> Path:
    """Path of ``scenarios/examples/rwnd_limited.toml``, relative to the repository root
    (the CLI runs from there), so that messages show it as a user would type it."""
    assert EXAMPLE.is_file(), f"{EXAMPLE} is missing"
    return EXAMPLE.relative_to(ROOT)


@functools.cache
def live_unavailable() -> str | None:
    """Why live mode cannot run on this machine (not root, no TUN, no binary), or None."""
    from mobiflow import live

    try:
        live.preflight()
    except live.LiveUnavailable as e:
        return str(e)
    return None


def run_live(
    scenario: Path, report: Path, *command: str | os.PathLike[str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``mobiflow-live run SCENARIO --quiet --report REPORT -- COMMAND``: the command
    between the scenario's emulated hosts, the emulator's report written to REPORT."""
    from mobiflow import live

    argv = [os.fspath(live.find_binary()), "run", os.fspath(scenario), "--quiet"]
    return subprocess.run(
        [*argv, "--report", os.fspath(report), "--", *(os.fspath(c) for c in command)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
