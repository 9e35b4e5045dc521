"""Web page loads and RSFC's traced series through the Python API."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import mobiflow

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "rsfc"


def test_page_load_times_reach_the_flows_frame() -> None:
    sc = mobiflow.Scenario.load(SCENARIOS / "web_alone.toml").set("run.duration", "30s")
    run = sc.run()
    flows = run.flows
    web = flows.filter(pl.col("flow") == "web")
    assert web.schema["page_load_times_s"] == pl.List(pl.Float64)
    times = web["page_load_times_s"][0].to_list()
    started = web["pages_started"][0]
    assert len(times) in (started, started - 1)
    assert all(0.2 < t < 5.0 for t in times), times
    # The companion channels are flows of their own: requests from the phone.
    req = flows.filter(pl.col("flow") == "web.req")
    assert req["src"][0] == "phone"
    assert req["bytes_delivered"][0] > 0
    assert len(flows) == 12  # web + 5 more response channels + 6 request channels


def test_rsfc_series_carry_t_buff_state_and_rho() -> None:
    sc = mobiflow.Scenario.load(SCENARIOS / "upload_alone.toml").set(
        "flows.upload.flow_control", "rsfc"
    )
    series = sc.run().tcp_series
    assert series.schema["t_buff_ms"] == pl.Float64
    assert series.schema["policy_state"] == pl.Int64
    late = series.filter(pl.col("time_s") > 20)
    assert late["t_buff_ms"].null_count() == 0
    assert set(late["policy_state"].unique().to_list()) <= {0, 1, 2}
    assert late["policy_state"].n_unique() >= 2  # SLOW and MONITOR both seen
    rho_bps = late["ar_bps"].to_list()
    assert sum(rho_bps) / len(rho_bps) > 1e6  # rho, near the 2 Mb/s uplink
    # Classic flow control keeps no such state.
    plain = mobiflow.Scenario.load(SCENARIOS / "upload_alone.toml").run().tcp_series
    assert plain["t_buff_ms"].null_count() == len(plain)
    assert set(plain["policy_state"].unique().to_list()) == {-1}
