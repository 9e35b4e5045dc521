//! A link direction that owns its timeline: the sans-IO machine both the simulator's
//! event loop and the live emulator (`crate::emu::ClockedDir`) drive.
//!
//! [`Dir`] (`link.rs`) is the direction's state at one instant: the queue, the
//! serialiser and the propagation pipe. [`LinkDir`] adds everything that happens to it
//! over time: its rate and delay schedules, its outages, the Mahimahi delivery
//! opportunities while packets wait, and the arrival of the pipe's head at the far end.
//! It never reads a clock and never schedules anything itself: it asks for timers.
//!
//! * [`LinkDir::start`]: the timers of its schedules and outages, once.
//! * [`LinkDir::handle_packet`]: a packet reaches the queue.
//! * [`LinkDir::handle_timeout`]: a timer it asked for is due.
//! * [`LinkDir::arrival`]: the arrival timer, which `handle_timeout` runs through it;
//!   the simulator calls it directly, as it is due for every packet on every hop.
//!
//! Each takes a `timers` sink, `FnMut(Instant, LinkTimer)`, through which the machine
//! asks for timers: the owner schedules each at its time and hands it back to
//! `handle_timeout` then (the simulator puts them in its event queue, the live
//! emulator in a queue of its own). A sink rather than a queue to poll, so that the
//! per-packet path stores nothing; statically dispatched. The order of the requests
//! matters: the simulator breaks ties between events of the same instant by insertion
//! order, and the machine asks in the order the engine scheduled the link events of
//! its earlier versions (which keeps every number of a run).
//!
//! A timer may be stale when it comes back (the pipe's head changed under it): the
//! machine recognises and ignores it.

use super::ids::{DirId, NodeId};
use super::link::{schedule_at, schedule_changes, Admit, Dir, Lean, PktId};
use crate::model::{DelayModel, DirSpec, RateModel};
use mobiflow_proto::time::{Duration, Instant};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a link direction's timer is for (ordered only so that owners can keep timers
/// in ordered containers; ties are broken by the order they were asked for).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkTimer {
    /// The head of the pipe reaches the far end (tagged with the pipe's generation:
    /// a timer of an older generation is stale).
    Arrive(u32),
    /// A Mahimahi delivery opportunity (trace mode, while packets wait).
    Opportunity,
    /// The rate schedule moves to its next value.
    Rate,
    /// The delay schedule moves to its next value.
    Delay,
    /// An outage starts: everything queued, in service or propagating is lost.
    Down,
    /// An outage ends.
    Up,
}

/// A packet that reached the far end of a direction ([`LinkDir::arrival`]).
#[derive(Copy, Clone, Debug)]
pub struct Arrival {
    pub id: PktId,
    /// It arrives twice (`duplicate`).
    pub dup: bool,
    /// When its transmission started: when ns-2's `LinkDelay::recv` scheduled its
    /// arrival (the origin of what it makes arrive next, `Dir::enqueue_from`).
    pub sent: Instant,
    /// When the pipe's next head arrives (the timer to arm, of the same generation).
    pub next: Option<Instant>,
    /// The packet of that next head where a lean pipe knows it (else this packet's):
    /// its slot in the slab is read ahead (`Net::read_ahead`).
    pub ahead: PktId,
}

/// A piecewise schedule: its points and its period.
type Schedule<T> = (Vec<(Duration, T)>, Option<Duration>);

/// One link direction and its timeline.
#[derive(Debug)]
pub struct LinkDir {
    dir: Dir,
    /// The schedules, when the rate or the delay follows one.
    rate: Option<Schedule<u64>>,
    delay: Option<Schedule<Duration>>,
    /// The times of the rate changes, delay changes and outages (start, end) up to
    /// the horizon, for `start`.
    changes: Vec<(Instant, LinkTimer)>,
    /// An opportunity timer is pending (trace mode).
    opp_pending: bool,
}

impl LinkDir {
    /// Direction `index` (`DirId::of(link, k)`) from node `from` to node `to`, drawing its randomness from `rng`; its schedule changes and
    /// outages are played up to `horizon` (after it the link keeps its last state).
    pub fn new(
        index: DirId,
        from: NodeId,
        to: NodeId,
        spec: &DirSpec,
        rng: Xoshiro256PlusPlus,
        horizon: Duration,
    ) -> LinkDir {
        let mut changes = Vec::new();
        let rate = match &spec.rate {
            RateModel::Schedule { points, period } => {
                for t in schedule_changes(points, *period, horizon) {
                    changes.push((Instant::ZERO + t, LinkTimer::Rate));
                }
                Some((points.clone(), *period))
            }
            _ => None,
        };
        let delay = match &spec.delay {
            DelayModel::Schedule { points, period } => {
                for t in schedule_changes(points, *period, horizon) {
                    changes.push((Instant::ZERO + t, LinkTimer::Delay));
                }
                Some((points.clone(), *period))
            }
            DelayModel::Constant(_) => None,
        };
        for &(s, e) in &spec.outages {
            changes.push((Instant::ZERO + s, LinkTimer::Down));
            changes.push((Instant::ZERO + e, LinkTimer::Up));
        }
        LinkDir {
            dir: Dir::new(index, from, to, spec, rng),
            rate,
            delay,
            changes,
            opp_pending: false,
        }
    }

    /// The direction's state (queue, pipe, rate, delay, counters).
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Retire what finished serialisation by `now` (before reading the queue).
    pub fn advance(&mut self, now: Instant) {
        self.dir.advance(now);
    }

    /// Ask for the timers of the schedule changes and outages: the rate changes,
    /// then the delay changes, then each outage's start and end (the order the engine
    /// always scheduled them in).
    pub fn start(&mut self, timers: &mut impl FnMut(Instant, LinkTimer)) {
        for &(t, timer) in &self.changes {
            timers(t, timer);
        }
    }

    /// A packet of `bytes` reaches the queue at `now`, from an event scheduled at
    /// `origin` (`Dir::enqueue_from`; `now` for a packet from outside the simulator).
    #[inline]
    pub fn handle_packet(
        &mut self,
        now: Instant,
        origin: Instant,
        id: PktId,
        bytes: u32,
        timers: &mut impl FnMut(Instant, LinkTimer),
    ) -> Admit {
        let admit = self.dir.enqueue_from(now, origin, id, bytes);
        match admit {
            Admit::Scheduled(true) => self.arm_pipe(timers),
            Admit::Queued => self.arm_opportunity(now, timers),
            Admit::Scheduled(false) | Admit::Dropped | Admit::Lost => {}
        }
        admit
    }

    /// `handle_packet` of a lean direction (`Dir::enqueue_lean`), whose owner asks
    /// for the arrival timer itself (`Lean::Head`); `Lean::General` (nothing done)
    /// if the direction is not lean. The simulator's path for every packet on every
    /// hop.
    #[inline(always)]
    pub fn handle_lean(&mut self, now: Instant, origin: Instant, id: PktId, bytes: u32) -> Lean {
        self.dir.enqueue_lean(now, origin, id, bytes)
    }

    /// The arrival timer of generation `gen` is due: the pipe's head reaches the far
    /// end. `None` if the timer is stale (the pipe changed under it: outage,
    /// reschedule). The engine runs this timer itself (`World::dispatch`), the one
    /// due for every packet on every hop; [`LinkDir::handle_timeout`] the others.
    #[inline(always)]
    pub fn arrival(&mut self, gen: u32) -> Option<Arrival> {
        if self.dir.is_lean() {
            // No timer of a lean direction is stale: the generation changes only when
            // the pipe changes other than by delivery, which leaves lean for good, and
            // a lean pipe has one timer at a time (armed for a new head, or by the
            // arrival of the one before).
            debug_assert_eq!(self.dir.pipe_gen, gen);
            return self.dir.pop_lean();
        }
        if self.dir.pipe_gen != gen {
            return None;
        }
        let (p, dup) = self.dir.pop_arrival()?;
        Some(Arrival {
            id: p.id,
            dup,
            sent: p.sent,
            next: self.dir.next_arrival(),
            ahead: p.id,
        })
    }

    /// A timer is due at `now`. Returns the packet that reached the far end, if any,
    /// and whether it arrives twice (`duplicate`); an outage's start appends what it
    /// destroyed to `lost`.
    #[inline]
    pub fn handle_timeout(
        &mut self,
        now: Instant,
        timer: LinkTimer,
        lost: &mut Vec<PktId>,
        timers: &mut impl FnMut(Instant, LinkTimer),
    ) -> Option<(PktId, bool)> {
        match timer {
            LinkTimer::Arrive(gen) => {
                let a = self.arrival(gen)?;
                if let Some(next) = a.next {
                    timers(next, LinkTimer::Arrive(gen));
                }
                return Some((a.id, a.dup));
            }
            LinkTimer::Opportunity => {
                self.opp_pending = false;
                let count = self
                    .dir
                    .trace
                    .as_ref()
                    .and_then(|t| t.next_opportunity(now))
                    .filter(|(t, _)| *t == now)
                    .map_or(0, |(_, c)| c);
                if self.dir.use_opportunities(now, count) {
                    self.arm_pipe(timers);
                }
                self.arm_opportunity(now, timers);
            }
            LinkTimer::Rate => {
                if let Some((points, period)) = &self.rate {
                    self.dir
                        .set_rate(schedule_at(points, *period, now - Instant::ZERO));
                    if self.dir.reschedule(now) {
                        self.arm_pipe(timers);
                    }
                }
            }
            LinkTimer::Delay => {
                if let Some((points, period)) = &self.delay {
                    self.dir
                        .set_delay(schedule_at(points, *period, now - Instant::ZERO));
                    if self.dir.reschedule(now) {
                        self.arm_pipe(timers);
                    }
                }
            }
            LinkTimer::Down => self.dir.go_down(now, lost),
            LinkTimer::Up => {
                self.dir.go_up(now);
                self.arm_opportunity(now, timers);
            }
        }
        None
    }

    /// Count what finished serialisation by the end of the run.
    pub fn close(&mut self, now: Instant) {
        self.dir.close(now);
    }

    /// Ask for the arrival of the pipe's head.
    fn arm_pipe(&mut self, timers: &mut impl FnMut(Instant, LinkTimer)) {
        if let Some(t) = self.dir.next_arrival() {
            timers(t, LinkTimer::Arrive(self.dir.pipe_gen));
        }
    }

    /// Trace mode: make sure an opportunity timer is pending while packets wait.
    fn arm_opportunity(&mut self, now: Instant, timers: &mut impl FnMut(Instant, LinkTimer)) {
        let d = &self.dir;
        if d.trace.is_some() && !self.opp_pending && !d.is_down() && !d.queue.is_empty() {
            if let Some((t, _)) = d.trace.as_ref().and_then(|t| t.next_opportunity(now)) {
                self.opp_pending = true;
                timers(t, LinkTimer::Opportunity);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{QueueLimit, QueueSpec};
    use rand_core::SeedableRng;

    fn spec() -> DirSpec {
        let ms = Duration::from_millis;
        DirSpec {
            outages: vec![(ms(20), ms(25))],
            ..DirSpec::new(
                RateModel::Schedule {
                    points: vec![(Duration::ZERO, 8_000_000), (ms(30), 4_000_000)],
                    period: None,
                },
                DelayModel::Schedule {
                    points: vec![(Duration::ZERO, ms(10)), (ms(20), ms(5))],
                    period: None,
                },
                QueueSpec::DropTail {
                    limit: QueueLimit::Packets(10),
                },
            )
        }
    }

    fn dir() -> LinkDir {
        let rng = Xoshiro256PlusPlus::seed_from_u64(1);
        LinkDir::new(
            DirId(0),
            NodeId(0),
            NodeId(1),
            &spec(),
            rng,
            Duration::from_secs(1),
        )
    }

    /// The simulator breaks ties by insertion order, so the order in which a direction
    /// asks for its timers is part of every result: rate changes, then delay changes,
    /// then each outage's start and end (the engine's order before the link owned its
    /// timeline). Here the delay change and the outage share 20 ms.
    #[test]
    fn a_direction_asks_for_its_schedule_timers_rate_then_delay_then_outages() {
        let mut asked = Vec::new();
        dir().start(&mut |t, timer| asked.push((t.as_nanos() / 1_000_000, timer)));
        assert_eq!(
            asked,
            vec![
                (30, LinkTimer::Rate),
                (20, LinkTimer::Delay),
                (20, LinkTimer::Down),
                (25, LinkTimer::Up),
            ]
        );
    }

    /// A packet asks for its arrival; an outage makes that timer stale (it returns
    /// nothing) and hands the packet back as lost.
    #[test]
    fn an_outage_loses_the_packet_in_flight_and_its_arrival_timer_goes_stale() {
        let mut d = dir();
        let mut asked = Vec::new();
        let t0 = Instant::from_millis(19);
        d.handle_packet(t0, t0, 7, 1000, &mut |t, timer| asked.push((t, timer)));
        // 1000 B at 8 Mb/s = 1 ms, then 10 ms of delay.
        assert_eq!(
            asked,
            vec![(Instant::from_millis(30), LinkTimer::Arrive(0))]
        );
        let mut lost = Vec::new();
        let none = &mut |_: Instant, _: LinkTimer| panic!("no timer expected");
        assert_eq!(
            d.handle_timeout(Instant::from_millis(20), LinkTimer::Down, &mut lost, none),
            None
        );
        assert_eq!(lost, vec![7]);
        let arrive = LinkTimer::Arrive(0);
        assert_eq!(
            d.handle_timeout(Instant::from_millis(30), arrive, &mut lost, none),
            None
        );
    }
}
