"""The reproduction framework: one declaration per paper, one command line, runs on the
public API, a structured report that ``mobiflow reproduce`` renders without parsing
it."""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mobiflow import _resources
from mobiflow.repro import framework, report
from mobiflow.repro.claims import HOLDS, Claim
from mobiflow.repro.framework import (
    Figure,
    Figures,
    Heading,
    Options,
    Param,
    Report,
    Reproduction,
    Table,
    Variant,
)

REPRO_DIR = Path(report.__file__).parent
SCENARIO = _resources.SCENARIOS / "examples" / "rwnd_limited.toml"


def _toy_claims(results: Mapping[str, Any]) -> list[Claim]:
    mbps = results["goodput_bps"]["short"] / 1e6
    return [Claim("toy", "it moves data", "goodput", "> 0", "made up", f"{mbps:.2f}", HOLDS, "> 0")]


def _toy_run(opts: Options) -> Report:
    """Two variants of a shipped scenario; one keeps its results folder."""
    seed = opts.params["seed"]
    variants = [
        Variant("short", SCENARIO, {"run.seed": seed}, keep=True),
        Variant("shorter", SCENARIO, {"run.seed": seed + 1}),
    ]
    runs = framework.run_variants(
        variants, opts.jobs, folder=lambda v: opts.out / "runs" / v.key, extra=opts.sets
    )
    goodput = {k: r.summary["flows"][0]["goodput_bps"] for k, r in runs.items()}
    opts.say(f"ran {len(runs)}\nsecond line")
    blocks: list[framework.Block] = [
        Heading(1, "Toy: reproduction"),
        "",
        Heading(2, "Goodput"),
        "",
        Table(["run", "Mb/s"], [[k, f"{v / 1e6:.2f}"] for k, v in goodput.items()]),
        "",
    ]
    if opts.figures:
        blocks += [Figure("a.png"), Figures((Figure("b.png", "B"), Figure("c.png")))]
    results = {
        "goodput_bps": goodput,
        "quick": opts.quick,
        "skipped": sorted(opts.skip),
        "sets": dict(opts.sets),
        "kept": [str(p.relative_to(opts.out)) for p in sorted((opts.out / "runs").iterdir())],
    }
    return Report("toy", blocks, results)


TOY = Reproduction(
    key="toy",
    title="A toy paper",
    run=_toy_run,
    parts=("extra",),
    params=(Param("seed", int, 1, "first seed"),),
    quick=lambda o: dataclasses.replace(o, figures=False, skip=o.skip | {"extra"}),
    claims=_toy_claims,
    takes_sets=True,
)


def test_report_renders_its_blocks_under_a_section_with_links_into_its_folder() -> None:
    rep = Report(
        "toy",
        [
            Heading(1, "Title"),
            "",
            Heading(2, "Part"),
            Table(["a", "b"], [[1, "x"]]),
            Table(["a"], [[2]], compact_rule=True),
            Figure("f.png"),
            Figures((Figure("g.png", "G"), Figure("h.png"))),
        ],
        {},
    )
    alone = rep.markdown()
    assert alone.startswith("# Title\n\n## Part\n| a | b |\n| --- | --- |\n| 1 | x |\n")
    assert "| a |\n|---|\n| 2 |" in alone
    assert "![f.png](f.png)\n![G](g.png) ![h.png](h.png)\n" in alone
    section = rep.markdown(links="toy/", depth=1, title=False)
    assert section.startswith("\n### Part\n")
    assert "Title" not in section
    assert "![f.png](toy/f.png)" in section
    assert "![G](toy/g.png)" in section
    assert rep.figures == ["f.png", "g.png", "h.png"]
    assert [h for h, _ in rep.tables] == ["Part", "Part"]


def test_one_command_line_runs_a_declared_reproduction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "toy"
    code = framework.main(
        TOY,
        ["--out", str(out), "--jobs", "1", "--seed", "2", "--no-extra", "--set", "flows.0.cc=reno"],
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "ran 2\nsecond line" in printed
    assert f"wrote {out / 'report.md'}" in printed
    text = (out / "report.md").read_text()
    assert text.startswith("# Toy: reproduction\n")
    assert "![B](b.png)" in text
    results = json.loads((out / "results.json").read_text())
    assert results["skipped"] == ["extra"]
    assert results["sets"] == {"flows.0.cc": "reno"}
    assert results["kept"] == ["runs/short"]  # only the variant that keeps its folder
    kept = json.loads((out / "runs" / "short" / "summary.json").read_text())
    assert kept["flows"][0]["cc"] == "reno"  # --set reached every run
    assert results["goodput_bps"]["short"] > 0


def test_quick_changes_what_the_reproduction_declares(tmp_path: Path) -> None:
    opts = TOY.options(tmp_path / "q", quick=True, jobs=1)
    assert opts.quick
    assert not opts.figures
    assert not opts.wants("extra")
    assert opts.params == {"seed": 1}
    rep = TOY.reproduce(opts)
    assert rep.figures == []
    assert [c.verdict for c in rep.claims] == [HOLDS]


def test_joint_report_calls_reproductions_and_renders_their_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(report.REPRODUCTIONS, "toy", TOY)
    monkeypatch.setitem(report.SEEDS, "toy", report.Seed("toy", TOY.title, __name__, "report.md"))
    lines: list[str] = []
    sections = report.reproduce(["toy"], tmp_path, validation=False, progress=lines.append, jobs=1)
    assert [s.status for s in sections] == ["done"]
    assert "  toy: ran 2" in lines
    assert "  toy: second line" in lines
    text = (tmp_path / "report.md").read_text()
    assert "## A toy paper\n\n### Goodput\n" in text
    assert "# Toy: reproduction" not in text  # the section's heading stands for the title
    assert "![a.png](toy/a.png)" in text
    assert "![B](toy/b.png) ![c.png](toy/c.png)" in text
    assert "it moves data" in text  # its claim is in the claims table
    assert (tmp_path / "toy" / "report.md").is_file()


def test_every_reproduction_is_declared_and_has_no_command_line_of_its_own() -> None:
    """No module but the framework parses arguments, runs its own thread pool over
    scenario files or finds files relative to itself."""
    assert list(report.REPRODUCTIONS) == ["afc", "rsfc", "handoff", "freeze-dccp", "fld"]
    for key, repro in report.REPRODUCTIONS.items():
        assert repro.key == key
        source = (REPRO_DIR / f"{repro.module.rsplit('.', 1)[1]}.py").read_text()
        tree = ast.parse(source)
        imported = {
            n.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for n in node.names
        }
        assert "argparse" not in imported, key
        assert "__file__" not in source, key
        assert "mobiflow.run(" not in source, key


def test_a_section_of_the_joint_report_ends_with_one_blank_line() -> None:
    """The validation section's text ends with a newline of its own; the joint report
    strips it, as every section, so the file ends as it did before the framework."""
    seed = report.Seed("validation", "V", None, "")
    text = report.compose([report.Section(seed, "done", markdown="| a |\n")], quick=False)
    assert text.endswith("## V\n\n| a |\n\n")
