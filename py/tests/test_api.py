"""The Python API (``mobiflow.run``, ``mobiflow.validate``, ...)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import polars as pl
import pytest

import mobiflow
from mobiflow.api import override_value, to_overrides

from .test_cli import CSV_FILES, FLOW_KEYS, OUTPUT_FILES, UNKNOWN_KEY


def test_run_returns_the_summary(tiny: Path) -> None:
    summary = mobiflow.run(tiny)
    assert summary["mobiflow_version"] == mobiflow.__version__
    assert summary["flows"]
    for flow in summary["flows"]:
        assert flow.keys() >= FLOW_KEYS
        assert flow["goodput_bps"] >= 0


def test_run_json_is_the_text_of_run(tiny: Path) -> None:
    assert json.loads(mobiflow.run_json(tiny)) == mobiflow.run(tiny)


def test_run_text_matches_run_file(tiny: Path) -> None:
    text = tiny.read_text(encoding="utf-8")
    assert mobiflow.run_text(text, source=tiny) == mobiflow.run(tiny)


def test_overrides_are_applied(tiny: Path) -> None:
    summary = mobiflow.run(tiny, set={"run.seed": 11, "flows.bulk.cc": "cubic"})
    assert summary["seed"] == 11
    assert summary["flows"][0]["cc"] == "cubic"


def test_scenario_error_carries_file_key_and_reason(tiny: Path) -> None:
    with pytest.raises(mobiflow.ScenarioError) as info:
        mobiflow.validate(tiny, set={UNKNOWN_KEY: 1})
    err = info.value
    assert isinstance(err, ValueError)
    assert err.key == UNKNOWN_KEY
    assert err.file is not None
    assert Path(err.file) == tiny
    assert err.reason
    assert str(err) == f"{err.file}: {err.key}: {err.reason}"


def test_validate_describes_the_scenario(tiny: Path) -> None:
    desc = mobiflow.validate(tiny)
    assert desc["scenario"] == "tiny"
    assert desc["seed"] == 3
    assert desc["duration_s"] == 5.0
    assert desc["nodes"] == ["server", "phone"]
    assert [f["name"] for f in desc["flows"]] == ["bulk", "short, sized"]
    reader = desc["flows"][0]["reader"]
    assert (reader["kind"], reader["rate_bps"]) == ("constant", 4_000_000)
    assert desc["flows"][1]["app"] == {"kind": "sized", "bytes": 200 * 1024}
    assert desc["intervals"][0] == {"name": "first", "start_s": 0.0, "end_s": 2.0}
    assert desc["links"][0]["dirs"][0]["rate"] == {"kind": "constant", "bps": 10_000_000}
    assert desc["links"][0]["dirs"][0]["delay"] == {"kind": "constant", "s": 0.02}
    assert isinstance(desc["assumed"], dict)


def test_validate_text_reads_toml_text(tiny: Path) -> None:
    text = tiny.read_text(encoding="utf-8")
    assert mobiflow.validate_text(text, source=tiny) == mobiflow.validate(tiny)


def test_out_and_read_back(tiny: Path, tmp_path: Path) -> None:
    summary = mobiflow.run(tiny, out=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(OUTPUT_FILES)
    assert mobiflow.read_summary(tmp_path) == summary
    series = mobiflow.read_series(tmp_path)
    assert series["flow"].columns[:3] == ["time_s", "flow_index", "flow"]
    assert series["link"].columns[:3] == ["time_s", "dir_index", "dir"]
    names = {f["name"] for f in summary["flows"]}
    assert set(series["flow"]["flow"].unique().to_list()) <= names


def test_runs_in_threads_agree(tiny: Path) -> None:
    """The engine releases the GIL; concurrent runs give the same result as one run."""
    expected = mobiflow.run_json(tiny)
    results: list[str] = []

    def work() -> None:
        results.append(mobiflow.run_json(tiny))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected, expected]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("6Mbps", "6Mbps"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (0.25, "0.25"),
        (Path("traces/x.down"), "traces/x.down"),
        ([1, 2.5, "a"], '[1, 2.5, "a"]'),
    ],
)
def test_override_values_are_spelled_as_toml(value: object, text: str) -> None:
    assert override_value(value) == text


def test_overrides_accept_mappings_and_pairs() -> None:
    assert to_overrides({"a.b": 1, "c": "x"}) == [("a.b", "1"), ("c", "x")]
    assert to_overrides([("a", 1), ("a", 2)]) == [("a", "1"), ("a", "2")]
    assert to_overrides(None) == []
    with pytest.raises(TypeError):
        to_overrides({"a": object()})


def test_csv_on_request_reads_back_the_same_frames(tiny: Path, tmp_path: Path) -> None:
    mobiflow.run(tiny, out=tmp_path / "p")
    mobiflow.run(tiny, out=tmp_path / "c", series_format="csv")
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == sorted(CSV_FILES)
    parquet, csv = mobiflow.read_series(tmp_path / "p"), mobiflow.read_series(tmp_path / "c")
    assert parquet["flow"].equals(csv["flow"])
    assert parquet["link"].equals(csv["link"])
    with pytest.raises(ValueError, match="unknown series format 'xlsx'"):
        mobiflow.run(tiny, out=tmp_path / "x", series_format="xlsx")


def test_duration_is_exact_and_infinite_ssthresh_is_an_empty_cell(
    tiny: Path, tmp_path: Path
) -> None:
    summary = mobiflow.run(tiny, out=tmp_path, series_format="csv")
    assert repr(summary["duration_s"]) == "5.0"
    rows = (tmp_path / "tcp_series.csv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    first = rows[1].split(",")
    # At time 0 the threshold is still infinite: an empty cell, never 2**62 - 1.
    assert first[header.index("ssthresh_bytes")] == ""
    assert "4611686018427387903" not in "\n".join(rows)
    assert mobiflow.read_series(tmp_path)["tcp"]["ssthresh_bytes"][0] is None


def test_series_in_the_old_naming_read_in_the_new() -> None:
    """Results folders written before the naming was unified (flow/flow_name,
    dir/dir_name, an infinite ssthresh as 2**62 - 1) read in today's naming."""
    from mobiflow.outputs import read_flow_series, read_link_series

    flow = read_flow_series(
        b"time_s,flow,flow_name,cwnd_bytes,ssthresh_bytes\n"
        b"0,0,bulk,4380,4611686018427387903\n0.1,1,web,2920,65535\n"
    )
    assert flow.columns == ["time_s", "flow_index", "flow", "cwnd_bytes", "ssthresh_bytes"]
    assert flow["flow"].to_list() == ["bulk", "web"]
    assert flow["flow_index"].to_list() == [0, 1]
    assert flow["ssthresh_bytes"].to_list() == [None, 65535]
    link = read_link_series(b"time_s,dir,dir_name,rate_bps\n0.1,0,l:a->b,1000\n")
    assert link.columns == ["time_s", "dir_index", "dir", "rate_bps"]
    assert link.schema["rate_bps"] == pl.Float64
