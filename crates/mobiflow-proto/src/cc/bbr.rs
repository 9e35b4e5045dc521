//! BBR version 1 as Linux runs it (`net/ipv4/tcp_bbr.c`, mainline; Cardwell et al.,
//! "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016).
//!
//! On every ACK ([`CongestionController::on_rate_sample`], Linux `bbr_main`) BBR
//! updates a model of the path from the delivery-rate sample (`tcp::rate`):
//!
//! * the bottleneck bandwidth, a windowed maximum of the delivery rate over 10
//!   packet-timed rounds (`bbr_update_bw`, Kathleen Nichols' `minmax` filter of
//!   `lib/win_minmax.c`); rounds are counted by the delivered count
//!   (`next_rtt_delivered`); application-limited samples count only when they raise
//!   the estimate;
//! * the minimum RTT over 10 s (`bbr_update_min_rtt`; renewed only by a lower sample
//!   before it expires, and not by a possibly delayed ACK after);
//! * the state machine: STARTUP (pacing and cwnd gain 2/ln 2) until the bandwidth
//!   grew less than 25 % in 3 rounds (`bbr_check_full_bw_reached`), DRAIN (pacing
//!   gain ln 2 / 2) until what is in flight fits one BDP (`bbr_check_drain`),
//!   PROBE_BW cycling the pacing gain through 1.25, 0.75, 1 ×6 from a random phase
//!   (`bbr_reset_probe_bw_mode`, `bbr_is_next_cycle_phase`), and PROBE_RTT when the
//!   minimum RTT is 10 s old: cwnd 4 packets for 200 ms and a round;
//! * the long-term bandwidth of a policer (`bbr_lt_bw_sampling`): two intervals of 4
//!   to 16 rounds with at least 20 % loss and a consistent rate set the estimate to
//!   their average for 48 rounds;
//! * the degree of ACK aggregation (`bbr_update_ack_aggregation`), which adds
//!   `extra_acked` to the target cwnd once the pipe is full.
//!
//! It then sets the pacing rate, `pacing_gain × bw` less 1 %, and cwnd, which grows
//! by the data delivered towards `cwnd_gain × BDP` plus 3 segments of quantisation
//! budget (`bbr_quantization_budget`, `bbr_tso_segs_goal` in units of this sender's
//! segments), with packet conservation on the first round of a recovery and the
//! cwnd of before the recovery restored after it (`bbr_set_cwnd_to_recover_or_restore`).
//!
//! The sender paces at [`Bbr::pacing_rate`] (`tcp::pacing`) and does not restart from
//! the initial window after idle (Linux skips `tcp_slow_start_after_idle_check` for a
//! controller with `cong_control`). Gains are Linux's fixed-point values in units of
//! 1/256; bandwidths are bytes per second, cwnd is counted in segments as Linux does.
//!

use super::{
    CaState, CcMetrics, CongestionController, CongestionEvent, CongestionKind, RateSample,
    RecoveryExit, WindowParams,
};
use crate::time::{Duration, Instant};

/// Fixed-point unit of the gains (Linux `BBR_UNIT`, `1 << BBR_SCALE`).
const UNIT: u64 = 256;
/// 2/ln 2 (`bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1`): STARTUP's gains.
const HIGH_GAIN: u64 = UNIT * 2885 / 1000 + 1;
/// ln 2 / 2 (`bbr_drain_gain`): DRAIN's pacing gain.
const DRAIN_GAIN: u64 = UNIT * 1000 / 2885;
/// PROBE_BW's cwnd gain (`bbr_cwnd_gain`).
const CWND_GAIN: u64 = UNIT * 2;
/// PROBE_BW's pacing gains (`bbr_pacing_gain`).
const PACING_GAIN: [u64; CYCLE_LEN] = [
    UNIT * 5 / 4,
    UNIT * 3 / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
const CYCLE_LEN: usize = 8;
/// The starting phase is drawn among this many (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Window of the bandwidth filter, in rounds (`bbr_bw_rtts = CYCLE_LEN + 2`).
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Window of the min_rtt filter (`bbr_min_rtt_win_sec`).
const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// Time at the minimum cwnd in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// Below this pacing rate (bytes/s) one segment per burst (`bbr_min_tso_rate`, bits).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// Pace 1 % below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Minimum cwnd, packets (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u64 = 4;
/// Growth that counts as more bandwidth (`bbr_full_bw_thresh`: 1.25) and the rounds
/// without it after which the pipe is full (`bbr_full_bw_cnt`).
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling (`bbr_lt_*`): rounds per interval at least, loss ratio (of
/// 256), bandwidth ratio (of 256) and difference (bytes/s) of consistent intervals,
/// rounds of use.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation (`bbr_extra_acked_*`, `bbr_ack_epoch_acked_reset_thresh`).
const EXTRA_ACKED_GAIN: u64 = UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
/// Linux `TCP_INIT_CWND`: the cwnd cap before any RTT sample, and the delivered
/// count below which STARTUP grows cwnd regardless.
const TCP_INIT_CWND: u64 = 10;
/// Largest TSO burst BBR plans for: `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`
/// (320 bytes of header room on x86-64).
const GSO_MAX_BYTES: u64 = 65536 - 1 - 320;
/// Linux's `TCP_INFINITE_SSTHRESH`, in bytes here.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// BBR's parameter: the seed of its random choice of the starting phase of the gain
/// cycle (Linux draws it from `prandom_u32_max`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BbrParams {
    pub seed: u64,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct BbrConfig {
    pub params: WindowParams,
    pub bbr: BbrParams,
}

/// BBR's modes (`enum bbr_mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BbrMode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Copy, Clone, Debug, Default)]
struct Sample {
    t: u64,
    v: f64,
}

/// Windowed maximum (Linux `lib/win_minmax.c`, `minmax_running_max`): the best, second
/// and third best samples of the window, so that the maximum ages out in steps.
#[derive(Copy, Clone, Debug, Default)]
struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    fn get(&self) -> f64 {
        self.s[0].v
    }
    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [Sample { t, v }; 3];
        v
    }
    fn running_max(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t - self.s[2].t > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        let dt = t - self.s[0].t;
        if dt > win {
            // The whole window passed without a new maximum: the second choice is the
            // new maximum, perhaps twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t - self.s[0].t > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new maximum: a second choice from
            // the second quarter.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// Linux's ordering of the CA states (`Open < Disorder < CWR < Recovery < Loss`).
fn in_recovery_or_loss(s: CaState) -> bool {
    matches!(s, CaState::Recovery | CaState::Loss)
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mss: u64,
    /// cwnd in segments, as Linux's `snd_cwnd`.
    cwnd: u64,
    ssthresh: u64,
    pacing_rate: u64,
    mode: BbrMode,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    bw: MaxFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    cycle_mstamp: Instant,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pacing_gain: u64,
    cwnd_gain: u64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: f64,
    has_seen_rtt: bool,
    prior_cwnd: u64,
    ack_epoch_mstamp: Instant,
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// The connection's `tp->delivered`, `tp->delivered_mstamp` and `tp->lost` as of
    /// the last sample (bytes).
    delivered: u64,
    delivered_at: Instant,
    lost: u64,
    /// PRNG state for the starting phase (SplitMix64).
    rng: u64,
    /// Counters for tests and traces: PROBE_RTT entries.
    probe_rtt_count: u64,
}

impl Bbr {
    /// `bbr_init`, with the initial window of `cfg.params`.
    pub fn new(cfg: BbrConfig, mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        let mut b = Bbr {
            cwnd: cfg.params.initial_window.div_ceil(mss).max(1),
            ssthresh: cfg.params.initial_ssthresh.min(INFINITE_SSTHRESH),
            pacing_rate: 0,
            mode: BbrMode::Startup,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Instant::ZERO,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0.0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            ack_epoch_mstamp: Instant::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            delivered: 0,
            delivered_at: Instant::ZERO,
            lost: 0,
            rng: cfg.bbr.seed,
            probe_rtt_count: 0,
            mss,
            cfg,
        };
        b.init_pacing_rate_from_rtt(None);
        b
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// The bandwidth estimate in bytes per second (`bbr_bw`).
    pub fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }
    /// The windowed maximum of the delivery rate, bytes per second (`bbr_max_bw`).
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Packet-timed rounds so far (`rtt_cnt`).
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain as f64 / UNIT as f64
    }
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    pub fn uses_long_term_bw(&self) -> bool {
        self.lt_use_bw
    }
    /// Times PROBE_RTT was entered.
    pub fn probe_rtt_count(&self) -> u64 {
        self.probe_rtt_count
    }

    /// `prandom_u32_max(n)` from a SplitMix64 stream seeded by the connection.
    fn random_below(&mut self, n: u64) -> u64 {
        let z = crate::rng::splitmix64(&mut self.rng);
        ((z >> 32) * n) >> 32
    }

    /// Bytes per second of `bw` with `gain`, 1 % under (`bbr_rate_bytes_per_sec`).
    fn rate_bytes_per_sec(bw: f64, gain: u64) -> f64 {
        bw * gain as f64 / UNIT as f64 * (100 - PACING_MARGIN_PERCENT) as f64 / 100.0
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / SRTT (1 ms before any).
    fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.max(Duration::from_micros(1))
            }
            None => Duration::from_millis(1),
        };
        let bw = (self.cwnd * self.mss) as f64 / rtt.as_secs_f64();
        self.pacing_rate = Self::rate_bytes_per_sec(bw, HIGH_GAIN) as u64;
    }

    /// `bbr_set_pacing_rate`: never lower before the pipe is full.
    fn set_pacing_rate(&mut self, bw: f64, gain: u64, srtt: Option<Duration>) {
        let rate = Self::rate_bytes_per_sec(bw, gain) as u64;
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`, in this sender's segments: about 1 ms at the pacing rate
    /// (`sk_pacing_shift = 10`), at least 1 or 2 (`bbr_min_tso_segs`), at most 127.
    fn tso_segs_goal(&self) -> u64 {
        let bytes = (self.pacing_rate >> 10).min(GSO_MAX_BYTES);
        let min = if self.pacing_rate < MIN_TSO_RATE {
            1
        } else {
            2
        };
        (bytes / self.mss).max(min).min(0x7f)
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if !in_recovery_or_loss(self.prev_ca_state) && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain) in segments.
    fn bdp(&self, bw: f64, gain: u64) -> u64 {
        let Some(min_rtt) = self.min_rtt else {
            return TCP_INIT_CWND;
        };
        let pkts = bw * min_rtt.as_secs_f64() * gain as f64 / UNIT as f64 / self.mss as f64;
        pkts.ceil() as u64
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: what will be in the network when the next paced
    /// segment leaves.
    fn packets_in_net_at_edt(&self, rs: &RateSample, inflight_now: u64) -> u64 {
        let edt = rs.next_departure.max(rs.now);
        let interval = (edt - rs.now).as_secs_f64();
        let delivered = (self.bw() * interval / self.mss as f64) as u64;
        let mut at_edt = inflight_now;
        if self.pacing_gain > UNIT {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(delivered)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX.as_secs_f64() / self.mss as f64) as u64;
        let aggr = EXTRA_ACKED_GAIN * self.extra_acked[0].max(self.extra_acked[1]) / UNIT;
        aggr.min(max_aggr)
    }

    fn pkts(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: the cwnd to use and whether packet
    /// conservation decides it.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u64) -> (u64, bool) {
        let (prev, state) = (self.prev_ca_state, rs.ca_state);
        let mut cwnd = self.cwnd;
        let in_flight = self.pkts(rs.in_flight);
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(self.pkts(rs.losses)).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // The first round of a recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = self.delivered;
            cwnd = in_flight + acked;
        } else if in_recovery_or_loss(prev) && !in_recovery_or_loss(state) {
            // Leaving recovery: restore the cwnd of before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, rs: &RateSample, acked: u64, bw: f64, gain: u64) {
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                let target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || self.delivered < TCP_INIT_CWND * self.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        let clamp = (self.cfg.params.max_window / self.mss).max(1);
        self.cwnd = cwnd.min(clamp);
        if self.mode == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let is_full_length = self
            .min_rtt
            .is_some_and(|m| self.delivered_at - self.cycle_mstamp > m);
        if self.pacing_gain == UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(rs, self.pkts(rs.prior_in_flight));
        let bw = self.max_bw();
        if self.pacing_gain > UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = self.delivered_at;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than the 0.75 one.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if !self.full_bw_reached {
            self.mode = BbrMode::Startup;
        } else {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self) {
        self.lt_last_stamp_ms = self.delivered_at.as_nanos() / 1_000_000;
        self.lt_last_delivered = self.delivered;
        self.lt_last_lost = self.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_interval_done`: two consistent intervals mean a policer.
    fn lt_bw_interval_done(&mut self, bw: f64) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff * UNIT as f64 <= LT_BW_RATIO as f64 * self.lt_bw
                || Self::rate_bytes_per_sec(diff, UNIT) <= LT_BW_DIFF as f64
            {
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval();
    }

    /// `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, losses: u64, is_app_limited: bool) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling();
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Wait for the first loss: the policer's tokens are spent.
        if !self.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval();
            self.lt_is_sampling = true;
        }
        if is_app_limited {
            self.reset_lt_bw_sampling();
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling();
            return;
        }
        // End the interval at a loss.
        if losses == 0 {
            return;
        }
        let lost = self.lost - self.lt_last_lost;
        let delivered = self.delivered - self.lt_last_delivered;
        if delivered == 0 || lost * UNIT < LT_LOSS_THRESH * delivered {
            return;
        }
        let now_ms = self.delivered_at.as_nanos() / 1_000_000;
        let t = now_ms as i64 - self.lt_last_stamp_ms as i64;
        if t < 1 {
            return;
        }
        self.lt_bw_interval_done(delivered as f64 / (t as f64 / 1e3));
    }

    /// `bbr_update_bw`.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses, rs.is_app_limited);
        let bw = delivered as f64 / interval.as_secs_f64();
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, rs: &RateSample) {
        let acked = self.pkts(rs.acked_sacked);
        if EXTRA_ACKED_GAIN == 0 || acked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = (self.delivered_at - self.ack_epoch_mstamp).as_secs_f64();
        let mut expected = (self.bw() * epoch / self.mss as f64) as u64;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_at;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = self.full_bw * FULL_BW_THRESH as f64 / UNIT as f64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, rs: &RateSample) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            self.ssthresh = self.inflight(self.max_bw(), UNIT) * self.mss;
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(rs, self.pkts(rs.in_flight))
                <= self.inflight(self.max_bw(), UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`. Returns true when the sender must mark the data in flight
    /// application-limited (PROBE_RTT's low rate is not a bandwidth sample).
    fn update_min_rtt(&mut self, rs: &RateSample) -> bool {
        let now = rs.now;
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            // Only a strictly lower sample renews the filter before it expires (Linux
            // 5.10, "tcp: only postpone PROBE_RTT if RTT is < current min_rtt
            // estimate"): on a path whose RTT never changes, PROBE_RTT comes every
            // 10 s. An expired filter takes any sample but a possibly delayed ACK's.
            if self.min_rtt.is_none_or(|m| rtt < m) || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if filter_expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.probe_rtt_count += 1;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        let mut mark_app_limited = false;
        if self.mode == BbrMode::ProbeRtt {
            mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none() && self.pkts(rs.in_flight) <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        mark_app_limited
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw if self.lt_use_bw => (UNIT, CWND_GAIN),
            BbrMode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            BbrMode::ProbeRtt => (UNIT, UNIT),
        };
    }
}

impl CongestionController for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// BBR's window follows the rate samples (`cong_control` replaces `cong_avoid`).
    fn on_ack(&mut self, _ack: &super::AckSample) {}

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    /// `bbr_main`: update the model, then the pacing rate and cwnd.
    fn on_rate_sample(&mut self, rs: &RateSample) -> bool {
        self.delivered = rs.delivered_total;
        self.delivered_at = rs.delivered_at;
        self.lost += rs.losses;
        if self.min_rtt.is_none() && !self.has_seen_rtt {
            // `bbr_init` runs when the connection is established, with the
            // handshake's RTT as `tcp_min_rtt`; this one is built with the sender.
            self.min_rtt = rs.min_rtt;
            self.min_rtt_stamp = rs.now;
        }
        self.update_bw(rs);
        self.update_ack_aggregation(rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        let mark_app_limited = self.update_min_rtt(rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, rs.srtt);
        let acked = self.pkts(rs.acked_sacked);
        self.set_cwnd(rs, acked, bw, self.cwnd_gain);
        mark_app_limited
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`.
    fn on_transmit_start(&mut self, now: Instant, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_mstamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            BbrMode::ProbeBw => {
                let bw = self.bw();
                self.set_pacing_rate(bw, UNIT, None);
            }
            BbrMode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }

    /// `bbr_ssthresh` (cwnd saved for the end of the recovery; ssthresh unchanged);
    /// after a timeout cwnd is what is in flight plus one, one segment since every
    /// segment is marked lost (`tcp_enter_loss`).
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        match ev.kind {
            CongestionKind::Timeout => self.cwnd = 1,
            CongestionKind::FastRetransmit | CongestionKind::Ecn => self.save_cwnd(),
        }
    }

    /// Nothing: the next rate sample restores the cwnd of before the recovery.
    fn on_recovery_exit(&mut self, _ex: &RecoveryExit) {}

    /// `bbr_undo_cwnd`: the slow-down was spurious, so full-pipe detection and
    /// long-term sampling start again.
    fn on_spurious_congestion(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling();
    }

    /// `bbr_set_state(TCP_CA_Loss)`, preceded by the cwnd save `tcp_enter_loss` makes
    /// through `bbr_ssthresh`: a timeout ends the round and is a loss for long-term
    /// sampling.
    fn on_state_change(&mut self, _from: CaState, to: CaState) {
        if to == CaState::Loss {
            self.save_cwnd();
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0.0;
            self.round_start = true;
            self.lt_bw_sampling(1, false);
        }
    }

    fn on_mss_update(&mut self, mss: u32) {
        self.mss = mss.max(1) as u64;
    }

    fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
        self.ssthresh = ssthresh_bytes;
    }

    fn set_window(&mut self, cwnd_bytes: u64) {
        self.cwnd = cwnd_bytes.div_ceil(self.mss).max(1);
    }

    fn window(&self) -> u64 {
        self.cwnd * self.mss
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.ssthresh,
            mode: Some(match self.mode {
                BbrMode::Startup => "startup",
                BbrMode::Drain => "drain",
                BbrMode::ProbeBw => "probe_bw",
                BbrMode::ProbeRtt => "probe_rtt",
            }),
            bw_bytes_per_sec: Some(self.bw()),
            min_rtt: self.min_rtt,
            rounds: Some(self.rtt_cnt),
            probe_rtts: Some(self.probe_rtt_count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_util::MSS;

    fn bbr() -> Bbr {
        Bbr::new(
            BbrConfig {
                params: WindowParams::rfc5681(10 * MSS as u64),
                bbr: BbrParams { seed: 1 },
            },
            MSS,
        )
    }

    /// One round of 100 ms delivering `delivered` bytes of which `lost` more were
    /// marked lost, as one ACK's sample at the round's end, with an RTT of 50 ms.
    fn round(b: &mut Bbr, r: u64, delivered: u64, lost: u64) {
        round_with_rtt(b, r, delivered, lost, Duration::from_millis(50), false);
    }

    /// [`round`] with the ACK's RTT sample and its `is_ack_delayed`.
    fn round_with_rtt(b: &mut Bbr, r: u64, delivered: u64, lost: u64, rtt: Duration, delayed: bool) {
        let now = Instant::from_millis(100 * r);
        b.on_rate_sample(&RateSample {
            now,
            delivered: Some(delivered),
            interval: Some(Duration::from_millis(100)),
            prior_delivered: (r - 1) * delivered,
            is_app_limited: false,
            acked_sacked: delivered,
            losses: lost,
            rtt: Some(rtt),
            is_ack_delayed: delayed,
            srtt: Some(Duration::from_millis(50)),
            min_rtt: Some(Duration::from_millis(50)),
            prior_in_flight: 0,
            in_flight: 0,
            delivered_total: r * delivered,
            delivered_at: now,
            ca_state: CaState::Open,
            next_departure: now,
            mss: MSS,
        });
    }

    /// `bbr_update_min_rtt` since Linux 5.10: a sample equal to the minimum does not
    /// renew the 10 s filter, so on a path whose RTT never changes PROBE_RTT comes
    /// back every 10 s (plus its own 200 ms and round); a strictly lower sample
    /// postpones it.
    #[test]
    fn an_unchanging_rtt_does_not_postpone_probe_rtt() {
        let ms50 = Duration::from_millis(50);
        let mut b = bbr();
        for r in 1..=250 {
            round_with_rtt(&mut b, r, 100_000, 0, ms50, false);
        }
        assert_eq!(b.probe_rtt_count(), 2, "PROBE_RTT at 10.1 s and 20.4 s");
        let mut b = bbr();
        for r in 1..=250 {
            let rtt = ms50 - Duration::from_micros(r);
            round_with_rtt(&mut b, r, 100_000, 0, rtt, false);
        }
        assert_eq!(b.probe_rtt_count(), 0);
    }

    /// An expired filter takes the next sample, unless its ACK may have been delayed
    /// (`!rs->is_ack_delayed`): the receiver's delay would inflate the minimum.
    #[test]
    fn a_possibly_delayed_ack_does_not_refill_an_expired_minimum() {
        let mut b = bbr();
        round_with_rtt(&mut b, 1, 100_000, 0, Duration::from_millis(50), false);
        let later = Duration::from_millis(90);
        round_with_rtt(&mut b, 102, 100_000, 0, later, true);
        assert_eq!(b.min_rtt(), Some(Duration::from_millis(50)));
        round_with_rtt(&mut b, 103, 100_000, 0, later, false);
        assert_eq!(b.min_rtt(), Some(later));
    }

    /// `bbr_lt_bw_sampling`: two sampling intervals of at least 4 rounds, each with
    /// a loss ratio of 20 % or more (`bbr_lt_loss_thresh` = 50/256) and delivery rates
    /// within 1/8 of each other, mean a policer: the estimate becomes their average
    /// and the pacing gain 1.
    #[test]
    fn two_lossy_intervals_at_a_consistent_rate_set_the_long_term_bandwidth() {
        let mut b = bbr();
        for r in 1..=12 {
            round(&mut b, r, 100_000, 30_000);
        }
        assert!(b.uses_long_term_bw());
        assert!((b.bw() - 1_000_000.0).abs() < 1.0, "{}", b.bw());
        assert_eq!(b.pacing_gain(), 1.0);
        // The same rounds without loss: no policer.
        let mut b = bbr();
        for r in 1..=12 {
            round(&mut b, r, 100_000, 0);
        }
        assert!(!b.uses_long_term_bw());
        // A loss ratio under 20 %: no policer either.
        let mut b = bbr();
        for r in 1..=12 {
            round(&mut b, r, 100_000, 15_000);
        }
        assert!(!b.uses_long_term_bw());
    }

    /// `minmax_running_max` over 10 rounds: a maximum ages out of the window, the
    /// second-best sample of the window taking its place.
    #[test]
    fn the_bandwidth_filter_forgets_a_maximum_after_ten_rounds() {
        let mut f = MaxFilter::default();
        f.running_max(10, 1, 100.0);
        for t in 2..=11 {
            assert_eq!(f.running_max(10, t, 50.0), 100.0, "round {t}");
        }
        assert_eq!(f.running_max(10, 12, 50.0), 50.0);
    }

    /// `bbr_reset_probe_bw_mode`: the starting phase is random among 7 (never the
    /// 0.75 phase), drawn from the connection's seed.
    #[test]
    fn the_probe_bw_start_phase_is_seeded_and_never_the_draining_one() {
        let mut seen = [false; CYCLE_LEN];
        for seed in 0..200 {
            let mut b = bbr();
            b.rng = seed;
            b.full_bw_reached = true;
            b.reset_probe_bw_mode();
            seen[b.cycle_idx] = true;
            let mut again = bbr();
            again.rng = seed;
            again.reset_probe_bw_mode();
            assert_eq!(again.cycle_idx, b.cycle_idx);
        }
        assert!(!seen[1], "the 0.75 phase is never the first");
        assert_eq!(seen.iter().filter(|&&s| s).count(), 7);
    }
}
