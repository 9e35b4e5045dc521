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
    pub queue_max: u64,
    /// Integral of the queue length (packets) over time, in packet-nanoseconds.
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
            let base = cycle * period;
            let i = t.opportunities_ms.partition_point(|&o| base + o < now_ms);
            if i < t.opportunities_ms.len() {
                let o = t.opportunities_ms[i];
                let j = t.opportunities_ms[i..].partition_point(|&x| x == o);
                return Some((Instant::from_millis(base + o), j as u32));
            }
            cycle += 1;
        }
    }
}

/// One direction of a link.
#[derive(Debug)]
pub struct Dir {
    pub index: usize,
    pub from: usize,
    pub to: usize,
    pub rate_bps: u64,
    pub delay: Duration,
    pub queue: VecDeque<(PktId, u32)>,
    pub queue_bytes: u64,
    limit: QueueLimit,
    red: Option<RedState>,
    /// The packet being serialised.
    pub tx: Option<(PktId, u32)>,
    pub busy: bool,
    pub down: bool,
    /// Incremented at every outage start: packets tagged with an older epoch are lost.
    pub epoch: u32,
    /// Latest delivery time scheduled, to keep the direction FIFO when delay drops.
    pub last_arrival: Instant,
    /// Packets propagating towards the far end, in arrival order (arrival times never
    /// decrease, so only the head needs an event).
    pub pipe: VecDeque<(Instant, PktId)>,
    pub trace: Option<TraceState>,
    /// An opportunity event is pending (trace mode).
    pub opp_pending: bool,
    pub stats: DirStats,
    last_q_change: Instant,
    rng: Xoshiro256PlusPlus,
}

/// What to do with an arriving packet.
pub enum Admit {
    /// Queued or started: nothing else to do now unless `start` is set.
    Queued,
    Dropped,
}

impl Dir {
    pub fn new(index: usize, from: usize, to: usize, spec: &DirSpec, rng: Xoshiro256PlusPlus) -> Dir {
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
            queue: VecDeque::with_capacity(64),
            queue_bytes: 0,
            limit,
            red,
            tx: None,
            busy: false,
            down: false,
            epoch: 0,
            last_arrival: Instant::ZERO,
            pipe: VecDeque::with_capacity(64),
            trace,
            opp_pending: false,
            stats: DirStats::default(),
            last_q_change: Instant::ZERO,
            rng,
        }
    }

    fn note_queue(&mut self, now: Instant) {
        let dt = now.saturating_since(self.last_q_change).as_nanos() as u128;
        self.stats.queue_area += dt * self.queue.len() as u128;
        self.last_q_change = now;
    }

    /// Packets waiting, not counting the one being serialised.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn red_drop(&mut self, now: Instant) -> bool {
        let rate = self.rate_bps.max(1);
        let qlen = self.queue.len() as f64;
        let Some(red) = self.red.as_mut() else {
            return false;
        };
        // Floyd & Jacobson 1993 §4; ns-2 red.cc: the average decays over an idle
        // period as if m small packets had arrived to an empty queue.
        if let Some(since) = red.idle_since.take() {
            let pkt_time = red.mean_pktsize as f64 * 8.0 / rate as f64;
            let m = now.saturating_since(since).as_secs_f64() / pkt_time.max(1e-12);
            red.avg *= (1.0 - red.w_q).powf(m);
        }
        red.avg = (1.0 - red.w_q) * red.avg + red.w_q * qlen;
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
        let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
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

    /// Offer a packet of `bytes` to the queue. The caller starts transmission if the
    /// serialiser is idle.
    pub fn enqueue(&mut self, now: Instant, id: PktId, bytes: u32) -> Admit {
        if self.down {
            self.stats.outage_losses += 1;
            return Admit::Dropped;
        }
        let over = match self.limit {
            QueueLimit::Packets(n) => self.queue.len() as u64 >= n as u64,
            QueueLimit::Bytes(b) => self.queue_bytes + bytes as u64 > b,
        };
        if over || self.red_drop(now) {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        self.note_queue(now);
        self.queue.push_back((id, bytes));
        self.queue_bytes += bytes as u64;
        self.stats.queue_max = self.stats.queue_max.max(self.queue.len() as u64);
        Admit::Queued
    }

    /// Take the head of the queue into the serialiser; returns it and when it is done
    /// (constant/scheduled rate), or `None` when nothing can start.
    pub fn start_tx(&mut self, now: Instant) -> Option<(PktId, Instant)> {
        if self.busy || self.down || self.rate_bps == 0 || self.trace.is_some() {
            return None;
        }
        let (id, bytes) = self.pop(now)?;
        self.busy = true;
        self.tx = Some((id, bytes));
        Some((id, now + Duration::transmission(bytes as u64, self.rate_bps)))
    }

    fn pop(&mut self, now: Instant) -> Option<(PktId, u32)> {
        self.note_queue(now);
        let (id, bytes) = self.queue.pop_front()?;
        self.queue_bytes -= bytes as u64;
        if self.queue.is_empty() {
            if let Some(red) = self.red.as_mut() {
                red.idle_since = Some(now);
            }
        }
        Some((id, bytes))
    }

    /// The serialiser finished its packet: returns it with its arrival time at the far
    /// end (FIFO kept even if the delay just dropped).
    pub fn finish_tx(&mut self, now: Instant) -> Option<(PktId, Instant)> {
        let (id, bytes) = self.tx.take()?;
        self.busy = false;
        Some((id, self.depart(now, bytes)))
    }

    fn depart(&mut self, now: Instant, bytes: u32) -> Instant {
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += bytes as u64;
        let arrive = (now + self.delay).max(self.last_arrival);
        self.last_arrival = arrive;
        arrive
    }

    /// Use delivery opportunities (trace mode): `count` opportunities of `mtu` bytes at
    /// `now` (Mahimahi semantics: a packet may span opportunities; unused bytes are
    /// lost). Pushes departing packets with their arrival times into `out`.
    pub fn use_opportunities(&mut self, now: Instant, count: u32, out: &mut Vec<(PktId, Instant)>) {
        if self.down {
            return;
        }
        let Some(mtu) = self.trace.as_ref().map(|t| t.trace.mtu) else {
            return;
        };
        if let Some(t) = self.trace.as_mut() {
            t.used_until = now + Duration::from_nanos(1);
        }
        let mut credit = count as u64 * mtu as u64;
        while credit > 0 {
            let Some(&(id, bytes)) = self.queue.front() else {
                break;
            };
            let sent = self.trace.as_ref().map_or(0, |t| t.head_sent);
            let left = (bytes - sent) as u64;
            if left <= credit {
                credit -= left;
                self.pop(now);
                if let Some(t) = self.trace.as_mut() {
                    t.head_sent = 0;
                }
                let at = self.depart(now, bytes);
                out.push((id, at));
            } else {
                if let Some(t) = self.trace.as_mut() {
                    t.head_sent += credit as u32;
                }
                credit = 0;
            }
        }
    }

    /// An outage starts: everything queued, being serialised or propagating is lost.
    pub fn go_down(&mut self, now: Instant, out: &mut Vec<PktId>) {
        self.note_queue(now);
        self.down = true;
        self.epoch = self.epoch.wrapping_add(1);
        if let Some((id, _)) = self.tx.take() {
            out.push(id);
        }
        self.busy = false;
        while let Some((id, _)) = self.queue.pop_front() {
            out.push(id);
        }
        while let Some((_, id)) = self.pipe.pop_front() {
            out.push(id);
        }
        self.queue_bytes = 0;
        if let Some(t) = self.trace.as_mut() {
            t.head_sent = 0;
        }
        self.stats.outage_losses += out.len() as u64;
    }

    pub fn go_up(&mut self, now: Instant) {
        self.note_queue(now);
        self.down = false;
        self.last_arrival = now;
    }

    /// Close the queue-length integral at the end of the run.
    pub fn close(&mut self, now: Instant) {
        self.note_queue(now);
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
pub fn schedule_changes<T>(points: &[(Duration, T)], period: Option<Duration>, horizon: Duration) -> Vec<Duration> {
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
        _ => out.extend(points.iter().map(|p| p.0).filter(|t| !t.is_zero() && *t <= horizon)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_holds_each_value_until_the_next_point_and_repeats() {
        let pts = [(Duration::ZERO, 2u64), (Duration::from_secs(1), 4), (Duration::from_secs(2), 4)];
        let p = Some(Duration::from_secs(3));
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(500)), 2);
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(1500)), 4);
        assert_eq!(schedule_at(&pts, p, Duration::from_millis(3500)), 2);
        let ch = schedule_changes(&pts, p, Duration::from_secs(4));
        assert_eq!(ch, vec![Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(3), Duration::from_secs(4)]);
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
        assert_eq!(t.next_opportunity(Instant::ZERO), Some((Instant::from_millis(1), 2)));
        assert_eq!(t.next_opportunity(Instant::from_millis(2)), Some((Instant::from_millis(5), 1)));
        assert_eq!(t.next_opportunity(Instant::from_millis(10)), Some((Instant::from_millis(10), 1)));
        assert_eq!(t.next_opportunity(Instant::from_micros(10_500)), Some((Instant::from_millis(11), 2)));
    }
}
