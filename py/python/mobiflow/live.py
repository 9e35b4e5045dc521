"""Live mode: a scenario's link emulated in real time for the real Linux TCP stack.

``mobiflow live SCENARIO -- COMMAND`` and ``mobiflow live compare SCENARIO`` (see
``docs/live.md``). The emulator is the Rust program ``mobiflow-live`` (crate
``crates/mobiflow-live``), which forwards packets between two network namespaces
through the simulator's own link model; this module finds it, runs it, and for
``compare`` runs the scenario's bulk TCP flows through it with the kernel's TCP set
like the scenario's, runs the same scenario in the simulator, and sets the two side by
side.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobiflow import _resources, api

__all__ = [
    "LiveUnavailable",
    "compare",
    "find_binary",
    "kernel_cc",
    "preflight",
    "run_command",
]

BINARY = "mobiflow-live"
DRIVER = Path(__file__).with_name("_livedriver.py")
REPO = Path(__file__).resolve().parents[3]
"""The source tree (``py/python/mobiflow`` -> repo) when installed in development mode."""

CCS = ("reno", "cubic", "bbr")
SIM_CC = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
"""Kernel congestion control -> the simulator's. Linux's ``reno`` is Reno's AIMD with
SACK-based loss recovery (RFC 6675 with PRR, RFC 6937): the simulator's ``newreno``
with the ``rfc`` profile's ``recovery = "sack"``. A simulator without ``bbr`` refuses
the scenario; :func:`compare` then runs the kernel side alone and says so."""

TSHARK = "tshark"

KERNEL_COUNTERS = (
    "TCPTimeouts",
    "TCPLossUndo",
    "TCPSpuriousRTOs",
    "TCPLossProbes",
    "TCPDSACKRecv",
    "TCPFastRetrans",
    "TCPLostRetransmit",
)
"""The sender's namespace counters (``/proc/net/netstat``) noted with a comparison:
RTOs (``tcp_retransmit_timer``), RTO recoveries undone because the timestamps or
DSACKs showed nothing was lost (``tcp_try_undo_loss``), RTOs F-RTO found spurious
(RFC 5682, ``tcp_process_loss``), tail loss probes, DSACKs received, fast
retransmissions and retransmissions lost again."""


class LiveUnavailable(Exception):
    """This machine cannot run the emulation (not Linux, not root, no TUN, no binary)."""


def find_binary() -> Path:
    """``$MOBIFLOW_LIVE``, the program a wheel carries, ``mobiflow-live`` on PATH, or
    the source tree's build."""
    env = os.environ.get("MOBIFLOW_LIVE")
    if env:
        return Path(env)
    shipped = _resources.BIN / BINARY
    if shipped.is_file() and os.access(shipped, os.X_OK):
        return shipped
    on_path = shutil.which(BINARY)
    if on_path:
        return Path(on_path)
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / BINARY
        if p.is_file():
            return p
    raise LiveUnavailable(
        f"cannot find the {BINARY} program: run `make setup` (or `cargo build --release "
        f"-p mobiflow-live`) in the source tree, install a wheel built by `make wheel`, "
        f"or set MOBIFLOW_LIVE to its path"
    )


def preflight() -> Path:
    """The emulator's path if this machine can run it; else :class:`LiveUnavailable`
    with the reason."""
    if not sys.platform.startswith("linux"):
        raise LiveUnavailable("live mode needs Linux (TUN devices and network namespaces)")
    binary = find_binary()
    r = subprocess.run([os.fspath(binary), "check"], capture_output=True, text=True)
    if r.returncode != 0:
        raise LiveUnavailable(r.stderr.strip().removeprefix("error: "))
    return binary


def cleanup() -> str:
    """Remove the namespaces and devices that emulators no longer running left behind
    (after a ``kill -9``), with whatever still runs in them; the emulator's one-line
    account of what it removed."""
    binary = preflight()
    r = subprocess.run([os.fspath(binary), "cleanup"], capture_output=True, text=True)
    if r.returncode != 0:
        raise LiveUnavailable(r.stderr.strip().removeprefix("error: "))
    return r.stdout.strip()


def run_command(
    scenario: os.PathLike[str] | str,
    command: list[str],
    sets: list[tuple[str, str]] | None = None,
    side: str = "b",
    report: os.PathLike[str] | str | None = None,
    extra: list[str] | None = None,
) -> int:
    """Run ``command`` in namespace ``side`` behind the emulated link; its status."""
    binary = preflight()
    argv = [os.fspath(binary), "run", os.fspath(scenario), "--in", side]
    for k, v in sets or []:
        argv += ["--set", f"{k}={v}"]
    if report is not None:
        argv += ["--report", os.fspath(report)]
    argv += extra or []
    if command:
        argv += ["--", *command]
    return run_emulator(argv, binary)


INTERRUPT_WAIT_S = 0.8
"""How long an interrupted emulator may take to stop in order before it is killed."""


def run_emulator(argv: list[str], binary: Path, **popen: Any) -> int:
    """Run the emulator (``argv``) to its end; its exit status.

    Ctrl-C here is passed on to the emulator as SIGINT (from a terminal it has one
    already), whose orderly stop ends the command and deletes its namespaces; one that
    has not ended after :data:`INTERRUPT_WAIT_S` is killed and what it left is removed
    as ``mobiflow live cleanup`` does. The :class:`KeyboardInterrupt` then goes on.
    (``subprocess.run`` would SIGKILL the emulator a quarter second after Ctrl-C,
    leaving its namespaces behind.)"""
    proc = subprocess.Popen(argv, **popen)
    try:
        while proc.poll() is None:
            time.sleep(0.02)
    except KeyboardInterrupt:
        _stop_interrupted(proc, binary)
        raise
    return proc.returncode


def _stop_interrupted(proc: subprocess.Popen[Any], binary: Path) -> None:
    deadline = time.monotonic() + INTERRUPT_WAIT_S
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: same stop
            time.sleep(0.01)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        subprocess.run([os.fspath(binary), "cleanup"], capture_output=True, check=False)


# --------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------


def kernel_cc(cc: str) -> str:
    """The kernel's name for a scenario's congestion control (reno, cubic or bbr)."""
    if cc in ("reno", "newreno"):
        return "reno"
    if cc in ("cubic", "bbr"):
        return cc
    raise ValueError(f'congestion control "{cc}" has no Linux counterpart here (reno, cubic, bbr)')


def _duration_s(text: str | float) -> float:
    if isinstance(text, (int, float)):
        return float(text)
    t = text.strip()
    for suffix, k in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0), ("min", 60.0)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * k
    return float(t)


def _tcp_setting(doc: dict[str, Any], flow_name: str, key: str) -> Any:
    """A TCP setting of a flow as written: ``[flows.tcp]``, then ``[tcp]``; None if unset."""
    for f in doc.get("flows", []):
        if f.get("name") == flow_name:
            v = f.get("tcp", {}).get(key)
            if v is not None:
                return v
    return doc.get("tcp", {}).get(key)


def initial_window_segments(doc: dict[str, Any], flow: str, mss: int) -> int:
    """The flow's initial window in segments (RFC 3390 / RFC 6928 formulas)."""
    iw = _tcp_setting(doc, flow, "initial_window")
    profile = doc.get("tcp", {}).get("profile", "rfc")
    if iw is None:
        iw = {"ns2": 2, "linux": 10}.get(profile, "rfc3390")
    if isinstance(iw, int):
        return iw
    if iw == "rfc6928":
        return min(10 * mss, max(2 * mss, 14600)) // mss
    return min(4 * mss, max(2 * mss, 4380)) // mss  # RFC 3390 section 1


def min_rto_ms(doc: dict[str, Any], flow: str) -> float:
    """The flow's minimum RTO in ms (RFC 6298 2.4: 1 s; the ns2 and linux profiles: 200 ms)."""
    v = _tcp_setting(doc, flow, "min_rto")
    if v is None:
        profile = doc.get("tcp", {}).get("profile", "rfc")
        return 200.0 if profile in ("ns2", "linux") else 1000.0
    return _duration_s(v) * 1e3


@dataclass
class FlowPlan:
    name: str
    src: str  # "a" or "b"
    dst: str
    port: int
    cc: str
    rcv_buf: int
    mss: int
    iw: int
    min_rto_ms: float
    start_s: float
    stop_s: float
    sack: bool
    timestamps: bool
    recv_out: str = ""
    send_out: str = ""


def json_fields(obj: object, *names: str) -> dict[str, Any]:
    """``{name: obj.name}`` for each of ``names``, in order: the fields a ``to_json``
    copies as they are."""
    return {name: getattr(obj, name) for name in names}


@dataclass
class Comparison:
    """Everything ``compare`` measured; ``rows`` is the side-by-side table."""

    scenario: str
    cc: str
    out: Path
    valid: bool
    invalid_reasons: list[str]
    rows: list[tuple[str, str, float | None, float | None]] = field(default_factory=list)
    """``(flow, metric, kernel, simulator)``."""
    figure: Path | None = None
    notes: list[str] = field(default_factory=list)
    sim_error: str | None = None
    """Why the simulator could not run the case (e.g. "simulator has no bbr: ..."); its
    column is then empty."""

    def to_json(self) -> dict[str, Any]:
        return {
            **json_fields(self, "scenario", "cc", "valid", "invalid_reasons", "sim_error"),
            "rows": [
                {"flow": f, "metric": m, "kernel": k, "simulator": s} for f, m, k, s in self.rows
            ],
            "figure": None if self.figure is None else os.fspath(self.figure),
            "notes": self.notes,
        }


def plan_flows(
    desc: dict[str, Any], doc: dict[str, Any], link_index: int, cc: str
) -> list[FlowPlan]:
    """The scenario's bulk TCP flows between the emulated link's two ends."""
    link = desc["links"][link_index]
    side = {link["a"]: "a", link["b"]: "b"}
    plans: list[FlowPlan] = []
    duration = float(desc["duration_s"])
    for i, f in enumerate(desc["flows"]):
        tr = f["transport"]
        if tr.get("protocol") != "tcp":
            continue
        app = f.get("app", {})
        kind = app.get("kind", app.get("type")) if isinstance(app, dict) else app
        if kind != "bulk":
            continue
        if f["src"] not in side or f["dst"] not in side:
            raise ValueError(
                f'flow "{f["name"]}" runs {f["src"]} -> {f["dst"]}, not between the emulated '
                f"link's ends ({link['a']}, {link['b']})"
            )
        reader = f.get("reader", {})
        rkind = reader.get("kind", reader.get("type")) if isinstance(reader, dict) else reader
        if rkind not in (None, "greedy"):
            raise ValueError(
                f'flow "{f["name"]}": reader "{rkind}": live compare reads greedily only'
            )
        mss = int(tr["mss_bytes"])
        stop = f.get("stop_s")
        plans.append(
            FlowPlan(
                name=f["name"],
                src=side[f["src"]],
                dst=side[f["dst"]],
                port=5201 + i,
                cc=cc,
                rcv_buf=int(tr["rcv_buf_bytes"]),
                mss=mss,
                iw=initial_window_segments(doc, f["name"], mss),
                min_rto_ms=min_rto_ms(doc, f["name"]),
                start_s=float(f["start_s"]),
                stop_s=duration if stop is None else min(float(stop), duration),
                sack=bool(tr["sack"]),
                timestamps=bool(tr["timestamps"]),
            )
        )
    if not plans:
        raise ValueError("the scenario has no bulk TCP flow to compare")
    return plans


def _bytes_at(samples: list[list[float]], t: float) -> float:
    """Bytes read by time ``t`` (linear between samples)."""
    if not samples or t <= samples[0][0]:
        return 0.0 if not samples else float(samples[0][1])
    for (t0, b0), (t1, b1) in itertools.pairwise(samples):
        if t0 <= t <= t1:
            return b0 if t1 == t0 else b0 + (b1 - b0) * (t - t0) / (t1 - t0)
    return float(samples[-1][1])


def _p95(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]


def _sim_error(cc: str | None, err: Exception) -> str | None:
    """ "simulator has no bbr: ..." when the simulator refused ``cc`` itself (its error
    names the congestion control), else None: any other error is the scenario's."""
    msg = str(err).splitlines()[0]
    if cc is not None and f'"{SIM_CC[cc]}"' in msg and "congestion control" in msg:
        head, sep, rest = msg.partition(".toml: ")  # the file's path: said elsewhere
        return f"simulator has no {cc} ({rest if sep else head})"
    return None


def count_spurious(pcap: Path, dst_port: int) -> int | None:
    """Segments towards ``dst_port`` that tshark marks as spurious retransmissions
    (``tcp.analysis.spurious_retransmission``: data the receiver had already
    acknowledged, seen at the receiver's side), or None without tshark or capture."""
    tshark = shutil.which(TSHARK)
    if tshark is None or not pcap.is_file():
        return None
    filt = f"tcp.analysis.spurious_retransmission && tcp.dstport == {dst_port}"
    argv = [tshark, "-n", "-r", os.fspath(pcap), "-Y", filt, "-T", "fields", "-e", "frame.number"]
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return None
    return sum(1 for line in r.stdout.splitlines() if line.strip())


def compare(
    scenario: os.PathLike[str] | str,
    cc: str | None = None,
    sets: list[tuple[str, str]] | None = None,
    out: os.PathLike[str] | str | None = None,
    link: str | None = None,
    log: Any = None,
    capture: bool = False,
    align_start: bool = False,
) -> Comparison:
    """Run the scenario's bulk TCP flows through the emulated link with the kernel's
    TCP, and the same scenario in the simulator; compare them.

    ``cc`` (``reno``, ``cubic`` or ``bbr``) replaces every compared flow's congestion
    control (``None``: each flow's own, which must be one of those). If the simulator
    refuses it (it has no such congestion control), the kernel side runs alone and
    :attr:`Comparison.sim_error` says why. ``capture`` records packet captures at each
    receiver (the kernel's on its TUN device with ``dumpcap``, the simulator's
    ``[measure.capture]``) to count spurious retransmissions with tshark.
    ``align_start`` starts each simulated flow when the kernel's flow sent its SYN (the
    kernel's flows start ~0.6 s late: programs starting in the namespaces) and
    measures both flows' lives from there, so that a late start does not count
    against the kernel's goodput; the kernel then runs first. Raises
    :class:`LiveUnavailable` if the machine cannot run the emulation,
    :class:`mobiflow.ScenarioError` for a wrong scenario and ``ValueError`` for one
    that cannot be compared.
    """
    from mobiflow import ScenarioError
    from mobiflow.scenario import Scenario

    say = log or (lambda msg: print(msg, file=sys.stderr))
    binary = preflight()
    path = Path(scenario)
    sets = list(sets or [])
    desc = api.validate(path, set=sets)
    doc = Scenario.load(path, set=sets).to_dict()
    names = [ln["name"] for ln in desc["links"]]
    if link is None:
        if len(names) != 1:
            raise ValueError(f"the scenario has {len(names)} links; name one with link=")
        li = 0
    else:
        if link not in names:
            raise ValueError(f'no link named "{link}"')
        li = names.index(link)
    # One congestion control for both: the kernel's name and the simulator's.
    cc_sets: list[tuple[str, str]] = []
    sim_error: str | None = None
    if cc is not None:
        if cc not in CCS:
            raise ValueError(f'--cc "{cc}": choose one of {", ".join(CCS)}')
        for f in desc["flows"]:
            if f["transport"].get("protocol") == "tcp":
                cc_sets.append((f"flows.{f['name']}.cc", SIM_CC[cc]))
        try:
            desc = api.validate(path, set=sets + cc_sets)
        except ScenarioError as e:
            sim_error = _sim_error(cc, e)
            if sim_error is None:
                raise
            say(f"sim: {sim_error}: the kernel side runs alone")
            cc_sets = []
    plans = plan_flows(desc, doc, li, "")
    by_name = {f["name"]: f for f in desc["flows"]}
    for p in plans:
        p.cc = kernel_cc(cc if cc is not None else by_name[p.name]["transport"]["cc"])
    label = cc or "-".join(sorted({p.cc for p in plans}))
    out_dir = Path(out) if out is not None else Path("out/live") / f"{desc['scenario']}-{label}"
    out_dir.mkdir(parents=True, exist_ok=True)
    out_abs = out_dir.resolve()
    for p in plans:
        p.recv_out = os.fspath(out_abs / f"kernel_recv_{p.name}.json")
        p.send_out = os.fspath(out_abs / f"kernel_send_{p.name}.json")
        for f in (p.recv_out, p.send_out):
            Path(f).unlink(missing_ok=True)
    receivers = sorted({p.dst for p in plans})
    kernel_pcap = {s: out_abs / f"kernel_{s}.pcap" for s in receivers}

    live, returncode = _kernel_run(
        binary,
        path,
        desc,
        plans,
        sets + cc_sets,
        names[li],
        out_abs,
        label,
        {s: os.fspath(kernel_pcap[s]) for s in receivers} if capture else {},
        say,
    )
    if returncode != 0:
        say(f"warning: the live run's command exited with status {returncode}")

    kernel: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for p in plans:
        try:
            kernel[p.name] = (
                json.loads(Path(p.send_out).read_text()),
                json.loads(Path(p.recv_out).read_text()),
            )
        except OSError as e:
            raise RuntimeError(f"flow {p.name}: the kernel run left no results ({e})") from e
    # The simulator's Linux receive buffer takes the part of the buffer that is window
    # as the kernel measured it on the TUN device (payload / skb truesize, 200/256
    # there; the simulator's default is the kernel's starting value, 1/2): it decides
    # how far the first windows can grow, and with them the quick ACKs
    # (`tcp_grow_window`) that Linux's HyStart sees as an ACK train.
    ratios = _scaling_ratios(kernel, by_name)
    ratio_sets = [(f"flows.{name}.linux.scaling_ratio", repr(r)) for name, r in ratios.items()]
    for name, r in ratios.items():
        say(f"sim: {name}: the kernel's measured scaling ratio {r:g}")
    starts: list[tuple[str, str]] = []
    if align_start:
        for p in plans:
            syn = kernel[p.name][0].get("syn_s")
            if syn is not None and syn > p.start_s:
                p.start_s = round(float(syn), 3)
                starts.append((f"flows.{p.name}.start", f"{p.start_s * 1e3:.0f}ms"))

    # The same scenario in the simulator.
    sim_dir = out_abs / "sim"
    summary: dict[str, Any] | None = None
    series: Any = None
    if sim_error is None:
        say("sim: the same scenario in the simulator")
        sim_sets = sets + cc_sets + ratio_sets + starts
        if capture:
            hosts = sorted({by_name[p.name]["dst"] for p in plans})
            sim_sets = [*sim_sets, ("measure.capture.hosts", json.dumps(hosts))]
        summary = dict(api.run(path, set=sim_sets, out=sim_dir))
        from mobiflow.outputs import join_series

        series = join_series(api.read_series(sim_dir), "tcp")

    cmp = Comparison(
        scenario=desc["scenario"],
        cc=label,
        out=out_abs,
        valid=bool(live["valid"]),
        invalid_reasons=list(live["invalid_reasons"]),
        sim_error=sim_error,
    )
    if sim_error is not None:
        cmp.notes.append(sim_error)
    flow_index = {f["name"]: i for i, f in enumerate(desc["flows"])}
    link_dir = {"a": 0, "b": 1}
    kernel_series: dict[str, list[dict[str, Any]]] = {}
    for p in plans:
        snd, rcv = kernel[p.name]
        kernel_series[p.name] = snd["samples"]
        sim_flow: dict[str, Any] = (
            {} if summary is None else next(f for f in summary["flows"] if f["name"] == p.name)
        )
        samples = rcv["samples"]
        span = p.stop_s - p.start_s
        k_goodput = _bytes_at(samples, p.stop_s) * 8 / span if span > 0 else None
        cmp.rows.append(
            (p.name, "goodput (Mb/s)", _mb(k_goodput), _mb(sim_flow.get("goodput_bps")))
        )
        for iv_name, (iv_start, iv_end) in _intervals(desc).items():
            iv_end = min(iv_end, p.stop_s)
            g = (
                (_bytes_at(samples, iv_end) - _bytes_at(samples, iv_start))
                * 8
                / (iv_end - iv_start)
                if iv_end > iv_start
                else None
            )
            cmp.rows.append(
                (
                    p.name,
                    f"goodput {iv_name} (Mb/s)",
                    _mb(g),
                    _mb(sim_flow.get("intervals", {}).get(iv_name)),
                )
            )
        # srtt sampled in time on both sides (tcp_info every 20 ms; the simulator's
        # series), over the flow's life: the same statistic for both.
        fin = snd["final"]
        rtts = [
            x["rtt_us"] / 1e3 for x in snd["samples"] if x.get("rtt_us") and x["t_s"] <= p.stop_s
        ]
        sim_rtts: list[float] = []
        sim_cw: list[float] = []
        if series is not None:
            sim_f = series.filter(series["flow"] == p.name)
            sim_rtts = [
                v
                for t, v in zip(sim_f["time_s"].to_list(), sim_f["srtt_ms"].to_list(), strict=True)
                if v is not None and p.start_s <= t <= p.stop_s
            ]
            sim_cw = [v / 1e3 for v in sim_f["cwnd_bytes"].to_list() if v is not None]
        cmp.rows.append(
            (
                p.name,
                "RTT min (ms)",
                fin.get("min_rtt_us", 0) / 1e3 or None,
                sim_flow.get("rtt_min_ms"),
            )
        )
        cmp.rows.append((p.name, "srtt time-mean (ms)", _mean(rtts), _mean(sim_rtts)))
        cmp.rows.append((p.name, "srtt p95 over time (ms)", _p95(rtts), _p95(sim_rtts)))
        cmp.rows.append(
            (
                p.name,
                "retransmitted segments",
                float(fin["total_retrans"]),
                _float(sim_flow.get("retransmits")),
            )
        )
        # RTOs: the kernel's TCPTimeouts of the sender's namespace (tcp_retransmit_timer;
        # the namespace holds this flow alone), the simulator's timeouts.
        k_rtos = snd.get("netstat", {}).get("TcpExt.TCPTimeouts")
        cmp.rows.append((p.name, "RTOs", _float(k_rtos), _float(sim_flow.get("timeouts"))))
        if capture:
            k_spur = count_spurious(kernel_pcap[p.dst], p.port)
            s_spur = sim_flow.get("spurious_retransmits")
            if s_spur is None and summary is not None:
                # Node i is captured as <node>.pcap; flow f goes to port 5001 + f.
                dst = by_name[p.name]["dst"]
                s_spur = count_spurious(sim_dir / f"{dst}.pcap", 5001 + flow_index[p.name])
            cmp.rows.append((p.name, "spurious retransmissions", _float(k_spur), _float(s_spur)))
        cw = [x["snd_cwnd"] * x["snd_mss"] / 1e3 for x in snd["samples"]]
        cmp.rows.append(
            (p.name, "cwnd max (KB)", max(cw) if cw else None, max(sim_cw) if sim_cw else None)
        )
        d = link_dir[p.src]
        sim_link: dict[str, Any] = {} if summary is None else summary["links"][2 * li + d]
        live_dir = live["dirs"][d]
        cmp.rows.append(
            (
                p.name,
                "link drops (packets)",
                float(live_dir["drops"]),
                _float(sim_link.get("drops")),
            )
        )
        cmp.rows.append(
            (
                p.name,
                "link outage losses",
                float(live_dir["outage_losses"]),
                _float(sim_link.get("outage_losses")),
            )
        )
        cmp.notes.append(
            f"{p.name}: kernel cc {snd['cc']}, initcwnd {p.iw}, rto_min {p.min_rto_ms:.0f} ms, "
            f"window clamp {p.rcv_buf} B; time limited by the receive window "
            f"{fin.get('rwnd_limited_us', 0) / 1e6:.1f} s, by the send buffer "
            f"{fin.get('sndbuf_limited_us', 0) / 1e6:.1f} s; tcp_info total_rto "
            f"{fin.get('total_rto', '-')}, DSACKs received {fin.get('dsack_dups', '-')}"
            + (f"; both flows start at {p.start_s:.3f} s (the kernel's SYN)" if starts else "")
            + (
                f"; the simulator's scaling ratio is the kernel's, {ratios[p.name]:g}"
                if p.name in ratios
                else ""
            )
        )
        ns = snd.get("netstat", {})
        cmp.notes.append(
            f"{p.name}: kernel TcpExt "
            + ", ".join(f"{k} {ns[f'TcpExt.{k}']}" for k in KERNEL_COUNTERS if f"TcpExt.{k}" in ns)
        )
    for d in live["dirs"]:
        cmp.notes.append(
            f"emulator {d['dir']}: {d['packets_in']} packets in, {d['delivered_packets']} "
            f"delivered, lateness mean {d['mean_late_ms']:.3f} ms, max {d['max_late_ms']:.3f} ms, "
            f"{d['late_packets']} beyond {live['late_bound_ms']:.0f} ms; read up to "
            f"{d['max_read_gap_ms']:.3f} ms after arrival, {d['late_reads']} beyond; "
            f"TUN overruns {d['tun_overruns']}"
        )
    cmp.figure = _figure(out_abs / "cwnd.png", desc["scenario"], label, kernel_series, series)
    (out_abs / "compare.json").write_text(json.dumps(cmp.to_json(), indent=1))
    return cmp


def _kernel_run(
    binary: Path,
    path: Path,
    desc: dict[str, Any],
    plans: list[FlowPlan],
    sets: list[tuple[str, str]],
    link_name: str,
    out_abs: Path,
    label: str,
    captures: dict[str, str],
    say: Any,
) -> tuple[dict[str, Any], int]:
    """The flows through the emulated link with the kernel's TCP: the emulator's report
    and the driver's exit status."""
    # The kernel's TCP like the scenario's, per namespace. The congestion control is
    # set on each sender's socket (TCP_CONGESTION): outside the initial namespace
    # Linux refuses a namespace default other than the allowed ones (EPERM).
    sysctls: list[str] = []
    for s in ("a", "b"):
        ps = [p for p in plans if s in (p.src, p.dst)]
        if not ps:
            continue
        p0 = ps[0]
        for k, v in (
            ("net.ipv4.tcp_sack", str(int(p0.sack))),
            ("net.ipv4.tcp_timestamps", str(int(p0.timestamps))),
            ("net.ipv4.tcp_ecn", "0"),
            ("net.ipv4.tcp_no_metrics_save", "1"),
            ("net.ipv4.tcp_slow_start_after_idle", "0"),
            # The simulated sender's buffer never limits it: a large send buffer.
            ("net.ipv4.tcp_wmem", "4096 1048576 33554432"),
        ):
            sysctls += ["--sysctl", f"{s}:{k}={v}"]
    # Initial window and minimum RTO are route attributes in Linux.
    setup: list[list[str]] = []
    addr = {"a": "10.200.0.1", "b": "10.200.0.2"}
    for p in plans:
        ns_var = "MOBIFLOW_NS_A" if p.src == "a" else "MOBIFLOW_NS_B"
        dev_var = "MOBIFLOW_DEV_A" if p.src == "a" else "MOBIFLOW_DEV_B"
        setup.append(
            [
                "sh",
                "-c",
                f'ip -n "${ns_var}" route replace {addr[p.dst]}/32 dev "${dev_var}" '
                f"src {addr[p.src]} initcwnd {p.iw} rto_min {int(p.min_rto_ms)}ms",
            ]
        )
    spec = {
        "duration_s": desc["duration_s"],
        "setup": setup,
        "captures": [{"side": s, "out": o} for s, o in captures.items()],
        "flows": [p.__dict__ for p in plans],
    }
    spec_path = out_abs / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    report_path = out_abs / "live_report.json"
    report_path.unlink(missing_ok=True)
    mtu = plans[0].mss + 40
    if mtu != 1500:
        say(f"note: MSS {plans[0].mss}: the TUN MTU stays 1500 (the kernel's MSS is 1460)")
    say(
        f"live: {desc['scenario']} with the kernel's {label}, "
        f"{desc['duration_s']:.0f} s of real time"
    )
    argv = [
        os.fspath(binary),
        "run",
        os.fspath(path),
        "--in",
        "b",
        "--report",
        os.fspath(report_path),
        *sysctls,
    ]
    for k, v in sets:
        argv += ["--set", f"{k}={v}"]
    argv += [
        "--link",
        link_name,
        "--",
        sys.executable,
        os.fspath(DRIVER),
        "drive",
        os.fspath(spec_path),
    ]
    with open(out_abs / "live.log", "w", encoding="utf-8") as logf:
        returncode = run_emulator(argv, binary, stderr=logf, stdout=logf)
    if not report_path.exists():
        tail = (out_abs / "live.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError("the live run failed:\n" + "\n".join(tail))
    return json.loads(report_path.read_text()), returncode


def _scaling_ratios(
    kernel: dict[str, tuple[dict[str, Any], dict[str, Any]]], by_name: dict[str, Any]
) -> dict[str, float]:
    """Per flow with the simulator's ``flow_control = "linux"``, the kernel receiver's
    ``scaling_ratio`` (window / ``sk_rcvbuf``) as the receiver's first window fit read
    it, rounded to the kernel's 1/256 steps (``TCP_RMEM_TO_WIN_SCALE``)."""
    out: dict[str, float] = {}
    for name, (_, rcv) in kernel.items():
        if by_name[name]["transport"].get("flow_control") != "linux":
            continue
        fits = rcv.get("window_fits") or []
        if not fits or not fits[0][2]:
            continue
        ratio = round(256 * fits[0][1] / fits[0][2]) / 256
        if 0 < ratio <= 1:
            out[name] = ratio
    return out


def _float(v: Any) -> float | None:
    return None if v is None else float(v)


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _mb(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e6


def _intervals(desc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    return {
        iv["name"]: (float(iv["start_s"]), float(iv["end_s"])) for iv in desc.get("intervals", [])
    }


def _figure(
    path: Path,
    name: str,
    cc: str,
    kernel: dict[str, list[dict[str, Any]]],
    sim: Any,
) -> Path | None:
    """cwnd (and srtt) over time: the kernel's tcp_info samples against the simulator's
    series (``sim``; None: the kernel's alone)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for flow, samples in kernel.items():
        t = [x["t_s"] for x in samples]
        ax.plot(
            t,
            [x["snd_cwnd"] * x["snd_mss"] / 1e3 for x in samples],
            label=f"{flow}: Linux {cc}",
            lw=1.0,
        )
        ax2.plot(t, [x["rtt_us"] / 1e3 for x in samples], label=f"{flow}: Linux srtt", lw=1.0)
        if sim is None:  # the simulator could not run the case
            continue
        s = sim.filter(sim["flow"] == flow)
        sim_cwnd = [None if v is None else v / 1e3 for v in s["cwnd_bytes"].to_list()]
        ax.plot(s["time_s"].to_list(), sim_cwnd, label=f"{flow}: simulator", lw=1.0, ls="--")
        if "srtt_ms" in s.columns:
            ax2.plot(
                s["time_s"].to_list(),
                s["srtt_ms"].to_list(),
                label=f"{flow}: simulator srtt",
                lw=1.0,
                ls="--",
            )
    ax.set_ylabel("cwnd (KB)")
    ax.set_title(f"{name}: Linux TCP through the emulated link vs the simulator ({cc})")
    ax.legend(fontsize=8)
    ax2.set_ylabel("srtt (ms)")
    ax2.set_xlabel("time (s)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
