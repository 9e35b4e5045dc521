//! [`Controller`]: the congestion controller a sender owns, with the common ones held
//! by value.
//!
//! The sender calls its controller three or four times per packet (`on_sent`,
//! `window`, `on_ack`). Through a `Box<dyn CongestionController>` each is an indirect
//! call the compiler cannot inline. With Reno and RFC 9438 CUBIC, the controllers of
//! most scenarios, named by an enum, the call is a match on its tag and a direct call
//! the compiler may inline. Every other controller, and one a caller built itself,
//! stays a trait object. Each is still boxed: Reno held inline made a flow's endpoints
//! 32 bytes larger than the per-flow memory goal allows (`memory_tests` in the
//! simulator's engine), for no fewer instructions than the box's one load.

use super::{
    AckSample, CaEvent, CaState, CcMetrics, CongestionController, CongestionEvent, Cubic,
    RateSample, RecoveryExit, Reno,
};
use crate::time::Instant;

/// A congestion controller: Reno or CUBIC (RFC 9438) by type, any other as a trait
/// object.
#[derive(Debug)]
pub enum Controller {
    Reno(Box<Reno>),
    Cubic(Box<Cubic>),
    Boxed(Box<dyn CongestionController>),
}

/// `$body` with `$c` bound to the controller inside `$self`, whatever its variant.
macro_rules! dispatch {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            Controller::Reno($c) => $body,
            Controller::Cubic($c) => $body,
            Controller::Boxed($c) => $body,
        }
    };
}

impl Controller {
    /// `on_ack` for an ACK outside recovery whose sample `sample` builds: Reno, which
    /// reads only the bytes acknowledged and whether the sender was limited, is not
    /// handed one (the sender's steady state builds none on each ACK).
    #[inline(always)]
    pub fn on_ack_with(
        &mut self,
        acked_bytes: u64,
        app_limited: bool,
        sample: impl FnOnce() -> AckSample,
    ) {
        match self {
            Controller::Reno(c) => c.grow(acked_bytes, app_limited),
            Controller::Cubic(c) => c.on_ack(&sample()),
            Controller::Boxed(c) => c.on_ack(&sample()),
        }
    }

    /// `on_sent`, then cwnd if the send may have moved it (`None`: it did not). Reno
    /// and CUBIC keep the trait's `on_sent`, which does nothing, so cwnd stays what the
    /// sender asked before the segment (its steady state asks before each one) and is
    /// not asked again; a boxed controller may move it.
    #[inline(always)]
    pub fn on_sent_window(&mut self, now: Instant, bytes: u64, in_flight: u64) -> Option<u64> {
        match self {
            Controller::Reno(c) => {
                let before = c.window();
                c.on_sent(now, bytes, in_flight);
                debug_assert_eq!(c.window(), before);
                None
            }
            Controller::Cubic(c) => {
                let before = c.window();
                c.on_sent(now, bytes, in_flight);
                debug_assert_eq!(c.window(), before);
                None
            }
            Controller::Boxed(c) => {
                c.on_sent(now, bytes, in_flight);
                Some(c.window())
            }
        }
    }

    /// The controller behind a trait object (`Box<dyn CongestionController>`).
    pub fn into_box(self) -> Box<dyn CongestionController> {
        match self {
            Controller::Reno(c) => c,
            Controller::Cubic(c) => c,
            Controller::Boxed(c) => c,
        }
    }
}

impl CongestionController for Controller {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    #[inline]
    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight: u64) {
        dispatch!(self, c => c.on_sent(now, bytes, in_flight))
    }
    #[inline]
    fn on_ack(&mut self, ack: &AckSample) {
        dispatch!(self, c => c.on_ack(ack))
    }
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        dispatch!(self, c => c.on_congestion_event(ev))
    }
    fn on_recovery_exit(&mut self, ex: &RecoveryExit) {
        dispatch!(self, c => c.on_recovery_exit(ex))
    }
    fn on_spurious_congestion(&mut self) {
        dispatch!(self, c => c.on_spurious_congestion())
    }
    fn on_state_change(&mut self, from: CaState, to: CaState) {
        dispatch!(self, c => c.on_state_change(from, to))
    }
    fn on_event(&mut self, now: Instant, ev: CaEvent) {
        dispatch!(self, c => c.on_event(now, ev))
    }
    fn on_mss_update(&mut self, mss: u32) {
        dispatch!(self, c => c.on_mss_update(mss))
    }
    fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
        dispatch!(self, c => c.set_ssthresh(ssthresh_bytes))
    }
    fn set_window(&mut self, cwnd_bytes: u64) {
        dispatch!(self, c => c.set_window(cwnd_bytes))
    }
    #[inline]
    fn window(&self) -> u64 {
        dispatch!(self, c => c.window())
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    #[inline]
    fn in_slow_start(&self) -> bool {
        dispatch!(self, c => c.in_slow_start())
    }
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate())
    }
    fn needs_pacing(&self) -> bool {
        dispatch!(self, c => c.needs_pacing())
    }
    fn wants_rate_samples(&self) -> bool {
        dispatch!(self, c => c.wants_rate_samples())
    }
    fn on_rate_sample(&mut self, rs: &RateSample) -> bool {
        dispatch!(self, c => c.on_rate_sample(rs))
    }
    fn on_transmit_start(&mut self, now: Instant, app_limited: bool) {
        dispatch!(self, c => c.on_transmit_start(now, app_limited))
    }
    fn metrics(&self) -> CcMetrics {
        dispatch!(self, c => c.metrics())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::cc::{CongestionKind, CubicConfig, RenoConfig, WindowParams};
    use crate::time::Duration;

    /// `on_sent_window` answers `None` for Reno and CUBIC because their `on_sent`
    /// changes nothing: after segments sent in slow start, in congestion avoidance
    /// and after a reduction, each controller is what it was before them.
    #[test]
    fn reno_and_cubic_are_unchanged_by_a_send() {
        let params = WindowParams::rfc5681(2 * M);
        let controllers = [
            Controller::Reno(Box::new(Reno::new(
                RenoConfig {
                    params,
                    name: "reno",
                },
                MSS,
            ))),
            Controller::Cubic(Box::new(Cubic::new(
                CubicConfig {
                    params,
                    ..CubicConfig::default()
                },
                MSS,
            ))),
        ];
        for mut c in controllers {
            let srtt = Duration::from_millis(50);
            for step in 0..60u64 {
                let now = Instant::from_millis(10 * step);
                if step == 30 {
                    c.on_congestion_event(&congestion(
                        CongestionKind::FastRetransmit,
                        now,
                        c.window(),
                        MSS,
                    ));
                } else {
                    c.on_ack(&ack_sample(now, M, Some(srtt), srtt, MSS));
                }
                let before = format!("{c:?}");
                assert_eq!(c.on_sent_window(now, M, c.window()), None);
                assert_eq!(format!("{c:?}"), before, "{} at step {step}", c.name());
            }
        }
    }
}
