"""The FLD_TCP reproduction (issue 9) runs end to end on a shortened case.

FLD_TCP: G. R. Moktan, "In the Interest of the Short: An approach for e2e congestion
control", talk slides, Aalto University, 2012.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobiflow.repro import fld

ROOT = Path(__file__).resolve().parents[2]


def test_quick_reproduction_writes_tables_and_figures(tmp_path: Path) -> None:
    out = tmp_path / "fld"
    assert fld.main(["--quick", "--out", str(out), "--workers", "1"]) == 0
    summary = (out / "summary.md").read_text(encoding="utf-8")
    # The slides' numbers sit beside ours.
    assert "| 1 (512KB) | 0.75 | 1.4 | 2 |" in summary
    assert "FLD_TCP no switch" in summary
    assert "`flows.1.tcp.fld.threshold` = `2MiB`" in summary
    for name in (
        "bursts_wan_1bg_times.png",
        "bursts_wan_1bg_cwnd.png",
        "web_pages_wan_bg_fct_cdf.png",
    ):
        assert (out / name).stat().st_size > 0, name
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    bursts = data["bursts"]["wan_1bg"]["bursts_s"]
    # The shortened case keeps the first two bursts; FLD_TCP finishes the first one
    # before Reno does.
    assert len(bursts["fld"][0]) == 2
    assert bursts["fld"][0][0] < bursts["reno"][0][0]
    fcts = data["web"]["web_pages_wan_bg"]
    assert set(fcts) == set(fld.VARIANTS)
    assert all(t is not None for _, t in fcts["fld"])


def test_size_distributions_match_the_cited_figures() -> None:
    pages = fld.fit_pages()
    assert pages.mean / fld.KIB == pytest.approx(320)
    assert pages.quantile(0.9) / fld.KIB == pytest.approx(663)
    heavy = fld.fit_pages(root="heavy")
    assert heavy.quantile(0.9) / fld.KIB == pytest.approx(663)
    assert heavy.sigma > pages.sigma
    g3 = fld.fit_3g()
    assert g3.quantile(0.98) / fld.KIB == pytest.approx(60.1)
    assert g3.quantile(0.99) / fld.KIB == pytest.approx(123.8)


def test_generated_web_scenarios_are_the_committed_ones(tmp_path: Path) -> None:
    paths = fld.generate_web(tmp_path)
    assert [p.name for p in paths] == [f"{s.name}.toml" for s in fld.WEB_SPECS]
    for p in paths:
        committed = ROOT / "scenarios" / "fld" / "web" / p.name
        assert committed.read_text(encoding="utf-8") == p.read_text(encoding="utf-8"), p.name
