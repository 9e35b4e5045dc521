//! The observer: what the engine measures of a flow's discrete happenings. After the
//! engine drives a protocol machine (an input, a timer, a mobility notice) it flushes
//! that end, and the flush drains the machine's events (`poll_event`, the protocol
//! crate's `event` module) into the flow's observer, which turns them into the counters
//! of the flow's summary and, for TFRC, the Freeze-DCCP states of its series and
//! summary. The summary and the series read the observer, never the machines'
//! scheme-specific counters.
//!
//! What a machine counts per packet (segments and bytes sent, retransmitted
//! segments, duplicate ACKs, window updates, receive-buffer drops, spurious
//! retransmissions, TFRC's packets and feedback) and the RTT statistics are still read
//! from its stats at the end: an event per packet would cost a queue entry per packet.
//! Draining an empty queue is one length test.

use crate::results::HandoffSummary;
use mobiflow_proto::tcp::{ReceiverEvent, SenderEvent, TcpReceiver, TcpSender};
use mobiflow_proto::tfrc::{
    FreezeState, RxFreezeState, TfrcReceiver, TfrcReceiverEvent, TfrcSender, TfrcSenderEvent,
};
use mobiflow_proto::time::{Duration, Instant};

/// What the observer counted of a TCP flow's events.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct TcpObserved {
    /// `SenderEvent::Timeout`.
    pub timeouts: u64,
    /// `SenderEvent::RecoveryEntered`.
    pub fast_retransmits: u64,
    /// `SenderEvent::CongestionHidden`, of either kind.
    pub hidden_congestion_events: u64,
    /// `SenderEvent::WindowProbe`.
    pub window_probes: u64,
    /// `SenderEvent::Undo`, whatever the detector.
    pub undos: u64,
    /// `SenderEvent::ZeroWindowStallEnded`: stalls, their total length and RTTs.
    pub zero_window_stalls: u64,
    pub zero_window_stall_time: Duration,
    pub zero_window_stall_rtts: u64,
    /// `SenderEvent::InterfaceChange`, `SenderEvent::ForcedExpiry`.
    pub interface_changes: u64,
    pub forced_expirations: u64,
    /// `SenderEvent::BaSstEstimate`: how many, and the last (bits/s, RTT, ssthresh).
    pub ba_sst_estimates: u64,
    pub ba_sst_last: Option<(f64, Duration, u64)>,
    /// `ReceiverEvent::ZeroWindowAdvertised`, `PolicyUpdate`, `Frozen`, the TR-ACKs
    /// of `Unfrozen`, and `HandoffNotice`.
    pub zero_windows: u64,
    pub policy_updates: u64,
    pub freezes: u64,
    pub tr_acks: u64,
    pub notices: u64,
}

impl TcpObserved {
    /// Take every event the sender has queued.
    #[inline(always)]
    pub(super) fn drain_sender(&mut self, snd: &mut TcpSender) {
        while let Some(e) = snd.poll_event() {
            self.on_sender(e);
        }
    }

    /// Take every event the receiver has queued.
    #[inline(always)]
    pub(super) fn drain_receiver(&mut self, rcv: &mut TcpReceiver) {
        while let Some(e) = rcv.poll_event() {
            self.on_receiver(e);
        }
    }

    #[inline(never)]
    fn on_sender(&mut self, e: SenderEvent) {
        match e {
            SenderEvent::Timeout => self.timeouts += 1,
            SenderEvent::RecoveryEntered => self.fast_retransmits += 1,
            SenderEvent::CongestionHidden(_) => self.hidden_congestion_events += 1,
            SenderEvent::WindowProbe => self.window_probes += 1,
            SenderEvent::Undo { .. } => self.undos += 1,
            SenderEvent::ZeroWindowStallEnded { length, rtts } => {
                self.zero_window_stalls += 1;
                self.zero_window_stall_time += length;
                self.zero_window_stall_rtts += rtts;
            }
            SenderEvent::InterfaceChange => self.interface_changes += 1,
            SenderEvent::ForcedExpiry => self.forced_expirations += 1,
            SenderEvent::BaSstEstimate { bps, rtt, ssthresh } => {
                self.ba_sst_estimates += 1;
                self.ba_sst_last = Some((bps, rtt, ssthresh));
            }
            // Not in the summary: what a caller with other questions may count.
            SenderEvent::SynRetransmit
            | SenderEvent::RecoveryExited
            | SenderEvent::LossProbe
            | SenderEvent::LossProbeRecovery => {}
        }
    }

    #[inline(never)]
    fn on_receiver(&mut self, e: ReceiverEvent) {
        match e {
            ReceiverEvent::ZeroWindowAdvertised => self.zero_windows += 1,
            ReceiverEvent::PolicyUpdate => self.policy_updates += 1,
            ReceiverEvent::Frozen => self.freezes += 1,
            ReceiverEvent::Unfrozen { tr_acks } => self.tr_acks += tr_acks as u64,
            ReceiverEvent::HandoffNotice => self.notices += 1,
        }
    }

    /// The flow's handoff counters (the vertical-handoff paper, Freeze-TCP).
    pub(super) fn handoff(&self) -> HandoffSummary {
        let last = self.ba_sst_last;
        HandoffSummary {
            interface_changes: self.interface_changes,
            forced_expirations: self.forced_expirations,
            notices: self.notices,
            ba_sst_estimates: self.ba_sst_estimates,
            ba_sst_bps: last.map(|l| l.0),
            ba_sst_rtt_ms: last.map(|l| l.1.as_millis_f64()),
            ba_sst_ssthresh_bytes: last.map(|l| l.2),
            freezes: self.freezes,
            tr_acks: self.tr_acks,
        }
    }
}

/// What the observer counted of a TFRC / DCCP CCID 3 flow's events, and the
/// Freeze-DCCP states it followed.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TfrcObserved {
    /// `TfrcSenderEvent::NoFeedbackExpiry`.
    pub nofeedback_expiries: u64,
    /// The sender's transitions: into FROZEN, FROZEN to RESTORING, RESTORING to
    /// PROBING, and back to NORMAL from RESTORING or PROBING.
    pub freezes: u64,
    pub restorations: u64,
    pub probings: u64,
    pub fallbacks: u64,
    /// `TfrcReceiverEvent::LossEvents`, summed.
    pub loss_events: u64,
    /// The sender's and the receiver's state, as the events left them.
    pub state: (FreezeState, RxFreezeState),
    /// Every change of the pair seen at a drain: (time s, sender, receiver).
    pub states: Vec<(f64, String, String)>,
}

impl TfrcObserved {
    pub(super) fn new(snd: &TfrcSender, rcv: &TfrcReceiver) -> Self {
        let state = (snd.state(), rcv.state());
        TfrcObserved {
            nofeedback_expiries: 0,
            freezes: 0,
            restorations: 0,
            probings: 0,
            fallbacks: 0,
            loss_events: 0,
            state,
            states: vec![(0.0, state.0.to_string(), state.1.to_string())],
        }
    }

    /// Take every event both machines have queued; if the pair of states differs from
    /// the one recorded last, record it at `now` (a change and its reversal within one
    /// drive leave no record).
    pub(super) fn drain(&mut self, now: Instant, snd: &mut TfrcSender, rcv: &mut TfrcReceiver) {
        let before = self.state;
        while let Some(e) = snd.poll_event() {
            match e {
                TfrcSenderEvent::NoFeedbackExpiry => self.nofeedback_expiries += 1,
                TfrcSenderEvent::StateChanged { from, to } => {
                    use FreezeState::*;
                    match (from, to) {
                        (_, Frozen) => self.freezes += 1,
                        (Frozen, Restoring) => self.restorations += 1,
                        (Restoring, Probing) => self.probings += 1,
                        (Restoring | Probing, Normal) => self.fallbacks += 1,
                        _ => {}
                    }
                    self.state.0 = to;
                }
            }
        }
        while let Some(e) = rcv.poll_event() {
            match e {
                TfrcReceiverEvent::StateChanged { to, .. } => self.state.1 = to,
                TfrcReceiverEvent::LossEvents(n) => self.loss_events += n,
            }
        }
        if self.state != before {
            self.states.push((
                now.as_secs_f64(),
                self.state.0.to_string(),
                self.state.1.to_string(),
            ));
        }
    }
}
