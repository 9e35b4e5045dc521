"""mobiflow: transport protocols for mobile hosts in a deterministic network simulator.

The engine is written in Rust (``crates/mobiflow-sim``); this package runs it::

    import mobiflow

    sc = mobiflow.Scenario.load("scenarios/examples/rwnd_limited.toml")
    run = sc.set("flows.bulk.cc", "cubic").run()
    run.flows           # polars DataFrame, one row per flow (goodput_bps: bits per second)
    run.flow_series     # polars DataFrame: time_s, flow, goodput_bps, srtt_ms, ...
    run.tcp_series      # the TCP flows: cwnd_bytes, rwnd_bytes, snd_una, ...
    run.plot_cwnd("cwnd.png")

    result = mobiflow.sweep(sc, grid={"tcp.rcv_buf": ["64KB", "1MB"]}, seeds=[1, 2, 3])
    result.aggregate()  # mean and 95 % confidence interval across seeds

Modules: :mod:`mobiflow.scenario` (:class:`Scenario`), :mod:`mobiflow.outputs`
(:class:`Run`, the columns and their units), :mod:`mobiflow.plot` (figures),
:mod:`mobiflow.sweeps` (:func:`sweep`), :mod:`mobiflow.api` (functions on scenario
files), :mod:`mobiflow.results` (the shape of a summary). ``mobiflow --help`` for the
command line; ``docs/python.md`` for a walk-through.

Units are in the names: ``_bps`` bits per second, ``_s`` seconds, ``_ms``
milliseconds, ``_bytes`` bytes, ``_packets`` packets.
"""

from mobiflow import _resources
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
from mobiflow.outputs import Run
from mobiflow.results import FlowSummary, LinkSummary, Summary
from mobiflow.scenario import Scenario, flow, link
from mobiflow.sweeps import SweepError, SweepResult, load_sweep, sweep

_resources.use_shipped_traces()

__version__: str = _engine_version()
"""The version of the package and its engine (one workspace version)."""

__all__ = [
    "FlowSummary",
    "LinkSummary",
    "Run",
    "Scenario",
    "ScenarioError",
    "Summary",
    "SweepError",
    "SweepResult",
    "__version__",
    "flow",
    "link",
    "load_sweep",
    "read_series",
    "read_summary",
    "run",
    "run_json",
    "run_text",
    "sweep",
    "validate",
    "validate_text",
]
