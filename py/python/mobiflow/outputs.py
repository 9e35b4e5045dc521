"""The results of one run as Python objects: :class:`Run` and its DataFrames.

A :class:`Run` holds what the engine reported: the summary (``summary.json``) and the
sampled time series (``flow_series.csv``, ``link_series.csv``), either in memory (from
:meth:`mobiflow.Scenario.run`) or in a results folder (:meth:`Run.load`). Both give the
same bytes and therefore the same DataFrames.

Units are in the column names, as the engine writes them:

=====================  ===========================================================
suffix                 unit
=====================  ===========================================================
``_s``                 seconds (``time_s`` is the sample time since the run began)
``_ms``                milliseconds
``_bps``               bits per second (payload for flows: goodput)
``_bytes``             bytes
``_packets``           packets
=====================  ===========================================================

Flow series (:attr:`Run.flow_series`), one row per (sample time, flow):
``time_s``, ``flow`` (index into the summary's flows), ``flow_name``, ``cwnd_bytes``,
``ssthresh_bytes`` (null while the threshold is infinite), ``rwnd_bytes`` (last window
the receiver advertised), ``flight_bytes``, ``srtt_ms`` (null before the first RTT
sample), ``rcv_buffer_bytes`` (bytes held in the receive buffer), ``read_rate_bps`` and
``goodput_bps`` (over the last sampling period), ``snd_una`` and ``snd_nxt`` (bytes:
highest acknowledged and highest sent, for time-sequence plots), ``flow_window_bytes``,
``ar_bps`` (the receiver's rate estimate: AFC's AR, RSFC's rho), ``rcv_buf_limit_bytes``,
``t_buff_ms`` (RSFC's estimate of the wait in the sender's uplink buffer; null for other
policies) and ``policy_state`` (RSFC: 0 SLOW, 1 FAST, 2 MONITOR; -1 for other policies).
TFRC / DCCP flows
also fill ``tfrc_x_bps``, ``tfrc_x_recv_bps``, ``tfrc_p`` and the Freeze-DCCP states
``tfrc_state`` (0 NORMAL, 1 FROZEN, 2 RESTORING, 3 PROBING) and ``tfrc_rx_state``
(0 NORMAL to 6 PROBED); these are NaN and -1 for TCP flows, whose window columns are
0 for TFRC flows (``snd_una`` is then the bytes received, ``snd_nxt`` the bytes sent).

Link series (:attr:`Run.link_series`), one row per (sample time, link direction):
``time_s``, ``dir`` (index into the summary's links), ``dir_name`` (``link:a->b``),
``queue_packets``, ``queue_bytes``, ``rate_bps`` (the direction's rate then).

Every frame is a polars DataFrame; ``frame.to_pandas()`` gives pandas (it needs pandas
and pyarrow: ``pip install 'mobiflow[pandas]'``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mobiflow.api import FLOW_SERIES_FILE, LINK_SERIES_FILE, SUMMARY_FILE, PathLike
from mobiflow.results import Summary

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from mobiflow.scenario import Scenario

__all__ = [
    "SSTHRESH_INFINITE",
    "Run",
    "flows_frame",
    "links_frame",
    "read_flow_series",
    "read_link_series",
]

SSTHRESH_INFINITE = 2**62 - 1
"""How the engine writes an infinite slow-start threshold in ``ssthresh_bytes`` (it caps
the value at ``u64::MAX / 4``); the DataFrames show it as null."""

_FLOAT_COLUMNS = ("time_s", "srtt_ms", "read_rate_bps", "goodput_bps", "rate_bps", "tfrc_p")
_STRING_COLUMNS = ("flow_name", "dir_name")


def _schema(header: bytes) -> dict[str, Any]:
    """Column types of a series CSV: floats for rates and times, strings for names,
    64-bit integers for the rest. Columns are typed by name, not guessed from the first
    rows (a goodput that is a whole number early on is still a float)."""
    import polars as pl

    columns = header.decode("utf-8").strip().split(",")
    schema: dict[str, Any] = {}
    for name in columns:
        if name in _STRING_COLUMNS:
            schema[name] = pl.String
        elif name in _FLOAT_COLUMNS or name.endswith(("_s", "_ms", "_bps")):
            schema[name] = pl.Float64
        else:
            schema[name] = pl.Int64
    return schema


def _read_series_csv(data: bytes) -> pl.DataFrame:
    import polars as pl

    header = data.split(b"\n", 1)[0]
    frame = pl.read_csv(io.BytesIO(data), schema_overrides=_schema(header))
    if "ssthresh_bytes" in frame.columns:
        ssthresh = pl.col("ssthresh_bytes")
        frame = frame.with_columns(
            pl.when(ssthresh >= SSTHRESH_INFINITE)
            .then(None)
            .otherwise(ssthresh)
            .alias("ssthresh_bytes")
        )
    return frame


def read_flow_series(source: PathLike | bytes) -> pl.DataFrame:
    """The flow series from ``flow_series.csv`` (a path) or its bytes."""
    return _read_series_csv(source if isinstance(source, bytes) else Path(source).read_bytes())


def read_link_series(source: PathLike | bytes) -> pl.DataFrame:
    """The link series from ``link_series.csv`` (a path) or its bytes."""
    return _read_series_csv(source if isinstance(source, bytes) else Path(source).read_bytes())


# Summary columns whose values may be missing: typed so that an all-null column is
# still a float column.
_FLOW_FLOATS = (
    "goodput_bps",
    "completion_time_s",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "handoff_ba_sst_bps",
    "handoff_ba_sst_rtt_ms",
)


def flow_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The summary's flows as flat rows: ``intervals`` becomes one column per interval,
    ``interval_<name>_bps`` (goodput over that interval, bits per second), and
    ``handoff`` one column per counter, ``handoff_<name>``."""
    rows = []
    for flow in summary.get("flows", []):
        row = {k: v for k, v in flow.items() if k not in ("intervals", "handoff", "tfrc")}
        for name, v in flow.get("handoff", {}).items():
            row[f"handoff_{name}"] = v
        for name, bps in flow.get("intervals", {}).items():
            row[f"interval_{name}_bps"] = bps
        # A TFRC flow's scalar results become tfrc_<key> columns (its lists stay in
        # the summary).
        for key, value in (flow.get("tfrc") or {}).items():
            if isinstance(value, int | float | bool | str):
                row[f"tfrc_{key}"] = value
        rows.append(row)
    return rows


def flows_frame(summary: Mapping[str, Any]) -> pl.DataFrame:
    """One row per flow of a summary (see :func:`flow_rows`); units in column names."""
    import polars as pl

    rows = flow_rows(summary)
    frame = pl.from_dicts(rows, infer_schema_length=None) if rows else pl.DataFrame()
    casts = [
        pl.col(c).cast(pl.Float64)
        for c in frame.columns
        if c in _FLOW_FLOATS or (c.startswith("interval_") and c.endswith("_bps"))
    ]
    for col in ("burst_completion_times_s", "page_load_times_s"):
        if col in frame.columns:
            casts.append(pl.col(col).cast(pl.List(pl.Float64)))
    return frame.with_columns(casts) if casts else frame


def links_frame(summary: Mapping[str, Any]) -> pl.DataFrame:
    """One row per link direction of a summary; units in column names."""
    import polars as pl

    rows = list(summary.get("links", []))
    frame = pl.from_dicts(rows, infer_schema_length=None) if rows else pl.DataFrame()
    if "queue_mean_packets" in frame.columns:
        frame = frame.with_columns(pl.col("queue_mean_packets").cast(pl.Float64))
    return frame


class Run:
    """The results of one run: summary, per-flow and per-link tables, time series, plots.

    Made by :meth:`mobiflow.Scenario.run` or read back with :meth:`Run.load`::

        run = mobiflow.Scenario.load("scenarios/examples/fluctuating_reader.toml").run()
        run.flows.select("name", "goodput_bps", "zero_windows")
        run.flow_series.filter(pl.col("time_s") < 10)
        run.plot_cwnd("cwnd.png")

    Times are seconds, rates bits per second, sizes bytes; see :mod:`mobiflow.outputs`.
    """

    def __init__(
        self,
        summary_json: str,
        flow_csv: bytes | None = None,
        link_csv: bytes | None = None,
        *,
        out: PathLike | None = None,
        scenario: Scenario | None = None,
        label: str | None = None,
    ) -> None:
        """Wrap the engine's output. Series not given are read from ``out`` when asked."""
        self.json = summary_json
        """The summary as JSON text (the bytes of ``summary.json``)."""
        self.out: Path | None = None if out is None else Path(out)
        """The results folder, if the run was written to one."""
        self.scenario = scenario
        """The scenario that was run, if known."""
        self._flow_csv = flow_csv
        self._link_csv = link_csv
        self._label = label

    @classmethod
    def load(cls, out: PathLike, label: str | None = None) -> Run:
        """Read a results folder written by ``mobiflow run --out``, :meth:`save` or a
        sweep. Raises ``FileNotFoundError`` if it has no ``summary.json``."""
        folder = Path(out)
        summary = folder / SUMMARY_FILE
        if not summary.is_file():
            raise FileNotFoundError(f"{folder}: not a run folder (no {SUMMARY_FILE})")
        return cls(summary.read_text(encoding="utf-8"), out=folder, label=label)

    # -- the summary --------------------------------------------------------------------

    @cached_property
    def summary(self) -> Summary:
        """The summary as a dict (see :class:`mobiflow.Summary`): rates in bits per
        second, times in seconds or milliseconds as their keys say."""
        return cast(Summary, json.loads(self.json))

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self.summary["scenario"]

    @property
    def seed(self) -> int:
        """The seed of the run."""
        return self.summary["seed"]

    @property
    def label(self) -> str:
        """How plots name this run: the label given, else the scenario's name."""
        return self._label if self._label is not None else self.name

    @label.setter
    def label(self, value: str) -> None:
        self._label = value

    @cached_property
    def flows(self) -> pl.DataFrame:
        """One row per flow: the summary's flow fields, with ``interval_<name>_bps``
        columns for the named intervals (goodput, bits per second)."""
        return flows_frame(self.summary)

    @cached_property
    def links(self) -> pl.DataFrame:
        """One row per link direction: packets and bytes sent, drops, outage losses,
        queue length (packets)."""
        return links_frame(self.summary)

    # -- the series ---------------------------------------------------------------------

    def _series_bytes(self, which: str) -> bytes:
        data = self._flow_csv if which == "flow" else self._link_csv
        if data is not None:
            return data
        if self.out is None:
            raise ValueError("this run has no series (it was neither kept nor written)")
        name = FLOW_SERIES_FILE if which == "flow" else LINK_SERIES_FILE
        return (self.out / name).read_bytes()

    @cached_property
    def flow_series(self) -> pl.DataFrame:
        """The sampled per-flow series (see :mod:`mobiflow.outputs` for the columns)."""
        return read_flow_series(self._series_bytes("flow"))

    @cached_property
    def link_series(self) -> pl.DataFrame:
        """The sampled per-link-direction series (queue, rate)."""
        return read_link_series(self._series_bytes("link"))

    @property
    def series(self) -> dict[str, pl.DataFrame]:
        """``{"flow": flow_series, "link": link_series}``, as :func:`mobiflow.read_series`."""
        return {"flow": self.flow_series, "link": self.link_series}

    # -- files --------------------------------------------------------------------------

    def save(self, out: PathLike) -> Path:
        """Write ``summary.json``, ``flow_series.csv`` and ``link_series.csv`` into the
        folder ``out`` (created if needed; other files are left alone). Returns it."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / SUMMARY_FILE, self.json.encode("utf-8"))
        write_atomically(folder / FLOW_SERIES_FILE, self._series_bytes("flow"))
        write_atomically(folder / LINK_SERIES_FILE, self._series_bytes("link"))
        if self.out is None:
            self.out = folder
        return folder

    # -- plots --------------------------------------------------------------------------

    def plot(self, kind: str = "all", path: PathLike | None = None, **options: Any) -> Figure:
        """Draw one of :data:`mobiflow.plot.KINDS` (``cwnd``, ``seq``, ``throughput``,
        ``queue``, ``buffer``, ``all``); save it to ``path`` (PNG or SVG by extension)."""
        from mobiflow import plot

        return plot.plot(self, kind, path=path, **options)

    def plot_cwnd(self, path: PathLike | None = None, **options: Any) -> Figure:
        """cwnd, ssthresh and advertised window over time (KiB)."""
        return self.plot("cwnd", path, **options)

    def plot_seq(self, path: PathLike | None = None, **options: Any) -> Figure:
        """Time-sequence plot: highest byte sent and acknowledged (MB) over time."""
        return self.plot("seq", path, **options)

    def plot_throughput(self, path: PathLike | None = None, **options: Any) -> Figure:
        """Goodput per sampling period (Mb/s) over time."""
        return self.plot("throughput", path, **options)

    def plot_queue(self, path: PathLike | None = None, **options: Any) -> Figure:
        """Queue length (packets) of each link direction that queued, over time."""
        return self.plot("queue", path, **options)

    def plot_buffer(self, path: PathLike | None = None, **options: Any) -> Figure:
        """Receive-buffer occupancy (KiB) over time."""
        return self.plot("buffer", path, **options)

    def __repr__(self) -> str:
        where = f", out={os.fspath(self.out)!r}" if self.out is not None else ""
        return f"<mobiflow.Run {self.name!r} seed={self.seed}{where}>"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it to ``path``:
    a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
