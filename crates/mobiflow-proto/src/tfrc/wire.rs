//! Packets of a TFRC / DCCP CCID 3 flow as mobiflow models them.
//!
//! A data packet carries the header fields TFRC needs (RFC 5348 §3.2.1, RFC 4342 §8):
//! a sequence number, a timestamp, the sender's RTT estimate and, for CCID 3, the
//! 4-bit window counter (CCVal). A feedback packet carries the receiver's report
//! (RFC 5348 §3.2.2, RFC 4342 §8: Loss Event Rate option 192, Receive Rate option 194,
//! Timestamp Echo / Elapsed Time). Freeze-DCCP's signals (option numbers from the
//! authors' Linux code, see docs/schemes/freeze-dccp.md) are flags on either kind. Payload bytes are
//! virtual: only lengths are carried.

use crate::time::{Duration, Instant};

/// Freeze-DCCP signals (DCCPO_FREEZE 120, DCCPO_UNFREEZE 121, TFRC_OPT_RESTORING 129,
/// TFRC_OPT_PROBING 130, TFRC_OPT_UNFROZEN 195), as a bit set.
#[derive(Copy, Clone, PartialEq, Eq, Default, Debug)]
pub struct FreezeSignals(pub u8);

impl FreezeSignals {
    pub const FREEZE: FreezeSignals = FreezeSignals(0x01);
    pub const UNFREEZE: FreezeSignals = FreezeSignals(0x02);
    pub const RESTORING: FreezeSignals = FreezeSignals(0x04);
    pub const PROBING: FreezeSignals = FreezeSignals(0x08);
    pub const UNFROZEN: FreezeSignals = FreezeSignals(0x10);

    pub const fn contains(self, other: FreezeSignals) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: FreezeSignals) -> FreezeSignals {
        FreezeSignals(self.0 | other.0)
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A data packet from a TFRC sender.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct TfrcData {
    /// Packet sequence number, from 0, one per packet.
    pub seq: u64,
    /// Payload bytes (the segment size s of RFC 5348).
    pub len: u32,
    /// When the sender sent it (sender's clock; echoed in feedback).
    pub sent_at: Instant,
    /// The sender's current RTT estimate (RFC 5348 §3.2.1), zero before the first.
    pub rtt: Duration,
    /// CCID 3 window counter, 0..=15 (RFC 4342 §8.1).
    pub ccval: u8,
    pub freeze: FreezeSignals,
}

/// A feedback packet from a TFRC receiver.
#[derive(Copy, Clone, PartialEq, Debug, Default)]
pub struct TfrcFeedback {
    /// Timestamp of the last data packet received (echoed), RFC 5348 §3.2.2 t_recvdata.
    pub echo_sent_at: Instant,
    /// Time between that packet's arrival and this feedback (t_delay).
    pub elapsed: Duration,
    /// Receive rate since the last feedback, bytes per second (X_recv).
    pub x_recv_bytes_per_s: f64,
    /// Loss event rate p (0 = no loss yet).
    pub p: f64,
    /// Highest sequence number received.
    pub highest_seq: u64,
    /// Loss events the receiver has counted so far (mobiflow addition, not an RFC
    /// field: lets a restoring Freeze-DCCP sender see a loss event that did not
    /// raise p, see `TfrcConfig::freeze_fallback_on_loss_event`).
    pub loss_events: u64,
    pub freeze: FreezeSignals,
}
