//! The TFRC sender (RFC 5348 §4, §8.2; RFC 4342 §5, §8.1) with the Freeze-DCCP sender
//! states (docs/schemes/freeze-dccp.md, from the authors' Linux `ccid3.c` / `ccid3_freeze.c`).
//!
//! Read RFC 5348 §4 and §8.2.1, RFC 4342 §5.1 and §8.1 first.
//!
//! ```text
//!   start: X = s/1 s (1 packet per second), nofeedback timer 2 s        (§4.2)
//!     with a handshake RTT: X = W_init/R, tld = the first packet's time   (§4.2)
//!   first feedback: R = R_sample (also after a handshake RTT)           (§4.3 2)
//!     without a handshake RTT: X = initial_rate = W_init/R, tld = now    (§4.2)
//!   feedback (§4.3):  R = q·R + (1−q)·R_sample;  RTO = max(4R, 2s/X)
//!       recv_limit from the X_recv set (data-limited rules of §4.3 / §8.2.1)
//!       p > 0:  X = max(min(X_Bps, recv_limit), s/t_mbi)
//!       p = 0:  once per R, X = max(min(2X, recv_limit), initial_rate)   (slow start)
//!       restart the nofeedback timer at RTO
//!   nofeedback expiry (§4.4): halve X, or cut the X_recv set (Update_Limits),
//!       except after an idle interval
//!   pacing (§4.6): t_ipi = s/X_inst; send when now ≥ t_nom − t_delta
//! ```
//!
//! Choices where the RFC leaves room:
//! * The nominal send time of the next packet is the previous one's plus the
//!   *current* t_ipi, so a rate change applies to the very next gap; a sender more than
//!   one t_ipi late (it had nothing to send) restarts the schedule at `now` instead of
//!   bursting.
//! * "Not data-limited at this instant" (§8.2.1) is taken to be: a packet was sent and
//!   more data is already waiting.
//! * The RFC 4342 §5.1 idle rule (CCID 3): when nothing was sent for 2 RTTs, the
//!   receive-rate limit is never below the initial rate (Linux's reading).
//! * The window counter (RFC 4342 §8.1) follows Linux: on each data packet, if at least
//!   a quarter RTT passed since the last increment, add `min(quarter RTTs, 5)` mod 16
//!   and restart the quarter-RTT clock at `now`; it stays 0 until R is known.
//!   CCID 3 also applies §8.1's acknowledgement rule, as ns-2's `Agent/DCCP/TFRC`
//!   does (`tfrc_send_packet`, `s_recv_wc_`) and Linux does not: once a feedback
//!   acknowledges a packet sent with counter W (its Ack Number, the greatest
//!   sequence number received), every later data packet carries at least W + 4
//!   (mod 16), one RTT's worth past it. The counter is kept unwrapped so that W + 4
//!   is compared without ambiguity.
//! * `min_p` (0 by default): a reported `0 < p < min_p` is used as `min_p`, ns-2's
//!   `s_smallest_p_`.
//!
//! Freeze-DCCP ([`FreezeState`]):
//! * `Normal → Frozen` on a local `freeze` or a FREEZE signal in feedback: X_recv and
//!   p are saved (from `Normal` only; re-freezing from `Restoring`/`Probing` keeps the
//!   saved values). No data is sent, except that after a *local* freeze the next
//!   `freeze_signal_packets` data packets (paced as usual) still go out carrying FREEZE.
//!   The nofeedback timer is suspended (restoration overwrites what it would change).
//! * `Frozen → Restoring` on a local `unfreeze` or an UNFREEZE signal: X_recv = saved,
//!   p = saved, **X = saved X_recv**, sending resumes at once. Every packet carries
//!   RESTORING; RTT samples and receive-rate reports are ignored (the X_recv set keeps
//!   the saved value); the idle rule does not apply.
//! * `Restoring → Probing` on UNFROZEN: the X_recv set is reset to the saved X_recv;
//!   every packet carries PROBING; the rate rule ignores p (slow-start doubling once per
//!   RTT, bounded by 2·X_recv, with X_recv again taken from reports).
//! * Back to `Normal` from `Restoring` or `Probing` when a report's p exceeds the
//!   current p, and from `Probing` also when p falls by more than p/`freeze_delta_p`.
//!   mobiflow addition (`freeze_fallback_on_loss_event`, on by default): also from
//!   `Restoring` when the report counts a new loss event that left p unchanged.
//!
//! Polling order: see [`crate::tfrc`].

use super::equation::throughput;
use super::event::{change_state, SenderEvent};
use super::wire::{FreezeSignals, TfrcData, TfrcFeedback};
use super::TfrcConfig;
use crate::event::Events;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;
use std::fmt;

/// Most window-counter marks kept (one per counter value sent since the latest
/// acknowledged packet); beyond that the oldest go, and an acknowledgement of a packet
/// older than every mark leaves the §8.1 floor where it was.
const MAX_WC_MARKS: usize = 4096;

/// Freeze-DCCP sender states (the authors' `ccid3_hc_tx_freeze_states`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FreezeState {
    Normal,
    Frozen,
    Restoring,
    Probing,
}

impl fmt::Display for FreezeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FreezeState::Normal => "NORMAL",
            FreezeState::Frozen => "FROZEN",
            FreezeState::Restoring => "RESTORING",
            FreezeState::Probing => "PROBING",
        })
    }
}

/// Counters kept by the sender.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TfrcSenderStats {
    pub packets_sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    pub feedback_received: u64,
    pub rtt_samples: u64,
    pub nofeedback_expiries: u64,
    /// Feedback packets whose interval was data-limited (§8.2.1).
    pub data_limited_feedback: u64,
    /// Entries into `Frozen`, `Restoring`, `Probing`, and fallbacks to `Normal` from
    /// `Restoring`/`Probing`.
    pub freezes: u64,
    pub restorations: u64,
    pub probings: u64,
    pub fallbacks: u64,
    /// Data packets that carried a Freeze-DCCP signal.
    pub signals_sent: u64,
}

/// "Long ago" for the §8.2.1 timestamps.
const NEVER: i64 = i64::MIN / 4;

fn ns(t: Instant) -> i64 {
    t.as_nanos().min(i64::MAX as u64) as i64
}

/// The X_recv set of RFC 5348 §4.3: receive rates with the time they were recorded.
#[derive(Copy, Clone, Debug)]
struct RecvSet {
    rate: [f64; 8],
    at: [Instant; 8],
    n: usize,
}

impl RecvSet {
    fn new() -> Self {
        RecvSet {
            rate: [0.0; 8],
            at: [Instant::ZERO; 8],
            n: 0,
        }
    }
    fn reset(&mut self, rate: f64, now: Instant) {
        self.rate[0] = rate;
        self.at[0] = now;
        self.n = 1;
    }
    fn push(&mut self, rate: f64, now: Instant) {
        if self.n == self.rate.len() {
            self.rate.copy_within(1.., 0);
            self.at.copy_within(1.., 0);
            self.n -= 1;
        }
        self.rate[self.n] = rate;
        self.at[self.n] = now;
        self.n += 1;
    }
    fn max(&self) -> f64 {
        self.rate[..self.n].iter().copied().fold(0.0, f64::max)
    }
    /// "Update X_recv_set": add X_recv, delete entries older than two RTTs.
    fn update(&mut self, x_recv: f64, now: Instant, two_rtt: Duration) {
        self.push(x_recv, now);
        let mut j = 0;
        for i in 0..self.n {
            if now - self.at[i] <= two_rtt {
                self.rate[j] = self.rate[i];
                self.at[j] = self.at[i];
                j += 1;
            }
        }
        self.n = j;
    }
    /// "Maximize X_recv_set": add X_recv, drop the initial ∞, keep only the largest
    /// entry, timestamped now.
    fn maximize(&mut self, x_recv: f64, now: Instant) {
        self.push(x_recv, now);
        let m = self.rate[..self.n]
            .iter()
            .copied()
            .filter(|r| r.is_finite())
            .fold(0.0, f64::max);
        self.reset(m, now);
    }
    fn halve(&mut self) {
        for r in &mut self.rate[..self.n] {
            *r /= 2.0;
        }
    }
    /// Keep the entries but date them now (restoration: the saved X_recv stands).
    fn refresh(&mut self, now: Instant) {
        for t in &mut self.at[..self.n] {
            *t = now;
        }
    }
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    cfg: TfrcConfig,
    unlimited: bool,
    queued: u64,
    /// X, the allowed rate, bytes per second.
    x: f64,
    /// X_Bps, the last equation rate.
    x_bps: f64,
    p: f64,
    /// R in seconds.
    r: Option<f64>,
    r_sqmean: f64,
    osc_factor: f64,
    tld: Option<Instant>,
    recv_set: RecvSet,
    x_recv_last: f64,
    /// The receiver's loss-event count in the latest feedback.
    rx_loss_events: u64,
    feedback_received: bool,
    prev_nom: Option<Instant>,
    nofeedback_at: Option<Instant>,
    sent_since_nfb: bool,
    last_sent: Option<Instant>,
    // RFC 5348 §8.2.1, in signed nanoseconds (t_old = t_new − R may be negative).
    t_new: i64,
    t_next: i64,
    not_limited1: i64,
    not_limited2: i64,
    // RFC 4342 §8.1
    wc: u8,
    /// The window counter unwrapped (wc = wc_total mod 16).
    wc_total: u64,
    wc_time: Option<Instant>,
    /// (first sequence number sent with it, unwrapped counter), one entry per counter
    /// value used, oldest first; to find the counter of an acknowledged packet.
    wc_marks: VecDeque<(u64, u64)>,
    /// The unwrapped counter of the latest acknowledged packet (§8.1).
    ack_wc: Option<u64>,
    seq: u64,
    // Freeze-DCCP
    state: FreezeState,
    saved_x_recv: f64,
    saved_p: f64,
    saved_x: f64,
    signal_left: u32,
    stats: TfrcSenderStats,
    /// Discrete happenings for the caller (`poll_event`, `tfrc::event`).
    events: Events<SenderEvent>,
}

impl TfrcSender {
    pub fn new(cfg: TfrcConfig) -> Self {
        let r = cfg
            .handshake_rtt
            .map(|d| d.as_secs_f64())
            .filter(|&r| r > 0.0);
        let mut recv_set = RecvSet::new();
        recv_set.reset(f64::INFINITY, Instant::ZERO);
        let mut s = TfrcSender {
            // §4.2: one packet per second, but never below the floor s/t_mbi that
            // §4.3 keeps at every later step (it is above it unless t_mbi < 1 s).
            x: (cfg.s as f64).max(cfg.min_rate()),
            cfg,
            unlimited: false,
            queued: 0,
            x_bps: 0.0,
            p: 0.0,
            r,
            r_sqmean: 0.0,
            osc_factor: 1.0,
            tld: None,
            recv_set,
            x_recv_last: 0.0,
            rx_loss_events: 0,
            feedback_received: false,
            prev_nom: None,
            nofeedback_at: None,
            sent_since_nfb: false,
            last_sent: None,
            t_new: NEVER,
            t_next: NEVER,
            not_limited1: NEVER,
            not_limited2: NEVER,
            wc: 0,
            wc_total: 0,
            wc_time: None,
            wc_marks: VecDeque::new(),
            ack_wc: None,
            seq: 0,
            state: FreezeState::Normal,
            saved_x_recv: 0.0,
            saved_p: 0.0,
            saved_x: 0.0,
            signal_left: 0,
            stats: TfrcSenderStats::default(),
            events: Events::default(),
        };
        if let Some(r) = r {
            // RFC 5348 §4.2: an RTT from the handshake gives the initial rate at once
            // (floored at s/t_mbi as in §4.3).
            s.x = s.initial_rate(r).max(s.cfg.min_rate());
        }
        s
    }

    /// The application always has data.
    pub fn set_unlimited(&mut self) {
        self.unlimited = true;
    }

    /// The application offers no new data from now on (what it handed over and is
    /// still queued is sent).
    pub fn stop_writing(&mut self) {
        self.unlimited = false;
    }

    /// The application hands over `bytes` more bytes.
    pub fn write(&mut self, bytes: u64) {
        self.queued = self.queued.saturating_add(bytes);
    }

    fn s(&self) -> f64 {
        self.cfg.s as f64
    }

    /// `initial_rate = W_init/R` (§4.2), also `recover_rate` (§4.4).
    fn initial_rate(&self, r: f64) -> f64 {
        self.cfg.w_init() / r
    }

    fn has_data(&self) -> bool {
        self.unlimited || self.queued > 0
    }

    fn may_send(&self) -> bool {
        self.has_data() && (self.state != FreezeState::Frozen || self.signal_left > 0)
    }

    fn t_delta(&self, t_ipi: Duration) -> Duration {
        (t_ipi / 2).min(self.cfg.t_gran / 2)
    }

    /// The nofeedback timeout `max(4R, 2s/X)` (§4.3 step 3, §4.4).
    fn rto(&self) -> Duration {
        let r = self.r.unwrap_or(0.0);
        Duration::from_secs_f64((4.0 * r).max(2.0 * self.s() / self.x.max(1e-9)))
    }

    fn restart_nofeedback(&mut self, now: Instant) {
        self.nofeedback_at = Some(now + self.rto());
        self.sent_since_nfb = false;
    }

    /// A data packet, if pacing allows one at `now`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<TfrcData> {
        if !self.may_send() {
            return None;
        }
        let t_ipi = self.t_ipi();
        let nominal = self.prev_nom.map(|p| p + t_ipi);
        if let Some(nom) = nominal {
            if now + self.t_delta(t_ipi) < nom {
                return None;
            }
        }
        let this_nom = match nominal {
            Some(nom) if now <= nom + t_ipi => nom,
            _ => now,
        };
        self.prev_nom = Some(this_nom);
        self.update_window_counter(now);
        if self
            .wc_marks
            .back()
            .is_none_or(|&(_, w)| w != self.wc_total)
        {
            if self.wc_marks.len() >= MAX_WC_MARKS {
                self.wc_marks.pop_front();
            }
            self.wc_marks.push_back((self.seq, self.wc_total));
        }

        let len = if self.unlimited {
            self.cfg.s
        } else {
            let l = self.queued.min(self.cfg.s as u64);
            self.queued -= l;
            l as u32
        };
        let freeze = match self.state {
            FreezeState::Normal => FreezeSignals::default(),
            FreezeState::Frozen => {
                self.signal_left -= 1;
                FreezeSignals::FREEZE
            }
            FreezeState::Restoring => FreezeSignals::RESTORING,
            FreezeState::Probing => FreezeSignals::PROBING,
        };
        if !freeze.is_empty() {
            self.stats.signals_sent += 1;
        }
        if self.last_sent.is_none() && self.nofeedback_at.is_none() {
            // §4.2: the nofeedback timer starts with the first packet (2 s).
            self.nofeedback_at = Some(
                now + if self.r.is_some() {
                    self.rto()
                } else {
                    self.cfg.initial_nofeedback
                },
            );
            self.recv_set.reset(f64::INFINITY, now);
            if self.r.is_some() && self.tld.is_none() {
                // §4.2: "Upon receiving an RTT measurement (e.g., after ... the SYN
                // exchange from the connection setup ...), tld is set to the current
                // time": the handshake is over when the first packet goes out.
                self.tld = Some(now);
            }
        }
        self.sent_since_nfb = true;
        self.last_sent = Some(now);
        if self.has_data() {
            // §8.2.1: not data-limited at this instant.
            let t = ns(now);
            if self.not_limited1 <= self.t_new {
                self.not_limited1 = t;
            } else if self.not_limited2 <= self.t_next {
                self.not_limited2 = t;
            }
        }
        let pkt = TfrcData {
            seq: self.seq,
            len,
            sent_at: now,
            rtt: self.r.map_or(Duration::ZERO, Duration::from_secs_f64),
            ccval: self.wc,
            freeze,
        };
        self.seq += 1;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        Some(pkt)
    }

    /// RFC 4342 §8.1 window counter: one step per quarter RTT, at most 5 per packet
    /// (Linux's `ccid3_hc_tx_update_win_count`); with CCID 3, at least 4 past the
    /// counter of the latest acknowledged packet (ns-2's `tfrc_send_packet`).
    fn update_window_counter(&mut self, now: Instant) {
        let Some(t) = self.wc_time else {
            self.wc_time = Some(now);
            return;
        };
        let Some(r) = self.r else { return };
        let quarter = r / 4.0;
        if quarter <= 0.0 {
            return;
        }
        let quarters = ((now - t).as_secs_f64() / quarter).floor() as u64;
        if quarters > 0 {
            self.wc_time = Some(now);
            self.wc_total += quarters.min(5);
        }
        if self.cfg.ccid3 {
            if let Some(floor) = self.ack_wc.map(|w| w + 4) {
                if self.wc_total < floor {
                    self.wc_total = floor;
                    self.wc_time = Some(now);
                }
            }
        }
        self.wc = (self.wc_total % 16) as u8;
    }

    /// The unwrapped window counter of data packet `seq`, if still known; forgets the
    /// marks before it.
    fn window_counter_of(&mut self, seq: u64) -> Option<u64> {
        let i = self.wc_marks.partition_point(|&(first, _)| first <= seq);
        if i == 0 {
            return None;
        }
        let w = self.wc_marks[i - 1].1;
        self.wc_marks.drain(..i - 1);
        Some(w)
    }

    /// The next send time or the nofeedback expiry, whichever comes first.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let send = if self.may_send() {
            let t_ipi = self.t_ipi();
            // With no previous packet, poll_transmit sends at once: no wake-up needed.
            self.prev_nom.map(|p| (p + t_ipi) - self.t_delta(t_ipi))
        } else {
            None
        };
        match (send, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if self.nofeedback_at.is_some_and(|t| t <= now) {
            self.on_nofeedback(now);
        }
    }

    /// RFC 5348 §4.4, expiration of the nofeedback timer.
    fn on_nofeedback(&mut self, now: Instant) {
        self.stats.nofeedback_expiries += 1;
        self.events.push(SenderEvent::NoFeedbackExpiry);
        let idle = !self.sent_since_nfb;
        let min_rate = self.cfg.min_rate();
        match self.r {
            None => {
                // No RTT sample and no feedback: halve, unless idle all along.
                if !idle {
                    self.x = (self.x / 2.0).max(min_rate);
                }
            }
            Some(r) => {
                let x_recv = self.recv_set.max();
                let recover_rate = self.initial_rate(r);
                if ((self.p == 0.0 && self.x < 2.0 * recover_rate)
                    || (self.p > 0.0 && x_recv < recover_rate))
                    && idle
                {
                    // Don't halve the allowed sending rate.
                } else if self.p == 0.0 {
                    self.x = (self.x / 2.0).max(min_rate);
                } else if self.x_bps > 2.0 * x_recv {
                    // 2·X_recv was already limiting the rate.
                    self.update_limits(now, x_recv);
                } else {
                    // The equation was the limit.
                    self.update_limits(now, self.x_bps / 2.0);
                }
            }
        }
        self.restart_nofeedback(now);
    }

    /// RFC 5348 §4.4 `Update_Limits(timer_limit)`.
    fn update_limits(&mut self, now: Instant, timer_limit: f64) {
        let min_rate = self.cfg.min_rate();
        let timer_limit = timer_limit.max(min_rate);
        self.recv_set.reset(timer_limit / 2.0, now);
        // Step 4 of §4.3 with recv_limit = timer_limit (here p > 0).
        self.x = self.x_bps.min(timer_limit).max(min_rate);
    }

    /// A feedback packet arrived (RFC 5348 §4.3, with Freeze-DCCP's handling of the
    /// options in the order the authors' code parses them: loss event rate, receive
    /// rate, freeze signals).
    pub fn handle_feedback(&mut self, now: Instant, fb: &TfrcFeedback) {
        self.stats.feedback_received += 1;
        let p_old = self.p;
        let mut p_new = fb.p.clamp(0.0, 1.0);
        if p_new > 0.0 && p_new < self.cfg.min_p {
            // ns-2 `Agent/DCCP/TFRC`: `s_p_ = s_smallest_p_` (`tfrc_send_packet_recv`).
            p_new = self.cfg.min_p.min(1.0);
        }
        if self.cfg.ccid3 && self.seq > fb.highest_seq {
            // RFC 4342 §8.1: the acknowledged packet's counter bounds the next ones.
            if let Some(w) = self.window_counter_of(fb.highest_seq) {
                self.ack_wc = Some(self.ack_wc.map_or(w, |a| a.max(w)));
            }
        }
        let new_loss_event = fb.loss_events > self.rx_loss_events;
        self.rx_loss_events = self.rx_loss_events.max(fb.loss_events);
        match self.state {
            FreezeState::Restoring | FreezeState::Probing if p_new > p_old => {
                self.set_state(FreezeState::Normal);
                self.stats.fallbacks += 1;
            }
            FreezeState::Restoring if new_loss_event && self.cfg.freeze_fallback_on_loss_event => {
                self.set_state(FreezeState::Normal);
                self.stats.fallbacks += 1;
            }
            FreezeState::Probing if p_old - p_new > p_old / self.cfg.freeze_delta_p => {
                self.set_state(FreezeState::Normal);
                self.stats.fallbacks += 1;
            }
            _ => {}
        }
        self.p = p_new;
        let x_recv = (self.state != FreezeState::Restoring).then_some(fb.x_recv_bytes_per_s);
        if let Some(x) = x_recv {
            self.x_recv_last = x;
        }
        if fb.freeze.contains(FreezeSignals::FREEZE) {
            self.enter_frozen(false);
        }
        if fb.freeze.contains(FreezeSignals::UNFREEZE) {
            self.leave_frozen(now);
        }
        if fb.freeze.contains(FreezeSignals::UNFROZEN) && self.state == FreezeState::Restoring {
            self.set_state(FreezeState::Probing);
            self.recv_set.reset(self.saved_x_recv, now);
            self.stats.probings += 1;
        }
        // The report of a feedback that unfroze the sender is overwritten by the
        // restored X_recv (as in the authors' code, where UNFREEZE is parsed after the
        // Receive Rate option but before the rate is computed).
        let x_recv = if self.state == FreezeState::Restoring {
            None
        } else {
            x_recv
        };

        // Steps 1–2: RTT.
        let sample = (now - fb.echo_sent_at)
            .saturating_sub(fb.elapsed)
            .as_secs_f64();
        let r_sample = match (self.state, self.r) {
            (FreezeState::Restoring, Some(r)) => r,
            _ if sample > 0.0 => {
                self.stats.rtt_samples += 1;
                sample
            }
            (_, Some(r)) => r,
            (_, None) => return,
        };
        let first = !self.feedback_received;
        self.feedback_received = true;
        // Step 2: "If no feedback has been received before, R = R_sample": an RTT from
        // the handshake (§4.2) gave the initial rate, and is not averaged in.
        self.r = Some(match self.r {
            Some(r) if self.state == FreezeState::Restoring => r,
            Some(_) if first => r_sample,
            Some(r) => self.cfg.rtt_q * r + (1.0 - self.cfg.rtt_q) * r_sample,
            None => r_sample,
        });
        let r = self.r.expect("set above");
        if first && self.cfg.handshake_rtt.is_none() && self.state == FreezeState::Normal {
            // §4.2: first feedback: X = initial_rate, tld = now (floored at s/t_mbi as
            // in §4.3: W_init/R is below it only when R > W_init·t_mbi/s).
            self.x = self.initial_rate(r).max(self.cfg.min_rate());
            self.tld = Some(now);
        }

        // §8.2.1: was the interval covered by this feedback data-limited?
        self.t_new = ns(fb.echo_sent_at);
        let t_old = self.t_new - (r * 1e9).round() as i64;
        self.t_next = ns(now);
        let not_limited = (t_old < self.not_limited1 && self.not_limited1 <= self.t_new)
            || (t_old < self.not_limited2 && self.not_limited2 <= self.t_new);
        if self.not_limited1 <= self.t_new && self.not_limited2 > self.t_new {
            self.not_limited1 = self.not_limited2;
        }
        let data_limited = !not_limited;
        if data_limited {
            self.stats.data_limited_feedback += 1;
        }

        // Step 4.
        let two_rtt = Duration::from_secs_f64(2.0 * r);
        let mut recv_limit = match x_recv {
            None => {
                self.recv_set.refresh(now);
                2.0 * self.recv_set.max()
            }
            Some(xr) if data_limited => {
                if p_new > p_old {
                    self.recv_set.halve();
                    self.recv_set.maximize(0.85 * xr, now);
                    self.recv_set.max()
                } else {
                    self.recv_set.maximize(xr, now);
                    2.0 * self.recv_set.max()
                }
            }
            Some(xr) => {
                self.recv_set.update(xr, now, two_rtt);
                2.0 * self.recv_set.max()
            }
        };
        if self.cfg.ccid3
            && self.state == FreezeState::Normal
            && self.last_sent.is_some_and(|t| now - t >= two_rtt)
        {
            // RFC 4342 §5.1: idleness never takes the rate below the initial rate.
            recv_limit = recv_limit.max(self.initial_rate(r));
        }
        let min_rate = self.cfg.min_rate();
        if self.p > 0.0 {
            self.x_bps = throughput(self.s(), r, self.p, self.cfg.b);
        }
        if self.p > 0.0 && self.state != FreezeState::Probing {
            self.x = self.x_bps.min(recv_limit).max(min_rate);
        } else if self
            .tld
            .is_none_or(|t| now - t >= Duration::from_secs_f64(r))
        {
            self.x = (2.0 * self.x)
                .min(recv_limit)
                .max(self.initial_rate(r))
                .max(min_rate);
            self.tld = Some(now);
        }

        // Step 5: oscillation prevention (§4.5).
        let sq = r_sample.sqrt();
        self.r_sqmean = if self.r_sqmean == 0.0 {
            sq
        } else {
            self.cfg.osc_q2 * self.r_sqmean + (1.0 - self.cfg.osc_q2) * sq
        };
        self.osc_factor = if sq > 0.0 { self.r_sqmean / sq } else { 1.0 };

        // Step 6.
        if self.state == FreezeState::Frozen {
            self.nofeedback_at = None;
        } else {
            self.restart_nofeedback(now);
        }
    }

    fn enter_frozen(&mut self, local: bool) {
        if self.state == FreezeState::Normal {
            self.saved_x_recv = self.x_recv_last;
            self.saved_p = self.p;
            self.saved_x = self.x;
        }
        if self.state != FreezeState::Frozen {
            self.stats.freezes += 1;
        }
        self.set_state(FreezeState::Frozen);
        if local {
            self.signal_left = self.cfg.freeze_signal_packets;
        }
        self.nofeedback_at = None;
    }

    fn leave_frozen(&mut self, now: Instant) {
        if self.state != FreezeState::Frozen {
            return;
        }
        self.set_state(FreezeState::Restoring);
        self.signal_left = 0;
        self.x_recv_last = self.saved_x_recv;
        self.p = self.saved_p;
        // X = X_recv saved; the pre-freeze X if no receive rate had been reported.
        let restored = if self.saved_x_recv > 0.0 {
            self.saved_x_recv
        } else {
            self.saved_x
        };
        self.x = restored.max(self.cfg.min_rate());
        if let (Some(r), true) = (self.r, self.p > 0.0) {
            self.x_bps = throughput(self.s(), r, self.p, self.cfg.b);
        }
        self.recv_set.reset(self.saved_x_recv, now);
        self.prev_nom = None;
        // Restart the §8.2.1 bookkeeping: its marks only move forward from the last
        // feedback, which may be long past, and the frozen sender was not data-limited.
        self.t_new = NEVER;
        self.t_next = NEVER;
        self.not_limited1 = NEVER;
        self.not_limited2 = NEVER;
        self.stats.restorations += 1;
        self.restart_nofeedback(now);
    }

    /// Local trigger: a disconnection of this end is predicted (Freeze-DCCP).
    pub fn freeze(&mut self, _now: Instant) {
        self.enter_frozen(true);
    }

    /// Local trigger: this end is connected again (Freeze-DCCP).
    pub fn unfreeze(&mut self, now: Instant) {
        self.leave_frozen(now);
    }

    /// X, the allowed sending rate in bytes per second.
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.x
    }

    /// The last receive rate reported by the receiver (and accepted), bytes/s.
    pub fn x_recv(&self) -> f64 {
        self.x_recv_last
    }

    /// The largest entry of the X_recv set (∞ before it ages out).
    pub fn x_recv_set_max(&self) -> f64 {
        self.recv_set.max()
    }

    /// X_Bps, the last equation rate (0 before p > 0).
    pub fn x_bps(&self) -> f64 {
        self.x_bps
    }

    pub fn p(&self) -> f64 {
        self.p
    }

    pub fn rtt(&self) -> Option<Duration> {
        self.r.map(Duration::from_secs_f64)
    }

    /// The current inter-packet interval `t_ipi = s/X_inst` (§4.6; X_inst = X
    /// unless oscillation prevention, §4.5, is on).
    pub fn t_ipi(&self) -> Duration {
        let mut x_inst = self.x;
        if self.cfg.oscillation_prevention {
            x_inst = (self.x * self.osc_factor).max(self.cfg.min_rate());
        }
        Duration::from_secs_f64(self.s() / x_inst.max(1e-9))
    }

    /// The CCID 3 window counter of the last data packet.
    pub fn window_counter(&self) -> u8 {
        self.wc
    }

    pub fn nofeedback_deadline(&self) -> Option<Instant> {
        self.nofeedback_at
    }

    pub fn queued_bytes(&self) -> u64 {
        self.queued
    }

    pub fn state(&self) -> FreezeState {
        self.state
    }

    pub fn config(&self) -> &TfrcConfig {
        &self.cfg
    }

    /// The oldest event not yet polled (`tfrc::event`): drain after every input and
    /// `poll_transmit`.
    #[inline(always)]
    pub fn poll_event(&mut self) -> Option<SenderEvent> {
        self.events.poll()
    }

    /// Enter Freeze-DCCP state `to`, telling the caller when it is a change.
    fn set_state(&mut self, to: FreezeState) {
        let changed = |from, to| SenderEvent::StateChanged { from, to };
        change_state(&mut self.state, to, &mut self.events, changed);
    }

    pub fn stats(&self) -> &TfrcSenderStats {
        &self.stats
    }
}
