//! HyStart, the hybrid slow start of Linux's CUBIC (Ha and Rhee, "Taming the
//! Elephants: New TCP Slow Start", NCSU tech. report 2008; `net/ipv4/tcp_cubic.c`:
//! `bictcp_hystart_reset`, `hystart_update`, `hystart_ack_delay`, `cubictcp_acked`).
//! Not HyStart++ (RFC 9406).
//!
//! Slow start doubles the window every round; by the time a loss shows that the path
//! is full, the window has overshot it by up to a whole BDP plus the queue. HyStart
//! looks for the moment the path fills, and then ends slow start (ssthresh = cwnd)
//! before any loss. It counts rounds by sequence number: a round ends when `SND.UNA`
//! passes `end_seq`, the `SND.NXT` recorded when the round began (on every slow-start
//! ACK with an RTT sample). Two detectors run on those ACKs once cwnd is at least
//! `low_window`:
//!
//! ```text
//!   ACK train:  ACKs that follow each other within ack_delta (2 ms) belong to one
//!               train; when a train has lasted (delay_min + ack_delay) / 2 since the
//!               round began, the round's data already spans half the path's minimum
//!               RTT (the kernel halves when nothing paces the flow): exit.
//!   delay:      curr_rtt = minimum RTT sample of the round; from the 9th sample of
//!               the round (HYSTART_MIN_SAMPLES = 8 first), if
//!               curr_rtt > delay_min + clamp(delay_min / 8, 4 ms, 16 ms): the queue
//!               is building: exit.
//! ```
//!
//! `ack_delay` (`hystart_ack_delay`) is the kernel's allowance for TSO/GRO bursts:
//! the time to send four GSO packets at the pacing rate, at most 1 ms. The pacing
//! rate is `tcp_update_pacing_rate`'s: 200 % of cwnd × MSS / SRTT while cwnd is below
//! half of ssthresh, 120 % above.
//!
//! The controller owns `delay_min` (the minimum RTT it has seen, `ca->delay_min`) and
//! passes it in: Linux's CUBIC also uses it in its window arithmetic.

use crate::time::{Duration, Instant};

/// HYSTART_MIN_SAMPLES: RTT samples of a round taken before the delay detector
/// compares (`tcp_cubic.c`).
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// HYSTART_DELAY_MIN / HYSTART_DELAY_MAX: the bounds of the delay threshold
/// `delay_min / 8` (`tcp_cubic.c`, `HYSTART_DELAY_THRESH`).
pub const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
pub const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// The largest GSO packet of a device, `GSO_LEGACY_MAX_SIZE` (64 KiB, the default of
/// `sk_gso_max_size`), used by `hystart_ack_delay`.
pub const GSO_MAX_SIZE: u64 = 65_536;

crate::named_enum! {
    /// Which detectors run (the `hystart_detect` module parameter: 1 train, 2 delay,
    /// 3 both).
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum HystartDetect ("hystart_detect") {
        Both = "both",
        Train = "train" | "ack-train" | "ack_train",
        Delay = "delay",
    }
}

impl HystartDetect {
    fn train(self) -> bool {
        self != HystartDetect::Delay
    }
    fn delay(self) -> bool {
        self != HystartDetect::Train
    }
}

/// HyStart's parameters, the module parameters of `tcp_cubic.c`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct HystartParams {
    /// `hystart_detect` (default both).
    pub detect: HystartDetect,
    /// `hystart_low_window`: no detection below this cwnd, in segments (16).
    pub low_window: u32,
    /// `hystart_ack_delta_us`: ACKs closer than this form a train (2 ms).
    pub ack_delta: Duration,
}

impl Default for HystartParams {
    fn default() -> Self {
        HystartParams {
            detect: HystartDetect::Both,
            low_window: 16,
            ack_delta: Duration::from_millis(2),
        }
    }
}

/// Which detector ended slow start.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum HystartExit {
    /// The ACK train lasted half the minimum delay.
    AckTrain,
    /// The round's minimum RTT rose above `delay_min` + threshold.
    Delay,
}

/// What HyStart needs to know of one ACK with an RTT sample.
#[derive(Copy, Clone, Debug)]
pub struct HystartAck {
    pub now: Instant,
    /// `SND.UNA` after the ACK and `SND.NXT` when it is processed.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The RTT sample of this ACK (at least 1 µs, as `cubictcp_acked`).
    pub delay: Duration,
    /// The controller's minimum RTT, this sample included.
    pub delay_min: Duration,
    /// cwnd in segments, ssthresh in segments, MSS in bytes and SRTT, for the pacing
    /// rate of `hystart_ack_delay`.
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    pub srtt: Duration,
}

/// HyStart's state (`struct bictcp`: `found`, `round_start`, `end_seq`, `last_ack`,
/// `curr_rtt`, `sample_cnt`).
#[derive(Clone, Debug)]
pub struct Hystart {
    params: HystartParams,
    /// The exit point has been found: no more detection until [`Self::restart`].
    found: bool,
    round_start: Instant,
    last_ack: Instant,
    /// The round ends when `SND.UNA` passes this; `None` before the first round, which
    /// the first ACK starts (`cubictcp_init` records `snd_nxt` before any data).
    end_seq: Option<u64>,
    /// Minimum RTT of the round so far (`None`: `~0U`, no sample yet).
    curr_rtt: Option<Duration>,
    sample_cnt: u8,
}

impl Hystart {
    pub fn new(params: HystartParams) -> Self {
        Hystart {
            params,
            found: false,
            round_start: Instant::ZERO,
            last_ack: Instant::ZERO,
            end_seq: None,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    pub fn params(&self) -> &HystartParams {
        &self.params
    }

    /// The exit point has been found (slow start ended by HyStart).
    pub fn found(&self) -> bool {
        self.found
    }

    /// `bictcp_hystart_reset`: a new round begins at `now`, ending at `snd_nxt`.
    pub fn reset_round(&mut self, now: Instant, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// After a timeout (`cubictcp_state` on `TCP_CA_Loss`: `bictcp_reset` clears
    /// `found`, then `bictcp_hystart_reset`): detection may run again in the slow
    /// start that follows.
    pub fn restart(&mut self, now: Instant, snd_nxt: u64) {
        self.found = false;
        self.reset_round(now, snd_nxt);
    }

    /// Whether [`Self::update`] runs for this ACK (`cubictcp_acked`): until the exit
    /// is found, in slow start.
    pub fn active(&self, in_slow_start: bool) -> bool {
        !self.found && in_slow_start
    }

    /// `hystart_ack_delay`: four GSO packets at the pacing rate, at most 1 ms; zero
    /// without a rate (no SRTT yet).
    fn ack_delay(a: &HystartAck) -> Duration {
        if a.srtt.is_zero() {
            return Duration::ZERO;
        }
        // tcp_update_pacing_rate: mss * cwnd / srtt scaled by 200 % in slow start
        // below ssthresh/2, else 120 %; in bytes per second.
        let ratio: u128 = if a.cwnd < a.ssthresh / 2 { 200 } else { 120 };
        let rate = a.mss as u128 * a.cwnd as u128 * ratio * 1_000_000_000
            / (100 * a.srtt.as_nanos() as u128);
        if rate == 0 {
            return Duration::ZERO;
        }
        let us = (GSO_MAX_SIZE as u128 * 4 * 1_000_000 / rate).min(1000) as u64;
        Duration::from_micros(us)
    }

    /// `hystart_update`, for an ACK for which [`Self::active`] holds. Returns the
    /// detector that found the exit (the caller then sets ssthresh = cwnd).
    pub fn update(&mut self, a: &HystartAck) -> Option<HystartExit> {
        // A new round when SND.UNA has passed the end of the last one (`after()`).
        if self.end_seq.is_none_or(|end| a.snd_una > end) {
            self.reset_round(a.now, a.snd_nxt);
        }
        // Detection only from `low_window`; the rounds are counted below it too, so
        // that they stay aligned with the flights (Linux 6.13, commit 25c1a9ca53db
        // "tcp_cubic: fix incorrect HyStart round start detection", also in the 6.6
        // and later stable kernels; before it, rounds began at the first ACK with
        // cwnd >= low_window, in the middle of a flight).
        if a.cwnd < self.params.low_window as u64 {
            return None;
        }
        let mut exit = None;
        if self.params.detect.train()
            && a.now.saturating_since(self.last_ack) <= self.params.ack_delta
        {
            self.last_ack = a.now;
            // Without pacing (`SK_PACING_NONE`, the default qdisc does not pace) the
            // threshold is halved: the train must span half the minimum delay.
            let threshold = (a.delay_min + Self::ack_delay(a)) / 2;
            if a.now.saturating_since(self.round_start) > threshold {
                self.found = true;
                exit = Some(HystartExit::AckTrain);
            }
        }
        if self.params.detect.delay() {
            self.curr_rtt = Some(self.curr_rtt.map_or(a.delay, |c| c.min(a.delay)));
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (a.delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt.is_some_and(|c| c > a.delay_min + thresh) {
                    self.found = true;
                    exit = exit.or(Some(HystartExit::Delay));
                }
            }
        }
        exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn ack(now: Instant, una: u64, nxt: u64, delay: Duration, delay_min: Duration) -> HystartAck {
        HystartAck {
            now,
            snd_una: una,
            snd_nxt: nxt,
            delay,
            delay_min,
            cwnd: 20,
            ssthresh: u64::MAX,
            mss: 1448,
            srtt: delay_min,
        }
    }

    /// HyStart with the default parameters but only the detectors `detect`.
    fn detecting(detect: HystartDetect) -> Hystart {
        Hystart::new(HystartParams {
            detect,
            ..HystartParams::default()
        })
    }

    #[test]
    fn delay_detector_compares_the_round_minimum_after_eight_samples() {
        // hystart_update: delay_min 40 ms gives a threshold of clamp(5 ms, 4, 16) =
        // 5 ms. Samples 46 ms (> 45 ms) spaced 3 ms apart (no train).
        let mut h = detecting(HystartDetect::Delay);
        let t0 = Instant::from_secs(1);
        let mut now = t0;
        for i in 0..HYSTART_MIN_SAMPLES as u64 {
            now = t0 + MS(3 * i);
            assert_eq!(h.update(&ack(now, 1 + i, 100, MS(46), MS(40))), None, "{i}");
        }
        // The ninth sample of the round decides.
        now += MS(3);
        assert_eq!(
            h.update(&ack(now, 50, 100, MS(46), MS(40))),
            Some(HystartExit::Delay)
        );
        assert!(h.found());
    }

    #[test]
    fn delay_detector_ignores_increases_within_the_threshold() {
        let mut h = Hystart::new(HystartParams::default());
        let mut now = Instant::from_secs(1);
        for i in 0..40 {
            now += MS(3);
            // 44 ms < 40 + 5 ms: no exit.
            assert_eq!(h.update(&ack(now, 1 + i, 100, MS(44), MS(40))), None);
        }
    }

    #[test]
    fn a_new_round_restarts_the_sample_count() {
        let mut h = detecting(HystartDetect::Delay);
        let mut now = Instant::from_secs(1);
        for i in 0..8 {
            now += MS(3);
            h.update(&ack(now, 1 + i, 100, MS(50), MS(40)));
        }
        // SND.UNA passes the round end (100): a new round, eight fresh samples.
        now += MS(3);
        assert_eq!(h.update(&ack(now, 101, 300, MS(50), MS(40))), None);
        for i in 0..7 {
            now += MS(3);
            assert_eq!(h.update(&ack(now, 102 + i, 300, MS(50), MS(40))), None);
        }
        now += MS(3);
        assert_eq!(
            h.update(&ack(now, 120, 300, MS(50), MS(40))),
            Some(HystartExit::Delay)
        );
    }

    #[test]
    fn ack_train_exits_after_half_the_minimum_delay() {
        // ACKs 1 ms apart (within hystart_ack_delta = 2 ms) from the round start:
        // delay_min 40 ms, ack_delay 1 ms (the pacing rate is low), threshold
        // (40 + 1) / 2 = 20.5 ms: the ACK at 21 ms is the first past it.
        let mut h = detecting(HystartDetect::Train);
        let t0 = Instant::from_secs(1);
        assert_eq!(h.update(&ack(t0, 1, 1000, MS(40), MS(40))), None);
        for i in 1..=20 {
            let r = h.update(&ack(t0 + MS(i), 1 + i, 1000, MS(40), MS(40)));
            assert_eq!(r, None, "{i} ms");
        }
        assert_eq!(
            h.update(&ack(t0 + MS(21), 30, 1000, MS(40), MS(40))),
            Some(HystartExit::AckTrain)
        );
    }

    #[test]
    fn spaced_acks_break_the_train() {
        let mut h = detecting(HystartDetect::Train);
        let t0 = Instant::from_secs(1);
        for i in 0..=40 {
            // 3 ms apart: never within 2 ms of the last ACK of the train.
            assert_eq!(
                h.update(&ack(t0 + MS(3 * i), 1 + i, 1000, MS(40), MS(40))),
                None
            );
        }
    }

    #[test]
    fn no_detection_below_the_low_window_but_rounds_are_counted() {
        // hystart_update (Linux 6.13+): the round is reset first, then nothing more
        // below hystart_low_window.
        let mut h = Hystart::new(HystartParams::default());
        assert!(h.active(true));
        assert!(!h.active(false));
        let t0 = Instant::from_secs(1);
        let mut a = ack(t0, 1, 1000, MS(40), MS(40));
        a.cwnd = 15;
        // A long back-to-back train and high delays with cwnd 15: no exit, but the
        // round began at the first ACK.
        for i in 0..=30 {
            a.now = t0 + MS(i);
            a.snd_una = 1 + i;
            a.delay = MS(60);
            assert_eq!(h.update(&a), None);
        }
        assert_eq!(h.end_seq, Some(1000));
        // The next round, at 16 segments: the train exits after (40 + 1) / 2 ms.
        let t1 = t0 + MS(100);
        let mut b = ack(t1, 1001, 3000, MS(40), MS(40));
        b.cwnd = 16;
        assert_eq!(h.update(&b), None);
        for i in 1..=20 {
            b.now = t1 + MS(i);
            b.snd_una = 1001 + i;
            assert_eq!(h.update(&b), None, "{i}");
        }
        b.now = t1 + MS(21);
        assert_eq!(h.update(&b), Some(HystartExit::AckTrain));
        assert!(!h.active(true));
    }
}
