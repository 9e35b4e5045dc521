"""The claims table: each verdict follows from the runs by its stated rule."""

from __future__ import annotations

from typing import Any

from mobiflow.repro import claims


def _afc(gains: list[float], sens: list[float]) -> dict[str, Any]:
    def case(g: float) -> dict[str, Any]:
        return {"classic": {"goodput_bps": 1e6}, "afc": {"goodput_bps": 1e6 * (1 + g)}}

    cases = {f"eval{i}_step": case(g) for i, g in enumerate(gains)}
    cases["motivation"] = {
        "classic": {"goodput_bps": 1e6},
        "afc": {
            "goodput_bps": 2e6,
            "retransmits": 500,
            "bytes_delivered": 1_000_000,
            "timeouts": 3,
            "fast_retransmits": 40,
        },
    }
    return {"cases": cases, "sensitivity": {f"{k}s": case(g) for k, g in enumerate(sens)}}


def test_afc_verdict_counts_the_evaluation_scenarios_it_wins() -> None:
    rows = claims.afc_claims(_afc([0.1, 0.2, 0.3], [0.1, 0.2]))
    assert [r.verdict for r in rows] == [claims.HOLDS, claims.HOLDS, claims.HOLDS]
    assert rows[0].mobiflow_value == "3 of 3 (gain +10% to +30%)"
    rows = claims.afc_claims(_afc([0.1, 0.2, -0.3], [-0.1, 0.2]))
    assert rows[0].verdict == claims.PARTLY
    assert rows[1].verdict == claims.FAILS  # one of two lengths is not "more than half"
    rows = claims.afc_claims(_afc([0.1, -0.2, -0.3], [0.1]))
    assert rows[0].verdict == claims.FAILS
    assert rows[2].mobiflow_value == "0.50 per segment; 3 timeouts, 40 fast retransmits"


def test_afc_verdict_over_the_phases_counts_a_case_only_if_it_gains_at_every_phase() -> None:
    def at(g: float) -> dict[str, Any]:
        return {"classic": {"goodput_bps": 1e6}, "afc": {"goodput_bps": 1e6 * (1 + g)}}

    res = _afc([0.1, 0.2, 0.3], [0.1])  # every case gains at the offset 0 ...
    res["phases"] = {  # ... but not at every offset
        "eval0_step": {"0s": at(0.1), "0.5s": at(0.05)},
        "eval1_step": {"0s": at(0.2), "0.5s": at(-0.1)},
        "eval2_step": {"0s": at(-0.3), "0.5s": at(-0.01)},
    }
    assert claims.afc_phase_split(res["phases"]) == (["eval0_step"], ["eval2_step"], ["eval1_step"])
    row = claims.afc_claims(res)[0]
    assert row.verdict == claims.FAILS
    assert row.mobiflow_value == (
        "1 of 3 at every phase, 1 at none, 1 depend on the phase (gain -30% to +20%)"
    )
    for by_off in res["phases"].values():
        for r in by_off.values():
            r["afc"]["goodput_bps"] = 1.5e6
    assert claims.afc_claims(res)[0].verdict == claims.HOLDS


def _rsfc(rsfc_kbps: float, up_rsfc: float) -> dict[str, Any]:
    return {
        "derived": {
            "download": {
                "download_alone": {"download_kbps": 7000.0},
                "download_upload": {"download_kbps": 1000.0, "upload_kbps": 1800.0},
                "download_upload_rsfc": {"download_kbps": rsfc_kbps, "upload_kbps": up_rsfc},
            }
        }
    }


PAPER = {
    "alone": 2000,
    "with_upload": 100,
    "isp_after": 1400,
    "page_without_s": 120,
    "page_with_s": 60,
}


def test_rsfc_restores_the_download_by_its_rule() -> None:
    assert claims.rsfc_claims(_rsfc(6000, 1800), PAPER)[0].verdict == claims.HOLDS
    assert claims.rsfc_claims(_rsfc(3000, 1800), PAPER)[0].verdict == claims.PARTLY
    assert claims.rsfc_claims(_rsfc(1500, 1800), PAPER)[0].verdict == claims.FAILS
    assert claims.rsfc_claims(_rsfc(6000, 1000), PAPER)[1].verdict == claims.PARTLY
    assert "abstract" in claims.rsfc_claims(_rsfc(6000, 1800), PAPER)[0].source


def test_handoff_ranking_must_be_strict_in_every_table() -> None:
    def case(tcp: float, ie: float, ba: float) -> dict[str, Any]:
        m = {k: {"intervals": {"handoff": v}} for k, v in (("tcp", tcp), ("iett", ie), ("ba", ba))}
        return {"mobiflow": m, "paper": {k: {"mbps": 1.0} for k in ("TCP", "IE", "BA")}}

    res = {"a": case(1, 2, 3), "b": case(1, 1, 3)}
    rows = claims.handoff_claims(res, {"a": "handoff", "b": "handoff"})
    assert rows[0].verdict == claims.FAILS  # 1 of 2 strictly ranked: not more than half
    assert rows[1].verdict == claims.HOLDS  # with ties allowed, both


def test_freeze_dccp_is_judged_by_each_measure_and_names_it() -> None:
    def pair(lost: int, unused: tuple[float, float], after: tuple[float, float]) -> dict[str, Any]:
        return {
            "dccp": {"lost": 10, "unused_packets": unused[0], "after_bps": after[0]},
            "freeze": {"lost": lost, "unused_packets": unused[1], "after_bps": after[1]},
        }

    res = {"handoffs": {"x": pair(0, (100, 10), (5, 3)), "y": pair(0, (100, 10), (5, 3))}}
    rows = claims.freeze_dccp_claims(res, ([[1.0, 1.0]], [[0.5, 2.0]]))
    assert [r.verdict for r in rows] == [claims.HOLDS, claims.HOLDS, claims.FAILS]
    assert "goodput over the 60 s after the reconnection" in rows[2].measure
    assert rows[1].paper_value == "less unused in 1 of 2"


def test_freeze_dccp_with_the_ns2_p_floor_has_its_own_rows_that_follow_the_runs() -> None:
    def pair(floor_unused: tuple[float, float], floor_after: tuple[float, float]) -> dict[str, Any]:
        base = {"lost": 0, "unused_packets": 1.0, "after_bps": 1.0}
        return {
            "dccp": {**base, "lost": 10, "unused_packets": 2.0},
            "freeze": base,
            "dccp_floor": {**base, "unused_packets": floor_unused[0], "after_bps": floor_after[0]},
            "freeze_floor": {
                **base,
                "unused_packets": floor_unused[1],
                "after_bps": floor_after[1],
            },
        }

    res = {
        "handoffs": {
            "x": pair((100, 10), (5, 3)),
            "y": pair((100, 10), (5, 6)),
            "z": pair((100, 200), (5, 6)),
        }
    }
    rows = claims.freeze_dccp_claims(res, ([[1.0]], [[0.5]]))
    floor = [r for r in rows if "p floor" in r.claim]
    assert [r.mobiflow_value for r in floor] == ["2 of 3", "2 of 3"]
    assert [r.verdict for r in floor] == [claims.PARTLY, claims.PARTLY]
    assert all("min_p = 1e-5" in r.measure for r in floor)
    # Without floor variants in the results, no floor rows.
    for v in res["handoffs"].values():
        del v["dccp_floor"], v["freeze_floor"]
    assert not [
        r for r in claims.freeze_dccp_claims(res, ([[1.0]], [[0.5]])) if "p floor" in r.claim
    ]


def test_freeze_dccp_over_the_phases_counts_a_handoff_only_if_better_at_every_phase() -> None:
    def at(lost: int, unused: tuple[float, float], after: tuple[float, float]) -> dict[str, Any]:
        return {
            "dccp": {"lost": 10, "unused_packets": unused[0], "after_bps": after[0]},
            "freeze": {"lost": lost, "unused_packets": unused[1], "after_bps": after[1]},
            "dccp_floor": {"lost": 10, "unused_packets": unused[0], "after_bps": after[0]},
            "freeze_floor": {"lost": 0, "unused_packets": unused[1], "after_bps": after[1]},
        }

    good = at(0, (100, 10), (5, 6))
    # Both handoffs win at the offset 0, which is all the old rule looked at ...
    res: dict[str, Any] = {"handoffs": {"x": good, "y": good}}
    assert [r.verdict for r in claims.freeze_dccp_claims(res, ([[1.0]], [[0.5]]))] == [
        claims.HOLDS
    ] * 5
    # ... but y loses a packet, leaves more unused and delivers less at another phase.
    res["phases"] = {
        "x": {"0s": good, "0.015s": at(0, (100, 20), (5, 5.5))},
        "y": {"0s": good, "0.015s": at(3, (100, 130), (5, 4))},
    }
    rows = claims.freeze_dccp_claims(res, ([[1.0]], [[0.5]]))
    assert [r.verdict for r in rows] == [claims.FAILS] * 5
    assert rows[0].mobiflow_value == (
        "1 of 2 at every phase, 0 at none, 1 depend on the phase (0 to 3)"
    )
    assert rows[1].mobiflow_value == (
        "1 of 2 at every phase, 0 at none, 1 depend on the phase (-90 to +30)"
    )
    assert rows[2].mobiflow_value == (
        "1 of 2 at every phase, 0 at none, 1 depend on the phase (-20 to +20)"
    )
    assert "at every phase of the disconnection (2 start offsets" in rows[1].measure
    assert rows[1].rule == "holds: in every handoff at every phase; partly: in more than half"
    # Better at every phase in every handoff: holds.
    res["phases"]["y"]["0.015s"] = good
    rows = claims.freeze_dccp_claims(res, ([[1.0]], [[0.5]]))
    assert [r.verdict for r in rows] == [claims.HOLDS] * 5
    assert rows[0].mobiflow_value == "2 of 2 at every phase, 0 at none, 0 depend on the phase (0)"


def test_fld_ratio_per_burst_against_the_slides() -> None:
    runs = {"fld": [[1.0, 1.0], [1.0, 1.0]], "reno": [[2.0, 1.2], [2.0, 1.2]]}
    res = {"bursts": {"wan_1bg": {"bursts_s": runs}}}
    (row,) = claims.fld_claims(res, {"wan_1bg": (2.0, 1.6)})
    assert row.mobiflow_value == "2.00 / 1.20"
    assert row.verdict == claims.FAILS  # 1 of 2 bursts at 1.6 or more


def test_a_partial_run_gives_no_verdict_rather_than_a_wrong_one() -> None:
    assert claims.all_claims({"afc": {"cases": {}}}) == []
    assert claims.all_claims({"rsfc": {"derived": {}}}) == []
    assert claims.all_claims({"fld": {"bursts": {}}}) == []
