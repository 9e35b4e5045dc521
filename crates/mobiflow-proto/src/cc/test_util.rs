//! Sample structs for the controllers' unit tests.

use super::{AckSample, CongestionEvent, CongestionKind, RecoveryExit};
use crate::time::{Duration, Instant};

/// The segment size of the controllers' unit tests (FLD_TCP's use their own), and the
/// same as a byte count.
pub(crate) const MSS: u32 = 1000;
pub(crate) const M: u64 = MSS as u64;

/// An ACK of `bytes` at `now` on a path whose RTT is `srtt` (no sample unless `rtt`).
pub(crate) fn ack_sample(
    now: Instant,
    bytes: u64,
    rtt: Option<Duration>,
    srtt: Duration,
    mss: u32,
) -> AckSample {
    AckSample {
        now,
        acked_bytes: bytes,
        prior_in_flight: 0,
        rtt,
        srtt,
        min_rtt: srtt,
        app_limited: false,
        in_recovery: false,
        mss,
        snd_una: 0,
        snd_nxt: 0,
    }
}

/// A congestion signal of `kind` with `in_flight` bytes outstanding; one segment lost.
pub(crate) fn congestion(
    kind: CongestionKind,
    now: Instant,
    in_flight: u64,
    mss: u32,
) -> CongestionEvent {
    CongestionEvent {
        now,
        kind,
        in_flight,
        lost_bytes: mss as u64,
        mss,
        repeated: false,
    }
}

/// The end of a recovery episode in which `retransmitted_segments` were resent.
pub(crate) fn recovery_exit(retransmitted_segments: u64, mss: u32) -> RecoveryExit {
    RecoveryExit {
        now: Instant::ZERO,
        in_flight: 0,
        retransmitted_segments,
        mss,
    }
}
