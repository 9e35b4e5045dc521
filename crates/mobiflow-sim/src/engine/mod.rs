//! The event loop: one `World` per run, its events and the three steps of the packet
//! path (`flush`: an endpoint's packets into the network; `arrive`: a packet at the far
//! end of a link direction; `deliver`: a packet at its endpoint). Everything else lives
//! in the modules below: the network (`net.rs`), link directions (`linkdir.rs`,
//! `link.rs`), the endpoint adapter (`endpoint.rs`, `tfrc.rs`), applications (`app/`),
//! readers, mobility, sampling, summaries and captures. See
//! docs/architecture.md for a packet's walk through them.
//!
//! One owned [`World`] per run (no globals: two simulations can share a process).
//! Events sit in two binary heaps (the pipes' arrivals apart: `net::Queue`) ordered by
//! one key, `(time, insertion sequence)`, so events at the same time run in the order
//! they were scheduled (FIFO ties) and a run is a pure function of the scenario.
//! Packets live in a slab and are referred to by index: the per-packet path allocates
//! nothing once the slab has grown to the largest number of packets in the network at
//! once. Protocol machines are woken lazily: each endpoint has at most one pending
//! wake-up that is earlier than all its timers.

pub(crate) mod app;
mod capture;
mod endpoint;
pub mod ids;
pub mod link;
pub mod linkdir;
mod mobility;
mod net;
mod observe;
mod reader;
mod sample;
mod summary;
mod tfrc;

use crate::model::{ReaderSpec, Scenario};
use crate::results::{Series, Summary};
use app::{App, Apps};
use capture::Capture;
use endpoint::{Endpoints, FlowEnds, Side};
use ids::{DirId, FlowId, IdVec, NodeId};
use link::PktId;
use linkdir::{LinkDir, LinkTimer};
use mobiflow_proto::time::{Duration, Instant};
use mobiflow_proto::wire::Segment;
use net::{Body, Kind, Net, Pkt, Queue, Top};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use reader::reader_interval;

pub use reader::{read_budget, read_rate_at};

#[cfg(test)]
mod props;

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub summary: Summary,
    pub series: Series,
}

/// A scenario that is valid on paper but cannot be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum RunError {
    #[error("flows.{flow}: no route from {from:?} to {to:?}")]
    NoRoute {
        flow: String,
        from: String,
        to: String,
    },
    #[error("flows.{flow}.tcp.{key}: {reason}")]
    InvalidTcp {
        flow: String,
        key: String,
        reason: String,
    },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// The caller's control hook asked the run to stop (Ctrl-C): no result exists.
    #[error("interrupted")]
    Interrupted,
}

/// Bytes the engine keeps for one packet in a queue or a pipe (the packet and its
/// arrival time), for the resource estimate of `crate::budget`.
pub const PACKET_BYTES: usize = std::mem::size_of::<Pkt>() + std::mem::size_of::<Instant>();

/// How often, in wall time, a controlled run calls its hook.
pub const CONTROL_PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

/// How to run: where captures go.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Folder for the pcap files of the scenario's capture points.
    pub out_dir: Option<std::path::PathBuf>,
    /// Capture at every host (the command line's `--pcap`), besides the scenario's
    /// own capture points.
    pub capture_all_hosts: bool,
}

#[derive(Copy, Clone, Debug)]
enum Ev {
    FlowStart(FlowId),
    FlowStop(FlowId),
    /// Write `k` of the flow's application.
    AppWrite(FlowId, u32),
    Read(FlowId),
    /// The pending wake-up of one end of a flow.
    Wake(FlowId, Side),
    /// A timer of link direction `d` (`linkdir.rs`).
    Link(DirId, LinkTimer),
    /// Event `k` of the application of flow `f` (`App::on_event`).
    App(FlowId, u32),
    Sample,
    Mark(u32),
    /// Mobility event `k` (`mobility.rs`).
    Mobility(u32),
    /// Action `k` of TFRC flow `f` (Freeze-DCCP trigger, measurement).
    Tfrc(FlowId, u32),
}

/// A scheduled event. Events of the same time `t` run in the order they were
/// scheduled, as ns-2's scheduler runs them (`CalendarScheduler::insert` puts a new
/// event after those of equal time): the queue orders by `(t, ord)`, `ord` counting
/// every event ever scheduled, compared as one 128-bit key. `made`, when it was
/// scheduled, is read by the link's tie rule (`Dir::enqueue_from`).
#[derive(Copy, Clone, Debug)]
struct Entry {
    t: Instant,
    /// Its rank among all the events scheduled in the run.
    ord: u64,
    /// When it was scheduled.
    made: Instant,
    ev: Ev,
}
const _: () = assert!(std::mem::size_of::<Entry>() == 40);

/// Where one end of a flow sends its packets.
#[derive(Copy, Clone, Debug)]
struct Out {
    /// The other end's node.
    dst: NodeId,
    /// The direction the packets take first: fixed, as the routes are, once the world
    /// is built (`Net::forward_on`).
    first_hop: DirId,
}

/// A flow's state in the engine. `repr(C)` and 64-byte aligned: what every packet
/// reads (the machines, the nodes, the read mark and hook, the reader, the wake-ups)
/// comes first, in one cache line; with many flows a packet finds its flow's line
/// cold, so the engine's part costs one miss, not one per field.
#[repr(C, align(64))]
struct FlowRt {
    /// Boxed: `flows` is one allocation of a FlowRt per flow, which the allocator
    /// maps fresh (with 10,000 flows, 20 MB); each flow's machines apart are small
    /// allocations that reuse the memory the scenario's parser freed, and `finish`
    /// frees them flow by flow for the summaries (issue 19's memory per flow). One
    /// load more per use on the packet path.
    ep: Box<Endpoints>,
    /// Where the sender's packets go, and the receiver's: `flush` reads both fields
    /// of its side's with one load.
    out: [Out; 2],
    /// Bytes read at which `after_read` has a burst or the transfer to complete: the
    /// end of the next burst or the total, whichever comes first (`u64::MAX`: none).
    /// A read below it, with no `read_hook`, needs nothing more (`World::read_mark`).
    read_mark: u64,
    /// The flow whose application hears this flow's reads (`App::on_read`): itself or
    /// the flow of the application that opened it as a channel; `None` when that
    /// application does not listen (checked once per read, on the packet path).
    read_hook: Option<FlowId>,
    /// The receiving application reads whatever it can at once (`ReaderSpec::Greedy`).
    greedy: bool,
    /// Earliest pending wake-up of the sender and the receiver (`Instant::MAX`: none,
    /// so that `flush` tests a new timer with one comparison; a timer at `MAX` would
    /// never run anyway).
    wake: [Instant; 2],
    start: Instant,
    total: Option<u64>,
    completion: Option<Instant>,
    /// Cumulative stream offsets at which each burst ends, and when it was written.
    burst_ends: Vec<u64>,
    burst_written_at: Vec<Instant>,
    burst_done: Vec<f64>,
    next_burst: usize,
    written: u64,
    last_read_at: Instant,
    finished: bool,
}

impl FlowRt {
    /// A read has work for `World::after_read_work`: the application hears reads, or
    /// the read reached the read mark. Tested inline on the packet path, so a greedy
    /// read that has neither costs no call.
    #[inline(always)]
    fn read_has_work(&self) -> bool {
        self.read_hook.is_some() || self.ep.bytes_read() >= self.read_mark
    }

    /// The read count at which `after_read` has work besides the hook (`read_mark`):
    /// recomputed whenever a burst is written or done, or the transfer completes.
    fn update_read_mark(&mut self) {
        let burst = self.burst_ends.get(self.next_burst).copied();
        let total = self.total.filter(|_| self.completion.is_none());
        self.read_mark = burst.into_iter().chain(total).min().unwrap_or(u64::MAX);
    }
}

/// A simulation in progress.
pub struct World<'a> {
    sc: &'a Scenario,
    net: Net,
    end: Instant,
    events: u64,
    flows: IdVec<FlowId, FlowRt>,
    /// The application of each flow (apart from `flows`, so that an application can
    /// write on other flows than its own: `app::Io`).
    apps: IdVec<FlowId, Apps>,
    /// The flows an application wrote on in one of its hooks, to be sent after it.
    app_written: Vec<FlowId>,
    /// (interval, flow) -> bytes read at the interval's start and end.
    marks: Vec<(usize, bool)>,
    interval_bytes: Vec<Vec<(u64, u64)>>,
    series: Series,
    scratch_lost: Vec<PktId>,
    capture: Option<Capture>,
    mobility: Vec<mobility::MobEvent>,
    /// Test builds only: every TCP segment an endpoint emits, `(flow, from the
    /// receiver, segment)`, for the property tests (`props.rs`) to check; `None`
    /// (the default) records nothing.
    #[cfg(test)]
    seg_log: Option<Vec<(FlowId, bool, Segment)>>,
    /// Test builds only: the TFRC sender's state around every feedback packet it
    /// handles (one event may deliver two: a duplicated packet), for the property
    /// tests to check each rate change against the X_recv set it was computed from.
    #[cfg(test)]
    fb_log: Option<Vec<tfrc::FeedbackStep>>,
}

/// The sink of one flush (`World::flush`): an endpoint's packets go into the slab,
/// are recorded if their node is captured, and are forwarded from it.
struct SlabSink<'a> {
    net: &'a mut Net,
    capture: &'a mut Option<Capture>,
    #[cfg(test)]
    seg_log: &'a mut Option<Vec<(FlowId, bool, Segment)>>,
    f: FlowId,
    to_receiver: bool,
    dst: NodeId,
    /// The direction the packets take first, out of the sending end's node towards
    /// `dst` (`FlowRt::out`).
    first_hop: DirId,
    now: Instant,
    /// The packet taken by the last `tcp_slot`.
    slot: PktId,
}

impl SlabSink<'_> {
    /// Packet `id`, in the slab, of `bytes` on the wire, leaves its node.
    #[inline(always)]
    fn post(&mut self, id: PktId, bytes: u32) {
        let net = &mut *self.net;
        #[cfg(test)]
        if let (Some(log), Body::Tcp(seg)) = (self.seg_log.as_mut(), &net.pkts[id as usize].body) {
            log.push((self.f, !self.to_receiver, *seg));
        }
        if let Some(cap) = self.capture.as_mut() {
            // The node it leaves: where its first hop starts.
            let from = net.dirs[self.first_hop].dir().from;
            cap.sent(from, self.now, &net.pkts[id as usize]);
        }
        net.forward_on(self.first_hop, id, bytes);
    }
}

impl endpoint::Sink for SlabSink<'_> {
    #[inline(always)]
    fn tcp_slot(&mut self) -> (&mut Segment, &mut u32) {
        let (id, p) = self.net.take_tcp_slot(self.f, self.to_receiver, self.dst);
        self.slot = id;
        let Pkt {
            body: Body::Tcp(seg),
            bytes,
            ..
        } = p
        else {
            unreachable!("take_tcp_slot makes the body a TCP segment")
        };
        (seg, bytes)
    }
    #[inline(always)]
    fn send_slot(&mut self, bytes: u32) {
        self.post(self.slot, bytes);
    }
    #[inline(always)]
    fn free_slot(&mut self) {
        self.net.free.push(self.slot);
    }
    #[inline(always)]
    fn send(&mut self, out: net::Outgoing<'_>, bytes: u32) {
        let id = self.net.alloc(Pkt {
            flow: self.f,
            to_receiver: self.to_receiver,
            dst: self.dst,
            bytes,
            body: out.body(),
        });
        self.post(id, bytes);
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): derives independent seeds from the run's seed.
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Run a scenario to its end.
pub fn run(sc: &Scenario) -> Result<RunResult, RunError> {
    run_with(sc, &RunOptions::default())
}

/// Run a scenario, writing packet captures into `opts.out_dir` when it has capture
/// points (captures need a folder; without one they are not taken).
pub fn run_with(sc: &Scenario, opts: &RunOptions) -> Result<RunResult, RunError> {
    run_controlled(sc, opts, &mut |_| true)
}

/// [`run_with`] that calls `control` with the simulated time at least every
/// [`CONTROL_PERIOD`] of wall time (and once at the start); when it returns false the
/// run stops and returns [`RunError::Interrupted`]. The hook only observes: a run
/// that is not stopped gives the same result as [`run_with`].
pub fn run_controlled(
    sc: &Scenario,
    opts: &RunOptions,
    control: &mut dyn FnMut(Instant) -> bool,
) -> Result<RunResult, RunError> {
    if !control(Instant::ZERO) {
        return Err(RunError::Interrupted);
    }
    let mut w = World::build(sc)?;
    if let Some(dir) = &opts.out_dir {
        w.capture = Capture::open(sc, dir, opts.capture_all_hosts)?;
    }
    if !w.run_with_control(control) {
        return Err(RunError::Interrupted);
    }
    if let Some(cap) = w.capture.take() {
        cap.finish()?;
    }
    Ok(w.finish())
}

impl<'a> World<'a> {
    /// Build the world of a scenario, with its initial events scheduled.
    pub fn build(sc: &'a Scenario) -> Result<World<'a>, RunError> {
        let n = sc.nodes.len();
        let mut dirs = IdVec::with_capacity(sc.links.len() * 2);
        for (li, l) in sc.links.iter().enumerate() {
            for (k, (from, to)) in [(l.a, l.b), (l.b, l.a)].into_iter().enumerate() {
                let d = DirId::of(li, k);
                let rng = Xoshiro256PlusPlus::seed_from_u64(splitmix(
                    sc.seed ^ splitmix(d.index() as u64 + 1),
                ));
                let (from, to) = (NodeId::new(from), NodeId::new(to));
                dirs.push(LinkDir::new(d, from, to, &l.dirs[k], rng, sc.duration));
            }
        }
        let route = net::Routes::new(&dirs, n);

        let mut flows = IdVec::with_capacity(sc.flows.len());
        let mut apps = IdVec::with_capacity(sc.flows.len());
        for f in &sc.flows {
            if let Some(cfg) = f.transport.tcp() {
                if let Err((key, reason)) = cfg.validate() {
                    return Err(RunError::InvalidTcp {
                        flow: f.name.clone(),
                        key: key.into(),
                        reason,
                    });
                }
            }
            let mut first_hop = [DirId::of(0, 0); 2];
            for (k, (a, b)) in [(f.src, f.dst), (f.dst, f.src)].into_iter().enumerate() {
                let Some(d) = route.next(NodeId::new(a), NodeId::new(b)) else {
                    return Err(RunError::NoRoute {
                        flow: f.name.clone(),
                        from: sc.nodes[a].clone(),
                        to: sc.nodes[b].clone(),
                    });
                };
                first_hop[k] = d;
            }
            let start = Instant::ZERO + f.start;
            let app = Apps::new(FlowId::new(flows.len()), f);
            let total = app.total();
            let read_hook = app
                .hears_reads()
                .then(|| app.driver().unwrap_or(FlowId::new(flows.len())));
            flows.push(FlowRt {
                // A seed per connection for a controller's random choices (BBR), apart
                // from the link directions' streams.
                ep: Box::new(Endpoints::new(
                    &f.transport,
                    splitmix(sc.seed ^ splitmix((1 << 32) + flows.len() as u64)),
                )),
                read_hook,
                read_mark: total.unwrap_or(u64::MAX),
                out: [
                    Out {
                        dst: NodeId::new(f.dst),
                        first_hop: first_hop[0],
                    },
                    Out {
                        dst: NodeId::new(f.src),
                        first_hop: first_hop[1],
                    },
                ],
                greedy: matches!(f.reader, ReaderSpec::Greedy),
                wake: [Instant::MAX; 2],
                start,
                total,
                completion: None,
                burst_ends: Vec::new(),
                burst_written_at: Vec::new(),
                burst_done: Vec::new(),
                next_burst: 0,
                written: 0,
                last_read_at: start,
                finished: false,
            });
            apps.push(app);
        }
        // Each channel to the application that opened it.
        for (i, f) in sc.flows.iter().enumerate() {
            if let Some(d) = apps[FlowId::new(i)].driver() {
                apps[d].adopt(FlowId::new(i), &f.app);
            }
        }

        let end = Instant::ZERO + sc.duration;
        let mut w = World {
            sc,
            net: Net {
                now: Instant::ZERO,
                queue: Queue::with_capacity(1024),
                dirs,
                route,
                pkts: Vec::with_capacity(1024),
                free: net::FreeSlots::with_capacity(1024),
                origin: Instant::ZERO,
                data_lost: IdVec::from(vec![[0; 4]; sc.flows.len()]),
            },
            end,
            events: 0,
            flows,
            apps,
            app_written: Vec::new(),
            marks: Vec::new(),
            interval_bytes: vec![vec![(0, 0); sc.flows.len()]; sc.measure.intervals.len()],
            series: Series::default(),
            scratch_lost: Vec::new(),
            capture: None,
            mobility: Vec::new(),
            #[cfg(test)]
            seg_log: None,
            #[cfg(test)]
            fb_log: None,
        };
        w.schedule_initial();
        Ok(w)
    }

    fn schedule_initial(&mut self) {
        let sc = self.sc;
        // Each direction's schedule changes and outages, links in declaration order.
        let net = &mut self.net;
        for (d, dir) in net.dirs.iter_ids_mut() {
            let q = &mut net.queue;
            dir.start(&mut |t, timer| q.at(t, Instant::ZERO, Ev::Link(d, timer)));
        }
        for (i, f) in sc.flows.iter().enumerate() {
            let i = FlowId::new(i);
            self.net.at(Instant::ZERO + f.start, Ev::FlowStart(i));
            let app = &self.apps[i];
            if let Some(stop) = f.stop.filter(|_| app.stops_at_flow_stop()) {
                self.net.at(Instant::ZERO + stop, Ev::FlowStop(i));
            }
            let net = &mut self.net;
            app.schedule(i, Instant::ZERO + f.start, &mut |t, ev| net.at(t, ev));
            if reader_interval(&f.reader).is_some() {
                self.net.at(Instant::ZERO + f.start, Ev::Read(i));
            }
        }
        for (k, (_, s, e)) in sc.measure.intervals.iter().enumerate() {
            self.marks.push((k, false));
            self.net
                .at(Instant::ZERO + *s, Ev::Mark((self.marks.len() - 1) as u32));
            self.marks.push((k, true));
            self.net
                .at(Instant::ZERO + *e, Ev::Mark((self.marks.len() - 1) as u32));
        }
        if sc.measure.sample_interval.is_some() {
            self.net.at(Instant::ZERO, Ev::Sample);
        }
        self.plan_mobility();
        self.schedule_tfrc();
    }

    /// Current simulated time.
    pub fn now(&self) -> Instant {
        self.net.now
    }

    /// Process one event; false when none is left before the end.
    #[inline(always)]
    pub fn step(&mut self) -> bool {
        // The event stays at the top of its heap while it runs: the first event of
        // its kind it schedules takes its place (`Queue::at`); if it schedules none,
        // it is popped after.
        match self.net.queue.top() {
            None => return false,
            Some(Top::Arrival(&net::ArrivalEntry { t, d, gen, .. })) => {
                if t > self.end {
                    return false;
                }
                self.net.queue.spent = Some(Kind::Arrival);
                self.net.now = t;
                self.events += 1;
                self.link_arrival(d, gen);
                self.net.queue.pop_spent(Kind::Arrival);
            }
            Some(Top::Other(&e)) => {
                if e.t > self.end {
                    return false;
                }
                self.net.queue.spent = Some(Kind::Other);
                self.net.now = e.t;
                self.events += 1;
                self.dispatch(e.ev, e.made);
                self.net.queue.pop_spent(Kind::Other);
            }
        }
        true
    }

    /// Run until the scenario's duration.
    pub fn run(&mut self) {
        while self.step() {}
        self.net.now = self.end;
    }

    /// [`World::run`], calling `control` at least every [`CONTROL_PERIOD`] of wall
    /// time; false if `control` stopped the run (the world is then mid-run).
    pub fn run_with_control(&mut self, control: &mut dyn FnMut(Instant) -> bool) -> bool {
        // The clock is read once every 1024 events (a few microseconds of work at
        // most each), so checking costs nothing measurable; the count is the run's
        // own (`events`), not one more kept in the loop.
        let mut next = std::time::Instant::now() + CONTROL_PERIOD;
        while self.step() {
            if self.events % 1024 == 0 && std::time::Instant::now() >= next {
                if !control(self.net.now) {
                    return false;
                }
                next = std::time::Instant::now() + CONTROL_PERIOD;
            }
        }
        self.net.now = self.end;
        true
    }

    /// Run event `ev`, scheduled at `made`: any but a pipe's arrival, which the queue
    /// keeps apart and `step` runs through `link_arrival`.
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev, made: Instant) {
        self.net.origin = made;
        let now = self.net.now;
        match ev {
            Ev::FlowStart(f) => {
                let fr = &mut self.flows[f];
                fr.written += self.apps[f].start(&mut fr.ep);
                self.flush(f, Side::Sender);
            }
            Ev::FlowStop(f) => {
                self.flows[f].ep.stop_writing();
                self.flush(f, Side::Sender);
            }
            Ev::AppWrite(f, k) => {
                let spec = &self.sc.flows[f.index()];
                let stop = spec.stop.map(|s| Instant::ZERO + s);
                let net = &mut self.net;
                let w = app::Write { f, k, now, stop };
                let bytes = self.apps[f].write(w, &mut |t, ev| net.at(t, ev));
                if stop.is_some_and(|s| now >= s) {
                    return;
                }
                let fr = &mut self.flows[f];
                fr.ep.write(bytes);
                fr.written += bytes;
                fr.burst_ends.push(fr.written);
                fr.burst_written_at.push(now);
                fr.update_read_mark();
                self.flush(f, Side::Sender);
            }
            Ev::Read(f) => {
                let spec = &self.sc.flows[f.index()];
                let interval = reader_interval(&spec.reader).unwrap_or(Duration::from_millis(10));
                let fr = &mut self.flows[f];
                let budget = read_budget(&spec.reader, fr.last_read_at - fr.start, now - fr.start);
                fr.last_read_at = now;
                fr.ep.read(now, budget);
                self.after_read(f);
                self.flush(f, Side::Receiver);
                self.net.at(now + interval, Ev::Read(f));
            }
            Ev::Wake(f, side) => {
                let fr = &mut self.flows[f];
                if fr.wake[side.index()] != now {
                    return; // superseded
                }
                // Early (the timer moved later since the wake-up was set): set again
                // for when it is due, as the flush below would, without running the
                // end for nothing.
                fr.wake[side.index()] = Instant::MAX;
                if let Some(t) = fr.ep.early_wake(side, now) {
                    arm_wake(fr, &mut self.net, f, side, t);
                    return;
                }
                fr.ep.handle_timeout(side, now);
                self.flush(f, side);
            }
            // Every timer but `Arrive` (kept with the arrivals: `Queue::at`).
            Ev::Link(d, timer) => {
                let lost = &mut self.scratch_lost;
                let q = &mut self.net.queue;
                let arrived =
                    self.net.dirs[d].handle_timeout(now, timer, lost, &mut move |t, timer| {
                        q.at(t, now, Ev::Link(d, timer))
                    });
                if !lost.is_empty() {
                    // An outage started: what it destroyed counts against its flows.
                    for &id in lost.iter() {
                        self.net.count_loss(id, 0);
                        self.net.count_loss(id, 3);
                    }
                    self.net.free.append(lost);
                }
                if let Some((id, dup)) = arrived {
                    let node = self.net.dirs[d].dir().to;
                    self.arrive(d, node, id, dup);
                }
            }
            Ev::App(f, k) => {
                let mut io = app::Io {
                    now,
                    flows: &mut self.flows,
                    net: &mut self.net,
                    written: &mut self.app_written,
                };
                self.apps[f].on_event(k, &mut io);
                self.send_app_writes();
            }
            Ev::Sample => {
                self.sample();
                if let Some(iv) = self.sc.measure.sample_interval {
                    self.net.at(now + iv, Ev::Sample);
                }
            }
            Ev::Mobility(k) => self.mobility(k),
            Ev::Tfrc(f, k) => self.tfrc_action(f, k),
            Ev::Mark(m) => {
                let (k, is_end) = self.marks[m as usize];
                for (fi, fr) in self.flows.iter_ids() {
                    let b = fr.ep.bytes_read();
                    let slot = &mut self.interval_bytes[k][fi.index()];
                    if is_end {
                        slot.1 = b;
                    } else {
                        slot.0 = b;
                    }
                }
            }
        }
    }

    /// The arrival timer of direction `d` (pipe generation `gen`): the event of every
    /// packet on every hop, run here rather than through `LinkDir::handle_timeout`.
    #[inline(always)]
    fn link_arrival(&mut self, d: DirId, gen: u32) {
        let dir = &mut self.net.dirs[d];
        let Some(a) = dir.arrival(gen) else {
            return; // stale: the pipe changed under it
        };
        // The far end, read with the direction at hand.
        let node = dir.dir().to;
        if let Some(next) = a.next {
            self.net.at_arrival(next, d, gen);
        }
        self.net.read_ahead(a.ahead);
        // The packet arriving was scheduled, in ns-2, when its transmission started
        // (`LinkDelay::recv`): what it makes arrive at the next queue is ordered from
        // then (`Dir::enqueue_from`).
        self.net.origin = a.sent;
        self.arrive(d, node, a.id, a.dup);
    }

    /// Packet `id` reached `node`, the far end of direction `d` (twice if `dup`). The
    /// caller reads `node` from the direction it holds.
    #[inline(always)]
    fn arrive(&mut self, d: DirId, node: NodeId, id: PktId, dup: bool) {
        // A duplicated packet: a copy arrives right after the original.
        let copy = dup.then(|| {
            let p = self.net.pkts[id as usize].clone();
            self.net.alloc(p)
        });
        self.arrive_one(d, node, id);
        if let Some(copy) = copy {
            self.arrive_one(d, node, copy);
        }
    }

    /// One packet at `node`, the far end of direction `d`: captured, then delivered or
    /// forwarded.
    fn arrive_one(&mut self, d: DirId, node: NodeId, id: PktId) {
        if self.capture.is_some() {
            self.capture_arrival(d, node, id);
        }
        if self.net.pkts[id as usize].dst == node {
            self.deliver(id);
        } else {
            self.net.forward(node, id);
        }
    }

    /// Record packet `id` arriving at `node` over `d`, then at its host if `node` is
    /// its destination: both captures tested for here, apart, so that a run without
    /// captures tests once per arrival.
    #[cold]
    #[inline(never)]
    fn capture_arrival(&mut self, d: DirId, node: NodeId, id: PktId) {
        let Some(cap) = &mut self.capture else {
            return;
        };
        let (now, p) = (self.net.now, &self.net.pkts[id as usize]);
        if let Some(w) = cap.dir[d.index()] {
            cap.record(w, now, p);
        }
        if p.dst == node {
            if let Some(w) = cap.host[node.index()] {
                cap.record(w, now, p);
            }
        }
    }

    /// Packet `id` at its destination (captured there by `capture_arrival`).
    fn deliver(&mut self, id: PktId) {
        // One copy of the delivery per side, the side a constant in each: the
        // transport's `handle_packet` and `transmit` are specialised to it, and the
        // flow is not indexed again for its answer (as `flush` would). Callgrind
        // slope, PGO build (what `make bench` measures), 1 / 10 / 100 flows:
        // 1,040.5 / 1,068.3 / 1,260.4 -> 985.4 / 1,012.8 / 1,202.3 instructions per
        // packet (the build without PGO: 1,125.5 -> 1,126.5 at 1 flow).
        if self.net.pkts[id as usize].to_receiver {
            self.deliver_to(id, Side::Receiver);
        } else {
            self.deliver_to(id, Side::Sender);
        }
    }

    /// [`Self::deliver`] of a packet for the `to` end of its flow.
    #[inline(always)]
    fn deliver_to(&mut self, id: PktId, to: Side) {
        let now = self.net.now;
        // The body is read in place (no copy of the segment out of the slab); its slot
        // is freed after the endpoint took it, before anything is allocated again.
        let p = &self.net.pkts[id as usize];
        let (f, body) = (p.flow, &p.body);
        // The flow, indexed once for the packet and the read that follows it.
        let fr = &mut self.flows[f];
        #[cfg(test)]
        let fb_before = self
            .fb_log
            .is_some()
            .then(|| fr.ep.tfrc_mut())
            .flatten()
            .map(|tf| tf.feedback_state());
        let read = fr.ep.handle_packet(now, to, body, fr.greedy);
        #[cfg(test)]
        if let (Some(log), Some(before), Body::TfrcFeedback(_)) =
            (&mut self.fb_log, fb_before, body)
        {
            if let Some(tf) = fr.ep.tfrc_mut() {
                log.push(tfrc::FeedbackStep::new(f, before, tf));
            }
        }
        self.net.free.push(id);
        if read && fr.read_has_work() {
            self.after_read_work(f);
            self.flush(f, to);
            return;
        }
        // The end the packet reached answers, the flow still in hand.
        let mut sink = slab_sink!(self, f, fr, to, now);
        transmit_side(fr, &mut sink, to);
    }

    /// The application of flow `f` read: burst and transfer completions, and the
    /// application's hook.
    fn after_read(&mut self, f: FlowId) {
        if self.flows[f].read_has_work() {
            self.after_read_work(f);
        }
    }

    fn after_read_work(&mut self, f: FlowId) {
        let now = self.net.now;
        let fr = &mut self.flows[f];
        let read = fr.ep.bytes_read();
        if read >= fr.read_mark {
            while fr.next_burst < fr.burst_ends.len() && read >= fr.burst_ends[fr.next_burst] {
                let t = now - fr.burst_written_at[fr.next_burst];
                fr.burst_done.push(t.as_secs_f64());
                fr.next_burst += 1;
            }
            if fr.completion.is_none() && fr.total.is_some_and(|t| read >= t) {
                fr.completion = Some(now);
                fr.ep.finish(now);
                fr.finished = true;
            }
            fr.update_read_mark();
        }
        // The application that writes `f` hears of it if it listens (the web
        // application's requests and responses).
        let Some(driver) = fr.read_hook else {
            return;
        };
        let mut io = app::Io {
            now,
            flows: &mut self.flows,
            net: &mut self.net,
            written: &mut self.app_written,
        };
        self.apps[driver].on_read(f, read, &mut io);
        self.send_app_writes();
    }

    /// Sends what an application hook wrote, flow by flow in the order written.
    fn send_app_writes(&mut self) {
        for i in 0..self.app_written.len() {
            self.flush(self.app_written[i], Side::Sender);
        }
        self.app_written.clear();
    }

    /// Drain what one end of a flow wants to send into the network, then schedule
    /// its next wake-up.
    fn flush(&mut self, f: FlowId, side: Side) {
        let now = self.net.now;
        let fr = &mut self.flows[f];
        let mut sink = slab_sink!(self, f, fr, side, now);
        transmit_side(fr, &mut sink, side);
    }
}

/// The sink of side `$side` of flow `$f`, whose runtime `$fr` is borrowed apart from
/// the world `$w`'s network and captures.
macro_rules! slab_sink {
    ($w:ident, $f:expr, $fr:expr, $side:expr, $now:expr) => {{
        let out = $fr.out[$side.index()];
        SlabSink {
            net: &mut $w.net,
            capture: &mut $w.capture,
            #[cfg(test)]
            seg_log: &mut $w.seg_log,
            f: $f,
            to_receiver: $side == Side::Sender,
            dst: out.dst,
            first_hop: out.first_hop,
            now: $now,
            slot: 0,
        }
    }};
}
use slab_sink;

/// Hand what `side` of flow `fr` wants to send now to `sink`, then schedule its next
/// wake-up.
#[inline(always)]
fn transmit_side(fr: &mut FlowRt, sink: &mut SlabSink<'_>, side: Side) {
    if let Some(t) = fr.ep.transmit(sink.now, side, sink) {
        arm_wake(fr, sink.net, sink.f, side, t);
    }
}

/// Wake `side` of flow `f` (runtime `fr`) at `t`, not before now, unless a wake-up
/// at or before then is pending.
#[inline(always)]
fn arm_wake(fr: &mut FlowRt, net: &mut Net, f: FlowId, side: Side, t: Instant) {
    let t = t.max(net.now);
    let wake = &mut fr.wake[side.index()];
    if t < *wake {
        *wake = t;
        net.at(t, Ev::Wake(f, side));
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod memory_tests {
    use super::endpoint::Endpoints;
    use super::FlowRt;
    use crate::results::FlowSummary;
    use mobiflow_proto::tcp::{TcpReceiver, TcpSender};
    use std::mem::size_of;

    /// What a flow keeps, against bench/bench.py's goal of 5 KB per flow (peak RSS
    /// of a 2 s run of 1,000 and 10,000 bulk flows; 3.8-4.4 KB when these bounds
    /// were set). The parser's garbage is about 2.5 KB of it; what is left is made of
    /// these structures. A bound that fails means the memory per flow grew: measure
    /// it (`mem_case` of bench/bench.py) before raising one. The usual culprits: a
    /// copy of `TcpConfig` (280 bytes) in the receiver instead of the scenario's
    /// shared one (the sender keeps its own on purpose), a component only some
    /// profiles use stored inline instead of `Option<Box<..>>`, the machines stored
    /// in `FlowRt` instead of boxed.
    #[test]
    fn what_a_flow_keeps_stays_within_the_per_flow_memory_goal() {
        let sizes = [
            ("FlowRt", size_of::<FlowRt>(), 256),
            ("Endpoints", size_of::<Endpoints>(), 2304),
            ("TcpSender", size_of::<TcpSender>(), 1664),
            ("TcpReceiver", size_of::<TcpReceiver>(), 512),
            ("FlowSummary", size_of::<FlowSummary>(), 640),
        ];
        for (name, size, bound) in sizes {
            assert!(size <= bound, "{name}: {size} bytes, more than {bound}");
        }
    }
}
