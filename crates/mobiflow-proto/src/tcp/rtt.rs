//! Round-trip time estimation and the retransmission timeout, RFC 6298.
//!
//! ```text
//!   first sample R:   SRTT = R, RTTVAR = R/2                        (§2.2)
//!   later samples:    RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|          (§2.3, beta = 1/4)
//!                     SRTT   = 7/8 SRTT + 1/8 R'                     (alpha = 1/8)
//!   RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto]   (§2.3, §2.4, §2.5)
//!   on expiry: RTO doubles (backoff), up to max_rto                 (§5.5)
//! ```
//!
//! Karn's rule (§3: no samples from retransmitted segments) is applied by the caller,
//! which alone knows whether a segment was retransmitted.
//!
//! [`RtoFormula::Linux`] replaces the formula by the kernel's (`tcp_rtt_estimator`,
//! `tcp_set_rto`, `__tcp_set_rto` in net/ipv4/tcp_input.c and include/net/tcp.h):
//!
//! ```text
//!   first sample R:   SRTT = R, mdev = R/2, rttvar = max(4 mdev, rto_min)
//!   later samples:    err = R - SRTT;  SRTT += err/8
//!                     mdev += (|err| - mdev)/4, but when the RTT falls (err < 0) and
//!                       |err| > mdev only (|err| - mdev)/32 (the "Eifel-like" finer gain)
//!                     mdev_max = the largest 4 mdev seen in this RTT; rttvar rises to it
//!                       at once
//!                     once per RTT (SND.UNA passes rtt_seq, then rtt_seq = SND.NXT):
//!                       rttvar -= (rttvar - mdev_max)/4 if mdev_max < rttvar,
//!                       mdev_max = rto_min
//!   RTO = SRTT + rttvar, at most max_rto (tcp_bound_rto): rto_min enters only through
//!         rttvar, so RTO >= SRTT + rto_min ("SRTT + max(4 mdev, rto_min)")
//! ```
//!
//! The arithmetic is the kernel's fixed point (SRTT scaled by 8, mdev by 4), in
//! nanoseconds rather than microseconds; the RTO is then rounded up to a jiffy
//! (`usecs_to_jiffies`, 4 ms at the default HZ = 250: `tcp::jiffies`), and the sender
//! runs the timer on the kernel's timer wheel (`jiffies::wheel_expiry`).

use crate::time::Duration;

crate::named_enum! {
    /// How the RTO is computed from the RTT samples.
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum RtoFormula ("rto_formula", ignoring "-_ ") {
        /// RFC 6298 §2: RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto].
        Rfc6298 = "rfc6298",
        /// Linux's `tcp_rtt_estimator` + `__tcp_set_rto` (see the module documentation),
        /// in jiffies, with the retransmission timer (and the loss probe's) run by the
        /// timer wheel as the kernel runs `icsk_retransmit_timer` (`tcp::jiffies`).
        Linux = "linux",
    }
}

/// The kernel's estimator state (`srtt_us`, `mdev_us`, `mdev_max_us`, `rttvar_us`,
/// `rtt_seq` of `struct tcp_sock`), in nanoseconds, with the kernel's scaling.
#[derive(Clone, Debug, Default)]
struct LinuxState {
    /// 8 × SRTT.
    srtt8: i64,
    /// 4 × mdev.
    mdev4: i64,
    mdev_max: i64,
    rttvar: i64,
    rtt_seq: u64,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// The RTO before backoff, never above `max_rto` (each write clamps it, so that
    /// `rto`, asked on every ACK of new data, need not).
    base_rto: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    max_backoff: u32,
    formula: RtoFormula,
    linux: LinuxState,
}

impl RttEstimator {
    pub fn new(
        initial_rto: Duration,
        min_rto: Duration,
        max_rto: Duration,
        granularity: Duration,
        max_backoff: u32,
    ) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            base_rto: initial_rto.min(max_rto),
            min_rtt: None,
            latest: None,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            max_backoff,
            formula: RtoFormula::Rfc6298,
            linux: LinuxState::default(),
        }
    }

    /// The same estimator computing its RTO with `formula`.
    pub fn with_formula(mut self, formula: RtoFormula) -> Self {
        self.formula = formula;
        self
    }

    /// Take an RTT measurement (RFC 6298 §2.2–§2.3, or Linux's `tcp_rtt_estimator`).
    /// `snd_una` and `snd_nxt` are the sender's when the sample is taken: Linux's
    /// formula updates `rttvar` once per RTT, when `snd_una` passes the `snd_nxt` of
    /// the last such update (`rtt_seq`).
    pub fn on_sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        if self.formula == RtoFormula::Linux {
            self.linux_sample(r, snd_una, snd_nxt);
            return;
        }
        match self.srtt {
            None => {
                // §2.2: the first measurement.
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // §2.3: RTTVAR before SRTT, with the old SRTT.
                let diff = if srtt > r { srtt - r } else { r - srtt };
                self.rttvar =
                    Duration::from_nanos((3 * self.rttvar.as_nanos()) / 4 + diff.as_nanos() / 4);
                self.srtt = Some(Duration::from_nanos(
                    (7 * srtt.as_nanos()) / 8 + r.as_nanos() / 8,
                ));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var_term = (self.rttvar * 4).max(self.granularity);
        self.base_rto = self.round_to_granularity(srtt + var_term);
        // §5.7 is the caller's; a new sample after backoff keeps the backoff until new
        // data is acknowledged (§5.5 note), which the caller signals by reset_backoff.
    }

    /// Linux's `tcp_rtt_estimator` then `tcp_set_rto` (the module documentation).
    fn linux_sample(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        let l = &mut self.linux;
        let rto_min = self.min_rto.as_nanos() as i64;
        let mut m = r.as_nanos() as i64;
        if self.srtt.is_some() {
            m -= l.srtt8 >> 3; // the error of the estimate
            l.srtt8 += m; // SRTT = 7/8 SRTT + 1/8 R
            if m < 0 {
                // The RTT fell: a finer gain (1/32) for a growing mdev.
                m = -m - (l.mdev4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= l.mdev4 >> 2;
            }
            l.mdev4 += m; // mdev = 3/4 mdev + 1/4 |err|
            if l.mdev4 > l.mdev_max {
                l.mdev_max = l.mdev4;
                l.rttvar = l.rttvar.max(l.mdev_max);
            }
            if snd_una > l.rtt_seq {
                // One RTT has passed: let rttvar decay towards this RTT's largest mdev.
                if l.mdev_max < l.rttvar {
                    l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
                }
                l.rtt_seq = snd_nxt;
                l.mdev_max = rto_min;
            }
        } else {
            // The first measurement: RTO = 3 R (or R + rto_min).
            l.srtt8 = m << 3;
            l.mdev4 = m << 1;
            l.rttvar = l.mdev4.max(rto_min);
            l.mdev_max = l.rttvar;
            l.rtt_seq = snd_nxt;
        }
        l.srtt8 = l.srtt8.max(1);
        let srtt = Duration::from_nanos((l.srtt8 >> 3) as u64);
        self.srtt = Some(srtt);
        self.rttvar = Duration::from_nanos((l.rttvar / 4) as u64);
        // __tcp_set_rto: SRTT + rttvar in whole jiffies (`usecs_to_jiffies` rounds up);
        // tcp_bound_rto: at most the maximum.
        let rto = super::jiffies::round_up(srtt + Duration::from_nanos(l.rttvar as u64));
        self.base_rto = rto.min(self.max_rto);
    }

    fn round_to_granularity(&self, d: Duration) -> Duration {
        let g = self.granularity.as_nanos();
        let d = if g > 1 {
            Duration::from_nanos(d.as_nanos().div_ceil(g) * g)
        } else {
            d
        };
        d.max(self.min_rto).min(self.max_rto)
    }

    /// The current retransmission timeout, including backoff (§5.5).
    #[inline]
    pub fn rto(&self) -> Duration {
        if self.backoff == 0 {
            // Nearly every call (the timer is restarted on each ACK of new data):
            // no multiplication.
            return self.base_rto;
        }
        let shift = self.backoff.min(self.max_backoff).min(32);
        self.base_rto
            .saturating_mul(1u64 << shift)
            .min(self.max_rto)
    }

    /// The timer expired: back off (§5.5).
    pub fn backoff(&mut self) {
        if self.backoff < self.max_backoff {
            self.backoff += 1;
        }
    }

    /// New data was acknowledged: the backoff ends.
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Forget the path's RTT (e.g. after a handoff to a different path).
    pub fn reset(&mut self, initial_rto: Duration) {
        self.srtt = None;
        self.rttvar = Duration::ZERO;
        self.base_rto = initial_rto.min(self.max_rto);
        self.min_rtt = None;
        self.backoff = 0;
        self.linux = LinuxState::default();
    }

    pub fn backoff_exponent(&self) -> u32 {
        self.backoff
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl RttEstimator {
        fn on_sample_ms(&mut self, ms: u64) {
            self.on_sample(Duration::from_millis(ms), 0, 0);
        }
    }

    /// An initial RTO above the maximum is the maximum, before and after backoff and
    /// after a reset: `base_rto` is stored clamped, and `rto` no longer clamps it.
    #[test]
    fn an_initial_rto_above_the_maximum_is_the_maximum() {
        let max = Duration::from_secs(2);
        let mut e = RttEstimator::new(
            Duration::from_secs(3),
            Duration::from_millis(200),
            max,
            Duration::from_millis(1),
            6,
        );
        assert_eq!(e.rto(), max);
        e.backoff();
        assert_eq!(e.rto(), max);
        e.reset(Duration::from_secs(5));
        assert_eq!(e.rto(), max);
        e.reset(Duration::from_millis(500));
        e.backoff();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.backoff();
        assert_eq!(e.rto(), max);
    }

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
            Duration::from_millis(1),
            6,
        )
    }

    #[test]
    fn rto_is_initial_before_any_sample() {
        assert_eq!(est().rto(), Duration::from_secs(1));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = est();
        e.on_sample_ms(100);
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // RTO = 100 + 4*50 = 300 ms
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_and_beta_one_quarter() {
        let mut e = est();
        e.on_sample_ms(100);
        e.on_sample_ms(200);
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5 ms; SRTT = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
    }

    #[test]
    fn rto_respects_the_minimum() {
        let mut e = est();
        e.on_sample_ms(10);
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn backoff_doubles_and_is_capped_by_max_rto() {
        let mut e = est();
        e.on_sample_ms(100); // 300 ms
        e.backoff();
        assert_eq!(e.rto(), Duration::from_millis(600));
        e.backoff();
        assert_eq!(e.rto(), Duration::from_millis(1200));
        for _ in 0..10 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_millis(300 * 64)); // max_backoff = 6
        e.reset_backoff();
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn rto_rounds_up_to_the_clock_granularity() {
        let mut e = RttEstimator::new(
            Duration::from_secs(3),
            Duration::from_millis(200),
            Duration::from_secs(60),
            Duration::from_millis(10),
            6,
        );
        e.on_sample_ms(101); // 101 + 202 = 303 -> 310 ms
        assert_eq!(e.rto(), Duration::from_millis(310));
    }

    #[test]
    fn granularity_floors_the_variance_term() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::from_secs(60),
            Duration::from_millis(100),
            6,
        );
        for _ in 0..50 {
            e.on_sample_ms(500);
        }
        // RTTVAR decays towards 0; RTO = SRTT + G.
        assert_eq!(e.rto(), Duration::from_millis(600));
    }

    fn linux_est() -> RttEstimator {
        est().with_formula(RtoFormula::Linux)
    }

    fn at(e: &mut RttEstimator, ms: u64, una: u64, nxt: u64) {
        e.on_sample(Duration::from_millis(ms), una, nxt);
    }

    /// Linux `tcp_rtt_estimator` (first sample) and `__tcp_set_rto`: rttvar starts at
    /// max(2 R, rto_min), so RTO = R + max(2 R, rto_min), never rto_min alone.
    #[test]
    fn linux_first_rto_is_srtt_plus_at_least_rto_min() {
        let mut e = linux_est();
        at(&mut e, 50, 0, 10);
        // RFC 6298: 50 + 4 × 25 = 150, raised to rto_min = 200 ms. Linux: 250 ms,
        // in whole jiffies of 4 ms (`usecs_to_jiffies` rounds up): 63 jiffies.
        assert_eq!(e.rto(), Duration::from_millis(252));
        let mut e = linux_est();
        at(&mut e, 400, 0, 10);
        assert_eq!(e.rto(), Duration::from_millis(1200));
    }

    /// Linux `tcp_rtt_estimator`: with a steady RTT, mdev decays but rttvar never
    /// falls below rto_min, so the RTO settles at SRTT + 200 ms (RFC 6298: at rto_min).
    #[test]
    fn linux_rto_settles_at_srtt_plus_rto_min() {
        let mut e = linux_est();
        for k in 0..100u64 {
            at(&mut e, 100, 10 * k + 1, 10 * k + 11);
        }
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rto(), Duration::from_millis(300));
        let mut r = est();
        for _ in 0..100 {
            r.on_sample_ms(100);
        }
        assert_eq!(r.rto(), Duration::from_millis(200));
    }

    /// Linux `tcp_rtt_estimator`: rttvar follows mdev down only once per RTT (when
    /// SND.UNA passes rtt_seq), by a quarter of the way to the RTT's largest mdev.
    #[test]
    fn linux_rttvar_decays_once_per_rtt() {
        let mut e = linux_est();
        at(&mut e, 400, 0, 10); // rttvar = 800 ms, RTO = 1200 ms, rtt_seq = 10
        for _ in 0..3 {
            at(&mut e, 400, 5, 10); // the same RTT: rttvar holds
        }
        assert_eq!(e.rto(), Duration::from_millis(1200));
        at(&mut e, 400, 11, 20); // new RTT; mdev_max (800) is not below rttvar
        assert_eq!(e.rto(), Duration::from_millis(1200));
        at(&mut e, 400, 21, 30); // mdev_max = rto_min: 800 - (800 - 200) / 4 = 650
        assert_eq!(
            e.rto(),
            Duration::from_millis(1052),
            "1050 ms in whole jiffies"
        );
    }

    /// Linux `tcp_rtt_estimator`: a falling RTT raises mdev with gain 1/32 instead
    /// of 1/4 (a rising one with 1/4).
    #[test]
    fn linux_falling_rtt_raises_mdev_with_a_finer_gain() {
        let mut e = linux_est();
        at(&mut e, 100, 0, 10); // mdev4 = 200 ms
        at(&mut e, 20, 0, 10); // err -80: mdev4 += (80 - 50) / 8
        assert_eq!(e.srtt(), Some(Duration::from_millis(90)));
        // 293.75 ms, in whole jiffies of 4 ms.
        assert_eq!(e.rto(), Duration::from_millis(296));
        let mut e = linux_est();
        at(&mut e, 100, 0, 10);
        at(&mut e, 180, 0, 10); // err +80: mdev4 += 80 - 50
        assert_eq!(e.rto(), Duration::from_millis(110 + 230));
    }

    #[test]
    fn linux_rto_is_capped_by_max_rto() {
        let mut e = linux_est();
        at(&mut e, 30_000, 0, 10);
        assert_eq!(e.rto(), Duration::from_secs(60));
    }
}
