//! CUBIC window rules: RFC 9438 (which obsoletes RFC 8312).
//!
//! After a congestion event CUBIC remembers the window at which it happened
//! (`W_max`) and grows the window again as a cubic function of the time `t` since
//! the current congestion-avoidance stage (the *epoch*) began, not of the ACK
//! clock: fast when far from `W_max`, almost flat near it, and fast again beyond it.
//!
//! ```text
//!   cwnd
//!    ^                                          convex: probe for more (§4.5)
//!    |                                        /
//!    |  W_max  - - - - - - - - - - - _____.--'
//!    |                         _.--''  ^
//!    |                     .-''        plateau at t = K
//!    |                  .-'   concave: return to W_max (§4.4)
//!    |  cwnd_epoch = beta*W_max
//!    +------------------------------------------------> t (since epoch start)
//!
//!   W_cubic(t) = C*(t - K)^3 + W_max                          (§4.2 eq. 1)
//!   K          = cbrt((W_max - cwnd_epoch) / C)                (§4.2 eq. 2)
//!
//!   cwnd < ssthresh ── slow start as Reno: cwnd += min(N, SMSS)  (RFC 5681 eq. 2, §4.10)
//!   cwnd >= ssthresh ─ congestion avoidance, per ACK:
//!                        W_est += alpha*SMSS*N/cwnd              (§4.3 eq. 4)
//!                        W_cubic(t) < W_est: cwnd = W_est        (§4.3, Reno-friendly)
//!                        else target = clamp(W_cubic(t+RTT), cwnd, 1.5*cwnd)
//!                             cwnd += (target - cwnd)*N/cwnd     (§4.4, §4.5)
//!   loss / ECN ─────── W_max = cwnd (or cwnd*(1+beta)/2 if below W_max, §4.7)
//!                      ssthresh = max(cwnd*beta, 2*SMSS), cwnd = ssthresh  (§4.6)
//!   timeout ────────── ssthresh as above, cwnd = loss window; the next epoch
//!                      starts with W_max = cwnd_epoch and K = 0   (§4.8)
//!   recovery exit ──── cwnd = ssthresh                           (RFC 6582 §3.2 step 3)
//!   spurious signal ── undo: restore cwnd, ssthresh, W_max, K, epoch (§4.9)
//! ```
//!
//! Units: every window (`cwnd`, `ssthresh`, `W_max`, `W_est`, `cwnd_epoch`) is a
//! `u64` count of bytes. RFC 9438 states the formulas in segments with `C` in
//! segments/s³; here `C` is multiplied by the SMSS so that `W_cubic` comes out in
//! bytes. Times are integer nanoseconds ([`Instant`], [`Duration`]); `f64` is used
//! only inside the cubic formula (`t`, `K` in seconds, and `W_cubic` before it is
//! rounded back to bytes). The Reno-friendly estimate uses a fixed-point `alpha`
//! so that its byte counting stays exact.
//!
//! Loss recovery itself (which segment to send) belongs to the sender; as with
//! [`super::Reno`] the controller sets `ssthresh` on entry and `cwnd` on exit.
//! HyStart++ (RFC 9438 §4.10, RFC 9406) is not implemented. Linux's HyStart
//! ([`super::hystart`]) is a knob ([`CubicParams::hystart`], on in the `linux`
//! profile); off, slow start ends only on a congestion signal or on reaching
//! `ssthresh`.
//!
//! [`CubicParams`] chooses between this file's RFC 9438 arithmetic and the kernel's
//! ([`super::cubic_linux`]).

use super::hystart::{Hystart, HystartAck, HystartDetect, HystartParams};
use super::{
    AckSample, CaEvent, CongestionController, CongestionEvent, CongestionKind, Counting,
    RecoveryExit, Window, WindowParams,
};
use crate::time::{Duration, Instant};

crate::named_enum! {
    /// Whose arithmetic CUBIC follows.
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum CubicArithmetic ("cubic arithmetic", ignoring "-_ ") {
        /// RFC 9438 in bytes ([`Cubic`]).
        Rfc9438 = "rfc9438" | "rfc",
        /// Linux's `tcp_cubic.c` in segments and jiffies ([`super::LinuxCubic`]).
        Linux = "linux" | "kernel",
    }
}

/// The knobs of CUBIC a scenario chooses (`[tcp.cubic]`): the arithmetic and HyStart.
/// The default is RFC 9438 without HyStart; [`CubicParams::linux`] is the kernel's.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct CubicParams {
    pub arithmetic: CubicArithmetic,
    /// Linux's `CONFIG_HZ`: the jiffies per second of the kernel arithmetic's clock
    /// (`tcp_jiffies32`). Only read with [`CubicArithmetic::Linux`].
    pub hz: u32,
    /// HyStart (`hystart = 1` in `tcp_cubic.c`).
    pub hystart: bool,
    pub hystart_detect: HystartDetect,
    /// `hystart_low_window`, in segments.
    pub hystart_low_window: u32,
    /// `hystart_ack_delta_us`.
    pub hystart_ack_delta: Duration,
}

impl Default for CubicParams {
    fn default() -> Self {
        let h = HystartParams::default();
        CubicParams {
            arithmetic: CubicArithmetic::Rfc9438,
            hz: crate::tcp::jiffies::HZ as u32,
            hystart: false,
            hystart_detect: h.detect,
            hystart_low_window: h.low_window,
            hystart_ack_delta: h.ack_delta,
        }
    }
}

impl CubicParams {
    /// Linux 6.x's `tcp_cubic.c` with its module defaults (`hystart = 1`,
    /// `hystart_detect = 3`, `hystart_low_window = 16`, `hystart_ack_delta_us = 2000`)
    /// and the kernel's default `CONFIG_HZ = 250` (`kernel/Kconfig.hz`), the clock the
    /// linux profile's retransmission timer runs on too (`tcp::jiffies`).
    pub fn linux() -> Self {
        CubicParams {
            arithmetic: CubicArithmetic::Linux,
            hystart: true,
            ..CubicParams::default()
        }
    }

    /// HyStart's parameters, if it is on.
    pub fn hystart_params(&self) -> Option<HystartParams> {
        self.hystart.then_some(HystartParams {
            detect: self.hystart_detect,
            low_window: self.hystart_low_window,
            ack_delta: self.hystart_ack_delta,
        })
    }

    /// The controller these parameters choose.
    pub fn controller(self, params: WindowParams, mss: u32) -> super::Controller {
        match self.arithmetic {
            CubicArithmetic::Rfc9438 => super::Controller::Cubic(Box::new(Cubic::new(
                CubicConfig {
                    params,
                    hystart: self.hystart_params(),
                    ..CubicConfig::default()
                },
                mss,
            ))),
            CubicArithmetic::Linux => {
                super::Controller::Boxed(Box::new(super::LinuxCubic::new(self, params, mss)))
            }
        }
    }
}

/// Multiplicative decrease factor beta_cubic (RFC 9438 §4.6).
pub const BETA_CUBIC: f64 = 0.7;

/// Scaling constant C in segments/s³ (RFC 9438 §4.2 and §5).
pub const C_CUBIC: f64 = 0.4;

/// The target window is at most `TARGET_CAP_NUM / TARGET_CAP_DEN` times cwnd, i.e.
/// 1.5*cwnd (RFC 9438 §4.4), so that the window at most grows by half per RTT.
const TARGET_CAP_NUM: u64 = 3;
const TARGET_CAP_DEN: u64 = 2;

/// Binary fixed-point scale for alpha_cubic in the Reno-friendly estimate
/// (RFC 9438 §4.3 eq. 4): alpha is held as `round(alpha * 2^ALPHA_SHIFT)`.
const ALPHA_SHIFT: u32 = 20;

/// Configuration of [`Cubic`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CubicConfig {
    pub params: WindowParams,
    /// beta_cubic, the window kept after a congestion event (RFC 9438 §4.6).
    pub beta: f64,
    /// C in segments/s³ (RFC 9438 §4.2).
    pub c: f64,
    /// Release bandwidth faster when W_max shrinks (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Grow at least as fast as Reno would (the Reno-friendly region, RFC 9438 §4.3).
    pub tcp_friendly: bool,
    /// Linux's HyStart in slow start ([`super::hystart`]), with `min_rtt` as its
    /// `delay_min`; `None`: off.
    pub hystart: Option<HystartParams>,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            params: WindowParams::rfc5681(4380),
            beta: BETA_CUBIC,
            c: C_CUBIC,
            fast_convergence: true,
            tcp_friendly: true,
            hystart: None,
        }
    }
}

impl CubicConfig {
    /// alpha_cubic = 3 * (1 - beta) / (1 + beta) (RFC 9438 §4.3 eq. 3): the
    /// additive increase, in segments per RTT, that gives Reno's average rate.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// One congestion-avoidance stage ("epoch", RFC 9438 §4.2).
#[derive(Copy, Clone, Debug)]
struct Epoch {
    /// t_epoch: when this stage began. Moved forward over application-limited time
    /// so that it does not count towards `t` (RFC 9438 §5.8).
    start: Instant,
    /// cwnd_epoch in bytes: cwnd when this stage began (RFC 9438 §4.2).
    cwnd_epoch: u64,
    /// W_est in bytes, the Reno-friendly estimate (RFC 9438 §4.3).
    w_est: u64,
    /// Remainder of the W_est increase, in bytes * 2^ALPHA_SHIFT * cwnd units.
    est_acc: u128,
    /// Remainder of the cubic increase (target - cwnd) * N, in bytes² (divide by cwnd).
    cubic_acc: u128,
}

/// State saved at a congestion signal, restored if it proves spurious (RFC 9438 §4.9).
#[derive(Copy, Clone, Debug)]
struct Saved {
    cwnd: u64,
    ssthresh: u64,
    w_max: Option<u64>,
    k_secs: f64,
    cwnd_prior: Option<u64>,
    epoch: Option<Epoch>,
}

/// RFC 9438 CUBIC. See the module documentation.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    win: Window,
    /// W_max in bytes: the window before the last reduction, after fast convergence
    /// (RFC 9438 §4.7). `None` before any congestion event and after a timeout: the
    /// next epoch then sets W_max = cwnd_epoch and K = 0 (RFC 9438 §4.8, §4.10).
    w_max: Option<u64>,
    /// K in seconds (RFC 9438 §4.2 eq. 2). Negative when cwnd_epoch > W_max, so that
    /// W_cubic(0) = cwnd_epoch in every case.
    k_secs: f64,
    /// cwnd_prior in bytes: cwnd just before the last reduction (RFC 9438 §4.6); when
    /// W_est reaches it alpha becomes 1 (RFC 9438 §4.3).
    cwnd_prior: Option<u64>,
    /// The current congestion-avoidance stage; `None` in slow start, in recovery
    /// and until the first congestion-avoidance ACK after either.
    epoch: Option<Epoch>,
    /// Time of the last ACK taken outside recovery (for RFC 9438 §5.8).
    last_ack: Option<Instant>,
    /// Undo information for the last congestion signal (RFC 9438 §4.9).
    saved: Option<Saved>,
    /// HyStart, when on.
    hystart: Option<Hystart>,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, mss: u32) -> Self {
        let mut c = Cubic {
            win: Window::new(&cfg.params, mss.max(1) as u64),
            w_max: None,
            k_secs: 0.0,
            cwnd_prior: None,
            epoch: None,
            last_ack: None,
            saved: None,
            hystart: cfg.hystart.map(Hystart::new),
            cfg,
        };
        c.clamp();
        c
    }

    /// W_max in bytes, if a congestion event has set it.
    pub fn w_max(&self) -> Option<u64> {
        self.w_max
    }

    /// K in seconds (RFC 9438 §4.2 eq. 2): how long after the epoch start the cubic
    /// function reaches W_max.
    pub fn k_secs(&self) -> f64 {
        self.k_secs
    }

    /// Time since the current epoch began (t of RFC 9438 §4.2, application-limited
    /// time excluded), or `None` outside congestion avoidance.
    pub fn epoch_age(&self, now: Instant) -> Option<Duration> {
        self.epoch.map(|ep| now.saturating_since(ep.start))
    }

    fn clamp(&mut self) {
        self.win.clamp(&self.cfg.params);
    }

    /// C in bytes/s³: the RFC's C (segments/s³) times the SMSS.
    fn c_bytes(&self) -> f64 {
        self.cfg.c * self.win.mss as f64
    }

    /// RFC 9438 §4.2 eq. 2: K = cbrt((W_max - cwnd_epoch) / C), in seconds.
    fn compute_k(&self, w_max: u64, cwnd_epoch: u64) -> f64 {
        let diff = w_max as f64 - cwnd_epoch as f64;
        (diff / self.c_bytes()).cbrt()
    }

    /// RFC 9438 §4.2 eq. 1: W_cubic(t) = C*(t - K)^3 + W_max, in bytes (saturating
    /// at 0 and u64::MAX). `t` is in seconds.
    fn w_cubic(&self, t_secs: f64, w_max: u64) -> u64 {
        let d = t_secs - self.k_secs;
        let w = self.c_bytes() * d * d * d + w_max as f64;
        // `as` saturates: negative -> 0, too large -> u64::MAX.
        w as u64
    }

    /// Starts a congestion-avoidance stage at `now` (RFC 9438 §4.2, §4.3, §4.8).
    fn start_epoch(&mut self, now: Instant) -> Epoch {
        let cwnd_epoch = self.win.cwnd;
        match self.w_max {
            Some(w_max) => self.k_secs = self.compute_k(w_max, cwnd_epoch),
            None => {
                // §4.8 (after a timeout) and §4.10 (slow start ended without a
                // congestion event): W_max = cwnd_epoch and K = 0.
                self.w_max = Some(cwnd_epoch);
                self.k_secs = 0.0;
            }
        }
        // §4.10: with no congestion event yet, cwnd_prior = cwnd.
        self.cwnd_prior.get_or_insert(cwnd_epoch);
        Epoch {
            start: now,
            cwnd_epoch,
            // §4.3: W_est = cwnd_epoch at the start of the stage.
            w_est: cwnd_epoch,
            est_acc: 0,
            cubic_acc: 0,
        }
    }

    /// Congestion avoidance for one ACK of `n` bytes (RFC 9438 §4.3-§4.5).
    fn congestion_avoidance(&mut self, ack: &AckSample, n: u64) {
        let mut ep = match self.epoch {
            Some(ep) => ep,
            None => self.start_epoch(ack.now),
        };
        let w_max = self.w_max.unwrap_or(ep.cwnd_epoch);
        let cwnd = self.win.cwnd.max(1);
        let t = ack.now.saturating_since(ep.start).as_secs_f64();

        // §4.3 eq. 4: W_est += alpha * segments_acked / cwnd (in segments), i.e.
        // alpha * SMSS * N / cwnd in bytes. alpha becomes 1 once W_est has reached
        // cwnd_prior.
        let mut reno_friendly = false;
        if self.cfg.tcp_friendly {
            let alpha = if ep.w_est >= self.cwnd_prior.unwrap_or(0) {
                1.0
            } else {
                self.cfg.alpha()
            };
            let alpha_fp = (alpha * (1u64 << ALPHA_SHIFT) as f64).round() as u128;
            let den = (cwnd as u128) << ALPHA_SHIFT;
            ep.est_acc += alpha_fp * self.win.mss as u128 * n as u128;
            let inc = ep.est_acc / den;
            ep.est_acc -= inc * den;
            ep.w_est = ep.w_est.saturating_add(inc.min(u64::MAX as u128) as u64);
            // §4.3: if W_cubic(t) < W_est the sender is in the Reno-friendly
            // region and cwnd is set to W_est (never lowered here).
            if self.w_cubic(t, w_max) < ep.w_est {
                reno_friendly = true;
                self.win.cwnd = self.win.cwnd.max(ep.w_est);
                ep.cubic_acc = 0;
            }
        }

        if !reno_friendly {
            // §4.4 / §4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5*cwnd]
            // (RTT is the smoothed RTT), and cwnd += (target - cwnd)/cwnd per
            // segment acknowledged, i.e. (target - cwnd) * N / cwnd bytes.
            let rtt = if ack.srtt.is_zero() {
                ack.min_rtt
            } else {
                ack.srtt
            };
            let w_next = self.w_cubic(t + rtt.as_secs_f64(), w_max);
            let cap = (cwnd as u128 * TARGET_CAP_NUM as u128 / TARGET_CAP_DEN as u128)
                .min(u64::MAX as u128) as u64;
            let target = w_next.clamp(cwnd, cap);
            ep.cubic_acc += (target - cwnd) as u128 * n as u128;
            let inc = ep.cubic_acc / cwnd as u128;
            ep.cubic_acc -= inc * cwnd as u128;
            self.win.cwnd = self
                .win
                .cwnd
                .saturating_add(inc.min(u64::MAX as u128) as u64);
        }
        self.epoch = Some(ep);
    }

    /// HyStart on an ACK with an RTT sample in slow start (`cubictcp_acked`): at the
    /// exit point, ssthresh = cwnd, so that this ACK already grows the window in
    /// congestion avoidance. `delay_min` is the connection's minimum RTT.
    fn hystart_update(&mut self, ack: &AckSample) {
        let (Some(h), Some(rtt)) = (self.hystart.as_mut(), ack.rtt) else {
            return;
        };
        let mss = self.win.mss;
        let cwnd = self.win.cwnd / mss;
        if !h.active(self.win.cwnd < self.win.ssthresh) {
            return;
        }
        let delay = rtt.max(Duration::from_micros(1));
        let a = HystartAck {
            now: ack.now,
            snd_una: ack.snd_una,
            snd_nxt: ack.snd_nxt,
            delay,
            delay_min: ack.min_rtt.max(Duration::from_micros(1)).min(delay),
            cwnd,
            ssthresh: self.win.ssthresh / mss,
            mss,
            srtt: ack.srtt,
        };
        if h.update(&a).is_some() {
            self.win.ssthresh = self.win.cwnd;
        }
    }

    /// Saves the state a spurious congestion signal would restore (RFC 9438 §4.9).
    fn save(&mut self) {
        self.saved = Some(Saved {
            cwnd: self.win.cwnd,
            ssthresh: self.win.ssthresh,
            w_max: self.w_max,
            k_secs: self.k_secs,
            cwnd_prior: self.cwnd_prior,
            epoch: self.epoch,
        });
    }
}

impl CongestionController for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        if ack.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        self.hystart_update(ack);
        if ack.app_limited {
            // RFC 9438 §5.8 (and RFC 7661): no growth while the window is not
            // used, and the time spent so is not counted in t: the epoch start
            // moves forward by the time since the previous ACK.
            if let (Some(ep), Some(last)) = (self.epoch.as_mut(), self.last_ack) {
                ep.start = (ep.start + ack.now.saturating_since(last)).min(ack.now);
            }
            self.last_ack = Some(ack.now);
            return;
        }
        self.last_ack = Some(ack.now);
        // With per-ACK counting (ns-2) each ACK counts as one full segment.
        let counting = self.cfg.params.counting;
        let n = if counting == Counting::PerAck {
            self.win.mss
        } else {
            ack.acked_bytes
        };
        if self.win.cwnd < self.win.ssthresh {
            // RFC 9438 §4.10: slow start as RFC 5681 §3.1 eq. (2),
            // cwnd += min(N, SMSS) (Linux's `tcp_slow_start` with segment counting:
            // all of N). The epoch begins when slow start ends.
            self.epoch = None;
            let inc = if counting == Counting::Segments {
                n
            } else {
                n.min(self.win.mss)
            };
            self.win.cwnd = self.win.cwnd.saturating_add(inc);
        } else {
            self.congestion_avoidance(ack, n);
        }
        self.clamp();
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if ev.repeated {
            // RFC 5681 §3.1 (RFC 9438 §4.8 defers to it): a repeated timeout holds
            // ssthresh and the cubic state; only cwnd collapses.
            self.win.cwnd = self.cfg.params.loss_window(self.win.mss);
            self.epoch = None;
            return;
        }
        self.save();
        let cwnd = self.win.cwnd;
        // §4.7 fast convergence: if this event came before the window got back to
        // the previous W_max, remember a lower W_max to release bandwidth to newer
        // flows; otherwise W_max = cwnd.
        let w_max = match self.w_max {
            Some(prev) if self.cfg.fast_convergence && cwnd < prev => {
                (cwnd as f64 * (1.0 + self.cfg.beta) / 2.0) as u64
            }
            _ => cwnd,
        };
        // §4.6: ssthresh = max(cwnd * beta, 2*SMSS); cwnd_prior = cwnd. (RFC 9438
        // uses flight_size and allows cwnd; cwnd is used here.)
        self.win.ssthresh = ((cwnd as f64 * self.cfg.beta) as u64).max(2 * self.win.mss);
        self.cwnd_prior = Some(cwnd);
        // A new congestion-avoidance stage starts after the reduction (§4.2).
        self.epoch = None;
        match ev.kind {
            CongestionKind::Timeout => {
                // §4.8: cwnd = loss window as Reno (RFC 5681 §3.1); the first
                // congestion-avoidance stage afterwards uses W_max = cwnd_epoch
                // and K = 0, and W_est = cwnd_epoch.
                self.win.cwnd = self.cfg.params.loss_window(self.win.mss);
                self.w_max = None;
                self.k_secs = 0.0;
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                // §4.6: cwnd = ssthresh (the sender inflates the window itself
                // during fast recovery).
                self.win.cwnd = self.win.ssthresh;
                self.w_max = Some(w_max);
                // §4.2 eq. 2 with cwnd_epoch = the reduced cwnd; recomputed from
                // the actual cwnd when the next epoch starts.
                self.k_secs = self.compute_k(w_max, self.win.cwnd);
            }
        }
        self.clamp();
    }

    fn on_recovery_exit(&mut self, _ex: &RecoveryExit) {
        // RFC 6582 §3.2 step 3, option (1): cwnd = ssthresh. Congestion avoidance,
        // and so the epoch (§4.2, t_epoch), starts from here.
        self.win.cwnd = self.win.ssthresh;
        self.epoch = None;
        self.clamp();
    }

    fn on_spurious_congestion(&mut self) {
        // §4.9: restore the state saved at the congestion signal. cwnd never
        // shrinks here, in case it grew past the saved value meanwhile.
        if let Some(s) = self.saved.take() {
            self.win.cwnd = self.win.cwnd.max(s.cwnd);
            self.win.ssthresh = s.ssthresh;
            self.w_max = s.w_max;
            self.k_secs = s.k_secs;
            self.cwnd_prior = s.cwnd_prior;
            self.epoch = s.epoch;
            self.clamp();
        }
    }

    fn on_event(&mut self, now: Instant, ev: CaEvent) {
        match ev {
            CaEvent::TxStartAfterIdle { idle } => {
                // §5.8: idle time does not count towards t.
                if let Some(ep) = self.epoch.as_mut() {
                    ep.start = (ep.start + idle).min(now);
                }
                self.last_ack = Some(now);
            }
            CaEvent::TxStart { .. } | CaEvent::PathChange => {}
        }
    }

    fn on_mss_update(&mut self, mss: u32) {
        self.win.mss = mss.max(1) as u64;
        self.clamp();
    }

    /// Also restarts the epoch: the cubic curve is re-anchored at the new cwnd
    /// (cwnd_epoch), keeping W_max.
    fn set_window(&mut self, cwnd_bytes: u64) {
        self.epoch = None;
        self.win.set_cwnd(cwnd_bytes, &self.cfg.params);
    }

    super::window_methods!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::cc::{CcKind, Reno, RenoConfig};

    fn params() -> WindowParams {
        WindowParams::rfc5681(2 * M)
    }

    fn cubic_with(f: impl FnOnce(&mut CubicConfig)) -> Cubic {
        let mut cfg = CubicConfig {
            params: params(),
            ..CubicConfig::default()
        };
        f(&mut cfg);
        Cubic::new(cfg, MSS)
    }

    fn cubic() -> Cubic {
        cubic_with(|_| {})
    }

    /// The pure cubic curve, without the Reno-friendly region.
    fn pure_cubic() -> Cubic {
        cubic_with(|cfg| cfg.tcp_friendly = false)
    }

    fn ack_at(now: Instant, bytes: u64, rtt: Duration) -> AckSample {
        ack_sample(now, bytes, Some(rtt), rtt, MSS)
    }

    fn ack(bytes: u64) -> AckSample {
        ack_at(Instant::ZERO, bytes, Duration::from_millis(100))
    }

    fn event(kind: CongestionKind, now: Instant, in_flight: u64) -> CongestionEvent {
        congestion(kind, now, in_flight, MSS)
    }

    /// A controller in congestion avoidance at `cwnd` bytes.
    fn in_ca(mut c: Cubic, cwnd: u64) -> Cubic {
        c.set_window(cwnd);
        c.set_ssthresh(cwnd / 2);
        c
    }

    /// `c` in congestion avoidance at `cwnd` bytes, after a loss at time zero.
    fn after_loss_at_zero(c: Cubic, cwnd: u64) -> Cubic {
        let mut c = in_ca(c, cwnd);
        loss_at(&mut c, Instant::ZERO);
        c
    }

    /// Acknowledges one window of full segments, spread evenly over `rtt`,
    /// `rounds` times. Returns cwnd after each round.
    fn run_rounds(c: &mut Cubic, now: &mut Instant, rtt: Duration, rounds: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let acks = (c.window() / M).max(1);
            let step = rtt / acks;
            for _ in 0..acks {
                *now += step;
                c.on_ack(&ack_at(*now, M, rtt));
            }
            out.push(c.window());
        }
        out
    }

    /// Runs whole rounds until `until`.
    fn run_until(c: &mut Cubic, now: &mut Instant, rtt: Duration, until: Instant) {
        while *now < until {
            run_rounds(c, now, rtt, 1);
        }
    }

    fn loss_at(c: &mut Cubic, now: Instant) {
        let w = c.window();
        c.on_congestion_event(&event(CongestionKind::FastRetransmit, now, w));
    }

    /// A controller that lost a segment at time zero with cwnd = 100 kB and then
    /// took `rounds` rounds of ACKs; with the time after them.
    fn rounds_after_loss(rtt: Duration, rounds: usize) -> (Cubic, Instant) {
        let mut c = after_loss_at_zero(cubic(), 100_000);
        let mut now = Instant::ZERO;
        run_rounds(&mut c, &mut now, rtt, rounds);
        (c, now)
    }

    #[test]
    fn default_config_uses_the_rfc_constants() {
        let cfg = CubicConfig::default();
        assert_eq!(cfg.beta, 0.7);
        assert_eq!(cfg.c, 0.4);
        assert!(cfg.fast_convergence && cfg.tcp_friendly);
        assert_eq!(cfg.params.initial_window, 4380);
        // §4.3 eq. 3: alpha = 3 * 0.3 / 1.7.
        assert!((cfg.alpha() - 0.9 / 1.7).abs() < 1e-12);
    }

    #[test]
    fn cckind_builds_cubic() {
        let c = CcKind::Cubic(CubicParams::default()).build(params(), MSS);
        assert_eq!(c.name(), "cubic");
        assert_eq!(c.window(), 2 * M);
    }

    #[test]
    fn slow_start_matches_reno() {
        for counting in [Counting::Bytes, Counting::PerAck] {
            let mut p = params();
            p.counting = counting;
            let mut r = Reno::new(
                RenoConfig {
                    params: p,
                    name: "reno",
                },
                MSS,
            );
            let mut c = cubic_with(|cfg| cfg.params = p);
            for bytes in [1000, 2000, 100, 1500, 999, 1000, 1, 3000] {
                r.on_ack(&ack(bytes));
                c.on_ack(&ack(bytes));
                assert_eq!(c.window(), r.window(), "{counting:?}");
                assert!(c.in_slow_start());
            }
        }
    }

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut c = cubic();
        c.on_ack(&ack(3000));
        assert_eq!(c.window(), 3 * M);
        c.on_ack(&ack(100));
        assert_eq!(c.window(), 3 * M + 100);
    }

    #[test]
    fn loss_reduces_cwnd_by_beta() {
        let c = after_loss_at_zero(cubic(), 100_000);
        assert_eq!(c.ssthresh(), 70_000);
        assert_eq!(c.window(), 70_000);
        assert_eq!(c.w_max(), Some(100_000));
        // §4.2 eq. 2: K = cbrt(30 segments / 0.4) = cbrt(75) s.
        assert!((c.k_secs() - 75f64.cbrt()).abs() < 1e-9);
    }

    #[test]
    fn ecn_reduces_like_loss() {
        let mut c = in_ca(cubic(), 100_000);
        c.on_congestion_event(&event(CongestionKind::Ecn, Instant::ZERO, 100_000));
        assert_eq!(c.ssthresh(), 70_000);
        assert_eq!(c.window(), 70_000);
    }

    #[test]
    fn ssthresh_never_falls_below_two_segments() {
        let mut c = cubic();
        c.set_window(M);
        loss_at(&mut c, Instant::ZERO);
        assert_eq!(c.ssthresh(), 2 * M);
    }

    #[test]
    fn window_returns_to_w_max_after_k_seconds() {
        let rtt = Duration::from_millis(100);
        let mut c = in_ca(cubic(), 100_000);
        let mut now = Instant::from_secs(1);
        loss_at(&mut c, now);
        let k = Duration::from_secs_f64(c.k_secs());
        // The epoch starts with the first congestion-avoidance ACK (one step after
        // `now`); stop at the round ending nearest to t = K.
        let quarter = run_rounds(&mut c, &mut now, rtt, (k.as_secs_f64() / 0.4) as usize);
        let at_quarter = *quarter.last().unwrap();
        assert!(
            at_quarter < 95_000,
            "concave: still well below W_max at K/4: {at_quarter}"
        );
        run_until(&mut c, &mut now, rtt, Instant::from_secs(1) + k);
        let w = c.window() as f64;
        assert!(
            (w - 100_000.0).abs() / 100_000.0 < 0.03,
            "cwnd at t=K should be ~W_max, got {w}"
        );
    }

    #[test]
    fn concave_then_convex_growth() {
        let rtt = Duration::from_millis(100);
        // Pure cubic curve: the Reno-friendly estimate would take over later on.
        let mut c = after_loss_at_zero(pure_cubic(), 100_000);
        let mut now = Instant::ZERO;
        let k_rounds = (c.k_secs() / rtt.as_secs_f64()).round() as usize; // ~42
        let w = run_rounds(&mut c, &mut now, rtt, 2 * k_rounds);
        let h = k_rounds / 2;
        let growth = |a: usize, b: usize| w[b] as i64 - w[a] as i64;
        // Concave before K: the first half grows more than the second half.
        let g1 = growth(0, h);
        let g2 = growth(h, k_rounds);
        assert!(g1 > 2 * g2, "concave: {g1} vs {g2}");
        // Plateau near K.
        assert!(growth(k_rounds - 3, k_rounds + 3) < 2_000);
        // Convex after K: the second half grows more than the first half.
        let g3 = growth(k_rounds, k_rounds + h);
        let g4 = growth(k_rounds + h, 2 * k_rounds - 1);
        assert!(g4 > 2 * g3, "convex: {g3} vs {g4}");
        assert!(w[2 * k_rounds - 1] > 110_000);
        // Growth per round never decreases cwnd.
        assert!(w.windows(2).all(|p| p[1] >= p[0]));
    }

    #[test]
    fn target_looks_one_rtt_ahead() {
        // §4.4: at the epoch start W_cubic(t) = cwnd_epoch, so growth on the first
        // ACK comes only from evaluating W_cubic at t + RTT (RTT = srtt).
        let srtt = Duration::from_millis(100);
        let mut c = after_loss_at_zero(pure_cubic(), 100_000);
        let k = c.k_secs();
        let mut a = ack_at(Instant::from_millis(1), M, srtt);
        a.min_rtt = Duration::from_millis(5); // srtt, not min_rtt, is used
        c.on_ack(&a);
        let target = (0.4 * M as f64 * (0.1 - k).powi(3) + 100_000.0) as u64;
        assert_eq!(c.window(), 70_000 + (target - 70_000) * M / 70_000);
        assert!(c.window() > 70_000);
    }

    #[test]
    fn target_is_capped_at_one_and_a_half_cwnd() {
        let rtt = Duration::from_millis(100);
        let mut c = after_loss_at_zero(pure_cubic(), 20_000);
        let mut now = Instant::ZERO;
        run_rounds(&mut c, &mut now, rtt, 1);
        // Far beyond K, W_cubic(t + RTT) is enormous: one round grows at most 1.5x.
        now += Duration::from_secs(100);
        let before = c.window();
        let after = run_rounds(&mut c, &mut now, rtt, 1)[0];
        assert!(after > before + before / 3, "{before} -> {after}");
        assert!(after <= before + before / 2, "{before} -> {after}");
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, expected) in [(true, 59_500), (false, 70_000)] {
            let mut c = after_loss_at_zero(cubic_with(|cfg| cfg.fast_convergence = fc), 100_000);
            assert_eq!(c.w_max(), Some(100_000));
            // A second loss before cwnd got back to W_max.
            loss_at(&mut c, Instant::from_millis(10));
            assert_eq!(c.w_max(), Some(expected), "fast_convergence={fc}");
            assert_eq!(c.ssthresh(), 49_000);
        }
    }

    #[test]
    fn no_fast_convergence_when_above_previous_w_max() {
        let mut c = after_loss_at_zero(cubic(), 100_000);
        c.set_window(120_000);
        loss_at(&mut c, Instant::from_millis(10));
        assert_eq!(c.w_max(), Some(120_000));
    }

    #[test]
    fn reno_friendly_region_dominates_on_short_rtt_small_bdp() {
        let rtt = Duration::from_millis(10);
        let alpha = CubicConfig::default().alpha();
        let mut c = after_loss_at_zero(cubic(), 10_000);
        let mut pure = after_loss_at_zero(pure_cubic(), 10_000);
        let mut now = Instant::ZERO;
        let mut now_pure = Instant::ZERO;
        // K = cbrt(3 / 0.4) ~ 1.96 s, ~196 RTTs: cubic growth is slow while Reno's
        // alpha*SMSS per RTT (~529 bytes) is not.
        let w = run_rounds(&mut c, &mut now, rtt, 4);
        let wp = run_rounds(&mut pure, &mut now_pure, rtt, 4);
        for (i, (&w, &wp)) in w.iter().zip(&wp).enumerate() {
            let est = 7_000.0 + (i + 1) as f64 * alpha * M as f64;
            assert!(
                (w as f64 - est).abs() < 0.25 * M as f64,
                "round {i}: cwnd {w}, W_est ~{est}"
            );
            assert!(w > wp, "round {i}: reno-friendly {w} vs cubic {wp}");
        }
        // Once W_est reaches cwnd_prior (10 segments), alpha = 1: one SMSS per RTT.
        let w = run_rounds(&mut c, &mut now, rtt, 16);
        let last = w[15] as i64 - w[14] as i64;
        assert!((last - M as i64).abs() <= 50, "alpha=1 growth {last}");
        let wp = run_rounds(&mut pure, &mut now_pure, rtt, 16);
        assert!(w[15] > wp[15] + 10 * M);
    }

    #[test]
    fn timeout_resets_epoch_and_collapses_cwnd() {
        let rtt = Duration::from_millis(100);
        let mut c = after_loss_at_zero(cubic(), 100_000);
        let mut now = Instant::ZERO;
        c.on_recovery_exit(&RecoveryExit {
            now,
            in_flight: 0,
            retransmitted_segments: 1,
            mss: MSS,
        });
        run_rounds(&mut c, &mut now, rtt, 3);
        assert!(c.epoch_age(now).is_some());
        let cwnd = c.window();

        c.on_congestion_event(&event(CongestionKind::Timeout, now, cwnd));
        assert_eq!(c.window(), M);
        assert_eq!(c.ssthresh(), (cwnd as f64 * 0.7) as u64);
        assert!(c.epoch_age(now).is_none());
        assert_eq!(c.w_max(), None);

        // Slow start back to ssthresh: no epoch yet.
        while c.window() < c.ssthresh() {
            now += rtt / 10;
            c.on_ack(&ack_at(now, M, rtt));
            assert!(c.epoch_age(now).is_none());
        }
        // §4.8: the first congestion-avoidance stage uses W_max = cwnd_epoch, K = 0.
        let cwnd_epoch = c.window();
        now += rtt / 10;
        c.on_ack(&ack_at(now, M, rtt));
        assert_eq!(c.w_max(), Some(cwnd_epoch));
        assert_eq!(c.k_secs(), 0.0);
        // W_est starts at cwnd_epoch and this ACK already added alpha*SMSS*N/cwnd.
        let ep = c.epoch.unwrap();
        assert_eq!(ep.cwnd_epoch, cwnd_epoch);
        let inc = (CubicConfig::default().alpha() * (M * M) as f64 / cwnd_epoch as f64) as u64;
        assert_eq!(ep.w_est, cwnd_epoch + inc);
    }

    #[test]
    fn raising_ssthresh_restarts_the_epoch_after_slow_start() {
        // A mobility reaction raises ssthresh mid-epoch: slow start resumes, and
        // congestion avoidance afterwards starts a new epoch from the new cwnd.
        let rtt = Duration::from_millis(100);
        let (mut c, mut now) = rounds_after_loss(rtt, 3);
        c.set_ssthresh(c.window() + 5 * M);
        while c.in_slow_start() {
            now += rtt / 10;
            c.on_ack(&ack_at(now, M, rtt));
        }
        let cwnd_epoch = c.window();
        now += rtt / 10;
        c.on_ack(&ack_at(now, M, rtt));
        assert_eq!(c.epoch.unwrap().cwnd_epoch, cwnd_epoch);
        assert_eq!(c.epoch_age(now), Some(Duration::ZERO));
    }

    #[test]
    fn repeated_timeout_drops_ssthresh_to_two_segments() {
        let mut c = in_ca(cubic(), 100_000);
        c.on_congestion_event(&event(CongestionKind::Timeout, Instant::ZERO, 100_000));
        c.on_congestion_event(&event(CongestionKind::Timeout, Instant::ZERO, M));
        assert_eq!(c.ssthresh(), 2 * M);
        assert_eq!(c.window(), M);
    }

    #[test]
    fn spurious_undo_restores_state() {
        let rtt = Duration::from_millis(100);
        for kind in [CongestionKind::FastRetransmit, CongestionKind::Timeout] {
            let (mut c, now) = rounds_after_loss(rtt, 5);
            let (cwnd, ssthresh, w_max, k) = (c.window(), c.ssthresh(), c.w_max(), c.k_secs());
            let age = c.epoch_age(now);
            assert!(age.is_some());

            c.on_congestion_event(&event(kind, now, cwnd));
            assert!(c.window() < cwnd);
            c.on_spurious_congestion();
            assert_eq!(c.window(), cwnd, "{kind:?}");
            assert_eq!(c.ssthresh(), ssthresh, "{kind:?}");
            assert_eq!(c.w_max(), w_max, "{kind:?}");
            assert_eq!(c.k_secs(), k, "{kind:?}");
            assert_eq!(c.epoch_age(now), age, "{kind:?}");

            // The undo information is used once.
            c.on_congestion_event(&event(kind, now, cwnd));
            c.on_spurious_congestion();
            let reduced = (c.window(), c.ssthresh());
            c.on_spurious_congestion();
            assert_eq!((c.window(), c.ssthresh()), reduced);
        }
    }

    #[test]
    fn no_growth_when_app_limited() {
        let rtt = Duration::from_millis(100);
        let mut c = cubic();
        let mut a = ack(M);
        a.app_limited = true;
        c.on_ack(&a);
        assert_eq!(c.window(), 2 * M, "slow start");

        let (mut c, mut now) = rounds_after_loss(rtt, 2);
        let w = c.window();
        for _ in 0..1000 {
            now += Duration::from_millis(10);
            c.on_ack(&AckSample {
                app_limited: true,
                ..ack_at(now, M, rtt)
            });
        }
        assert_eq!(c.window(), w, "congestion avoidance");
    }

    #[test]
    fn app_limited_time_does_not_count_towards_t() {
        let rtt = Duration::from_millis(100);
        let ms = Duration::from_millis;
        let mut limited = in_ca(cubic(), 100_000);
        let mut fresh = in_ca(cubic(), 100_000);
        loss_at(&mut limited, Instant::ZERO);
        loss_at(&mut fresh, Instant::ZERO);

        // Both start their epoch at 10 ms; `limited` then idles for ~10 s.
        let t0 = Instant::ZERO + ms(10);
        limited.on_ack(&ack_at(t0, M, rtt));
        fresh.on_ack(&ack_at(t0, M, rtt));
        let mut now = t0;
        for _ in 0..1000 {
            now += ms(10);
            let mut a = ack_at(now, M, rtt);
            a.app_limited = true;
            limited.on_ack(&a);
        }
        // From here both see the same ACKs at the same offsets.
        for i in 1..=300u64 {
            limited.on_ack(&ack_at(now + ms(i), M, rtt));
            fresh.on_ack(&ack_at(t0 + ms(i), M, rtt));
            assert_eq!(limited.window(), fresh.window(), "ack {i}");
        }
    }

    #[test]
    fn idle_restart_does_not_count_towards_t() {
        let rtt = Duration::from_millis(100);
        let (mut c, mut now) = rounds_after_loss(rtt, 2);
        let age = c.epoch_age(now).unwrap();
        now += Duration::from_secs(30);
        c.on_event(
            now,
            CaEvent::TxStartAfterIdle {
                idle: Duration::from_secs(30),
            },
        );
        assert_eq!(c.epoch_age(now), Some(age));
    }

    #[test]
    fn acks_during_recovery_do_not_grow_the_window() {
        let mut c = after_loss_at_zero(cubic(), 100_000);
        let mut a = ack_at(Instant::from_secs(1), M, Duration::from_millis(100));
        a.in_recovery = true;
        c.on_ack(&a);
        assert_eq!(c.window(), 70_000);
        assert!(c.epoch_age(a.now).is_none());
    }

    #[test]
    fn recovery_exit_deflates_to_ssthresh_and_starts_a_new_epoch() {
        let mut c = after_loss_at_zero(cubic(), 100_000);
        c.set_window(95_000); // inflated by the sender during recovery
        c.on_recovery_exit(&RecoveryExit {
            now: Instant::from_secs(1),
            in_flight: 60_000,
            retransmitted_segments: 1,
            mss: MSS,
        });
        assert_eq!(c.window(), 70_000);
        let now = Instant::from_secs(1) + Duration::from_millis(1);
        c.on_ack(&ack_at(now, M, Duration::from_millis(100)));
        assert_eq!(c.epoch.unwrap().cwnd_epoch, 70_000);
        assert_eq!(c.epoch_age(now), Some(Duration::ZERO));
    }

    #[test]
    fn max_window_caps_growth() {
        let mut c = cubic_with(|cfg| cfg.params.max_window = 3 * M);
        for _ in 0..10 {
            c.on_ack(&ack(M));
        }
        assert_eq!(c.window(), 3 * M);
    }
}
