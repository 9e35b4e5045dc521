"""What the package ships besides code: the scenarios of the reproductions and
examples, the Mahimahi traces they replay, the ns-2 twins of the cross-validation and
the ``mobiflow-live`` program.

In the source tree ``mobiflow/data/{scenarios,traces,validation}`` are links to the
repository's own folders; a wheel carries copies of them (``[tool.maturin] include``)
and, in ``mobiflow/bin/``, the live-mode program. Either way they are found with
:mod:`importlib.resources`, so the package works from any working directory.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

__all__ = [
    "BIN",
    "DATA",
    "SCENARIOS",
    "TRACES",
    "TRACE_PATH_VAR",
    "VALIDATION",
    "shipped_scenario",
    "use_shipped_traces",
]

DATA = Path(str(files("mobiflow").joinpath("data")))
SCENARIOS = DATA / "scenarios"
TRACES = DATA / "traces"
VALIDATION = DATA / "validation"
BIN = Path(str(files("mobiflow").joinpath("bin")))

TRACE_PATH_VAR = "MOBIFLOW_TRACE_PATH"
"""Directories (``os.pathsep``-separated) where the engine looks up a trace given by
bare name (``trace = "ATT-LTE-driving-2016.down"``), after the scenario's folder."""


def use_shipped_traces() -> None:
    """Put the shipped traces last on the engine's trace path (once), so that a
    scenario anywhere can name them; a user's own directories keep precedence."""
    dirs = [d for d in os.environ.get(TRACE_PATH_VAR, "").split(os.pathsep) if d]
    if str(TRACES) not in dirs and TRACES.is_dir():
        os.environ[TRACE_PATH_VAR] = os.pathsep.join([*dirs, str(TRACES)])


def shipped_scenario(path: Path) -> Path | None:
    """A scenario the package ships, for a relative path that names no file here:
    ``examples/outage.toml``, ``afc/motivation`` (the suffix may be left out) or the
    repository's own ``scenarios/examples/outage.toml``."""
    if path.is_absolute() or path.exists():
        return None
    for candidate in (path, path.with_suffix(".toml")):
        for base in (SCENARIOS, DATA):
            shipped = base / candidate
            if shipped.is_file():
                return shipped
    return None
