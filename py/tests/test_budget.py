"""Resource budgets: a scenario that would need more memory than the budget is refused
before it runs, naming the file, the key and the estimate (issue 22, point 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mobiflow
from mobiflow import _mobiflow, sweeps

from .conftest import run_cli

ONE_NS = ("measure.sample_interval", "1ns")


def minute(tiny: Path, tmp_path: Path) -> Path:
    """The tiny scenario stretched to 60 s (the issue's example)."""
    text = tiny.read_text(encoding="utf-8").replace('duration = "5s"', 'duration = "60s"')
    path = tmp_path / "minute.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_one_nanosecond_sampling_is_refused_with_the_estimate(tiny: Path, tmp_path: Path) -> None:
    scenario = minute(tiny, tmp_path)
    proc = run_cli("run", scenario, "--set", "=".join(ONE_NS), timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"error: {scenario}: measure.sample_interval: "), line
    # 60 s / 1 ns + 1 samples, for two flows and two link directions.
    assert f"{4 * 60_000_000_001} series rows" in line, line
    assert "TiB of memory" in line, line
    assert "--no-budget" in line, line
    assert proc.stdout == ""


def test_the_budget_is_a_flag_and_no_budget_turns_it_off(tiny: Path) -> None:
    # 5 s sampled every 100 ms: 51 samples of 2 flows and 2 directions, about 40 KB.
    refused = run_cli("run", tiny, "--budget", "10KB")
    assert refused.returncode == 2, refused.stderr
    assert "over the budget of 10.0 KiB" in refused.stderr
    assert "204 series rows" in refused.stderr
    assert run_cli("run", tiny, "--budget", "1MB", "--json").returncode == 0
    assert run_cli("run", tiny, "--budget", "10KB", "--no-budget", "--json").returncode == 2
    assert run_cli("run", tiny, "--no-budget", "--json").returncode == 0
    bad = run_cli("run", tiny, "--budget", "lots")
    assert bad.returncode == 2
    assert bad.stderr.startswith('error: --budget: invalid size "lots"'), bad.stderr


def test_python_run_refuses_over_budget_and_takes_a_keyword(tiny: Path, tmp_path: Path) -> None:
    scenario = mobiflow.Scenario.load(minute(tiny, tmp_path)).set(*ONE_NS)
    with pytest.raises(mobiflow.ScenarioError) as err:
        scenario.run()
    assert err.value.key == "measure.sample_interval"
    assert "series rows" in err.value.reason
    small = mobiflow.Scenario.load(tiny)
    with pytest.raises(mobiflow.ScenarioError):
        small.run(budget="10KB")
    with pytest.raises(mobiflow.ScenarioError):
        mobiflow.run(tiny, budget=10_000)
    assert small.run(budget=False).summary["flows"]
    assert small.run(budget="1MB").summary == small.run().summary
    with pytest.raises(ValueError, match="invalid size"):
        small.run(budget="lots")


def test_estimate_counts_rows_as_documented(tiny: Path) -> None:
    estimate = json.loads(_mobiflow.estimate_str(tiny.read_text(encoding="utf-8")))
    assert estimate["samples"] == 51
    assert estimate["flow_rows"] == 2 * 51
    assert estimate["link_rows"] == 2 * 51
    assert estimate["bytes"] == estimate["series_bytes"] + estimate["packet_bytes"]
    assert _mobiflow.default_budget() == 4 << 30


def test_a_sweep_is_refused_before_any_run_starts(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    grid = {"measure.sample_interval": ["100ms", "1ns"]}
    with pytest.raises(mobiflow.ScenarioError) as err:
        sweeps.sweep(minute(tiny, tmp_path), grid, out=out, progress=False)
    assert err.value.key == "measure.sample_interval"
    assert not out.exists(), "nothing was run or stored"


def test_the_sweep_command_is_refused_with_exit_2(tiny: Path, tmp_path: Path) -> None:
    spec = tmp_path / "sweep.toml"
    out = tmp_path / "runs"
    spec.write_text(
        f'scenario = "{minute(tiny, tmp_path)}"\nout = "{out}"\n'
        '[grid]\n"measure.sample_interval" = ["100ms", "1ns"]\n',
        encoding="utf-8",
    )
    proc = run_cli("sweep", spec, "--no-progress")
    assert proc.returncode == 2, proc.stderr
    assert "measure.sample_interval" in proc.stderr
    assert "series rows" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()
