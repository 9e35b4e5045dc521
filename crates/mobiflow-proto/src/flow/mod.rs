//! Receive-window policies: how a receiver decides the window it advertises.
//!
//! Classic TCP flow control (RFC 9293 §3.8.6) advertises the free space of the
//! receive buffer. Mobile schemes replace that rule: AFC adds the application's read
//! rate times the RTT, RSFC sizes the window to keep the phone's uplink buffer short,
//! Freeze-TCP advertises a zero window before a disconnection. A [`RwndPolicy`] is the
//! one place such a rule lives; the [`crate::tcp::TcpReceiver`] applies what every
//! policy shares (window scaling, never moving the right edge back unless the policy
//! allows it, silly-window avoidance).

use crate::time::Instant;
use crate::wire::Segment;
use std::fmt;

pub mod classic;
pub use classic::Classic;

/// The receive buffer as a policy sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RcvState {
    pub now: Instant,
    /// Receive buffer size in bytes.
    pub rcv_buf: u64,
    /// Next in-order byte expected.
    pub rcv_nxt: u64,
    /// Bytes the application has read (stream offset of the next unread byte).
    pub rcv_read: u64,
    /// Bytes held out of order.
    pub ooo_bytes: u64,
    pub mss: u32,
}

impl RcvState {
    /// In-order bytes waiting for the application.
    pub fn unread(&self) -> u64 {
        self.rcv_nxt - self.rcv_read
    }
    /// Buffer space from `rcv_nxt` to the end of the buffer: the classic window.
    pub fn free_window(&self) -> u64 {
        self.rcv_buf.saturating_sub(self.unread())
    }
    /// Bytes held in the buffer (unread in order plus out of order).
    pub fn occupancy(&self) -> u64 {
        self.unread() + self.ooo_bytes
    }
}

/// A receive-window policy. See the module documentation.
pub trait RwndPolicy: Send + fmt::Debug {
    fn name(&self) -> &'static str;

    /// A segment arrived (before it is queued).
    fn on_segment(&mut self, _now: Instant, _seg: &Segment, _st: &RcvState) {}

    /// The application read `bytes`.
    fn on_read(&mut self, _now: Instant, _bytes: u64, _st: &RcvState) {}

    /// The window to advertise now, in bytes from `rcv_nxt`.
    fn window(&mut self, st: &RcvState) -> u64;

    /// May the advertised right edge move back (RFC 9293 §3.8.6.2.2 says it should
    /// not; Freeze-TCP's zero window does exactly that)?
    fn allow_shrink(&self) -> bool {
        false
    }

    /// Does the policy want a window update sent now, beyond the classic rules
    /// (e.g. AFC's proactive feedback)?
    fn wants_update(&mut self, _now: Instant, _st: &RcvState) -> bool {
        false
    }

    /// When the policy next wants to be asked `wants_update`.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Value of AFC's 2-byte option to carry on the next ACK, if any.
    fn option_value(&mut self, _now: Instant) -> Option<u8> {
        None
    }
}
