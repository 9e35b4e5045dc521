"""The headline claims of each paper against mobiflow's runs: the table the report opens with.

One function per reproduction turns that reproduction's ``results.json`` (plain data)
into rows: the claim, the paper's number and where it comes from, mobiflow's number,
and a verdict computed from the runs by a stated rule (``holds``, ``partly holds``,
``does not hold``). Where a claim can be judged by more than one measure, each measure
has its own row, and the verdict names it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import mean
from typing import Any

HOLDS = "holds"
PARTLY = "partly holds"
FAILS = "does not hold"


@dataclass(frozen=True)
class Claim:
    """One row of the claims table."""

    paper: str
    """Which reproduction (its key in ``mobiflow reproduce``)."""
    claim: str
    measure: str
    paper_value: str
    source: str
    """Where the paper's number comes from: its slides, its abstract, or assumed."""
    mobiflow_value: str
    verdict: str
    rule: str
    """How the verdict follows from the runs."""
    linux_value: str | None = None
    """The same measure with the TCP of today's phones and servers (``profile =
    "linux"``), for the claims whose scheme sits on a TCP sender or receiver."""
    linux_verdict: str | None = None


LINUX = "linux"
"""The key of a reproduction's ``results.json`` that holds the runs of its schemes on
the ``linux`` TCP profile, in the shape its claims function reads."""


def with_linux(rows: Sequence[Claim], linux_rows: Sequence[Claim]) -> list[Claim]:
    """``rows`` with the value and verdict of the row judging the same claim by the same
    measure in ``linux_rows`` (the claims function run on the Linux runs)."""
    by_key = {(r.claim, r.measure): r for r in linux_rows}
    out = []
    for r in rows:
        lin = by_key.get((r.claim, r.measure))
        if lin is not None:
            r = replace(r, linux_value=lin.mobiflow_value, linux_verdict=lin.verdict)
        out.append(r)
    return out


def _share(won: int, total: int) -> str:
    """``holds`` when every case agrees, ``partly holds`` when more than half do."""
    if total and won == total:
        return HOLDS
    if total and 2 * won > total:
        return PARTLY
    return FAILS


# ----- AFC ------------------------------------------------------------------------------


def _afc_gain(r: Mapping[str, Any]) -> float:
    cl = float(r["classic"]["goodput_bps"])
    return float(r["afc"]["goodput_bps"]) / cl - 1 if cl else 0.0


def phase_split(
    phases: Mapping[str, Mapping[str, Any]], better: Callable[[Any], bool]
) -> tuple[list[str], list[str], list[str]]:
    """The cases of phase runs (``{case: {offset: runs}}``) where ``better(runs)`` holds
    at every offset, at none, and at some only."""
    always, never, mixed = [], [], []
    for case in sorted(phases):
        wins = [better(r) for r in phases[case].values()]
        if all(wins):
            always.append(case)
        elif not any(wins):
            never.append(case)
        else:
            mixed.append(case)
    return always, never, mixed


def afc_phase_split(
    phases: Mapping[str, Mapping[str, Any]],
) -> tuple[list[str], list[str], list[str]]:
    """The evaluation cases of the phase runs (``{case: {offset: {variant: counters}}}``)
    where AFC gains at every start offset, at none, and at some only."""
    return phase_split(phases, lambda r: _afc_gain(r) > 0)


def afc_claims(res: Mapping[str, Any]) -> list[Claim]:
    cases = res["cases"]
    gain = _afc_gain
    evals = sorted(k for k in cases if k.startswith("eval"))
    gains = [gain(cases[k]) for k in evals]
    won = sum(g > 0 for g in gains)
    rows = []
    phases = res.get("phases") or {}
    if phases:
        # Each evaluation case over the phase of the reads against the link's schedule
        # (the seed gives none): a case counts for AFC only if it gains at every phase.
        always, never, mixed = afc_phase_split(phases)
        every = [_afc_gain(r) for by_off in phases.values() for r in by_off.values()]
        rows.append(
            Claim(
                "afc",
                "AFC improves throughput over classic flow control across the evaluation scenarios",
                "evaluation scenarios where AFC's throughput beats classic at every phase of "
                "the reads against the link (8 start offsets per case)",
                "considerable improvement (no number)",
                "slides, conclusion",
                f"{len(always)} of {len(phases)} at every phase, {len(never)} at none, "
                f"{len(mixed)} depend on the phase (gain {min(every):+.0%} to {max(every):+.0%})",
                _share(len(always), len(phases)),
                "holds: every scenario gains at every phase; partly: more than half do",
            )
        )
    elif evals:
        rows.append(
            Claim(
                "afc",
                "AFC improves throughput over classic flow control across the evaluation scenarios",
                "evaluation scenarios where AFC's throughput beats classic",
                "considerable improvement (no number)",
                "slides, conclusion",
                f"{won} of {len(evals)} (gain {min(gains):+.0%} to {max(gains):+.0%})",
                _share(won, len(evals)),
                "holds: every scenario gains; partly: more than half",
            )
        )
    sens = res.get("sensitivity") or {}
    if sens:
        sg = {step: gain(r) for step, r in sens.items()}
        won_s = sum(g > 0 for g in sg.values())
        rows.append(
            Claim(
                "afc",
                "the same, whatever the application's read phases (not given by the paper)",
                "motivation case: AFC's gain at each read-phase length",
                "-",
                "assumed (the slides give no phase length)",
                ", ".join(f"{k} {g:+.0%}" for k, g in sg.items()),
                _share(won_s, len(sg)),
                "holds: a gain at every length; partly: at more than half",
            )
        )
    mot = cases.get("motivation")
    if mot:
        a = mot["afc"]
        # Segments delivered: bytes over the run's segment size (ns-2's 1000 bytes
        # in results kept before the size was).
        delivered = a["bytes_delivered"] / a.get("mss_bytes", 1000)
        per_seg = a["retransmits"] / max(1.0, delivered)
        rows.append(
            Claim(
                "afc",
                "AFC hides receive-buffer losses from congestion control and repairs them",
                "motivation case: retransmissions per segment delivered; timeouts",
                "unnecessary retransmissions named as future work",
                "slides, conclusion",
                f"{per_seg:.2f} per segment; {a['timeouts']} timeouts, "
                f"{a['fast_retransmits']} fast retransmits",
                HOLDS if a["fast_retransmits"] > a["timeouts"] else FAILS,
                "holds: more losses repaired by fast retransmit than by timeout",
            )
        )
    return rows


# ----- RSFC -----------------------------------------------------------------------------


def rsfc_claims(res: Mapping[str, Any], paper: Mapping[str, float]) -> list[Claim]:
    d = res["derived"]["download"]
    alone = float(d["download_alone"]["download_kbps"])
    plain = float(d["download_upload"]["download_kbps"])
    rsfc = float(d["download_upload_rsfc"]["download_kbps"])
    up_plain = float(d["download_upload"]["upload_kbps"])
    up_rsfc = float(d["download_upload_rsfc"]["upload_kbps"])
    restored = rsfc / alone if alone else 0.0
    verdict = HOLDS if restored >= 0.8 else PARTLY if rsfc > 2 * plain else FAILS
    rows = [
        Claim(
            "rsfc",
            "an upload collapses the download; RSFC restores it",
            "download kb/s: alone / with a plain TCP upload / with an RSFC upload",
            f"{paper['alone']:.0f} / {paper['with_upload']:.0f} / up to {paper['isp_after']:.0f}",
            "the paper's abstract (not the slides)",
            f"{alone:.0f} / {plain:.0f} / {rsfc:.0f}",
            verdict,
            "holds: RSFC's download at least 80 % of the download alone; partly: more "
            "than twice the collapsed one",
        ),
        Claim(
            "rsfc",
            "RSFC keeps the upload's throughput",
            "upload kb/s: plain TCP / RSFC",
            "-",
            "not given",
            f"{up_plain:.0f} / {up_rsfc:.0f}",
            HOLDS if up_rsfc >= 0.9 * up_plain else PARTLY if up_rsfc >= 0.5 * up_plain else FAILS,
            "holds: at least 90 % of plain TCP's upload; partly: at least half",
        ),
    ]
    pages = res["derived"].get("pages") or {}
    if "web_upload" in pages and "web_upload_rsfc" in pages:
        under = float(pages["web_upload_rsfc"]["frac_under_60s"])
        rows.append(
            Claim(
                "rsfc",
                "with RSFC, web pages load in under a minute during an upload",
                "page loads under 60 s: plain TCP upload / RSFC upload",
                f"over {paper['page_without_s']:.0f} s / under {paper['page_with_s']:.0f} s "
                "90 % of the time",
                "the paper's abstract (not the slides)",
                f"{float(pages['web_upload']['frac_under_60s']):.0%} / {under:.0%}",
                HOLDS if under >= 0.9 else PARTLY if under >= 0.5 else FAILS,
                "holds: at least 90 % under 60 s with RSFC; partly: at least half",
            )
        )
    umts = res["derived"].get("umts") or {}
    if "umts_trace" in umts and "umts_trace_rsfc" in umts:
        u, r = umts["umts_trace"], umts["umts_trace_rsfc"]
        down_ok = float(r["download_kbps"]) > 2 * float(u["download_kbps"])
        up_ok = float(r["upload_kbps"] or 0) >= 0.5 * float(u["upload_kbps"] or 0)
        rows.append(
            Claim(
                "rsfc",
                "the same on a real 3G link (T-Mobile UMTS traces)",
                "download / upload kb/s: plain TCP upload -> RSFC upload",
                "-",
                "not in the paper (a trace of our own choosing)",
                f"{float(u['download_kbps']):.0f} / {float(u['upload_kbps'] or 0):.0f} -> "
                f"{float(r['download_kbps']):.0f} / {float(r['upload_kbps'] or 0):.0f}",
                HOLDS if down_ok and up_ok else PARTLY if down_ok else FAILS,
                "holds: download more than doubled and upload at least half kept; partly: "
                "download only",
            )
        )
    return rows


# ----- handoffs -------------------------------------------------------------------------


def handoff_claims(res: Mapping[str, Any], intervals: Mapping[str, str]) -> list[Claim]:
    """``intervals``: each case's key -> the interval its paper table measures."""
    won = 0
    cells_m: list[str] = []
    cells_p: list[str] = []
    for key, iv in intervals.items():
        r = res[key]
        m = {k: float(v["intervals"][iv]) for k, v in r["mobiflow"].items()}
        p = {k: float(v["mbps"]) for k, v in r["paper"].items()}
        won += int(m["ba"] > m["iett"] > m["tcp"])
        cells_m.append(f"{m['tcp'] / 1e6:.3f}/{m['iett'] / 1e6:.3f}/{m['ba'] / 1e6:.3f}")
        cells_p.append(f"{p['TCP']:.3f}/{p['IE']:.3f}/{p['BA']:.3f}")
    weak = 0
    for key, iv in intervals.items():
        m = {k: float(v["intervals"][iv]) for k, v in res[key]["mobiflow"].items()}
        weak += int(m["ba"] >= m["iett"] >= m["tcp"] and m["ba"] > m["tcp"])
    return [
        Claim(
            "handoff",
            "after a vertical handoff, Bandwidth-Aware ssthresh > Immediate Expiration > plain TCP",
            "Tables I-IV, Mb/s TCP/IE/BA over each table's interval: strict ranking",
            "; ".join(cells_p),
            "the paper's Tables I-IV",
            "; ".join(cells_m),
            _share(won, len(intervals)),
            "holds: BA > IE > TCP in every table; partly: in more than half",
        ),
        Claim(
            "handoff",
            "the same, ties allowed",
            "tables where BA >= IE >= TCP and BA > TCP",
            "4 of 4",
            "the paper's Tables I-IV",
            f"{weak} of {len(intervals)}",
            _share(weak, len(intervals)),
            "holds: in every table; partly: in more than half",
        ),
    ]


# ----- Freeze-DCCP ----------------------------------------------------------------------


def _fd_judge(
    runs: Mapping[str, Mapping[str, Any]],
    phased: bool,
    need: tuple[str, str, str],
    better: Callable[[Mapping[str, Any]], bool],
    spread: Callable[[Mapping[str, Any]], str],
) -> tuple[str, str] | None:
    """One Freeze-DCCP measure over ``runs`` (``{handoff: {offset: {variant: row}}}``):
    the handoffs where ``better`` holds at every offset. ``need`` = (DCCP variant,
    Freeze-DCCP variant, field) that each run must have; ``spread`` formats one run's
    number, whose range over every run the value shows when ``phased``."""
    a, b, key = need
    sel = {
        k: by
        for k, by in runs.items()
        if all(a in r and b in r and key in r[a] and key in r[b] for r in by.values())
    }
    if not sel:
        return None
    always, never, mixed = phase_split(sel, better)
    n = len(sel)
    if not phased:
        return f"{len(always)} of {n}", _share(len(always), n)
    cells = [(float(spread(r)), spread(r)) for by in sel.values() for r in by.values()]
    lo, hi = min(cells)[1], max(cells)[1]
    return (
        f"{len(always)} of {n} at every phase, {len(never)} at none, {len(mixed)} depend "
        f"on the phase ({lo if lo == hi else f'{lo} to {hi}'})",
        _share(len(always), n),
    )


def freeze_dccp_claims(
    res: Mapping[str, Any],
    paper_unused: tuple[Sequence[Sequence[float]], Sequence[Sequence[float]]],
) -> list[Claim]:
    """``paper_unused``: the slides' unused-bandwidth matrices, DCCP then Freeze-DCCP.

    With phase runs (``res["phases"]``: each handoff at several start offsets of the
    DCCP flow, ``{handoff: {offset: {variant: row}}}``), a handoff counts for
    Freeze-DCCP only if it is better at every offset; otherwise each handoff's one run
    decides."""
    p_dccp, p_freeze = paper_unused
    p_cells = [
        (a, b) for ra, rb in zip(p_dccp, p_freeze, strict=True) for a, b in zip(ra, rb, strict=True)
    ]
    p_less = sum(b < a for a, b in p_cells)
    phases = res.get("phases") or {}
    runs = phases or {k: {"0s": v} for k, v in res["handoffs"].items()}
    phased = bool(phases)
    offsets = max((len(by) for by in phases.values()), default=1)
    at_every = (
        f" at every phase of the disconnection ({offsets} start offsets of the DCCP flow "
        "over one RTT)"
        if phased
        else ""
    )
    every = "in every handoff at every phase" if phased else "in every handoff"
    unused_range = " (range: Freeze-DCCP's minus DCCP's, 500 B packets)" if phased else ""
    gain_range = " (range: Freeze-DCCP's gain, %)" if phased else ""

    def rule() -> str:
        return f"holds: {every}; partly: in more than half"

    def less_unused(d: str, z: str) -> Callable[[Mapping[str, Any]], bool]:
        return lambda r: float(r[z]["unused_packets"]) < float(r[d]["unused_packets"])

    def unused_diff(d: str, z: str) -> Callable[[Mapping[str, Any]], str]:
        # Freeze-DCCP's unused bandwidth minus DCCP's, in 500 B packets.
        return lambda r: f"{float(r[z]['unused_packets']) - float(r[d]['unused_packets']):+.0f}"

    def higher(d: str, z: str) -> Callable[[Mapping[str, Any]], bool]:
        return lambda r: float(r[z]["after_bps"]) > float(r[d]["after_bps"])

    def gain(d: str, z: str) -> Callable[[Mapping[str, Any]], str]:
        def f(r: Mapping[str, Any]) -> str:
            base = float(r[d]["after_bps"])
            return f"{(float(r[z]['after_bps']) / base - 1 if base else 0.0) * 100:+.0f}"

        return f

    unused_seed = f"less unused in {p_less} of {len(p_cells)}"
    unused_from = "slides, unused-bandwidth table (rows read as DCCP, then Freeze-DCCP)"
    floor = "both with min_p = 1e-5"
    # (DCCP variant, Freeze-DCCP variant, field), better, range; claim, measure, the
    # paper's number, where it is from. The last two: the same measures with ns-2's
    # floor on p (min_p = 1e-5, the seed's Agent/DCCP/TFRC's s_smallest_p_).
    specs: list[
        tuple[
            tuple[str, str, str],
            Callable[[Mapping[str, Any]], bool],
            Callable[[Mapping[str, Any]], str],
            tuple[str, str, str, str],
        ]
    ] = [
        (
            ("dccp", "freeze", "lost"),
            lambda r: int(r["freeze"]["lost"]) == 0,
            lambda r: f"{int(r['freeze']['lost'])}",
            (
                "Freeze-DCCP loses no packets across a handoff",
                f"handoffs with no packet lost{at_every}"
                + (" (range: Freeze-DCCP's packets lost)" if phased else ""),
                "0 lost in every handoff",
                "slides, simulation table",
            ),
        ),
        (
            ("dccp", "freeze", "unused_packets"),
            less_unused("dccp", "freeze"),
            unused_diff("dccp", "freeze"),
            (
                "Freeze-DCCP restores the rate faster than DCCP",
                "unused bandwidth until the first restoration: handoffs where Freeze-DCCP "
                f"leaves less unused{at_every}" + unused_range,
                unused_seed,
                unused_from,
            ),
        ),
        (
            ("dccp", "freeze", "after_bps"),
            higher("dccp", "freeze"),
            gain("dccp", "freeze"),
            (
                "the same, judged by what is delivered after the reconnection",
                "goodput over the 60 s after the reconnection: handoffs where "
                f"Freeze-DCCP's is higher{at_every}" + gain_range,
                "-",
                "not in the slides",
            ),
        ),
        (
            ("dccp_floor", "freeze_floor", "unused_packets"),
            less_unused("dccp_floor", "freeze_floor"),
            unused_diff("dccp_floor", "freeze_floor"),
            (
                "Freeze-DCCP restores the rate faster than DCCP (with ns-2's p floor)",
                f"unused bandwidth until the first restoration, {floor} "
                "(ns-2 Agent/DCCP/TFRC's s_smallest_p_): handoffs where Freeze-DCCP "
                f"leaves less unused{at_every}" + unused_range,
                unused_seed,
                unused_from,
            ),
        ),
        (
            ("dccp_floor", "freeze_floor", "after_bps"),
            higher("dccp_floor", "freeze_floor"),
            gain("dccp_floor", "freeze_floor"),
            (
                "the same, judged by what is delivered after the reconnection (with "
                "ns-2's p floor)",
                f"goodput over the 60 s after the reconnection, {floor}: "
                f"handoffs where Freeze-DCCP's is higher{at_every}" + gain_range,
                "-",
                "not in the slides",
            ),
        ),
    ]
    rows = []
    for need, better, spread, (claim, measure, paper_value, source) in specs:
        judged = _fd_judge(runs, phased, need, better, spread)
        if judged is not None:
            rows.append(
                Claim(
                    "freeze-dccp",
                    claim,
                    measure,
                    paper_value,
                    source,
                    judged[0],
                    judged[1],
                    rule(),
                )
            )
    return rows


# ----- FLD_TCP --------------------------------------------------------------------------


def fld_claims(res: Mapping[str, Any], paper_ratio: Mapping[str, Sequence[float]]) -> list[Claim]:
    """``paper_ratio``: the slides' Reno/FLD_TCP ratio per burst, for the cases they give."""
    rows = []
    for case, ratios in paper_ratio.items():
        b = res["bursts"].get(case)
        if not b:
            continue
        fld, reno = b["bursts_s"]["fld"], b["bursts_s"]["reno"]
        k = min(len(ratios), *(len(run) for run in fld + reno))
        ours = [mean(run[i] for run in reno) / mean(run[i] for run in fld) for i in range(k)]
        near = sum(r >= 1.6 for r in ours)
        rows.append(
            Claim(
                "fld",
                "FLD_TCP finishes bursts about twice as fast as Reno",
                f"{case}: Reno/FLD_TCP burst time, per burst (mean over seeds)",
                " / ".join(f"{r:g}" for r in ratios[:k]),
                "slides, burst tables",
                " / ".join(f"{r:.2f}" for r in ours),
                _share(near, k),
                "holds: at least 1.6 for every burst; partly: for more than half",
            )
        )
    return rows


# ----- the table ------------------------------------------------------------------------


def table(rows: Sequence[Claim], titles: Mapping[str, str]) -> list[str]:
    """The claims as a Markdown table, then the rule of each verdict."""
    out = [
        "| paper | claim | measure | paper's number | from | mobiflow | verdict "
        "| mobiflow, Linux TCP | verdict, Linux TCP |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in rows:
        lin_verdict = "-" if c.linux_verdict is None else f"**{c.linux_verdict}**"
        out.append(
            f"| {titles.get(c.paper, c.paper)} | {c.claim} | {c.measure} | {c.paper_value} | "
            f"{c.source} | {c.mobiflow_value} | **{c.verdict}** | {c.linux_value or '-'} | "
            f"{lin_verdict} |"
        )
    out += ["", "Verdict rules:", ""]
    seen: set[tuple[str, str]] = set()
    for c in rows:
        if (c.measure, c.rule) not in seen:
            seen.add((c.measure, c.rule))
            out.append(f"- {c.measure}: {c.rule}.")
    return out


def all_claims(results: Mapping[str, Any]) -> list[Claim]:
    """Every claim whose reproduction is in ``results`` (seed key -> its results.json).

    A reproduction whose results lack what a claim needs gives no row for it (a quick
    run, say); the report says which reproductions gave none.
    """
    from mobiflow.repro.report import REPRODUCTIONS

    return [c for k, r in REPRODUCTIONS.items() if results.get(k) for c in r.judge(results[k])]
