"""Traces as a user studies them, captures from the API, sweep output for scripts and
figures of a sweep: the capacity series of a trace-driven link, ``pcap=`` on
``Scenario.run``, ``mobiflow sweep --json``, ``mobiflow plot SWEEP_DIR``, link loss as a
percentage, and grid values with units as numbers."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import polars as pl
import pytest

import mobiflow
from mobiflow.tables import grid_columns, grid_value

from .conftest import Cli

# A 100 ms trace: 10 opportunities in its first 50 ms, 2 in its last 50 ms, so the
# capacity alternates between 2.4 Mb/s and 0.48 Mb/s per 50 ms, mean 1.44 Mb/s.
TRACE = [1 + 5 * i for i in range(10)] + [60, 100]

TRACE_TOML = """\
name = "trace"
[run]
duration = "2s"
[[links]]
name = "cell"
a = "server"
b = "phone"
delay = "20ms"
[links.ab]
trace = "cell.trace"
[links.ba]
rate = "10Mbps"
[[flows]]
name = "bulk"
from = "server"
to = "phone"
[measure]
sample_interval = "50ms"
"""


@pytest.fixture
def trace_scenario(tmp_path: Path) -> Path:
    (tmp_path / "cell.trace").write_text("\n".join(map(str, TRACE)) + "\n", encoding="utf-8")
    path = tmp_path / "trace.toml"
    path.write_text(TRACE_TOML, encoding="utf-8")
    return path


def test_trace_link_series_gives_the_capacity_of_each_sample(trace_scenario: Path) -> None:
    run = mobiflow.Scenario.load(trace_scenario).run()
    ab = run.link_series.filter(pl.col("dir") == "cell:server->phone")
    # Samples at 50 ms steps: each holds the opportunities of the 50 ms before it.
    rates = dict(zip(ab["time_s"].round(3).to_list(), ab["rate_bps"].to_list(), strict=True))
    per_opportunity = 1500 * 8 / 0.05
    assert rates[0.05] == pytest.approx(10 * per_opportunity)  # [0, 50 ms): 1, 6, ..., 46
    assert rates[0.1] == pytest.approx(1 * per_opportunity)  # [50, 100 ms): 60
    # [1000, 1050 ms): the 100 of the tenth period (at 1000 ms), 1001, ..., 1046.
    assert rates[1.05] == pytest.approx(11 * per_opportunity)
    # Not the trace's mean in every sample: it varies, and averages to the mean.
    assert ab["rate_bps"].n_unique() > 1
    whole = ab.filter(pl.col("time_s") > 0)["rate_bps"].mean()
    assert whole == pytest.approx(12 * 1500 * 8 / 0.1, rel=0.05)
    # Goodput never exceeds what the trace offered over the run.
    bulk = run.flow_series.filter(pl.col("flow") == "bulk")
    assert float(bulk["goodput_bps"].sum()) <= float(ab["rate_bps"].sum()) * 1.001


def test_capacity_figure_draws_capacity_under_goodput(trace_scenario: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from mobiflow import plot

    run = mobiflow.Scenario.load(trace_scenario).run()
    fig = plot.capacity(run, path=tmp_path / "capacity.png")
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["capacity cell:server->phone", "goodput bulk"]
    assert (tmp_path / "capacity.png").stat().st_size > 1000


def test_run_with_pcap_writes_captures_and_without_out_refuses(
    trace_scenario: Path, tmp_path: Path
) -> None:
    sc = mobiflow.Scenario.load(trace_scenario)
    sc.run(out=tmp_path / "cap", pcap=True)
    assert {p.name for p in (tmp_path / "cap").glob("*.pcap")} == {"server.pcap", "phone.pcap"}
    with pytest.raises(ValueError, match="pcap=True needs out="):
        sc.run(pcap=True)
    # A capture the scenario asks for is not dropped silently either.
    captured = sc.set("measure.capture", {"hosts": ["server"]})
    with pytest.raises(ValueError, match=r"measure\.capture asks for packet captures"):
        captured.run()
    captured.run(out=tmp_path / "own")
    assert (tmp_path / "own" / "server.pcap").is_file()


def test_link_loss_accepts_a_percentage(trace_scenario: Path) -> None:
    sc = mobiflow.Scenario.load(trace_scenario)
    lossy = sc.set("links.cell.loss", "5%").run()
    assert sum(d["random_losses"] for d in lossy.summary["links"]) > 0
    same = sc.set("links.cell.loss", 0.05).run()
    assert same.json == lossy.json
    with pytest.raises(mobiflow.ScenarioError, match=r"links\.0\.loss: .*percentage"):
        sc.set("links.cell.loss", "five")


def test_grid_values_with_units_get_numeric_twins() -> None:
    assert grid_value("64KB") == ("bytes", 65536.0)
    assert grid_value("6Mbps") == ("bps", 6e6)
    assert grid_value("265ms") == ("s", 0.265)
    assert grid_value("1%") == ("fraction", 0.01)
    assert grid_value("cubic") is None
    assert grid_columns("tcp.rcv_buf", ["64KB", "1MB"]) == {
        "tcp.rcv_buf": ["64KB", "1MB"],
        "tcp.rcv_buf_bytes": [65536.0, 1048576.0],
    }
    # Mixed kinds or names: the labels only.
    assert list(grid_columns("x", ["64KB", "6Mbps"])) == ["x"]
    assert list(grid_columns("flows.bulk.cc", ["reno", "cubic"])) == ["flows.bulk.cc"]


def _sweep_file(tmp_path: Path, scenario: Path) -> Path:
    spec = tmp_path / "sweep.toml"
    spec.write_text(
        f'scenario = "{scenario}"\nseeds = [1, 2]\nout = "runs/s"\n'
        + textwrap.dedent(
            """\
            [grid]
            "tcp.rcv_buf" = ["16KB", "256KB"]
            """
        ),
        encoding="utf-8",
    )
    return spec


def test_sweep_json_and_plot_of_a_sweep_folder(
    cli: Cli, trace_scenario: Path, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    spec = _sweep_file(tmp_path, trace_scenario)
    proc = cli("sweep", spec, "--jobs", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [r["status"] for r in doc["runs"]] == ["done"] * 4
    assert doc["seeds_matter"] is False
    rows = doc["aggregate"]
    assert [r["tcp.rcv_buf_bytes"] for r in rows] == [16384.0, 262144.0]
    assert all(r["seeds_identical"] and r["goodput_bps_ci_low"] is None for r in rows)
    out = tmp_path / "runs" / "s"
    figure = tmp_path / "sweep.png"
    proc = cli("plot", out, "--kind", "throughput", "--out", figure)
    assert proc.returncode == 0, proc.stderr
    assert figure.stat().st_size > 1000
    from mobiflow.cli import sweep_runs

    assert [r.label for r in sweep_runs(out)] == ["rcv_buf=16KB", "rcv_buf=256KB"]
    assert [r.seed for r in sweep_runs(out, 2)] == [2, 2]
    bad = cli("plot", out, "--seed", "9")
    assert bad.returncode == 2
    assert "ran seeds 1, 2" in bad.stderr


def test_file_api_refuses_pcap_without_out(trace_scenario: Path) -> None:
    with pytest.raises(ValueError, match="pcap=True needs out="):
        mobiflow.run(trace_scenario, pcap=True)


def test_a_scenario_capture_without_out_is_refused_everywhere(
    cli: Cli, trace_scenario: Path, tmp_path: Path
) -> None:
    text = trace_scenario.read_text(encoding="utf-8") + 'capture = { hosts = ["server"] }\n'
    captured = tmp_path / "captured.toml"
    captured.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"measure\.capture asks for packet captures"):
        mobiflow.run(captured)
    with pytest.raises(ValueError, match=r"measure\.capture asks for packet captures"):
        mobiflow.run_text(text, source=captured)
    proc = cli("run", captured)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {captured}: measure.capture asks for packet captures, which are written "
        "into the results folder: give --out DIR, or remove measure.capture"
    ]
    # Overridden away, it runs.
    assert cli("run", captured, "--set", "measure.capture={}").returncode == 0
    mobiflow.run(captured, out=tmp_path / "out")
    assert (tmp_path / "out" / "server.pcap").is_file()
