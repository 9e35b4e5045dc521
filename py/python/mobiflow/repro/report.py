"""`mobiflow reproduce`: run the papers' reproductions and write one report.

Each paper has a reproduction module (:mod:`mobiflow.repro.afc`, ...) that declares a
:class:`~mobiflow.repro.framework.Reproduction`; :data:`REPRODUCTIONS` lists them.
This module runs the ones asked for, each into ``OUT/<key>/`` (its own page, figures
and ``results.json``), adds the ns-2 cross-validation of the simulator's baseline
where ns-2 is installed, and joins everything into ``OUT/report.md`` and
``OUT/report.html``: each reproduction's structured report is rendered under its own
section, headings one level down and figure links into its folder (relative paths,
so the page opens from the file without a server); the claims table the report
opens with is every reproduction's claims.

Seeds whose reproduction does not exist yet are listed as such in the report, never
filled in.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobiflow.repro import afc, claims, fld, freeze_dccp, handoff, rsfc
from mobiflow.repro.framework import Report, Reproduction, have_ns2, ns2_validation

__all__ = [
    "REPRODUCTIONS",
    "SEEDS",
    "Section",
    "Seed",
    "compose",
    "have_ns2",
    "reproduce",
    "run_seed",
    "run_validation",
    "to_html",
]

REPRODUCTIONS: dict[str, Reproduction] = {
    r.key: r
    for r in (
        afc.REPRODUCTION,
        rsfc.REPRODUCTION,
        handoff.REPRODUCTION,
        freeze_dccp.REPRODUCTION,
        fld.REPRODUCTION,
    )
}
"""Every reproduction by key, in the report's order."""


@dataclass(frozen=True)
class Seed:
    """One section of the report: a paper's reproduction, or the validation."""

    key: str
    title: str
    module: str | None
    report: str


SEEDS: dict[str, Seed] = {
    k: Seed(k, r.title, r.module, r.report_file) for k, r in REPRODUCTIONS.items()
}


@dataclass
class Section:
    """What one seed's reproduction produced."""

    seed: Seed
    status: str  # "done", "missing" (no reproduction yet) or "failed"
    seconds: float = 0.0
    markdown: str = ""
    results: Any = None
    error: str = ""
    report: Report | None = None
    """The reproduction's structured report (its claims, tables and figures)."""


def run_seed(
    seed: Seed,
    out: Path,
    quick: bool,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> Section:
    """Run one seed's reproduction into ``out/<key>/`` and keep its report; ``options``
    are :class:`~mobiflow.repro.framework.Options` fields (``jobs``, ``figures``, ...)."""
    declared = REPRODUCTIONS.get(seed.key)
    if declared is None:
        return Section(seed, "missing")

    def say(line: str) -> None:
        if progress is not None:
            progress(f"  {seed.key}: {line}")

    opts = declared.options(out / seed.key, quick=quick, progress=say, **options)
    t0 = time.perf_counter()
    try:
        report = declared.reproduce(opts)
    except Exception as e:  # noqa: BLE001 - one failed seed must not stop the others
        return Section(seed, "failed", time.perf_counter() - t0, error=f"{type(e).__name__}: {e}")
    seconds = time.perf_counter() - t0
    text = report.markdown(links=f"{seed.key}/", depth=1, title=False).strip()
    return Section(seed, "done", seconds, text, report.plain_results(), report=report)


def run_validation() -> Section:
    """The ns-2 cross-validation table, when ns-2 is installed."""
    seed = Seed("validation", "The simulator's baseline against ns-2", None, "")
    if not have_ns2():
        return Section(seed, "missing", error="ns-2 is not installed (apt-get install -y ns2)")
    module = ns2_validation()
    if module is None:
        return Section(seed, "failed", error="validation/ns2/validate.py not found")
    t0 = time.perf_counter()
    rows = module.validate(list(module.CASES), have_ns=True)
    lines = [
        "| scenario | metric | ns-2 | mobiflow | difference | tolerance | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        fmt = "{:.3f}" if "goodput" in r.metric else "{:.0f}"
        lines.append(
            f"| {r.case} | {r.metric} | {fmt.format(r.ns2)} | {fmt.format(r.mobiflow)} | "
            + ("" if r.difference is None else f"{r.difference:+.1%}")
            + " | "
            + ("" if r.tolerance is None else f"±{r.tolerance:.0%}")
            + f" | {r.status} |"
        )
    text = (
        "Twin scenarios run in ns-2.35 and in mobiflow with its `ns2` TCP profile; see "
        "`validation/README.md` for the conventions and the differences that remain.\n\n"
        + "\n".join(lines)
        + "\n"
    )
    results = [r.__dict__ for r in rows]
    return Section(seed, "done", time.perf_counter() - t0, text, results)


CLAIMS_HEADING = "The papers' claims against mobiflow's runs"


def _anchor(heading: str) -> str:
    """The id the HTML page gives a heading (Python-Markdown's ``toc`` extension; the
    same as GitHub's for these titles)."""
    from markdown.extensions.toc import slugify  # type: ignore[import-untyped]

    return str(slugify(heading, "-"))


def compose(sections: Sequence[Section], quick: bool) -> str:
    """The whole report as Markdown."""
    out = ["# mobiflow: reproduction of the seed documents", ""]
    if quick:
        out += ["*Quick mode: shortened runs; numbers are indicative only.*", ""]
    if not have_ns2():
        out += [
            "> **ns-2 is not installed on the machine that made this report.** Every ns-2 "
            "column below is empty and the cross-validation of the simulator against "
            "ns-2.35 is missing; text that names ns-2's behaviour refers to runs made "
            "with ns-2 (`make validate`), not to a column of this report. Install it "
            "(`apt-get install -y ns2` on Debian or Ubuntu) and run `make reproduce` "
            "again for the full report.",
            "",
        ]
    results = {s.seed.key: s.results for s in sections if s.status == "done" and s.results}
    judged = {s.seed.key: s.report.claims for s in sections if s.report is not None}
    rows = [c for k in REPRODUCTIONS if k in judged for c in judged[k]]
    if rows:
        out += [
            f"## {CLAIMS_HEADING}",
            "",
            "Each paper's headline claims, the paper's number and where it comes from, "
            "mobiflow's number and a verdict computed from the runs below by the rule "
            "stated under the table. Claims judged by more than one measure have a row "
            "per measure.",
            "",
            *claims.table(rows, {k: v.title for k, v in SEEDS.items()}),
            "",
        ]
        silent = [
            SEEDS[k].title for k in results if k in SEEDS and k not in {c.paper for c in rows}
        ]
        if silent:
            out += [f"No verdict (their runs lack what the claims need): {'; '.join(silent)}.", ""]
    out += ["## Contents", ""]
    if rows:
        out.append(f"- [{CLAIMS_HEADING}](#{_anchor(CLAIMS_HEADING)})")
    out += [f"- [{s.seed.title}](#{_anchor(s.seed.title)})" for s in sections]
    out += ["", "| section | status | time |", "|---|---|---|"]
    for s in sections:
        status = {"done": "reproduced", "missing": "not yet", "failed": "FAILED"}[s.status]
        if s.status == "missing" and s.seed.key == "validation" and not have_ns2():
            status = "skipped: ns-2 is not installed"
        out.append(f"| {s.seed.title} | {status} | {s.seconds:.0f} s |")
    out.append("")
    for s in sections:
        out += [f"## {s.seed.title}", ""]
        if s.status == "done":
            out += [s.markdown.strip(), ""]
        elif s.status == "missing":
            out += [s.error or "This reproduction does not exist yet.", ""]
        else:
            out += [f"The reproduction failed: `{s.error}`", ""]
    return "\n".join(out) + "\n"


def to_html(markdown_text: str, title: str) -> str:
    """A standalone HTML page of the report."""
    import markdown  # type: ignore[import-untyped]

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code", "toc"])
    style = (
        "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}"
        "th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}"
        "th:first-child,td:first-child{text-align:left}img{max-width:100%}"
        # Numbers never wrap inside a cell (issue 21); the first column (labels) may.
        "td:not(:first-child){white-space:nowrap}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{style}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def reproduce(
    targets: Sequence[str],
    out: Path,
    quick: bool = False,
    validation: bool = True,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> list[Section]:
    """Run the reproductions of ``targets`` (seed keys, or ``all``) into ``out``;
    ``options`` are :class:`~mobiflow.repro.framework.Options` fields for every one of
    them (``jobs``, ``figures``, ``ns2``).

    Writes ``out/report.md``, ``out/report.html`` and ``out/results.json``; returns the
    sections. Raises ``ValueError`` for an unknown target.
    """
    keys = list(SEEDS) if "all" in targets else list(dict.fromkeys(targets))
    unknown = [k for k in keys if k not in SEEDS]
    if unknown:
        raise ValueError(
            f"unknown seed(s) {', '.join(unknown)}; choose from {', '.join(SEEDS)} or all"
        )
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for k in keys:
        if progress:
            progress(f"{SEEDS[k].title} …")
        sections.append(run_seed(SEEDS[k], out, quick, progress, **options))
    if validation:
        if progress:
            progress("ns-2 cross-validation …")
        try:
            sections.append(run_validation())
        except Exception as e:  # noqa: BLE001 - reported in the report, not raised
            seed = Seed("validation", "The simulator's baseline against ns-2", None, "")
            sections.append(Section(seed, "failed", error=f"{type(e).__name__}: {e}"))
    text = compose(sections, quick)
    (out / "report.md").write_text(text)
    (out / "report.html").write_text(to_html(text, "mobiflow: reproduction of the seed documents"))
    (out / "results.json").write_text(
        json.dumps(
            {
                s.seed.key: {"status": s.status, "seconds": s.seconds, "results": s.results}
                for s in sections
            },
            indent=2,
            default=str,
        )
    )
    return sections
