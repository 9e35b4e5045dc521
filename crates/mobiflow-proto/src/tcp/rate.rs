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
