//! Reno window rules: RFC 5681 §3.1 (slow start and congestion avoidance) and the
//! window settings of §3.1–§3.2 on loss and timeout.
//!
//! ```text
//!   cwnd < ssthresh ── slow start: cwnd += min(N, SMSS) per ACK      (RFC 5681 eq. 2)
//!   cwnd >= ssthresh ─ congestion avoidance: cwnd += SMSS*SMSS/cwnd   (RFC 5681 eq. 3)
//!   fast retransmit ── ssthresh = max(FlightSize/2, 2*SMSS)          (RFC 5681 eq. 4)
//!   (window_counting = "segments", Linux `tcp_reno_cong_avoid`: slow start adds
//!   every segment delivered, congestion avoidance one per cwnd segments delivered,
//!   ssthresh = max(cwnd/2, 2) segments, `tcp_reno_ssthresh`)
//!   timeout ────────── ssthresh as above, cwnd = loss window (1 SMSS)
//!   recovery exit ──── cwnd = ssthresh                               (RFC 6582 §3.2 step 3)
//!   spurious signal ── cwnd = max(cwnd, prior cwnd), ssthresh = max(ssthresh, prior)
//!                      (Linux `tcp_reno_undo_cwnd`, `tcp_undo_cwnd_reduction`)
//! ```
//!
//! The same rules serve NewReno: RFC 6582 changes only the recovery, which lives in
//! the sender.

use super::{
    AckSample, CongestionController, CongestionEvent, CongestionKind, Counting, RecoveryExit,
    Window, WindowParams,
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
    win: Window,
    /// What congestion avoidance has counted but not yet turned into window growth:
    /// bytes acknowledged (RFC 5681 §3.1, the byte-counting form of eq. 3), the
    /// remainder of SMSS² / cwnd steps (ns-2), or segments delivered (Linux's
    /// `snd_cwnd_cnt`).
    ca_acked: u64,
    /// cwnd and ssthresh before the last reduction, for an undo (Linux `prior_cwnd`,
    /// `prior_ssthresh`).
    prior: Option<(u64, u64)>,
}

impl Reno {
    pub fn new(cfg: RenoConfig, mss: u32) -> Self {
        Reno {
            win: Window::new(&cfg.params, mss as u64),
            ca_acked: 0,
            prior: None,
            cfg,
        }
    }

    fn clamp(&mut self) {
        self.win.clamp(&self.cfg.params);
    }

    /// RFC 5681 §3.1 outside recovery, on an ACK of `acked_bytes`: no growth while
    /// cwnd is not what limits the sender (`app_limited`, RFC 7661 §4.3: application-
    /// or receiver-limited). The sender's steady state calls it directly
    /// (`Controller::on_ack_with`).
    #[inline(always)]
    pub fn grow(&mut self, acked_bytes: u64, app_limited: bool) {
        if acked_bytes == 0 || app_limited {
            return;
        }
        if self.cfg.params.counting == Counting::Segments {
            self.segments_on_ack(acked_bytes);
        } else if self.win.cwnd < self.win.ssthresh {
            // RFC 5681 §3.1 eq. (2): cwnd += min(N, SMSS). With per-ACK counting
            // (ns-2), every ACK that advances the window adds one segment.
            let inc = if self.cfg.params.counting == Counting::PerAck {
                self.win.mss
            } else {
                acked_bytes.min(self.win.mss)
            };
            self.win.cwnd += inc;
        } else if self.cfg.params.counting == Counting::PerAck {
            // RFC 5681 eq. (3), cwnd += SMSS*SMSS/cwnd per ACK, as ns-2's opencwnd()
            // does in floating point; the remainder is carried so nothing is lost.
            self.ca_acked += self.win.mss * self.win.mss;
            let inc = self.ca_acked / self.win.cwnd.max(1);
            self.ca_acked -= inc * self.win.cwnd.max(1);
            self.win.cwnd += inc;
        } else {
            // RFC 5681 §3.1: cwnd += SMSS once per cwnd bytes acknowledged.
            self.ca_acked += acked_bytes;
            if self.ca_acked >= self.win.cwnd {
                self.ca_acked -= self.win.cwnd;
                self.win.cwnd += self.win.mss;
            }
        }
        self.clamp();
    }

    /// Linux `tcp_reno_cong_avoid` in whole segments: `tcp_slow_start` (cwnd +=
    /// segments delivered, up to ssthresh), then `tcp_cong_avoid_ai` with w = cwnd for
    /// what is left of the ACK.
    fn segments_on_ack(&mut self, acked_bytes: u64) {
        let mss = self.win.mss;
        // A short segment counts as one (`tcp_skb_pcount`).
        let mut acked = acked_bytes.div_ceil(mss);
        let mut cwnd = self.win.cwnd / mss;
        let ssthresh = self.win.ssthresh / mss;
        if cwnd < ssthresh {
            let grown = (cwnd + acked).min(ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
        }
        if acked > 0 {
            let w = cwnd.max(1);
            if self.ca_acked >= w {
                self.ca_acked = 0;
                cwnd += 1;
            }
            self.ca_acked += acked;
            if self.ca_acked >= w {
                let delta = self.ca_acked / w;
                self.ca_acked -= delta * w;
                cwnd += delta;
            }
        }
        self.win.cwnd = cwnd * mss;
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
        // No growth during recovery.
        if ack.in_recovery {
            return;
        }
        self.grow(ack.acked_bytes, ack.app_limited);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if !ev.repeated {
            // Linux `tcp_init_cwnd_reduction` / `tcp_enter_loss`: `prior_cwnd = cwnd`,
            // `prior_ssthresh = tcp_current_ssthresh()` = max(ssthresh, 3/4 cwnd).
            let c = self.win.cwnd;
            self.prior = Some((c, self.win.ssthresh.max((c >> 1) + (c >> 2))));
            let mss = self.win.mss;
            self.win.ssthresh = match self.cfg.params.counting {
                Counting::Bytes => halve_flight(ev.in_flight, mss),
                // ns-2 `TcpAgent::slowdown`: `ssthresh_ = (int) halfwin`, whole packets.
                Counting::PerAck => (halve_flight(ev.in_flight, mss) / mss * mss).max(2 * mss),
                // Linux `tcp_reno_ssthresh`: max(snd_cwnd >> 1, 2), from cwnd, not
                // from what is in flight.
                Counting::Segments => (c / mss / 2).max(2) * mss,
            };
        }
        self.ca_acked = 0;
        match ev.kind {
            CongestionKind::Timeout => {
                // RFC 5681 §3.1: cwnd = loss window.
                self.win.cwnd = self.cfg.params.loss_window(self.win.mss);
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                // The sender inflates the window itself during fast recovery
                // (RFC 6582 §3.2 step 2); outside recovery, cwnd = ssthresh.
                self.win.cwnd = self.win.ssthresh;
            }
        }
        self.clamp();
    }

    fn on_recovery_exit(&mut self, _ex: &RecoveryExit) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = ssthresh.
        self.win.cwnd = self.win.ssthresh;
        self.clamp();
    }

    fn on_spurious_congestion(&mut self) {
        // Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`: cwnd = max(cwnd,
        // prior_cwnd); ssthresh = prior_ssthresh if higher.
        if let Some((cwnd, ssthresh)) = self.prior.take() {
            self.win.cwnd = self.win.cwnd.max(cwnd);
            self.win.ssthresh = self.win.ssthresh.max(ssthresh);
            self.clamp();
        }
    }

    fn set_window(&mut self, cwnd_bytes: u64) {
        self.win.set_cwnd(cwnd_bytes, &self.cfg.params);
    }

    super::window_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::time::{Duration, Instant};

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

    /// A controller with cwnd = `bytes` that then took a `kind` signal with that much
    /// in flight.
    fn after_loss(kind: CongestionKind, bytes: u64) -> Reno {
        let mut r = reno();
        r.set_window(bytes);
        r.on_congestion_event(&loss(kind, bytes));
        r
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

    /// RFC 5681 §3.1 (bytes) and Linux `tcp_cong_avoid_ai` with w = cwnd (segments):
    /// one segment per window acknowledged; counting segments, a stretch ACK may add
    /// more than one.
    #[test]
    fn congestion_avoidance_grows_one_mss_per_window_acked() {
        for counting in [Counting::Bytes, Counting::Segments] {
            let mut r = reno();
            r.cfg.params.counting = counting;
            r.set_window(10_000);
            r.set_ssthresh(5_000);
            for _ in 0..9 {
                r.on_ack(&ack(1000));
            }
            assert_eq!(r.window(), 10_000, "{counting:?}");
            r.on_ack(&ack(1000));
            assert_eq!(r.window(), 11_000, "{counting:?}");
        }
        let mut r = linux_reno();
        r.set_window(5_000);
        r.set_ssthresh(5_000);
        r.on_ack(&ack(10_000)); // ten segments at w = 5: two more
        assert_eq!(r.window(), 7_000);
    }

    /// RFC 5681 §3.2 and §3.1: ssthresh is half the flight either way; cwnd is ssthresh
    /// after a fast retransmit and the loss window (one segment) after a timeout.
    #[test]
    fn a_loss_halves_the_flight_size_and_a_timeout_collapses_cwnd() {
        for (kind, cwnd) in [
            (CongestionKind::FastRetransmit, 10_000),
            (CongestionKind::Timeout, 1_000),
        ] {
            let r = after_loss(kind, 20_000);
            assert_eq!(r.ssthresh(), 10_000, "{kind:?}");
            assert_eq!(r.window(), cwnd, "{kind:?}");
        }
    }

    /// ns-2 `TcpAgent::slowdown`: `ssthresh_` is an int, so half of 53.5 packets is
    /// 26, not 26.75 (the upload of the `asym_updown` twin at its first timeout).
    #[test]
    fn per_ack_counting_truncates_ssthresh_to_whole_segments() {
        let mut r = reno();
        r.cfg.params.counting = Counting::PerAck;
        r.on_congestion_event(&loss(CongestionKind::Timeout, 53_500));
        assert_eq!(r.ssthresh(), 26_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 53_500));
        assert_eq!(r.ssthresh(), 26_000);
        let mut bytes = reno();
        bytes.on_congestion_event(&loss(CongestionKind::Timeout, 53_500));
        assert_eq!(bytes.ssthresh(), 26_750);
    }

    fn linux_reno() -> Reno {
        let mut r = reno();
        r.cfg.params.counting = Counting::Segments;
        r
    }

    /// Linux `tcp_slow_start`: a delayed ACK of two segments adds two, so the window
    /// doubles each round trip whatever the ACK ratio (RFC 5681's eq. 2 adds one);
    /// a short segment counts as one (`tcp_skb_pcount`).
    #[test]
    fn segment_counting_slow_start_adds_every_segment_delivered() {
        let mut r = linux_reno();
        r.on_ack(&ack(2000));
        assert_eq!(r.window(), 4000);
        r.on_ack(&ack(100));
        assert_eq!(r.window(), 5000);
        // Up to ssthresh; the rest of the ACK is congestion avoidance's.
        r.set_ssthresh(6000);
        r.on_ack(&ack(3000));
        assert_eq!(r.window(), 6000);
    }

    /// Linux `tcp_reno_ssthresh`: half of cwnd in whole segments, not half of what is
    /// in flight.
    #[test]
    fn segment_counting_halves_cwnd_not_flight() {
        let mut r = linux_reno();
        r.set_window(21_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 30_000));
        assert_eq!(r.ssthresh(), 10_000);
        let mut small = linux_reno();
        small.set_window(3_000);
        small.on_congestion_event(&loss(CongestionKind::Timeout, 3_000));
        assert_eq!(small.ssthresh(), 2_000);
        assert_eq!(small.window(), 1_000);
    }

    #[test]
    fn ssthresh_never_falls_below_two_segments() {
        let mut r = reno();
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 1_000));
        assert_eq!(r.ssthresh(), 2_000);
    }

    #[test]
    fn repeated_timeout_uses_the_flight_size_not_cwnd() {
        let mut r = after_loss(CongestionKind::Timeout, 20_000);
        // RFC 5681 §3.1: on a second timeout the flight is small, so ssthresh drops
        // towards 2*SMSS rather than staying put.
        r.on_congestion_event(&loss(CongestionKind::Timeout, 1_000));
        assert_eq!(r.ssthresh(), 2_000);
    }

    #[test]
    fn a_repeated_timeout_holds_ssthresh() {
        let mut r = after_loss(CongestionKind::Timeout, 20_000);
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
        r.cfg.params.counting = Counting::PerAck;
        r.on_ack(&ack(100));
        assert_eq!(r.window(), 3000);
    }

    #[test]
    fn recovery_exit_deflates_to_ssthresh() {
        let mut r = after_loss(CongestionKind::FastRetransmit, 20_000);
        r.set_window(15_000); // inflated by the sender during recovery
        r.on_recovery_exit(&RecoveryExit {
            in_flight: 9_000,
            ..recovery_exit(1, MSS)
        });
        assert_eq!(r.window(), 10_000);
    }

    #[test]
    fn a_spurious_reduction_is_undone_as_linux_reno_undo_cwnd() {
        // Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`: cwnd back to
        // max(cwnd, prior_cwnd), ssthresh back to prior_ssthresh = max(ssthresh, 3/4
        // cwnd) when that is higher; used once.
        for kind in [CongestionKind::FastRetransmit, CongestionKind::Timeout] {
            let mut r = after_loss(kind, 20_000);
            assert!(r.window() < 20_000);
            r.on_spurious_congestion();
            assert_eq!((r.window(), r.ssthresh()), (20_000, u64::MAX), "{kind:?}");
        }
        let mut r = reno();
        r.set_window(20_000);
        r.set_ssthresh(8_000);
        r.on_congestion_event(&loss(CongestionKind::FastRetransmit, 20_000));
        r.on_spurious_congestion();
        assert_eq!((r.window(), r.ssthresh()), (20_000, 15_000));
        r.on_congestion_event(&loss(CongestionKind::Timeout, 20_000));
        r.on_ack(&ack(1000));
        r.on_spurious_congestion();
        r.on_spurious_congestion();
        assert_eq!(r.window(), 20_000);
    }
}
