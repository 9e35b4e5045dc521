//! Congestion-window validation (RFC 7661 §4, as Linux's `tcp_is_cwnd_limited`): the
//! controller grows cwnd only while cwnd limits the sender, not while the receiver's
//! window or the application does (cwnd would otherwise climb without bound while it
//! means nothing).

/// What the last two round trips showed: was new data held back by cwnd, and the
/// largest pipe seen (index 0: the previous round trip, 1: the current one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CwndValidation {
    blocked: [bool; 2],
    max_pipe: [u64; 2],
    /// The round trip ends when this byte is acknowledged.
    round_end: u64,
}

impl CwndValidation {
    /// A data segment left with `pipe` bytes in flight.
    pub fn on_sent(&mut self, pipe: u64) {
        self.max_pipe[1] = self.max_pipe[1].max(pipe);
    }

    /// New data was held back by cwnd.
    pub fn on_cwnd_blocked(&mut self) {
        self.blocked[1] = true;
    }

    /// Was the sender limited by cwnd lately? In slow start, while it used at least
    /// half of cwnd; in congestion avoidance, if cwnd held back new data in this or
    /// the last round trip.
    pub fn cwnd_limited(&self, cwnd: u64, in_slow_start: bool) -> bool {
        if self.blocked[0] || self.blocked[1] {
            return true;
        }
        in_slow_start && cwnd < 2 * self.max_pipe[0].max(self.max_pipe[1])
    }

    /// An ACK of new data up to `ack`: if it ends the round trip, the current verdict
    /// becomes the previous one and a new round trip runs to `snd_nxt`.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, pipe: u64) {
        if ack >= self.round_end {
            self.blocked = [self.blocked[1], false];
            self.max_pipe = [self.max_pipe[1], pipe];
            self.round_end = snd_nxt.max(ack + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwnd_block_counts_for_this_round_trip_and_the_next_only() {
        let mut v = CwndValidation::default();
        v.on_ack(0, 10_000, 0); // round trip 1 runs to 10 000
        assert!(!v.cwnd_limited(20_000, false));
        v.on_cwnd_blocked();
        assert!(v.cwnd_limited(20_000, false));
        v.on_ack(10_000, 20_000, 0); // round trip 2: the block is the previous one
        assert!(v.cwnd_limited(20_000, false));
        v.on_ack(15_000, 25_000, 0); // same round trip: nothing changes
        assert!(v.cwnd_limited(20_000, false));
        v.on_ack(20_000, 30_000, 0); // round trip 3: forgotten
        assert!(!v.cwnd_limited(20_000, false));
    }

    #[test]
    fn in_slow_start_using_half_of_cwnd_is_being_limited_by_it() {
        let mut v = CwndValidation::default();
        v.on_sent(6_000);
        assert!(v.cwnd_limited(10_000, true));
        assert!(!v.cwnd_limited(12_000, true));
        assert!(
            !v.cwnd_limited(10_000, false),
            "not in congestion avoidance"
        );
    }
}
