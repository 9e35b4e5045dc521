//! AFC's sender half (Sanadhya and Sivakumar, "Adaptive Flow Control for TCP on Mobile
//! Phones", IEEE INFOCOM 2011; the receiver half and the parameters are in
//! `flow::afc`), as a sender extension. Three rules:
//!
//! * **Rate option** (mechanism 1, sender placement): the flow window is the
//!   advertised window plus `AR × SRTT`, AR taken from the option of the last ACK.
//! * **Hidden losses** (mechanism 2): after a zero window, congestion responses
//!   (window reductions, RTO backoff) are suppressed until data sent after the window
//!   reopened is acknowledged (retransmissions still happen); segments a full receive
//!   buffer dropped are found and repaired at once ([`AfcSender::loss_cutoff`]).
//! * **Pacing** (mechanism 4): a jump of the usable window by more than
//!   `burst_segments` is paced at `max(AR, cwnd/SRTT)`.

use super::pacing::Release;
use super::{Response, SenderCtx, SenderExtension};
use crate::flow::afc::{decode_rate, AfcConfig, Placement};
use crate::time::{Duration, Instant};
use crate::wire::Segment;

/// AFC's sender state.
#[derive(Clone, Debug)]
pub struct AfcSender {
    cfg: AfcConfig,
    /// AR the receiver carried in the option, bytes per second.
    ar_peer: Option<f64>,
    /// Buffer-loss hiding: a zero window was seen, and `zw_fresh_from` is `snd_nxt`
    /// when the window reopened (data from there on is fresh).
    zw_seen: bool,
    zw_fresh_from: Option<u64>,
    /// Burst control: bytes still to pace, bytes that may leave unpaced, and the
    /// earliest time of the next paced segment (the release time shared with Linux's
    /// pacing, `tcp::pacing`).
    pace_left: u64,
    pace_credit: u64,
    pace_next: Release,
}

impl AfcSender {
    pub fn new(cfg: AfcConfig) -> Self {
        AfcSender {
            cfg,
            ar_peer: None,
            zw_seen: false,
            zw_fresh_from: None,
            pace_left: 0,
            pace_credit: 0,
            pace_next: Release::default(),
        }
    }

    /// AR the receiver reported in the option, bytes per second.
    pub fn ar_peer(&self) -> Option<f64> {
        self.ar_peer
    }

    /// Buffer-loss hiding is in force (a zero window was seen, fresh data not yet
    /// acknowledged).
    pub fn hiding_congestion(&self) -> bool {
        self.zw_seen
    }

    /// Mechanism 2: after a zero window, a congestion signal is a receive-buffer loss.
    fn response(&self) -> Response {
        if self.zw_seen {
            Response::Hide
        } else {
            Response::React
        }
    }

    /// Time a paced segment of `len` bytes occupies: `len / max(AR_peer, cwnd/SRTT)`
    /// (mobiflow's rule, assumed: the paper does not give one).
    fn pace_gap(&self, len: u64, cwnd: u64, srtt: Option<Duration>) -> Duration {
        let Some(srtt) = srtt.filter(|d| !d.is_zero()) else {
            return Duration::ZERO;
        };
        let rate = (cwnd as f64 / srtt.as_secs_f64()).max(self.ar_peer.unwrap_or(0.0));
        if rate > 0.0 {
            Duration::from_secs_f64(len as f64 / rate)
        } else {
            Duration::ZERO
        }
    }
}

impl SenderExtension for AfcSender {
    fn name(&self) -> &'static str {
        "afc"
    }

    /// Mechanism 1: `AR × SRTT` beyond the advertised window.
    fn extra_window(&self, srtt: Option<Duration>) -> u64 {
        match (self.ar_peer, srtt) {
            (Some(ar), Some(srtt))
                if self.cfg.adapt_rate && self.cfg.placement == Placement::Sender =>
            {
                (ar * srtt.as_secs_f64()) as u64
            }
            _ => 0,
        }
    }

    /// The option, and mechanism 2: note zero windows and when fresh data is
    /// acknowledged.
    fn on_window_update(&mut self, cx: &mut SenderCtx, seg: &Segment) {
        if let Some(code) = seg.exp.afc_rate {
            self.ar_peer = Some(decode_rate(code));
        }
        if !self.cfg.hide_buffer_losses {
            return;
        }
        if self.zw_fresh_from.is_some_and(|f| seg.ack > f) {
            self.zw_seen = false;
            self.zw_fresh_from = None;
        }
        // A window smaller than a segment: the peer's buffer is full.
        if seg.wnd < cx.mss as u64 {
            self.zw_seen = true;
            self.zw_fresh_from = None;
        } else if self.zw_seen && self.zw_fresh_from.is_none() {
            self.zw_fresh_from = Some(cx.snd_nxt);
        }
    }

    /// Mechanism 2: after a zero window, a loss is taken as a receive-buffer loss and
    /// kept from congestion control; the recovery still retransmits.
    fn on_loss(&mut self, _cx: &mut SenderCtx) -> Response {
        self.response()
    }

    /// Mechanism 2: a timeout after a zero window is a receive-buffer loss, not
    /// congestion: the timer is not backed off either (RFC 6298 §5.5's backoff is a
    /// congestion response), or a retransmission dropped by a still-full buffer would
    /// idle the sender for seconds; and the window does not collapse.
    fn on_rto(&mut self, _cx: &mut SenderCtx) -> Response {
        self.response()
    }

    /// Mechanism 2, its repair half. The seed hides receive-buffer losses from
    /// congestion control but does not say how they are repaired; this is mobiflow's
    /// rule. A segment AFC sends beyond the advertised window (its `AR x RTT` term) is
    /// dropped by a receiver whose application stopped reading, and nothing sent after
    /// it can arrive either: a tail loss that no duplicate ACK reveals, left to the
    /// retransmission timer (hundreds of timeouts in a 600 s run, each resending the
    /// whole window). While a buffer loss is presumed (`zw_seen`), an outstanding
    /// segment that is neither acknowledged nor SACKed although it was sent long enough
    /// ago to have reached the receiver before this ACK left it (SRTT plus the
    /// reordering window of RACK, min_RTT / 4: RFC 8985 §6.2) was dropped: it is
    /// marked lost and repaired now, as a hidden loss (no congestion response).
    fn loss_cutoff(&self, cx: &SenderCtx) -> Option<Instant> {
        if !self.zw_seen || !self.cfg.hide_buffer_losses {
            return None;
        }
        let (Some(srtt), Some(min_rtt)) = (cx.rtt.srtt(), cx.rtt.min_rtt()) else {
            return None;
        };
        let age = srtt + min_rtt / 4;
        (cx.now.as_nanos() >= age.as_nanos()).then(|| cx.now - age)
    }

    fn on_losses_marked(&mut self, cx: &mut SenderCtx) {
        cx.stats.buffer_loss_repairs += 1;
    }

    /// Mechanism 2: while receive-buffer losses are hidden, the first unacknowledged
    /// segment is resent by the repair long after the last ACK that advanced `snd_una`
    /// armed the timer, so the timer is restarted with it, as Linux re-arms the RTO
    /// when it retransmits the head of its queue (`tcp_xmit_retransmit_queue`).
    /// Otherwise the RTO fires before the repair can be acknowledged and resends the
    /// whole window a second time.
    fn restarts_timer_on_retransmit(&self, head: bool) -> bool {
        head && self.zw_seen && self.cfg.hide_buffer_losses
    }

    fn holds_transmit(&mut self, now: Instant, mss: u32) -> bool {
        self.pace_left > 0 && self.pace_credit < mss as u64 && self.pace_next.holds(now)
    }

    fn on_sent(&mut self, cx: &mut SenderCtx, len: u64) {
        if self.pace_left == 0 {
            return;
        }
        if self.pace_credit >= len {
            self.pace_credit -= len;
        } else {
            self.pace_credit = 0;
            cx.stats.paced_segments += 1;
        }
        if self.pace_credit < cx.mss as u64 {
            self.pace_next
                .set(cx.now + self.pace_gap(len, cx.cwnd, cx.rtt.srtt()));
        }
        self.pace_left = self.pace_left.saturating_sub(len);
        if self.pace_left == 0 {
            self.pace_next.clear();
            self.pace_credit = 0;
        }
    }

    fn watches_room(&self) -> bool {
        self.cfg.pacing
    }

    /// Mechanism 4: after an input, pace the excess of a window jump.
    fn after_input(&mut self, cx: &mut SenderCtx, room_before: u64, room: u64) {
        if !self.cfg.pacing {
            return;
        }
        let burst = self.cfg.burst_segments as u64 * cx.mss as u64;
        if room > room_before + burst {
            if self.pace_left == 0 {
                self.pace_credit = burst;
                self.pace_next.clear();
            }
            self.pace_left = self.pace_left.max(room);
        } else if self.pace_left > 0 {
            self.pace_left = self.pace_left.max(room);
        }
    }

    /// A pacing slot that has come is no longer a constraint (nor a timer).
    fn on_timer(&mut self, now: Instant) {
        self.pace_next.on_timer(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.pace_next.poll_timeout().filter(|_| self.pace_left > 0)
    }
}
