"""``mobiflow.Scenario`` and ``mobiflow.Run``: load, build, override, run, read back."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import mobiflow
from mobiflow.outputs import SSTHRESH_INFINITE

from .conftest import EXAMPLE, TINY_TOML

FLOW_SERIES_COLUMNS = ["time_s", "flow_index", "flow", "srtt_ms", "read_rate_bps", "goodput_bps"]
TCP_SERIES_HEAD = ["time_s", "flow_index", "flow", "cwnd_bytes", "ssthresh_bytes", "rwnd_bytes"]
LINK_SERIES_COLUMNS = ["time_s", "dir_index", "dir", "queue_packets", "queue_bytes", "rate_bps"]


@pytest.fixture(scope="module")
def tiny_run(tiny: Path) -> mobiflow.Run:
    return mobiflow.Scenario.load(tiny).run()


# -- making scenarios ------------------------------------------------------------------


def test_load_describes_the_file(tiny: Path) -> None:
    sc = mobiflow.Scenario.load(tiny)
    assert (sc.name, sc.seed, sc.duration_s) == ("tiny", 3, 5.0)
    assert sc.source == tiny
    assert sc.to_toml() == TINY_TOML  # no overrides: the text itself, comments included
    assert sc.validate() == mobiflow.validate(tiny)


def test_from_toml_and_from_dict_agree(tiny: Path) -> None:
    from_text = mobiflow.Scenario.from_toml(TINY_TOML)
    from_dict = mobiflow.Scenario.from_dict(from_text.to_dict())
    assert from_dict.to_dict() == from_text.to_dict()
    assert from_dict.run().json == from_text.run().json


def test_build_in_code_with_helpers() -> None:
    sc = mobiflow.Scenario.build(
        name="built",
        duration="3s",
        seed=4,
        links=[mobiflow.link("server", "phone", name="wan", rate="8Mbps", delay="30ms")],
        flows=[
            mobiflow.flow(
                "server",
                "phone",
                name="f",
                cc="cubic",
                reader={"kind": "constant", "rate": "2Mbps"},
            )
        ],
        measure={"intervals": {"late": ["1s", "3s"]}},
    )
    assert (sc.name, sc.seed, sc.duration_s) == ("built", 4, 3.0)
    assert sc["flows.0.from"] == "server"
    assert sc["links.0.rate"] == "8Mbps"
    run = sc.run()
    flow = run.summary["flows"][0]
    assert (flow["name"], flow["cc"]) == ("f", "cubic")
    assert 0 < flow["goodput_bps"] <= 2.1e6  # the reader drains at most 2 Mb/s
    assert "interval_late_bps" in run.flows.columns


def test_set_returns_a_new_scenario(tiny: Path) -> None:
    base = mobiflow.Scenario.load(tiny)
    changed = base.set("flows.bulk.cc", "cubic").set("run.seed", 9)
    assert base.overrides == ()
    assert changed.overrides == (("flows.bulk.cc", "cubic"), ("run.seed", "9"))
    assert (changed.seed, changed["flows.0.cc"], base["flows.0.cc"]) == (9, "cubic", "newreno")
    assert changed != base
    assert hash(changed) == hash(base.update({"flows.bulk.cc": "cubic", "run.seed": 9}))
    summary = changed.run().summary
    assert (summary["seed"], summary["flows"][0]["cc"]) == (9, "cubic")


def test_set_takes_python_values(tiny: Path) -> None:
    sc = mobiflow.Scenario.load(tiny).update(
        {
            "flows.bulk.reader": {"kind": "constant", "rate": "2Mbps"},
            "links.access.outages": [["1s", "2s"]],
            "tcp.timestamps": False,
        }
    )
    assert sc["flows.0.reader"] == {"kind": "constant", "rate": "2Mbps"}
    assert sc["links.0.outages"] == [["1s", "2s"]]
    desc = sc.validate()
    assert desc["links"][0]["dirs"][0]["outages_s"] == [[1.0, 2.0]]
    assert desc["flows"][0]["transport"]["timestamps"] is False


def test_to_toml_round_trips_with_overrides(tiny: Path) -> None:
    sc = mobiflow.Scenario.load(tiny).set("links.access.ba.delay", "70ms")
    again = mobiflow.Scenario.from_toml(sc.to_toml(), source=tiny)
    assert again.validate() == sc.validate()
    assert again.run().json == sc.run().json


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "named", "reasons"),
    [
        ("flows.0.no_such_knob", 1, "flows.0.no_such_knob", ["unknown key"]),
        (
            "links.access.rate",
            "fast",
            "links.0.rate",
            ["fast", "set by override links.access.rate=fast"],
        ),
        ("flows.7.cc", "reno", "flows.7.cc", ["out of range"]),
    ],
    ids=["bad key", "bad value", "bad path"],
)
def test_a_bad_override_names_the_key_and_the_reason(
    tiny: Path, key: str, value: object, named: str, reasons: list[str]
) -> None:
    with pytest.raises(mobiflow.ScenarioError) as info:
        mobiflow.Scenario.load(tiny).set(key, value)
    assert info.value.key == named
    assert info.value.file is not None
    for reason in reasons:
        assert reason in info.value.reason


def test_from_dict_refuses_none_and_missing_parts() -> None:
    with pytest.raises(ValueError, match=r"flows\.0\.cc"):
        mobiflow.Scenario.from_dict({"flows": [{"cc": None}]})
    with pytest.raises(mobiflow.ScenarioError) as info:
        mobiflow.Scenario.from_dict({"flows": [mobiflow.flow("a", "b")]})
    assert info.value.key == "links"


def test_invalid_toml_names_the_line() -> None:
    with pytest.raises(mobiflow.ScenarioError, match="line 2"):
        mobiflow.Scenario.from_toml('name = "x"\n[[links]\n', source="broken.toml")


# -- runs ----------------------------------------------------------------------------------


def test_run_summary_matches_the_file_api(tiny: Path, tiny_run: mobiflow.Run) -> None:
    assert tiny_run.summary == mobiflow.run(tiny)
    assert json.loads(tiny_run.json) == tiny_run.summary
    assert tiny_run.out is None


def test_summary_frames_have_one_row_per_flow_and_direction(tiny_run: mobiflow.Run) -> None:
    summary = tiny_run.summary
    flows, links = tiny_run.flows, tiny_run.links
    assert flows.height == len(summary["flows"])
    assert flows["flow"].to_list() == ["bulk", "short, sized"]
    assert flows.schema["goodput_bps"] == pl.Float64
    assert flows.schema["completion_time_s"] == pl.Float64
    assert flows["interval_first_bps"].to_list() == [
        f["intervals"]["first"] for f in summary["flows"]
    ]
    assert links.height == len(summary["links"]) == 2
    assert links["dir"].to_list() == [d["name"] for d in summary["links"]]


def test_series_shapes_and_units(tiny_run: mobiflow.Run) -> None:
    fs, ts, ls = tiny_run.flow_series, tiny_run.tcp_series, tiny_run.link_series
    # These columns, in this order (the engine may add more).
    assert [c for c in fs.columns if c in FLOW_SERIES_COLUMNS] == FLOW_SERIES_COLUMNS
    assert ts.columns[: len(TCP_SERIES_HEAD)] == TCP_SERIES_HEAD
    assert [c for c in ls.columns if c in LINK_SERIES_COLUMNS] == LINK_SERIES_COLUMNS
    assert fs.schema["time_s"] == ts.schema["time_s"] == ls.schema["time_s"] == pl.Float64
    for column in ("goodput_bps", "read_rate_bps", "srtt_ms"):
        assert fs.schema[column] == pl.Float64
    for column in ("cwnd_bytes", "rwnd_bytes", "snd_una"):
        assert ts.schema[column] == pl.Int64
    # Every flow is TCP: one TCP row per flow row, at the same times; no TFRC rows.
    assert ts.select("time_s", "flow_index").equals(fs.select("time_s", "flow_index"))
    assert tiny_run.tfrc_series.height == 0
    # 100 ms samples over 5 s, per flow and per direction; time in seconds.
    times = fs.filter(pl.col("flow_index") == 0)["time_s"].to_list()
    assert times[0] == 0.0
    assert times[1] == pytest.approx(0.1)
    assert max(times) <= 5.0
    assert set(fs["flow"].unique().to_list()) == {"bulk", "short, sized"}
    assert ls.height == 2 * len(ls.filter(pl.col("dir_index") == 0))
    # Rates are bits per second: the 10 Mb/s link bounds mean goodput; the bulk flow's
    # application reads 4 Mb/s.
    bulk = fs.filter(pl.col("flow_index") == 0)
    assert 1e6 < bulk["goodput_bps"].mean() <= 10e6  # type: ignore[operator]
    assert 1e6 < bulk["read_rate_bps"].max() <= 4.5e6  # type: ignore[operator]
    # An infinite slow-start threshold is null, never the engine's sentinel.
    assert ts["ssthresh_bytes"].max() is None or (
        ts["ssthresh_bytes"].max() < SSTHRESH_INFINITE  # type: ignore[operator]
    )
    assert tiny_run.series["flow"] is fs


def test_saved_and_loaded_runs_are_the_same(tiny_run: mobiflow.Run, tmp_path: Path) -> None:
    tiny_run.save(tmp_path / "saved")
    loaded = mobiflow.Run.load(tmp_path / "saved")
    assert loaded.json == tiny_run.json
    assert loaded.flow_series.equals(tiny_run.flow_series)
    assert loaded.tcp_series.equals(tiny_run.tcp_series)
    assert loaded.tfrc_series.equals(tiny_run.tfrc_series)
    assert loaded.link_series.equals(tiny_run.link_series)
    assert mobiflow.read_series(tmp_path / "saved")["flow"].equals(tiny_run.flow_series)


def test_run_with_out_writes_what_the_cli_writes(tiny: Path, tmp_path: Path) -> None:
    run = mobiflow.Scenario.load(tiny).run(out=tmp_path / "a")
    mobiflow.run(tiny, out=tmp_path / "b")
    assert run.out == tmp_path / "a"
    for name in (
        "summary.json",
        "flow_series.parquet",
        "tcp_series.parquet",
        "tfrc_series.parquet",
        "link_series.parquet",
    ):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not (tmp_path / "a" / "flow_series.csv").exists()


def test_load_refuses_a_folder_without_a_run(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        mobiflow.Run.load(tmp_path)


def test_frames_convert_to_pandas(tiny_run: mobiflow.Run) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = tiny_run.flow_series.to_pandas()
    assert list(frame.columns) == tiny_run.flow_series.columns
    assert len(frame) == tiny_run.flow_series.height
    assert tiny_run.flows.to_pandas()["flow"].tolist() == ["bulk", "short, sized"]


def test_example_scenario_runs_through_the_api() -> None:
    # Both at once: the interval must end within the shorter run.
    sc = mobiflow.Scenario.load(EXAMPLE)
    with pytest.raises(mobiflow.ScenarioError, match="after the end of the run"):
        sc.set("run.duration", "20s")
    run = sc.update({"run.duration": "20s", "measure.intervals.steady": ["10s", "20s"]}).run()
    assert run.name == "rwnd_limited"
    assert run.flows["interval_steady_bps"][0] > 0


MIXED_TOML = """\
name = "mixed"
[run]
duration = "3s"
[[links]]
name = "l"
a = "s"
b = "r"
rate = "8Mbps"
delay = "20ms"
[[flows]]
name = "tcp"
from = "s"
to = "r"
[[flows]]
name = "dccp"
from = "s"
to = "r"
transport = "dccp-ccid3"
"""


def test_each_transport_has_its_series_and_every_flow_the_flow_series(tmp_path: Path) -> None:
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED_TOML, encoding="utf-8")
    run = mobiflow.Scenario.load(path).run()
    fs, ts, xs = run.flow_series, run.tcp_series, run.tfrc_series
    assert set(fs["flow"].unique().to_list()) == {"tcp", "dccp"}
    assert set(ts["flow"].unique().to_list()) == {"tcp"}
    assert set(xs["flow"].unique().to_list()) == {"dccp"}
    assert "cwnd_bytes" not in xs.columns
    assert "x_bps" not in ts.columns
    # The TFRC flow's rate X and what it received are its own columns, not a TCP
    # window of zero and a snd_una that means bytes received.
    late = xs.filter(pl.col("time_s") > 2)
    assert late["x_bps"].min() > 0  # type: ignore[operator]
    assert late["bytes_received"].max() > 0  # type: ignore[operator]
    dccp = mobiflow.outputs.join_series(run.series, "tfrc")
    assert dccp.height == xs.height
    assert dccp.columns[:6] == FLOW_SERIES_COLUMNS
    assert dccp["time_s"].to_list() == xs["time_s"].to_list()
    assert dccp.filter(pl.col("time_s") > 2)["goodput_bps"].mean() > 0  # type: ignore[operator]


def test_a_folder_from_before_the_split_gives_its_tcp_and_tfrc_series(tmp_path: Path) -> None:
    """A results folder written with one flow series of every column (before the
    series were split by transport) still reads: TCP rows are those with no TFRC
    state, and the TFRC rows' columns take their new names."""
    from mobiflow.outputs import read_tcp_series, read_tfrc_series

    (tmp_path / "flow_series.csv").write_text(
        "time_s,flow_index,flow,cwnd_bytes,ssthresh_bytes,rwnd_bytes,flight_bytes,srtt_ms,"
        "rcv_buffer_bytes,read_rate_bps,goodput_bps,snd_una,snd_nxt,flow_window_bytes,"
        "ar_bps,rcv_buf_limit_bytes,t_buff_ms,policy_state,tfrc_x_bps,tfrc_x_recv_bps,"
        "tfrc_p,tfrc_state,tfrc_rx_state\n"
        "0.1,0,tcp,2920,,65535,1460,40,0,0,100,1,3,65535,,262144,,-1,,,,-1,-1\n"
        "0.1,1,dccp,0,0,0,0,41,0,8,8,500,900,0,,0,,-1,16000,12000,0.01,0,0\n",
        encoding="utf-8",
    )
    tcp = read_tcp_series(tmp_path)
    assert tcp["flow"].to_list() == ["tcp"]
    assert tcp["cwnd_bytes"].to_list() == [2920]
    tfrc = read_tfrc_series(tmp_path)
    assert tfrc["flow"].to_list() == ["dccp"]
    assert tfrc.select("x_bps", "p", "bytes_sent", "bytes_received", "state").row(0) == (
        16000.0,
        0.01,
        900,
        500,
        0,
    )
