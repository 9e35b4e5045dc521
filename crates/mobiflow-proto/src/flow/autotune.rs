//! Receive-buffer auto-tuning, the baseline the AFC paper sets AFC against (Sanadhya and
//! Sivakumar, "Adaptive Flow Control for TCP on Mobile Phones", IEEE INFOCOM 2011,
//! "Limitation 3: buffer auto tuning"):
//!
//! ```text
//!   buffer = headroom × min(perceived NW, AAR) × RTT       re-evaluated every RTT
//! ```
//!
//! * perceived NW: in-order bytes that arrived during the last evaluation period,
//!   divided by its length (what Linux's dynamic right-sizing, `tcp_rcv_space_adjust`,
//!   measures, there as bytes copied to the application per RTT);
//! * AAR: the application's average read rate since data started to arrive;
//! * RTT: the receiver's own estimate ([`super::RcvState::rtt`]).
//!
//! The seed gives the formula (`headroom = 1`) [SLIDE]; the rest is assumed and a
//! parameter: the period (one receiver RTT), `grow_only` (Linux never shrinks an
//! auto-tuned buffer), the initial and smallest buffers (Linux's `tcp_rmem` defaults
//! 87380 × 3/4 ≈ 64 KB and 4 KB). Linux grows the buffer to *twice* what it
//! measured, so that the window is never the bottleneck (`headroom = 2`); with the
//! seed's `headroom = 1`, the perceived rate can never exceed buffer/RTT and the
//! buffer cannot grow beyond where it started, which is the pathology the seed
//! points at ("lower throughput rates ... hinder the growth of auto-tuning buffers").
//!
//! The physical buffer is `TcpConfig::rcv_buf` (Linux's `tcp_rmem[2]`): the grant
//! never exceeds it, and the window advertised is the grant less the unread data.

use super::{RcvState, RwndPolicy};
use crate::time::{Duration, Instant};
use crate::wire::Segment;

/// Parameters of [`Autotune`].
#[derive(Clone, Debug, PartialEq)]
pub struct AutotuneConfig {
    /// Buffer granted before the first evaluation, bytes (assumed 64 KB).
    pub initial_buf: u64,
    /// Smallest buffer ever granted, bytes (assumed 4 KB; never below one MSS).
    pub min_buf: u64,
    /// Factor on `min(perceived NW, AAR) × RTT` (the seed's formula: 1; Linux: 2).
    pub headroom: f64,
    /// Never shrink the grant (assumed, as Linux).
    pub grow_only: bool,
    /// Evaluation period; `None`: the receiver's RTT estimate (assumed).
    pub interval: Option<Duration>,
}

impl Default for AutotuneConfig {
    fn default() -> Self {
        AutotuneConfig {
            initial_buf: 64 * 1024,
            min_buf: 4 * 1024,
            headroom: 1.0,
            grow_only: true,
            interval: None,
        }
    }
}

impl AutotuneConfig {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.initial_buf == 0 {
            return Err(("initial_buf", "must be positive".into()));
        }
        if self.min_buf > self.initial_buf {
            return Err(("min_buf", "must not exceed initial_buf".into()));
        }
        if !(self.headroom > 0.0 && self.headroom.is_finite()) {
            return Err(("headroom", "must be a positive number".into()));
        }
        if self.interval.is_some_and(|d| d.is_zero()) {
            return Err(("interval", "must be positive".into()));
        }
        Ok(())
    }
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct Autotune {
    cfg: AutotuneConfig,
    /// Buffer granted now, bytes.
    buf: u64,
    /// Start of the period being measured and `rcv_nxt` then.
    period_start: Option<(Instant, u64)>,
    /// Length of the period being measured.
    period: Duration,
    /// When data started to arrive (AAR's origin) and bytes read since.
    origin: Option<Instant>,
    bytes_read: u64,
    grew: bool,
    /// Evaluations done.
    pub evaluations: u64,
}

/// Period used before the receiver has an RTT estimate.
const FALLBACK_PERIOD: Duration = Duration::from_millis(100);

impl Autotune {
    pub fn new(cfg: AutotuneConfig) -> Self {
        Autotune {
            buf: cfg.initial_buf,
            period: cfg.interval.unwrap_or(FALLBACK_PERIOD),
            cfg,
            period_start: None,
            origin: None,
            bytes_read: 0,
            grew: false,
            evaluations: 0,
        }
    }

    /// The buffer granted now, bytes.
    pub fn granted(&self) -> u64 {
        self.buf
    }

    /// Re-evaluate the grant if the period has ended.
    fn evaluate(&mut self, now: Instant, st: &RcvState) {
        let Some((start, nxt0)) = self.period_start else {
            return;
        };
        if now < start + self.period {
            return;
        }
        let span = (now - start).as_secs_f64();
        let nw = st.rcv_nxt.saturating_sub(nxt0) as f64 / span;
        let aar = match self.origin {
            Some(o) if now > o => self.bytes_read as f64 / (now - o).as_secs_f64(),
            _ => 0.0,
        };
        if let Some(rtt) = st.rtt {
            let target = (self.cfg.headroom * nw.min(aar) * rtt.as_secs_f64()) as u64;
            let next = if self.cfg.grow_only {
                self.buf.max(target)
            } else {
                target
            };
            let floor = self.cfg.min_buf.max(st.mss as u64);
            let next = next.clamp(floor, st.rcv_buf.max(floor));
            self.grew |= next > self.buf;
            self.buf = next;
            self.evaluations += 1;
        }
        self.period = self.cfg.interval.or(st.rtt).unwrap_or(FALLBACK_PERIOD);
        self.period_start = Some((now, st.rcv_nxt));
    }
}

impl RwndPolicy for Autotune {
    fn name(&self) -> &'static str {
        "autotune"
    }

    fn on_segment(&mut self, now: Instant, _seg: &Segment, st: &RcvState) {
        if self.period_start.is_none() {
            self.period_start = Some((now, st.rcv_nxt));
            self.origin = Some(now);
        }
        self.evaluate(now, st);
    }

    fn on_read(&mut self, now: Instant, bytes: u64, st: &RcvState) {
        self.bytes_read += bytes;
        self.evaluate(now, st);
    }

    fn on_timeout(&mut self, now: Instant, st: &RcvState) {
        self.evaluate(now, st);
    }

    fn window(&mut self, st: &RcvState) -> u64 {
        self.buf.min(st.rcv_buf).saturating_sub(st.unread())
    }

    fn wants_update(&mut self, _now: Instant, _st: &RcvState) -> bool {
        std::mem::take(&mut self.grew)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.period_start.map(|(s, _)| s + self.period)
    }

    fn buffer_limit(&self, rcv_buf: u64) -> u64 {
        self.buf.min(rcv_buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::{ms, t_ms};
    fn st(now: Instant, rcv_nxt: u64, rcv_read: u64) -> RcvState {
        RcvState {
            now,
            rcv_buf: 4 << 20,
            rcv_nxt,
            rcv_read,
            ooo_bytes: 0,
            mss: 1000,
            rtt: Some(ms(500)),
            ts_tick: None,
        }
    }

    fn cfg(headroom: f64, grow_only: bool) -> AutotuneConfig {
        AutotuneConfig {
            initial_buf: 100_000,
            min_buf: 4_000,
            headroom,
            grow_only,
            interval: Some(ms(500)),
        }
    }

    /// An autotuner of `cfg(headroom, grow_only)` that got its first segment at time
    /// zero.
    fn started(headroom: f64, grow_only: bool) -> Autotune {
        let mut a = Autotune::new(cfg(headroom, grow_only));
        a.on_segment(t_ms(0), &Segment::default(), &st(t_ms(0), 0, 0));
        a
    }

    #[test]
    fn buffer_is_min_of_perceived_network_rate_and_average_read_rate_times_rtt() {
        let mut a = started(2.0, true);
        // In 500 ms: 150 kB arrived (300 kB/s), 100 kB read (200 kB/s).
        a.on_read(t_ms(250), 100_000, &st(t_ms(250), 100_000, 100_000));
        a.on_timeout(t_ms(500), &st(t_ms(500), 150_000, 100_000));
        // 2 × min(300, 200) kB/s × 0.5 s = 200 kB
        assert_eq!(a.granted(), 200_000);
        assert!(a.wants_update(t_ms(500), &st(t_ms(500), 150_000, 100_000)));
        assert!(!a.wants_update(t_ms(500), &st(t_ms(500), 150_000, 100_000)));
        // The window is the grant less the unread data.
        assert_eq!(a.window(&st(t_ms(500), 150_000, 100_000)), 150_000);
        assert_eq!(a.poll_timeout(), Some(t_ms(1000)));
    }

    #[test]
    fn with_the_seeds_headroom_the_buffer_cannot_outgrow_its_window() {
        // Window-limited: 100 kB per 500 ms arrive and are read.
        let mut a = started(1.0, true);
        for k in 1..=20u64 {
            let t = t_ms(500 * k);
            a.on_read(t, 100_000, &st(t, 100_000 * k, 100_000 * (k - 1)));
            a.on_timeout(t, &st(t, 100_000 * k, 100_000 * k));
        }
        assert_eq!(a.granted(), 100_000);
    }

    #[test]
    fn shrinks_when_not_grow_only_and_keeps_the_floor() {
        let mut a = started(1.0, false);
        // The application reads nothing: AAR = 0, the buffer falls to the floor.
        a.on_timeout(t_ms(500), &st(t_ms(500), 100_000, 0));
        assert_eq!(a.granted(), 4_000);
        assert_eq!(a.window(&st(t_ms(500), 100_000, 0)), 0);
    }

    #[test]
    fn grant_never_exceeds_the_physical_buffer() {
        let mut a = started(100.0, true);
        a.on_read(t_ms(100), 2_000_000, &st(t_ms(100), 2_000_000, 2_000_000));
        a.on_timeout(t_ms(500), &st(t_ms(500), 2_000_000, 2_000_000));
        assert_eq!(a.granted(), 4 << 20);
    }
}
