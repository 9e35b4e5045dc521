//! The event loop: links, hosts, applications and measurement.
//!
//! One owned [`World`] per run (no globals: two simulations can share a process).
//! Events sit in a binary heap ordered by `(time, insertion sequence)`, so events at
//! the same time run in the order they were scheduled (FIFO ties) and a run is a pure
//! function of the scenario. Packets live in a slab and are referred to by index: the
//! per-packet path allocates nothing once the slab has grown to the largest number of
//! packets in the network at once. Protocol machines are woken lazily: each endpoint
//! has at most one pending wake-up that is earlier than all its timers.

pub mod link;
mod mobility;
mod tfrc;

use crate::model::{AppSpec, DelayModel, RateModel, ReaderSpec, Scenario, Transport};
use crate::results::{FlowSeries, FlowSummary, LinkSeries, LinkSummary, Series, Summary};
use link::{schedule_at, schedule_changes, Admit, Dir, PktId};
use mobiflow_proto::tcp::{TcpReceiver, TcpSender};
use mobiflow_proto::tfrc::{TfrcData, TfrcFeedback};
use mobiflow_proto::time::{Duration, Instant};
use mobiflow_proto::wire::Segment;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

mod web;

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
    FlowStart(u32),
    FlowStop(u32),
    AppWrite(u32, u32),
    Read(u32),
    /// Endpoint `2*flow` (sender) or `2*flow+1` (receiver).
    Wake(u32),
    /// The head of direction `d`'s pipe arrives (tagged with the pipe's generation).
    Arrive(u32, u32),
    Opportunity(u32),
    RateChange(u32),
    DelayChange(u32),
    OutageStart(u32),
    OutageEnd(u32),
    /// The web flow starts its next page.
    WebPage(u32),
    Sample,
    Mark(u32),
    /// Mobility event `k` (`mobility.rs`).
    Mobility(u32),
    /// Action `k` of TFRC flow `f` (Freeze-DCCP trigger, measurement).
    Tfrc(u32, u32),
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    t: Instant,
    seq: u64,
    /// When it was scheduled.
    made: Instant,
    ev: Ev,
}
impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.t == o.t && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        o.t.cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}

#[derive(Clone, Debug)]
struct Pkt {
    flow: u32,
    to_receiver: bool,
    dst: u32,
    bytes: u32,
    body: Body,
}

/// What a packet carries, by transport.
#[derive(Copy, Clone, Debug)]
enum Body {
    Tcp(Segment),
    TfrcData(TfrcData),
    TfrcFeedback(TfrcFeedback),
}

/// The two protocol machines of a flow. TCP's stay inline (the hot path of most
/// runs); a TFRC flow is boxed.
#[allow(clippy::large_enum_variant)]
enum Endpoints {
    Tcp { snd: TcpSender, rcv: TcpReceiver },
    Tfrc(Box<tfrc::TfrcFlow>),
}

impl Endpoints {
    /// The TCP sender and receiver (`None` for other transports).
    fn tcp_mut(&mut self) -> Option<(&mut TcpSender, &mut TcpReceiver)> {
        match self {
            Endpoints::Tcp { snd, rcv } => Some((snd, rcv)),
            Endpoints::Tfrc(_) => None,
        }
    }
    /// Bytes the receiving application has been given.
    fn bytes_read(&self) -> u64 {
        match self {
            Endpoints::Tcp { rcv, .. } => rcv.bytes_read(),
            Endpoints::Tfrc(t) => t.bytes_received(),
        }
    }
    /// The receiving application reads up to `budget` bytes.
    fn read(&mut self, now: Instant, budget: u64) {
        match self {
            Endpoints::Tcp { rcv, .. } => {
                rcv.read(now, budget);
            }
            Endpoints::Tfrc(_) => {}
        }
    }
    fn set_unlimited(&mut self) {
        match self {
            Endpoints::Tcp { snd, .. } => snd.set_unlimited(),
            Endpoints::Tfrc(t) => t.snd.set_unlimited(),
        }
    }
    fn write(&mut self, bytes: u64) {
        match self {
            Endpoints::Tcp { snd, .. } => snd.write(bytes),
            Endpoints::Tfrc(t) => t.snd.write(bytes),
        }
    }
    fn stop_writing(&mut self) {
        match self {
            Endpoints::Tcp { snd, .. } => snd.stop_writing(),
            Endpoints::Tfrc(t) => t.snd.stop_writing(),
        }
    }
    /// The sending application is done (completion or end of run).
    fn finish(&mut self, now: Instant) {
        match self {
            Endpoints::Tcp { snd, .. } => snd.finish(now),
            Endpoints::Tfrc(_) => {}
        }
    }
    fn handle_timeout(&mut self, receiver: bool, now: Instant) {
        match self {
            Endpoints::Tcp { snd, rcv } => {
                if receiver {
                    rcv.handle_timeout(now)
                } else {
                    snd.handle_timeout(now)
                }
            }
            Endpoints::Tfrc(t) => {
                if receiver {
                    t.rcv.handle_timeout(now)
                } else {
                    t.snd.handle_timeout(now)
                }
            }
        }
    }
    fn poll_timeout(&self, receiver: bool) -> Option<Instant> {
        match self {
            Endpoints::Tcp { snd, rcv } => {
                if receiver {
                    rcv.poll_timeout()
                } else {
                    snd.poll_timeout()
                }
            }
            Endpoints::Tfrc(t) => {
                if receiver {
                    t.rcv.poll_timeout()
                } else {
                    t.snd.poll_timeout()
                }
            }
        }
    }
}

struct FlowRt {
    ep: Endpoints,
    /// Earliest pending wake-up of the sender and the receiver.
    wake: [Option<Instant>; 2],
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
    prev_sample_read: u64,
    prev_sample_rcv_nxt: u64,
    finished: bool,
}

/// The network: links, routes, packets in flight and the event queue.
struct Net {
    now: Instant,
    heap: BinaryHeap<Entry>,
    seq: u64,
    dirs: Vec<Dir>,
    /// `route[node * n + dst]` = direction to take.
    route: Vec<Option<u32>>,
    n_nodes: usize,
    pkts: Vec<Pkt>,
    free: Vec<PktId>,
    /// When the event being run was scheduled, as ns-2 would have scheduled it (a
    /// packet's arrival: at the start of its transmission). Orders the packets it
    /// makes arrive at a queue against a transmission ending at the same instant
    /// (`Dir::enqueue_from`).
    origin: Instant,
    /// Per flow: data packets lost to outages, to queues, to random loss, and (a part
    /// of the first) queued or in flight when an outage started.
    data_lost: Vec<[u64; 4]>,
}

/// A simulation in progress.
pub struct World<'a> {
    sc: &'a Scenario,
    net: Net,
    end: Instant,
    events: u64,
    flows: Vec<FlowRt>,
    /// (interval, flow) -> bytes read at the interval's start and end.
    marks: Vec<(usize, bool)>,
    interval_bytes: Vec<Vec<(u64, u64)>>,
    series: Series,
    web: web::Web,
    scratch_lost: Vec<PktId>,
    capture: Option<Capture>,
    mobility: Vec<mobility::MobEvent>,
    /// Test builds only: every TCP segment an endpoint emits, `(flow, from the
    /// receiver, segment)`, for the property tests (`props.rs`) to check; `None`
    /// (the default) records nothing.
    #[cfg(test)]
    seg_log: Option<Vec<(u32, bool, Segment)>>,
    /// Test builds only: the TFRC sender's state around every feedback packet it
    /// handles (one event may deliver two: a duplicated packet), for the property
    /// tests to check each rate change against the X_recv set it was computed from.
    #[cfg(test)]
    fb_log: Option<Vec<tfrc::FeedbackStep>>,
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

/// Open pcap writers and the per-flow wire constants of a run.
struct Capture {
    writers: Vec<(String, crate::pcap::PcapWriter)>,
    host: Vec<Option<usize>>,
    dir: Vec<Option<usize>>,
    flows: Vec<crate::pcap::FlowWire>,
    /// Per flow: TFRC captured as DCCP (else UDP).
    dccp: Vec<bool>,
    ip_id: Vec<u16>,
    buf: Vec<u8>,
    error: Option<(String, std::io::Error)>,
}

impl Capture {
    fn open(
        sc: &Scenario,
        out: &std::path::Path,
        all_hosts: bool,
    ) -> Result<Option<Capture>, RunError> {
        let cs = &sc.measure.capture;
        let hosts: Vec<usize> = if all_hosts {
            (0..sc.nodes.len()).collect()
        } else {
            cs.hosts.clone()
        };
        if hosts.is_empty() && cs.dirs.is_empty() {
            return Ok(None);
        }
        let io = |p: &std::path::Path, e: std::io::Error| RunError::Io {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
        let mut writers = Vec::new();
        let mut host = vec![None; sc.nodes.len()];
        let mut dir = vec![None; sc.links.len() * 2];
        for &h in &hosts {
            let path = out.join(format!("{}.pcap", sc.nodes[h]));
            let w = crate::pcap::PcapWriter::create(&path, cs.snaplen).map_err(|e| io(&path, e))?;
            host[h] = Some(writers.len());
            writers.push((path.display().to_string(), w));
        }
        for &d in &cs.dirs {
            let l = &sc.links[d / 2];
            let name = format!("{}.{}", l.name, if d % 2 == 0 { "ab" } else { "ba" });
            let path = out.join(format!("{name}.pcap"));
            let w = crate::pcap::PcapWriter::create(&path, cs.snaplen).map_err(|e| io(&path, e))?;
            dir[d] = Some(writers.len());
            writers.push((path.display().to_string(), w));
        }
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let ws = f.transport.tcp().map_or(0, |cfg| {
                    cfg.wscale
                        .unwrap_or_else(|| mobiflow_proto::tcp::receiver::auto_wscale(cfg.rcv_buf))
                });
                crate::pcap::FlowWire::new(i, f.src, f.dst, sc.seed, ws)
            })
            .collect();
        Ok(Some(Capture {
            writers,
            host,
            dir,
            flows,
            dccp: sc
                .flows
                .iter()
                .map(|f| f.transport.tfrc().is_some_and(|t| t.dccp))
                .collect(),
            ip_id: vec![0; sc.nodes.len()],
            buf: Vec::with_capacity(128),
            error: None,
        }))
    }

    /// Record `pkt` in writer `w` at `t` (the first write error is kept).
    fn record(&mut self, w: usize, t: Instant, pkt: &Pkt) {
        if self.error.is_some() {
            return;
        }
        let fw = self.flows[pkt.flow as usize];
        let src = if pkt.to_receiver {
            fw.src_node
        } else {
            fw.dst_node
        };
        let id = self.ip_id[src];
        let full = match &pkt.body {
            Body::Tcp(seg) => crate::pcap::encode_tcp(&mut self.buf, &fw, seg, pkt.to_receiver, id),
            Body::TfrcData(d) => crate::pcap::encode_tfrc(
                &mut self.buf,
                &fw,
                &crate::pcap::TfrcPacket::Data(*d),
                self.dccp[pkt.flow as usize],
                id,
            ),
            Body::TfrcFeedback(fb) => crate::pcap::encode_tfrc(
                &mut self.buf,
                &fw,
                &crate::pcap::TfrcPacket::Feedback(*fb),
                self.dccp[pkt.flow as usize],
                id,
            ),
        };
        let (name, writer) = &mut self.writers[w];
        if let Err(e) = writer.record(t, &self.buf, full) {
            self.error = Some((name.clone(), e));
        }
    }

    /// A host sent a packet: also advances the host's IP identification counter.
    fn sent(&mut self, node: usize, t: Instant, pkt: &Pkt) {
        if let Some(w) = self.host[node] {
            self.record(w, t, pkt);
        }
        self.ip_id[node] = self.ip_id[node].wrapping_add(1);
    }

    fn finish(self) -> Result<(), RunError> {
        if let Some((path, e)) = self.error {
            return Err(RunError::Io {
                path,
                message: e.to_string(),
            });
        }
        for (path, w) in self.writers {
            w.finish().map_err(|e| RunError::Io {
                path,
                message: e.to_string(),
            })?;
        }
        Ok(())
    }
}

impl Net {
    fn at(&mut self, t: Instant, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry {
            t,
            seq: self.seq,
            made: self.now,
            ev,
        });
    }

    /// Schedule the arrival event of the head of `d`'s pipe.
    fn arm_pipe(&mut self, d: u32) {
        let dir = &self.dirs[d as usize];
        if let Some(t) = dir.next_arrival() {
            let gen = dir.pipe_gen;
            self.at(t, Ev::Arrive(d, gen));
        }
    }

    /// Trace mode: make sure an opportunity event is pending while packets wait.
    fn kick(&mut self, d: u32) {
        let dir = &mut self.dirs[d as usize];
        if dir.trace.is_some() && !dir.opp_pending && !dir.down && !dir.queue.is_empty() {
            if let Some((t, _)) = dir
                .trace
                .as_ref()
                .and_then(|t| t.next_opportunity(self.now))
            {
                dir.opp_pending = true;
                self.at(t, Ev::Opportunity(d));
            }
        }
    }

    fn alloc(&mut self, pkt: Pkt) -> PktId {
        if let Some(id) = self.free.pop() {
            self.pkts[id as usize] = pkt;
            id
        } else {
            self.pkts.push(pkt);
            (self.pkts.len() - 1) as PktId
        }
    }

    /// Count a lost data packet against its flow: `slot` 0 outage, 1 queue, 2 random
    /// loss, 3 queued or in flight when an outage started (also counted in 0).
    fn count_loss(&mut self, id: PktId, slot: usize) {
        let p = &self.pkts[id as usize];
        if p.to_receiver {
            self.data_lost[p.flow as usize][slot] += 1;
        }
    }

    fn forward(&mut self, node: usize, id: PktId) {
        let dst = self.pkts[id as usize].dst as usize;
        let Some(d) = self.route[node * self.n_nodes + dst] else {
            self.free.push(id);
            return;
        };
        let bytes = self.pkts[id as usize].bytes;
        match self.dirs[d as usize].enqueue_from(self.now, self.origin, id, bytes) {
            Admit::Scheduled(head) => {
                if head {
                    self.arm_pipe(d);
                }
            }
            Admit::Queued => self.kick(d),
            Admit::Dropped => {
                let slot = if self.dirs[d as usize].down { 0 } else { 1 };
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

impl<'a> World<'a> {
    /// Build the world of a scenario, with its initial events scheduled.
    pub fn build(sc: &'a Scenario) -> Result<World<'a>, RunError> {
        let n = sc.nodes.len();
        let mut dirs = Vec::with_capacity(sc.links.len() * 2);
        for (li, l) in sc.links.iter().enumerate() {
            for (k, (from, to)) in [(l.a, l.b), (l.b, l.a)].into_iter().enumerate() {
                let idx = li * 2 + k;
                let rng =
                    Xoshiro256PlusPlus::seed_from_u64(splitmix(sc.seed ^ splitmix(idx as u64 + 1)));
                dirs.push(Dir::new(idx, from, to, &l.dirs[k], rng));
            }
        }
        // Static routes: breadth-first search (fewest hops) from every node; ties go
        // to the link declared first.
        let mut route = vec![None; n * n];
        for src in 0..n {
            let mut first: Vec<Option<u32>> = vec![None; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut q = VecDeque::from([src]);
            while let Some(u) = q.pop_front() {
                for d in &dirs {
                    if d.from == u && !seen[d.to] {
                        seen[d.to] = true;
                        first[d.to] = if u == src {
                            Some(d.index as u32)
                        } else {
                            first[u]
                        };
                        q.push_back(d.to);
                    }
                }
            }
            for dst in 0..n {
                route[src * n + dst] = first[dst];
            }
        }

        let mut flows = Vec::with_capacity(sc.flows.len());
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
            for (a, b) in [(f.src, f.dst), (f.dst, f.src)] {
                if route[a * n + b].is_none() {
                    return Err(RunError::NoRoute {
                        flow: f.name.clone(),
                        from: sc.nodes[a].clone(),
                        to: sc.nodes[b].clone(),
                    });
                }
            }
            let start = Instant::ZERO + f.start;
            flows.push(FlowRt {
                ep: match &f.transport {
                    Transport::Tcp(cfg) => Endpoints::Tcp {
                        snd: TcpSender::new((**cfg).clone()),
                        rcv: TcpReceiver::new((**cfg).clone()),
                    },
                    Transport::Tfrc(t) => Endpoints::Tfrc(Box::new(tfrc::TfrcFlow::new(t))),
                },
                wake: [None, None],
                start,
                total: match &f.app {
                    AppSpec::Sized { size } => Some(*size),
                    AppSpec::Bursts { sizes, .. } => Some(sizes.iter().sum()),
                    _ => None,
                },
                completion: None,
                burst_ends: Vec::new(),
                burst_written_at: Vec::new(),
                burst_done: Vec::new(),
                next_burst: 0,
                written: 0,
                last_read_at: start,
                prev_sample_read: 0,
                prev_sample_rcv_nxt: 0,
                finished: false,
            });
        }

        let end = Instant::ZERO + sc.duration;
        let mut w = World {
            sc,
            net: Net {
                now: Instant::ZERO,
                heap: BinaryHeap::with_capacity(1024),
                seq: 0,
                dirs,
                route,
                n_nodes: n,
                pkts: Vec::with_capacity(1024),
                free: Vec::with_capacity(1024),
                origin: Instant::ZERO,
                data_lost: vec![[0; 4]; sc.flows.len()],
            },
            end,
            events: 0,
            flows,
            marks: Vec::new(),
            interval_bytes: vec![vec![(0, 0); sc.flows.len()]; sc.measure.intervals.len()],
            series: Series::default(),
            web: web::Web::build(sc),
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
        let horizon = sc.duration;
        for (i, l) in sc.links.iter().enumerate() {
            for k in 0..2 {
                let d = (i * 2 + k) as u32;
                let spec = &l.dirs[k];
                if let RateModel::Schedule { points, period } = &spec.rate {
                    for t in schedule_changes(points, *period, horizon) {
                        self.net.at(Instant::ZERO + t, Ev::RateChange(d));
                    }
                }
                if let DelayModel::Schedule { points, period } = &spec.delay {
                    for t in schedule_changes(points, *period, horizon) {
                        self.net.at(Instant::ZERO + t, Ev::DelayChange(d));
                    }
                }
                for &(s, e) in &spec.outages {
                    self.net.at(Instant::ZERO + s, Ev::OutageStart(d));
                    self.net.at(Instant::ZERO + e, Ev::OutageEnd(d));
                }
            }
        }
        for (i, f) in sc.flows.iter().enumerate() {
            let i = i as u32;
            self.net.at(Instant::ZERO + f.start, Ev::FlowStart(i));
            if let Some(stop) = f.stop.filter(|_| !matches!(f.app, AppSpec::Web(_))) {
                self.net.at(Instant::ZERO + stop, Ev::FlowStop(i));
            }
            match &f.app {
                AppSpec::Bursts { at, .. } => {
                    for (k, t) in at.iter().enumerate() {
                        self.net.at(Instant::ZERO + *t, Ev::AppWrite(i, k as u32));
                    }
                }
                AppSpec::OnOff { .. } => self.net.at(Instant::ZERO + f.start, Ev::AppWrite(i, 0)),
                AppSpec::Web(_) => self.net.at(Instant::ZERO + f.start, Ev::WebPage(i)),
                _ => {}
            }
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
        let Some(e) = self.net.heap.peek() else {
            return false;
        };
        if e.t > self.end {
            return false;
        }
        let e = self.net.heap.pop().expect("peeked");
        self.net.now = e.t;
        self.net.origin = e.made;
        self.events += 1;
        self.dispatch(e.ev);
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
        // most each), so checking costs nothing measurable.
        let mut next = std::time::Instant::now() + CONTROL_PERIOD;
        let mut n: u32 = 0;
        while self.step() {
            n = n.wrapping_add(1);
            if n % 1024 == 0 && std::time::Instant::now() >= next {
                if !control(self.net.now) {
                    return false;
                }
                next = std::time::Instant::now() + CONTROL_PERIOD;
            }
        }
        self.net.now = self.end;
        true
    }

    fn dispatch(&mut self, ev: Ev) {
        let now = self.net.now;
        match ev {
            Ev::FlowStart(f) => {
                let spec = &self.sc.flows[f as usize];
                let fr = &mut self.flows[f as usize];
                match &spec.app {
                    AppSpec::Bulk => fr.ep.set_unlimited(),
                    AppSpec::Sized { size } => {
                        fr.ep.write(*size);
                        fr.written += size;
                    }
                    _ => {}
                }
                self.flush(f, false);
            }
            Ev::FlowStop(f) => {
                self.flows[f as usize].ep.stop_writing();
                self.flush(f, false);
            }
            Ev::AppWrite(f, k) => {
                let spec = &self.sc.flows[f as usize];
                let stop = spec.stop.map(|s| Instant::ZERO + s);
                let bytes = match &spec.app {
                    AppSpec::Bursts { sizes, .. } => sizes[k as usize],
                    AppSpec::OnOff { burst, period } => {
                        let next = now + *period;
                        if stop.is_none_or(|s| next < s) {
                            self.net.at(next, Ev::AppWrite(f, k + 1));
                        }
                        *burst
                    }
                    _ => 0,
                };
                if stop.is_some_and(|s| now >= s) {
                    return;
                }
                let fr = &mut self.flows[f as usize];
                fr.ep.write(bytes);
                fr.written += bytes;
                fr.burst_ends.push(fr.written);
                fr.burst_written_at.push(now);
                self.flush(f, false);
            }
            Ev::Read(f) => {
                let spec = &self.sc.flows[f as usize];
                let interval = reader_interval(&spec.reader).unwrap_or(Duration::from_millis(10));
                let fr = &mut self.flows[f as usize];
                let budget = read_budget(&spec.reader, fr.last_read_at - fr.start, now - fr.start);
                fr.last_read_at = now;
                fr.ep.read(now, budget);
                self.after_read(f);
                self.flush(f, true);
                self.net.at(now + interval, Ev::Read(f));
            }
            Ev::Wake(ep) => {
                let f = ep / 2;
                let side = (ep % 2) as usize;
                let fr = &mut self.flows[f as usize];
                if fr.wake[side] != Some(now) {
                    return; // superseded
                }
                fr.wake[side] = None;
                fr.ep.handle_timeout(side == 1, now);
                self.flush(f, side == 1);
            }
            Ev::Opportunity(d) => {
                let dir = &mut self.net.dirs[d as usize];
                dir.opp_pending = false;
                let count = dir
                    .trace
                    .as_ref()
                    .and_then(|t| t.next_opportunity(now))
                    .filter(|(t, _)| *t == now)
                    .map_or(0, |(_, c)| c);
                if dir.use_opportunities(now, count) {
                    self.net.arm_pipe(d);
                }
                self.net.kick(d);
            }
            Ev::Arrive(d, gen) => {
                let dir = &mut self.net.dirs[d as usize];
                if dir.pipe_gen != gen {
                    return; // the pipe changed under this event (outage, reschedule)
                }
                if let Some(p) = dir.pipe.front() {
                    self.net.origin = p.sent;
                }
                let Some((_, id, dup)) = dir.pop_arrival() else {
                    return;
                };
                if let Some(next) = dir.next_arrival() {
                    self.net.at(next, Ev::Arrive(d, gen));
                }
                let node = self.net.dirs[d as usize].to;
                // A duplicated packet: a copy arrives right after the original.
                let copy = dup.then(|| {
                    let p = self.net.pkts[id as usize].clone();
                    self.net.alloc(p)
                });
                for id in std::iter::once(id).chain(copy) {
                    if let Some(cap) = &mut self.capture {
                        if let Some(w) = cap.dir[d as usize] {
                            cap.record(w, now, &self.net.pkts[id as usize]);
                        }
                    }
                    let pkt = &self.net.pkts[id as usize];
                    if pkt.dst as usize == node {
                        self.deliver(id);
                    } else {
                        self.net.forward(node, id);
                    }
                }
            }
            Ev::RateChange(d) => {
                let spec = self.dir_spec(d);
                if let RateModel::Schedule { points, period } = &spec.rate {
                    let dir = &mut self.net.dirs[d as usize];
                    dir.rate_bps = schedule_at(points, *period, now - Instant::ZERO);
                    if dir.reschedule(now) {
                        self.net.arm_pipe(d);
                    }
                }
            }
            Ev::DelayChange(d) => {
                let spec = self.dir_spec(d);
                if let DelayModel::Schedule { points, period } = &spec.delay {
                    let dir = &mut self.net.dirs[d as usize];
                    dir.delay = schedule_at(points, *period, now - Instant::ZERO);
                    if dir.reschedule(now) {
                        self.net.arm_pipe(d);
                    }
                }
            }
            Ev::OutageStart(d) => {
                let mut lost = std::mem::take(&mut self.scratch_lost);
                self.net.dirs[d as usize].go_down(now, &mut lost);
                for &id in &lost {
                    self.net.count_loss(id, 0);
                    self.net.count_loss(id, 3);
                }
                self.net.free.append(&mut lost);
                self.scratch_lost = lost;
            }
            Ev::OutageEnd(d) => {
                self.net.dirs[d as usize].go_up(now);
                self.net.kick(d);
            }
            Ev::WebPage(f) => self.web_page(f),
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
                for (fi, fr) in self.flows.iter().enumerate() {
                    let b = fr.ep.bytes_read();
                    let slot = &mut self.interval_bytes[k][fi];
                    if is_end {
                        slot.1 = b;
                    } else {
                        slot.0 = b;
                    }
                }
            }
        }
    }

    fn dir_spec(&self, d: u32) -> &'a crate::model::DirSpec {
        let sc: &'a Scenario = self.sc;
        &sc.links[d as usize / 2].dirs[d as usize % 2]
    }

    fn deliver(&mut self, id: PktId) {
        let now = self.net.now;
        if let Some(cap) = &mut self.capture {
            let p = &self.net.pkts[id as usize];
            if let Some(w) = cap.host[p.dst as usize] {
                cap.record(w, now, p);
            }
        }
        let (f, to_receiver, body) = {
            let p = &self.net.pkts[id as usize];
            (p.flow, p.to_receiver, p.body)
        };
        self.net.free.push(id);
        let fr = &mut self.flows[f as usize];
        match (&mut fr.ep, body) {
            (Endpoints::Tcp { rcv, .. }, Body::Tcp(seg)) if to_receiver => {
                rcv.handle_segment(now, &seg);
                if matches!(self.sc.flows[f as usize].reader, ReaderSpec::Greedy) {
                    let n = rcv.readable();
                    rcv.read(now, n);
                    self.after_read(f);
                }
                self.flush(f, true);
            }
            (Endpoints::Tcp { snd, .. }, Body::Tcp(seg)) => {
                snd.handle_segment(now, &seg);
                self.flush(f, false);
            }
            _ => self.tfrc_deliver(f, body),
        }
    }

    fn after_read(&mut self, f: u32) {
        let now = self.net.now;
        let fr = &mut self.flows[f as usize];
        let read = fr.ep.bytes_read();
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
        // Returns at once unless `f` is a web connection.
        self.web_read(f);
    }

    /// Drain what an endpoint wants to send into the network, then schedule its next
    /// wake-up.
    fn flush(&mut self, f: u32, receiver: bool) {
        let now = self.net.now;
        let spec = &self.sc.flows[f as usize];
        let (from, dst) = if receiver {
            (spec.dst, spec.src)
        } else {
            (spec.src, spec.dst)
        };
        let fr = &mut self.flows[f as usize];
        let net = &mut self.net;
        match (&mut fr.ep, &spec.transport) {
            (Endpoints::Tcp { snd, rcv }, Transport::Tcp(cfg)) => {
                let (hdr, count_opts) = (cfg.header_bytes, cfg.count_option_bytes);
                loop {
                    let seg = if receiver {
                        rcv.poll_transmit(now)
                    } else {
                        snd.poll_transmit(now)
                    };
                    let Some(seg) = seg else { break };
                    #[cfg(test)]
                    if let Some(log) = &mut self.seg_log {
                        log.push((f, receiver, seg));
                    }
                    let bytes = seg.len + hdr + if count_opts { seg.options_len() } else { 0 };
                    let id = net.alloc(Pkt {
                        flow: f,
                        to_receiver: !receiver,
                        dst: dst as u32,
                        bytes,
                        body: Body::Tcp(seg),
                    });
                    if let Some(cap) = &mut self.capture {
                        cap.sent(from, now, &net.pkts[id as usize]);
                    }
                    net.forward(from, id);
                }
            }
            _ => self.tfrc_transmit(f, receiver),
        }
        let fr = &mut self.flows[f as usize];
        let side = receiver as usize;
        let next = fr.ep.poll_timeout(receiver);
        if let Some(t) = next {
            let t = t.max(now);
            if fr.wake[side].is_none_or(|w| t < w) {
                fr.wake[side] = Some(t);
                self.net.at(t, Ev::Wake(f * 2 + side as u32));
            }
        }
    }

    fn sample(&mut self) {
        let t = self.net.now.as_secs_f64();
        let dt = self
            .sc
            .measure
            .sample_interval
            .unwrap_or(Duration::from_millis(100))
            .as_secs_f64();
        let dt_ns = self
            .sc
            .measure
            .sample_interval
            .unwrap_or(Duration::from_millis(100))
            .as_nanos();
        let fs: &mut FlowSeries = &mut self.series.flow;
        for (i, fr) in self.flows.iter_mut().enumerate() {
            fs.time_s.push(t);
            fs.flow.push(i as u32);
            let Endpoints::Tcp { snd, rcv } = &fr.ep else {
                if let Endpoints::Tfrc(tf) = &mut fr.ep {
                    Self::tfrc_sample(fs, tf, dt);
                }
                continue;
            };
            let read = rcv.bytes_read();
            let rn = rcv.rcv_nxt();
            fs.cwnd_bytes.push(snd.cwnd());
            fs.ssthresh_bytes.push(snd.ssthresh().min(u64::MAX / 4));
            fs.rwnd_bytes.push(rcv.last_advertised_window());
            fs.flight_bytes.push(snd.flight());
            fs.srtt_ms
                .push(snd.rtt().srtt().map_or(f64::NAN, |d| d.as_millis_f64()));
            fs.rcv_buffer_bytes.push(rcv.buffer_occupancy());
            fs.read_rate_bps
                .push((read - fr.prev_sample_read) as f64 * 8.0 / dt);
            fs.goodput_bps
                .push((rn - fr.prev_sample_rcv_nxt) as f64 * 8.0 / dt);
            fs.snd_una.push(snd.snd_una());
            fs.snd_nxt.push(snd.snd_nxt());
            fs.flow_window_bytes.push(snd.flow_window());
            fs.ar_bps
                .push(rcv.rate_estimate().map_or(f64::NAN, |r| r * 8.0));
            fs.rcv_buf_limit_bytes.push(rcv.buffer_limit());
            let policy = rcv.policy();
            fs.t_buff_ms.push(
                policy
                    .delay_estimate()
                    .map_or(f64::NAN, |d| d.as_millis_f64()),
            );
            fs.policy_state
                .push(policy.state_code().map_or(-1, i32::from));
            fs.tfrc_x_bps.push(f64::NAN);
            fs.tfrc_x_recv_bps.push(f64::NAN);
            fs.tfrc_p.push(f64::NAN);
            fs.tfrc_state.push(-1);
            fs.tfrc_rx_state.push(-1);
            fr.prev_sample_read = read;
            fr.prev_sample_rcv_nxt = rn;
        }
        let ls: &mut LinkSeries = &mut self.series.link;
        let now = self.net.now;
        for d in self.net.dirs.iter_mut() {
            d.advance(now);
            ls.time_s.push(t);
            ls.dir.push(d.index as u32);
            ls.queue_packets.push(d.waiting(now) as u64);
            ls.queue_bytes.push(d.waiting_bytes(now));
            // A trace-driven direction: the capacity its trace offered over the last
            // sampling period (opportunities x bytes each / period), not the trace's
            // mean, so that capacity can be drawn under throughput (mm-graph).
            let rate = match (&d.trace, d.down) {
                (_, true) => 0.0,
                (Some(tr), false) => {
                    let from = Instant::from_nanos(now.as_nanos().saturating_sub(dt_ns));
                    link::trace_capacity_bps(&tr.trace, from, now)
                }
                (None, false) => d.rate_bps as f64,
            };
            ls.rate_bps.push(rate);
        }
    }

    /// Assemble the results.
    pub fn finish(mut self) -> RunResult {
        let end = self.end;
        let sc = self.sc;
        for d in &mut self.net.dirs {
            d.close(end);
        }
        let mut tfrc_rows: Vec<Option<FlowSummary>> = (0..sc.flows.len())
            .map(|i| self.tfrc_summary(i, end))
            .collect();
        let mut flows = Vec::new();
        for (i, (fr, spec)) in self.flows.iter_mut().zip(&sc.flows).enumerate() {
            if !fr.finished {
                fr.ep.finish(end);
            }
            let (Endpoints::Tcp { snd, rcv }, Transport::Tcp(cfg)) = (&fr.ep, &spec.transport)
            else {
                flows.extend(tfrc_rows[i].take());
                continue;
            };
            let ss = snd.stats().clone();
            let rs = rcv.stats().clone();
            let delivered = rcv.bytes_read();
            let active_end = fr.completion.unwrap_or(end);
            let active = (active_end - fr.start).as_secs_f64();
            let mut intervals = BTreeMap::new();
            for (k, (label, s, e)) in sc.measure.intervals.iter().enumerate() {
                let (b0, b1) = self.interval_bytes[k][i];
                let span = (*e - *s).as_secs_f64();
                let v = if span > 0.0 {
                    b1.saturating_sub(b0) as f64 * 8.0 / span
                } else {
                    0.0
                };
                intervals.insert(label.clone(), v);
            }
            let ms = |d: Option<Duration>| d.map(|d| d.as_millis_f64());
            flows.push(FlowSummary {
                name: spec.name.clone(),
                src: sc.nodes[spec.src].clone(),
                dst: sc.nodes[spec.dst].clone(),
                protocol: "tcp".into(),
                cc: cfg.cc.name().into(),
                flow_control: cfg.flow_control.name().into(),
                bytes_delivered: delivered,
                bytes_offered: if matches!(spec.app, AppSpec::Bulk) {
                    snd.snd_nxt()
                } else {
                    fr.written
                },
                goodput_bps: if active > 0.0 {
                    delivered as f64 * 8.0 / active
                } else {
                    0.0
                },
                intervals,
                completion_time_s: fr.completion.map(|c| (c - fr.start).as_secs_f64()),
                burst_completion_times_s: fr.burst_done.clone(),
                page_load_times_s: self
                    .web
                    .app_of_main(i as u32)
                    .map_or_else(Vec::new, |a| a.load_times_s.clone()),
                pages_started: self
                    .web
                    .app_of_main(i as u32)
                    .map_or(0, |a| a.pages_started),
                segments_sent: ss.data_segments_sent,
                retransmits: ss.retransmits,
                timeouts: ss.timeouts,
                fast_retransmits: ss.fast_retransmits,
                zero_windows: rs.zero_window_episodes,
                zero_window_acks: rs.zero_window_acks,
                window_probes: ss.window_probes,
                window_updates: rs.window_updates,
                dup_acks: rs.dup_acks,
                policy_updates: rs.policy_updates,
                hidden_congestion_events: ss.hidden_congestion_events,
                paced_segments: ss.paced_segments,
                zero_window_stalls: ss.zero_window_stalls,
                zero_window_stall_s: ss.zero_window_stall_time.as_secs_f64(),
                zero_window_stall_rtts: ss.zero_window_stall_rtts,
                idle_rtts: ss.idle_rtts,
                total_rtts: ss.total_rtts,
                rcv_buffer_drops: rs.buffer_drops,
                rtt_min_ms: ms(ss.rtt.min),
                rtt_mean_ms: ms(ss.rtt.mean()),
                rtt_p95_ms: ms(ss.rtt.quantile(0.95)),
                rtt_samples: ss.rtt.count,
                handoff: mobility::summary(&ss, &rs),
                tfrc: None,
            });
        }
        let mut links = Vec::new();
        for d in &self.net.dirs {
            let l = &sc.links[d.index / 2];
            let from = &sc.nodes[d.from];
            let to = &sc.nodes[d.to];
            links.push(LinkSummary {
                name: format!("{}:{}->{}", l.name, from, to),
                link: l.name.clone(),
                from: from.clone(),
                to: to.clone(),
                packets_sent: d.stats.packets_sent,
                bytes_sent: d.stats.bytes_sent,
                drops: d.stats.drops,
                early_drops: d.is_red().then_some(d.stats.early_drops),
                outage_losses: d.stats.outage_losses,
                random_losses: d.stats.random_losses,
                reordered: d.stats.reordered,
                duplicated: d.stats.duplicated,
                queue_max_packets: d.stats.queue_max,
                queue_mean_packets: if end.as_nanos() > 0 {
                    d.stats.queue_area as f64 / end.as_nanos() as f64
                } else {
                    0.0
                },
            });
        }
        RunResult {
            summary: Summary {
                mobiflow_version: crate::VERSION.into(),
                scenario: sc.name.clone(),
                seed: sc.seed,
                duration_s: sc.duration.as_secs_f64(),
                flows,
                links,
                assumed: sc.assumed.iter().cloned().collect(),
                events: self.events,
            },
            series: self.series,
        }
    }
}

/// The read period of a rate-limited reader; `None` for a greedy one.
fn reader_interval(r: &ReaderSpec) -> Option<Duration> {
    match r {
        ReaderSpec::Greedy => None,
        ReaderSpec::Constant { interval, .. }
        | ReaderSpec::Steps { interval, .. }
        | ReaderSpec::Sine { interval, .. } => Some(*interval),
    }
}

/// Read rate of a reader at time `t` since the flow's start, bits per second.
pub fn read_rate_at(r: &ReaderSpec, t: Duration) -> f64 {
    match r {
        ReaderSpec::Greedy => f64::INFINITY,
        ReaderSpec::Constant { rate_bps, .. } => *rate_bps as f64,
        ReaderSpec::Steps {
            rates_bps, step, ..
        } => {
            let k = (t.as_nanos() / step.as_nanos().max(1)) as usize % rates_bps.len().max(1);
            rates_bps.get(k).copied().unwrap_or(0) as f64
        }
        ReaderSpec::Sine {
            mean_bps,
            amplitude_bps,
            period,
            phase_rad,
            ..
        } => {
            let w = 2.0 * std::f64::consts::PI / period.as_secs_f64().max(1e-9);
            (*mean_bps as f64 + *amplitude_bps as f64 * (w * t.as_secs_f64() + phase_rad).sin())
                .max(0.0)
        }
    }
}

/// Bytes a reader may read over `(t0, t1]` (times since the flow's start): the
/// integral of its rate, exact for steps, by the midpoint rule for a sinusoid. What it
/// cannot read because the buffer is empty is not carried over.
pub fn read_budget(r: &ReaderSpec, t0: Duration, t1: Duration) -> u64 {
    if t1 <= t0 {
        return 0;
    }
    let bits = match r {
        ReaderSpec::Greedy => return u64::MAX,
        ReaderSpec::Steps { step, .. } => {
            // Integrate across step boundaries.
            let mut acc = 0.0;
            let mut a = t0;
            let s = step.as_nanos().max(1);
            while a < t1 {
                let next = Duration::from_nanos((a.as_nanos() / s + 1) * s).min(t1);
                acc += read_rate_at(r, a) * (next - a).as_secs_f64();
                a = next;
            }
            acc
        }
        _ => {
            let mid = Duration::from_nanos((t0.as_nanos() + t1.as_nanos()) / 2);
            read_rate_at(r, mid) * (t1 - t0).as_secs_f64()
        }
    };
    (bits / 8.0).round() as u64
}
