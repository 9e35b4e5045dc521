"""`mobiflow reproduce`: every table in the report is filled from real runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mobiflow.repro import report as repro

from .conftest import Cli, golden, run_cli


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


SEED_KEYS = ("afc", "rsfc", "handoff", "freeze-dccp", "fld")


def _sections(markdown: str) -> dict[str, str]:
    """The report's sections by seed key (``afc``, ...), and ``validation`` for the ns-2
    cross-validation: each starts at the ``## `` heading that is its title. A seed's own
    report comes demoted under its section, so a ``## `` heading that is no section's
    title continues the current section."""
    titles = {f"## {seed.title}": key for key, seed in repro.SEEDS.items()}
    titles["## The simulator's baseline against ns-2"] = "validation"
    out: dict[str, str] = {}
    key = ""
    for line in markdown.splitlines(keepends=True):
        if line.startswith("## ") and line.rstrip("\n") in titles:
            key = titles[line.rstrip("\n")]
        if key:
            out[key] = out.get(key, "") + line
    return out


def test_report_sections_and_files(quick_report: Path) -> None:
    text = (quick_report / "report.md").read_text()
    for seed in SEED_KEYS:
        assert (quick_report / seed / "results.json").is_file(), seed
        assert f"]({seed}/" in text or seed == "afc"  # figures are linked into the seed folder
    sections = _sections(text)
    assert set(SEED_KEYS) <= set(sections)
    for seed in SEED_KEYS:
        # One heading per section: the seed's own report title is not repeated under it.
        body = sections[seed].splitlines()[1:]
        assert not any(line.startswith("## ") and "reproduction" in line for line in body[:3])
    # The contents list links every section by the anchor the HTML page gives it.
    contents = text[text.index("## Contents") : text.index("| section | status | time |")]
    html = (quick_report / "report.html").read_text()
    for seed in SEED_KEYS:
        title = repro.SEEDS[seed].title
        anchor = re.search(rf"\[{re.escape(title)}\]\(#([^)]+)\)", contents)
        assert anchor, title
        assert f'id="{anchor.group(1)}"' in html, anchor.group(1)
    assert "Seed 00" not in text, "sections are named by paper, not by seed number"
    assert "not yet" not in text  # every seed has its reproduction
    assert "<table>" in html
    assert "<title>" in html
    status = json.loads((quick_report / "results.json").read_text())
    for seed in SEED_KEYS:
        assert status[seed]["status"] == "done", (seed, status[seed])


def test_every_table_row_holds_measured_numbers(quick_report: Path) -> None:
    text = (quick_report / "report.md").read_text()
    sections = _sections(text)
    afc = sections["afc"]
    # The throughput table: case, expected, seed, classic, auto-tuning, AFC, ... (12 columns).
    rows = [r for r in _table_rows(afc) if len(r) == 12 and r[0] in ("motivation", "limitation1")]
    assert rows, "the AFC throughput table is missing"
    for r in rows:
        numbers = [float(c) for c in r[3:5]]  # classic, auto-tuning (Mb/s)
        assert all(0.0 < x < 20.0 for x in numbers), r
    fld = sections["fld"]
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


def _assert_tables_filled(markdown: str, allow_empty: frozenset[str] = frozenset()) -> None:
    """Every seed section has tables, and every row of every table holds a measured or
    quoted number in some cell, with no empty cell and no NaN/None (a run that did not
    happen or a value that was never filled)."""
    sections = _sections(markdown)
    seeds = [k for k in SEED_KEYS if k in sections]
    assert seeds == list(SEED_KEYS), sorted(sections)
    for name in seeds:
        body = sections[name]
        rows = _table_rows(body)
        assert len(rows) >= 5, f"{name}: no tables"
        for r in rows[1:]:
            line = " | ".join(r)
            assert not re.search(r"\b(nan|NaN|None|TODO|inf)\b", line), f"{name}: {line}"
            if name not in allow_empty:
                assert all(c != "" for c in r), f"{name}: empty cell in {line}"
        numeric = [r for r in rows if any(re.search(r"\d", c) for c in r[1:])]
        assert len(numeric) >= len(rows) // 2, f"{name}: tables without numbers"


def test_quick_report_tables_are_filled(quick_report: Path) -> None:
    # Quick mode runs a subset of Freeze-DCCP's handoff pairs: its matrix has empty cells.
    _assert_tables_filled((quick_report / "report.md").read_text(), frozenset({"freeze-dccp"}))


@pytest.fixture(scope="module")
def main_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's main job, `mobiflow reproduce all` (full runs, not quick mode; with
    the ns-2 twins where ns-2 is installed), run once for the tests below."""
    out = tmp_path_factory.mktemp("reproduce_all")
    proc = run_cli("reproduce", "all", "--out", out, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return out


def test_main_command_reproduces_every_seed(main_run: Path) -> None:
    """Every seed is reproduced and every table of the report is filled."""
    tmp_path = main_run
    status = json.loads((tmp_path / "results.json").read_text())
    for seed in SEED_KEYS:
        assert status[seed]["status"] == "done", (seed, status[seed])
        assert status[seed]["results"], seed
    text = (tmp_path / "report.md").read_text()
    _assert_tables_filled(text)
    if shutil.which("ns") is not None:
        # The cross-validation table: ns-2's and mobiflow's number in every row, and
        # the checked rows pass (the others are reported, without a tolerance).
        rows = _table_rows(_sections(text)["validation"])[1:]
        assert rows
        for r in rows:
            ns2, ours = float(r[2]), float(r[3])  # a missing number fails here
            assert ns2 >= 0, r
            assert ours >= 0, r
            assert r[-1] in ("pass", "report"), r
    html = (tmp_path / "report.html").read_text()
    # Figures are linked by relative path so that the page opens from the file.
    for src in re.findall(r'<img[^>]+src="([^"]+)"', html):
        assert not src.startswith(("/", "http")), src
        assert (tmp_path / src).is_file(), src
    print("reproduce all:", {k: round(v["seconds"]) for k, v in status.items()})


def test_every_reproduction_table_matches_its_golden_file(main_run: Path) -> None:
    """Every cell of every table of every seed's report is the one in golden/reproduce/
    (see golden/README.md): a number that moves fails here, named by table, row and
    column, until the golden file is updated in a commit that says why."""
    diff = golden.check_tables(main_run)
    assert not diff.lines, "\n".join(diff.lines)


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 is not installed")
def test_validation_table_matches_its_golden_file(main_run: Path) -> None:
    """The ns-2 cross-validation rows (both simulators' numbers) are golden/validation.json's."""
    diff = golden.check_validation(main_run)
    assert not diff.lines, "\n".join(diff.lines)


@pytest.mark.parametrize("installed", [False, True])
def test_report_says_when_ns2_is_missing_and_only_then(
    monkeypatch: pytest.MonkeyPatch, installed: bool
) -> None:
    """Without ns-2 the report opens with what is missing and how to install it, and
    the validation section reads as skipped for that reason, not "not yet"."""
    monkeypatch.setattr(repro, "have_ns2", lambda: installed)
    validation = repro.Seed("validation", "The simulator's baseline against ns-2", None, "")
    sections = [repro.Section(validation, "missing", error="ns-2 is not installed")]
    text = repro.compose(sections, quick=False)
    assert ("ns-2 is not installed on the machine" in text) is not installed
    assert ("apt-get install -y ns2" in text) is not installed
    assert ("skipped: ns-2 is not installed" in text) is not installed
    assert ("not yet" in text) is installed
