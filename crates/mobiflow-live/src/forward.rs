//! The forwarding loop: packets the kernel of one namespace sends into its TUN device
//! go through the scenario's link direction ([`ClockedDir`], the simulator's own link
//! model) and are written into the other namespace's TUN device when they are due.

use crate::sys;
use mobiflow_proto::time::Instant as SimInstant;
use mobiflow_sim::emu::{Advanced, ClockedDir};
use serde_json::{json, Value};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration as StdDuration, Instant as StdInstant};

/// Room read for each packet: more than the MTU, so that an oversized packet shows.
const BUF_LEN: usize = 65536;

/// Buffers of packets in flight, indexed by the link model's packet ids.
#[derive(Default)]
struct Slab {
    bufs: Vec<Vec<u8>>,
    free: Vec<u32>,
}

impl Slab {
    fn alloc(&mut self) -> u32 {
        if let Some(id) = self.free.pop() {
            id
        } else {
            self.bufs.push(Vec::with_capacity(2048));
            (self.bufs.len() - 1) as u32
        }
    }
    fn release(&mut self, id: u32) {
        self.free.push(id);
    }
}

/// Counters of one direction beyond the link model's own.
#[derive(Default, Clone)]
pub struct DirCounters {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Packets written later than the bound after their due time.
    pub late: u64,
    pub max_late_us: u64,
    /// Sum of lateness, for the mean.
    pub late_sum_us: u64,
    /// Packets that may have waited in the TUN device longer than the bound before
    /// they were read: read more than the bound after the forwarder last knew the
    /// device empty (a read that found nothing, or a wake-up from `ppoll`, less the
    /// time this thread then waited for a CPU). Such a packet enters the link late,
    /// in a burst with those that waited beside it.
    pub late_reads: u64,
    /// The largest such bound on how long a packet read may have waited.
    pub max_read_gap_us: u64,
    pub write_errors: u64,
    pub read_errors: u64,
    /// Packets larger than the MTU (a segmentation offload the emulator would treat
    /// as one packet; TUN without a virtio-net header offers none, so Linux segments
    /// before the device and this stays 0). Dropped.
    pub oversize: u64,
    /// Packets that are neither IPv4 nor IPv6 (version nibble), dropped.
    pub non_ip: u64,
    /// IPv4 or IPv6 packets whose header does not hold together (too short, a header
    /// length below 20 bytes, a length field beyond the bytes read), dropped.
    pub malformed: u64,
}

/// What a packet read from a TUN device is.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An IPv4 or IPv6 packet within the MTU: forwarded.
    Ip,
    Oversize,
    NonIp,
    Malformed,
}

/// Sorts a packet read from a TUN device (`IFF_NO_PI`: the bytes are the IP packet).
/// IPv4 (RFC 791 §3.1): at least 20 bytes, IHL at least 5 and within the packet,
/// Total Length at least the header and at most the bytes read. IPv6 (RFC 8200 §3):
/// at least the 40-byte header, Payload Length within the packet. Anything the
/// kernel's own stack sends passes; what a raw socket writes may not.
pub fn classify(pkt: &[u8], mtu: usize) -> Verdict {
    let Some(&first) = pkt.first() else {
        return Verdict::Malformed;
    };
    let ok = match first >> 4 {
        4 => {
            let ihl = (first & 0x0f) as usize * 4;
            let total = pkt
                .get(2..4)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) as usize);
            pkt.len() >= 20 && ihl >= 20 && total >= ihl && total <= pkt.len()
        }
        6 => {
            let payload = pkt
                .get(4..6)
                .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) as usize);
            pkt.len() >= 40 && 40 + payload <= pkt.len()
        }
        _ => return Verdict::NonIp,
    };
    if !ok {
        Verdict::Malformed
    } else if pkt.len() > mtu {
        Verdict::Oversize
    } else {
        Verdict::Ip
    }
}

/// One second of the per-second report.
struct Second {
    t: u64,
    bytes: [u64; 2],
    queue: [usize; 2],
    queue_max: [usize; 2],
    drops: [u64; 2],
    outage_losses: [u64; 2],
    down: [bool; 2],
}

pub struct Options {
    /// MTU of the TUN devices, in bytes.
    pub mtu: usize,
    /// Stop after this long (None: when `should_stop` says so).
    pub duration: Option<StdDuration>,
    /// A packet written later than this after its due time makes the run invalid.
    pub late_bound: StdDuration,
    /// Print one line per second on stderr.
    pub quiet: bool,
}

pub struct Outcome {
    /// The forwarder ran under SCHED_FIFO (else at nice -10).
    pub realtime: bool,
    /// The longest the forwarder waited for a CPU after a wake-up (None: this kernel
    /// has no `/proc/thread-self/schedstat`, so read lateness misses such waits).
    pub max_wake_delay: Option<StdDuration>,
    pub counters: [DirCounters; 2],
    pub seconds: Vec<Value>,
    pub elapsed: StdDuration,
}

/// How long this thread has waited on a run queue, runnable but not running: the
/// second field of `/proc/thread-self/schedstat` (ns), to which the kernel adds each
/// wait when the task gets a CPU (`sched_info_arrive` in kernel/sched/stats.h). Opened
/// by the thread it measures; None where the kernel has no schedstat
/// (`CONFIG_SCHED_INFO` off).
struct RunDelay {
    file: Option<File>,
    buf: [u8; 96],
    /// The longest wait [`RunDelay::waited_since`] measured.
    max: u64,
}

impl RunDelay {
    fn open() -> Self {
        RunDelay {
            file: File::open("/proc/thread-self/schedstat").ok(),
            buf: [0; 96],
            max: 0,
        }
    }

    fn read(&mut self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let n = self.file.as_ref()?.read_at(&mut self.buf, 0).ok()?;
        parse_run_delay(&self.buf[..n])
    }

    /// The run-queue wait (ns) since `before` (a [`RunDelay::read`]); 0 if either
    /// reading failed.
    fn waited_since(&mut self, before: Option<u64>) -> u64 {
        let waited = match (before, self.read()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        };
        self.max = self.max.max(waited);
        waited
    }

    /// The longest wait measured; None where there is no schedstat to measure it.
    fn max(&self) -> Option<StdDuration> {
        self.file
            .is_some()
            .then(|| StdDuration::from_nanos(self.max))
    }
}

/// The run-queue wait (ns) of a `schedstat` line: "cpu_ns wait_ns timeslices".
fn parse_run_delay(line: &[u8]) -> Option<u64> {
    std::str::from_utf8(line)
        .ok()?
        .split_ascii_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn sim_now(t0: StdInstant) -> SimInstant {
    SimInstant::from_nanos(t0.elapsed().as_nanos() as u64)
}

/// Forward between `tuns[0]` (the link's `a` end) and `tuns[1]` (`b`) through
/// `dirs[0]` (a -> b) and `dirs[1]` (b -> a) until the duration passes or
/// `should_stop` returns true (checked every few milliseconds at most). The link's
/// time zero is `t0`.
pub fn run(
    t0: StdInstant,
    tuns: [&File; 2],
    dirs: &mut [ClockedDir; 2],
    opts: &Options,
    mut should_stop: impl FnMut() -> bool,
) -> std::io::Result<Outcome> {
    sys::set_timer_slack_ns(1_000);
    // Only this thread (the command was started before): real-time scheduling if the
    // kernel allows it, else a higher nice value.
    let realtime = sys::set_realtime(10);
    if !realtime {
        sys::set_nice(-10);
    }
    let mut fwd = Fwd {
        slab: Slab::default(),
        counters: Default::default(),
        sec: new_second(1),
        adv: Advanced::default(),
        scratch: vec![0u8; BUF_LEN],
        late_bound_ns: opts.late_bound.as_nanos() as u64,
        mtu: opts.mtu,
        empty_at: [SimInstant::ZERO; 2],
    };
    let mut run_delay = RunDelay::open();
    let mut seconds: Vec<Value> = Vec::new();
    let mut prev_stats = [(0u64, 0u64); 2];
    let mut ready = Vec::with_capacity(2);
    let max_wait = SimInstant::from_millis(5).as_nanos();
    let clock = || sim_now(t0);
    loop {
        // 1. Everything due by now: deliveries into the far namespace.
        let now = clock();
        for d in 0..2 {
            fwd.deliver(d, now, &mut dirs[d], tuns[1 - d], &clock);
        }
        // 2. What the kernels sent: into the queues, each packet at the time it was
        // read.
        for d in 0..2 {
            fwd.take(d, &mut dirs[d], tuns[d], tuns[1 - d], &clock);
        }
        // 3. The per-second report.
        let now = clock();
        let sec = &mut fwd.sec;
        if now.as_nanos() >= sec.t * 1_000_000_000 {
            for d in 0..2 {
                let st = dirs[d].stats();
                sec.drops[d] = st.drops - prev_stats[d].0;
                sec.outage_losses[d] = st.outage_losses - prev_stats[d].1;
                prev_stats[d] = (st.drops, st.outage_losses);
                sec.queue[d] = dirs[d].waiting(now);
                sec.down[d] = dirs[d].is_down();
            }
            if !opts.quiet {
                eprintln!(
                    "live {:>4} s  a->b {:>7.3} Mb/s queue {:>4} (max {:>4}) drops {:>3}{} | b->a {:>7.3} Mb/s queue {:>4} (max {:>4}) drops {:>3}{}",
                    sec.t,
                    sec.bytes[0] as f64 * 8e-6,
                    sec.queue[0],
                    sec.queue_max[0],
                    sec.drops[0],
                    if sec.down[0] { " DOWN" } else { "" },
                    sec.bytes[1] as f64 * 8e-6,
                    sec.queue[1],
                    sec.queue_max[1],
                    sec.drops[1],
                    if sec.down[1] { " DOWN" } else { "" },
                );
            }
            seconds.push(second_json(sec));
            *sec = new_second(sec.t + 1);
        }
        if let Some(limit) = opts.duration {
            if t0.elapsed() >= limit {
                break;
            }
        }
        if should_stop() {
            break;
        }
        // 4. Sleep until the next event, a packet, or the next report.
        let now = clock().as_nanos();
        let mut wake = (fwd.sec.t * 1_000_000_000).min(now + max_wait);
        for d in dirs.iter() {
            if let Some(t) = d.next_event() {
                wake = wake.min(t.as_nanos());
            }
        }
        let timeout = StdDuration::from_nanos(wake.saturating_sub(now));
        if !timeout.is_zero() {
            let entered = clock();
            let before = run_delay.read();
            sys::wait_readable(&tuns, timeout, &mut ready)?;
            let woke = clock();
            let waited = run_delay.waited_since(before);
            fwd.watched(entered, woke, waited);
        }
    }
    Ok(Outcome {
        realtime,
        max_wake_delay: run_delay.max(),
        counters: fwd.counters,
        seconds,
        elapsed: t0.elapsed(),
    })
}

/// The forwarder's state besides the link directions: packet buffers, counters, the
/// second being reported.
struct Fwd {
    slab: Slab,
    counters: [DirCounters; 2],
    sec: Second,
    adv: Advanced,
    scratch: Vec<u8>,
    late_bound_ns: u64,
    mtu: usize,
    /// Per device, the latest time at which it is known to have held no packet:
    /// whatever is read from it arrived after that.
    empty_at: [SimInstant; 2],
}

impl Fwd {
    /// The forwarder waited in `ppoll` on both devices from `entered` until `woke`,
    /// then `waited` ns for a CPU. A packet that reached a device during the wait
    /// would have woken it: what is read next arrived after `woke - waited`, less the
    /// time between the device's last empty read and `entered` (a packet that came
    /// then makes `ppoll` return at once).
    fn watched(&mut self, entered: SimInstant, woke: SimInstant, waited: u64) {
        for e in &mut self.empty_at {
            let unwatched = entered.saturating_since(*e).as_nanos();
            let seen = woke
                .as_nanos()
                .saturating_sub(waited)
                .saturating_sub(unwatched);
            *e = (*e).max(SimInstant::from_nanos(seen));
        }
    }

    /// Write into `out` every packet of direction `d` due by `now`; each write's
    /// lateness (`clock` after it, against the time it was due) is counted.
    fn deliver(
        &mut self,
        d: usize,
        now: SimInstant,
        dir: &mut ClockedDir,
        mut out: impl Write,
        clock: &impl Fn() -> SimInstant,
    ) {
        let adv = &mut self.adv;
        adv.delivered.clear();
        adv.lost.clear();
        dir.advance(now, adv);
        for id in adv.lost.drain(..) {
            self.slab.release(id);
        }
        for (k, &(due, id)) in adv.delivered.iter().enumerate() {
            // A duplicated packet (`duplicate`) is listed twice in a row: written
            // twice, its buffer released after the second write.
            let again = adv.delivered.get(k + 1).is_some_and(|n| n.1 == id);
            let buf = &self.slab.bufs[id as usize];
            match out.write(buf) {
                Ok(_) => {
                    let c = &mut self.counters[d];
                    c.delivered_packets += 1;
                    c.delivered_bytes += buf.len() as u64;
                    self.sec.bytes[d] += buf.len() as u64;
                    let late = clock().saturating_since(due).as_nanos();
                    c.late_sum_us += late / 1000;
                    c.max_late_us = c.max_late_us.max(late / 1000);
                    if late > self.late_bound_ns {
                        c.late += 1;
                    }
                }
                Err(_) => self.counters[d].write_errors += 1,
            }
            if !again {
                self.slab.release(id);
            }
        }
    }

    /// Read what the kernel sent into `inp` (bounded, so that deliveries stay on
    /// time) and queue it on direction `d`, whose deliveries go to `out`.
    ///
    /// Each packet enters the queue at the time it was read, not at the time the loop
    /// last read the clock: a packet that reached the device while the forwarder was
    /// busy or preempted would otherwise be stamped before it existed and leave the
    /// link early (a Linux RTT below the path's propagation delay). What the direction
    /// had due by that time is delivered first, so that the link model sees its
    /// events in time order (`ClockedDir::enqueue`: advance first).
    fn take(
        &mut self,
        d: usize,
        dir: &mut ClockedDir,
        mut inp: impl Read,
        mut out: impl Write,
        clock: &impl Fn() -> SimInstant,
    ) {
        for _ in 0..4096 {
            match inp.read(&mut self.scratch) {
                Ok(n) if n > 0 => {
                    let now = clock();
                    let c = &mut self.counters[d];
                    c.packets_in += 1;
                    c.bytes_in += n as u64;
                    match classify(&self.scratch[..n], self.mtu) {
                        Verdict::Ip => {}
                        Verdict::Oversize => {
                            c.oversize += 1;
                            continue;
                        }
                        Verdict::NonIp => {
                            c.non_ip += 1;
                            continue;
                        }
                        Verdict::Malformed => {
                            c.malformed += 1;
                            continue;
                        }
                    }
                    // How long it may have waited in the device (read lateness).
                    let gap = now.saturating_since(self.empty_at[d]).as_nanos();
                    c.max_read_gap_us = c.max_read_gap_us.max(gap / 1000);
                    if gap > self.late_bound_ns {
                        c.late_reads += 1;
                    }
                    // Nothing due: `advance` returns at once.
                    self.deliver(d, now, dir, &mut out, clock);
                    let id = self.slab.alloc();
                    let buf = &mut self.slab.bufs[id as usize];
                    buf.clear();
                    buf.extend_from_slice(&self.scratch[..n]);
                    if !dir.enqueue(now, id, n as u32) {
                        self.slab.release(id);
                    }
                    self.sec.queue_max[d] = self.sec.queue_max[d].max(dir.waiting(now));
                }
                Ok(_) => {
                    self.empty_at[d] = clock();
                    break;
                }
                Err(e) => {
                    if e.kind() == ErrorKind::WouldBlock {
                        self.empty_at[d] = clock();
                    } else if e.kind() != ErrorKind::Interrupted {
                        self.counters[d].read_errors += 1;
                    }
                    break;
                }
            }
        }
    }
}

fn new_second(t: u64) -> Second {
    Second {
        t,
        bytes: [0; 2],
        queue: [0; 2],
        queue_max: [0; 2],
        drops: [0; 2],
        outage_losses: [0; 2],
        down: [false; 2],
    }
}

fn second_json(s: &Second) -> Value {
    let dir = |d: usize| {
        json!({
            "delivered_bps": s.bytes[d] * 8,
            "queue_pkts": s.queue[d],
            "queue_max_pkts": s.queue_max[d],
            "drops": s.drops[d],
            "outage_losses": s.outage_losses[d],
            "down": s.down[d],
        })
    };
    json!({"t_s": s.t, "ab": dir(0), "ba": dir(1)})
}

#[cfg(test)]
mod tests {
    use super::{classify, new_second, parse_run_delay, Fwd, Slab, Verdict, BUF_LEN};
    use mobiflow_proto::time::{Duration, Instant};
    use mobiflow_sim::emu::{Advanced, ClockedDir};
    use mobiflow_sim::model::{DelayModel, DirSpec, QueueLimit, QueueSpec, RateModel};
    use std::cell::Cell;
    use std::collections::VecDeque;
    use std::io::{ErrorKind, Read, Write};

    fn fwd() -> Fwd {
        Fwd {
            slab: Slab::default(),
            counters: Default::default(),
            sec: new_second(1),
            adv: Advanced::default(),
            scratch: vec![0u8; BUF_LEN],
            late_bound_ns: 5_000_000,
            mtu: 1500,
            empty_at: [Instant::ZERO; 2],
        }
    }

    /// A TUN device seen from the forwarder: each read hands over the next packet and
    /// moves the clock on by `step` (the time the kernel took to send it, or the
    /// forwarder to come back to it); then it would block.
    struct Device<'a> {
        pkts: VecDeque<Vec<u8>>,
        clock: &'a Cell<Instant>,
        step: Duration,
    }

    impl<'a> Device<'a> {
        fn new(pkts: &[u8], clock: &'a Cell<Instant>, step: Duration) -> Self {
            Device {
                pkts: pkts.iter().map(|&k| pkt(k)).collect(),
                clock,
                step,
            }
        }
    }

    impl Read for Device<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some(p) = self.pkts.pop_front() else {
                return Err(ErrorKind::WouldBlock.into());
            };
            self.clock.set(self.clock.get() + self.step);
            buf[..p.len()].copy_from_slice(&p);
            Ok(p.len())
        }
    }

    /// The far TUN device: what is written, with the clock at the write.
    struct Sink<'a> {
        got: Vec<(Instant, u8)>,
        clock: &'a Cell<Instant>,
    }

    impl<'a> Sink<'a> {
        fn new(clock: &'a Cell<Instant>) -> Self {
            Sink {
                got: Vec::new(),
                clock,
            }
        }
    }

    /// A direction of 1.2 Gb/s (1500 B in 10 us) and `delay_ms` of propagation.
    fn link(delay_ms: u64) -> ClockedDir {
        let spec = DirSpec::new(
            RateModel::Constant(1_200_000_000),
            DelayModel::Constant(Duration::from_millis(delay_ms)),
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(100),
            },
        );
        ClockedDir::new(&spec, 0, 1, Duration::from_secs(1))
    }

    /// A 1500-byte IPv4 packet marked `k` (its last address byte).
    fn pkt(k: u8) -> Vec<u8> {
        let mut p = ipv4(1500, 1500);
        p[19] = k;
        p
    }

    impl Write for Sink<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.got.push((self.clock.get(), buf[19]));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_packet_enters_the_link_when_it_is_read_not_when_the_loop_began() {
        // 10 ms of propagation. The loop read the clock at 0; the packets it then reads
        // reached the device at 3 ms and 6 ms (it was preempted). Each must arrive
        // 10 ms + 10 us after it was read, not after the loop's clock: a link never
        // delivers a packet less than its propagation delay after it was sent.
        let mut dir = link(10);
        let clock = Cell::new(Instant::ZERO);
        let mut dev = Device::new(&[1, 2], &clock, Duration::from_millis(3));
        let mut sink = Sink::new(&clock);
        let now = || clock.get();
        let mut f = fwd();
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        // Read at 3 ms and 6 ms: due at 13.01 ms and 16.01 ms.
        let due: Vec<Instant> = std::iter::from_fn(|| {
            let t = dir.next_event()?;
            let mut adv = Advanced::default();
            dir.advance(t, &mut adv);
            Some(
                adv.delivered
                    .into_iter()
                    .map(|(t, _)| t)
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .collect();
        let us = |x: u64| Instant::from_micros(x);
        assert_eq!(due, vec![us(13_010), us(16_010)]);
    }

    #[test]
    fn what_is_due_by_a_read_is_delivered_before_the_packet_read_is_queued() {
        // Two packets read at 0 are due at 1.01 and 1.02 ms; a third is read at 5 ms,
        // when both are due: they are written out first, then the third is queued.
        let mut dir = link(1);
        let clock = Cell::new(Instant::ZERO);
        let mut dev = Device::new(&[1, 2], &clock, Duration::ZERO);
        let mut sink = Sink::new(&clock);
        let mut f = fwd();
        let now = || clock.get();
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        assert!(sink.got.is_empty());
        clock.set(Instant::from_millis(5));
        dev.pkts.push_back(pkt(3));
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        // Packets 1 and 2 (both due by 5 ms) were written when 3 was read, at 5 ms;
        // 4 ms late, under the 5 ms bound.
        assert_eq!(
            sink.got,
            vec![(Instant::from_millis(5), 1), (Instant::from_millis(5), 2)]
        );
        assert_eq!(f.counters[0].delivered_packets, 2);
        assert_eq!(f.counters[0].late, 0);
        assert_eq!(f.counters[0].max_late_us, 3_990);
        assert_eq!(dir.next_event(), Some(Instant::from_micros(6_010)));
    }

    #[test]
    fn a_packet_read_long_after_the_device_was_last_seen_empty_is_a_late_read() {
        // The device was found empty at 0; the forwarder was away (busy, preempted)
        // until 8 ms, so the packet read then may have waited 8 ms in the device: over
        // the 5 ms bound. The next, read 1 ms after the device was again found empty,
        // is on time.
        let mut dir = link(10);
        let clock = Cell::new(Instant::ZERO);
        let mut dev = Device::new(&[], &clock, Duration::ZERO);
        let mut sink = Sink::new(&clock);
        let now = || clock.get();
        let mut f = fwd();
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        clock.set(Instant::from_millis(8));
        dev.pkts.push_back(pkt(1));
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        assert_eq!(f.counters[0].late_reads, 1);
        assert_eq!(f.counters[0].max_read_gap_us, 8_000);
        clock.set(Instant::from_millis(9));
        dev.pkts.push_back(pkt(2));
        f.take(0, &mut dir, &mut dev, &mut sink, &now);
        assert_eq!(f.counters[0].late_reads, 1);
        // The other direction's device was never read.
        assert_eq!(f.counters[1].late_reads, 0);
    }

    #[test]
    fn a_wake_up_from_ppoll_bounds_read_lateness_by_the_wait_for_a_cpu() {
        let ms = Instant::from_millis;
        let us = Instant::from_micros;
        let clock = Cell::new(Instant::ZERO);
        let now = || clock.get();
        let mut dir = link(10);
        let mut sink = Sink::new(&clock);
        let read_at = |f: &mut Fwd, dir: &mut _, sink: &mut _, t: Instant| {
            clock.set(t);
            let mut dev = Device::new(&[1], &clock, Duration::ZERO);
            f.take(0, dir, &mut dev, sink, &now);
        };
        // Found empty at 0, in ppoll from 0.1 ms to 20 ms, on a CPU at once: a packet
        // read at 20.5 ms arrived after 19.9 ms (the 0.1 ms before ppoll unwatched).
        let mut f = fwd();
        f.watched(us(100), ms(20), 0);
        assert_eq!(f.empty_at, [us(19_900); 2]);
        read_at(&mut f, &mut dir, &mut sink, us(20_500));
        assert_eq!(f.counters[0].late_reads, 0);
        assert_eq!(f.counters[0].max_read_gap_us, 600);
        // The same, but the woken thread waited 7 ms for a CPU: the packet that woke it
        // may have arrived at 12.9 ms, 7.6 ms before it was read.
        let mut f = fwd();
        f.watched(us(100), ms(20), 7_000_000);
        read_at(&mut f, &mut dir, &mut sink, us(20_500));
        assert_eq!(f.counters[0].late_reads, 1);
        assert_eq!(f.counters[0].max_read_gap_us, 7_600);
        // A wake-up never moves the bound back.
        let mut f = fwd();
        f.empty_at = [ms(30); 2];
        f.watched(ms(30), ms(31), 5_000_000);
        assert_eq!(f.empty_at, [ms(30); 2]);
    }

    #[test]
    fn the_run_queue_wait_is_the_second_field_of_schedstat() {
        assert_eq!(parse_run_delay(b"765333 86277 1\n"), Some(86_277));
        assert_eq!(parse_run_delay(b""), None);
        assert_eq!(parse_run_delay(b"12"), None);
    }

    fn ipv4(total: u16, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p
    }

    #[test]
    fn well_formed_ip_packets_pass() {
        assert_eq!(classify(&ipv4(60, 60), 1500), Verdict::Ip);
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[4..6].copy_from_slice(&8u16.to_be_bytes());
        assert_eq!(classify(&v6, 1500), Verdict::Ip);
    }

    #[test]
    fn junk_is_sorted_not_forwarded() {
        assert_eq!(classify(&[], 1500), Verdict::Malformed);
        assert_eq!(classify(&[0x00, 1, 2, 3], 1500), Verdict::NonIp);
        assert_eq!(classify(&[0xff; 100], 1500), Verdict::NonIp);
        // Truncated, a header length below 20 bytes, a total length beyond the data.
        assert_eq!(classify(&[0x45, 0, 0], 1500), Verdict::Malformed);
        let mut short_ihl = ipv4(40, 40);
        short_ihl[0] = 0x44;
        assert_eq!(classify(&short_ihl, 1500), Verdict::Malformed);
        assert_eq!(classify(&ipv4(1000, 40), 1500), Verdict::Malformed);
        assert_eq!(classify(&ipv4(10, 40), 1500), Verdict::Malformed);
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[4..6].copy_from_slice(&100u16.to_be_bytes());
        assert_eq!(classify(&v6, 1500), Verdict::Malformed);
        assert_eq!(classify(&[0x60; 20], 1500), Verdict::Malformed);
    }

    #[test]
    fn packets_beyond_the_mtu_are_oversize() {
        assert_eq!(classify(&ipv4(4000, 4000), 1500), Verdict::Oversize);
    }
}
