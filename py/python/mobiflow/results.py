"""Typed shapes of what the engine returns (mirrors ``crates/mobiflow-sim/src/results.rs``).

Units are in the key names: ``_bps`` bits per second (payload, i.e. goodput, for
flows), ``_s`` seconds, ``_ms`` milliseconds, ``bytes_`` bytes, ``_packets`` packets.
"""

from __future__ import annotations

from typing import Any, TypedDict


class HandoffStats(TypedDict):
    """What a flow did about interface changes of its mobile host (Tsukamoto, Fukuda, Hori
    and Oie, "New flow control schemes of TCP for multimodal mobile hosts", IEICE Trans.
    Commun. E89-B(6), 2006)."""

    interface_changes: int
    forced_expirations: int
    notices: int
    ba_sst_estimates: int
    ba_sst_bps: float | None
    ba_sst_rtt_ms: float | None
    ba_sst_ssthresh_bytes: int | None
    freezes: int
    tr_acks: int


class _FlowOptional(TypedDict, total=False):
    tfrc: dict[str, Any]
    """TFRC / DCCP CCID 3 flows only: packets sent, received and lost (to outages,
    queues, link errors), X, X_recv and p at the end, Freeze-DCCP transitions and state
    time line, and per disconnection X_d, R, p before it, packets lost during it and the
    capacity left unused after it (``crates/mobiflow-sim/src/results.rs``)."""


class FlowSummary(_FlowOptional):
    """Results of one flow."""

    name: str
    src: str
    dst: str
    protocol: str
    cc: str
    bytes_delivered: int
    """Payload bytes delivered in order to the receiving application."""
    bytes_offered: int
    """Payload bytes handed to the sender by its application."""
    goodput_bps: float
    """Goodput over the flow's active time, bits per second."""
    intervals: dict[str, float]
    """Goodput over each named interval, bits per second."""
    completion_time_s: float | None
    """Seconds from the flow's start until the receiver had every byte; None if unfinished."""
    burst_completion_times_s: list[float]
    page_load_times_s: list[float]
    """Load times of the pages a web flow finished, seconds (empty for other flows)."""
    pages_started: int
    """Pages a web flow started (more than finished if the run ended during one)."""
    segments_sent: int
    retransmits: int
    timeouts: int
    fast_retransmits: int
    zero_windows: int
    """Episodes of a zero receive window being advertised."""
    zero_window_acks: int
    window_probes: int
    idle_rtts: int
    """RTT-long periods in which the sender sent no data."""
    total_rtts: int
    """RTT-long periods of the flow's life (denominator of idle_rtts)."""
    rcv_buffer_drops: int
    rtt_min_ms: float | None
    rtt_mean_ms: float | None
    rtt_p95_ms: float | None
    rtt_samples: int
    handoff: HandoffStats
    """Reactions to interface changes (the vertical-handoff paper)."""


# Functional form: "from" is a Python keyword.
_LinkSummaryBase = TypedDict(
    "_LinkSummaryBase",
    {
        "name": str,  # "link:from->to"
        "link": str,
        "from": str,
        "to": str,
        "packets_sent": int,
        "bytes_sent": int,
        "drops": int,  # packets dropped by the queue (overflow or RED)
        "outage_losses": int,  # packets lost to outages
        "random_losses": int,  # packets lost to the direction's random loss
        "reordered": int,  # packets that arrived after one sent later
        "duplicated": int,  # packets delivered twice (duplicate)
        "queue_max_packets": int,
        "queue_mean_packets": float,
    },
)


class LinkSummary(_LinkSummaryBase, total=False):
    """Results of one direction of a link."""

    early_drops: int  # RED directions only: of drops, the early (unforced) ones


class Summary(TypedDict):
    """Everything a run reports (the content of ``summary.json``)."""

    mobiflow_version: str
    scenario: str
    seed: int
    duration_s: float
    flows: list[FlowSummary]
    links: list[LinkSummary]
    assumed: dict[str, str]
    """Parameters whose values are assumptions, not taken from a seed document."""
    events: int
    """Events processed by the engine."""
