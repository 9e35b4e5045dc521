//! Receive-window policies: how a receiver decides the window it advertises.
//!
//! Classic TCP flow control (RFC 9293 §3.8.6) advertises the free space of the
//! receive buffer. Mobile schemes replace that rule: AFC adds the application's read
//! rate times the RTT, RSFC sizes the window to keep the phone's uplink buffer short,
//! Freeze-TCP advertises a zero window before a disconnection ([`FreezeTcp`], a layer
//! over the connection's policy). A [`RwndPolicy`] is the one place such a rule lives; the [`crate::tcp::TcpReceiver`] applies what every
//! policy shares (window scaling, never moving the right edge back unless the policy
//! allows it, silly-window avoidance).

use crate::time::{Duration, Instant};
use crate::wire::Segment;
use std::fmt;

// The registered policies' modules are declared by `flow_controls!` below.
pub mod freeze;
pub use afc::{Afc, AfcConfig, Placement};
pub use autotune::{Autotune, AutotuneConfig};
pub use classic::Classic;
pub use freeze::FreezeTcp;
pub use linux::{LinuxRcv, LinuxRcvConfig};
pub use rsfc::{Estimator, Growth, Rsfc, RsfcConfig, RsfcState};

/// The receive buffer as a policy sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RcvState {
    pub now: Instant,
    /// Receive buffer size in bytes.
    pub rcv_buf: u64,
    /// Next in-order byte expected.
    pub rcv_nxt: u64,
    /// Bytes the application has read (stream offset of the next unread byte).
    pub rcv_read: u64,
    /// Bytes held out of order.
    pub ooo_bytes: u64,
    pub mss: u32,
    /// The receiver's own RTT estimate (RFC 7323 timestamps when negotiated, else the
    /// time to receive one window of data, as Linux's `tcp_rcv_rtt_measure`), if any.
    pub rtt: Option<Duration>,
    /// The receiver's own timestamp clock tick (`ts_granularity`) when RFC 7323
    /// timestamps are in use on this connection, so that a policy can turn the echo of
    /// its own TSval (TSecr) back into time (RSFC); `None` without timestamps.
    pub ts_tick: Option<Duration>,
}

impl RcvState {
    /// In-order bytes waiting for the application.
    pub fn unread(&self) -> u64 {
        self.rcv_nxt - self.rcv_read
    }
    /// Buffer space from `rcv_nxt` to the end of the buffer: the classic window.
    pub fn free_window(&self) -> u64 {
        self.rcv_buf.saturating_sub(self.unread())
    }
    /// Bytes held in the buffer (unread in order plus out of order).
    pub fn occupancy(&self) -> u64 {
        self.unread() + self.ooo_bytes
    }
}

/// A receive-window policy. See the module documentation.
pub trait RwndPolicy: Send + fmt::Debug {
    fn name(&self) -> &'static str;

    /// A segment arrived (before it is queued).
    fn on_segment(&mut self, _now: Instant, _seg: &Segment, _st: &RcvState) {}

    /// The application read `bytes`.
    fn on_read(&mut self, _now: Instant, _bytes: u64, _st: &RcvState) {}

    /// The policy's timer (`poll_timeout`) is due.
    fn on_timeout(&mut self, _now: Instant, _st: &RcvState) {}

    /// The window to advertise now, in bytes from `rcv_nxt`.
    fn window(&mut self, st: &RcvState) -> u64;

    /// May the advertised right edge move back (RFC 9293 §3.8.6.2.2 says it should
    /// not; Freeze-TCP's zero window does exactly that)?
    fn allow_shrink(&self) -> bool {
        false
    }

    /// Does the policy want a window update sent now, beyond the classic rules
    /// (e.g. AFC's proactive feedback)?
    fn wants_update(&mut self, _now: Instant, _st: &RcvState) -> bool {
        false
    }

    /// Did the last segment (`on_segment`) let the window grow? Linux ACKs such a
    /// segment at once (`tcp_grow_window` sets `quick |= 1`; `tcp::delack`). Asked
    /// once per data segment with `AckPolicy::Linux`.
    fn wants_quick_ack(&mut self) -> bool {
        false
    }

    /// When the policy next wants to be asked `wants_update`.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// An ACK is being built at `now`: the value of AFC's 2-byte option it carries,
    /// if any. Called exactly once per ACK.
    fn option_value(&mut self, _now: Instant) -> Option<u8> {
        None
    }

    /// The largest window the policy may advertise for a buffer of `rcv_buf` bytes;
    /// the receiver picks its window-scale shift from it.
    fn wscale_window(&self, rcv_buf: u64) -> u64 {
        rcv_buf
    }

    /// The application-rate estimate the policy keeps (bytes per second), for tracing.
    fn rate_estimate(&self) -> Option<f64> {
        None
    }

    /// The time the policy estimates segments wait in the sender's uplink buffer
    /// (RSFC's t_buff), for tracing.
    fn delay_estimate(&self) -> Option<Duration> {
        None
    }

    /// The policy's control state as a small code (RSFC: [`RsfcState::code`]), for
    /// tracing.
    fn state_code(&self) -> Option<u8> {
        None
    }

    /// The buffer size the policy currently grants (auto-tuning), for tracing.
    fn buffer_limit(&self, rcv_buf: u64) -> u64 {
        rcv_buf
    }

    // ----- mobility (Freeze-TCP, [`freeze`]) ------------------------------------------

    /// A disconnection is predicted. Returns true if the policy now holds the window
    /// at zero (the receiver then sends one ACK at once to say so).
    fn on_disconnection_warning(&mut self, _now: Instant) -> bool {
        false
    }

    /// Reconnected: how many copies of the ACK to send at once (Freeze-TCP's TR-ACKs).
    fn on_reconnection(&mut self, _now: Instant) -> u32 {
        0
    }

    /// Advertise a zero window now, bypassing the receiver's SWS and no-shrink rules
    /// (a frozen Freeze-TCP).
    fn holds_zero_window(&self) -> bool {
        false
    }
}

/// A connection's receive-window policy as its receiver holds it: classic flow control
/// inline, any other policy boxed. Classic flow control is what most connections use,
/// and the receiver asks its policy several things for every segment and every ACK
/// (issue 19); inline, each answer is the classic rule itself, with no allocation, no
/// call through a vtable and no [`RcvState`] written to memory for it. The rarer
/// policies (AFC, RSFC, auto-tuning, Linux's, Freeze-TCP's layer, a caller's own)
/// keep their dynamic dispatch.
///
/// [`Policy`] implements [`RwndPolicy`] by handing each call to the policy it holds.
#[derive(Debug)]
pub enum Policy {
    /// [`Classic`], RFC 9293 §3.8.6.
    Classic,
    /// Any other policy.
    Boxed(Box<dyn RwndPolicy>),
}

impl Policy {
    /// Is this classic flow control held inline? Then every hook but `window` is the
    /// trait's default (nothing to hear, nothing to ask), so a caller may skip
    /// building the [`RcvState`] those hooks take.
    #[inline(always)]
    pub fn is_classic(&self) -> bool {
        matches!(self, Policy::Classic)
    }

    /// The policy as a trait object (for tracing and getters).
    pub fn as_dyn(&self) -> &dyn RwndPolicy {
        match self {
            Policy::Classic => &Classic,
            Policy::Boxed(p) => p.as_ref(),
        }
    }

    /// The policy boxed (to layer another over it, as Freeze-TCP does).
    pub fn into_boxed(self) -> Box<dyn RwndPolicy> {
        match self {
            Policy::Classic => Box::new(Classic),
            Policy::Boxed(p) => p,
        }
    }
}

impl From<Box<dyn RwndPolicy>> for Policy {
    fn from(p: Box<dyn RwndPolicy>) -> Self {
        Policy::Boxed(p)
    }
}

/// `$e` with `$p` bound to the policy `$self` holds: [`Classic`] (a unit value) or the
/// boxed one; method calls auto-dereference, so one expression serves both.
macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            Policy::Classic => {
                #[allow(unused_mut)]
                let mut $p = Classic;
                $e
            }
            Policy::Boxed($p) => $e,
        }
    };
}

impl RwndPolicy for Policy {
    fn name(&self) -> &'static str {
        dispatch!(self, p => p.name())
    }
    #[inline]
    fn on_segment(&mut self, now: Instant, seg: &Segment, st: &RcvState) {
        dispatch!(self, p => p.on_segment(now, seg, st))
    }
    #[inline]
    fn on_read(&mut self, now: Instant, bytes: u64, st: &RcvState) {
        dispatch!(self, p => p.on_read(now, bytes, st))
    }
    #[inline]
    fn on_timeout(&mut self, now: Instant, st: &RcvState) {
        dispatch!(self, p => p.on_timeout(now, st))
    }
    #[inline]
    fn window(&mut self, st: &RcvState) -> u64 {
        dispatch!(self, p => p.window(st))
    }
    #[inline]
    fn allow_shrink(&self) -> bool {
        dispatch!(self, p => p.allow_shrink())
    }
    #[inline]
    fn wants_update(&mut self, now: Instant, st: &RcvState) -> bool {
        dispatch!(self, p => p.wants_update(now, st))
    }
    #[inline]
    fn wants_quick_ack(&mut self) -> bool {
        dispatch!(self, p => p.wants_quick_ack())
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        dispatch!(self, p => p.poll_timeout())
    }
    #[inline]
    fn option_value(&mut self, now: Instant) -> Option<u8> {
        dispatch!(self, p => p.option_value(now))
    }
    fn wscale_window(&self, rcv_buf: u64) -> u64 {
        dispatch!(self, p => p.wscale_window(rcv_buf))
    }
    fn rate_estimate(&self) -> Option<f64> {
        dispatch!(self, p => p.rate_estimate())
    }
    fn delay_estimate(&self) -> Option<Duration> {
        dispatch!(self, p => p.delay_estimate())
    }
    fn state_code(&self) -> Option<u8> {
        dispatch!(self, p => p.state_code())
    }
    fn buffer_limit(&self, rcv_buf: u64) -> u64 {
        dispatch!(self, p => p.buffer_limit(rcv_buf))
    }
    fn on_disconnection_warning(&mut self, now: Instant) -> bool {
        dispatch!(self, p => p.on_disconnection_warning(now))
    }
    fn on_reconnection(&mut self, now: Instant) -> u32 {
        dispatch!(self, p => p.on_reconnection(now))
    }
    #[inline]
    fn holds_zero_window(&self) -> bool {
        dispatch!(self, p => p.holds_zero_window())
    }
}

/// Declares [`FlowControl`] from one line per policy:
///
/// ```text
/// /// Documentation line (also the row of docs/scenarios.md).
/// Variant(c: Config) = "name" | "alias" in module => expression, offer |rcv_buf| expression;
/// ```
///
/// `in module` declares the policy's file `flow/module.rs`. `(c: Config)` is left out for a policy without parameters (parsing a name gives
/// `Config::default()`, and `Config` has `validate(&self) -> Result<(), (&'static str,
/// String)>`). The first expression is the policy for one connection (a type
/// implementing [`RwndPolicy`], from `c`); the optional `offer` is the window it offers
/// before any data for a buffer of `rcv_buf` bytes (default: the whole buffer).
/// Generated: the variant, [`FlowControlName`] (the names and their parsing, a
/// `named_enum!`), [`FlowControl::name`], [`FlowControl::build`],
/// [`FlowControl::initial_offer`], [`FlowControl::validate`] and
/// [`FlowControl::ENTRIES`] (for the docs tables).
macro_rules! flow_controls {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $(($c:ident : $cfg:ty))? = $name:literal $(| $alias:literal)*
            $(in $module:ident)? => $build:expr $(, offer |$buf:ident| $offer:expr)?;
    )+) => {
        $($( pub mod $module; )?)+

        /// Which receive-window policy a connection uses, with its parameters (declared
        /// by `flow_controls!` in `flow/mod.rs`, one line each).
        #[derive(Clone, Debug, PartialEq)]
        pub enum FlowControl {
            $( $(#[doc = $doc])* $variant $(($cfg))? ),+
        }

        crate::registry_names! {
            FlowControl, FlowControlName ("flow control", quoting lowercase),
            $( [$($doc)*] $variant ($($cfg)?) = $name [$($alias)*] [$($module)?] ),+
        }

        impl FlowControl {
            /// A fresh policy for one connection.
            pub fn build(&self) -> Box<dyn RwndPolicy> {
                match self {
                    $( FlowControl::$variant $(($c))? => Box::new($build) ),+
                }
            }

            /// The window this policy offers before any data has arrived, for a buffer
            /// of `rcv_buf` bytes: what a SYN-ACK would advertise, and what both ends
            /// take as the offer in force when the connection has no handshake (ns-2's
            /// one-way agents). Auto-tuning starts from its initial grant (Linux's
            /// `tcp_rmem[1]`), not from the physical buffer; the others offer the whole
            /// empty buffer.
            #[allow(unused_variables)]
            pub fn initial_offer(&self, rcv_buf: u64) -> u64 {
                match self {
                    $( FlowControl::$variant $(($c))? => {
                        let offer = rcv_buf;
                        $( let $buf = rcv_buf; let offer = $offer; )?
                        offer
                    } ),+
                }
            }

            /// Check the parameters; the error names the offending field.
            #[allow(unused_variables)]
            pub fn validate(&self) -> Result<(), (&'static str, String)> {
                match self {
                    $( FlowControl::$variant $(($c))? => {
                        let checked: Result<(), (&'static str, String)> = Ok(());
                        $( let checked = $c.validate(); )?
                        checked
                    } ),+
                }
            }
        }
    };
}

flow_controls! {
    /// RFC 9293 §3.8.6: advertise the free space of the receive buffer.
    Classic = "classic" in classic => Classic;
    /// Adaptive Flow Control (S. Sanadhya, R. Sivakumar, "Adaptive Flow Control for TCP
    /// on Mobile Phones", IEEE INFOCOM 2011; `flow::afc`, `[flows.afc]`): flow window =
    /// advertised window + the application's read rate × RTT.
    Afc(c: AfcConfig) = "afc" in afc => c.policy();
    /// Receive-buffer auto-tuning, `buffer = min(perceived NW, AAR) × RTT` (`flow::autotune`,
    /// `[flows.autotune]`).
    Autotune(c: AutotuneConfig) = "autotune" in autotune => Autotune::new(c.clone()),
        offer |rcv_buf| c.initial_buf.min(rcv_buf);
    /// Receiver-Side Flow Control for the phone's uplink buffer (Y. Xu, W. K. Leong, B.
    /// Leong, A. Razeen, "Dynamic Regulation of Mobile 3G/HSPA Uplink Buffer with
    /// Receiver-side Flow Control", IEEE ICNP 2012; `flow::rsfc`, `[flows.rsfc]`). Needs
    /// RFC 7323 timestamps.
    Rsfc(c: RsfcConfig) = "rsfc" in rsfc => Rsfc::new(c.clone());
    /// Linux 6.18's receive window and buffer auto-tuning (`flow::linux`): `rcv_ssthresh`
    /// growing by two segments per segment, `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow`
    /// once per receiver RTT, from `tcp_rmem[1]` = 128 KB with half of the buffer as
    /// window; `rcv_buf` is then the largest window (the `linux` profile's 3 MB is the
    /// window of `tcp_rmem[2]` = 6 MB), as `mobiflow live` sets the kernel's window
    /// clamp. No parameter table.
    Linux(c: LinuxRcvConfig) = "linux" in linux => LinuxRcv::new(c.clone()),
        offer |rcv_buf| c.initial_window(rcv_buf);
}

// Not `#[derive(Default)]`: the enum is declared by `flow_controls!`, whose lines carry no
// attributes but their documentation.
#[allow(clippy::derivable_impls)]
impl Default for FlowControl {
    fn default() -> Self {
        FlowControl::Classic
    }
}

impl FlowControl {
    /// The names, in declaration order.
    pub const NAMES: &'static [&'static str] = FlowControlName::NAMES;

    pub fn name(&self) -> &'static str {
        self.id().name()
    }

    /// A fresh policy for one connection as a receiver holds it: classic flow control
    /// inline, any other boxed ([`Policy`]).
    pub fn policy(&self) -> Policy {
        match self {
            FlowControl::Classic => Policy::Classic,
            _ => Policy::Boxed(self.build()),
        }
    }

    /// The AFC parameters, if this is AFC.
    pub fn afc(&self) -> Option<&AfcConfig> {
        match self {
            FlowControl::Afc(c) => Some(c),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::named::Named;

    #[test]
    fn every_registered_policy_parses_builds_and_offers_under_its_name() {
        assert_eq!(FlowControl::ENTRIES.len(), FlowControl::NAMES.len());
        for e in FlowControl::ENTRIES {
            let kind = FlowControlName::parse(&e.name.to_uppercase())
                .unwrap()
                .kind();
            assert_eq!(kind.name(), e.name);
            assert_eq!(kind.build().name(), e.name);
            // Classic flow control is held inline, every other policy boxed.
            let held = kind.policy();
            assert_eq!(held.name(), e.name);
            assert_eq!(held.is_classic(), e.name == "classic", "{}", e.name);
            assert_eq!(held.into_boxed().name(), e.name);
            assert_eq!(kind.validate(), Ok(()), "{}", e.name);
            let offer = kind.initial_offer(1 << 20);
            assert!(offer > 0 && offer <= 1 << 20, "{}: {offer}", e.name);
            assert!(!e.doc().is_empty() && e.doc().ends_with('.'), "{}", e.name);
        }
        // The offers that are not the whole buffer, and a validation that fails.
        let autotune = FlowControl::Autotune(AutotuneConfig::default());
        assert_eq!(
            autotune.initial_offer(u64::MAX),
            AutotuneConfig::default().initial_buf
        );
        let bad = FlowControl::Afc(AfcConfig {
            ar_alpha: 0.0,
            ..AfcConfig::default()
        });
        assert!(bad.validate().is_err());
        assert_eq!(
            FlowControlName::parse("Vegas").unwrap_err(),
            format!(
                "unknown flow control \"vegas\"; expected one of {}",
                FlowControl::NAMES.join(", ")
            )
        );
        // Today's names, in this order, before any added later.
        assert!(FlowControl::NAMES.starts_with(&["classic", "afc", "autotune", "rsfc", "linux"]));
    }
}
