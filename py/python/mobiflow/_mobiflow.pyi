"""Type stubs of the compiled module ``mobiflow._mobiflow`` (crates/mobiflow-python).

Functions return JSON text (or TOML text, or CSV bytes); :mod:`mobiflow` parses it. Overrides are
``(dotted key, value)`` pairs, as ``--set KEY=VALUE`` on the command line.
"""

from collections.abc import Callable
from os import PathLike
from typing import TypeAlias

_Path: TypeAlias = str | PathLike[str]

class ScenarioError(ValueError):
    """A scenario that cannot be run. ``str(err)`` is ``FILE: KEY: REASON``."""

    file: str | None
    """The scenario file, if the scenario came from one."""
    key: str | None
    """The dotted key at fault (``flows.0.reader.rate``), if one is."""
    reason: str
    """What is wrong, in words."""

def validate_file(path: _Path, overrides: list[tuple[str, str]] = ...) -> str:
    """Load and check a scenario file without running it; describe it as JSON."""

def validate_str(
    text: str, overrides: list[tuple[str, str]] = ..., source: _Path | None = None
) -> str:
    """Like :func:`validate_file` for TOML text; ``source`` names the file it stands for."""

def run_file(
    path: _Path,
    overrides: list[tuple[str, str]] = ...,
    out_dir: _Path | None = None,
    pcap: bool = False,
    budget: int | None = ...,
    progress: Callable[[float, float], object] | None = None,
) -> str:
    """Run a scenario file; write results into ``out_dir`` if given; return summary JSON.

    ``pcap`` captures every host's packets into ``out_dir`` (``<host>.pcap``).
    ``budget``: refuse (``ScenarioError``) a scenario whose estimated memory exceeds
    this many bytes (default :func:`default_budget`; ``None``: no check).
    ``progress(simulated_s, duration_s)`` is called every 50 ms of wall time, when
    signals are checked too (Ctrl-C raises ``KeyboardInterrupt``)."""

def run_str_results(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    out_dir: _Path | None = None,
    source: _Path | None = None,
    pcap: bool = False,
    budget: int | None = ...,
    progress: Callable[[float, float], object] | None = None,
    series: bool = True,
) -> tuple[str, dict[str, bytes]]:
    """Like :func:`run_file` for TOML text (``source`` names the file it stands for),
    also returning the series: ``(summary JSON, {kind: CSV})`` with kind ``flow``,
    ``tcp``, ``tfrc`` or ``link``: the bytes of ``summary.json`` and of each
    ``<kind>_series.csv`` (no series, an empty dict, with ``series=False``)."""

def estimate_str(
    text: str,
    overrides: list[tuple[str, str]] = ...,
    source: _Path | None = None,
    budget: int | None = None,
) -> str:
    """The scenario's resource estimate as JSON (samples, flow_rows, link_rows, packets,
    series_bytes, packet_bytes, bytes, key); with ``budget``, raise ``ScenarioError``
    if the estimate exceeds it."""

def default_budget() -> int:
    """The default memory budget of a run, in bytes."""

def parse_size(text: str) -> int:
    """A size like ``"8GB"`` in bytes (K, M, G = 1024); ``ValueError`` if malformed."""

def apply_overrides(
    text: str, overrides: list[tuple[str, str]] = ..., source: _Path | None = None
) -> str:
    """TOML text with ``overrides`` applied (the text itself when there are none).

    Checks paths, not values; raises :class:`ScenarioError` for invalid TOML or a path
    that does not exist."""

def toml_to_json(text: str, source: _Path | None = None) -> str:
    """Parse TOML text into JSON; :class:`ScenarioError` names the line of a syntax error."""

def json_to_toml(json: str) -> str:
    """Write a JSON object as a TOML document; ``ValueError`` for ``null`` or a non-object."""

def version() -> str:
    """The engine's version."""

def freeze_dccp_model(
    s: float = 500.0, t_mbi: float = 64.0, rtt_wired: float = 0.1, handoff_base: float = 2.5
) -> str:
    """The analytical model of the Freeze-DCCP paper (Mehani, Boreli and Ernst, "Analysis of
    TFRC in Disconnected Scenarios and Performance Improvements with Freeze-DCCP", ACM
    MobiArch 2009) as JSON: the table from the slides' inputs, the (R, X_d) each row of
    the slides' losses table implies, and the table at those."""

def freeze_dccp_handover(
    r_s: float,
    x_d_bps: float,
    t_d_s: float,
    to_bandwidth_bps: float,
    to_delay_s: float,
    s: float = 500.0,
    t_mbi: float = 64.0,
    rtt_wired: float = 0.1,
) -> str:
    """The Freeze-DCCP paper's model for one handover with R, X_d and t_D given, as JSON."""
