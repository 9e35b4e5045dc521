"""Typed shapes of what the engine returns (mirrors ``crates/mobiflow-sim/src/results.rs``;
``py/tests/test_results_types.py`` fails when a field the engine emits is missing here, or
one declared here is not emitted).

Units are in the key names: ``_bps`` bits per second (payload, i.e. goodput, for
flows), ``_s`` seconds, ``_ms`` milliseconds, ``bytes_`` bytes, ``_packets`` packets.
"""

from __future__ import annotations

from typing import TypedDict


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


class DisconnectionSummary(TypedDict):
    """A disconnection of a TFRC flow's path: the union of the outages of the link
    directions on its forward and reverse paths that overlap."""

    start_s: float
    end_s: float
    freeze_at_s: float | None
    """When Freeze-DCCP froze the flow (None: no freeze)."""
    x_before_bps: float
    """Just before the disconnection: the sender's X (X_d of the seed's model)."""
    x_recv_before_bps: float
    rtt_before_ms: float | None
    p_before: float
    lost: int
    """Data packets lost to outages from the disconnection's start to the next one's."""
    lost_in_network: int
    """Of these, the packets already queued or in flight when a direction went down."""
    first_nofeedback_s: float | None
    """Seconds from the start to the sender's first nofeedback expiry."""
    capacity_before_bps: float
    capacity_after_bps: float
    rx_rate_before_bps: float
    """Receive rate over the 2 s before the disconnection, bits/s."""
    target_bps: float
    """The rate that counts as restored."""
    unused_packets: float
    """The seed's "unused bandwidth" after reconnection, in packets of s bytes."""
    restored_after_s: float | None
    restore_fraction: float
    received_after: int
    """Data packets received in the ``window_s`` seconds after the reconnection."""
    window_s: float


class TfrcSummary(TypedDict):
    """What a TFRC / DCCP CCID 3 (and Freeze-DCCP) flow reports besides the common
    fields. Packet counts are data packets; rates are payload bits/s."""

    s: int
    """Payload bytes per data packet."""
    freeze: bool
    packets_sent: int
    packets_received: int
    packets_lost: int
    lost_to_outages: int
    lost_to_queues: int
    lost_to_link_errors: int
    losses_detected: int
    loss_events: int
    feedback_sent: int
    feedback_received: int
    nofeedback_expiries: int
    x_bps: float
    """At the end of the run: the allowed rate X, bits/s."""
    x_recv_bps: float
    p: float
    freezes: int
    restorations: int
    probings: int
    fallbacks: int
    states: list[tuple[float, str, str]]
    """Every change of the Freeze-DCCP states: (time s, sender state, receiver state)."""
    disconnections: list[DisconnectionSummary]


class _FlowOptional(TypedDict, total=False):
    tfrc: TfrcSummary
    """TFRC / DCCP CCID 3 flows only (absent for TCP flows)."""


class FlowSummary(_FlowOptional):
    """Results of one flow."""

    name: str
    src: str
    dst: str
    protocol: str
    cc: str
    flow_control: str
    """Receive-window policy: a name of the `flow_control` table of docs/scenarios.md
    ("classic", "afc", "autotune", "rsfc", "linux", ...)."""
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
    spurious_retransmits: int
    """Spurious retransmissions, the simulator's ground truth: retransmitted segments that
    reached the receiver carrying only bytes it already had (what a D-SACK reports
    whole). Counted for every TCP flow in every profile; 0 for TFRC / DCCP flows."""
    undos: int
    """Congestion reductions the sender itself found spurious and undid (Eifel, D-SACK,
    F-RTO: the ``undo`` and ``frto`` keys, on in the ``linux`` profile)."""
    zero_windows: int
    """Episodes of a zero receive window being advertised."""
    zero_window_acks: int
    window_probes: int
    window_updates: int
    """ACKs the receiver sent only to open the window."""
    dup_acks: int
    """Duplicate ACKs the receiver sent (same acknowledgment number and window)."""
    policy_updates: int
    """Window updates the flow-control policy asked for (AFC's proactive feedback, an
    auto-tuned buffer that grew)."""
    hidden_congestion_events: int
    """Congestion signals kept from congestion control by AFC's buffer-loss hiding."""
    paced_segments: int
    """Data segments held back by AFC's burst control."""
    zero_window_stalls: int
    """Zero-window stalls of the sender (an ACK offered less than one segment while the
    application had data)."""
    zero_window_stall_s: float
    """Their total length, seconds."""
    zero_window_stall_rtts: int
    """Sum over stalls of ceil(length / SRTT): the RTTs zero windows idle the sender."""
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
