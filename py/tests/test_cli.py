"""The ``mobiflow`` command line, end to end, in child processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import mobiflow

from .conftest import ROOT, Cli, run_cli

FLOW_KEYS = {
    "name",
    "goodput_bps",
    "intervals",
    "retransmits",
    "timeouts",
    "zero_windows",
    "idle_rtts",
}
LINK_KEYS = {"drops"}

# A key that no scenario has, and a value that no rate parses as.
UNKNOWN_KEY = "flows.0.no_such_knob"
BAD_RATE_KEY = "links.0.rate"
BAD_RATE_VALUE = "fast"

OUTPUT_FILES = (
    "summary.json",
    "flow_series.parquet",
    "tcp_series.parquet",
    "tfrc_series.parquet",
    "link_series.parquet",
)
CSV_FILES = (
    "summary.json",
    "flow_series.csv",
    "tcp_series.csv",
    "tfrc_series.csv",
    "link_series.csv",
)


@pytest.fixture(scope="module")
def json_run(example: Path) -> subprocess.CompletedProcess[str]:
    """One ``mobiflow run --json`` of the example, shared by the tests that read it."""
    return run_cli("run", example, "--json")


def assert_clean_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    """Exit status ``code``, one ``error:`` line on stderr naming every needle, no traceback."""
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr


def test_version_matches_the_package(cli: Cli) -> None:
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"mobiflow {mobiflow.__version__}\n"


def test_help_describes_commands_and_arguments(cli: Cli) -> None:
    proc = cli("run", "--help")
    assert proc.returncode == 0, proc.stderr
    for text in ("SCENARIO.toml", "Scenario file", "--set", "KEY=VALUE", "--out", "--json"):
        assert text in proc.stdout


def test_run_json_prints_only_the_summary(json_run: subprocess.CompletedProcess[str]) -> None:
    assert json_run.returncode == 0, json_run.stderr
    summary: dict[str, Any] = json.loads(json_run.stdout)  # all of stdout is JSON
    assert summary["flows"], "the example has flows"
    for flow in summary["flows"]:
        assert flow.keys() >= FLOW_KEYS
        assert isinstance(flow["goodput_bps"], float | int)
        assert isinstance(flow["intervals"], dict)
    assert summary["links"], "the example has links"
    for link in summary["links"]:
        assert link.keys() >= LINK_KEYS


def test_run_prints_a_table_of_flows_and_links(cli: Cli, tiny: Path) -> None:
    proc = cli("run", tiny)
    assert proc.returncode == 0, proc.stderr
    summary = mobiflow.run(tiny)
    for flow in summary["flows"]:
        assert flow["name"] in proc.stdout
        assert f"{flow['goodput_bps'] / 1e6:.3f}" in proc.stdout
    for link in summary["links"]:
        assert link["name"] in proc.stdout
    for interval in ("first", "rest"):
        assert interval in proc.stdout
    assert "Mb/s" in proc.stdout


def test_unknown_set_key_exits_2_naming_the_key(cli: Cli, example: Path) -> None:
    proc = cli("run", example, "--set", f"{UNKNOWN_KEY}=1")
    assert_clean_error(proc, 2, UNKNOWN_KEY, str(example))


def test_bad_set_value_exits_2_naming_the_key(cli: Cli, example: Path) -> None:
    proc = cli("run", example, "--set", f"{BAD_RATE_KEY}={BAD_RATE_VALUE}")
    assert_clean_error(proc, 2, BAD_RATE_KEY, BAD_RATE_VALUE)


def test_malformed_set_exits_2(cli: Cli, example: Path) -> None:
    proc = cli("run", example, "--set", "seed")
    assert_clean_error(proc, 2, '--set "seed"', "KEY=VALUE")


def test_missing_file_exits_2(cli: Cli) -> None:
    proc = cli("run", "scenarios/no_such_scenario.toml")
    assert_clean_error(proc, 2, "scenarios/no_such_scenario.toml", "no such file")


def test_bad_value_in_the_file_exits_2_naming_file_and_key(
    cli: Cli, tiny: Path, tmp_path: Path
) -> None:
    text = tiny.read_text(encoding="utf-8").replace('rate = "4Mbps"', 'rate = "fast"')
    broken = tmp_path / "broken.toml"
    broken.write_text(text, encoding="utf-8")
    proc = cli("validate", broken)
    assert_clean_error(proc, 2, str(broken), "flows.0.reader.rate", "fast")


def test_validate_describes_without_running(
    cli: Cli, example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = cli("validate", example)
    assert proc.returncode == 0, proc.stderr
    monkeypatch.chdir(ROOT)  # the CLI runs from the root: same relative path
    desc = mobiflow.validate(example)
    assert desc["scenario"] in proc.stdout
    for flow in desc["flows"]:
        assert flow["name"] in proc.stdout

    proc = cli("validate", example, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == desc


def test_validate_refuses_a_bad_set(cli: Cli, example: Path) -> None:
    proc = cli("validate", example, "--set", f"{UNKNOWN_KEY}=1")
    assert_clean_error(proc, 2, UNKNOWN_KEY)


def test_out_writes_summary_and_series(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "results" / "nested"
    proc = cli("run", tiny, "--out", out, "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    # --json prints exactly the bytes of summary.json.
    assert (out / "summary.json").read_text(encoding="utf-8") == proc.stdout
    series = mobiflow.read_series(out)
    assert series["flow"].columns[:3] == ["time_s", "flow_index", "flow"]
    assert series["link"].columns[:3] == ["time_s", "dir_index", "dir"]


def test_format_csv_writes_csv_in_the_same_naming(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    proc = cli("run", tiny, "--out", tmp_path, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(CSV_FILES)
    flow_header = (tmp_path / "flow_series.csv").read_text(encoding="utf-8").splitlines()[0]
    assert flow_header.split(",")[:3] == ["time_s", "flow_index", "flow"]
    link_header = (tmp_path / "link_series.csv").read_text(encoding="utf-8").splitlines()[0]
    assert link_header.split(",")[:3] == ["time_s", "dir_index", "dir"]
    bad = cli("run", tiny, "--out", tmp_path, "--format", "xlsx")
    assert_clean_error(bad, 2, "--format xlsx: expected parquet or csv")


def test_shell_completion_is_offered(cli: Cli) -> None:
    proc = cli("--help")
    assert proc.returncode == 0, proc.stderr
    assert "--install-completion" in proc.stdout
    assert "--show-completion" in proc.stdout


def test_out_keeps_unrelated_files(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    proc = cli("run", tiny, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert "results written to" in proc.stdout


def test_same_seed_gives_identical_bytes(cli: Cli, tiny: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        proc = cli("run", tiny, "--out", out, "--set", "run.seed=7", "--format", "csv")
        assert proc.returncode == 0, proc.stderr
    for name in CSV_FILES:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert mobiflow.read_summary(first)["seed"] == 7
    rows = (first / "flow_series.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) > 1, "the tiny scenario samples its flows"
    assert any(',"short, sized",' in row for row in rows), "names with commas are quoted"


def test_interrupt_exits_130_quietly(tmp_path: Path) -> None:
    """Ctrl-C during a run ends the process at once with status 130 and no traceback,
    even while the engine is busy (here: a stand-in that sleeps without the GIL)."""
    script = textwrap.dedent(
        """
        import sys, time
        import mobiflow.cli as cli

        def slow_run(*args, **kwargs):
            print("started", flush=True)
            time.sleep(60)
            return "{}"

        cli._mobiflow.run_file = slow_run
        cli.main(["run", sys.argv[1]])
        """
    )
    scenario = tmp_path / "any.toml"
    scenario.write_text("", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-c", script, os.fspath(scenario)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert time.monotonic() - started < 10
    assert stderr == ""
    assert stdout == ""
