"""mobiflow: transport protocols for mobile hosts in a deterministic network simulator.

The engine is written in Rust (``crates/mobiflow-sim``); this package runs it::

    import mobiflow

    summary = mobiflow.run("scenarios/examples/rwnd_limited.toml", set={"seed": 2})
    summary["flows"][0]["goodput_bps"]  # bits per second of payload

See :mod:`mobiflow.api` for the functions and their units, :mod:`mobiflow.results` for
the shape of a summary, and ``mobiflow --help`` for the command line.
"""

from mobiflow._mobiflow import ScenarioError
from mobiflow._mobiflow import version as _engine_version
from mobiflow.api import (
    read_series,
    read_summary,
    run,
    run_json,
    run_text,
    validate,
    validate_text,
)
from mobiflow.results import FlowSummary, LinkSummary, Summary

__version__: str = _engine_version()
"""The version of the package and its engine (one workspace version)."""

__all__ = [
    "FlowSummary",
    "LinkSummary",
    "ScenarioError",
    "Summary",
    "__version__",
    "read_series",
    "read_summary",
    "run",
    "run_json",
    "run_text",
    "validate",
    "validate_text",
]
