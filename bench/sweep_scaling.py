"""Wall time of a 24-run sweep on 1 and on 2 local worker processes.

The sweep is ``bench/sweep_scaling.toml`` (about 0.6 s per run on one core) over
``links.bottleneck.queue_limit`` (3 values) x ``flows.reno2.cc`` (2 values) x 4 seeds
= 24 runs. Each configuration runs into a fresh folder (nothing is resumed), without a
progress bar; the time includes starting the worker processes. Prints both wall times
and their ratio (2 workers / 1 worker; 0.5 is perfect scaling), and checks that both
sweeps stored byte-identical results.

The machine's other load shows in the ratio: run it on an otherwise idle machine. The
script prints how many CPU seconds other programs took during each measurement (from
/proc/stat), so a disturbed measurement can be told from a slow sweep.

Usage: python bench/sweep_scaling.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import mobiflow

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "sweep_scaling.toml"
GRID = {
    "links.bottleneck.queue_limit": ["50p", "200p", "800p"],
    "flows.reno2.cc": ["newreno", "cubic"],
}
SEEDS = [1, 2, 3, 4]


def machine_busy_s() -> float | None:
    """CPU seconds the whole machine has spent busy (all cores, Linux /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text(encoding="utf-8").splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds of this process and its finished children (the workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed_sweep(jobs: int, out: Path) -> tuple[float, float | None, mobiflow.SweepResult]:
    """Run the sweep on ``jobs`` processes into ``out``. Returns the wall seconds, the
    CPU seconds that other programs took meanwhile (None if unknown), and the result."""
    busy, mine = machine_busy_s(), own_cpu_s()
    started = time.perf_counter()
    result = mobiflow.sweep(SCENARIO, GRID, SEEDS, out=out, jobs=jobs, progress=False)
    wall = time.perf_counter() - started
    after = machine_busy_s()
    others = None if busy is None or after is None else (after - busy) - (own_cpu_s() - mine)
    if not result.ok or result.ran != 24:
        raise SystemExit(f"sweep on {jobs} jobs: {result.ran} ran, {len(result.failed)} failed")
    return wall, others, result


def same_results(a: mobiflow.SweepResult, b: mobiflow.SweepResult) -> bool:
    """Whether both sweeps stored the same bytes for every run."""
    for ra, rb in zip(a.runs, b.runs, strict=True):
        for name in ("summary.json", "flow_series.parquet", "link_series.parquet"):
            if (ra.dir / name).read_bytes() != (rb.dir / name).read_bytes():
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="measurements per setting")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()

    single = mobiflow.Scenario.load(SCENARIO)
    started = time.perf_counter()
    single.run()
    one_run = time.perf_counter() - started

    walls: dict[int, list[float]] = {1: [], 2: []}
    others: dict[int, list[float | None]] = {1: [], 2: []}
    identical = True
    with tempfile.TemporaryDirectory(prefix="mobiflow-sweep-bench-") as tmp:
        for i in range(args.repeat):
            results = {}
            for jobs in (1, 2):
                wall, other, results[jobs] = timed_sweep(jobs, Path(tmp) / f"{i}-jobs{jobs}")
                walls[jobs].append(wall)
                others[jobs].append(other)
            identical = identical and same_results(results[1], results[2])

    one, two = statistics.median(walls[1]), statistics.median(walls[2])
    report = {
        "runs": 24,
        "single_run_s": round(one_run, 3),
        "jobs1_wall_s": round(one, 3),
        "jobs2_wall_s": round(two, 3),
        "ratio_2_over_1": round(two / one, 3),
        "identical_results": identical,
        "cpus": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "measurements": {str(k): [round(w, 3) for w in v] for k, v in walls.items()},
        "other_programs_cpu_s": {
            str(k): [None if o is None else round(o, 2) for o in v] for k, v in others.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"one run of {SCENARIO.name}: {one_run:.2f} s")
        print(f"24-run sweep, 1 worker:  {one:6.2f} s wall")
        print(f"24-run sweep, 2 workers: {two:6.2f} s wall")
        print(f"ratio (2 workers / 1 worker): {two / one:.3f}  (0.5 = perfect scaling)")
        print(f"results identical: {'yes' if identical else 'NO'}; cpus {report['cpus']}")
        print(
            "CPU seconds other programs took during each measurement (near 0 on an idle "
            f"machine), by worker count: {report['other_programs_cpu_s']}"
        )
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
