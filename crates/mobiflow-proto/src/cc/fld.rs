//! FLD_TCP: flow-length dependent congestion control (Moktan, Aalto University, 2012).
//!
//! Read the slides first: G. R. Moktan, "In the Interest of the Short: An approach for
//! e2e congestion control", Aalto University, 2012 (scenarios/fld/README.md).
//! Only the slides are known; every rule they leave open is a named parameter here,
//! marked [SLIDE] (stated by the slides, unchecked against the paper) or [GUESS]
//! (mobiflow's choice).
//!
//! "Go fast, finish early": a flow is aggressive while it is short and becomes a
//! standard, fair TCP once it has sent more than a threshold.
//!
//! ```text
//!           bytes counted < threshold                 bytes counted >= threshold
//!   ┌────────────────────────────────────┐  switch  ┌───────────────────────────┐
//!   │ BELOW (default Relentless, §6.2)   │ ───────> │ ABOVE (default Reno)      │
//!   │  IW = 10 segments     [SLIDE]      │ (once,   │  the algorithm unchanged: │
//!   │  slow start ×ss_factor per RTT     │  in Open │  slow start doubles       │
//!   │   (3 [SLIDE]): cwnd += (f−1)·inc   │  state)  │                           │
//!   │   per ACK, inc = the algorithm's   │          │  on switch: cwnd kept,    │
//!   │   own slow-start step [GUESS]      │          │  ssthresh = cwnd [GUESS]  │
//!   │  congestion avoidance and losses:  │          │                           │
//!   │   the BELOW algorithm's            │          │                           │
//!   └────────────────────────────────────┘          └───────────────────────────┘
//! ```
//!
//! Parameters ([`FldParams`]; all defaults are reported as assumed by the simulator):
//! * `threshold_bytes`: 2 MB [SLIDE], taken as 2·2^20 bytes [GUESS].
//! * `count`: what counts towards it [GUESS]: every byte handed to the network
//!   including retransmissions ([`FldCount::Sent`], the default), or bytes
//!   acknowledged ([`FldCount::Acked`]). "New data sent" would need the sender to say
//!   which segments are retransmissions; `on_sent` does not.
//! * `ss_factor`: 3 [SLIDE]: "triple the increase for each ACK". With the per-ACK form
//!   [GUESS] a factor of 2 is exactly the algorithm's own slow start, and the window
//!   grows ×f per RTT when every segment is acknowledged (×(1+(f−1)/2) with delayed
//!   ACKs and RFC 5681's byte counting, as Reno's ×1.5). It applies below the
//!   threshold only.
//! * `below`, `above`: Relentless [SLIDE] ("with tweaks" the slides do not describe)
//!   and Reno [SLIDE].
//! * `switch`: what the above-threshold algorithm starts from [GUESS].
//! * `initial_window`: 10 segments [SLIDE], in RFC 6928's form
//!   `min(10·MSS, max(2·MSS, 14600))` [GUESS] (10 segments for MSS ≤ 1460).
//!
//! The switch never happens inside a loss episode: a threshold crossed in recovery
//! takes effect when the sender is back in the Open state, so the below-threshold
//! algorithm settles its own episode (Relentless's exit rule, for example).

use super::{
    AckSample, CaEvent, CaState, CongestionController, CongestionEvent, Cubic, CubicConfig,
    RecoveryExit, Relentless, RelentlessConfig, RelentlessParams, Reno, RenoConfig, WindowParams,
};
use crate::time::Instant;
use std::fmt;

/// 2 MB, the slides' threshold [SLIDE], with binary prefixes [GUESS].
pub const DEFAULT_THRESHOLD_BYTES: u64 = 2 << 20;

/// Slow-start factor: the window triples per RTT [SLIDE].
pub const DEFAULT_SS_FACTOR: u32 = 3;

/// Initial window in segments [SLIDE].
pub const DEFAULT_IW_SEGMENTS: u32 = 10;

crate::named_enum! {
    /// An algorithm FLD_TCP can run on either side of the threshold.
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum FldAlgo ("algorithm") {
        Reno = "reno",
        NewReno = "newreno" | "new_reno" | "new-reno",
        Relentless = "relentless",
        Cubic = "cubic",
    }
}

impl FldAlgo {
    fn build(
        self,
        params: WindowParams,
        relentless: RelentlessParams,
        mss: u32,
    ) -> Box<dyn CongestionController> {
        match self {
            FldAlgo::Reno | FldAlgo::NewReno => Box::new(Reno::new(
                RenoConfig {
                    params,
                    name: self.name(),
                },
                mss,
            )),
            FldAlgo::Relentless => Box::new(Relentless::new(
                RelentlessConfig { params, relentless },
                mss,
            )),
            FldAlgo::Cubic => Box::new(Cubic::new(
                CubicConfig {
                    params,
                    ..CubicConfig::default()
                },
                mss,
            )),
        }
    }
}

impl fmt::Display for FldAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::named_enum! {
    /// What counts towards the threshold [GUESS].
    #[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
    pub enum FldCount ("count") {
        /// Every payload byte sent, retransmissions included (`on_sent`).
        #[default]
        Sent = "sent",
        /// Payload bytes newly acknowledged, cumulatively or by SACK (`on_ack`).
        Acked = "acked",
    }
}

crate::named_enum! {
    /// How the above-threshold algorithm starts [GUESS].
    #[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
    pub enum FldSwitch ("switch rule") {
        /// Keep cwnd and set ssthresh = cwnd: congestion avoidance from the current
        /// window.
        #[default]
        Avoid = "avoid",
        /// Keep cwnd and ssthresh: a flow still in slow start goes on with the above
        /// algorithm's slow start.
        Keep = "keep",
    }
}

/// FLD_TCP's initial window.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum FldInitialWindow {
    /// RFC 6928: min(10·MSS, max(2·MSS, 14600 bytes)) [SLIDE + GUESS].
    #[default]
    Rfc6928,
    /// A fixed number of segments.
    Segments(u32),
    /// Whatever the connection's configuration gives ([`WindowParams::initial_window`]).
    Connection,
}

impl FldInitialWindow {
    /// The initial window in bytes, given the connection's.
    pub fn bytes(self, connection_iw: u64, mss: u32) -> u64 {
        match self {
            FldInitialWindow::Rfc6928 => WindowParams::rfc6928_iw(mss),
            FldInitialWindow::Segments(n) => n as u64 * mss as u64,
            FldInitialWindow::Connection => connection_iw,
        }
    }
}

/// The parameters of FLD_TCP (`[tcp.fld]` in a scenario).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct FldParams {
    /// Bytes after which the flow switches from `below` to `above`; `u64::MAX` never.
    pub threshold_bytes: u64,
    pub count: FldCount,
    /// Slow-start multiplication per RTT below the threshold (≥ 2; 2 is the
    /// algorithm's own slow start).
    pub ss_factor: u32,
    pub below: FldAlgo,
    pub above: FldAlgo,
    pub switch: FldSwitch,
    pub initial_window: FldInitialWindow,
    /// Settings of Relentless TCP when it runs on either side.
    pub relentless: RelentlessParams,
}

impl Default for FldParams {
    fn default() -> Self {
        FldParams {
            threshold_bytes: DEFAULT_THRESHOLD_BYTES,
            count: FldCount::default(),
            ss_factor: DEFAULT_SS_FACTOR,
            below: FldAlgo::Relentless,
            above: FldAlgo::Reno,
            switch: FldSwitch::default(),
            initial_window: FldInitialWindow::default(),
            relentless: RelentlessParams::default(),
        }
    }
}

impl FldParams {
    /// Check the parameters; the message names the offending one.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.ss_factor < 2 {
            return Err((
                "ss_factor",
                format!(
                    "must be at least 2 (2 is the algorithm's own slow start), found {}",
                    self.ss_factor
                ),
            ));
        }
        if self.initial_window == FldInitialWindow::Segments(0) {
            return Err(("initial_window", "must be at least 1 segment".into()));
        }
        Ok(())
    }
}

/// Configuration of [`Fld`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FldConfig {
    /// Window parameters of the connection; `initial_window` is replaced as
    /// `fld.initial_window` says.
    pub params: WindowParams,
    pub fld: FldParams,
}

impl Default for FldConfig {
    fn default() -> Self {
        FldConfig {
            params: WindowParams::rfc5681(4380),
            fld: FldParams::default(),
        }
    }
}

/// Which side of the threshold the flow is on.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FldPhase {
    Below,
    Above,
}

/// FLD_TCP. See the module documentation.
#[derive(Debug)]
pub struct Fld {
    cfg: FldConfig,
    mss: u32,
    phase: FldPhase,
    /// The algorithm now in charge of cwnd and ssthresh.
    active: Box<dyn CongestionController>,
    /// Bytes counted towards the threshold so far.
    counted: u64,
    /// The threshold was crossed during a loss episode: switch on returning to Open.
    pending_switch: bool,
    ca: CaState,
}

impl Fld {
    pub fn new(cfg: FldConfig, mss: u32) -> Self {
        let mut params = cfg.params;
        params.initial_window = cfg.fld.initial_window.bytes(params.initial_window, mss);
        let phase = if cfg.fld.threshold_bytes == 0 {
            FldPhase::Above
        } else {
            FldPhase::Below
        };
        let algo = match phase {
            FldPhase::Below => cfg.fld.below,
            FldPhase::Above => cfg.fld.above,
        };
        Fld {
            active: algo.build(params, cfg.fld.relentless, mss),
            cfg,
            mss,
            phase,
            counted: 0,
            pending_switch: false,
            ca: CaState::Open,
        }
    }

    pub fn phase(&self) -> FldPhase {
        self.phase
    }

    /// Bytes counted towards the threshold.
    pub fn counted_bytes(&self) -> u64 {
        self.counted
    }

    /// The algorithm now in charge.
    pub fn active(&self) -> &dyn CongestionController {
        self.active.as_ref()
    }

    fn count(&mut self, bytes: u64) {
        self.counted = self.counted.saturating_add(bytes);
        if self.phase == FldPhase::Below && self.counted >= self.cfg.fld.threshold_bytes {
            if self.ca == CaState::Open {
                self.switch();
            } else {
                self.pending_switch = true;
            }
        }
    }

    /// Hand the window to the above-threshold algorithm.
    fn switch(&mut self) {
        self.pending_switch = false;
        self.phase = FldPhase::Above;
        let cwnd = self.active.window();
        let ssthresh = match self.cfg.fld.switch {
            FldSwitch::Avoid => cwnd,
            FldSwitch::Keep => self.active.ssthresh(),
        };
        let mut params = self.cfg.params;
        params.initial_window = cwnd;
        params.initial_ssthresh = ssthresh;
        let mut next = self
            .cfg
            .fld
            .above
            .build(params, self.cfg.fld.relentless, self.mss);
        next.set_window(cwnd);
        next.set_ssthresh(ssthresh);
        self.active = next;
    }
}

impl CongestionController for Fld {
    fn name(&self) -> &'static str {
        "fld"
    }

    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight: u64) {
        self.active.on_sent(now, bytes, in_flight);
        if self.cfg.fld.count == FldCount::Sent {
            self.count(bytes);
        }
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let accelerate = self.phase == FldPhase::Below
            && self.cfg.fld.ss_factor > 2
            && !ack.in_recovery
            && self.active.in_slow_start();
        let before = self.active.window();
        self.active.on_ack(ack);
        if accelerate {
            // "Triple the increase for each ACK": the algorithm's own slow-start step
            // (RFC 5681 eq. 2, cwnd += min(N, SMSS)) taken f − 1 times.
            let step = self.active.window().saturating_sub(before);
            if step > 0 {
                let extra = step.saturating_mul(self.cfg.fld.ss_factor as u64 - 2);
                let w = self.active.window().saturating_add(extra);
                self.active
                    .set_window(w.min(self.cfg.params.max_window.max(self.mss as u64)));
            }
        }
        if self.cfg.fld.count == FldCount::Acked {
            self.count(ack.acked_bytes);
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.active.on_congestion_event(ev);
    }

    fn on_recovery_exit(&mut self, ex: &RecoveryExit) {
        self.active.on_recovery_exit(ex);
    }

    fn on_spurious_congestion(&mut self) {
        self.active.on_spurious_congestion();
    }

    fn on_state_change(&mut self, from: CaState, to: CaState) {
        self.active.on_state_change(from, to);
        self.ca = to;
        if to == CaState::Open && self.pending_switch {
            self.switch();
        }
    }

    fn on_event(&mut self, now: Instant, ev: CaEvent) {
        self.active.on_event(now, ev);
    }

    fn on_mss_update(&mut self, mss: u32) {
        self.mss = mss;
        self.active.on_mss_update(mss);
    }

    super::window_methods!(in active);

    fn pacing_rate(&self) -> Option<u64> {
        self.active.pacing_rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::refused;
    use crate::cc::test_util::*;
    use crate::cc::CongestionKind;
    use crate::time::Duration;

    const MSS: u32 = 1460;
    const M: u64 = MSS as u64;

    fn cfg() -> FldConfig {
        FldConfig {
            params: WindowParams::rfc5681(WindowParams::rfc3390_iw(MSS)),
            fld: FldParams::default(),
        }
    }

    fn fld(f: impl FnOnce(&mut FldParams)) -> Fld {
        let mut c = cfg();
        f(&mut c.fld);
        Fld::new(c, MSS)
    }

    fn ack(bytes: u64) -> AckSample {
        ack_sample(Instant::ZERO, bytes, None, Duration::from_millis(30), MSS)
    }

    fn loss() -> CongestionEvent {
        congestion(CongestionKind::FastRetransmit, Instant::ZERO, 0, MSS)
    }

    fn exit(retransmitted_segments: u64) -> RecoveryExit {
        recovery_exit(retransmitted_segments, MSS)
    }

    /// One round trip: every segment of the window is acknowledged by its own ACK.
    fn round_trip(c: &mut Fld) {
        let segments = c.window() / M;
        for _ in 0..segments {
            c.on_ack(&ack(M));
        }
    }

    #[test]
    fn fld_uses_iw10() {
        let c = fld(|_| {});
        assert_eq!(c.window(), 10 * M);
        assert_eq!(c.phase(), FldPhase::Below);
        assert_eq!(c.active().name(), "relentless");
    }

    #[test]
    fn fld_initial_window_follows_the_connection_when_asked() {
        let c = fld(|p| {
            p.initial_window = FldInitialWindow::Connection;
        });
        assert_eq!(c.window(), WindowParams::rfc3390_iw(MSS));
        let c = fld(|p| {
            p.initial_window = FldInitialWindow::Segments(4);
        });
        assert_eq!(c.window(), 4 * M);
    }

    #[test]
    fn slow_start_triples_per_rtt_with_factor_3() {
        let mut c = fld(|_| {});
        let mut w = c.window();
        for _ in 0..4 {
            round_trip(&mut c);
            assert_eq!(c.window(), 3 * w);
            w = c.window();
        }
    }

    #[test]
    fn slow_start_multiplies_the_window_by_the_factor_per_rtt() {
        // Factor 2 is Reno's doubling.
        for factor in [2, 5] {
            let mut c = fld(|p| {
                p.ss_factor = factor;
            });
            round_trip(&mut c);
            assert_eq!(c.window(), factor as u64 * 10 * M, "ss_factor {factor}");
        }
    }

    #[test]
    fn slow_start_factor_scales_the_per_ack_step_of_a_delayed_ack() {
        // A delayed ACK of two segments: RFC 5681 eq. (2) adds one SMSS; factor 3
        // adds two.
        let mut c = fld(|_| {});
        c.on_ack(&ack(2 * M));
        assert_eq!(c.window(), 12 * M);
    }

    #[test]
    fn slow_start_factor_does_not_apply_in_congestion_avoidance() {
        let mut c = fld(|_| {});
        c.set_window(20 * M);
        c.set_ssthresh(10 * M);
        round_trip(&mut c);
        assert_eq!(c.window(), 21 * M);
    }

    #[test]
    fn relentless_below_the_threshold_reduces_by_lost_segments() {
        let mut c = fld(|_| {});
        c.set_window(30 * M);
        c.on_state_change(CaState::Open, CaState::Recovery);
        c.on_congestion_event(&loss());
        assert_eq!(c.window(), 30 * M, "no halving on loss entry");
        c.on_recovery_exit(&exit(2));
        c.on_state_change(CaState::Recovery, CaState::Open);
        assert_eq!(c.window(), 28 * M);
        assert_eq!(c.ssthresh(), 28 * M);
    }

    #[test]
    fn fld_switches_to_reno_after_threshold() {
        let mut c = fld(|p| {
            p.threshold_bytes = 100 * M;
        });
        round_trip(&mut c); // 30 segments: still slow start
        for _ in 0..99 {
            c.on_sent(Instant::ZERO, M, 0);
        }
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_sent(Instant::ZERO, M, 0);
        assert_eq!(c.phase(), FldPhase::Above);
        assert_eq!(c.active().name(), "reno");
        // The switch keeps cwnd and starts congestion avoidance from it.
        assert_eq!(c.window(), 30 * M);
        assert_eq!(c.ssthresh(), 30 * M);
        // Above the threshold: Reno, +1 SMSS per RTT, and halving on a loss.
        round_trip(&mut c);
        assert_eq!(c.window(), 31 * M);
        let mut ev = loss();
        ev.in_flight = 31 * M;
        c.on_state_change(CaState::Open, CaState::Recovery);
        c.on_congestion_event(&ev);
        assert_eq!(c.ssthresh(), 31 * M / 2);
    }

    #[test]
    fn fld_after_the_threshold_slow_starts_by_doubling() {
        let mut c = fld(|p| {
            p.threshold_bytes = M;
            p.switch = FldSwitch::Keep;
        });
        c.on_sent(Instant::ZERO, M, 0);
        assert_eq!(c.phase(), FldPhase::Above);
        assert_eq!(c.ssthresh(), u64::MAX, "switch = keep keeps ssthresh");
        round_trip(&mut c);
        assert_eq!(c.window(), 20 * M);
    }

    #[test]
    fn the_switch_waits_for_the_end_of_a_loss_episode() {
        let mut c = fld(|p| {
            p.threshold_bytes = 10 * M;
        });
        c.set_window(20 * M);
        c.on_state_change(CaState::Open, CaState::Recovery);
        c.on_congestion_event(&loss());
        for _ in 0..10 {
            c.on_sent(Instant::ZERO, M, 0);
        }
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_recovery_exit(&exit(1));
        c.on_state_change(CaState::Recovery, CaState::Open);
        assert_eq!(c.phase(), FldPhase::Above);
        assert_eq!(c.window(), 19 * M, "Relentless settled its episode first");
        assert_eq!(c.ssthresh(), 19 * M);
    }

    #[test]
    fn threshold_counts_bytes_sent_as_configured() {
        // Sent (default): every byte handed to the network, retransmissions included.
        let mut c = fld(|p| {
            p.threshold_bytes = 10 * M;
        });
        for _ in 0..9 {
            c.on_sent(Instant::ZERO, M, 0);
        }
        c.on_ack(&ack(5 * M));
        assert_eq!(c.counted_bytes(), 9 * M);
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_sent(Instant::ZERO, M, 0); // a retransmission counts too
        assert_eq!(c.phase(), FldPhase::Above);

        // Acked: only bytes acknowledged count.
        let mut c = fld(|p| {
            p.threshold_bytes = 10 * M;
            p.count = FldCount::Acked;
        });
        for _ in 0..20 {
            c.on_sent(Instant::ZERO, M, 0);
        }
        assert_eq!(c.counted_bytes(), 0);
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_ack(&ack(9 * M));
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_ack(&ack(M));
        assert_eq!(c.phase(), FldPhase::Above);
    }

    #[test]
    fn default_threshold_is_two_mebibytes() {
        let mut c = fld(|_| {});
        c.on_sent(Instant::ZERO, 2 * 1024 * 1024 - 1, 0);
        assert_eq!(c.phase(), FldPhase::Below);
        c.on_sent(Instant::ZERO, 1, 0);
        assert_eq!(c.phase(), FldPhase::Above);
    }

    #[test]
    fn slow_start_factor_stops_above_the_threshold() {
        let mut c = fld(|p| {
            p.threshold_bytes = M;
            p.switch = FldSwitch::Keep;
        });
        c.on_sent(Instant::ZERO, M, 0);
        c.on_ack(&ack(M));
        assert_eq!(c.window(), 11 * M);
    }

    #[test]
    fn zero_threshold_starts_above() {
        let c = fld(|p| {
            p.threshold_bytes = 0;
        });
        assert_eq!(c.phase(), FldPhase::Above);
        assert_eq!(c.active().name(), "reno");
        assert_eq!(c.window(), 10 * M);
    }

    #[test]
    fn other_algorithms_on_either_side() {
        let mut c = fld(|p| {
            p.below = FldAlgo::Reno;
            p.above = FldAlgo::Cubic;
            p.threshold_bytes = M;
        });
        assert_eq!(c.active().name(), "reno");
        c.set_window(30 * M);
        c.on_state_change(CaState::Open, CaState::Recovery);
        let mut ev = loss();
        ev.in_flight = 30 * M;
        c.on_congestion_event(&ev);
        assert_eq!(c.ssthresh(), 15 * M, "Reno below halves");
        c.on_recovery_exit(&exit(1));
        c.on_state_change(CaState::Recovery, CaState::Open);
        c.on_sent(Instant::ZERO, M, 0);
        assert_eq!(c.active().name(), "cubic");
        assert_eq!(c.window(), 15 * M);
    }

    #[test]
    fn max_window_bounds_the_accelerated_slow_start() {
        let mut c = Fld::new(
            FldConfig {
                params: WindowParams {
                    max_window: 12 * M,
                    ..cfg().params
                },
                fld: FldParams::default(),
            },
            MSS,
        );
        c.on_ack(&ack(M));
        c.on_ack(&ack(M));
        assert_eq!(c.window(), 12 * M);
    }

    #[test]
    fn validation_names_the_parameter() {
        assert_eq!(refused(FldParams::validate, |p| p.ss_factor = 1), "ss_factor");
        assert_eq!(
            refused(FldParams::validate, |p| p.initial_window = FldInitialWindow::Segments(0)),
            "initial_window"
        );
        assert!(FldParams::default().validate().is_ok());
    }

    #[test]
    fn names_parse() {
        assert_eq!("Relentless".parse::<FldAlgo>(), Ok(FldAlgo::Relentless));
        assert_eq!("acked".parse::<FldCount>(), Ok(FldCount::Acked));
        assert_eq!("keep".parse::<FldSwitch>(), Ok(FldSwitch::Keep));
        assert!("vegas".parse::<FldAlgo>().is_err());
    }
}
