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

/// Where the observer's counters differ from the machines' own stats (`None` if
/// nowhere): a happening the machines counted and did not queue, or the reverse.
#[cfg(test)]
pub(super) fn disagreement(ep: &super::endpoint::Endpoints) -> Option<String> {
    use super::endpoint::Endpoints;
    let (what, pairs): (&str, Vec<(&str, u64, u64)>) = match ep {
        Endpoints::Tcp(t) => {
            let (o, ss, rs) = (&t.observed, t.snd.stats(), t.rcv.stats());
            let last = (ss.ba_sst_estimates > 0).then_some((
                ss.ba_sst_last_bps,
                ss.ba_sst_last_rtt,
                ss.ba_sst_last_ssthresh,
            ));
            if o.ba_sst_last != last {
                return Some(format!(
                    "BA-SST's last estimate {:?} vs {last:?}",
                    o.ba_sst_last
                ));
            }
            let time = (o.zero_window_stall_time, ss.zero_window_stall_time);
            if time.0 != time.1 {
                return Some(format!(
                    "zero-window stall time {:?} vs {:?}",
                    time.0, time.1
                ));
            }
            (
                "TCP",
                vec![
                    ("timeouts", o.timeouts, ss.timeouts),
                    ("fast retransmits", o.fast_retransmits, ss.fast_retransmits),
                    (
                        "hidden",
                        o.hidden_congestion_events,
                        ss.hidden_congestion_events,
                    ),
                    ("window probes", o.window_probes, ss.window_probes),
                    ("undos", o.undos, ss.undos),
                    ("stalls", o.zero_window_stalls, ss.zero_window_stalls),
                    (
                        "stall RTTs",
                        o.zero_window_stall_rtts,
                        ss.zero_window_stall_rtts,
                    ),
                    (
                        "interface changes",
                        o.interface_changes,
                        ss.interface_changes,
                    ),
                    (
                        "forced expirations",
                        o.forced_expirations,
                        ss.forced_expirations,
                    ),
                    ("BA-SST estimates", o.ba_sst_estimates, ss.ba_sst_estimates),
                    ("zero windows", o.zero_windows, rs.zero_window_episodes),
                    ("policy updates", o.policy_updates, rs.policy_updates),
                    ("freezes", o.freezes, rs.freezes),
                    ("TR-ACKs", o.tr_acks, rs.tr_acks),
                    ("notices", o.notices, rs.handoff_notices),
                ],
            )
        }
        Endpoints::Tfrc(tf) => {
            let (o, ss, rs) = (&tf.observed, tf.snd.stats(), tf.rcv.stats());
            let state = (tf.snd.state(), tf.rcv.state());
            if o.state != state {
                return Some(format!("states {:?} vs {state:?}", o.state));
            }
            (
                "TFRC",
                vec![
                    (
                        "nofeedback expiries",
                        o.nofeedback_expiries,
                        ss.nofeedback_expiries,
                    ),
                    ("freezes", o.freezes, ss.freezes),
                    ("restorations", o.restorations, ss.restorations),
                    ("probings", o.probings, ss.probings),
                    ("fallbacks", o.fallbacks, ss.fallbacks),
                    ("loss events", o.loss_events, rs.loss_events),
                ],
            )
        }
    };
    pairs
        .into_iter()
        .find(|p| p.1 != p.2)
        .map(|(n, a, b)| format!("{what}: the observer counted {a} {n}, the machines {b}"))
}

#[cfg(test)]
mod tests {
    use super::super::endpoint::Endpoints;
    use super::super::ids::FlowId;
    use super::super::World;
    use super::{disagreement, TcpObserved, TfrcObserved};
    use std::path::Path;

    /// Run a shipped scenario with `sets` to its end, check that the observer of its
    /// first flow agrees with that flow's machines, and hand their endpoints to `check`.
    fn first_flow(file: &str, sets: &[(&str, &str)], check: impl FnOnce(&Endpoints)) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios")
            .join(file);
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let sc = crate::scenario::load_file(&path, &sets).expect("a shipped scenario");
        let mut w = World::build(&sc).expect("it builds");
        w.run();
        let ep = &w.flows[FlowId::new(0)].ep;
        assert_eq!(disagreement(ep), None);
        check(ep);
    }

    /// What the observer of a TCP first flow counted.
    fn tcp_observed(file: &str, sets: &[(&str, &str)]) -> TcpObserved {
        let mut o = None;
        first_flow(file, sets, |ep| match ep {
            Endpoints::Tcp(t) => o = Some(t.observed.clone()),
            _ => panic!("a TCP flow"),
        });
        o.expect("observed")
    }

    #[test]
    fn the_observer_counts_what_the_tcp_machines_count_through_handoffs() {
        // Four handoffs with both reactions, the notice on an ACK: timeouts, recoveries,
        // interface changes, IETT's expirations, BA-SST's estimates and the notices all
        // happen, and every count agrees with the machines' own.
        let o = tcp_observed(
            "handoff/multiple.toml",
            &[("tcp.handoff_reaction", "iett+ba-sst")],
        );
        assert!(o.timeouts > 0 && o.fast_retransmits > 0, "{o:?}");
        assert_eq!(
            (o.interface_changes, o.forced_expirations, o.notices),
            (4, 4, 4)
        );
        assert!(o.ba_sst_estimates > 0 && o.ba_sst_last.is_some(), "{o:?}");
        // Freeze-TCP on the Linux profile: a freeze, its TR-ACKs, a zero window and
        // an undo.
        let o = tcp_observed(
            "handoff/wlan_to_imt.toml",
            &[("tcp.freeze", "true"), ("tcp.profile", "linux")],
        );
        assert_eq!((o.freezes, o.tr_acks), (1, 3), "{o:?}");
        assert!(o.zero_windows > 0 && o.undos > 0, "{o:?}");
    }

    #[test]
    fn the_observer_follows_the_freeze_dccp_states() {
        // A Freeze-DCCP handoff: a freeze, a restoration and a fallback, each a state
        // change the observer saw, and the states it recorded end where the machines
        // are.
        first_flow(
            "freeze_dccp/handoff_80211b_to_umts.toml",
            &[("flows.dccp.tfrc.freeze", "true")],
            |ep| {
                let Endpoints::Tfrc(tf) = ep else {
                    panic!("a TFRC flow")
                };
                let o: &TfrcObserved = &tf.observed;
                assert_eq!((o.freezes, o.restorations, o.fallbacks), (1, 1, 1), "{o:?}");
                assert!(o.states.len() > 3, "{:?}", o.states);
                let last = o.states.last().expect("states");
                let now = (tf.snd.state().to_string(), tf.rcv.state().to_string());
                assert_eq!((&last.1, &last.2), (&now.0, &now.1));
            },
        );
    }
}
