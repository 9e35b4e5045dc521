"""Sweeps: planning, storage, resuming after a kill, failures, aggregation, Ray, CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import mobiflow
from mobiflow import sweeps
from mobiflow.stats import mean_ci, t_quantile

from . import _workers
from .conftest import Cli, start_cli
from .test_cli import assert_clean_error

GRID = {"flows.bulk.cc": ["newreno", "cubic"], "links.access.queue_limit": ["20p", "100p"]}
SEEDS = [1, 2]
RESULT_FILES = {
    "summary.json",
    "flow_series.parquet",
    "tcp_series.parquet",
    "tfrc_series.parquet",
    "link_series.parquet",
}

# A scenario where seeds matter (RED draws random numbers) and a run takes a while
# (about 0.1 to 0.2 s), for the tests that stop a sweep half way.
SLOW_TOML = """\
name = "slow"
[run]
duration = "30s"
[[links]]
name = "wan"
a = "server"
b = "phone"
rate = "100Mbps"
delay = "20ms"
queue = "red"
[[flows]]
name = "a"
from = "server"
to = "phone"
[[flows]]
name = "b"
from = "server"
to = "phone"
cc = "cubic"
"""


@pytest.fixture(scope="module")
def tiny_sweep(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> mobiflow.SweepResult:
    """The tiny scenario over a 2 x 2 grid and two seeds, on two local processes."""
    out = tmp_path_factory.mktemp("sweep") / "tiny"
    return mobiflow.sweep(tiny, GRID, SEEDS, out=out, jobs=2, progress=False)


@pytest.fixture
def slow(tmp_path: Path) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(SLOW_TOML, encoding="utf-8")
    return path


def write_sweep_file(folder: Path, scenario: Path, body: str) -> Path:
    path = folder / "sweep.toml"
    path.write_text(f'scenario = "{scenario}"\n' + textwrap.dedent(body), encoding="utf-8")
    return path


# -- planning ------------------------------------------------------------------------------


def test_plan_is_the_grid_product_times_the_seeds(tiny: Path) -> None:
    tasks = sweeps.plan(tiny, GRID, SEEDS)
    assert len(tasks) == 2 * 2 * 2
    assert [dict(t.point) for t in tasks[:2]] == [
        {"flows.bulk.cc": "newreno", "links.access.queue_limit": "20p"}
    ] * 2
    assert [t.seed for t in tasks[:2]] == SEEDS
    assert tasks[0].overrides[-1] == ("run.seed", "1")
    # Folder names: readable and stable.
    assert tasks[0].key.startswith("flows.bulk.cc=newreno,links.access.queue_limit=20p,seed=1-")
    assert [t.key for t in sweeps.plan(tiny, GRID, SEEDS)] == [t.key for t in tasks]
    assert len({t.key for t in tasks}) == len(tasks)


def test_a_changed_scenario_changes_the_folders(tiny: Path) -> None:
    base = mobiflow.Scenario.load(tiny)
    first = sweeps.plan(base, GRID, SEEDS)
    second = sweeps.plan(base.set("links.access.delay", "30ms"), GRID, SEEDS)
    assert {t.key for t in first}.isdisjoint(t.key for t in second)


def test_a_bad_grid_key_or_value_is_refused_before_running(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(mobiflow.ScenarioError) as info:
        mobiflow.sweep(tiny, {"flows.0.no_such_knob": [1]}, out=tmp_path / "a", progress=False)
    assert info.value.key == "flows.0.no_such_knob"
    with pytest.raises(mobiflow.ScenarioError) as info:
        mobiflow.sweep(tiny, {"flows.0.cc": ["reno", "vegas"]}, out=tmp_path / "b")
    assert info.value.key == "flows.0.cc"
    assert "vegas" in info.value.reason
    with pytest.raises(mobiflow.SweepError, match="empty"):
        mobiflow.sweep(tiny, {"flows.0.cc": []}, out=tmp_path / "c")
    with pytest.raises(mobiflow.SweepError, match="seeds"):
        mobiflow.sweep(tiny, {}, seeds=[1, 1], out=tmp_path / "d")
    assert not any((tmp_path / "a").glob("*/done"))


# -- running and storing ---------------------------------------------------------------------


def test_every_run_is_stored_with_a_done_marker(tiny_sweep: mobiflow.SweepResult) -> None:
    assert tiny_sweep.ok
    assert (tiny_sweep.ran, tiny_sweep.skipped, len(tiny_sweep.runs)) == (8, 0, 8)
    for record in tiny_sweep.runs:
        names = {p.name for p in record.dir.iterdir()}
        assert names == RESULT_FILES | {"done", "params.json", "scenario.toml"}
        params = json.loads((record.dir / "params.json").read_text(encoding="utf-8"))
        assert params["point"] == record.point
        assert params["seed"] == record.seed
    definition = json.loads((tiny_sweep.out / "sweep.json").read_text(encoding="utf-8"))
    assert definition["runs"] == [r.key for r in tiny_sweep.runs]


def test_a_sweep_run_is_the_same_as_a_single_run(
    tiny: Path, tiny_sweep: mobiflow.SweepResult, tmp_path: Path
) -> None:
    record = tiny_sweep.runs[-1]
    overrides = {**record.point, "run.seed": record.seed}
    mobiflow.run(tiny, set=overrides, out=tmp_path)
    for name in RESULT_FILES:
        assert (record.dir / name).read_bytes() == (tmp_path / name).read_bytes()
    run = record.load()
    assert run.summary["seed"] == record.seed
    assert "seed=2" in run.label
    # The stored scenario is the one that ran.
    again = mobiflow.Scenario.from_toml(
        (record.dir / "scenario.toml").read_text(encoding="utf-8"), source=tiny
    )
    assert again.run().json == run.json


def test_results_come_back_as_one_frame(tiny_sweep: mobiflow.SweepResult) -> None:
    flows = tiny_sweep.flows
    assert flows.height == 8 * 2  # runs x flows
    # Each grid key as given, its number beside it when it has a unit, seed, run.
    assert flows.columns[:5] == [
        "flows.bulk.cc",
        "links.access.queue_limit",
        "links.access.queue_limit_packets",
        "seed",
        "run",
    ]
    assert flows.schema["links.access.queue_limit_packets"] == pl.Float64
    assert flows["flow"].unique().sort().to_list() == ["bulk", "short, sized"]
    assert flows.schema["goodput_bps"] == pl.Float64
    assert set(flows["flows.bulk.cc"].to_list()) == {"newreno", "cubic"}
    assert tiny_sweep.links.height == 8 * 2  # runs x directions


def test_seeds_that_change_nothing_give_no_interval(tiny_sweep: mobiflow.SweepResult) -> None:
    # The tiny scenario has no random element: every seed gives the same run, and an
    # interval of +-0 would claim a precision nobody measured.
    assert tiny_sweep.seeds_matter() is False
    agg = tiny_sweep.aggregate(["goodput_bps", "retransmits"])
    assert agg.height == 4 * 2  # grid points x flows
    assert agg["n"].to_list() == [2] * 8
    assert agg["seeds_identical"].to_list() == [True] * 8
    assert agg["goodput_bps_ci_low"].null_count() == agg.height
    first = agg.row(0, named=True)
    values = tiny_sweep.flows.filter(
        (pl.col("flows.bulk.cc") == first["flows.bulk.cc"])
        & (pl.col("links.access.queue_limit") == first["links.access.queue_limit"])
        & (pl.col("flow") == first["flow"])
    )["goodput_bps"]
    assert first["goodput_bps_mean"] == values[0] == values[1]
    with pytest.raises(mobiflow.SweepError, match="unknown metric"):
        tiny_sweep.aggregate(["goodput"])


def test_aggregate_gives_means_and_t_intervals_when_seeds_differ(
    tiny: Path, tmp_path: Path
) -> None:
    lossy = mobiflow.Scenario.load(tiny).set("links.access.loss", "1%")
    result = mobiflow.sweep(
        lossy, {"flows.bulk.cc": ["newreno"]}, [1, 2, 3], out=tmp_path, jobs=2, progress=False
    )
    assert result.seeds_matter() is True
    agg = result.aggregate(["goodput_bps"])
    first = agg.row(0, named=True)
    assert first["seeds_identical"] is False
    values = result.flows.filter(pl.col("flow") == first["flow"])["goodput_bps"].to_list()
    mean, low, high = mean_ci(values)
    assert first["goodput_bps_mean"] == pytest.approx(mean)
    assert (first["goodput_bps_ci_low"], first["goodput_bps_ci_high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert low is not None
    assert high is not None
    assert high > low


def test_sweep_tables_share_the_run_tables_schema(
    tiny: Path, tiny_sweep: mobiflow.SweepResult
) -> None:
    run = tiny_sweep.runs[0].load()
    front = [*tiny_sweep._key_columns(), "seed", "run"]
    assert tiny_sweep.flows.drop(front).schema == run.flows.schema
    assert tiny_sweep.links.drop(front).schema == run.links.schema
    # A column null in every row keeps its type (completion_time_s of bulk flows).
    bulk = tiny_sweep.flows.filter(pl.col("flow") == "bulk")
    assert bulk["completion_time_s"].null_count() == bulk.height
    assert bulk.schema["completion_time_s"] == pl.Float64
    series = tiny_sweep.series()
    assert series.columns[: len(front)] == front
    assert series.drop(front).schema == run.flow_series.schema
    assert series.height == sum(r.load().flow_series.height for r in tiny_sweep.done)


def test_load_sweep_reads_the_folder_back(tiny_sweep: mobiflow.SweepResult) -> None:
    again = mobiflow.load_sweep(tiny_sweep.out)
    assert again.ok
    assert again.grid == tiny_sweep.grid
    assert again.flows.equals(tiny_sweep.flows)


def test_a_second_call_runs_nothing(tiny: Path, tiny_sweep: mobiflow.SweepResult) -> None:
    again = mobiflow.sweep(tiny, GRID, SEEDS, out=tiny_sweep.out, jobs=2, progress=False)
    assert (again.ran, again.skipped) == (0, 8)


def test_resume_false_runs_everything_again(tiny: Path, tmp_path: Path) -> None:
    grid = {"flows.bulk.cc": ["newreno", "cubic"]}
    first = mobiflow.sweep(tiny, grid, out=tmp_path, jobs=1, progress=False)
    again = mobiflow.sweep(tiny, grid, out=tmp_path, jobs=1, progress=False, resume=False)
    assert (first.ran, again.ran, again.skipped) == (2, 2, 0)
    assert again.flows.equals(first.flows)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 1, 12.706204736),
        (0.975, 2, 4.302652730),
        (0.975, 9, 2.262157163),
        (0.995, 3, 5.840909310),
        (0.025, 4, -2.776445105),
    ],
)
def test_t_quantiles(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-8)


def test_mean_ci_of_one_value_has_no_interval() -> None:
    assert mean_ci([3.0]) == (3.0, None, None)
    mean, low, high = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert low is not None
    assert high is not None
    assert math.isclose((high - low) / 2, 4.302652729749464 / math.sqrt(3))


# -- interruptions and failures ----------------------------------------------------------


def done_files(out: Path) -> dict[str, int]:
    """``{run folder: mtime of its summary.json}`` for the finished runs."""
    return {
        p.parent.name: (p.parent / "summary.json").stat().st_mtime_ns for p in out.glob("*/done")
    }


def test_a_killed_sweep_resumes_without_rerunning(slow: Path, tmp_path: Path) -> None:
    """Kill the whole sweep (parent and workers) with SIGKILL once some runs are done;
    the next call runs only the others and leaves the finished ones untouched."""
    out = tmp_path / "sweep"
    spec = write_sweep_file(
        tmp_path, slow, f'seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nout = "{out}"\n'
    )
    proc = start_cli("sweep", spec, "--jobs", "1", output=subprocess.DEVNULL, new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(done_files(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    before = done_files(out)
    assert 2 <= len(before) < 10, "the sweep was stopped half way"

    result = mobiflow.sweep(slow, seeds=range(1, 11), out=out, jobs=2, progress=False)
    assert result.ok
    assert (result.skipped, result.ran) == (len(before), 10 - len(before))
    after = done_files(out)
    assert len(after) == 10
    assert {k: after[k] for k in before} == before, "finished runs were not run again"
    assert not list(out.glob("*/.*.tmp")), "no half-written file is left"


def test_ctrl_c_stops_the_sweep_with_status_130(slow: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    spec = write_sweep_file(tmp_path, slow, f'seeds = [1, 2, 3, 4, 5, 6]\nout = "{out}"\n')
    proc = start_cli("sweep", spec, "--jobs", "2", new_session=True)
    deadline = time.monotonic() + 60
    while not done_files(out) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the whole process group
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "run the same command to resume" in stderr
    result = mobiflow.load_sweep(out)
    assert 1 <= len(result.done) <= 6


def test_a_failing_run_does_not_stop_the_others(tiny: Path, tmp_path: Path) -> None:
    """A run whose results cannot be stored (a file is in the way of its folder) is
    reported as failed; the others finish; the next call retries only that one."""
    out = tmp_path / "sweep"
    out.mkdir()
    victim = sweeps.plan(tiny, GRID, SEEDS)[3]
    (out / victim.key).write_text("in the way", encoding="utf-8")
    result = mobiflow.sweep(tiny, GRID, SEEDS, out=out, jobs=2, progress=False)
    assert [r.key for r in result.failed] == [victim.key]
    assert "cannot store the results" in (result.failed[0].error or "")
    assert len(result.done) == 7
    assert result.flows.height == 7 * 2
    (out / victim.key).unlink()
    again = mobiflow.sweep(tiny, GRID, SEEDS, out=out, jobs=2, progress=False)
    assert again.ok
    assert (again.ran, again.skipped) == (1, 7)


def test_a_run_that_kills_its_worker_fails_alone(tiny: Path) -> None:
    """Seed 2 kills its worker process: those runs fail, every other run finishes, even
    those that shared the broken pool."""
    tasks = sweeps.plan(tiny, {"flows.bulk.cc": ["newreno", "cubic"]}, [1, 2, 3])
    outcomes: dict[str, sweeps.Outcome] = {}
    sweeps.run_local(tasks, 2, lambda t, o: outcomes.__setitem__(t.key, o), _workers.crash_on_seed)
    assert set(outcomes) == {t.key for t in tasks}
    for task in tasks:
        outcome = outcomes[task.key]
        if task.seed == _workers.CRASH_SEED:
            assert outcome.error == sweeps.DIED
        else:
            assert outcome.ok, outcome.error
            assert outcome.summary is not None


def test_execute_reports_errors_as_text(tiny: Path) -> None:
    task = sweeps.plan(tiny, None, [1])[0]
    broken = sweeps.Task(task.key, "not toml =", None, (), (), 1)
    outcome = sweeps.execute(broken)
    assert not outcome.ok
    assert (outcome.error or "").startswith("ScenarioError: ")


# -- Ray ----------------------------------------------------------------------------------


def test_ray_gives_the_same_results_as_local(tiny: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'mobiflow[ray]')")
    grid = {"flows.bulk.cc": ["newreno", "cubic"]}
    local = mobiflow.sweep(tiny, grid, SEEDS, out=tmp_path / "local", jobs=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = mobiflow.sweep(
            tiny, grid, SEEDS, out=tmp_path / "ray", backend="ray", progress=False
        )
    finally:
        ray.shutdown()
    assert remote.ok
    assert [r.key for r in remote.runs] == [r.key for r in local.runs]
    for a, b in zip(local.runs, remote.runs, strict=True):
        for name in RESULT_FILES:
            assert (a.dir / name).read_bytes() == (b.dir / name).read_bytes(), (a.key, name)
    assert remote.flows.equals(local.flows)


# -- the command line ------------------------------------------------------------------------


def test_cli_sweep_prints_means_and_writes_tables(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    spec = write_sweep_file(
        tmp_path,
        tiny,
        """\
        seeds = [1, 2]
        out = "runs/tiny"
        metrics = ["goodput_bps", "interval_first_bps"]

        [grid.flows.bulk]
        cc = ["newreno", "cubic"]
        """,
    )
    proc = cli("sweep", spec, "--jobs", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "runs" / "tiny"  # relative to the sweep file
    assert len(list(out.glob("*/done"))) == 4
    for text in ("flows.bulk.cc", "newreno", "cubic", "goodput", "interval_first"):
        assert text in proc.stdout
    assert "4 finished now, 0 already done, 0 failed" in proc.stdout
    summary = pl.read_parquet(out / "summary.parquet")
    assert summary.height == 2 * 2
    assert "goodput_bps_ci_high" in summary.columns
    assert pl.read_parquet(out / "results.parquet").height == 4 * 2
    assert pl.read_parquet(out / "series.parquet")["seed"].unique().sort().to_list() == [1, 2]
    # Seeds that change nothing: said, not shown as +- 0.
    assert "seeds change nothing" in proc.stdout

    again = cli("sweep", spec, "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "0 finished now, 4 already done" in again.stdout


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        ('seeds = [1]\ncolour = "red"\n', ["colour", "unknown key"]),
        ('[grid]\n"flows.0.no_such_knob" = [1, 2]\n', ["flows.0.no_such_knob"]),
        ('[grid]\n"flows.0.cc" = ["reno", "vegas"]\n', ["flows.0.cc", "vegas"]),
        ('[grid]\n"flows.0.cc" = "reno"\n', ["grid.flows.0.cc", "list"]),
        ("seeds = [-1]\n", ["seeds"]),
        ("seeds = [1\n", ["line 3", "invalid TOML"]),
    ],
)
def test_cli_sweep_refuses_a_bad_file(
    cli: Cli, tiny: Path, tmp_path: Path, body: str, needles: list[str]
) -> None:
    spec = write_sweep_file(tmp_path, tiny, body)
    proc = cli("sweep", spec, "--out", tmp_path / "out", "--no-progress")
    assert_clean_error(proc, 2, *needles)


def test_cli_sweep_refuses_bad_arguments(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    assert_clean_error(cli("sweep", tmp_path / "missing.toml"), 2, "missing.toml", "no such file")
    spec = write_sweep_file(tmp_path, tmp_path / "nope.toml", "")
    assert_clean_error(cli("sweep", spec), 2, "nope.toml", "no such file")
    spec = write_sweep_file(tmp_path, tiny, "")
    assert_clean_error(cli("sweep", spec, "--backend", "slurm"), 2, "--backend")
    assert_clean_error(cli("sweep", spec, "--jobs", "0"), 2, "--jobs")


def test_cli_sweep_exits_1_when_a_run_fails(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = sweeps.plan(tiny, None, [1, 2])[0]
    (out / victim.key).write_text("in the way", encoding="utf-8")
    spec = write_sweep_file(tmp_path, tiny, f'seeds = [1, 2]\nout = "{out}"\n')
    proc = cli("sweep", spec, "--no-progress")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"failed: {out / victim.key}: cannot store the results")
    assert lines[-1] == "error: 1 of 2 runs failed; run the same command again to retry them"
    assert "1 finished now, 0 already done, 1 failed" in proc.stdout
