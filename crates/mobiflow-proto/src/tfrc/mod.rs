//! TFRC (RFC 5348), DCCP CCID 3 (RFC 4342) and Freeze-DCCP/TFRC, as sans-IO machines.
//!
//! Read RFC 5348 §3–§6 and §8, RFC 4342 §5, §6, §8 and §10, and docs/schemes/freeze-dccp.md (the
//! Freeze-DCCP states, from the authors' Linux code) first.
//!
//! ```text
//!   TfrcSender ── TfrcData (seq, s, timestamp, R, CCVal, Freeze signals) ──▶ TfrcReceiver
//!        ▲                                                                       │
//!        └──── TfrcFeedback (t_recvdata echo, t_delay, X_recv, p, signals) ──────┘
//! ```
//!
//! ## Map
//!
//! * [`equation`]: the throughput equation (RFC 5348 §3.1), its inverse (used for the
//!   first loss interval, §6.3.1) and the initial window (§4.2).
//! * [`loss_history`]: the receiver's loss detection (§5.1), loss events (§5.2, or
//!   by CCVal as RFC 4342 §10.2), loss intervals (§5.3) and the average loss interval
//!   with the eight weights (§5.4), seeded by the synthetic first interval (§6.3.1).
//! * [`sender`]: [`TfrcSender`]: rate update on feedback (§4.3), slow start, the
//!   X_recv set and the data-limited rules (§4.3, §8.2.1), the nofeedback timer (§4.4),
//!   oscillation prevention (§4.5), pacing (§4.6), the CCID 3 window counter (RFC 4342
//!   §8.1) and idle rule (§5.1), and the Freeze-DCCP sender states.
//! * [`receiver`]: [`TfrcReceiver`]: receive rate (§6.2), feedback by timer (§6) or by
//!   CCVal (RFC 4342 §10.3), and the Freeze-DCCP receiver states.
//! * [`model`]: the seed's analytical model of TFRC across a disconnection and its table
//!   of possible improvements.
//! * [`wire`]: the data and feedback packets.
//!
//! ## Polling order and time
//!
//! As for TCP: after any `handle_*` call, `write`, `freeze` or `unfreeze`, call
//! `poll_transmit(now)` until it returns `None`, then schedule a wake-up at
//! `poll_timeout()` and call `handle_timeout(now)` then. `now` never decreases. No
//! clock, no randomness, and no allocation per packet once the receiver's small
//! ring of pending holes has reached its working size.
//!
//! ## Freeze-DCCP
//!
//! A plain TFRC flow is a Freeze-DCCP flow that is never frozen: the states stay
//! `Normal` and no signal is ever set. `freeze(now)` / `unfreeze(now)` are the local
//! triggers (the authors' `DCCP_SOCKOPT_FREEZE`), called by whoever predicts the
//! disconnection, at either end:
//!
//! ```text
//!  sender:    Normal ─freeze─▶ Frozen ─unfreeze─▶ Restoring ─UNFROZEN─▶ Probing
//!               ▲                                     │ p rose              │ p rose, or fell by > p/10
//!               └─────────────────────────────────────┴─────────────────────┘
//!  receiver:  Normal ─freeze─▶ SignalFreeze ─unfreeze─▶ SignalUnfreeze ─RESTORING─▶ Restoration
//!             Restoration ─1 RTT, no loss─▶ Recovery1 ─PROBING─▶ Probed ─loss─▶ Normal (p re-seeded)
//!             Restoration/Recovery1 ─loss─▶ Recovery2 ─no RESTORING─▶ Normal
//! ```
//!
//! ## Provenance of parameters
//!
//! Every value in [`TfrcConfig`] is an RFC constant, a value read in the authors' Linux
//! code, or a mobiflow choice; [`TfrcConfig::assumed`] lists the mobiflow choices
//! (the `[GUESS]` items: assumed, see docs/schemes/README.md) so that outputs can flag them.

pub mod equation;
pub mod event;
pub mod loss_history;
pub mod model;
pub mod receiver;
pub mod sender;
pub mod wire;

#[cfg(test)]
mod tests;

pub use equation::{
    first_loss_interval, initial_window, invert_f, tcp_f, throughput, throughput_rto,
};
pub use event::{ReceiverEvent as TfrcReceiverEvent, SenderEvent as TfrcSenderEvent};
pub use loss_history::{
    average_loss_interval, discounted_loss_interval, LossHistory, LOSS_WEIGHTS, MIN_DISCOUNT,
    N_LOSS_INTERVALS,
};
pub use receiver::{RxFreezeState, TfrcReceiver, TfrcReceiverStats};
pub use sender::{FreezeState, TfrcSender, TfrcSenderStats};
pub use wire::{FreezeSignals, TfrcData, TfrcFeedback};

use crate::time::Duration;

/// When the receiver sends feedback.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FeedbackMode {
    /// RFC 5348 §6: a feedback timer of one RTT (R_m, from the data packets' header),
    /// plus immediate feedback when p increases or when the last expiry found nothing
    /// to report.
    Timer,
    /// RFC 4342 §10.3 as Linux does it: no timer; feedback when a data packet's CCVal
    /// is at least 4 past the one that triggered the last feedback (one RTT), when a
    /// new loss event is detected, and on the first data packet.
    CcVal,
}

crate::named_enum! {
    impl FeedbackMode (
        "feedback mode",
        expected "\"timer\" (RFC 5348 §6) or \"ccval\" (RFC 4342 §10.3)",
        quoting lowercase
    ) {
        Timer = "timer",
        CcVal = "ccval",
    }
}

/// How the initial allowed rate (RFC 5348 §4.2) is derived once R is known.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum InitialRate {
    /// RFC 5348 §4.2 / RFC 3390: `W_init = min(4·s, max(2·s, 4380))` bytes per RTT.
    Rfc3390,
    /// A fixed number of packets per RTT (`W_init = n·s`).
    Packets(u32),
}

/// Configuration shared by a [`TfrcSender`] and a [`TfrcReceiver`].
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcConfig {
    /// Segment size s in payload bytes (RFC 5348 §3.1, §4.1). Every data packet
    /// carries `s` bytes unless the application has fewer queued.
    pub s: u32,
    /// Per-packet wire overhead (IP + UDP/DCCP headers). Not used by the rate rules
    /// (s is the payload, as in RFC 5348); for the simulator's serialisation.
    pub header_bytes: u32,
    pub feedback: FeedbackMode,
    /// CCID 3 rules: loss events are grouped by CCVal (RFC 4342 §10.2) instead of by
    /// interpolated time (RFC 5348 §5.2), and the idle rule of RFC 4342 §5.1 applies.
    pub ccid3: bool,
    pub initial_rate: InitialRate,
    /// An RTT known before the first feedback (from a handshake, RFC 5348 §4.2); the
    /// sender then starts at the initial rate instead of 1 packet per second.
    pub handshake_rtt: Option<Duration>,
    /// t_mbi, the maximum back-off interval (RFC 5348 §4.3): the rate never falls
    /// below s/t_mbi. 64 s.
    pub t_mbi: Duration,
    /// b in the throughput equation (RFC 5348 §3.1): packets acknowledged by one TCP
    /// ACK. 1.
    pub b: f64,
    /// Packets received after a hole before it counts as lost (RFC 5348 §5.1). 3.
    pub ndupack: u32,
    /// The first nofeedback timeout, before any RTT is known (RFC 5348 §4.2). 2 s.
    pub initial_nofeedback: Duration,
    /// q of the RTT EWMA `R = q·R + (1−q)·R_sample` (RFC 5348 §4.3). 0.9.
    pub rtt_q: f64,
    /// Oscillation prevention (RFC 5348 §4.5, optional): pace at `X_inst =
    /// X·R_sqmean/sqrt(R_sample)`. Off by default, as in Linux.
    pub oscillation_prevention: bool,
    /// q2 of the sqrt-RTT EWMA for oscillation prevention (RFC 5348 §4.5). 0.9.
    pub osc_q2: f64,
    /// t_gran, the sender's scheduling granularity (RFC 5348 §4.6): a packet may leave
    /// up to `t_delta = min(t_ipi/2, t_gran/2)` early. Zero: the simulator wakes exactly.
    pub t_gran: Duration,
    /// Freeze-DCCP: how many packets carry a locally triggered FREEZE/UNFREEZE signal
    /// (`DCCP_FREEZE_SIGNAL_PACKETS` in the authors' code). 5.
    pub freeze_signal_packets: u32,
    /// Freeze-DCCP: PROBING ends when p falls by more than p/`freeze_delta_p`
    /// (`FREEZE_DELTA_P`; 10 in the later branch, written as the fraction 0.1 in the
    /// older one). 10.
    pub freeze_delta_p: f64,
    /// Freeze-DCCP: while the receiver signals UNFREEZE and nothing arrives (the sender
    /// is frozen), it repeats the signalling feedback after this long, up to
    /// `freeze_signal_packets` copies in all. `None`: one RTT (the receiver's R).
    /// \[GUESS\]: the authors' code sends one feedback and relies on later ones.
    pub freeze_signal_retry: Option<Duration>,
    /// Freeze-DCCP: a restoring sender also falls back to normal TFRC when a feedback
    /// reports a new loss event that left p unchanged. \[GUESS\]: the authors' code exits
    /// only when p rises, and a loss during restoration (the receiver's RECOVERY2)
    /// that does not raise p would otherwise leave the sender restoring for good.
    pub freeze_fallback_on_loss_event: bool,
    /// The smallest loss event rate the sender uses: a reported p with `0 < p <
    /// min_p` is raised to `min_p`. 0 (the default): no floor, as RFC 5348 and
    /// RFC 4342. ns-2's `Agent/DCCP/TFRC` has one, `s_smallest_p_` = 1e-5
    /// (`tfrc_send_packet_recv` in `dccp/dccp_tfrc.cc`), which caps the equation rate
    /// at `X(1e-5)`.
    pub min_p: f64,
    /// Loss-history discounting (RFC 5348 §5.5, optional): when the open interval
    /// I_0 is more than twice the average, the older intervals are weighted down by
    /// `DF = max(2·I_mean/I_0, 0.5)`, and that factor sticks to them when a new loss
    /// event closes I_0. Off by default (neither RFC 4342 nor ns-2's
    /// `Agent/DCCP/TFRC` discounts; ns-2's `Agent/TFRCSink` does, `discount_`,
    /// `minDiscountRatio_` = 0.5).
    pub history_discounting: bool,
}

impl Default for TfrcConfig {
    /// RFC 5348 TFRC with timer feedback and 1000-byte segments.
    fn default() -> Self {
        TfrcConfig {
            s: 1000,
            header_bytes: 40,
            feedback: FeedbackMode::Timer,
            ccid3: false,
            initial_rate: InitialRate::Rfc3390,
            handshake_rtt: None,
            t_mbi: Duration::from_secs(64),
            b: 1.0,
            ndupack: 3,
            initial_nofeedback: Duration::from_secs(2),
            rtt_q: 0.9,
            oscillation_prevention: false,
            osc_q2: 0.9,
            t_gran: Duration::ZERO,
            freeze_signal_packets: 5,
            freeze_delta_p: 10.0,
            freeze_signal_retry: None,
            freeze_fallback_on_loss_event: true,
            min_p: 0.0,
            history_discounting: false,
        }
    }
}

impl TfrcConfig {
    /// DCCP CCID 3 (RFC 4342): CCVal-based loss events and feedback, the idle rule.
    pub fn ccid3() -> Self {
        TfrcConfig {
            feedback: FeedbackMode::CcVal,
            ccid3: true,
            ..TfrcConfig::default()
        }
    }

    /// Parameters whose default is a mobiflow assumption rather than an RFC value or a
    /// value read in the authors' code, with the value in use.
    pub fn assumed(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                "tfrc.freeze_signal_retry",
                match self.freeze_signal_retry {
                    None => "1 RTT".to_string(),
                    Some(d) => format!("{d:?}"),
                },
            ),
            ("tfrc.t_gran", format!("{:?}", self.t_gran)),
            (
                "tfrc.freeze_fallback_on_loss_event",
                self.freeze_fallback_on_loss_event.to_string(),
            ),
        ]
    }

    /// `s/t_mbi`, the lowest allowed rate in bytes per second.
    pub fn min_rate(&self) -> f64 {
        self.s as f64 / self.t_mbi.as_secs_f64()
    }

    /// The initial window W_init in bytes (RFC 5348 §4.2).
    pub fn w_init(&self) -> f64 {
        match self.initial_rate {
            InitialRate::Rfc3390 => initial_window(self.s),
            InitialRate::Packets(n) => n as f64 * self.s as f64,
        }
    }
}
