//! Relentless TCP: cwnd is reduced by the number of segments lost, not halved.
//!
//! Read draft-mathis-iccrg-relentless-tcp-00 (Mathis, 2009) and Mathis's original Linux
//! module (`tcp_relentless.c`, April 2008; `github: systemslab/tcp_relentless_inigo`,
//! commit 170a7fd) first.
//!
//! Relentless TCP applies Van Jacobson's packet conservation strictly: after a loss
//! episode the window is what the network actually delivered in the lossy round trip,
//! `cwnd_before − L` for `L` lost segments. The TCP part of the control loop then has
//! unity gain, so the *network* must enforce fairness (FQ, AFD, a scavenger class);
//! against Reno flows in a shared FIFO/RED queue it takes more than its share. FLD_TCP
//! ([`super::fld`]; Moktan, "In the Interest of the Short: An approach for e2e
//! congestion control", talk slides, Aalto University, 2012) uses it on purpose for
//! short flows.
//!
//! ```text
//!   outside recovery ── Reno: slow start below ssthresh, +1 SMSS per RTT above
//!                       (RFC 5681 §3.1; [`super::Reno`] does the arithmetic)
//!   loss entry ──────── ssthresh = max(cwnd, 2*SMSS), cwnd unchanged
//!                       (tcp_relentless.c `relentless_ssthresh`: no multiplicative
//!                       decrease; `relentless_min_cwnd`: "never rate halve")
//!   in recovery ─────── cwnd = min(cwnd, in_flight_after_ack + SMSS): packet
//!                       conservation (Linux tcp_cwnd_down's bound)
//!   recovery exit ───── cwnd = ssthresh = max(cwnd_before − R*SMSS, 2*SMSS)
//!                       R = segments retransmitted in the episode
//!                       (tcp_relentless.c CA_EVENT_COMPLETE_CWR:
//!                        ssthresh = cwndnlosses − total_retrans)
//!   timeout ─────────── `RelentlessTimeout::Reno` (default, [GUESS]): as Reno,
//!                       ssthresh = max(FlightSize/2, 2*SMSS), cwnd = loss window;
//!                       `RelentlessTimeout::Hold` (Mathis's code, where Linux's
//!                       tcp_enter_loss calls the same ssthresh hook):
//!                       ssthresh = max(cwnd, 2*SMSS), cwnd = loss window
//!   ECN ────────────── as a loss entry; nothing is retransmitted, so the exit leaves
//!                       cwnd where it was (as Mathis's module, which ends CWR with
//!                       ssthresh = cwnd − 0)
//! ```
//!
//! Differences from the Linux module, all of them deliberate:
//! * The module is enabled only for the scavenger TOS `0x20` and is Reno otherwise;
//!   here it always applies.
//! * During recovery the sender (not the controller) decides what to send. With
//!   SACK (RFC 6675) recovery it fills `pipe` up to cwnd, and the controller keeps
//!   cwnd ≤ in-flight-after-the-ACK + 1 SMSS on each ACK, as Linux's
//!   `tcp_cwnd_down` does once the module's `min_cwnd` has disabled rate halving: one
//!   segment leaves per segment delivered and the flight stays at `cwnd_before − L`.
//!   With Reno/NewReno recovery the sender's own inflated window
//!   (`ssthresh + dupACKs`, with ssthresh = cwnd) gives one new segment per dupACK.
//!   Either way the window after recovery is `cwnd_before − R`.
//! * Linux's module lifts cwnd to the flight size when something else lowered it
//!   ("defeat all policy based cwnd reductions"). mobiflow's sender lowers cwnd only
//!   on an idle restart (RFC 5681 §4.1), which is kept.

use super::{
    AckSample, CaEvent, CongestionController, CongestionEvent, CongestionKind, RecoveryExit, Reno,
    RenoConfig, WindowParams,
};
use crate::time::Instant;

/// The smallest window a reduction leaves, in segments (the module's `max(cwnd, 2U)`).
pub const MIN_WINDOW_SEGMENTS: u64 = 2;

crate::named_enum! {
    /// What a retransmission timeout does to a Relentless sender.
    #[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
    pub enum RelentlessTimeout ("Relentless timeout rule") {
        /// As Reno (RFC 5681 §3.1): ssthresh = max(FlightSize/2, 2*SMSS), cwnd = loss
        /// window. A timeout is a sign of heavy congestion, so the unity-gain rule is
        /// not applied to it. This is a [GUESS] of mobiflow's, not from a source.
        #[default]
        Reno = "reno",
        /// As Mathis's module: ssthresh = max(cwnd, 2*SMSS) and cwnd = loss window, so
        /// slow start climbs straight back to the window before the timeout.
        Hold = "hold",
    }
}

/// The parameters of Relentless TCP that a scenario may set (`[tcp.relentless]`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct RelentlessParams {
    /// Reaction to a retransmission timeout.
    pub timeout: RelentlessTimeout,
}

/// Configuration of [`Relentless`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RelentlessConfig {
    pub params: WindowParams,
    pub relentless: RelentlessParams,
}

impl Default for RelentlessConfig {
    fn default() -> Self {
        RelentlessConfig {
            params: WindowParams::rfc5681(4380),
            relentless: RelentlessParams::default(),
        }
    }
}

/// Relentless TCP. See the module documentation.
#[derive(Clone, Debug)]
pub struct Relentless {
    cfg: RelentlessConfig,
    mss: u64,
    /// Reno's window arithmetic: slow start and congestion avoidance.
    reno: Reno,
    /// cwnd when the current loss episode began (`save_cwnd` of the module), in bytes.
    cwnd_before: Option<u64>,
}

impl Relentless {
    pub fn new(cfg: RelentlessConfig, mss: u32) -> Self {
        Relentless {
            reno: Reno::new(
                RenoConfig {
                    params: cfg.params,
                    name: "relentless",
                },
                mss,
            ),
            mss: mss as u64,
            cwnd_before: None,
            cfg,
        }
    }

    fn floor(&self) -> u64 {
        MIN_WINDOW_SEGMENTS * self.mss
    }
}

impl CongestionController for Relentless {
    fn name(&self) -> &'static str {
        "relentless"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        if ack.in_recovery && self.cwnd_before.is_some() {
            // Packet conservation during recovery: one segment out per segment the ACK
            // reports delivered. Linux's tcp_cwnd_down bounds cwnd by in_flight + 1
            // (the module's min_cwnd = cwnd + 1 only disables the halving), so the
            // flight stays at what was left after the losses.
            let bound = ack.prior_in_flight.saturating_sub(ack.acked_bytes) + self.mss;
            if bound < self.reno.window() {
                self.reno.set_window(bound);
            }
        }
        self.reno.on_ack(ack);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        let cwnd = self.reno.window();
        match ev.kind {
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                // relentless_ssthresh: ssthresh = max(cwnd, 2); the window is not cut
                // until the episode's losses are known (at its exit).
                self.cwnd_before = Some(cwnd);
                self.reno.set_ssthresh(cwnd.max(self.floor()));
                self.reno.set_window(cwnd);
            }
            CongestionKind::Timeout => {
                self.cwnd_before = None;
                match self.cfg.relentless.timeout {
                    RelentlessTimeout::Reno => self.reno.on_congestion_event(ev),
                    RelentlessTimeout::Hold => {
                        if !ev.repeated {
                            self.reno.set_ssthresh(cwnd.max(self.floor()));
                        }
                        let lw = self.cfg.params.loss_window(self.mss);
                        self.reno.set_window(lw);
                    }
                }
            }
        }
    }

    fn on_recovery_exit(&mut self, ex: &RecoveryExit) {
        // CA_EVENT_COMPLETE_CWR: cwnd_before minus what had to be resent.
        let before = self.cwnd_before.take().unwrap_or(self.reno.window());
        let lost = ex.retransmitted_segments.saturating_mul(self.mss);
        let w = before.saturating_sub(lost).max(self.floor());
        self.reno.set_ssthresh(w);
        self.reno.set_window(w);
    }

    fn on_event(&mut self, now: Instant, ev: CaEvent) {
        self.reno.on_event(now, ev);
    }

    super::window_methods!(in reno);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::time::{Duration, Instant};

    fn relentless() -> Relentless {
        Relentless::new(
            RelentlessConfig {
                params: WindowParams::rfc5681(2 * M),
                relentless: RelentlessParams::default(),
            },
            MSS,
        )
    }

    fn ack(bytes: u64) -> AckSample {
        ack_sample(Instant::ZERO, bytes, None, Duration::from_millis(100), MSS)
    }

    /// An ACK of one segment inside a recovery episode, `prior_in_flight` bytes out
    /// before it.
    fn recovery_ack(prior_in_flight: u64) -> AckSample {
        AckSample {
            in_recovery: true,
            prior_in_flight,
            ..ack(M)
        }
    }

    fn signal(kind: CongestionKind, in_flight: u64) -> CongestionEvent {
        congestion(kind, Instant::ZERO, in_flight, MSS)
    }

    fn exit(retransmitted_segments: u64) -> RecoveryExit {
        recovery_exit(retransmitted_segments, MSS)
    }

    /// A controller with cwnd = `segments` that then took a `kind` signal with that
    /// much in flight.
    fn signalled(kind: CongestionKind, segments: u64) -> Relentless {
        let mut r = relentless();
        r.set_window(segments * M);
        r.on_congestion_event(&signal(kind, segments * M));
        r
    }

    #[test]
    fn relentless_does_not_halve_on_loss_entry() {
        let r = signalled(CongestionKind::FastRetransmit, 20);
        assert_eq!(r.window(), 20 * M);
        assert_eq!(r.ssthresh(), 20 * M);
    }

    /// At the end of the episode cwnd = ssthresh = the window at entry less the segments
    /// lost, never below two segments; an ECN signal without losses leaves the window.
    #[test]
    fn relentless_reduces_cwnd_by_lost_segments_down_to_two() {
        for (kind, segments, lost, after) in [
            (CongestionKind::FastRetransmit, 20, 3, 17),
            (CongestionKind::FastRetransmit, 5, 9, 2),
            (CongestionKind::Ecn, 12, 0, 12),
        ] {
            let mut r = signalled(kind, segments);
            r.on_recovery_exit(&exit(lost));
            let case = format!("{kind:?} at {segments} segments, {lost} lost");
            assert_eq!(r.window(), after * M, "{case}");
            assert_eq!(r.ssthresh(), after * M, "{case}");
        }
    }

    #[test]
    fn relentless_reduction_uses_the_window_at_loss_entry() {
        let mut r = signalled(CongestionKind::FastRetransmit, 20);
        r.set_window(25 * M); // whatever happens to cwnd inside the episode
        r.on_recovery_exit(&exit(1));
        assert_eq!(r.window(), 19 * M);
    }

    #[test]
    fn after_recovery_grows_as_reno_in_congestion_avoidance() {
        let mut r = signalled(CongestionKind::FastRetransmit, 10);
        r.on_recovery_exit(&exit(1));
        assert_eq!(r.window(), 9 * M);
        for _ in 0..9 {
            r.on_ack(&ack(M));
        }
        assert_eq!(r.window(), 10 * M, "one SMSS per window acknowledged");
    }

    #[test]
    fn slow_start_is_reno_s() {
        let mut r = relentless();
        r.on_ack(&ack(M));
        assert_eq!(r.window(), 3 * M);
    }

    #[test]
    fn acks_during_recovery_do_not_grow_the_window() {
        let mut r = signalled(CongestionKind::FastRetransmit, 10);
        r.on_ack(&recovery_ack(12 * M));
        assert_eq!(r.window(), 10 * M);
    }

    #[test]
    fn recovery_conserves_packets_and_exit_still_subtracts_losses() {
        let mut r = signalled(CongestionKind::FastRetransmit, 20);
        // Three segments were lost: 17 remain in flight; an ACK SACKs one of them.
        r.on_ack(&recovery_ack(17 * M));
        assert_eq!(
            r.window(),
            17 * M,
            "cwnd <= in_flight + 1 segment (tcp_cwnd_down)"
        );
        r.on_recovery_exit(&exit(3));
        assert_eq!(r.window(), 17 * M);
        assert_eq!(r.ssthresh(), 17 * M);
    }

    #[test]
    fn timeout_defaults_to_reno() {
        let r = signalled(CongestionKind::Timeout, 20);
        assert_eq!(r.window(), M);
        assert_eq!(r.ssthresh(), 10 * M);
    }

    #[test]
    fn timeout_hold_keeps_ssthresh_at_the_window() {
        let mut r = relentless();
        r.cfg.relentless.timeout = RelentlessTimeout::Hold;
        r.set_window(20 * M);
        r.on_congestion_event(&signal(CongestionKind::Timeout, 20 * M));
        assert_eq!(r.window(), M);
        assert_eq!(r.ssthresh(), 20 * M);
        // A repeated timeout holds it (RFC 5681 §3.1).
        let mut again = signal(CongestionKind::Timeout, M);
        again.repeated = true;
        r.on_congestion_event(&again);
        assert_eq!(r.ssthresh(), 20 * M);
    }

    #[test]
    fn timeout_names_parse() {
        assert_eq!(
            "HOLD".parse::<RelentlessTimeout>(),
            Ok(RelentlessTimeout::Hold)
        );
        assert!("halve".parse::<RelentlessTimeout>().is_err());
    }
}
