//! One link direction driven by an outside clock, for real-time emulation
//! (`mobiflow-live`).
//!
//! The simulator's event loop drives a [`LinkDir`] (the sans-IO machine of a link
//! direction: queue, rate and delay schedules, outages, Mahimahi delivery
//! opportunities, arrivals at the far end) by scheduling the timers it asks for in its
//! event queue. [`ClockedDir`] wraps the same machine with a queue of its own for those
//! timers (ordered as the simulator orders them: by time, then by the order they were
//! asked for) and plays every timer that is due whenever its owner calls
//! [`ClockedDir::advance`] with the current time, so a real-time forwarder applies
//! exactly the simulator's link model: one implementation serves both.

use crate::engine::ids::{DirId, NodeId};
use crate::engine::link::{Admit, DirStats, PktId};
use crate::engine::linkdir::{LinkDir, LinkTimer};
use crate::engine::splitmix;
use crate::model::DirSpec;
use mobiflow_proto::time::{Duration, Instant};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A link direction and its pending timers, advanced by an outside clock.
#[derive(Debug)]
pub struct ClockedDir {
    dir: LinkDir,
    timers: Timers,
}

/// Pending timers by (time, order asked): the simulator's tie rule.
#[derive(Debug, Default)]
struct Timers {
    heap: BinaryHeap<Reverse<(Instant, u64, LinkTimer)>>,
    seq: u64,
}

impl Timers {
    fn push(&mut self, t: Instant, timer: LinkTimer) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, timer)));
    }
}

/// What `advance` did.
#[derive(Debug, Default)]
pub struct Advanced {
    /// Packets that reached the far end, with the time they were due there (a
    /// duplicated packet twice, one after the other).
    pub delivered: Vec<(Instant, PktId)>,
    /// Packets lost to an outage (queued, in service or propagating when it began).
    pub lost: Vec<PktId>,
}

impl ClockedDir {
    /// Direction `index` (`2 * link + 0` for a -> b, `+ 1` for b -> a) of a scenario
    /// seeded with `seed`; its random streams are the ones the engine would use.
    /// Schedule changes and outages are played up to `horizon`; after it the link
    /// keeps its last state.
    pub fn new(spec: &DirSpec, index: usize, seed: u64, horizon: Duration) -> ClockedDir {
        let rng = Xoshiro256PlusPlus::seed_from_u64(splitmix(seed ^ splitmix(index as u64 + 1)));
        let mut d = ClockedDir {
            dir: LinkDir::new(DirId::new(index), NodeId(0), NodeId(1), spec, rng, horizon),
            timers: Timers::default(),
        };
        d.dir.start(&mut |t, timer| d.timers.push(t, timer));
        d
    }

    /// A packet of `bytes` arrives at the queue at `now` (call `advance(now)` first).
    /// Returns false if it was dropped (queue full, RED, the link is down, or the
    /// direction's random loss took it).
    pub fn enqueue(&mut self, now: Instant, id: PktId, bytes: u32) -> bool {
        let timers = &mut self.timers;
        let admit = self
            .dir
            .handle_packet(now, now, id, bytes, &mut |t, timer| timers.push(t, timer));
        matches!(admit, Admit::Scheduled(_) | Admit::Queued)
    }

    /// The earliest pending timer (a packet reaches the far end, an opportunity, a
    /// schedule change), if any. It may be a stale one that does nothing.
    pub fn next_event(&self) -> Option<Instant> {
        self.timers.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Play every timer due at or before `now`, in the simulator's order, appending
    /// what reached the far end and what an outage destroyed to `out`.
    pub fn advance(&mut self, now: Instant, out: &mut Advanced) {
        while let Some(&Reverse((t, _, timer))) = self.timers.heap.peek() {
            if t > now {
                break;
            }
            self.timers.heap.pop();
            let timers = &mut self.timers;
            let arrived = self
                .dir
                .handle_timeout(t, timer, &mut out.lost, &mut |t, timer| {
                    timers.push(t, timer)
                });
            if let Some((id, dup)) = arrived {
                out.delivered.push((t, id));
                if dup {
                    // `duplicate`: the far end gets the packet twice.
                    out.delivered.push((t, id));
                }
            }
        }
        self.dir.advance(now);
    }

    /// Packets waiting at `now` (not the one being serialised).
    pub fn waiting(&self, now: Instant) -> usize {
        self.dir.dir().waiting(now)
    }

    /// Packets on their way to the far end (serialised, propagating).
    pub fn in_pipe(&self) -> usize {
        self.dir.dir().in_pipe()
    }

    pub fn is_down(&self) -> bool {
        self.dir.dir().is_down()
    }

    /// Current serialisation rate (the trace's mean in trace mode).
    pub fn rate_bps(&self) -> u64 {
        self.dir.dir().rate_bps()
    }

    pub fn delay(&self) -> Duration {
        self.dir.dir().delay()
    }

    pub fn stats(&self) -> DirStats {
        self.dir.dir().stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DelayModel, MahimahiTrace, QueueLimit, QueueSpec, RateModel};
    use std::sync::Arc;

    fn spec(rate: RateModel, delay_ms: u64, limit: u32) -> DirSpec {
        DirSpec::new(
            rate,
            DelayModel::Constant(Duration::from_millis(delay_ms)),
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(limit),
            },
        )
    }

    fn run_until(d: &mut ClockedDir, t: Instant) -> Advanced {
        let mut out = Advanced::default();
        d.advance(t, &mut out);
        out
    }

    #[test]
    fn constant_rate_serialises_then_delays() {
        // 1500 B at 12 Mb/s = 1 ms each; 10 ms of propagation.
        let s = spec(RateModel::Constant(12_000_000), 10, 100);
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        for i in 0..3 {
            assert!(d.enqueue(Instant::ZERO, i, 1500));
        }
        assert_eq!(d.next_event(), Some(Instant::from_millis(11)));
        let out = run_until(&mut d, Instant::from_millis(12));
        assert_eq!(
            out.delivered,
            vec![(Instant::from_millis(11), 0), (Instant::from_millis(12), 1)]
        );
        let out = run_until(&mut d, Instant::from_millis(20));
        assert_eq!(out.delivered, vec![(Instant::from_millis(13), 2)]);
        assert_eq!(d.stats().packets_sent, 3);
    }

    #[test]
    fn drop_tail_limit_and_outage() {
        let mut s = spec(RateModel::Constant(12_000_000), 10, 2);
        s.outages = vec![(Duration::from_millis(50), Duration::from_millis(60))];
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        // One in service, two waiting, the fourth is dropped.
        let admitted: Vec<bool> = (0..4).map(|i| d.enqueue(Instant::ZERO, i, 1500)).collect();
        assert_eq!(admitted, vec![true, true, true, false]);
        assert_eq!(d.stats().drops, 1);
        // At 49.5 ms a packet is propagating; the outage at 50 ms destroys it.
        run_until(&mut d, Instant::from_micros(49_500));
        assert!(d.enqueue(Instant::from_micros(49_500), 9, 1500));
        let out = run_until(&mut d, Instant::from_millis(55));
        assert_eq!(out.lost, vec![9]);
        assert!(d.is_down());
        assert!(!d.enqueue(Instant::from_millis(55), 10, 1500));
        run_until(&mut d, Instant::from_millis(60));
        assert!(!d.is_down());
        assert!(d.enqueue(Instant::from_millis(60), 11, 1500));
        let out = run_until(&mut d, Instant::from_millis(100));
        assert_eq!(out.delivered, vec![(Instant::from_millis(71), 11)]);
    }

    #[test]
    fn rate_schedule_changes_the_departures_of_waiting_packets() {
        let s = spec(
            RateModel::Schedule {
                points: vec![
                    (Duration::ZERO, 12_000_000),
                    (Duration::from_millis(1), 1_200_000),
                ],
                period: None,
            },
            0,
            100,
        );
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        for i in 0..3 {
            d.enqueue(Instant::ZERO, i, 1500);
        }
        // Two leave at 12 Mb/s (the second is in service when the rate drops at 1 ms
        // and finishes as planned); the third then takes 10 ms.
        let out = run_until(&mut d, Instant::from_millis(20));
        assert_eq!(
            out.delivered,
            vec![
                (Instant::from_millis(1), 0),
                (Instant::from_millis(2), 1),
                (Instant::from_millis(12), 2)
            ]
        );
    }

    #[test]
    fn trace_delivers_at_opportunities() {
        let t = Arc::new(MahimahiTrace {
            path: "x".into(),
            opportunities_ms: vec![2, 2, 7, 10],
            period_ms: 10,
            mtu: 1500,
        });
        let s = spec(RateModel::Trace(t), 5, 100);
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        for i in 0..4 {
            d.enqueue(Instant::ZERO, i, 1500);
        }
        assert_eq!(d.next_event(), Some(Instant::from_millis(2)));
        let out = run_until(&mut d, Instant::from_millis(30));
        let times: Vec<u64> = out
            .delivered
            .iter()
            .map(|(t, _)| t.as_nanos() / 1_000_000)
            .collect();
        assert_eq!(times, vec![7, 7, 12, 15]);
        assert_eq!(d.next_event(), None);
    }

    /// The live emulator honours a delay drop's reordering and `duplicate` as the
    /// simulator does: a duplicated packet is listed twice, one after the other.
    #[test]
    fn delay_drop_reorders_and_a_duplicated_packet_is_delivered_twice() {
        let s = DirSpec {
            delay: DelayModel::Schedule {
                points: vec![
                    (Duration::ZERO, Duration::from_millis(100)),
                    (Duration::from_millis(5), Duration::from_millis(10)),
                ],
                period: None,
            },
            ..spec(RateModel::Constant(12_000_000), 0, 100)
        };
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        d.enqueue(Instant::ZERO, 0, 1500);
        run_until(&mut d, Instant::from_millis(6));
        d.enqueue(Instant::from_millis(6), 1, 1500);
        let out = run_until(&mut d, Instant::from_millis(200));
        let ids: Vec<PktId> = out.delivered.iter().map(|x| x.1).collect();
        assert_eq!(ids, vec![1, 0]);
        assert_eq!(d.stats().reordered, 1);

        let s = DirSpec {
            duplicate: 0.5,
            ..spec(RateModel::Constant(12_000_000), 1, 100)
        };
        let mut d = ClockedDir::new(&s, 0, 1, Duration::from_secs(1));
        for i in 0..100 {
            d.enqueue(Instant::from_millis(i as u64), i, 1500);
        }
        let out = run_until(&mut d, Instant::from_secs(1));
        let dups = d.stats().duplicated as usize;
        assert!(dups > 20, "{dups}");
        assert_eq!(out.delivered.len(), 100 + dups);
        let twice = out
            .delivered
            .windows(2)
            .filter(|w| w[0].1 == w[1].1)
            .count();
        assert_eq!(twice, dups);
    }
}
