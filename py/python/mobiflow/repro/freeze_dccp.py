"""Reproduce the Freeze-DCCP paper: TFRC under disconnection, its analytical model, and
Freeze-DCCP (issue 8).

The project has the paper's slide deck (O. Mehani, R. Boreli, T. Ernst, "Analysis of
TFRC in Disconnected Scenarios and Performance Improvements with Freeze-DCCP", ACM
MobiArch 2009). It gives an analytical model of a TFRC sender across a disconnection
(equations (1) to (3)) and its table "Analytically-Derived Possible Performance
Improvements" for handoffs between UMTS, 802.16, 802.11b and 802.11g; ns-2 simulations
of DCCP/TFRC and Freeze-DCCP across the same handoffs (packets lost during the
disconnection, bandwidth left unused after it); and a TCP-fairness table.

This script:

1. prints the model's table from the slides' inputs beside the seed's numbers, and
   the (R, X_d) that each row of the seed's losses table implies (the slides' inputs
   do not reproduce it; see the report);
2. runs ``scenarios/freeze_dccp/handoff_<from>_to_<to>.toml`` (16 handoffs) with
   DCCP CCID 3 and with Freeze-DCCP, and prints the seed's simulation table beside
   mobiflow's;
3. drives the model with each simulated run's own X_d and R (just before the
   disconnection) and compares its n_lost and n_wasted with what the simulator
   measured;
4. runs ``fairness_<from>_to_<to>.toml``: one TCP flow competing after reconnection,
   100 s samples, the throughput ratio DCCP/TCP beside the seed's;
5. draws X over time across a handoff, DCCP against Freeze-DCCP (802.11b to 802.11b
   and 802.11b to UMTS, the seed's two figures).

    python -m mobiflow.repro.freeze_dccp --out out/freeze_dccp
    python -m mobiflow.repro.freeze_dccp --quick          # fewer runs (tests)
    python -m mobiflow.repro.freeze_dccp --generate       # rewrite the scenarios

Nothing is tuned to the seed's numbers; every choice the seed does not make is listed in
``scenarios/freeze_dccp/README.md`` and in the report.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mobiflow
from mobiflow import _mobiflow, _resources
from mobiflow.outputs import has_series, join_series
from mobiflow.repro import claims, framework
from mobiflow.repro.claims import Claim
from mobiflow.repro.framework import Block, Figure, Heading, Options, Report, Reproduction, Table

SCENARIOS = _resources.SCENARIOS / "freeze_dccp"

# --- the seed ------------------------------------------------------------------------

TECHS: tuple[str, ...] = ("UMTS", "802.16", "802.11b", "802.11g")
"""Table order of the seed."""

SLUG = {"UMTS": "umts", "802.16": "80216", "802.11b": "80211b", "802.11g": "80211g"}

LINKS: dict[str, tuple[str, str]] = {
    # "Link characteristics": bandwidth, one-way delay.
    "UMTS": ("384kbps", "125ms"),
    "802.16": ("9.5Mbps", "40ms"),
    "802.11b": ("11Mbps", "10ms"),
    "802.11g": ("54Mbps", "10ms"),
}
LINK_BPS = {"UMTS": 384e3, "802.16": 9.5e6, "802.11b": 11e6, "802.11g": 54e6}
LINK_DELAY_S = {"UMTS": 0.125, "802.16": 0.040, "802.11b": 0.010, "802.11g": 0.010}

T_HANDOFF_S = {"UMTS": 2.85, "802.16": 2.68, "802.11b": 2.62, "802.11g": 2.62}
""""Handoff times" by destination network: T_handoff = 2.5 + RTT_wireless + RTT_wired
= 2.6 + 2·Delay_wireless."""

PAPER_SIM_LOSSES = [
    [253.3, 269.8, 273.6, 275.4],
    [1732.3, 1734.6, 1734.6, 1734.6],
    [856.0, 855.5, 855.3, 855.3],
    [2470.9, 2470.4, 2470.2, 2470.1],
]
"""Seed, "Performance Improvement of Freeze-DCCP over DCCP": packet losses (DCCP/TFRC
only; Freeze-DCCP loses none by design)."""

PAPER_SIM_UNUSED_DCCP = [
    [50.5, 54018.05, 2209.5, 92156.1],
    [12.45, 1827.95, 603.05, 4185.75],
    [150.45, 28314.0, 2101.75, 57970.65],
    [42.5, 2104.3, 943.4, 4313.0],
]
PAPER_SIM_UNUSED_FREEZE = [
    [13.4, 3607.9, 9342.75, 89328.6],
    [5.0, 591.15, 150.9, 1520.35],
    [0.0, 15278.0, 47.45, 1045.05],
    [0.0, 7172.75, 46.5, 188.45],
]
"""Same table, "Unused bandwidth [500 B packets]": the first row of each pair is read
as DCCP, the second as Freeze-DCCP (the slide does not label them)."""

PAPER_FAIRNESS = [
    [0.6, 0.3, 0.2, 0.1],
    [1.6, 1.3, 1.1, 0.9],
    [1.3, 1.0, 0.9, 0.7],
    [1.5, 1.2, 1.0, 1.1],
]
"""Seed, TCP fairness (single TCP flow, 100 s samples after the rate settled); read as
the DCCP/TCP throughput ratio ("values in [0.5, 2] considered reasonably fair")."""

# --- the scenarios (see scenarios/freeze_dccp/README.md) --------------------------------

HANDOFF_AT_S = 30.0
"""The disconnection starts here (the NICTA page: disconnections inserted after
10-30 s)."""
AFTER_S = 60.0
"""Simulated time after the reconnection."""
SETTLE_S = 20.0
"""Fairness: the TCP flow starts this long after the reconnection."""
SAMPLE_S = 100.0
"""Fairness: the seed's "100 s samples"."""
INTERNET = ("100Mbps", "50ms")
"""Wired part: RTT_wired = 0.1 s (from T_handoff = 2.5 + RTT_wireless + RTT_wired =
2.6 + 2·Delay_wireless); the rate is an assumption (not a bottleneck)."""
QUEUE = "50p"
"""ns-2's default queue limit (the seed gives none): an assumption."""
RTT_WIRED_S = 0.1
"""The wired part's round trip (2 x INTERNET's one-way delay)."""

PHASES = 8
"""Phase runs: each handoff and fairness case with the DCCP flow started at every eighth
of the old path's base RTT (2 x the old network's delay + RTT_WIRED_S). TFRC's sender
hears from the receiver once per RTT (RFC 4342 §6.2, RFC 5348 §6.2) and its nofeedback
timer restarts at each feedback, so where the disconnection falls in the feedback
cycle, the one thing the seed does not fix, repeats with that period; a start delay of
less than 0.4 s in the 30 s before the disconnection changes nothing else (the rate has
long settled, and every measure is taken in fixed intervals after it)."""


DCCP_FLOW = """[[flows]]
name = "dccp"
from = "mn"
to = "cn"
transport = "dccp-ccid3"
app = "bulk"

[flows.tfrc]
s = "500B"
header_bytes = 32
"""
"""The DCCP CCID 3 flow of every seed-003 scenario (s = 500 bytes, the seed's; 32
header bytes per data packet, what ns-2's Agent/DCCP/TFRC puts on the wire, as in the
dccp_* twins)."""


def _fmt_s(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".") + "s"


def _wireless_link(src: str, dst: str) -> str:
    """The mobile node's access link: ``src``'s rate and delay until the reconnection
    (HANDOFF_AT_S + ``dst``'s T_handoff), ``dst``'s from then on. It never goes down:
    the seed's disconnection is on the wired link (see ``_outage``)."""
    (r0, d0), (r1, d1) = LINKS[src], LINKS[dst]
    up = _fmt_s(HANDOFF_AT_S + T_HANDOFF_S[dst])
    return f"""[[links]]
name = "wireless"
a = "mn"
b = "ar"
rate_schedule = [["0s", "{r0}"], ["{up}", "{r1}"]]
delay_schedule = [["0s", "{d0}"], ["{up}", "{d1}"]]
queue = "droptail"
queue_limit = "{QUEUE}\""""


def _outage(dst: str) -> str:
    """The disconnection: the seed's ns-2 script takes the AR-CN link down for
    T_handoff (``rtmodel-at ... down $ar_ $cn_``, both directions), so the outage is on
    the wired link, not on the wireless one."""
    t0 = HANDOFF_AT_S
    return f'outages = [["{_fmt_s(t0)}", "{_fmt_s(t0 + T_HANDOFF_S[dst])}"]]'


def _internet_link(rate: str, dst: str) -> str:
    """The wired link from the access router (ar) to the correspondent node (cn), at the
    ``rate`` line's rate, down during the handoff to ``dst`` (``_outage``)."""
    return f"""[[links]]
name = "internet"
a = "ar"
b = "cn"
{rate}
delay = "{INTERNET[1]}"
queue = "droptail"
queue_limit = "{QUEUE}"
{_outage(dst)}"""


_HEADER = """# Generated by `python -m mobiflow.repro.freeze_dccp --generate`; see README.md.
# The Freeze-DCCP paper (Mehani, Boreli and Ernst, "Analysis of TFRC in Disconnected
# Scenarios and Performance Improvements with Freeze-DCCP", ACM MobiArch 2009)"""
"""The first lines of every generated scenario; each goes on with what it is."""


def handoff_toml(src: str, dst: str) -> str:
    """The handoff scenario from network ``src`` to ``dst``."""
    t_d = T_HANDOFF_S[dst]
    up = HANDOFF_AT_S + t_d
    return f"""{_HEADER}: a DCCP
# CCID 3 flow from a mobile node (mn) to a correspondent node (cn)
# across a handoff from {src} to {dst}: as in the paper's ns-2 script, the link from
# the access router (ar) to cn is down for T_handoff = {t_d} s (the paper's handoff
# time to {dst}); the wireless link has {dst}'s bandwidth and delay from the
# reconnection on. Freeze-DCCP: --set flows.dccp.tfrc.freeze=true.

name = "handoff_{SLUG[src]}_to_{SLUG[dst]}"

[run]
duration = "{_fmt_s(up + AFTER_S)}"
seed = 1

{_wireless_link(src, dst)}

{_internet_link(f'rate = "{INTERNET[0]}"', dst)}

{DCCP_FLOW}
[measure]
sample_interval = "100ms"
intervals = {{ before = ["{_fmt_s(HANDOFF_AT_S - 10)}", "{_fmt_s(HANDOFF_AT_S)}"], \
after = ["{_fmt_s(up)}", "{_fmt_s(up + AFTER_S)}"] }}
"""


def fairness_toml(src: str, dst: str) -> str:
    """The TCP-fairness scenario: the handoff, then one TCP flow from the access
    router to the correspondent node sharing the wired link, whose rate is the new
    network's (an assumption: the seed does not give the shared bottleneck)."""
    t_d = T_HANDOFF_S[dst]
    up = HANDOFF_AT_S + t_d
    r1 = LINKS[dst][0]
    t0 = up + SETTLE_S
    return f"""{_HEADER}, TCP
# fairness: the handoff from {src} to {dst} of handoff_*.toml, then, once
# the rate has settled ({SETTLE_S:g} s after the reconnection), one TCP flow from the
# access router (ar) to cn shares the wired link, here as fast as {dst} (assumption).
# Measured: DCCP and TCP throughput over the {SAMPLE_S:g} s that follow. The TCP flow
# uses 500-byte segments, the DCCP flow's s: TFRC's equation is fair to a TCP with the
# same segment size (RFC 5348 §3.1); with 1460-byte segments TCP would get ~3x more.

name = "fairness_{SLUG[src]}_to_{SLUG[dst]}"

[run]
duration = "{_fmt_s(t0 + SAMPLE_S)}"
seed = 1

[tcp]
profile = "rfc"
rcv_buf = "8MB"
mss = 500

{_wireless_link(src, dst)}

{_internet_link(f'rate_schedule = [["0s", "{INTERNET[0]}"], ["{_fmt_s(up)}", "{r1}"]]', dst)}

{DCCP_FLOW}
[[flows]]
name = "tcp"
from = "ar"
to = "cn"
cc = "newreno"
start = "{_fmt_s(t0)}"
app = "bulk"

[measure]
sample_interval = "0s"
intervals = {{ sample = ["{_fmt_s(t0)}", "{_fmt_s(t0 + SAMPLE_S)}"] }}
"""


def generate() -> list[Path]:
    """Write every scenario of ``scenarios/freeze_dccp/``."""
    SCENARIOS.mkdir(parents=True, exist_ok=True)
    written = []
    for a in TECHS:
        for b in TECHS:
            for kind, text in (("handoff", handoff_toml(a, b)), ("fairness", fairness_toml(a, b))):
                p = SCENARIOS / f"{kind}_{SLUG[a]}_to_{SLUG[b]}.toml"
                p.write_text(text)
                written.append(p)
    return written


# --- running ----------------------------------------------------------------------------

FREEZE = {"flows.dccp.tfrc.freeze": True, "flows.dccp.tfrc.freeze_side": "sender"}
"""Freeze-DCCP, triggered by the mobile sender (the seed's "sender-based freezing to
account for mobile senders"); the warning time keeps its default, one path RTT."""

NS2_MIN_P = 1e-5
"""ns-2's Agent/DCCP/TFRC, the seed's agent, never uses a loss event rate below
``s_smallest_p_`` = 1e-5 (``tfrc_send_packet_recv`` in ``dccp/dccp_tfrc.cc``): every
handoff is also run with ``tfrc.min_p`` at that value (RFC 4342 has no such floor)."""

FLOOR: dict[str, object] = {"flows.dccp.tfrc.min_p": NS2_MIN_P}

VARIANTS: dict[str, dict[str, object]] = {
    "dccp": {},
    "freeze": FREEZE,
    "dccp_floor": FLOOR,
    "freeze_floor": {**FREEZE, **FLOOR},
}
"""Each handoff: DCCP and Freeze-DCCP, each without and with ns-2's p floor."""


def _flow(summary: Mapping[str, Any], name: str) -> dict[str, Any]:
    return dict(next(f for f in summary["flows"] if f["name"] == name))


def model_tables() -> dict[str, Any]:
    """The seed's model: the table from the slides' inputs and at the fitted (R, X_d)."""
    return dict(json.loads(_mobiflow.freeze_dccp_model()))


def model_for_run(d: Mapping[str, Any], dst: str) -> dict[str, Any]:
    """The model for one simulated disconnection, fed with the run's own X_d and R."""
    r = (d["rtt_before_ms"] or 0.0) / 1000.0
    t_d = d["end_s"] - d["start_s"]
    return dict(
        json.loads(
            _mobiflow.freeze_dccp_handover(
                r, d["x_before_bps"], t_d, LINK_BPS[dst], LINK_DELAY_S[dst]
            )
        )
    )


def handoff_variants(
    pairs: Sequence[tuple[str, str]], figs: Path | None
) -> list[tuple[str, str, str, framework.Variant]]:
    """Every handoff under every variant; the figures' runs keep their series, the
    others sample nothing."""
    out = []
    for a, b in pairs:
        path = SCENARIOS / f"handoff_{SLUG[a]}_to_{SLUG[b]}.toml"
        for variant, sets in VARIANTS.items():
            keep = (
                figs is not None
                and variant in ("dccp", "freeze")
                and a == "802.11b"
                and b in ("802.11b", "UMTS")
            )
            sets2 = dict(sets) if keep else {**sets, "measure.sample_interval": "0s"}
            key = f"run_{SLUG[a]}_{SLUG[b]}_{variant}"
            out.append((a, b, variant, framework.Variant(key, path, sets2, keep=keep)))
    return out


def run_handoffs(
    pairs: Sequence[tuple[str, str]], pool: ThreadPoolExecutor, figs: Path | None
) -> dict[str, Any]:
    planned = handoff_variants(pairs, figs)
    jobs = framework.submit_variants(
        pool, [v for (*_, v) in planned], folder=None if figs is None else lambda v: figs / v.key
    )
    res: dict[str, Any] = {}
    for a, b, variant, v in planned:
        f = _flow(jobs[v.key].result().summary, "dccp")
        t = f["tfrc"]
        d = t["disconnections"][0]
        row: dict[str, Any] = {
            "lost": d["lost"],
            "lost_in_network": d["lost_in_network"],
            "first_nofeedback_s": d["first_nofeedback_s"],
            "unused_packets": d["unused_packets"],
            "restored_after_s": d["restored_after_s"],
            "target_bps": d["target_bps"],
            "x_before_bps": d["x_before_bps"],
            "rtt_before_ms": d["rtt_before_ms"],
            "p_before": d["p_before"],
            "rx_before_bps": d["rx_rate_before_bps"],
            "received_after": d["received_after"],
            "before_bps": f["intervals"]["before"],
            "after_bps": f["intervals"]["after"],
            "states": t["states"],
            "lost_to_queues": t["lost_to_queues"],
        }
        if variant == "dccp":
            row["model"] = model_for_run(d, b)
        res.setdefault(f"{a}->{b}", {})[variant] = row
    return res


def fairness_row(summary: Mapping[str, Any]) -> dict[str, Any]:
    """DCCP's and TCP's throughput over the sample, and their ratio."""
    dccp = _flow(summary, "dccp")["intervals"]["sample"]
    tcp = _flow(summary, "tcp")["intervals"]["sample"]
    return {"dccp_bps": dccp, "tcp_bps": tcp, "ratio": dccp / tcp if tcp > 0 else math.inf}


def run_fairness(pairs: Sequence[tuple[str, str]], pool: ThreadPoolExecutor) -> dict[str, Any]:
    planned = [
        (
            a,
            b,
            v,
            framework.Variant(
                f"{a}->{b}/{v}", SCENARIOS / f"fairness_{SLUG[a]}_to_{SLUG[b]}.toml", sets
            ),
        )
        for a, b in pairs
        for v, sets in (("dccp", {}), ("freeze", FREEZE))
    ]
    jobs = framework.submit_variants(pool, [x for (*_, x) in planned])
    res: dict[str, Any] = {}
    for a, b, v, x in planned:
        res.setdefault(f"{a}->{b}", {})[v] = fairness_row(jobs[x.key].result().summary)
    return res


def base_rtt_s(src: str) -> float:
    """The old path's round trip without queueing: the wireless link both ways and the
    wired RTT (what the seed's T_handoff formula adds up)."""
    return 2 * LINK_DELAY_S[src] + RTT_WIRED_S


def phase_offsets_s(src: str) -> list[float]:
    """The DCCP flow's start offsets of the phase runs: every eighth of the old path's
    base RTT (see PHASES)."""
    return [round(k * base_rtt_s(src) / PHASES, 6) for k in range(PHASES)]


PHASE_FIELDS = ("lost", "unused_packets", "restored_after_s", "after_bps")
"""What each handoff's phase runs keep (the claims' measures)."""


def run_phases(
    pairs: Sequence[tuple[str, str]],
    handoffs: Mapping[str, Any],
    fairness: Mapping[str, Any],
    pool: ThreadPoolExecutor,
) -> dict[str, dict[str, Any]]:
    """Every handoff (each variant) and, with ``fairness``, every fairness case, with
    the DCCP flow started at each offset of :func:`phase_offsets_s`; the offset 0 is
    the main run, not run again. ``{"handoffs": {pair: {offset: {variant: row}}},
    "fairness": {pair: {offset: {variant: row}}}}`` (no "fairness" without it)."""
    kinds: list[tuple[str, Mapping[str, Mapping[str, object]]]] = [("handoff", VARIANTS)]
    if fairness:
        kinds.append(("fairness", {"dccp": {}, "freeze": FREEZE}))
    planned: list[tuple[str, str, str, str, framework.Variant]] = []
    for a, b in pairs:
        for off in phase_offsets_s(a)[1:]:
            at = f"{off:g}s"
            for kind, variants in kinds:
                path = SCENARIOS / f"{kind}_{SLUG[a]}_to_{SLUG[b]}.toml"
                for variant, sets in variants.items():
                    sets2: dict[str, object] = {**sets, "flows.dccp.start": at}
                    if kind == "handoff":
                        sets2["measure.sample_interval"] = "0s"
                    key = f"{kind} {a}->{b}@{at}/{variant}"
                    planned.append(
                        (kind, f"{a}->{b}", at, variant, framework.Variant(key, path, sets2))
                    )
    jobs = framework.submit_variants(pool, [v for (*_, v) in planned])
    res: dict[str, dict[str, Any]] = {"handoff": {}, "fairness": {}}
    for a, b in pairs:
        k = f"{a}->{b}"
        res["handoff"][k] = {
            "0s": {v: {f: r[f] for f in PHASE_FIELDS} for v, r in handoffs[k].items()}
        }
        if fairness:
            res["fairness"][k] = {"0s": dict(fairness[k])}
    for kind, pair, at, variant, v in planned:
        summary = jobs[v.key].result().summary
        if kind == "fairness":
            row = fairness_row(summary)
        else:
            d = _flow(summary, "dccp")
            disc = d["tfrc"]["disconnections"][0]
            row = {f: disc[f] for f in PHASE_FIELDS[:3]}
            row["after_bps"] = d["intervals"]["after"]
        res[kind][pair].setdefault(at, {})[variant] = row
    out = {"handoffs": res["handoff"]}
    if fairness:
        out["fairness"] = res["fairness"]
    return out


def run_ns2_twins() -> list[dict[str, Any]] | None:
    """The TFRC and DCCP twins of ``validation/ns2`` (ns-2's Agent/TFRC and
    Agent/DCCP/TFRC), or None without ns-2."""
    module = framework.ns2_validation() if framework.have_ns2() else None
    if module is None:
        return None
    rows = module.validate(sorted(module.TFRC_CASES), have_ns=True)
    return [dict(r.__dict__) for r in rows]


# --- report -----------------------------------------------------------------------------


def _grid(
    title: str,
    cell: Any,
    fmt: str = "{}",
) -> list[Block]:
    rows = []
    for i, a in enumerate(TECHS):
        cells = []
        for j, b in enumerate(TECHS):
            v = cell(i, j, a, b)
            cells.append("" if v is None else (v if isinstance(v, str) else fmt.format(v)))
        rows.append([a, *cells])
    return [f"**{title}**", "", Table(["from \\ to", *TECHS], rows, compact_rule=True), ""]


def draw_figures(figs: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    for dst in ("802.11b", "UMTS"):
        fig, ax = plt.subplots(figsize=(7, 3.2))
        for variant, style in (("dccp", "-"), ("freeze", "--")):
            d = figs / f"run_80211b_{SLUG[dst]}_{variant}"
            if not has_series(d):
                continue
            df = join_series(mobiflow.read_series(d), "tfrc")
            label = "DCCP/TFRC" if variant == "dccp" else "Freeze-DCCP"
            ax.plot(df["time_s"], df["x_bps"] / 1e6, style, label=f"{label}: X")
            ax.plot(
                df["time_s"], df["goodput_bps"] / 1e6, style, alpha=0.5, label=f"{label}: received"
            )
        ax.set_yscale("log")
        ax.set_xlim(HANDOFF_AT_S - 5, HANDOFF_AT_S + T_HANDOFF_S[dst] + 25)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Mb/s (log)")
        ax.set_title(f"Handoff 802.11b → {dst} at {HANDOFF_AT_S:g} s ({T_HANDOFF_S[dst]} s down)")
        ax.legend(fontsize=7)
        names.append(framework.save_figure(fig, figs / f"x_80211b_to_{SLUG[dst]}.png").name)
    return names


def page(
    model: Mapping[str, Any],
    handoffs: Mapping[str, Any],
    fairness: Mapping[str, Any],
    figures: Sequence[str],
    quick: bool,
    ns2: Sequence[Mapping[str, Any]] | None = None,
    phases: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Block]:
    """The report's blocks; ``phases`` the output of :func:`run_phases`."""
    paper = model["paper"]
    slides = model["slides"]
    fitted = model["fitted"]
    out: list[Block] = [Heading(1, "TFRC under disconnection and Freeze-DCCP: reproduction"), ""]
    if quick:
        out += ["*Quick mode: a subset of the handoffs; numbers are indicative only.*", ""]
    out += [
        Heading(2, "1. The analytical model (equations (1) to (3))"),
        "",
        "Inputs from the slides: the link table (UMTS 384 kb/s 125 ms, 802.16 9.5 Mb/s "
        "40 ms, 802.11b 11 Mb/s 10 ms, 802.11g 54 Mb/s 10 ms), the handoff times "
        "(T_handoff = 2.5 + RTT_wireless + RTT_wired = 2.6 + 2·Delay_wireless: 2.85, 2.68, "
        "2.62, 2.62 s), s = 500 B, t_mbi = 64 s. mobiflow's reading of what the slides "
        "leave open: R = 2·Delay_wireless + RTT_wired (0.1 s), X_d = the old link's "
        "bandwidth, t_D = T_handoff of the new network, i_D the NFI in which t_D ends, "
        "X_c = X^{i_D}, t_idle = s/(2X_c) + R_new, n_ss and n_grow doublings of R_new "
        "(`crates/mobiflow-proto/src/tfrc/model.rs`). Each cell: seed / mobiflow.",
        "",
    ]
    out += _grid(
        "Packet losses (1), from the slides' inputs",
        lambda i, j, a, b: f"{paper['losses'][i][j]:.0f} / {slides['losses'][i][j]:.0f}",
    )
    out += _grid(
        "Unused bandwidth (2) & (3) [500 B packets], from the slides' inputs",
        lambda i, j, a, b: f"{paper['unused'][i][j]:.0f} / {slides['unused'][i][j]:.0f}",
    )
    out += [
        f"{slides['matching_cells']} of 32 cells match (after rounding). **The seed's "
        "table cannot be reproduced from the slides' own inputs.** Equation (1) depends "
        "on the destination only through t_D, so within a row it can only change where "
        "t_D crosses the end of an NFI; the seed's UMTS row (306, 236, 226, 224) "
        "changes between 802.11b and 802.11g, whose T_handoff are equal (2.62 s), so no "
        "single (R, X_d) per row reproduces it exactly. And with the nominal inputs the "
        "magnitudes are off by a factor up to 4 (802.11g: seed 2909, equation (1) "
        "11846 at X_d = 54 Mb/s, R = 0.12 s).",
        "",
        "What the seed's losses table implies: for each row, the (R, X_d) on a grid "
        "(R 20 ms to 3 s by 5 ms, X_d 5 % to 400 % of the link rate by 0.5 %) that brings "
        "equation (1) closest to the row:",
        "",
    ]
    fits = []
    for i, a in enumerate(TECHS):
        f = model["fits"][i]
        link = model["links"][i]
        fits.append(
            [
                a,
                f"{f['r_s']:.3f}",
                f"{link['rtt_s']:.3f}",
                f"{f['x_d_bps'] / 1e6:.3f}",
                f"{link['bandwidth_bps'] / 1e6:.3f}",
                ", ".join(str(v) for v in f["values"]),
                ", ".join(f"{v:.0f}" for v in paper["losses"][i]),
                f"{f['error']:.0f}",
            ]
        )
    fit_head = [
        "from",
        "R fitted (s)",
        "R slides (s)",
        "X_d fitted (Mb/s)",
        "link (Mb/s)",
        "(1) at the fit",
        "seed",
        "error",
    ]
    out.append(Table(fit_head, fits, compact_rule=True))
    out += [
        "",
        "Equation (1) reproduces each row to within a few packets, but only with R and "
        "X_d that are not the slides' (e.g. R ≈ 35 ms for 802.11g, below even the 0.1 s "
        "wired RTT the handoff times imply). While the no-feedback intervals last 4R, "
        "(1) depends on R and X_d mostly through R·X_d, so the fit pins that product "
        "rather than either (ties go to the X_d nearest the link rate): the seed's "
        "rows need R·X_d "
        + ", ".join(
            f"{f['r_s'] * f['x_d_bps'] / (ln['rtt_s'] * ln['bandwidth_bps']):.2f} ({t})"
            for t, f, ln in zip(TECHS, model["fits"], model["links"], strict=True)
        )
        + " times the slides' values. The seed's table was presumably computed "
        "from other inputs (its ns-2 runs' R and X_d?) that the slides do not give. The "
        "unused-bandwidth table at the fitted (R, X_d), with the readings above "
        f"({fitted['matching_cells']} of 32 cells of both tables match):",
        "",
    ]
    out += _grid(
        "Unused bandwidth (2) & (3) at the fitted (R, X_d): seed / mobiflow",
        lambda i, j, a, b: f"{paper['unused'][i][j]:.0f} / {fitted['unused'][i][j]:.0f}",
    )

    out += [Heading(2, "2. Simulation: DCCP/TFRC against Freeze-DCCP across handoffs"), ""]
    out += [
        "Scenarios `scenarios/freeze_dccp/handoff_*.toml`: mn —wireless (the old "
        "network's rate and delay, 50-packet DropTail)— ar —100 Mb/s, 50 ms— cn; one "
        "DCCP CCID 3 flow (s = 500 B, 32 header bytes as ns-2's agent) from mn to cn. As "
        "in the seed's ns-2 script (`rtmodel-at ... down $ar_ $cn_`), the wired AR-CN "
        f"link goes down at {HANDOFF_AT_S:g} s for T_handoff; the wireless link has the "
        "new network's rate and delay from the reconnection on. Freeze-DCCP: the mobile "
        "sender freezes one path RTT before the "
        "disconnection (warning [GUESS]) and unfreezes when the link is back. "
        "Every handoff is run twice for each protocol: as RFC 4342 specifies CCID 3 (no "
        f"floor on p), and with `tfrc.min_p = {NS2_MIN_P:g}`, the floor ns-2's "
        "Agent/DCCP/TFRC puts on p (`s_smallest_p_`, section 6), which caps the equation "
        f"rate at {tfrc_rate_bps(500, 0.12, NS2_MIN_P) / 1e6:.1f} Mb/s of payload at "
        "s = 500 B and R = 0.12 s (802.11g's path). "
        "Losses: data packets lost on the down link. Unused: the integral of "
        "(target - receive rate) from the reconnection until the receive rate first "
        "reaches 90 % of the target, in 500-byte packets, where the target is the share "
        "of the old path's capacity the flow received before the disconnection, applied "
        "to the new path's capacity (X_d on the same path, X_max on a faster one: the "
        "quantities of (2) and (3)). Each cell: seed / mobiflow.",
        "",
    ]

    def h(a: str, b: str) -> dict[str, Any] | None:
        return handoffs.get(f"{a}->{b}")

    def handoff_grid(
        title: str, cell: Callable[[int, int, Mapping[str, Any]], str | None]
    ) -> list[Block]:
        """A grid of the handoffs from network i to network j: ``cell(i, j, results of
        that handoff)``, empty where it was not run."""

        def lookup(i: int, j: int, a: str, b: str) -> str | None:
            r = h(a, b)
            return None if r is None else cell(i, j, r)

        return _grid(title, lookup)

    def lost_cell(i: int, j: int, r: Mapping[str, Any]) -> str | None:
        return f"{PAPER_SIM_LOSSES[i][j]:g} / {r['dccp']['lost']} (Freeze: {r['freeze']['lost']})"

    out += handoff_grid("Packet losses (DCCP/TFRC; Freeze-DCCP in brackets)", lost_cell)

    def unused_cell(variant: str, paper_t: list[list[float]]) -> Any:
        def f(i: int, j: int, r: Mapping[str, Any]) -> str | None:
            v = r[variant]
            mark = "" if v["restored_after_s"] is not None else "†"
            return f"{paper_t[i][j]:g} / {v['unused_packets']:.0f}{mark}"

        return f

    out += handoff_grid(
        "Unused bandwidth, DCCP/TFRC [500 B packets]",
        unused_cell("dccp", PAPER_SIM_UNUSED_DCCP),
    )
    out += handoff_grid(
        "Unused bandwidth, Freeze-DCCP [500 B packets]",
        unused_cell("freeze", PAPER_SIM_UNUSED_FREEZE),
    )
    out += handoff_grid(
        f"Unused bandwidth with ns-2's p floor (min_p = {NS2_MIN_P:g}), DCCP/TFRC [500 B packets]",
        unused_cell("dccp_floor", PAPER_SIM_UNUSED_DCCP),
    )
    out += handoff_grid(
        f"Unused bandwidth with ns-2's p floor (min_p = {NS2_MIN_P:g}), Freeze-DCCP "
        "[500 B packets]",
        unused_cell("freeze_floor", PAPER_SIM_UNUSED_FREEZE),
    )

    def recovery(i: int, j: int, r: Mapping[str, Any]) -> str | None:
        if "dccp_floor" not in r:
            return None

        def t(v: Mapping[str, Any]) -> str:
            x = v["restored_after_s"]
            return "-" if x is None else f"{x:.1f}"

        return " / ".join(t(r[v]) for v in ("dccp", "freeze", "dccp_floor", "freeze_floor"))

    out += handoff_grid(
        "Recovery interval (s from the reconnection until the receive rate first reaches "
        "90 % of the target): DCCP / Freeze; with the p floor: DCCP / Freeze "
        "(- not within the simulated 60 s)",
        recovery,
    )
    g = h("802.11g", "802.11g")
    if g is not None and "dccp_floor" in g:
        out += [
            "802.11g to 802.11g, where the seed's DCCP leaves "
            f"{PAPER_SIM_UNUSED_DCCP[3][3]:g} packets unused: mobiflow's DCCP leaves "
            f"{g['dccp']['unused_packets']:.0f} without the floor and "
            f"{g['dccp_floor']['unused_packets']:.0f} with it. Without the floor, a few "
            "losses in 30 s put p near 1e-6 and the sender at about "
            f"{g['dccp']['before_bps'] / 1e6:.1f} Mb/s before the handoff, a target the "
            "climb back takes long to reach; with ns-2's floor the equation caps the "
            f"rate at about {g['dccp_floor']['before_bps'] / 1e6:.1f} Mb/s and the "
            "target is regained after "
            + (
                "-"
                if g["dccp_floor"]["restored_after_s"] is None
                else f"{g['dccp_floor']['restored_after_s']:.1f} s"
            )
            + ". The floor, a property of the seed's simulator rather than of CCID 3, "
            "explains the seed's 802.11g numbers (the `dccp_handoff` twin, section 5).",
            "",
        ]
    out += [
        "† not restored within the simulated time after the reconnection: the value is "
        "a lower bound.",
        "",
        "The unused-bandwidth measure stops at the first restoration. What happens after "
        "it shows in the packets received over the 10 s after the reconnection:",
        "",
    ]

    def side_by_side(
        key: str,
        fmt: Callable[[Any], str] = str,
        variants: tuple[str, str] = ("dccp", "freeze"),
    ) -> Callable[[int, int, Mapping[str, Any]], str | None]:
        """A cell: ``key`` of each of ``variants``, as ``fmt`` writes it, "A / B"
        (empty where a variant was not run)."""

        def cell(i: int, j: int, r: Mapping[str, Any]) -> str | None:
            if any(v not in r for v in variants):
                return None
            return " / ".join(fmt(r[v][key]) for v in variants)

        return cell

    out += handoff_grid(
        "Packets received in the 10 s after the reconnection: DCCP / Freeze",
        side_by_side("received_after"),
    )
    more = [
        k
        for k, r in handoffs.items()
        if r["freeze"]["received_after"] > r["dccp"]["received_after"]
    ]
    out += [
        f"Freeze-DCCP receives more in {len(more)} of {len(handoffs)} handoffs "
        f"({', '.join(more)}). After probing, the receiver re-seeds p from the receive "
        "rate at the first loss (docs/schemes/freeze-dccp.md, PROBED), which can leave the sender "
        "below where plain DCCP settles on the same path.",
        "",
    ]

    def mbps(bps: float) -> str:
        return f"{bps / 1e6:.2f}"

    out += handoff_grid(
        "Goodput over the 60 s after the reconnection (Mb/s): DCCP / Freeze",
        side_by_side("after_bps", mbps),
    )
    out += handoff_grid(
        f"Goodput over the 60 s after the reconnection with ns-2's p floor (min_p = "
        f"{NS2_MIN_P:g}) (Mb/s): DCCP / Freeze",
        side_by_side("after_bps", mbps, ("dccp_floor", "freeze_floor")),
    )
    faster = [
        k
        for k, r in handoffs.items()
        if r["freeze"]["unused_packets"] < r["dccp"]["unused_packets"]
    ]
    higher = [k for k, r in handoffs.items() if r["freeze"]["after_bps"] > r["dccp"]["after_bps"]]
    out += [
        "The verdict depends on the measure. By unused bandwidth until the first "
        f"restoration, Freeze-DCCP does better in {len(faster)} of {len(handoffs)} "
        "handoffs; by goodput over the 60 s after the reconnection, in "
        f"{len(higher)} of {len(handoffs)}"
        + (
            f" (it does worse in {', '.join(k for k in handoffs if k not in higher)})."
            if len(higher) < len(handoffs)
            else "."
        ),
        "",
    ]
    floored = {k: r for k, r in handoffs.items() if "dccp_floor" in r}
    if floored:
        faster_f = [
            k
            for k, r in floored.items()
            if r["freeze_floor"]["unused_packets"] < r["dccp_floor"]["unused_packets"]
        ]
        higher_f = [
            k
            for k, r in floored.items()
            if r["freeze_floor"]["after_bps"] > r["dccp_floor"]["after_bps"]
        ]
        out += [
            "With ns-2's p floor: Freeze-DCCP leaves less unused in "
            f"{len(faster_f)} of {len(floored)} handoffs and has the higher goodput over "
            f"the 60 s after the reconnection in {len(higher_f)} of {len(floored)}.",
            "",
        ]
    out += [
        "Towards a slower network (e.g. 802.11b to UMTS) Freeze-DCCP restores the old "
        "rate into the smaller link, loses a queue-full at once, falls back to normal "
        "TFRC (RECOVERY2) with a loss history that now holds those losses, and then "
        "sends below plain DCCP for tens of seconds (figure x_80211b_to_umts.png): the "
        'seed\'s "graceful adaptation to smaller capacities" is not reproduced with the '
        "authors' state machine as docs/schemes/freeze-dccp.md gives it.",
        "",
    ]

    def before(i: int, j: int, r: Mapping[str, Any]) -> str | None:
        d = r["dccp"]
        share = d["first_nofeedback_s"] / (4 * d["rtt_before_ms"] / 1000)
        return f"{d['x_before_bps'] / 1e6:.3f}, {d['rtt_before_ms']:.0f}, {share:.2f}"

    out += handoff_grid(
        "Before the disconnection (DCCP): sender X (Mb/s), R (ms), and the share of the "
        "first no-feedback interval (4R) that falls in the disconnection ((1) takes 7/8)",
        before,
    )

    if phases and phases.get("handoffs"):
        out += phase_section(phases["handoffs"])
    out += [Heading(2, "3. The model against the simulator"), ""]
    out += [
        "The model driven by each DCCP run's own X_d (the sender's X just before the "
        "disconnection), R (its RTT estimate then) and t_D; cells: model / simulator. "
        "Equation (1) counts the packets sent after the last feedback; the simulator also "
        "loses what its queue and pipe hold when the link goes down, shown apart.",
        "",
    ]

    def lost_vs_model(i: int, j: int, r: Mapping[str, Any]) -> str | None:
        d = r["dccp"]
        sent_into = d["lost"] - d["lost_in_network"]
        err = (d["model"]["n_lost"] - sent_into) / sent_into if sent_into else float("nan")
        return (
            f"{d['model']['n_lost']} / {sent_into} ({err:+.0%}) + {d['lost_in_network']} "
            "in the network"
        )

    out += handoff_grid(
        "Packets lost during the disconnection: (1) / sent into the down link (model "
        "error) + queued or in flight when it went down",
        lost_vs_model,
    )

    def unused_vs_model(i: int, j: int, r: Mapping[str, Any]) -> str | None:
        d = r["dccp"]
        return f"{d['model']['unused']:.0f} / {d['unused_packets']:.0f}"

    out += handoff_grid(
        "Unused after reconnection: (2)+(3) / simulated [500 B packets]", unused_vs_model
    )
    out += [
        "Where the model applies, and why the numbers differ. (1) describes the sender "
        "during the disconnection, and with the run's own X_d and R it is close to what "
        "the simulated sender sent into the down link (see the model error in "
        "brackets). Three things separate them: (a) the part of the first no-feedback "
        "interval that falls in the disconnection: (1) takes 7/8 of 4R, the simulated "
        "sender's timer had the share in the table above left; (b) at the first expiry "
        "RFC 5348 §4.4 does not halve X when the sender was limited by the receive rate "
        "(X_calc > 2·X_recv): it sets X to X_recv, about X_d, and halving starts one "
        "interval later, where (1) has X^1 = X_d/2; (c) the simulator also loses what is "
        "queued or in flight when the link goes down, which (1) leaves out (shown apart). "
        "(2) and (3) describe the sender after the reconnection as restarting at X_c and "
        "doubling every R_new. The simulated CCID 3 receiver instead counts the packets "
        "lost in the disconnection as one loss event (RFC 4342 §10.2: they form one "
        "hole behind one window counter), so p stays of the order it had before and the "
        "sender does not slow-start: it returns to the equation's rate for that p. The "
        "model does not describe that, and where that rate is below the target (towards "
        "a faster network, and 802.11g to 802.11g without the p floor) the simulated "
        "waste is far larger than (2)+(3). Where the old rate is regained within a few "
        "RTTs (the same or a slower network), both are small.",
        "",
    ]

    out += [Heading(2, "4. TCP fairness"), ""]
    out += [
        "Scenarios `fairness_*.toml`: the same handoff; "
        f"{SETTLE_S:g} s after the reconnection one NewReno flow starts from ar to cn; the "
        "wired link then runs at the new network's rate, so that both flows share one "
        "bottleneck of that capacity (the seed does not say which link is shared: an "
        f"assumption). Ratio: DCCP/TCP throughput over the next {SAMPLE_S:g} s. Cells: "
        "seed / DCCP (Freeze-DCCP).",
        "",
    ]

    def fairness_grid(title: str, by_case: Mapping[str, Any], ratio: Any) -> list[Block]:
        """Seed / DCCP (Freeze-DCCP), ``ratio(case's runs, variant)`` formatting each."""
        return _grid(
            title,
            lambda i, j, a, b: (
                None
                if f"{a}->{b}" not in by_case
                else f"{PAPER_FAIRNESS[i][j]:g} / {ratio(by_case[f'{a}->{b}'], 'dccp')} "
                f"({ratio(by_case[f'{a}->{b}'], 'freeze')})"
            ),
        )

    out += fairness_grid(
        "Throughput ratio DCCP/TCP", fairness, lambda v, var: f"{v[var]['ratio']:.2f}"
    )
    fair_phases = (phases or {}).get("fairness") or {}
    if fair_phases:
        out += [
            f"The same ratios over the phase of the disconnection (the DCCP flow started "
            f"at {PHASES} offsets over the old path's RTT, as in section 2): seed / "
            "DCCP's lowest to highest (Freeze-DCCP's).",
            "",
        ]
        out += fairness_grid(
            "Throughput ratio DCCP/TCP over the phase: seed / range",
            fair_phases,
            lambda v, var: _span(ratios(v, var), "{:.2f}"),
        )
    out += [Heading(2, "5. DCCP and TFRC against ns-2's agents"), ""]
    if ns2 is None:
        out += ["ns-2 is not installed (or was not asked for): no comparison.", ""]
    else:
        out += [
            "The twins of `validation/ns2/`: one flow, s = 1000 B, 10 Mb/s, 50 ms, alone "
            "(`*_steady`) or with the link down 20-25 s (`*_outage`). `dccp_*` set "
            'mobiflow\'s DCCP with CCID 3 (`transport = "dccp-ccid3"`, what this '
            "reproduction runs) against ns-2's Agent/DCCP/TFRC, the agent of the paper's "
            "simulations (ECN off at both ends: with it, ns-2.35's CCID 3 stops sending on "
            "a DropTail path after an 'ECN check failed'). `tfrc_*` set TFRC over UDP "
            "against ns-2's Agent/TFRC, the original research TFRC rather than RFC 5348 "
            "(`validation/README.md` lists the differences); there only the steady rate is "
            "held to a tolerance. `dccp_handoff` is one of this reproduction's handoffs "
            "(802.11g to 802.11g, s = 500 B, the AR-CN link down 30-32.62 s) against the "
            f"seed's agent, mobiflow with ns-2's p floor (min_p = {NS2_MIN_P:g}); intervals "
            "before (20-30 s), recovery (the 10 s after the reconnection) and after (the "
            "50 s that follow).",
            "",
        ]
        rows = []
        for r in ns2:
            diff = "" if r["difference"] is None else f"{r['difference']:+.1%}"
            theirs = "" if r["ns2"] is None else f"{r['ns2']:.3f}"
            rows.append([r["case"], r["metric"], theirs, f"{r['mobiflow']:.3f}", diff, r["status"]])
        head = ["scenario", "metric", "ns-2", "mobiflow", "difference", "result"]
        out += [Table(head, rows, compact_rule=True), ""]
    if fairness:
        # Over the phases, a case is "reasonably fair" only if the whole range is.
        by_phase = fair_phases or {k: {"0s": v} for k, v in fairness.items()}
        fair = sum(reasonably_fair(ratios(v, "dccp")) for v in by_phase.values())
        fair_z = sum(reasonably_fair(ratios(v, "freeze")) for v in by_phase.values())
        idx = {t: i for i, t in enumerate(TECHS)}

        def seed_ratio(k: str) -> float:
            a, b = k.split("->")
            return PAPER_FAIRNESS[idx[a]][idx[b]]

        seed_fair = sum(0.5 <= seed_ratio(k) <= 2.0 for k in fairness)
        less = sum(max(ratios(v, "dccp")) < 1 for v in by_phase.values())
        seed_less = sum(seed_ratio(k) < 1 for k in fairness)
        phased = " at every phase" if fair_phases else ""
        out += [
            f'Ratios in [0.5, 2]{phased} ("reasonably fair" for the seed): DCCP {fair}, '
            f"Freeze-DCCP {fair_z}, the seed {seed_fair}, of {len(fairness)}; DCCP gets "
            f"less than TCP{phased} in {less} (the seed: {seed_less}). "
            "The TCP flow has the DCCP flow's "
            "segment size (500 B), the size TFRC's equation is fair to; the seed does "
            "not give its setup for this table (which link is shared, queue sizes, TCP "
            "variant and segment size), so the comparison is indicative only.",
            "",
        ]
    out += differences_from_ns2()
    if figures:
        out += [Heading(2, "7. Figures"), ""]
        for name in figures:
            out += [Figure(name), ""]
    out += [
        Heading(2, "Assumptions"),
        "",
        "- Queues: 50-packet DropTail (ns-2's default); the wired link: 100 Mb/s, 50 ms "
        "one way (RTT_wired = 0.1 s from the handoff-time formula).",
        f"- Disconnection at {HANDOFF_AT_S:g} s; {AFTER_S:g} s simulated after it.",
        "- Freeze-DCCP: warning one path RTT (docs/schemes/freeze-dccp.md [GUESS]), sender-side "
        "trigger (the mobile is the sender); the signal-retry and fallback defaults of "
        "`TfrcConfig::assumed`.",
        "- The handoff is an outage of the wired AR-CN link (as in the seed's script) "
        "with the wireless link taking the new network's rate and delay at the "
        "reconnection (one access link, not one access router per technology).",
        "- Fairness: the shared bottleneck and the TCP variant (NewReno, 500-byte "
        "segments, 8 MB receive buffer) are assumptions.",
        "- Phase: the seed does not say where the disconnection falls in TFRC's feedback "
        "cycle; the main runs start the DCCP flow at 0 s, the phase runs (section 2, "
        f"section 4) also at k/{PHASES} of the old path's base RTT (k = 1..{PHASES - 1}).",
        "",
    ]
    return out


def ratios(by_offset: Mapping[str, Mapping[str, Any]], variant: str) -> list[float]:
    """One fairness case's DCCP/TCP ratio at each offset."""
    return [float(r[variant]["ratio"]) for r in by_offset.values()]


def reasonably_fair(values: Sequence[float]) -> bool:
    """The seed's "reasonably fair": every ratio in [0.5, 2]."""
    return all(0.5 <= v <= 2.0 for v in values)


def _span(values: Sequence[float], fmt: str) -> str:
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def phase_section(phases: Mapping[str, Mapping[str, Any]]) -> list[Block]:
    """Section 2's measures over the phase of the disconnection: each handoff's range
    over the offsets, the offsets where Freeze-DCCP does better, and the verdicts."""

    def vals(by_off: Mapping[str, Any], variant: str, key: str, scale: float = 1.0) -> list[float]:
        return [float(r[variant][key]) / scale for r in by_off.values()]

    def wins(by_off: Mapping[str, Any], better: Any) -> str:
        return f"{sum(bool(better(r)) for r in by_off.values())} of {len(by_off)}"

    def less(d: str, z: str) -> Any:
        return lambda r: r[z]["unused_packets"] < r[d]["unused_packets"]

    def higher(d: str, z: str) -> Any:
        return lambda r: r[z]["after_bps"] > r[d]["after_bps"]

    rows = []
    for k, by_off in phases.items():
        rows.append(
            [
                k,
                _span(vals(by_off, "dccp", "lost"), "{:.0f}"),
                _span(vals(by_off, "freeze", "lost"), "{:.0f}"),
                _span(vals(by_off, "dccp", "unused_packets"), "{:.0f}"),
                _span(vals(by_off, "freeze", "unused_packets"), "{:.0f}"),
                wins(by_off, less("dccp", "freeze")),
                _span(vals(by_off, "dccp", "after_bps", 1e6), "{:.2f}"),
                _span(vals(by_off, "freeze", "after_bps", 1e6), "{:.2f}"),
                wins(by_off, higher("dccp", "freeze")),
                wins(by_off, less("dccp_floor", "freeze_floor")),
                wins(by_off, higher("dccp_floor", "freeze_floor")),
            ]
        )
    head = [
        "handoff",
        "lost, DCCP",
        "lost, Freeze",
        "unused, DCCP",
        "unused, Freeze",
        "Freeze less unused",
        "goodput after, DCCP (Mb/s)",
        "goodput after, Freeze (Mb/s)",
        "Freeze higher",
        "p floor: Freeze less unused",
        "p floor: Freeze higher",
    ]
    n = len(phases)
    offsets = max(len(by) for by in phases.values())
    verdicts = []
    for what, d, z, better in (
        ("leaves less unused", "dccp", "freeze", less),
        ("has the higher goodput after the reconnection", "dccp", "freeze", higher),
        ("leaves less unused with the p floor", "dccp_floor", "freeze_floor", less),
        ("has the higher goodput with the p floor", "dccp_floor", "freeze_floor", higher),
    ):
        always, never, mixed = claims.phase_split(phases, better(d, z))
        verdicts.append(
            f"Freeze-DCCP {what} at every phase in {len(always)} of {n} handoffs, at none "
            f"in {len(never)}, at some only in {len(mixed)}"
            + (f" ({', '.join(mixed)})" if mixed else "")
            + "."
        )
    return [
        f"Where the disconnection falls in TFRC's feedback cycle is not given by the seed: "
        f"each handoff again, every variant, with the DCCP flow started at {offsets} offsets "
        "k·R0/8 (R0 the old path's base RTT: "
        + ", ".join(f"{base_rtt_s(t):g} s from {t}" for t in TECHS)
        + "; TFRC's feedback comes once per RTT and its nofeedback timer restarts "
        "at each, RFC 5348 §6.2). The flow's rate has long settled at 30 s and every "
        "measure is taken over fixed times, so only that phase moves. Each cell: lowest to "
        "highest over the offsets; the win columns count the offsets where Freeze-DCCP "
        "does better. The claims table counts a handoff for Freeze-DCCP only if it does "
        "better at every offset.",
        "",
        "**Over the phase of the disconnection: each handoff's range over the offsets**",
        "",
        Table(head, rows, compact_rule=True),
        "",
        " ".join(verdicts),
        "",
    ]


def tfrc_rate_bps(s: float, r: float, p: float) -> float:
    """The TFRC throughput equation (RFC 5348 §3.1, b = 1, t_RTO = 4R) in bits/s."""
    denom = r * math.sqrt(2 * p / 3) + 4 * r * (3 * math.sqrt(3 * p / 8)) * p * (1 + 32 * p * p)
    return 8 * s / denom


def differences_from_ns2() -> list[Block]:
    """Section 6: where mobiflow's CCID 3 differs from the seed's ns-2 agent, from
    reading ns-2.35's ``dccp/dccp_tfrc.cc``."""
    return [
        Heading(2, "6. Where mobiflow differs from the seed's agent (ns-2's `dccp/`)"),
        "",
        "The seed simulated ns-2's Agent/DCCP/TFRC. From its source (ns-2.35, "
        '`dccp/dccp_tfrc.cc`), against mobiflow\'s `transport = "dccp-ccid3"` '
        "(`crates/mobiflow-proto/src/tfrc/`):",
        "",
        Table(
            ["mechanism", "ns-2 Agent/DCCP/TFRC", "mobiflow dccp-ccid3"],
            [
                (
                    "floor on p",
                    (
                        "`s_smallest_p_` = 1e-5: a reported p below it is raised to it "
                        "(`tfrc_send_packet_recv`), so the equation never allows more than "
                        "X(1e-5)"
                    ),
                    (
                        "none by default (RFC 4342, RFC 5348); `tfrc.min_p` sets one, and every "
                        "handoff is run both ways"
                    ),
                ),
                (
                    "window counter after an acknowledgement",
                    (
                        "at least 4 past the acknowledged packet's (`tfrc_send_packet`, "
                        "`s_recv_wc_`; RFC 4342 §8.1)"
                    ),
                    "the same",
                ),
                (
                    "window counter before the first feedback",
                    "advances as if R were a quarter of the initial RTO",
                    "stays 0 until R is known (as Linux)",
                ),
                (
                    "loss events",
                    (
                        "a loss starts a new event when the CCVal before it is more than 4 "
                        "past the event's first (`tfrc_recv_updateLI`; RFC 4342 §10.2)"
                    ),
                    (
                        "the same, and (as Linux) an event also closes once a packet more than 4 "
                        "counters past it arrives, which keeps a 4-bit wrap from merging events"
                    ),
                ),
                (
                    "open loss interval",
                    "highest sequence number minus the event's start",
                    "the same plus one (RFC 5348 §5.3)",
                ),
                (
                    "loss-history discounting",
                    "none (`tfrc_calcImean`)",
                    "none by default; `tfrc.history_discounting` turns RFC 5348 §5.5 on",
                ),
                (
                    "first loss interval",
                    (
                        "p from X_recv by bisection to 5 % (`tfrc_calcP`, `p_tol_`), interval "
                        "ceil(1/p)"
                    ),
                    "the equation inverted exactly (RFC 5348 §6.3.1)",
                ),
                (
                    "p on the wire",
                    "an integer 1/p (`pinv`)",
                    "p as computed",
                ),
                (
                    "oscillation prevention",
                    "on (`s_use_osc_prev_` = 1)",
                    "off (RFC 5348 §4.5 is optional; Linux has none)",
                ),
                (
                    "nofeedback timer",
                    "RFC 3448's: halves X_recv (or sets it to X_calc/4) (`tfrc_time_no_feedback`)",
                    "RFC 5348 §4.4 with the X_recv set",
                ),
                (
                    "ECN",
                    (
                        "on by default; the twins turn it off (with it, ns-2.35 stops sending on a "
                        "DropTail path after 'ECN check failed')"
                    ),
                    "not modelled",
                ),
            ],
            compact_rule=True,
        ),
        "",
        "The floor is what moves the seed-003 numbers: with it, the `dccp_handoff` twin "
        "is checked against ns-2 in section 5; without it, mobiflow's DCCP runs well "
        "above the rate the seed's agent can reach before the handoff "
        "(validation/README.md gives both runs).",
        "",
    ]


def run(opts: Options) -> Report:
    """The model, every handoff (a subset with ``quick``), the fairness runs and the
    ns-2 twins, as options say."""
    out = opts.out
    model = model_tables()
    opts.say(model["slides"]["text"])
    pairs = [(a, b) for a in TECHS for b in TECHS]
    if opts.quick:
        pairs = [("802.11b", "802.11b"), ("802.11b", "UMTS"), ("UMTS", "802.16")]
    figs = out if opts.figures else None
    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        handoffs = run_handoffs(pairs, pool, figs)
        fairness = run_fairness(pairs, pool) if opts.wants("fairness") else {}
        phases = (
            run_phases(pairs, handoffs, fairness, pool)
            if opts.wants("phases") and not opts.quick
            else None
        )
    figures = [] if figs is None else draw_figures(out)
    ns2 = run_ns2_twins() if opts.use_ns2() else None
    return Report(
        REPRODUCTION.key,
        page(model, handoffs, fairness, figures, opts.quick, ns2, phases),
        {
            "model": model,
            "handoffs": handoffs,
            "fairness": fairness,
            "phases": None if phases is None else phases["handoffs"],
            "fairness_phases": None if phases is None else phases.get("fairness"),
            "ns2": ns2,
            "quick": opts.quick,
        },
        json_options={"indent": 1, "default": str},
    )


def paper_claims(results: Mapping[str, Any]) -> list[Claim]:
    """The paper's claims against ``results.json``."""
    return claims.freeze_dccp_claims(results, (PAPER_SIM_UNUSED_DCCP, PAPER_SIM_UNUSED_FREEZE))


REPRODUCTION = Reproduction(
    key="freeze-dccp",
    title="TFRC under disconnection and Freeze-DCCP",
    run=run,
    parts=("fairness", "phases"),
    quick=framework.quick_without_ns2,
    generate=generate,
    claims=paper_claims,
)


main = REPRODUCTION.main
"""``python -m mobiflow.repro.freeze_dccp --help`` for its flags."""

if __name__ == "__main__":
    sys.exit(main())
