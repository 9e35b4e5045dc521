//! Reno window rules: RFC 5681 §3.1 (slow start and congestion avoidance) and the
//! window settings of §3.1–§3.2 on loss and timeout.
//!
//! ```text
//!   cwnd < ssthresh ── slow start: cwnd += min(N, SMSS) per ACK      (RFC 5681 eq. 2)
//!   cwnd >= ssthresh ─ congestion avoidance: cwnd += SMSS*SMSS/cwnd   (RFC 5681 eq. 3)
//!   fast retransmit ── ssthresh = max(FlightSize/2, 2*SMSS)          (RFC 5681 eq. 4)
//!   timeout ────────── ssthresh as above, cwnd = loss window (1 SMSS)
//!   recovery exit ──── cwnd = ssthresh                               (RFC 6582 §3.2 step 3)
//! ```
//!
//! The same rules serve NewReno: RFC 6582 changes only the recovery, which lives in
//! the sender.

use super::{
    AckSample, CongestionController, CongestionEvent, CongestionKind, RecoveryExit, WindowParams,
};

#[derive(Clone, Debug)]
pub struct RenoConfig {
    pub params: WindowParams,
    /// Reported name ("reno" or "newreno").
    pub name: &'static str,
}

#[derive(Clone, Debug)]
pub struct Reno {
    cfg: RenoConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance not yet turned into window growth
    /// (RFC 5681 §3.1, the byte-counting form of eq. 3).
    ca_acked: u64,
}

impl Reno {
    pub fn new(cfg: RenoConfig, mss: u32) -> Self {
        Reno {
            mss: mss as u64,
            cwnd: cfg.params.initial_window,
            ssthresh: cfg.params.initial_ssthresh,
            ca_acked: 0,
            cfg,
        }
    }

    fn clamp(&mut self) {
        self.cwnd = self.cfg.params.clamp(self.cwnd, self.mss);
    }
}

/// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2*SMSS).
pub fn halve_flight(in_flight: u64, mss: u64) -> u64 {
    (in_flight / 2).max(2 * mss)
}

impl CongestionController for Reno {
    fn name(&self) -> &'static str {
        self.cfg.name
    }

    fn on_ack(&mut self, ack: &AckSample) {
        // No growth during recovery, or while cwnd is not what limits the sender
        // (RFC 7661 §4.3: application- or receiver-limited).
        if ack.in_recovery || ack.acked_bytes == 0 || ack.app_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1 eq. (2): cwnd += min(N, SMSS). With per-ACK counting
            // (ns-2), every ACK that advances the window adds one segment.
            let inc = if self.cfg.params.per_ack_counting {
                self.mss
            } else {
                ack.acked_bytes.min(self.mss)
            };
            self.cwnd += inc;
        } else if self.cfg.params.per_ack_counting {
            // RFC 5681 eq. (3), cwnd += SMSS*SMSS/cwnd per ACK, as ns-2's opencwnd()
            // does in floating point; the remainder is carried so nothing is lost.
            self.ca_acked += self.mss * self.mss;
            let inc = self.ca_acked / self.cwnd.max(1);
            self.ca_acked -= inc * self.cwnd.max(1);
            self.cwnd += inc;
        } else {
            // RFC 5681 §3.1: cwnd += SMSS once per cwnd bytes acknowledged.
            self.ca_acked += ack.acked_bytes;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
        self.clamp();
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if !ev.repeated {
            self.ssthresh = halve_flight(ev.in_flight, self.mss);
            if self.cfg.params.per_ack_counting {
                // ns-2 `TcpAgent::slowdown`: `ssthresh_ = (int) halfwin`, whole packets.
                self.ssthresh = (self.ssthresh / self.mss * self.mss).max(2 * self.mss);
            }
        }
        self.ca_acked = 0;
        match ev.kind {
            CongestionKind::Timeout => {
                // RFC 5681 §3.1: cwnd = loss window.
                self.cwnd = self.cfg.params.loss_window(self.mss);
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                // The sender inflates the window itself during fast recovery
                // (RFC 6582 §3.2 step 2); outside recovery, cwnd = ssthresh.
                self.cwnd = self.ssthresh;
            }
        }
        self.clamp();
    }

    fn on_recovery_exit(&mut self, _ex: &RecoveryExit) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = ssthresh.
        self.cwnd = self.ssthresh;
        self.clamp();
    }

    fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
        self.ssthresh = ssthresh_bytes.max(2 * self.mss);
    }

    fn set_window(&mut self, cwnd_bytes: u64) {
        self.cwnd = cwnd_bytes;
        self.clamp();
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::time::{Duration, Instant};

    const MSS: u32 = 1000;

    fn reno() -> Reno {
        Reno::new(
            RenoConfig {
                params: WindowParams::rfc5681(2 * MSS as u64),
                name: "reno",
            },
            MSS,
        )
    }

    fn ack(bytes: u64) -> AckSample {
        ack_sample(Instant::ZERO, bytes, None, Duration::from_millis(100), MSS)
    }

    fn loss(kind: CongestionKind, in_flight: u64) -> CongestionEvent {
        congestion(kind, Instant::ZERO, in_flight, MSS)
    }

    #[test]
    fn slow_start_grows_one_mss_per_ack_of_a_full_segment() {
        let mut r = reno();
        r.on_ack(&ack(1000));
        assert_eq!(r.window(), 3000);
        r.on_ack(&ack(2000)); // a stretch ACK still adds at most one SMSS (eq. 2)
        assert_eq!(r.window(), 4000);
    }

    #[test]
    fn slow_start_adds_only_the_bytes_of_a_small_ack() {
        let mut r = reno();
        r.on_ack(&ack(100));
        assert_eq!(r.window(), 2100);
    }

    #[test]
    fn congestion_avoidance_grows_one_mss_per_window_acked() {
        let mut r = reno();
        r.set_window(10_000);
        r.set_ssthresh(5_000);
        for _ in 0..9 {
            r.on_ack(&ack(1000));
        }
        assert_eq!(r.window(), 10_000);
        r.on_ack(&ack(1000));
        assert_eq!(r.window(), 11_000);
    }

    #[test]
    fn fast_retransmit_halves_flight_size() {
        let mut r = reno();
        r.set_window(20_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 20_000));
        assert_eq!(r.ssthresh(), 10_000);
        assert_eq!(r.window(), 10_000);
    }

    /// ns-2 `TcpAgent::slowdown`: `ssthresh_` is an int, so half of 53.5 packets is
    /// 26, not 26.75 (the upload of the `asym_updown` twin at its first timeout).
    #[test]
    fn per_ack_counting_truncates_ssthresh_to_whole_segments() {
        let mut r = reno();
        r.cfg.params.per_ack_counting = true;
        r.on_congestion_event(&loss(CongestionKind::Timeout, 53_500));
        assert_eq!(r.ssthresh(), 26_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 53_500));
        assert_eq!(r.ssthresh(), 26_000);
        let mut bytes = reno();
        bytes.on_congestion_event(&loss(CongestionKind::Timeout, 53_500));
        assert_eq!(bytes.ssthresh(), 26_750);
    }

    #[test]
    fn ssthresh_never_falls_below_two_segments() {
        let mut r = reno();
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 1_000));
        assert_eq!(r.ssthresh(), 2_000);
    }

    #[test]
    fn timeout_collapses_cwnd_to_the_loss_window() {
        let mut r = reno();
        r.set_window(20_000);
        r.on_congestion_event(&loss(CongestionKind::Timeout, 20_000));
        assert_eq!(r.window(), 1_000);
        assert_eq!(r.ssthresh(), 10_000);
    }

    #[test]
    fn repeated_timeout_uses_the_flight_size_not_cwnd() {
        let mut r = reno();
        r.set_window(20_000);
        r.on_congestion_event(&loss(CongestionKind::Timeout, 20_000));
        // RFC 5681 §3.1: on a second timeout the flight is small, so ssthresh drops
        // towards 2*SMSS rather than staying put.
        r.on_congestion_event(&loss(CongestionKind::Timeout, 1_000));
        assert_eq!(r.ssthresh(), 2_000);
    }

    #[test]
    fn a_repeated_timeout_holds_ssthresh() {
        let mut r = reno();
        r.set_window(20_000);
        r.on_congestion_event(&loss(CongestionKind::Timeout, 20_000));
        let mut again = loss(CongestionKind::Timeout, 1_000);
        again.repeated = true;
        r.on_congestion_event(&again);
        assert_eq!(
            r.ssthresh(),
            10_000,
            "RFC 5681 §3.1: ssthresh held constant"
        );
        assert_eq!(r.window(), 1_000);
    }

    #[test]
    fn acks_during_recovery_do_not_grow_the_window() {
        let mut r = reno();
        let mut a = ack(1000);
        a.in_recovery = true;
        r.on_ack(&a);
        assert_eq!(r.window(), 2000);
    }

    #[test]
    fn per_ack_counting_adds_a_segment_per_ack_in_slow_start() {
        let mut r = reno();
        r.cfg.params.per_ack_counting = true;
        r.on_ack(&ack(100));
        assert_eq!(r.window(), 3000);
    }

    #[test]
    fn recovery_exit_deflates_to_ssthresh() {
        let mut r = reno();
        r.set_window(20_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 20_000));
        r.set_window(15_000); // inflated by the sender during recovery
        r.on_recovery_exit(&RecoveryExit {
            now: Instant::ZERO,
            in_flight: 9_000,
            retransmitted_segments: 1,
            mss: MSS,
        });
        assert_eq!(r.window(), 10_000);
    }
}
