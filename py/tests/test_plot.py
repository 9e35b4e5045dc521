"""Figures: the plotting API and ``mobiflow plot``."""

from __future__ import annotations

from pathlib import Path

import pytest

import mobiflow

from .conftest import Cli
from .test_cli import assert_clean_error

pytest.importorskip("matplotlib", reason="matplotlib is not installed (mobiflow[plot])")

import numpy as np

from mobiflow import plot

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny scenario with NewReno and with CUBIC, written to folders."""
    base = tmp_path_factory.mktemp("runs")
    sc = mobiflow.Scenario.load(tiny)
    out = {}
    for cc in ("newreno", "cubic"):
        out[cc] = base / cc
        sc.set("flows.bulk.cc", cc).run(out=out[cc])
    return out


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 10_000


def assert_svg(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "<svg" in text
    assert "</svg>" in text
    assert len(text) > 10_000


@pytest.mark.parametrize("kind", sorted(plot.KINDS))
def test_every_kind_draws_png_and_svg(runs: dict[str, Path], tmp_path: Path, kind: str) -> None:
    run = mobiflow.Run.load(runs["newreno"])
    fig = run.plot(kind, tmp_path / f"{kind}.png")
    assert fig.axes, "the figure has axes"
    assert_png(tmp_path / f"{kind}.png")
    plot.plot(run, kind, path=tmp_path / f"{kind}.svg")
    assert_svg(tmp_path / f"{kind}.svg")


def test_several_runs_share_one_figure(runs: dict[str, Path], tmp_path: Path) -> None:
    fig = plot.throughput(list(runs.values()), flow="bulk", path=tmp_path / "cmp.svg")
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["newreno", "cubic"]  # folder names label the runs
    assert_svg(tmp_path / "cmp.svg")
    fig = plot.windows([mobiflow.Run.load(p) for p in runs.values()], labels=["A", "B"], flow=0)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["A cwnd", "A ssthresh", "A rwnd", "B cwnd", "B ssthresh", "B rwnd"]


def test_the_axes_are_labelled_with_units(runs: dict[str, Path]) -> None:
    run = mobiflow.Run.load(runs["cubic"])
    ylabels = {
        "cwnd": "window (KiB)",
        "seq": "sequence (MB)",
        "throughput": "goodput (Mb/s)",
        "queue": "queue (packets)",
        "buffer": "receive buffer (KiB)",
    }
    for kind, ylabel in ylabels.items():
        ax = run.plot(kind).axes[0]
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("time (s)", ylabel)


def test_svg_output_is_reproducible(runs: dict[str, Path], tmp_path: Path) -> None:
    for name in ("a.svg", "b.svg"):
        plot.windows(runs["cubic"], path=tmp_path / name)
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_plot_errors(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown plot kind"):
        plot.plot(runs["cubic"], "cwnd-ish")
    with pytest.raises(ValueError, match="no flow 'nope'"):
        plot.windows(runs["cubic"], flow="nope")
    with pytest.raises(ValueError, match="unknown figure type"):
        plot.windows(runs["cubic"], path=tmp_path / "x.jpg")


def test_cli_plot_writes_the_figure(cli: Cli, runs: dict[str, Path], tmp_path: Path) -> None:
    proc = cli("plot", runs["newreno"], "--kind", "cwnd")
    assert proc.returncode == 0, proc.stderr
    assert_png(runs["newreno"] / "cwnd.png")
    assert f"figure written to {runs['newreno'] / 'cwnd.png'}" in proc.stdout

    out = tmp_path / "compare.svg"
    proc = cli("plot", runs["newreno"], runs["cubic"], "--kind", "throughput", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert_svg(out)

    proc = cli("plot", runs["cubic"], "-k", "buffer", "-o", tmp_path / "b.png", "--flow", "bulk")
    assert proc.returncode == 0, proc.stderr
    assert_png(tmp_path / "b.png")


def test_cli_plot_refuses_bad_input(cli: Cli, runs: dict[str, Path], tmp_path: Path) -> None:
    assert_clean_error(cli("plot", tmp_path / "missing"), 2, "missing", "no such folder")
    assert_clean_error(cli("plot", tmp_path), 2, "not a run folder")
    assert_clean_error(cli("plot", runs["cubic"], "--kind", "pie"), 2, "--kind pie")
    assert_clean_error(cli("plot", runs["cubic"], "--out", tmp_path / "x.gif"), 2, "x.gif")
    assert_clean_error(cli("plot", runs["cubic"], "--flow", "nope"), 2, "no flow 'nope'")
    assert_clean_error(
        cli("plot", runs["cubic"], runs["newreno"], "--label", "one"), 2, "1 labels for 2 runs"
    )


def test_throughput_can_be_smoothed(runs: dict[str, Path]) -> None:
    def goodput(smooth: float | None = None) -> list[float]:
        line = plot.throughput(runs["cubic"], flow="bulk", smooth=smooth).axes[0].lines[0]
        return list(np.asarray(line.get_ydata(), dtype=float))

    raw, smooth = goodput(), goodput(smooth=1.0)
    assert len(raw) == len(smooth)
    assert max(smooth) <= max(raw)
    assert min(smooth[-3:]) > 0.5 * min(raw[-3:])  # the ends are averaged, not padded
