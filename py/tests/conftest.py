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


def run_cli(
    *args: str | os.PathLike[str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mobiflow ARGS`` in a child process, from the repository root."""
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    env.pop("MOBIFLOW_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "mobiflow", *(os.fspath(a) for a in args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


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
