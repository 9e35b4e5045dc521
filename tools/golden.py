"""Golden files: every number the reproductions and the validation print, kept in the tree.

A change of the engine that moves a number must show up as a failing test, and the
golden files change only in a commit of their own whose message says why the numbers
moved (see ``golden/README.md``). Three kinds of golden file live under ``golden/``:

* ``reproduce/<seed>.json``: every cell of every Markdown table of a seed's own report
  (``OUT/<seed>/report.md`` or ``summary.md`` after ``mobiflow reproduce all --out OUT``),
  keyed by table (the heading above it), row (its first cell) and column (its header);
* ``validation.json``: the ns-2 cross-validation rows (ns-2's and mobiflow's numbers);
* ``summaries.json``: a SHA-256 of every scenario's summary (``scenarios/**.toml`` and the
  twins of ``validation/ns2/``), so that a refactor or a speed-up can prove it changed
  no number at all.

Usage (from the repository root, with the package installed, e.g. ``.venv/bin/python``)::

    python tools/golden.py check-tables OUT      # compare a reproduce run with golden/
    python tools/golden.py update-tables OUT     # rewrite golden/reproduce/ from it
    python tools/golden.py check-validation OUT  # the validation rows of the same run
    python tools/golden.py update-validation OUT
    python tools/golden.py check-summaries [--jobs N]
    python tools/golden.py update-summaries [--jobs N]

Checks print one line per difference, naming the file, table, row and column, and exit 1
when there is one. Cells compare as text with their numbers read as numbers: a cell
matches when its words are the same and each number is within ``REL_TOL`` of the golden
one (so a number printed with three decimals must print the same three decimals).

Where ns-2 is not installed, a run has no ns-2 numbers: cells whose table, row or column
names ns-2 are then not compared (and the check says how many it left out), nor is the
validation table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobiflow.repro.report import REPRODUCTIONS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
REL_TOL = 1e-9
"""Relative tolerance on each number of a cell: tight, so any real change fails."""

SEED_REPORTS = {key: r.report_file for key, r in REPRODUCTIONS.items()}
"""Each seed's own report under ``OUT/<seed>/`` (the seed keys of ``mobiflow reproduce``,
as its reproductions declare them)."""

NS2_WORDS = re.compile(r"\bns-?2\b|\bns2\b|Agent/", re.IGNORECASE)
MINUS = "\u2212"
"""The minus sign some tables print."""
NUMBER = re.compile(rf"[-+{MINUS}]?(?:\d+(?:[.,]\d+)*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")

# --- tables out of Markdown -----------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _unique(names: Iterable[str]) -> list[str]:
    """Names made unique in order: a repeat gets `` (2)``, `` (3)``, …"""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def extract_tables(markdown: str) -> dict[str, dict[str, Any]]:
    """Every pipe table of ``markdown``: ``{table: {"columns": [...], "rows": {row: [...]}}}``.

    A table is named by the nearest heading above it, followed by its caption when the
    last line before it is a bold one (``**Packet losses**``), and `` (2)`` for the
    second of the same name; a row by its first cell and a column by its header cell,
    each made unique in order of appearance.
    """
    tables: dict[str, dict[str, Any]] = {}
    heading = "(top)"
    caption = ""
    lines = markdown.splitlines()
    names: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line):
            heading = m.group(1)
            caption = ""
            i += 1
            continue
        if (
            line.lstrip().startswith("|")
            and i + 1 < len(lines)
            and re.match(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$", lines[i + 1])
        ):
            columns = _unique(_cells(line))
            body: list[list[str]] = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            names.append(f"{heading} / {caption}" if caption else heading)
            name = _unique(names)[-1]
            caption = ""
            keys = _unique(r[0] if r else "" for r in body)
            tables[name] = {"columns": columns, "rows": dict(zip(keys, body, strict=True))}
            continue
        if line.strip():
            m = re.match(r"^\*\*(.+)\*\*$", line.strip())
            caption = m.group(1) if m else ""
        i += 1
    return tables


# --- comparing cells ------------------------------------------------------------------


def _number(text: str) -> float:
    return float(text.replace(MINUS, "-").replace(",", ""))


def cells_match(golden: str, fresh: str, rel_tol: float = REL_TOL) -> bool:
    """Whether two cells say the same: the same words, and numbers within ``rel_tol``."""
    if golden == fresh:
        return True
    if NUMBER.sub("#", golden) != NUMBER.sub("#", fresh):
        return False
    for a, b in zip(NUMBER.findall(golden), NUMBER.findall(fresh), strict=True):
        x, y = _number(a), _number(b)
        if not math.isclose(x, y, rel_tol=rel_tol, abs_tol=0.0):
            return False
    return True


@dataclass
class Diff:
    """What a check found, one line each, and how many cells it left out."""

    lines: list[str]
    skipped: int = 0


def compare_tables(
    label: str,
    golden: Mapping[str, Any],
    fresh: Mapping[str, Any],
    have_ns2: bool,
) -> Diff:
    """Every difference between two table sets (from :func:`extract_tables`)."""
    out: list[str] = []
    skipped = 0

    def ns2_part(*names: str) -> bool:
        return not have_ns2 and any(NS2_WORDS.search(n) for n in names)

    for t, gt in golden.items():
        if t not in fresh:
            if ns2_part(t):
                skipped += sum(len(r) for r in gt["rows"].values())
            else:
                out.append(f"{label}: table {t!r} is gone")
            continue
        ft = fresh[t]
        gcols = [c for c in gt["columns"] if not ns2_part(c)]
        fcols = [c for c in ft["columns"] if not ns2_part(c)]
        if gcols != fcols:
            out.append(f"{label}: table {t!r}: columns {gt['columns']} are now {ft['columns']}")
            continue
        where = {c: k for k, c in enumerate(ft["columns"])}
        for r, gcells in gt["rows"].items():
            if r not in ft["rows"]:
                if ns2_part(t, r):
                    skipped += len(gcells)
                else:
                    out.append(f"{label}: table {t!r}: row {r!r} is gone")
                continue
            fcells = ft["rows"][r]
            for k, col in enumerate(gt["columns"]):
                if ns2_part(t, r, col):
                    skipped += 1
                    continue
                g = gcells[k] if k < len(gcells) else ""
                j = where[col]
                f = fcells[j] if j < len(fcells) else ""
                if not cells_match(g, f):
                    out.append(f"{label}: table {t!r}, row {r!r}, column {col!r}: {g!r} -> {f!r}")
        for r in ft["rows"]:
            if r not in gt["rows"] and not ns2_part(t, r):
                out.append(f"{label}: table {t!r}: new row {r!r}")
    for t in fresh:
        if t not in golden and not ns2_part(t):
            out.append(f"{label}: new table {t!r}")
    return Diff(out, skipped)


def _have_ns2() -> bool:
    return shutil.which("ns") is not None


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


CLAIMS = "claims"
"""The claims table the whole report opens with (``OUT/report.md``), kept like a seed's."""


def seed_tables(out: Path, seed: str) -> dict[str, Any]:
    """The tables of one seed's report in a ``mobiflow reproduce`` output folder (or,
    for :data:`CLAIMS`, the claims table of the whole report)."""
    if seed == CLAIMS:
        tables = extract_tables((out / "report.md").read_text(encoding="utf-8"))
        return {k: v for k, v in tables.items() if "claim" in v["columns"]}
    path = out / seed / SEED_REPORTS[seed]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no report (did `mobiflow reproduce all` run?)")
    return extract_tables(path.read_text(encoding="utf-8"))


def check_tables(out: Path, golden: Path = GOLDEN, have_ns2: bool | None = None) -> Diff:
    """Compare every seed's tables in ``out`` with ``golden/reproduce/<seed>.json``."""
    ns2 = _have_ns2() if have_ns2 is None else have_ns2
    lines: list[str] = []
    skipped = 0
    for seed in [*SEED_REPORTS, CLAIMS]:
        gpath = golden / "reproduce" / f"{seed}.json"
        if not gpath.is_file():
            lines.append(f"{gpath}: missing (run update-tables)")
            continue
        g = _read_json(gpath)
        if g["ns2"] and not ns2:
            pass  # compare_tables leaves the ns-2 cells out
        elif not g["ns2"] and ns2:
            lines.append(f"{gpath}: made without ns-2; update it on a machine with ns-2")
        d = compare_tables(
            f"golden/reproduce/{seed}.json", g["tables"], seed_tables(out, seed), ns2
        )
        lines += d.lines
        skipped += d.skipped
    return Diff(lines, skipped)


def update_tables(out: Path, golden: Path = GOLDEN) -> list[Path]:
    """Rewrite ``golden/reproduce/`` from the reports in ``out``."""
    written = []
    for seed, report in [*SEED_REPORTS.items(), (CLAIMS, "")]:
        path = golden / "reproduce" / f"{seed}.json"
        _write_json(
            path,
            {
                "source": "mobiflow reproduce all --out OUT: "
                + (f"OUT/{seed}/{report}" if report else "OUT/report.md, the claims table"),
                "ns2": _have_ns2(),
                "tables": seed_tables(out, seed),
            },
        )
        written.append(path)
    return written


# --- the validation table -------------------------------------------------------------

VALIDATION_KEYS = ("ns2", "mobiflow", "difference", "tolerance", "status")


def validation_rows(out: Path) -> dict[str, dict[str, Any]]:
    """The ns-2 cross-validation rows of a ``mobiflow reproduce`` run, by case and metric."""
    results = _read_json(out / "results.json")
    section = results.get("validation") or {}
    rows = section.get("results") or []
    return {f"{r['case']} / {r['metric']}": {k: r[k] for k in VALIDATION_KEYS} for r in rows}


def _values_match(g: Any, f: Any) -> bool:
    if isinstance(g, float) and isinstance(f, (int, float)):
        return math.isclose(g, f, rel_tol=REL_TOL, abs_tol=1e-12)
    return bool(g == f)


def check_validation(out: Path, golden: Path = GOLDEN) -> Diff:
    """Compare the validation rows of ``out`` with ``golden/validation.json``."""
    gpath = golden / "validation.json"
    label = "golden/validation.json"
    if not _have_ns2():
        g = _read_json(gpath)
        return Diff([], len(g["rows"]))
    g = _read_json(gpath)["rows"]
    f = validation_rows(out)
    lines = []
    for key, grow in g.items():
        if key not in f:
            lines.append(f"{label}: row {key!r} is gone")
            continue
        for k in VALIDATION_KEYS:
            if not _values_match(grow[k], f[key][k]):
                lines.append(f"{label}: row {key!r}, column {k!r}: {grow[k]!r} -> {f[key][k]!r}")
    lines += [f"{label}: new row {key!r}" for key in f if key not in g]
    return Diff(lines)


def update_validation(out: Path, golden: Path = GOLDEN) -> Path:
    rows = validation_rows(out)
    if not rows:
        raise SystemExit("error: no validation rows in that run (is ns-2 installed?)")
    path = golden / "validation.json"
    _write_json(path, {"source": "mobiflow reproduce all: the ns-2 cross-validation", "rows": rows})
    return path


# --- summaries of every scenario ------------------------------------------------------


def scenario_files(root: Path = ROOT) -> list[Path]:
    """Every scenario in the tree: ``scenarios/**.toml`` and the ns-2 twins' scenarios."""
    files = sorted((root / "scenarios").rglob("*.toml"))
    files += sorted((root / "validation" / "ns2").glob("*.toml"))
    return files


def summary_hash(summary_json: str) -> str:
    """SHA-256 of a summary with the package version left out (a release changes no number)."""
    data = json.loads(summary_json)
    data.pop("mobiflow_version", None)
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def summary_hashes(files: Sequence[Path], jobs: int = 2) -> dict[str, str]:
    import mobiflow  # the engine; imported here so that table checks need no build

    def one(path: Path) -> tuple[str, str]:
        return path.relative_to(ROOT).as_posix(), summary_hash(mobiflow.run_json(path))

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, files))


def check_summaries(jobs: int = 2, golden: Path = GOLDEN) -> Diff:
    label = "golden/summaries.json"
    g = _read_json(golden / "summaries.json")["sha256"]
    f = summary_hashes(scenario_files(), jobs)
    lines = [f"{label}: {k}: its summary changed" for k in g if k in f and g[k] != f[k]]
    lines += [f"{label}: {k}: the scenario is gone" for k in g if k not in f]
    lines += [f"{label}: {k}: new scenario" for k in f if k not in g]
    return Diff(lines)


def update_summaries(jobs: int = 2, golden: Path = GOLDEN) -> Path:
    path = golden / "summaries.json"
    _write_json(
        path,
        {
            "source": "tools/golden.py: SHA-256 of each scenario's summary (version left out)",
            "sha256": summary_hashes(scenario_files(), jobs),
        },
    )
    return path


# --- command line ---------------------------------------------------------------------


def _report(diff: Diff, what: str) -> int:
    for line in diff.lines:
        print(line)
    extra = (
        f" ({diff.skipped} ns-2 cells not compared: ns-2 is not installed)" if diff.skipped else ""
    )
    if diff.lines:
        print(f"{what}: {len(diff.lines)} difference(s) from the golden files{extra}")
        return 1
    print(f"{what}: identical to the golden files{extra}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "action",
        choices=[
            "check-tables",
            "update-tables",
            "check-validation",
            "update-validation",
            "check-summaries",
            "update-summaries",
        ],
    )
    ap.add_argument("out", nargs="?", type=Path, help="a `mobiflow reproduce all --out` folder")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    if a.action.endswith(("tables", "validation")) and a.out is None:
        ap.error(f"{a.action} needs the folder of a `mobiflow reproduce all --out` run")
    if a.action == "check-tables":
        return _report(check_tables(a.out), "tables")
    if a.action == "update-tables":
        for p in update_tables(a.out):
            print(f"wrote {p.relative_to(ROOT)}")
        return 0
    if a.action == "check-validation":
        return _report(check_validation(a.out), "validation")
    if a.action == "update-validation":
        print(f"wrote {update_validation(a.out).relative_to(ROOT)}")
        return 0
    if a.action == "check-summaries":
        return _report(check_summaries(a.jobs), "summaries")
    print(f"wrote {update_summaries(a.jobs).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
