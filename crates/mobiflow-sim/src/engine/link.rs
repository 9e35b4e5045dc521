//! One direction of a link: a queue (DropTail or RED) in front of a serialiser whose
//! rate follows a constant, a piecewise schedule or a Mahimahi trace, then a
//! propagation delay, with outages during which nothing gets through.
//!
//! `Dir` is the direction at one instant and knows nothing of time passing:
//! [`super::linkdir::LinkDir`] wraps it with its timeline (schedules, outages,
//! opportunities, arrivals) as a sans-IO machine.

use super::ids::{DirId, NodeId};
use super::linkdir::Arrival;
use crate::model::{
    DelayModel, DirSpec, MahimahiTrace, QueueLimit, QueueSpec, RateModel, RedParams,
};
use mobiflow_proto::time::{Duration, Instant};
use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::sync::Arc;

pub type PktId = u32;

/// Counters of one link direction.
#[derive(Copy, Clone, Debug, Default)]
pub struct DirStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub drops: u64,
    /// Of `drops`, RED's early (unforced) drops: the queue was not full.
    pub early_drops: u64,
    pub outage_losses: u64,
    /// Packets lost to the direction's random loss.
    pub random_losses: u64,
    /// Packets that reached the far end after one sent later on this direction.
    pub reordered: u64,
    /// Packets delivered twice (`duplicate`).
    pub duplicated: u64,
    pub queue_max: u64,
    /// Integral of the number of waiting packets over time, in packet-nanoseconds
    /// (the sum of every packet's wait, by Little's law).
    pub queue_area: u128,
}

/// RED's parameters (resolved) and state, as ns-2.35's `REDQueue` (`queue/red.cc`)
/// keeps them (`edp_`, `edv_`).
#[derive(Clone, Debug)]
struct RedState {
    /// Thresholds in the unit of the average: packets, or bytes with
    /// `queue_in_bytes`.
    min_th: f64,
    max_th: f64,
    w_q: f64,
    max_p: f64,
    gentle: bool,
    mean_pktsize: u32,
    wait: bool,
    bytes: bool,
    queue_in_bytes: bool,
    /// Mean-sized packets per second at the initial rate (`edp_.ptc`).
    ptc: f64,
    avg: f64,
    /// Arrivals (and their bytes) since the last drop (`edv_.count`, `count_bytes`).
    count: u64,
    count_bytes: u64,
    /// The average was above `min_th` with a queue at the previous arrival
    /// (`edv_.old`).
    old: bool,
    idle_since: Option<Instant>,
}

impl RedState {
    /// ns-2.35's `REDQueue::reset` and `initialize_params`: the automatic parameters
    /// come from the initial rate and delay (ns-2 does not update them when the rate
    /// changes later, nor does this).
    fn new(rate_bps: u64, delay: Duration, p: &RedParams) -> RedState {
        let mean_pktsize = p.mean_pktsize.max(1);
        let ptc = rate_bps.max(1) as f64 / (8.0 * mean_pktsize as f64);
        // thresh_ 0: 5 packets, or half the target delay's queue if that is more.
        let min_pkts = p
            .min_th
            .unwrap_or_else(|| (p.target_delay.as_secs_f64() * ptc / 2.0).max(5.0));
        // maxthresh_ 0: three times thresh_.
        let max_pkts = p.max_th.unwrap_or(3.0 * min_pkts);
        // q_weight_ -1: a time constant of ten RTTs, the RTT taken as three times the
        // delay plus a packet time, at least 100 ms.
        let w_q = p.w_q.unwrap_or_else(|| {
            let rtt = (3.0 * (delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        });
        let scale = if p.queue_in_bytes {
            p.mean_pktsize as f64
        } else {
            1.0
        };
        RedState {
            min_th: min_pkts * scale,
            max_th: max_pkts * scale,
            w_q,
            max_p: p.max_p,
            gentle: p.gentle,
            mean_pktsize,
            wait: p.wait,
            bytes: p.bytes,
            queue_in_bytes: p.queue_in_bytes,
            ptc,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle_since: Some(Instant::ZERO),
        }
    }

    /// `REDQueue::calculate_p_new` then `modify_p` for a packet of `size` bytes.
    fn drop_probability(&self, size: u32) -> f64 {
        let avg = self.avg;
        let mut p = if self.gentle && avg >= self.max_th {
            // From max_p at max_th to 1 at 2 * max_th.
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else if avg >= self.max_th {
            1.0
        } else {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        };
        p = p.min(1.0);
        // Floyd & Jacobson §7: uniform rather than geometric inter-drop spacing. With
        // byte mode the count is in mean-sized packets (integer division, as ns-2).
        let count = if self.bytes {
            (self.count_bytes / self.mean_pktsize as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * p;
        p = if self.wait {
            // wait_: at least 1/p arrivals between drops.
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p / (1.0 - cp)
        } else {
            1.0
        };
        if self.bytes && p < 1.0 {
            p = p * size as f64 / self.mean_pktsize as f64;
        }
        p.min(1.0)
    }
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

/// A packet of a lean direction ([`Dir`]'s `lean`): its place in the queue, on the
/// serialiser and in the pipe at once. It reaches the far end at `end` plus the
/// direction's delay, which does not change while the direction is lean
/// ([`Dir::set_delay`]).
#[derive(Copy, Clone, Debug, Default)]
struct Rec {
    enq: Instant,
    start: Instant,
    end: Instant,
    bytes: u32,
    id: PktId,
}

/// The records of a lean direction, numbered in sending order (a packet's number is
/// its `InFlight::seq`): those before `sent` finished serialisation, those before
/// `arrived` reached the far end, `next` were scheduled. Record `k` lives in
/// `buf[k % buf.len()]` (a power of two) while it is still pending or in the pipe,
/// from `sent.min(arrived)` on.
///
/// The buffer grows before a record would overwrite a live one, a test in two
/// halves, each where it costs least: `push` tests the records from `arrived`, and
/// the queue's limit test (`admits`) those from `sent`.
#[derive(Debug)]
struct Recs {
    buf: Vec<Rec>,
    sent: usize,
    arrived: usize,
    next: usize,
    /// The DropTail limit, and the waiting packets the buffer has room for with one
    /// more record: the limit, or less when the buffer is short (`grow`).
    limit: u64,
    room: u64,
}

impl Recs {
    /// Room for `room` records, a power of two (none: a direction that is not lean),
    /// in front of a DropTail queue of `limit` packets.
    fn new(room: usize, limit: u64) -> Recs {
        Recs {
            buf: vec![Rec::default(); room],
            sent: 0,
            arrived: 0,
            next: 0,
            limit,
            room: limit.min((room as u64).saturating_sub(1)),
        }
    }

    /// May a packet join when `waiting` wait (`waiting < limit`, ns-2's
    /// `DropTail::enque`)? Below `room`, the records from `sent` (the waiting ones
    /// and at most one in service: at most `room`, `buf.len() - 1`) leave a slot for
    /// the new one; between `room` and the limit the buffer grows first.
    #[inline(always)]
    fn admits(&mut self, waiting: usize) -> bool {
        let w = waiting as u64;
        if w < self.room {
            return true;
        }
        if w >= self.limit {
            return false;
        }
        // `w` is at most `next - sent`, which fits in the buffer: below the new
        // room, the limit or twice the length less one.
        self.grow();
        true
    }

    /// Record `k` (between `sent.min(arrived)` and `next`).
    #[inline(always)]
    fn get(&self, k: usize) -> &Rec {
        &self.buf[k & (self.buf.len() - 1)]
    }

    /// Record `next`: past `admits`, or with nothing pending, only the records from
    /// `arrived` may fill the buffer.
    #[inline(always)]
    fn push(&mut self, r: Rec) {
        if self.next - self.arrived == self.buf.len() {
            self.grow();
        }
        debug_assert!(self.next - self.sent.min(self.arrived) < self.buf.len());
        let i = self.next & (self.buf.len() - 1);
        self.buf[i] = r;
        self.next += 1;
    }

    /// Twice the room, each live record moved to its place in the larger buffer.
    #[cold]
    fn grow(&mut self) {
        let mut buf = vec![Rec::default(); (2 * self.buf.len()).max(64)];
        let mask = buf.len() - 1;
        for k in self.sent.min(self.arrived)..self.next {
            buf[k & mask] = *self.get(k);
        }
        self.buf = buf;
        self.room = self.limit.min(mask as u64);
    }
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
///
/// A lean direction keeps its scheduled packets in one queue, `recs`, instead of two
/// (`pending` and `pipe`): while every packet takes the delay in force at its end
/// and none is held back, arrivals are in sending order, so the packets not yet
/// serialised are the pipe's tail and need no copy of their own; two counts say
/// where `pending` and the `pipe` start ([`Recs`]). A direction is lean from the
/// start when it draws no randomness on the way (no reordering, no duplication),
/// runs the DropTail fast path with room for a packet at least and has a rate; it
/// leaves for good (`leave_lean`) at anything lean cannot express: a rate or delay
/// change ([`Dir::set_rate`], [`Dir::set_delay`]), a reschedule, an outage. So
/// while it is lean the rate and the delay are those it started with and the link
/// is up: every packet arrives at its end plus one delay, after any packet sent
/// earlier (`fifo` changes nothing), and the lean path tests none of these per
/// packet.
#[derive(Debug)]
pub struct Dir {
    pub index: DirId,
    pub from: NodeId,
    pub to: NodeId,
    /// Changed only through `set_rate` and `set_delay` (see above).
    rate_bps: u64,
    delay: Duration,
    /// Packets that cannot be scheduled yet (trace mode, or a rate of zero), with the
    /// time they joined.
    pub queue: VecDeque<(PktId, u32, Instant)>,
    /// Scheduled packets that have not finished serialisation, in order (empty while
    /// `lean`).
    pending: VecDeque<Sched>,
    /// The serialiser is busy until then.
    pub busy_until: Instant,
    limit: QueueLimit,
    red: Option<RedState>,
    /// The packet limit of a DropTail queue without random loss or a trace: the
    /// fast path of `enqueue_from` (decided when the direction is built, from
    /// settings that never change; the rate and outages are tested per packet).
    droptail: Option<u32>,
    down: bool,
    /// Incremented whenever the pipe's head may have changed other than by delivery;
    /// arrival events carry it, so stale ones are recognised.
    pub pipe_gen: u32,
    /// Latest delivery time scheduled, to keep the direction FIFO when delay drops
    /// (`fifo`).
    pub last_arrival: Instant,
    /// Packets propagating towards the far end (and scheduled ones), sorted by
    /// arrival time (equal times in sending order), so only the head needs an event
    /// (empty while `lean`).
    pipe: VecDeque<InFlight>,
    /// The direction keeps its scheduled packets in `recs` (see above).
    lean: bool,
    /// While lean: the records, behind a DropTail limit (`droptail`).
    recs: Recs,
    /// While lean: the bytes of every record. The counters of what finished
    /// serialisation are derived from `recs` rather than counted per packet: the
    /// packets before `recs.sent`, and these bytes less those of the records after
    /// it ([`Dir::stats`]); `leave_lean` moves them into `stats`.
    lean_bytes: u64,
    /// Sequence number of the next packet to enter the pipe, and the highest one that
    /// reached the far end (to count reordering).
    send_seq: u64,
    max_arrived_seq: Option<u64>,
    /// The pipe's head changed by an insertion (ahead of the old head).
    head_changed: bool,
    fifo: bool,
    reorder: f64,
    reorder_delay: Duration,
    duplicate: f64,
    pub trace: Option<TraceState>,
    /// The counters, less what a lean direction derives ([`Dir::stats`]).
    stats: DirStats,
    rng: Xoshiro256PlusPlus,
    /// Random loss probability per arriving packet.
    loss: f64,
    /// The last transmission time computed, at the current rate: (bytes, time), so
    /// that a run of packets of one size needs no division each (`set_rate` updates
    /// it).
    tx_cache: (u32, Duration),
}

/// A packet on its way to the far end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// When it arrives there.
    pub at: Instant,
    pub id: PktId,
    /// Its place in the direction's sending order.
    pub seq: u64,
    /// When its transmission started (ns-2 schedules its arrival then).
    pub sent: Instant,
}

/// What a lean direction did with an arriving packet ([`Dir::enqueue_lean`]).
pub enum Lean {
    /// Scheduled, the pipe's new head: it arrives then, and the arrival timer has
    /// this generation.
    Head(Instant, u32),
    /// Scheduled behind the pipe's head.
    Behind,
    /// The queue was full.
    Dropped,
    /// The direction is not lean: `enqueue_from` does the work.
    General,
}

/// What happened to an arriving packet.
pub enum Admit {
    /// Scheduled; `true` if the pipe's head is new (an arrival event is needed; the
    /// generation changed if there was a head before).
    Scheduled(bool),
    /// Waiting in `queue` (trace mode or zero rate).
    Queued,
    Dropped,
    /// Lost to the direction's random loss.
    Lost,
}

impl Dir {
    pub fn new(
        index: DirId,
        from: NodeId,
        to: NodeId,
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
            QueueSpec::Red { limit, red } => (*limit, Some(RedState::new(rate_bps, delay, red))),
        };
        let droptail = match (limit, &red) {
            (QueueLimit::Packets(n), None) if spec.loss <= 0.0 && trace.is_none() => Some(n),
            _ => None,
        };
        let lean = droptail.is_some_and(|n| n > 0)
            && rate_bps > 0
            && spec.reorder <= 0.0
            && spec.duplicate <= 0.0;
        Dir {
            index,
            from,
            to,
            rate_bps,
            delay,
            queue: VecDeque::new(),
            pending: VecDeque::new(),
            busy_until: Instant::ZERO,
            limit,
            red,
            droptail,
            down: false,
            pipe_gen: 0,
            last_arrival: Instant::ZERO,
            pipe: VecDeque::new(),
            lean,
            recs: Recs::new(if lean { 64 } else { 0 }, droptail.map_or(0, u64::from)),
            lean_bytes: 0,
            send_seq: 0,
            max_arrived_seq: None,
            head_changed: false,
            fifo: spec.fifo,
            reorder: spec.reorder,
            reorder_delay: spec.reorder_delay,
            duplicate: spec.duplicate,
            trace,
            stats: DirStats::default(),
            rng,
            loss: spec.loss,
            tx_cache: (0, Duration::transmission(0, rate_bps)),
        }
    }

    /// Does the direction run RED?
    pub fn is_red(&self) -> bool {
        self.red.is_some()
    }

    /// The serialisation rate (the trace's mean in trace mode).
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The propagation delay in force.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// In an outage.
    pub fn is_down(&self) -> bool {
        self.down
    }

    /// A new rate, for the packets scheduled from now on (`reschedule` moves those
    /// not yet sent). The direction leaves the lean representation first, whose
    /// packets all take the rate it started with.
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.leave_lean();
        self.rate_bps = rate_bps;
        self.tx_cache.1 = Duration::transmission(self.tx_cache.0 as u64, rate_bps);
    }

    /// A new delay, for the packets that end their transmission from now on
    /// (`reschedule` moves those not yet sent). The direction leaves the lean
    /// representation first, whose packets all arrive one delay after their end.
    pub fn set_delay(&mut self, delay: Duration) {
        self.leave_lean();
        self.delay = delay;
    }

    /// The counters. A lean direction derives what finished serialisation from its
    /// records (`lean_bytes`): the same numbers as counted packet by packet, as of
    /// the last `advance` or arrival at the queue.
    pub fn stats(&self) -> DirStats {
        let mut s = self.stats;
        if self.lean {
            let r = &self.recs;
            s.packets_sent += r.sent as u64;
            s.bytes_sent += self.lean_bytes - self.lean_bytes_from(r.sent);
        }
        s
    }

    /// The bytes of the lean records from `k` on.
    fn lean_bytes_from(&self, k: usize) -> u64 {
        let r = &self.recs;
        (k..r.next).map(|k| r.get(k).bytes as u64).sum()
    }

    fn scheduled_mode(&self) -> bool {
        self.trace.is_none() && self.rate_bps > 0 && !self.down
    }

    /// Retire scheduled packets whose serialisation ended by `now`.
    pub fn advance(&mut self, now: Instant) {
        self.retire(now, now);
    }

    /// Retire scheduled packets whose serialisation ended by `now`, as seen by a
    /// packet arriving at `now` from an event scheduled at `origin`. ns-2 frees the
    /// link with an event (`LinkDelay::recv` schedules `intr_` when a transmission
    /// starts, for its end), and its scheduler runs events of the same time in the
    /// order they were scheduled (`CalendarScheduler::insert` puts a new event after
    /// those of equal time). So a packet whose transmission ends exactly at `now`
    /// still holds the link, and the next one still waits, for an arrival whose event
    /// was scheduled before that transmission started (`origin < start`); an arrival
    /// scheduled later (or at the same instant) finds the link already handed on.
    #[inline]
    fn retire(&mut self, now: Instant, origin: Instant) {
        if self.lean {
            self.retire_lean(now, origin);
            return;
        }
        while let Some(f) = self.pending.front() {
            if f.end > now || (f.end == now && origin < f.start) {
                break;
            }
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += f.bytes as u64;
            self.pending.pop_front();
        }
    }

    /// `retire` of a lean direction: the same test on the pending records (the
    /// counters follow from `recs.sent`: `stats`). Returns whether the first record
    /// still pending is being serialised at `now` (`in_service`).
    #[inline(always)]
    fn retire_lean(&mut self, now: Instant, origin: Instant) -> bool {
        let r = &mut self.recs;
        let (mut k, next) = (r.sent, r.next);
        let mut in_service = false;
        while k < next {
            let f = r.get(k);
            if f.end > now || (f.end == now && origin < f.start) {
                in_service = f.start <= now;
                break;
            }
            k += 1;
        }
        r.sent = k;
        in_service
    }

    /// Scheduled packets that have not finished serialisation (`pending`), and
    /// whether the first of them is being serialised at `now`.
    #[inline]
    fn in_service(&self, now: Instant) -> (usize, bool) {
        if self.lean {
            let r = &self.recs;
            let n = r.next - r.sent;
            (n, n > 0 && r.get(r.sent).start <= now)
        } else {
            let n = self.pending.len();
            (n, self.pending.front().is_some_and(|f| f.start <= now))
        }
    }

    /// Packets waiting at `now` (not counting the one being serialised). Call
    /// `advance(now)` first.
    pub fn waiting(&self, now: Instant) -> usize {
        let (pending, in_service) = self.in_service(now);
        self.queue.len() + pending - in_service as usize
    }

    /// Bytes waiting at `now` (not counting the packet being serialised). Call
    /// `advance(now)` first.
    pub fn waiting_bytes(&self, now: Instant) -> u64 {
        let b: u64 = self.queue.iter().map(|q| q.1 as u64).sum();
        let skip = usize::from(self.in_service(now).1);
        if self.lean {
            let r = &self.recs;
            b + (r.sent + skip..r.next)
                .map(|k| r.get(k).bytes as u64)
                .sum::<u64>()
        } else {
            b + self
                .pending
                .iter()
                .skip(skip)
                .map(|p| p.bytes as u64)
                .sum::<u64>()
        }
    }

    /// Packets on their way to the far end (serialised or not).
    pub fn in_pipe(&self) -> usize {
        if self.lean {
            self.recs.next - self.recs.arrived
        } else {
            self.pipe.len()
        }
    }

    /// Leave the lean representation for `pending` and `pipe`, for good (see
    /// [`Dir`]). The records' numbers are their sequence numbers, and they arrived
    /// in sending order.
    fn leave_lean(&mut self) {
        if !self.lean {
            return;
        }
        self.stats = self.stats();
        self.lean = false;
        let (sent, arrived, next) = (self.recs.sent, self.recs.arrived, self.recs.next);
        self.send_seq = next as u64;
        self.max_arrived_seq = (arrived as u64).checked_sub(1);
        if next > 0 {
            // The latest arrival, which `push_pipe` keeps per packet.
            self.last_arrival = self.recs.get(next - 1).end + self.delay;
        }
        for k in sent.min(arrived)..next {
            let r = *self.recs.get(k);
            let at = r.end + self.delay;
            if k >= sent {
                self.pending.push_back(Sched {
                    enq: r.enq,
                    start: r.start,
                    end: r.end,
                    bytes: r.bytes,
                    id: r.id,
                });
            }
            if k >= arrived {
                self.pipe.push_back(InFlight {
                    at,
                    id: r.id,
                    seq: k as u64,
                    sent: r.start,
                });
            }
        }
        self.recs = Recs::new(0, 0);
    }

    /// RED's decision for an arriving packet of `size` bytes, `qlen` packets and
    /// `qbytes` bytes waiting (`REDQueue::enque`). `Some(true)`: an early drop;
    /// `Some(false)`: no early drop; `None`: no RED.
    fn red_drop(&mut self, now: Instant, qlen: usize, qbytes: u64, size: u32) -> Option<bool> {
        let idle = qlen == 0 && self.pending.is_empty();
        let busy_until = self.busy_until;
        let red = self.red.as_mut()?;
        // Floyd & Jacobson 1993 §4; ns-2 `REDQueue::enque`: after an idle period the
        // average decays as if m = int(ptc * idle time) packets had arrived to an
        // empty queue.
        let mut m = 0i32;
        if idle {
            let since = red.idle_since.unwrap_or(busy_until).max(busy_until);
            let t = now.saturating_since(since).as_secs_f64();
            m = (red.ptc * t).min(i32::MAX as f64) as i32;
            red.idle_since = None;
        }
        let q = if red.queue_in_bytes {
            qbytes as f64
        } else {
            qlen as f64
        };
        red.avg = red.avg * (1.0 - red.w_q).powi(m) * (1.0 - red.w_q) + red.w_q * q;
        red.count += 1;
        red.count_bytes += size as u64;
        // ns-2's guard: no early drop unless more than one unit waits (more than one
        // packet, or in byte mode a non-empty queue), and the count restarts at the
        // next arrival that finds the average above min_th with a queue.
        if !(red.avg >= red.min_th && q > 1.0) {
            red.old = false;
            return Some(false);
        }
        if !red.old {
            red.old = true;
            red.count = 1;
            red.count_bytes = size as u64;
            return Some(false);
        }
        let p = red.drop_probability(size);
        let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let red = self.red.as_mut()?;
        // ns-2 drops when u <= p (so p = 0 never drops: u is in (0, 1) there).
        if p > 0.0 && u <= p {
            red.count = 0;
            red.count_bytes = 0;
            Some(true)
        } else {
            Some(false)
        }
    }

    /// A packet of `bytes` arrives at the queue, from an event scheduled at `now` (so
    /// after any transmission that ends now: see `enqueue_from`).
    pub fn enqueue(&mut self, now: Instant, id: PktId, bytes: u32) -> Admit {
        self.enqueue_from(now, now, id, bytes)
    }

    /// A packet of `bytes` arrives at the queue at `now`, from an event scheduled at
    /// `origin` (for a packet that crossed a link: the start of its transmission
    /// there, when ns-2's `LinkDelay::recv` scheduled its arrival). `origin` orders
    /// the arrival against a transmission that ends at `now` (`retire`).
    pub fn enqueue_from(&mut self, now: Instant, origin: Instant, id: PktId, bytes: u32) -> Admit {
        match self.enqueue_lean(now, origin, id, bytes) {
            Lean::Head(..) => return Admit::Scheduled(true),
            Lean::Behind => return Admit::Scheduled(false),
            Lean::Dropped => return Admit::Dropped,
            Lean::General => {}
        }
        if let Some(n) = self.droptail {
            // `scheduled_mode()`: no trace here, so a rate and up.
            if self.rate_bps > 0 && !self.down {
                return self.enqueue_droptail(now, origin, id, bytes, n);
            }
        }
        if self.down {
            self.stats.outage_losses += 1;
            return Admit::Dropped;
        }
        if self.loss > 0.0 {
            let u = self.uniform();
            if u < self.loss {
                self.stats.random_losses += 1;
                return Admit::Lost;
            }
        }
        self.retire(now, origin);
        let qlen = self.waiting(now);
        // The byte count scans the queue: only a byte limit and RED need it.
        let need_bytes = matches!(self.limit, QueueLimit::Bytes(_)) || self.red.is_some();
        let qbytes = if need_bytes {
            self.waiting_bytes(now)
        } else {
            0
        };
        let over = match self.limit {
            QueueLimit::Packets(n) => qlen as u64 >= n as u64,
            QueueLimit::Bytes(b) => qbytes + bytes as u64 > b,
        };
        let early = self.red_drop(now, qlen, qbytes, bytes) == Some(true);
        if over || early {
            self.stats.drops += 1;
            if let Some(red) = self.red.as_mut() {
                // A forced drop restarts the count too (ns-2's bug-fix of Philip Liu).
                red.count = 0;
                red.count_bytes = 0;
                if !over {
                    self.stats.early_drops += 1;
                }
            }
            return Admit::Dropped;
        }
        if self.scheduled_mode() {
            self.head_changed = false;
            self.schedule(now, id, bytes);
            self.stats.queue_max = self.stats.queue_max.max(self.waiting(now) as u64);
            Admit::Scheduled(std::mem::take(&mut self.head_changed))
        } else {
            self.queue.push_back((id, bytes, now));
            self.stats.queue_max = self.stats.queue_max.max(self.queue.len() as u64);
            Admit::Queued
        }
    }

    /// `enqueue_from` for the common direction: a packet-limited DropTail queue, no
    /// random loss, a rate, up: the same steps without the checks that cannot apply
    /// (ns-2's `DropTail::enque`: drop the arrival when `limit` packets wait).
    #[inline]
    fn enqueue_droptail(
        &mut self,
        now: Instant,
        origin: Instant,
        id: PktId,
        bytes: u32,
        limit: u32,
    ) -> Admit {
        self.retire(now, origin);
        if self.waiting(now) as u64 >= limit as u64 {
            self.stats.drops += 1;
            return Admit::Dropped;
        }
        self.head_changed = false;
        self.schedule(now, id, bytes);
        self.stats.queue_max = self.stats.queue_max.max(self.waiting(now) as u64);
        Admit::Scheduled(std::mem::take(&mut self.head_changed))
    }

    /// `enqueue_from` of a lean direction (`Lean::General` if it is not): the
    /// packet's record joins `recs`, where it is both pending and in the pipe. Lean,
    /// the direction is a packet-limited DropTail queue with a rate, up, whose
    /// packets arrive in sending order (see [`Dir`]): `enqueue_droptail`, `schedule`
    /// and `push_pipe` without the tests that cannot apply.
    #[inline(always)]
    pub fn enqueue_lean(&mut self, now: Instant, origin: Instant, id: PktId, bytes: u32) -> Lean {
        if !self.lean {
            return Lean::General;
        }
        if self.busy_until < now {
            return self.enqueue_idle(now, id, bytes);
        }
        let in_service = self.retire_lean(now, origin);
        let (sent, arrived, next) = (self.recs.sent, self.recs.arrived, self.recs.next);
        // `waiting(now)`: nothing is in `queue` while the rate and the link are up.
        let pending = next - sent;
        let waiting = pending - usize::from(in_service);
        // ns-2's `DropTail::enque`: drop the arrival when `limit` packets wait.
        if !self.recs.admits(waiting) {
            self.stats.drops += 1;
            return Lean::Dropped;
        }
        // `now.max(busy_until)`: the serialiser is busy until now at least, so the
        // wait `start - now` needs no saturation.
        let start = self.busy_until;
        self.stats.queue_area += (start.as_nanos() - now.as_nanos()) as u128;
        let lean = self.send_lean(now, start, arrived == next, id, bytes);
        // It waits unless it is alone, and then it starts at once: with nothing
        // pending, the last packet ended by now and so did `busy_until`. Behind
        // another packet, it adds one to the queue.
        if pending > 0 {
            self.stats.queue_max = self.stats.queue_max.max(waiting as u64 + 1);
        }
        lean
    }

    /// `enqueue_lean` when the serialiser went idle before `now`: every record ended
    /// by `busy_until`, before `now`, so `retire` takes them all whatever `origin` (no
    /// end at `now` to tie with), nothing waits (a lean limit is at least one packet:
    /// no drop), and the packet starts at once, alone (no queue to count). The
    /// common case of a direction carrying ACKs, or a link faster than its load.
    #[inline(always)]
    fn enqueue_idle(&mut self, now: Instant, id: PktId, bytes: u32) -> Lean {
        let r = &mut self.recs;
        let empty = r.arrived == r.next;
        r.sent = r.next;
        self.send_lean(now, now, empty, id, bytes)
    }

    /// What `enqueue_lean` and `enqueue_idle` share once packet `id` is admitted:
    /// its transmission from `start`, its record in `recs`, and a new head of the
    /// pipe if the pipe was `empty` before it.
    #[inline(always)]
    fn send_lean(
        &mut self,
        now: Instant,
        start: Instant,
        empty: bool,
        id: PktId,
        bytes: u32,
    ) -> Lean {
        let end = start + self.transmission(bytes);
        self.busy_until = end;
        self.lean_bytes += bytes as u64;
        self.recs.push(Rec {
            enq: now,
            start,
            end,
            bytes,
            id,
        });
        if empty {
            Lean::Head(end + self.delay, self.pipe_gen)
        } else {
            Lean::Behind
        }
    }

    /// The time to serialise `bytes` at the current rate (`Duration::transmission`,
    /// remembered for the next packet of the same size).
    #[inline]
    fn transmission(&mut self, bytes: u32) -> Duration {
        let (b, t) = self.tx_cache;
        if b == bytes {
            return t;
        }
        let t = Duration::transmission(bytes as u64, self.rate_bps);
        self.tx_cache = (bytes, t);
        t
    }

    /// Compute the departure and arrival of a packet that joined at `enq`.
    fn schedule(&mut self, enq: Instant, id: PktId, bytes: u32) {
        let start = enq.max(self.busy_until);
        let end = start + self.transmission(bytes);
        self.busy_until = end;
        self.stats.queue_area += (start - enq).as_nanos() as u128;
        self.pending.push_back(Sched {
            enq,
            start,
            end,
            bytes,
            id,
        });
        self.push_pipe(start, end + self.delay, id);
    }

    /// A packet whose transmission ends `due` minus the delay enters the pipe: it
    /// arrives at `due` (ns-2's `LinkDelay::recv` schedules it at the end of its
    /// transmission plus the delay in force then), or with `fifo` not before any
    /// packet sent earlier; `reorder` may hold it back `reorder_delay` more.
    fn push_pipe(&mut self, sent: Instant, due: Instant, id: PktId) {
        let mut at = if self.fifo {
            due.max(self.last_arrival)
        } else {
            due
        };
        self.last_arrival = self.last_arrival.max(at);
        if self.reorder > 0.0 && self.uniform() < self.reorder {
            // Held back: later packets overtake it (and FIFO does not wait for it).
            at += self.reorder_delay;
        }
        let seq = self.send_seq;
        self.send_seq += 1;
        let pkt = InFlight { at, id, seq, sent };
        // The common case (FIFO, nothing held back): no packet in the pipe arrives
        // after it, so it goes last, where the search below would put it (after
        // those arriving at the same instant), without the search and the insert.
        if self.pipe.back().is_none_or(|p| p.at <= at) {
            if self.pipe.is_empty() {
                self.head_changed = true;
            }
            self.pipe.push_back(pkt);
            return;
        }
        let pos = self.pipe.partition_point(|p| p.at <= at);
        if pos == 0 {
            if !self.pipe.is_empty() {
                // A new head: the event armed for the old one is stale.
                self.pipe_gen = self.pipe_gen.wrapping_add(1);
            }
            self.head_changed = true;
        }
        self.pipe.insert(pos, pkt);
    }

    fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// When the pipe's head reaches the far end.
    #[inline]
    pub fn next_arrival(&self) -> Option<Instant> {
        if self.lean {
            let r = &self.recs;
            return (r.arrived < r.next).then(|| r.get(r.arrived).end + self.delay);
        }
        self.pipe.front().map(|p| p.at)
    }

    /// `pop_arrival` then `next_arrival` of a lean direction (see `is_lean`), with
    /// both records read before the head leaves.
    #[inline(always)]
    pub fn pop_lean(&mut self) -> Option<Arrival> {
        debug_assert!(self.lean);
        let r = &mut self.recs;
        let (k, n) = (r.arrived, r.next);
        if k == n {
            return None;
        }
        let head = *r.get(k);
        let (next, ahead) = if k + 1 < n {
            let b = r.get(k + 1);
            (Some(b.end + self.delay), b.id)
        } else {
            (None, head.id)
        };
        r.arrived = k + 1;
        Some(Arrival {
            id: head.id,
            dup: false,
            sent: head.start,
            next,
            ahead,
        })
    }

    /// The direction keeps the lean representation (see [`Dir`]).
    #[inline(always)]
    pub fn is_lean(&self) -> bool {
        self.lean
    }

    /// The pipe's head reaches the far end: the packet, and whether it arrives twice
    /// (`duplicate`). Counts reordering (it was sent before one already arrived).
    #[inline]
    pub fn pop_arrival(&mut self) -> Option<(InFlight, bool)> {
        if self.lean {
            // Arrivals in sending order: nothing to count, nothing drawn.
            let k = self.recs.arrived;
            if k == self.recs.next {
                return None;
            }
            let r = *self.recs.get(k);
            self.recs.arrived = k + 1;
            let p = InFlight {
                at: r.end + self.delay,
                id: r.id,
                seq: k as u64,
                sent: r.start,
            };
            return Some((p, false));
        }
        let p = self.pipe.pop_front()?;
        match self.max_arrived_seq {
            Some(m) if p.seq < m => self.stats.reordered += 1,
            _ => self.max_arrived_seq = Some(p.seq),
        }
        let dup = self.duplicate > 0.0 && self.uniform() < self.duplicate;
        if dup {
            self.stats.duplicated += 1;
        }
        Some((p, dup))
    }

    /// Recompute every packet not yet sent at `now` (after a rate or delay change).
    /// The packet being serialised keeps its end time and takes the current delay.
    /// Returns true if the pipe is non-empty (its head needs a fresh event; the
    /// generation has changed).
    pub fn reschedule(&mut self, now: Instant) -> bool {
        self.advance(now);
        self.leave_lean();
        let mut redo: Vec<Sched> = self.pending.drain(..).collect();
        let in_service = redo.first().is_some_and(|f| f.start <= now);
        // Without `fifo`, the packet being serialised keeps the arrival fixed when its
        // transmission started (ns-2's LinkDelay); with it, it takes today's delay.
        let keep = usize::from(in_service && !self.fifo);
        let gone: Vec<PktId> = redo[keep..].iter().map(|s| s.id).collect();
        self.pipe.retain(|p| !gone.contains(&p.id));
        for s in &redo {
            self.stats.queue_area -= (s.start - s.enq).as_nanos() as u128;
        }
        self.last_arrival = self
            .pipe
            .iter()
            .map(|p| p.at)
            .max()
            .unwrap_or(Instant::ZERO);
        self.busy_until = now;
        let mut rest = 0;
        if in_service {
            let first = redo[0];
            // In service: finishes as planned.
            self.stats.queue_area += (first.start - first.enq).as_nanos() as u128;
            self.busy_until = first.end;
            self.pending.push_back(first);
            if keep == 0 {
                self.push_pipe(first.start, first.end + self.delay, first.id);
            }
            rest = 1;
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
    /// lost). Returns true if the pipe has a new head (it needs an event).
    pub fn use_opportunities(&mut self, now: Instant, count: u32) -> bool {
        self.head_changed = false;
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
                self.push_pipe(now, now + self.delay, id);
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
        std::mem::take(&mut self.head_changed)
    }

    /// An outage starts: everything queued, being serialised or propagating is lost.
    pub fn go_down(&mut self, now: Instant, out: &mut Vec<PktId>) {
        self.advance(now);
        self.leave_lean();
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
        while let Some(p) = self.pipe.pop_front() {
            out.push(p.id);
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

    // ----- RED as ns-2.35's queue/red.cc runs it ----------------------------------

    #[allow(clippy::too_many_arguments)]
    fn red_spec(
        min_th: f64,
        max_th: f64,
        w_q: f64,
        gentle: bool,
        wait: bool,
        bytes: bool,
        queue_in_bytes: bool,
    ) -> DirSpec {
        DirSpec::new(
            RateModel::Constant(1_000_000),
            DelayModel::Constant(Duration::from_millis(10)),
            QueueSpec::Red {
                limit: QueueLimit::Packets(1000),
                red: RedParams {
                    min_th: Some(min_th),
                    max_th: Some(max_th),
                    w_q: Some(w_q),
                    max_p: 0.1,
                    gentle,
                    mean_pktsize: 1000,
                    wait,
                    bytes,
                    queue_in_bytes,
                    target_delay: Duration::from_millis(5),
                },
            },
        )
    }

    fn rng() -> Xoshiro256PlusPlus {
        use rand_core::SeedableRng;
        Xoshiro256PlusPlus::seed_from_u64(7)
    }

    /// ns-2 `REDQueue::enque`: `qavg >= th_min && qlen > 1` guards every early drop,
    /// and the first arrival past the guard only restarts the count (`edv_.old`).
    #[test]
    fn red_never_drops_early_while_at_most_one_packet_waits() {
        // The average is the instantaneous queue (w_q = 1), far above max_th.
        let spec = red_spec(0.1, 0.2, 1.0, false, true, false, false);
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
        let t = Instant::ZERO;
        let fates: Vec<bool> = (0..5)
            .map(|i| matches!(d.enqueue(t, i, 1000), Admit::Dropped))
            .collect();
        // In service, then 0, 1 and 2 waiting: admitted; 3 waiting: dropped.
        assert_eq!(fates, vec![false, false, false, false, true]);
        assert_eq!(d.stats().early_drops, 1);
    }

    /// RED parameters as the tests vary them: the thresholds 5 / 15 packets and w_q
    /// 0.002 (`manual`) or ns-2's automatic ones, max_p 0.1, gentle, a 5 ms target.
    fn red_params(
        manual: bool,
        mean_pktsize: u32,
        wait: bool,
        bytes: bool,
        queue_in_bytes: bool,
    ) -> RedParams {
        RedParams {
            min_th: manual.then_some(5.0),
            max_th: manual.then_some(15.0),
            w_q: manual.then_some(0.002),
            max_p: 0.1,
            gentle: true,
            mean_pktsize,
            wait,
            bytes,
            queue_in_bytes,
            target_delay: Duration::from_millis(5),
        }
    }

    /// RED on a 1 Mb/s, 10 ms direction with the manual thresholds of [`red_params`] and
    /// an average queue just below `max_th`, where the base probability is `max_p`.
    fn red_at_max_p(mean_pktsize: u32, wait: bool, bytes: bool) -> RedState {
        let mut r = RedState::new(
            1_000_000,
            Duration::from_millis(10),
            &red_params(true, mean_pktsize, wait, bytes, false),
        );
        r.avg = 15.0 - 1e-9;
        r
    }

    /// ns-2 `REDQueue::modify_p` with `wait_`: no drop while count * p < 1, then
    /// p / (2 - count * p); without it Floyd & Jacobson's p / (1 - count * p).
    #[test]
    fn red_wait_spaces_drops_at_least_one_over_p_arrivals_apart() {
        let mut r = red_at_max_p(1000, true, false);
        r.count = 5;
        assert_eq!(r.drop_probability(1000), 0.0);
        r.count = 15;
        assert!((r.drop_probability(1000) - 0.2).abs() < 1e-6);
        r.count = 25;
        assert_eq!(r.drop_probability(1000), 1.0);
        r.wait = false;
        r.count = 5;
        assert!((r.drop_probability(1000) - 0.2).abs() < 1e-6);
    }

    /// ns-2 `bytes_`: the count is in mean-sized packets and a packet's probability
    /// scales with its size, so a 40-byte ACK is rarely dropped.
    #[test]
    fn red_byte_mode_scales_the_drop_probability_with_the_packet_size() {
        let mut r = red_at_max_p(500, false, true);
        r.count_bytes = 2500; // five mean-sized packets: 0.1 / (1 - 0.5) = 0.2
        let big = r.drop_probability(1000);
        let ack = r.drop_probability(40);
        assert!((big - 0.4).abs() < 1e-6, "{big}");
        assert!((ack - 0.016).abs() < 1e-6, "{ack}");
    }

    /// ns-2.35 `REDQueue::initialize_params` with `thresh_ 0`, `maxthresh_ 0`,
    /// `q_weight_ -1`, `targetdelay_ 0.005`, and `reset` with `queue_in_bytes_`.
    #[test]
    fn red_auto_parameters_are_ns2_35s() {
        let auto = |rate: u64, delay_ms: u64| {
            RedState::new(
                rate,
                Duration::from_millis(delay_ms),
                &red_params(false, 500, true, true, true),
            )
        };
        // 10 Mb/s: 2500 mean packets/s; half the 5 ms target queue is 6.25 packets.
        let r = auto(10_000_000, 20);
        assert!((r.min_th - 6.25 * 500.0).abs() < 1e-9, "{}", r.min_th);
        assert!((r.max_th - 3.0 * 6.25 * 500.0).abs() < 1e-9);
        // RTT max(0.1, 3 * (0.02 + 1/2500)) = 0.1 s: w_q = 1 - exp(-1 / 2500).
        assert!((r.w_q - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        // 1 Mb/s: the target queue is small, min_th is 5 packets; RTT 3 * (0.2 + 0.004) s.
        let r = auto(1_000_000, 200);
        assert!((r.min_th - 2500.0).abs() < 1e-9);
        let w = 1.0 - (-1.0f64 / (10.0 * 3.0 * 0.204 * 250.0)).exp();
        assert!((r.w_q - w).abs() < 1e-12, "{} {w}", r.w_q);
    }

    // ----- the pipe: delay at sending time, FIFO, reordering, duplication ----------

    fn plain(delay_ms: u64) -> DirSpec {
        DirSpec::new(
            RateModel::Constant(8_000_000), // 1000 bytes per ms
            DelayModel::Constant(Duration::from_millis(delay_ms)),
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(100),
            },
        )
    }

    fn arrivals(d: &mut Dir) -> Vec<(u64, PktId)> {
        let mut out = Vec::new();
        while let Some((InFlight { at, id, .. }, _)) = d.pop_arrival() {
            out.push((at.as_nanos() / 1000, id));
        }
        out
    }

    /// ns-2's `LinkDelay::recv`: a packet takes the delay in force when its
    /// transmission starts, so after a delay drop later packets arrive first.
    #[test]
    fn a_delay_drop_lets_later_packets_overtake_those_in_flight() {
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(100), rng());
        let ms = Instant::from_millis;
        assert!(matches!(d.enqueue(ms(0), 1, 1000), Admit::Scheduled(true)));
        d.set_delay(Duration::from_millis(10));
        d.reschedule(ms(5));
        assert!(matches!(d.enqueue(ms(5), 2, 1000), Admit::Scheduled(true)));
        // 2 ends its transmission at 6 ms and arrives at 16; 1 (sent at 0) at 101.
        assert_eq!(arrivals(&mut d), vec![(16_000, 2), (101_000, 1)]);
        assert_eq!(d.stats().reordered, 1);
    }

    /// ns-2 runs events of the same time in the order they were scheduled, and frees
    /// the link with an event scheduled when the transmission starts: a packet that
    /// arrives exactly as a transmission ends, from an event scheduled before that
    /// transmission started (an ACK that left its own link earlier), still finds the
    /// next packet waiting; one scheduled later finds it already being sent.
    #[test]
    fn an_arrival_scheduled_before_a_transmission_started_sees_it_still_on_the_link() {
        let spec = DirSpec {
            queue: QueueSpec::DropTail {
                limit: QueueLimit::Packets(1),
            },
            ..plain(5)
        };
        let ms = Instant::from_millis;
        let fate = |origin: Instant| {
            let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
            d.enqueue(ms(10), 1, 1000); // sent 10..11 ms
            d.enqueue(ms(10), 2, 1000); // waits, sent 11..12 ms
            let admitted = !matches!(d.enqueue_from(ms(11), origin, 3, 1000), Admit::Dropped);
            (admitted, d.waiting(ms(11)))
        };
        // Scheduled at 5 ms, before 1 started: 2 still waits, the queue is full.
        assert_eq!(fate(ms(5)), (false, 1));
        // Scheduled at 10.5 ms, after 1 started: 2 is on the link, 3 waits.
        assert_eq!(fate(Instant::from_micros(10_500)), (true, 1));
        // `enqueue`: scheduled now.
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
        d.enqueue(ms(10), 1, 1000);
        d.enqueue(ms(10), 2, 1000);
        assert!(!matches!(d.enqueue(ms(11), 3, 1000), Admit::Dropped));
    }

    /// The transmission time remembered for a packet size follows the rate: after a
    /// rate change, a packet of the same size takes the new rate's time.
    #[test]
    fn a_rate_change_applies_to_the_next_packet_of_the_same_size() {
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(0), rng());
        let ms = Instant::from_millis;
        d.enqueue(ms(0), 1, 1000); // 1 ms at 8 Mb/s
        d.set_rate(4_000_000);
        d.reschedule(ms(5));
        d.enqueue(ms(5), 2, 1000); // 2 ms at 4 Mb/s
        d.enqueue(ms(20), 3, 500); // 1 ms
        assert_eq!(arrivals(&mut d), vec![(1_000, 1), (7_000, 2), (21_000, 3)]);
    }

    /// `fifo = true`: the direction never reorders (mobiflow before issue 17).
    #[test]
    fn a_fifo_direction_holds_later_packets_behind_earlier_ones() {
        let spec = DirSpec {
            fifo: true,
            ..plain(100)
        };
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
        let ms = Instant::from_millis;
        d.enqueue(ms(0), 1, 1000);
        d.set_delay(Duration::from_millis(10));
        d.reschedule(ms(5));
        d.enqueue(ms(5), 2, 1000);
        assert_eq!(arrivals(&mut d), vec![(101_000, 1), (101_000, 2)]);
        assert_eq!(d.stats().reordered, 0);
    }

    /// The packet being serialised when the delay changes keeps the delay of its
    /// start; one still waiting takes the new one.
    #[test]
    fn the_packet_in_service_keeps_the_delay_of_its_start() {
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(100), rng());
        let ms = Instant::from_millis;
        d.enqueue(ms(0), 1, 1000); // 0..1 ms
        d.enqueue(ms(0), 2, 1000); // waits, 1..2 ms
        d.set_delay(Duration::from_millis(10));
        d.reschedule(Instant::from_micros(500));
        assert_eq!(arrivals(&mut d), vec![(12_000, 2), (101_000, 1)]);
    }

    #[test]
    fn reorder_holds_packets_back_and_duplicate_delivers_twice() {
        let spec = DirSpec {
            reorder: 0.5,
            reorder_delay: Duration::from_millis(5),
            duplicate: 0.5,
            ..plain(10)
        };
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
        for i in 0..200 {
            d.enqueue(Instant::from_millis(i), i as PktId, 1000);
        }
        let mut dups = 0;
        let mut seen = Vec::new();
        while let Some((InFlight { id, .. }, dup)) = d.pop_arrival() {
            seen.push(id);
            dups += u64::from(dup);
        }
        assert_eq!(seen.len(), 200);
        assert!(d.stats().reordered > 50, "{}", d.stats().reordered);
        assert_eq!(d.stats().duplicated, dups);
        assert!((60..140).contains(&dups), "{dups}");
        // Without either, the same packets arrive in order, once.
        let mut d = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(10), rng());
        for i in 0..200 {
            d.enqueue(Instant::from_millis(i), i as PktId, 1000);
        }
        let ids: Vec<PktId> = arrivals(&mut d).into_iter().map(|a| a.1).collect();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
        assert_eq!(d.stats().reordered + d.stats().duplicated, 0);
    }

    /// A lean direction without delay whose ring is full of packets waiting behind
    /// the one in service, which already reached the far end but still holds the
    /// link for an arrival ordered before its end (`retire`): the ring grows before
    /// the next record would overwrite it (the limit test, `Recs::admits`, keeps room
    /// for the records from `sent`; `push` tests those from `arrived`).
    #[test]
    fn a_full_lean_ring_keeps_the_packet_in_service() {
        let us = Instant::from_micros;
        let mut lean = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(0), rng());
        let mut general = Dir::new(DirId(0), NodeId(0), NodeId(1), &plain(0), rng());
        general.leave_lean();
        for d in [&mut lean, &mut general] {
            // Packet 0 in service from 1 ms to 1.25 ms, 63 behind it: the first
            // buffer's 64 records.
            for id in 0..64 {
                d.enqueue(us(1000), id, 250);
            }
            let (p, _) = d.pop_arrival().unwrap();
            assert_eq!((p.id, p.at), (0, us(1250)));
            // From an event scheduled before packet 0's transmission started: 63
            // wait, the new packet is the 65th record.
            let a = d.enqueue_from(us(1250), us(500), 64, 1000);
            assert!(matches!(a, Admit::Scheduled(false)));
            assert_eq!(d.waiting(us(1250)), 64);
        }
        assert!(lean.lean && lean.recs.buf.len() > 64);
        for t in [1250, 1500, 2000, 20_000, 40_000] {
            lean.advance(us(t));
            general.advance(us(t));
            assert_eq!(lean.waiting(us(t)), general.waiting(us(t)), "{t}");
            assert_eq!(lean.waiting_bytes(us(t)), general.waiting_bytes(us(t)));
            let st = |d: &Dir| format!("{:?}", d.stats());
            assert_eq!(st(&lean), st(&general), "{t}");
        }
        assert_eq!(arrivals(&mut lean), arrivals(&mut general));
    }

    /// The lean representation is the general one without the copies: a random run
    /// of arrivals at the queue (from events scheduled at various earlier instants,
    /// with many ties), deliveries and samples gives the same answers and counters
    /// both ways, with a short queue that drops often and a long one that outgrows
    /// the records' first buffer; so do the leaving of the lean representation at a
    /// delay drop without a reschedule and what follows (packets overtaking those in
    /// flight, or with `fifo` held behind them, a rate change, an outage).
    #[test]
    fn a_lean_direction_behaves_as_the_general_one() {
        use rand_core::SeedableRng;
        let admit = |a: Admit| match a {
            Admit::Scheduled(head) => 1 + u8::from(head),
            Admit::Queued => 3,
            Admit::Dropped => 4,
            Admit::Lost => 5,
        };
        let us = Instant::from_micros;
        for (d0, d1) in [(0, 2), (3, 1)] {
            for seed in 0..20 {
                let long = seed % 2 == 1;
                let spec = DirSpec {
                    queue: QueueSpec::DropTail {
                        limit: QueueLimit::Packets(if long { 150 } else { 5 }),
                    },
                    // With `fifo`, what the lean direction leaves (the latest
                    // arrival) holds later packets back after the delay drop.
                    fifo: seed % 4 >= 2,
                    ..plain(d0)
                };
                let mut lean = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
                let mut general = Dir::new(DirId(0), NodeId(0), NodeId(1), &spec, rng());
                general.leave_lean();
                assert!(lean.lean && !general.lean);
                let mut r = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut now = 0;
                let mut id = 0;
                for step in 0..400 {
                    let x = r.next_u64();
                    // A 250-byte packet takes 250 us: ends, arrivals and the
                    // instants below meet often.
                    now += (x % if long { 3 } else { 4 }) * 250;
                    let t = us(now);
                    for d in [&mut lean, &mut general] {
                        match step {
                            200 => d.set_delay(Duration::from_millis(d1)),
                            250 => {
                                d.set_rate(4_000_000);
                                d.reschedule(t);
                            }
                            _ => {}
                        }
                    }
                    if step == 300 {
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        lean.go_down(t, &mut a);
                        general.go_down(t, &mut b);
                        assert_eq!(a, b);
                    } else if step == 320 {
                        lean.go_up(t);
                        general.go_up(t);
                    }
                    // What reached the far end by now, then the event of this step.
                    // Lean, through `pop_lean` (the simulator's path); then through
                    // `pop_arrival` both ways.
                    while let Some(at) = lean.next_arrival().filter(|&a| a <= t) {
                        let arrival = |d: &mut Dir| {
                            if d.is_lean() {
                                let a = d.pop_lean()?;
                                return Some((a.id, a.sent, a.dup, a.next));
                            }
                            let (p, dup) = d.pop_arrival()?;
                            assert_eq!(p.at, at);
                            Some((p.id, p.sent, dup, d.next_arrival()))
                        };
                        assert_eq!(arrival(&mut lean), arrival(&mut general));
                    }
                    if (x >> 8) % 4 == 0 {
                        lean.advance(t);
                        general.advance(t);
                        assert_eq!(lean.waiting(t), general.waiting(t));
                        assert_eq!(lean.waiting_bytes(t), general.waiting_bytes(t));
                    } else {
                        let origin = us(now.saturating_sub((x >> 16) % 6 * 250));
                        let bytes = if (x >> 24) % 3 == 0 { 1000 } else { 250 };
                        let a = lean.enqueue_from(t, origin, id, bytes);
                        let b = general.enqueue_from(t, origin, id, bytes);
                        assert_eq!(admit(a), admit(b), "seed {seed} step {step}");
                        id += 1;
                    }
                    assert_eq!(lean.next_arrival(), general.next_arrival());
                    assert_eq!(lean.in_pipe(), general.in_pipe());
                    assert_eq!(lean.pipe_gen, general.pipe_gen);
                    assert_eq!(lean.lean, step < 200);
                    let st = |d: &Dir| format!("{:?}", d.stats());
                    assert_eq!(st(&lean), st(&general), "seed {seed} step {step}");
                }
                assert!(lean.stats().packets_sent > 100);
                assert!(lean.stats().drops > 0 || lean.stats().queue_max > 64);
            }
        }
    }
}
