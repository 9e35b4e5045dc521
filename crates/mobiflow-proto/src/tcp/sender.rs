//! The sending side of a TCP connection.
//!
//! Read RFC 5681, RFC 6582, RFC 6675, RFC 6298, RFC 3042 and RFC 9293 §3.8.6 first.
//!
//! ```text
//!            3 dupACKs / IsLost            full ACK (ack >= recover)
//!   Open ─────────────────────────▶ Recovery ──────────────────────▶ Open
//!     │ ▲                                │ RTO
//!     │ └──── ack >= recover ─── Loss ◀──┘
//!     └──────────── RTO ───────────▶
//! ```
//!
//! * Window growth and reduction are the congestion controller's (`cc`); which segment
//!   goes out next is decided here.
//! * Outstanding segments live in a [`Scoreboard`]; SACK marks and loss marks drive
//!   retransmission after a fast retransmit with SACK (RFC 6675) and after a timeout
//!   (every un-SACKed segment is marked lost and resent, go-back-N as in ns-2 and
//!   Linux).
//! * Without SACK, fast recovery inflates a separate recovery window as RFC 5681 §3.2
//!   and RFC 6582 §3.2 describe.
//! * The retransmission timer follows RFC 6298 §5, with Karn's rule (§3) or
//!   timestamps (RFC 7323 §4) for samples.
//! * A zero window with nothing in flight starts the persist timer (RFC 9293
//!   §3.8.6.1, RFC 1122 §4.2.2.17); probes back off exponentially.
//! * With AFC flow control (`flow::afc`), three sender rules: the flow window is the
//!   advertised window plus `AR × SRTT` (sender placement, AR from the option);
//!   after a zero window, congestion responses (window reductions, RTO backoff) are
//!   suppressed until data sent after the window reopened is acknowledged
//!   (retransmissions still happen); and a jump
//!   of the usable window by more than `burst_segments` is paced at
//!   `max(AR, cwnd/SRTT)`.
//!
//! * Reactions to an interface change of the mobile host (`tcp::handoff`; the
//!   vertical-handoff paper: Tsukamoto, Fukuda, Hori and Oie, "New flow control schemes
//!   of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006):
//!   [`TcpSender::on_interface_change`] expires the retransmission timer at once
//!   (IETT) and/or arms a packet-pair estimator whose estimate sets ssthresh
//!   (BA-SST). Freeze-TCP needs nothing here: its zero window puts this unmodified
//!   sender into persist mode, which keeps cwnd and the RTO.
//!
//! Polling order: after any `handle_*` call or `write`, call `poll_transmit` until it
//! returns `None`, then schedule a wake-up at `poll_timeout()`.

use super::config::{Recovery, RttSampling, TcpConfig};
use super::handoff::{HandoffReaction, InterfaceChange, PacketPair};
use super::rtt::RttEstimator;
use super::sack::{Scoreboard, SegRec};
use crate::cc::{
    AckSample, CaEvent, CaState, CongestionController, CongestionEvent, CongestionKind,
    RecoveryExit,
};
use crate::flow::afc::{decode_rate, AfcConfig, Placement};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Segment, Timestamps};

/// Distribution of RTT samples: min, mean and a log-linear histogram for percentiles
/// (HDR-style: exact below 128 µs, then 128 sub-buckets per power of two, so every
/// bucket is less than 0.8 % wide). Allocated on the first sample; integer arithmetic
/// only on the per-ACK path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RttStats {
    pub count: u64,
    pub min: Option<Duration>,
    pub max: Option<Duration>,
    sum_ns: u128,
    hist: Vec<u32>,
}

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
// Values up to 2^40 µs (~12 days) get their own bucket; larger ones share the last.
const HIST_BUCKETS: usize = ((40 - SUB_BITS as usize + 1) << SUB_BITS) + SUB as usize;

impl RttStats {
    fn bucket(d: Duration) -> usize {
        let us = d.as_nanos() / 1_000;
        if us < SUB {
            return us as usize;
        }
        let e = 63 - us.leading_zeros(); // floor(log2 us) >= SUB_BITS
        let mantissa = (us >> (e - SUB_BITS)) & (SUB - 1);
        (((e - SUB_BITS + 1) as u64 * SUB + mantissa) as usize).min(HIST_BUCKETS - 1)
    }
    fn bucket_value(i: usize) -> Duration {
        let i = i as u64;
        if i < SUB {
            return Duration::from_nanos(i * 1_000 + 500);
        }
        let e = i / SUB - 1 + SUB_BITS as u64;
        let mantissa = i % SUB;
        let lo = (SUB + mantissa) << (e - SUB_BITS as u64);
        let width = 1u64 << (e - SUB_BITS as u64);
        Duration::from_nanos((lo * 1_000).saturating_add(width * 500))
    }
    pub fn record(&mut self, d: Duration) {
        if self.hist.is_empty() {
            self.hist = vec![0; HIST_BUCKETS];
        }
        self.count += 1;
        self.sum_ns += d.as_nanos() as u128;
        self.min = Some(self.min.map_or(d, |m| m.min(d)));
        self.max = Some(self.max.map_or(d, |m| m.max(d)));
        self.hist[Self::bucket(d)] += 1;
    }
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos((self.sum_ns / self.count as u128) as u64))
    }
    /// The `q`-quantile (0..=1), accurate to the 1 % bucket width.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let target = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0u64;
        for (i, &c) in self.hist.iter().enumerate() {
            acc += c as u64;
            if acc >= target {
                let v = Self::bucket_value(i);
                return Some(v.max(self.min.unwrap_or(v)).min(self.max.unwrap_or(v)));
            }
        }
        self.max
    }
}

/// Counters kept by the sender.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Segments sent, of every kind.
    pub segments_sent: u64,
    /// Data segments sent, retransmissions included.
    pub data_segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub window_probes: u64,
    pub syn_retransmits: u64,
    /// RTT-long periods (one SRTT each, laid end to end from the first RTT sample) in
    /// which no data segment was sent, and all such periods.
    pub idle_rtts: u64,
    pub total_rtts: u64,
    pub rtt: RttStats,
    /// Congestion signals (fast retransmits, timeouts) AFC kept from congestion
    /// control because they followed a zero window.
    pub hidden_congestion_events: u64,
    /// AFC: ACKs on which segments dropped by the peer's full receive buffer were
    /// found and marked for retransmission (`TcpSender::repair_buffer_losses`).
    pub buffer_loss_repairs: u64,
    /// Data segments held back by AFC's burst control.
    pub paced_segments: u64,
    /// Zero-window stalls: an ACK advertised less than one segment while the
    /// application had data; each lasts from the last new data sent before it to the
    /// first new data sent after it.
    pub zero_window_stalls: u64,
    /// Their total length, and the sum over stalls of ceil(length / SRTT): the RTTs a
    /// zero window idles the sender ("up to two" each: Sanadhya and Sivakumar, "Adaptive
    /// Flow Control for TCP on Mobile Phones", IEEE INFOCOM 2011).
    pub zero_window_stall_time: Duration,
    pub zero_window_stall_rtts: u64,
    /// Interface changes the sender learnt of (the vertical-handoff paper), timers it
    /// expired at once because of one (IETT), and BA-SST estimates applied, with the last
    /// estimate of the bandwidth (bits/s), the RTT it used and the ssthresh it set (bytes).
    pub interface_changes: u64,
    pub forced_expirations: u64,
    pub ba_sst_estimates: u64,
    pub ba_sst_last_bps: f64,
    pub ba_sst_last_rtt: Duration,
    pub ba_sst_last_ssthresh: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    SynSent,
    Established,
}

/// See the module documentation.
#[derive(Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    state: State,
    syn_due: bool,
    syn_sent_at: Option<Instant>,
    /// `RttSampling::TimedSegment`: the end of the segment being timed and when it
    /// was sent (ns-2's `rtt_seq_`, `rtt_ts_` while `rtt_active_`).
    rtt_timed: Option<(u64, Instant)>,
    syn_retransmitted: bool,
    ts_ok: bool,
    sack_ok: bool,
    ca: CaState,
    snd_una: u64,
    snd_nxt: u64,
    app_end: u64,
    snd_wnd: u64,
    max_snd_wnd: u64,
    sb: Scoreboard,
    dupacks: u32,
    /// New data sent by limited transmit since the last new ACK (RFC 3042).
    limited_tx_bytes: u64,
    /// RFC 6582 `recover` (exclusive: the first byte not sent when recovery began).
    recover: Option<u64>,
    /// Inflated window during Reno/NewReno fast recovery (RFC 5681 §3.2 steps 4–5).
    recovery_cwnd: u64,
    partial_acked: bool,
    rtx_in_episode: u64,
    /// Retransmit the first lost segment now, whatever the window says.
    forced_rtx: bool,
    rto_at: Option<Instant>,
    persist_at: Option<Instant>,
    persist_backoff: u32,
    probe_due: bool,
    ts_recent: u32,
    /// Congestion-window validation (RFC 7661 §4, Linux `tcp_is_cwnd_limited`): in
    /// the current and the previous round trip, was new data held back by cwnd, and
    /// the largest pipe seen.
    cwnd_blocked: [bool; 2],
    max_pipe: [u64; 2],
    round_end: u64,
    last_data_sent: Option<Instant>,
    slot_end: Option<Instant>,
    slot_sent: bool,
    /// AFC's sender side, when the flow control is AFC.
    afc: Option<AfcConfig>,
    /// AR the receiver carried in the option, bytes per second.
    ar_peer: Option<f64>,
    /// Buffer-loss hiding: a zero window was seen, and `zw_fresh_from` is `snd_nxt`
    /// when the window reopened (data from there on is fresh).
    zw_seen: bool,
    zw_fresh_from: Option<u64>,
    /// The fast recovery in progress was kept from congestion control.
    recovery_hidden: bool,
    /// Burst control: bytes still to pace, bytes that may leave unpaced, and the
    /// earliest time of the next paced segment.
    pace_left: u64,
    pace_credit: u64,
    pace_next: Option<Instant>,
    /// When new data last left, and the start of the zero-window stall in progress.
    last_new_data_at: Option<Instant>,
    zw_stall_from: Option<Instant>,
    /// BA-SST's estimator, armed by an interface change.
    pair: Option<PacketPair>,
    stats: SenderStats,
}

impl TcpSender {
    /// A sender with the controller `cfg.cc` names.
    pub fn new(cfg: TcpConfig) -> Self {
        let cc = cfg.cc.build(cfg.window_params(), cfg.mss);
        Self::with_cc(cfg, cc)
    }

    /// A sender with a controller of the caller's.
    pub fn with_cc(cfg: TcpConfig, cc: Box<dyn CongestionController>) -> Self {
        let rtt = RttEstimator::new(
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.clock_granularity,
            cfg.max_backoff_exponent,
        );
        let handshake = cfg.handshake;
        let first_offer = cfg.flow_control.initial_offer(cfg.rcv_buf);
        TcpSender {
            ts_ok: cfg.timestamps && !handshake,
            sack_ok: cfg.sack && !handshake,
            state: if handshake {
                State::SynSent
            } else {
                State::Established
            },
            syn_due: handshake,
            syn_sent_at: None,
            rtt_timed: None,
            syn_retransmitted: false,
            cc,
            rtt,
            ca: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            app_end: 0,
            // Before the peer speaks, take the offer its window policy would open with
            // (ns-2's one-way agents have no handshake; with one, the SYN-ACK sets it):
            // the receiver starts from the same offer (`TcpReceiver`).
            snd_wnd: if handshake { 0 } else { first_offer },
            max_snd_wnd: if handshake { 0 } else { first_offer },
            sb: Scoreboard::new(),
            dupacks: 0,
            limited_tx_bytes: 0,
            recover: None,
            recovery_cwnd: 0,
            partial_acked: false,
            rtx_in_episode: 0,
            forced_rtx: false,
            rto_at: None,
            persist_at: None,
            persist_backoff: 0,
            probe_due: false,
            ts_recent: 0,
            cwnd_blocked: [false; 2],
            max_pipe: [0; 2],
            round_end: 0,
            last_data_sent: None,
            slot_end: None,
            slot_sent: false,
            afc: cfg.flow_control.afc().cloned(),
            ar_peer: None,
            zw_seen: false,
            zw_fresh_from: None,
            recovery_hidden: false,
            pace_left: 0,
            pace_credit: 0,
            pace_next: None,
            last_new_data_at: None,
            zw_stall_from: None,
            pair: None,
            stats: SenderStats::default(),
            cfg,
        }
    }

    // ----- application --------------------------------------------------------------

    /// The application hands `bytes` more to send.
    pub fn write(&mut self, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes).min(u64::MAX / 4);
    }

    /// The application always has data (a greedy source).
    pub fn set_unlimited(&mut self) {
        self.app_end = u64::MAX / 4;
    }

    /// The application offers nothing beyond what it has written so far.
    pub fn stop_writing(&mut self) {
        self.app_end = self.app_end.min(self.snd_nxt.max(self.snd_una));
    }

    /// Every byte written has been acknowledged.
    pub fn is_idle(&self) -> bool {
        self.snd_una >= self.app_end
    }

    // ----- helpers ------------------------------------------------------------------

    /// The recovery in force: RFC 6675 needs SACK information, so when the peer did
    /// not permit SACK, SACK recovery falls back to NewReno (RFC 6582), as Linux does.
    fn recovery(&self) -> Recovery {
        if self.cfg.recovery == Recovery::Sack && !self.sack_ok {
            Recovery::NewReno
        } else {
            self.cfg.recovery
        }
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    fn ts_now(&self, now: Instant) -> u32 {
        (now.as_nanos() / self.cfg.ts_granularity.as_nanos().max(1)) as u32
    }

    fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    fn arm_rto(&mut self, now: Instant) {
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// The flow-control window: the advertised window, plus `AR × SRTT` in AFC's
    /// sender placement (`flow::afc`, mechanism 1), capped by `max_send_window`.
    pub fn flow_window(&self) -> u64 {
        let extra = match (&self.afc, self.ar_peer, self.rtt.srtt()) {
            (Some(a), Some(ar), Some(srtt)) if a.adapt_rate && a.placement == Placement::Sender => {
                (ar * srtt.as_secs_f64()) as u64
            }
            _ => 0,
        };
        self.snd_wnd
            .saturating_add(extra)
            .min(self.cfg.max_send_window)
    }

    /// Bytes the windows would let out now (new data, or lost data to resend).
    fn sendable(&self) -> u64 {
        let in_use = if self.ca == CaState::Recovery && self.recovery() != Recovery::Sack {
            self.flight_size()
        } else {
            self.sb.pipe()
        };
        let cwnd_room = self.cwnd().saturating_sub(in_use);
        let app_room = self.app_end.saturating_sub(self.snd_nxt);
        let new = (self.snd_una + self.flow_window())
            .saturating_sub(self.snd_nxt)
            .min(app_room);
        let lost = self.sb.lost_count() as u64 * self.mss();
        cwnd_room.min(new + lost)
    }

    /// `sendable()` when AFC's burst control is on (0 otherwise: not needed).
    fn room_if_pacing(&self) -> u64 {
        if self.afc.as_ref().is_some_and(|a| a.pacing) {
            self.sendable()
        } else {
            0
        }
    }

    fn hides_buffer_losses(&self) -> bool {
        self.afc.as_ref().is_some_and(|a| a.hide_buffer_losses)
    }

    /// AFC mechanism 2: note zero windows and when fresh data is acknowledged.
    fn track_zero_window(&mut self, ack: u64, wnd: u64) {
        if !self.hides_buffer_losses() {
            return;
        }
        if self.zw_fresh_from.is_some_and(|f| ack > f) {
            self.zw_seen = false;
            self.zw_fresh_from = None;
        }
        // A window smaller than a segment: the peer's buffer is full.
        if wnd < self.mss() {
            self.zw_seen = true;
            self.zw_fresh_from = None;
        } else if self.zw_seen && self.zw_fresh_from.is_none() {
            self.zw_fresh_from = Some(self.snd_nxt);
        }
    }

    /// AFC mechanism 2, its repair half. The seed hides receive-buffer losses from
    /// congestion control but does not say how they are repaired; this is mobiflow's
    /// rule. A segment AFC sends beyond the advertised window (its `AR x RTT` term) is
    /// dropped by a receiver whose application stopped reading, and nothing sent after
    /// it can arrive either: a tail loss that no duplicate ACK reveals, left to the
    /// retransmission timer (hundreds of timeouts in a 600 s run, each resending the
    /// whole window). While a buffer loss is presumed (`zw_seen`), an outstanding
    /// segment that is neither acknowledged nor SACKed although it was sent long enough
    /// ago to have reached the receiver before this ACK left it (SRTT plus the
    /// reordering window of RACK, min_RTT / 4: RFC 8985 §6.2) was dropped: it is
    /// marked lost and repaired now, as a hidden loss (no congestion response).
    fn repair_buffer_losses(&mut self, now: Instant) {
        if !self.zw_seen || !self.afc.as_ref().is_some_and(|a| a.hide_buffer_losses) {
            return;
        }
        let (Some(srtt), Some(min_rtt)) = (self.rtt.srtt(), self.rtt.min_rtt()) else {
            return;
        };
        let age = srtt + min_rtt / 4;
        if now.as_nanos() < age.as_nanos() || self.sb.mark_lost_sent_before(now - age) == 0 {
            return;
        }
        self.stats.buffer_loss_repairs += 1;
        if self.ca == CaState::Open {
            // A hidden recovery (`recovery_hidden` follows `zw_seen`): the window is
            // not reduced, so RFC 6582's guard against a second reduction does not
            // apply.
            self.enter_recovery(now);
        }
        self.forced_rtx = true;
    }

    /// AFC mechanism 4: after an input, pace the excess of a window jump.
    fn check_burst(&mut self, room_before: u64) {
        let Some(burst) = self
            .afc
            .as_ref()
            .filter(|a| a.pacing)
            .map(|a| a.burst_segments as u64 * self.cfg.mss as u64)
        else {
            return;
        };
        let room = self.sendable();
        if room > room_before + burst {
            if self.pace_left == 0 {
                self.pace_credit = burst;
                self.pace_next = None;
            }
            self.pace_left = self.pace_left.max(room);
        } else if self.pace_left > 0 {
            self.pace_left = self.pace_left.max(room);
        }
    }

    /// Time a paced segment of `len` bytes occupies: `len / max(AR_peer, cwnd/SRTT)`
    /// (mobiflow's rule, assumed: the paper does not give one).
    fn pace_gap(&self, len: u64) -> Duration {
        let Some(srtt) = self.rtt.srtt().filter(|d| !d.is_zero()) else {
            return Duration::ZERO;
        };
        let rate = (self.cwnd() as f64 / srtt.as_secs_f64()).max(self.ar_peer.unwrap_or(0.0));
        if rate > 0.0 {
            Duration::from_secs_f64(len as f64 / rate)
        } else {
            Duration::ZERO
        }
    }

    fn pace_blocked(&self, now: Instant) -> bool {
        self.pace_left > 0
            && self.pace_credit < self.mss()
            && self.pace_next.is_some_and(|t| now < t)
    }

    fn pace_account(&mut self, now: Instant, len: u64) {
        if self.pace_left == 0 {
            return;
        }
        if self.pace_credit >= len {
            self.pace_credit -= len;
        } else {
            self.pace_credit = 0;
            self.stats.paced_segments += 1;
        }
        if self.pace_credit < self.mss() {
            self.pace_next = Some(now + self.pace_gap(len));
        }
        self.pace_left = self.pace_left.saturating_sub(len);
        if self.pace_left == 0 {
            self.pace_next = None;
            self.pace_credit = 0;
        }
    }

    fn set_ca(&mut self, to: CaState) {
        if self.ca != to {
            self.cc.on_state_change(self.ca, to);
            self.ca = to;
        }
    }

    fn account_slots(&mut self, now: Instant, sent: bool) {
        let Some(srtt) = self.rtt.srtt() else {
            return;
        };
        let srtt = srtt.max(Duration::from_micros(100));
        match self.slot_end {
            None => {
                self.slot_end = Some(now + srtt);
                self.slot_sent = sent;
            }
            Some(mut end) => {
                while now >= end {
                    self.stats.total_rtts += 1;
                    if !self.slot_sent {
                        self.stats.idle_rtts += 1;
                    }
                    self.slot_sent = false;
                    end += srtt;
                }
                self.slot_end = Some(end);
                self.slot_sent |= sent;
            }
        }
    }

    /// Close the idle-RTT accounting at `now` (end of run or of the transfer).
    pub fn finish(&mut self, now: Instant) {
        self.account_slots(now, false);
    }

    fn data_segment(&self, now: Instant, seq: u64, len: u64) -> Segment {
        Segment {
            seq,
            ack: 0,
            len: len as u32,
            flags: Flags::ACK,
            wnd: self.cfg.rcv_buf,
            ts: self.ts_ok.then(|| Timestamps {
                tsval: self.ts_now(now),
                tsecr: self.ts_recent,
            }),
            ..Segment::default()
        }
    }

    fn on_data_sent(&mut self, now: Instant, len: u64) {
        self.stats.segments_sent += 1;
        self.stats.data_segments_sent += 1;
        self.stats.bytes_sent += len;
        self.last_data_sent = Some(now);
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
        self.account_slots(now, true);
        self.pace_account(now, len);
        self.max_pipe[1] = self.max_pipe[1].max(self.sb.pipe());
        self.cc.on_sent(now, len, self.sb.pipe());
        if let Some(p) = &mut self.pair {
            p.on_sent(now);
        }
    }

    /// Was the sender limited by cwnd lately (RFC 7661 §4; Linux
    /// `tcp_is_cwnd_limited`)? In slow start, while it used at least half of cwnd; in
    /// congestion avoidance, if cwnd held back new data in this or the last round trip.
    /// A sender limited by the receiver's window or by its application does not grow
    /// cwnd, which otherwise climbs without bound while it means nothing.
    fn cwnd_limited(&self) -> bool {
        let cwnd = self.cc.window();
        if self.cwnd_blocked[0] || self.cwnd_blocked[1] {
            return true;
        }
        self.cc.in_slow_start() && cwnd < 2 * self.max_pipe[0].max(self.max_pipe[1])
    }

    fn retransmit(&mut self, now: Instant, i: usize) -> Segment {
        let r = *self.sb.get(i).expect("index in scoreboard");
        // Karn's rule (RFC 6298 §3): a segment that is sent again is no longer timed,
        // whatever caused the resend (ns-2 stops timing on every retransmission too).
        if self
            .rtt_timed
            .is_some_and(|(end, _)| r.start < end && end <= r.end)
        {
            self.rtt_timed = None;
        }
        // AFC mechanism 2: while receive-buffer losses are hidden, the first
        // unacknowledged segment is resent by `repair_buffer_losses` long after the
        // last ACK that advanced `snd_una` armed the timer, so the timer is restarted
        // with it, as Linux re-arms the RTO when it retransmits the head of its queue
        // (`tcp_xmit_retransmit_queue`). Otherwise the RTO fires before the repair can
        // be acknowledged and resends the whole window a second time.
        if r.start == self.snd_una && self.zw_seen && self.hides_buffer_losses() {
            self.arm_rto(now);
        }
        self.sb.retransmitted(i, now);
        self.stats.retransmits += 1;
        self.rtx_in_episode += 1;
        let mut seg = self.data_segment(now, r.start, r.len());
        seg.retransmission = true;
        self.on_data_sent(now, r.len());
        seg
    }

    // ----- output -------------------------------------------------------------------

    /// The next segment to send, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.state == State::SynSent {
            if !self.syn_due {
                return None;
            }
            self.syn_due = false;
            self.syn_sent_at = Some(now);
            self.stats.segments_sent += 1;
            if self.rto_at.is_none() {
                self.arm_rto(now);
            }
            return Some(Segment {
                flags: Flags::SYN,
                wnd: self.cfg.rcv_buf.min(u16::MAX as u64),
                mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
                sack_permitted: self.cfg.sack,
                wscale: Some(0),
                ts: self.cfg.timestamps.then(|| Timestamps {
                    tsval: self.ts_now(now),
                    tsecr: 0,
                }),
                ..Segment::default()
            });
        }

        if self.probe_due {
            self.probe_due = false;
            self.stats.window_probes += 1;
            self.stats.segments_sent += 1;
            let mut seg = self.data_segment(now, self.snd_una, 0);
            seg.window_probe = true;
            return Some(seg);
        }

        if self.forced_rtx {
            self.forced_rtx = false;
            if let Some(i) = self.sb.first_lost() {
                return Some(self.retransmit(now, i));
            }
        }

        if self.pace_blocked(now) {
            return None;
        }

        let mut cwnd = self.cc.window();
        if self.cfg.limited_transmit
            && self.cfg.limited_transmit_after_timeout
            && !self.sack_ok
            && self.ca == CaState::Loss
            && self.dupacks > 0
            && self.dupacks < self.cfg.dupack_threshold
        {
            // ns-2 `TcpAgent::send_one` after a timeout (`RenoTcpAgent::timeout` zeroes
            // `dupacks_`): the next packet of the resend may go while it is within
            // `highest_ack_ + cwnd_ + dupacks_`.
            cwnd += self.dupacks as u64 * self.mss();
        }
        let pipe_mode = self.ca == CaState::Loss
            || (self.ca == CaState::Recovery && self.recovery() == Recovery::Sack);

        // RFC 6675 NextSeg rule (1), and go-back-N after a timeout: lost segments
        // first, as the window allows.
        if pipe_mode && self.sb.lost_count() > 0 {
            let i = self.sb.first_lost()?;
            let r = *self.sb.get(i)?;
            // Linux `tcp_retransmit_skb`: a segment beyond the receiver's window is not
            // resent, except the first unacknowledged one (a zero-window probe then).
            if r.start != self.snd_una && r.start >= self.snd_una + self.flow_window() {
                return None;
            }
            let len = r.len();
            if self.sb.pipe() + len <= cwnd.max(self.mss()) || self.sb.pipe() == 0 {
                return Some(self.retransmit(now, i));
            }
            return None;
        }

        // RFC 6675 NextSeg rule (3): in SACK recovery, when no segment is deemed lost
        // and no new data may be sent (none written, or the receiver's window is
        // full), resend an un-SACKed segment below HighSACK that was not resent yet.
        // (Its original still counts in `pipe`; the copy is not added a second time.)
        if pipe_mode && self.ca == CaState::Recovery {
            let wnd_edge = self.snd_una + self.flow_window();
            let no_new_data = self.app_end <= self.snd_nxt || wnd_edge <= self.snd_nxt;
            if no_new_data && self.sb.pipe() + self.mss() <= cwnd {
                if let Some(i) = self.sb.first_unsacked_below_high_sack() {
                    return Some(self.retransmit(now, i));
                }
            }
        }

        // New data.
        let app_room = self.app_end.saturating_sub(self.snd_nxt);
        if app_room == 0 {
            return None;
        }
        let wnd_limit = self.snd_una + self.flow_window();
        let rwnd_room = wnd_limit.saturating_sub(self.snd_nxt);
        let cwnd_room = if self.ca == CaState::Recovery && !pipe_mode {
            self.recovery_cwnd.saturating_sub(self.flight_size())
        } else {
            let mut allowed = cwnd;
            let mut in_use = self.sb.pipe();
            if self.ca == CaState::Open
                && self.dupacks > 0
                && self.dupacks < self.cfg.dupack_threshold
            {
                if !self.cfg.limited_transmit {
                    // SACKed segments have left `pipe`; without limited transmit
                    // they must not release new data.
                    in_use = self.flight_size();
                } else if !self.sack_ok {
                    // RFC 3042: each of the first two dupACKs lets one new segment out.
                    allowed += self.dupacks as u64 * self.mss();
                }
                // With SACK, RFC 6675 §5 step 3: cwnd - pipe, where pipe already
                // excludes the segment each dupACK SACKed.
            }
            allowed.saturating_sub(in_use)
        };
        if rwnd_room == 0 {
            // RFC 9293 §3.8.6.1: a zero window with nothing in flight needs the
            // persist timer, or the connection may deadlock on a lost window update.
            if self.sb.is_empty() && self.persist_at.is_none() {
                self.persist_at = Some(now + self.persist_interval());
            }
            return None;
        }
        let mss = self.mss();
        if cwnd_room < mss.min(rwnd_room).min(app_room) {
            self.cwnd_blocked[1] = true;
        }
        let len = mss.min(rwnd_room).min(cwnd_room).min(app_room);
        if len == 0 {
            return None;
        }
        if len < mss && len < app_room {
            // Never send a runt because of cwnd. Because of the receiver's window, fill
            // it as Linux does, unless RFC 1122 §4.2.3.4 sender SWS avoidance is on:
            // then only with nothing in flight or at least half the largest window the
            // peer has offered (the override timer is applied at once).
            if cwnd_room < mss.min(app_room) {
                return None;
            }
            if self.cfg.sender_sws && !self.sb.is_empty() && len < self.max_snd_wnd / 2 {
                return None;
            }
        }

        // RFC 5681 §4.1: restart from the initial window after an idle period
        // longer than the RTO.
        if self.cfg.idle_restart && self.sb.is_empty() {
            if let Some(last) = self.last_data_sent {
                let idle = now - last;
                if idle > self.rtt.rto() {
                    let iw = self.cfg.initial_window_bytes();
                    if self.cc.window() > iw {
                        self.cc.set_window(iw);
                    }
                    self.cc.on_event(now, CaEvent::TxStartAfterIdle { idle });
                }
            }
        }

        if let Some(from) = self.zw_stall_from.take() {
            let d = now - from;
            let srtt = self.rtt.srtt().unwrap_or(d).as_nanos().max(1);
            self.stats.zero_window_stalls += 1;
            self.stats.zero_window_stall_time += d;
            self.stats.zero_window_stall_rtts += d.as_nanos().div_ceil(srtt);
        }
        self.last_new_data_at = Some(now);
        let seq = self.snd_nxt;
        self.snd_nxt += len;
        if self.cfg.limited_transmit && self.ca == CaState::Open && self.dupacks > 0 {
            self.limited_tx_bytes += len;
        }
        if self.cfg.rtt_sampling == RttSampling::TimedSegment && self.rtt_timed.is_none() {
            self.rtt_timed = Some((seq + len, now));
        }
        self.sb.push(SegRec {
            start: seq,
            end: seq + len,
            sent_at: now,
            tx_count: 1,
            sacked: false,
            lost: false,
            app_limited: len == app_room,
        });
        self.persist_at = None;
        let seg = self.data_segment(now, seq, len);
        self.on_data_sent(now, len);
        Some(seg)
    }

    fn persist_interval(&self) -> Duration {
        let base = self.rtt.rto().max(self.cfg.persist_min);
        base.saturating_mul(1u64 << self.persist_backoff.min(16))
            .min(self.cfg.persist_max)
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let pace = self.pace_next.filter(|_| self.pace_left > 0);
        [self.rto_at, self.persist_at, pace]
            .into_iter()
            .flatten()
            .min()
    }

    // ----- input --------------------------------------------------------------------

    /// Timers that are due at `now` fire.
    pub fn handle_timeout(&mut self, now: Instant) {
        // A pacing slot that has come is no longer a constraint (nor a timer).
        if self.pace_next.is_some_and(|t| now >= t) {
            self.pace_next = None;
        }
        let room_before = self.room_if_pacing();
        if self.rto_at.is_some_and(|t| now >= t) {
            self.rto_at = None;
            self.on_rto(now);
            self.check_burst(room_before);
        }
        if self.persist_at.is_some_and(|t| now >= t) {
            if self.sb.is_empty() && self.snd_wnd == 0 {
                self.probe_due = true;
                self.persist_backoff += 1;
                self.persist_at = Some(now + self.persist_interval());
            } else {
                self.persist_at = None;
            }
        }
    }

    fn on_rto(&mut self, now: Instant) {
        self.stats.timeouts += 1;
        // AFC mechanism 2: a timeout after a zero window is a receive-buffer loss, not
        // congestion: the timer is not backed off either (RFC 6298 §5.5's backoff is a
        // congestion response), or a retransmission dropped by a still-full buffer
        // would idle the sender for seconds.
        if !self.zw_seen {
            self.rtt.backoff();
        }
        self.expire(now);
    }

    /// What an expiry of the retransmission timer does, besides counting and backing
    /// off: RFC 5681 §3.1 / RFC 6298 §5.4–5.6.
    fn expire(&mut self, now: Instant) {
        if self.pair.as_ref().is_some_and(|p| p.samples() > 0) {
            self.close_pair();
        }
        if self.state == State::SynSent {
            // RFC 6298 §5 applied to the SYN; RFC 5681 §3.1: the window after a lost
            // SYN is one segment.
            self.syn_due = true;
            self.syn_retransmitted = true;
            self.stats.syn_retransmits += 1;
            return;
        }
        if self.sb.is_empty() {
            return;
        }
        let repeated = self.ca == CaState::Loss;
        let in_flight = match self.ca {
            // A repeated timeout: only what the timer resent is in flight, which
            // halves to 2 SMSS as in ns-2; with `hold_ssthresh_on_repeated_rto`,
            // RFC 5681 §3.1 holds ssthresh instead.
            CaState::Loss => self.sb.pipe(),
            // A timeout ends a fast recovery: the inflated window and what the
            // receiver holds out of order are not in the network, so FlightSize is
            // taken as the uninflated cwnd (ns-2 resets dupwnd_ first; Linux keeps the
            // recovery's ssthresh).
            CaState::Recovery => self.flight_size().min(self.cc.window()),
            CaState::Open => self.flight_size(),
        };
        self.set_ca(CaState::Loss);
        self.recovery_hidden = false;
        if self.zw_seen {
            // AFC mechanism 2: a timeout after a zero window is taken as a
            // receive-buffer loss; retransmit without collapsing the window.
            self.stats.hidden_congestion_events += 1;
        } else {
            self.cc.on_congestion_event(&CongestionEvent {
                now,
                kind: CongestionKind::Timeout,
                in_flight,
                lost_bytes: self.flight_size(),
                mss: self.cfg.mss,
                repeated: repeated && self.cfg.hold_ssthresh_on_repeated_rto,
            });
        }
        self.sb.mark_all_lost();
        // The timed segment may be among those resent: stop timing (ns-2's
        // reset_rtx_timer clears rtt_active_).
        self.rtt_timed = None;
        self.recover = Some(self.snd_nxt);
        self.dupacks = 0;
        self.limited_tx_bytes = 0;
        self.rtx_in_episode = 0;
        self.forced_rtx = true;
        self.arm_rto(now);
    }

    fn enter_recovery(&mut self, now: Instant) {
        self.stats.fast_retransmits += 1;
        self.rtt_timed = None;
        if self.pair.as_ref().is_some_and(|p| p.samples() > 0) {
            self.close_pair();
        }
        // RFC 5681 §3.2 step 2 (and RFC 6675 §5 step 4.2): data sent by limited
        // transmit is not part of FlightSize for ssthresh.
        let flight = self.flight_size().saturating_sub(self.limited_tx_bytes);
        self.limited_tx_bytes = 0;
        self.set_ca(CaState::Recovery);
        // AFC mechanism 2: after a zero window, a loss is taken as a receive-buffer
        // loss and kept from congestion control; the recovery still retransmits.
        self.recovery_hidden = self.zw_seen;
        if self.recovery_hidden {
            self.stats.hidden_congestion_events += 1;
        } else {
            self.cc.on_congestion_event(&CongestionEvent {
                now,
                kind: CongestionKind::FastRetransmit,
                in_flight: flight,
                lost_bytes: self.sb.front().map_or(0, |r| r.len()),
                mss: self.cfg.mss,
                repeated: false,
            });
        }
        self.recover = Some(self.snd_nxt);
        self.rtx_in_episode = 0;
        self.partial_acked = false;
        self.sb.mark_lost(0);
        if self.sack_ok {
            self.sb
                .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss());
        }
        // RFC 5681 §3.2 step 4: cwnd = ssthresh + 3*SMSS (inflated by the dupACKs);
        // a hidden loss inflates the unreduced cwnd.
        let base = if self.recovery_hidden {
            self.cc.window()
        } else {
            self.cc.ssthresh()
        };
        self.recovery_cwnd = base + self.dupacks as u64 * self.mss();
        self.forced_rtx = true;
        if self.cfg.rto_restart_on_fast_retransmit {
            // ns-2 `NewRenoTcpAgent::dupack_action` (and `TcpAgent::`,
            // `Sack1TcpAgent::`): `reset_rtx_timer(1, 0)` before the retransmission, so
            // the retransmitted segment gets a whole RTO to be acknowledged.
            self.arm_rto(now);
        }
    }

    fn exit_recovery(&mut self, now: Instant) {
        if !std::mem::take(&mut self.recovery_hidden) {
            self.cc.on_recovery_exit(&RecoveryExit {
                now,
                in_flight: self.sb.pipe(),
                retransmitted_segments: self.rtx_in_episode,
                mss: self.cfg.mss,
            });
        }
        self.set_ca(CaState::Open);
        self.dupacks = 0;
    }

    /// A segment from the receiver (an ACK, a window update or a SYN-ACK) arrived.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) {
        if self.state == State::SynSent {
            if seg.flags.contains(Flags::SYN) && seg.flags.contains(Flags::ACK) {
                self.state = State::Established;
                self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
                self.sack_ok = self.cfg.sack && seg.sack_permitted;
                if let Some(ts) = seg.ts {
                    self.ts_recent = ts.tsval;
                }
                if !self.syn_retransmitted {
                    if let Some(t) = self.syn_sent_at {
                        let r = now - t;
                        self.rtt.on_sample(r);
                        self.stats.rtt.record(r);
                    }
                } else {
                    self.cc.set_window(self.mss());
                    // RFC 6298 §5.7: the SYN timed out, so data starts with an RTO of
                    // at least 3 s.
                    self.rtt
                        .reset(self.cfg.initial_rto.max(Duration::from_secs(3)));
                }
                self.rtt.reset_backoff();
                self.snd_wnd = seg.wnd;
                self.max_snd_wnd = seg.wnd;
                self.rto_at = None;
            }
            return;
        }
        if !seg.flags.contains(Flags::ACK) {
            return;
        }
        let ack = seg.ack;
        if ack > self.snd_nxt {
            return; // acknowledges something never sent
        }
        if self.ts_ok {
            if let Some(ts) = seg.ts {
                self.ts_recent = ts.tsval;
            }
        }
        let room_before = self.room_if_pacing();
        let prior_in_flight = self.sb.pipe();
        let old_wnd = self.snd_wnd;
        if ack >= self.snd_una {
            // RFC 9293 §3.10.7.4: take the window from an ACK that is not old.
            self.snd_wnd = seg.wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(seg.wnd);
            if seg.wnd < self.mss() && self.app_end > self.snd_nxt && self.zw_stall_from.is_none() {
                self.zw_stall_from = Some(self.last_new_data_at.unwrap_or(now));
            }
            if self.afc.is_some() {
                if let Some(code) = seg.afc_rate {
                    self.ar_peer = Some(decode_rate(code));
                }
                self.track_zero_window(ack, seg.wnd);
            }
        }
        let mut newly_sacked = 0;
        if self.sack_ok {
            for (l, r) in seg.sack.iter() {
                if r > ack {
                    newly_sacked += self.sb.sack(l.max(ack), r);
                }
            }
        }

        if ack > self.snd_una {
            // Karn's rule holds for every segment the ACK covers: if one of them was
            // retransmitted, the ACK may have left when the retransmission filled a
            // hole, long after the later segments arrived (Linux's
            // FLAG_RETRANS_DATA_ACKED). Only needed when this ACK's sample comes from
            // send times of every ACK (no echoed timestamp, per-ACK sampling).
            let ts_sample = self.ts_ok && seg.ts.is_some_and(|ts| ts.tsecr != 0);
            let rtx_acked = !ts_sample
                && self.cfg.rtt_sampling == RttSampling::EveryAck
                && self
                    .sb
                    .iter()
                    .take_while(|r| r.start < ack)
                    .any(|r| r.tx_count > 1);
            // BA-SST: the ACK was triggered by the latest segment it covers (a
            // retransmission that filled a hole acknowledges older ones too).
            let latest_sent = match &self.pair {
                Some(p) if !p.is_closed() => self
                    .sb
                    .iter()
                    .take_while(|r| r.end <= ack)
                    .map(|r| r.sent_at)
                    .max(),
                _ => None,
            };
            let (last, newly_acked) = self.sb.ack_to(ack);
            self.snd_una = ack;
            if let (Some(p), Some(sent_at)) =
                (&mut self.pair, latest_sent.or(last.map(|l| l.sent_at)))
            {
                if let Some(bw) = p.on_ack(now, newly_acked, sent_at) {
                    self.apply_ba_sst(bw);
                }
            }
            // RTT sample: RFC 7323 §4.1 from the echoed timestamp, else RFC 6298 §3
            // Karn's rule (never from a retransmitted segment).
            let sample = match (self.ts_ok, seg.ts) {
                (true, Some(ts)) if ts.tsecr != 0 => {
                    let ticks = self.ts_now(now).wrapping_sub(ts.tsecr) as u64;
                    Some(Duration::from_nanos(
                        ticks * self.cfg.ts_granularity.as_nanos(),
                    ))
                }
                _ => match self.cfg.rtt_sampling {
                    RttSampling::EveryAck => last.filter(|_| !rtx_acked).map(|r| now - r.sent_at),
                    RttSampling::TimedSegment => match self.rtt_timed {
                        Some((end, sent)) if ack >= end => {
                            self.rtt_timed = None;
                            Some(now - sent)
                        }
                        _ => None,
                    },
                },
            };
            if let Some(r) = sample {
                self.rtt.on_sample(r);
                self.stats.rtt.record(r);
                // Karn's algorithm (RFC 6298 §5 note, as Linux and ns-2): the
                // backed-off RTO is kept until a valid RTT sample arrives.
                self.rtt.reset_backoff();
            }
            self.persist_backoff = 0;

            let mut restart_timer = true;
            match self.ca {
                CaState::Recovery => {
                    if self.recover.is_some_and(|rec| ack >= rec)
                        || self.recovery() == Recovery::Reno
                    {
                        self.exit_recovery(now);
                    } else if self.recovery() == Recovery::NewReno {
                        // RFC 6582 §3.2 step 5: a partial ACK. Retransmit the first
                        // unacknowledged segment, deflate the window by the amount
                        // acknowledged, add back one SMSS if that was at least SMSS.
                        self.sb.mark_lost(0);
                        self.forced_rtx = true;
                        self.recovery_cwnd = self.recovery_cwnd.saturating_sub(newly_acked);
                        if newly_acked >= self.mss() {
                            self.recovery_cwnd += self.mss();
                        }
                        // "Impatient" variant (RFC 6582 §4): reset the timer on the
                        // first partial ACK only.
                        restart_timer = !self.partial_acked;
                        self.partial_acked = true;
                    } else {
                        // RFC 6675: losses follow from the scoreboard.
                        self.sb
                            .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss());
                    }
                }
                CaState::Loss => {
                    if self.recover.is_some_and(|rec| ack >= rec) {
                        self.set_ca(CaState::Open);
                    }
                }
                CaState::Open => {}
            }
            if self.ca != CaState::Recovery {
                self.dupacks = 0;
                self.limited_tx_bytes = 0;
            }
            let min_rtt = self.rtt.min_rtt().unwrap_or_default();
            let srtt = self.rtt.srtt().unwrap_or(min_rtt);
            let not_cwnd_limited = self.cfg.cwnd_validation && !self.cwnd_limited();
            if ack >= self.round_end {
                // A round trip ended: its verdict becomes the previous one.
                self.cwnd_blocked = [self.cwnd_blocked[1], false];
                self.max_pipe = [self.max_pipe[1], self.sb.pipe()];
                self.round_end = self.snd_nxt.max(ack + 1);
            }
            self.cc.on_ack(&AckSample {
                now,
                acked_bytes: newly_acked + newly_sacked,
                prior_in_flight,
                rtt: sample,
                srtt,
                min_rtt,
                app_limited: last.is_some_and(|r| r.app_limited) || not_cwnd_limited,
                in_recovery: self.ca == CaState::Recovery,
                mss: self.cfg.mss,
            });
            if self.sb.is_empty() {
                self.rto_at = None;
            } else if restart_timer {
                // RFC 6298 §5.3: restart the timer when new data is acknowledged.
                self.arm_rto(now);
            }
        } else if ack == self.snd_una && !self.sb.is_empty() && seg.len == 0 {
            // A duplicate ACK: RFC 5681 §2 (same ACK, same window, no data) or, with
            // SACK, RFC 6675 §2 (it SACKs new data).
            let dup = if self.sack_ok {
                newly_sacked > 0
            } else {
                seg.wnd == old_wnd && !seg.flags.contains(Flags::SYN)
            } && !seg.handoff_notice;
            if dup {
                self.dupacks += 1;
                match self.ca {
                    CaState::Open => {
                        let sack_loss = self.sack_ok
                            && self
                                .sb
                                .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss())
                                > 0;
                        // RFC 6582 §3.2 step 1 (and §4 on duplicate ACKs after a
                        // timeout): a new fast retransmit only once the cumulative ACK
                        // covers more than `recover` (here `recover` is the byte after
                        // the highest one sent, so: ack > recover). Duplicate ACKs at
                        // exactly `recover` come from the receiver answering resent
                        // data it already holds after a go-back-N resend; ns-2's
                        // `highest_ack_ > recover_` is the same rule.
                        let allowed = self.recover.is_none_or(|rec| ack > rec);
                        if allowed && (self.dupacks >= self.cfg.dupack_threshold || sack_loss) {
                            self.enter_recovery(now);
                        }
                    }
                    CaState::Recovery => {
                        if self.recovery() == Recovery::Sack {
                            self.sb
                                .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss());
                        } else {
                            // RFC 5681 §3.2 step 5: inflate by one SMSS per dupACK.
                            self.recovery_cwnd += self.mss();
                        }
                    }
                    CaState::Loss => {}
                }
            }
        }

        if self.snd_wnd > 0 {
            self.persist_at = None;
        }
        // BA-SST: sampling ends with the slow start that follows the change.
        if self
            .pair
            .as_ref()
            .is_some_and(|p| p.samples() > 0 && !self.cc.in_slow_start())
        {
            self.close_pair();
        }
        if seg.handoff_notice {
            self.on_interface_change(now, &InterfaceChange::default());
        }
        self.repair_buffer_losses(now);
        self.check_burst(room_before);
    }

    // ----- mobility (the vertical-handoff paper, `tcp::handoff`) --------------------

    /// The mobile host changed its datalink interface (it is this host, or the
    /// receiver told us: `HandoffSignal`). With `handoff_reaction`:
    /// * IETT (seed §IV.A): if data is outstanding, the retransmission timer expires
    ///   now: the sender restarts by slow start from `snd_una` (the RFC 5681 §3.1
    ///   timeout response), and the RTO is not backed off for it; a backoff from
    ///   timeouts during the interruption is undone (Karn's backed-off RTO belongs to
    ///   the old path). With `handoff_reset_rtt`, SRTT and RTTVAR are forgotten
    ///   first, so the RTO restarts from `initial_rto`.
    /// * BA-SST (seed §IV.B): a packet-pair estimator is armed; its estimate sets
    ///   `ssthresh = max(2·MSS, BW × RTT)` (equations (1)–(2)).
    pub fn on_interface_change(&mut self, now: Instant, _change: &InterfaceChange) {
        self.stats.interface_changes += 1;
        let reaction = self.cfg.handoff_reaction;
        if self.cfg.handoff_reset_rtt && reaction != HandoffReaction::None {
            self.rtt.reset(self.cfg.initial_rto);
        }
        if reaction.ba_sst() {
            self.pair = Some(PacketPair::new(now, self.cfg.ba_sst_refine));
        }
        if reaction.iett() && self.state == State::Established && !self.sb.is_empty() {
            self.stats.forced_expirations += 1;
            self.rto_at = None;
            self.rtt.reset_backoff();
            self.expire(now);
        }
    }

    fn apply_ba_sst(&mut self, bw: f64) {
        let mss = self.cfg.mss;
        let Some(p) = &self.pair else { return };
        let (Some(ss), Some(rtt)) = (p.ssthresh(mss), p.rtt()) else {
            return;
        };
        self.cc.set_ssthresh(ss);
        self.stats.ba_sst_estimates += 1;
        self.stats.ba_sst_last_bps = bw * 8.0;
        self.stats.ba_sst_last_rtt = rtt;
        self.stats.ba_sst_last_ssthresh = ss;
    }

    fn close_pair(&mut self) {
        if let Some(p) = &mut self.pair {
            p.close();
        }
    }

    /// BA-SST's estimator, if an interface change armed one.
    pub fn packet_pair(&self) -> Option<&PacketPair> {
        self.pair.as_ref()
    }

    // ----- getters ------------------------------------------------------------------

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    pub fn cc(&self) -> &dyn CongestionController {
        self.cc.as_ref()
    }
    pub fn cc_mut(&mut self) -> &mut dyn CongestionController {
        self.cc.as_mut()
    }
    /// The window the sender uses now: cwnd, or the inflated recovery window.
    pub fn cwnd(&self) -> u64 {
        if self.ca == CaState::Recovery && self.recovery() != Recovery::Sack {
            self.recovery_cwnd
        } else {
            self.cc.window()
        }
    }
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Bytes outstanding (sent, not cumulatively acknowledged).
    pub fn flight(&self) -> u64 {
        self.flight_size()
    }
    /// RFC 6675 pipe.
    pub fn pipe(&self) -> u64 {
        self.sb.pipe()
    }
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }
    /// AR the receiver reported in AFC's option, bytes per second.
    pub fn ar_peer(&self) -> Option<f64> {
        self.ar_peer
    }
    /// AFC buffer-loss hiding is in force (a zero window was seen, fresh data not yet
    /// acknowledged).
    pub fn hiding_congestion(&self) -> bool {
        self.zw_seen
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
}

#[cfg(test)]
mod rtt_stats_tests {
    use super::*;

    #[test]
    fn percentiles_are_within_one_percent() {
        let mut s = RttStats::default();
        for ms in 1..=1000u64 {
            s.record(Duration::from_millis(ms));
        }
        let p95 = s.quantile(0.95).unwrap().as_millis_f64();
        assert!((p95 / 950.0 - 1.0).abs() < 0.01, "{p95}");
        let p50 = s.quantile(0.5).unwrap().as_millis_f64();
        assert!((p50 / 500.0 - 1.0).abs() < 0.01, "{p50}");
        assert_eq!(s.mean(), Some(Duration::from_micros(500_500)));
        assert_eq!(s.min, Some(Duration::from_millis(1)));
    }

    #[test]
    fn buckets_are_monotonic_and_hold_their_values() {
        let mut last = 0;
        for us in (0..5_000_000u64).step_by(997) {
            let d = Duration::from_micros(us);
            let b = RttStats::bucket(d);
            assert!(b >= last);
            last = b;
            let v = RttStats::bucket_value(b).as_nanos() as f64 / 1e3;
            assert!(
                (v - us as f64).abs() <= 1.0 + us as f64 * 0.008,
                "{us} -> {v}"
            );
        }
    }
}
