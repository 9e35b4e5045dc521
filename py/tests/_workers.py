"""Worker functions for the sweep tests, in a small module that spawned worker
processes can import quickly."""

from __future__ import annotations

import os

from mobiflow.sweeps import Outcome, Task, execute

CRASH_SEED = 2
"""Runs with this seed kill their worker process (as a crash of the engine would)."""


def crash_on_seed(task: Task) -> Outcome:
    """:func:`mobiflow.sweeps.execute`, except that seed :data:`CRASH_SEED` kills the
    worker process outright."""
    if task.seed == CRASH_SEED:
        os._exit(3)
    return execute(task)
