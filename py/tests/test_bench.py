"""bench/bench.py's verdicts: the goals `make bench` prints PASS or MISS against."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench", ROOT / "bench" / "bench.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


def test_the_ns2_goal_is_a_tenth_at_1_and_10_flows_and_an_eighth_at_100() -> None:
    b = load_bench()
    assert b.verdict(10.0, 1).startswith("PASS")
    assert b.verdict(9.99, 1).startswith("MISS")
    assert b.verdict(9.99, 10).startswith("MISS")
    assert b.verdict(8.0, 100).startswith("PASS")
    assert b.verdict(7.9, 100).startswith("MISS")
    assert b.verdict(None, 1) == "-"


def test_a_goal_is_met_or_missed_only_when_the_whole_interval_says_so() -> None:
    b = load_bench()
    assert b.verdict(10.5, 1, (10.1, 10.9)).startswith("PASS")
    assert b.verdict(10.0, 1, (10.0, 10.9)).startswith("PASS")
    assert b.verdict(9.5, 10, (9.1, 9.9)).startswith("MISS")
    assert b.verdict(10.2, 1, (9.8, 10.6)).startswith("UNRESOLVED")
    assert b.verdict(9.8, 1, (9.5, 10.0)).startswith("UNRESOLVED")
    assert b.verdict(7.9, 100, (7.5, 8.1)).startswith("UNRESOLVED")
    assert b.verdict(9.0, 1000, (8.0, 10.0)) == "-"


def test_the_median_interval_is_the_binomial_order_statistics() -> None:
    b = load_bench()
    # 15 draws: x(4) and x(12), P(B <= 3) = 0.0176 per side, coverage 96.5 %.
    xs = [float(x) for x in (15, 3, 9, 1, 12, 6, 14, 2, 8, 11, 5, 13, 4, 10, 7)]
    low, high, coverage = b.median_ci(xs)
    assert (low, high) == (4.0, 12.0)
    assert abs(coverage - (1 - 2 * 576 / 2**15)) < 1e-12
    # 5 draws cannot give 95 %: the whole range, 1 - 2 / 32.
    assert b.median_ci([5.0, 1.0, 3.0, 2.0, 4.0]) == (1.0, 5.0, 0.9375)
    # A wider level never gives a narrower interval; one draw is its own interval.
    lo90, hi90, _ = b.median_ci(xs, 0.90)
    assert lo90 >= low
    assert hi90 <= high
    assert b.median_ci([2.5]) == (2.5, 2.5, 0.0)


def test_htsim_is_carried_over_as_its_fraction_of_ns2() -> None:
    b = load_bench()

    def case(nflows: int, mobiflow_ns: float, ns2_ns: float | None) -> object:
        ratio = None if ns2_ns is None else ns2_ns / mobiflow_ns
        p = b.PairedCase(mobiflow_ns, ns2_ns, ratio, None, None, 0.0, 0.0)
        return b.WallCase(nflows, 5, p, p, 0)

    # 1 flow: htsim was 163 ns against ns-2's 619; with ns-2 at 619 ns today, htsim is
    # estimated at 163 ns and mobiflow at 81.5 ns is exactly twice as fast.
    rows = b.htsim_rows([case(1, 81.5, 619.0), case(10, 100.0, 710.0), case(100, 50.0, 679.0)])
    assert [r[0] for r in rows] == ["1", "10", "100"]
    assert rows[0] == ["1", "0.263", "163", "82", "2.00x", "PASS (>= 2x)"]
    # A slower machine today (ns-2 twice as slow) doubles htsim's estimate too.
    slow = b.htsim_rows([case(10, 200.0, 1420.0)])[0]
    assert slow == ["10", "0.228", "324", "200", "1.62x", "MISS (>= 2x)"]
    # No goal at 100 flows; no row without ns-2.
    assert rows[2][5] == "-"
    assert b.htsim_rows([case(1, 81.5, None)]) == []


def test_mobiflow_runs_ten_times_ns2s_durations_and_its_slope_is_per_packet() -> None:
    b = load_bench()
    assert b.MOBIFLOW_LENGTH == 10
    calls: list[tuple[str, float]] = []

    class FakeBench:
        ns = "ns"

        def run(self, sim: str, nflows: int, duration: float) -> object:
            calls.append((sim, duration))
            # ns-2: 1,000 packets a simulated second at 1,000 ns each; mobiflow: the same
            # packets at 100 ns each; both with 50 ms of start-up.
            packets = int(1000 * duration)
            per = 1000e-9 if sim == "ns-2" else 100e-9
            return b.Run(packets, 0.05 + per * packets, 0.05 + per * packets, 0)

    case = b.wall_case(FakeBench(), 1, 60.0, 600.0, 2)
    # mobiflow also runs ns-2's short duration, for its start-up alone.
    one_round = [
        ("mobiflow", 600.0),
        ("ns-2", 60.0),
        ("mobiflow", 60.0),
        ("mobiflow", 6000.0),
        ("ns-2", 600.0),
    ]
    assert calls == one_round * 2
    assert case.pairing == "alternate"
    # The slopes are per packet whatever the durations: the ratio is the cost ratio.
    assert abs(case.wall.ratio - 10.0) < 1e-9
    assert abs(case.wall.mobiflow_ns - 100.0) < 1e-6
    assert abs(case.wall.mobiflow_startup_ms - 50.0) < 1e-6
    assert case.packets_long == 6_000_000


def test_the_start_up_is_taken_from_the_run_nearest_zero_packets() -> None:
    b = load_bench()
    # 100 ns per packet and 50 ms of start-up, but the long run took 50 ms more: the
    # slope between 5 and 50 million packets is 101.1 ns, and extrapolated from 5
    # million packets the start-up comes out at 44.4 ms; from the run of 500,000
    # packets, at 49.4 ms.
    short, long, first = (5_000_000, 0.55), (50_000_000, 5.10), (500_000, 0.10)
    assert 0.0444 < b.Slope.fit(short, long).startup < 0.0445
    s = b.Slope.fit(short, long, first)
    assert 101.1e-9 < s.per_packet < 101.2e-9
    assert 0.0494 < s.startup < 0.0495


def test_flows_and_rounds_are_chosen_on_the_command_line_and_checked() -> None:
    """``--flows`` and ``--rounds`` pick the cases and their rounds (to resolve a verdict
    the default rounds leave open); a bad value is a usage error (status 2)."""
    bench = load_bench()
    args = bench.parse_args(["--flows", "1,10", "--rounds", "40", "--no-memory"])
    assert args.flows == [1, 10]
    assert args.rounds == 40
    assert args.no_memory
    default = bench.parse_args([])
    assert default.flows is None
    assert default.rounds is None
    assert not default.no_memory
    for bad in (["--flows", "0"], ["--flows", "1,x"], ["--rounds", "0"], ["--rounds", "two"]):
        with pytest.raises(SystemExit) as e:
            bench.parse_args(bad)
        assert e.value.code == 2, bad


def test_concurrent_rounds_run_both_simulators_at_once_on_cores_swapped_each_round() -> None:
    b = load_bench()
    together: list[list[tuple[str, float, int | None]]] = []
    alone: list[tuple[str, float]] = []

    def result(sim: str, duration: float) -> object:
        packets = int(1000 * duration)
        per = 1000e-9 if sim == "ns-2" else 100e-9
        return b.Run(packets, 0.05 + per * packets, 0.05 + per * packets, 0)

    class FakeBench:
        ns = "ns"

        def run(self, sim: str, nflows: int, duration: float) -> object:
            alone.append((sim, duration))
            return result(sim, duration)

        def run_together(self, runs: list[tuple[str, int, float, int | None]]) -> list[object]:
            together.append([(sim, d, core) for sim, _, d, core in runs])
            return [result(sim, d) for sim, _, d, _ in runs]

    case = b.wall_case(FakeBench(), 1, 60.0, 600.0, 2, (0, 3))
    assert together == [
        [("mobiflow", 600.0, 0), ("ns-2", 60.0, 3)],
        [("mobiflow", 6000.0, 0), ("ns-2", 600.0, 3)],
        [("mobiflow", 600.0, 3), ("ns-2", 60.0, 0)],
        [("mobiflow", 6000.0, 3), ("ns-2", 600.0, 0)],
    ]
    # mobiflow's start-up run, alone.
    assert alone == [("mobiflow", 60.0)] * 2
    assert case.pairing == "concurrent"
    assert abs(case.wall.ratio - 10.0) < 1e-9
    # Without ns-2 there is nothing to pair: mobiflow runs alone.
    FakeBench.ns = None  # type: ignore[assignment]
    together.clear()
    assert b.wall_case(FakeBench(), 1, 60.0, 600.0, 1, (0, 3)).pairing == "alternate"
    assert together == []


def test_processes_run_at_once_are_each_timed_to_their_own_exit_on_their_own_core() -> None:
    """`run_processes` pins each command to its core and times each from its start to its
    own exit: a quick process started beside a slow one is not charged the slow one's
    time, whichever exits first."""
    b = load_bench()
    cores = sorted(os.sched_getaffinity(0))
    core = cores[-1]
    show = "import os, sys; print(sorted(os.sched_getaffinity(0))); sys.stdout.flush()"
    slow = [sys.executable, "-c", "import time; time.sleep(1.0); print('slow')"]
    quick = [sys.executable, "-c", show]
    for order in ((slow, None), (quick, core)), ((quick, core), (slow, None)):
        res = b.run_processes(list(order))
        by_out = {out.strip(): wall for out, wall, _, _ in res}
        assert by_out["slow"] >= 1.0
        assert by_out[str([core])] < by_out["slow"] - 0.5
    with pytest.raises(RuntimeError, match="exited 3"):
        b.run_processes([([sys.executable, "-c", "raise SystemExit(3)"], None), (slow, None)])


def test_the_pairing_is_chosen_on_the_command_line() -> None:
    bench = load_bench()
    assert bench.parse_args([]).pairing == "concurrent"
    assert bench.parse_args(["--pairing", "alternate"]).pairing == "alternate"
    with pytest.raises(SystemExit) as e:
        bench.parse_args(["--pairing", "both"])
    assert e.value.code == 2


def test_a_run_keeps_its_flows_start_spacing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`Bench.run` hands its spacing to the scenario (the memory case spreads 1,000 flows'
    starts over a second), alone or beside another run."""
    b = load_bench()
    seen: list[tuple[int, float, float]] = []

    def command(
        self: object, sim: str, nflows: int, duration: float, spacing_s: float
    ) -> list[str]:
        seen.append((nflows, duration, spacing_s))
        return [sim]

    monkeypatch.setattr(b.Bench, "command", command)
    monkeypatch.setattr(
        b, "run_processes", lambda cmds: [('{"packets": 7}', 1.0, 1.0, 1) for _ in cmds]
    )
    bench = b.Bench(tmp_path, None, None)
    assert bench.run("mobiflow", 1000, 2.0, 0.25).packets == 7
    bench.run_together([("mobiflow", 10, 3.0, 0), ("mobiflow", 20, 4.0, 1)], 0.5)
    assert seen == [(1000, 2.0, 0.25), (10, 3.0, 0.5), (20, 4.0, 0.5)]


def test_concurrent_pairing_takes_two_cores_and_none_on_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    b = load_bench()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5, 2, 7})
    assert b.pair_cores() == (2, 5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert b.pair_cores() is None
