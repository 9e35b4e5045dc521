"""The results of one run as Python objects: :class:`Run` and its DataFrames.

A :class:`Run` holds what the engine reported: the summary (``summary.json``) and the
sampled time series (``flow_series``, ``tcp_series``, ``tfrc_series`` and
``link_series``, each ``.parquet``, or ``.csv`` when asked for with
``series_format="csv"`` / ``--format csv``), either in memory (from
:meth:`mobiflow.Scenario.run`) or in a results folder (:meth:`Run.load`). Both give the
same DataFrames; :func:`read_series` reads a folder in either format.

Every table has one schema and one naming, declared in :mod:`mobiflow.tables`:
``flow`` is a flow's name in every table (``flow_index`` its position, in the series),
``dir`` a link direction's name (``dir_index`` its position).

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

Flow series (:attr:`Run.flow_series`), one row per (sample time, flow), what every flow
has whatever its transport: ``time_s``, ``flow_index`` (index into the summary's flows),
``flow`` (its name), ``srtt_ms`` (TCP's SRTT, TFRC's R; null before the first sample),
``read_rate_bps`` and ``goodput_bps`` (over the last sampling period).

TCP series (:attr:`Run.tcp_series`), one row per (sample time, TCP flow): ``time_s``,
``flow_index``, ``flow``, ``cwnd_bytes``, ``ssthresh_bytes`` (null while the threshold
is infinite), ``rwnd_bytes`` (last window the receiver advertised), ``flight_bytes``,
``rcv_buffer_bytes`` (bytes held in the receive buffer), ``snd_una`` and ``snd_nxt``
(bytes: highest acknowledged and highest sent, for time-sequence plots),
``flow_window_bytes``, ``ar_bps`` (the receiver's rate estimate: AFC's AR, RSFC's rho),
``rcv_buf_limit_bytes``, ``t_buff_ms`` (RSFC's estimate of the wait in the sender's
uplink buffer; null for other policies) and ``policy_state`` (RSFC: 0 SLOW, 1 FAST,
2 MONITOR; -1 for other policies).

TFRC series (:attr:`Run.tfrc_series`), one row per (sample time, TFRC / DCCP flow):
``time_s``, ``flow_index``, ``flow``, ``x_bps`` (the allowed rate X), ``x_recv_bps``,
``p`` (the loss event rate), ``bytes_sent``, ``bytes_received``, and the Freeze-DCCP
states ``state`` (0 NORMAL, 1 FROZEN, 2 RESTORING, 3 PROBING) and ``rx_state``
(0 NORMAL to 6 PROBED).

A results folder written before the series were split (one ``flow_series`` with every
column) still reads: its TCP and TFRC series are taken from that table.

Link series (:attr:`Run.link_series`), one row per (sample time, link direction):
``time_s``, ``dir_index`` (index into the summary's links), ``dir`` (``link:a->b``),
``queue_packets``, ``queue_bytes``, ``rate_bps`` (the direction's rate then; for a
trace-driven direction, the capacity the trace offered over the last sampling period:
opportunities x ``trace_mtu`` bytes x 8 / period, as Mahimahi's ``mm-graph`` draws it).

Every frame is a polars DataFrame; ``frame.to_pandas()`` gives pandas (it needs pandas
and pyarrow: ``pip install 'mobiflow[pandas]'``).
"""

from __future__ import annotations

import html
import io
import json
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from mobiflow.api import SERIES_KINDS, SUMMARY_FILE, PathLike
from mobiflow.results import Summary
from mobiflow.tables import (
    SERIES_COLUMNS,
    SSTHRESH_INFINITE,
    flow_rows,
    flows_frame,
    links_frame,
    schema_of,
    series_frame,
)

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from mobiflow.scenario import Scenario

__all__ = [
    "DEFAULT_SERIES_FORMAT",
    "SERIES_FORMATS",
    "SSTHRESH_INFINITE",
    "Run",
    "SeriesFormat",
    "convert_series",
    "flow_rows",
    "flows_frame",
    "has_series",
    "join_series",
    "links_frame",
    "read_flow_series",
    "read_link_series",
    "read_series",
    "read_tcp_series",
    "read_tfrc_series",
    "write_series",
]

SeriesFormat = Literal["parquet", "csv"]
SERIES_FORMATS: tuple[SeriesFormat, ...] = ("parquet", "csv")
DEFAULT_SERIES_FORMAT: SeriesFormat = "parquet"
"""Series and sweep tables are Parquet unless CSV is asked for: typed, and about ten
times smaller on a long run (the flow series of an hour of rwnd_limited: 4.16 MB as CSV,
0.38 MB as Parquet)."""

_STEMS = {which: f"{which}_series" for which in SERIES_KINDS}

# A flow series written before the split held every column; its TCP and TFRC rows
# are told apart by the TFRC state (-1 for TCP flows), and renamed as below.
_LEGACY_TFRC = {
    "tfrc_x_bps": "x_bps",
    "tfrc_x_recv_bps": "x_recv_bps",
    "tfrc_p": "p",
    "snd_nxt": "bytes_sent",
    "snd_una": "bytes_received",
    "tfrc_state": "state",
    "tfrc_rx_state": "rx_state",
}


def check_series_format(fmt: str) -> SeriesFormat:
    """``fmt`` if it is a series format, else ``ValueError`` naming the choices."""
    for known in SERIES_FORMATS:
        if fmt == known:
            return known
    choices = ", ".join(SERIES_FORMATS)
    raise ValueError(f"unknown series format {fmt!r}; expected one of {choices}")


def series_file(folder: PathLike, which: str) -> Path | None:
    """The file of the ``which`` (one of :data:`mobiflow.api.SERIES_KINDS`) series in
    ``folder``:
    ``<which>_series.parquet`` or ``.csv``, whichever is there (Parquet first)."""
    for fmt in SERIES_FORMATS:
        path = Path(folder) / f"{_STEMS[which]}.{fmt}"
        if path.is_file():
            return path
    return None


def has_series(folder: PathLike) -> bool:
    """Whether ``folder`` holds a flow series, in either format."""
    return series_file(folder, "flow") is not None


def _read_file(path: Path, which: str) -> pl.DataFrame:
    import polars as pl

    if path.suffix == ".parquet":
        return series_frame(pl.read_parquet(path), which)
    return _read_bytes(path.read_bytes(), which)


def _read_source(source: PathLike | bytes, which: str) -> pl.DataFrame:
    if isinstance(source, bytes):
        return _read_bytes(source, which)
    path = Path(source)
    if path.is_dir():
        found = series_file(path, which)
        if found is None:
            old = series_file(path, "flow") if which in ("tcp", "tfrc") else None
            if old is not None:
                return _legacy_split(_read_file(old, "flow"), which)
            raise FileNotFoundError(f"{path}: no {_STEMS[which]}.parquet or .csv")
        path = found
    return _read_file(path, which)


def _legacy_split(frame: pl.DataFrame, which: str) -> pl.DataFrame:
    """The TCP or TFRC series out of a flow series written before the split."""
    import polars as pl

    if "cwnd_bytes" not in frame.columns:
        raise FileNotFoundError(f"no {_STEMS[which]}.parquet or .csv")
    tfrc = pl.col("tfrc_state") >= 0
    rows = frame.filter(~tfrc) if which == "tcp" else frame.filter(tfrc).rename(_LEGACY_TFRC)
    return series_frame(rows.select(list(SERIES_COLUMNS[which])), which)


def _read_bytes(data: bytes, which: str) -> pl.DataFrame:
    import polars as pl

    if data[:4] == b"PAR1":
        return series_frame(pl.read_parquet(io.BytesIO(data)), which)
    # Text columns: the names, in the file's naming (current, or before flow_index).
    header = data.split(b"\n", 1)[0].decode("utf-8").strip().split(",")
    names = ("flow", "dir") if "flow_index" in header or "dir_index" in header else ()
    text = ("flow_name", "dir_name", *names)
    frame = pl.read_csv(
        io.BytesIO(data),
        schema_overrides={
            c: (pl.String if c in text else t)
            for c, t in schema_of(header, SERIES_COLUMNS[which]).items()
        },
    )
    return series_frame(frame, which)


def read_flow_series(source: PathLike | bytes) -> pl.DataFrame:
    """The flow series from a file (``flow_series.parquet`` or ``.csv``), a results
    folder, or the bytes of either."""
    return _read_source(source, "flow")


def read_tcp_series(source: PathLike | bytes) -> pl.DataFrame:
    """The TCP series from a file (``tcp_series.parquet`` or ``.csv``), a results
    folder, or the bytes of either."""
    return _read_source(source, "tcp")


def read_tfrc_series(source: PathLike | bytes) -> pl.DataFrame:
    """The TFRC series from a file (``tfrc_series.parquet`` or ``.csv``), a results
    folder, or the bytes of either."""
    return _read_source(source, "tfrc")


def read_link_series(source: PathLike | bytes) -> pl.DataFrame:
    """The link series from a file (``link_series.parquet`` or ``.csv``), a results
    folder, or the bytes of either."""
    return _read_source(source, "link")


def read_series(out: PathLike) -> dict[str, pl.DataFrame]:
    """The series of a results folder, Parquet or CSV, by kind: ``{"flow": ..., "tcp":
    ..., "tfrc": ..., "link": ...}``."""
    return {which: _read_source(Path(out), which) for which in SERIES_KINDS}


def join_series(frames: Mapping[str, pl.DataFrame], which: str) -> pl.DataFrame:
    """The flow series joined with the ``which`` (``"tcp"`` or ``"tfrc"``) series: one
    row per sample of a flow of that transport, with the columns of both, in the
    series' order (time, then flow). ``frames`` is :func:`read_series`'s result or
    :attr:`Run.series`."""
    keys = ["time_s", "flow_index", "flow"]
    joined = frames["flow"].join(frames[which], on=keys, how="inner")
    return joined.sort(["time_s", "flow_index"], maintain_order=True)


def write_series(
    folder: PathLike,
    tables: Mapping[str, bytes | pl.DataFrame],
    series_format: str = DEFAULT_SERIES_FORMAT,
) -> list[Path]:
    """Write the series ``tables`` (by kind: ``flow``, ``tcp``, ``tfrc``, ``link``) into
    ``folder`` in ``series_format`` (``"parquet"`` or ``"csv"``), from the engine's CSV
    bytes or from frames; a file of the other format left there by an earlier run is
    removed. Returns the paths written."""
    fmt = check_series_format(series_format)
    out = Path(folder)
    written = []
    for which, data in tables.items():
        path = out / f"{_STEMS[which]}.{fmt}"
        if fmt == "csv":
            payload = data if isinstance(data, bytes) else data.write_csv().encode("utf-8")
        else:
            frame = _read_bytes(data, which) if isinstance(data, bytes) else data
            buf = io.BytesIO()
            frame.write_parquet(buf, compression="zstd", statistics=True)
            payload = buf.getvalue()
        write_atomically(path, payload)
        for other in SERIES_FORMATS:
            if other != fmt:
                (out / f"{_STEMS[which]}.{other}").unlink(missing_ok=True)
        written.append(path)
    return written


def convert_series(folder: PathLike, series_format: str = DEFAULT_SERIES_FORMAT) -> None:
    """Rewrite the series the engine wrote into ``folder`` (CSV) in ``series_format``."""
    fmt = check_series_format(series_format)
    out = Path(folder)
    csvs = {w: out / f"{_STEMS[w]}.csv" for w in SERIES_KINDS}
    if fmt == "csv" or not all(p.is_file() for p in csvs.values()):
        return
    write_series(out, {w: p.read_bytes() for w, p in csvs.items()}, fmt)


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
        series_csv: Mapping[str, bytes] | None = None,
        *,
        out: PathLike | None = None,
        scenario: Scenario | None = None,
        label: str | None = None,
    ) -> None:
        """Wrap the engine's output: the summary JSON and the series as CSV bytes by kind
        (``flow``, ``tcp``, ``tfrc``, ``link``). Series not given are read from ``out``
        when asked."""
        self.json = summary_json
        """The summary as JSON text (the bytes of ``summary.json``)."""
        self.out: Path | None = None if out is None else Path(out)
        """The results folder, if the run was written to one."""
        self.scenario = scenario
        """The scenario that was run, if known."""
        self._csv: dict[str, bytes] = dict(series_csv or {})
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
        """One row per flow: ``flow`` (its name) and the summary's flow fields, with
        ``interval_<name>_bps`` columns for the named intervals (goodput, bits per
        second); typed by :data:`mobiflow.tables.FLOW_COLUMNS`, as a sweep's table."""
        return flows_frame(self.summary)

    @cached_property
    def links(self) -> pl.DataFrame:
        """One row per link direction: packets and bytes sent, drops, outage losses,
        queue length (packets)."""
        return links_frame(self.summary)

    # -- the series ---------------------------------------------------------------------

    def _series(self, which: str) -> pl.DataFrame:
        data = self._csv.get(which)
        if data is not None:
            return _read_bytes(bytes(data), which)
        if self.out is None:
            raise ValueError("this run has no series (it was neither kept nor written)")
        return _read_source(self.out, which)

    @cached_property
    def flow_series(self) -> pl.DataFrame:
        """What every flow has over time: goodput, read rate, RTT (see
        :mod:`mobiflow.outputs` for the columns)."""
        return self._series("flow")

    @cached_property
    def tcp_series(self) -> pl.DataFrame:
        """The TCP flows over time: windows, flight, receive buffer, sequence numbers,
        the receive-window policy's estimates."""
        return self._series("tcp")

    @cached_property
    def tfrc_series(self) -> pl.DataFrame:
        """The TFRC / DCCP flows over time: X, X_recv, p, the Freeze-DCCP states."""
        return self._series("tfrc")

    @cached_property
    def link_series(self) -> pl.DataFrame:
        """The sampled per-link-direction series (queue, rate)."""
        return self._series("link")

    def _frame(self, which: str) -> pl.DataFrame:
        """The ``which`` series, read once (the cached property of that kind)."""
        frame: pl.DataFrame = getattr(self, f"{which}_series")
        return frame

    @property
    def series(self) -> dict[str, pl.DataFrame]:
        """Every series by kind, as :func:`mobiflow.read_series`: ``{"flow": ...,
        "tcp": ..., "tfrc": ..., "link": ...}``."""
        return {which: self._frame(which) for which in SERIES_KINDS}

    # -- files --------------------------------------------------------------------------

    def save(self, out: PathLike, series_format: str = DEFAULT_SERIES_FORMAT) -> Path:
        """Write ``summary.json`` and the series (``<kind>_series.parquet``, or ``.csv``
        with ``series_format="csv"``) into the folder ``out`` (created if needed; other
        files are left alone). Returns it."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        write_atomically(folder / SUMMARY_FILE, self.json.encode("utf-8"))
        tables: dict[str, bytes | pl.DataFrame] = {
            which: bytes(self._csv[which]) if which in self._csv else self._frame(which)
            for which in SERIES_KINDS
        }
        write_series(folder, tables, series_format)
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

    SHOWN_FLOW_COLUMNS = (
        "flow",
        "protocol",
        "cc",
        "goodput_bps",
        "retransmits",
        "timeouts",
        "rtt_mean_ms",
    )
    """The columns a notebook shows for a run (all of them are in :attr:`flows`)."""

    def _repr_html_(self) -> str:
        """A notebook shows a run as its heading and a compact table of its flows."""
        import polars as pl

        cols = [c for c in self.SHOWN_FLOW_COLUMNS if c in self.flows.columns]
        table = self.flows.select(cols)
        if "goodput_bps" in cols:
            table = table.with_columns((pl.col("goodput_bps") / 1e6).round(3).alias("goodput_bps"))
            table = table.rename({"goodput_bps": "goodput Mb/s"})
        head = html.escape(
            f"mobiflow.Run {self.name!r}, seed {self.seed}, "
            f"{self.summary['duration_s']:g} s simulated"
        )
        return f"<p><b>{head}</b></p>{table._repr_html_()}"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it to ``path``:
    a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
