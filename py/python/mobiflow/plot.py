"""Figures of a run, or of several runs on one figure to compare them (matplotlib).

Every function takes one run or a list of runs (:class:`mobiflow.Run` objects or results
folders), draws the figure this field draws for the quantity, saves it if ``path`` is
given (PNG or SVG, chosen by the extension) and returns the matplotlib ``Figure``::

    import mobiflow
    from mobiflow import plot

    run = mobiflow.Scenario.load("scenarios/examples/fluctuating_reader.toml").run()
    plot.windows(run, path="cwnd.png")                  # cwnd, ssthresh, rwnd
    plot.throughput(["out/newreno", "out/cubic"], path="compare.svg")

=================  ===================================  ===========================
kind (CLI)         function                             axes
=================  ===================================  ===========================
``cwnd``           :func:`windows`                      KiB over seconds
``seq``            :func:`time_sequence`                MB over seconds
``throughput``     :func:`throughput`                   Mb/s over seconds
``queue``          :func:`queue`                        packets over seconds
``buffer``         :func:`receive_buffer`               KiB over seconds
``capacity``       :func:`capacity`                     Mb/s over seconds: the link's
                                                        capacity shaded under goodput
``all``            :func:`overview`                     the five above, stacked
=================  ===================================  ===========================

Figures are made without pyplot (no display, no global state): in a notebook the
returned figure shows itself; elsewhere save it with ``path``. Needs matplotlib
(``pip install 'mobiflow[plot]'``).
"""

from __future__ import annotations

import copy
import functools
import io
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobiflow.outputs import Run

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from mobiflow.api import PathLike

__all__ = [
    "KINDS",
    "capacity",
    "overview",
    "plot",
    "queue",
    "receive_buffer",
    "save",
    "throughput",
    "time_sequence",
    "windows",
]

RunLike = Run | str | os.PathLike[str]
"""A run, or the results folder of one."""

KIB = 1024.0
"""Bytes per KiB (window and buffer axes)."""
MB = 1e6
"""Bytes per MB (sequence axis)."""
MBPS = 1e6
"""Bits per second per Mb/s (rate axes)."""

FORMATS = (".png", ".svg", ".pdf")
"""File types :func:`save` writes, by extension."""


def _matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("mobiflow.plot needs matplotlib: pip install 'mobiflow[plot]'") from e


def as_runs(runs: RunLike | Sequence[RunLike], labels: Sequence[str] | None = None) -> list[Run]:
    """Runs from runs or results folders. A folder's run is labelled by the folder's
    name when several are compared; ``labels`` replaces the labels."""
    items: list[RunLike] = [runs] if isinstance(runs, Run | str | os.PathLike) else list(runs)
    if not items:
        raise ValueError("no run to plot")
    out: list[Run] = []
    for item in items:
        if isinstance(item, Run):
            out.append(item)
        else:
            folder = Path(item)
            out.append(Run.load(folder, label=folder.name if len(items) > 1 else None))
    if labels is not None:
        if len(labels) != len(out):
            raise ValueError(f"{len(labels)} labels for {len(out)} runs")
        out = [_relabel(r, label) for r, label in zip(out, labels, strict=True)]
    return out


def _relabel(run: Run, label: str) -> Run:
    """A copy of ``run`` with another label (the caller's run keeps its own)."""
    other = copy.copy(run)
    other.label = label
    return other


@functools.cache
def _figure_class() -> type[Figure]:
    """matplotlib's ``Figure`` that a notebook shows as a picture.

    The figures are made without pyplot (no global state, nothing to close), so
    IPython's inline backend never hears of them; ``_repr_png_`` lets a notebook show
    the figure a cell returns, with no magic. Where a backend registered its own
    formatter for ``Figure``, IPython uses that one instead (one picture, not two).
    """
    from matplotlib.figure import Figure

    class NotebookFigure(Figure):
        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

    NotebookFigure.__name__ = NotebookFigure.__qualname__ = "Figure"
    return NotebookFigure


def _new_figure(rows: int = 1, height: float = 3.2) -> Figure:
    _matplotlib()
    return _figure_class()(figsize=(8.0, height * rows), layout="constrained")


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    if ax is not None:
        from matplotlib.figure import Figure

        root = ax.get_figure(root=True)
        if not isinstance(root, Figure):
            raise ValueError("the axes belong to no figure")
        return root, ax
    fig = _new_figure()
    return fig, fig.add_subplot()


def _flows(run: Run, flow: str | int | None, tcp: bool = False) -> list[tuple[int, str]]:
    """``(index, name)`` of the flows to draw: all (the TCP flows only with ``tcp``, for
    a plot of what only TCP has), or the one named or numbered."""
    flows = [(i, str(f["name"])) for i, f in enumerate(run.summary["flows"])]
    if flow is None:
        if tcp:
            protocols = [f["protocol"] for f in run.summary["flows"]]
            return [(i, n) for i, n in flows if protocols[i] == "tcp"]
        return flows
    chosen = [(i, n) for i, n in flows if flow in (i, n)]
    if not chosen:
        names = ", ".join(n for _, n in flows)
        raise ValueError(f"{run.label}: no flow {flow!r}; the flows are {names}")
    return chosen


def _series_of(frame: pl.DataFrame, column: str, index_col: str, index: int) -> tuple[Any, Any]:
    import polars as pl

    part = frame.filter(pl.col(index_col) == index)
    return part["time_s"].to_numpy(), part[column].to_numpy()


def _name(run: Run, runs: Sequence[Run], what: str, many: bool) -> str:
    """Legend entry: the run's label when several runs share the axes, then ``what``."""
    if len(runs) > 1:
        return f"{run.label}: {what}" if many else run.label
    return what


def _colors(n: int) -> list[str]:
    return [f"C{i % 10}" for i in range(n)]


def _flow_lines(
    items: Sequence[Run], flow: str | int | None, tcp: bool = False
) -> Iterator[tuple[str, Run, int, str | None]]:
    """Each flow to draw of each run (as :func:`_flows` chooses them): its colour, run,
    index and legend name (``None`` when one run with one flow is drawn, so that its
    lines need no name)."""
    pairs = [(r, f) for r in items for f in _flows(r, flow, tcp)]
    many = any(len(_flows(r, flow, tcp)) > 1 for r in items)
    for color, (run, (index, fname)) in zip(_colors(len(pairs)), pairs, strict=True):
        yield (
            color,
            run,
            index,
            (_name(run, items, fname, many) if len(items) > 1 or many else None),
        )


def _finish(ax: Axes, ylabel: str, title: str | None) -> None:
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", loc="best")
    if title:
        ax.set_title(title)


def _default_title(runs: Sequence[Run], what: str) -> str:
    if len(runs) == 1:
        return f"{runs[0].label}: {what}"
    return what


def save(fig: Figure, path: PathLike) -> Path:
    """Save ``fig`` as PNG, SVG or PDF by the extension of ``path`` (folders created).

    Files are reproducible: no date in the metadata and fixed SVG ids.
    """
    import matplotlib as mpl

    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{out}: unknown figure type {suffix!r}; use one of {', '.join(FORMATS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    by_format: dict[str, dict[str, str | None]] = {
        ".png": {"Software": "mobiflow"},
        ".svg": {"Creator": "mobiflow", "Date": None},
        ".pdf": {"Creator": "mobiflow", "CreationDate": None},
    }
    metadata = by_format[suffix]
    with mpl.rc_context({"svg.hashsalt": "mobiflow", "svg.fonttype": "none"}):
        fig.savefig(out, dpi=150, metadata=metadata)
    return out


def _done(fig: Figure, path: PathLike | None) -> Figure:
    if path is not None:
        save(fig, path)
    return fig


# --------------------------------------------------------------------------------------
# The figures
# --------------------------------------------------------------------------------------


def windows(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    ssthresh: bool = True,
    rwnd: bool = True,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Congestion window (solid), slow-start threshold (dashed, while finite) and the
    receiver's advertised window (dotted), in KiB, over time in seconds."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    for color, run, index, who in _flow_lines(items, flow, tcp=True):
        frame = run.tcp_series
        sep = "" if who is None else f"{who} "
        t, cwnd = _series_of(frame, "cwnd_bytes", "flow_index", index)
        axes.plot(t, cwnd / KIB, color=color, lw=1.2, label=f"{sep}cwnd")
        if ssthresh:
            t, ss = _series_of(frame, "ssthresh_bytes", "flow_index", index)
            axes.plot(t, ss / KIB, color=color, lw=1.0, ls="--", label=f"{sep}ssthresh")
        if rwnd:
            t, rw = _series_of(frame, "rwnd_bytes", "flow_index", index)
            axes.plot(t, rw / KIB, color=color, lw=1.0, ls=":", label=f"{sep}rwnd")
    _finish(axes, "window (KiB)", title or _default_title(items, "cwnd, ssthresh, rwnd"))
    return _done(fig, path)


def time_sequence(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    acked: bool = True,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Time-sequence plot: the highest byte sent (``snd_nxt``, solid) and acknowledged
    (``snd_una``, dashed) in MB over time in seconds, at the sampling period."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    for color, run, index, who in _flow_lines(items, flow, tcp=True):
        sep = "" if who is None else f"{who} "
        t, nxt = _series_of(run.tcp_series, "snd_nxt", "flow_index", index)
        axes.plot(t, nxt / MB, color=color, lw=1.2, label=f"{sep}sent")
        if acked:
            t, una = _series_of(run.tcp_series, "snd_una", "flow_index", index)
            axes.plot(t, una / MB, color=color, lw=1.0, ls="--", label=f"{sep}acked")
    _finish(axes, "sequence (MB)", title or _default_title(items, "time-sequence"))
    return _done(fig, path)


def throughput(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    read_rate: bool = False,
    smooth: float | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Goodput over each sampling period in Mb/s over time in seconds, one line per
    flow and run; with ``read_rate``, the application's read rate dotted; with
    ``smooth``, both averaged over a moving window of that many seconds."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    for color, run, index, name in _flow_lines(items, flow):
        who = "goodput" if name is None else name
        t, bps = _series_of(run.flow_series, "goodput_bps", "flow_index", index)
        axes.plot(t, _smooth(t, bps, smooth) / MBPS, color=color, lw=1.2, label=who)
        if read_rate:
            t, rr = _series_of(run.flow_series, "read_rate_bps", "flow_index", index)
            axes.plot(
                t, _smooth(t, rr, smooth) / MBPS, color=color, lw=1.0, ls=":", label=f"{who} read"
            )
    _finish(axes, "goodput (Mb/s)", title or _default_title(items, "throughput"))
    return _done(fig, path)


def _smooth(t: Any, y: Any, seconds: float | None) -> Any:
    """``y`` averaged over a centred moving window of ``seconds`` (samples at ``t``)."""
    import numpy as np

    if not seconds or len(t) < 2:
        return y
    step = float(np.median(np.diff(t)))
    width = max(1, round(seconds / step)) if step > 0 else 1
    if width == 1:
        return y
    values = np.asarray(y, dtype=float)
    known = ~np.isnan(values)
    kernel = np.ones(width)
    total = np.convolve(np.where(known, values, 0.0), kernel, mode="same")
    count = np.convolve(known.astype(float), kernel, mode="same")
    # Near the ends (and gaps) the window holds fewer samples: average those it holds.
    return np.divide(total, count, out=np.full_like(total, np.nan), where=count > 0)


def capacity(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    link: str | int | None = None,
    smooth: float | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Capacity shaded under goodput, in Mb/s over seconds, as Mahimahi's ``mm-graph``
    draws a trace-driven link: the capacity is the link series' ``rate_bps`` (for a
    trace, the opportunities of each sampling period x their bytes / the period), of
    the direction given by ``link``, else of every direction into a drawn flow's
    receiver. ``smooth`` averages both over a moving window of that many seconds."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    colors = _colors(sum(len(_flows(r, flow)) for r in items))
    for run in items:
        flows = _flows(run, flow)
        if link is not None:
            dirs = _directions(run, link)
        else:
            ends = {run.summary["flows"][i]["dst"] for i, _ in flows}
            dirs = [
                (i, str(d["name"])) for i, d in enumerate(run.summary["links"]) if d["to"] in ends
            ]
        for index, dname in dirs:
            t, bps = _series_of(run.link_series, "rate_bps", "dir_index", index)
            who = f"{run.label}: {dname}" if len(items) > 1 else dname
            axes.fill_between(
                t,
                _smooth(t, bps, smooth) / MBPS,
                step="pre",
                color="0.8",
                alpha=0.7,
                lw=0,
                label=f"capacity {who}",
            )
        for index, fname in flows:
            color = colors.pop(0)
            who = _name(run, items, fname, len(flows) > 1) if len(items) > 1 else fname
            t, g = _series_of(run.flow_series, "goodput_bps", "flow_index", index)
            axes.plot(t, _smooth(t, g, smooth) / MBPS, color=color, lw=1.2, label=f"goodput {who}")
    _finish(axes, "Mb/s", title or _default_title(items, "capacity and goodput"))
    return _done(fig, path)


def _directions(run: Run, link: str | int | None) -> list[tuple[int, str]]:
    """Link directions to draw: the one named/numbered, else every one that queued."""
    dirs = [(i, str(d["name"])) for i, d in enumerate(run.summary["links"])]
    if link is not None:
        chosen = [(i, n) for i, n in dirs if link in (i, n) or n.split(":", 1)[0] == link]
        if not chosen:
            names = ", ".join(n for _, n in dirs)
            raise ValueError(f"{run.label}: no link direction {link!r}; there are {names}")
        return chosen
    queued = [(i, n) for i, n in dirs if run.summary["links"][i]["queue_max_packets"] > 0]
    return queued or dirs[:1]


def queue(
    runs: RunLike | Sequence[RunLike],
    *,
    link: str | int | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Queue length in packets over time in seconds, for each link direction that
    queued anything (or the one given by ``link``: index, ``"link:a->b"`` or the link's
    name for both directions)."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    pairs = [(r, d) for r in items for d in _directions(r, link)]
    many = any(len(_directions(r, link)) > 1 for r in items) or len(items) == 1
    for color, (run, (index, dname)) in zip(_colors(len(pairs)), pairs, strict=True):
        t, q = _series_of(run.link_series, "queue_packets", "dir_index", index)
        axes.step(t, q, where="post", color=color, lw=1.2, label=_name(run, items, dname, many))
    _finish(axes, "queue (packets)", title or _default_title(items, "queue length"))
    return _done(fig, path)


def receive_buffer(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    path: PathLike | None = None,
) -> Figure:
    """Receive-buffer occupancy (bytes held, in order or not, unread) in KiB over time
    in seconds."""
    items = as_runs(runs, labels)
    fig, axes = _axes(ax)
    for color, run, index, who in _flow_lines(items, flow, tcp=True):
        t, held = _series_of(run.tcp_series, "rcv_buffer_bytes", "flow_index", index)
        axes.plot(t, held / KIB, color=color, lw=1.2, label="buffered" if who is None else who)
    _finish(axes, "receive buffer (KiB)", title or _default_title(items, "receive buffer"))
    return _done(fig, path)


def overview(
    runs: RunLike | Sequence[RunLike],
    *,
    flow: str | int | None = None,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    path: PathLike | None = None,
) -> Figure:
    """The five figures stacked, sharing the time axis."""
    items = as_runs(runs, labels)
    fig = _new_figure(rows=5, height=2.4)
    axes = fig.subplots(5, 1, sharex=True)
    windows(items, flow=flow, ax=axes[0], title="cwnd, ssthresh, rwnd")
    time_sequence(items, flow=flow, ax=axes[1], title="time-sequence")
    throughput(items, flow=flow, ax=axes[2], title="throughput")
    queue(items, ax=axes[3], title="queue length")
    receive_buffer(items, flow=flow, ax=axes[4], title="receive buffer")
    for ax in axes[:-1]:
        ax.set_xlabel("")
    fig.suptitle(title or ", ".join(r.label for r in items))
    return _done(fig, path)


KINDS: dict[str, Callable[..., Figure]] = {
    "cwnd": windows,
    "seq": time_sequence,
    "throughput": throughput,
    "queue": queue,
    "buffer": receive_buffer,
    "capacity": capacity,
    "all": overview,
}
"""The figures by the name ``mobiflow plot --kind`` knows them by."""


def plot(
    runs: RunLike | Sequence[RunLike],
    kind: str = "all",
    *,
    path: PathLike | None = None,
    **options: Any,
) -> Figure:
    """Draw the figure ``kind`` (a key of :data:`KINDS`) of one or several runs."""
    try:
        draw = KINDS[kind]
    except KeyError:
        expected = ", ".join(KINDS)
        raise ValueError(f"unknown plot kind {kind!r}; expected one of {expected}") from None
    return draw(runs, path=path, **options)
