//! RSFC: Receiver-Side Flow Control (Xu, Leong, Leong, Razeen, "Dynamic Regulation of
//! Mobile 3G/HSPA Uplink Buffer with Receiver-side Flow Control", IEEE ICNP 2012).
//! Read the paper's slides first.
//!
//! A phone's upload fills the deep uplink buffer of its modem; the ACKs of a
//! concurrent download wait behind it. RSFC runs at the TCP *receiver* of the upload
//! (a server or an ISP proxy) and keeps that buffer short through the receive window
//! alone, by negative feedback on the time a segment spends in the buffer, `t_buff`:
//!
//! ```text
//!   t_buff > T   FAST state: rwnd ← ρ × RTT_min          ([SLIDE], T = RTT_min)
//!   t_buff ≤ T   SLOW state: rwnd ← rwnd + 1 MSS          ([SLIDE] "rwnd++")
//! ```
//!
//! with `ρ` the measured receive rate and `RTT_min` the minimum RTT. The slides add a
//! MONITOR state and a check of ρ for changes of the network ("see details in paper");
//! the paper was not readable, so what follows marks each unknown *assumed* and makes
//! it a parameter of [`RsfcConfig`].
//!
//! ## t_buff from timestamps, without clock synchronisation ([SLIDE]; method assumed)
//!
//! Two estimators ([`Estimator`]):
//!
//! * `owd`, one-way-delay variation. For data segment i, `d_i = t_arr_i − g·TSval_i`
//!   with `t_arr` the local arrival time and `g` the phone's timestamp tick;
//!   `t_buff = d_i − min d_j` over `rtt_min_window`. The unknown clock offset cancels.
//!   `g` is configured (`ts_tick`) or estimated as (arrival span)/(TSval span) from the
//!   first data segment, once the arrivals span at least [`TICK_SPAN`], and snapped to
//!   the nearest (in the log domain) of the usual ticks, 1, 4 and 10 ms
//!   ([`TICK_CANDIDATES`]) unless it is more than a factor of 2 from all of them.
//!   The estimate is refined with every segment (the span grows, the bias from queue
//!   changes shrinks). The quantisation error of `t_buff` is below one tick.
//! * `echo`, the receiver's RTT. A data segment echoes (TSecr) the TSval of the last
//!   ACK the phone had received when it built the segment, so
//!   `r = t_arr − (time of our TSval = TSecr)` spans ACK path, phone, uplink queue and
//!   uplink; `t_buff = r − RTT_min`. Only our own clock is involved.
//!
//! `RTT_min` is the minimum of the echo samples `r` over `rtt_min_window` (assumed
//! 10 s), whatever the estimator, so that a handover that changes the base RTT is
//! tracked. `T = threshold_factor × RTT_min` (factor 1 [SLIDE]).
//!
//! ## ρ
//!
//! Payload bytes arrived in the last `rho_window` (assumed 500 ms; `None`: one
//! `RTT_min`) divided by the window, available once data has been arriving for a
//! whole window.
//!
//! ## States (evaluated at every arriving data segment)
//!
//! * SLOW (initial): if `t_buff > T` and ρ is known, clamp (below). Else grow `rwnd`
//!   by one MSS per RTT (`growth = per_rtt`, assumed default) or per data segment
//!   (`per_ack`). One RTT is the receiver's RTT estimate, at least `RTT_min`.
//! * A clamp sets `rwnd = max(ρ × RTT_min, 2 MSS)`; then, with `monitor` on,
//!   MONITOR, else FAST. A clamp from SLOW starts an episode and records ρ for the
//!   ρ check (assumed: the reference is the episode's first clamp, not the last one).
//! * MONITOR (assumed): hold `rwnd` for one RTT while ρ and `t_buff` are re-measured.
//!   Then: to SLOW if `rho_check` is on and ρ rose by more than `rho_rise` (assumed
//!   10 %) since the episode's first clamp (more capacity than the clamp assumed); else clamp again
//!   (FAST with the new ρ) if `t_buff > T`; else SLOW.
//! * A large delay increase (the slides: "large increase: monitor state"; assumed
//!   form): a clamped window drains a real queue within a hold (or, if the rate fell,
//!   the queue still grows), so when `rebase_after` (assumed 2) holds in a row end
//!   with `t_buff` above T and within a tenth of its value at the clamp, while the
//!   clamped window was in force (no larger offer made before it still outstanding),
//!   the "queue" is taken for a longer path: RTT_min and
//!   min d restart from the current samples (t_buff = 0) and RSFC goes to SLOW.
//!   Without this, the new base delay counts as queueing until `rtt_min_window` has
//!   passed, and each clamp to ρ × the old RTT_min lowers ρ further.
//! * FAST (only with `monitor` off): clamp again at every segment while `t_buff > T`
//!   (no hold), to SLOW when `t_buff ≤ T` or (with `rho_check`) ρ rose by more than
//!   `rho_rise`.
//!
//! `rwnd` starts at `initial_rwnd` segments (assumed 10, Linux's initial receive
//! window; or the whole receive buffer), never exceeds the buffer and never falls
//! below 2 MSS.
//! The window advertised is `min(rwnd, free space)`. The right edge never moves back
//! ([`RwndPolicy::allow_shrink`] is false, the receiver enforces it): a clamp takes
//! effect as `rcv_nxt` catches up with the edge already offered (RFC 9293 §3.8.6.2.2).

use super::{RcvState, RwndPolicy};
use crate::time::{Duration, Instant};
use crate::wire::Segment;
use std::collections::VecDeque;

/// The usual TSval ticks the `owd` estimator snaps its estimate to.
pub const TICK_CANDIDATES: [Duration; 3] = [
    Duration::from_millis(1),
    Duration::from_millis(4),
    Duration::from_millis(10),
];
/// Arrival span after which the `owd` estimator first estimates the peer's tick.
pub const TICK_SPAN: Duration = Duration::from_secs(1);

crate::named_enum! {
    /// How `t_buff` is estimated (see the module documentation).
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum Estimator ("estimator") {
        /// One-way-delay variation from the phone's TSval.
        Owd = "owd",
        /// The receiver's RTT from the echo of its own TSval.
        Echo = "echo",
    }
}

crate::named_enum! {
    /// How the SLOW state grows `rwnd`.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum Growth ("growth") {
        /// One MSS per RTT.
        PerRtt = "per_rtt",
        /// One MSS per data segment received.
        PerAck = "per_ack",
    }
}

/// RSFC's control state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RsfcState {
    Slow,
    Fast,
    Monitor,
}

impl RsfcState {
    /// The code traced in the `policy_state` series: 0 SLOW, 1 FAST, 2 MONITOR.
    pub fn code(self) -> u8 {
        match self {
            RsfcState::Slow => 0,
            RsfcState::Fast => 1,
            RsfcState::Monitor => 2,
        }
    }
}

/// Parameters of RSFC. The defaults other than `threshold_factor`, `monitor` and
/// `rho_check` are assumptions (the seed gives none), see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct RsfcConfig {
    /// t_buff estimator (assumed `Owd`).
    pub estimator: Estimator,
    /// The phone's TSval tick for the `owd` estimator; `None`: estimated (assumed).
    pub ts_tick: Option<Duration>,
    /// Window of the receive-rate measurement; `None`: one RTT_min (assumed 500 ms).
    pub rho_window: Option<Duration>,
    /// Window of the RTT_min (and min d) measurement (assumed 10 s).
    pub rtt_min_window: Duration,
    /// `T = threshold_factor × RTT_min` (1 [SLIDE]).
    pub threshold_factor: f64,
    /// SLOW-state growth (assumed `PerRtt`).
    pub growth: Growth,
    /// Hold the clamped window for one RTT (MONITOR state).
    pub monitor: bool,
    /// Leave FAST/MONITOR for SLOW when ρ rises by more than `rho_rise`.
    pub rho_check: bool,
    /// Relative rise of ρ that counts (assumed 0.1).
    pub rho_rise: f64,
    /// The first window, in segments; `None`: the whole receive buffer. Assumed 10,
    /// the initial receive window of Linux since 3.0 (RFC 6928's IW10 on the receive
    /// side), the kernel the seed's RSFC was built in. With the whole buffer (the
    /// classic first offer), a clamp can only bite once the data in flight has used
    /// that offer up, because the right edge never moves back: with a 4 MiB buffer
    /// and a 2 Mb/s uplink, ~17 s.
    pub initial_rwnd_segments: Option<u32>,
    /// MONITOR holds in a row after which a t_buff that stays above T without
    /// shrinking, although the window has been clamped, is taken for a rise of the
    /// path's base delay rather than a queue: RTT_min and min d restart from the
    /// current sample. 0: never (assumed; see the module documentation).
    pub rebase_after: u32,
}

impl Default for RsfcConfig {
    fn default() -> Self {
        RsfcConfig {
            estimator: Estimator::Owd,
            ts_tick: None,
            rho_window: Some(Duration::from_millis(500)),
            rtt_min_window: Duration::from_secs(10),
            threshold_factor: 1.0,
            growth: Growth::PerRtt,
            monitor: true,
            rho_check: true,
            rho_rise: 0.1,
            initial_rwnd_segments: Some(10),
            rebase_after: 2,
        }
    }
}

impl RsfcConfig {
    /// Check the parameters; the error names the offending field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.ts_tick.is_some_and(|d| d.is_zero()) {
            return Err(("ts_tick", "must be positive".into()));
        }
        if self.rho_window.is_some_and(|d| d.is_zero()) {
            return Err(("rho_window", "must be positive".into()));
        }
        if self.rtt_min_window.is_zero() {
            return Err(("rtt_min_window", "must be positive".into()));
        }
        if !(self.threshold_factor > 0.0 && self.threshold_factor.is_finite()) {
            return Err(("threshold_factor", "must be a positive number".into()));
        }
        if !(self.rho_rise >= 0.0 && self.rho_rise.is_finite()) {
            return Err(("rho_rise", "must be a non-negative number".into()));
        }
        if self.initial_rwnd_segments == Some(0) {
            return Err(("initial_rwnd", "must be at least 1 segment".into()));
        }
        Ok(())
    }
}

/// Minimum of timed samples over a sliding window (monotonic deque).
#[derive(Clone, Debug, Default)]
struct WindowedMin {
    q: VecDeque<(Instant, i128)>,
}

impl WindowedMin {
    fn push(&mut self, t: Instant, v: i128, window: Duration) {
        while self.q.back().is_some_and(|&(_, b)| b >= v) {
            self.q.pop_back();
        }
        self.q.push_back((t, v));
        while self.q.front().is_some_and(|&(s, _)| s + window < t) {
            self.q.pop_front();
        }
    }
    fn min(&self) -> Option<i128> {
        self.q.front().map(|&(_, v)| v)
    }
    fn clear(&mut self) {
        self.q.clear();
    }
}

/// The `owd` estimator's state.
#[derive(Clone, Debug, Default)]
struct Owd {
    /// First sample: arrival and unwrapped TSval.
    first: Option<(Instant, i64)>,
    last_tsval: u32,
    tsval: i64,
    /// Samples within the window (to rebuild the minimum when the tick changes).
    samples: VecDeque<(Instant, i64)>,
    tick: Option<Duration>,
    dmin: WindowedMin,
}

impl Owd {
    fn d(t: Instant, ts: i64, tick: Duration) -> i128 {
        t.as_nanos() as i128 - tick.as_nanos() as i128 * ts as i128
    }

    /// A data segment stamped `tsval` arrived at `now`; returns t_buff when known.
    fn sample(
        &mut self,
        now: Instant,
        tsval: u32,
        fixed: Option<Duration>,
        window: Duration,
    ) -> Option<Duration> {
        match self.first {
            None => {
                self.first = Some((now, 0));
                self.tsval = 0;
            }
            Some(_) => self.tsval += tsval.wrapping_sub(self.last_tsval) as i32 as i64,
        }
        self.last_tsval = tsval;
        self.samples.push_back((now, self.tsval));
        while self.samples.front().is_some_and(|&(s, _)| s + window < now) {
            self.samples.pop_front();
        }
        let tick = match fixed {
            Some(g) => Some(g),
            None => {
                let (t0, ts0) = self.first.unwrap();
                let span = now - t0;
                let ticks = self.tsval - ts0;
                if span >= TICK_SPAN && ticks > 0 {
                    Some(snap_tick(span.as_nanos() as f64 / ticks as f64))
                } else {
                    self.tick
                }
            }
        };
        if tick != self.tick {
            self.tick = tick;
            self.dmin.clear();
            if let Some(g) = tick {
                for &(t, ts) in &self.samples {
                    self.dmin.push(t, Self::d(t, ts, g), window);
                }
            }
        } else if let Some(g) = tick {
            self.dmin.push(now, Self::d(now, self.tsval, g), window);
        }
        let g = self.tick?;
        let d = Self::d(now, self.tsval, g);
        let m = self.dmin.min()?;
        Some(Duration::from_nanos((d - m).max(0) as u64))
    }

    /// Forget the samples before the latest: min d restarts from it.
    fn rebase(&mut self, now: Instant, window: Duration) {
        let Some(&(t, ts)) = self.samples.back() else {
            return;
        };
        self.samples.clear();
        self.samples.push_back((t, ts));
        self.dmin.clear();
        if let Some(g) = self.tick {
            self.dmin.push(now.max(t), Self::d(t, ts, g), window);
        }
    }
}

/// The usual tick nearest (log domain) to `ns` nanoseconds per tick, or `ns` itself
/// when it is more than a factor of 2 from all of them.
fn snap_tick(ns: f64) -> Duration {
    let (best, dist) = TICK_CANDIDATES
        .iter()
        .map(|c| (*c, (ns / c.as_nanos() as f64).ln().abs()))
        .fold((TICK_CANDIDATES[0], f64::INFINITY), |a, b| {
            if b.1 < a.1 {
                b
            } else {
                a
            }
        });
    if dist <= 2f64.ln() {
        best
    } else {
        Duration::from_nanos(ns.max(1.0) as u64)
    }
}

/// RSFC's receive-window policy. See the module documentation.
#[derive(Clone, Debug)]
pub struct Rsfc {
    cfg: RsfcConfig,
    state: RsfcState,
    /// `None` until the buffer size is known (then the buffer).
    rwnd: Option<u64>,
    mss: u32,
    owd: Owd,
    rtt_min: WindowedMin,
    t_buff: Option<Duration>,
    /// Arrivals in the ρ window and their byte sum; the first arrival.
    arrivals: VecDeque<(Instant, u64)>,
    arrived: u64,
    first_arrival: Option<Instant>,
    rho: Option<f64>,
    rho_at_clamp: f64,
    monitor_end: Instant,
    last_growth: Option<Instant>,
    /// The last echo RTT sample.
    last_echo: Option<(Instant, Duration)>,
    /// t_buff at the last clamp, and MONITOR holds in a row that ended with t_buff
    /// above T and not below it (for `rebase_after`).
    t_buff_at_clamp: Option<Duration>,
    stuck_holds: u32,
    /// The right edge this policy has offered (`rcv_nxt` + window, never back).
    edge: u64,
    /// Clamps made (SLOW/MONITOR/FAST → rwnd = ρ × RTT_min).
    pub clamps: u64,
    /// Restarts of RTT_min and min d (`rebase_after`).
    pub rebases: u64,
}

impl Rsfc {
    pub fn new(cfg: RsfcConfig) -> Self {
        Rsfc {
            cfg,
            state: RsfcState::Slow,
            rwnd: None,
            mss: 1,
            owd: Owd::default(),
            rtt_min: WindowedMin::default(),
            t_buff: None,
            arrivals: VecDeque::new(),
            arrived: 0,
            first_arrival: None,
            rho: None,
            rho_at_clamp: 0.0,
            monitor_end: Instant::ZERO,
            last_growth: None,
            last_echo: None,
            t_buff_at_clamp: None,
            stuck_holds: 0,
            edge: 0,
            clamps: 0,
            rebases: 0,
        }
    }

    pub fn config(&self) -> &RsfcConfig {
        &self.cfg
    }
    pub fn state(&self) -> RsfcState {
        self.state
    }
    /// The window RSFC grants, bytes (before the buffer's free space caps it).
    pub fn rwnd(&self) -> Option<u64> {
        self.rwnd
    }
    /// The last t_buff estimate.
    pub fn t_buff(&self) -> Option<Duration> {
        self.t_buff
    }
    /// The receive rate ρ, bytes per second.
    pub fn rho(&self) -> Option<f64> {
        self.rho
    }
    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min.min().map(|v| Duration::from_nanos(v as u64))
    }
    /// The phone's TSval tick the `owd` estimator uses (configured or estimated).
    pub fn peer_tick(&self) -> Option<Duration> {
        self.owd.tick
    }

    /// The first window: `initial_rwnd_segments` MSS, or the buffer.
    fn initial_rwnd(&self, st: &RcvState) -> u64 {
        self.cfg
            .initial_rwnd_segments
            .map_or(st.rcv_buf, |n| (n as u64 * st.mss as u64).min(st.rcv_buf))
    }

    fn min_rwnd(&self) -> u64 {
        2 * self.mss as u64
    }

    fn set_rwnd(&mut self, w: u64, rcv_buf: u64) {
        self.rwnd = Some(w.min(rcv_buf).max(self.min_rwnd().min(rcv_buf)));
    }

    fn measure_rho(&mut self, now: Instant, bytes: u64) {
        self.first_arrival.get_or_insert(now);
        self.arrivals.push_back((now, bytes));
        self.arrived += bytes;
        let Some(w) = self.cfg.rho_window.or(self.rtt_min()) else {
            return;
        };
        // Arrivals in (now − w, now].
        while let Some(&(t, b)) = self.arrivals.front() {
            if t + w <= now {
                self.arrivals.pop_front();
                self.arrived -= b;
            } else {
                break;
            }
        }
        if now - self.first_arrival.unwrap() >= w && !w.is_zero() {
            self.rho = Some(self.arrived as f64 / w.as_secs_f64());
        }
    }

    fn measure_delay(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        let Some(ts) = seg.ts else { return };
        let window = self.cfg.rtt_min_window;
        let mut echo = None;
        if let Some(tick) = st.ts_tick.filter(|_| ts.tsecr != 0) {
            let g = tick.as_nanos().max(1);
            let ticks_now = (now.as_nanos() / g) as u32;
            let r = ticks_now.wrapping_sub(ts.tsecr) as u64 * g;
            // An echo from the future (wrap, or a bogus peer) is no sample.
            if r < (1u64 << 31) * g {
                self.rtt_min.push(now, r as i128, window);
                echo = Some(Duration::from_nanos(r));
                self.last_echo = Some((now, Duration::from_nanos(r)));
            }
        }
        self.t_buff = match self.cfg.estimator {
            Estimator::Owd => self.owd.sample(now, ts.tsval, self.cfg.ts_tick, window),
            Estimator::Echo => echo.zip(self.rtt_min()).map(|(r, m)| r.saturating_sub(m)),
        };
    }

    /// One RTT: the receiver's estimate, at least RTT_min.
    fn round(&self, st: &RcvState) -> Option<Duration> {
        match (st.rtt, self.rtt_min()) {
            (Some(r), Some(m)) => Some(r.max(m)),
            (a, b) => a.or(b),
        }
    }

    fn above_threshold(&self) -> bool {
        match (self.t_buff, self.rtt_min()) {
            (Some(t), Some(m)) => t.as_secs_f64() > self.cfg.threshold_factor * m.as_secs_f64(),
            _ => false,
        }
    }

    fn rho_rose(&self) -> bool {
        self.cfg.rho_check
            && self
                .rho
                .is_some_and(|r| r > self.rho_at_clamp * (1.0 + self.cfg.rho_rise))
    }

    /// rwnd = ρ × RTT_min, then MONITOR (or FAST). Needs ρ and RTT_min.
    fn clamp(&mut self, now: Instant, st: &RcvState) -> bool {
        let (Some(rho), Some(m)) = (self.rho, self.rtt_min()) else {
            return false;
        };
        self.set_rwnd((rho * m.as_secs_f64()) as u64, st.rcv_buf);
        self.t_buff_at_clamp = self.t_buff;
        if self.state == RsfcState::Slow {
            // The ρ check compares with ρ at the start of the episode, so that a
            // steady rise is not hidden by re-clamps of a few per cent each.
            self.rho_at_clamp = rho;
        }
        self.clamps += 1;
        if self.cfg.monitor {
            self.state = RsfcState::Monitor;
            self.monitor_end = now + self.round(st).unwrap_or(m);
        } else {
            self.state = RsfcState::Fast;
        }
        true
    }

    fn enter_slow(&mut self, now: Instant) {
        self.state = RsfcState::Slow;
        self.last_growth = Some(now);
        self.stuck_holds = 0;
    }

    /// A hold ended with t_buff still above T: did it stay within a tenth of its value
    /// at the clamp although the clamped window was in force (no larger offer made
    /// earlier still outstanding)? A real queue shrinks under a window that fits the
    /// path, or grows under one that does not (the rate fell); a longer path keeps
    /// t_buff where it is. Counts such holds in a row.
    fn hold_was_stuck(&mut self, st: &RcvState) -> bool {
        let in_force = st.rcv_nxt + self.rwnd.unwrap_or(0) >= self.edge;
        let stuck = in_force
            && match (self.t_buff, self.t_buff_at_clamp) {
                (Some(now), Some(then)) => {
                    now.as_nanos() * 10 >= then.as_nanos() * 9
                        && now.as_nanos() * 10 <= then.as_nanos() * 11
                }
                _ => false,
            };
        self.stuck_holds = if stuck { self.stuck_holds + 1 } else { 0 };
        stuck
    }

    /// Take the current delay for the path's base delay: RTT_min and min d restart
    /// from the latest samples, so t_buff is zero.
    fn rebase(&mut self, now: Instant) {
        let window = self.cfg.rtt_min_window;
        self.rtt_min.clear();
        if let Some((t, r)) = self.last_echo {
            self.rtt_min.push(t, r.as_nanos() as i128, window);
        }
        self.owd.rebase(now, window);
        self.t_buff = Some(Duration::ZERO);
        self.rebases += 1;
    }

    fn step(&mut self, now: Instant, st: &RcvState) {
        match self.state {
            RsfcState::Slow => {
                if self.above_threshold() && self.clamp(now, st) {
                    return;
                }
                let rwnd = self.rwnd.unwrap_or_else(|| self.initial_rwnd(st));
                match self.cfg.growth {
                    Growth::PerAck => self.set_rwnd(rwnd + self.mss as u64, st.rcv_buf),
                    Growth::PerRtt => {
                        let Some(round) = self.round(st) else { return };
                        let last = *self.last_growth.get_or_insert(now);
                        if now >= last + round {
                            self.set_rwnd(rwnd + self.mss as u64, st.rcv_buf);
                            self.last_growth = Some(now);
                        }
                    }
                }
            }
            RsfcState::Monitor => {
                if now < self.monitor_end {
                    return;
                }
                // ρ rose since the clamp: more capacity than the clamp assumed.
                // Else clamp again with the new ρ while the queue is still long,
                // unless it has not shrunk for `rebase_after` holds in a row under
                // clamped windows: then it is no queue but a longer path.
                if self.rho_rose() {
                    self.enter_slow(now);
                } else if self.above_threshold() {
                    if self.cfg.rebase_after > 0
                        && self.hold_was_stuck(st)
                        && self.stuck_holds >= self.cfg.rebase_after
                    {
                        self.rebase(now);
                        self.enter_slow(now);
                    } else if !self.clamp(now, st) {
                        self.enter_slow(now);
                    }
                } else {
                    self.enter_slow(now);
                }
            }
            RsfcState::Fast => {
                if self.rho_rose() || !(self.above_threshold() && self.clamp(now, st)) {
                    self.enter_slow(now);
                }
            }
        }
    }
}

impl RwndPolicy for Rsfc {
    fn name(&self) -> &'static str {
        "rsfc"
    }

    fn on_segment(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        self.mss = st.mss;
        if self.rwnd.is_none() {
            self.rwnd = Some(self.initial_rwnd(st));
        }
        if seg.len == 0 || seg.window_probe {
            return;
        }
        self.measure_delay(now, seg, st);
        self.measure_rho(now, seg.len as u64);
        self.step(now, st);
    }

    fn window(&mut self, st: &RcvState) -> u64 {
        self.mss = st.mss;
        let first = self.initial_rwnd(st);
        let rwnd = *self.rwnd.get_or_insert(first);
        let w = rwnd.min(st.free_window());
        self.edge = self.edge.max(st.rcv_nxt + w);
        w
    }

    fn rate_estimate(&self) -> Option<f64> {
        self.rho
    }

    fn delay_estimate(&self) -> Option<Duration> {
        self.t_buff
    }

    fn state_code(&self) -> Option<u8> {
        Some(self.state.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::refused;
    use crate::time::test_util::ms;
    use crate::wire::Timestamps;

    const MSS: u32 = 1000;

    fn at_us(x: u64) -> Instant {
        Instant::from_micros(x)
    }

    fn st(now: Instant, own_tick: Duration) -> RcvState {
        RcvState {
            now,
            rcv_buf: 1_000_000,
            rcv_nxt: 0,
            rcv_read: 0,
            ooo_bytes: 0,
            mss: MSS,
            rtt: None,
            ts_tick: Some(own_tick),
        }
    }

    fn seg(seq: u64, tsval: u32, tsecr: u32) -> Segment {
        Segment {
            seq,
            len: MSS,
            ts: Some(Timestamps { tsval, tsecr }),
            ..Segment::default()
        }
    }

    /// Queueing delay of the synthetic uplink at send time `t` (µs): none for 2 s,
    /// a ramp to 300 ms over 3 s, then 300 ms.
    fn queue_us(t: u64) -> u64 {
        if t < 2_000_000 {
            0
        } else if t < 5_000_000 {
            (t - 2_000_000) / 10
        } else {
            300_000
        }
    }

    #[test]
    fn owd_estimator_recovers_queueing_delay_with_unknown_offset_and_estimated_tick() {
        for tick_ms in [1u64, 4, 10] {
            let g = tick_ms * 1000; // µs
                                    // The synthetic path ignores the window, so keep RSFC from taking the
                                    // ramp for a longer path.
            let cfg = RsfcConfig {
                estimator: Estimator::Owd,
                rebase_after: 0,
                ..RsfcConfig::default()
            };
            let mut p = Rsfc::new(cfg);
            let offset_us = 3_141_592_653u64; // the phone's clock: unknown to the receiver
            let mut t_send = 0u64;
            let mut seq = 0;
            while t_send < 9_000_000 {
                let q = queue_us(t_send);
                let arr = at_us(t_send + 40_000 + q);
                let tsval = ((offset_us + t_send) / g) as u32;
                p.on_segment(arr, &seg(seq, tsval, 0), &st(arr, ms(1)));
                seq += MSS as u64;
                if t_send >= 1_500_000 {
                    assert_eq!(p.peer_tick(), Some(ms(tick_ms)), "tick at {t_send} µs");
                    let tb = p.t_buff().unwrap().as_nanos() as i64 / 1000;
                    assert!(
                        (tb - q as i64).abs() <= g as i64,
                        "tick {tick_ms} ms, t {t_send} µs: t_buff {tb} µs vs {q} µs"
                    );
                }
                t_send += 3_700; // not a multiple of any tick
            }
        }
    }

    #[test]
    fn owd_estimator_uses_a_configured_tick() {
        let cfg = RsfcConfig {
            ts_tick: Some(ms(4)),
            ..RsfcConfig::default()
        };
        let mut p = Rsfc::new(cfg);
        let mut t = 0;
        while t < 500_000 {
            let q = if t > 200_000 { 50_000 } else { 0 };
            let arr = at_us(t + 20_000 + q);
            p.on_segment(
                arr,
                &seg(0, (7_777_777 + t / 4000) as u32, 0),
                &st(arr, ms(1)),
            );
            t += 2_000;
        }
        assert_eq!(p.peer_tick(), Some(ms(4)));
        let tb = p.t_buff().unwrap();
        assert!(tb >= ms(46) && tb <= ms(54), "{tb:?}");
    }

    #[test]
    fn owd_estimator_handles_tsval_wraparound() {
        let mut p = Rsfc::new(RsfcConfig {
            ts_tick: Some(ms(1)),
            ..RsfcConfig::default()
        });
        for k in 0..200u64 {
            let t = k * 5_000;
            let q = if k >= 100 { 30_000 } else { 0 };
            let arr = at_us(t + 10_000 + q);
            let tsval = (u32::MAX - 500).wrapping_add((t / 1000) as u32);
            p.on_segment(arr, &seg(0, tsval, 0), &st(arr, ms(1)));
        }
        let tb = p.t_buff().unwrap();
        assert!(tb >= ms(29) && tb <= ms(31), "{tb:?}");
    }

    #[test]
    fn echo_estimator_recovers_queueing_delay_with_a_coarse_own_tick() {
        for tick_ms in [1u64, 4, 10] {
            let g = tick_ms * 1000;
            let cfg = RsfcConfig {
                estimator: Estimator::Echo,
                rebase_after: 0,
                ..RsfcConfig::default()
            };
            let mut p = Rsfc::new(cfg);
            // Our ACKs leave every 3.7 ms; the phone answers each at once; the data
            // reaches us 40 ms (base RTT) plus the queueing delay later.
            let mut a = 0u64;
            while a < 9_000_000 {
                let q = queue_us(a);
                let tsecr = (a / g) as u32 + 1; // our TSval of the ACK (clock ≠ 0)
                let arr_us = a + g + 40_000 + q; // ack sent at our tick `tsecr`
                let arr = at_us(arr_us);
                p.on_segment(arr, &seg(0, 99, tsecr), &st(arr, ms(tick_ms)));
                if a >= 500_000 {
                    let tb = p.t_buff().unwrap().as_nanos() as i64 / 1000;
                    assert!(
                        (tb - q as i64).abs() <= g as i64,
                        "tick {tick_ms} ms, t {a} µs: t_buff {tb} µs vs {q} µs"
                    );
                    let m = p.rtt_min().unwrap().as_nanos() as i64 / 1000;
                    assert!((m - 40_000).abs() <= g as i64, "rtt_min {m} µs");
                }
                a += 3_700;
            }
        }
    }

    #[test]
    fn rho_is_bytes_over_the_window() {
        let mut p = Rsfc::new(RsfcConfig::default());
        // 1000 bytes every 4 ms: 250 kB/s.
        for k in 0..300u64 {
            let t = Instant::from_millis(4 * k);
            p.on_segment(t, &seg(k * 1000, k as u32, 0), &st(t, ms(1)));
            if k < 125 {
                assert_eq!(p.rho(), None, "no ρ before one window at {k}");
            }
        }
        let r = p.rho().unwrap();
        assert!((r / 250_000.0 - 1.0).abs() < 0.01, "{r}");
        assert_eq!(p.rate_estimate(), Some(r));
    }

    /// Drives a policy with the `echo` estimator: data every 4 ms (250 kB/s), base RTT
    /// 100 ms, queueing delay chosen per segment.
    struct Drive {
        p: Rsfc,
        t_us: u64,
        seq: u64,
    }

    impl Drive {
        /// RSFC with the `echo` estimator and the defaults changed by `change`.
        fn with(change: impl FnOnce(&mut RsfcConfig)) -> Self {
            let mut cfg = RsfcConfig {
                estimator: Estimator::Echo,
                ..RsfcConfig::default()
            };
            change(&mut cfg);
            Drive {
                p: Rsfc::new(cfg),
                t_us: 1_000_000,
                seq: 0,
            }
        }
        /// One segment of `len` bytes with queueing delay `q_ms`.
        fn seg_len(&mut self, q_ms: u64, len: u32) {
            self.t_us += 4_000;
            let now = at_us(self.t_us);
            let tsecr = ((self.t_us - 100_000 - q_ms * 1000) / 1000) as u32;
            let mut s = seg(self.seq, 1, tsecr);
            s.len = len;
            let mut state = st(now, ms(1));
            (state.rcv_nxt, state.rcv_read) = (self.seq, self.seq);
            self.seq += len as u64;
            self.p.on_segment(now, &s, &state);
        }
        /// [`Drive::with`], after one second of segments with no queueing delay.
        fn settled(change: impl FnOnce(&mut RsfcConfig)) -> Self {
            let mut d = Drive::with(change);
            d.run(0, 1000);
            d
        }
        fn run(&mut self, q_ms: u64, millis: u64) {
            for _ in 0..millis / 4 {
                self.seg_len(q_ms, MSS);
            }
        }
        fn rwnd(&self) -> u64 {
            self.p.rwnd().unwrap()
        }
    }

    #[test]
    fn slow_state_with_short_queue_starts_at_ten_segments_and_grows_one_per_rtt() {
        let mut d = Drive::with(|_| {});
        d.seg_len(0, MSS);
        assert_eq!(d.rwnd(), 10 * MSS as u64, "initial rwnd: 10 segments");
        d.run(0, 1000);
        assert_eq!(d.p.state(), RsfcState::Slow);
        // 1 s of 100 ms rounds, the first starting at the first segment.
        assert_eq!(d.rwnd(), 20 * MSS as u64);
        assert_eq!(d.p.rtt_min(), Some(ms(100)));
        assert_eq!(d.p.clamps, 0);
        assert_eq!(d.p.state_code(), Some(0));
        assert_eq!(d.p.delay_estimate(), Some(Duration::ZERO));
    }

    #[test]
    fn initial_rwnd_buffer_starts_at_the_whole_buffer_and_stays_capped_there() {
        let d = Drive::settled(|c| c.initial_rwnd_segments = None);
        assert_eq!(d.p.state(), RsfcState::Slow);
        assert_eq!(
            d.rwnd(),
            1_000_000,
            "the buffer, and growth is capped there"
        );
    }

    #[test]
    fn window_before_any_segment_is_the_initial_window_capped_by_the_buffer() {
        let mut p = Rsfc::new(RsfcConfig::default());
        let mut s = st(Instant::ZERO, ms(1));
        assert_eq!(p.window(&s), 10 * MSS as u64);
        let mut q = Rsfc::new(RsfcConfig::default());
        s.rcv_buf = 4 * MSS as u64;
        assert_eq!(q.window(&s), 4 * MSS as u64);
    }

    #[test]
    fn no_clamp_before_rho_is_known() {
        // t_buff far above T from the first segment, but ρ needs one window (500 ms).
        let mut d = Drive::with(|_| {});
        d.run(0, 4); // RTT_min = 100 ms from the first echo
        d.run(400, 400);
        assert_eq!((d.p.state(), d.p.clamps), (RsfcState::Slow, 0));
        assert_eq!(d.p.rho(), None);
        d.run(400, 200);
        assert_eq!(d.p.state(), RsfcState::Monitor);
        assert!(d.p.clamps >= 1);
    }

    #[test]
    fn rtt_min_window_forgets_an_old_base_delay_after_a_delay_increase() {
        // Base RTT 100 ms, then the path's delay rises by 150 ms for good (seen as a
        // constant 150 ms "queue" by the echo estimator): t_buff > T and RSFC clamps,
        // until RTT_min (10 s window) forgets the old base; then t_buff ≈ 0 and SLOW.
        // (MONITOR's rebase, off here, shortcuts this: `monitor_rebases_*`.)
        let mut d = Drive::with(|c| c.rebase_after = 0);
        d.run(0, 2000);
        d.run(150, 1000);
        assert_ne!(d.p.state(), RsfcState::Slow);
        assert_eq!(d.p.rtt_min(), Some(ms(100)));
        d.run(150, 10_000);
        assert_eq!(d.p.rtt_min(), Some(ms(250)));
        assert_eq!(d.p.state(), RsfcState::Slow);
        assert_eq!(d.p.t_buff(), Some(Duration::ZERO));
    }

    #[test]
    fn traced_state_codes_follow_the_state() {
        for (monitor, code) in [(true, 2u8), (false, 1u8)] {
            let mut d = Drive::settled(|c| c.monitor = monitor);
            d.run(150, 4);
            assert_eq!(d.p.state_code(), Some(code));
            assert_eq!(d.p.delay_estimate(), Some(ms(150)));
            assert_eq!(d.p.state().code(), code);
        }
    }

    #[test]
    fn slow_to_fast_when_t_buff_exceeds_threshold_sets_rwnd_to_rho_times_rtt_min() {
        for monitor in [true, false] {
            let mut d = Drive::settled(|c| c.monitor = monitor);
            d.run(90, 4); // t_buff = 90 ms < T = 100 ms
            assert_eq!(d.p.state(), RsfcState::Slow);
            d.run(150, 4);
            let want = if monitor {
                RsfcState::Monitor
            } else {
                RsfcState::Fast
            };
            assert_eq!(d.p.state(), want);
            assert_eq!(d.p.clamps, 1);
            // ρ = 250 kB/s, RTT_min = 100 ms.
            let w = d.rwnd() as f64;
            assert!((w / 25_000.0 - 1.0).abs() < 0.01, "{w}");
        }
    }

    #[test]
    fn threshold_factor_scales_the_threshold() {
        let mut d = Drive::settled(|c| c.threshold_factor = 2.0);
        d.run(150, 40);
        assert_eq!(d.p.state(), RsfcState::Slow);
        d.run(250, 4);
        assert_eq!(d.p.state(), RsfcState::Monitor);
    }

    #[test]
    fn slow_growth_is_one_mss_per_rtt() {
        let mut d = Drive::settled(|_| {});
        d.run(150, 4); // clamp to 25 000
        d.run(0, 104); // MONITOR ends after one RTT with t_buff < T: SLOW
        assert_eq!(d.p.state(), RsfcState::Slow);
        let w0 = d.rwnd();
        d.run(0, 1000); // ten RTTs of 100 ms
        assert_eq!(d.rwnd() - w0, 10 * MSS as u64);
    }

    #[test]
    fn slow_growth_per_ack_adds_one_mss_per_segment() {
        let mut d = Drive::settled(|c| c.growth = Growth::PerAck);
        d.run(150, 4);
        d.run(0, 104);
        assert_eq!(d.p.state(), RsfcState::Slow);
        let w0 = d.rwnd();
        d.run(0, 40); // ten segments
        assert_eq!(d.rwnd() - w0, 10 * MSS as u64);
    }

    #[test]
    fn monitor_holds_one_rtt_then_back_to_fast_when_t_buff_stays_high() {
        // A constant t_buff under clamped windows would be taken for a longer path
        // after two holds (see `rebase_*`); here the queue is the point.
        let mut d = Drive::settled(|c| c.rebase_after = 0);
        d.run(150, 4);
        assert_eq!(d.p.clamps, 1);
        d.run(150, 96); // within the hold: no new clamp
        assert_eq!((d.p.state(), d.p.clamps), (RsfcState::Monitor, 1));
        // ρ falls to 200 kB/s (1000 bytes every 5 ms on average) while t_buff stays
        // high: the next clamp uses the new ρ.
        for _ in 0..200 {
            d.seg_len(150, 800);
        }
        assert!(d.p.clamps > 1);
        assert_eq!(d.p.state(), RsfcState::Monitor);
        let w = d.rwnd() as f64;
        assert!((w / 20_000.0 - 1.0).abs() < 0.02, "{w}");
    }

    #[test]
    fn monitor_to_slow_when_t_buff_falls_below_threshold() {
        let mut d = Drive::settled(|_| {});
        d.run(150, 4);
        d.run(50, 100);
        assert_eq!(d.p.state(), RsfcState::Slow);
        assert_eq!(d.p.clamps, 1);
    }

    /// A clamp at ρ = 200 kB/s, then ρ climbs to 250 kB/s (+25 %) over 500 ms while
    /// t_buff stays above T. Returns the driver and whether SLOW was seen meanwhile.
    fn rho_rise_after_clamp(rho_check: bool, monitor: bool) -> (Drive, bool) {
        let mut d = Drive::settled(|c| {
c.rho_check = rho_check;
c.monitor = monitor;
c.rebase_after = 0;
});
        for _ in 0..125 {
            d.seg_len(0, 800); // ρ settles at 200 kB/s
        }
        d.seg_len(150, 800); // clamp at ρ = 200 kB/s
        assert_eq!(d.p.clamps, 1);
        let mut saw_slow = false;
        for _ in 0..125 {
            d.seg_len(150, MSS);
            saw_slow |= d.p.state() == RsfcState::Slow;
        }
        (d, saw_slow)
    }

    #[test]
    fn monitor_to_slow_when_rho_rises_with_rho_check() {
        let (d, saw_slow) = rho_rise_after_clamp(true, true);
        assert!(saw_slow, "the rise of ρ ends the episode");
        // From SLOW the still-long queue clamps again, at the higher ρ.
        assert!(d.p.clamps >= 2);
        let w = d.rwnd() as f64;
        assert!(w >= 22_000.0, "{w}");
    }

    #[test]
    fn rho_check_off_goes_back_to_fast_and_never_slow_while_t_buff_high() {
        let (d, saw_slow) = rho_rise_after_clamp(false, true);
        assert!(!saw_slow);
        assert_eq!(d.p.state(), RsfcState::Monitor);
        assert!(d.p.clamps >= 3, "{}", d.p.clamps);
    }

    #[test]
    fn monitor_off_reclamps_at_every_segment_while_t_buff_high() {
        let mut d = Drive::settled(|c| {
c.monitor = false;
c.rho_check = false;
});
        d.run(150, 40); // ten segments
        assert_eq!(d.p.clamps, 10);
        assert_eq!(d.p.state(), RsfcState::Fast);
        d.run(20, 4);
        assert_eq!(d.p.state(), RsfcState::Slow);
        // FAST leaves for SLOW on a rise of ρ only when the check is on.
        assert!(rho_rise_after_clamp(true, false).1);
        assert!(!rho_rise_after_clamp(false, false).1);
    }

    #[test]
    fn window_is_capped_by_free_space_and_floored_at_two_mss() {
        let mut d = Drive::settled(|_| {});
        // A trickle: 50 bytes every 4 ms = 12.5 kB/s, ρ × RTT_min = 1.25 kB < 2 MSS.
        for _ in 0..200 {
            d.seg_len(0, 50);
        }
        d.seg_len(150, 50);
        assert_eq!(d.rwnd(), 2 * MSS as u64);
        let mut s = st(Instant::ZERO, ms(1));
        s.rcv_nxt = 999_500; // 500 bytes of free space
        assert_eq!(d.p.window(&s), 500);
        assert!(!d.p.allow_shrink());
    }

    #[test]
    fn right_edge_never_retracts_at_the_receiver() {
        // From the whole buffer (the clamp must wait for the offer to be used up) and
        // from 10 segments (growth, clamps, growth again).
        right_edge_never_retracts(None);
        right_edge_never_retracts(Some(10));
    }

    fn right_edge_never_retracts(initial: Option<u32>) {
        use crate::flow::FlowControl;
        use crate::tcp::{TcpConfig, TcpReceiver};
        let cfg = TcpConfig {
            handshake: false,
            delayed_ack: false,
            rcv_buf: 200_000,
            mss: MSS,
            flow_control: FlowControl::Rsfc(RsfcConfig {
                estimator: Estimator::Echo,
                initial_rwnd_segments: initial,
                ..RsfcConfig::default()
            }),
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        let mut right = 0u64;
        let mut clamped_below = false;
        for k in 0..1000u64 {
            // Our clock starts 1 s before the data: every echo is of a real TSval.
            let t = 1_000_000 + 4_000 * (k + 1);
            let now = at_us(t);
            let q = if (400..800).contains(&k) { 300_000 } else { 0 };
            let tsecr = ((t - 100_000 - q) / 1000) as u32;
            r.handle_segment(now, &seg(k * MSS as u64, 1, tsecr));
            r.read(now, u64::MAX);
            while let Some(a) = r.poll_transmit(now) {
                let edge = a.ack + a.wnd;
                assert!(edge >= right, "edge moved back at {k}: {edge} < {right}");
                right = edge;
                clamped_below |=
                    (400..800).contains(&k) && a.wnd < 50_000 && r.policy().state_code() != Some(0);
            }
        }
        assert!(clamped_below, "the clamp took effect");
        assert_eq!(
            r.policy().state_code(),
            Some(0),
            "SLOW again after the queue went"
        );
    }

    #[test]
    fn monitor_rebases_after_a_large_delay_increase_and_goes_slow() {
        // Base RTT 100 ms, then 150 ms more for good: clamps, two holds in which the
        // "queue" does not shrink under the clamped window, then RTT_min restarts.
        let mut d = Drive::settled(|_| {});
        d.run(150, 4);
        assert_eq!((d.p.state(), d.p.clamps), (RsfcState::Monitor, 1));
        d.run(150, 100); // first hold ends: stuck once, clamp again
        assert_eq!((d.p.clamps, d.p.rebases), (2, 0));
        d.run(150, 104); // second hold ends: stuck twice, rebase
        assert_eq!(d.p.rebases, 1);
        assert_eq!(d.p.state(), RsfcState::Slow);
        assert_eq!(d.p.rtt_min(), Some(ms(250)));
        d.run(150, 1000);
        assert_eq!(d.p.t_buff(), Some(Duration::ZERO));
        assert_eq!(
            (d.p.state(), d.p.rebases, d.p.clamps),
            (RsfcState::Slow, 1, 2)
        );
    }

    #[test]
    fn no_rebase_while_the_queue_shrinks_under_the_clamp() {
        // A real queue: 300 ms at the clamp, draining by 40 ms every 100 ms hold.
        let mut d = Drive::settled(|_| {});
        let mut q = 300;
        while q > 100 {
            d.run(q, 100);
            q -= 40;
        }
        assert!(d.p.clamps >= 4, "{}", d.p.clamps);
        assert_eq!(d.p.rebases, 0);
        assert_eq!(d.p.rtt_min(), Some(ms(100)));
    }

    #[test]
    fn no_rebase_while_the_queue_grows_under_the_clamp() {
        // The rate fell: the clamped window is still too large and the queue grows by
        // 20 % a hold.
        let mut d = Drive::settled(|_| {});
        let mut q = 150.0f64;
        for _ in 0..8 {
            d.run(q as u64, 100);
            q *= 1.2;
        }
        assert!(d.p.clamps >= 6, "{}", d.p.clamps);
        assert_eq!(d.p.rebases, 0);
        assert_eq!(d.p.state(), RsfcState::Monitor);
    }

    #[test]
    fn no_rebase_before_the_clamped_window_is_in_force() {
        // The whole buffer was offered first: until rcv_nxt reaches that edge less the
        // clamped window, a queue that does not shrink says nothing about the path.
        let mut d = Drive::settled(|c| c.initial_rwnd_segments = None);
        let mut s = st(Instant::ZERO, ms(1));
        (s.rcv_nxt, s.rcv_read) = (d.seq, d.seq);
        assert_eq!(d.p.window(&s), 1_000_000); // the edge: seq + 1 MB
        d.run(150, 2000); // 2 s of 250 kB/s: 500 kB, short of the edge
        assert_eq!(d.p.rebases, 0);
        assert!(d.p.clamps >= 10);
        d.run(150, 2400); // past the edge less rwnd: now two stuck holds rebase
        assert_eq!(d.p.rebases, 1);
    }

    #[test]
    fn rebase_after_zero_never_rebases_and_fast_never_does() {
        for (monitor, rebase_after) in [(true, 0), (false, 2)] {
            let mut d = Drive::settled(|c| {
c.monitor = monitor;
c.rebase_after = rebase_after;
});
            d.run(150, 5000);
            assert_eq!(d.p.rebases, 0);
            assert_ne!(d.p.state(), RsfcState::Slow);
            assert_eq!(d.p.rtt_min(), Some(ms(100)));
        }
    }

    #[test]
    fn config_validation_names_the_field() {
        assert!(RsfcConfig::default().validate().is_ok());
        assert_eq!(refused(RsfcConfig::validate, |c| c.ts_tick = Some(Duration::ZERO)), "ts_tick");
        assert_eq!(
            refused(RsfcConfig::validate, |c| c.rho_window = Some(Duration::ZERO)),
            "rho_window"
        );
        assert_eq!(
            refused(RsfcConfig::validate, |c| c.rtt_min_window = Duration::ZERO),
            "rtt_min_window"
        );
        assert_eq!(refused(RsfcConfig::validate, |c| c.threshold_factor = 0.0), "threshold_factor");
        assert_eq!(refused(RsfcConfig::validate, |c| c.rho_rise = -0.1), "rho_rise");
        assert_eq!(
            refused(RsfcConfig::validate, |c| c.initial_rwnd_segments = Some(0)),
            "initial_rwnd"
        );
        assert_eq!("ECHO".parse::<Estimator>(), Ok(Estimator::Echo));
        assert!("gps".parse::<Estimator>().is_err());
        assert_eq!("per_ack".parse::<Growth>(), Ok(Growth::PerAck));
        assert!("per_byte".parse::<Growth>().is_err());
    }

    #[test]
    fn rsfc_without_timestamps_is_refused_naming_the_key() {
        use crate::flow::FlowControl;
        use crate::tcp::TcpConfig;
        let cfg = TcpConfig {
            timestamps: false,
            flow_control: FlowControl::Rsfc(RsfcConfig::default()),
            ..TcpConfig::default()
        };
        let (field, why) = cfg.validate().unwrap_err();
        assert_eq!(field, "timestamps");
        assert!(why.contains("rsfc"), "{why}");
        let ok = TcpConfig {
            flow_control: FlowControl::Rsfc(RsfcConfig::default()),
            ..TcpConfig::default()
        };
        assert!(ok.validate().is_ok());
    }
}
