"""The AFC reproduction (seed 000) runs end to end on a shortened scenario."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

from mobiflow.repro import afc


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
    assert "| motivation | 4.00 | 1.45 |" in report
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
