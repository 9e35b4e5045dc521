"""The Freeze-DCCP paper (O. Mehani, R. Boreli, T. Ernst, "Analysis of TFRC in Disconnected
Scenarios and Performance Improvements with Freeze-DCCP", ACM MobiArch 2009; issue 8): the
analytical model's table, its command, the Freeze-DCCP
reproduction on a subset of the handoffs, and TFRC flows through the Python API."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mobiflow
from mobiflow import _mobiflow
from mobiflow.repro import freeze_dccp
from mobiflow.repro.framework import Report

from .conftest import Cli

ROOT = Path(__file__).resolve().parents[2]


def test_model_command_prints_the_seeds_numbers_beside_the_models(cli: Cli) -> None:
    proc = cli("model", "freeze-dccp")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Packet losses (1): paper / computed" in out
    # Seed 306 (UMTS -> UMTS) beside equation (1) at the slides' inputs: 201.
    assert "306/201" in out
    assert "109541/13397" in out
    assert "6 of 32 cells match the seed." in out
    assert "R and X_d that make equation (1) give each row" in out


def test_model_command_json_and_errors(cli: Cli) -> None:
    proc = cli("model", "freeze-dccp", "--json")
    assert proc.returncode == 0, proc.stderr
    model = json.loads(proc.stdout)
    assert model["technologies"] == ["UMTS", "802.16", "802.11b", "802.11g"]
    assert [round(x["t_handoff_s"], 2) for x in model["links"]] == [2.85, 2.68, 2.62, 2.62]
    bad = cli("model", "tcp")
    assert bad.returncode == 2
    assert "unknown model" in bad.stderr


def test_the_seeds_losses_imply_other_r_and_x_d() -> None:
    model = json.loads(_mobiflow.freeze_dccp_model())
    slides = model["slides"]["losses"]
    paper = model["paper"]["losses"]
    # From the slides' inputs no losses cell matches...
    for ra, rb in zip(slides, paper, strict=True):
        assert all(round(a) != round(b) for a, b in zip(ra, rb, strict=True))
    # ...while each row is within a few packets of equation (1) at a fitted (R, X_d).
    for fit, row in zip(model["fits"], paper, strict=True):
        assert fit["error"] <= 10
        assert len(fit["values"]) == len(row) == 4


def test_handover_model_counts_fewer_losses_for_a_shorter_disconnection() -> None:
    short = json.loads(_mobiflow.freeze_dccp_handover(0.12, 7.3e6, 0.3, 11e6, 0.01))
    long_ = json.loads(_mobiflow.freeze_dccp_handover(0.12, 7.3e6, 2.62, 11e6, 0.01))
    # t_D <= t_RTO^0 = 4R: floor(7/8 * t_D * X_d / s).
    assert short["n_lost"] == int(7 / 8 * 0.3 * 7.3e6 / 8 / 500)
    assert long_["n_lost"] > short["n_lost"]
    assert long_["i_d"] >= 1


def test_generated_scenarios_are_the_ones_in_the_repository() -> None:
    slug = freeze_dccp.SLUG
    for a in freeze_dccp.TECHS:
        for b in freeze_dccp.TECHS:
            path = freeze_dccp.SCENARIOS / f"handoff_{slug[a]}_to_{slug[b]}.toml"
            assert path.read_text() == freeze_dccp.handoff_toml(a, b)
            path = freeze_dccp.SCENARIOS / f"fairness_{slug[a]}_to_{slug[b]}.toml"
            assert path.read_text() == freeze_dccp.fairness_toml(a, b)
    # The seed's "Handoff times" by destination.
    assert freeze_dccp.T_HANDOFF_S == {
        "UMTS": 2.85,
        "802.16": 2.68,
        "802.11b": 2.62,
        "802.11g": 2.62,
    }


def test_quick_reproduction_writes_the_tables_and_figures(tmp_path: Path) -> None:
    out = tmp_path / "fd"
    assert freeze_dccp.main(["--quick", "--out", str(out), "--workers", "1", "--ns2", "no"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Packet losses (1), from the slides' inputs" in report
    assert "| UMTS | 306 / 201 |" in report
    assert "Packet losses (DCCP/TFRC; Freeze-DCCP in brackets)" in report
    assert "Throughput ratio DCCP/TCP" in report
    for name in ("x_80211b_to_80211b.png", "x_80211b_to_umts.png"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    h = data["handoffs"]["802.11b->802.11b"]
    # Freeze-DCCP loses (almost) nothing in the disconnection and wastes less after it.
    assert h["dccp"]["lost"] > 500
    assert h["freeze"]["lost"] <= 5
    assert h["freeze"]["unused_packets"] < h["dccp"]["unused_packets"]
    # The model, fed with the run's X_d and R, is within 20 % of what was lost in
    # the disconnection itself (sent into the down link).
    model = h["dccp"]["model"]["n_lost"]
    sim = h["dccp"]["lost"] - h["dccp"]["lost_in_network"]
    assert abs(model - sim) / sim < 0.2, (model, sim)
    f = data["fairness"]["802.11b->802.11b"]["dccp"]
    assert f["dccp_bps"] > 0
    assert f["tcp_bps"] > 0


def test_api_runs_a_tfrc_flow_and_describes_it(tmp_path: Path) -> None:
    path = freeze_dccp.SCENARIOS / "handoff_80211b_to_80211b.toml"
    sc = mobiflow.Scenario.load(path).set("flows.dccp.tfrc.freeze", True)
    run = sc.run()
    flows = run.flows
    assert flows["protocol"].to_list() == ["dccp-ccid3"]
    assert flows["tfrc_freeze"].to_list() == [True]
    series = run.tfrc_series
    assert "x_bps" in series.columns
    assert 1 in series["state"].to_list()  # frozen at some point
    assert run.tcp_series.height == 0
    desc = sc.validate()
    transport = desc["flows"][0]["transport"]
    assert transport["protocol"] == "dccp_ccid3"
    assert transport["s_bytes"] == 500
    assert transport["freeze"] is True


def test_scenarios_take_the_wired_ar_cn_link_down_as_the_seeds_script() -> None:
    for a in freeze_dccp.TECHS:
        for b in freeze_dccp.TECHS:
            for kind in ("handoff", "fairness"):
                slug = f"{freeze_dccp.SLUG[a]}_to_{freeze_dccp.SLUG[b]}"
                sc = mobiflow.Scenario.load(freeze_dccp.SCENARIOS / f"{kind}_{slug}.toml").to_dict()
                links = {ln["name"]: ln for ln in sc["links"]}
                wireless, internet = links["wireless"], links["internet"]
                # The wireless link never goes down; it changes at the reconnection.
                assert "outages" not in wireless
                assert "handoffs" not in wireless
                up = 30 + freeze_dccp.T_HANDOFF_S[b]
                assert internet["outages"] == [["30s", freeze_dccp._fmt_s(up)]]
                assert wireless["rate_schedule"][1] == [
                    freeze_dccp._fmt_s(up),
                    freeze_dccp.LINKS[b][0],
                ]
                dccp = next(f for f in sc["flows"] if f["name"] == "dccp")
                assert dccp["tfrc"]["header_bytes"] == 32
                # RFC 4342 by default: no floor on p in the scenario itself.
                assert "min_p" not in dccp["tfrc"]


def _fake_run(unused: float, restored: float | None, after: float, before: float) -> dict[str, Any]:
    return {
        "lost": 7,
        "lost_in_network": 1,
        "first_nofeedback_s": 0.1,
        "unused_packets": unused,
        "restored_after_s": restored,
        "target_bps": before,
        "x_before_bps": before,
        "rtt_before_ms": 120.0,
        "p_before": 1e-6,
        "rx_before_bps": before,
        "received_after": 1000,
        "before_bps": before,
        "after_bps": after,
        "states": [],
        "lost_to_queues": 0,
        "model": {"n_lost": 6, "unused": 0.0},
    }


def test_report_shows_every_handoff_with_and_without_the_p_floor() -> None:
    handoffs = {}
    for i, a in enumerate(freeze_dccp.TECHS):
        for j, b in enumerate(freeze_dccp.TECHS):
            k = 10 * i + j
            handoffs[f"{a}->{b}"] = {
                "dccp": _fake_run(100000 + k, None, 30e6, 40e6),
                "freeze": _fake_run(700 + k, 0.1, 20e6, 40e6),
                "dccp_floor": _fake_run(3000 + k, 1.3, 12.5e6, 12.9e6),
                "freeze_floor": _fake_run(200 + k, 0.2, 4e6, 12.9e6),
            }
    blocks = freeze_dccp.page(freeze_dccp.model_tables(), handoffs, {}, [], False, None)
    text = Report("freeze-dccp", blocks, None).markdown()
    # Every handoff's floor cells, seed / mobiflow, in both floor tables.
    for i in range(len(freeze_dccp.TECHS)):
        for j in range(len(freeze_dccp.TECHS)):
            k = 10 * i + j
            assert f"{freeze_dccp.PAPER_SIM_UNUSED_DCCP[i][j]:g} / {3000 + k}" in text
            assert f"{freeze_dccp.PAPER_SIM_UNUSED_FREEZE[i][j]:g} / {200 + k}" in text
    assert "Unused bandwidth with ns-2's p floor (min_p = 1e-05), DCCP/TFRC" in text
    assert "| 802.11g | " in text
    assert "- / 0.1 / 1.3 / 0.2" in text
    assert "12.50 / 4.00" in text
    assert "mobiflow's DCCP leaves 100033 without the floor and 3033 with it" in text
    assert "Freeze-DCCP leaves less unused in 16 of 16 handoffs and has the higher" in text
    assert "## 6. Where mobiflow differs from the seed's agent (ns-2's `dccp/`)" in text
    assert "`s_smallest_p_` = 1e-5" in text
    # The cap the floor puts on the rate is computed, not written in.
    assert f"{freeze_dccp.tfrc_rate_bps(500, 0.12, 1e-5) / 1e6:.1f} Mb/s" in text
    assert "AR-CN" in text
    assert "outage of the wireless link" not in text


def test_phase_offsets_cover_one_base_rtt_of_the_old_path_in_eighths() -> None:
    assert freeze_dccp.phase_offsets_s("802.11b") == [round(k * 0.015, 6) for k in range(8)]
    umts = freeze_dccp.phase_offsets_s("UMTS")
    assert umts[0] == 0.0
    assert len(umts) == freeze_dccp.PHASES
    assert umts[1] == round(0.35 / 8, 6)
    assert umts[-1] < freeze_dccp.base_rtt_s("UMTS")


def test_the_phase_of_the_disconnection_moves_what_dccp_loses() -> None:
    pair = ("802.11b", "802.11b")
    base = {"lost": 0, "unused_packets": 0.0, "restored_after_s": None, "after_bps": 0.0}
    handoffs = {"802.11b->802.11b": {v: dict(base) for v in freeze_dccp.VARIANTS}}
    with ThreadPoolExecutor(max_workers=2) as pool:
        res = freeze_dccp.run_phases([pair], handoffs, {}, pool)
    assert "fairness" not in res
    by_off = res["handoffs"]["802.11b->802.11b"]
    assert list(by_off) == [f"{x:g}s" for x in freeze_dccp.phase_offsets_s("802.11b")]
    assert by_off["0s"]["dccp"] == base  # the offset 0 is the main run, not run again
    lost = {r["dccp"]["lost"] for off, r in by_off.items() if off != "0s"}
    # Where the outage falls in the feedback cycle changes how much DCCP sends into it.
    assert len(lost) > 1
    assert all(r["freeze"]["lost"] <= 5 for r in by_off.values())


def _fair(ratio_dccp: float, ratio_freeze: float) -> dict[str, Any]:
    return {
        "dccp": {"dccp_bps": ratio_dccp, "tcp_bps": 1.0, "ratio": ratio_dccp},
        "freeze": {"dccp_bps": ratio_freeze, "tcp_bps": 1.0, "ratio": ratio_freeze},
    }


def test_report_counts_a_fairness_case_as_fair_only_if_every_phase_is() -> None:
    keys = [f"{a}->{b}" for a in freeze_dccp.TECHS for b in freeze_dccp.TECHS]
    fairness = {k: _fair(1.0, 1.0) for k in keys}
    handoffs = {
        k: {
            "dccp": _fake_run(3000, 1.0, 5e6, 6e6),
            "freeze": _fake_run(100, 0.2, 6e6, 6e6),
            "dccp_floor": _fake_run(3000, 1.0, 5e6, 6e6),
            "freeze_floor": _fake_run(100, 0.2, 6e6, 6e6),
        }
        for k in keys
    }
    single = Report(
        "freeze-dccp",
        freeze_dccp.page(freeze_dccp.model_tables(), handoffs, fairness, [], False, None),
        None,
    ).markdown()
    assert 'Ratios in [0.5, 2] ("reasonably fair" for the seed): DCCP 16, Freeze-DCCP 16' in single
    # One case is fair at the offset 0 but not at another: it no longer counts.
    fair_phases = {k: {"0s": v, "0.015s": v} for k, v in fairness.items()}
    fair_phases["802.11b->802.11b"] = {"0s": _fair(1.0, 1.0), "0.015s": _fair(2.4, 0.4)}
    hs_phases = {k: {"0s": v, "0.015s": v} for k, v in handoffs.items()}
    worse = dict(handoffs["UMTS->UMTS"], freeze=_fake_run(5000, 0.2, 4e6, 6e6))
    hs_phases["UMTS->UMTS"] = {"0s": handoffs["UMTS->UMTS"], "0.015s": worse}
    text = Report(
        "freeze-dccp",
        freeze_dccp.page(
            freeze_dccp.model_tables(),
            handoffs,
            fairness,
            [],
            False,
            None,
            {"handoffs": hs_phases, "fairness": fair_phases},
        ),
        None,
    ).markdown()
    assert (
        'Ratios in [0.5, 2] at every phase ("reasonably fair" for the seed): DCCP 15, '
        "Freeze-DCCP 15" in text
    )
    assert "| 0.9 / 1.00 to 2.40 (0.40 to 1.00) |" in text
    assert "| UMTS->UMTS | 7 | 7 | 3000 | 100 to 5000 | 1 of 2 |" in text
    assert (
        "Freeze-DCCP leaves less unused at every phase in 15 of 16 handoffs, at none in 0, "
        "at some only in 1 (UMTS->UMTS)." in text
    )
