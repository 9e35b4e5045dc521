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
    pub counters: [DirCounters; 2],
    pub seconds: Vec<Value>,
    pub elapsed: StdDuration,
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
    let mut slab = Slab::default();
    let mut counters: [DirCounters; 2] = Default::default();
    let mut seconds: Vec<Value> = Vec::new();
    let mut sec = new_second(1);
    let mut prev_stats = [(0u64, 0u64); 2];
    let late_bound_ns = opts.late_bound.as_nanos() as u64;
    let mtu = opts.mtu;
    let mut scratch = vec![0u8; BUF_LEN];
    let mut ready = Vec::with_capacity(2);
    let mut adv = Advanced::default();
    let max_wait = SimInstant::from_millis(5).as_nanos();
    loop {
        let now = sim_now(t0);
        // 1. Everything due by now: deliveries into the far namespace.
        for d in 0..2 {
            adv.delivered.clear();
            adv.lost.clear();
            dirs[d].advance(now, &mut adv);
            for id in adv.lost.drain(..) {
                slab.release(id);
            }
            if adv.delivered.is_empty() {
                continue;
            }
            let mut out = tuns[1 - d];
            for (k, &(due, id)) in adv.delivered.iter().enumerate() {
                // A duplicated packet (`duplicate`) is listed twice in a row: written
                // twice, its buffer released after the second write.
                let again = adv.delivered.get(k + 1).is_some_and(|n| n.1 == id);
                let buf = &slab.bufs[id as usize];
                match out.write(buf) {
                    Ok(_) => {
                        let c = &mut counters[d];
                        c.delivered_packets += 1;
                        c.delivered_bytes += buf.len() as u64;
                        sec.bytes[d] += buf.len() as u64;
                        let late = sim_now(t0).saturating_since(due).as_nanos();
                        c.late_sum_us += late / 1000;
                        c.max_late_us = c.max_late_us.max(late / 1000);
                        if late > late_bound_ns {
                            c.late += 1;
                        }
                    }
                    Err(_) => counters[d].write_errors += 1,
                }
                if !again {
                    slab.release(id);
                }
            }
        }
        // 2. What the kernels sent: into the queues.
        for d in 0..2 {
            let mut inp = tuns[d];
            // Drain the device (bounded, so that deliveries stay on time).
            for _ in 0..4096 {
                match inp.read(&mut scratch) {
                    Ok(n) if n > 0 => {
                        let c = &mut counters[d];
                        c.packets_in += 1;
                        c.bytes_in += n as u64;
                        match classify(&scratch[..n], mtu) {
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
                        let id = slab.alloc();
                        let buf = &mut slab.bufs[id as usize];
                        buf.clear();
                        buf.extend_from_slice(&scratch[..n]);
                        if !dirs[d].enqueue(now, id, n as u32) {
                            slab.release(id);
                        }
                        sec.queue_max[d] = sec.queue_max[d].max(dirs[d].waiting(now));
                    }
                    Ok(_) => break,
                    Err(e) => {
                        if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
                            counters[d].read_errors += 1;
                        }
                        break;
                    }
                }
            }
        }
        // 3. The per-second report.
        let now = sim_now(t0);
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
            seconds.push(second_json(&sec));
            sec = new_second(sec.t + 1);
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
        let now = sim_now(t0).as_nanos();
        let mut wake = (sec.t * 1_000_000_000).min(now + max_wait);
        for d in dirs.iter() {
            if let Some(t) = d.next_event() {
                wake = wake.min(t.as_nanos());
            }
        }
        let timeout = StdDuration::from_nanos(wake.saturating_sub(now));
        if !timeout.is_zero() {
            sys::wait_readable(&tuns, timeout, &mut ready)?;
        }
    }
    Ok(Outcome {
        realtime,
        counters,
        seconds,
        elapsed: t0.elapsed(),
    })
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
    use super::{classify, Verdict};

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
