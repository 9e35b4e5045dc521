"""The AFC reproduction runs end to end on a shortened scenario.

AFC: S. Sanadhya, R. Sivakumar, "Adaptive Flow Control for TCP on Mobile Phones", IEEE
INFOCOM 2011.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import mobiflow
from mobiflow.repro import afc

from .conftest import ROOT


def test_reproduction_runs_on_a_shortened_motivation_case(tmp_path: Path) -> None:
    code = afc.main(
        ["--cases", "motivation", "--duration", "20", "--jobs", "2", "--out", str(tmp_path)]
    )
    assert code == 0
    results = json.loads((tmp_path / "results.json").read_text())
    runs = results["cases"]["motivation"]
    assert set(runs) == {v.name for v in afc.VARIANTS}
    assert runs["classic"]["zero_windows"] > 0
    assert runs["afc"]["paced_segments"] > 0
    assert runs["no_pacing"]["paced_segments"] == 0
    assert runs["no_hide"]["hidden_congestion_events"] == 0
    assert set(results["sensitivity"]) == set(afc.SENSITIVITY_STEPS)
    assert {r["variant"] for r in results["theory"]} == {"classic", "afc"}
    report = (tmp_path / "report.md").read_text()
    assert "| motivation | 4.00 | 1.45 (classic) |" in report
    assert "## Verdict" in report
    assert "equations (5) and (6)" in report
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "fig_motivation.png").stat().st_size > 0
        assert (tmp_path / "fig_theory.png").stat().st_size > 0


def test_equation_six_is_the_integral_controllers_response() -> None:
    # Far below the cap, TCP = A0 [1 + cos(theta) sin(wt - theta)].
    a0, omega, alpha = 2e6, 1.0, 1.0
    theta = 0.7853981633974483  # atan(1)
    assert abs(afc.model_rate(theta / omega, a0, omega, alpha, 1e12) - a0) < 1e-6
    # The cap alpha B0 clips it.
    assert afc.model_rate(2.0, a0, omega, alpha, 1e6) == 1e6
    c, amp, phi = afc.fit_sinusoid(
        [0.01 * k for k in range(2000)],
        [3 + 2 * math.sin(0.01 * k - 0.5) for k in range(2000)],
        1.0,
    )
    assert abs(c - 3) < 1e-9
    assert abs(amp - 2) < 1e-9
    assert abs(phi - 0.5) < 1e-9


def _afc_flow(case: str, duration: str, fc: str = "afc") -> dict[str, Any]:
    path = ROOT / "scenarios" / "afc" / f"{case}.toml"
    summary = mobiflow.run(path, set={"flows.phone.flow_control": fc, "run.duration": duration})
    return dict(summary["flows"][0])


def test_afc_repairs_buffer_losses_by_fast_retransmit_not_by_timeout() -> None:
    """AFC's window overshoots a reader that pauses, so the full buffer drops data; the
    repair must not be left to the retransmission timer (hundreds of timeouts in 600 s
    before `repair_buffer_losses`; measured here on 120 s: 66 timeouts, 12 fast
    retransmits and more retransmissions than segments delivered before; 17, 65 and
    0.55 per segment after) and AFC must beat classic flow control."""
    a = _afc_flow("motivation", "120s")
    classic = _afc_flow("motivation", "120s", "classic")
    segments = a["bytes_delivered"] / 1000
    assert a["rcv_buffer_drops"] > 0  # the situation under test happens
    assert a["fast_retransmits"] > 2 * a["timeouts"], a
    assert a["retransmits"] < 0.7 * segments, a
    assert a["goodput_bps"] > 1.2 * classic["goodput_bps"], (a, classic)
