//! CUBIC as Linux 6.x runs it (`net/ipv4/tcp_cubic.c`, with `tcp_slow_start` and
//! `tcp_cong_avoid_ai` of `net/ipv4/tcp_cong.c`), for the `linux` profile.
//!
//! The curve is RFC 9438's; the arithmetic is the kernel's, and it differs where it
//! shows in a trace:
//!
//! ```text
//!   windows    in whole segments (snd_cwnd, snd_ssthresh); an ACK counts the
//!              segments it delivers, cumulatively or by SACK
//!   slow start cwnd += segments acked, up to ssthresh; the rest of the ACK goes to
//!              congestion avoidance (tcp_slow_start: no min(N, SMSS) limit)
//!   time       in jiffies (CONFIG_HZ, 250 by default: `hz`), t and K in 1/1024 s (BICTCP_HZ)
//!   beta       717/1024; W_max = cwnd*(1024+717)/2048 with fast convergence
//!   C          bic_scale 41/1024 → cube_rtt_scale = 410, K = cbrt(cube_factor *
//!              (W_max - cwnd)) with cube_factor = 2^40 / 410
//!   target     W(t + delay_min): one *minimum* RTT ahead (RFC 9438: SRTT)
//!   growth     cnt = cwnd / (target - cwnd) ACKed segments per +1 segment
//!              (tcp_cong_avoid_ai); 100*cwnd when target <= cwnd; at most 20
//!              (5 % per RTT) before any loss (last_max_cwnd = 0); at least 2 (the
//!              window grows at most 1.5x per RTT); recomputed at most once per
//!              jiffy, and, if cwnd has not changed, only every HZ/32
//!   Reno       tcp_cwnd += 1 every cwnd*beta_scale/8 ACKed segments (beta_scale =
//!   friendly   15, i.e. Reno's rate scaled by 3(1-beta)/(1+beta)); when tcp_cwnd >
//!              cwnd, cnt <= cwnd / (tcp_cwnd - cwnd). alpha never becomes 1 (RFC 9438
//!              §4.3 lets it once W_est reaches cwnd_prior)
//!   timeout    ssthresh as on a loss, then the whole CUBIC state is forgotten
//!              (cubictcp_state on TCP_CA_Loss: last_max_cwnd = 0, delay_min = 0,
//!              HyStart armed again)
//!   idle       CA_EVENT_TX_START (data sent with nothing in flight) moves
//!              epoch_start forward by the time since the last data segment left
//!   delay_min  the minimum RTT sample, ignored for 1 s after an epoch starts
//!              ("right after fast recovery", cubictcp_acked)
//!   undo       cwnd = max(cwnd, prior cwnd), ssthresh = max(ssthresh, prior
//!              ssthresh) (tcp_reno_undo_cwnd, tcp_undo_cwnd_reduction); CUBIC's own
//!              state is not restored
//! ```
//!
//! One deliberate difference: `cubic_root` here is the exact integer cube root; the
//! kernel's is a 64-entry table refined by hand plus one Newton-Raphson step, with an
//! average error of 0.195 % (its comment), so K may differ by a few 1/1024 s.
//!
//! HyStart ([`super::hystart`]) runs from `cubictcp_acked` when it is on.

use super::hystart::{Hystart, HystartAck};
use super::{
    AckSample, CaEvent, CongestionController, CongestionEvent, CongestionKind, CubicParams,
    RecoveryExit, WindowParams,
};
use crate::time::{Duration, Instant};

/// BICTCP_BETA_SCALE and the kernel's `beta` (717/1024 ≈ 0.7).
pub const BETA_SCALE: u64 = 1024;
pub const BETA: u64 = 717;
/// BICTCP_HZ: t and K are counted in 1/2^10 s.
pub const BICTCP_HZ: u32 = 10;
/// `bic_scale` = 41: C = 41/1024 × 10 (the constant SRTT of 100 ms the kernel folds
/// in) ≈ 0.4 segments/s³.
pub const BIC_SCALE: u64 = 41;
/// `cube_rtt_scale = bic_scale * 10` (`cubictcp_register`).
pub const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// `cube_factor = 2^(10 + 3*BICTCP_HZ) / (bic_scale * 10)` (`cubictcp_register`).
pub const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE * 10);
/// `beta_scale = 8*(1024+beta)/3/(1024-beta)` in integer steps (`cubictcp_register`):
/// 15.
pub const BETA_SCALE_FRIENDLY: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `cnt` before the first loss (`last_max_cwnd == 0`): at most 20, +5 % per RTT.
const CNT_NO_LOSS_MAX: u64 = 20;

/// The integer cube root ⌊∛a⌋ (the kernel's `cubic_root` approximates it; see the
/// module documentation).
pub fn cubic_root(a: u64) -> u64 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && (x as u128).pow(3) > a as u128 {
        x -= 1;
    }
    while ((x + 1) as u128).pow(3) <= a as u128 {
        x += 1;
    }
    x
}

/// Linux's CUBIC. See the module documentation.
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    p: CubicParams,
    params: WindowParams,
    mss: u64,
    /// `snd_cwnd`, `snd_ssthresh` (u64::MAX: infinite), `snd_cwnd_cnt`,
    /// `snd_cwnd_clamp`, in segments.
    cwnd: u64,
    ssthresh: u64,
    cwnd_cnt: u64,
    cwnd_clamp: u64,
    // struct bictcp
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    /// Jiffies of the last `cnt` computation.
    last_time: u64,
    bic_origin_point: u64,
    /// K in 1/1024 s.
    bic_k: u64,
    /// Minimum RTT in µs; 0 until the first sample.
    delay_min_us: u64,
    /// Jiffies at the start of the epoch; `None` for the kernel's 0.
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    hystart: Option<Hystart>,
    /// `SND.NXT` of the last ACK (where HyStart's round ends after a timeout).
    snd_nxt: u64,
    /// `prior_cwnd`, `prior_ssthresh` of the last reduction, for undo.
    prior: Option<(u64, u64)>,
}

impl LinuxCubic {
    pub fn new(p: CubicParams, params: WindowParams, mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        let segs = |b: u64| if b == u64::MAX { u64::MAX } else { b / mss };
        LinuxCubic {
            cwnd: segs(params.initial_window).max(1),
            ssthresh: segs(params.initial_ssthresh),
            cwnd_cnt: 0,
            cwnd_clamp: segs(params.max_window).max(1),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            hystart: p.hystart_params().map(Hystart::new),
            snd_nxt: 0,
            prior: None,
            p,
            params,
            mss,
        }
    }

    /// cwnd in segments.
    pub fn cwnd_segments(&self) -> u64 {
        self.cwnd
    }

    /// `ca->cnt`: ACKed segments per one-segment increase.
    pub fn cnt(&self) -> u64 {
        self.cnt
    }

    /// `last_max_cwnd` in segments (0 before a loss and after a timeout).
    pub fn last_max_cwnd(&self) -> u64 {
        self.last_max_cwnd
    }

    /// K in 1/1024 s.
    pub fn k(&self) -> u64 {
        self.bic_k
    }

    /// `delay_min` in µs (0: no sample yet).
    pub fn delay_min_us(&self) -> u64 {
        self.delay_min_us
    }

    /// The epoch's start in jiffies.
    pub fn epoch_start(&self) -> Option<u64> {
        self.epoch_start
    }

    /// HyStart ended slow start.
    pub fn hystart_found(&self) -> bool {
        self.hystart.as_ref().is_some_and(|h| h.found())
    }

    fn hz(&self) -> u64 {
        self.p.hz.max(1) as u64
    }

    /// `tcp_jiffies32` at `now`.
    pub fn jiffies(&self, now: Instant) -> u64 {
        (now.as_nanos() as u128 * self.hz() as u128 / 1_000_000_000) as u64
    }

    /// `usecs_to_jiffies`: rounded up.
    fn usecs_to_jiffies(&self, us: u64) -> u64 {
        (us as u128 * self.hz() as u128).div_ceil(1_000_000) as u64
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `cubictcp_acked`: track `delay_min` and run HyStart.
    fn acked(&mut self, ack: &AckSample, rtt: Duration) {
        if let Some(ep) = self.epoch_start {
            if self.jiffies(ack.now).saturating_sub(ep) < self.hz() {
                // "Discard delay samples right after fast recovery."
                return;
            }
        }
        let delay_us = (rtt.as_nanos() / 1000).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay_us {
            self.delay_min_us = delay_us;
        }
        let (cwnd, ssthresh, mss) = (self.cwnd, self.ssthresh, self.mss);
        let delay_min = Duration::from_micros(self.delay_min_us);
        let Some(h) = self.hystart.as_mut() else {
            return;
        };
        if !h.active(cwnd < ssthresh) {
            return;
        }
        let a = HystartAck {
            now: ack.now,
            snd_una: ack.snd_una,
            snd_nxt: ack.snd_nxt,
            delay: Duration::from_micros(delay_us),
            delay_min,
            cwnd,
            ssthresh,
            mss,
            srtt: ack.srtt,
        };
        if h.update(&a).is_some() {
            self.ssthresh = self.cwnd;
        }
    }

    /// `bictcp_update`: `cnt` for this ACK.
    fn update(&mut self, now_j: u64, cwnd: u64, acked: u64) {
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= self.hz() / 32 {
            return;
        }
        // The cubic function is evaluated at most once per jiffy; the Reno-friendly
        // part on every call.
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            if self.epoch_start.is_none() {
                // A new epoch: start counting, and K and the origin of the curve.
                self.epoch_start = Some(now_j);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    self.bic_k = cubic_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd));
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            let epoch = self.epoch_start.unwrap_or(now_j);
            // t = time since the epoch began plus delay_min, in 1/1024 s.
            let t_j = now_j - epoch + self.usecs_to_jiffies(self.delay_min_us);
            let t = ((t_j as u128) << BICTCP_HZ) / self.hz() as u128;
            let offs = t.abs_diff(self.bic_k as u128);
            let delta = ((CUBE_RTT_SCALE as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
                .min(u64::MAX as u128) as u64;
            let target = if t < self.bic_k as u128 {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > CNT_NO_LOSS_MAX {
                self.cnt = CNT_NO_LOSS_MAX;
            }
        }
        // TCP friendliness: the emulated Reno window, one segment per
        // cwnd*beta_scale/8 ACKed segments.
        let delta = (cwnd * BETA_SCALE_FRIENDLY) >> 3;
        if delta > 0 && self.ack_cnt > delta {
            let n = (self.ack_cnt - 1) / delta;
            self.ack_cnt -= n * delta;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_cong_avoid`: `tcp_slow_start`, then `bictcp_update` and
    /// `tcp_cong_avoid_ai` for what is left of the ACK.
    fn cong_avoid(&mut self, now: Instant, mut acked: u64) {
        if self.in_slow_start() {
            let cwnd = (self.cwnd + acked).min(self.ssthresh);
            acked -= cwnd - self.cwnd;
            self.cwnd = cwnd.min(self.cwnd_clamp);
            if acked == 0 {
                return;
            }
        }
        let now_j = self.jiffies(now);
        self.update(now_j, self.cwnd, acked);
        // tcp_cong_avoid_ai(tp, cnt, acked).
        let w = self.cnt;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }

    /// `cubictcp_recalc_ssthresh`: the epoch ends, W_max with fast convergence, and
    /// ssthresh = max(cwnd*beta, 2).
    fn recalc_ssthresh(&mut self) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if self.cwnd < self.last_max_cwnd {
            self.cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            self.cwnd
        };
        (self.cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset` and `bictcp_hystart_reset`.
    fn reset(&mut self, now: Instant) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        let nxt = self.snd_nxt;
        if let Some(h) = self.hystart.as_mut() {
            h.restart(now, nxt);
        }
    }
}

impl CongestionController for LinuxCubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        // Segments delivered (a short segment counts as one, as tcp_skb_pcount).
        let acked = ack.acked_bytes.div_ceil(self.mss);
        if acked == 0 {
            return;
        }
        self.snd_nxt = self.snd_nxt.max(ack.snd_nxt);
        // tcp_clean_rtx_queue calls pkts_acked on every ACK, in any state.
        if let Some(rtt) = ack.rtt {
            self.acked(ack, rtt);
        }
        // tcp_cong_control: PRR, not cong_avoid, in recovery; cubictcp_cong_avoid
        // returns when the window does not limit the sender (tcp_is_cwnd_limited).
        if ack.in_recovery || ack.app_limited {
            return;
        }
        self.cong_avoid(ack.now, acked);
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        if ev.repeated {
            // tcp_enter_loss in TCP_CA_Loss keeps ssthresh; cwnd collapses again.
            self.cwnd = self.params.loss_window_segments.max(1);
            self.cwnd_cnt = 0;
            self.reset(ev.now);
            return;
        }
        // prior_ssthresh = tcp_current_ssthresh: at least 3/4 of cwnd.
        let current = self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2));
        self.prior = Some((self.cwnd, current));
        self.ssthresh = self.recalc_ssthresh();
        self.cwnd_cnt = 0;
        match ev.kind {
            CongestionKind::Timeout => {
                // tcp_enter_loss: cwnd = packets in flight + 1 (one segment when all
                // are marked lost), then TCP_CA_Loss resets CUBIC.
                self.cwnd = self.params.loss_window_segments.max(1);
                self.reset(ev.now);
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                // The sender runs the recovery from cwnd = ssthresh.
                self.cwnd = self.ssthresh.min(self.cwnd_clamp);
            }
        }
    }

    fn on_recovery_exit(&mut self, _ex: &RecoveryExit) {
        // tcp_end_cwnd_reduction: cwnd = ssthresh.
        self.cwnd = self.ssthresh.min(self.cwnd_clamp).max(1);
    }

    fn on_spurious_congestion(&mut self) {
        // tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd.
        if let Some((cwnd, ssthresh)) = self.prior.take() {
            self.cwnd = self.cwnd.max(cwnd).min(self.cwnd_clamp);
            self.ssthresh = self.ssthresh.max(ssthresh);
        }
    }

    fn on_event(&mut self, now: Instant, ev: CaEvent) {
        if let CaEvent::TxStart { idle } = ev {
            // cubictcp_cwnd_event(CA_EVENT_TX_START): shift epoch_start by the idle
            // time (in jiffies), never past now.
            let now_j = self.jiffies(now);
            let delta = now_j - self.jiffies(now - idle);
            if let Some(ep) = self.epoch_start.as_mut() {
                if delta > 0 {
                    *ep = (*ep + delta).min(now_j);
                }
            }
        }
    }

    fn on_mss_update(&mut self, mss: u32) {
        self.mss = mss.max(1) as u64;
    }

    fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
        self.ssthresh = (ssthresh_bytes / self.mss).max(2);
    }

    /// Keeps the epoch: the kernel's own cwnd changes outside CUBIC
    /// (`tcp_cwnd_restart`) do not tell it.
    fn set_window(&mut self, cwnd_bytes: u64) {
        self.cwnd = (cwnd_bytes / self.mss).clamp(1, self.cwnd_clamp);
    }

    fn window(&self) -> u64 {
        self.cwnd.saturating_mul(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh.saturating_mul(self.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::*;
    use crate::cc::CcKind;

    /// The kernel's CUBIC at HZ = 1000, the clock the hand computations below use.
    fn linux(hystart: bool) -> LinuxCubic {
        LinuxCubic::new(
            CubicParams {
                hystart,
                hz: 1000,
                ..CubicParams::linux()
            },
            WindowParams::rfc5681(10 * M),
            MSS,
        )
    }

    fn ack_at(now: Instant, bytes: u64, rtt: Duration) -> AckSample {
        ack_sample(now, bytes, Some(rtt), rtt, MSS)
    }

    /// cwnd = `segs` segments, then a fast retransmit and the end of its recovery.
    fn after_loss(segs: u64) -> LinuxCubic {
        after_loss_at(1000, segs)
    }

    /// [`after_loss`] on a kernel clock of `hz` jiffies per second.
    fn after_loss_at(hz: u32, segs: u64) -> LinuxCubic {
        let mut c = LinuxCubic::new(
            CubicParams {
                hystart: false,
                hz,
                ..CubicParams::linux()
            },
            WindowParams::rfc5681(10 * M),
            MSS,
        );
        c.set_window(segs * M);
        c.set_ssthresh(segs * M / 2);
        c.on_congestion_event(&congestion(
            CongestionKind::FastRetransmit,
            Instant::ZERO,
            segs * M,
            MSS,
        ));
        c.on_recovery_exit(&RecoveryExit {
            now: Instant::ZERO,
            in_flight: 0,
            retransmitted_segments: 1,
            mss: MSS,
        });
        c
    }

    /// One ACK per segment, `rtt / cwnd` apart, each with an RTT sample of `rtt`,
    /// for `rounds` rounds; cwnd in segments after each round.
    fn rounds(c: &mut LinuxCubic, now: &mut Instant, rtt: Duration, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let acks = c.cwnd_segments();
                let step = rtt / acks;
                for _ in 0..acks {
                    *now += step;
                    c.on_ack(&ack_at(*now, M, rtt));
                }
                c.cwnd_segments()
            })
            .collect()
    }

    /// [`after_loss`] of a 100-segment window, then `n` rounds of 100 ms from time zero;
    /// with the time after them.
    fn rounds_after_loss(n: usize) -> (LinuxCubic, Instant) {
        let mut c = after_loss(100);
        let mut now = Instant::ZERO;
        rounds(&mut c, &mut now, Duration::from_millis(100), n);
        (c, now)
    }

    #[test]
    fn fixed_point_constants_are_the_kernels() {
        // cubictcp_register: beta_scale, cube_rtt_scale and cube_factor.
        assert_eq!(BETA_SCALE_FRIENDLY, 15);
        assert_eq!(CUBE_RTT_SCALE, 410);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(cubic_root(27), 3);
        assert_eq!(cubic_root(26), 2);
        assert_eq!(cubic_root(CUBE_FACTOR * 30), 4316);
    }

    #[test]
    fn cckind_builds_the_kernel_cubic_under_linux_params() {
        let c = CcKind::Cubic(CubicParams::linux()).build(WindowParams::rfc5681(10 * M), MSS);
        assert_eq!(c.name(), "cubic");
        assert_eq!(c.window(), 10 * M);
    }

    #[test]
    fn loss_keeps_717_of_1024_and_remembers_w_max() {
        // cubictcp_recalc_ssthresh: ssthresh = cwnd * 717 / 1024 in whole segments.
        let c = after_loss(100);
        assert_eq!(c.ssthresh(), 70 * M);
        assert_eq!(c.window(), 70 * M);
        assert_eq!(c.last_max_cwnd(), 100);
        // The RFC's beta (0.7) on bytes gives 70_000 for 100_000 too, but not for 37
        // segments: 37 * 717 / 1024 = 25.9 -> 25 segments, where 0.7 * 37 = 25.9 kB.
        let c = after_loss(37);
        assert_eq!(c.ssthresh(), 25 * M);
    }

    #[test]
    fn fast_convergence_as_the_kernel_does_it() {
        // A second loss below the previous W_max: last_max_cwnd = cwnd*(1024+717)/2048.
        let mut c = after_loss(100);
        c.on_congestion_event(&congestion(
            CongestionKind::FastRetransmit,
            Instant::ZERO,
            70 * M,
            MSS,
        ));
        assert_eq!(c.last_max_cwnd(), 70 * 1741 / 2048);
        assert_eq!(c.ssthresh(), 49 * M);
    }

    #[test]
    fn cwnd_trajectory_after_a_loss_matches_a_hand_computation() {
        // Hand computation from tcp_cubic.c (HZ = 1000), RTT = delay_min = 100 ms, one
        // ACK per segment: cwnd 100 -> loss -> 70, last_max_cwnd 100. The first ACK
        // (1 ms, jiffy 1) starts the epoch: K = cbrt(cube_factor * 30) = 4316 (1/1024
        // s), t = (0 + 100 jiffies) << 10 / 1000 = 102, offs = 4214, delta = 410 *
        // 4214^3 >> 40 = 27, target = 100 - 27 = 73, cnt = 70 / 3 = 23. cnt is
        // recomputed when cwnd changes or every HZ/32 jiffies.
        let rtt = Duration::from_millis(100);
        let mut c = after_loss(100);
        let mut now = Instant::ZERO;
        let w = rounds(&mut c, &mut now, rtt, 6);
        assert_eq!(c.k(), 4316);
        assert_eq!(w, [72, 74, 76, 78, 80, 82]);

        // A short path (10 ms) and a small window, where the Reno-friendly estimate
        // (tcp_cwnd, one segment per cwnd*15/8 ACKed segments) takes over: cwnd 20 ->
        // 14, K = cbrt(cube_factor * 6) = 2524.
        let rtt = Duration::from_millis(10);
        let mut c = after_loss(20);
        let mut now = Instant::ZERO;
        let w = rounds(&mut c, &mut now, rtt, 12);
        assert_eq!(c.k(), 2524);
        assert_eq!(w, [15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 19]);
    }

    #[test]
    fn growth_is_capped_at_one_segment_per_two_acks() {
        // Far beyond K the cubic target is huge: cnt = max(cnt, 2), 1.5x per round.
        let rtt = Duration::from_millis(100);
        let (mut c, mut now) = rounds_after_loss(1);
        now += Duration::from_secs(60);
        let before = c.cwnd_segments();
        let after = rounds(&mut c, &mut now, rtt, 1)[0];
        assert_eq!(c.cnt(), 2);
        assert!(after >= before + before / 2 - 1 && after <= before + before / 2 + 1);
    }

    #[test]
    fn growth_before_any_loss_is_at_most_five_percent_per_round() {
        // last_max_cwnd == 0 (no loss yet): cnt <= 20.
        let rtt = Duration::from_millis(100);
        let mut c = linux(false);
        c.set_window(100 * M);
        c.set_ssthresh(100 * M);
        let mut now = Instant::ZERO;
        let w = rounds(&mut c, &mut now, rtt, 3);
        assert_eq!(c.last_max_cwnd(), 0);
        assert_eq!(c.cnt(), 20);
        assert_eq!(w[0], 105);
    }

    #[test]
    fn slow_start_counts_every_segment_acked() {
        // tcp_slow_start: cwnd += acked segments (a delayed ACK of two adds two), up to
        // ssthresh; the rest of the ACK goes to congestion avoidance.
        let mut c = linux(false);
        c.on_ack(&ack_at(
            Instant::from_millis(100),
            2 * M,
            Duration::from_millis(100),
        ));
        assert_eq!(c.cwnd_segments(), 12);
        c.set_ssthresh(13 * M);
        c.on_ack(&ack_at(
            Instant::from_millis(101),
            3 * M,
            Duration::from_millis(100),
        ));
        assert_eq!(c.cwnd_segments(), 13);
        assert!(
            c.epoch_start().is_some(),
            "the two remaining segments started an epoch"
        );
    }

    #[test]
    fn the_default_clock_is_the_kernels_default_hz() {
        // kernel/Kconfig.hz: HZ_250 by default, as the linux profile's timers.
        assert_eq!(CubicParams::linux().hz, 250);
    }

    #[test]
    fn idle_time_shifts_the_epoch_start() {
        // cubictcp_cwnd_event(CA_EVENT_TX_START): epoch_start += idle jiffies (4.5 s is
        // 4500 jiffies at HZ = 1000, 1125 of 4 ms at the default HZ = 250).
        let rtt = Duration::from_millis(100);
        for (hz, shift) in [(250, 1_125), (1000, 4_500)] {
            let mut c = after_loss_at(hz, 100);
            let mut now = Instant::ZERO;
            rounds(&mut c, &mut now, rtt, 2);
            let ep = c.epoch_start().unwrap();
            now += Duration::from_secs(5);
            c.on_event(
                now,
                CaEvent::TxStart {
                    idle: Duration::from_millis(4_500),
                },
            );
            assert_eq!(c.epoch_start(), Some(ep + shift), "HZ = {hz}");
        }
        let mut c = after_loss(100);
        let mut now = Instant::ZERO;
        rounds(&mut c, &mut now, rtt, 2);
        now += Duration::from_secs(5);
        // Never past now.
        c.on_event(
            now,
            CaEvent::TxStart {
                idle: Duration::from_secs(50),
            },
        );
        assert_eq!(c.epoch_start(), Some(c.jiffies(now)));
        // The RFC 5681 restart event alone moves nothing (cubic ignores
        // CA_EVENT_CWND_RESTART).
        let ep = c.epoch_start();
        c.on_event(
            now,
            CaEvent::TxStartAfterIdle {
                idle: Duration::from_secs(1),
            },
        );
        assert_eq!(c.epoch_start(), ep);
    }

    #[test]
    fn idle_shift_keeps_the_cubic_curve_where_it_was() {
        // After the shift, growth resumes as if the idle time had not passed: the
        // same cwnd trajectory as a sender that never paused.
        let rtt = Duration::from_millis(100);
        let mut paused = after_loss(100);
        let mut steady = after_loss(100);
        let (mut t1, mut t2) = (Instant::ZERO, Instant::ZERO);
        rounds(&mut paused, &mut t1, rtt, 2);
        rounds(&mut steady, &mut t2, rtt, 2);
        let idle = Duration::from_secs(10);
        t1 += idle;
        paused.on_event(t1, CaEvent::TxStart { idle });
        assert_eq!(
            rounds(&mut paused, &mut t1, rtt, 4),
            rounds(&mut steady, &mut t2, rtt, 4)
        );
    }

    #[test]
    fn timeout_forgets_the_cubic_state() {
        // tcp_enter_loss: ssthresh first (recalc), then TCP_CA_Loss resets bictcp:
        // last_max_cwnd = 0, delay_min = 0, no epoch.
        let (mut c, now) = rounds_after_loss(2);
        let cwnd = c.cwnd_segments();
        c.on_congestion_event(&congestion(CongestionKind::Timeout, now, cwnd * M, MSS));
        assert_eq!(c.cwnd_segments(), 1);
        assert_eq!(c.ssthresh(), (cwnd * 717 / 1024) * M);
        assert_eq!(c.last_max_cwnd(), 0);
        assert_eq!(c.delay_min_us(), 0);
        assert_eq!(c.epoch_start(), None);
    }

    #[test]
    fn delay_samples_are_ignored_for_a_second_after_the_epoch_starts() {
        // cubictcp_acked: "Discard delay samples right after fast recovery".
        let (mut c, mut now) = rounds_after_loss(1);
        assert_eq!(c.delay_min_us(), 100_000);
        now += Duration::from_millis(1);
        c.on_ack(&ack_at(now, M, Duration::from_millis(60)));
        assert_eq!(c.delay_min_us(), 100_000);
        now += Duration::from_secs(1);
        c.on_ack(&ack_at(now, M, Duration::from_millis(60)));
        assert_eq!(c.delay_min_us(), 60_000);
    }

    #[test]
    fn undo_restores_the_window_but_not_the_cubic_state() {
        // tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd.
        let mut c = after_loss(100);
        c.on_spurious_congestion();
        assert_eq!(c.cwnd_segments(), 100);
        assert_eq!(c.ssthresh(), 75 * M);
        assert_eq!(c.last_max_cwnd(), 100);
    }
}
