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
    /// TFRC / DCCP CCID 3 flows only (absent for TCP flows). Boxed: a TCP flow's
    /// summary keeps 8 bytes for it, not its 200 (issue 19's memory per flow, at the
    /// end of a run with 10,000 flows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tfrc: Option<Box<TfrcSummary>>,
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

/// Sampled time series, columnar: a table of what every flow has (goodput, read
/// rate, RTT), a table per transport for what only it has (a TCP window means
/// nothing for TFRC, TFRC's rate X nothing for TCP), and the link directions'. One
/// row per (time, flow) of that kind, per (time, link direction) for links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub flow: FlowSeries,
    pub tcp: TcpSeries,
    pub tfrc: TfrcSeries,
    pub link: LinkSeries,
}

/// One cell of a series as a CSV field.
pub trait Cell {
    fn write_cell(&self, w: &mut dyn std::io::Write) -> std::io::Result<()>;
}

macro_rules! int_cells {
    ($($t:ty),+) => {$(
        impl Cell for $t {
            fn write_cell(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
                write!(w, "{self}")
            }
        }
    )+};
}
int_cells!(u64, u32, i32, i8);

/// A float: shortest round-trip decimal, empty (a missing value for polars and
/// pandas) if not finite.
impl Cell for f64 {
    fn write_cell(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.is_finite() {
            write!(w, "{self}")
        } else {
            Ok(())
        }
    }
}

/// The slow-start threshold at or above which it counts as infinite (the engine caps an
/// infinite threshold at `u64::MAX / 4`, so that arithmetic on it cannot overflow).
pub const SSTHRESH_INFINITE: u64 = u64::MAX / 4;

/// A slow-start threshold: empty (null) while it is infinite, never the cap
/// `u64::MAX / 4` as if it were a size.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ssthresh(pub u64);

impl Cell for Ssthresh {
    fn write_cell(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.0 >= SSTHRESH_INFINITE {
            Ok(())
        } else {
            write!(w, "{}", self.0)
        }
    }
}

/// A series table: its columns after the time and the index (and the name, which the
/// writer takes from the summary), and each row's cells.
pub trait SeriesTable {
    /// What the table is called in messages ("TCP series").
    const WHAT: &'static str;
    /// The file it is written to.
    const FILE: &'static str;
    /// Its index column and the name column after it (`flow_index`, `flow`).
    const INDEX: [&'static str; 2];
    /// The columns after the name, in order.
    const COLUMNS: &'static [&'static str];
    /// Every column's name and length, for the check that they agree.
    fn lengths(&self) -> Vec<(&'static str, usize)>;
    /// Row `i`: its time and index.
    fn key(&self, i: usize) -> (f64, u32);
    /// Row `i`'s cells after the name, each preceded by a comma.
    fn write_cells(&self, i: usize, w: &mut dyn std::io::Write) -> std::io::Result<()>;
}

/// Declares a series table once: the struct (`time_s`, the index column, then the
/// columns), its [`SeriesTable`] impl, and so its CSV header, length check and rows.
macro_rules! series_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident ($what:literal, $file:literal, $index:ident = $ix:literal / $nm:literal) {
            $( $(#[$fmeta:meta])* $field:ident : $t:ty ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $name {
            /// Sample time since the run began.
            pub time_s: Vec<f64>,
            pub $index: Vec<u32>,
            $( $(#[$fmeta])* pub $field: Vec<$t>, )+
        }

        impl SeriesTable for $name {
            const WHAT: &'static str = $what;
            const FILE: &'static str = $file;
            const INDEX: [&'static str; 2] = [$ix, $nm];
            const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),+];
            fn lengths(&self) -> Vec<(&'static str, usize)> {
                vec![
                    ("time_s", self.time_s.len()),
                    (stringify!($index), self.$index.len()),
                    $( (stringify!($field), self.$field.len()), )+
                ]
            }
            fn key(&self, i: usize) -> (f64, u32) {
                (self.time_s[i], self.$index[i])
            }
            fn write_cells(&self, i: usize, w: &mut dyn std::io::Write) -> std::io::Result<()> {
                $(
                    w.write_all(b",")?;
                    Cell::write_cell(&self.$field[i], w)?;
                )+
                Ok(())
            }
        }
    };
}

series_table! {
    /// What every flow has, whatever its transport: one row per (sample time, flow).
    pub struct FlowSeries ("flow series", "flow_series.csv", flow = "flow_index" / "flow") {
        /// Smoothed RTT, milliseconds (TCP: RFC 6298 SRTT; TFRC: R); NaN before the
        /// first sample.
        srtt_ms: f64,
        /// Application read rate over the last sampling period, bits per second.
        read_rate_bps: f64,
        /// Goodput over the last sampling period, bits per second (TCP: in-order bytes
        /// the receiver took; TFRC: bytes received).
        goodput_bps: f64,
    }
}

series_table! {
    /// What only a TCP flow has: one row per (sample time, TCP flow).
    pub struct TcpSeries ("TCP series", "tcp_series.csv", flow = "flow_index" / "flow") {
        cwnd_bytes: u64,
        ssthresh_bytes: Ssthresh,
        /// Last window the receiver advertised.
        rwnd_bytes: u64,
        flight_bytes: u64,
        /// Bytes held in the receive buffer (in order, unread, plus out of order).
        rcv_buffer_bytes: u64,
        /// Highest byte acknowledged (for time-sequence plots).
        snd_una: u64,
        /// Highest byte sent.
        snd_nxt: u64,
        /// The sender's flow-control window: the advertised window, plus AR × SRTT
        /// under AFC's sender placement.
        flow_window_bytes: u64,
        /// The receiver's rate estimate, bits per second: AFC's application rate AR,
        /// RSFC's receive rate ρ; NaN when the policy keeps none.
        ar_bps: f64,
        /// Receive buffer the policy grants (auto-tuning); the buffer size otherwise.
        rcv_buf_limit_bytes: u64,
        /// The policy's estimate of the time segments wait in the sender's uplink
        /// buffer (RSFC's t_buff), milliseconds; NaN when the policy keeps none.
        t_buff_ms: f64,
        /// The policy's control state (RSFC: 0 SLOW, 1 FAST, 2 MONITOR); -1 when it
        /// has none.
        policy_state: i32,
    }
}

series_table! {
    /// What only a TFRC / DCCP CCID 3 flow has: one row per (sample time, TFRC flow).
    pub struct TfrcSeries ("TFRC series", "tfrc_series.csv", flow = "flow_index" / "flow") {
        /// The allowed rate X the sender uses, bits per second (RFC 5348 §4.3).
        x_bps: f64,
        /// The last X_recv the sender took from feedback, bits per second.
        x_recv_bps: f64,
        /// The loss event rate p the sender uses.
        p: f64,
        /// Bytes the sender sent, and bytes the receiver received.
        bytes_sent: u64,
        bytes_received: u64,
        /// Freeze-DCCP states as numbers: sender 0 NORMAL, 1 FROZEN, 2 RESTORING,
        /// 3 PROBING; receiver 0 NORMAL, 1 SIGNAL_FREEZE, 2 SIGNAL_UNFREEZE,
        /// 3 RESTORATION, 4 RECOVERY1, 5 RECOVERY2, 6 PROBED.
        state: i8,
        rx_state: i8,
    }
}

series_table! {
    /// The link directions: one row per (sample time, direction).
    pub struct LinkSeries ("link series", "link_series.csv", dir = "dir_index" / "dir") {
        queue_packets: u64,
        queue_bytes: u64,
        /// The direction's rate; for a trace-driven direction, the capacity its trace
        /// offered over the last sampling period.
        rate_bps: f64,
    }
}
