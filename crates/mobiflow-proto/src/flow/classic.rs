//! Classic flow control (RFC 9293 §3.8.6): advertise the free space of the buffer.

use super::{RcvState, RwndPolicy};

#[derive(Clone, Debug, Default)]
pub struct Classic;

impl RwndPolicy for Classic {
    fn name(&self) -> &'static str {
        "classic"
    }

    fn window(&mut self, st: &RcvState) -> u64 {
        st.free_window()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{FlowControl, Policy};
    use crate::time::Instant;

    #[test]
    fn window_is_buffer_minus_unread_in_order_data() {
        let st = RcvState {
            now: Instant::ZERO,
            rcv_buf: 10_000,
            rcv_nxt: 7_000,
            rcv_read: 3_000,
            ooo_bytes: 2_000,
            mss: 1000,
            rtt: None,
            ts_tick: None,
        };
        // Out-of-order data lies inside the window already advertised.
        assert_eq!(Classic.window(&st), 6_000);
        // Held inline by a receiver (`flow::Policy`), it answers as it does boxed.
        let (mut inline, mut boxed) = (Policy::Classic, Policy::from(FlowControl::Classic.build()));
        assert!(inline.is_classic() && !boxed.is_classic());
        assert_eq!(inline.window(&st), 6_000);
        assert_eq!(boxed.window(&st), 6_000);
        assert_eq!(inline.as_dyn().name(), boxed.as_dyn().name());
        assert!(!inline.allow_shrink() && !inline.holds_zero_window());
        assert_eq!(inline.poll_timeout(), None);
        assert_eq!(inline.option_value(st.now), None);
        assert_eq!(st.occupancy(), 6_000);
    }
}
