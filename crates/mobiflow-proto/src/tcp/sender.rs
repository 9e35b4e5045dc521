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
//! * Spurious retransmissions (with `undo` / `frto`): Eifel, D-SACK and F-RTO decide
//!   whether a reduction is undone, as Linux does (`tcp::undo`, RFC 3522, 3708, 5682).
//! * A zero window with nothing in flight starts the persist timer (RFC 9293
//!   §3.8.6.1, RFC 1122 §4.2.2.17); probes back off exponentially.
//! * The mobile schemes' changes to the sender are sender extensions (`tcp::ext`),
//!   called at named hook points: AFC's sender half (`tcp::ext::afc`), and the
//!   reactions to an interface change of the mobile host ([`TcpSender::on_interface_change`]):
//!   IETT (`tcp::ext::iett`) and BA-SST (`tcp::ext::ba_sst`). Freeze-TCP needs nothing
//!   here: its zero window puts this unmodified sender into persist mode, which keeps
//!   cwnd and the RTO.
//!
//! Polling order: after any `handle_*` call or `write`, call `poll_transmit` until it
//! returns `None`, then schedule a wake-up at `poll_timeout()`.

use super::config::{LossDetection, Recovery, RttSampling, TcpConfig};
use super::cwv::CwndValidation;
use super::dsack::dsack_block;
use super::event::SenderEvent;
use super::ext::{self, Pacer, Response, SenderCtx, SenderExt, SenderExtension};
use super::handoff::InterfaceChange;
use super::jiffies::{self, Clock};
use super::prr::Prr;
use super::rack::Rack;
use super::rate::{AckState, RateSampler, TxState};
use super::rtt::RttEstimator;
use super::sack::{Scoreboard, SegRec};
use super::tlp::{Probe, Tlp};
use super::undo::{self, AckView, Undo, Verdict};
use super::Polled;
use crate::cc::{
    AckSample, CaEvent, CaState, CongestionController, CongestionEvent, CongestionKind, Controller,
    RecoveryExit,
};
use crate::event::Events;
use crate::time::{Duration, Instant};
use crate::wire::{ExpOptions, Flags, Segment, Timestamps};

// RACK, the tail loss probe, PRR and SACK RTT samples: the sender's side of them.
#[path = "sender_loss.rs"]
mod sender_loss;

/// Distribution of RTT samples: min, mean and a log-linear histogram for percentiles
/// (HDR-style: exact below 128 µs, then 128 sub-buckets per power of two, so every
/// bucket is less than 0.8 % wide). The histogram holds only the buckets from the
/// smallest sample's to the largest's, grown as samples fall outside them (a flow
/// whose RTT stays within 40-100 ms keeps about 170 buckets, not all 4,480); integer
/// arithmetic only on the per-ACK path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RttStats {
    pub count: u64,
    pub min: Option<Duration>,
    pub max: Option<Duration>,
    sum_ns: u128,
    /// Counts of buckets `base..base + hist.len()`.
    hist: Vec<u32>,
    base: usize,
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
    /// Inlined (taken on every RTT sample, one per ACK with timestamps), the histogram's
    /// growth out of line.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let b = Self::bucket(d);
        if b < self.base || b >= self.base + self.hist.len() {
            self.cover(b);
        }
        self.count += 1;
        self.sum_ns += d.as_nanos() as u128;
        self.min = Some(self.min.map_or(d, |m| m.min(d)));
        self.max = Some(self.max.map_or(d, |m| m.max(d)));
        self.hist[b - self.base] += 1;
    }
    /// Grow the histogram to hold bucket `b`.
    #[cold]
    #[inline(never)]
    fn cover(&mut self, b: usize) {
        if self.hist.is_empty() {
            self.base = b;
            self.hist.push(0);
        } else if b < self.base {
            self.hist
                .splice(0..0, std::iter::repeat_n(0, self.base - b));
            self.base = b;
        } else {
            self.hist.resize(b - self.base + 1, 0);
        }
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
                let v = Self::bucket_value(self.base + i);
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
    /// Congestion signals (fast retransmits, timeouts) a sender extension kept from
    /// congestion control (AFC: because they followed a zero window).
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
    /// Tail loss probes sent (RFC 8985 §7), and the probe episodes that found a loss
    /// and reduced cwnd (§7.4).
    pub loss_probes: u64,
    pub loss_probe_recoveries: u64,
    /// D-SACK blocks received (RFC 2883, `tcp::dsack`).
    pub dsacks_received: u64,
    /// Congestion reductions undone because they proved spurious (`tcp::undo`:
    /// Eifel, D-SACK, F-RTO), and of them those after a timeout.
    pub undos: u64,
    pub rto_undos: u64,
}

/// What RFC 6675's NextSeg chose ([`TcpSender::next_seg`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum NextSeg {
    /// Resend the scoreboard's segment at this index.
    Retransmit(usize),
    /// Send nothing now (the windows do not allow the lost segment).
    Hold,
    /// Send new data, if the windows allow.
    NewData,
}

/// Where an ACK of new data takes its RTT sample from ([`TcpSender::rtt_from`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum RttFrom {
    /// The echoed timestamp, this TSecr (RFC 7323 §4.1).
    Echo(u32),
    /// The newest segment acknowledged (per-ACK sampling, none resent).
    Newest,
    /// The timed segment, if the ACK covers it (ns-2's `rtt_seq_`).
    Timed,
    /// None (Karn's rule: a covered segment was resent).
    Nothing,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    SynSent,
    Established,
}

/// The room for new data ([`TcpSender::rooms`]): what the application has
/// written and not sent, what the receiver's window leaves, what cwnd leaves.
#[derive(Copy, Clone, Debug)]
struct Rooms {
    app: u64,
    rwnd: u64,
    cwnd: u64,
}

impl Rooms {
    /// The rooms after a new segment of `len` bytes, at most each room, left.
    fn less(self, len: u64) -> Rooms {
        Rooms {
            app: self.app - len,
            rwnd: self.rwnd - len,
            cwnd: self.cwnd - len,
        }
    }
}

/// Write `seg`, if any, into `out`.
#[inline(always)]
fn put(out: &mut Segment, seg: Option<Segment>) -> Polled {
    match seg {
        Some(s) => {
            *out = s;
            Polled::Sent
        }
        None => Polled::Nothing,
    }
}

/// See the module documentation.
#[derive(Debug)]
pub struct TcpSender {
    /// The sender's own copy, read on every ACK: shared behind an `Arc` as the
    /// receiver's, it cost 5 instructions more per delivered packet (bench callgrind
    /// slope, 2,908.8 -> 2,913.8) for 272 bytes less per flow.
    cfg: TcpConfig,
    /// Reno and CUBIC by type, so that the calls of every packet are direct
    /// (`cc::Controller`).
    cc: Controller,
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
    /// Congestion-window validation (RFC 7661 §4).
    cwv: CwndValidation,
    last_data_sent: Option<Instant>,
    slot_end: Option<Instant>,
    slot_sent: bool,
    /// The fast recovery in progress was kept from congestion control (an extension
    /// answered [`Response::Hide`]).
    recovery_hidden: bool,
    /// When new data last left, and the start of the zero-window stall in progress.
    last_new_data_at: Option<Instant>,
    zw_stall_from: Option<Instant>,
    /// The sender extensions (`tcp::ext`), in the order their hooks are called.
    ext: Vec<SenderExt>,
    /// RACK loss detection (`tcp::rack`), with `loss_detection = Rack`.
    rack: Option<Rack>,
    /// The tail loss probe (`tcp::tlp`), with `tlp`, and a probe to send now.
    tlp: Option<Tlp>,
    probe: Option<Probe>,
    /// Proportional rate reduction (`tcp::prr`) of the SACK recovery in progress,
    /// with `prr`.
    prr: Option<Prr>,
    /// Spurious-retransmission detection and undo (`tcp::undo`), with `cfg.undo` or
    /// `cfg.frto`.
    undo: Undo,
    /// Delivery-rate estimation (`tcp::rate`), for a controller that wants rate
    /// samples. Boxed: a connection without it keeps 8 bytes, not 40. (RACK and the
    /// loss probe stay inline: boxed, the ACK path grew past what the engine inlines,
    /// +1.5 % instructions per packet.)
    rate: Option<Box<RateSampler>>,
    /// The clock of the timers (`TcpConfig::clock`), decided when the sender is built.
    clock: Clock,
    /// No sender extension, rate sampling, RACK, loss probe, PRR, SACK RTT sample or
    /// spurious-retransmission detection: an ACK of new data without SACK blocks then
    /// needs none of their steps (`handle_segment`'s steady-state path), and
    /// `poll_timeout` has only the retransmission and persist timers to ask. Decided
    /// when the sender is built (none of them changes later).
    plain: bool,
    /// `plain`, established, in the open state, with no window probe or forced resend
    /// due: a poll then goes straight to new data, and an ACK of new data without
    /// SACK blocks or a mobility notice takes `handle_segment`'s steady-state path.
    /// One test on every packet instead of five; kept by [`Self::refresh_steady`]
    /// wherever one of them changes.
    steady: bool,
    stats: SenderStats,
    /// Discrete happenings for the caller (`poll_event`, `tcp::event`).
    events: Events<SenderEvent>,
}

impl TcpSender {
    /// A sender with the controller `cfg.cc` names.
    pub fn new(cfg: TcpConfig) -> Self {
        let cc = cfg.cc.controller(cfg.window_params(), cfg.mss);
        Self::with_controller(cfg, cc)
    }

    /// A sender with a controller of the caller's.
    pub fn with_cc(cfg: TcpConfig, cc: Box<dyn CongestionController>) -> Self {
        Self::with_controller(cfg, Controller::Boxed(cc))
    }

    fn with_controller(cfg: TcpConfig, cc: Controller) -> Self {
        let rtt = RttEstimator::new(
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.clock_granularity,
            cfg.max_backoff_exponent,
        )
        .with_formula(cfg.rto_formula);
        let handshake = cfg.handshake;
        let clock = cfg.clock();
        let first_offer = cfg.flow_control.initial_offer(cfg.rcv_buf);
        let rate = cc
            .wants_rate_samples()
            .then(|| Box::new(RateSampler::new()));
        let mut ext = ext::build(&cfg);
        if cc.needs_pacing() {
            // Linux internal pacing (`tcp::ext::pacing`).
            ext.push(SenderExt::Pacing(Pacer::default()));
        }
        let plain = ext.is_empty()
            && rate.is_none()
            && cfg.loss_detection != LossDetection::Rack
            && !cfg.tlp
            && !cfg.prr
            && !cfg.sack_rtt
            && !(cfg.undo || cfg.frto);
        let mut sb = Scoreboard::new();
        if rate.is_some() {
            sb.track_rate();
        }
        // Read by RACK (`loss_steps_after_ack`) and `sack_rtt_sample` only.
        if cfg.loss_detection == LossDetection::Rack || cfg.sack_rtt {
            sb.track_delivery();
        }
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
            sb,
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
            cwv: CwndValidation::default(),
            last_data_sent: None,
            slot_end: None,
            slot_sent: false,
            recovery_hidden: false,
            last_new_data_at: None,
            zw_stall_from: None,
            ext,
            plain,
            // Established without a handshake, open, nothing due (`steady_now`).
            steady: plain && !handshake,
            rack: (cfg.loss_detection == LossDetection::Rack).then(Rack::new),
            tlp: cfg.tlp.then(|| Tlp::new(clock)),
            probe: None,
            prr: None,
            undo: Undo::new(cfg.undo),
            rate,
            clock,
            stats: SenderStats::default(),
            events: Events::default(),
            cfg,
        }
    }

    // ----- application --------------------------------------------------------------

    /// The application hands `bytes` more to send.
    pub fn write(&mut self, bytes: u64) {
        if let Some(rate) = &mut self.rate {
            // Linux `tcp_sendmsg` -> `tcp_rate_check_app_limited`: less than a segment
            // unsent, room in cwnd, every lost segment resent.
            let limited = self.app_end.saturating_sub(self.snd_nxt) < self.cfg.mss as u64
                && self.sb.pipe() < self.cc.window()
                && self.sb.lost_count() == 0;
            rate.check_app_limited(limited, self.sb.pipe());
        }
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

    #[inline]
    fn arm_rto(&mut self, now: Instant) {
        if self.clock == Clock::Jiffies {
            self.arm_rto_on_wheel(now);
        } else {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// `icsk_retransmit_timer` on the kernel's timer wheel (`tcp::jiffies`): up to one
    /// granularity of its level late. Out of line: the other profiles' ACKs only test
    /// the formula.
    #[inline(never)]
    fn arm_rto_on_wheel(&mut self, now: Instant) {
        let rto = self.rtt.rto();
        self.rto_at = Some(jiffies::wheel_expiry(now, jiffies::to_jiffies(rto)));
    }

    /// The flow-control window: the advertised window, plus what the extensions add
    /// (AFC's `AR × SRTT`), capped by `max_send_window`.
    pub fn flow_window(&self) -> u64 {
        if self.ext.is_empty() {
            return self.advertised_window();
        }
        let srtt = self.rtt.srtt();
        let extra = self
            .ext
            .iter()
            .fold(0u64, |a, e| a.saturating_add(e.extra_window(srtt)));
        self.snd_wnd
            .saturating_add(extra)
            .min(self.cfg.max_send_window)
    }

    /// The advertised window capped by `max_send_window`: the flow window without
    /// extensions.
    #[inline(always)]
    fn advertised_window(&self) -> u64 {
        self.snd_wnd.min(self.cfg.max_send_window)
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

    // ----- sender extensions (`tcp::ext`) -------------------------------------------

    /// The extensions and the context they see at a hook.
    fn hooks(&mut self, now: Instant) -> (&mut [SenderExt], SenderCtx<'_>) {
        let cwnd = self.cwnd();
        let cx = SenderCtx {
            now,
            mss: self.cfg.mss,
            established: self.state == State::Established,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            outstanding: !self.sb.is_empty(),
            ca: self.ca,
            cwnd,
            rtt: &self.rtt,
            cc: &mut self.cc,
            stats: &mut self.stats,
            events: &mut self.events,
        };
        (&mut self.ext, cx)
    }

    /// Call `f` on every extension with the context of a hook. Without extensions
    /// (every run of an RFC-only sender) this is one length test: the context, whose
    /// `cwnd` asks congestion control, is not built (issue 19: every mobile-scheme
    /// hook behind one flag test).
    #[inline(always)]
    fn each_ext(&mut self, now: Instant, mut f: impl FnMut(&mut SenderExt, &mut SenderCtx<'_>)) {
        if self.ext.is_empty() {
            return;
        }
        let (ext, mut cx) = self.hooks(now);
        for e in ext {
            f(e, &mut cx);
        }
    }

    /// `sendable()` before an input, when an extension watches it (0 otherwise).
    #[inline(always)]
    fn room_before_input(&self) -> u64 {
        if !self.ext.is_empty() && self.ext.iter().any(|e| e.watches_room()) {
            self.sendable()
        } else {
            0
        }
    }

    /// The `after_input` hook, with the room before the input and now. Without
    /// extensions, one length test.
    #[inline(always)]
    fn after_input(&mut self, now: Instant, room_before: u64) {
        if self.ext.is_empty() || !self.ext.iter().any(|e| e.watches_room()) {
            return;
        }
        let room = self.sendable();
        self.each_ext(now, |e, cx| e.after_input(cx, room_before, room));
    }

    /// The `on_loss` (fast retransmit) or `on_rto` hook: every extension hears of the
    /// signal; one that hides it keeps it from congestion control.
    fn congestion_signal(&mut self, now: Instant, kind: CongestionKind) -> Response {
        let (ext, mut cx) = self.hooks(now);
        let mut r = Response::React;
        for e in ext {
            r = r.and(match kind {
                CongestionKind::Timeout => e.on_rto(&mut cx),
                _ => e.on_loss(&mut cx),
            });
        }
        r
    }

    /// The extensions' own loss detection (AFC's receive-buffer losses), after the
    /// RFC's: what one presumes lost is marked and repaired at once, in a recovery of
    /// its own when none is in progress.
    fn extension_losses(&mut self, now: Instant) {
        for i in 0..self.ext.len() {
            let (ext, cx) = self.hooks(now);
            let Some(cutoff) = ext[i].loss_cutoff(&cx) else {
                continue;
            };
            if self.sb.mark_lost_sent_before(cutoff) == 0 {
                continue;
            }
            let (ext, mut cx) = self.hooks(now);
            ext[i].on_losses_marked(&mut cx);
            if self.ca == CaState::Open {
                // A hidden recovery (AFC): the window is not reduced, so RFC 6582's
                // guard against a second reduction does not apply.
                self.enter_recovery(now);
            }
            self.set_forced_rtx(true);
        }
    }

    fn set_ca(&mut self, to: CaState) {
        if self.ca != to {
            self.cc.on_state_change(self.ca, to);
            self.ca = to;
            self.refresh_steady();
        }
    }

    fn set_forced_rtx(&mut self, due: bool) {
        self.forced_rtx = due;
        self.refresh_steady();
    }

    fn set_probe_due(&mut self, due: bool) {
        self.probe_due = due;
        self.refresh_steady();
    }

    /// What `steady` summarizes, from the fields themselves.
    fn steady_now(&self) -> bool {
        self.plain
            && self.state == State::Established
            && self.ca == CaState::Open
            && !self.probe_due
            && !self.forced_rtx
    }

    /// Called after every change of the state, `ca`, `probe_due` or `forced_rtx`.
    fn refresh_steady(&mut self) {
        self.steady = self.steady_now();
    }

    /// `steady` is what it summarizes (the test pair checks it after every input, in
    /// release builds too, where the `debug_assert`s are gone).
    #[cfg(test)]
    pub(crate) fn steady_is_current(&self) -> bool {
        self.steady == self.steady_now()
    }

    /// The idle-RTT accounting (`SenderStats::idle_rtts`): RTT-long slots laid end to
    /// end, each marked when data left in it. Inlined, with the common case first: a
    /// segment sent inside the current slot only marks it.
    #[inline(always)]
    fn account_slots(&mut self, now: Instant, sent: bool) {
        if self.rtt.srtt().is_some() && self.slot_end.is_some_and(|end| now < end) {
            self.slot_sent |= sent;
            return;
        }
        self.account_slots_from(now, sent);
    }

    #[inline(never)]
    fn account_slots_from(&mut self, now: Instant, sent: bool) {
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
        let mut seg = Segment::default();
        self.write_data_segment(now, seq, len, &mut seg);
        seg
    }

    /// [`Self::data_segment`] written into `out` (the simulator's packet slot), field
    /// by field: the SACK blocks' slots keep what they held, which nothing reads once
    /// their count is zero (`SackBlocks`), where a whole `Segment` assigned writes
    /// their 64 bytes of zeros too (as the receiver's `write_ack`). The pattern
    /// names every field, so one added to `Segment` must be written here.
    #[inline(always)]
    fn write_data_segment(&self, now: Instant, seq: u64, len: u64, out: &mut Segment) {
        let Segment {
            seq: o_seq,
            ack,
            wnd,
            len: o_len,
            ts,
            flags,
            retransmission,
            window_probe,
            sack_permitted,
            mss,
            wscale,
            exp,
            sack,
        } = out;
        *o_seq = seq;
        *ack = 0;
        *o_len = len as u32;
        *flags = Flags::ACK;
        *wnd = self.cfg.rcv_buf;
        *ts = self.ts_ok.then(|| Timestamps {
            tsval: self.ts_now(now),
            tsecr: self.ts_recent,
        });
        *retransmission = false;
        *window_probe = false;
        *sack_permitted = false;
        *mss = None;
        *wscale = None;
        *exp = ExpOptions::default();
        sack.clear();
    }

    /// The bookkeeping of every data segment sent. Inlined (in `send_new_data` and
    /// `retransmit`): as a call it cost 23 instructions more per packet (callgrind
    /// slope 2,434.8 -> 2,411.8). `PLAIN`: the sender is `plain` (no extension, no
    /// PRR: their steps are left out). Returns cwnd after congestion control heard of
    /// the segment if that may have moved it (`Controller::on_sent_window`; `None`:
    /// cwnd is unchanged).
    #[inline(always)]
    fn on_data_sent<const PLAIN: bool>(&mut self, now: Instant, len: u64) -> Option<u64> {
        self.stats.segments_sent += 1;
        self.stats.data_segments_sent += 1;
        self.stats.bytes_sent += len;
        self.last_data_sent = Some(now);
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
        self.account_slots(now, true);
        if !PLAIN {
            self.each_ext(now, |e, cx| e.on_sent(cx, len));
            if let Some(p) = self.prr.as_mut() {
                p.on_sent(len);
            }
        }
        if self.cfg.cwnd_validation {
            self.cwv.on_sent(self.sb.pipe());
        }
        self.cc.on_sent_window(now, len, self.sb.pipe())
    }

    /// A data segment leaves, for delivery-rate estimation: the controller hears of a
    /// transmission starting with nothing in flight before it (`pipe_was_empty`;
    /// Linux `tcp_event_data_sent`, `CA_EVENT_TX_START`), and the segment's send-time
    /// state (`tcp_rate_skb_sent`; `nothing_outstanding`: no other segment was out).
    /// Only with rate sampling.
    fn rate_on_send(
        &mut self,
        now: Instant,
        pipe_was_empty: bool,
        nothing_outstanding: bool,
    ) -> TxState {
        let rate = self.rate.as_mut().expect("rate sampling");
        if pipe_was_empty {
            self.cc.on_transmit_start(now, rate.is_app_limited());
        }
        rate.on_sent(now, nothing_outstanding)
    }

    /// [`Self::rate_on_send`] for the new segment of `len` bytes just pushed.
    #[cold]
    #[inline(never)]
    fn rate_on_new_data(&mut self, now: Instant, len: u64) {
        let last = self.sb.len() - 1;
        let tx = self.rate_on_send(now, self.sb.pipe() == len, last == 0);
        self.sb.set_tx(last, tx);
    }

    /// Before the scoreboard takes `seg`: does it cumulatively acknowledge exactly the
    /// oldest segment, shorter than an MSS, with no SACK information in the ACK or held
    /// before it, and no ECE? Linux `tcp_clean_rtx_queue` marks such an ACK
    /// `FLAG_ACK_MAYBE_DELAYED` (`pkts_acked == 1`, `fully_acked`, `!prior_sacked`,
    /// `snd_una - prior_snd_una < mss_cache`, no `FLAG_CA_ALERT`): the receiver may
    /// have held it for its delayed-ACK timer, so BBR takes no expired minimum RTT
    /// from it (`bbr_update_min_rtt`).
    pub(crate) fn is_runt_ack(&self, seg: &Segment) -> bool {
        seg.ack > self.snd_una
            && seg.ack - self.snd_una < u64::from(self.cfg.mss)
            && self.sb.get(0).is_some_and(|r| r.end == seg.ack)
            && self.sb.sacked_count() == 0
            && seg.sack.is_empty()
            && !seg.flags.contains(Flags::ECE)
    }

    /// After an ACK that is not old, for a controller that wants rate samples: the
    /// sample (`tcp_rate_gen`) and the controller's `cong_control`.
    #[cold]
    #[inline(never)]
    fn rate_sample(&mut self, now: Instant, prior_in_flight: u64, runt_ack: bool) {
        let Some(rate) = &mut self.rate else {
            return;
        };
        let (delivered, pick) = self.sb.take_delivered();
        let rs = rate.sample(&AckState {
            now,
            delivered,
            pick,
            lost_total: self.sb.lost_total(),
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            prior_in_flight,
            in_flight: self.sb.pipe(),
            ca_state: self.ca,
            next_departure: self
                .ext
                .iter()
                .find_map(|e| e.pacer())
                .map_or(now, |p| p.next_departure()),
            mss: self.cfg.mss,
            runt_ack,
        });
        if self.cc.on_rate_sample(&rs) {
            rate.mark_app_limited(self.sb.pipe());
        }
    }

    /// Was the sender limited by cwnd lately (RFC 7661 §4, `tcp::cwv`)?
    fn cwnd_limited(&self) -> bool {
        self.cwv
            .cwnd_limited(self.cc.window(), self.cc.in_slow_start())
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
        let head = r.start == self.snd_una;
        if self
            .ext
            .iter()
            .any(|e| e.restarts_timer_on_retransmit(head))
        {
            self.arm_rto(now);
        }
        if self.rate.is_some() {
            let tx = self.rate_on_send(now, self.sb.pipe() == 0, self.sb.is_empty());
            self.sb.set_tx(i, tx);
        }
        self.sb.retransmitted(i, now);
        let tsval = self.ts_ok.then(|| self.ts_now(now));
        self.undo.on_retransmit(tsval);
        self.stats.retransmits += 1;
        self.rtx_in_episode += 1;
        let mut seg = self.data_segment(now, r.start, r.len());
        seg.retransmission = true;
        self.on_data_sent::<false>(now, r.len());
        seg
    }

    // ----- output -------------------------------------------------------------------

    /// The next segment to send, if any: the SYN, a window probe, a retransmission
    /// forced by a recovery or a timeout, then what RFC 6675's NextSeg chooses
    /// ([`Self::next_seg`]): a lost segment, or new data ([`Self::send_new_data`]).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        let mut seg = Segment::default();
        self.poll_transmit_into(now, &mut seg).sent().then_some(seg)
    }

    /// [`Self::poll_transmit`] that writes the segment into `out` instead of returning
    /// it; `out` is untouched when there is nothing to send ([`Polled::Nothing`]).
    /// New data, nearly every segment, is built in `out`, so a caller that keeps the
    /// segment (the simulator's packet slab) does not move a ~128-byte `Option` out.
    /// After new data in the steady state ([`Self::nothing_more`]) the answer says
    /// whether another poll would send anything ([`Polled::Last`]).
    #[inline]
    pub fn poll_transmit_into(&mut self, now: Instant, out: &mut Segment) -> Polled {
        debug_assert_eq!(self.steady, self.steady_now());
        if !self.steady {
            if self.state == State::SynSent {
                return put(out, self.transmit_syn(now));
            }
            if self.probe_due {
                self.set_probe_due(false);
                self.stats.window_probes += 1;
                self.events.push(SenderEvent::WindowProbe);
                self.stats.segments_sent += 1;
                let mut seg = self.data_segment(now, self.snd_una, 0);
                seg.window_probe = true;
                *out = seg;
                return Polled::Sent;
            }
            if self.forced_rtx {
                self.set_forced_rtx(false);
                if let Some(i) = self.sb.first_lost() {
                    *out = self.retransmit(now, i);
                    return Polled::Sent;
                }
            }
            // A forced resend that found nothing to resend may have left the steady
            // state.
            if !self.steady {
                return self.poll_unsteady(now, out);
            }
        }
        {
            // The steady state (`steady`): no loss probe is ever due, no extension
            // holds the segment, and in the open state the window is congestion
            // control's (no PRR, no recovery window, no resend pending: NextSeg is new
            // data).
            let cwnd = self.cc.window();
            let rooms = self.rooms_steady(cwnd);
            let len = self.len_within(now, rooms);
            if len == 0 {
                return Polled::Nothing;
            }
            // `nothing_more`, whose conditions all hold here (sending new data changes
            // none of them), without testing them again. The segment took `len` bytes
            // of each room (the window's edge stays, pipe grew by `len`), so unless
            // the controller moved cwnd the rooms need not be asked again.
            let more = match self.send_new_segment::<true>(now, len, out) {
                Some(cwnd_after) if cwnd_after != cwnd => {
                    let rooms = self.rooms_steady(cwnd_after);
                    self.len_within(now, rooms)
                }
                _ => self.len_within_after_send(now, rooms.less(len)),
            };
            if more == 0 {
                Polled::Last
            } else {
                Polled::Sent
            }
        }
    }

    /// [`Self::poll_transmit_into`] outside the steady state, once the SYN, a window
    /// probe and a forced resend are ruled out: a loss probe, an extension holding
    /// the segment, then what NextSeg chooses.
    fn poll_unsteady(&mut self, now: Instant, out: &mut Segment) -> Polled {
        if let Some(p) = self.probe.take() {
            if let r @ Polled::Sent = put(out, self.send_probe(now, p)) {
                return r;
            }
        }
        let mss = self.cfg.mss;
        if self.ext.iter_mut().any(|e| e.holds_transmit(now, mss)) {
            return Polled::Nothing;
        }
        let (cwnd, pipe_mode) = self.unsteady_window();
        if self.ca == CaState::Loss && self.undo.new_data_first() {
            // F-RTO step 2b (Linux `REXMIT_NEW` in `tcp_xmit_recovery`): new data
            // instead of the resend; if none can go, the conventional recovery.
            if self.send_new_data(now, pipe_mode, cwnd, out) {
                return Polled::Sent;
            }
            if self.recover.is_some_and(|r| self.snd_nxt > r) {
                return Polled::Nothing;
            }
            self.undo.stop_frto();
        }
        match self.next_seg(pipe_mode, cwnd) {
            NextSeg::Retransmit(i) => {
                *out = self.retransmit(now, i);
                Polled::Sent
            }
            NextSeg::Hold => Polled::Nothing,
            NextSeg::NewData => {
                if !self.send_new_data(now, pipe_mode, cwnd, out) {
                    return Polled::Nothing;
                }
                self.schedule_probe(now, false);
                if self.nothing_more(now) {
                    Polled::Last
                } else {
                    Polled::Sent
                }
            }
        }
    }

    /// The window [`Self::poll_unsteady`] sends within, and whether it counts pipe
    /// (RFC 6675) rather than the flight.
    #[inline(always)]
    fn unsteady_window(&self) -> (u64, bool) {
        let mut cwnd = self.prr_cwnd().unwrap_or_else(|| self.cc.window());
        if self.ca == CaState::Loss
            && self.dupacks > 0
            && self.cfg.limited_transmit
            && self.cfg.limited_transmit_after_timeout
            && !self.sack_ok
            && self.dupacks < self.cfg.dupack_threshold
        {
            // ns-2 `TcpAgent::send_one` after a timeout (`RenoTcpAgent::timeout` zeroes
            // `dupacks_`): the next packet of the resend may go while it is within
            // `highest_ack_ + cwnd_ + dupacks_`.
            cwnd += self.dupacks as u64 * self.mss();
        }
        let pipe_mode = self.ca == CaState::Loss
            || (self.ca == CaState::Recovery && self.recovery() == Recovery::Sack);
        (cwnd, pipe_mode)
    }

    /// After new data left: would a poll now send nothing? Answered when that poll
    /// would go to [`Self::new_data_len`] or NextSeg with nothing else to try first
    /// (established, no extension, no probe or forced resend pending): in the open
    /// state with a window that is congestion control's; outside it for a `plain`
    /// sender ([`Self::poll_unsteady`] without PRR's window or F-RTO's new data
    /// first), as NextSeg chooses (a resend: more to send; nothing allowed: none; new
    /// data: its length). The same calls are made here, with their bookkeeping (RFC
    /// 7661's cwnd-limited mark, the persist timer), on the same state. Otherwise
    /// false, and the caller polls.
    #[inline]
    fn nothing_more(&mut self, now: Instant) -> bool {
        if self.state != State::Established
            || self.probe_due
            || self.forced_rtx
            || self.probe.is_some()
            || !self.ext.is_empty()
        {
            return false;
        }
        if self.ca == CaState::Open {
            let cwnd = self.cc.window();
            return self.new_data_len(now, false, cwnd) == 0;
        }
        // A `plain` sender has no PRR, so no PRR window, and no F-RTO.
        if !self.plain {
            return false;
        }
        let (cwnd, pipe_mode) = self.unsteady_window();
        match self.next_seg(pipe_mode, cwnd) {
            NextSeg::Retransmit(_) => false,
            NextSeg::Hold => true,
            NextSeg::NewData => self.new_data_len(now, pipe_mode, cwnd) == 0,
        }
    }

    /// The SYN (RFC 9293 §3.5), with the options this end offers.
    fn transmit_syn(&mut self, now: Instant) -> Option<Segment> {
        if !self.syn_due {
            return None;
        }
        self.syn_due = false;
        self.syn_sent_at = Some(now);
        self.stats.segments_sent += 1;
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
        Some(Segment {
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
        })
    }

    /// RFC 6675 §4 NextSeg, in SACK recovery and after a timeout (`pipe_mode`): rule
    /// (1), a lost segment first (go-back-N after a timeout), as the window allows;
    /// rule (3), an un-SACKed segment below HighSACK when no new data may go; else new
    /// data (rule (2), [`Self::send_new_data`]). Inlined in both its callers (as a
    /// call from two it cost more than the poll `nothing_more` saves).
    #[inline(always)]
    fn next_seg(&self, pipe_mode: bool, cwnd: u64) -> NextSeg {
        if !pipe_mode {
            return NextSeg::NewData;
        }
        if self.sb.lost_count() > 0 {
            let Some(i) = self.sb.first_lost() else {
                return NextSeg::Hold;
            };
            let Some(r) = self.sb.get(i).copied() else {
                return NextSeg::Hold;
            };
            // Linux `tcp_retransmit_skb`: a segment beyond the receiver's window is not
            // resent, except the first unacknowledged one (a zero-window probe then).
            if r.start != self.snd_una && r.start >= self.snd_una + self.flow_window() {
                return NextSeg::Hold;
            }
            let len = r.len();
            if self.sb.pipe() + len <= cwnd.max(self.mss()) || self.sb.pipe() == 0 {
                return NextSeg::Retransmit(i);
            }
            return NextSeg::Hold;
        }
        // Rule (3): in SACK recovery, when no segment is deemed lost and no new data
        // may be sent (none written, or the receiver's window is full), resend an
        // un-SACKed segment below HighSACK that was not resent yet. (Its original still
        // counts in `pipe`; the copy is not added a second time.)
        if self.ca == CaState::Recovery {
            let wnd_edge = self.snd_una + self.flow_window();
            let no_new_data = self.app_end <= self.snd_nxt || wnd_edge <= self.snd_nxt;
            if no_new_data && self.sb.pipe() + self.mss() <= cwnd {
                if let Some(i) = self.sb.first_unsacked_below_high_sack() {
                    return NextSeg::Retransmit(i);
                }
            }
        }
        NextSeg::NewData
    }

    /// Room cwnd leaves for new data: in Reno/NewReno fast recovery the inflated
    /// window less FlightSize (RFC 5681 §3.2, RFC 6582 §3.2); otherwise cwnd less
    /// pipe, with RFC 3042 limited transmit on the first duplicate ACKs.
    fn cwnd_room(&self, pipe_mode: bool, cwnd: u64) -> u64 {
        if self.ca == CaState::Recovery && !pipe_mode {
            return self.recovery_cwnd.saturating_sub(self.flight_size());
        }
        self.cwnd_room_open(cwnd)
    }

    /// [`Self::cwnd_room`] but in Reno/NewReno fast recovery.
    #[inline(always)]
    fn cwnd_room_open(&self, cwnd: u64) -> u64 {
        let mut allowed = cwnd;
        let mut in_use = self.sb.pipe();
        if self.dupacks > 0 && self.ca == CaState::Open && self.dupacks < self.cfg.dupack_threshold
        {
            if !self.cfg.limited_transmit {
                // SACKed segments have left `pipe`; without limited transmit they must
                // not release new data.
                in_use = self.flight_size();
            } else if !self.sack_ok {
                // RFC 3042: each of the first two dupACKs lets one new segment out.
                allowed += self.dupacks as u64 * self.mss();
            }
            // With SACK, RFC 6675 §5 step 3: cwnd - pipe, where pipe already excludes
            // the segment each dupACK SACKed.
        }
        allowed.saturating_sub(in_use)
    }

    /// The length of the new data that may go now (0: none), in segments of at most
    /// one MSS, and what deciding records: cwnd holding data back (RFC 7661), a zero
    /// window that starts the persist timer. Deciding again on the same state records
    /// the same.
    #[inline(always)]
    fn new_data_len(&mut self, now: Instant, pipe_mode: bool, cwnd: u64) -> u64 {
        let rooms = self.rooms(pipe_mode, cwnd);
        self.len_within(now, rooms)
    }

    /// The room the application, the receiver's window and cwnd leave for new data.
    #[inline(always)]
    fn rooms(&self, pipe_mode: bool, cwnd: u64) -> Rooms {
        let wnd_limit = self.snd_una + self.flow_window();
        Rooms {
            app: self.app_end.saturating_sub(self.snd_nxt),
            rwnd: wnd_limit.saturating_sub(self.snd_nxt),
            cwnd: self.cwnd_room(pipe_mode, cwnd),
        }
    }

    /// [`Self::rooms`] in the steady state (`steady`): no extension widens the flow
    /// window, and in the open state cwnd's room is [`Self::cwnd_room_open`].
    #[inline(always)]
    fn rooms_steady(&self, cwnd: u64) -> Rooms {
        debug_assert!(self.ext.is_empty() && self.ca == CaState::Open);
        let wnd_limit = self.snd_una + self.advertised_window();
        Rooms {
            app: self.app_end.saturating_sub(self.snd_nxt),
            rwnd: wnd_limit.saturating_sub(self.snd_nxt),
            cwnd: self.cwnd_room_open(cwnd),
        }
    }

    /// [`Self::new_data_len`] given the rooms. Nearly every segment of a bulk transfer
    /// finds each room at least a segment: then it is a full one, and nothing is
    /// recorded (cwnd holds nothing back, the window is open), without the general
    /// steps ([`Self::len_within_general`]).
    #[inline(always)]
    fn len_within(&mut self, now: Instant, rooms: Rooms) -> u64 {
        let mss = self.mss();
        if rooms.app >= mss && rooms.rwnd >= mss && rooms.cwnd >= mss {
            return mss;
        }
        self.len_within_general(now, rooms)
    }

    /// [`Self::len_within`], every case.
    #[inline(always)]
    fn len_within_general(&mut self, now: Instant, rooms: Rooms) -> u64 {
        let Rooms {
            app: app_room,
            rwnd: rwnd_room,
            cwnd: cwnd_room,
        } = rooms;
        if app_room == 0 {
            return 0;
        }
        if rwnd_room == 0 {
            // RFC 9293 §3.8.6.1: a zero window with nothing in flight needs the
            // persist timer, or the connection may deadlock on a lost window update.
            if self.sb.is_empty() && self.persist_at.is_none() {
                self.persist_at = Some(now + self.persist_interval());
            }
            return 0;
        }
        let mss = self.mss();
        // The window-validation state is read only with `cwnd_validation`.
        if self.cfg.cwnd_validation && cwnd_room < mss.min(rwnd_room).min(app_room) {
            self.cwv.on_cwnd_blocked();
        }
        let len = mss.min(rwnd_room).min(cwnd_room).min(app_room);
        if len == 0 {
            return 0;
        }
        if len < mss && len < app_room {
            // Never send a runt because of cwnd. Because of the receiver's window, fill
            // it as Linux does, unless RFC 1122 §4.2.3.4 sender SWS avoidance is on:
            // then only with nothing in flight or at least half the largest window the
            // peer has offered (the override timer is applied at once).
            if cwnd_room < mss.min(app_room) {
                return 0;
            }
            if self.cfg.sender_sws && !self.sb.is_empty() && len < self.max_snd_wnd / 2 {
                return 0;
            }
        }
        len
    }

    /// [`Self::len_within`] with a segment outstanding (just sent), so that a zero
    /// window starts no persist timer: when cwnd leaves less than a segment the
    /// application could fill, nothing may go (a runt is never sent because of cwnd),
    /// whatever the receiver's window, which need not be asked unless RFC 7661's
    /// cwnd-limited mark is kept (the mark depends on it).
    #[inline(always)]
    fn len_within_after_send(&mut self, now: Instant, rooms: Rooms) -> u64 {
        debug_assert!(!self.sb.is_empty());
        if !self.cfg.cwnd_validation && rooms.cwnd < self.mss().min(rooms.app) {
            return 0;
        }
        self.len_within(now, rooms)
    }

    /// New data, as much as the receiver's window, cwnd and the application allow
    /// ([`Self::new_data_len`]), written into `out` (true). The steady-state path of
    /// [`Self::poll_transmit_into`] takes the same two steps inline.
    fn send_new_data(
        &mut self,
        now: Instant,
        pipe_mode: bool,
        cwnd: u64,
        out: &mut Segment,
    ) -> bool {
        let len = self.new_data_len(now, pipe_mode, cwnd);
        if len == 0 {
            return false;
        }
        self.send_new_segment::<false>(now, len, out);
        true
    }

    /// The new segment of `len` bytes (> 0, as [`Self::new_data_len`] allowed),
    /// written into `out`, and its bookkeeping; `PLAIN` as for
    /// [`Self::on_data_sent`] (nor rate sampling). Returns cwnd after it, if it may
    /// have moved.
    #[inline(always)]
    fn send_new_segment<const PLAIN: bool>(
        &mut self,
        now: Instant,
        len: u64,
        out: &mut Segment,
    ) -> Option<u64> {
        let app_room = self.app_end.saturating_sub(self.snd_nxt);
        if self.sb.is_empty() {
            if let Some(last) = self.last_data_sent {
                self.cc.on_event(now, CaEvent::TxStart { idle: now - last });
            }
            // Not for a controller with its own `cong_control` (Linux
            // `tcp_slow_start_after_idle_check`).
            if self.cfg.idle_restart && self.rate.is_none() {
                self.restart_after_idle(now);
            }
        }

        if let Some(from) = self.zw_stall_from.take() {
            let d = now - from;
            let srtt = self.rtt.srtt().unwrap_or(d).as_nanos().max(1);
            self.stats.zero_window_stalls += 1;
            self.stats.zero_window_stall_time += d;
            let rtts = d.as_nanos().div_ceil(srtt);
            self.stats.zero_window_stall_rtts += rtts;
            self.events
                .push(SenderEvent::ZeroWindowStallEnded { length: d, rtts });
        }
        self.last_new_data_at = Some(now);
        let seq = self.snd_nxt;
        self.snd_nxt += len;
        if self.dupacks > 0 && self.cfg.limited_transmit && self.ca == CaState::Open {
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
        if !PLAIN && self.rate.is_some() {
            self.rate_on_new_data(now, len);
        }
        self.persist_at = None;
        self.write_data_segment(now, seq, len, out);
        self.on_data_sent::<PLAIN>(now, len)
    }

    /// RFC 5681 §4.1 (or Linux's `tcp_cwnd_restart`, `tcp::idle`): restart from the
    /// initial window after an idle period longer than the RTO.
    fn restart_after_idle(&mut self, now: Instant) {
        let Some(last) = self.last_data_sent else {
            return;
        };
        let idle = now - last;
        let rto = self.rtt.rto();
        if idle > rto {
            let (iw, cwnd, ssthresh) = (
                self.cfg.initial_window_bytes(),
                self.cc.window(),
                self.cc.ssthresh(),
            );
            let rule = self.cfg.idle_restart_rule;
            let (w, s) = super::idle::restart_after_idle(rule, cwnd, ssthresh, iw, idle, rto);
            if w < cwnd {
                self.cc.set_window(w);
            }
            if s != ssthresh {
                self.cc.set_ssthresh(s);
            }
            self.cc.on_event(now, CaEvent::TxStartAfterIdle { idle });
        }
    }

    fn persist_interval(&self) -> Duration {
        let base = self.rtt.rto().max(self.cfg.persist_min);
        base.saturating_mul(1u64 << self.persist_backoff.min(16))
            .min(self.cfg.persist_max)
    }

    /// For a wake-up at `now` that may be early: the timer due first, if it is after
    /// `now` and the sender is `plain`, when [`Self::handle_timeout`] at `now` would
    /// change nothing. (A `plain` sender has no extension, RACK or loss-probe timer:
    /// `handle_timeout` only acts on a retransmission or persist timer that is due.)
    /// A wake-up is set for the deadline of the moment, and the retransmission timer's
    /// moves later with every ACK of new data (RFC 6298 §5.3): with many flows most
    /// wake-ups come early. `None`: the wake-up must run.
    #[inline]
    pub fn early_wake(&self, now: Instant) -> Option<Instant> {
        if !self.plain {
            return None;
        }
        self.poll_timeout().filter(|&t| t > now)
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        // Asked after every output: the extensions' timers only when there are any.
        if self.persist_at.is_none() && self.plain {
            // Nearly every call: data in flight, so no persist timer (RFC 9293
            // §3.8.6.1), and no other timer.
            return self.rto_at;
        }
        let mut t = Instant::earliest(self.rto_at, self.persist_at);
        if self.plain {
            // No RACK, loss probe or extension: no other timer.
            return t;
        }
        if let Some(r) = &self.rack {
            t = Instant::earliest(t, r.timer());
        }
        if let Some(p) = &self.tlp {
            t = Instant::earliest(t, p.timer());
        }
        if self.ext.is_empty() {
            return t;
        }
        Instant::earliest(t, self.ext.iter().filter_map(|e| e.poll_timeout()).min())
    }

    // ----- input --------------------------------------------------------------------

    /// Timers that are due at `now` fire.
    pub fn handle_timeout(&mut self, now: Instant) {
        for e in &mut self.ext {
            e.on_timer(now);
        }
        let room_before = self.room_before_input();
        self.loss_timers(now);
        if self.rto_at.is_some_and(|t| now >= t) {
            self.rto_at = None;
            self.on_rto(now);
            self.after_input(now, room_before);
        }
        if self.persist_at.is_some_and(|t| now >= t) {
            if self.sb.is_empty() && self.snd_wnd == 0 {
                self.set_probe_due(true);
                self.persist_backoff += 1;
                self.persist_at = Some(now + self.persist_interval());
            } else {
                self.persist_at = None;
            }
        }
    }

    fn on_rto(&mut self, now: Instant) {
        self.stats.timeouts += 1;
        self.events.push(SenderEvent::Timeout);
        let response = self.congestion_signal(now, CongestionKind::Timeout);
        // RFC 6298 §5.5, unless an extension hides the timeout (AFC).
        if response == Response::React {
            self.rtt.backoff();
        }
        self.expire(now, response);
    }

    /// What an expiry of the retransmission timer does, besides counting and backing
    /// off: RFC 5681 §3.1 / RFC 6298 §5.4–5.6. `response`: the extensions' answer to
    /// the timeout.
    fn expire(&mut self, now: Instant, response: Response) {
        if self.state == State::SynSent {
            // RFC 6298 §5 applied to the SYN; RFC 5681 §3.1: the window after a lost
            // SYN is one segment.
            self.syn_due = true;
            self.syn_retransmitted = true;
            self.stats.syn_retransmits += 1;
            self.events.push(SenderEvent::SynRetransmit);
            return;
        }
        if self.sb.is_empty() {
            return;
        }
        let repeated = self.ca == CaState::Loss;
        self.spurious_on_timeout();
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
        self.loss_steps_on_rto();
        if response == Response::Hide {
            // Retransmit without collapsing the window.
            self.stats.hidden_congestion_events += 1;
            self.events
                .push(SenderEvent::CongestionHidden(CongestionKind::Timeout));
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
        self.set_forced_rtx(true);
        self.arm_rto(now);
    }

    fn enter_recovery(&mut self, now: Instant) {
        self.stats.fast_retransmits += 1;
        self.events.push(SenderEvent::RecoveryEntered);
        self.rtt_timed = None;
        let response = self.congestion_signal(now, CongestionKind::FastRetransmit);
        // RFC 5681 §3.2 step 2 (and RFC 6675 §5 step 4.2): data sent by limited
        // transmit is not part of FlightSize for ssthresh.
        let flight = self.flight_size().saturating_sub(self.limited_tx_bytes);
        self.limited_tx_bytes = 0;
        let prior_cwnd = self.cc.window();
        self.set_ca(CaState::Recovery);
        // An extension may keep the loss from congestion control (AFC, after a zero
        // window); the recovery still retransmits.
        self.recovery_hidden = response == Response::Hide;
        if self.recovery_hidden {
            self.stats.hidden_congestion_events += 1;
            self.events.push(SenderEvent::CongestionHidden(
                CongestionKind::FastRetransmit,
            ));
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
        if self.spurious_detection() {
            // Linux `tcp_init_undo` (via `tcp_enter_recovery`); nothing to undo when
            // the window was not reduced.
            if self.recovery_hidden {
                self.undo.done();
            } else {
                self.undo.start(self.snd_una);
            }
        }
        self.rtx_in_episode = 0;
        self.partial_acked = false;
        self.loss_steps_on_recovery(prior_cwnd);
        if !self.rack_on() {
            self.sb.mark_lost(0);
            if self.sack_ok {
                self.sb
                    .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss());
            }
        }
        // RFC 5681 §3.2 step 4: cwnd = ssthresh + 3*SMSS (inflated by the dupACKs);
        // a hidden loss inflates the unreduced cwnd, and so does a controller with its
        // own `cong_control` (BBR keeps ssthresh "infinite"; Linux counts each dupACK
        // as a SACKed segment out of its cwnd, `tcp_add_reno_sack`).
        let base = if self.recovery_hidden || self.rate.is_some() {
            self.cc.window()
        } else {
            self.cc.ssthresh()
        };
        self.recovery_cwnd = base + self.dupacks as u64 * self.mss();
        self.set_forced_rtx(true);
        if self.cfg.rto_restart_on_fast_retransmit {
            // ns-2 `NewRenoTcpAgent::dupack_action` (and `TcpAgent::`,
            // `Sack1TcpAgent::`): `reset_rtx_timer(1, 0)` before the retransmission, so
            // the retransmitted segment gets a whole RTO to be acknowledged.
            self.arm_rto(now);
        }
    }

    // ----- spurious retransmissions (`tcp::undo`) --------------------------------------

    /// Spurious-retransmission detection is on (undo or F-RTO).
    fn spurious_detection(&self) -> bool {
        self.cfg.undo || self.cfg.frto
    }

    /// A timeout, before the state changes (`Undo::on_timeout`).
    fn spurious_on_timeout(&mut self) {
        if self.spurious_detection() {
            self.undo.on_timeout(self.ca, self.snd_una, self.cfg.frto);
        }
    }

    /// Before an ACK's SACK blocks mark the scoreboard: count and use its D-SACK
    /// block (`Undo::on_dsack`), and say whether it acknowledges never-retransmitted
    /// data below the recovery point (F-RTO's evidence, `undo::acks_original`).
    fn spurious_before_scoreboard(&mut self, seg: &Segment) -> bool {
        if !self.sack_ok || seg.sack.is_empty() {
            return self.undo.frto()
                && self.ca == CaState::Loss
                && undo::acks_original(&self.sb, seg, self.recover.unwrap_or(0), false);
        }
        if let Some(block) = dsack_block(seg) {
            self.stats.dsacks_received += 1;
            // RFC 8985 §6.2 step 4: a D-SACK may widen RACK's reordering window.
            if let Some(rack) = self.rack.as_mut() {
                rack.on_dsack();
            }
            if self.spurious_detection() {
                self.undo
                    .on_dsack(block, self.snd_una, &self.sb, self.mss());
            }
        }
        self.undo.frto()
            && self.ca == CaState::Loss
            && undo::acks_original(&self.sb, seg, self.recover.unwrap_or(0), true)
    }

    /// After an ACK was processed: the undo decisions of `Undo::after_ack`, carried
    /// out.
    fn spurious_after_ack(
        &mut self,
        seg: &Segment,
        prior_ca: CaState,
        prior_una: u64,
        orig_acked: bool,
        sacked_or_dupack: bool,
    ) {
        self.undo.on_ack();
        let view = AckView {
            prior_ca,
            ca: self.ca,
            advanced: seg.ack > prior_una,
            tsecr: seg.ts.filter(|_| self.ts_ok).map(|ts| ts.tsecr),
            orig_acked,
            sacked_or_dupack,
            sent_beyond_recovery_point: self.recover.is_some_and(|r| self.snd_nxt > r),
            recovered: prior_ca == CaState::Loss && self.ca == CaState::Open,
            can_send_new: self.app_end > self.snd_nxt
                && self.snd_una + self.flow_window() > self.snd_nxt,
            retrans_outstanding: undo::retransmission_outstanding(&self.sb),
        };
        match self.undo.after_ack(&view) {
            Verdict::Keep => {}
            Verdict::FrtoNewData => {
                self.recover = Some(self.snd_nxt);
                self.undo.send_new_data_first();
            }
            Verdict::Undo { timeout, detector } => {
                // Linux `tcp_undo_cwnd_reduction`: the controller's window back
                // (`undo_cwnd`, RFC 4015 §2), the loss marks cleared (the model clears
                // them on every undo, so that nothing waits for a resend in the open
                // state), and the connection open again.
                self.sb.unmark_lost();
                self.set_forced_rtx(false);
                self.cc.on_spurious_congestion();
                self.undo.done();
                self.stats.undos += 1;
                if timeout {
                    self.stats.rto_undos += 1;
                }
                self.events.push(SenderEvent::Undo {
                    detector,
                    after_timeout: timeout,
                });
                self.set_ca(CaState::Open);
                self.dupacks = 0;
            }
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
        self.prr = None;
        self.events.push(SenderEvent::RecoveryExited);
        if let Some(r) = self.rack.as_mut() {
            r.on_recovery_end();
        }
    }

    /// A segment from the receiver (an ACK, a window update or a SYN-ACK) arrived.
    ///
    /// The steps of RFC 9293 §3.10.7 that concern a sender, in its order: the SYN-ACK
    /// in SYN-SENT (§3.10.7.3); otherwise the ACK field (§3.10.7.4, "fifth"): an ACK of
    /// something never sent is dropped, TS.Recent is updated (RFC 7323 §4.3), the window
    /// is taken from an ACK that is not old, SACK blocks update the scoreboard (RFC
    /// 2018, RFC 6675), then a new ACK ([`Self::on_new_ack`]) or a duplicate ACK
    /// ([`Self::on_duplicate_ack`]) is processed, and finally what follows every ACK
    /// ([`Self::after_ack`]).
    ///
    /// A `plain` sender's ACK of new data without SACK blocks or a mobility notice,
    /// nearly every ACK of a bulk transfer, takes a shorter path to the same state:
    /// the window, then the new ACK, then the persist timer. The steps it leaves out
    /// do nothing on such an ACK (the extensions', RACK's, the loss probe's, PRR's,
    /// undo's and rate sampling's are off; without blocks the scoreboard's SACK marks
    /// do not change and there is no D-SACK).
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) {
        debug_assert_eq!(self.steady, self.steady_now());
        if self.steady
            && seg.flags.contains(Flags::ACK)
            && seg.ack > self.snd_una
            && seg.ack <= self.snd_nxt
            && seg.sack.is_empty()
            && !seg.exp.handoff_notice
        {
            // The plain path below in the open state, its tests in one (`steady`:
            // established, `plain`, open).
            self.take_ts_recent(seg);
            let prior_in_flight = self.sb.pipe();
            self.take_window(now, seg);
            self.on_new_ack_open(now, seg, prior_in_flight);
            self.end_persist();
            return;
        }
        if self.state == State::SynSent {
            self.on_syn_ack(now, seg);
            return;
        }
        if !seg.flags.contains(Flags::ACK) || seg.ack > self.snd_nxt {
            return; // no ACK, or it acknowledges something never sent
        }
        self.take_ts_recent(seg);
        if self.plain && seg.ack > self.snd_una && seg.sack.is_empty() && !seg.exp.handoff_notice {
            // Outside the steady state (in a recovery, or with a probe or a resend
            // due): the general step of a new ACK.
            let prior_in_flight = self.sb.pipe();
            self.update_window(now, seg);
            self.on_new_ack(now, seg, prior_in_flight, 0, None);
            self.end_persist();
            return;
        }
        let room_before = self.room_before_input();
        let prior_in_flight = self.sb.pipe();
        let old_wnd = self.snd_wnd;
        let before = self.loss_steps_before_ack();
        let (prior_ca, prior_una, prior_dupacks) = (self.ca, self.snd_una, self.dupacks);
        if seg.ack >= self.snd_una {
            self.update_window(now, seg);
        }
        let runt_ack = self.rate.is_some() && self.is_runt_ack(seg);
        let orig_acked = self.spurious_before_scoreboard(seg);
        let newly_sacked = self.update_scoreboard(seg);
        let sack_rtt = self.sack_rtt_sample(now);
        let mut newly_acked = 0;
        if seg.ack > self.snd_una {
            newly_acked = self.on_new_ack(now, seg, prior_in_flight, newly_sacked, sack_rtt);
        } else if seg.ack == self.snd_una {
            if let Some(r) = sack_rtt {
                self.take_rtt_sample(r);
            }
            if !self.sb.is_empty() && seg.len == 0 {
                self.on_duplicate_ack(now, seg, old_wnd, newly_sacked);
            }
        }
        if let Some(before) = before {
            self.loss_steps_after_ack(now, seg, &before, newly_acked, newly_sacked);
        }
        if self.spurious_detection() {
            let dupack = self.dupacks > prior_dupacks;
            let undos = self.stats.undos;
            self.spurious_after_ack(
                seg,
                prior_ca,
                prior_una,
                orig_acked,
                newly_sacked > 0 || dupack,
            );
            if self.stats.undos > undos && seg.ack > prior_una {
                // Linux `tcp_ack` arms the timers after `tcp_fastretrans_alert`
                // (`FLAG_SET_XMIT_TIMER` -> `tcp_set_xmit_timer`): an ACK of new data
                // that undid a reduction schedules the loss probe in the open state
                // it restored, which the state before it did not allow.
                self.schedule_probe(now, true);
            }
        }
        if self.rate.is_some() && seg.ack >= self.snd_una {
            self.rate_sample(now, prior_in_flight, runt_ack);
        }
        self.after_ack(now, seg, room_before);
    }

    /// RFC 9293 §3.10.7.3, SYN-SENT: a SYN-ACK establishes the connection with the
    /// options both ends offered; the SYN's round trip is the first RTT sample, unless
    /// the SYN was retransmitted (RFC 6298 §3, Karn).
    fn on_syn_ack(&mut self, now: Instant, seg: &Segment) {
        if !(seg.flags.contains(Flags::SYN) && seg.flags.contains(Flags::ACK)) {
            return;
        }
        self.state = State::Established;
        self.refresh_steady();
        self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        if let Some(ts) = seg.ts {
            self.ts_recent = ts.tsval;
        }
        if !self.syn_retransmitted {
            if let Some(t) = self.syn_sent_at {
                let r = now - t;
                self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
                self.stats.rtt.record(r);
            }
        } else {
            self.cc.set_window(self.mss());
            // RFC 6298 §5.7: the SYN timed out, so data starts with an RTO of at least
            // 3 s.
            self.rtt
                .reset(self.cfg.initial_rto.max(Duration::from_secs(3)));
        }
        self.rtt.reset_backoff();
        self.snd_wnd = seg.wnd;
        self.max_snd_wnd = seg.wnd;
        self.rto_at = None;
    }

    /// RFC 9293 §3.10.7.4: take the window from an ACK that is not old (`SND.UNA =<
    /// SEG.ACK`); a window under one segment with data to send starts a zero-window
    /// stall. The extensions read the window and the options (`on_window_update`).
    /// Inlined: as a call on every ACK it cost 18 instructions more per packet
    /// (callgrind slope 2,452.8 -> 2,434.8).
    #[inline(always)]
    fn update_window(&mut self, now: Instant, seg: &Segment) {
        self.take_window(now, seg);
        self.each_ext(now, |e, cx| e.on_window_update(cx, seg));
    }

    /// [`Self::update_window`] but the extensions' hook: all of it for a sender
    /// without extensions.
    #[inline(always)]
    fn take_window(&mut self, now: Instant, seg: &Segment) {
        self.snd_wnd = seg.wnd;
        self.max_snd_wnd = self.max_snd_wnd.max(seg.wnd);
        if seg.wnd < self.mss() && self.app_end > self.snd_nxt && self.zw_stall_from.is_none() {
            self.zw_stall_from = Some(self.last_new_data_at.unwrap_or(now));
        }
    }

    /// RFC 7323 §4.3: TS.Recent from an acceptable segment's TSval, with timestamps.
    #[inline(always)]
    fn take_ts_recent(&mut self, seg: &Segment) {
        if self.ts_ok {
            if let Some(ts) = seg.ts {
                self.ts_recent = ts.tsval;
            }
        }
    }

    /// RFC 2018 / RFC 6675 §5: SACK blocks above the cumulative ACK mark the
    /// scoreboard. Returns the bytes newly SACKed.
    fn update_scoreboard(&mut self, seg: &Segment) -> u64 {
        let mut newly_sacked = 0;
        if self.sack_ok {
            for (l, r) in seg.sack.iter() {
                if r > seg.ack {
                    newly_sacked += self.sb.sack(l.max(seg.ack), r);
                }
            }
        }
        newly_sacked
    }

    /// RFC 9293 §3.10.7.4, `SND.UNA < SEG.ACK =< SND.NXT`: new data is acknowledged.
    /// `SND.UNA` advances, an RTT sample is taken (RFC 6298 §3, RFC 7323 §4.1), the
    /// recovery in progress moves on ([`Self::recovery_on_new_ack`]), the controller
    /// grows the window (RFC 5681 §3.1, RFC 7661 §4) and the retransmission timer is
    /// restarted (RFC 6298 §5.2–5.3).
    /// `sack_rtt`: the sample from SACKed data, used when the ACK gives no other.
    /// Returns the bytes newly acknowledged.
    fn on_new_ack(
        &mut self,
        now: Instant,
        seg: &Segment,
        prior_in_flight: u64,
        newly_sacked: u64,
        sack_rtt: Option<Duration>,
    ) -> u64 {
        let ack = seg.ack;
        let from = self.rtt_from(seg);
        let acked = self.sb.ack_to(ack);
        let (last, newly_acked) = (acked.last, acked.newly);
        self.snd_una = ack;
        self.each_ext(now, |e, cx| e.on_new_ack(cx, &acked));
        let sample = self.rtt_sample(now, ack, from, last).or(sack_rtt);
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.persist_backoff = 0;

        let restart_timer = self.recovery_on_new_ack(now, ack, newly_acked);
        if self.ca != CaState::Recovery {
            self.dupacks = 0;
            self.limited_tx_bytes = 0;
        }
        let not_cwnd_limited = self.validation_on_ack(ack);
        let app_limited = last.is_some_and(|r| r.app_limited) || not_cwnd_limited;
        let min_rtt = self.rtt.min_rtt().unwrap_or_default();
        self.cc.on_ack(&AckSample {
            now,
            acked_bytes: newly_acked + newly_sacked,
            prior_in_flight,
            rtt: sample,
            srtt: self.rtt.srtt().unwrap_or(min_rtt),
            min_rtt,
            app_limited,
            in_recovery: self.ca == CaState::Recovery,
            mss: self.cfg.mss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        });
        if self.sb.is_empty() {
            self.rto_at = None;
        } else if restart_timer {
            // RFC 6298 §5.3: restart the timer when new data is acknowledged.
            self.arm_rto(now);
        }
        newly_acked
    }

    /// Where the RTT sample of an ACK of new data comes from, decided before the
    /// scoreboard drops the records it covers: RFC 7323 §4.1 the echoed timestamp;
    /// else RFC 6298 §3 the timed segment, or with per-ACK sampling the newest
    /// segment acknowledged unless one of those covered was retransmitted (Karn's
    /// rule holds for every segment the ACK covers: the ACK may have left when the
    /// retransmission filled a hole, long after the later segments arrived; Linux's
    /// FLAG_RETRANS_DATA_ACKED). Decided once, the sample after the scoreboard took
    /// the ACK ([`Self::rtt_sample`]) does not ask the options again.
    #[inline(always)]
    fn rtt_from(&self, seg: &Segment) -> RttFrom {
        match (self.ts_ok, seg.ts) {
            (true, Some(ts)) if ts.tsecr != 0 => RttFrom::Echo(ts.tsecr),
            _ => match self.cfg.rtt_sampling {
                RttSampling::TimedSegment => RttFrom::Timed,
                RttSampling::EveryAck => {
                    if self
                        .sb
                        .iter()
                        .take_while(|r| r.start < seg.ack)
                        .any(|r| r.tx_count > 1)
                    {
                        RttFrom::Nothing
                    } else {
                        RttFrom::Newest
                    }
                }
            },
        }
    }

    /// [`Self::on_new_ack`] for a `plain` sender in the open state and an ACK without
    /// SACK blocks (`handle_segment`'s steady-state path): nothing is SACKed by it, no
    /// extension hears it, no recovery moves on (in the open state
    /// [`Self::recovery_on_new_ack`] only restarts the timer), and congestion control
    /// gets its sample built only if it reads more than the bytes acknowledged
    /// (`Controller::on_ack_with`). The same steps in the same order otherwise: Karn's
    /// rule and the RTT sample (RFC 6298 §3, RFC 7323 §4.1), the window's growth (RFC
    /// 5681 §3.1, RFC 7661 §4) and the timer's restart (RFC 6298 §5.2–5.3).
    fn on_new_ack_open(&mut self, now: Instant, seg: &Segment, prior_in_flight: u64) {
        let ack = seg.ack;
        let from = self.rtt_from(seg);
        // A `plain` sender tracks no rates or deliveries.
        let acked = self.sb.ack_to_untracked(ack);
        let (last, newly_acked) = (acked.last, acked.newly);
        self.snd_una = ack;
        let sample = self.rtt_sample(now, ack, from, last);
        if let Some(r) = sample {
            self.take_rtt_sample(r);
        }
        self.persist_backoff = 0;
        self.dupacks = 0;
        self.limited_tx_bytes = 0;
        let not_cwnd_limited = self.validation_on_ack(ack);
        let app_limited = last.is_some_and(|r| r.app_limited) || not_cwnd_limited;
        // Built in place, not by a method: the closure borrows fields apart from `cc`.
        self.cc.on_ack_with(newly_acked, app_limited, || {
            let min_rtt = self.rtt.min_rtt().unwrap_or_default();
            AckSample {
                now,
                acked_bytes: newly_acked,
                prior_in_flight,
                rtt: sample,
                srtt: self.rtt.srtt().unwrap_or(min_rtt),
                min_rtt,
                app_limited,
                in_recovery: false,
                mss: self.cfg.mss,
                snd_una: ack,
                snd_nxt: self.snd_nxt,
            }
        });
        if self.sb.is_empty() {
            self.rto_at = None;
        } else {
            // RFC 6298 §5.3: restart the timer when new data is acknowledged.
            self.arm_rto(now);
        }
    }

    /// RFC 7661 §4 on an ACK of new data: whether the sender was not cwnd-limited
    /// lately, then the ACK's update of that state. Both only with `cwnd_validation`:
    /// nothing else reads the state (`cwnd_limited`), so without it the sender keeps
    /// none up to date (as `on_data_sent` and `new_data_len` do).
    #[inline(always)]
    fn validation_on_ack(&mut self, ack: u64) -> bool {
        if !self.cfg.cwnd_validation {
            return false;
        }
        let not_cwnd_limited = !self.cwnd_limited();
        self.cwv.on_ack(ack, self.snd_nxt, self.sb.pipe());
        not_cwnd_limited
    }

    /// An RTT sample feeds the RTO estimator (RFC 6298 §2) and the statistics.
    fn take_rtt_sample(&mut self, r: Duration) {
        self.rtt.on_sample(r, self.snd_una, self.snd_nxt);
        self.stats.rtt.record(r);
        // Karn's algorithm (RFC 6298 §5 note, as Linux and ns-2): the backed-off RTO
        // is kept until a valid RTT sample arrives.
        self.rtt.reset_backoff();
    }

    /// The RTT sample of an ACK of new data up to `ack`, from where [`Self::rtt_from`]
    /// said: the echoed timestamp, `last` (the newest segment acknowledged) or the
    /// timed segment.
    fn rtt_sample(
        &mut self,
        now: Instant,
        ack: u64,
        from: RttFrom,
        last: Option<SegRec>,
    ) -> Option<Duration> {
        match from {
            RttFrom::Timed => match self.rtt_timed {
                Some((end, sent)) if ack >= end => {
                    self.rtt_timed = None;
                    Some(now - sent)
                }
                _ => None,
            },
            RttFrom::Echo(tsecr) => {
                let ticks = self.ts_now(now).wrapping_sub(tsecr) as u64;
                Some(Duration::from_nanos(
                    ticks * self.cfg.ts_granularity.as_nanos(),
                ))
            }
            RttFrom::Newest => last.map(|r| now - r.sent_at),
            RttFrom::Nothing => None,
        }
    }

    /// Loss recovery on an ACK of new data. Returns whether the retransmission timer
    /// is restarted (RFC 6298 §5.3, except on NewReno's later partial ACKs).
    fn recovery_on_new_ack(&mut self, now: Instant, ack: u64, newly_acked: u64) -> bool {
        match self.ca {
            CaState::Recovery => {
                if self.recover.is_some_and(|rec| ack >= rec) || self.recovery() == Recovery::Reno {
                    // RFC 6582 §3.2 step 3 (full ACK), RFC 5681 §3.2 step 6 (Reno).
                    self.exit_recovery(now);
                } else if self.recovery() == Recovery::NewReno {
                    // RFC 6582 §3.2 step 5: a partial ACK. Retransmit the first
                    // unacknowledged segment, deflate the window by the amount
                    // acknowledged, add back one SMSS if that was at least SMSS.
                    self.sb.mark_lost(0);
                    self.set_forced_rtx(true);
                    self.recovery_cwnd = self.recovery_cwnd.saturating_sub(newly_acked);
                    if newly_acked >= self.mss() {
                        self.recovery_cwnd += self.mss();
                    }
                    // "Impatient" variant (RFC 6582 §4): reset the timer on the first
                    // partial ACK only.
                    let restart = !self.partial_acked;
                    self.partial_acked = true;
                    return restart;
                } else if !self.rack_on() {
                    // RFC 6675: losses follow from the scoreboard (with RACK, from
                    // `loss_steps_after_ack`).
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
        true
    }

    /// `SEG.ACK = SND.UNA` with data outstanding and no payload: a duplicate ACK as
    /// RFC 5681 §2 defines it (same window, no SYN) or, with SACK, as RFC 6675 §2 does
    /// (it SACKs new data, so an ACK whose only SACK information is a D-SACK is not
    /// one: Linux `tcp_ack` with `FLAG_DSACKING_ACK`, ns-2's `Sack1TcpAgent::recv`
    /// with `CheckUpdate`); an ACK carrying a mobility notice is not one. Duplicate
    /// ACKs start a fast retransmit (RFC 5681 §3.2, RFC 6582 §3.2 step 1, RFC 6675 §5)
    /// and, in a recovery, inflate the window or mark losses.
    fn on_duplicate_ack(&mut self, now: Instant, seg: &Segment, old_wnd: u64, newly_sacked: u64) {
        let dup = if self.sack_ok {
            newly_sacked > 0
        } else {
            seg.wnd == old_wnd && !seg.flags.contains(Flags::SYN)
        } && !seg.exp.handoff_notice;
        if !dup {
            return;
        }
        self.dupacks += 1;
        if self.rack_on() {
            // Linux `tcp_time_to_recover` with RACK: a recovery starts when RACK marks
            // a loss (`loss_steps_after_ack`), whatever the count of duplicate ACKs.
            return;
        }
        match self.ca {
            CaState::Open => {
                let sack_loss = self.sack_ok
                    && self
                        .sb
                        .mark_lost_by_sack(self.cfg.dupack_threshold, self.mss())
                        > 0;
                // RFC 6582 §3.2 step 1 (and §4 on duplicate ACKs after a timeout): a
                // new fast retransmit only once the cumulative ACK covers more than
                // `recover` (here `recover` is the byte after the highest one sent, so:
                // ack > recover). Duplicate ACKs at exactly `recover` come from the
                // receiver answering resent data it already holds after a go-back-N
                // resend; ns-2's `highest_ack_ > recover_` is the same rule.
                let allowed = self.recover.is_none_or(|rec| seg.ack > rec);
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

    /// An ACK that opened the window ends the persist timer (RFC 9293 §3.8.6.1: it
    /// runs while the window is zero). The first step of every ACK's ending, the
    /// steady-state path's as [`Self::after_ack`]'s.
    #[inline(always)]
    fn end_persist(&mut self) {
        if self.snd_wnd > 0 {
            self.persist_at = None;
        }
    }

    /// After every ACK: a window that opened stops the persist timer (RFC 9293
    /// §3.8.6.1); the extensions hear the ACK is processed; a mobility notice it
    /// carries is acted on ([`Self::on_interface_change`]); the extensions' own loss
    /// detection runs; and `after_input` sees the room before and after.
    fn after_ack(&mut self, now: Instant, seg: &Segment, room_before: u64) {
        self.end_persist();
        self.each_ext(now, |e, cx| e.after_ack(cx));
        if seg.exp.handoff_notice {
            self.on_interface_change(now, &InterfaceChange::default());
        }
        self.extension_losses(now);
        self.after_input(now, room_before);
    }

    // ----- mobility (`tcp::handoff`) -------------------------------------------------

    /// The mobile host changed its datalink interface (it is this host, or the
    /// receiver told us: `HandoffSignal`). The extensions react (`tcp::ext::iett`,
    /// `tcp::ext::ba_sst`): they may ask to forget the RTT estimate and to expire the
    /// retransmission timer now, without backing it off and undoing a backoff.
    pub fn on_interface_change(&mut self, now: Instant, change: &InterfaceChange) {
        self.stats.interface_changes += 1;
        self.events.push(SenderEvent::InterfaceChange);
        let (ext, mut cx) = self.hooks(now);
        let mut response = ext::MobilityResponse::default();
        for e in ext {
            response = response.or(e.on_interface_change(&mut cx, change));
        }
        if response.reset_rtt {
            self.rtt.reset(self.cfg.initial_rto);
        }
        if response.expire_timer {
            self.rto_at = None;
            self.rtt.reset_backoff();
            let r = self.congestion_signal(now, CongestionKind::Timeout);
            self.expire(now, r);
        }
    }

    /// The sender extensions, in the order their hooks are called.
    pub fn extensions(&self) -> &[SenderExt] {
        &self.ext
    }

    // ----- getters ------------------------------------------------------------------

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// The oldest event not yet polled (`tcp::event`): drain after every input and
    /// `poll_transmit`.
    #[inline(always)]
    pub fn poll_event(&mut self) -> Option<SenderEvent> {
        self.events.poll()
    }
    pub fn cc(&self) -> &dyn CongestionController {
        &self.cc
    }
    pub fn cc_mut(&mut self) -> &mut dyn CongestionController {
        &mut self.cc
    }
    /// The window the sender uses now: cwnd, or the inflated recovery window.
    pub fn cwnd(&self) -> u64 {
        if self.ca == CaState::Recovery && self.recovery() != Recovery::Sack {
            self.recovery_cwnd
        } else {
            self.prr_cwnd().unwrap_or_else(|| self.cc.window())
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

    /// The histogram spans the samples' buckets only, growing at either end, and
    /// its quantiles are those of the full-range histogram.
    #[test]
    fn histogram_holds_only_the_buckets_between_the_extreme_samples() {
        let mut s = RttStats::default();
        for us in [50_000u64, 60_000, 45_000, 70_000, 40_000] {
            s.record(Duration::from_micros(us));
        }
        let span = RttStats::bucket(Duration::from_millis(70))
            - RttStats::bucket(Duration::from_millis(40))
            + 1;
        assert_eq!(s.hist.len(), span);
        assert!(span < 200, "{span} buckets for 40-70 ms");
        assert_eq!(s.hist.iter().map(|&c| u64::from(c)).sum::<u64>(), 5);
        for (q, ms) in [(0.0, 40.0), (0.5, 50.0), (0.8, 60.0), (1.0, 70.0)] {
            let v = s.quantile(q).unwrap().as_millis_f64();
            assert!((v / ms - 1.0).abs() < 0.008, "q {q}: {v} ms");
        }
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

#[cfg(test)]
mod data_segment_tests {
    use super::*;
    use crate::tcp::TcpReceiver;
    use std::collections::VecDeque;
    use std::sync::Arc;

    /// The shortcuts of `len_within` (every room a segment) and of
    /// `len_within_after_send` (cwnd less than a segment) answer as the general steps
    /// and leave the sender as they do, for every combination of rooms around one
    /// segment, with RFC 7661's mark kept and not, with a segment outstanding and
    /// (`len_within` only) none.
    #[test]
    fn room_shortcuts_are_the_general_answer() {
        let sizes = [0u64, 1, 500, 999, 1000, 1001, 1999, 5000];
        for validation in [false, true] {
            let cfg = TcpConfig {
                mss: 1000,
                cwnd_validation: validation,
                handshake: false,
                ..TcpConfig::ns2()
            };
            // With one data segment outstanding, or none.
            let sender = |sent: bool| {
                let mut s = TcpSender::new(cfg.clone());
                s.set_unlimited();
                if sent {
                    assert_eq!(s.poll_transmit(Instant::ZERO).map(|d| d.len), Some(1000));
                }
                s
            };
            let now = Instant::from_millis(1);
            type Len = fn(&mut TcpSender, Instant, Rooms) -> u64;
            let shortcuts: [(bool, Len); 3] = [
                (true, TcpSender::len_within),
                (false, TcpSender::len_within),
                (true, TcpSender::len_within_after_send),
            ];
            for app in sizes {
                for rwnd in sizes {
                    for cwnd in sizes {
                        let rooms = Rooms { app, rwnd, cwnd };
                        for (sent, shortcut) in shortcuts {
                            let (mut fast, mut general) = (sender(sent), sender(sent));
                            assert_eq!(
                                shortcut(&mut fast, now, rooms),
                                general.len_within_general(now, rooms),
                                "{rooms:?}"
                            );
                            assert_eq!(format!("{fast:?}"), format!("{general:?}"), "{rooms:?}");
                        }
                    }
                }
            }
        }
    }

    /// New data written into a slot last used by an unrelated segment (every field
    /// set, SACK blocks too), as the simulator's packet slab hands it out, is the
    /// segment written into a fresh one: `write_data_segment` leaves no field of the
    /// old segment behind (only the SACK blocks' dead slots).
    #[test]
    fn new_data_in_a_used_slot_is_the_segment_built_afresh() {
        let dirty = Segment::used_slot();
        let base = TcpConfig {
            mss: 1000,
            ..TcpConfig::ns2()
        };
        let configs = [
            base.clone(),
            TcpConfig {
                sack: true,
                timestamps: true,
                ..base.clone()
            },
            TcpConfig {
                mss: 1000,
                ..TcpConfig::default()
            },
        ];
        for cfg in configs {
            let mut a = TcpSender::new(cfg.clone());
            let mut b = TcpSender::new(cfg.clone());
            let mut rcv = TcpReceiver::new(Arc::new(cfg));
            a.set_unlimited();
            b.set_unlimited();
            let delay = Duration::from_millis(10);
            let (mut to_rcv, mut to_snd) = (VecDeque::new(), VecDeque::new());
            let mut now = Instant::ZERO;
            let mut sent = 0u64;
            for step in 0..20_000u64 {
                now += Duration::from_micros(500);
                if let Some(t) = a.poll_timeout().filter(|&t| t <= now) {
                    assert_eq!(b.poll_timeout(), Some(t));
                    a.handle_timeout(t);
                    b.handle_timeout(t);
                }
                if let Some(t) = rcv.poll_timeout().filter(|&t| t <= now) {
                    rcv.handle_timeout(t);
                }
                while to_snd.front().is_some_and(|&(t, _)| t <= now) {
                    let (_, ack) = to_snd.pop_front().unwrap();
                    a.handle_segment(now, &ack);
                    b.handle_segment(now, &ack);
                }
                while to_rcv.front().is_some_and(|&(t, _)| t <= now) {
                    let (_, seg) = to_rcv.pop_front().unwrap();
                    rcv.handle_segment(now, &seg);
                }
                while let Some(ack) = rcv.poll_transmit(now) {
                    to_snd.push_back((now + delay, ack));
                }
                loop {
                    let mut fresh = Segment::default();
                    let mut used = dirty;
                    let pa = a.poll_transmit_into(now, &mut fresh);
                    let pb = b.poll_transmit_into(now, &mut used);
                    assert_eq!(pa, pb);
                    if pa == Polled::Nothing {
                        assert_eq!(used, dirty);
                        break;
                    }
                    assert_eq!(used, fresh, "step {step}");
                    assert!(used.sack.is_empty());
                    sent += 1;
                    // A loss now and then, for recovery and its resends.
                    if sent % 97 != 0 {
                        to_rcv.push_back((now + delay, fresh));
                    }
                    if pa == Polled::Last {
                        break;
                    }
                }
            }
            assert!(sent > 1000, "{sent} segments");
        }
    }
}
