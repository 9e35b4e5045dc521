"""`mobiflow reproduce`: run the seed documents' reproductions and write one report.

Each seed document has a reproduction module (:mod:`mobiflow.repro.afc`,
:mod:`mobiflow.repro.fld`) that runs its scenarios and writes a Markdown report with
the paper's numbers beside mobiflow's, figures and a ``results.json``. This module runs
the ones asked for, each into ``OUT/<seed>/``, adds the ns-2 cross-validation of the
simulator's baseline where ns-2 is installed, and joins everything into
``OUT/report.md`` and ``OUT/report.html`` (self-contained apart from the figures, which
it links by relative path, so the page opens from the file without a server).

Seeds whose reproduction does not exist yet are listed as such in the report, never
filled in.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobiflow import _resources
from mobiflow.repro import claims
from mobiflow.repro.framework import Report, Reproduction


@dataclass(frozen=True)
class Seed:
    """One seed document and how to reproduce it."""

    key: str
    title: str
    module: str | None
    report: str
    quick_args: tuple[str, ...] = ()
    full_args: tuple[str, ...] = ()


SEEDS: dict[str, Seed] = {
    "afc": Seed(
        "afc",
        "AFC: adaptive flow control for TCP on mobile phones",
        "mobiflow.repro.afc",
        "report.md",
        quick_args=("--duration", "60", "--no-sensitivity", "--no-theory", "--no-figures"),
    ),
    "rsfc": Seed(
        "rsfc",
        "RSFC: receiver-side flow control of the 3G uplink buffer",
        "mobiflow.repro.rsfc",
        "report.md",
    ),
    "handoff": Seed(
        "handoff",
        "IETT, BA-SST and Freeze-TCP: TCP across vertical handoffs",
        "mobiflow.repro.handoff",
        "report.md",
        quick_args=("--ns2", "no"),
    ),
    "freeze-dccp": Seed(
        "freeze-dccp",
        "TFRC under disconnection and Freeze-DCCP",
        "mobiflow.repro.freeze_dccp",
        "report.md",
        quick_args=("--quick", "--ns2", "no"),
    ),
    "fld": Seed(
        "fld",
        "FLD_TCP: flow-length dependent congestion control, and Relentless TCP",
        "mobiflow.repro.fld",
        "summary.md",
        quick_args=("--quick", "--ns2", "no"),
    ),
}


def have_ns2() -> bool:
    """Whether ns-2 (``ns``) is on the PATH: the report's ns-2 columns need it."""
    return shutil.which("ns") is not None


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


def _retarget_links(markdown: str, sub: str) -> str:
    """Rewrite relative links and images of a seed's report to point into ``sub/``."""

    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if re.match(r"^[a-z]+:|^/|^#", target):
            return m.group(0)
        return f"{m.group(1)}({sub}/{target})"

    return re.sub(r"(!?\[[^\]]*\])\(([^)\s]+)\)", fix, markdown)


def _demote(markdown: str) -> str:
    """Push a seed report's headings one level down under the seed's section."""
    return re.sub(r"^(#{1,5}) ", r"#\1 ", markdown, flags=re.MULTILINE)


class _Relay(io.StringIO):
    """Collects what a seed's module prints and hands each finished line to ``progress``
    (prefixed with the seed's key), so a long reproduction shows where it is."""

    def __init__(self, key: str, progress: Callable[[str], None] | None) -> None:
        super().__init__()
        self._key = key
        self._progress = progress
        self._partial = ""
        self._outer = sys.stdout  # taken before the redirection: progress goes there

    def write(self, s: str) -> int:
        if self._progress is not None:
            lines = (self._partial + s).split("\n")
            self._partial = lines.pop()
            for line in lines:
                if line.strip():
                    with contextlib.redirect_stdout(self._outer):
                        self._progress(f"  {self._key}: {line.strip()}")
        return super().write(s)


def run_seed(
    seed: Seed, out: Path, quick: bool, progress: Callable[[str], None] | None = None
) -> Section:
    """Run one seed's reproduction into ``out/<key>/`` and collect its report."""
    if seed.module is None:
        return Section(seed, "missing")
    module = importlib.import_module(seed.module)
    declared: Reproduction | None = getattr(module, "REPRODUCTION", None)
    if declared is not None:
        return run_reproduction(declared, seed, out, quick, progress)
    dest = out / seed.key
    args = ["--out", str(dest), *(seed.quick_args if quick else seed.full_args)]
    t0 = time.perf_counter()
    buf = _Relay(seed.key, progress)
    try:
        with contextlib.redirect_stdout(buf):
            code = module.main(args)
    except Exception as e:  # noqa: BLE001 - one failed seed must not stop the others
        return Section(seed, "failed", time.perf_counter() - t0, error=f"{type(e).__name__}: {e}")
    seconds = time.perf_counter() - t0
    report = dest / seed.report
    if code not in (0, None) or not report.is_file():
        return Section(seed, "failed", seconds, error=f"exit status {code}; see {dest}")
    results_path = dest / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else None
    text = _demote(_retarget_links(report.read_text(), seed.key))
    return Section(seed, "done", seconds, text, results)


def run_reproduction(
    declared: Reproduction,
    seed: Seed,
    out: Path,
    quick: bool,
    progress: Callable[[str], None] | None = None,
) -> Section:
    """Run one declared reproduction into ``out/<key>/`` and keep its report."""

    def say(line: str) -> None:
        if progress is not None:
            progress(f"  {seed.key}: {line}")

    opts = declared.options(out / seed.key, quick=quick, progress=say)
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
    spec = importlib.util.spec_from_file_location(
        "mobiflow_validate_ns2", _resources.VALIDATION / "ns2" / "validate.py"
    )
    if spec is None or spec.loader is None:
        return Section(seed, "failed", error="validation/ns2/validate.py not found")
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve their module through sys.modules while the class is built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
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


def _without_title(markdown: str) -> str:
    """A seed's report without its own title: the section's heading stands for it (one
    heading per seed, not two in a row)."""
    lines = markdown.strip().splitlines()
    if lines and re.match(r"^#{1,2} ", lines[0]):
        lines = lines[1:]
    return "\n".join(lines).strip()


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
    rows = claims.all_claims(results)
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
            out += [s.markdown if s.report is not None else _without_title(s.markdown), ""]
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
) -> list[Section]:
    """Run the reproductions of ``targets`` (seed keys, or ``all``) into ``out``.

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
        sections.append(run_seed(SEEDS[k], out, quick, progress))
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
