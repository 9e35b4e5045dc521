//! Simulation time as integer nanoseconds.
//!
//! Nothing in `mobiflow-proto` reads a clock: every entry point takes `now: Instant`
//! from its caller (the simulator, a test, or a real-time runner). Times are
//! integer nanoseconds so that a run is bit-for-bit reproducible on any machine.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// A point in time, in nanoseconds since the start of the run.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

/// What [`Instant`] and [`Duration`] share: both count nanoseconds in a `u64`.
macro_rules! nanoseconds {
    ($t:ident) => {
        impl $t {
            pub const ZERO: $t = $t(0);
            pub const MAX: $t = $t(u64::MAX);

            pub const fn from_nanos(ns: u64) -> Self {
                $t(ns)
            }
            pub const fn from_micros(us: u64) -> Self {
                $t(us * 1_000)
            }
            pub const fn from_millis(ms: u64) -> Self {
                $t(ms * 1_000_000)
            }
            pub const fn from_secs(s: u64) -> Self {
                $t(s * 1_000_000_000)
            }
            /// Rounded to the nearest nanosecond; a negative or NaN `s` is zero.
            pub fn from_secs_f64(s: f64) -> Self {
                $t((s.max(0.0) * 1e9).round() as u64)
            }
            pub const fn as_nanos(self) -> u64 {
                self.0
            }
            /// Seconds, divided exactly (`60_000_000_000 ns` is `60.0`, not the
            /// `60.00000000000001` a multiplication by `1e-9` gives).
            pub fn as_secs_f64(self) -> f64 {
                self.0 as f64 / 1e9
            }
        }
    };
}
nanoseconds!(Instant);
nanoseconds!(Duration);

impl Instant {
    /// Time since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// The earlier of two optional deadlines (`None`: not armed).
    #[inline(always)]
    pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Duration {
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second (rounded up to 1 ns).
    pub fn transmission(bytes: u64, rate_bps: u64) -> Duration {
        if rate_bps == 0 {
            return Duration::MAX;
        }
        // u64 arithmetic when it cannot overflow (any packet below ~2 GB); u128
        // division is several times slower and this is on the per-packet path.
        if let Some(bit_ns) = bytes.checked_mul(8_000_000_000) {
            return Duration(bit_ns.div_ceil(rate_bps));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Duration(bits.div_ceil(rate_bps as u128).min(u64::MAX as u128) as u64)
    }
}

/// `T + Duration`, `T - Duration` and their assigning forms for `T` = `Instant` and
/// `Duration`, saturating at zero and at `u64::MAX` nanoseconds.
macro_rules! saturating_ops {
    ($($t:ident: $op:ident::$f:ident, $op_assign:ident::$f_assign:ident, $sat:ident;)*) => {$(
        impl $op<Duration> for $t {
            type Output = $t;
            fn $f(self, d: Duration) -> $t {
                $t(self.0.$sat(d.0))
            }
        }
        impl $op_assign<Duration> for $t {
            fn $f_assign(&mut self, d: Duration) {
                self.0 = self.0.$sat(d.0);
            }
        }
    )*};
}
saturating_ops! {
    Instant: Add::add, AddAssign::add_assign, saturating_add;
    Instant: Sub::sub, SubAssign::sub_assign, saturating_sub;
    Duration: Add::add, AddAssign::add_assign, saturating_add;
    Duration: Sub::sub, SubAssign::sub_assign, saturating_sub;
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, rhs: Instant) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}
impl Div<u64> for Duration {
    type Output = Duration;
    fn div(self, k: u64) -> Duration {
        Duration(self.0 / k.max(1))
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1_000_000_000 {
            write!(f, "{:.6}s", self.as_secs_f64())
        } else {
            write!(f, "{:.3}ms", self.as_millis_f64())
        }
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Millisecond shorthands for the unit tests of every module.
#[cfg(test)]
pub(crate) mod test_util {
    use super::{Duration, Instant};

    /// `x` milliseconds.
    pub(crate) fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// The instant `x` milliseconds after time zero.
    pub(crate) fn t_ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_of_a_1500_byte_packet_at_12mbps_is_1ms() {
        assert_eq!(
            Duration::transmission(1500, 12_000_000),
            Duration::from_millis(1)
        );
    }

    #[test]
    fn transmission_time_rounds_up_to_a_whole_nanosecond() {
        assert_eq!(
            Duration::transmission(1, 3_000_000_000),
            Duration::from_nanos(3)
        );
    }

    #[test]
    fn instant_difference_saturates_at_zero() {
        assert_eq!(
            Instant::from_secs(1) - Instant::from_secs(2),
            Duration::ZERO
        );
    }
}
