//! Sender extensions: the mobile schemes' changes to the TCP sender, as components
//! called at named hook points of [`super::TcpSender`].
//!
//! The sender (`tcp::sender`) implements the RFCs; a scheme that changes what the
//! sender does (AFC's sender half, the vertical-handoff reactions IETT and BA-SST)
//! is a [`SenderExtension`] in a file of its own here, and the sender calls every
//! extension of the connection at these points, in the order of
//! [`build`] (the receiver's counterpart is [`crate::flow::RwndPolicy`]):
//!
//! | hook | when |
//! |---|---|
//! | [`SenderExtension::extra_window`] | the flow window is computed |
//! | [`SenderExtension::on_window_update`] | on ACK: an ACK that is not old updates the window (RFC 9293 §3.10.7.4) |
//! | [`SenderExtension::on_new_ack`] | on ACK: `SND.UNA` advanced, before the RTT sample and the controller |
//! | [`SenderExtension::after_ack`] | on ACK: the ACK is processed, before a mobility notice it carries |
//! | [`SenderExtension::on_loss`] | on loss detected: a fast retransmit starts a recovery |
//! | [`SenderExtension::on_rto`] | on RTO: the retransmission timer expired (or was expired) |
//! | [`SenderExtension::loss_cutoff`] | on loss detected: the extension's own loss detection, after the RFC's |
//! | [`SenderExtension::restarts_timer_on_retransmit`] | a segment is retransmitted |
//! | [`SenderExtension::on_interface_change`] | on mobility notice |
//! | [`SenderExtension::holds_transmit`] | before transmit |
//! | [`SenderExtension::on_sent`] | a data segment left |
//! | [`SenderExtension::after_input`] | after an ACK or an RTO, with the sendable room before and after |
//! | [`SenderExtension::on_timer`], [`SenderExtension::poll_timeout`] | the extension's own timer |
//!
//! Dispatch is static ([`SenderExt`] is an enum): the hooks are on the per-packet
//! path. To add an extension: a file here with a type implementing
//! [`SenderExtension`], and its line in the `sender_extensions!` list below, which
//! declares [`SenderExt`], its dispatch and [`build`] (docs/architecture.md).

use super::config::TcpConfig;
use super::event::SenderEvent;
use super::handoff::InterfaceChange;
use super::rtt::RttEstimator;
use super::sack::Acked;
use super::sender::SenderStats;
use crate::cc::{CaState, CongestionController};
use crate::event::Events;
use crate::registry::Entry;
use crate::time::{Duration, Instant};
use crate::wire::Segment;
use std::fmt;

// The extensions' modules are declared by `sender_extensions!` below.
pub use afc::AfcSender;
pub use ba_sst::BaSst;
pub use iett::Iett;
pub use pacing::Pacer;

/// What an extension sees of the sender at a hook, and what it may change: the
/// congestion controller (BA-SST sets ssthresh) and the counters.
pub struct SenderCtx<'a> {
    pub now: Instant,
    pub mss: u32,
    /// The connection is established (the handshake, if any, is over).
    pub established: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Data is outstanding (sent and not cumulatively acknowledged).
    pub outstanding: bool,
    pub ca: CaState,
    /// The window the sender uses now: cwnd, or the inflated recovery window.
    pub cwnd: u64,
    pub rtt: &'a RttEstimator,
    pub cc: &'a mut dyn CongestionController,
    pub stats: &'a mut SenderStats,
    /// The sender's event queue (`TcpSender::poll_event`).
    pub events: &'a mut Events<SenderEvent>,
}

/// An extension's answer to a congestion signal (a loss or a timeout).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Response {
    /// The RFC response: the controller reduces its window; on a timeout the RTO is
    /// backed off (RFC 6298 §5.5).
    #[default]
    React,
    /// The signal is not congestion: the sender still retransmits, but the controller
    /// is not told and the RTO is not backed off (AFC's hidden buffer losses).
    Hide,
}

impl Response {
    /// `Hide` if either hides.
    pub fn and(self, other: Response) -> Response {
        if self == Response::Hide || other == Response::Hide {
            Response::Hide
        } else {
            Response::React
        }
    }
}

/// What the sender does on an interface change, as the extensions ask.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct MobilityResponse {
    /// Forget SRTT and RTTVAR: the RTO restarts from `initial_rto`.
    pub reset_rtt: bool,
    /// Expire the retransmission timer now (without backing it off).
    pub expire_timer: bool,
}

impl MobilityResponse {
    pub fn or(self, o: MobilityResponse) -> MobilityResponse {
        MobilityResponse {
            reset_rtt: self.reset_rtt || o.reset_rtt,
            expire_timer: self.expire_timer || o.expire_timer,
        }
    }
}

/// A sender extension. Every hook has a default that does nothing; see the module
/// documentation for when each is called.
pub trait SenderExtension: fmt::Debug + Send {
    fn name(&self) -> &'static str;

    /// Bytes the sender may have outstanding beyond the advertised window.
    fn extra_window(&self, _srtt: Option<Duration>) -> u64 {
        0
    }

    /// On ACK: the window (and the options) of an ACK that is not old were taken.
    fn on_window_update(&mut self, _cx: &mut SenderCtx, _seg: &Segment) {}

    /// On ACK: the cumulative ACK advanced and removed `acked` from the scoreboard.
    fn on_new_ack(&mut self, _cx: &mut SenderCtx, _acked: &Acked) {}

    /// On ACK: the ACK has been processed (its mobility notice, if any, comes next).
    fn after_ack(&mut self, _cx: &mut SenderCtx) {}

    /// On loss detected: a fast retransmit is about to start a recovery.
    fn on_loss(&mut self, _cx: &mut SenderCtx) -> Response {
        Response::React
    }

    /// On RTO: the retransmission timer expired, or an extension expired it.
    fn on_rto(&mut self, _cx: &mut SenderCtx) -> Response {
        Response::React
    }

    /// The extension's own loss detection, after the RFC's: every outstanding segment
    /// neither acknowledged nor SACKed that was sent before the instant returned is
    /// lost, and is repaired at once without a congestion response of its own.
    fn loss_cutoff(&self, _cx: &SenderCtx) -> Option<Instant> {
        None
    }

    /// Segments were marked lost by this extension's `loss_cutoff`.
    fn on_losses_marked(&mut self, _cx: &mut SenderCtx) {}

    /// A segment is retransmitted (`head`: the first unacknowledged one): restart the
    /// retransmission timer?
    fn restarts_timer_on_retransmit(&self, _head: bool) -> bool {
        false
    }

    /// On mobility notice: the mobile host changed its interface.
    fn on_interface_change(
        &mut self,
        _cx: &mut SenderCtx,
        _change: &InterfaceChange,
    ) -> MobilityResponse {
        MobilityResponse::default()
    }

    /// Before transmit: hold back new data and retransmissions chosen by the window
    /// (not the SYN, window probes, or a forced retransmission)?
    fn holds_transmit(&mut self, _now: Instant, _mss: u32) -> bool {
        false
    }

    /// A data segment of `len` bytes left (before the controller hears of it).
    fn on_sent(&mut self, _cx: &mut SenderCtx, _len: u64) {}

    /// Does `after_input` need the sendable room (computing it costs a little)?
    fn watches_room(&self) -> bool {
        false
    }

    /// After an ACK or an RTO: what the windows let out before the input and now.
    fn after_input(&mut self, _cx: &mut SenderCtx, _room_before: u64, _room: u64) {}

    /// `handle_timeout` was called at `now` (first thing).
    fn on_timer(&mut self, _now: Instant) {}

    /// When the extension's timer is next due.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// Declares [`SenderExt`] from one line per extension:
///
/// ```text
/// /// Documentation line (also the row of docs/scenarios.md).
/// Variant(Type) = "name" in module, on |cfg| expression;      // turned on by other keys
/// Variant(Type) = "name" in module, listed |cfg| expression;  // turned on by `extensions`
/// Variant(Type) = "name" in module;                           // added by the sender itself
/// ```
///
/// `in module` declares the extension's file `tcp/ext/module.rs`.
/// `Type` implements [`SenderExtension`] and its `name()` is `"name"`. With `on`, the
/// expression is an `Option<Type>` from the connection's [`TcpConfig`] `cfg` (`Some`
/// when other settings call for it, as `handoff_reaction` for IETT); with `listed`, it
/// is the `Type`, built when `cfg.extensions` names it (`extensions = ["name"]` in a
/// scenario). [`build`] creates them in the order of the lines, which is the order their
/// hooks are called. Generated: the variant, [`SenderExtName`] (the names, a
/// `named_enum!`), the static dispatch of every hook of [`SenderExtension`] to the
/// variant's type, [`build`], [`SenderExt::ENTRIES`] (for the docs tables) and
/// [`SenderExtName::listed`].
macro_rules! sender_extensions {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($ty:ty) = $name:literal $(in $module:ident)?
            $(, on |$cfg:ident| $on:expr)? $(, listed |$lcfg:ident| $new:expr)?;
    )+) => {
        $($( pub mod $module; )?)+

        /// The sender extensions mobiflow has (static dispatch; declared by
        /// `sender_extensions!` in `tcp/ext/mod.rs`, one line each).
        #[derive(Debug)]
        pub enum SenderExt {
            $( $(#[doc = $doc])* $variant($ty) ),+
        }

        crate::named_enum! {
            /// The name of a [`SenderExt`].
            #[derive(Copy, Clone, PartialEq, Eq, Debug)]
            pub enum SenderExtName ("sender extension") {
                $( $variant = $name ),+
            }
        }

        impl SenderExtName {
            /// Every extension, in the order of the list.
            pub const ALL: &'static [SenderExtName] = &[$(SenderExtName::$variant),+];

            /// Turned on by naming it in `TcpConfig::extensions` (rather than by other
            /// settings, or by the sender).
            pub fn listed(self) -> bool {
                match self {
                    $( SenderExtName::$variant => false $(|| { let _ = stringify!($lcfg); true })? ),+
                }
            }
        }

        impl SenderExt {
            /// Every extension: name, documentation line.
            pub const ENTRIES: &'static [Entry] = &[
                $( Entry {
                    name: $name,
                    aliases: &[],
                    doc: concat!($($doc),*),
                    module: concat!("" $(, stringify!($module))?),
                } ),+
            ];

            /// Its name in the list.
            pub fn id(&self) -> SenderExtName {
                match self {
                    $( SenderExt::$variant(_) => SenderExtName::$variant ),+
                }
            }
        }

        /// `each!(self, e => expr)`: `expr` for the extension inside the variant.
        macro_rules! each {
            ($s:expr, $e:ident => $body:expr) => {
                match $s {
                    $( SenderExt::$variant($e) => $body, )+
                }
            };
        }

        /// The extensions a connection with `cfg` uses, in the order their hooks are
        /// called (the sender adds the pacer last when its controller needs pacing).
        #[allow(unused_variables)]
        pub fn build(cfg: &TcpConfig) -> Vec<SenderExt> {
            let mut v = Vec::new();
            $(
                $(
                    let $cfg = cfg;
                    if let Some(e) = $on {
                        v.push(SenderExt::$variant(e));
                    }
                )?
                $(
                    let $lcfg = cfg;
                    if cfg.extensions.contains(SenderExtName::$variant) {
                        v.push(SenderExt::$variant($new));
                    }
                )?
            )+
            v
        }
    };
}

sender_extensions! {
    /// Bandwidth-aware ssthresh (the vertical-handoff paper, §IV.B): turned on by
    /// `handoff_reaction = "ba-sst"` or `"iett+ba-sst"`.
    BaSst(BaSst) = "ba-sst" in ba_sst, on |cfg| cfg.handoff_reaction.ba_sst().then(|| BaSst::new(cfg));
    /// Immediate expiration of the retransmission timer (the vertical-handoff paper,
    /// §IV.A): turned on by `handoff_reaction = "iett"` or `"iett+ba-sst"`.
    Iett(Iett) = "iett" in iett, on |cfg| cfg.handoff_reaction.iett().then(|| Iett::new(cfg));
    /// AFC's sender half (Sanadhya and Sivakumar, INFOCOM 2011): the rate option, hidden
    /// buffer losses, pacing; turned on by `flow_control = "afc"`.
    Afc(AfcSender) = "afc" in afc, on |cfg| cfg.flow_control.afc().map(|a| AfcSender::new(a.clone()));
    /// Linux internal pacing (EDT): added by the sender for a controller that needs it
    /// (`cc = "bbr"`).
    Pacing(Pacer) = "pacing" in pacing;
}

/// A set of extensions named in [`TcpConfig::extensions`] (those that are
/// [`SenderExtName::listed`]).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct SenderExtSet(u32);

impl SenderExtSet {
    /// No extension.
    pub const EMPTY: SenderExtSet = SenderExtSet(0);

    pub fn contains(self, e: SenderExtName) -> bool {
        self.0 & (1 << e as u32) != 0
    }

    /// The set with `e` in it.
    pub fn with(self, e: SenderExtName) -> SenderExtSet {
        SenderExtSet(self.0 | 1 << e as u32)
    }

    /// Its extensions, in the order of the list.
    pub fn iter(self) -> impl Iterator<Item = SenderExtName> {
        SenderExtName::ALL
            .iter()
            .copied()
            .filter(move |&e| self.contains(e))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<SenderExtName> for SenderExtSet {
    fn from_iter<I: IntoIterator<Item = SenderExtName>>(it: I) -> Self {
        it.into_iter().fold(SenderExtSet::EMPTY, SenderExtSet::with)
    }
}

impl SenderExt {
    /// AFC's sender half, if this is it.
    pub fn afc(&self) -> Option<&AfcSender> {
        match self {
            SenderExt::Afc(a) => Some(a),
            _ => None,
        }
    }
    /// The pacer, if this is it.
    pub fn pacer(&self) -> Option<&Pacer> {
        match self {
            SenderExt::Pacing(p) => Some(p),
            _ => None,
        }
    }
    /// BA-SST, if this is it.
    pub fn ba_sst(&self) -> Option<&BaSst> {
        match self {
            SenderExt::BaSst(b) => Some(b),
            _ => None,
        }
    }
}

impl SenderExtension for SenderExt {
    fn name(&self) -> &'static str {
        each!(self, e => e.name())
    }
    fn extra_window(&self, srtt: Option<Duration>) -> u64 {
        each!(self, e => e.extra_window(srtt))
    }
    fn on_window_update(&mut self, cx: &mut SenderCtx, seg: &Segment) {
        each!(self, e => e.on_window_update(cx, seg))
    }
    fn on_new_ack(&mut self, cx: &mut SenderCtx, acked: &Acked) {
        each!(self, e => e.on_new_ack(cx, acked))
    }
    fn after_ack(&mut self, cx: &mut SenderCtx) {
        each!(self, e => e.after_ack(cx))
    }
    fn on_loss(&mut self, cx: &mut SenderCtx) -> Response {
        each!(self, e => e.on_loss(cx))
    }
    fn on_rto(&mut self, cx: &mut SenderCtx) -> Response {
        each!(self, e => e.on_rto(cx))
    }
    fn loss_cutoff(&self, cx: &SenderCtx) -> Option<Instant> {
        each!(self, e => e.loss_cutoff(cx))
    }
    fn on_losses_marked(&mut self, cx: &mut SenderCtx) {
        each!(self, e => e.on_losses_marked(cx))
    }
    fn restarts_timer_on_retransmit(&self, head: bool) -> bool {
        each!(self, e => e.restarts_timer_on_retransmit(head))
    }
    fn on_interface_change(
        &mut self,
        cx: &mut SenderCtx,
        change: &InterfaceChange,
    ) -> MobilityResponse {
        each!(self, e => e.on_interface_change(cx, change))
    }
    fn holds_transmit(&mut self, now: Instant, mss: u32) -> bool {
        each!(self, e => e.holds_transmit(now, mss))
    }
    fn on_sent(&mut self, cx: &mut SenderCtx, len: u64) {
        each!(self, e => e.on_sent(cx, len))
    }
    fn watches_room(&self) -> bool {
        each!(self, e => e.watches_room())
    }
    fn after_input(&mut self, cx: &mut SenderCtx, room_before: u64, room: u64) {
        each!(self, e => e.after_input(cx, room_before, room))
    }
    fn on_timer(&mut self, now: Instant) {
        each!(self, e => e.on_timer(now))
    }
    fn poll_timeout(&self) -> Option<Instant> {
        each!(self, e => e.poll_timeout())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{AfcConfig, FlowControl};
    use crate::tcp::HandoffReaction;

    fn names(cfg: &TcpConfig) -> Vec<&'static str> {
        build(cfg).iter().map(|e| e.name()).collect()
    }

    #[test]
    fn plain_tcp_has_no_extensions_and_schemes_get_theirs_in_hook_order() {
        assert!(names(&TcpConfig::default()).is_empty());
        assert!(names(&TcpConfig::ns2()).is_empty());
        let cfg = TcpConfig {
            handoff_reaction: HandoffReaction::Iett,
            ..TcpConfig::default()
        };
        assert_eq!(names(&cfg), ["iett"]);
        let cfg = TcpConfig {
            handoff_reaction: HandoffReaction::IettBaSst,
            flow_control: FlowControl::Afc(AfcConfig::default()),
            ..TcpConfig::default()
        };
        // BA-SST arms its estimator before IETT's expiry runs (the sender applies the
        // expiry after every extension has answered), AFC comes last.
        assert_eq!(names(&cfg), ["ba-sst", "iett", "afc"]);
    }

    #[test]
    fn every_registered_extension_is_built_under_its_name() {
        use crate::cc::{BbrParams, CcKind};
        use crate::tcp::TcpSender;
        let cfg = TcpConfig {
            handoff_reaction: HandoffReaction::IettBaSst,
            flow_control: FlowControl::Afc(AfcConfig::default()),
            cc: CcKind::Bbr(BbrParams::default()),
            extensions: SenderExtName::ALL
                .iter()
                .copied()
                .filter(|e| e.listed())
                .collect(),
            ..TcpConfig::default()
        };
        let sender = TcpSender::new(cfg);
        let built: Vec<_> = sender.extensions().iter().map(|e| e.id()).collect();
        // Every extension, in the list's order, but the pacer, which the sender adds last.
        let pacing = SenderExtName::Pacing;
        let expected: Vec<_> = SenderExtName::ALL
            .iter()
            .copied()
            .filter(|&e| e != pacing)
            .chain([pacing])
            .collect();
        assert_eq!(built, expected);
        for e in sender.extensions() {
            assert_eq!(e.name(), e.id().name());
        }
        assert_eq!(SenderExt::ENTRIES.len(), SenderExtName::ALL.len());
        for (entry, id) in SenderExt::ENTRIES.iter().zip(SenderExtName::ALL) {
            assert_eq!(entry.name, id.name());
            assert!(
                entry.doc().ends_with('.') || entry.doc().ends_with(')'),
                "{}",
                entry.name
            );
        }
    }

    #[test]
    fn an_extension_set_holds_what_was_put_in_it() {
        let set: SenderExtSet = [SenderExtName::Afc, SenderExtName::BaSst]
            .into_iter()
            .collect();
        assert!(set.contains(SenderExtName::Afc) && set.contains(SenderExtName::BaSst));
        assert!(!set.contains(SenderExtName::Iett) && !set.is_empty());
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [SenderExtName::BaSst, SenderExtName::Afc]
        );
        assert!(SenderExtSet::EMPTY.is_empty());
        // Today's four are turned on by other settings, not by name.
        use SenderExtName::{Afc, BaSst, Iett, Pacing};
        assert!([BaSst, Iett, Afc, Pacing].iter().all(|e| !e.listed()));
    }

    #[test]
    fn one_extension_hiding_a_congestion_signal_hides_it() {
        use Response::{Hide, React};
        assert_eq!(React.and(React), React);
        assert_eq!(React.and(Hide), Hide);
        assert_eq!(Hide.and(React), Hide);
        let m = MobilityResponse {
            reset_rtt: true,
            expire_timer: false,
        }
        .or(MobilityResponse {
            reset_rtt: false,
            expire_timer: true,
        });
        assert!(m.reset_rtt && m.expire_timer);
    }
}
