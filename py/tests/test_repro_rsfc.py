"""RSFC reproduction: every table is filled from real runs, and the measured effects
point the way the paper's do (Y. Xu, W. K. Leong, B. Leong, A. Razeen, "Dynamic Regulation
of Mobile 3G/HSPA Uplink Buffer with Receiver-side Flow Control", IEEE ICNP 2012)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import mobiflow
from mobiflow.repro import rsfc


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("rsfc")
    assert rsfc.main(["--out", str(folder)]) == 0
    return folder


def _tables(markdown: str) -> list[list[list[str]]]:
    """Every Markdown table: rows of cells, header first, separator left out."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            if not re.match(r"^\|[-| :]+\|$", line):
                current.append([c.strip() for c in line.strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def _num(cell: str) -> float:
    return float(cell.split()[0].rstrip("%"))


def test_every_table_cell_is_filled(out: Path) -> None:
    text = (out / "report.md").read_text()
    tables = _tables(text)
    assert len(tables) == 7  # the last: the claims' cases on Linux TCP
    numeric = 0
    for table in tables:
        header, rows = table[0], table[1:]
        assert rows
        for row in rows:
            assert len(row) == len(header), row
            assert all(cell for cell in row), row
            # "-" only where a case has no such flow or the seed gives no number.
            for cell in row[1:]:
                if cell not in ("-", "unfinished") and not cell.startswith(("<", ">", "up to")):
                    _num(cell)
                    numeric += 1
    assert numeric > 80
    for fig in ("fig_download.png", "fig_pages.png", "fig_changes.png"):
        assert (out / fig).stat().st_size > 10_000
        assert f"]({fig})" in text


def test_numbers_come_from_real_runs_and_show_the_effects(out: Path) -> None:
    res = json.loads((out / "results.json").read_text())
    d = res["derived"]
    dl = d["download"]
    # A fresh run of the scenario gives the table's number.
    again = mobiflow.run(rsfc.SCENARIOS / "download_alone.toml")
    assert again["flows"][0]["intervals"]["steady"] / 1e3 == pytest.approx(
        dl["download_alone"]["download_kbps"]
    )
    text = (out / "report.md").read_text()
    assert f"| download alone | {dl['download_alone']['download_kbps']:.0f} |" in text
    # The collapse, and RSFC's recovery.
    assert dl["download_upload"]["download_kbps"] * 3 < dl["download_alone"]["download_kbps"]
    assert dl["download_upload_rsfc"]["download_kbps"] > 3 * dl["download_upload"]["download_kbps"]
    assert (
        dl["download_upload_rsfc"]["download_rtt_steady_ms"] * 3
        < dl["download_upload"]["download_rtt_steady_ms"]
    )
    pages = d["pages"]
    assert pages["web_upload_rsfc"]["p50_s"] * 5 < pages["web_upload"]["p50_s"]
    assert pages["web_alone"]["unfinished"] <= 1  # at most the page the run ended in
    fair = d["fairness"]["two_uploads_rsfc"]
    assert 0.5 <= fair["jain"] <= 1.0
    assert 0.0 < fair["efficiency"] <= 1.05
    # Every declared flow of every run was measured (but those moved to the end of the
    # run to leave another flow alone).
    for run in res["runs"].values():
        moved = {k.split(".")[1] for k in run["sets"] if k.endswith(".start")}
        for flow in run["flows"].values():
            if flow["name"] not in moved:
                assert flow["goodput_bps"] > 0, (run["file"], flow["name"])


def test_every_claim_is_judged_on_linux_tcp_too(out: Path) -> None:
    results = json.loads((out / "results.json").read_text())
    runs = results["linux"]["runs"]
    # The Linux runs are the scenarios behind the claims, on the linux profile.
    assert all(r["sets"]["tcp.profile"] == "linux" for r in runs.values())
    rows = rsfc.REPRODUCTION.judge(results)
    assert rows
    assert all(r.linux_value and r.linux_verdict for r in rows)
    # The Linux numbers are their own runs', not a copy of the main ones.
    assert any(r.linux_value != r.mobiflow_value for r in rows)
