"""mobiflow in a notebook, executed by a real Jupyter kernel (nbclient): a run shows
as a table, its figures as pictures, a sweep as its aggregate, with no magic and no
warning about missing widgets (issue 21)."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

CELLS = [
    "import mobiflow",
    f"sc = mobiflow.Scenario.load({os.fspath(ROOT / 'scenarios/examples/rwnd_limited.toml')!r})"
    "\nrun = sc.run()\nrun",
    "run.plot_cwnd()",
    "result = mobiflow.sweep(sc, grid={'tcp.rcv_buf': ['64KB', '256KB']}, seeds=[1], "
    "out=OUT, jobs=1)\nresult",
]


def _execute(tmp_path: Path) -> Any:
    nb = nbformat.v4.new_notebook()
    cells = [c.replace("OUT", repr(os.fspath(tmp_path / "sweep"))) for c in CELLS]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = nbclient.NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": os.fspath(tmp_path)}},
    )
    # The kernel is this interpreter's (the venv's ipykernel), whatever else is installed.
    client.kernel_manager_class = "jupyter_client.manager.KernelManager"
    client.km = client.create_kernel_manager()
    client.km.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    return client.execute()


def _data(cell: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for o in cell.outputs:
        if o.output_type in ("execute_result", "display_data"):
            out.update(o.data)
    return out


def _stderr(cell: Any) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr")


def test_a_notebook_shows_runs_as_tables_figures_as_pictures_and_sweeps_as_aggregates(
    tmp_path: Path,
) -> None:
    nb = _execute(tmp_path)
    run_cell, fig_cell, sweep_cell = nb.cells[1], nb.cells[2], nb.cells[3]

    run_out = _data(run_cell)
    assert "text/html" in run_out, run_cell.outputs
    assert "goodput Mb/s" in run_out["text/html"]
    assert "mobiflow.Run" in run_out["text/plain"]

    fig_out = _data(fig_cell)
    assert "image/png" in fig_out, fig_cell.outputs
    png = base64.b64decode(fig_out["image/png"])
    assert png.startswith(b"\x89PNG")
    assert len(png) > 5000

    sweep_out = _data(sweep_cell)
    assert "text/html" in sweep_out, sweep_cell.outputs
    assert "goodput Mb/s_mean" in sweep_out["text/html"]
    assert len(sweep_out["text/plain"]) < 300, "a compact repr, not a dataclass dump"
    for cell in nb.cells:
        assert "ipywidgets" not in _stderr(cell)
