"""`mobiflow reproduce`: every table in the report is filled from real runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mobiflow.repro import report as repro

from .conftest import Cli


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce")
    repro.reproduce(["all"], out, quick=True, validation=False)
    return out


def _table_rows(markdown: str) -> list[list[str]]:
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| :]+\|$", line):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_report_sections_and_files(quick_report: Path) -> None:
    text = (quick_report / "report.md").read_text()
    for seed in ("afc", "rsfc", "fld"):
        assert (quick_report / seed / "results.json").is_file()
        assert f"]({seed}/" in text or seed == "afc"  # figures are linked into the seed folder
    assert "Seed 000" in text
    assert "Seed 004" in text
    assert "Seed 001" in text
    assert "not yet" in text  # seeds without a reproduction are said to be missing
    html = (quick_report / "report.html").read_text()
    assert "<table>" in html
    assert "<title>" in html
    status = json.loads((quick_report / "results.json").read_text())
    assert status["afc"]["status"] == "done"
    assert status["fld"]["status"] == "done"
    assert status["rsfc"]["status"] == "done"


def test_every_table_row_holds_measured_numbers(quick_report: Path) -> None:
    text = (quick_report / "report.md").read_text()
    afc = text[text.index("## Seed 000") : text.index("## Seed 001")]
    # The throughput table: case, expected, seed, classic, auto-tuning, AFC, ... (12 columns).
    rows = [r for r in _table_rows(afc) if len(r) == 12 and r[0] in ("motivation", "limitation1")]
    assert rows, "the AFC throughput table is missing"
    for r in rows:
        numbers = [float(c) for c in r[3:5]]  # classic, auto-tuning (Mb/s)
        assert all(0.0 < x < 20.0 for x in numbers), r
    fld = text[text.index("## Seed 004") :]
    # The first two bursts finish even in the shortened runs of quick mode.
    burst_rows = [r for r in _table_rows(fld) if r and re.match(r"^[12] \(", r[0])]
    assert burst_rows, "the FLD burst table is missing"
    for r in burst_rows:
        measured = [c for c in r if "±" in c]
        assert measured, r
        assert all(float(c.split("±")[0]) > 0 for c in measured), r


def test_unknown_seed_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    proc = cli("reproduce", "bogus", "--out", tmp_path)
    assert proc.returncode == 2
    assert "unknown seed bogus" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 is not installed")
def test_validation_section_sets_ns2_beside_mobiflow() -> None:
    sec = repro.run_validation()
    assert sec.status == "done"
    rows = _table_rows(sec.markdown)
    results = [r[-1] for r in rows[1:]]
    assert "pass" in results
    assert "FAIL" not in results
