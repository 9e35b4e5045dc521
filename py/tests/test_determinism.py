"""Determinism across processes (issue 22, point 6): the same scenario and seed give
byte-identical summaries and series in separate processes, from the command line, from
the Python API (``mobiflow.run`` and ``Scenario.run``), from a local sweep's worker
processes and from a Ray sweep's tasks. The scenario draws random numbers (link loss,
RED) so that a seed that did not reach the engine, or a stream consumed in another
order, would show."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import mobiflow
from mobiflow import sweeps

from .conftest import ROOT, run_cli

FILES = ("summary.json", "flow_series.csv", "tcp_series.csv", "tfrc_series.csv", "link_series.csv")
SEED = 11
RANDOM_LINK = (
    ("links.0.loss", "0.01"),
    ("links.0.queue", "red"),
    ("links.0.queue_limit", "30p"),
)


def digests(folder: Path) -> dict[str, str]:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES}


def scenario(tiny: Path, tmp_path: Path) -> Path:
    """The tiny scenario with its seed and random link written into the file, so that
    every path below runs the same text without overrides."""
    doc = mobiflow.Scenario.load(tiny).update([*RANDOM_LINK, ("run.seed", SEED)])
    path = tmp_path / "random_link.toml"
    doc.save(path)
    return path


@dataclass
class Reference:
    """The scenario, and the digests of its results by every path but Ray: ``runs``
    for seed ``SEED`` by path name, ``other_seed`` for ``SEED + 1`` in this process."""

    path: Path
    runs: dict[str, dict[str, str]]
    other_seed: dict[str, str]


@pytest.fixture(scope="module")
def reference(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    tmp_path = tmp_path_factory.mktemp("determinism")
    path = scenario(tiny, tmp_path)
    results: dict[str, dict[str, str]] = {}

    # Two separate `mobiflow run` processes.
    for name in ("cli_1", "cli_2"):
        out = tmp_path / name
        proc = run_cli("run", path, "--out", out, "--format", "csv", "--json")
        assert proc.returncode == 0, proc.stderr
        results[name] = digests(out)

    # The Python API, in a process of its own: mobiflow.run and Scenario.run.
    script = textwrap.dedent(
        """
        import sys
        import mobiflow
        path, out_run, out_scenario = sys.argv[1:]
        mobiflow.run(path, out=out_run, series_format="csv")
        mobiflow.Scenario.load(path).run().save(out_scenario, series_format="csv")
        """
    )
    api = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            os.fspath(path),
            os.fspath(tmp_path / "api_run"),
            os.fspath(tmp_path / "api_scenario"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert api.returncode == 0, api.stderr
    results["api_run"] = digests(tmp_path / "api_run")
    results["api_scenario"] = digests(tmp_path / "api_scenario")

    # This process, and a local sweep's two worker processes (two seeds, one each).
    mobiflow.Scenario.load(path).run().save(tmp_path / "here", series_format="csv")
    results["here"] = digests(tmp_path / "here")
    other = mobiflow.Scenario.load(path).with_seed(SEED + 1).run()
    other.save(tmp_path / "here_other_seed", series_format="csv")
    by_seed = swept_dirs(path, tmp_path / "sweep", "local")
    results["sweep"] = digests(by_seed[SEED])
    assert digests(by_seed[SEED + 1]) == digests(tmp_path / "here_other_seed")
    # And the summary is not trivially equal: the random link dropped packets.
    summary = mobiflow.read_summary(tmp_path / "cli_1")
    assert sum(link["drops"] for link in summary["links"]) > 0
    return Reference(path, results, digests(tmp_path / "here_other_seed"))


def swept_dirs(path: Path, out: Path, backend: sweeps.Backend) -> dict[int, Path]:
    """Sweep seeds ``SEED`` and ``SEED + 1`` with two workers; each run's folder."""
    swept = sweeps.sweep(
        path,
        None,
        [SEED, SEED + 1],
        out=out,
        backend=backend,
        jobs=2,
        progress=False,
        series_format="csv",
    )
    assert swept.ok
    by_seed = {record.seed: record.dir for record in swept.done}
    assert sorted(by_seed) == [SEED, SEED + 1]
    return by_seed


def test_same_bytes_from_cli_python_api_and_sweep_workers(reference: Reference) -> None:
    results = reference.runs
    reference_run = results["cli_1"]
    for name, got in results.items():
        assert got == reference_run, f"{name} differs from cli_1"


def test_a_ray_sweep_gives_the_same_bytes_as_local_runs_cli_and_api(
    reference: Reference, tmp_path: Path
) -> None:
    """The two runs as tasks of a local Ray instance with 2 CPUs (Ray's own worker
    processes), against every other path."""
    ray = pytest.importorskip("ray", reason="ray cannot be imported (pip install 'mobiflow[ray]')")
    assert not ray.is_initialized()
    by_seed = swept_dirs(reference.path, tmp_path / "ray", "ray")
    assert not ray.is_initialized(), "the sweep shut down the Ray instance it started"
    got = digests(by_seed[SEED])
    for name, want in reference.runs.items():
        assert got == want, f"the Ray sweep differs from {name}"
    assert digests(by_seed[SEED + 1]) == reference.other_seed


def test_another_seed_gives_other_bytes(tiny: Path, tmp_path: Path) -> None:
    """The check above would pass for a run that ignored its seed; this one would not."""
    path = scenario(tiny, tmp_path)
    a = mobiflow.Scenario.load(path).run().json
    b = mobiflow.Scenario.load(path).with_seed(SEED + 1).run().json
    assert a != b
    assert ROOT.is_dir()
