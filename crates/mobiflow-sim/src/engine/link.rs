//! One direction of a link: a queue (DropTail or RED) in front of a serialiser whose
//! rate follows a constant, a piecewise schedule or a Mahimahi trace, then a
//! propagation delay, with outages during which nothing gets through.
//!
//! The link knows nothing of the event loop: the engine calls `enqueue`, `start_tx`,
//! `finish_tx` and reads the times they return.

use crate::model::{DelayModel, DirSpec, MahimahiTrace, QueueLimit, QueueSpec, RateModel};
use mobiflow_proto::time::{Duration, Instant};
use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::sync::Arc;

pub type PktId = u32;

/// Counters of one link direction.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
    pub outage_losses: u64,
    /// Packets lost to the direction's random loss.
    pub random_losses: u64,
    pub queue_max: u64,
    /// Integral of the number of waiting packets over time, in packet-nanoseconds
    /// (the sum of every packet's wait, by Little's law).
    pub queue_area: u128,
}

#[derive(Clone, Debug)]
struct RedState {
    min_th: f64,
    max_th: f64,
    w_q: f64,
    max_p: f64,
    gentle: bool,
    mean_pktsize: u32,
    avg: f64,
    count: i64,
    idle_since: Option<Instant>,
}

/// State of a Mahimahi trace being replayed.
#[derive(Clone, Debug)]
pub struct TraceState {
    pub trace: Arc<MahimahiTrace>,
    /// Bytes of the head packet already sent in earlier opportunities.
    pub head_sent: u32,
    /// Opportunities before this instant have been used or wasted.
    pub used_until: Instant,
}

impl TraceState {
    /// The first delivery opportunity at or after `now`, and how many opportunities
    /// share that millisecond.
    pub fn next_opportunity(&self, now: Instant) -> Option<(Instant, u32)> {
        let t = &self.trace;
        if t.opportunities_ms.is_empty() {
            return None;
        }
        let period = t.period_ms.max(1);
        let now_ms = now.max(self.used_until).as_nanos().div_ceil(1_000_000);
        // Opportunity k*period + o for every cycle k: look in the cycle before (an
        // opportunity at o == period belongs to it), this one and the next ones.
        let mut cycle = (now_ms / period).saturating_sub(1);
        loop {
            let base = cycle.saturating_mul(period);
            let i = t
                .opportunities_ms
                .partition_point(|&o| base.saturating_add(o) < now_ms);
            if i < t.opportunities_ms.len() {
                let o = t.opportunities_ms[i];
                let j = t.opportunities_ms[i..].partition_point(|&x| x == o);
                // Saturating: an opportunity beyond the range of simulated time never
                // comes (the reader keeps timestamps to half that range).
                let ns = base.saturating_add(o).saturating_mul(1_000_000);
                return Some((Instant::from_nanos(ns), j as u32));
            }
            cycle += 1;
        }
    }
}

/// Delivery opportunities of `trace` at instants strictly before `t` (the trace
/// repeating every period from time 0, as [`TraceState::next_opportunity`] plays it).
pub fn trace_opportunities_before(trace: &MahimahiTrace, t: Instant) -> u64 {
    let ops = &trace.opportunities_ms;
    if ops.is_empty() {
        return 0;
    }
    let period = trace.period_ms.max(1);
    // An opportunity at integer millisecond x is before t iff x < ceil(t in ms).
    let m = t.as_nanos().div_ceil(1_000_000);
    let q = m / period;
    let in_cycle = |k: u64| ops.partition_point(|&o| k * period + o < m) as u64;
    // Cycles up to q - 2 end (at most at (k + 1) * period) before m: all count.
    let full = q.saturating_sub(1) * ops.len() as u64;
    let prev = if q >= 1 { in_cycle(q - 1) } else { 0 };
    full + prev + in_cycle(q)
}

/// The capacity a trace offered in `[from, to)`, bits per second: opportunities in
/// the interval times the bytes each carries, over the interval (what Mahimahi's
/// `mm-graph` draws as capacity).
pub fn trace_capacity_bps(trace: &MahimahiTrace, from: Instant, to: Instant) -> f64 {
    let span = to.saturating_since(from).as_secs_f64();
    if span <= 0.0 {
        return 0.0;
    }
    let n = trace_opportunities_before(trace, to) - trace_opportunities_before(trace, from);
    n as f64 * f64::from(trace.mtu) * 8.0 / span
}

/// A packet whose departure is already computed (constant or scheduled rate).
#[derive(Copy, Clone, Debug)]
pub struct Sched {
    /// When it joined the queue.
    pub enq: Instant,
    /// When its serialisation starts and ends.
    pub start: Instant,
    pub end: Instant,
    pub bytes: u32,
    pub id: PktId,
}

/// One direction of a link.
///
/// With a constant or scheduled rate, a FIFO serialiser's departure times are known
/// when a packet joins the queue: `start = max(arrival, previous end)` and
/// `end = start + size / rate`. The direction computes them at once and puts the packet in its
/// propagation pipe, so a packet costs one event (its arrival at the far end) instead
/// of two. The queue length at any instant is the number of packets whose start is
/// still ahead. A rate change, a delay change or an outage recomputes or discards the
/// packets not yet sent. With a Mahimahi trace, packets wait in `queue` and leave at
/// delivery opportunities.
#[derive(Debug)]
pub struct Dir {
    pub index: usize,
    pub from: usize,
    pub to: usize,
    pub rate_bps: u64,
    pub delay: Duration,
    /// Packets that cannot be scheduled yet (trace mode, or a rate of zero), with the
    /// time they joined.
    pub queue: VecDeque<(PktId, u32, Instant)>,
    /// Scheduled packets that have not finished serialisation, in order.
    pub pending: VecDeque<Sched>,
    /// The serialiser is busy until then.
    pub busy_until: Instant,
    limit: QueueLimit,
    red: Option<RedState>,
    pub down: bool,
    /// Incremented whenever the pipe's head may have changed other than by delivery;
    /// arrival events carry it, so stale ones are recognised.
    pub pipe_gen: u32,
    /// Latest delivery time scheduled, to keep the direction FIFO when delay drops.
    pub last_arrival: Instant,
    /// Packets propagating towards the far end (and scheduled ones, at its tail), in
    /// arrival order (arrival times never decrease, so only the head needs an event).
    pub pipe: VecDeque<(Instant, PktId)>,
    pub trace: Option<TraceState>,
    /// An opportunity event is pending (trace mode).
    pub opp_pending: bool,
    pub stats: DirStats,
    rng: Xoshiro256PlusPlus,
    /// Random loss probability per arriving packet.
    loss: f64,
}

/// What happened to an arriving packet.
pub enum Admit {
    /// Scheduled; `true` if it is now the pipe's head (an arrival event is needed).
    Scheduled(bool),
    /// Waiting in `queue` (trace mode or zero rate).
    Queued,
    Dropped,
    /// Lost to the direction's random loss.
    Lost,
}

impl Dir {
    pub fn new(
        index: usize,
        from: usize,
        to: usize,
        spec: &DirSpec,
        rng: Xoshiro256PlusPlus,
    ) -> Dir {
        let (rate_bps, trace) = match &spec.rate {
            RateModel::Constant(r) => (*r, None),
            RateModel::Schedule { points, .. } => (points.first().map_or(0, |p| p.1), None),
            RateModel::Trace(t) => (
                t.mean_rate_bps() as u64,
                Some(TraceState {
                    trace: t.clone(),
                    head_sent: 0,
                    used_until: Instant::ZERO,
                }),
            ),
        };
        let delay = match &spec.delay {
            DelayModel::Constant(d) => *d,
            DelayModel::Schedule { points, .. } => points.first().map_or(Duration::ZERO, |p| p.1),
        };
        let (limit, red) = match &spec.queue {
            QueueSpec::DropTail { limit } => (*limit, None),
            QueueSpec::Red {
                limit,
                min_th,
                max_th,
                w_q,
                max_p,
                gentle,
                mean_pktsize,
            } => (
                *limit,
                Some(RedState {
                    min_th: *min_th,
                    max_th: *max_th,
                    w_q: *w_q,
                    max_p: *max_p,
                    gentle: *gentle,
                    mean_pktsize: *mean_pktsize,
                    avg: 0.0,
                    count: -1,
                    idle_since: Some(Instant::ZERO),
                }),
            ),
        };
        Dir {
            index,
            from,
            to,
            rate_bps,
            delay,
            queue: VecDeque::new(),
            pending: VecDeque::with_capacity(64),
            busy_until: Instant::ZERO,
            limit,
            red,
            down: false,
            pipe_gen: 0,
            last_arrival: Instant::ZERO,
            pipe: VecDeque::with_capacity(64),
            trace,
            opp_pending: false,
            stats: DirStats::default(),
            rng,
            loss: spec.loss,
        }
    }

    fn scheduled_mode(&self) -> bool {
        self.trace.is_none() && self.rate_bps > 0 && !self.down
    }

    /// Retire scheduled packets whose serialisation ended by `now`.
    pub fn advance(&mut self, now: Instant) {
        while let Some(f) = self.pending.front() {
            if f.end > now {
                break;
            }
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += f.bytes as u64;
            self.pending.pop_front();
        }
    }

    /// Packets waiting at `now` (not counting the one being serialised). Call
    /// `advance(now)` first.
    pub fn waiting(&self, now: Instant) -> usize {
        let in_service = self.pending.front().is_some_and(|f| f.start <= now) as usize;
        self.queue.len() + self.pending.len() - in_service
    }

    /// Bytes waiting at `now`. Call `advance(now)` first.
    pub fn waiting_bytes(&self, now: Instant) -> u64 {
        let mut b: u64 = self.queue.iter().map(|q| q.1 as u64).sum();
        for p in self.pending.iter() {
            if p.start > now {
                b += p.bytes as u64;
            }
        }
        b
    }

    fn red_drop(&mut self, now: Instant, qlen: usize) -> bool {
        let rate = self.rate_bps.max(1);
        let idle = qlen == 0 && self.pending.is_empty();
        let busy_until = self.busy_until;
        let Some(red) = self.red.as_mut() else {
            return false;
        };
        // Floyd & Jacobson 1993 §4; ns-2 red.cc: after an idle period the average
        // decays as if m small packets had arrived to an empty queue.
        if idle {
            let since = red.idle_since.unwrap_or(busy_until).max(busy_until);
            let pkt_time = red.mean_pktsize as f64 * 8.0 / rate as f64;
            let m = now.saturating_since(since).as_secs_f64() / pkt_time.max(1e-12);
            red.avg *= (1.0 - red.w_q).powf(m);
            red.idle_since = None;
        }
        red.avg = (1.0 - red.w_q) * red.avg + red.w_q * qlen as f64;
        let avg = red.avg;
        let pb = if avg < red.min_th {
            red.count = -1;
            return false;
        } else if avg < red.max_th {
            red.max_p * (avg - red.min_th) / (red.max_th - red.min_th)
        } else if red.gentle && avg < 2.0 * red.max_th {
            red.max_p + (1.0 - red.max_p) * (avg - red.max_th) / red.max_th
        } else {
            red.count = 0;
            return true;
        };
        red.count += 1;
        // Uniformly spaced drops: pa = pb / (1 - count * pb).
        let denom = 1.0 - red.count as f64 * pb;
        let pa = if denom <= 0.0 {
            1.0
        } else {
            (pb / denom).min(1.0)
        };
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if u < pa {
            if let Some(red) = self.red.as_mut() {
                red.count = 0;
            }
            true
        } else {
            false
        }
    }

    /// A packet of `bytes` arrives at the queue.
    pub fn enqueue(&mut self, now: Instant, id: PktId, bytes: u32) -> Admit {
        if self.down {
            self.stats.outage_losses += 1;
            return Admit::Dropped;
        }
        if self.loss > 0.0 {
            let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            if u < self.loss {
                self.stats.random_losses += 1;
                return Admit::Lost;
            }
        }
        self.advance(now);
        let qlen = self.waiting(now);
        let over = match self.limit {
            QueueLimit::Packets(n) => qlen as u64 >= n as u64,
            QueueLimit::Bytes(b) => self.waiting_bytes(now) + bytes as u64 > b,
        };
        if over || self.red_drop(now, qlen) {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        if self.scheduled_mode() {
            let was_empty = self.pipe.is_empty();
            self.schedule(now, id, bytes);
            self.stats.queue_max = self.stats.queue_max.max(self.waiting(now) as u64);
            Admit::Scheduled(was_empty)
        } else {
            self.queue.push_back((id, bytes, now));
            self.stats.queue_max = self.stats.queue_max.max(self.queue.len() as u64);
            Admit::Queued
        }
    }

    /// Compute the departure and arrival of a packet that joined at `enq`.
    fn schedule(&mut self, enq: Instant, id: PktId, bytes: u32) {
        let start = enq.max(self.busy_until);
        let end = start + Duration::transmission(bytes as u64, self.rate_bps);
        self.busy_until = end;
        self.stats.queue_area += (start - enq).as_nanos() as u128;
        self.pending.push_back(Sched {
            enq,
            start,
            end,
            bytes,
            id,
        });
        let arrive = (end + self.delay).max(self.last_arrival);
        self.last_arrival = arrive;
        self.pipe.push_back((arrive, id));
    }

    /// Recompute every packet not yet sent at `now` (after a rate or delay change).
    /// The packet being serialised keeps its end time and takes the current delay.
    /// Returns true if the pipe is non-empty (its head needs a fresh event; the
    /// generation has changed).
    pub fn reschedule(&mut self, now: Instant) -> bool {
        self.advance(now);
        let n = self.pending.len();
        let mut redo: Vec<Sched> = self.pending.drain(..).collect();
        for _ in 0..n {
            self.pipe.pop_back();
        }
        for s in &redo {
            self.stats.queue_area -= (s.start - s.enq).as_nanos() as u128;
        }
        self.last_arrival = self.pipe.back().map_or(Instant::ZERO, |p| p.0);
        self.busy_until = now;
        let mut rest = 0;
        if let Some(first) = redo.first().copied() {
            if first.start <= now {
                // In service: finishes as planned, propagates with today's delay.
                self.stats.queue_area += (first.start - first.enq).as_nanos() as u128;
                self.busy_until = first.end;
                self.pending.push_back(first);
                let arrive = (first.end + self.delay).max(self.last_arrival);
                self.last_arrival = arrive;
                self.pipe.push_back((arrive, first.id));
                rest = 1;
            }
        }
        let tail: Vec<Sched> = redo.drain(rest..).collect();
        if self.scheduled_mode() {
            for s in tail {
                self.schedule(s.enq, s.id, s.bytes);
            }
            while let Some((id, bytes, enq)) = self.queue.pop_front() {
                self.schedule(enq, id, bytes);
            }
        } else {
            for s in tail.into_iter().rev() {
                self.queue.push_front((s.id, s.bytes, s.enq));
            }
        }
        self.pipe_gen = self.pipe_gen.wrapping_add(1);
        !self.pipe.is_empty()
    }

    /// Use delivery opportunities (trace mode): `count` opportunities of `mtu` bytes at
    /// `now` (Mahimahi semantics: a packet may span opportunities; unused bytes are
    /// lost). Returns true if the pipe was empty before (its head needs an event).
    pub fn use_opportunities(&mut self, now: Instant, count: u32) -> bool {
        let was_empty = self.pipe.is_empty();
        if self.down {
            return false;
        }
        let Some(mtu) = self.trace.as_ref().map(|t| t.trace.mtu) else {
            return false;
        };
        if let Some(t) = self.trace.as_mut() {
            t.used_until = now + Duration::from_nanos(1);
        }
        let mut credit = count as u64 * mtu as u64;
        while credit > 0 {
            let Some(&(id, bytes, enq)) = self.queue.front() else {
                break;
            };
            let sent = self.trace.as_ref().map_or(0, |t| t.head_sent);
            let left = (bytes - sent) as u64;
            if left <= credit {
                credit -= left;
                self.queue.pop_front();
                if let Some(t) = self.trace.as_mut() {
                    t.head_sent = 0;
                }
                self.stats.packets_sent += 1;
                self.stats.bytes_sent += bytes as u64;
                self.stats.queue_area += (now - enq).as_nanos() as u128;
                let arrive = (now + self.delay).max(self.last_arrival);
                self.last_arrival = arrive;
                self.pipe.push_back((arrive, id));
            } else {
                if let Some(t) = self.trace.as_mut() {
                    t.head_sent += credit as u32;
                }
                credit = 0;
            }
        }
        if self.queue.is_empty() {
            if let Some(red) = self.red.as_mut() {
                red.idle_since = Some(now);
            }
        }
        was_empty && !self.pipe.is_empty()
    }

    /// An outage starts: everything queued, being serialised or propagating is lost.
    pub fn go_down(&mut self, now: Instant, out: &mut Vec<PktId>) {
        self.advance(now);
        self.down = true;
        for (id, _, enq) in self.queue.drain(..) {
            self.stats.queue_area += (now - enq).as_nanos() as u128;
            out.push(id);
        }
        for s in self.pending.drain(..) {
            if s.start > now {
                // It waited only until now.
                self.stats.queue_area -= (s.start - now).as_nanos() as u128;
            }
        }
        while let Some((_, id)) = self.pipe.pop_front() {
            out.push(id);
        }
        self.busy_until = now;
        self.pipe_gen = self.pipe_gen.wrapping_add(1);
        if let Some(t) = self.trace.as_mut() {
            t.head_sent = 0;
        }
        self.stats.outage_losses += out.len() as u64;
    }

    pub fn go_up(&mut self, now: Instant) {
        self.down = false;
        self.busy_until = self.busy_until.max(now);
        self.last_arrival = now;
    }

    /// Count what finished serialisation by the end of the run.
    pub fn close(&mut self, now: Instant) {
        self.advance(now);
    }
}

/// Value of a piecewise schedule at `t` (points sorted, first at 0; optional period).
pub fn schedule_at<T: Copy>(points: &[(Duration, T)], period: Option<Duration>, t: Duration) -> T {
    let t = match period {
        Some(p) if !p.is_zero() => Duration::from_nanos(t.as_nanos() % p.as_nanos()),
        _ => t,
    };
    let i = points.partition_point(|p| p.0 <= t);
    points[i.saturating_sub(1)].1
}

/// All change times of a schedule within `[0, horizon]`, in order.
pub fn schedule_changes<T>(
    points: &[(Duration, T)],
    period: Option<Duration>,
    horizon: Duration,
) -> Vec<Duration> {
    let mut out = Vec::new();
    match period {
        Some(p) if !p.is_zero() => {
            let mut base = Duration::ZERO;
            while base <= horizon {
                for pt in points {
                    let t = base + pt.0;
                    if t > horizon {
                        break;
                    }
                    if !t.is_zero() {
                        out.push(t);
                    }
                }
                base += p;
            }
        }
        _ => out.extend(
            points
                .iter()
                .map(|p| p.0)
                .filter(|t| !t.is_zero() && *t <= horizon),
        ),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_holds_each_value_until_the_next_point_and_repeats() {
        let pts = [
            (Duration::ZERO, 2u64),
            (Duration::from_secs(1), 4),
            (Duration::from_secs(2), 4),
        ];
        let p = Some(Duration::from_secs(3));
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(500)), 2);
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(1500)), 4);
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(3500)), 2);
        let ch = schedule_changes(&pts, p, Duration::from_secs(4));
        assert_eq!(
            ch,
            vec![
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(3),
                Duration::from_secs(4)
            ]
        );
    }

    #[test]
    fn trace_capacity_counts_the_opportunities_of_each_interval() {
        let trace = MahimahiTrace {
            path: "x".into(),
            opportunities_ms: vec![1, 1, 5, 10],
            period_ms: 10,
            mtu: 1500,
        };
        // Brute force: instants k * 10 + o for k = 0.. (o = 10 shares ms with o = 0 of
        // the next cycle, but there is no o = 0 here).
        let instants: Vec<u64> = (0..20u64)
            .flat_map(|k| trace.opportunities_ms.iter().map(move |o| k * 10 + o))
            .collect();
        for t_us in (0..150_000u64).step_by(250) {
            let t = Instant::from_micros(t_us);
            let want = instants
                .iter()
                .filter(|&&ms| Instant::from_millis(ms) < t)
                .count() as u64;
            assert_eq!(trace_opportunities_before(&trace, t), want, "t = {t_us} us");
        }
        // [0, 10 ms): opportunities at 1, 1, 5 -> 3 * 1500 B * 8 / 0.01 s.
        let c = trace_capacity_bps(&trace, Instant::ZERO, Instant::from_millis(10));
        assert_eq!(c, 3.0 * 1500.0 * 8.0 / 0.01);
        // A whole period of 100 ms averages to the mean rate.
        let c = trace_capacity_bps(&trace, Instant::from_millis(200), Instant::from_millis(300));
        assert!((c - trace.mean_rate_bps()).abs() < 1e-6, "{c}");
    }

    #[test]
    fn trace_opportunities_repeat_with_the_period() {
        let t = TraceState {
            trace: Arc::new(MahimahiTrace {
                path: "x".into(),
                opportunities_ms: vec![1, 1, 5, 10],
                period_ms: 10,
                mtu: 1500,
            }),
            head_sent: 0,
            used_until: Instant::ZERO,
        };
        assert_eq!(
            t.next_opportunity(Instant::ZERO),
            Some((Instant::from_millis(1), 2))
        );
        assert_eq!(
            t.next_opportunity(Instant::from_millis(2)),
            Some((Instant::from_millis(5), 1))
        );
        assert_eq!(
            t.next_opportunity(Instant::from_millis(10)),
            Some((Instant::from_millis(10), 1))
        );
        assert_eq!(
            t.next_opportunity(Instant::from_micros(10_500)),
            Some((Instant::from_millis(11), 2))
        );
    }
}
