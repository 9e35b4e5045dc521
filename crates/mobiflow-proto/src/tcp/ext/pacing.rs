//! Pacing: holding segments back until a departure time, with a timer for it.
//!
//! [`Release`] is the part every pacer shares: a time before which nothing leaves,
//! a timer at that time, forgotten once it has fired. AFC's burst control
//! (`tcp::ext::afc`) sets it from its own gap rule; [`Pacer`] is Linux's internal TCP
//! pacing for a controller that asks for it (`sk_pacing_status = SK_PACING_NEEDED`,
//! set by BBR: [`crate::cc::CongestionController::needs_pacing`]): the
//! earliest-departure-time model of Linux 4.20+, as a sender extension so that a
//! connection without it pays nothing per packet.
//!
//! The sender asks the extensions before new data and retransmissions chosen by the
//! window, not before a forced retransmission (the fast retransmit and the
//! retransmission of the timer): Linux does not pace the latter either
//! (`tcp_retransmit_timer` sends at once) but paces the former
//! (`tcp_xmit_retransmit_queue` checks `tcp_pacing_check`), so a fast retransmit
//! here may leave up to one segment early.

use super::{SenderCtx, SenderExtension};
use crate::time::{Duration, Instant};

/// A time before which the paced sender holds its segments, and the timer that
/// wakes it then.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Release {
    at: Option<Instant>,
}

impl Release {
    /// Hold until `at`.
    pub fn set(&mut self, at: Instant) {
        self.at = Some(at);
    }

    /// Nothing is held.
    pub fn clear(&mut self) {
        self.at = None;
    }

    /// A segment must wait at `now`.
    pub fn holds(&self, now: Instant) -> bool {
        self.at.is_some_and(|t| now < t)
    }

    /// The timer fired at `now`: a release time that has come is no longer a
    /// constraint (nor a timer).
    pub fn on_timer(&mut self, now: Instant) {
        if self.at.is_some_and(|t| now >= t) {
            self.at = None;
        }
    }

    /// When the sender should wake to send what it holds.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.at
    }
}

/// Segments sent before pacing starts (Linux `tcp_update_skb_after_send`: only once
/// `tp->data_segs_out >= 10`, so the initial window leaves at once).
const UNPACED_SEGMENTS: u64 = 10;

/// Linux internal TCP pacing (`tcp_needs_internal_pacing`) in the EDT model: each
/// segment's departure time is the previous one's plus `len / rate`
/// (`tcp_update_skb_after_send`), and a segment whose departure time has not come is
/// held with a timer (`tcp_pacing_check`, the pacing hrtimer).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// Earliest departure time of the next segment (`tp->tcp_wstamp_ns`).
    wstamp: Instant,
    /// The pacing timer, armed when a segment was held.
    timer: Release,
}

impl Pacer {
    /// Earliest departure time of the next segment.
    pub fn next_departure(&self) -> Instant {
        self.wstamp
    }

    /// Before a segment leaves at `now`: hold it if its departure time has not come,
    /// and arm the timer for then (`tcp_pacing_check`).
    pub fn holds(&mut self, now: Instant) -> bool {
        if self.wstamp <= now {
            return false;
        }
        self.timer.set(self.wstamp);
        true
    }

    /// A segment of `len` payload bytes left at `now`, the `sent`-th data segment of
    /// the connection, with the controller's pacing rate in bytes per second. The
    /// next departure is `len / rate` after this one's (which is `now` if the sender
    /// was late); up to half of that gap is forgiven by the time the sender was late,
    /// as Linux credits scheduling jitter (`tcp_update_skb_after_send`).
    pub fn sent(&mut self, now: Instant, len: u64, sent: u64, rate: Option<u64>) {
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        let Some(rate) = rate.filter(|&r| r > 0 && r != u64::MAX) else {
            return;
        };
        if sent < UNPACED_SEGMENTS {
            return;
        }
        let len_ns = (len as u128 * 1_000_000_000 / rate as u128) as u64;
        let credit = (self.wstamp - prior).as_nanos();
        self.wstamp += Duration::from_nanos(len_ns - credit.min(len_ns / 2));
    }
}

impl SenderExtension for Pacer {
    fn name(&self) -> &'static str {
        "pacing"
    }

    fn holds_transmit(&mut self, now: Instant, _mss: u32) -> bool {
        self.holds(now)
    }

    fn on_sent(&mut self, cx: &mut SenderCtx, len: u64) {
        let rate = cx.cc.pacing_rate();
        self.sent(cx.now, len, cx.stats.data_segments_sent, rate);
    }

    /// The pacing timer fired.
    fn on_timer(&mut self, now: Instant) {
        self.timer.on_timer(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timer.poll_timeout()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::t_ms;

    /// Linux `tcp_update_skb_after_send`: unpaced while fewer than ten data segments
    /// went out; then each departure is `len / rate` after the previous one, and a
    /// sender late by `x` loses min(x, gap / 2) of the next gap.
    #[test]
    fn departures_follow_len_over_rate_after_ten_segments_with_half_gap_credit() {
        let mut p = Pacer::default();
        let rate = Some(1_000_000); // 1000 bytes per ms
        for n in 1..10 {
            p.sent(t_ms(0), 1000, n, rate);
            assert_eq!(p.next_departure(), t_ms(0));
            assert!(!p.holds(t_ms(0)));
        }
        p.sent(t_ms(0), 1000, 10, rate);
        assert_eq!(p.next_departure(), t_ms(1));
        assert!(p.holds(t_ms(0)));
        assert_eq!(p.poll_timeout(), Some(t_ms(1)));
        SenderExtension::on_timer(&mut p, t_ms(1));
        assert_eq!(p.poll_timeout(), None);
        assert!(!p.holds(t_ms(1)));
        // On time: the next gap is whole.
        p.sent(t_ms(1), 2000, 11, rate);
        assert_eq!(p.next_departure(), t_ms(3));
        // 0.5 ms late: half a millisecond of the 2 ms gap is forgiven.
        let late = t_ms(3) + Duration::from_micros(500);
        p.sent(late, 2000, 12, rate);
        assert_eq!(p.next_departure(), late + Duration::from_micros(1500));
        // Very late: at most half the gap is forgiven.
        let later = t_ms(100);
        p.sent(later, 2000, 13, rate);
        assert_eq!(p.next_departure(), later + Duration::from_millis(1));
        // No rate: nothing is paced.
        p.sent(t_ms(200), 2000, 14, None);
        assert_eq!(p.next_departure(), t_ms(200));
    }
}
