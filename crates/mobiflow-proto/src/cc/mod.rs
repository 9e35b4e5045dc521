//! Congestion control.
//!
//! Read RFC 5681 (slow start, congestion avoidance), RFC 6582 (NewReno) and RFC 9438
//! (CUBIC) first; [`relentless`] and [`fld`] cite their own sources.
//!
//! A [`CongestionController`] owns `cwnd` and `ssthresh` and nothing else. It is told
//! what happens through hooks named after Linux's `tcp_congestion_ops` and ns-3's
//! `TcpCongestionOps` (`on_ack` = `pkts_acked` + `cong_avoid`, `on_congestion_event`
//! = `ssthresh`, `on_state_change` = `set_state`, called *before* the change), each
//! taking a sample struct so that the hooks can grow without breaking algorithms.
//!
//! Loss *recovery* (which segment to retransmit, how many may be sent while in
//! recovery) belongs to the sender (`tcp::sender`), as ns-3 separates
//! `TcpRecoveryOps` from `TcpCongestionOps`. The controller only sets `ssthresh` on
//! entry and `cwnd` on exit.
//!
//! Adding an algorithm: one file here, and its line in the `congestion_controls!` list
//! below (variant, names, how it is built), which declares [`CcKind`].

use crate::named::Named;
use crate::time::{Duration, Instant};
use std::fmt;
use std::str::FromStr;

// The registered controllers' modules are declared by `congestion_controls!` below.
pub mod cubic_linux;
mod dispatch;
pub mod hystart;
#[cfg(test)]
pub(crate) mod test_util;

pub use bbr::{Bbr, BbrConfig, BbrParams};
pub use cubic::{Cubic, CubicArithmetic, CubicConfig, CubicParams};
pub use cubic_linux::LinuxCubic;
pub use dispatch::Controller;
pub use fld::{Fld, FldAlgo, FldConfig, FldCount, FldInitialWindow, FldParams, FldSwitch};
pub use hystart::{Hystart, HystartDetect, HystartParams};
pub use relentless::{Relentless, RelentlessConfig, RelentlessParams, RelentlessTimeout};
pub use reno::{Reno, RenoConfig};

/// The sender's congestion-avoidance state, as Linux's `tcp_ca_state`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CaState {
    /// Normal operation: slow start or congestion avoidance.
    Open,
    /// Fast recovery after a fast retransmit (RFC 5681 §3.2, RFC 6582, RFC 6675).
    Recovery,
    /// After a retransmission timeout (RFC 5681 §3.1, RFC 6298 §5).
    Loss,
}

/// What an acknowledgment told the sender.
#[derive(Copy, Clone, Debug)]
pub struct AckSample {
    pub now: Instant,
    /// Bytes newly acknowledged, cumulatively or by SACK, by this ACK.
    pub acked_bytes: u64,
    /// Bytes in flight before this ACK was processed.
    pub prior_in_flight: u64,
    /// RTT sample taken from this ACK, if any (Karn's rule applied).
    pub rtt: Option<Duration>,
    /// Smoothed RTT after this ACK (RFC 6298).
    pub srtt: Duration,
    /// Minimum RTT seen on the connection.
    pub min_rtt: Duration,
    /// The sender had less to send than the window allowed when it sent the data
    /// (RFC 7661); algorithms should not grow the window on such ACKs.
    pub app_limited: bool,
    /// The sender is in fast recovery or loss recovery.
    pub in_recovery: bool,
    /// Sender maximum segment size in bytes.
    pub mss: u32,
    /// `SND.UNA` after this ACK (Linux's `tp->snd_una`; HyStart ends its round when
    /// it passes the round's end, `hystart_update`).
    pub snd_una: u64,
    /// `SND.NXT` when this ACK is processed (Linux's `tp->snd_nxt`; HyStart's next
    /// round ends there, `bictcp_hystart_reset`).
    pub snd_nxt: u64,
}

/// A delivery-rate sample and the connection state it was taken in: what Linux hands
/// a controller's `cong_control` on every ACK (`struct rate_sample`, `tcp_rate_gen`;
/// draft-cheng-iccrg-delivery-rate-estimation). Computed by `tcp::rate` only for a
/// controller whose [`CongestionController::wants_rate_samples`] is true. Bytes, not
/// packets.
#[derive(Copy, Clone, Debug)]
pub struct RateSample {
    pub now: Instant,
    /// Bytes delivered between the send of the sampled segment and this ACK (`None`
    /// when the ACK delivered nothing that carries send-time state).
    pub delivered: Option<u64>,
    /// The interval they were delivered over, `max(send_elapsed, ack_elapsed)`
    /// (`None`: no valid interval, as one shorter than the minimum RTT).
    pub interval: Option<Duration>,
    /// The connection's delivered count when the sampled segment was sent.
    pub prior_delivered: u64,
    /// The sampled segment was sent in an application-limited phase.
    pub is_app_limited: bool,
    /// Bytes newly acknowledged or SACKed by this ACK.
    pub acked_sacked: u64,
    /// Bytes newly marked lost while this ACK was processed.
    pub losses: u64,
    /// RTT of the newest segment delivered (Linux `rs->rtt_us`, from `ca_rtt_us`).
    pub rtt: Option<Duration>,
    /// The ACK may have been delayed by the receiver (Linux `rs->is_ack_delayed`, from
    /// `FLAG_ACK_MAYBE_DELAYED` in `tcp_clean_rtx_queue`): it cumulatively acknowledges
    /// one runt segment, less than an MSS, sent with nothing else undelivered, and
    /// carries no SACK, D-SACK or ECE.
    pub is_ack_delayed: bool,
    /// Smoothed and minimum RTT of the connection.
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// Bytes in flight (RFC 6675 pipe, Linux `tcp_packets_in_flight`) before and
    /// after this ACK.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// Bytes delivered on the connection so far, and when the count last grew (Linux
    /// `tp->delivered`, `tp->delivered_mstamp`).
    pub delivered_total: u64,
    pub delivered_at: Instant,
    /// The sender's state after this ACK.
    pub ca_state: CaState,
    /// Earliest departure time of the next segment under pacing (Linux
    /// `tp->tcp_wstamp_ns`).
    pub next_departure: Instant,
    pub mss: u32,
}

/// Kind of congestion signal.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CongestionKind {
    /// Loss detected by duplicate ACKs or SACK (fast retransmit).
    FastRetransmit,
    /// Retransmission timeout.
    Timeout,
    /// ECN congestion experienced (RFC 3168).
    Ecn,
}

/// A congestion signal.
#[derive(Copy, Clone, Debug)]
pub struct CongestionEvent {
    pub now: Instant,
    pub kind: CongestionKind,
    /// FlightSize (RFC 5681 §3.1) when the signal arrived, in bytes.
    pub in_flight: u64,
    /// Bytes known or assumed lost by this signal.
    pub lost_bytes: u64,
    pub mss: u32,
    /// A timeout of a segment the timer has already retransmitted: RFC 5681 §3.1
    /// holds ssthresh constant (only cwnd collapses to the loss window).
    pub repeated: bool,
}

/// End of a recovery episode.
#[derive(Copy, Clone, Debug)]
pub struct RecoveryExit {
    pub now: Instant,
    /// Bytes in flight after the ACK that ended recovery.
    pub in_flight: u64,
    /// Segments retransmitted during the episode (Relentless TCP uses this).
    pub retransmitted_segments: u64,
    pub mss: u32,
}

/// Events outside the ACK clock, as Linux's `tcp_ca_event`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CaEvent {
    /// Transmission restarts after an idle period longer than the RTO (RFC 5681 §4.1).
    TxStartAfterIdle { idle: Duration },
    /// Data is sent with nothing in flight, `idle` after the last data segment left
    /// (Linux's `CA_EVENT_TX_START`, raised by `tcp_event_data_sent` whatever the
    /// idle time).
    TxStart { idle: Duration },
    /// The path changed under the connection (vertical handoff).
    PathChange,
}

/// What a controller reports for tracing.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    /// A model-based controller's state (BBR): its mode, bandwidth estimate (bytes
    /// per second), minimum RTT, packet-timed rounds and PROBE_RTT entries so far.
    pub mode: Option<&'static str>,
    pub bw_bytes_per_sec: Option<f64>,
    pub min_rtt: Option<Duration>,
    pub rounds: Option<u64>,
    pub probe_rtts: Option<u64>,
}

/// A congestion-control algorithm. See the module documentation.
pub trait CongestionController: Send + fmt::Debug {
    fn name(&self) -> &'static str;

    /// A segment of `bytes` left at `now` with `in_flight` bytes outstanding after it.
    fn on_sent(&mut self, _now: Instant, _bytes: u64, _in_flight: u64) {}

    /// Bytes were acknowledged. Outside recovery this grows the window.
    fn on_ack(&mut self, ack: &AckSample);

    /// A congestion signal: set `ssthresh` (and `cwnd` on a timeout).
    fn on_congestion_event(&mut self, ev: &CongestionEvent);

    /// Fast recovery ended (a full ACK, RFC 6582 §3.2 step 3): set `cwnd`.
    fn on_recovery_exit(&mut self, ex: &RecoveryExit);

    /// The last congestion signal was spurious: restore the window (Linux `undo_cwnd`).
    fn on_spurious_congestion(&mut self) {}

    /// Called before the sender's state changes from `from` to `to`.
    fn on_state_change(&mut self, _from: CaState, _to: CaState) {}

    fn on_event(&mut self, _now: Instant, _ev: CaEvent) {}

    fn on_mss_update(&mut self, _mss: u32) {}

    /// Overwrite `ssthresh` (used by mobility reactions such as bandwidth-aware
    /// ssthresh).
    fn set_ssthresh(&mut self, ssthresh_bytes: u64);

    /// Overwrite `cwnd` (used by mobility reactions and tests).
    fn set_window(&mut self, cwnd_bytes: u64);

    /// Congestion window in bytes.
    fn window(&self) -> u64;

    /// Slow-start threshold in bytes.
    fn ssthresh(&self) -> u64;

    fn in_slow_start(&self) -> bool {
        self.window() < self.ssthresh()
    }

    /// Sending rate in bytes per second the sender paces at, if the controller sets
    /// one and [`Self::needs_pacing`].
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// The sender must pace at [`Self::pacing_rate`] (Linux: the controller sets
    /// `sk_pacing_status = SK_PACING_NEEDED`, and TCP paces internally). Asked once,
    /// when the sender is built.
    fn needs_pacing(&self) -> bool {
        false
    }

    /// The controller wants a [`RateSample`] on every ACK ([`Self::on_rate_sample`]).
    /// Asked once, when the sender is built: the sender keeps the per-segment state
    /// of delivery-rate estimation (`tcp::rate`) only for such a controller.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// Every ACK that is not old, after loss detection, with its rate sample (Linux
    /// `cong_control`; `on_ack` still comes first on an ACK of new data). Returns true
    /// to start an application-limited phase at the data now in flight (Linux BBR
    /// writes `tp->app_limited` in PROBE_RTT).
    fn on_rate_sample(&mut self, _rs: &RateSample) -> bool {
        false
    }

    /// A data segment is about to leave with nothing in flight (Linux
    /// `CA_EVENT_TX_START`, from `tcp_event_data_sent`); `app_limited`: the connection
    /// is in an application-limited phase. Only for controllers that want rate
    /// samples.
    fn on_transmit_start(&mut self, _now: Instant, _app_limited: bool) {}

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.ssthresh(),
            ..CcMetrics::default()
        }
    }
}

/// Builds a controller for a new connection.
pub trait CcFactory: Send + Sync + fmt::Debug {
    fn build(&self, now: Instant, mss: u32) -> Box<dyn CongestionController>;
}

/// The one [`CcFactory`] for every built-in algorithm: a [`CcKind`] (with its own
/// parameters) and the [`WindowParams`] it is built with, as [`CcKind::build`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct KindFactory {
    pub kind: CcKind,
    pub params: WindowParams,
}

impl CcFactory for KindFactory {
    fn build(&self, _now: Instant, mss: u32) -> Box<dyn CongestionController> {
        self.kind.build(self.params, mss)
    }
}

/// Parameters every window-based controller shares.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct WindowParams {
    /// Initial window in bytes (RFC 5681 §3.1 / RFC 3390 / RFC 6928).
    pub initial_window: u64,
    /// Initial slow-start threshold in bytes ("arbitrarily high", RFC 5681 §3.1).
    pub initial_ssthresh: u64,
    /// Loss window after a timeout in bytes (RFC 5681 §3.1: one segment).
    pub loss_window_segments: u64,
    /// Upper bound on cwnd in bytes (ns-2's `maxcwnd_`; u64::MAX for none).
    pub max_window: u64,
    /// How acknowledged data opens the window and how a reduction sets ssthresh
    /// ([`Counting`]).
    pub counting: Counting,
}

crate::named_enum! {
    /// How a window-based controller counts what an ACK acknowledged (the window
    /// rules of the three profiles).
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum Counting ("window_counting", reading "-" as "_") {
        /// RFC 5681 §3.1: in slow start cwnd += min(N, SMSS) per ACK (eq. 2), in
        /// congestion avoidance SMSS per cwnd of bytes acknowledged; a reduction sets
        /// ssthresh = max(FlightSize / 2, 2 SMSS) (eq. 4).
        Bytes = "bytes",
        /// ns-2: every ACK that advances the window adds one segment in slow start and
        /// SMSS²/cwnd in congestion avoidance (`TcpAgent::opencwnd`), and ssthresh is
        /// truncated to whole segments (`ssthresh_` is an int, `TcpAgent::slowdown`).
        PerAck = "per_ack",
        /// Linux: cwnd in segments, grown by the segments an ACK delivered, cumulatively
        /// or by SACK, with no per-ACK limit (`tcp_slow_start`, then
        /// `tcp_cong_avoid_ai` for the rest of the ACK), so delayed ACKs still double
        /// the window each round trip; a reduction sets ssthresh = max(cwnd / 2, 2)
        /// segments (`tcp_reno_ssthresh`).
        Segments = "segments",
    }
}

impl WindowParams {
    /// RFC 5681 §3.1 defaults around an initial window of `initial_window` bytes:
    /// ssthresh "arbitrarily high", a one-segment loss window, no cap on cwnd, byte
    /// counting.
    pub const fn rfc5681(initial_window: u64) -> Self {
        WindowParams {
            initial_window,
            initial_ssthresh: u64::MAX,
            loss_window_segments: 1,
            max_window: u64::MAX,
            counting: Counting::Bytes,
        }
    }

    /// The loss window in bytes, cwnd after a timeout (RFC 5681 §3.1: LW = one
    /// segment; at least one).
    pub fn loss_window(&self, mss: u64) -> u64 {
        self.loss_window_segments.max(1) * mss
    }

    /// `cwnd` held within [one segment, `max_window`] (ns-2's `maxcwnd_`).
    pub fn clamp(&self, cwnd: u64, mss: u64) -> u64 {
        cwnd.min(self.max_window).max(mss)
    }

    /// RFC 3390 initial window: min(4*MSS, max(2*MSS, 4380 bytes)).
    pub fn rfc3390_iw(mss: u32) -> u64 {
        let mss = mss as u64;
        (4 * mss).min((2 * mss).max(4380))
    }
    /// RFC 6928 initial window: min(10*MSS, max(2*MSS, 14600 bytes)).
    pub fn rfc6928_iw(mss: u32) -> u64 {
        let mss = mss as u64;
        (10 * mss).min((2 * mss).max(14600))
    }
}

/// The [`CongestionController`] methods that read and overwrite a controller's
/// window, written inside its `impl CongestionController`: `window_methods!()` for a
/// controller that keeps a [`Window`] in its field `win` (Reno, CUBIC; `set_window`
/// stays its own), `window_methods!(in field)` for one whose window is that of the
/// controller in `field` (Relentless over Reno, FLD_TCP over its active algorithm).
macro_rules! window_methods {
    (in $inner:ident) => {
        fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
            self.$inner.set_ssthresh(ssthresh_bytes);
        }

        fn set_window(&mut self, cwnd_bytes: u64) {
            self.$inner.set_window(cwnd_bytes);
        }

        fn window(&self) -> u64 {
            self.$inner.window()
        }

        fn ssthresh(&self) -> u64 {
            self.$inner.ssthresh()
        }
    };
    () => {
        fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
            self.win.set_ssthresh(ssthresh_bytes);
        }

        fn window(&self) -> u64 {
            self.win.cwnd
        }

        fn ssthresh(&self) -> u64 {
            self.win.ssthresh
        }
    };
}
pub(crate) use window_methods;

/// cwnd and ssthresh in bytes and the SMSS they count in: the state a window-based
/// controller (Reno, CUBIC) keeps, with the rules of RFC 5681 that do not depend on
/// the algorithm.
#[derive(Copy, Clone, Debug)]
pub struct Window {
    /// SMSS in bytes.
    pub mss: u64,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes.
    pub ssthresh: u64,
}

impl Window {
    /// The initial window and ssthresh of `params` (RFC 5681 §3.1), not yet clamped.
    pub fn new(params: &WindowParams, mss: u64) -> Self {
        Window {
            mss,
            cwnd: params.initial_window,
            ssthresh: params.initial_ssthresh,
        }
    }

    /// Hold cwnd within [one segment, `params.max_window`].
    pub fn clamp(&mut self, params: &WindowParams) {
        self.cwnd = params.clamp(self.cwnd, self.mss);
    }

    /// Overwrite ssthresh, never below 2*SMSS (the floor of RFC 5681 eq. 4).
    pub fn set_ssthresh(&mut self, ssthresh_bytes: u64) {
        self.ssthresh = ssthresh_bytes.max(2 * self.mss);
    }

    /// Overwrite cwnd, then clamp it.
    pub fn set_cwnd(&mut self, cwnd_bytes: u64, params: &WindowParams) {
        self.cwnd = cwnd_bytes;
        self.clamp(params);
    }
}

/// Declares [`CcKind`] from one line per controller:
///
/// ```text
/// /// Documentation line (also the row of docs/scenarios.md).
/// Variant(ParamsType) = "name" | "alias" in module => |params, mss, p| expression,
/// ```
///
/// `in module` declares the controller's file `cc/module.rs`; `also in module` names
/// the file of another line's module that has it (NewReno is Reno's), for the docs.
/// `(ParamsType)` is left out for a controller without parameters of its own (then the
/// closure takes `params, mss`); parsing a name gives `ParamsType::default()`. The
/// expression builds the [`Controller`] from the [`WindowParams`] `params`, the SMSS
/// `mss` and the parameters `p` (boxed, `Controller::Boxed`, unless it is one of those
/// the enum holds itself). Generated: the variant, [`CcName`] (the names and their
/// parsing, a `named_enum!`), [`CcKind::name`], [`CcKind::controller`],
/// [`CcKind::build`], [`CcKind::ENTRIES`] (for the docs tables) and the parsing of
/// `cc = "..."` ([`FromStr`], [`Named`]).
macro_rules! congestion_controls {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $(($param:ty))? = $name:literal $(| $alias:literal)* $(in $module:ident)?
            $(also in $shared:ident)? => |$wp:ident, $mss:ident $(, $p:ident)?| $build:expr
    ),+ $(,)?) => {
        $($( pub mod $module; )?)+

        /// The closed set of built-in controllers, selectable by name (declared by
        /// `congestion_controls!` in `cc/mod.rs`, one line each).
        #[derive(Copy, Clone, PartialEq, Eq, Debug)]
        pub enum CcKind {
            $( $(#[doc = $doc])* $variant $(($param))? ),+
        }

        crate::registry_names! {
            CcKind, CcName ("congestion control"),
            $( [$($doc)*] $variant ($($param)?) = $name [$($alias)*] [$($module)? $($shared)?] ),+
        }

        impl CcKind {
            /// A new controller of this kind, as the sender holds it.
            #[allow(unused_variables)]
            pub fn controller(self, params: WindowParams, mss: u32) -> Controller {
                match self {
                    $( CcKind::$variant $(($p))? => {
                        let ($wp, $mss) = (params, mss);
                        $build
                    } ),+
                }
            }

            /// A new controller of this kind, behind a trait object.
            pub fn build(self, params: WindowParams, mss: u32) -> Box<dyn CongestionController> {
                self.controller(params, mss).into_box()
            }
        }
    };
}

congestion_controls! {
    /// RFC 5681 Reno window rules (the recovery is `recovery`'s).
    Reno = "reno" in reno => |params, mss| Controller::Reno(Box::new(Reno::new(RenoConfig { params, name: "reno" }, mss))),
    /// RFC 5681 window rules with RFC 6582 NewReno recovery (the window rules are Reno's).
    NewReno = "newreno" | "new_reno" | "new-reno" also in reno
        => |params, mss| Controller::Reno(Box::new(Reno::new(RenoConfig { params, name: "newreno" }, mss))),
    /// CUBIC: RFC 9438, or Linux's `tcp_cubic.c` (`CubicParams`, `[tcp.cubic]`).
    Cubic(CubicParams) = "cubic" in cubic => |params, mss, p| p.controller(params, mss),
    /// Relentless TCP (Mathis): cwnd reduced by the segments lost (`cc::relentless`,
    /// `[tcp.relentless]`).
    Relentless(RelentlessParams) = "relentless" in relentless
        => |params, mss, p| Controller::Boxed(Box::new(Relentless::new(RelentlessConfig { params, relentless: p }, mss))),
    /// FLD_TCP (Moktan, "In the Interest of the Short: An approach for e2e congestion
    /// control", talk slides, Aalto University, 2012): IW10, faster slow start and
    /// Relentless below a threshold of bytes sent, Reno above it (`cc::fld`, `[tcp.fld]`).
    Fld(FldParams) = "fld" | "fld_tcp" | "fld-tcp" in fld
        => |params, mss, p| Controller::Boxed(Box::new(Fld::new(FldConfig { params, fld: p }, mss))),
    /// BBR version 1 as Linux's `net/ipv4/tcp_bbr.c` (`cc::bbr`), with delivery-rate
    /// sampling and internal pacing.
    Bbr(BbrParams) = "bbr" in bbr => |params, mss, p| Controller::Boxed(Box::new(Bbr::new(BbrConfig { params, bbr: p }, mss))),
}

impl CcKind {
    /// The names, in declaration order.
    pub const NAMES: &'static [&'static str] = CcName::NAMES;

    pub fn name(self) -> &'static str {
        self.id().name()
    }
}

impl CcKind {
    /// The same kind with `seed` for the random choices it makes (BBR's starting
    /// phase of the gain cycle); the simulator derives one per connection from the
    /// run's seed, so that a run stays a pure function of scenario and seed.
    pub fn with_seed(self, seed: u64) -> CcKind {
        match self {
            CcKind::Bbr(_) => CcKind::Bbr(BbrParams { seed }),
            k => k,
        }
    }
}

impl FromStr for CcKind {
    type Err = String;
    /// A name of [`CcName`] (any case), with the default parameters.
    fn from_str(s: &str) -> Result<Self, String> {
        CcName::parse(s).map(CcName::kind)
    }
}

impl Named for CcKind {
    const NAMES: &'static [&'static str] = CcName::NAMES;
    fn name(self) -> &'static str {
        self.id().name()
    }
    fn parse(s: &str) -> Result<Self, String> {
        s.parse()
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_controller_parses_by_each_of_its_names_and_builds() {
        assert_eq!(CcKind::ENTRIES.len(), CcKind::NAMES.len());
        for e in CcKind::ENTRIES {
            let kind: CcKind = e.name.parse().unwrap();
            assert_eq!(kind.name(), e.name);
            assert_eq!(kind.to_string(), e.name);
            assert_eq!(kind.id().kind(), kind, "{kind}");
            for alias in e.aliases {
                assert_eq!(alias.to_uppercase().parse::<CcKind>(), Ok(kind), "{alias}");
            }
            assert!(!e.doc().is_empty() && e.doc().ends_with('.'), "{}", e.name);
            let built = kind.build(WindowParams::rfc5681(3000), 1000);
            assert!(built.window() >= 1000, "{kind}");
        }
        assert_eq!(
            <CcKind as Named>::parse("Fld-TCP"),
            Ok(CcKind::Fld(FldParams::default()))
        );
        assert_eq!(
            "vegas".parse::<CcKind>().unwrap_err(),
            format!(
                "unknown congestion control \"vegas\"; expected one of {}",
                CcKind::NAMES.join(", ")
            )
        );
        // Today's names, in this order, before any added later.
        assert!(CcKind::NAMES.starts_with(&[
            "reno",
            "newreno",
            "cubic",
            "relentless",
            "fld",
            "bbr"
        ]));
    }

    #[test]
    fn kind_factory_builds_what_cc_kind_builds() {
        // A window of 3 segments and a low ssthresh, so that a factory that ignored its
        // WindowParams would differ.
        let params = WindowParams {
            initial_ssthresh: 5000,
            ..WindowParams::rfc5681(3000)
        };
        // Every kind by name, with its default parameters.
        for kind in CcKind::NAMES.iter().map(|n| n.parse::<CcKind>().unwrap()) {
            let built = KindFactory { kind, params }.build(Instant::ZERO, 1000);
            let direct = kind.build(params, 1000);
            assert_eq!(built.name(), direct.name(), "{kind}");
            assert_eq!(built.window(), direct.window(), "{kind}");
            assert_eq!(built.ssthresh(), direct.ssthresh(), "{kind}");
            assert_eq!(built.ssthresh(), 5000, "{kind}");
        }
    }
}
