"""The TypedDicts of ``mobiflow.results`` name exactly the fields the engine emits
(``crates/mobiflow-sim/src/results.rs``): a field added to a Rust summary struct and not
to its TypedDict fails here, and so does a TypedDict field the engine does not emit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mobiflow
from mobiflow.results import (
    DisconnectionSummary,
    FlowSummary,
    HandoffStats,
    LinkSummary,
    Summary,
    TfrcSummary,
)

# Every kind of record the engine writes, optional fields included: a TCP flow with a
# handoff reaction, a DCCP flow frozen across an outage, and a RED queue (early_drops).
SCENARIO = """
[run]
duration = "12s"

[[links]]
name = "wireless"
a = "phone"
b = "ap"
rate = "2Mbps"
delay = "40ms"
queue = "red"
handoffs = [{ at = "5s", interruption = "1s" }]

[[links]]
name = "wire"
a = "ap"
b = "server"
rate = "10Mbps"
delay = "10ms"

[[flows]]
name = "tcp"
from = "server"
to = "phone"
tcp = { handoff_reaction = "iett" }

[[flows]]
name = "dccp"
from = "server"
to = "phone"
transport = "dccp-ccid3"
tfrc = { freeze = true }

[measure]
sample_interval = false
"""


def declared(td: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The required and the optional keys of a TypedDict."""
    return frozenset(td.__required_keys__), frozenset(td.__optional_keys__)


def check(td: Any, records: Iterable[Mapping[str, Any]]) -> None:
    """Each record has every required key and no undeclared one; every optional key
    appears in at least one record."""
    required, optional = declared(td)
    seen: set[str] = set()
    for r in records:
        keys = set(r)
        assert required <= keys, f"{td.__name__}: the engine does not emit {required - keys}"
        extra = keys - required - optional
        assert not extra, f"{td.__name__} lacks {extra}, which the engine emits"
        seen |= keys
    assert optional <= seen, f"{td.__name__}: the engine never emits {optional - seen}"


def test_the_typed_dicts_have_every_field_the_engine_emits_and_no_other() -> None:
    summary = mobiflow.run_text(SCENARIO)
    flows = summary["flows"]
    check(Summary, [summary])
    check(FlowSummary, flows)
    check(HandoffStats, [f["handoff"] for f in flows])
    check(LinkSummary, summary["links"])
    tfrc = [f["tfrc"] for f in flows if "tfrc" in f]
    check(TfrcSummary, tfrc)
    check(DisconnectionSummary, [d for t in tfrc for d in t["disconnections"]])


def test_the_check_fails_on_a_missing_or_an_extra_field() -> None:
    flow = mobiflow.run_text(SCENARIO)["flows"][0]
    missing = {k: v for k, v in flow.items() if k != "dup_acks"}
    extra = {**flow, "not_a_field": 0}
    for record in (missing, extra):
        try:
            check(FlowSummary, [record])
        except AssertionError:
            continue
        raise AssertionError(f"check accepted {sorted(record)}")
