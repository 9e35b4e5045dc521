"""The type stubs of the compiled module match the module (as pydantic-core checks)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import mobiflow
from mobiflow import _mobiflow

STUB = Path(mobiflow.__file__).with_name("_mobiflow.pyi")


def stub_names() -> dict[str, ast.AST]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }


def test_stub_lists_every_public_name_of_the_module() -> None:
    public = {name for name in dir(_mobiflow) if not name.startswith("_")}
    assert public == set(stub_names())


def test_stub_signatures_match() -> None:
    for name, node in stub_names().items():
        if not isinstance(node, ast.FunctionDef):
            continue
        params = list(inspect.signature(getattr(_mobiflow, name)).parameters)
        assert params == [a.arg for a in node.args.args], name


def test_scenario_error_is_a_value_error() -> None:
    assert issubclass(mobiflow.ScenarioError, ValueError)
    assert mobiflow.ScenarioError is _mobiflow.ScenarioError


def test_package_has_py_typed() -> None:
    assert STUB.with_name("py.typed").is_file()
