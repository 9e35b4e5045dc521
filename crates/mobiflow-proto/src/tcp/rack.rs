//! RACK: time-based loss detection (RFC 8985 §6), as Linux runs it by default
//! (`tcp_recovery = 1`, net/ipv4/tcp_recovery.c).
//!
//! RACK remembers the most recently *sent* segment that has been delivered (SACKed or
//! cumulatively acknowledged) and its RTT. An outstanding segment sent before it is
//! lost once it has been out for that RTT plus a reordering window; one sent before it
//! that is still inside the window arms the reorder timer, which checks again when the
//! window has passed.
//!
//! The sender calls, on every ACK, [`Rack::on_delivery`] with what the ACK delivered
//! (the scoreboard's [`Delivery`]) and then [`Rack::mark_lost`]; and
//! [`Rack::on_timer`] when [`Rack::timer`] is due. The reordering window
//! ([`Rack::reo_wnd`]) widens on D-SACK ([`Rack::on_dsack`], RFC 8985 §6.2 step 4),
//! which the receiver model does not send yet: until it does, the window stays at
//! one step.
//!
//! Segment send times are the scoreboard's `sent_at` (the latest transmission), so
//! RACK adds no per-segment state. The kernel walks a list ordered by send time and
//! stops at the first segment sent after RACK's; the scoreboard is ordered by
//! sequence, and the walk stops at the first segment sent after RACK's that was never
//! retransmitted: every segment above it was first sent later still, and a
//! retransmission later than its original.

use super::sack::{Delivery, Scoreboard};
use crate::cc::CaState;
use crate::time::{Duration, Instant};

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries for which a widened reordering window
/// is kept (RFC 8985 §6.2 step 4: 16).
const RECOVERY_THRESH: u32 = 16;
/// Linux `TCP_TIMEOUT_MIN_US`: added to the reorder timer (`tcp_rack_mark_lost`).
const TIMER_SLACK: Duration = Duration::from_micros(2_000);
/// Linux caps `reo_wnd_steps` at 0xFF (`tcp_rack_update_reo_wnd`).
const MAX_STEPS: u32 = 0xFF;

/// RACK's state for one connection (Linux `tcp_sock.rack`, `reord_seen`).
#[derive(Clone, Debug)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered.
    xmit: Option<Instant>,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    rtt: Duration,
    /// Something was delivered since the last detection (Linux `rack.advanced`).
    advanced: bool,
    /// The reordering window in quarters of min RTT (RACK.reo_wnd_mult).
    reo_wnd_steps: u32,
    /// Recoveries left before the window falls back to one step
    /// (RACK.reo_wnd_persist).
    reo_wnd_persist: u32,
    /// A D-SACK arrived since the last adaptation (RACK.dsack_round pending).
    dsack_seen: bool,
    /// Bytes delivered so far (Linux `tp->delivered`), and when the window last
    /// widened (`rack.last_delivered`).
    delivered: u64,
    last_delivered: u64,
    /// The connection has seen reordering (Linux `tp->reord_seen`).
    reord_seen: bool,
    /// The reorder timer (Linux `ICSK_TIME_REO_TIMEOUT`).
    timer: Option<Instant>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit: None,
            end_seq: 0,
            rtt: Duration::ZERO,
            advanced: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            delivered: 0,
            last_delivered: 0,
            reord_seen: false,
            timer: None,
        }
    }
}

/// RFC 8985 `RACK_sent_after(t1, seq1, t2, seq2)` (Linux `tcp_skb_sent_after`).
fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub fn new() -> Self {
        Self::default()
    }

    /// One ACK's deliveries (RFC 8985 §6.2 steps 1–2; Linux `tcp_rack_advance` from
    /// `tcp_sacktag_one` and `tcp_clean_rtx_queue`, then `tcp_rack_update_reo_wnd`).
    /// `bytes`: newly acknowledged or SACKed; `prior_high_sacked`: the highest SACKed
    /// byte before the ACK, to notice reordering (`tcp_check_sack_reordering`: a
    /// segment never retransmitted delivered below it arrived out of order).
    pub fn on_delivery(
        &mut self,
        now: Instant,
        d: &Delivery,
        bytes: u64,
        prior_high_sacked: Option<u64>,
        min_rtt: Duration,
    ) {
        if let (Some(low), Some(high)) = (d.lowest_original, prior_high_sacked) {
            if low < high {
                self.reord_seen = true;
            }
        }
        if let Some(r) = d.newest {
            let rtt = now.saturating_since(r.sent_at);
            // A retransmission acknowledged sooner than the path's min RTT was
            // probably the original's delivery (RFC 8985 §6.2 step 2).
            if !(r.tx_count > 1 && rtt < min_rtt) {
                self.advanced = true;
                self.rtt = rtt;
                if self
                    .xmit
                    .is_none_or(|x| sent_after(r.sent_at, r.end, x, self.end_seq))
                {
                    self.xmit = Some(r.sent_at);
                    self.end_seq = r.end;
                }
            }
        }
        self.update_reo_wnd(bytes);
    }

    /// A D-SACK arrived (Linux `tcp_dsack_seen` sets `rack.dsack_seen`): the next
    /// ACK may widen the reordering window.
    pub fn on_dsack(&mut self) {
        self.dsack_seen = true;
    }

    /// RFC 8985 §6.2 step 4 (Linux `tcp_rack_update_reo_wnd`): after a D-SACK, widen
    /// the window by one step, at most once per round trip (a D-SACK for data
    /// delivered before the last widening is ignored), and keep it for 16
    /// recoveries.
    fn update_reo_wnd(&mut self, bytes: u64) {
        let prior_delivered = self.delivered;
        self.delivered += bytes;
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(MAX_STEPS);
            self.dsack_seen = false;
            self.last_delivered = self.delivered;
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// A recovery ended without being undone (Linux `tcp_try_undo_recovery`).
    pub fn on_recovery_end(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// The reordering window (RFC 8985 §6.2 step 4, Linux `tcp_rack_reo_wnd`): zero
    /// while no reordering has been seen and either a recovery is under way or
    /// `reordering` segments are SACKed (the dupthresh rule folded into RACK);
    /// otherwise a quarter of the min RTT per step, at most SRTT.
    pub fn reo_wnd(
        &self,
        ca: CaState,
        sacked_segments: usize,
        reordering: u32,
        min_rtt: Duration,
        srtt: Duration,
    ) -> Duration {
        if !self.reord_seen && (ca != CaState::Open || sacked_segments >= reordering as usize) {
            return Duration::ZERO;
        }
        (min_rtt / 4)
            .saturating_mul(self.reo_wnd_steps as u64)
            .min(srtt)
    }

    /// The current reordering window in steps of min RTT / 4.
    pub fn reo_wnd_steps(&self) -> u32 {
        self.reo_wnd_steps
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`): mark lost every
    /// outstanding segment, not SACKed and not already waiting for its
    /// retransmission, that was sent before RACK's segment and has been out for
    /// RACK.rtt + `reo_wnd`. Returns how many were marked and the longest wait of
    /// those sent before RACK's segment that are not lost yet.
    fn detect_loss(
        &self,
        now: Instant,
        sb: &mut Scoreboard,
        reo_wnd: Duration,
    ) -> (usize, Option<Duration>) {
        let Some(xmit) = self.xmit else {
            return (0, None);
        };
        let deadline = self.rtt + reo_wnd;
        let mut marked = 0;
        let mut wait: Option<Duration> = None;
        for i in 0..sb.len() {
            let r = *sb.get(i).expect("index below len");
            if r.sacked || r.lost {
                continue;
            }
            if !sent_after(xmit, self.end_seq, r.sent_at, r.end) {
                if r.tx_count == 1 {
                    break;
                }
                continue;
            }
            let out = now.saturating_since(r.sent_at);
            if out >= deadline {
                if sb.mark_lost(i) {
                    marked += 1;
                }
            } else {
                let left = deadline - out;
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        (marked, wait)
    }

    /// After an ACK (Linux `tcp_rack_mark_lost`): detect losses if something was
    /// delivered, and (re)arm the reorder timer for the longest wait, plus
    /// `TCP_TIMEOUT_MIN_US`, at most `rto`; with nothing to wait for the timer stops
    /// (the kernel puts the retransmission timer back in its place). Returns how
    /// many segments were marked lost.
    pub fn mark_lost(
        &mut self,
        now: Instant,
        sb: &mut Scoreboard,
        reo_wnd: Duration,
        rto: Duration,
    ) -> usize {
        if !std::mem::take(&mut self.advanced) {
            return 0;
        }
        let (marked, wait) = self.detect_loss(now, sb, reo_wnd);
        self.timer = wait.map(|w| now + (w + TIMER_SLACK).min(rto));
        marked
    }

    /// When the reorder timer is due, if armed.
    pub fn timer(&self) -> Option<Instant> {
        self.timer
    }

    /// Stop the reorder timer (a retransmission timeout took its place).
    pub fn stop_timer(&mut self) {
        self.timer = None;
    }

    /// The reorder timer fired (Linux `tcp_rack_reo_timeout`): detect losses again;
    /// the timer is not rearmed. Returns how many segments were marked lost.
    pub fn on_timer(&mut self, now: Instant, sb: &mut Scoreboard, reo_wnd: Duration) -> usize {
        self.timer = None;
        self.detect_loss(now, sb, reo_wnd).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::{ms, t_ms};

    /// Ten segments of 100 bytes, segment `i` sent at `i` ms.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::sent_once(0, 100);
        b.track_delivery();
        for i in 0..10u64 {
            b.push(crate::tcp::sack::SegRec {
                start: i * 100,
                end: (i + 1) * 100,
                sent_at: t_ms(i),
                tx_count: 1,
                sacked: false,
                lost: false,
                app_limited: false,
            });
        }
        b
    }

    fn sack(rack: &mut Rack, b: &mut Scoreboard, now: Instant, l: u64, r: u64) {
        let prior = b.high_sacked();
        let bytes = b.sack(l, r);
        let d = b.take_delivery();
        rack.on_delivery(now, &d, bytes, prior, ms(100));
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_rtt_plus_the_window() {
        // RFC 8985 §6.2 step 5: segment 0 (sent at 0 ms) is lost once segment 5 (sent
        // at 5 ms) is SACKed and 0 has been out RACK.rtt + reo_wnd.
        let (mut rack, mut b) = (Rack::new(), board());
        sack(&mut rack, &mut b, t_ms(105), 500, 600); // RACK.rtt = 100 ms
        let w = ms(25);
        assert_eq!(rack.mark_lost(t_ms(105), &mut b, w, ms(1000)), 0);
        // Segments 0..=4 wait: the longest is segment 4's (sent at 4 ms): 125 - 101.
        assert_eq!(rack.timer(), Some(t_ms(105) + ms(24) + TIMER_SLACK));
        assert_eq!(rack.on_timer(t_ms(125), &mut b, w), 1, "segment 0 only");
        assert_eq!(rack.on_timer(t_ms(129), &mut b, w), 4);
        assert_eq!(b.lost_count(), 5, "later segments are not judged");
    }

    #[test]
    fn reordering_window_is_zero_in_recovery_or_after_dupthresh_sacks_without_reordering() {
        // Linux `tcp_rack_reo_wnd`.
        let rack = Rack::new();
        let (m, s) = (ms(100), ms(120));
        assert_eq!(rack.reo_wnd(CaState::Open, 0, 3, m, s), ms(25));
        assert_eq!(rack.reo_wnd(CaState::Open, 3, 3, m, s), Duration::ZERO);
        assert_eq!(rack.reo_wnd(CaState::Recovery, 0, 3, m, s), Duration::ZERO);
    }

    #[test]
    fn reordering_seen_keeps_the_window_open_in_recovery() {
        // `tcp_check_sack_reordering`: segment 2, never retransmitted, SACKed below the
        // highest SACKed byte: it arrived out of order.
        let (mut rack, mut b) = (Rack::new(), board());
        sack(&mut rack, &mut b, t_ms(105), 500, 600);
        sack(&mut rack, &mut b, t_ms(106), 200, 300);
        let w = rack.reo_wnd(CaState::Recovery, 2, 3, ms(100), ms(120));
        assert_eq!(w, ms(25));
    }

    #[test]
    fn a_dsack_widens_the_window_by_a_step_for_sixteen_recoveries() {
        // RFC 8985 §6.2 step 4 (Linux `tcp_rack_update_reo_wnd`): the flag is set only
        // by a D-SACK; without one the window stays at a quarter of min RTT.
        let (mut rack, mut b) = (Rack::new(), board());
        sack(&mut rack, &mut b, t_ms(105), 500, 600);
        assert_eq!(rack.reo_wnd_steps(), 1);
        rack.on_dsack();
        sack(&mut rack, &mut b, t_ms(106), 600, 700);
        assert_eq!(rack.reo_wnd_steps(), 2);
        let w = rack.reo_wnd(CaState::Open, 0, 3, ms(100), ms(120));
        assert_eq!(w, ms(50));
        assert_eq!(
            rack.reo_wnd(CaState::Open, 0, 3, ms(100), ms(40)),
            ms(40),
            "at most SRTT"
        );
        for _ in 0..RECOVERY_THRESH {
            rack.on_recovery_end();
        }
        sack(&mut rack, &mut b, t_ms(107), 700, 800);
        assert_eq!(
            rack.reo_wnd_steps(),
            1,
            "back to one step after 16 recoveries"
        );
    }

    #[test]
    fn a_retransmission_delivered_faster_than_min_rtt_does_not_advance_rack() {
        // RFC 8985 §6.2 step 2: the ACK is probably for the original.
        let (mut rack, mut b) = (Rack::new(), board());
        b.retransmitted(9, t_ms(150));
        sack(&mut rack, &mut b, t_ms(160), 900, 1000);
        assert_eq!(rack.mark_lost(t_ms(400), &mut b, ms(0), ms(1000)), 0);
    }
}
