//! The TFRC receiver (RFC 5348 §5, §6; RFC 4342 §6, §10) with the Freeze-DCCP
//! receiver states (docs/schemes/freeze-dccp.md, from the authors' Linux `ccid3.c`).
//!
//! Read RFC 5348 §6 and RFC 4342 §10.3 first.
//!
//! * Every data packet goes to the [`LossHistory`] (loss detection, loss events,
//!   intervals, p).
//! * **Receive rate** X_recv (§6.2): the payload bytes received since the last
//!   feedback over the time since then; if that span is shorter than one RTT, the
//!   span since the feedback before is used instead (Linux likewise refuses to
//!   measure over less than an RTT).
//! * **Feedback**, [`FeedbackMode::Timer`] (§6.1, §6.2): on the first data packet
//!   (X_recv = 0, p = 0, §6.3); then on a timer of R_m (the RTT carried by the data
//!   packets); at once when p increases, and on the first data packet after an expiry
//!   that had nothing to report. Before any RTT is known, every data packet is
//!   answered.
//! * **Feedback**, [`FeedbackMode::CcVal`] (RFC 4342 §10.3, Linux): on the first data
//!   packet, on every new loss event, and when a data packet's window counter is at
//!   least 4 past the one that triggered the last feedback, unless a loss is pending.
//! * **Freeze-DCCP**: [`RxFreezeState`]. A local [`TfrcReceiver::freeze`] signals
//!   FREEZE at once and on every feedback while in `SignalFreeze`, the next
//!   `freeze_signal_packets − 1` data arrivals each eliciting one; a local
//!   [`TfrcReceiver::unfreeze`] signals UNFREEZE at once and on every feedback until
//!   the sender's RESTORING packets arrive, repeating the feedback every
//!   `freeze_signal_retry` (one RTT) up to `freeze_signal_packets` copies in all.
//!
//! Polling order: see [`crate::tfrc`].

use super::event::{change_state, ReceiverEvent};
use super::loss_history::{sub16, LossHistory};
use super::wire::{FreezeSignals, TfrcData, TfrcFeedback};
use super::{FeedbackMode, TfrcConfig};
use crate::event::Events;
use crate::time::{Duration, Instant};
use std::fmt;

/// Freeze-DCCP receiver states (the authors' `ccid3_hc_rx_freeze_states`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RxFreezeState {
    Normal,
    /// Disconnection predicted here: feedback carries FREEZE.
    SignalFreeze,
    /// Reconnected: feedback carries UNFREEZE until the sender sends RESTORING.
    SignalUnfreeze,
    /// The sender is restoring its old rate; one RTT without loss is awaited.
    Restoration,
    /// The old rate held for an RTT: feedback carries UNFROZEN.
    Recovery1,
    /// A loss during restoration: the sender will fall back to normal TFRC.
    Recovery2,
    /// The sender is probing; the first loss re-seeds the loss history.
    Probed,
}

impl fmt::Display for RxFreezeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RxFreezeState::Normal => "NORMAL",
            RxFreezeState::SignalFreeze => "SIGNAL_FREEZE",
            RxFreezeState::SignalUnfreeze => "SIGNAL_UNFREEZE",
            RxFreezeState::Restoration => "RESTORATION",
            RxFreezeState::Recovery1 => "RECOVERY1",
            RxFreezeState::Recovery2 => "RECOVERY2",
            RxFreezeState::Probed => "PROBED",
        })
    }
}

/// Counters kept by the receiver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TfrcReceiverStats {
    /// Data packets received (duplicates and late packets included).
    pub packets_received: u64,
    /// Payload bytes received, delivered to the application at once (datagrams).
    pub bytes_received: u64,
    /// Packets declared lost (RFC 5348 §5.1).
    pub packets_lost: u64,
    /// Loss events (§5.2 or RFC 4342 §10.2).
    pub loss_events: u64,
    /// Duplicates, or packets arriving after they were declared lost.
    pub stale_packets: u64,
    /// The loss event rate p, as of the last data packet or feedback.
    pub p: f64,
    /// The last X_recv reported, bytes per second.
    pub x_recv: f64,
    pub feedback_sent: u64,
    /// Feedback packets that carried a Freeze-DCCP signal.
    pub signals_sent: u64,
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    cfg: TfrcConfig,
    hist: LossHistory,
    /// R_m in seconds, from the latest data packet header; 0 until known.
    r: f64,
    /// (sent_at, arrival) of the latest (non-stale) data packet, for the echo.
    last: Option<(Instant, Instant)>,
    last_ccval: u8,
    bytes_cur: u64,
    t_cur: Instant,
    bytes_prev: u64,
    t_prev: Option<Instant>,
    x_recv: f64,
    data_since_fb: bool,
    feedback_due: bool,
    feedback_sent: bool,
    fb_timer: Option<Instant>,
    last_fb_ccval: u8,
    state: RxFreezeState,
    restoration_end: Instant,
    signal_left: u32,
    signal_timer: Option<Instant>,
    stats: TfrcReceiverStats,
    /// Discrete happenings for the caller (`poll_event`, `tfrc::event`).
    events: Events<ReceiverEvent>,
}

impl TfrcReceiver {
    pub fn new(cfg: TfrcConfig) -> Self {
        let mut hist = LossHistory::new(cfg.ndupack, cfg.ccid3, cfg.b);
        hist.set_history_discounting(cfg.history_discounting);
        TfrcReceiver {
            hist,
            cfg,
            r: 0.0,
            last: None,
            last_ccval: 0,
            bytes_cur: 0,
            t_cur: Instant::ZERO,
            bytes_prev: 0,
            t_prev: None,
            x_recv: 0.0,
            data_since_fb: false,
            feedback_due: false,
            feedback_sent: false,
            fb_timer: None,
            last_fb_ccval: 0,
            state: RxFreezeState::Normal,
            restoration_end: Instant::ZERO,
            signal_left: 0,
            signal_timer: None,
            stats: TfrcReceiverStats::default(),
            events: Events::default(),
        }
    }

    /// The receive rate that a feedback sent at `now` would report (§6.2).
    fn measure_x_recv(&self, now: Instant) -> f64 {
        let el_cur = (now - self.t_cur).as_secs_f64();
        if let Some(t_prev) = self.t_prev {
            if self.r > 0.0 && el_cur < self.r {
                let el = (now - t_prev).as_secs_f64();
                if el > 0.0 {
                    return (self.bytes_prev + self.bytes_cur) as f64 / el;
                }
            }
        }
        if el_cur > 0.0 {
            self.bytes_cur as f64 / el_cur
        } else {
            self.x_recv
        }
    }

    /// X_target for a first loss interval (RFC 5348 §6.3.1): the current receive-rate
    /// estimate (as Linux); 0 (the "first data packet lost" rule) before the first
    /// feedback.
    fn x_target(&self, now: Instant) -> f64 {
        if !self.feedback_sent {
            return 0.0;
        }
        self.measure_x_recv(now).max(self.x_recv)
    }

    /// A data packet arrived.
    pub fn handle_data(&mut self, now: Instant, pkt: &TfrcData) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += pkt.len as u64;
        if !pkt.rtt.is_zero() {
            self.r = pkt.rtt.as_secs_f64();
        }
        let first = self.last.is_none();
        if first {
            self.t_cur = now;
        }
        let p_prev = self.hist.p();
        let x_target = self.x_target(now);
        let a = self
            .hist
            .on_packet(now, pkt.seq, pkt.ccval, self.r, self.cfg.s as f64, x_target);
        self.bytes_cur += pkt.len as u64;
        self.data_since_fb = true;
        if a.stale {
            self.stats.stale_packets += 1;
        } else {
            self.last = Some((pkt.sent_at, now));
            self.last_ccval = pkt.ccval;
        }
        let new_event = a.new_events > 0;
        self.freeze_on_data(now, pkt.freeze, new_event);
        let p = self.hist.p();
        self.stats.p = p;
        self.stats.packets_lost = self.hist.lost_packets();
        let events = self.hist.loss_events();
        if events > self.stats.loss_events {
            self.events
                .push(ReceiverEvent::LossEvents(events - self.stats.loss_events));
        }
        self.stats.loss_events = events;

        let due = match self.cfg.feedback {
            // No timer armed: R was unknown at the last feedback, or the last expiry
            // had nothing to report (§6.1 step 3): answer at once.
            FeedbackMode::Timer => first || p > p_prev || self.fb_timer.is_none(),
            FeedbackMode::CcVal => {
                first
                    || new_event
                    || (!a.stale
                        && !self.hist.loss_pending()
                        && sub16(pkt.ccval, self.last_fb_ccval) > 3)
            }
        };
        let signal_copy = self.state == RxFreezeState::SignalFreeze && self.signal_left > 0;
        if due || signal_copy {
            self.feedback_due = true;
        }
    }

    /// The Freeze-DCCP receiver transitions on a data packet (the authors'
    /// `ccid3_hc_rx_packet_recv`), after loss processing.
    fn freeze_on_data(&mut self, now: Instant, sig: FreezeSignals, new_event: bool) {
        use RxFreezeState::*;
        let restoring = sig.contains(FreezeSignals::RESTORING);
        let probing = sig.contains(FreezeSignals::PROBING);
        let to = match self.state {
            // `ccid3_rx_sender_restoring` accepts NORMAL as well as SIGNAL_UNFREEZE, so
            // that a sender-side freeze also leads to restoration and probing.
            Normal | SignalUnfreeze if restoring => {
                self.restoration_end = now + Duration::from_secs_f64(self.r);
                self.signal_left = 0;
                self.signal_timer = None;
                Restoration
            }
            s @ (Normal | SignalFreeze | SignalUnfreeze) => s,
            Restoration if new_event => Recovery2,
            Restoration if !restoring => Normal,
            Restoration if now > self.restoration_end => Recovery1,
            Restoration => Restoration,
            Recovery1 if new_event => Recovery2,
            Recovery1 if probing => Probed,
            Recovery1 if !restoring => Normal,
            Recovery1 => Recovery1,
            Recovery2 if !restoring => Normal,
            Recovery2 => Recovery2,
            Probed if new_event => {
                // End of probing: forget the old path's intervals; the new event is a
                // first loss, seeded from the current receive rate (§6.3.1).
                let x = self.measure_x_recv(now).max(self.x_recv);
                self.hist
                    .restart_from_current_event(self.r, self.cfg.s as f64, x);
                Normal
            }
            Probed if !probing => Normal,
            Probed => Probed,
        };
        self.set_state(to);
    }

    /// Enter Freeze-DCCP state `to`, telling the caller when it is a change.
    fn set_state(&mut self, to: RxFreezeState) {
        let changed = |from, to| ReceiverEvent::StateChanged { from, to };
        change_state(&mut self.state, to, &mut self.events, changed);
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if self.fb_timer.is_some_and(|t| t <= now) {
            self.fb_timer = None;
            // §6.2: with nothing to report the timer stays disarmed, and §6.1 answers
            // the next data packet at once.
            if self.data_since_fb {
                self.feedback_due = true;
            }
        }
        if self.signal_timer.is_some_and(|t| t <= now) {
            self.signal_timer = None;
            if self.state == RxFreezeState::SignalUnfreeze && self.signal_left > 0 {
                self.feedback_due = true;
            }
        }
    }

    pub fn poll_transmit(&mut self, now: Instant) -> Option<TfrcFeedback> {
        if !self.feedback_due {
            return None;
        }
        self.feedback_due = false;
        let (sent_at, arrived) = self.last?;
        let x_recv = if self.feedback_sent {
            self.measure_x_recv(now)
        } else {
            // RFC 5348 §6.3: the first feedback reports X_recv = 0.
            0.0
        };
        let p = self.hist.p();
        let freeze = match self.state {
            RxFreezeState::SignalFreeze => FreezeSignals::FREEZE,
            RxFreezeState::SignalUnfreeze => FreezeSignals::UNFREEZE,
            RxFreezeState::Recovery1 => FreezeSignals::UNFROZEN,
            _ => FreezeSignals::default(),
        };
        if matches!(
            self.state,
            RxFreezeState::SignalFreeze | RxFreezeState::SignalUnfreeze
        ) {
            self.signal_left = self.signal_left.saturating_sub(1);
        }
        if self.state == RxFreezeState::SignalUnfreeze && self.signal_left > 0 {
            let retry = self
                .cfg
                .freeze_signal_retry
                .unwrap_or(Duration::from_secs_f64(self.r));
            self.signal_timer = Some(now + retry.max(Duration::from_micros(1)));
        }
        if !freeze.is_empty() {
            self.stats.signals_sent += 1;
        }
        self.x_recv = x_recv;
        self.bytes_prev = self.bytes_cur;
        self.t_prev = Some(self.t_cur);
        self.bytes_cur = 0;
        self.t_cur = now;
        self.data_since_fb = false;
        self.feedback_sent = true;
        self.last_fb_ccval = self.last_ccval;
        if self.cfg.feedback == FeedbackMode::Timer && self.r > 0.0 {
            self.fb_timer = Some(now + Duration::from_secs_f64(self.r));
        }
        self.stats.feedback_sent += 1;
        self.stats.x_recv = x_recv;
        self.stats.p = p;
        Some(TfrcFeedback {
            echo_sent_at: sent_at,
            elapsed: now - arrived,
            x_recv_bytes_per_s: x_recv,
            p,
            highest_seq: self.hist.highest_seq().unwrap_or(0),
            loss_events: self.hist.loss_events(),
            freeze,
        })
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.fb_timer, self.signal_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Local trigger: a disconnection of this end is predicted. Signals FREEZE to the
    /// sender at once (a feedback packet, once any data has arrived).
    pub fn freeze(&mut self, _now: Instant) {
        self.set_state(RxFreezeState::SignalFreeze);
        self.signal_left = self.cfg.freeze_signal_packets;
        self.signal_timer = None;
        self.feedback_due = true;
    }

    /// Local trigger: this end is connected again. Signals UNFREEZE (only after a
    /// freeze; ignored otherwise, as in the authors' code).
    pub fn unfreeze(&mut self, _now: Instant) {
        if matches!(
            self.state,
            RxFreezeState::SignalFreeze | RxFreezeState::SignalUnfreeze
        ) {
            self.set_state(RxFreezeState::SignalUnfreeze);
            self.signal_left = self.cfg.freeze_signal_packets;
            self.signal_timer = None;
            self.feedback_due = true;
        }
    }

    pub fn state(&self) -> RxFreezeState {
        self.state
    }

    /// The loss event rate p now.
    pub fn p(&self) -> f64 {
        self.hist.p()
    }

    /// The RTT estimate R_m taken from the data packets, if any.
    pub fn rtt(&self) -> Option<Duration> {
        (self.r > 0.0).then(|| Duration::from_secs_f64(self.r))
    }

    pub fn loss_history(&self) -> &LossHistory {
        &self.hist
    }

    pub fn config(&self) -> &TfrcConfig {
        &self.cfg
    }

    /// The oldest event not yet polled (`tfrc::event`): drain after every input and
    /// `poll_transmit`.
    #[inline(always)]
    pub fn poll_event(&mut self) -> Option<ReceiverEvent> {
        self.events.poll()
    }

    pub fn stats(&self) -> &TfrcReceiverStats {
        &self.stats
    }
}
