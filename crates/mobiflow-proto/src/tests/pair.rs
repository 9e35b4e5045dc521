//! An in-memory `Pair`: one [`TcpSender`] and one [`TcpReceiver`] joined by two
//! one-way links, driven deterministically in integer nanoseconds (quinn-proto's
//! `tests/util.rs` `Pair`, smoltcp's netsim without a queue model).
//!
//! * Each direction ([`Link`]) has a latency, an optional bottleneck rate (segments
//!   are serialised one after another at `rate_bps`, FIFO, unbounded queue), explicit
//!   loss (predicates on the segment) and reordering (extra delay for chosen
//!   segments).
//! * The application at the receiver is a [`Reader`]: greedy, never, a list of
//!   `(time, bytes)` reads, or a periodic read.
//! * Every segment either endpoint emits is logged with its send time and fate
//!   ([`Sent`]), so tests assert on what went over the wire.
//!
//! Event order within one instant is fixed: arrivals towards the receiver, arrivals
//! towards the sender (each in FIFO order), the sender's timer, the receiver's timer,
//! then the reader. After every input both endpoints are polled until they are
//! silent (the polling order the machines document).

use crate::cc::CaState;
use crate::tcp::{Polled, ReceiverEvent, SenderEvent, TcpConfig, TcpReceiver, TcpSender};
use crate::time::{Duration, Instant};
use crate::wire::Segment;
use std::collections::VecDeque;

/// A predicate deciding the fate of a segment offered to a link.
pub type SegPred = Box<dyn FnMut(Instant, &Segment) -> bool>;

/// A deterministic linear congruential generator (Knuth's MMIX constants), so that
/// "random" loss is the same on every machine.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u32() as f64) < p * (1u64 << 31) as f64
    }
}

/// What happened to a logged segment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered at this time.
    Arrives(Instant),
    Dropped,
}

/// One segment as it left an endpoint.
#[derive(Copy, Clone, Debug)]
pub struct Sent {
    pub at: Instant,
    pub seg: Segment,
    pub fate: Fate,
}

impl Sent {
    pub fn dropped(&self) -> bool {
        self.fate == Fate::Dropped
    }
    pub fn is_data(&self) -> bool {
        self.seg.len > 0
    }
}

/// One direction of the path.
pub struct Link {
    pub latency: Duration,
    /// Bottleneck rate in bits per second; `None` for infinitely fast.
    pub rate_bps: Option<u64>,
    /// Bytes of header counted on the wire per segment (for serialisation).
    pub header_bytes: u32,
    pub count_option_bytes: bool,
    busy_until: Instant,
    /// (arrival, FIFO tie-break, segment), kept sorted.
    in_flight: VecDeque<(Instant, u64, Segment)>,
    next_id: u64,
    drops: Vec<SegPred>,
    delays: Vec<(SegPred, Duration)>,
    pub log: Vec<Sent>,
}

impl Link {
    fn new(latency: Duration, cfg: &TcpConfig) -> Self {
        Link {
            latency,
            rate_bps: None,
            header_bytes: cfg.header_bytes,
            count_option_bytes: cfg.count_option_bytes,
            busy_until: Instant::ZERO,
            in_flight: VecDeque::new(),
            next_id: 0,
            drops: Vec::new(),
            delays: Vec::new(),
            log: Vec::new(),
        }
    }

    // ----- loss and reordering --------------------------------------------------

    /// Drop every segment for which `pred` is true (every predicate sees every
    /// segment, so counters inside them stay exact).
    pub fn drop_if(&mut self, pred: impl FnMut(Instant, &Segment) -> bool + 'static) {
        self.drops.push(Box::new(pred));
    }

    /// Drop the first segment for which `pred` is true, and only that one.
    pub fn drop_once_if(&mut self, mut pred: impl FnMut(Instant, &Segment) -> bool + 'static) {
        let mut done = false;
        self.drop_if(move |t, s| {
            let hit = !done && pred(t, s);
            done |= hit;
            hit
        });
    }

    /// Drop the `k`-th data segment (0-based, retransmissions included).
    pub fn drop_nth_data(&mut self, k: u64) {
        let mut n = 0u64;
        self.drop_if(move |_, s| {
            if s.len == 0 {
                return false;
            }
            n += 1;
            n - 1 == k
        });
    }

    /// Drop the first transmission of the data segment that starts at `seq`.
    pub fn drop_first_tx_of(&mut self, seq: u64) {
        self.drop_tx_of(seq, 1);
    }

    /// Drop the first `times` transmissions of the data segment that starts at `seq`.
    pub fn drop_tx_of(&mut self, seq: u64, times: u32) {
        let mut left = times;
        self.drop_if(move |_, s| {
            if s.len > 0 && s.seq == seq && left > 0 {
                left -= 1;
                true
            } else {
                false
            }
        });
    }

    /// Drop everything sent in `[from, to)`.
    pub fn blackout(&mut self, from: Instant, to: Instant) {
        self.drop_if(move |t, _| t >= from && t < to);
    }

    /// Drop each data segment with probability `p` (deterministic from `seed`).
    pub fn drop_random_data(&mut self, seed: u64, p: f64) {
        let mut rng = Lcg::new(seed);
        self.drop_if(move |_, s| s.len > 0 && rng.chance(p));
    }

    /// Delay segments for which `pred` is true by `extra` beyond the latency.
    pub fn delay_if(
        &mut self,
        extra: Duration,
        pred: impl FnMut(Instant, &Segment) -> bool + 'static,
    ) {
        self.delays.push((Box::new(pred), extra));
    }

    /// Delay the first transmission of the data segment starting at `seq` by `extra`.
    pub fn delay_first_tx_of(&mut self, seq: u64, extra: Duration) {
        let mut done = false;
        self.delay_if(extra, move |_, s| {
            if !done && s.len > 0 && s.seq == seq {
                done = true;
                true
            } else {
                false
            }
        });
    }

    // ----- queries on the log ---------------------------------------------------

    /// Data segments sent (retransmissions included), with their send time.
    pub fn data(&self) -> impl Iterator<Item = &Sent> + '_ {
        self.log.iter().filter(|s| s.is_data())
    }

    /// Times at which the data segment starting at `seq` was sent.
    pub fn tx_times(&self, seq: u64) -> Vec<Instant> {
        self.data()
            .filter(|s| s.seg.seq == seq)
            .map(|s| s.at)
            .collect()
    }

    /// Segments flagged as retransmissions.
    pub fn retransmissions(&self) -> impl Iterator<Item = &Sent> + '_ {
        self.data().filter(|s| s.seg.retransmission)
    }

    // ----- mechanics ------------------------------------------------------------

    fn wire_bytes(&self, seg: &Segment) -> u64 {
        let opts = if self.count_option_bytes {
            seg.options_len()
        } else {
            0
        };
        (seg.len + self.header_bytes + opts) as u64
    }

    fn send(&mut self, now: Instant, seg: Segment) {
        let mut drop = false;
        for p in self.drops.iter_mut() {
            drop |= p(now, &seg);
        }
        let mut extra = Duration::ZERO;
        for (p, d) in self.delays.iter_mut() {
            if p(now, &seg) {
                extra += *d;
            }
        }
        // Serialisation happens whether or not the segment is lost afterwards.
        let departs = match self.rate_bps {
            Some(rate) => {
                let start = self.busy_until.max(now);
                self.busy_until = start + Duration::transmission(self.wire_bytes(&seg), rate);
                self.busy_until
            }
            None => now,
        };
        if drop {
            self.log.push(Sent {
                at: now,
                seg,
                fate: Fate::Dropped,
            });
            return;
        }
        let arrives = departs + self.latency + extra;
        self.log.push(Sent {
            at: now,
            seg,
            fate: Fate::Arrives(arrives),
        });
        let id = self.next_id;
        self.next_id += 1;
        let i = self
            .in_flight
            .partition_point(|&(t, k, _)| (t, k) <= (arrives, id));
        self.in_flight.insert(i, (arrives, id, seg));
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.front().map(|e| e.0)
    }

    fn pop_due(&mut self, now: Instant) -> Option<Segment> {
        if self.next_arrival().is_some_and(|t| t <= now) {
            self.in_flight.pop_front().map(|e| e.2)
        } else {
            None
        }
    }
}

/// The application reading at the receiver.
#[derive(Clone, Debug)]
pub enum Reader {
    /// Reads everything as soon as it is in order.
    Greedy,
    /// Never reads.
    Never,
    /// Reads up to `bytes` at each `time` (sorted).
    At(VecDeque<(Instant, u64)>),
    /// Reads up to `bytes` every `every`, starting at `next`.
    Periodic {
        next: Instant,
        every: Duration,
        bytes: u64,
    },
}

impl Reader {
    /// Reads up to `bytes` every `period`, the first time one `period` in.
    pub fn every(period: Duration, bytes: u64) -> Self {
        Reader::Periodic {
            next: Instant::ZERO + period,
            every: period,
            bytes,
        }
    }

    pub fn at(reads: &[(Instant, u64)]) -> Self {
        let mut v: Vec<_> = reads.to_vec();
        v.sort_by_key(|r| r.0);
        Reader::At(v.into())
    }

    fn next_time(&self) -> Option<Instant> {
        match self {
            Reader::Greedy | Reader::Never => None,
            Reader::At(q) => q.front().map(|r| r.0),
            Reader::Periodic { next, .. } => Some(*next),
        }
    }
}

/// One point of the sender's window trace, recorded whenever it changes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CwndPoint {
    pub at: Instant,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub ca: CaState,
}

/// A sender and a receiver joined by two links. See the module documentation.
pub struct Pair {
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    /// Sender to receiver (data).
    pub fwd: Link,
    /// Receiver to sender (ACKs).
    pub rev: Link,
    pub reader: Reader,
    pub now: Instant,
    /// The sender's (cwnd, ssthresh, state) each time one of them changed.
    pub trace: Vec<CwndPoint>,
    /// Events processed so far.
    pub steps: u64,
    /// Every event the sender and the receiver queued (`poll_event`), drained at each
    /// flush, with the time.
    pub snd_events: Vec<(Instant, SenderEvent)>,
    pub rcv_events: Vec<(Instant, ReceiverEvent)>,
}

/// Upper bound on segments one endpoint may emit at a single instant before the
/// harness calls it a livelock.
const MAX_BURST: usize = 100_000;

impl Pair {
    /// A pair with the same configuration at both ends and `one_way` latency in each
    /// direction; the receiver reads greedily.
    pub fn new(cfg: TcpConfig, one_way: Duration) -> Self {
        Self::with_configs(cfg.clone(), cfg, one_way)
    }

    pub fn with_configs(snd_cfg: TcpConfig, rcv_cfg: TcpConfig, one_way: Duration) -> Self {
        let fwd = Link::new(one_way, &snd_cfg);
        let rev = Link::new(one_way, &rcv_cfg);
        let snd = TcpSender::new(snd_cfg);
        let mut p = Pair {
            snd,
            rcv: TcpReceiver::new(rcv_cfg),
            fwd,
            rev,
            reader: Reader::Greedy,
            now: Instant::ZERO,
            trace: Vec::new(),
            steps: 0,
            snd_events: Vec::new(),
            rcv_events: Vec::new(),
        };
        p.record();
        p
    }

    /// Round-trip propagation time (no serialisation).
    pub fn rtt(&self) -> Duration {
        self.fwd.latency + self.rev.latency
    }

    /// The application writes `bytes` at the current time.
    pub fn write(&mut self, bytes: u64) {
        self.snd.write(bytes);
        self.flush();
    }

    pub fn set_unlimited(&mut self) {
        self.snd.set_unlimited();
        self.flush();
    }

    /// Sends without limit and drives until `until`, with the first transmission of
    /// the segment at each of `lost` lost on the forward path.
    pub fn bulk_losing(&mut self, lost: &[u64], until: Instant) {
        for &seq in lost {
            self.fwd.drop_first_tx_of(seq);
        }
        self.set_unlimited();
        self.drive_until(until);
    }

    /// The reader reads up to `max` bytes now.
    pub fn read(&mut self, max: u64) -> u64 {
        let n = self.rcv.read(self.now, max);
        self.flush();
        n
    }

    // ----- driving --------------------------------------------------------------

    fn next_event(&self) -> Option<Instant> {
        [
            self.fwd.next_arrival(),
            self.rev.next_arrival(),
            self.snd.poll_timeout(),
            self.rcv.poll_timeout(),
            self.reader.next_time(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Process everything due at the next event time. False if nothing is pending.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_event() else {
            return false;
        };
        self.now = self.now.max(t);
        let now = self.now;
        self.steps += 1;
        while let Some(seg) = self.fwd.pop_due(now) {
            self.rcv.handle_segment(now, &seg);
            if matches!(self.reader, Reader::Greedy) {
                self.rcv.read(now, u64::MAX);
            }
            self.flush();
        }
        while let Some(seg) = self.rev.pop_due(now) {
            self.snd.handle_segment(now, &seg);
            self.flush();
        }
        if self.snd.poll_timeout().is_some_and(|t| t <= now) {
            self.snd.handle_timeout(now);
            self.flush();
        }
        if self.rcv.poll_timeout().is_some_and(|t| t <= now) {
            self.rcv.handle_timeout(now);
            self.flush();
        }
        loop {
            let n = match &mut self.reader {
                Reader::At(q) if q.front().is_some_and(|r| r.0 <= now) => {
                    q.pop_front().expect("front exists").1
                }
                Reader::Periodic { next, every, bytes } if *next <= now => {
                    *next = now + *every;
                    *bytes
                }
                _ => break,
            };
            self.rcv.read(now, n);
            self.flush();
        }
        true
    }

    /// Poll both endpoints until neither has anything to send.
    pub fn flush(&mut self) {
        let now = self.now;
        // After every input: a stale flag would send the sender down its steady-state
        // paths outside the steady state (or keep it off them).
        assert!(
            self.snd.steady_is_current(),
            "the sender's steady flag is stale"
        );
        loop {
            let mut any = false;
            // Polled::Last is checked on every flush: a poll right after it sends
            // nothing.
            let mut seg = Segment::default();
            for _ in 0..MAX_BURST {
                let polled = self.snd.poll_transmit_into(now, &mut seg);
                if !polled.sent() {
                    break;
                }
                self.fwd.send(now, seg);
                any = true;
                if polled == Polled::Last {
                    let again = self.snd.poll_transmit_into(now, &mut seg);
                    assert_eq!(again, Polled::Nothing, "the sender sent after Last");
                    break;
                }
            }
            for _ in 0..MAX_BURST {
                let polled = self.rcv.poll_transmit_into(now, &mut seg);
                if !polled.sent() {
                    break;
                }
                self.rev.send(now, seg);
                any = true;
                if polled == Polled::Last {
                    let again = self.rcv.poll_transmit_into(now, &mut seg);
                    assert_eq!(again, Polled::Nothing, "the receiver sent after Last");
                    break;
                }
            }
            if !any {
                break;
            }
        }
        while let Some(e) = self.snd.poll_event() {
            self.snd_events.push((now, e));
        }
        while let Some(e) = self.rcv.poll_event() {
            self.rcv_events.push((now, e));
        }
        self.record();
    }

    fn record(&mut self) {
        let p = CwndPoint {
            at: self.now,
            cwnd: self.snd.cwnd(),
            ssthresh: self.snd.ssthresh(),
            ca: self.snd.ca_state(),
        };
        let last = self.trace.last();
        if last.is_none_or(|l| (l.cwnd, l.ssthresh, l.ca) != (p.cwnd, p.ssthresh, p.ca)) {
            self.trace.push(p);
        }
    }

    /// Run until nothing is pending (panics after a million events: a livelock).
    pub fn drive(&mut self) {
        self.drive_bounded(1_000_000);
    }

    /// Run at most `max_steps` events; panics if events remain after that.
    pub fn drive_bounded(&mut self, max_steps: u64) {
        for _ in 0..max_steps {
            if !self.step() {
                return;
            }
        }
        panic!(
            "still busy after {max_steps} events at {:?} (snd_una {}, snd_nxt {}, \
             next event {:?})",
            self.now,
            self.snd.snd_una(),
            self.snd.snd_nxt(),
            self.next_event()
        );
    }

    /// Run every event due at or before `t`, then set the clock to `t`.
    pub fn drive_until(&mut self, t: Instant) {
        let mut n = 0u64;
        while self.next_event().is_some_and(|e| e <= t) {
            self.step();
            n += 1;
            assert!(n < 5_000_000, "livelock before {t:?}");
        }
        self.now = self.now.max(t);
    }

    /// Run `d` past the current time.
    pub fn drive_for(&mut self, d: Duration) {
        let t = self.now + d;
        self.drive_until(t);
    }

    /// Run until `bytes` have been read by the application, or panic at `deadline`.
    pub fn drive_until_read(&mut self, bytes: u64, deadline: Instant) {
        while self.rcv.bytes_read() < bytes {
            let Some(t) = self.next_event() else {
                panic!(
                    "nothing pending at {:?} with {} of {bytes} bytes read",
                    self.now,
                    self.rcv.bytes_read()
                );
            };
            assert!(
                t <= deadline,
                "{} of {bytes} bytes read by the deadline {deadline:?}",
                self.rcv.bytes_read()
            );
            self.step();
        }
    }

    // ----- convenience queries ---------------------------------------------------

    /// The pure ACKs the receiver sent (SYN-ACK excluded).
    pub fn acks(&self) -> impl Iterator<Item = &Sent> + '_ {
        self.rev
            .log
            .iter()
            .filter(|s| !s.seg.flags.contains(crate::wire::Flags::SYN))
    }

    /// The first time the sender's state was `ca`, from the trace.
    pub fn first_time_in(&self, ca: CaState) -> Option<Instant> {
        self.trace.iter().find(|p| p.ca == ca).map(|p| p.at)
    }
}
