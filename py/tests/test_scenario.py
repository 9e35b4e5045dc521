"""``mobiflow.Scenario`` and ``mobiflow.Run``: load, build, override, run, read back."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import mobiflow
from mobiflow.outputs import SSTHRESH_INFINITE
from mobiflow.tables import FLOW_SERIES_COLUMNS, LINK_SERIES_COLUMNS

from .conftest import EXAMPLE, TINY_TOML


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
    fs, ls = tiny_run.flow_series, tiny_run.link_series
    # The engine writes the columns the package declares (and types), in their order.
    assert fs.columns == list(FLOW_SERIES_COLUMNS)
    assert ls.columns == list(LINK_SERIES_COLUMNS)
    assert fs.schema["time_s"] == ls.schema["time_s"] == pl.Float64
    for column in ("goodput_bps", "read_rate_bps", "srtt_ms"):
        assert fs.schema[column] == pl.Float64
    for column in ("cwnd_bytes", "rwnd_bytes", "snd_una"):
        assert fs.schema[column] == pl.Int64
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
    assert fs["ssthresh_bytes"].max() is None or (
        fs["ssthresh_bytes"].max() < SSTHRESH_INFINITE  # type: ignore[operator]
    )
    assert tiny_run.series["flow"] is fs


def test_saved_and_loaded_runs_are_the_same(tiny_run: mobiflow.Run, tmp_path: Path) -> None:
    tiny_run.save(tmp_path / "saved")
    loaded = mobiflow.Run.load(tmp_path / "saved")
    assert loaded.json == tiny_run.json
    assert loaded.flow_series.equals(tiny_run.flow_series)
    assert loaded.link_series.equals(tiny_run.link_series)
    assert mobiflow.read_series(tmp_path / "saved")["flow"].equals(tiny_run.flow_series)


def test_run_with_out_writes_what_the_cli_writes(tiny: Path, tmp_path: Path) -> None:
    run = mobiflow.Scenario.load(tiny).run(out=tmp_path / "a")
    mobiflow.run(tiny, out=tmp_path / "b")
    assert run.out == tmp_path / "a"
    for name in ("summary.json", "flow_series.parquet", "link_series.parquet"):
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
