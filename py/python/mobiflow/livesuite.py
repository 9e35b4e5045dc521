"""``mobiflow live compare --suite``: the validation table of issue 20.

Every case of a suite (a scenario with its run length and steady intervals) runs with
each of its congestion controls through :func:`mobiflow.live.compare`: the kernel's
TCP through the emulated link, set from the scenario as ``compare`` always does, and
the simulator with ``profile = "linux"`` (set on both sides, so the kernel's initial
window and minimum RTO are the profile's, Linux's own defaults), each simulated flow
starting when its kernel twin sent its SYN. Each row is held to the issue's
targets, simulator against kernel:

* goodput within 5 % of the kernel's, over the whole run and over each steady interval;
* retransmitted segments within 25 %, or within 10 segments where there are few;
* RTOs within one.

The table is printed and written as ``suite.md`` and ``suite.json`` (with each case's
figure of cwnd and srtt over time) in the output folder (default
``out/live/suite/<suite>/``). A case the simulator cannot run (no ``bbr`` yet) keeps
its kernel numbers and says why instead of a verdict.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobiflow import live

__all__ = [
    "SUITES",
    "Case",
    "Check",
    "Row",
    "SuiteResult",
    "evaluate",
    "render_markdown",
    "run_suite",
]

GOODPUT_TOL = 0.05
"""Goodput: the simulator within 5 % of the kernel's."""
RETX_TOL = 0.25
RETX_FEW = 10.0
"""Retransmitted segments: within 25 %, or within 10 segments where there are few."""
RTO_TOL = 1.0
"""RTOs: within one."""

PROFILE = ("tcp.profile", "linux")


@dataclass(frozen=True)
class Case:
    """One scenario of a suite: its file (relative to the source tree), the overrides
    that set its length and intervals, the intervals held to the goodput target, and
    the congestion controls it runs with."""

    name: str
    scenario: str
    sets: tuple[tuple[str, str], ...]
    steady: tuple[str, ...]
    ccs: tuple[str, ...] = live.CCS


def _len(duration: str, **intervals: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    sets = [("run.duration", duration)]
    for name, (a, b) in intervals.items():
        sets.append((f"measure.intervals.{name}", json.dumps([a, b])))
    return tuple(sets)


SUITES: dict[str, tuple[Case, ...]] = {
    "full": (
        Case(
            "rwnd_limited",
            "scenarios/examples/rwnd_limited.toml",
            _len("30s", steady=("10s", "30s")),
            ("steady",),
        ),
        Case(
            "outage",
            "scenarios/examples/outage.toml",
            _len("45s", before=("5s", "20s"), during=("20s", "30s"), after=("30s", "45s")),
            ("before", "after"),
        ),
        Case(
            "handoff_wlan_to_imt",
            "validation/live/handoff_wlan_to_imt.toml",
            (),
            ("before", "after"),
        ),
        Case("att_lte_driving", "validation/live/att_lte_driving.toml", (), ("steady",)),
        Case("tmobile_umts_driving", "validation/live/tmobile_umts_driving.toml", (), ("steady",)),
    ),
    # What CI runs: two short cases with cubic, to check that the harness produces a
    # complete table (not that the targets are met).
    "quick": (
        Case(
            "rwnd_limited",
            "scenarios/examples/rwnd_limited.toml",
            _len("10s", steady=("5s", "10s")),
            ("steady",),
            ("cubic",),
        ),
        Case(
            "tmobile_umts_driving",
            "validation/live/tmobile_umts_driving.toml",
            _len("8s", steady=("4s", "8s")),
            ("steady",),
            ("cubic",),
        ),
    ),
}


@dataclass
class Check:
    """One measure of a row, kernel against simulator, and whether it meets its target
    (None: no verdict, e.g. no simulator result or no target)."""

    metric: str
    kernel: float | None
    simulator: float | None
    target: str
    ok: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            **live.json_fields(self, "metric", "kernel", "simulator", "target"),
            "verdict": None if self.ok is None else ("PASS" if self.ok else "MISS"),
        }


@dataclass
class Row:
    """One case with one congestion control."""

    case: str
    scenario: str
    cc: str
    out: str
    valid: bool = False
    invalid_reasons: list[str] = field(default_factory=list)
    sim_error: str | None = None
    error: str | None = None
    checks: list[Check] = field(default_factory=list)
    figure: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def misses(self) -> list[str]:
        return [c.metric for c in self.checks if c.ok is False]

    @property
    def verdict(self) -> str:
        """PASS, MISS, or why there is no verdict."""
        if self.error is not None:
            return "ERROR"
        if self.sim_error is not None:
            return self.sim_error.split(" (")[0]  # "simulator has no bbr"
        return "MISS" if self.misses else "PASS"

    def to_json(self) -> dict[str, Any]:
        return {
            **live.json_fields(
                self,
                "case",
                "scenario",
                "cc",
                "valid",
                "invalid_reasons",
                "sim_error",
                "error",
                "verdict",
                "misses",
            ),
            "checks": [c.to_json() for c in self.checks],
            **live.json_fields(self, "figure", "out", "notes"),
        }


@dataclass
class SuiteResult:
    suite: str
    out: Path
    date: str
    commit: str
    machine: str
    rows: list[Row]

    def to_json(self) -> dict[str, Any]:
        return {
            **live.json_fields(self, "suite", "date", "commit", "machine"),
            "targets": {
                "goodput": f"simulator within {GOODPUT_TOL:.0%} of the kernel's "
                "(whole run and each steady interval)",
                "retransmitted segments": f"within {RETX_TOL:.0%} or within "
                f"{RETX_FEW:.0f} segments",
                "RTOs": f"within {RTO_TOL:.0f}",
            },
            "rows": [r.to_json() for r in self.rows],
        }


def _within_goodput(k: float, s: float) -> bool:
    return abs(s - k) <= GOODPUT_TOL * abs(k) if k != 0 else s == 0


def _within_retx(k: float, s: float) -> bool:
    return abs(s - k) <= max(RETX_FEW, RETX_TOL * abs(k))


def _within_rto(k: float, s: float) -> bool:
    return abs(s - k) <= RTO_TOL


def _check(
    metric: str,
    k: float | None,
    s: float | None,
    target: str,
    rule: Callable[[float, float], bool] | None,
) -> Check:
    ok = None if rule is None or k is None or s is None else rule(k, s)
    return Check(metric, k, s, target, ok)


def evaluate(cmp: live.Comparison, steady: tuple[str, ...]) -> list[Check]:
    """The measures of one comparison held to the targets (one flow per case: the
    first flow's rows)."""
    flow = cmp.rows[0][0] if cmp.rows else ""
    rows = {m: (k, s) for f, m, k, s in cmp.rows if f == flow}

    def get(metric: str) -> tuple[float | None, float | None]:
        if metric not in rows:
            raise RuntimeError(f"{cmp.scenario}: the comparison has no row {metric!r}")
        return rows[metric]

    gp = f"within {GOODPUT_TOL:.0%}"
    checks = [_check("goodput (Mb/s)", *get("goodput (Mb/s)"), gp, _within_goodput)]
    for iv in steady:
        m = f"goodput {iv} (Mb/s)"
        checks.append(_check(m, *get(m), gp, _within_goodput))
    checks.append(
        _check(
            "retransmitted segments",
            *get("retransmitted segments"),
            f"within {RETX_TOL:.0%} or {RETX_FEW:.0f}",
            _within_retx,
        )
    )
    checks.append(_check("RTOs", *get("RTOs"), f"within {RTO_TOL:.0f}", _within_rto))
    checks.append(_check("spurious retransmissions", *get("spurious retransmissions"), "-", None))
    checks.append(_check("srtt time-mean (ms)", *get("srtt time-mean (ms)"), "-", None))
    checks.append(_check("cwnd max (KB)", *get("cwnd max (KB)"), "-", None))
    return checks


def _commit(root: Path) -> str:
    """The source tree's commit (``-dirty`` with uncommitted changes), or "unknown"."""
    git = shutil.which("git")
    if git is None:
        return "unknown"
    r = subprocess.run(
        [git, "-C", os.fspath(root), "describe", "--always", "--dirty", "--abbrev=12"],
        capture_output=True,
        text=True,
        check=False,
    )
    return r.stdout.strip() or "unknown"


def _machine() -> str:
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return f"Linux {platform.release()}, {os.cpu_count()} cores, load average {load} at the end"


def run_suite(
    suite: str = "full",
    out: os.PathLike[str] | str | None = None,
    log: Callable[[str], None] | None = None,
    root: Path = live.REPO,
) -> SuiteResult:
    """Run every case of ``suite`` with each of its congestion controls; the table.

    A case that fails (the emulator, the simulator for another reason than a missing
    congestion control) is a row with its error, and the suite goes on. Raises
    :class:`mobiflow.live.LiveUnavailable` if the machine cannot run the emulation and
    ``ValueError`` for an unknown suite or a tree without the suite's scenarios."""
    if suite not in SUITES:
        raise ValueError(f'suite "{suite}": choose one of {", ".join(SUITES)}')
    say = log or (lambda msg: print(msg, file=sys.stderr))
    missing = [c.scenario for c in SUITES[suite] if not (root / c.scenario).is_file()]
    if missing:
        raise ValueError(
            f"the suite runs from the source tree: {', '.join(missing)} not found in {root}"
        )
    live.preflight()
    out_dir = (Path(out) if out is not None else Path("out/live/suite") / suite).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows: list[Row] = []
    for case in SUITES[suite]:
        for cc in case.ccs:
            case_dir = out_dir / f"{case.name}-{cc}"
            row = Row(case.name, case.scenario, cc, os.fspath(case_dir))
            say(f"suite {suite}: {case.name} with {cc}")
            try:
                cmp = live.compare(
                    root / case.scenario,
                    cc=cc,
                    sets=[*case.sets, PROFILE],
                    out=case_dir,
                    log=say,
                    capture=True,
                    align_start=True,
                )
                row.valid = cmp.valid
                row.invalid_reasons = cmp.invalid_reasons
                row.sim_error = cmp.sim_error
                row.figure = None if cmp.figure is None else os.fspath(cmp.figure)
                row.checks = evaluate(cmp, case.steady)
                row.notes = cmp.notes
            except live.LiveUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 - one case's failure is its row
                row.error = f"{type(e).__name__}: {e}"
                say(f"suite {suite}: {case.name} with {cc} failed: {row.error}")
            rows.append(row)
    result = SuiteResult(
        suite=suite,
        out=out_dir,
        date=started,
        commit=_commit(root),
        machine=_machine(),
        rows=rows,
    )
    (out_dir / "suite.json").write_text(json.dumps(result.to_json(), indent=1) + "\n")
    (out_dir / "suite.md").write_text(render_markdown(result))
    return result


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def _cell(c: Check | None) -> str:
    if c is None:
        return "-"
    text = f"{_num(c.kernel)} / {_num(c.simulator)}"
    if c.ok is not None:
        text += " PASS" if c.ok else " **MISS**"
    return text


COLUMNS = (
    "goodput (Mb/s)",
    "steady goodput (Mb/s)",
    "retransmitted segments",
    "RTOs",
    "spurious retransmissions",
    "srtt time-mean (ms)",
    "cwnd max (KB)",
)


def row_cells(row: Row) -> list[str]:
    """The cells of one row of the table, in the order of :data:`COLUMNS`, each
    ``kernel / simulator`` with its verdict."""
    by = {c.metric: c for c in row.checks}
    steady = [
        f"{c.metric.removeprefix('goodput ').removesuffix(' (Mb/s)')} {_cell(c)}"
        for c in row.checks
        if c.metric.startswith("goodput ") and c.metric != "goodput (Mb/s)"
    ]
    return [
        _cell(by.get("goodput (Mb/s)")),
        "; ".join(steady) or "-",
        *(_cell(by.get(m)) for m in COLUMNS[2:]),
    ]


def _status(row: Row) -> str:
    if row.error is not None:
        return "ERROR: " + row.error
    text = row.verdict
    if row.misses:
        text += " (" + ", ".join(row.misses) + ")"
    if not row.valid:
        text += "; INVALID run: " + "; ".join(row.invalid_reasons)
    return text


def _relative(path: str, base: Path) -> str:
    p = Path(path)
    return p.relative_to(base).as_posix() if p.is_relative_to(base) else path


def render_markdown(result: SuiteResult) -> str:
    """The table as markdown: one row per case and congestion control, each cell
    ``Linux / simulator`` with PASS or **MISS** where the issue sets a target."""
    head = ["case", "cc", *COLUMNS, "verdict", "figure"]
    lines = [
        f"Suite `{result.suite}`, {result.date}, commit `{result.commit}`; {result.machine}.",
        'Each cell is Linux / simulator (`profile = "linux"`). Targets: goodput within '
        f"{GOODPUT_TOL:.0%}, retransmitted segments within {RETX_TOL:.0%} or "
        f"{RETX_FEW:.0f} segments, RTOs within {RTO_TOL:.0f}.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for r in result.rows:
        fig = "-" if r.figure is None else f"[cwnd, srtt]({_relative(r.figure, result.out)})"
        cells = ["-"] * len(COLUMNS) if r.error is not None else row_cells(r)
        lines.append("| " + " | ".join([r.case, r.cc, *cells, _status(r), fig]) + " |")
    return "\n".join(lines) + "\n"
