"""``mobiflow live compare --suite``: the validation table of issue 20.

The quick suite runs where live mode can (root and /dev/net/tun; CI) and skips with the
reason elsewhere; it checks that the harness produces a complete, well-formed table,
not that the targets are met. The targets' rules, the "simulator has no bbr" rows and
the command line are checked without the kernel.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from mobiflow import ScenarioError, api, cli, live, livesuite

from .conftest import ROOT, live_unavailable

REASON = live_unavailable()
needs_live = pytest.mark.skipif(REASON is not None, reason=f"live mode unavailable: {REASON}")

METRICS = [
    "goodput (Mb/s)",
    "goodput steady (Mb/s)",
    "retransmitted segments",
    "RTOs",
    "spurious retransmissions",
    "srtt time-mean (ms)",
    "cwnd max (KB)",
]


def _comparison(rows: Mapping[str, tuple[float | None, float | None]]) -> live.Comparison:
    cmp = live.Comparison(scenario="x", cc="cubic", out=Path("."), valid=True, invalid_reasons=[])
    cmp.rows = [("bulk", m, k, s) for m, (k, s) in rows.items()]
    return cmp


def _verdicts(k_s: dict[str, tuple[float | None, float | None]]) -> dict[str, bool | None]:
    rows = dict.fromkeys(METRICS, (1.0, 1.0)) | k_s
    return {c.metric: c.ok for c in livesuite.evaluate(_comparison(rows), ("steady",))}


def test_goodput_target_is_five_percent_of_the_kernels() -> None:
    v = _verdicts({"goodput (Mb/s)": (4.0, 4.19), "goodput steady (Mb/s)": (4.0, 3.79)})
    assert v["goodput (Mb/s)"] is True
    assert v["goodput steady (Mb/s)"] is False


def test_retransmissions_within_a_quarter_or_ten_segments() -> None:
    assert _verdicts({"retransmitted segments": (0, 10)})["retransmitted segments"] is True
    assert _verdicts({"retransmitted segments": (0, 11)})["retransmitted segments"] is False
    assert _verdicts({"retransmitted segments": (400, 500)})["retransmitted segments"] is True
    assert _verdicts({"retransmitted segments": (400, 501)})["retransmitted segments"] is False


def test_rtos_within_one_and_no_verdict_without_a_target_or_a_number() -> None:
    v = _verdicts({"RTOs": (2, 3), "spurious retransmissions": (0, 50)})
    assert v["RTOs"] is True
    assert v["spurious retransmissions"] is None  # reported, no target
    assert _verdicts({"RTOs": (2, 4)})["RTOs"] is False
    assert _verdicts({"RTOs": (2, None)})["RTOs"] is None


def test_a_missing_measure_is_an_error_not_a_pass() -> None:
    rows = {m: (1.0, 1.0) for m in METRICS if m != "RTOs"}
    with pytest.raises(RuntimeError, match="RTOs"):
        livesuite.evaluate(_comparison(rows), ("steady",))


def test_the_simulators_refusal_of_a_cc_reads_simulator_has_no_cc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The message is recognised from the simulator's own error for a congestion
    control it lacks. It has bbr now (that scenario validates), so a name it has never
    had stands in for it ("vegas", mapped as the driver maps bbr)."""
    rwnd = ROOT / "scenarios/examples/rwnd_limited.toml"
    api.validate(rwnd, set=[("flows.bulk.cc", "bbr")])  # no refusal: rows get numbers
    monkeypatch.setitem(live.SIM_CC, "vegas", "vegas")
    with pytest.raises(ScenarioError) as caught:
        api.validate(rwnd, set=[("flows.bulk.cc", "vegas")])
    refusal = caught.value
    msg = live._sim_error("vegas", refusal)
    assert msg is not None
    assert msg.startswith("simulator has no vegas (")
    # Any other error of the scenario is not taken for a missing congestion control.
    assert live._sim_error("cubic", refusal) is None
    other = ScenarioError("run.duration: expected a duration")
    assert live._sim_error("bbr", other) is None


def test_a_row_without_the_simulator_says_why_in_the_table(tmp_path: Path) -> None:
    row = livesuite.Row("rwnd_limited", "s.toml", "bbr", "d", valid=True)
    row.sim_error = 'simulator has no bbr (unknown congestion control "bbr")'
    row.checks = livesuite.evaluate(_comparison(dict.fromkeys(METRICS, (1.0, None))), ("steady",))
    ok = livesuite.Row("rwnd_limited", "s.toml", "cubic", "d", valid=False)
    ok.invalid_reasons = ["3 packets written more than 5 ms late"]
    ok.checks = livesuite.evaluate(
        _comparison(dict.fromkeys(METRICS, (1.0, 1.0)) | {"RTOs": (0.0, 3.0)}), ("steady",)
    )
    res = livesuite.SuiteResult("quick", tmp_path, "d", "c", "m", [row, ok])
    md = livesuite.render_markdown(res)
    lines = [ln for ln in md.splitlines() if ln.startswith("| rwnd_limited")]
    assert "simulator has no bbr" in lines[0]
    assert "PASS" not in lines[0]
    assert "MISS" not in lines[0]
    assert "MISS (RTOs)" in lines[1]
    assert "INVALID run: 3 packets" in lines[1]
    data = res.to_json()
    assert [r["verdict"] for r in data["rows"]] == ["simulator has no bbr", "MISS"]


def test_suite_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = str(ROOT / "scenarios/examples/rwnd_limited.toml")
    for argv, needle in (
        (["live", "compare", "--suite", "all"], "--suite all: expected full|quick"),
        (["live", "compare", scenario, "--suite", "quick"], "drop SCENARIO.toml"),
        (["live", "compare"], "give a SCENARIO.toml or --suite"),
    ):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2, argv
        assert needle in capsys.readouterr().err, argv
    with pytest.raises(SystemExit) as e:
        cli.main(["live", "compare", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--suite" in out
    assert "--capture" in out


def test_a_tree_without_the_suites_scenarios_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="runs from the source tree"):
        livesuite.run_suite("quick", out=tmp_path, root=tmp_path)


def test_the_suites_cases_are_valid_scenarios() -> None:
    for suite, cases in livesuite.SUITES.items():
        for case in cases:
            sets = [*case.sets, livesuite.PROFILE]
            desc = api.validate(ROOT / case.scenario, set=sets)
            ivs = {iv["name"] for iv in desc.get("intervals", [])}
            assert set(case.steady) <= ivs, (suite, case.name)
            assert len(desc["links"]) == 1, (suite, case.name)  # live mode emulates one


@needs_live
def test_quick_suite_writes_a_complete_table(tmp_path: Path) -> None:
    res = livesuite.run_suite("quick", out=tmp_path, log=lambda _: None)
    data = json.loads((tmp_path / "suite.json").read_text())
    expected = [(c.name, cc) for c in livesuite.SUITES["quick"] for cc in c.ccs]
    assert [(r["case"], r["cc"]) for r in data["rows"]] == expected
    assert data["commit"]
    assert data["date"]
    md = (tmp_path / "suite.md").read_text()
    for r in data["rows"]:
        assert r["error"] is None, r
        assert r["verdict"] in ("PASS", "MISS"), r
        assert r["misses"] == [c["metric"] for c in r["checks"] if c["verdict"] == "MISS"]
        assert [c["metric"] for c in r["checks"]] == METRICS
        for c in r["checks"]:
            if c["metric"] == "spurious retransmissions" and shutil.which("tshark") is None:
                continue
            assert c["kernel"] is not None, c
            assert c["simulator"] is not None, c
        gp = r["checks"][0]
        assert gp["kernel"] > 0.3, gp
        assert gp["simulator"] > 0.3, gp
        assert Path(r["figure"]).is_file()
        assert any(ln.startswith(f"| {r['case']} | {r['cc']} |") for ln in md.splitlines())
    assert res.rows[0].checks[0].kernel == data["rows"][0]["checks"][0]["kernel"]


@needs_live
def test_bbr_runs_in_the_kernel_with_or_without_the_simulators(tmp_path: Path) -> None:
    sets = [("run.duration", "6s"), ("measure.intervals.steady", '["3s","6s"]')]
    cmp = live.compare(
        ROOT / "scenarios/examples/rwnd_limited.toml",
        cc="bbr",
        sets=[*sets, livesuite.PROFILE],
        out=tmp_path,
        log=lambda _: None,
    )
    notes = " ".join(cmp.notes)
    assert "kernel cc bbr" in notes
    k, s = next((k, s) for _, m, k, s in cmp.rows if m == "goodput (Mb/s)")
    assert k is not None
    assert k > 0.3
    if cmp.sim_error is not None:
        assert cmp.sim_error.startswith("simulator has no bbr")
        assert s is None
    else:
        assert s is not None


def test_the_receivers_byte_count_stays_flat_over_a_gap_between_reads(tmp_path: Path) -> None:
    """What arrives after a pause (an outage) is not spread back over the pause when
    the goodput between samples is interpolated (loopback, no root needed)."""
    from mobiflow import _livedriver as driver

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "recv.json"
    th = threading.Thread(target=driver.recv, args=(port, 0, 5.0, str(out)), daemon=True)
    th.start()
    for _ in range(100):
        try:
            c = socket.create_connection(("127.0.0.1", port))
            break
        except ConnectionRefusedError:
            time.sleep(0.02)
    with c:
        c.sendall(b"a" * 50_000)
        time.sleep(0.6)
        c.sendall(b"b" * 70_000)
    th.join(timeout=10)
    samples = json.loads(out.read_text())["samples"]
    assert samples[-1][1] == 120_000
    before = max(t for t, b in samples if b <= 50_000)
    after = min(t for t, b in samples if b > 50_000)
    assert after - before < 0.1  # the jump is at the second read, not spread over 0.6 s
    mid = next(t for t, b in samples if b == 50_000) + 0.3
    assert live._bytes_at(samples, mid) == 50_000
