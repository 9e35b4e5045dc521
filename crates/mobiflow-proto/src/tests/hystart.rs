//! HyStart (Linux's `tcp_cubic.c`: `hystart_update`, `cubictcp_acked`) over a whole
//! connection: the `linux` profile's CUBIC leaves slow start (ssthresh = cwnd) before
//! any loss, when a round's minimum RTT rises above the path's or when the ACKs of a
//! round arrive back to back for half the minimum RTT.

use super::pair::Pair;
use crate::cc::{CcKind, CubicParams, HystartDetect};
use crate::tcp::TcpConfig;
use crate::time::test_util::ms;
use crate::time::{Duration, Instant};

const MSS: u64 = 1448;

fn linux_with(f: impl FnOnce(&mut CubicParams)) -> TcpConfig {
    let mut c = CubicParams::linux();
    f(&mut c);
    TcpConfig {
        cc: CcKind::Cubic(c),
        ..TcpConfig::linux()
    }
}

/// A bulk transfer over a bottleneck of `rate_bps` (no queue limit) with `one_way`
/// latency, for `secs` seconds.
fn bulk(cfg: TcpConfig, rate_bps: u64, one_way: Duration, secs: u64) -> Pair {
    let mut p = Pair::new(cfg, one_way);
    p.fwd.rate_bps = Some(rate_bps);
    p.set_unlimited();
    p.drive_until(Instant::from_secs(secs));
    p
}

/// cwnd in segments when slow start ended (ssthresh became finite), and when.
fn slow_start_exit(p: &Pair) -> Option<(u64, Instant)> {
    p.trace
        .iter()
        .find(|c| c.ssthresh != u64::MAX)
        .map(|c| (c.cwnd / MSS, c.at))
}

/// The largest cwnd, in segments, the trace shows before `until`.
fn max_cwnd_before(p: &Pair, until: Instant) -> u64 {
    p.trace
        .iter()
        .take_while(|c| c.at < until)
        .map(|c| c.cwnd / MSS)
        .max()
        .unwrap_or(0)
}

/// Segments of 1448 bytes (1500 on the wire) in flight on a path of `rate_bps` and
/// `rtt`: the bandwidth-delay product.
fn bdp(rate_bps: u64, rtt: Duration) -> u64 {
    rate_bps * rtt.as_nanos() / 8 / 1500 / 1_000_000_000
}

#[test]
fn delay_increase_ends_slow_start_as_the_queue_builds() {
    // 10 Mb/s, RTT 50 ms: BDP 41 segments. Plain slow start with a 100-packet queue
    // overshoots to about 2 x (BDP + queue) = 282 segments before its first loss.
    // HyStart's delay detector sees a round's minimum RTT rise 6.25 ms (delay_min/8)
    // above the path's and ends slow start long before, with no loss.
    let (rate, one_way) = (10_000_000, ms(25));
    let overshoot = 2 * (bdp(rate, one_way * 2) + 100);
    let p = bulk(linux_with(|_| {}), rate, one_way, 2);
    let (cwnd, _) = slow_start_exit(&p).expect("HyStart ended slow start");
    assert!((16..overshoot * 2 / 3).contains(&cwnd), "exit at {cwnd}");
    // The delay detector alone finds the same point; the ACK train never spans
    // 25 ms here (the delayed ACKs are 2.4 ms apart, beyond hystart_ack_delta).
    let delay = bulk(
        linux_with(|c| c.hystart_detect = HystartDetect::Delay),
        rate,
        one_way,
        2,
    );
    assert_eq!(slow_start_exit(&delay), slow_start_exit(&p));
    let train = bulk(
        linux_with(|c| c.hystart_detect = HystartDetect::Train),
        rate,
        one_way,
        2,
    );
    assert_eq!(slow_start_exit(&train), None);
    // Without HyStart slow start goes on (the link here has no queue limit).
    let off = bulk(linux_with(|c| c.hystart = false), rate, one_way, 2);
    assert_eq!(slow_start_exit(&off), None);
    assert!(max_cwnd_before(&off, Instant::from_secs(2)) > overshoot);
}

#[test]
fn ack_train_ends_slow_start_after_half_the_minimum_delay() {
    // 100 Mb/s, RTT 100 ms: BDP 833 segments; delayed ACKs every 240 us. Once a
    // round's ACKs have come back to back for (delay_min + 1 ms) / 2, the flight is
    // at least half the BDP: slow start ends at most half a BDP beyond it, before
    // the queue has grown enough for the delay detector (which alone exits later).
    let (rate, one_way) = (100_000_000, ms(50));
    let bdp = bdp(rate, one_way * 2);
    let train = bulk(
        linux_with(|c| c.hystart_detect = HystartDetect::Train),
        rate,
        one_way,
        2,
    );
    let (cwnd, at) = slow_start_exit(&train).expect("the ACK train ended slow start");
    assert!(
        (bdp..bdp * 3 / 2).contains(&cwnd),
        "exit at {cwnd}, BDP {bdp}"
    );
    let delay = bulk(
        linux_with(|c| c.hystart_detect = HystartDetect::Delay),
        rate,
        one_way,
        2,
    );
    let (cwnd_d, at_d) = slow_start_exit(&delay).expect("the delay detector fires later");
    assert!(cwnd_d > cwnd && at_d > at, "{cwnd_d} at {at_d:?}");
    // Both detectors together: the first one wins.
    let both = bulk(linux_with(|_| {}), rate, one_way, 2);
    assert_eq!(slow_start_exit(&both), Some((cwnd, at)));
}

#[test]
fn no_exit_below_the_low_window() {
    // RTT about 2.6 ms at 20 Mb/s: delayed ACKs 1.2 ms apart, so the ACK train of
    // the first round (ten segments) already spans (delay_min + 1 ms) / 2.
    // hystart_low_window = 16 holds the exit back to the next round; a low window
    // of 4 lets it fire in the first, below 16 segments.
    let (rate, one_way) = (20_000_000, ms(1));
    let at16 = bulk(linux_with(|_| {}), rate, one_way, 1);
    let (cwnd16, _) = slow_start_exit(&at16).expect("exit");
    assert!(cwnd16 >= 16, "{cwnd16}");
    let at4 = bulk(linux_with(|c| c.hystart_low_window = 4), rate, one_way, 1);
    let (cwnd4, _) = slow_start_exit(&at4).expect("exit");
    assert!(cwnd4 < 16, "{cwnd4}");
}
