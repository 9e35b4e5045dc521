"""The repository stands on its own: nothing in it names a path outside it."""

from __future__ import annotations

import re
import subprocess

from .conftest import ROOT

OUTSIDE = re.compile(
    r"\.\./shared|shared/(spec|traces|seeds|design)|/work/|/root/|/home/\w"
    r'|parent / "shared"|"shared" / "(traces|spec|seeds)"'
)
"""Paths a clone or an installed package would not have."""


def test_no_file_of_the_repository_names_a_path_outside_it() -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    hits = []
    for name in filter(None, files):
        path = ROOT / name.decode()
        if path.suffix in {".down", ".up", ".png", ".lock"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for k, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line) and name != b"py/tests/test_standalone.py":
                hits.append(f"{name.decode()}:{k}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


def test_the_traces_the_scenarios_use_are_in_the_repository() -> None:
    for toml in (ROOT / "scenarios").rglob("*.toml"):
        for m in re.finditer(r'trace = "([^"]+)"', toml.read_text(encoding="utf-8")):
            assert (toml.parent / m.group(1)).resolve().is_file(), (toml, m.group(1))
            assert (toml.parent / m.group(1)).resolve().is_relative_to(ROOT), (toml, m.group(1))
