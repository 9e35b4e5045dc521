"""The ns-2 cross-validation (validation/ns2) as part of the test suite.

Runs every twin scenario in mobiflow and in ns-2 and requires every goodput comparison
to be within its tolerance. Skips, saying why, where ns-2 is not installed.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mobiflow_validate_ns2", ROOT / "validation" / "ns2" / "validate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


validate = _load()

needs_ns = pytest.mark.skipif(
    shutil.which("ns") is None, reason="ns-2 is not installed (apt-get install -y ns2)"
)


@needs_ns
@pytest.mark.parametrize("case", sorted(validate.CASES))
def test_twin_scenario_agrees_with_ns2(case: str) -> None:
    rows = validate.validate([case], have_ns=True)
    failed = [r for r in rows if r.status == "FAIL"]
    assert not failed, "\n".join(
        f"{r.metric}: ns-2 {r.ns2:.3f}, mobiflow {r.mobiflow:.3f} ({r.difference:+.1%})"
        for r in failed
    )
    assert any(r.status == "pass" for r in rows)


def test_every_case_has_both_twins() -> None:
    here = ROOT / "validation" / "ns2"
    for case in validate.CASES:
        assert validate.scenario_path(case).is_file(), case
        assert (here / f"{case}.tcl").is_file(), case


def test_without_ns_the_table_marks_rows_skipped() -> None:
    rows = validate.validate(["rwnd_limited"], have_ns=False)
    goodput = [r for r in rows if r.metric.startswith("goodput")]
    assert goodput
    assert all(r.status == "skipped" and r.ns2 is None for r in goodput)
    assert 3.8 < goodput[0].mobiflow < 4.1
