"""Sweeps: run a scenario over a grid of values and several seeds, locally or on Ray.

::

    import mobiflow

    result = mobiflow.sweep(
        "scenarios/examples/rwnd_limited.toml",
        grid={"flows.bulk.cc": ["newreno", "cubic"], "tcp.rcv_buf": ["64KB", "256KB"]},
        seeds=[1, 2, 3],
        out="runs/rwnd",
    )
    result.flows        # one row per (run, flow): grid keys, seed, flow, metrics
    result.aggregate()  # per grid point and flow: mean and 95 % CI across seeds
    result.series()     # every run's flow series, with its grid point and seed

Tables have the schema of :attr:`mobiflow.Run.flows` (:mod:`mobiflow.tables`), with a
column per grid key in front (the values as given, ``"64KB"``) and a numeric twin for
values with a unit (``tcp.rcv_buf_bytes``, 65536).

The runs are the Cartesian product of the grid's values, times the seeds; each grid key
is a dotted key of the scenario, as for ``--set``. Every combination is checked before
anything runs, so a wrong key or value is refused at once
(:class:`mobiflow.ScenarioError`, naming the key).

Storage. Each run has its own folder under ``out``, named from its parameters: a
readable slug and a hash of the scenario text, overrides and engine version
(``flows.bulk.cc=cubic,tcp.rcv_buf=64KB,seed=2-3f9c0a1b2d``). A finished run's folder
holds ``summary.json``, the ``<kind>_series.parquet`` files (the files of
``mobiflow run --out``; ``.csv`` with ``series_format="csv"``), ``params.json`` (grid
point, seed, overrides), ``scenario.toml`` (the scenario as run) and, written last by an
atomic rename, ``done``. A run that failed has
``error.txt`` instead of ``done``. ``sweep.json`` at the top describes the sweep.

Resuming. A folder with ``done`` is never run again: run the same sweep again after an
interruption (Ctrl-C, a killed process, a reboot) and only the unfinished and failed
runs are run. Changing the scenario changes the hash, so stale results are not reused.

Failures. A run that raises, or whose worker process dies, is recorded in its folder
and in :attr:`SweepResult.failed`; the other runs go on. A worker that dies takes the
runs it was running with it; those are retried one at a time at the end, so that only
the run that kills its worker is reported as failed.

Backends. ``"local"`` runs ``jobs`` worker processes (default: every core), started
with ``spawn``; call :func:`sweep` from under ``if __name__ == "__main__":`` in a
script. ``"ray"`` submits one task per run to a Ray cluster (``address``), or to a
local Ray instance; the workers send results back and this process writes them, so
the cluster needs no shared file system, only mobiflow installed on its nodes.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import importlib.util
import itertools
import json
import math
import multiprocessing
import os
import re
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mobiflow import _mobiflow
from mobiflow.api import SUMMARY_FILE, Budget, PathLike, resolve_budget, toml_value
from mobiflow.outputs import (
    DEFAULT_SERIES_FORMAT,
    Run,
    check_series_format,
    read_series,
    write_atomically,
    write_series,
)
from mobiflow.scenario import Scenario
from mobiflow.stats import mean_ci
from mobiflow.tables import flow_rows, flows_frame, grid_columns, link_rows, links_frame

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "DONE_FILE",
    "ERROR_FILE",
    "PARAMS_FILE",
    "SWEEP_FILE",
    "Outcome",
    "RunRecord",
    "SweepError",
    "SweepResult",
    "SweepSpec",
    "Task",
    "execute",
    "load_spec",
    "load_sweep",
    "plan",
    "sweep",
]

DONE_FILE = "done"
"""Marker of a finished run, written last (atomic rename)."""
ERROR_FILE = "error.txt"
"""Why a run failed."""
PARAMS_FILE = "params.json"
"""A run's grid point, seed and overrides."""
SCENARIO_FILE = "scenario.toml"
"""The scenario as run (overrides applied)."""
SWEEP_FILE = "sweep.json"
"""The sweep's definition, at the top of its folder."""

Backend = Literal["local", "ray"]

# Columns of SweepResult.flows that are not metrics.
_FLOW_TEXT = ("flow", "src", "dst", "protocol", "cc", "flow_control")


class SweepError(ValueError):
    """A sweep that cannot be run as given (a malformed grid or SWEEP.toml)."""


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One run of a sweep, as sent to a worker (plain data, picklable)."""

    key: str
    """The run's folder name."""
    text: str
    """Scenario TOML text."""
    source: str | None
    """Absolute path of the scenario file, if any (trace paths resolve against it)."""
    overrides: tuple[tuple[str, str], ...]
    """Everything set on the scenario: its own overrides, the grid point, the seed."""
    point: tuple[tuple[str, Any], ...]
    """The grid point: ``(dotted key, value)`` in grid order."""
    seed: int


@dataclass(frozen=True)
class Outcome:
    """What a worker reports for one task."""

    key: str
    summary: str | None = None
    """Summary JSON text, on success."""
    series_csv: dict[str, bytes] | None = None
    """The series as CSV bytes by kind (``flow``, ``tcp``, ``tfrc``, ``link``), on
    success."""
    error: str | None = None
    """Why it failed, on failure."""
    seconds: float = 0.0
    """Wall time of the run in the worker, seconds."""

    @property
    def ok(self) -> bool:
        """Whether the run finished."""
        return self.error is None


def _slug(point: Iterable[tuple[str, Any]], seed: int) -> str:
    parts = [f"{k}={_text(v)}" for k, v in point] + [f"seed={seed}"]
    slug = re.sub(r"[^A-Za-z0-9._=+,-]+", "_", ",".join(parts)).strip("_")
    return slug[:100].rstrip("_,")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else toml_value(value)


def _digest(text: str, source: str | None, overrides: Sequence[tuple[str, str]]) -> str:
    blob = json.dumps(
        {
            "text": text,
            "source": source,
            "overrides": [list(p) for p in overrides],
            "mobiflow": _mobiflow.version(),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


def _as_scenario(scenario: Scenario | PathLike) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)


def _check_grid(grid: Mapping[str, Sequence[Any]] | None) -> dict[str, list[Any]]:
    checked: dict[str, list[Any]] = {}
    for key, values in (grid or {}).items():
        if not isinstance(key, str) or not key.strip():
            raise SweepError(f"grid keys are dotted scenario keys, got {key!r}")
        if isinstance(values, str | bytes) or not isinstance(values, Sequence):
            raise SweepError(f"grid.{key}: expected a list of values, got {values!r}")
        if not values:
            raise SweepError(f"grid.{key}: the list of values is empty")
        checked[key.strip()] = list(values)
    return checked


def _check_seeds(seeds: Sequence[int] | None, default: int) -> list[int]:
    if seeds is None:
        return [default]
    out = list(seeds)
    if not out:
        raise SweepError("seeds: the list is empty")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise SweepError(f"seeds: {s!r} is not an integer >= 0")
    if len(set(out)) != len(out):
        raise SweepError(f"seeds: {out} repeats a seed")
    return out


def plan(
    scenario: Scenario | PathLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: Sequence[int] | None = None,
    budget: Budget = True,
) -> list[Task]:
    """The runs of a sweep, in order (grid product, then seeds), each checked, its
    resource estimate included (``budget`` as for :meth:`Scenario.run`).

    Raises :class:`mobiflow.ScenarioError` naming the key if a grid value is wrong or a
    run would need more memory than ``budget``, :class:`SweepError` if the grid or
    seeds are malformed.
    """
    limit = resolve_budget(budget)
    base = _as_scenario(scenario)
    axes = _check_grid(grid)
    seed_list = _check_seeds(seeds, base.seed)
    source = None if base.source is None else os.fspath(base.source.resolve())
    base = Scenario(base.text, None if source is None else Path(source), base.overrides)
    tasks: list[Task] = []
    for combo in itertools.product(*axes.values()):
        point = tuple(zip(axes, combo, strict=True))
        checked = base.update(point)  # ScenarioError, naming the key, if wrong
        if limit is not None:
            # The seed changes no estimate: one check per grid point, before any run.
            _mobiflow.estimate_str(base.text, list(checked.overrides), source, limit)
        for seed in seed_list:
            overrides = (*checked.overrides, ("run.seed", str(seed)))
            key = f"{_slug(point, seed)}-{_digest(base.text, source, overrides)}"
            tasks.append(Task(key, base.text, source, overrides, point, seed))
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise SweepError("the grid repeats a combination of values")
    return tasks


# --------------------------------------------------------------------------------------
# Running one task (in a worker)
# --------------------------------------------------------------------------------------


def execute(task: Task) -> Outcome:
    """Run one task and return what it produced, or why it failed. Never raises for a
    failed run: the error travels back as text."""
    started = time.perf_counter()
    try:
        # No budget here: `plan` checked every task against the sweep's budget.
        summary, series_csv = _mobiflow.run_str_results(
            task.text, list(task.overrides), None, task.source, budget=None
        )
    except Exception as e:  # noqa: BLE001 - reported as the run's failure
        return Outcome(task.key, error=_describe(e), seconds=time.perf_counter() - started)
    return Outcome(
        task.key,
        summary=summary,
        series_csv={which: bytes(csv) for which, csv in series_csv.items()},
        seconds=time.perf_counter() - started,
    )


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _orphan_guard(parent: int) -> None:
    """In a worker: ignore Ctrl-C (the parent handles it and stops the workers) and
    exit if the parent disappears (killed without a chance to stop us)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="mobiflow-orphan-guard", daemon=True).start()


# --------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------

NO_WORKER = (
    "no run came back: every worker process died (if they die as they start: in a "
    'script, is the sweep under `if __name__ == "__main__":`?)'
)

OnOutcome = Callable[[Task, Outcome], None]
Execute = Callable[[Task], Outcome]

DIED = (
    "the worker process died while running this run "
    "(killed, out of memory, or a crash in the engine)"
)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (on Ctrl-C)."""
    # The executor has no public way to end running workers; its process table is a
    # stable attribute since Python 3.2 (and is cleared by shutdown: read it first).
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        with contextlib.suppress(Exception):
            proc.terminate()


def _pool_pass(
    tasks: Iterable[Task], jobs: int, on_outcome: OnOutcome, run_task: Execute
) -> tuple[list[Task], list[Task]]:
    """Run ``tasks`` on a pool of ``jobs`` processes, at most ``jobs`` at a time, until
    all are done or the pool breaks (a worker died). Returns ``(suspects, not
    started)``: the tasks that were running when it broke, and those never submitted;
    both empty if it did not break."""
    pending = deque(tasks)
    suspects: list[Task] = []
    pool = ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(pending))),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_orphan_guard,
        initargs=(os.getpid(),),
    )
    inflight: dict[Future[Outcome], Task] = {}
    broken = False
    try:
        while pending or inflight:
            while pending and not broken and len(inflight) < jobs:
                task = pending.popleft()
                try:
                    inflight[pool.submit(run_task, task)] = task
                except BrokenProcessPool:
                    pending.appendleft(task)
                    broken = True
            if not inflight:
                break
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for future in finished:
                task = inflight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    suspects.append(task)
                    broken = True
                    continue
                except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be sent
                    outcome = Outcome(task.key, error=_describe(e))
                on_outcome(task, outcome)
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return suspects, list(pending)


def run_local(
    tasks: Sequence[Task],
    jobs: int,
    on_outcome: OnOutcome,
    run_task: Execute = execute,
) -> None:
    """Run ``tasks`` on ``jobs`` local worker processes, reporting each outcome.

    When a worker dies, the pool is replaced and the runs not yet started go on; the
    runs that were in flight are then run one at a time, each in a fresh process, so a
    run that kills its worker fails alone.
    """
    finished = 0

    def count(task: Task, outcome: Outcome) -> None:
        nonlocal finished
        finished += 1
        on_outcome(task, outcome)

    left = list(tasks)
    suspects: list[Task] = []
    while left:
        crashed, rest = _pool_pass(left, jobs, count, run_task)
        if not crashed and len(rest) == len(left):  # no worker would even start
            for task in rest:
                on_outcome(task, Outcome(task.key, error=NO_WORKER))
            return
        suspects.extend(crashed)
        left = rest
    for i, task in enumerate(suspects):
        crashed, _ = _pool_pass([task], 1, count, run_task)
        if crashed and not finished:
            # Not one run has come back: the workers die as they start, not because of
            # a run. Say so once instead of trying every run alone.
            for other in suspects[i:]:
                on_outcome(other, Outcome(other.key, error=NO_WORKER))
            return
        if crashed:
            on_outcome(task, Outcome(task.key, error=DIED))


def run_ray(
    tasks: Sequence[Task],
    jobs: int | None,
    on_outcome: OnOutcome,
    address: str | None = None,
) -> None:
    """Run ``tasks`` as Ray tasks (one CPU each) and report each outcome as it arrives.

    Uses the Ray instance this process is already connected to; otherwise connects to
    ``address``, or starts a local instance with ``jobs`` CPUs, and shuts down what it
    started when done.
    """
    try:
        import ray
    except ImportError as e:
        raise SweepError(
            "the ray backend needs Ray: pip install 'mobiflow[ray]' (or use backend='local')"
        ) from e
    started = False
    refs: dict[Any, Task] = {}
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(execute)
        refs = {remote.remote(task): task for task in tasks}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                task = refs.pop(ref)
                try:
                    outcome = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a task or worker failure
                    outcome = Outcome(task.key, error=_describe(e))
                on_outcome(task, outcome)
    except BaseException:
        for ref in list(refs):
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


# --------------------------------------------------------------------------------------
# Storing and reading runs
# --------------------------------------------------------------------------------------


@dataclass
class RunRecord:
    """One run of a sweep and where it stands."""

    key: str
    """Folder name."""
    dir: Path
    point: dict[str, Any]
    """Grid values, by dotted key."""
    seed: int
    status: Literal["done", "failed", "missing"]
    """``done``: results stored; ``failed``: see :attr:`error`; ``missing``: not run."""
    error: str | None = None
    ran: bool = False
    """Whether this call ran it (``False``: it was already done, or did not run)."""
    seconds: float | None = None
    """Wall time of the run in its worker, seconds (when known)."""

    def load(self) -> Run:
        """The run's results (``FileNotFoundError`` unless it is done)."""
        if self.status != "done":
            raise FileNotFoundError(f"{self.dir}: the run is {self.status}")
        label = ", ".join(f"{k}={_text(v)}" for k, v in self.point.items())
        return Run.load(self.dir, label=f"{label}, seed={self.seed}" if label else None)


def _params(task: Task, scenario_name: str | None = None) -> dict[str, Any]:
    return {
        "key": task.key,
        "scenario": scenario_name,
        "point": dict(task.point),
        "seed": task.seed,
        "overrides": [list(p) for p in task.overrides],
        "mobiflow_version": _mobiflow.version(),
    }


def store(
    folder: Path, task: Task, outcome: Outcome, series_format: str = DEFAULT_SERIES_FORMAT
) -> None:
    """Write one outcome into its run folder; ``done`` last, by an atomic rename."""
    folder.mkdir(parents=True, exist_ok=True)
    params = _params(task)
    params["seconds"] = round(outcome.seconds, 6)
    if outcome.ok:
        assert outcome.summary is not None
        params["scenario"] = json.loads(outcome.summary).get("scenario")
    data = (json.dumps(params, indent=2) + "\n").encode("utf-8")
    write_atomically(folder / PARAMS_FILE, data)
    if not outcome.ok:
        write_atomically(folder / ERROR_FILE, f"{outcome.error}\n".encode())
        return
    assert outcome.series_csv is not None
    assert outcome.summary is not None
    with contextlib.suppress(Exception):  # a convenience copy only
        text = _mobiflow.apply_overrides(task.text, list(task.overrides), task.source)
        write_atomically(folder / SCENARIO_FILE, text.encode("utf-8"))
    write_atomically(folder / SUMMARY_FILE, outcome.summary.encode("utf-8"))
    write_series(folder, outcome.series_csv, series_format)
    (folder / ERROR_FILE).unlink(missing_ok=True)
    write_atomically(folder / DONE_FILE, b"")


def _status(folder: Path) -> tuple[Literal["done", "failed", "missing"], str | None]:
    if (folder / DONE_FILE).is_file():
        return "done", None
    error = folder / ERROR_FILE
    if error.is_file():
        return "failed", error.read_text(encoding="utf-8").strip()
    return "missing", None


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """The runs of a sweep and their results as DataFrames.

    Metrics keep the units of their names (``goodput_bps`` bits per second, ``_s``
    seconds, ``_ms`` milliseconds, counts without suffix).
    """

    out: Path
    """The sweep's folder."""
    grid: dict[str, list[Any]]
    seeds: list[int]
    runs: list[RunRecord]
    seconds: float = 0.0
    """Wall time of this call, seconds."""
    _frames: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> list[RunRecord]:
        """The runs whose results are stored."""
        return [r for r in self.runs if r.status == "done"]

    @property
    def failed(self) -> list[RunRecord]:
        """The runs that failed (with :attr:`RunRecord.error`)."""
        return [r for r in self.runs if r.status == "failed"]

    @property
    def ran(self) -> int:
        """How many runs this call ran (finished or failed)."""
        return sum(r.ran for r in self.runs)

    @property
    def skipped(self) -> int:
        """How many runs were already done and were not run again."""
        return sum(1 for r in self.runs if r.status == "done" and not r.ran)

    @property
    def ok(self) -> bool:
        """Whether every run is done."""
        return all(r.status == "done" for r in self.runs)

    def __repr__(self) -> str:
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return (
            f"<mobiflow.SweepResult {os.fspath(self.out)!r}: {len(self.runs)} runs "
            f"({len(self.done)} done{failed}), grid {list(self.grid)}, seeds {self.seeds}>"
        )

    def _repr_html_(self) -> str:
        """A notebook shows a sweep as its heading and the mean goodput per grid point
        and flow, with its confidence interval (:meth:`aggregate`)."""
        import polars as pl

        head = html.escape(repr(self).strip("<>"))
        if not self.done:
            return f"<p><b>{head}</b></p>"
        agg = self.aggregate(["goodput_bps"])
        keep = [c for c in agg.columns if not c.startswith("goodput_bps")] + [
            c for c in agg.columns if c.startswith("goodput_bps")
        ]
        table = agg.select(keep).with_columns(
            [(pl.col(c) / 1e6).round(3) for c in agg.columns if c.startswith("goodput_bps")]
        )
        table = table.rename({c: c.replace("goodput_bps", "goodput Mb/s") for c in table.columns})
        return f"<p><b>{head}</b></p>{table._repr_html_()}"

    def _point_columns(self, records: list[RunRecord], repeat: list[int]) -> dict[str, list[Any]]:
        """The grid columns (each label, and its number when it has a unit), ``seed``
        and ``run``, each value repeated once per row of its run."""
        columns: dict[str, list[Any]] = {}
        for key in self.grid:
            for name, values in grid_columns(key, [r.point.get(key) for r in records]).items():
                columns[name] = [v for v, n in zip(values, repeat, strict=True) for _ in range(n)]
        columns["seed"] = [r.seed for r, n in zip(records, repeat, strict=True) for _ in range(n)]
        columns["run"] = [r.key for r, n in zip(records, repeat, strict=True) for _ in range(n)]
        return columns

    def _front(self, records: list[RunRecord], repeat: list[int]) -> pl.DataFrame:
        import polars as pl

        front = pl.DataFrame(self._point_columns(records, repeat))
        return front.with_columns(pl.col("seed").cast(pl.Int64))

    def _frame(self, table: Literal["flows", "links"]) -> pl.DataFrame:
        import polars as pl

        if table in self._frames:
            return self._frames[table]
        records = self.done
        rows_per_run: list[list[dict[str, Any]]] = []
        for record in records:
            summary = json.loads((record.dir / SUMMARY_FILE).read_text(encoding="utf-8"))
            rows_per_run.append(flow_rows(summary) if table == "flows" else link_rows(summary))
        rows = [row for rows in rows_per_run for row in rows]
        # The same schema as Run.flows / Run.links (mobiflow.tables), not inferred.
        metrics = flows_frame(rows) if table == "flows" else links_frame(rows)
        front = self._front(records, [len(r) for r in rows_per_run])
        frame = pl.concat([front, metrics], how="horizontal") if rows else front
        self._frames[table] = frame
        return frame

    def series(self, which: Literal["flow", "link"] = "flow") -> pl.DataFrame:
        """Every finished run's flow (or link) series in one table, with the grid
        columns, ``seed`` and ``run`` in front: the sweep-level series, for plots by
        grid point (``mobiflow plot SWEEP_DIR``) or ``group_by`` across seeds."""
        import polars as pl

        key = f"{which}_series"
        cached = self._frames.get(key)
        if cached is not None:
            return cached
        records = self.done
        parts = [read_series(r.dir)[which] for r in records]
        if not parts:
            return pl.DataFrame()
        front = self._front(records, [p.height for p in parts])
        frame = pl.concat([front, pl.concat(parts, how="diagonal_relaxed")], how="horizontal")
        self._frames[key] = frame
        return frame

    @property
    def flows(self) -> pl.DataFrame:
        """One row per (finished run, flow): the grid keys (as columns named by their
        dotted keys), ``seed``, ``run`` (folder name), ``flow`` (its name) and every
        field of the flow's summary, with ``interval_<name>_bps`` per named interval."""
        return self._frame("flows")

    @property
    def links(self) -> pl.DataFrame:
        """One row per (finished run, link direction): grid keys, ``seed``, ``run`` and
        the direction's summary (``name`` is ``link:a->b``)."""
        return self._frame("links")

    def _key_columns(self) -> list[str]:
        """The grid columns of the tables (labels and their numeric twins)."""
        return [name for key, values in self.grid.items() for name in grid_columns(key, values)]

    def metrics(self) -> list[str]:
        """The numeric per-flow metrics :meth:`aggregate` can average."""
        import polars as pl

        skip = {*self._key_columns(), "seed", "run", "flow", *_FLOW_TEXT}
        return [
            name
            for name, dtype in self.flows.schema.items()
            if name not in skip and dtype.is_numeric() and dtype != pl.Boolean
        ]

    def seeds_matter(self) -> bool | None:
        """Whether the seeds changed anything: ``False`` when every grid point's runs
        gave identical summaries across seeds (a scenario with no random element, such
        as no random loss: the seed then only names the run), ``True`` when some
        differ, ``None`` with fewer than two seeds done at any grid point."""
        frame = self.flows
        keys = [*self._key_columns(), "flow"] if "flow" in frame.columns else self._key_columns()
        values = [c for c in frame.columns if c not in (*keys, "seed", "run")]
        compared = False
        if frame.height:
            for _, part in frame.group_by(keys or ["seed"], maintain_order=True):
                if part["seed"].n_unique() < 2:
                    continue
                compared = True
                if part.select(values).n_unique() > 1:
                    return True
        return False if compared else None

    def aggregate(
        self, metrics: Sequence[str] | None = None, confidence: float = 0.95
    ) -> pl.DataFrame:
        """Per grid point and flow: ``n`` (seeds) and, for each metric, ``<m>_mean``,
        ``<m>_ci_low`` and ``<m>_ci_high``: the mean across seeds and its two-sided
        Student-t confidence interval at level ``confidence``.

        The interval is null with one seed, and also when the seeds gave identical
        results (:meth:`seeds_matter` is ``False``: a scenario with no random element):
        then the runs are one measurement repeated, not a sample, and a zero-width
        interval would claim a precision nobody measured. ``seeds_identical`` says which
        rows are such repeats.

        ``metrics`` defaults to every numeric flow metric (:meth:`metrics`).
        """
        import polars as pl

        frame = self.flows
        chosen = list(metrics) if metrics is not None else self.metrics()
        unknown = [m for m in chosen if m not in frame.columns]
        if unknown and frame.height:
            raise SweepError(
                f"unknown metric {unknown[0]!r}; the metrics are {', '.join(self.metrics())}"
            )
        grid_keys = self._key_columns()
        keys = [*grid_keys, "flow"] if "flow" in frame.columns else grid_keys
        values = [c for c in frame.columns if c not in (*keys, "seed", "run")]
        out_rows: list[dict[str, Any]] = []
        if frame.height:
            for group_key, part in frame.group_by(keys or ["seed"], maintain_order=True):
                row: dict[str, Any] = dict(zip(keys, group_key, strict=True)) if keys else {}
                row["n"] = part.height
                identical = part.height > 1 and part.select(values).n_unique() == 1
                row["seeds_identical"] = identical
                for m in chosen:
                    mean, low, high = mean_ci(part[m].cast(pl.Float64).to_list(), confidence)
                    row[f"{m}_mean"] = None if math.isnan(mean) else mean
                    row[f"{m}_ci_low"] = None if identical else low
                    row[f"{m}_ci_high"] = None if identical else high
                out_rows.append(row)
        if not out_rows:
            return pl.DataFrame()
        result = pl.from_dicts(out_rows, infer_schema_length=None)
        floats = [c for c in result.columns if c.endswith(("_mean", "_ci_low", "_ci_high"))]
        return result.with_columns([pl.col(c).cast(pl.Float64) for c in floats])

    def load(self, index: int) -> Run:
        """The results of run ``index`` (in plan order) as a :class:`mobiflow.Run`."""
        return self.runs[index].load()

    def write_tables(
        self, metrics: Sequence[str] | None = None, table_format: str = DEFAULT_SERIES_FORMAT
    ) -> tuple[Path, Path]:
        """Write ``results.parquet`` (:attr:`flows`), ``summary.parquet``
        (:meth:`aggregate`) and ``series.parquet`` (:meth:`series`, every run's flow
        series with its grid point) into the sweep's folder; with
        ``table_format="csv"``, ``results.csv`` (without list columns), ``summary.csv``
        and ``series.csv``. Returns the paths of the first two."""
        import polars as pl

        fmt = check_series_format(table_format)
        results = self.out / f"results.{fmt}"
        summary = self.out / f"summary.{fmt}"
        series = self.out / f"series.{fmt}"
        flows = self.flows
        agg = self.aggregate(metrics)
        flow_series = self.series("flow")
        if fmt == "csv":
            flat = flows.select([c for c, t in flows.schema.items() if not isinstance(t, pl.List)])
            flat.write_csv(results)
            agg.write_csv(summary)
            flow_series.write_csv(series)
        else:
            flows.write_parquet(results, compression="zstd")
            agg.write_parquet(summary, compression="zstd")
            flow_series.write_parquet(series, compression="zstd")
        for other in ("results", "summary", "series"):
            for ext in ("parquet", "csv"):
                if ext != fmt:
                    (self.out / f"{other}.{ext}").unlink(missing_ok=True)
        return results, summary


# --------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------


class _Progress:
    """A rich progress bar on stderr (runs done, rate, elapsed, ETA), or nothing."""

    def __init__(self, enabled: bool, total: int, skipped: int, label: str) -> None:
        self._progress: Any = None
        self._task: Any = None
        self.failed = 0
        self._label = label
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("-- runs/s" if speed is None else f"{speed:.2f} runs/s")

        console = Console(stderr=True)
        if console.is_jupyter and importlib.util.find_spec("ipywidgets") is None:
            # rich draws a live bar in a notebook with ipywidgets only (and warns
            # without them): plain text to the cell's stderr instead.
            console = Console(stderr=True, force_jupyter=False)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            Rate(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        note = f" ({skipped} already done)" if skipped else ""
        self._progress.start()
        self._task = self._progress.add_task(f"{label}{note}", total=total)

    def advance(self, ok: bool) -> None:
        if not ok:
            self.failed += 1
        if self._progress is not None:
            update: dict[str, Any] = {"advance": 1}
            if not ok:
                update["description"] = f"{self._label} [red]{self.failed} failed[/red]"
            self._progress.update(self._task, **update)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


# --------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def sweep(
    scenario: Scenario | PathLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: Sequence[int] | None = None,
    *,
    out: PathLike | None = None,
    backend: Backend = "local",
    jobs: int | None = None,
    address: str | None = None,
    progress: bool = True,
    resume: bool = True,
    series_format: str = DEFAULT_SERIES_FORMAT,
    budget: Budget = True,
) -> SweepResult:
    """Run ``scenario`` for every combination of ``grid`` values and every seed.

    ``grid`` maps dotted keys to lists of values (``{"flows.0.cc": ["reno", "cubic"]}``);
    ``seeds`` defaults to the scenario's own seed. Results go to ``out`` (default
    ``runs/<scenario name>``), one folder per run, each stored as soon as it finishes.
    With ``resume`` (the default) runs already done there are not run again; without it
    every run is run anew.

    ``backend="local"`` runs ``jobs`` processes (default: the cores this process may
    use); ``backend="ray"`` runs on Ray (``address`` of a cluster, else a local
    instance with ``jobs`` CPUs). ``progress`` shows a bar with the rate and ETA.
    ``series_format`` is how each run's series are stored: ``"parquet"`` (the
    default) or ``"csv"``. ``budget`` bounds the memory of each run (as for
    :meth:`Scenario.run`); every run is checked against it before the first starts.

    Returns a :class:`SweepResult`; failed runs are in :attr:`SweepResult.failed`, not
    raised. Raises :class:`mobiflow.ScenarioError` (naming the key) for a grid value the
    scenario refuses and :class:`SweepError` for a malformed grid, before running.
    """
    if backend not in ("local", "ray"):
        raise SweepError(f"unknown backend {backend!r}; expected 'local' or 'ray'")
    if jobs is not None and jobs < 1:
        raise SweepError(f"jobs must be at least 1, got {jobs}")
    try:
        fmt = check_series_format(series_format)
    except ValueError as e:
        raise SweepError(str(e)) from None
    base = _as_scenario(scenario)
    try:
        resolve_budget(budget)
    except ValueError as e:  # a size that does not parse
        raise SweepError(str(e)) from None
    tasks = plan(base, grid, seeds, budget)
    folder = Path(out) if out is not None else Path("runs") / base.name
    folder.mkdir(parents=True, exist_ok=True)
    axes = _check_grid(grid)
    seed_list = _check_seeds(seeds, base.seed)
    definition = {
        "scenario": base.name,
        "source": None if base.source is None else os.fspath(base.source),
        "grid": axes,
        "seeds": seed_list,
        "runs": [t.key for t in tasks],
        "mobiflow_version": _mobiflow.version(),
    }
    write_atomically(
        folder / SWEEP_FILE, (json.dumps(definition, indent=2, default=str) + "\n").encode()
    )

    records: dict[str, RunRecord] = {}
    todo: list[Task] = []
    for task in tasks:
        run_dir = folder / task.key
        if not resume:
            (run_dir / DONE_FILE).unlink(missing_ok=True)
        status, error = _status(run_dir)
        records[task.key] = RunRecord(task.key, run_dir, dict(task.point), task.seed, status, error)
        if status != "done":
            todo.append(task)

    started = time.perf_counter()
    bar = _Progress(progress and bool(todo), len(todo), len(tasks) - len(todo), base.name)

    def on_outcome(task: Task, outcome: Outcome) -> None:
        record = records[task.key]
        try:
            store(record.dir, task, outcome, fmt)
            record.status = "done" if outcome.ok else "failed"
            record.error = outcome.error
        except OSError as e:
            record.status, record.error = "failed", f"cannot store the results: {e}"
        record.ran = True
        record.seconds = outcome.seconds
        bar.advance(record.status == "done")

    try:
        if todo:
            workers = jobs or _default_jobs()
            if backend == "ray":
                run_ray(todo, jobs, on_outcome, address)
            else:
                run_local(todo, workers, on_outcome)
    finally:
        bar.close()
    return SweepResult(
        folder,
        axes,
        seed_list,
        [records[t.key] for t in tasks],
        seconds=time.perf_counter() - started,
    )


def load_sweep(out: PathLike) -> SweepResult:
    """The results of a sweep from its folder (``sweep.json`` and the run folders),
    without running anything."""
    folder = Path(out)
    try:
        definition = json.loads((folder / SWEEP_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SweepError(f"{folder}: not a sweep folder (no {SWEEP_FILE})") from None
    runs: list[RunRecord] = []
    for key in definition["runs"]:
        run_dir = folder / key
        status, error = _status(run_dir)
        try:
            params = json.loads((run_dir / PARAMS_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            params = {"point": {}, "seed": -1}
        runs.append(RunRecord(key, run_dir, params["point"], params["seed"], status, error))
    return SweepResult(folder, definition["grid"], definition["seeds"], runs)


# --------------------------------------------------------------------------------------
# SWEEP.toml
# --------------------------------------------------------------------------------------

SPEC_KEYS = ("scenario", "grid", "seeds", "out", "metrics")


@dataclass(frozen=True)
class SweepSpec:
    """A sweep file (``SWEEP.toml``)::

        scenario = "../scenarios/examples/rwnd_limited.toml"  # relative to this file
        seeds = [1, 2, 3]
        out = "../runs/rwnd"                                   # relative to this file
        metrics = ["goodput_bps", "retransmits"]               # optional

        [grid]
        "flows.bulk.cc" = ["newreno", "cubic"]
        "tcp.rcv_buf" = ["64KB", "256KB", "1MB"]

    Grid keys may also be written as TOML tables (``[grid.flows.bulk] cc = [...]``).
    """

    path: Path
    scenario: Path
    grid: dict[str, list[Any]]
    seeds: list[int] | None
    out: Path | None
    metrics: list[str] | None


def _flatten_grid(table: Mapping[str, Any], prefix: str, into: dict[str, list[Any]]) -> None:
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            _flatten_grid(value, dotted, into)
        elif isinstance(value, list):
            into[dotted] = value
        else:
            raise SweepError(f"grid.{dotted}: expected a list of values, got {value!r}")


def load_spec(path: PathLike) -> SweepSpec:
    """Read and check a sweep file. Errors (:class:`SweepError`, or
    :class:`mobiflow.ScenarioError` for invalid TOML) name the file and the key."""
    spec_path = Path(path)
    where = os.fspath(spec_path)
    try:
        text = spec_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"{where}: no such file") from None
    except OSError as e:
        raise SweepError(f"{where}: cannot read: {e}") from None
    doc = json.loads(_mobiflow.toml_to_json(text, where))
    for key in doc:
        if key not in SPEC_KEYS:
            raise SweepError(f"{where}: {key}: unknown key; expected one of {', '.join(SPEC_KEYS)}")
    base = spec_path.parent
    scenario = doc.get("scenario")
    if not isinstance(scenario, str) or not scenario:
        raise SweepError(f"{where}: scenario: required, the path of the scenario file")
    grid_doc = doc.get("grid", {})
    if not isinstance(grid_doc, Mapping):
        raise SweepError(f"{where}: grid: expected a table of dotted key = [values]")
    grid: dict[str, list[Any]] = {}
    try:
        _flatten_grid(grid_doc, "", grid)
        _check_grid(grid)
    except SweepError as e:
        raise SweepError(f"{where}: {e}") from None
    seeds = doc.get("seeds")
    if seeds is not None:
        if not isinstance(seeds, list):
            raise SweepError(f"{where}: seeds: expected a list of integers, like [1, 2, 3]")
        try:
            _check_seeds(seeds, 1)
        except SweepError as e:
            raise SweepError(f"{where}: {e}") from None
    out = doc.get("out")
    if out is not None and (not isinstance(out, str) or not out):
        raise SweepError(f"{where}: out: expected a folder path")
    metrics = doc.get("metrics")
    if metrics is not None and (
        not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics)
    ):
        raise SweepError(f"{where}: metrics: expected a list of metric names")
    return SweepSpec(
        path=spec_path,
        scenario=base / scenario,
        grid=grid,
        seeds=seeds,
        out=None if out is None else base / out,
        metrics=metrics,
    )
