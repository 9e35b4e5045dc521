"""Reproduce the RSFC paper: receiver-side flow control of the phone's uplink buffer.

The project has the paper's slide deck (Y. Xu, W. K. Leong, B. Leong, A. Razeen,
"Dynamic regulation of mobile 3G/HSPA uplink buffer with receiver-side flow control",
IEEE ICNP 2012) with the paper's abstract as the source of its numbers. An upload from a
phone fills the deep uplink buffer of a 3G/HSPA link; the ACKs of a concurrent download
wait behind it and the download collapses ("from 2,000 kbps to 100 kbps"). RSFC runs at
the upload's receiver, estimates from TCP timestamps how long segments wait in the
uplink buffer (t_buff) and sizes the receive window to keep that buffer short
(``crates/mobiflow-proto/src/flow/rsfc.rs``).

This script runs every scenario of ``scenarios/rsfc/`` (plus a few variants through
``--set``) and writes into the output folder:

* ``report.md``: the tables (download and upload throughput, the download's RTT, page
  load times, fairness and efficiency of two RSFC uploads, the bandwidth-change and
  delay-increase cases with and without the rho check and the monitor state, the UMTS
  trace case), plain TCP beside RSFC, with the paper's numbers where the seed gives
  them, and an account of the differences;
* ``results.json``: every number;
* ``fig_download.png`` (the download's RTT and the upload's rwnd and t_buff over time),
  ``fig_pages.png`` (page load time CDF), ``fig_changes.png`` (rwnd and goodput across
  the bandwidth change and the delay increase).

    python -m mobiflow.repro.rsfc                # into out/rsfc/
    python -m mobiflow.repro.rsfc --out /tmp/rsfc --no-figures

Nothing is tuned to the paper's numbers: the scenarios fix what the seed says
(7.2 Mb/s down, 2.0 Mb/s up, a deep uplink buffer, T = RTT_min, rwnd = rho x RTT_min)
and report the rest as assumptions (each file's header; RSFC's open parameters appear
under ``assumed`` in every summary).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import mobiflow
from mobiflow import _resources
from mobiflow.outputs import Run, join_series
from mobiflow.repro import claims, framework
from mobiflow.repro.claims import Claim
from mobiflow.repro.framework import Block, Figure, Heading, Options, Report, Reproduction, Table

SCENARIOS = _resources.SCENARIOS / "rsfc"

# The paper's numbers, as the seed (abstract) gives them.
PAPER_DOWNLOAD_ALONE_KBPS = 2000.0
PAPER_DOWNLOAD_WITH_UPLOAD_KBPS = 100.0
PAPER_ISP_BEFORE_KBPS = 400.0  # "< 400 kbps" for one ISP without RSFC
PAPER_ISP_AFTER_KBPS = 1400.0  # "up to 1,400 kbps" with RSFC
PAPER_PAGE_WITHOUT_S = 120.0  # "> 2 min"
PAPER_PAGE_WITH_S = 60.0  # "< 1 min, 90 % of the time"


def _v(
    key: str, file: str, sets: Mapping[str, object] | None = None, keep: bool = False
) -> framework.Variant:
    return framework.Variant(key, SCENARIOS / file, sets or {}, keep)


VARIANTS: tuple[framework.Variant, ...] = (
    _v("download_alone", "download_alone.toml", keep=True),
    _v("download_upload", "download_upload.toml", keep=True),
    _v("download_upload_rsfc", "download_upload_rsfc.toml", keep=True),
    _v("download_upload_newreno", "download_upload.toml", {"tcp.cc": "newreno"}),
    _v("download_upload_rsfc_newreno", "download_upload_rsfc.toml", {"tcp.cc": "newreno"}),
    _v(
        "download_upload_rsfc_echo",
        "download_upload_rsfc.toml",
        {"flows.upload.rsfc.estimator": "echo"},
    ),
    _v("web_alone", "web_alone.toml"),
    _v("web_upload", "web_upload.toml"),
    _v("web_upload_rsfc", "web_upload_rsfc.toml"),
    _v("upload_alone", "upload_alone.toml"),
    _v("upload_alone_rsfc", "upload_alone.toml", {"flows.upload.flow_control": "rsfc"}),
    _v("two_uploads_rsfc", "two_uploads_rsfc.toml"),
    _v(
        "two_uploads_tcp",
        "two_uploads_rsfc.toml",
        {"flows.up1.flow_control": "classic", "flows.up2.flow_control": "classic"},
    ),
    _v("bandwidth_change", "bandwidth_change.toml", keep=True),
    _v("bandwidth_change_basic", "bandwidth_change_basic.toml", keep=True),
    _v("delay_increase", "delay_increase.toml", keep=True),
    _v("delay_increase_basic", "delay_increase_basic.toml", keep=True),
    _v(
        "delay_increase_no_rebase",
        "delay_increase.toml",
        {"flows.upload.rsfc.rebase_after": 0},
        keep=True,
    ),
    _v("umts_alone", "umts_trace.toml", {"flows.upload.start": "299s"}),
    _v("umts_upload_alone", "umts_trace.toml", {"flows.download.start": "299s"}),
    _v("umts_upload_alone_rsfc", "umts_trace_rsfc.toml", {"flows.download.start": "299s"}),
    _v("umts_trace", "umts_trace.toml"),
    _v("umts_trace_rsfc", "umts_trace_rsfc.toml"),
    _v("umts_trace_rsfc_echo", "umts_trace_rsfc.toml", {"flows.upload.rsfc.estimator": "echo"}),
)

FLOW_FIELDS = (
    "name",
    "flow_control",
    "goodput_bps",
    "intervals",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "retransmits",
    "timeouts",
    "page_load_times_s",
    "pages_started",
)


def _web_channel(name: str) -> bool:
    """The companion channels of a web flow (``web.req``, ``web.c1``, ...)."""
    return "." in name


def results_of(variant: framework.Variant, run: Run) -> dict[str, Any]:
    """The declared flows' numbers of one run, the links' and the assumptions."""
    summary = run.summary
    flows = {
        f["name"]: {k: f.get(k) for k in FLOW_FIELDS}
        for f in summary["flows"]
        if not _web_channel(f["name"])
    }
    return {
        "file": Path(variant.path).name,
        "sets": dict(variant.sets),
        "flows": flows,
        "uplink_drops": sum(lk["drops"] for lk in summary["links"] if lk["to"] == "server"),
        "uplink_queue_mean_packets": sum(
            lk["queue_mean_packets"] for lk in summary["links"] if lk["to"] == "server"
        ),
        "assumed": dict(summary["assumed"]),
        "series_dir": None if run.out is None else str(run.out),
    }


def run_all(
    variants: Sequence[framework.Variant], out: Path, jobs: int
) -> dict[str, dict[str, Any]]:
    """Every variant; the kept ones write their series into ``out/runs/KEY``."""
    runs = framework.run_variants(variants, jobs, folder=lambda v: out / "runs" / v.key)
    return {v.key: results_of(v, runs[v.key]) for v in variants}


# ----- derived numbers -----------------------------------------------------------------


def steady_mean(series_dir: str | None, flow: str, column: str, t0: float, t1: float) -> float:
    """Mean of a flow-series column over [t0, t1) (NaN without series)."""
    if series_dir is None:
        return math.nan
    import polars as pl

    frame = join_series(mobiflow.read_series(series_dir), "tcp")
    sel = frame.filter(
        (pl.col("flow") == flow) & (pl.col("time_s") >= t0) & (pl.col("time_s") < t1)
    )[column].drop_nulls()
    return float(sel.mean()) if len(sel) else math.nan  # type: ignore[arg-type]


def jain(rates: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); for two flows the seed's
    (R1 + R2)^2 / (2 (R1^2 + R2^2))."""
    s2 = sum(x * x for x in rates)
    return (sum(rates) ** 2) / (len(rates) * s2) if s2 > 0 else math.nan


def page_stats(flow: Mapping[str, Any]) -> dict[str, Any]:
    """Percentiles of the page load times, unfinished pages counted as infinite."""
    times = sorted(float(x) for x in flow["page_load_times_s"])
    started = int(flow["pages_started"])
    unfinished = started - len(times)
    allv = times + [math.inf] * unfinished

    def pct(p: float) -> float:
        if not allv:
            return math.nan
        k = max(0, min(len(allv) - 1, math.ceil(p / 100.0 * len(allv)) - 1))
        return allv[k]

    return {
        "started": started,
        "finished": len(times),
        "unfinished": unfinished,
        "p10_s": pct(10),
        "p50_s": pct(50),
        "p90_s": pct(90),
        "max_finished_s": max(times) if times else math.nan,
        "frac_under_60s": (sum(1 for t in times if t < 60.0) / started) if started else math.nan,
        "frac_over_120s": (sum(1 for t in allv if t > 120.0) / started) if started else math.nan,
    }


def derive(res: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Every number the tables show."""
    d: dict[str, Any] = {}

    def iv(key: str, flow: str, name: str) -> float:
        return float(res[key]["flows"][flow]["intervals"][name])

    # Download with and without an upload, plain TCP and RSFC.
    dl = {}
    for key in ("download_alone", "download_upload", "download_upload_rsfc"):
        r = res[key]
        f = r["flows"]["download"]
        row = {
            "download_kbps": iv(key, "download", "steady") / 1e3,
            "download_rtt_steady_ms": steady_mean(r["series_dir"], "download", "srtt_ms", 20, 60),
            "download_rtt_p95_ms": f["rtt_p95_ms"],
            "uplink_queue_mean_packets": r["uplink_queue_mean_packets"],
            "uplink_drops": r["uplink_drops"],
        }
        if "upload" in r["flows"]:
            row["upload_kbps"] = iv(key, "upload", "steady") / 1e3
            row["upload_rtt_steady_ms"] = steady_mean(r["series_dir"], "upload", "srtt_ms", 20, 60)
            row["t_buff_steady_ms"] = steady_mean(r["series_dir"], "upload", "t_buff_ms", 20, 60)
        dl[key] = row
    for key in (
        "download_upload_newreno",
        "download_upload_rsfc_newreno",
        "download_upload_rsfc_echo",
    ):
        e = res[key]
        dl[key] = {
            "download_kbps": iv(key, "download", "steady") / 1e3,
            "download_rtt_p95_ms": e["flows"]["download"]["rtt_p95_ms"],
            "upload_kbps": iv(key, "upload", "steady") / 1e3,
            "uplink_queue_mean_packets": e["uplink_queue_mean_packets"],
            "uplink_drops": e["uplink_drops"],
        }
    d["download"] = dl

    # Page loads.
    d["pages"] = {
        key: page_stats(res[key]["flows"]["web"])
        for key in ("web_alone", "web_upload", "web_upload_rsfc")
    }
    d["pages_upload_kbps"] = {
        key: float(res[key]["flows"]["upload"]["goodput_bps"]) / 1e3
        for key in ("web_upload", "web_upload_rsfc")
    }

    # Fairness and efficiency.
    r_tcp = iv("upload_alone", "upload", "steady")
    fair: dict[str, Any] = {
        "r_tcp_kbps": r_tcp / 1e3,
        "r_rsfc_alone_kbps": iv("upload_alone_rsfc", "upload", "steady") / 1e3,
    }
    for key in ("two_uploads_rsfc", "two_uploads_tcp"):
        r1, r2 = iv(key, "up1", "steady"), iv(key, "up2", "steady")
        fair[key] = {
            "r1_kbps": r1 / 1e3,
            "r2_kbps": r2 / 1e3,
            "jain": jain([r1, r2]),
            "efficiency": (r1 + r2) / r_tcp,
            "rtt_mean_ms": 0.5
            * (
                float(res[key]["flows"]["up1"]["rtt_mean_ms"])
                + float(res[key]["flows"]["up2"]["rtt_mean_ms"])
            ),
        }
    d["fairness"] = fair

    # Network changes.
    ch: dict[str, Any] = {}
    for key in ("bandwidth_change", "bandwidth_change_basic"):
        ivs = res[key]["flows"]["upload"]["intervals"]
        ch[key] = {k: float(v) / 1e3 for k, v in ivs.items()}
        ch[key]["rtt_p95_ms"] = res[key]["flows"]["upload"]["rtt_p95_ms"]
    for key in ("delay_increase", "delay_increase_basic", "delay_increase_no_rebase"):
        ivs = res[key]["flows"]["upload"]["intervals"]
        ch[key] = {k: float(v) / 1e3 for k, v in ivs.items()}
        ch[key]["rtt_p95_ms"] = res[key]["flows"]["upload"]["rtt_p95_ms"]
    d["changes"] = ch

    # The UMTS trace.
    um: dict[str, Any] = {}
    for key in (
        "umts_alone",
        "umts_upload_alone",
        "umts_upload_alone_rsfc",
        "umts_trace",
        "umts_trace_rsfc",
        "umts_trace_rsfc_echo",
    ):
        f = res[key]["flows"]
        has_dl = key not in ("umts_upload_alone", "umts_upload_alone_rsfc")
        has_ul = key != "umts_alone"
        um[key] = {
            "download_kbps": iv(key, "download", "steady") / 1e3 if has_dl else None,
            "download_rtt_p95_ms": f["download"]["rtt_p95_ms"] if has_dl else None,
            "upload_kbps": iv(key, "upload", "steady") / 1e3 if has_ul else None,
            "upload_rtt_mean_ms": f["upload"]["rtt_mean_ms"] if has_ul else None,
            "upload_timeouts": f["upload"]["timeouts"] if has_ul else None,
            "uplink_drops": res[key]["uplink_drops"],
        }
    d["umts"] = um
    return d


# ----- the report ----------------------------------------------------------------------


def _f(x: float | None, nd: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "unfinished"
    return f"{x:.{nd}f}"


def _x(a: float, b: float) -> str:
    """`a / b` as a factor."""
    return _f(a / b, 1) if b > 0 else "-"


SETTING = """\
Setting (`scenarios/rsfc/*.toml`): a server and a phone on a link of 7.2 Mb/s
down and 2.0 Mb/s up (the seed's testbed), 40 ms each way, 1000-packet queues
(the deep uplink buffer: ~6 s at 2 Mb/s); CUBIC senders; the phone's receive
buffer 256 KB, the server's 4 MiB. The upload starts at 5 s; throughputs are
goodput over the steady interval 20-60 s. RSFC runs at the server with the
slides' law (T = RTT_min; rwnd = rho x RTT_min above T, +1 MSS per RTT below)
and mobiflow's assumptions for what the seed leaves open (`owd` estimator, rho
over 500 ms, RTT_min over 10 s, MONITOR holding one RTT, the rho check at +10 %,
a first window of 10 segments: all listed under *assumed* in each summary).
Runs are deterministic (no random loss): one run per case."""

PAGES_SETTING = """\
Pages of 44 objects of 7475 bytes (Google's web metrics as the FLD_TCP slides cite them:
G. R. Moktan, "In the Interest of the Short: An approach for e2e congestion control",
talk slides, Aalto University, 2012; 320 KB average page,
7.3 KB average GET), 700-byte requests over 6 persistent connections, the main
document first, 2 s between pages, 1800 s. Page load time: first request to the
last byte of the last object read. Unfinished pages (still loading at the end) count
as infinite in the percentiles."""

CHANGES_SETTING = """\
An RSFC upload alone. Bandwidth change: uplink 2 Mb/s, 0.5 Mb/s from 30 s, 2 Mb/s
again from 60 s. Delay increase: uplink delay 40 ms, 240 ms from 30 s. *Basic* is
RSFC without the rho check and the monitor state (the paper's comparison); *without
the rebase* is full RSFC with `rebase_after = 0` (MONITOR without its delay-increase
rule, which is our guess).
Upload goodput in kb/s per interval. The seed shows both versions only as figures."""


def _download_tables(d: Mapping[str, Any]) -> list[Block]:
    dl = d["download"]
    a, c, r = dl["download_alone"], dl["download_upload"], dl["download_upload_rsfc"]
    head = (
        "case",
        "download kb/s",
        "paper kb/s (its abstract)",
        "download RTT ms (20-60 s mean)",
        "download RTT p95 ms",
        "upload kb/s",
        "upload RTT ms",
        "t_buff ms",
        "uplink queue (mean pkts)",
    )
    paper_c = f"{PAPER_DOWNLOAD_WITH_UPLOAD_KBPS:.0f} (one ISP: < {PAPER_ISP_BEFORE_KBPS:.0f})"
    rows: list[tuple[object, ...]] = [
        (
            "download alone",
            _f(a["download_kbps"]),
            f"{PAPER_DOWNLOAD_ALONE_KBPS:.0f}",
            _f(a["download_rtt_steady_ms"]),
            _f(a["download_rtt_p95_ms"]),
            "-",
            "-",
            "-",
            _f(a["uplink_queue_mean_packets"], 1),
        )
    ]
    for x, label, paper in (
        (c, "+ upload, plain TCP", paper_c),
        (r, "+ upload, RSFC", f"up to {PAPER_ISP_AFTER_KBPS:.0f} (one ISP)"),
    ):
        rows.append(
            (
                label,
                _f(x["download_kbps"]),
                paper,
                _f(x["download_rtt_steady_ms"]),
                _f(x["download_rtt_p95_ms"]),
                _f(x["upload_kbps"]),
                _f(x["upload_rtt_steady_ms"]),
                _f(x.get("t_buff_steady_ms")),
                _f(x["uplink_queue_mean_packets"], 1),
            )
        )
    for key, label in (
        ("download_upload_newreno", "+ upload, plain TCP (NewReno senders)"),
        ("download_upload_rsfc_newreno", "+ upload, RSFC (NewReno senders)"),
        ("download_upload_rsfc_echo", "+ upload, RSFC (`echo` estimator)"),
    ):
        x = dl[key]
        rows.append(
            (
                label,
                _f(x["download_kbps"]),
                "-",
                "-",
                _f(x["download_rtt_p95_ms"]),
                _f(x["upload_kbps"]),
                "-",
                "-",
                _f(x["uplink_queue_mean_packets"], 1),
            )
        )
    paper_x = PAPER_DOWNLOAD_ALONE_KBPS / PAPER_DOWNLOAD_WITH_UPLOAD_KBPS
    isp_x = PAPER_ISP_AFTER_KBPS / PAPER_ISP_BEFORE_KBPS
    return [
        Table(head, rows),
        "",
        f"The collapse: the download falls from {_f(a['download_kbps'])} to "
        f"{_f(c['download_kbps'])} kb/s ({_x(a['download_kbps'], c['download_kbps'])}x; "
        f"the paper {paper_x:.0f}x). With RSFC on the upload it gets "
        f"{_f(r['download_kbps'])} kb/s back ({_x(r['download_kbps'], c['download_kbps'])}x "
        f"plain TCP; the paper, for one ISP, {isp_x:.1f}x), while the upload keeps "
        f"{_f(r['upload_kbps'])} of {_f(c['upload_kbps'])} kb/s.",
    ]


def _pages_table(d: Mapping[str, Any]) -> list[Block]:
    head = (
        "case",
        "pages finished / started",
        "p10 s",
        "median s",
        "p90 s",
        "longest finished s",
        "< 60 s",
        "> 120 s",
        "paper (its abstract)",
    )
    rows = []
    for key, label, paper in (
        ("web_alone", "no upload", "-"),
        ("web_upload", "upload, plain TCP", f"> {PAPER_PAGE_WITHOUT_S:.0f} s"),
        ("web_upload_rsfc", "upload, RSFC", f"< {PAPER_PAGE_WITH_S:.0f} s, 90 % of the time"),
    ):
        p = d["pages"][key]
        rows.append(
            (
                label,
                f"{p['finished']} / {p['started']}",
                _f(p["p10_s"], 2),
                _f(p["p50_s"], 2),
                _f(p["p90_s"], 2),
                _f(p["max_finished_s"], 2),
                f"{_f(100 * p['frac_under_60s'])} %",
                f"{_f(100 * p['frac_over_120s'])} %",
                paper,
            )
        )
    up = d["pages_upload_kbps"]
    return [
        Table(head, rows),
        "",
        f"The upload's goodput meanwhile: {_f(up['web_upload'])} kb/s with plain TCP, "
        f"{_f(up['web_upload_rsfc'])} kb/s with RSFC.",
    ]


def _fairness_table(d: Mapping[str, Any]) -> list[Block]:
    fair = d["fairness"]
    head = (
        "case",
        "R1 kb/s",
        "R2 kb/s",
        "Jain (R1+R2)^2/(2(R1^2+R2^2))",
        "efficiency (R1+R2)/R_tcp",
        "mean RTT ms",
    )
    rows = []
    for key, label in (
        ("two_uploads_rsfc", "two RSFC uploads"),
        ("two_uploads_tcp", "two plain TCP uploads"),
    ):
        x = fair[key]
        rows.append(
            (
                label,
                _f(x["r1_kbps"]),
                _f(x["r2_kbps"]),
                _f(x["jain"], 3),
                _f(x["efficiency"], 3),
                _f(x["rtt_mean_ms"]),
            )
        )
    return [
        "Both from the phone (up2 starts 2 s after up1), steady interval 10-60 s; R_tcp is",
        f"one plain TCP upload alone ({_f(fair['r_tcp_kbps'])} kb/s; one RSFC upload alone: "
        f"{_f(fair['r_rsfc_alone_kbps'])} kb/s). The seed plots both metrics without numbers.",
        "",
        Table(head, rows),
    ]


def _changes_tables(d: Mapping[str, Any]) -> list[Block]:
    ch = d["changes"]
    bw_rows: list[tuple[object, ...]] = [
        (
            label,
            _f(x["before"]),
            _f(x["low"]),
            _f(x["recover"]),
            _f(x["after"]),
            _f(x["rtt_p95_ms"]),
        )
        for label, x in (
            ("bandwidth change, full RSFC", ch["bandwidth_change"]),
            ("bandwidth change, basic", ch["bandwidth_change_basic"]),
        )
    ]
    di_rows: list[tuple[object, ...]] = [
        (label, _f(x["before"]), _f(x["first5s"]), _f(x["after"]), _f(x["rtt_p95_ms"]))
        for label, x in (
            ("delay increase, full RSFC", ch["delay_increase"]),
            ("delay increase, full RSFC without the rebase", ch["delay_increase_no_rebase"]),
            ("delay increase, basic", ch["delay_increase_basic"]),
        )
    ]
    return [
        CHANGES_SETTING,
        "",
        Table(
            (
                "case",
                "before (10-30 s)",
                "low (30-60 s)",
                "recover (60-65 s)",
                "after (60-90 s)",
                "RTT p95 ms",
            ),
            bw_rows,
        ),
        "",
        Table(
            (
                "case",
                "before (10-30 s)",
                "first 5 s after (30-35 s)",
                "after (30-60 s)",
                "RTT p95 ms",
            ),
            di_rows,
        ),
    ]


def _umts_table(d: Mapping[str, Any]) -> list[Block]:
    head = (
        "case",
        "download kb/s",
        "download RTT p95 ms",
        "upload kb/s",
        "upload mean RTT ms",
        "upload RTOs",
        "uplink drops",
    )
    rows = []
    for key, label in (
        ("umts_alone", "download alone"),
        ("umts_upload_alone", "upload alone, plain TCP"),
        ("umts_upload_alone_rsfc", "upload alone, RSFC"),
        ("umts_trace", "+ upload, plain TCP"),
        ("umts_trace_rsfc", "+ upload, RSFC"),
        ("umts_trace_rsfc_echo", "+ upload, RSFC (`echo`)"),
    ):
        x = d["umts"][key]
        rows.append(
            (
                label,
                _f(x["download_kbps"]),
                _f(x["download_rtt_p95_ms"]),
                _f(x["upload_kbps"]),
                _f(x["upload_rtt_mean_ms"]),
                "-" if x["upload_timeouts"] is None else x["upload_timeouts"],
                x["uplink_drops"],
            )
        )
    return [
        "Mean capacity 2.02 Mb/s down, 0.94 Mb/s up; download from 0 s, upload from 5 s,",
        "steady interval 20-300 s. The *alone* rows move the other flow to 299 s.",
        "",
        Table(head, rows),
    ]


def page(d: Mapping[str, Any], figures: Sequence[str]) -> list[Block]:
    """The report's blocks."""
    lines: list[Block] = [
        Heading(1, "RSFC, receiver-side flow control of the 3G/HSPA uplink buffer: reproduction"),
        "",
        SETTING,
        "",
        "Where the paper's numbers come from: the seed is a slide deck whose figures carry "
        "no readable numbers, so the 'paper' columns quote the paper's abstract (download "
        "2,000 kb/s alone, 100 kb/s under an upload, under 400 and up to 1,400 kb/s for "
        "one ISP without and with RSFC; page loads over 2 min, and under 1 min 90 % of "
        "the time with RSFC).",
        "",
        Heading(2, "Download with a concurrent upload"),
        "",
        *_download_tables(d),
        "",
        Heading(2, "Web pages during an upload"),
        "",
        PAGES_SETTING,
        "",
        *_pages_table(d),
        "",
        Heading(2, "Two RSFC uploads competing"),
        "",
        *_fairness_table(d),
        "",
        Heading(2, "Changes of the network"),
        "",
        *_changes_tables(d),
        "",
        Heading(2, "The same phone on a real 3G link (T-Mobile UMTS traces, driving)"),
        "",
        *_umts_table(d),
        "",
        Heading(2, "Figures"),
        "",
    ]
    for fig in figures:
        lines += [Figure(fig), ""]
    lines += explanation(d)
    return lines


def explanation(d: Mapping[str, Any]) -> list[Block]:
    dl = d["download"]
    a, c, r = dl["download_alone"], dl["download_upload"], dl["download_upload_rsfc"]
    nr = dl["download_upload_newreno"]
    pu, pr = d["pages"]["web_upload"], d["pages"]["web_upload_rsfc"]
    um = d["umts"]
    ua, uar = um["umts_upload_alone"], um["umts_upload_alone_rsfc"]
    bw, bwb = d["changes"]["bandwidth_change"], d["changes"]["bandwidth_change_basic"]
    di, dib = d["changes"]["delay_increase"], d["changes"]["delay_increase_basic"]
    din = d["changes"]["delay_increase_no_rebase"]
    return [
        Heading(2, "What agrees, what differs, and why"),
        "",
        "* **Absolute rates.** The simulated link gives the nominal 7.2 Mb/s, so the "
        f"download alone reaches {_f(a['download_kbps'])} kb/s where the paper measured "
        "~2,000 kb/s on live networks (shared cells, real radio). The ratios are what to "
        "compare.",
        "* **The collapse.** Reproduced: the upload keeps the uplink buffer at "
        f"{_f(c['uplink_queue_mean_packets'])} packets on average, the download's ACKs wait "
        f"behind them (RTT {_f(c['download_rtt_steady_ms'])} ms against "
        f"{_f(a['download_rtt_steady_ms'])} ms alone) and its 256 KB window yields "
        f"{_f(c['download_kbps'])} kb/s. The factor "
        f"({_x(a['download_kbps'], c['download_kbps'])}x) "
        "depends on the depth of the uplink buffer, the phone's receive buffer and the "
        "upload's congestion control, none of which the seed gives: CUBIC's 30 % back-off "
        "after a tail drop lets the queue, and so the RTT, dip between drops; with NewReno "
        f"senders the download gets {_f(nr['download_kbps'])} kb/s, "
        f"{_x(a['download_kbps'], nr['download_kbps'])}x less than alone.",
        f"* **RSFC.** It holds t_buff near RTT_min (mean {_f(r['t_buff_steady_ms'])} ms; "
        "RTT_min includes the download's standing downlink queue), the uplink queue at "
        f"{_f(r['uplink_queue_mean_packets'], 1)} packets, and the download gets "
        f"{_f(r['download_kbps'])} kb/s back at an RTT of {_f(r['download_rtt_steady_ms'])} ms, "
        f"with the upload at {_f(r['upload_kbps'])} kb/s: the direction and size of the "
        "paper's result (less RTT, much more download, little impact upstream). The upload "
        "starts from a 10-segment window and grows one MSS per RTT, so RSFC first clamps "
        "~17 s after the upload starts (figure).",
        "* **Pages.** During a plain TCP upload, requests queue ~6 s behind the upload and "
        "some are dropped at the full uplink buffer, then wait out retransmission timeouts "
        f"backed off from a multi-second RTT: median {_f(pu['p50_s'], 1)} s, "
        f"{pu['unfinished']} page(s) unfinished at the end, {_f(100 * pu['frac_over_120s'])} % "
        f"over 2 min (the paper: > 2 min). With RSFC the median is {_f(pr['p50_s'], 2)} s "
        f"and {_f(100 * pr['frac_under_60s'])} % load in under a minute (the paper: < 1 min "
        "90 % of the time). Our pages load faster than the paper's: the page model is simple "
        "(no DNS, no scripts, average-sized objects) and the link ideal.",
        "* **Bandwidth change.** Both versions clamp to the lower rate at the drop; at the "
        "rise the rho check moves RSFC to SLOW as the queue drains: "
        f"{_f(bw['recover'])} kb/s over the first 5 s against {_f(bwb['recover'])} kb/s "
        "without it. Growth in SLOW is one MSS per RTT (assumed), so both recover within "
        "seconds on this short path.",
        "* **Delay increase.** The 200 ms added to the uplink looks like queueing to the "
        't_buff estimator. The seed says only "large increase: monitor state"; our MONITOR '
        "(assumed form) takes two holds in a row in which t_buff stays within a tenth of "
        "its value at the clamp, under the clamped window, for a longer path and restarts "
        "RTT_min and min d (`rebase_after`; a real queue would shrink, or grow if the rate "
        "fell, so the bandwidth change does not trigger it). "
        f"With it the upload gets {_f(di['first5s'])} kb/s over the next 5 s and "
        f"{_f(di['after'])} kb/s over 30 s; without the rebase {_f(din['first5s'])} / "
        f"{_f(din['after'])} kb/s, and the basic version {_f(dib['first5s'])} / "
        f"{_f(dib['after'])} kb/s: both keep clamping to rho x the old RTT_min, which "
        "lowers rho further, until the 10 s RTT_min window forgets the old base delay. The "
        "seed compares the two versions in figures whose content its text does not carry "
        '("without the two methods", "with the two methods"), so there is nothing to '
        "set these numbers against; the mechanism that makes the difference here is our "
        "guess.",
        "* **UMTS trace.** Plain TCP collapses the download as on the HSPA link "
        f"({_f(um['umts_trace']['download_kbps'])} kb/s against "
        f"{_f(um['umts_alone']['download_kbps'])} alone); RSFC restores it "
        f"({_f(um['umts_trace_rsfc']['download_kbps'])} kb/s) but starves the upload "
        f"({_f(um['umts_trace_rsfc']['upload_kbps'])} kb/s against "
        f"{_f(um['umts_trace']['upload_kbps'])}). The download fills the downlink buffer "
        "(its 256 KB window is ~1 s at 2 Mb/s), so the upload's ACKs wait there too, by an "
        "amount that varies with the trace; RTT_min, a minimum over 10 s, catches the "
        "moments the downlink queue is short, and rwnd = rho x RTT_min is then below the "
        "upload's real bandwidth-delay product: rho falls, the next clamp is smaller still. "
        f"Without the download the RSFC upload gets {_f(uar['upload_kbps'])} kb/s (plain "
        f"TCP {_f(ua['upload_kbps'])} kb/s at a mean RTT of {_f(ua['upload_rtt_mean_ms'])} ms "
        f"against RSFC's {_f(uar['upload_rtt_mean_ms'])} ms): the bursty uplink trace also "
        "makes t_buff exceed T often. The slides' law assumes an uncongested ACK path; the "
        "paper's live networks evidently had one, or a different RTT_min, which the seed "
        "does not describe.",
    ]


# ----- figures -------------------------------------------------------------------------


def figures(res: Mapping[str, dict[str, Any]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    made: list[str] = []

    def flow_series(key: str, flow: str) -> pl.DataFrame:
        frame = join_series(mobiflow.read_series(res[key]["series_dir"]), "tcp")
        return frame.filter(pl.col("flow") == flow)

    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    for key, label in (
        ("download_alone", "download alone"),
        ("download_upload", "+ upload, plain TCP"),
        ("download_upload_rsfc", "+ upload, RSFC"),
    ):
        s = flow_series(key, "download")
        axes[0].plot(s["time_s"], s["srtt_ms"], label=label)
    axes[0].set_ylabel("download SRTT (ms)")
    axes[0].set_yscale("log")
    axes[0].legend()
    for key, label in (("download_upload", "plain TCP"), ("download_upload_rsfc", "RSFC")):
        s = flow_series(key, "upload")
        axes[1].plot(s["time_s"], s["rwnd_bytes"] / 1024, label=f"upload rwnd, {label}")
    axes[1].set_ylabel("advertised rwnd (KiB)")
    axes[1].set_yscale("log")
    axes[1].legend()
    s = flow_series("download_upload_rsfc", "upload")
    axes[2].plot(s["time_s"], s["t_buff_ms"], label="RSFC t_buff")
    axes[2].plot(s["time_s"], s["srtt_ms"], label="upload SRTT (RSFC)")
    axes[2].set_ylabel("ms")
    axes[2].set_xlabel("time (s)")
    axes[2].legend()
    fig.suptitle("Download with a concurrent upload: RTT and the upload's rwnd")
    made.append(framework.save_figure(fig, out / "fig_download.png").name)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (
        ("web_alone", "no upload"),
        ("web_upload", "upload, plain TCP"),
        ("web_upload_rsfc", "upload, RSFC"),
    ):
        f = res[key]["flows"]["web"]
        times = sorted(float(x) for x in f["page_load_times_s"])
        n = max(1, int(f["pages_started"]))
        ys = [(i + 1) / n for i in range(len(times))]
        ax.step(times, ys, where="post", label=f"{label} ({len(times)}/{n} pages)")
    ax.axvline(60, color="grey", linestyle=":")
    ax.axvline(120, color="grey", linestyle="--")
    ax.set_xscale("log")
    ax.set_xlabel("page load time (s)")
    ax.set_ylabel("CDF (of pages started)")
    ax.legend()
    ax.set_title("Page load time; dotted 1 min, dashed 2 min (the paper's marks)")
    made.append(framework.save_figure(fig, out / "fig_pages.png").name)

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col")
    for col, (full, basic, title) in enumerate(
        (
            ("bandwidth_change", "bandwidth_change_basic", "uplink 2 -> 0.5 -> 2 Mb/s"),
            ("delay_increase", "delay_increase_basic", "uplink delay 40 -> 240 ms at 30 s"),
        )
    ):
        for key, label in ((full, "full RSFC"), (basic, "basic")):
            s = flow_series(key, "upload")
            axes[0][col].plot(s["time_s"], s["goodput_bps"] / 1e6, label=label)
            axes[1][col].plot(s["time_s"], s["rwnd_bytes"] / 1024, label=label)
        axes[0][col].set_title(title)
        axes[0][col].set_ylabel("upload goodput (Mb/s)")
        axes[1][col].set_ylabel("advertised rwnd (KiB)")
        axes[1][col].set_xlabel("time (s)")
        axes[0][col].legend()
    made.append(framework.save_figure(fig, out / "fig_changes.png").name)
    return made


# ----- Linux TCP -------------------------------------------------------------------------

#: The Linux runs: the scenarios behind the claims on the TCP of today's phones and servers
#: (``profile = "linux"``: IW10, SACK and timestamps, 1448-byte segments, RTO minimum
#: 200 ms, the kernel's delayed ACKs and loss recovery as the profile models it), keeping
#: what the scenarios set themselves (CUBIC, the buffers); RSFC acts on that TCP unchanged.
LINUX_SETS = framework.LINUX_SETS
LINUX_VARIANTS: tuple[framework.Variant, ...] = tuple(
    replace(v, sets={**v.sets, **LINUX_SETS}, keep=False)
    for v in VARIANTS
    if v.key
    in (
        "download_alone",
        "download_upload",
        "download_upload_rsfc",
        "web_upload",
        "web_upload_rsfc",
        "umts_trace",
        "umts_trace_rsfc",
    )
)


def derive_linux(res: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The numbers of the claims from the Linux runs (the shape :func:`derive` gives)."""

    def kbps(key: str, flow: str) -> float:
        return float(res[key]["flows"][flow]["intervals"]["steady"]) / 1e3

    download: dict[str, Any] = {
        "download_alone": {"download_kbps": kbps("download_alone", "download")}
    }
    for key in ("download_upload", "download_upload_rsfc"):
        download[key] = {
            "download_kbps": kbps(key, "download"),
            "upload_kbps": kbps(key, "upload"),
        }
    return {
        "download": download,
        "pages": {
            key: page_stats(res[key]["flows"]["web"]) for key in ("web_upload", "web_upload_rsfc")
        },
        "umts": {
            key: {"download_kbps": kbps(key, "download"), "upload_kbps": kbps(key, "upload")}
            for key in ("umts_trace", "umts_trace_rsfc")
        },
    }


def linux_table(linux: Mapping[str, Any]) -> list[Block]:
    """The claims' numbers on Linux TCP."""
    d = linux["derived"]
    dl, pages, um = d["download"], d["pages"], d["umts"]
    rows = [
        ["download alone", _f(dl["download_alone"]["download_kbps"]), "-", "-"],
        *[
            [
                f"download with {'an RSFC' if 'rsfc' in key else 'a plain TCP'} upload",
                _f(dl[key]["download_kbps"]),
                _f(dl[key]["upload_kbps"]),
                "-",
            ]
            for key in ("download_upload", "download_upload_rsfc")
        ],
        *[
            [
                f"web pages with {'an RSFC' if 'rsfc' in key else 'a plain TCP'} upload",
                "-",
                "-",
                f"{float(pages[key]['frac_under_60s']):.0%}",
            ]
            for key in ("web_upload", "web_upload_rsfc")
        ],
        *[
            [
                f"UMTS trace, {'RSFC' if 'rsfc' in key else 'plain TCP'} upload",
                _f(um[key]["download_kbps"]),
                _f(um[key]["upload_kbps"]),
                "-",
            ]
            for key in ("umts_trace", "umts_trace_rsfc")
        ],
    ]
    return [
        Heading(2, "With Linux TCP"),
        "",
        "The scenarios behind the claims with the TCP of today's phones and servers "
        '(`profile = "linux"`: IW10, SACK and timestamps, 1448-byte segments, RTO minimum '
        "200 ms, the kernel's delayed ACKs and loss recovery as the profile models it), "
        "keeping what each scenario sets itself (CUBIC, the buffers); RSFC acts on that "
        "TCP unchanged. Steady-state rates (20-60 s):",
        "",
        Table(
            ["case", "download kb/s", "upload kb/s", "pages under 60 s"],
            rows,
            compact_rule=True,
        ),
        "",
    ]


# ----- main ----------------------------------------------------------------------------


def run(opts: Options) -> Report:
    """Run every variant, derive the tables' numbers, draw the figures."""
    res = run_all(VARIANTS, opts.out, opts.jobs)
    d = derive(res)
    figs = figures(res, opts.out) if opts.figures else []
    data: dict[str, Any] = {"runs": res, "derived": d}
    blocks = page(d, figs)
    if opts.wants("linux"):
        linux_res = run_all(LINUX_VARIANTS, opts.out, opts.jobs)
        data[claims.LINUX] = {"runs": linux_res, "derived": derive_linux(linux_res)}
        blocks += linux_table(data[claims.LINUX])
    return Report(
        REPRODUCTION.key,
        blocks,
        framework.json_safe(data),
        json_options={"indent": 2, "sort_keys": True},
        json_newline=True,
    )


def paper_claims(results: Mapping[str, Any]) -> list[Claim]:
    """The abstract's claims against ``results.json``."""
    return claims.rsfc_claims(
        results,
        {
            "alone": PAPER_DOWNLOAD_ALONE_KBPS,
            "with_upload": PAPER_DOWNLOAD_WITH_UPLOAD_KBPS,
            "isp_after": PAPER_ISP_AFTER_KBPS,
            "page_without_s": PAPER_PAGE_WITHOUT_S,
            "page_with_s": PAPER_PAGE_WITH_S,
        },
    )


REPRODUCTION = Reproduction(
    key="rsfc",
    title="RSFC: receiver-side flow control of the 3G uplink buffer",
    run=run,
    parts=("linux",),
    claims=paper_claims,
)


main = REPRODUCTION.main
"""``python -m mobiflow.repro.rsfc --help`` for its flags."""

if __name__ == "__main__":
    sys.exit(main())
