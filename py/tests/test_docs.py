"""The worked example of docs/python.md runs as written (pasted into a script)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_python_examples_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    # Every block that needs no folders of the reader's own, in order, as one script
    # (sweeps need the main guard), from a folder that has the repository's scenarios.
    blocks = [b for b in python_blocks() if "out/newreno" not in b]
    assert len(blocks) >= 5
    body = textwrap.indent("\n".join(blocks), "    ")
    script = tmp_path / "example.py"
    script.write_text(f'if __name__ == "__main__":\n{body}', encoding="utf-8")
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    for figure in ("cwnd.png", "buffer.svg", "throughput.png"):
        assert (tmp_path / "out" / "py" / figure).stat().st_size > 10_000
    assert len(list((tmp_path / "runs" / "fluctuating").glob("*/done"))) == 9
    assert "links.0.rate" in proc.stdout
