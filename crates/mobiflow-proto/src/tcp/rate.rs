//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`), for the controllers that ask for it
//! ([`CongestionController::wants_rate_samples`]: BBR).
//!
//! * At every (re)transmission the segment records the connection's delivered count,
//!   the time of the last delivery and the send time of the first segment of the
//!   current flight, and whether the connection was application-limited
//!   ([`RateSampler::on_sent`], Linux `tcp_rate_skb_sent`, draft §3.2). The scoreboard
//!   keeps this [`TxState`] beside each record (`tcp::sack`), only when a controller
//!   wants rate samples, so other controllers pay nothing per packet.
//! * An ACK delivers segments (cumulatively or by SACK); of those, the one sent last
//!   gives the sample ([`Delivered::newer`], Linux `tcp_rate_skb_delivered`, draft
//!   §3.3 "UpdateRateSample").
//! * After the ACK, [`RateSampler::sample`] (Linux `tcp_rate_gen`, draft §3.3
//!   "GenerateRateSample") gives delivered bytes over `max(send_elapsed,
//!   ack_elapsed)`, marked application-limited when the segment was sent in an
//!   application-limited phase.
//! * The application-limited phase starts when the application writes while the
//!   sender has less than a segment unsent, is not limited by cwnd and has no loss to
//!   repair ([`RateSampler::check_app_limited`], Linux `tcp_rate_check_app_limited`,
//!   draft §3.4), and ends once the data in flight then is delivered.
//!
//! Counts are in bytes (Linux counts packets).
//!
//! [`CongestionController::wants_rate_samples`]: crate::cc::CongestionController::wants_rate_samples

use crate::cc::{CaState, RateSample};
use crate::time::{Duration, Instant};

/// What a segment remembers of the connection when it was (last) sent (Linux
/// `tcp_skb_cb.tx`; the draft's `P.delivered`, `P.delivered_time`,
/// `P.first_sent_time`, `P.is_app_limited`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxState {
    pub first_tx: Instant,
    pub delivered_at: Instant,
    pub delivered: u64,
    pub app_limited: bool,
}

/// A segment delivered by the ACK being processed, with what it remembers: the
/// candidate for the rate sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub sent_at: Instant,
    pub end: u64,
    pub retransmitted: bool,
    pub tx: TxState,
}

impl Delivered {
    /// The sample comes from the most recently sent of the segments an ACK delivers;
    /// of two sent at the same time, the one ending higher (Linux
    /// `tcp_rate_skb_delivered` with `tcp_skb_sent_after`).
    pub fn newer(pick: Option<Delivered>, d: Delivered) -> Option<Delivered> {
        match pick {
            Some(p) if (p.sent_at, p.end) >= (d.sent_at, d.end) => Some(p),
            _ => Some(d),
        }
    }
}

/// The connection's delivery-rate state (Linux `tcp_sock`: `delivered`,
/// `delivered_mstamp`, `first_tx_mstamp`, `app_limited`, `lost`).
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Bytes delivered so far (cumulatively acknowledged or SACKed once each).
    delivered: u64,
    /// When `delivered` last grew.
    delivered_at: Instant,
    /// Send time of the first segment of the flight the last sample measured.
    first_tx: Instant,
    /// The application-limited phase lasts until `delivered` passes this (0: none).
    app_limited: u64,
    /// Bytes marked lost so far when the last sample was taken.
    lost: u64,
}

/// The connection state an ACK's sample is taken with ([`RateSampler::sample`]).
#[derive(Copy, Clone, Debug)]
pub struct AckState {
    pub now: Instant,
    /// Bytes newly delivered by this ACK, and the delivered segment sent last.
    pub delivered: u64,
    pub pick: Option<Delivered>,
    /// Bytes ever marked lost (the scoreboard's count).
    pub lost_total: u64,
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub prior_in_flight: u64,
    pub in_flight: u64,
    pub ca_state: CaState,
    pub next_departure: Instant,
    pub mss: u32,
    /// The ACK alone cumulatively acknowledged less than an MSS, with no SACK
    /// information in it and none held before (the part of Linux's
    /// `FLAG_ACK_MAYBE_DELAYED` the sender's ACK processing knows; the sample adds
    /// `prior_delivered + 1 == delivered`).
    pub runt_ack: bool,
}

impl RateSampler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes delivered so far (Linux `tp->delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// In an application-limited phase (Linux `tp->app_limited != 0`).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// A segment leaves at `now`; `nothing_outstanding`: no other segment is in
    /// flight (Linux `!tp->packets_out`), so the flight starts here (draft §3.2).
    pub fn on_sent(&mut self, now: Instant, nothing_outstanding: bool) -> TxState {
        if nothing_outstanding {
            self.first_tx = now;
            self.delivered_at = now;
        }
        TxState {
            first_tx: self.first_tx,
            delivered_at: self.delivered_at,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
        }
    }

    /// The application writes while the sender is application-limited (less than a
    /// segment unsent, room in cwnd, no lost segment awaiting retransmission): mark
    /// the data in flight, so that samples until it is delivered are
    /// application-limited (Linux `tcp_rate_check_app_limited`, draft §3.4).
    pub fn check_app_limited(&mut self, limited: bool, in_flight: u64) {
        if limited {
            self.mark_app_limited(in_flight);
        }
    }

    /// Start an application-limited phase that ends when `in_flight` more bytes are
    /// delivered (Linux `tp->app_limited = (delivered + in_flight) ?: 1`).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// The rate sample of an ACK (Linux `tcp_rate_gen`, draft §3.3).
    pub fn sample(&mut self, a: &AckState) -> RateSample {
        self.delivered += a.delivered;
        // The phase ends once the marked data has been delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if a.delivered > 0 {
            self.delivered_at = a.now;
        }
        let losses = a.lost_total.saturating_sub(self.lost);
        self.lost = a.lost_total;
        let mut rs = RateSample {
            now: a.now,
            delivered: None,
            interval: None,
            prior_delivered: 0,
            is_app_limited: false,
            acked_sacked: a.delivered,
            losses,
            rtt: None,
            is_ack_delayed: false,
            srtt: a.srtt,
            min_rtt: a.min_rtt,
            prior_in_flight: a.prior_in_flight,
            in_flight: a.in_flight,
            delivered_total: self.delivered,
            delivered_at: self.delivered_at,
            ca_state: a.ca_state,
            next_departure: a.next_departure,
            mss: a.mss,
        };
        let Some(p) = a.pick else {
            return rs;
        };
        // The send time of the newest delivered segment starts the next flight's
        // send phase.
        self.first_tx = p.sent_at;
        // Linux's `ca_rtt_us`: the RTT of the newest delivered segment, unless it was
        // retransmitted (Karn). (Linux then falls back on the echoed timestamp for an
        // ACK that advances SND.UNA; here such an ACK gives no RTT to the controller.)
        if !p.retransmitted {
            rs.rtt = Some(a.now - p.sent_at);
        }
        rs.prior_delivered = p.tx.delivered;
        rs.is_app_limited = p.tx.app_limited;
        rs.delivered = Some(self.delivered - p.tx.delivered);
        // `tcp_clean_rtx_queue`: a runt ACK whose segment was sent when everything
        // before it had been delivered (`prior_delivered + 1 == tp->delivered`).
        rs.is_ack_delayed = a.runt_ack && rs.delivered == Some(a.delivered);
        let send_elapsed = p.sent_at - p.tx.first_tx;
        let ack_elapsed = a.now - p.tx.delivered_at;
        let interval = send_elapsed.max(ack_elapsed);
        // An interval shorter than the minimum RTT is an artefact (ACK compression of
        // a stretched ACK, a spurious retransmission): no rate from it.
        // (Linux `tcp_min_rtt` is "infinite" before the first RTT sample.)
        if a.min_rtt.is_none_or(|m| interval < m) || interval.is_zero() {
            return rs;
        }
        rs.interval = Some(interval);
        rs
    }
}

#[cfg(test)]
mod tests {
    //! Scripted flights through the scoreboard and the sampler, in the terms of
    //! draft-cheng-iccrg-delivery-rate-estimation-02 (§2.2 the two phases of a flight,
    //! §3 the algorithm); segments of 1000 bytes, times in milliseconds.
    use super::*;
    use crate::tcp::sack::{Scoreboard, SegRec};
    use crate::time::test_util::t_ms;

    const SEG: u64 = 1000;

    struct Conn {
        sb: Scoreboard,
        r: RateSampler,
        nxt: u64,
        min_rtt: Option<Duration>,
        /// The sender saw the next ACK as a runt ACK (`AckState::runt_ack`).
        runt: bool,
    }

    impl Conn {
        fn new() -> Self {
            let mut sb = Scoreboard::new();
            sb.track_rate();
            Conn {
                sb,
                r: RateSampler::new(),
                nxt: 0,
                min_rtt: Some(Duration::from_millis(50)),
                runt: false,
            }
        }
        /// A connection that sent `n` segments 1 ms apart from time zero.
        fn sent(n: u64) -> Conn {
            let mut c = Conn::new();
            for k in 0..n {
                c.send(t_ms(k));
            }
            c
        }
        fn send(&mut self, at: Instant) {
            let tx = self.r.on_sent(at, self.sb.is_empty());
            self.sb.push(SegRec {
                start: self.nxt,
                end: self.nxt + SEG,
                sent_at: at,
                tx_count: 1,
                sacked: false,
                lost: false,
                app_limited: false,
            });
            self.sb.set_tx(self.sb.len() - 1, tx);
            self.nxt += SEG;
        }
        fn sample(&mut self, at: Instant) -> RateSample {
            let (delivered, pick) = self.sb.take_delivered();
            self.r.sample(&AckState {
                now: at,
                delivered,
                pick,
                lost_total: self.sb.lost_total(),
                srtt: None,
                min_rtt: self.min_rtt,
                prior_in_flight: 0,
                in_flight: self.sb.pipe(),
                ca_state: CaState::Open,
                next_departure: at,
                mss: SEG as u32,
                runt_ack: self.runt,
            })
        }
        fn ack(&mut self, at: Instant, ack: u64) -> RateSample {
            self.sb.ack_to(ack);
            self.sample(at)
        }
        fn sack(&mut self, at: Instant, l: u64, r: u64) -> RateSample {
            self.sb.sack(l, r);
            self.sample(at)
        }
    }

    /// `FLAG_ACK_MAYBE_DELAYED` needs, besides the runt ACK the sender recognises,
    /// `prior_delivered + 1 == tp->delivered`: the segment was sent when everything
    /// before it had been delivered. A segment sent behind another one still in
    /// flight was not alone, and its ACK is not taken as possibly delayed.
    #[test]
    fn a_runt_ack_is_possibly_delayed_only_for_a_segment_sent_alone() {
        let mut c = Conn::sent(1);
        c.runt = true;
        assert!(c.ack(t_ms(100), SEG).is_ack_delayed);
        let mut c = Conn::sent(2);
        c.ack(t_ms(100), SEG);
        c.runt = true;
        assert!(!c.ack(t_ms(101), 2 * SEG).is_ack_delayed);
        let mut c = Conn::sent(1);
        assert!(!c.ack(t_ms(100), SEG).is_ack_delayed, "not a runt ACK");
    }

    fn us(x: f64) -> Instant {
        Instant::from_nanos((x * 1e6) as u64)
    }

    /// §2.2, steady state: a flight of 10 segments sent 1 ms apart, each ACK
    /// releasing the next flight's segment. Every sample of the second flight spans
    /// 10 segments over max(send_elapsed, ack_elapsed) = 100 ms.
    #[test]
    fn a_flight_clocked_by_acks_is_measured_over_its_round_trip() {
        let mut c = Conn::sent(10);
        for k in 0..10 {
            let rs = c.ack(t_ms(100 + k), (k + 1) * SEG);
            // The first flight started the measurement at the first send: the
            // delivered count at send was 0 for all of it.
            assert_eq!(rs.delivered, Some((k + 1) * SEG));
            c.send(t_ms(100 + k));
        }
        for k in 0..10 {
            let rs = c.ack(t_ms(200 + k), (11 + k) * SEG);
            assert_eq!(rs.delivered, Some(10 * SEG), "ack {k}");
            assert_eq!(rs.interval, Some(Duration::from_millis(100)), "ack {k}");
            assert_eq!(rs.prior_delivered, (k + 1) * SEG);
            assert!(!rs.is_app_limited);
        }
    }

    /// §2.2: the send phase guards against ACK compression. The second flight's ACKs
    /// arrive bunched (0.1 ms apart): ack_elapsed shrinks below the 100 ms the flight
    /// took to send, and the interval is the send phase, so the rate is the rate the
    /// data was sent at, not the rate its ACKs came back at.
    #[test]
    fn compressed_acks_do_not_raise_the_rate_above_the_sending_rate() {
        let mut c = Conn::sent(10);
        for k in 0..10 {
            c.ack(t_ms(100 + k), (k + 1) * SEG);
            c.send(t_ms(100 + k));
        }
        for k in 0..10u64 {
            let rs = c.ack(us(200.0 + 0.1 * k as f64), (11 + k) * SEG);
            let ack_elapsed = us(200.0 + 0.1 * k as f64) - t_ms(100 + k);
            assert!(ack_elapsed <= Duration::from_millis(100));
            assert_eq!(rs.interval, Some(Duration::from_millis(100)), "ack {k}");
            assert_eq!(rs.delivered, Some(10 * SEG));
        }
    }

    /// §3.3: of the segments an ACK delivers, the one sent last gives the sample; a
    /// SACK of a later segment delivers it, and the cumulative ACK that later covers
    /// it does not count it again.
    #[test]
    fn the_most_recently_sent_delivered_segment_gives_the_sample() {
        let mut c = Conn::sent(4);
        // Segment 0 is lost; segments 2..4 are SACKed by one ACK.
        let rs = c.sack(t_ms(103), 2 * SEG, 4 * SEG);
        assert_eq!(rs.acked_sacked, 2 * SEG);
        assert_eq!(rs.delivered, Some(2 * SEG));
        // send_elapsed = 3 ms (segment 3 sent at 3, the flight began at 0);
        // ack_elapsed = 103 ms since the last delivery (none: the flight's start).
        assert_eq!(rs.interval, Some(Duration::from_millis(103)));
        // The cumulative ACK of 0..4 delivers 0 and 1 only.
        let rs = c.ack(t_ms(110), 4 * SEG);
        assert_eq!(rs.acked_sacked, 2 * SEG);
        assert_eq!(c.r.delivered(), 4 * SEG);
    }

    /// §3.4: the application wrote with less than a segment unsent and room in cwnd:
    /// the samples of what is sent until the data in flight then is delivered are
    /// application-limited (Linux `tcp_rate_check_app_limited`); later ones are not.
    #[test]
    fn application_limited_phase_marks_samples_until_its_bubble_is_delivered() {
        let mut c = Conn::new();
        c.send(t_ms(0));
        c.send(t_ms(1));
        c.r.check_app_limited(true, c.sb.pipe());
        assert!(c.r.is_app_limited());
        c.send(t_ms(2));
        let rs = c.ack(t_ms(100), SEG);
        assert!(!rs.is_app_limited, "sent before the phase");
        assert!(c.r.is_app_limited(), "the bubble is not delivered yet");
        let rs = c.ack(t_ms(102), 3 * SEG);
        assert!(rs.is_app_limited, "sent in the phase");
        assert!(!c.r.is_app_limited(), "the bubble is delivered");
        c.send(t_ms(102));
        let rs = c.ack(t_ms(202), 4 * SEG);
        assert!(!rs.is_app_limited);
    }

    /// Linux `tcp_rate_gen`: an interval shorter than the minimum RTT is not a valid
    /// sample (delivered is still reported).
    #[test]
    fn an_interval_shorter_than_the_minimum_rtt_is_no_rate() {
        let mut c = Conn::new();
        c.min_rtt = Some(Duration::from_millis(200));
        c.send(t_ms(0));
        let rs = c.ack(t_ms(100), SEG);
        assert_eq!(rs.delivered, Some(SEG));
        assert_eq!(rs.interval, None);
        c.min_rtt = Some(Duration::from_millis(50));
        c.send(t_ms(100));
        let rs = c.ack(t_ms(200), 2 * SEG);
        assert_eq!(rs.interval, Some(Duration::from_millis(100)));
    }
}
