"""The schema of every results table, declared once.

:class:`mobiflow.Run` (one run) and :class:`mobiflow.SweepResult` (many) build their
tables here, so the same column has the same name and type everywhere: a column that
is null in every row (``completion_time_s`` of flows that never finish) is still
``Float64``, never polars' ``Null`` (pandas ``object``).

Naming, in every table (flows, links, flow and link series, sweep tables):

- ``flow``: the flow's name (``"bulk"``); ``flow_index``: its position in the
  scenario's ``[[flows]]`` (series only).
- ``dir``: the link direction's name (``"link:a->b"``); ``dir_index``: its position in
  the summary's ``links`` (series only).
- units in the column names: ``_s`` seconds, ``_ms`` milliseconds, ``_bps`` bits per
  second, ``_bytes`` bytes, ``_packets`` packets.
- an infinite slow-start threshold (``ssthresh_bytes``) is null.

A sweep's tables add, in front, one column per grid key (its value as given, e.g.
``"64KB"``), a numeric twin for values with a unit (``tcp.rcv_buf_bytes`` = 65536,
see :func:`grid_value`), ``seed`` and ``run`` (the run's folder name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "FLOW_COLUMNS",
    "FLOW_SERIES_COLUMNS",
    "LINK_COLUMNS",
    "LINK_SERIES_COLUMNS",
    "SERIES_COLUMNS",
    "TCP_SERIES_COLUMNS",
    "TFRC_SERIES_COLUMNS",
    "flow_rows",
    "flows_frame",
    "grid_value",
    "link_rows",
    "links_frame",
    "series_frame",
]

# Type names, resolved to polars types when a frame is built (polars is imported
# lazily: `import mobiflow` does not need it).
_STR, _INT, _FLOAT, _BOOL, _FLOATS = "str", "int", "float", "bool", "list[float]"

FLOW_COLUMNS: dict[str, str] = {
    "flow": _STR,
    "src": _STR,
    "dst": _STR,
    "protocol": _STR,
    "cc": _STR,
    "flow_control": _STR,
    "bytes_delivered": _INT,
    "bytes_offered": _INT,
    "goodput_bps": _FLOAT,
    "completion_time_s": _FLOAT,
    "burst_completion_times_s": _FLOATS,
    "page_load_times_s": _FLOATS,
    "pages_started": _INT,
    "segments_sent": _INT,
    "retransmits": _INT,
    "timeouts": _INT,
    "fast_retransmits": _INT,
    "spurious_retransmits": _INT,
    "undos": _INT,
    "zero_windows": _INT,
    "zero_window_acks": _INT,
    "window_probes": _INT,
    "window_updates": _INT,
    "dup_acks": _INT,
    "policy_updates": _INT,
    "hidden_congestion_events": _INT,
    "paced_segments": _INT,
    "zero_window_stalls": _INT,
    "zero_window_stall_s": _FLOAT,
    "zero_window_stall_rtts": _INT,
    "idle_rtts": _INT,
    "total_rtts": _INT,
    "rcv_buffer_drops": _INT,
    "rtt_min_ms": _FLOAT,
    "rtt_mean_ms": _FLOAT,
    "rtt_p95_ms": _FLOAT,
    "rtt_samples": _INT,
    "handoff_interface_changes": _INT,
    "handoff_forced_expirations": _INT,
    "handoff_notices": _INT,
    "handoff_ba_sst_estimates": _INT,
    "handoff_ba_sst_bps": _FLOAT,
    "handoff_ba_sst_rtt_ms": _FLOAT,
    "handoff_ba_sst_ssthresh_bytes": _INT,
    "handoff_freezes": _INT,
    "handoff_tr_acks": _INT,
    "tfrc_s": _INT,
    "tfrc_freeze": _BOOL,
    "tfrc_x_bps": _FLOAT,
    "tfrc_x_recv_bps": _FLOAT,
    "tfrc_p": _FLOAT,
}
"""Columns of a flows table (:attr:`Run.flows`, :attr:`SweepResult.flows` after its
grid columns), in order, with their types. Families beyond these: ``interval_<name>_bps``
(float, goodput over a named interval), ``tfrc_<counter>`` (int), and any other key
the engine adds, typed by :func:`_rule`."""

LINK_COLUMNS: dict[str, str] = {
    "dir": _STR,
    "link": _STR,
    "from": _STR,
    "to": _STR,
    "packets_sent": _INT,
    "bytes_sent": _INT,
    "drops": _INT,
    "early_drops": _INT,
    "outage_losses": _INT,
    "random_losses": _INT,
    "reordered": _INT,
    "duplicated": _INT,
    "queue_max_packets": _INT,
    "queue_mean_packets": _FLOAT,
}
"""Columns of a links table (one row per link direction)."""

FLOW_SERIES_COLUMNS: dict[str, str] = {
    "time_s": _FLOAT,
    "flow_index": _INT,
    "flow": _STR,
    "srtt_ms": _FLOAT,
    "read_rate_bps": _FLOAT,
    "goodput_bps": _FLOAT,
}
"""Columns of the flow series: what every flow has, one row per sample time and flow."""

TCP_SERIES_COLUMNS: dict[str, str] = {
    "time_s": _FLOAT,
    "flow_index": _INT,
    "flow": _STR,
    "cwnd_bytes": _INT,
    "ssthresh_bytes": _INT,
    "rwnd_bytes": _INT,
    "flight_bytes": _INT,
    "rcv_buffer_bytes": _INT,
    "snd_una": _INT,
    "snd_nxt": _INT,
    "flow_window_bytes": _INT,
    "ar_bps": _FLOAT,
    "rcv_buf_limit_bytes": _INT,
    "t_buff_ms": _FLOAT,
    "policy_state": _INT,
}
"""Columns of the TCP series: one row per sample time and TCP flow."""

TFRC_SERIES_COLUMNS: dict[str, str] = {
    "time_s": _FLOAT,
    "flow_index": _INT,
    "flow": _STR,
    "x_bps": _FLOAT,
    "x_recv_bps": _FLOAT,
    "p": _FLOAT,
    "bytes_sent": _INT,
    "bytes_received": _INT,
    "state": _INT,
    "rx_state": _INT,
}
"""Columns of the TFRC series: one row per sample time and TFRC / DCCP flow."""

LINK_SERIES_COLUMNS: dict[str, str] = {
    "time_s": _FLOAT,
    "dir_index": _INT,
    "dir": _STR,
    "queue_packets": _INT,
    "queue_bytes": _INT,
    "rate_bps": _FLOAT,
}
"""Columns of a link series. ``rate_bps`` is the direction's rate at the sample; for a
trace-driven direction, the capacity its trace offered over the last sampling period."""

# Names the engine's files used before the naming was unified: renamed on reading.
_LEGACY = {
    "flow_series": {"flow": "flow_index", "flow_name": "flow"},
    "link_series": {"dir": "dir_index", "dir_name": "dir"},
    "flows": {"name": "flow"},
    "links": {"name": "dir"},
}

SERIES_COLUMNS: dict[str, dict[str, str]] = {
    "flow": FLOW_SERIES_COLUMNS,
    "tcp": TCP_SERIES_COLUMNS,
    "tfrc": TFRC_SERIES_COLUMNS,
    "link": LINK_SERIES_COLUMNS,
}
"""The declared columns of each series, by kind (:data:`mobiflow.api.SERIES_KINDS`)."""

SSTHRESH_INFINITE = 2**62 - 1
"""The engine caps an infinite slow-start threshold at ``u64::MAX / 4``; older series
files wrote that number. Tables show it as null."""


def _rule(column: str) -> str:
    """The type of a column not declared above, by its family and unit suffix."""
    if column.startswith("interval_") and column.endswith("_bps"):
        return _FLOAT
    if column.endswith(("_s", "_ms", "_bps")) or column == "tfrc_p":
        return _FLOAT
    return _INT


def _polars_type(name: str) -> Any:
    import polars as pl

    return {
        _STR: pl.String,
        _INT: pl.Int64,
        _FLOAT: pl.Float64,
        _BOOL: pl.Boolean,
        _FLOATS: pl.List(pl.Float64),
    }[name]


def schema_of(columns: Sequence[str], declared: Mapping[str, str]) -> dict[str, Any]:
    """The polars schema of ``columns``: declared types first, rules for the rest."""
    return {c: _polars_type(declared.get(c) or _rule(c)) for c in columns}


def _ordered(columns: Sequence[str], declared: Mapping[str, str]) -> list[str]:
    known = [c for c in declared if c in columns]
    return known + [c for c in columns if c not in declared]


def _frame(rows: list[dict[str, Any]], declared: Mapping[str, str]) -> pl.DataFrame:
    import polars as pl

    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    columns = _ordered(columns, declared)
    schema = schema_of(columns, declared)
    # Strings stay strings even where a rule would say otherwise (a tfrc_ text value).
    for c in columns:
        if any(isinstance(row.get(c), str) for row in rows):
            schema[c] = pl.String
        elif any(isinstance(row.get(c), bool) for row in rows):
            schema[c] = pl.Boolean
    data = {c: [row.get(c) for row in rows] for c in columns}
    return pl.DataFrame(data, schema=schema)


def flow_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary's flows as flat rows: ``name`` becomes ``flow``; ``intervals`` one
    column per interval, ``interval_<name>_bps`` (goodput over that interval, bits per
    second); ``handoff`` one column per counter, ``handoff_<name>``; a TFRC flow's
    scalar results ``tfrc_<key>`` (its lists stay in the summary)."""
    rows = []
    for flow in summary.get("flows", []):
        row: dict[str, Any] = {}
        for k, v in flow.items():
            if k in ("intervals", "handoff", "tfrc"):
                continue
            row["flow" if k == "name" else k] = v
        for name, v in flow.get("handoff", {}).items():
            row[f"handoff_{name}"] = v
        for name, bps in flow.get("intervals", {}).items():
            row[f"interval_{name}_bps"] = bps
        for key, value in (flow.get("tfrc") or {}).items():
            if isinstance(value, int | float | bool | str):
                row[f"tfrc_{key}"] = value
        rows.append(row)
    return rows


def link_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary's link directions as rows (``name`` becomes ``dir``)."""
    return [
        {("dir" if k == "name" else k): v for k, v in link.items()}
        for link in summary.get("links", [])
    ]


def flows_frame(
    summary_or_rows: Mapping[str, Any] | list[dict[str, Any]],
) -> pl.DataFrame:
    """One row per flow (of a summary, or of rows from :func:`flow_rows`), typed by
    :data:`FLOW_COLUMNS`."""
    rows = flow_rows(summary_or_rows) if isinstance(summary_or_rows, Mapping) else summary_or_rows
    return _frame(rows, FLOW_COLUMNS)


def links_frame(
    summary_or_rows: Mapping[str, Any] | list[dict[str, Any]],
) -> pl.DataFrame:
    """One row per link direction, typed by :data:`LINK_COLUMNS`."""
    rows = link_rows(summary_or_rows) if isinstance(summary_or_rows, Mapping) else summary_or_rows
    return _frame(rows, LINK_COLUMNS)


def series_frame(frame: pl.DataFrame, which: str) -> pl.DataFrame:
    """A series read from a file, in the one naming and typing: legacy column names
    renamed, declared types cast, an infinite ssthresh as null."""
    import polars as pl

    declared = SERIES_COLUMNS[which]
    legacy = _LEGACY["link_series" if which == "link" else "flow_series"]
    if any(old in frame.columns for old in legacy) and (
        "flow_index" not in frame.columns and "dir_index" not in frame.columns
    ):
        frame = frame.rename({k: v for k, v in legacy.items() if k in frame.columns})
    schema = schema_of(frame.columns, declared)
    frame = frame.with_columns(
        [pl.col(c).cast(t) for c, t in schema.items() if frame.schema[c] != t]
    )
    if "ssthresh_bytes" in frame.columns:
        ssthresh = pl.col("ssthresh_bytes")
        frame = frame.with_columns(
            pl.when(ssthresh >= SSTHRESH_INFINITE)
            .then(None)
            .otherwise(ssthresh)
            .alias("ssthresh_bytes")
        )
    return frame


# Grid values with a unit, as docs/scenarios.md spells them: the number in the base
# unit named by the numeric column's suffix. Sizes are binary (K = 1024), rates decimal.
_SIZES = {"B": 1, "KB": 1024, "kB": 1024, "KiB": 1024, "MB": 1024**2, "MiB": 1024**2}
_SIZES |= {"GB": 1024**3, "GiB": 1024**3, "bytes": 1}
_RATES = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
_TIMES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_PACKETS = ("p", "pkt", "pkts", "packets")
_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]+)\s*$")


def _unit(unit: str) -> tuple[str, float] | None:
    if unit in _SIZES:
        return "bytes", float(_SIZES[unit])
    if "B" not in unit:
        rate = unit.lower().replace("bit/s", "bps").replace("b/s", "bps")
        rate = rate + "ps" if rate in ("b", "kb", "mb", "gb") else rate
        if rate in _RATES:
            return "bps", _RATES[rate]
    if unit in _TIMES:
        return "s", _TIMES[unit]
    if unit in _PACKETS:
        return "packets", 1.0
    if unit == "%":
        return "fraction", 0.01
    return None


def grid_value(value: Any) -> tuple[str, float] | None:
    """A grid value with a unit as ``(unit suffix, number)``: ``"64KB"`` ->
    ``("bytes", 65536.0)``, ``"6Mbps"`` -> ``("bps", 6e6)``, ``"265ms"`` ->
    ``("s", 0.265)``, ``"1%"`` -> ``("fraction", 0.01)``. ``None`` for anything else
    (a name like ``"cubic"``, a number, a list)."""
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    if m is None:
        return None
    unit = _unit(m.group(2))
    if unit is None:
        return None
    return unit[0], float(m.group(1)) * unit[1]


def grid_columns(key: str, values: Sequence[Any]) -> dict[str, list[Any]]:
    """The columns of one grid key: ``{key: labels}``, plus ``{key_<unit>: numbers}``
    when every value is a quantity of one kind (``"64KB"``, ``"256KB"`` ->
    ``tcp.rcv_buf_bytes``)."""
    kinds = {type(v) for v in values}
    if kinds <= {str} or kinds <= {bool} or kinds <= {int}:
        labels: list[Any] = list(values)
    elif kinds <= {int, float}:
        labels = [float(v) for v in values]
    else:
        from mobiflow.api import toml_value

        labels = [v if isinstance(v, str) else toml_value(v) for v in values]
    columns: dict[str, list[Any]] = {key: labels}
    parsed = [grid_value(v) for v in values]
    units = {p[0] for p in parsed if p is not None}
    if parsed and all(p is not None for p in parsed) and len(units) == 1:
        columns[f"{key}_{units.pop()}"] = [p[1] for p in parsed if p is not None]
    return columns
