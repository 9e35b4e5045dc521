//! BA-SST, bandwidth-aware ssthresh (the vertical-handoff paper: Tsukamoto, Fukuda,
//! Hori and Oie, "New flow control schemes of TCP for multimodal mobile hosts", IEICE
//! Trans. Commun. E89-B(6), 2006, §IV.B, equations (1)–(2)), as a sender extension.
//!
//! On an interface change a [`PacketPair`] estimator is armed; each estimate it gives
//! sets `ssthresh = max(2·MSS, BW × RTT)`. Sampling ends with the slow start that
//! follows the change, and with a loss or a timeout.

use super::{MobilityResponse, Response, SenderCtx, SenderExtension};
use crate::tcp::config::TcpConfig;
use crate::tcp::event::SenderEvent;
use crate::tcp::handoff::InterfaceChange;
use crate::tcp::sack::Acked;
use crate::time::{Duration, Instant};

/// BA-SST's state: the estimator of the last interface change, if any.
#[derive(Clone, Debug)]
pub struct BaSst {
    refine: bool,
    reset_rtt: bool,
    pair: Option<PacketPair>,
}

impl BaSst {
    pub fn new(cfg: &TcpConfig) -> Self {
        BaSst {
            refine: cfg.ba_sst_refine,
            reset_rtt: cfg.handoff_reset_rtt,
            pair: None,
        }
    }

    /// The estimator, if an interface change armed one.
    pub fn packet_pair(&self) -> Option<&PacketPair> {
        self.pair.as_ref()
    }

    /// A loss or a timeout ends the sampling.
    fn close_if_sampled(&mut self) {
        if let Some(p) = self.pair.as_mut().filter(|p| p.samples() > 0) {
            p.close();
        }
    }
}

impl SenderExtension for BaSst {
    fn name(&self) -> &'static str {
        "ba-sst"
    }

    fn on_new_ack(&mut self, cx: &mut SenderCtx, acked: &Acked) {
        // The ACK was triggered by the latest segment it covers (a retransmission that
        // filled a hole acknowledges older ones too).
        let (Some(p), Some(sent_at)) = (&mut self.pair, acked.latest_sent) else {
            return;
        };
        let Some(bw) = p.on_ack(cx.now, acked.newly, sent_at) else {
            return;
        };
        let (Some(ss), Some(rtt)) = (p.ssthresh(cx.mss), p.rtt()) else {
            return;
        };
        cx.cc.set_ssthresh(ss);
        cx.stats.ba_sst_estimates += 1;
        cx.stats.ba_sst_last_bps = bw * 8.0;
        cx.stats.ba_sst_last_rtt = rtt;
        cx.stats.ba_sst_last_ssthresh = ss;
        cx.events.push(SenderEvent::BaSstEstimate {
            bps: bw * 8.0,
            rtt,
            ssthresh: ss,
        });
    }

    fn after_ack(&mut self, cx: &mut SenderCtx) {
        // Sampling ends with the slow start that follows the change.
        if !cx.cc.in_slow_start() {
            self.close_if_sampled();
        }
    }

    fn on_loss(&mut self, _cx: &mut SenderCtx) -> Response {
        self.close_if_sampled();
        Response::React
    }

    fn on_rto(&mut self, _cx: &mut SenderCtx) -> Response {
        self.close_if_sampled();
        Response::React
    }

    fn on_interface_change(
        &mut self,
        cx: &mut SenderCtx,
        _change: &InterfaceChange,
    ) -> MobilityResponse {
        self.pair = Some(PacketPair::new(cx.now, self.refine));
        MobilityResponse {
            reset_rtt: self.reset_rtt,
            expire_timer: false,
        }
    }

    fn on_sent(&mut self, cx: &mut SenderCtx, _len: u64) {
        if let Some(p) = &mut self.pair {
            p.on_sent(cx.now);
        }
    }
}

/// Packet-pair bandwidth estimator for BA-SST.
///
/// Armed at the interface change (`since`). Only ACKs of segments sent at or after
/// `since` count, so every sample measures the new path.
/// * The first such ACK times the first segment sent after the change: the RTT of
///   equation (1) (Hoe). Later ACKs lower it if they see a shorter round trip.
/// * Two consecutive ACKs whose segments left nearly back to back (sent at most half
///   as far apart as their ACKs arrived: a slow-start pair, [GUESS] threshold) give a
///   sample `acked bytes / ACK spacing`: the bottleneck rate (Hoe's packet pair).
/// * The first sample yields the estimate (Hoe: the second and third ACKs). With
///   `refine` (Aron & Druschel), every later sample during the same slow start
///   re-estimates with the median of the samples so far.
#[derive(Clone, Debug)]
pub struct PacketPair {
    since: Instant,
    refine: bool,
    first_sent: Option<Instant>,
    rtt: Option<Duration>,
    prev: Option<(Instant, Instant)>,
    samples: Vec<f64>,
    /// No more samples are taken (the slow start after the change ended).
    closed: bool,
}

impl PacketPair {
    pub fn new(since: Instant, refine: bool) -> Self {
        PacketPair {
            since,
            refine,
            first_sent: None,
            rtt: None,
            prev: None,
            samples: Vec::new(),
            closed: false,
        }
    }

    /// A data segment (new or retransmitted) left at `now`.
    pub fn on_sent(&mut self, now: Instant) {
        if now >= self.since && self.first_sent.is_none() {
            self.first_sent = Some(now);
        }
    }

    /// An ACK arrived at `now`, newly acknowledging `bytes`, the last of which was
    /// sent at `sent_at`. Returns a new bandwidth estimate (bytes per second) when this
    /// ACK produced one.
    pub fn on_ack(&mut self, now: Instant, bytes: u64, sent_at: Instant) -> Option<f64> {
        if self.closed || sent_at < self.since || bytes == 0 {
            return None;
        }
        let own = now - sent_at;
        self.rtt = Some(match self.rtt {
            // Hoe: "the RTT can be approximated by timing the first segment".
            None => now - self.first_sent.unwrap_or(sent_at).min(sent_at),
            Some(r) => r.min(own),
        });
        let mut estimate = None;
        if let Some((prev_ack, prev_sent)) = self.prev {
            let gap_ack = now - prev_ack;
            let gap_sent = sent_at - prev_sent;
            if !gap_ack.is_zero() && gap_sent.as_nanos() * 2 <= gap_ack.as_nanos() {
                let bw = bytes as f64 / gap_ack.as_secs_f64();
                if self.samples.is_empty() || self.refine {
                    self.samples.push(bw);
                    estimate = Some(self.bandwidth().expect("a sample exists"));
                }
            }
        }
        self.prev = Some((now, sent_at));
        estimate
    }

    /// The bandwidth estimate, bytes per second: the median of the samples.
    pub fn bandwidth(&self) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut s = self.samples.clone();
        s.sort_by(|a, b| a.total_cmp(b));
        let n = s.len();
        Some(if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        })
    }

    /// The RTT of the new path (equation (1)): the first segment's, or a shorter one
    /// seen since.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// `ssthresh = max(2·MSS, BW × RTT)` in bytes (equations (1)–(2)), once both are
    /// known.
    pub fn ssthresh(&self, mss: u32) -> Option<u64> {
        let bw = self.bandwidth()?;
        let rtt = self.rtt?;
        Some(((bw * rtt.as_secs_f64()) as u64).max(2 * mss as u64))
    }

    /// Stop sampling (the slow start after the change ended, or a loss).
    pub fn close(&mut self) {
        self.closed = true;
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Samples taken so far.
    pub fn samples(&self) -> usize {
        self.samples.len()
    }
}
