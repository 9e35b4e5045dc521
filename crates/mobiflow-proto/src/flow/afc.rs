//! AFC: Adaptive Flow Control (Sanadhya and Sivakumar, "Adaptive Flow Control for TCP
//! on Mobile Phones", IEEE INFOCOM 2011). Read the paper's slides first.
//!
//! Classic flow control makes the sending rate an *integral controller* of the
//! application's read rate AR: `TCP = α W`, `W = B0 − B`, `α = 1/RTT`, so the rate
//! only follows AR through the buffer's fill level, lags it by `θ = atan(ω/α)` and is
//! capped at `B0/RTT`. AFC adds a proportional term:
//!
//! ```text
//!   flow window = advertised window + AR × RTT          (mechanism 1, [SLIDE])
//!   TCP = α W + AR  →  error = −α B0 e^{−α t}, which decays
//! ```
//!
//! Four mechanisms, each one switchable in [`AfcConfig`] for ablation:
//!
//! 1. `adapt_rate`: the flow window above. AR is an EWMA of the rate at which the
//!    application drains the receive buffer ([`ArEstimator`]). In the `sender`
//!    placement the receiver advertises the classic window and carries AR in a 2-byte
//!    TCP option (one byte kind, one byte value: [`encode_rate`]); the sender adds
//!    `AR × SRTT` itself. In the `receiver` placement the receiver advertises
//!    `free space + AR × RTT_rcv` with its own RTT estimate and no option; the ACK of
//!    a segment dropped for want of buffer space carries the free space alone (zero),
//!    so that the sender sees the zero window mechanism 2 keys on (assumed).
//! 2. `hide_buffer_losses`: a flow window larger than the free space can overflow the
//!    receive buffer. After a zero window (an ACK offering less than one segment)
//!    the sender ignores congestion indications (no ssthresh/cwnd reduction on fast
//!    retransmit or timeout, and no RTO backoff; it still retransmits) until data
//!    sent after the window reopened is acknowledged (`tcp::ext::afc`).
//! 3. `proactive_feedback`: the receiver sends a window update at once when AR has
//!    changed by more than `feedback_threshold` since the value the sender last
//!    learned, at most once per `feedback_min_interval` (this policy's
//!    [`RwndPolicy::wants_update`]).
//! 4. `pacing`: when the sender's usable window jumps by more than `burst_segments`
//!    segments, the excess is paced at `max(AR_peer, cwnd/SRTT)` (`tcp::ext::afc`).
//!
//! What the seed does not say is a named parameter with a default marked *assumed*
//! ([GUESS]: assumed, see docs/schemes/README.md): `ar_alpha`, `ar_sample_interval`, `feedback_threshold`,
//! `feedback_min_interval`, `burst_segments`, `placement` and the option's encoding.
//!
//! ## The option's value byte (assumed)
//!
//! A logarithmic scale of twelve steps per octave ("semitones") from 1000 bytes/s:
//!
//! ```text
//!   code 0       AR < 1000 · 2^(−1/24) bytes/s (taken as 0)
//!   code k ≥ 1   AR = 1000 · 2^((k − 1)/12) bytes/s        (8 kb/s … 19 Gb/s at k = 255)
//! ```
//!
//! Encoding rounds to the nearest code in the log domain, so the relative error is at
//! most `2^(1/24) − 1 ≈ 2.9 %` over the whole range.

use super::{RcvState, RwndPolicy};
use crate::time::{Duration, Instant};
use crate::wire::Segment;

crate::named_enum! {
    /// Where the flow window is computed.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum Placement ("placement") {
        /// The receiver advertises `free space + AR × RTT_rcv` (no option).
        Receiver = "receiver",
        /// The receiver advertises the free space and carries AR in the option; the
        /// sender adds `AR × SRTT`.
        Sender = "sender",
    }
}

/// Parameters of AFC. Defaults: every mechanism on; the numbers are assumptions (the
/// seed gives none), see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct AfcConfig {
    pub placement: Placement,
    /// Mechanism 1: flow window = advertised window + AR × RTT.
    pub adapt_rate: bool,
    /// Mechanism 2: hide receive-buffer losses from congestion control.
    pub hide_buffer_losses: bool,
    /// Mechanism 3: proactive feedback on a drastic change of AR.
    pub proactive_feedback: bool,
    /// Mechanism 4: burst control by pacing.
    pub pacing: bool,
    /// EWMA weight of a new AR sample (assumed 0.125, the weight of SRTT).
    pub ar_alpha: f64,
    /// Length of the interval over which one AR sample is measured (assumed 100 ms).
    pub ar_sample_interval: Duration,
    /// Relative change of AR that triggers proactive feedback (assumed 0.5).
    pub feedback_threshold: f64,
    /// Shortest time between two proactive updates; `None`: one RTT as the receiver
    /// estimates it (assumed), or `ar_sample_interval` before any estimate.
    pub feedback_min_interval: Option<Duration>,
    /// A usable-window jump larger than this many segments is paced (assumed 4).
    pub burst_segments: u32,
}

impl Default for AfcConfig {
    fn default() -> Self {
        AfcConfig {
            placement: Placement::Sender,
            adapt_rate: true,
            hide_buffer_losses: true,
            proactive_feedback: true,
            pacing: true,
            ar_alpha: 0.125,
            ar_sample_interval: Duration::from_millis(100),
            feedback_threshold: 0.5,
            feedback_min_interval: None,
            burst_segments: 4,
        }
    }
}

impl AfcConfig {
    /// Check the parameters; the error names the offending field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.ar_alpha > 0.0 && self.ar_alpha <= 1.0) {
            return Err(("ar_alpha", "must be in (0, 1]".into()));
        }
        if self.ar_sample_interval.is_zero() {
            return Err(("ar_sample_interval", "must be positive".into()));
        }
        if !(self.feedback_threshold > 0.0 && self.feedback_threshold.is_finite()) {
            return Err(("feedback_threshold", "must be a positive number".into()));
        }
        if self.feedback_min_interval.is_some_and(|d| d.is_zero()) {
            return Err(("feedback_min_interval", "must be positive".into()));
        }
        if self.burst_segments == 0 {
            return Err(("burst_segments", "must be at least 1".into()));
        }
        Ok(())
    }

    /// The receive-window policy of this configuration.
    pub fn policy(&self) -> Afc {
        Afc::new(self.clone())
    }
}

// ----- the option's value byte ---------------------------------------------------------

/// Rate of code 1, bytes per second.
pub const RATE_CODE_BASE: f64 = 1000.0;
/// Codes per doubling of the rate.
pub const RATE_CODE_STEPS_PER_OCTAVE: f64 = 12.0;

/// The value byte for a rate in bytes per second (see the module documentation).
pub fn encode_rate(bytes_per_sec: f64) -> u8 {
    if bytes_per_sec.is_nan() || bytes_per_sec <= 0.0 {
        return 0;
    }
    let k = (RATE_CODE_STEPS_PER_OCTAVE * (bytes_per_sec / RATE_CODE_BASE).log2()).round() + 1.0;
    k.clamp(0.0, 255.0) as u8
}

/// The rate in bytes per second a value byte stands for.
pub fn decode_rate(code: u8) -> f64 {
    if code == 0 {
        0.0
    } else {
        RATE_CODE_BASE * ((code as f64 - 1.0) / RATE_CODE_STEPS_PER_OCTAVE).exp2()
    }
}

// ----- AR estimation -------------------------------------------------------------------

/// EWMA of the application's drain rate, sampled over fixed intervals:
/// `AR ← (1 − α) AR + α · bytes_read_in_interval / interval`, the first sample taken
/// as it is (like SRTT, RFC 6298 §2.2). Intervals in which nothing is read are zero
/// samples, so AR decays while the application pauses.
#[derive(Clone, Debug, PartialEq)]
pub struct ArEstimator {
    alpha: f64,
    interval: Duration,
    ar: Option<f64>,
    /// Start of the interval being measured; `None` before `start`.
    window_start: Option<Instant>,
    bytes: u64,
}

impl ArEstimator {
    pub fn new(alpha: f64, interval: Duration) -> Self {
        ArEstimator {
            alpha,
            interval,
            ar: None,
            window_start: None,
            bytes: 0,
        }
    }

    /// Start measuring at `now` (idempotent).
    pub fn start(&mut self, now: Instant) {
        if self.window_start.is_none() {
            self.window_start = Some(now);
        }
    }

    /// Close every sampling interval that ended at or before `now`.
    pub fn advance(&mut self, now: Instant) {
        let Some(mut s) = self.window_start else {
            return;
        };
        let secs = self.interval.as_secs_f64();
        while now >= s + self.interval {
            let sample = self.bytes as f64 / secs;
            let ar = match self.ar {
                None => sample,
                Some(ar) => (1.0 - self.alpha) * ar + self.alpha * sample,
            };
            // Below a millibyte per second is nothing (and keeps f64 out of subnormals).
            self.ar = Some(if ar < 1e-3 { 0.0 } else { ar });
            self.bytes = 0;
            s += self.interval;
            // A long pause: after enough zero samples AR is 0 within f64 precision;
            // skip the rest in one step.
            if self.ar == Some(0.0) && now >= s + self.interval {
                let k = (now - s).as_nanos() / self.interval.as_nanos();
                s += self.interval.saturating_mul(k);
            }
        }
        self.window_start = Some(s);
    }

    /// The application read `bytes` at `now`.
    pub fn on_read(&mut self, now: Instant, bytes: u64) {
        self.start(now);
        self.advance(now);
        self.bytes += bytes;
    }

    /// The estimate in bytes per second (`None` before the first interval closes).
    pub fn rate(&self) -> Option<f64> {
        self.ar
    }

    /// When the current interval ends.
    pub fn next_sample_at(&self) -> Option<Instant> {
        self.window_start.map(|s| s + self.interval)
    }
}

// ----- the policy ----------------------------------------------------------------------

/// AFC's receiver side: AR estimation, the advertised window in the receiver
/// placement, the option in the sender placement, proactive feedback.
#[derive(Clone, Debug)]
pub struct Afc {
    cfg: AfcConfig,
    ar: ArEstimator,
    /// AR the sender last learned (carried by the last ACK sent), bytes/s.
    ar_reported: Option<f64>,
    last_feedback: Option<Instant>,
    /// The receiver's RTT estimate at the last call that carried one.
    rtt: Option<Duration>,
    mss: u32,
    /// A segment was dropped for want of buffer space and its ACK is not sent yet.
    overflow: bool,
    /// Proactive updates requested.
    pub feedbacks: u64,
}

impl Afc {
    pub fn new(cfg: AfcConfig) -> Self {
        Afc {
            ar: ArEstimator::new(cfg.ar_alpha, cfg.ar_sample_interval),
            cfg,
            ar_reported: None,
            last_feedback: None,
            rtt: None,
            mss: 1,
            overflow: false,
            feedbacks: 0,
        }
    }

    pub fn config(&self) -> &AfcConfig {
        &self.cfg
    }

    /// The current AR estimate, bytes per second.
    pub fn ar(&self) -> Option<f64> {
        self.ar.rate()
    }

    /// The receiver placement's extra window, `AR × RTT_rcv`, in bytes.
    fn extra_window(&self, st: &RcvState) -> u64 {
        if self.cfg.placement != Placement::Receiver || !self.cfg.adapt_rate || self.overflow {
            return 0;
        }
        match (self.ar.rate(), st.rtt) {
            (Some(ar), Some(rtt)) => (ar * rtt.as_secs_f64()) as u64,
            _ => 0,
        }
    }

    fn min_interval(&self) -> Duration {
        self.cfg
            .feedback_min_interval
            .or(self.rtt)
            .unwrap_or(self.cfg.ar_sample_interval)
    }

    /// Has AR moved by more than the threshold since the sender last heard of it?
    /// Changes below one segment per sampling interval do not count, so that AR
    /// creeping up from zero does not fire on the first byte.
    fn drastic_change(&self) -> bool {
        let Some(ar) = self.ar.rate() else {
            return false;
        };
        let floor = self.mss as f64 / self.cfg.ar_sample_interval.as_secs_f64();
        let reported = self.ar_reported.unwrap_or(0.0);
        (ar - reported).abs() > self.cfg.feedback_threshold * reported.max(floor)
    }

    fn observe(&mut self, now: Instant, st: &RcvState) {
        self.mss = st.mss;
        if st.rtt.is_some() {
            self.rtt = st.rtt;
        }
        self.ar.advance(now);
    }
}

impl RwndPolicy for Afc {
    fn name(&self) -> &'static str {
        "afc"
    }

    fn on_segment(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        // AR is measured from the moment data starts to arrive, so that an
        // application that does not read yet counts as reading at 0.
        self.ar.start(now);
        self.observe(now, st);
        // A segment that does not fit in the buffer will be dropped.
        if seg.len > 0 && seg.seq + seg.len as u64 > st.rcv_read + st.rcv_buf {
            self.overflow = true;
        }
    }

    fn on_read(&mut self, now: Instant, bytes: u64, st: &RcvState) {
        self.observe(now, st);
        self.ar.on_read(now, bytes);
    }

    fn on_timeout(&mut self, now: Instant, st: &RcvState) {
        self.observe(now, st);
    }

    fn window(&mut self, st: &RcvState) -> u64 {
        self.observe(st.now, st);
        st.free_window().saturating_add(self.extra_window(st))
    }

    fn allow_shrink(&self) -> bool {
        // The receiver placement's window is a rate forecast, not buffer space
        // promised: when AR falls, the window falls with it.
        self.cfg.placement == Placement::Receiver && self.cfg.adapt_rate
    }

    fn wscale_window(&self, rcv_buf: u64) -> u64 {
        if self.cfg.placement == Placement::Receiver && self.cfg.adapt_rate {
            // Room for AR × RTT up to fifteen buffers beyond the buffer itself.
            rcv_buf.saturating_mul(16)
        } else {
            rcv_buf
        }
    }

    fn wants_update(&mut self, now: Instant, st: &RcvState) -> bool {
        if !self.cfg.proactive_feedback {
            return false;
        }
        self.observe(now, st);
        if !self.drastic_change() {
            return false;
        }
        if self
            .last_feedback
            .is_some_and(|t| now < t + self.min_interval())
        {
            return false;
        }
        self.last_feedback = Some(now);
        self.feedbacks += 1;
        true
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if !self.cfg.proactive_feedback {
            return None;
        }
        let sample = self.ar.next_sample_at();
        // A change held back by the minimum interval is looked at again when it ends.
        let held = self
            .last_feedback
            .filter(|_| self.drastic_change())
            .map(|t| t + self.min_interval());
        match (sample, held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn option_value(&mut self, now: Instant) -> Option<u8> {
        self.overflow = false;
        self.ar.advance(now);
        let ar = self.ar.rate()?;
        self.ar_reported = Some(ar);
        (self.cfg.placement == Placement::Sender).then(|| encode_rate(ar))
    }

    fn rate_estimate(&self) -> Option<f64> {
        self.ar.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::refused;
    use crate::time::test_util::{ms, t_ms};

    fn st(now: Instant, rtt: Option<Duration>) -> RcvState {
        RcvState {
            now,
            rcv_buf: 100_000,
            rcv_nxt: 60_000,
            rcv_read: 20_000,
            ooo_bytes: 0,
            mss: 1000,
            rtt,
            ts_tick: None,
        }
    }

    // ----- option encoding -------------------------------------------------------

    #[test]
    fn rate_code_round_trip_is_within_three_percent() {
        let mut r = 1000.0;
        while r < 2.0e9 {
            let back = decode_rate(encode_rate(r));
            assert!(
                (back / r - 1.0).abs() <= 2f64.powf(1.0 / 24.0) - 1.0 + 1e-12,
                "{r} -> {back}"
            );
            r *= 1.07;
        }
    }

    #[test]
    fn rate_code_fixed_points() {
        assert_eq!(encode_rate(0.0), 0);
        assert_eq!(encode_rate(-5.0), 0);
        assert_eq!(encode_rate(f64::NAN), 0);
        assert_eq!(encode_rate(900.0), 0); // below half a step under 1000 B/s
        assert_eq!(encode_rate(1000.0), 1);
        assert_eq!(encode_rate(2000.0), 13); // one octave = 12 codes
        assert_eq!(decode_rate(0), 0.0);
        assert_eq!(decode_rate(1), 1000.0);
        assert_eq!(decode_rate(13), 2000.0);
        assert_eq!(encode_rate(1e12), 255); // saturates
        for k in 1..=255u8 {
            assert_eq!(encode_rate(decode_rate(k)), k);
        }
    }

    // ----- AR EWMA -----------------------------------------------------------------

    #[test]
    fn ar_first_sample_is_taken_as_is_then_ewma_with_alpha() {
        let mut e = ArEstimator::new(0.125, ms(100));
        e.start(t_ms(0));
        e.on_read(t_ms(50), 10_000); // 10 kB in the first 100 ms
        assert_eq!(e.rate(), None);
        e.on_read(t_ms(100), 0); // closes [0, 100): 100 kB/s
        assert_eq!(e.rate(), Some(100_000.0));
        e.on_read(t_ms(150), 30_000); // [100, 200): 300 kB/s
        e.advance(t_ms(200));
        assert_eq!(e.rate(), Some(0.875 * 100_000.0 + 0.125 * 300_000.0));
    }

    #[test]
    fn ar_decays_geometrically_while_the_application_pauses() {
        let mut e = ArEstimator::new(0.125, ms(100));
        e.start(t_ms(0));
        e.on_read(t_ms(10), 50_000);
        e.advance(t_ms(100));
        let a0 = e.rate().unwrap();
        e.advance(t_ms(1100)); // ten empty intervals
        let a10 = e.rate().unwrap();
        assert!((a10 / a0 - 0.875f64.powi(10)).abs() < 1e-12);
        e.advance(t_ms(1_000_000)); // a long pause reaches 0 and stays cheap
        assert_eq!(e.rate(), Some(0.0));
        assert_eq!(e.next_sample_at(), Some(t_ms(1_000_100)));
    }

    #[test]
    fn ar_tracks_a_constant_read_rate() {
        let mut e = ArEstimator::new(0.125, ms(100));
        e.start(t_ms(0));
        for t in (10..=5000).step_by(10) {
            e.on_read(t_ms(t), 7500); // 750 kB/s = 6 Mb/s in 10 ms chunks
        }
        let ar = e.rate().unwrap();
        assert!((ar / 750_000.0 - 1.0).abs() < 0.02, "{ar}");
    }

    // ----- flow window -------------------------------------------------------------

    fn fed(cfg: AfcConfig, rate_per_100ms: u64) -> Afc {
        let mut p = Afc::new(cfg);
        let s = st(t_ms(0), Some(ms(500)));
        p.on_segment(t_ms(0), &Segment::default(), &s);
        p.on_read(t_ms(50), rate_per_100ms, &s);
        p.on_timeout(t_ms(100), &st(t_ms(100), Some(ms(500))));
        p
    }

    #[test]
    fn receiver_placement_advertises_free_space_plus_ar_times_rtt() {
        let cfg = AfcConfig {
            placement: Placement::Receiver,
            ..AfcConfig::default()
        };
        let mut p = fed(cfg, 50_000); // AR = 500 kB/s
        let s = st(t_ms(100), Some(ms(500)));
        // free space 60 000 + 500 kB/s × 0.5 s
        assert_eq!(p.window(&s), 60_000 + 250_000);
        assert!(p.allow_shrink());
        assert_eq!(
            p.option_value(t_ms(100)),
            None,
            "no option in this placement"
        );
        // Without an RTT estimate, the window is the classic one.
        assert_eq!(p.window(&st(t_ms(100), None)), 60_000);
    }

    #[test]
    fn sender_placement_advertises_free_space_and_carries_ar_in_the_option() {
        let mut p = fed(AfcConfig::default(), 50_000);
        let s = st(t_ms(100), Some(ms(500)));
        assert_eq!(p.window(&s), 60_000);
        assert!(!p.allow_shrink());
        let code = p.option_value(t_ms(100)).unwrap();
        assert!((decode_rate(code) / 500_000.0 - 1.0).abs() < 0.03);
    }

    #[test]
    fn adapt_rate_off_is_classic_flow_control() {
        let cfg = AfcConfig {
            placement: Placement::Receiver,
            adapt_rate: false,
            ..AfcConfig::default()
        };
        let mut p = fed(cfg, 50_000);
        assert_eq!(p.window(&st(t_ms(100), Some(ms(500)))), 60_000);
        assert!(!p.allow_shrink());
    }

    // ----- proactive feedback ---------------------------------------------------------

    #[test]
    fn proactive_feedback_fires_on_a_drastic_change_only() {
        let mut p = fed(AfcConfig::default(), 50_000); // AR = 500 kB/s
        let s = |t| st(t_ms(t), Some(ms(500)));
        assert!(
            p.wants_update(t_ms(100), &s(100)),
            "first AR vs nothing reported"
        );
        p.option_value(t_ms(100)); // the update carries AR = 500 kB/s
                                   // The application keeps (about) its rate: no feedback.
        for t in (110..=1000).step_by(10) {
            p.on_read(t_ms(t), 5_000, &s(t));
            assert!(!p.wants_update(t_ms(t), &s(t)), "no feedback at {t} ms");
        }
        assert!((p.ar().unwrap() / 500_000.0 - 1.0).abs() < 0.15);
    }

    #[test]
    fn proactive_feedback_threshold_and_min_interval() {
        let cfg = AfcConfig {
            feedback_min_interval: Some(ms(300)),
            ..AfcConfig::default()
        };
        let mut p = fed(cfg, 50_000);
        let s = |t| st(t_ms(t), Some(ms(500)));
        p.option_value(t_ms(100)); // sender knows AR = 500 kB/s
                                   // The application stops: AR falls by 12.5 % per 100 ms.
                                   // After k empty intervals AR = 0.875^k; the change exceeds 50 % when
                                   // 0.875^k < 0.5, i.e. k = 6 (0.449).
        for t in (200..=600).step_by(100) {
            assert!(!p.wants_update(t_ms(t), &s(t)), "no feedback at {t} ms");
        }
        assert!(p.wants_update(t_ms(700), &s(700)));
        assert_eq!(p.feedbacks, 1);
        // The sender is not told (no ACK carries the option): a further change is held
        // back until the minimum interval has passed.
        for t in (800..=900).step_by(100) {
            assert!(!p.wants_update(t_ms(t), &s(t)), "held back at {t} ms");
        }
        assert_eq!(p.poll_timeout(), Some(t_ms(1000)));
        assert!(p.wants_update(t_ms(1000), &s(1000)));
    }

    #[test]
    fn proactive_feedback_off_never_asks_for_updates_nor_timers() {
        let cfg = AfcConfig {
            proactive_feedback: false,
            ..AfcConfig::default()
        };
        let mut p = fed(cfg, 50_000);
        let s = st(t_ms(5000), Some(ms(500)));
        assert!(!p.wants_update(t_ms(5000), &s));
        assert_eq!(p.poll_timeout(), None);
    }

    #[test]
    fn small_rates_rising_from_zero_do_not_fire() {
        let mut p = fed(AfcConfig::default(), 0); // AR = 0
        let s = |t| st(t_ms(t), Some(ms(500)));
        p.option_value(t_ms(100));
        // 3 kB in 100 ms moves AR to 3.75 kB/s, under half the floor of one segment
        // per sampling interval (10 kB/s).
        p.on_read(t_ms(150), 3_000, &s(150));
        assert!(!p.wants_update(t_ms(200), &s(200)));
    }

    #[test]
    fn config_validation_names_the_field() {
        assert_eq!(refused(AfcConfig::validate, |c| c.ar_alpha = 0.0), "ar_alpha");
        assert_eq!(refused(AfcConfig::validate, |c| c.burst_segments = 0), "burst_segments");
        assert!(AfcConfig::default().validate().is_ok());
        assert_eq!("Sender".parse::<Placement>(), Ok(Placement::Sender));
        assert!("middle".parse::<Placement>().is_err());
    }
}
