"""Speed and memory of mobiflow against ns-2 on the same bulk-transfer scenario.

Both simulators run N bulk TCP flows with SACK over one 100 Mb/s link with 20 ms of
one-way delay and a 500-packet DropTail queue, with windows large enough to fill it,
ACKing every packet (mobiflow's ``ns2`` TCP profile with SACK, ns-2's Agent/TCP/Sack1
with TCPSink/Sack1). Each run is a separate process; wall time and peak resident
memory are measured for that process (``os.wait4``), so both include their start-up.
mobiflow runs through ``mobiflow-run``, the engine without the Python front end.

Prints, per case: data packets delivered in order, wall seconds, peak memory, delivered
packets per wall second, and the mobiflow / ns-2 ratios; then the scale table (1 to
1000 flows, 60 s and 600 s simulated). Ratios are measured in the same script, so a
slower or faster machine changes both sides alike.

Usage: python bench/bench.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOBIFLOW_RUN = ROOT / "target" / "release" / "mobiflow-run"
PKT = 1460


@dataclass
class Measure:
    packets: int
    wall_s: float
    peak_mib: float

    @property
    def rate(self) -> float:
        return self.packets / self.wall_s if self.wall_s > 0 else 0.0


def scenario(nflows: int, duration: int) -> str:
    lines = [
        'name = "bench_bulk"',
        f'[run]\nduration = "{duration}s"',
        f'[tcp]\nprofile = "ns2"\nmss = {PKT}\nsack = true\nrecovery = "sack"',
        'max_send_window = "inf"\nrcv_buf = "1GB"',
        '[[links]]\nname = "l"\na = "s"\nb = "r"\nrate = "100Mbps"\ndelay = "20ms"',
        "queue_limit = 499        # ns-2's limit 500: 499 waiting + 1 in service",
        '[measure]\nsample_interval = "0s"',
    ]
    for i in range(nflows):
        lines.append(f'[[flows]]\nname = "f{i}"\nfrom = "s"\nto = "r"\nstart = "{i}ms"')
    return "\n".join(lines) + "\n"


def run_with_rusage(cmd: list[str]) -> tuple[str, float, float]:
    """Run cmd, return (stdout, wall seconds, peak RSS in MiB) of that process alone."""
    with tempfile.TemporaryFile(mode="w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}")
        out.seek(0)
        return out.read(), wall, usage.ru_maxrss / 1024.0


def bench_mobiflow(nflows: int, duration: int, tmp: Path) -> Measure:
    path = tmp / f"bulk_{nflows}_{duration}.toml"
    path.write_text(scenario(nflows, duration))
    out, wall, peak = run_with_rusage([str(MOBIFLOW_RUN), str(path)])
    res = json.loads(out)
    return Measure(int(res["packets"]), wall, peak)


def bench_ns2(nflows: int, duration: int) -> Measure | None:
    ns = shutil.which("ns")
    if ns is None:
        return None
    out, wall, peak = run_with_rusage(
        [ns, str(ROOT / "bench" / "bulk.tcl"), str(nflows), str(duration), str(PKT)]
    )
    line = next(x for x in out.splitlines() if x.startswith("packets"))
    return Measure(int(line.split()[1]), wall, peak)


def best_of(n: int, f: Callable[..., Measure | None], *args: object) -> Measure | None:
    """The fastest of n runs (the least disturbed by the rest of the machine)."""
    runs = [r for r in (f(*args) for _ in range(n)) if r is not None]
    return min(runs, key=lambda m: m.wall_s) if runs else None


def fmt_row(cols: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths, strict=True))
    )


def table(title: str, head: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"\n{title}")
    print(fmt_row(head, widths))
    for r in rows:
        print(fmt_row(r, widths))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repetition, no 600 s runs")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    if not MOBIFLOW_RUN.exists():
        print(
            f"error: {MOBIFLOW_RUN} missing: cargo build --release -p mobiflow-sim", file=sys.stderr
        )
        return 2
    if shutil.which("ns") is None:
        print(
            "note: ns-2 (`ns`) not installed: ns-2 columns empty (apt-get install -y ns2)",
            file=sys.stderr,
        )
    reps = 1 if args.quick else 3
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        head = ["case", "simulator", "packets", "wall s", "peak MiB", "packets/s"]
        rows: list[list[str]] = []
        ratios: list[list[str]] = []
        main_cases = [(1, 60), (10, 60)]
        for nflows, duration in main_cases:
            m = best_of(reps, bench_mobiflow, nflows, duration, tmp)
            n = best_of(reps, bench_ns2, nflows, duration)
            assert m is not None
            case = f"{nflows} flow{'s' if nflows > 1 else ''}, {duration} s"
            for name, r in (("mobiflow", m), ("ns-2", n)):
                if r is not None:
                    rows.append(
                        [
                            case,
                            name,
                            f"{r.packets}",
                            f"{r.wall_s:.3f}",
                            f"{r.peak_mib:.1f}",
                            f"{r.rate:,.0f}",
                        ]
                    )
            if n is not None:
                ratios.append([case, f"{m.rate / n.rate:.2f}x", f"{m.peak_mib / n.peak_mib:.2f}x"])
            results[case] = {"mobiflow": asdict(m), "ns2": asdict(n) if n else None}
        table(f"Bulk transfer, 100 Mb/s, 20 ms, DropTail 500 (best of {reps} runs)", head, rows)
        if ratios:
            table("mobiflow / ns-2", ["case", "packets/s", "peak memory"], ratios)

        durations = [60] if args.quick else [60, 600]
        srows: list[list[str]] = []
        for duration in durations:
            for nflows in (1, 10, 100, 1000):
                m = bench_mobiflow(nflows, duration, tmp)
                n = bench_ns2(nflows, duration)
                srows.append(
                    [
                        f"{nflows}",
                        f"{duration}",
                        f"{m.packets}",
                        f"{m.wall_s:.3f}",
                        f"{m.peak_mib:.1f}",
                        f"{m.rate:,.0f}",
                        f"{n.wall_s:.3f}" if n else "-",
                        f"{n.peak_mib:.1f}" if n else "-",
                        f"{m.rate / n.rate:.2f}x" if n else "-",
                    ]
                )
                results[f"scale {nflows} flows {duration} s"] = {
                    "mobiflow": asdict(m),
                    "ns2": asdict(n) if n else None,
                }
        table(
            "Scale: wall time against packets, memory against flows",
            [
                "flows",
                "sim s",
                "packets",
                "mobiflow s",
                "MiB",
                "packets/s",
                "ns-2 s",
                "ns-2 MiB",
                "speed ratio",
            ],
            srows,
        )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
