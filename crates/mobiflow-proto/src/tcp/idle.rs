//! The congestion window after an idle period longer than the RTO (the sender calls
//! [`restart_after_idle`] before it sends new data with nothing in flight).
//!
//! * [`IdleRestart::Rfc5681`]: RFC 5681 §4.1: cwnd falls to the restart window,
//!   min(IW, cwnd), at once.
//! * [`IdleRestart::Linux`]: Linux's `tcp_cwnd_restart` (net/ipv4/tcp_output.c), called
//!   from `tcp_slow_start_after_idle_check` when the idle time exceeds the RTO: ssthresh
//!   becomes `tcp_current_ssthresh` (at least 3/4 of cwnd), then cwnd is halved once
//!   for every full RTO of idle time beyond the first, never below the restart window
//!   min(IW, cwnd). An idle time between one and two RTOs halves cwnd once.

use crate::time::Duration;

crate::named_enum! {
    /// How cwnd restarts after idle (`TcpConfig::idle_restart_rule`).
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum IdleRestart ("idle_restart_rule", ignoring "-_ ") {
        /// RFC 5681 §4.1: the restart window at once.
        Rfc5681 = "rfc5681",
        /// Linux's `tcp_cwnd_restart`: halve per RTO idle, keep 3/4 cwnd as ssthresh.
        Linux = "linux",
    }
}

/// The window after `idle` (more than `rto`) without sending: `(cwnd, ssthresh)`,
/// from `cwnd`, `ssthresh` and the initial window `iw`, all in bytes.
pub fn restart_after_idle(
    rule: IdleRestart,
    cwnd: u64,
    ssthresh: u64,
    iw: u64,
    idle: Duration,
    rto: Duration,
) -> (u64, u64) {
    let restart = iw.min(cwnd);
    match rule {
        IdleRestart::Rfc5681 => (restart, ssthresh),
        IdleRestart::Linux => {
            // tcp_current_ssthresh, outside a cwnd reduction (nothing is in flight).
            let ssthresh = ssthresh.max((cwnd >> 1) + (cwnd >> 2));
            let mut w = cwnd;
            let mut left = idle.as_nanos() as i128;
            let rto = rto.as_nanos().max(1) as i128;
            loop {
                left -= rto;
                if left <= 0 || w <= restart {
                    break;
                }
                w >>= 1;
            }
            (w.max(restart), ssthresh)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::ms;

    const MSS: u64 = 1448;

    /// `tcp_cwnd_restart`: 100 segments idle for 1.5 RTO are halved once (RFC 5681:
    /// the restart window of 10 at once); ssthresh becomes 3/4 of cwnd.
    #[test]
    fn linux_halves_cwnd_once_per_rto_of_idle_time() {
        let (cwnd, ssth) = (100 * MSS, 40 * MSS);
        let iw = 10 * MSS;
        let r = restart_after_idle(IdleRestart::Linux, cwnd, ssth, iw, ms(450), ms(300));
        assert_eq!(r, (50 * MSS, 75 * MSS));
        let r = restart_after_idle(IdleRestart::Linux, cwnd, ssth, iw, ms(950), ms(300));
        assert_eq!(r.0, 12 * MSS + MSS / 2); // 100 → 50 → 25 → 12.5 segments
        let r = restart_after_idle(IdleRestart::Linux, cwnd, ssth, iw, ms(30_000), ms(300));
        assert_eq!(r.0, 10 * MSS); // never below the restart window
        assert_eq!(
            restart_after_idle(IdleRestart::Rfc5681, cwnd, ssth, iw, ms(450), ms(300)),
            (10 * MSS, 40 * MSS)
        );
    }

    /// `tcp_current_ssthresh` keeps a larger ssthresh; a cwnd below IW stays.
    #[test]
    fn linux_keeps_a_larger_ssthresh_and_a_small_cwnd() {
        let r = restart_after_idle(
            IdleRestart::Linux,
            8 * MSS,
            u64::MAX,
            10 * MSS,
            ms(5000),
            ms(300),
        );
        assert_eq!(r, (8 * MSS, u64::MAX));
    }
}
