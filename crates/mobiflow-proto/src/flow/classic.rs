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
        assert_eq!(st.occupancy(), 6_000);
    }
}
