"""The golden files themselves: the tool finds every change, and every scenario's summary
is the one in golden/summaries.json (see golden/README.md)."""

from __future__ import annotations

from pathlib import Path

from .conftest import ROOT, golden

REPORT = """\
# A reproduction

| case | paper | ns-2 | mobiflow | gain |
|---|---|---|---|---|
| motivation | 4.00 | 2.50 | 2.757 | +32 % |
| eval1 | 3.10 | 2.90 | 3.962 | -1.5 % |

## Counters

| metric | value |
|---|---|
| timeouts | 348 |
| timeouts | 12 |
"""


def test_tables_are_keyed_by_heading_row_and_column() -> None:
    tables = golden.extract_tables(REPORT)
    assert list(tables) == ["A reproduction", "Counters"]
    first = tables["A reproduction"]
    assert first["columns"] == ["case", "paper", "ns-2", "mobiflow", "gain"]
    assert first["rows"]["eval1"] == ["eval1", "3.10", "2.90", "3.962", "-1.5 %"]
    # A repeated first cell is made unique in order, not lost.
    assert list(tables["Counters"]["rows"]) == ["timeouts", "timeouts (2)"]


def test_a_moved_number_is_named_by_table_row_and_column() -> None:
    g = golden.extract_tables(REPORT)
    f = golden.extract_tables(REPORT.replace("2.757", "1.747"))
    diff = golden.compare_tables("afc.json", g, f, have_ns2=True)
    assert diff.lines == [
        "afc.json: table 'A reproduction', row 'motivation', column 'mobiflow': '2.757' -> '1.747'"
    ]


def test_a_change_in_the_last_printed_digit_fails() -> None:
    g = golden.extract_tables(REPORT)
    f = golden.extract_tables(REPORT.replace("| 348 |", "| 349 |"))
    assert golden.compare_tables("x", g, f, have_ns2=True).lines
    assert not golden.cells_match("3.962", "3.963")
    assert golden.cells_match("1,234 (5)", "1,234 (5)")
    assert not golden.cells_match("holds", "partly")


def test_new_and_missing_rows_and_tables_are_reported() -> None:
    g = golden.extract_tables(REPORT)
    f = golden.extract_tables(
        REPORT.replace("| eval1 |", "| eval2 |").replace("## Counters", "## Other")
    )
    lines = golden.compare_tables("x", g, f, have_ns2=True).lines
    assert "x: table 'A reproduction': row 'eval1' is gone" in lines
    assert "x: table 'A reproduction': new row 'eval2'" in lines
    assert "x: table 'Counters' is gone" in lines
    assert "x: new table 'Other'" in lines


def test_without_ns2_only_the_ns2_cells_are_left_out() -> None:
    g = golden.extract_tables(REPORT)
    f = golden.extract_tables(REPORT.replace("| 2.50 |", "|  |").replace("+32 %", "+33 %"))
    diff = golden.compare_tables("x", g, f, have_ns2=False)
    assert diff.skipped == 2  # the ns-2 column's two cells
    assert diff.lines == [
        "x: table 'A reproduction', row 'motivation', column 'gain': '+32 %' -> '+33 %'"
    ]
    # With ns-2 installed, an empty ns-2 cell is a difference like any other.
    assert len(golden.compare_tables("x", g, f, have_ns2=True).lines) == 2


def test_every_scenario_summary_matches_its_golden_hash() -> None:
    """All scenarios of the tree (about 90, a few seconds): any change of any number of
    any summary fails, so a refactor or a speed-up proves it changed nothing."""
    files = golden.scenario_files()
    assert len(files) >= 80
    recorded = set(golden._read_json(ROOT / "golden" / "summaries.json")["sha256"])
    assert {p.relative_to(ROOT).as_posix() for p in files} == recorded
    diff = golden.check_summaries()
    assert not diff.lines, "\n".join(diff.lines)


def test_golden_tables_exist_for_every_seed() -> None:
    for seed in golden.SEED_REPORTS:
        path: Path = ROOT / "golden" / "reproduce" / f"{seed}.json"
        data = golden._read_json(path)
        cells = sum(len(r) for t in data["tables"].values() for r in t["rows"].values())
        assert cells > 50, (seed, cells)


def test_a_bold_caption_names_the_table_under_its_heading() -> None:
    table = "| a | b |\n|---|---|\n| x | 1 |\n"
    text = f"## Simulation\n\n**Packet losses**\n\n{table}\n{table}"
    assert list(golden.extract_tables(text)) == ["Simulation / Packet losses", "Simulation"]


def test_without_ns2_a_table_may_lose_its_ns2_columns() -> None:
    g = golden.extract_tables(REPORT)
    f = golden.extract_tables(
        REPORT.replace("| case | paper | ns-2 |", "| case | paper |")
        .replace("| 4.00 | 2.50 |", "| 4.00 |")
        .replace("| 3.10 | 2.90 |", "| 3.10 |")
        .replace("|---|---|---|---|---|\n", "|---|---|---|---|\n", 1)
    )
    assert golden.compare_tables("x", g, f, have_ns2=False).lines == []
    assert golden.compare_tables("x", g, f, have_ns2=True).lines  # with ns-2 it is a loss
