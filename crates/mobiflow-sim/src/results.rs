//! Results of a run: the JSON summary and the sampled time series.

use serde::Serialize;
use std::collections::BTreeMap;

/// Per-flow results. Rates are payload (goodput) bits per second.
#[derive(Clone, Debug, Serialize, PartialEq)]
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
    /// (seed 000: "at every zero window, the sender waits for up to 2 RTTs"). Not the
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
    /// Reactions to interface changes (seed 002).
    pub handoff: HandoffSummary,
}

/// What a flow did about interface changes of its mobile host (seed 002,
/// `mobiflow_proto::tcp::handoff`).
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
    /// Packets lost to outages (queued or in flight when one started, or arriving
    /// during one).
    pub outage_losses: u64,
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
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSeries {
    pub time_s: Vec<f64>,
    pub dir: Vec<u32>,
    pub queue_packets: Vec<u64>,
    pub queue_bytes: Vec<u64>,
    pub rate_bps: Vec<f64>,
}
