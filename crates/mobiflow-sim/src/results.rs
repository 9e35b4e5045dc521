//! Results of a run: the JSON summary and the sampled time series.

use crate::units::BitsPerSec;
use serde::Serialize;
use std::collections::BTreeMap;

/// Per-flow results. Rates are payload (goodput) bits per second.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct FlowSummary {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub protocol: String,
    pub cc: String,
    /// Receive-window policy: "classic", "afc", "autotune" or "rsfc".
    pub flow_control: String,
    /// Payload bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Payload bytes handed to the sender by its application (u64::MAX never: bulk
    /// flows report what was sent).
    pub bytes_offered: u64,
    /// Goodput over the flow's active time (start to completion or end of run).
    pub goodput_bps: f64,
    /// Goodput over each named interval.
    pub intervals: BTreeMap<String, f64>,
    /// Time from the flow's start until the receiving application had every byte;
    /// `None` if the transfer did not finish (or is a bulk flow).
    pub completion_time_s: Option<f64>,
    /// Completion times of each burst of a bursts/on-off application, seconds.
    pub burst_completion_times_s: Vec<f64>,
    /// Load times of the pages a web application finished, seconds: from a page's
    /// first request to the last byte of its last object read (web flows only).
    pub page_load_times_s: Vec<f64>,
    /// Pages a web application started (more than finished when the run ended during
    /// a page).
    pub pages_started: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Spurious retransmissions, the simulator's ground truth: retransmitted segments
    /// that reached the receiver carrying only bytes it already had (below its next
    /// expected byte or held out of order), i.e. what a D-SACK (RFC 2883) reports
    /// whole. Counted for every TCP flow whatever the profile; a retransmission lost
    /// on the way, or overtaken by its original, is not counted. 0 for TFRC / DCCP
    /// flows, which never retransmit.
    pub spurious_retransmits: u64,
    /// Congestion reductions the sender itself found spurious and undid (Eifel,
    /// D-SACK or F-RTO: `undo`, `frto`, on in the `linux` profile); 0 when those are
    /// off and for TFRC / DCCP flows.
    pub undos: u64,
    /// Advertisements of a zero window after a non-zero one (episodes).
    pub zero_windows: u64,
    /// ACKs sent carrying a zero window.
    pub zero_window_acks: u64,
    /// Window probes sent by the persist timer.
    pub window_probes: u64,
    /// ACKs the receiver sent only to open the window.
    pub window_updates: u64,
    /// Duplicate ACKs the receiver sent (same acknowledgment number and window).
    pub dup_acks: u64,
    /// Window updates the flow-control policy asked for (AFC's proactive feedback,
    /// an auto-tuned buffer that grew).
    pub policy_updates: u64,
    /// Congestion signals kept from congestion control by AFC's buffer-loss hiding.
    pub hidden_congestion_events: u64,
    /// Data segments held back by AFC's burst control.
    pub paced_segments: u64,
    /// Zero-window stalls of the sender: an ACK offered less than one segment while
    /// the application had data; each lasts from the last new data sent before it to
    /// the first new data sent after it.
    pub zero_window_stalls: u64,
    /// Their total length, seconds.
    pub zero_window_stall_s: f64,
    /// Sum over stalls of ceil(length / SRTT): the RTTs zero windows idle the sender
    /// (Sanadhya and Sivakumar, "Adaptive Flow Control for TCP on Mobile Phones", IEEE
    /// INFOCOM 2011: "at every zero window, the sender waits for up to 2 RTTs"). Not the
    /// same count as `idle_rtts`, which counts whole SRTT slots without any data.
    pub zero_window_stall_rtts: u64,
    /// RTT-long periods of the flow's life in which the sender sent no data.
    pub idle_rtts: u64,
    /// RTT-long periods of the flow's life (the denominator of idle_rtts).
    pub total_rtts: u64,
    /// Segments dropped by the receiver because they fell beyond the window.
    pub rcv_buffer_drops: u64,
    pub rtt_min_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    pub rtt_samples: u64,
    /// Reactions to interface changes (Tsukamoto, Fukuda, Hori and Oie, "New flow control
    /// schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006).
    pub handoff: HandoffSummary,
    /// TFRC / DCCP CCID 3 flows only (absent for TCP flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tfrc: Option<TfrcSummary>,
}

/// What a flow did about interface changes of its mobile host (the vertical-handoff
/// paper, `mobiflow_proto::tcp::handoff`).
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct HandoffSummary {
    /// Interface changes the sender learnt of.
    pub interface_changes: u64,
    /// Retransmission timers IETT expired at once.
    pub forced_expirations: u64,
    /// Notices the receiver sent on an ACK.
    pub notices: u64,
    /// BA-SST estimates applied, and the last one: bandwidth (payload bits/s), RTT
    /// (ms) and the ssthresh it set (bytes).
    pub ba_sst_estimates: u64,
    pub ba_sst_bps: Option<f64>,
    pub ba_sst_rtt_ms: Option<f64>,
    pub ba_sst_ssthresh_bytes: Option<u64>,
    /// Freeze-TCP: freezes (zero windows on a warning) and TR-ACKs sent.
    pub freezes: u64,
    pub tr_acks: u64,
}

/// What a TFRC / DCCP CCID 3 (and Freeze-DCCP) flow reports besides the common fields.
/// Packet counts are data packets; rates are payload bytes (s per packet) in bits/s
/// ([`BitsPerSec`]; the sender's X is bytes/s, converted where the summary is made).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TfrcSummary {
    /// Payload bytes per data packet (s).
    pub s: u32,
    pub freeze: bool,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// Sent and never received: `packets_sent − packets_received` at the end of the run
    /// (what is still in flight then counts as lost).
    pub packets_lost: u64,
    /// Data packets lost on a link direction that was down (sent into a disconnection,
    /// or in flight or queued when it started).
    pub lost_to_outages: u64,
    /// Data packets dropped by a queue (overflow, RED).
    pub lost_to_queues: u64,
    /// Data packets lost to links' random loss (`loss`).
    pub lost_to_link_errors: u64,
    /// Losses the receiver detected (RFC 5348 §5.1) and loss events it counted (§5.2).
    pub losses_detected: u64,
    pub loss_events: u64,
    pub feedback_sent: u64,
    pub feedback_received: u64,
    pub nofeedback_expiries: u64,
    /// At the end of the run: X, X_recv (bits/s), p.
    pub x_bps: BitsPerSec,
    pub x_recv_bps: BitsPerSec,
    pub p: f64,
    /// Freeze-DCCP sender transitions: entries into FROZEN, RESTORING, PROBING, and
    /// fallbacks to NORMAL from RESTORING/PROBING.
    pub freezes: u64,
    pub restorations: u64,
    pub probings: u64,
    pub fallbacks: u64,
    /// Every change of the sender's or the receiver's Freeze-DCCP state: (time s,
    /// sender state, receiver state).
    pub states: Vec<(f64, String, String)>,
    /// One entry per disconnection of the flow's path.
    pub disconnections: Vec<DisconnectionSummary>,
}

/// A disconnection of a TFRC flow's path: the union of the outages of the link
/// directions on its forward and reverse paths that overlap.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DisconnectionSummary {
    pub start_s: f64,
    pub end_s: f64,
    /// When Freeze-DCCP froze the flow (`None`: no freeze).
    pub freeze_at_s: Option<f64>,
    /// Just before the disconnection: the sender's X (X_d of the seed's model), its
    /// X_recv, its RTT estimate R and p.
    pub x_before_bps: BitsPerSec,
    pub x_recv_before_bps: BitsPerSec,
    pub rtt_before_ms: Option<f64>,
    pub p_before: f64,
    /// Data packets lost to outages from the disconnection's start to the next one's
    /// (or the end of the run): the seed's "packets lost during the disconnection".
    pub lost: u64,
    /// Of these, the packets already queued or in flight on a link direction when it
    /// went down (the rest were sent into the down link).
    pub lost_in_network: u64,
    /// Seconds from the disconnection's start to the sender's first nofeedback
    /// expiry (its timer as armed then): the part of the first no-feedback interval
    /// that falls in the disconnection (the seed's (1) takes 7/8 of 4R on average).
    pub first_nofeedback_s: Option<f64>,
    /// Payload capacity of the forward path's bottleneck just before the
    /// disconnection and after the reconnection, bits/s (rate × s/(s + header)).
    pub capacity_before_bps: BitsPerSec,
    pub capacity_after_bps: BitsPerSec,
    /// Receive rate over the 2 s before the disconnection, bits/s.
    pub rx_rate_before_bps: BitsPerSec,
    /// The rate that counts as restored: the share of the old path's capacity the
    /// flow received before (rx_rate_before / capacity_before, at most 1) times
    /// capacity_after. On the same path, the rate before the disconnection (X_d of
    /// the seed's (2)); on a faster one, what the flow would use of it (X_max of (3)).
    pub target_bps: BitsPerSec,
    /// The seed's "unused bandwidth" after reconnection, in packets of s bytes: the
    /// integral of (target − receive rate) from the reconnection until the receive
    /// rate first reaches `restore_fraction` × target (50 ms bins), or until the next
    /// disconnection or the end of the run.
    pub unused_packets: f64,
    /// Seconds from the reconnection until the receive rate first reached
    /// `restore_fraction` × target (`None`: not before the next disconnection or the
    /// end of the run).
    pub restored_after_s: Option<f64>,
    pub restore_fraction: f64,
    /// Data packets received in the `window_s` seconds after the reconnection.
    pub received_after: u64,
    pub window_s: f64,
}

/// Per link-direction results.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkSummary {
    /// `link_name:a->b`.
    pub name: String,
    pub link: String,
    pub from: String,
    pub to: String,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Packets dropped by the queue (overflow or RED).
    pub drops: u64,
    /// RED directions only: of `drops`, the early (unforced) ones, made while the
    /// queue was not full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_drops: Option<u64>,
    /// Packets lost to outages (queued or in flight when one started, or arriving
    /// during one).
    pub outage_losses: u64,
    /// Packets lost to the direction's random loss (`loss`).
    pub random_losses: u64,
    /// Packets that reached the far end after one sent later (a delay drop, or
    /// `reorder`).
    pub reordered: u64,
    /// Packets delivered twice (`duplicate`).
    pub duplicated: u64,
    pub queue_max_packets: u64,
    pub queue_mean_packets: f64,
}

/// Everything a run reports.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub mobiflow_version: String,
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Parameters whose values are assumptions, not from a seed document.
    pub assumed: BTreeMap<String, String>,
    /// Events processed by the engine.
    pub events: u64,
}

/// Sampled time series, columnar: one row per (time, flow) for flows and per
/// (time, link direction) for links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub flow: FlowSeries,
    pub link: LinkSeries,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<u64>,
    /// Last window the receiver advertised.
    pub rwnd_bytes: Vec<u64>,
    pub flight_bytes: Vec<u64>,
    pub srtt_ms: Vec<f64>,
    /// Bytes held in the receive buffer (in order, unread, plus out of order).
    pub rcv_buffer_bytes: Vec<u64>,
    /// Application read rate over the last sampling period, bits per second.
    pub read_rate_bps: Vec<f64>,
    /// Goodput over the last sampling period, bits per second.
    pub goodput_bps: Vec<f64>,
    /// Highest byte acknowledged (for time-sequence plots).
    pub snd_una: Vec<u64>,
    /// Highest byte sent.
    pub snd_nxt: Vec<u64>,
    /// The sender's flow-control window: the advertised window, plus AR × SRTT under
    /// AFC's sender placement.
    pub flow_window_bytes: Vec<u64>,
    /// The receiver's rate estimate, bits per second: AFC's application rate AR,
    /// RSFC's receive rate ρ; NaN when the policy keeps none.
    pub ar_bps: Vec<f64>,
    /// Receive buffer the policy grants (auto-tuning); the buffer size otherwise.
    pub rcv_buf_limit_bytes: Vec<u64>,
    /// The policy's estimate of the time segments wait in the sender's uplink
    /// buffer (RSFC's t_buff), milliseconds; NaN when the policy keeps none.
    pub t_buff_ms: Vec<f64>,
    /// The policy's control state (RSFC: 0 SLOW, 1 FAST, 2 MONITOR); -1 when it has
    /// none.
    pub policy_state: Vec<i32>,
    /// TFRC: the allowed rate X, the last X_recv (bits/s) and the loss event rate p
    /// the sender uses; NaN for TCP flows.
    pub tfrc_x_bps: Vec<f64>,
    pub tfrc_x_recv_bps: Vec<f64>,
    pub tfrc_p: Vec<f64>,
    /// Freeze-DCCP states as numbers: sender 0 NORMAL, 1 FROZEN, 2 RESTORING,
    /// 3 PROBING; receiver 0 NORMAL, 1 SIGNAL_FREEZE, 2 SIGNAL_UNFREEZE,
    /// 3 RESTORATION, 4 RECOVERY1, 5 RECOVERY2, 6 PROBED; −1 for TCP flows.
    pub tfrc_state: Vec<i8>,
    pub tfrc_rx_state: Vec<i8>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSeries {
    pub time_s: Vec<f64>,
    pub dir: Vec<u32>,
    pub queue_packets: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    pub rate_bps: Vec<f64>,
}
