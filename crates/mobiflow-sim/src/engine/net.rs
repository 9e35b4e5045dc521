//! The network: link directions, static routes, the packet slab and forwarding, and
//! the event queue.

use super::ids::{DirId, FlowId, IdVec, NodeId};
use super::link::{Admit, Lean, PktId};
use super::linkdir::{LinkDir, LinkTimer};
use super::{Entry, Ev};
use mobiflow_proto::tfrc::{TfrcData, TfrcFeedback};
use mobiflow_proto::time::Instant;
use mobiflow_proto::wire::Segment;
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub(super) struct Pkt {
    pub flow: FlowId,
    pub to_receiver: bool,
    pub dst: NodeId,
    pub bytes: u32,
    pub body: Body,
}

/// What a packet carries, by transport.
#[derive(Copy, Clone, Debug)]
pub(super) enum Body {
    Tcp(Segment),
    TfrcData(TfrcData),
    TfrcFeedback(TfrcFeedback),
}

/// A TFRC packet an endpoint sends, borrowed from where its machine built it: the
/// engine copies it once, into the packet's slot in the slab (`Net::alloc`), instead
/// of moving a whole `Body` through the send path. (A TCP machine writes its segment
/// into the slot itself: `Net::take_tcp_slot`.)
#[derive(Copy, Clone, Debug)]
pub(super) enum Outgoing<'a> {
    TfrcData(&'a TfrcData),
    TfrcFeedback(&'a TfrcFeedback),
}

impl Outgoing<'_> {
    #[inline(always)]
    pub(super) fn body(self) -> Body {
        match self {
            Outgoing::TfrcData(d) => Body::TfrcData(*d),
            Outgoing::TfrcFeedback(f) => Body::TfrcFeedback(*f),
        }
    }
}

/// An entry of an [`EventHeap`]: an event and its key, `(t, ord)` as one 128-bit
/// number (see `Entry`), unique among all the events of a run.
pub(super) trait Keyed: Copy {
    fn key(&self) -> u128;

    /// Leaves the queue before `o`: earlier in `(t, ord)`, compared as one 128-bit
    /// number (no branch between the two fields).
    #[inline(always)]
    fn before(&self, o: &Self) -> bool {
        self.key() < o.key()
    }
}

/// `(t, ord)` as one 128-bit number.
#[inline(always)]
fn key(t: Instant, ord: u64) -> u128 {
    (u128::from(t.as_nanos()) << 64) | u128::from(ord)
}

impl Keyed for Entry {
    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.t, self.ord)
    }
}

/// The arrival timer of a pipe's head, `Ev::Link(d, LinkTimer::Arrive(gen))`, as the
/// heap of arrivals keeps it: without the event's tag, and without when it was made,
/// which its run does not read (`World::link_arrival` orders what the packet makes
/// arrive from when it was sent). 24 bytes to `Entry`'s 40, for the copy of every
/// packet's every hop.
#[derive(Copy, Clone, Debug)]
pub(super) struct ArrivalEntry {
    pub t: Instant,
    pub ord: u64,
    pub d: DirId,
    pub gen: u32,
}

impl Keyed for ArrivalEntry {
    #[inline(always)]
    fn key(&self) -> u128 {
        key(self.t, self.ord)
    }
}

/// A binary min-heap of events, the earliest (`Keyed::before`) on top. Entries are
/// unique in `(t, ord)`, so events leave in one order whatever the heap's
/// shape. Written out (rather than `std::collections::BinaryHeap`) for `replace_top`:
/// the event being run is overwritten in place by the first one it schedules, and
/// sifted down once, without a `PeekMut` guard.
pub(super) struct EventHeap<E> {
    v: Vec<E>,
}

impl<E: Keyed> EventHeap<E> {
    pub(super) fn with_capacity(n: usize) -> EventHeap<E> {
        EventHeap {
            v: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    pub(super) fn peek(&self) -> Option<&E> {
        self.v.first()
    }

    pub(super) fn push(&mut self, e: E) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if !e.before(&self.v[parent]) {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    pub(super) fn pop(&mut self) -> Option<E> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else {
            return Some(last);
        };
        self.replace_top(last);
        Some(top)
    }

    /// Replace the top with `e` (the heap is not empty): `e` takes the top's place
    /// and is sifted down.
    #[inline(always)]
    pub(super) fn replace_top(&mut self, e: E) {
        let v = &mut self.v[..];
        // The top's children apart, at indices known here: with one flow the heap of
        // other events holds a few wake-ups, and `e` seldom goes further down than
        // them.
        // Two entries, whole here: the heap of arrivals of a single link (its two
        // directions' heads), where every replaced arrival passes the other one.
        let c = match v {
            [_, l, r, ..] => 1 + usize::from(r.before(l)),
            [top, only] => {
                if only.before(&e) {
                    *top = *only;
                    *only = e;
                } else {
                    *top = e;
                }
                return;
            }
            _ => {
                v[0] = e;
                return;
            }
        };
        if !v[c].before(&e) {
            v[0] = e;
            return;
        }
        v[0] = v[c];
        // `e` is written by field in both branches, never built in memory for a
        // call (and copied from there with wider loads than the stores that wrote
        // it, a store-to-load forwarding stall).
        if 2 * c + 1 < v.len() {
            let i = Self::sift_hole(v, c, e.key());
            v[i] = e;
        } else {
            v[c] = e;
        }
    }

    /// The deeper levels of `replace_top`, apart so that its common case keeps its
    /// values in registers: moves the hole at `i` of `v` down past the children that
    /// leave before an entry of `key`, and returns where it ends, that entry's place.
    #[inline(never)]
    fn sift_hole(v: &mut [E], mut i: usize, key: u128) -> usize {
        let n = v.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                return i;
            }
            let c = if l + 1 < n && v[l + 1].before(&v[l]) {
                l + 1
            } else {
                l
            };
            if v[c].key() >= key {
                return i;
            }
            v[i] = v[c];
            i = c;
        }
    }
}

/// Which heap of the [`Queue`] an event is kept in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The arrival timer of a pipe's head (`Ev::Link(_, LinkTimer::Arrive(_))`).
    Arrival,
    /// Every other event.
    Other,
}

/// The earliest event of the [`Queue`], in its heap.
#[derive(Copy, Clone, Debug)]
pub(super) enum Top<'a> {
    Arrival(&'a ArrivalEntry),
    Other(&'a Entry),
}

/// The event queue, ordered by `(time, insertion count)` (see `Entry`), in two heaps:
/// the arrival timers of the pipes' heads (at most one per link direction, but for
/// stale ones after an outage) apart from every other event. With many flows the
/// heap of other events holds a wake-up per flow end, and the arrival that replaces
/// the one just run (the next packet of the same pipe, `World::link_arrival`) would
/// be sifted past the other direction's head and down to them at every packet; in a
/// heap of their own the arrivals meet only each other. `ord` counts the events of
/// both, so keys stay unique and the earlier of the two tops is the top a single
/// heap would have: events run in the same order (ns-2's FIFO ties kept).
pub(super) struct Queue {
    /// Every event but the pipes' arrivals.
    pub heap: EventHeap<Entry>,
    /// The arrival timers of the pipes' heads.
    pub arrivals: EventHeap<ArrivalEntry>,
    /// The instant of the last `at`: debug builds check that events are scheduled in
    /// time order, which the order by `ord` relies on.
    #[cfg(debug_assertions)]
    pub made: Instant,
    /// How many events were ever scheduled.
    pub ord: u64,
    /// The top of this heap is the event being run (`World::step`), already spent:
    /// the next event of the same kind scheduled replaces it and sifts it down (one
    /// sift instead of a pop's and a push's). Entries are unique in `(t, ord)`, so
    /// the order in which they leave does not depend on how the heaps were built;
    /// the spent top, the earliest of its heap, stays on top until replaced, as every
    /// event scheduled meanwhile is later.
    pub spent: Option<Kind>,
}

impl Queue {
    pub(super) fn with_capacity(n: usize) -> Queue {
        Queue {
            heap: EventHeap::with_capacity(n),
            arrivals: EventHeap::with_capacity(16),
            #[cfg(debug_assertions)]
            made: Instant::ZERO,
            ord: 0,
            spent: None,
        }
    }

    /// The earliest event of both heaps.
    #[inline(always)]
    pub(super) fn top(&self) -> Option<Top<'_>> {
        match (self.arrivals.peek(), self.heap.peek()) {
            (Some(a), Some(o)) if o.key() < a.key() => Some(Top::Other(o)),
            (Some(a), _) => Some(Top::Arrival(a)),
            (None, Some(o)) => Some(Top::Other(o)),
            (None, None) => None,
        }
    }

    /// After an event of `kind` run in place (`spent`): popped, if nothing replaced
    /// it. (`spent` can only be that event's kind or nothing: one test.)
    #[inline(always)]
    pub(super) fn pop_spent(&mut self, kind: Kind) {
        if self.spent.is_some() {
            debug_assert_eq!(self.spent, Some(kind));
            self.spent = None;
            match kind {
                Kind::Arrival => {
                    self.arrivals.pop();
                }
                Kind::Other => {
                    self.heap.pop();
                }
            }
        }
    }

    /// Remove the earliest event: its key, the event, and when it was made (`None`
    /// for an arrival, which does not keep it). The event loop runs its events in
    /// place instead (`spent`).
    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<(u128, Ev, Option<Instant>)> {
        match self.top()? {
            Top::Arrival(_) => {
                let a = self.arrivals.pop()?;
                Some((a.key(), Ev::Link(a.d, LinkTimer::Arrive(a.gen)), None))
            }
            Top::Other(_) => {
                let e = self.heap.pop()?;
                Some((e.key(), e.ev, Some(e.made)))
            }
        }
    }

    /// The next `ord`; debug builds check that `made` is not before the last.
    #[inline(always)]
    fn next_ord(&mut self, made: Instant) -> u64 {
        #[cfg(debug_assertions)]
        {
            assert!(made >= self.made, "events are scheduled in time order");
            self.made = made;
        }
        #[cfg(not(debug_assertions))]
        let _ = made;
        self.ord += 1;
        self.ord
    }

    /// Schedule `ev` at `t`; `made` is when (the time of the event scheduling it,
    /// never before the previous call's).
    #[inline(always)]
    pub(super) fn at(&mut self, t: Instant, made: Instant, ev: Ev) {
        if let Ev::Link(d, LinkTimer::Arrive(gen)) = ev {
            self.at_arrival(t, made, d, gen);
            return;
        }
        let ord = self.next_ord(made);
        // The entry is built in each branch, so the common one (`replace_top`, inlined)
        // writes its fields straight into the heap: built once for both, it would be
        // kept in memory for `push`'s call and copied from there with wider loads than
        // the stores that wrote it, which stalls store-to-load forwarding.
        if self.spent == Some(Kind::Other) {
            self.spent = None;
            self.heap.replace_top(Entry { t, ord, made, ev });
        } else {
            self.heap.push(Entry { t, ord, made, ev });
        }
    }

    /// [`Queue::at`] for the arrival timer of direction `d`, pipe generation `gen`.
    #[inline(always)]
    pub(super) fn at_arrival(&mut self, t: Instant, made: Instant, d: DirId, gen: u32) {
        let ord = self.next_ord(made);
        // Built in each branch, as in `at`.
        if self.spent == Some(Kind::Arrival) {
            self.spent = None;
            self.arrivals.replace_top(ArrivalEntry { t, ord, d, gen });
        } else {
            self.arrivals.push(ArrivalEntry { t, ord, d, gen });
        }
    }
}

/// The free slots of the packet slab: a stack (the slot freed last is taken first),
/// its top kept apart. In the steady state every packet delivered frees a slot that
/// the packet its endpoint sends next takes (`World::deliver`, then
/// `Net::take_tcp_slot`): that slot only goes in and out of `top`, never through the
/// vector's length and capacity.
#[derive(Default)]
pub(super) struct FreeSlots {
    /// The top of the stack, if it is not `rest`'s last.
    top: Option<PktId>,
    rest: Vec<PktId>,
}

impl FreeSlots {
    pub(super) fn with_capacity(n: usize) -> FreeSlots {
        FreeSlots {
            top: None,
            rest: Vec::with_capacity(n),
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, id: PktId) {
        if let Some(below) = self.top.replace(id) {
            self.rest.push(below);
        }
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<PktId> {
        match self.top.take() {
            Some(id) => Some(id),
            None => self.rest.pop(),
        }
    }

    /// Push the slots of `ids`, in their order, and empty it.
    pub(super) fn append(&mut self, ids: &mut Vec<PktId>) {
        for id in ids.drain(..) {
            self.push(id);
        }
    }
}

/// The network: links, routes, packets in flight and the event queue.
pub(super) struct Net {
    pub now: Instant,
    pub queue: Queue,
    pub dirs: IdVec<DirId, LinkDir>,
    pub route: Routes,
    pub pkts: Vec<Pkt>,
    pub free: FreeSlots,
    /// When the event being run was scheduled, as ns-2 would have scheduled it (a
    /// packet's arrival: at the start of its transmission). Orders the packets it
    /// makes arrive at a queue against a transmission ending at the same instant
    /// (`Dir::enqueue_from`).
    pub origin: Instant,
    /// Per flow: data packets lost to outages, to queues, to random loss, and (a part
    /// of the first) queued or in flight when an outage started.
    pub data_lost: IdVec<FlowId, [u64; 4]>,
}

impl Net {
    pub(super) fn at(&mut self, t: Instant, ev: Ev) {
        self.queue.at(t, self.now, ev);
    }

    /// [`Net::at`] for the arrival timer of direction `d`, the event of every packet
    /// on every hop: the event is built here from its fields, which arrive in
    /// registers, rather than in the caller's memory (read back with wider loads than
    /// the stores that wrote it, a store-to-load forwarding stall).
    #[inline(always)]
    pub(super) fn at_arrival(&mut self, t: Instant, d: DirId, gen: u32) {
        self.queue.at_arrival(t, self.now, d, gen);
    }

    pub(super) fn alloc(&mut self, pkt: Pkt) -> PktId {
        if let Some(id) = self.free.pop() {
            self.pkts[id as usize] = pkt;
            id
        } else {
            self.pkts.push(pkt);
            (self.pkts.len() - 1) as PktId
        }
    }

    /// Take a free slot of the slab (the slab grows by one when none is free) for a
    /// packet of `flow` towards `dst`, its header written: its id, and the slot for a
    /// TCP machine to write its segment and the engine its size in place
    /// (`Sink::tcp_slot`). The slot is the caller's until it sends the packet, or
    /// frees it if the machine wrote nothing.
    #[inline(always)]
    pub(super) fn take_tcp_slot(
        &mut self,
        flow: FlowId,
        to_receiver: bool,
        dst: NodeId,
    ) -> (PktId, &mut Pkt) {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.pkts.push(Pkt {
                    flow,
                    to_receiver,
                    dst,
                    bytes: 0,
                    body: Body::Tcp(Segment::default()),
                });
                (self.pkts.len() - 1) as PktId
            }
        };
        let p = &mut self.pkts[id as usize];
        p.flow = flow;
        p.to_receiver = to_receiver;
        p.dst = dst;
        if !matches!(p.body, Body::Tcp(_)) {
            p.body = Body::Tcp(Segment::default());
        }
        (id, p)
    }

    /// Read the slot of packet `id`, the next to arrive over a pipe, one arrival
    /// before it does. A packet's slot is written when it is sent and read again only
    /// when it arrives, a round trip later; at 1 flow the packets in flight (about 700
    /// slots of 144 bytes with the bench's 500-packet queue) outgrow the L1 cache, and
    /// the slots are reused last-freed first, in no order a hardware prefetcher
    /// follows. The two arrival reads were the run's largest D1 misses (cachegrind,
    /// 1.3 and 1.6 per packet: the destination and the body's variant). Read here,
    /// their lines are on their way while the packet before is handled; the values are
    /// dropped (`black_box` keeps the loads). A safe stand-in for a prefetch
    /// instruction (`unsafe_code` is forbidden); it changes no result.
    #[inline(always)]
    pub(super) fn read_ahead(&self, id: PktId) {
        if let Some(p) = self.pkts.get(id as usize) {
            std::hint::black_box((p.dst, matches!(p.body, Body::Tcp(_))));
        }
    }

    /// Count a lost data packet against its flow: `slot` 0 outage, 1 queue, 2 random
    /// loss, 3 queued or in flight when an outage started (also counted in 0).
    pub(super) fn count_loss(&mut self, id: PktId, slot: usize) {
        let p = &self.pkts[id as usize];
        if p.to_receiver {
            self.data_lost[p.flow][slot] += 1;
        }
    }

    /// Packet `id` leaves `node` towards its destination: it joins the queue of the
    /// next direction on its route (or is freed without one).
    #[inline(always)]
    pub(super) fn forward(&mut self, node: NodeId, id: PktId) {
        let p = &self.pkts[id as usize];
        let (dst, bytes) = (p.dst, p.bytes);
        let Some(d) = self.route.next(node, dst) else {
            self.free.push(id);
            return;
        };
        self.forward_on(d, id, bytes);
    }

    /// [`Net::forward`] onto `d`, the route's next direction from the packet's node,
    /// of `bytes` on the wire: called directly with a flow's first hop, which the
    /// static routes fix at the start (`FlowRt::out`), by the packets the
    /// flow's ends send.
    #[inline(always)]
    pub(super) fn forward_on(&mut self, d: DirId, id: PktId, bytes: u32) {
        let (now, origin) = (self.now, self.origin);
        // The common direction, lean, here: what `LinkDir::handle_packet` and the
        // match below do, without the timer sink and the `Admit` in between. Any
        // other out of line.
        match self.dirs[d].handle_lean(now, origin, id, bytes) {
            Lean::Head(t, gen) => self.at_arrival(t, d, gen),
            Lean::Behind => {}
            Lean::Dropped => {
                // A lean direction is up: a queue drop.
                self.count_loss(id, 1);
                self.free.push(id);
            }
            Lean::General => self.forward_general(d, id, bytes),
        }
    }

    /// `forward` to direction `d` when it is not lean.
    #[inline(never)]
    fn forward_general(&mut self, d: DirId, id: PktId, bytes: u32) {
        let (now, origin) = (self.now, self.origin);
        let q = &mut self.queue;
        let admit = self.dirs[d].handle_packet(now, origin, id, bytes, &mut move |t, timer| {
            q.at(t, now, Ev::Link(d, timer))
        });
        match admit {
            Admit::Scheduled(_) | Admit::Queued => {}
            Admit::Dropped => {
                let slot = if self.dirs[d].dir().is_down() { 0 } else { 1 };
                self.count_loss(id, slot);
                self.free.push(id);
            }
            Admit::Lost => {
                self.count_loss(id, 2);
                self.free.push(id);
            }
        }
    }
}

impl Net {
    /// The link directions from node `a` to node `b` along the static routes.
    pub(super) fn path(&self, a: NodeId, b: NodeId) -> Vec<DirId> {
        let mut out = Vec::new();
        let mut node = a;
        while node != b && out.len() <= self.dirs.len() {
            let Some(d) = self.route.next(node, b) else {
                break;
            };
            out.push(d);
            node = self.dirs[d].dir().to;
        }
        out
    }
}

/// Static routes: for every pair of nodes, the direction a packet takes next.
pub(super) struct Routes {
    n: usize,
    /// `next[from * n + dst]`.
    next: Vec<Option<DirId>>,
}

impl Routes {
    /// Breadth-first search (fewest hops) from every node; ties go to the link
    /// declared first.
    pub(super) fn new(dirs: &IdVec<DirId, LinkDir>, n: usize) -> Routes {
        let mut next = vec![None; n * n];
        for src in 0..n {
            let mut first: Vec<Option<DirId>> = vec![None; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut q = VecDeque::from([src]);
            while let Some(u) = q.pop_front() {
                for d in dirs.iter().map(LinkDir::dir) {
                    let (from, to) = (d.from.index(), d.to.index());
                    if from == u && !seen[to] {
                        seen[to] = true;
                        first[to] = if u == src { Some(d.index) } else { first[u] };
                        q.push_back(to);
                    }
                }
            }
            next[src * n..(src + 1) * n].copy_from_slice(&first);
        }
        Routes { n, next }
    }

    /// The direction from `from` towards `dst` (`None`: no route, or `from == dst`).
    #[inline(always)]
    pub(super) fn next(&self, from: NodeId, dst: NodeId) -> Option<DirId> {
        self.next[from.index() * self.n + dst.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::{RngCore, SeedableRng};

    /// Events due at the same instant run in the order they were scheduled, across
    /// the instants they were scheduled at (ns-2's `CalendarScheduler::insert`), and
    /// each carries when it was scheduled.
    #[test]
    fn same_time_events_pop_in_scheduling_order() {
        let mut q = Queue::with_capacity(0);
        let t = |ms: u64| Instant::ZERO + mobiflow_proto::time::Duration::from_millis(ms);
        // (due, scheduled at): scheduled in time order, several due at 10 ms.
        let plan = [
            (10, 0),
            (5, 0),
            (10, 0),
            (10, 3),
            (7, 3),
            (10, 4),
            (10, 4),
            (9, 6),
        ];
        for (k, &(due, made)) in plan.iter().enumerate() {
            q.at(t(due), t(made), Ev::Mark(k as u32));
        }
        let mut order = Vec::new();
        while let Some((_, ev, made)) = q.pop() {
            let Ev::Mark(k) = ev else { unreachable!() };
            assert_eq!(made, Some(t(plan[k as usize].1)));
            order.push(k);
        }
        assert_eq!(order, [1, 4, 7, 0, 2, 3, 5, 6]);
    }

    /// `replace_top` (its first level apart, the deeper ones in `sift_hole`), `push`
    /// and `pop` keep the heap's order at every size: checked against a sorted list,
    /// through a pseudo-random mix of operations that grows the heap to a few dozen
    /// entries and back to one, with ties in time.
    #[test]
    fn heap_operations_agree_with_a_sorted_list_at_every_size() {
        let mut heap = EventHeap::with_capacity(0);
        let mut sorted: Vec<(u64, u64)> = Vec::new();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(19);
        let mut rand = |m: u64| rng.next_u64() % m;
        let mut sizes = std::collections::BTreeSet::new();
        for ord in 0..20_000u64 {
            let t = Instant::ZERO + mobiflow_proto::time::Duration::from_micros(rand(40));
            let e = Entry {
                t,
                ord,
                made: Instant::ZERO,
                ev: Ev::Mark(0),
            };
            // Grow while under 8 or on a slow wave up to 64 and down again.
            let grow = sorted.len() < 8 || (ord / 2000) % 2 == 0 && sorted.len() < 64;
            match rand(3) {
                0 if !sorted.is_empty() => {
                    heap.replace_top(e);
                    sorted.remove(0);
                    sorted.push((t.as_nanos(), ord));
                }
                1 if grow || sorted.is_empty() => {
                    heap.push(e);
                    sorted.push((t.as_nanos(), ord));
                }
                _ => {
                    let got = heap.pop().map(|e| (e.t.as_nanos(), e.ord));
                    assert_eq!(got, (!sorted.is_empty()).then(|| sorted.remove(0)));
                }
            }
            sorted.sort_unstable();
            let top = heap.peek().map(|e| (e.t.as_nanos(), e.ord));
            assert_eq!(top, sorted.first().copied());
            sizes.insert(sorted.len());
        }
        assert!(
            (0..=40).all(|n| sizes.contains(&n)),
            "every size up to 40 was met"
        );
        while let Some(e) = heap.pop() {
            assert_eq!((e.t.as_nanos(), e.ord), sorted.remove(0));
        }
        assert!(sorted.is_empty());
    }

    /// Event `k` of either kind: a pipe's arrival (of one of three directions) or
    /// another, and back.
    fn event(k: u32, arrival: bool) -> Ev {
        if arrival {
            Ev::Link(DirId::of(k as usize % 3, 0), LinkTimer::Arrive(k))
        } else {
            Ev::Mark(k)
        }
    }

    /// The number `k` of an event of `event`.
    fn event_number(ev: &Ev) -> u32 {
        match *ev {
            Ev::Link(d, LinkTimer::Arrive(k)) if d == DirId::of(k as usize % 3, 0) => k,
            Ev::Mark(k) => k,
            _ => unreachable!("the tests schedule arrivals and marks"),
        }
    }

    /// The queue's top: its time, its key, its event and its kind.
    fn top_of(q: &Queue) -> Option<(Instant, u128, Ev, Kind)> {
        Some(match q.top()? {
            Top::Arrival(a) => (
                a.t,
                a.key(),
                Ev::Link(a.d, LinkTimer::Arrive(a.gen)),
                Kind::Arrival,
            ),
            Top::Other(e) => (e.t, e.key(), e.ev, Kind::Other),
        })
    }

    /// Running the top event in place (`spent`: the first event of its kind that it
    /// schedules replaces it, or it is popped after) runs events in the same order as
    /// popping it first and pushing what it schedules, whichever heap holds them.
    #[test]
    fn spent_top_replacement_keeps_the_pop_order() {
        let t = |us: u64| Instant::ZERO + mobiflow_proto::time::Duration::from_micros(us);
        // Event k, run at time `now`, schedules (k * 7) % 3 events, of either kind, at
        // delays that collide often.
        let run = |in_place: bool| {
            let mut q = Queue::with_capacity(0);
            for k in 0..4 {
                q.at(t(u64::from(k) * 5), Instant::ZERO, event(k, k % 2 == 0));
            }
            let mut next = 4u32;
            let mut order = Vec::new();
            while order.len() < 500 {
                let Some((now, _, ev, kind)) = top_of(&q) else {
                    break;
                };
                if in_place {
                    q.spent = Some(kind);
                } else {
                    q.pop();
                }
                let k = event_number(&ev);
                order.push((k, now));
                for j in 0..(k * 7) % 3 {
                    let delay = u64::from((k + j) % 4) * 10;
                    q.at(
                        now + mobiflow_proto::time::Duration::from_micros(delay),
                        now,
                        event(next, (k + j) % 3 != 0),
                    );
                    next += 1;
                }
                q.pop_spent(kind);
            }
            order
        };
        let reference = run(false);
        assert!(reference.len() > 100, "the process keeps going");
        assert_eq!(run(true), reference);
    }

    /// The two heaps of the queue give up their events in the order of one sorted
    /// list of `(t, ord)`: through a pseudo-random mix of events scheduled, popped,
    /// and run in place (each scheduling a few events of either kind, the first of
    /// its own kind replacing it), with ties in time within and across the kinds,
    /// and either heap empty at times.
    #[test]
    fn the_two_heaps_keep_the_order_of_one_sorted_list() {
        let mut q = Queue::with_capacity(0);
        // (key, event number), sorted.
        let mut sorted: Vec<(u128, u32)> = Vec::new();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(23);
        let mut rand = |m: u64| rng.next_u64() % m;
        let mut now = Instant::ZERO;
        let mut next = 0u32;
        let (mut ran, mut replaced_arrivals, mut replaced_others) = (0, 0, 0);
        let mut schedule = |q: &mut Queue, sorted: &mut Vec<(u128, u32)>, now, r: u64| {
            let t = now + mobiflow_proto::time::Duration::from_micros(r % 20);
            q.at(t, now, event(next, r / 20 % 2 == 0));
            sorted.push((key(t, q.ord), next));
            next += 1;
        };
        for step in 0..30_000u64 {
            // Grow while under 4 or on a slow wave up to 40 and down again.
            let grow = sorted.len() < 4 || (step / 3000) % 2 == 0 && sorted.len() < 40;
            match rand(4) {
                0 if grow || sorted.is_empty() => schedule(&mut q, &mut sorted, now, rand(40)),
                1 => {
                    let top = top_of(&q);
                    let got = q.pop().map(|(k, ev, _)| (k, event_number(&ev)));
                    assert_eq!(got, (!sorted.is_empty()).then(|| sorted.remove(0)));
                    if let Some((t, ..)) = top {
                        now = t;
                    }
                }
                _ => {
                    let Some((t, k, ev, kind)) = top_of(&q) else {
                        continue;
                    };
                    assert_eq!((k, event_number(&ev)), sorted.remove(0));
                    now = t;
                    q.spent = Some(kind);
                    for _ in 0..rand(4) + u64::from(grow) {
                        schedule(&mut q, &mut sorted, now, rand(40));
                        sorted.sort_unstable();
                    }
                    match q.spent {
                        None if kind == Kind::Arrival => replaced_arrivals += 1,
                        None => replaced_others += 1,
                        Some(_) => {}
                    }
                    q.pop_spent(kind);
                    ran += 1;
                }
            }
            sorted.sort_unstable();
            let top = top_of(&q).map(|(_, k, ev, _)| (k, event_number(&ev)));
            assert_eq!(top, sorted.first().copied());
        }
        assert!(ran > 10_000 && replaced_arrivals > 2_000 && replaced_others > 2_000);
        while let Some((k, ev, _)) = q.pop() {
            assert_eq!((k, event_number(&ev)), sorted.remove(0));
        }
        assert!(sorted.is_empty());
    }

    /// The free slots, their top apart, are the stack a plain vector is: the same
    /// slot taken and shown next through a pseudo-random mix of pushes, pops and
    /// appends, down to empty and back.
    #[test]
    fn free_slots_are_a_stack() {
        let mut free = FreeSlots::default();
        let mut stack: Vec<PktId> = Vec::new();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(29);
        let mut rand = |m: u64| rng.next_u64() % m;
        let mut next: PktId = 0;
        let mut empty = 0;
        for _ in 0..20_000 {
            // Pops a little more often than slots come: down to empty now and then.
            match rand(10) {
                0..=2 => {
                    free.push(next);
                    stack.push(next);
                    next += 1;
                }
                3 => {
                    let mut lost: Vec<PktId> = (next..next + rand(4) as PktId).collect();
                    next += lost.len() as PktId;
                    stack.extend_from_slice(&lost);
                    free.append(&mut lost);
                    assert!(lost.is_empty());
                }
                _ => assert_eq!(free.pop(), stack.pop()),
            }
            empty += usize::from(stack.is_empty());
        }
        assert!(empty > 100, "the stack was emptied often: {empty}");
        while let Some(id) = stack.pop() {
            assert_eq!(free.pop(), Some(id));
        }
        assert_eq!(free.pop(), None);
    }
}
