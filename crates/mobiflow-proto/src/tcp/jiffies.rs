//! The kernel's clock for TCP's retransmission timer: jiffies, and when the timer
//! wheel runs a timer (`RtoFormula::Linux`).
//!
//! * Linux keeps the RTO and the probe timeout in jiffies: `__tcp_set_rto` and
//!   `tcp_schedule_loss_probe` convert microseconds with `usecs_to_jiffies`, which
//!   rounds up; the backoff doubles the jiffy count (`tcp_retransmit_timer`). A jiffy
//!   is 1/HZ s, and HZ = 250 is the kernel's default (`kernel/Kconfig.hz`: `default
//!   HZ_250`; the live tests' kernel has `CONFIG_HZ=250`).
//! * The retransmission timer (`icsk_retransmit_timer`, which also carries the loss
//!   probe and RACK's reorder timeout) is a `timer_list` of the timer wheel
//!   (`kernel/time/timer.c`). The wheel never runs a timer early, but runs it late:
//!   a timer due `delta` jiffies from now goes into level `n`, the first whose range
//!   holds `delta` (level 0 below 63 jiffies, level `n` below `63 << 3n`), and fires
//!   at the first multiple of that level's granularity (`8^n` jiffies) after its
//!   expiry (`calc_wheel_index`, `calc_index`: "Round up with level granularity"),
//!   up to about 12 % late. At HZ = 250 an RTO of 2.5 s fires up to 256 ms late,
//!   and a backed-off series of timeouts drifts later and later: in a 10 s outage
//!   this decides whether the fifth timeout comes before or after the link returns.
//!
//! Jiffies here count from the run's time zero (the kernel's start at
//! `INITIAL_JIFFIES` is an arbitrary phase).

use crate::time::{Duration, Instant};

/// The kernel's default timer frequency (`CONFIG_HZ`).
pub const HZ: u64 = 250;
/// One jiffy.
pub const JIFFY: Duration = Duration::from_nanos(1_000_000_000 / HZ);
/// `TCP_TIMEOUT_MIN`: 2 jiffies.
pub const TIMEOUT_MIN_JIFFIES: u64 = 2;

/// Bits of a wheel level and the shift of its granularity (`LVL_BITS`,
/// `LVL_CLK_SHIFT`).
const LVL_BITS: u32 = 6;
const LVL_CLK_SHIFT: u32 = 3;
/// Levels of the wheel at HZ = 250 (`LVL_DEPTH`).
const LVL_DEPTH: u32 = 9;

/// The clock a sender's timers (retransmission, loss probe) run on, decided once when
/// the sender is built (`TcpConfig::clock`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// A timer fires at exactly the time it was armed for (RFC 6298, ns-2).
    #[default]
    Exact,
    /// The kernel's: timeouts in whole jiffies, run on the timer wheel
    /// ([`wheel_expiry`]), as Linux arms `icsk_retransmit_timer`.
    Jiffies,
}

/// `usecs_to_jiffies`: a duration in whole jiffies, rounded up.
pub fn to_jiffies(d: Duration) -> u64 {
    d.as_nanos().div_ceil(JIFFY.as_nanos())
}

/// A number of jiffies as a duration.
pub fn from_jiffies(j: u64) -> Duration {
    JIFFY.saturating_mul(j)
}

/// A duration rounded up to whole jiffies.
pub fn round_up(d: Duration) -> Duration {
    from_jiffies(to_jiffies(d))
}

/// The jiffies count at `now` (the last tick at or before it).
fn jiffies_at(now: Instant) -> u64 {
    now.as_nanos() / JIFFY.as_nanos()
}

/// When the wheel runs a timer armed at `now` to expire `delay_jiffies` later
/// (`mod_timer(timer, jiffies + delay)`): the tick at which `jiffies` reaches the
/// bucket `calc_wheel_index` puts it in.
pub fn wheel_expiry(now: Instant, delay_jiffies: u64) -> Instant {
    let clk = jiffies_at(now);
    let expires = clk + delay_jiffies;
    // The level whose range holds the delay (`LVL_START(n + 1)`), the last one for
    // anything longer.
    let lvl = (0..LVL_DEPTH - 1)
        .find(|&n| delay_jiffies < ((1u64 << LVL_BITS) - 1) << (n * LVL_CLK_SHIFT))
        .unwrap_or(LVL_DEPTH - 1);
    let shift = lvl * LVL_CLK_SHIFT;
    let bucket = ((expires >> shift) + 1) << shift;
    Instant::ZERO + from_jiffies(bucket)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::t_ms;

    #[test]
    fn durations_round_up_to_jiffies_of_4_ms() {
        assert_eq!(to_jiffies(Duration::from_micros(307_571)), 77);
        assert_eq!(
            round_up(Duration::from_micros(307_571)),
            Duration::from_millis(308)
        );
        assert_eq!(to_jiffies(Duration::from_millis(200)), 50);
        assert_eq!(to_jiffies(Duration::ZERO), 0);
    }

    #[test]
    fn the_wheel_runs_a_timer_at_the_next_boundary_of_its_level() {
        // Level 0 (under 63 jiffies): one jiffy after the expiry.
        assert_eq!(wheel_expiry(t_ms(1000), 50), t_ms(1000 + 204));
        // Level 1 (63..504 jiffies, granularity 8 jiffies = 32 ms): 312 ms (78
        // jiffies) armed at jiffy 250 expires at 328 and runs at 336.
        assert_eq!(wheel_expiry(t_ms(1000), 78), t_ms(1344));
        // Level 2 (504..4032 jiffies, granularity 64 = 256 ms): 2496 ms (624
        // jiffies) from jiffy 5612 (22.448 s) expires at 6236 and runs at 6272
        // (25.088 s), 144 ms late.
        assert_eq!(wheel_expiry(t_ms(22_448), 624), t_ms(25_088));
        // Level 3 (granularity 512 jiffies = 2.048 s) for 120 s.
        let t = wheel_expiry(t_ms(0), 30_000);
        assert_eq!(t, t_ms(30_208 * 4));
        // Never early, at most a granularity late, anywhere in the range.
        for delay in [1u64, 62, 63, 100, 503, 504, 1000, 4031, 4032, 30_000] {
            for start in [0u64, 3, 1001, 77_777] {
                let now = t_ms(start);
                let fire = wheel_expiry(now, delay);
                let due = Instant::ZERO + from_jiffies(jiffies_at(now) + delay);
                assert!(fire > due, "{delay} from {start}");
                assert!(fire - due <= from_jiffies(512), "{delay} from {start}");
            }
        }
    }
}
