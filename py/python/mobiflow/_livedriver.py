"""Bulk TCP sender and receiver for ``mobiflow live compare``, run in the namespaces.

Standard library only (it is started by path, ``python _livedriver.py ...``, so that
the ``mobiflow`` package and its dependencies are not imported in every namespace)::

    _livedriver.py drive SPEC.json       # in any namespace: starts receivers, senders
    _livedriver.py recv PORT RCVBUF STOP OUT  # in the receiving namespace
    _livedriver.py send ADDR PORT CC START STOP OUT  # in the sending namespace

Times are seconds since the emulated link's time zero, ``MOBIFLOW_T0_MONOTONIC_NS``
(CLOCK_MONOTONIC, set by ``mobiflow-live``). The sender samples the kernel's
``struct tcp_info`` of its socket (what ``ss -tin`` shows: cwnd, ssthresh, srtt,
retransmissions) every ``SAMPLE_S`` and, at the end, its namespace's TCP counters
(``/proc/net/netstat``: RTOs); the receiver records bytes read. The spec's
``captures`` start ``dumpcap`` on a namespace's TUN device before the flows and stop
it after them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from typing import Any

IP = shutil.which("ip") or "/usr/sbin/ip"
DUMPCAP = shutil.which("dumpcap") or "dumpcap"

SAMPLE_S = 0.02
"""Period of the tcp_info and goodput samples."""

TCP_INFO_LEN = 256


def t0_ns() -> int:
    return int(os.environ.get("MOBIFLOW_T0_MONOTONIC_NS", time.monotonic_ns()))


def now_s(t0: int) -> float:
    return (time.monotonic_ns() - t0) / 1e9


def sleep_until(t0: int, t: float) -> None:
    d = t - now_s(t0)
    if d > 0:
        time.sleep(d)


def parse_tcp_info(b: bytes) -> dict[str, Any]:
    """Fields of Linux's ``struct tcp_info`` (include/uapi/linux/tcp.h) by offset."""

    def u32(off: int) -> int:
        return int(struct.unpack_from("=I", b, off)[0])

    def u64(off: int) -> int:
        return int(struct.unpack_from("=Q", b, off)[0])

    out: dict[str, Any] = {
        "ca_state": b[1],
        "rto_us": u32(8),
        "snd_mss": u32(16),
        "unacked": u32(24),
        "lost": u32(32),
        "retrans": u32(36),
        "rtt_us": u32(68),
        "rttvar_us": u32(72),
        "snd_ssthresh": u32(76),
        "snd_cwnd": u32(80),
        "total_retrans": u32(100),
        "bytes_acked": u64(120),
    }
    if len(b) >= 152:
        out["min_rtt_us"] = u32(148)
    if len(b) >= 216:
        out["rwnd_limited_us"] = u64(176)
        out["sndbuf_limited_us"] = u64(184)
        out["bytes_retrans"] = u64(208)
        out["dsack_dups"] = u32(216)
    if len(b) >= 232:
        out["snd_wnd"] = u32(228)
    if len(b) >= 248:  # Linux 6.7+: tcpi_total_rto, tcpi_total_rto_recoveries (u16 each)
        out["total_rto"] = int(struct.unpack_from("=H", b, 240)[0])
        out["total_rto_recoveries"] = int(struct.unpack_from("=H", b, 242)[0])
    return out


def netstat() -> dict[str, int]:
    """The TCP counters of this process's network namespace (``/proc/net/netstat``'s
    TcpExt and ``/proc/net/snmp``'s Tcp lines, e.g. ``TcpExt.TCPTimeouts``: RTOs that
    fired, counted in ``tcp_retransmit_timer``). A live run's namespaces hold one flow
    each, so these are the flow's."""
    counters: dict[str, int] = {}
    for name in ("/proc/self/net/netstat", "/proc/self/net/snmp"):
        try:
            with open(name, encoding="ascii") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for head, vals in zip(lines[::2], lines[1::2], strict=False):
            prefix, _, keys = head.partition(":")
            if prefix not in ("TcpExt", "Tcp"):
                continue
            for k, v in zip(keys.split(), vals.partition(":")[2].split(), strict=False):
                with contextlib.suppress(ValueError):
                    counters[f"{prefix}.{k}"] = int(v)
    return counters


SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def fit_window(c: socket.socket, rcvbuf: int, fits: list[tuple[float, int, int]], t0: int) -> None:
    """Keep the connection's receive window at most ``rcvbuf``, as the simulator's
    receive buffer caps it.

    Linux (6.x) sets the window clamp to ``sk_rcvbuf * scaling_ratio`` whenever the
    ratio of payload to buffer memory of arriving packets changes, overriding
    ``TCP_WINDOW_CLAMP``; so the buffer is sized from the measured ratio
    (clamp / sk_rcvbuf) until the clamp is ``rcvbuf``. The window never shrinks on
    the wire, so this is done from the first packets, while the window is still small.
    """
    clamp = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP)
    if clamp <= rcvbuf and (not fits or clamp >= 0.97 * rcvbuf):
        return
    have = c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)  # sk_rcvbuf (doubled)
    ratio = clamp / have if have else 0.5
    want = int(rcvbuf / max(ratio, 0.05))
    c.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, (want + 1) // 2)  # the kernel doubles
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, rcvbuf)
    fits.append((now_s(t0), clamp, c.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)))


def recv(port: int, rcvbuf: int, stop: float, out: str) -> None:
    """Accept one connection and read greedily until it ends or ``stop`` (the sender's
    reset may wait behind a full queue); write ``[(t, bytes)]`` samples."""
    t0 = t0_ns()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf > 0:
        # A fixed buffer (no autotuning) from the start; fitted below.
        ls.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    ls.bind(("0.0.0.0", port))  # noqa: S104 - inside the run's own namespace
    ls.listen(1)
    print("ready", flush=True)
    c, _ = ls.accept()
    fits: list[tuple[float, int, int]] = []
    if rcvbuf > 0:
        fit_window(c, rcvbuf, fits, t0)
    total = 0
    samples: list[tuple[float, int]] = [(now_s(t0), 0)]
    next_sample = now_s(t0) + SAMPLE_S
    buf = bytearray(1 << 20)
    c.settimeout(0.1)
    t_read = now_s(t0)
    while now_s(t0) < stop + 0.5:
        try:
            n = c.recv_into(buf)
        except TimeoutError:
            continue
        except ConnectionResetError:  # the sender resets at its stop time
            break
        if n == 0:
            break
        t = now_s(t0)
        if t - t_read > SAMPLE_S:
            # Nothing arrived since the last read (an outage, a stall): the count stays
            # flat until now, so that the goodput between samples, interpolated, does
            # not spread this read's bytes back over the gap.
            if samples[-1][0] < t_read:
                samples.append((t_read, total))
            samples.append((t, total))
        total += n
        t_read = t
        if t >= next_sample:
            samples.append((t, total))
            next_sample = t + SAMPLE_S
            if rcvbuf > 0:
                fit_window(c, rcvbuf, fits, t0)
    samples.append((now_s(t0), total))
    c.close()
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"bytes": total, "samples": samples, "window_fits": fits}, f)


def send(addr: str, port: int, cc: str, start: float, stop: float, out: str) -> None:
    """Connect at ``start``, send bulk data until ``stop``; sample tcp_info."""
    t0 = t0_ns()
    sleep_until(t0, start)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    t_syn = now_s(t0)
    for _ in range(100):
        try:
            t_syn = now_s(t0)  # the SYN of the attempt that connects
            s.connect((addr, port))
            break
        except ConnectionRefusedError:
            time.sleep(0.05)
    t_conn = now_s(t0)
    samples: list[dict[str, Any]] = []
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            try:
                b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
            except OSError:
                break
            info = parse_tcp_info(b)
            info["t_s"] = now_s(t0)
            samples.append(info)
            done.wait(SAMPLE_S)

    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    chunk = b"\0" * (1 << 16)
    s.settimeout(0.2)
    sent = 0
    while now_s(t0) < stop:
        try:
            sent += s.send(chunk)
        except TimeoutError:
            continue
        except OSError:
            break
    done.set()
    th.join()
    final = parse_tcp_info(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN))
    counters = netstat()
    cc_used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    # Stop now, as the simulated flow does at its stop time: reset rather than drain
    # the send buffer (which could take many seconds on a slow link).
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    with open(out, "w", encoding="utf-8") as f:
        json.dump(
            {
                "syn_s": t_syn,
                "connected_s": t_conn,
                "bytes_written": sent,
                "cc": cc_used,
                "final": final,
                "netstat": counters,
                "samples": samples,
            },
            f,
        )


def drive(spec_path: str) -> int:
    """Start every flow's receiver and sender in their namespaces and wait for them."""
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    ns = {"a": os.environ["MOBIFLOW_NS_A"], "b": os.environ["MOBIFLOW_NS_B"]}
    addr = {"a": os.environ["MOBIFLOW_ADDR_A"], "b": os.environ["MOBIFLOW_ADDR_B"]}
    me = os.path.abspath(__file__)
    py = sys.executable
    procs: list[subprocess.Popen[Any]] = []
    for cmd in spec.get("setup", []):
        subprocess.run(cmd, check=False)
    dev = {"a": os.environ["MOBIFLOW_DEV_A"], "b": os.environ["MOBIFLOW_DEV_B"]}
    captures = [
        start_capture(ns[c["side"]], dev[c["side"]], c["out"]) for c in spec.get("captures", [])
    ]
    for fl in spec["flows"]:
        r = subprocess.Popen(
            [
                IP,
                "netns",
                "exec",
                ns[fl["dst"]],
                py,
                me,
                "recv",
                str(fl["port"]),
                str(fl["rcv_buf"]),
                str(fl["stop_s"]),
                fl["recv_out"],
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert r.stdout is not None
        r.stdout.readline()  # "ready": listening
        procs.append(r)
    for fl in spec["flows"]:
        procs.append(
            subprocess.Popen(
                [
                    IP,
                    "netns",
                    "exec",
                    ns[fl["src"]],
                    py,
                    me,
                    "send",
                    addr[fl["dst"]],
                    str(fl["port"]),
                    fl["cc"],
                    str(fl["start_s"]),
                    str(fl["stop_s"]),
                    fl["send_out"],
                ],
            )
        )
    status = 0
    deadline = time.monotonic() + float(spec["duration_s"]) + 30
    for p in procs:
        try:
            status |= p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            status |= 1
    for c in captures:
        stop_capture(c)
    return status


def start_capture(ns: str, dev: str, out: str) -> subprocess.Popen[str]:
    """``dumpcap`` on a TUN device of the run (raw IP packets, headers only), started
    before the flows: it returns once dumpcap says it is capturing."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out)
    argv = [IP, "netns", "exec", ns, DUMPCAP, "-i", dev, "-s", "128", "-q", "-P", "-w", out]
    p = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("Capturing on") or p.poll() is not None:
            break
    return p


def stop_capture(p: subprocess.Popen[str]) -> None:
    """Stop a capture in order (SIGINT: dumpcap closes its file)."""
    with contextlib.suppress(ProcessLookupError):
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else ""
    if cmd == "drive" and len(argv) == 2:
        return drive(argv[1])
    if cmd == "recv" and len(argv) == 5:
        recv(int(argv[1]), int(argv[2]), float(argv[3]), argv[4])
        return 0
    if cmd == "send" and len(argv) == 7:
        send(argv[1], int(argv[2]), argv[3], float(argv[4]), float(argv[5]), argv[6])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
