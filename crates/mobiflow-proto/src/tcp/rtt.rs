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

use crate::time::Duration;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    base_rto: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    backoff: u32,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    max_backoff: u32,
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
            base_rto: initial_rto,
            min_rtt: None,
            latest: None,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            max_backoff,
        }
    }

    /// Take an RTT measurement (RFC 6298 §2.2–§2.3).
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
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
    pub fn rto(&self) -> Duration {
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
        self.base_rto = initial_rto;
        self.min_rtt = None;
        self.backoff = 0;
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
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // RTO = 100 + 4*50 = 300 ms
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_and_beta_one_quarter() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.on_sample(Duration::from_millis(200));
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5 ms; SRTT = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
    }

    #[test]
    fn rto_respects_the_minimum() {
        let mut e = est();
        e.on_sample(Duration::from_millis(10));
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn backoff_doubles_and_is_capped_by_max_rto() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100)); // 300 ms
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
        e.on_sample(Duration::from_millis(101)); // 101 + 202 = 303 -> 310 ms
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
            e.on_sample(Duration::from_millis(500));
        }
        // RTTVAR decays towards 0; RTO = SRTT + G.
        assert_eq!(e.rto(), Duration::from_millis(600));
    }
}
