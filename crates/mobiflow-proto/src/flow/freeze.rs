//! Freeze-TCP at a mobile receiver (Goff, Moronski, Phatak and Gupta, "Freeze-TCP: A
//! true end-to-end TCP enhancement mechanism for mobile environments", IEEE INFOCOM
//! 2000), as a receive-window policy layered on the connection's own policy.
//!
//! A warning time before a predicted disconnection the receiver advertises a zero
//! window, at once and on every ACK until it reconnects, so that the unmodified sender
//! stops sending new data, lets what is in flight drain and enters persist mode
//! keeping cwnd and its RTO. On reconnection the receiver sends three copies of the ACK
//! of the last in-order byte with the window reopened (TR-ACKs), so the sender leaves
//! persist at once instead of waiting for its backed-off window probe; if segments
//! were lost, the duplicates also trigger a fast retransmit.
//!
//! The zero window moves the right edge back, which RFC 9293 §3.8.6.2.2 forbids and
//! Freeze-TCP needs (Mehani's Linux patch makes `tcp_select_window` return 0): while
//! frozen, [`RwndPolicy::holds_zero_window`] makes the receiver advertise zero without
//! its SWS and no-shrink rules. Everything else is the base policy's: it goes on seeing
//! segments and reads, and its `window` still sets when a read is worth an update.
//! When the disconnections are predicted is the simulator's (`mobility`).

use super::{RcvState, RwndPolicy};
use crate::time::{Duration, Instant};
use crate::wire::Segment;

/// TR-ACKs sent on reconnection (Goff et al.: three, to trigger a fast retransmit).
pub const TR_ACKS: u32 = 3;

/// Freeze-TCP over a base policy.
#[derive(Debug)]
pub struct FreezeTcp {
    base: Box<dyn RwndPolicy>,
    frozen: bool,
}

impl FreezeTcp {
    pub fn new(base: Box<dyn RwndPolicy>) -> Self {
        FreezeTcp {
            base,
            frozen: false,
        }
    }
}

impl RwndPolicy for FreezeTcp {
    /// The base policy's name: Freeze-TCP is a layer, named by `TcpConfig::freeze`.
    fn name(&self) -> &'static str {
        self.base.name()
    }

    fn on_disconnection_warning(&mut self, _now: Instant) -> bool {
        !std::mem::replace(&mut self.frozen, true)
    }

    fn on_reconnection(&mut self, _now: Instant) -> u32 {
        if std::mem::replace(&mut self.frozen, false) {
            TR_ACKS
        } else {
            0
        }
    }

    fn holds_zero_window(&self) -> bool {
        self.frozen
    }

    fn on_segment(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        self.base.on_segment(now, seg, st)
    }
    fn on_read(&mut self, now: Instant, bytes: u64, st: &RcvState) {
        self.base.on_read(now, bytes, st)
    }
    fn on_timeout(&mut self, now: Instant, st: &RcvState) {
        self.base.on_timeout(now, st)
    }
    fn window(&mut self, st: &RcvState) -> u64 {
        self.base.window(st)
    }
    fn allow_shrink(&self) -> bool {
        self.base.allow_shrink()
    }
    fn wants_update(&mut self, now: Instant, st: &RcvState) -> bool {
        self.base.wants_update(now, st)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.base.poll_timeout()
    }
    fn wants_quick_ack(&mut self) -> bool {
        self.base.wants_quick_ack()
    }
    fn option_value(&mut self, now: Instant) -> Option<u8> {
        self.base.option_value(now)
    }
    fn wscale_window(&self, rcv_buf: u64) -> u64 {
        self.base.wscale_window(rcv_buf)
    }
    fn rate_estimate(&self) -> Option<f64> {
        self.base.rate_estimate()
    }
    fn delay_estimate(&self) -> Option<Duration> {
        self.base.delay_estimate()
    }
    fn state_code(&self) -> Option<u8> {
        self.base.state_code()
    }
    fn buffer_limit(&self, rcv_buf: u64) -> u64 {
        self.base.buffer_limit(rcv_buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::Classic;

    #[test]
    fn freezes_once_and_sends_three_tr_acks_on_reconnection_only_if_frozen() {
        let mut f = FreezeTcp::new(Box::new(Classic));
        let t = Instant::ZERO;
        assert_eq!(f.on_reconnection(t), 0, "not frozen: no TR-ACKs");
        assert!(f.on_disconnection_warning(t));
        assert!(f.holds_zero_window());
        assert!(!f.on_disconnection_warning(t), "already frozen");
        assert_eq!(f.on_reconnection(t), TR_ACKS);
        assert!(!f.holds_zero_window());
        assert_eq!(f.name(), "classic");
    }
}
