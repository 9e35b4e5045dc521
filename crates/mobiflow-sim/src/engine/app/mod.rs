//! Applications: what the sending side of a flow writes, and when.
//!
//! Each application is a struct implementing [`App`], in its own file; [`Apps`] holds
//! the one of each flow (static dispatch) and [`Apps::new`] builds it from the
//! scenario's [`AppSpec`]. The engine asks the application for its first events when
//! the world is built (`schedule`), what it does at the flow's start (`start`) and at
//! each of its writes (`write`, an `Ev::AppWrite`). The transport does not matter to an
//! application: it writes through `FlowEnds::write`.
//!
//! Adding an application: a file here with a struct implementing [`App`], its
//! `AppSpec` variant (and its keys in `scenario/flow.rs`), and its arms in
//! [`Apps::new`] and the `each!` macro.

mod bulk;
mod bursts;
mod onoff;
mod sized;

use super::endpoint::Endpoints;
use super::Ev;
use crate::engine::ids::FlowId;
use crate::model::AppSpec;
use mobiflow_proto::time::Instant;

pub(super) use bulk::Bulk;
pub(super) use bursts::Bursts;
pub(super) use onoff::OnOff;
pub(super) use sized::Transfer;

/// An `Ev::AppWrite(f, k)` at `now` (nothing is written at or after the flow's `stop`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Write {
    pub f: FlowId,
    pub k: u32,
    pub now: Instant,
    pub stop: Option<Instant>,
}

/// An application at the sending end of flow `f`.
pub(super) trait App {
    /// Bytes after which the flow is complete (`None`: never).
    fn total(&self) -> Option<u64> {
        None
    }
    /// Does the engine stop the sender at the flow's `stop`? (An application that
    /// stops itself says no.)
    fn stops_at_flow_stop(&self) -> bool {
        true
    }
    /// Its first events, scheduled through `at` when the world is built (after the
    /// flow's start and stop).
    fn schedule(&self, _f: FlowId, _start: Instant, _at: &mut impl FnMut(Instant, Ev)) {}
    /// At the flow's start: what it writes; returns the bytes written.
    fn start(&self, _ep: &mut Endpoints) -> u64 {
        0
    }
    /// One of its writes (an `Ev::AppWrite`): the bytes to write; it may schedule its
    /// next write through `at`.
    fn write(&self, _w: Write, _at: &mut impl FnMut(Instant, Ev)) -> u64 {
        0
    }
    /// Did the flow offer everything it sent (an application that always has data),
    /// rather than what it wrote?
    fn offers_all_it_sends(&self) -> bool {
        false
    }
}

/// An application written by another part of the engine: the web application's
/// channels and its main flow (`web.rs` writes their requests and responses).
pub(super) struct Driven {
    /// The main flow of a web application: its pages start as `Ev::WebPage`.
    web_main: bool,
}

impl App for Driven {
    fn stops_at_flow_stop(&self) -> bool {
        // The web application stops at the flow's stop itself.
        !self.web_main
    }
    fn schedule(&self, f: FlowId, start: Instant, at: &mut impl FnMut(Instant, Ev)) {
        if self.web_main {
            at(start, Ev::WebPage(f));
        }
    }
}

/// The application of a flow.
pub(super) enum Apps {
    Bulk(Bulk),
    Sized(Transfer),
    Bursts(Bursts),
    OnOff(OnOff),
    Driven(Driven),
}

/// Run `$body` with `$a` bound to the flow's [`App`].
macro_rules! each {
    ($self:expr, $a:ident => $body:expr) => {
        match $self {
            Apps::Bulk($a) => $body,
            Apps::Sized($a) => $body,
            Apps::Bursts($a) => $body,
            Apps::OnOff($a) => $body,
            Apps::Driven($a) => $body,
        }
    };
}

impl Apps {
    pub(super) fn new(spec: &AppSpec) -> Apps {
        match spec {
            AppSpec::Bulk => Apps::Bulk(Bulk),
            AppSpec::Sized { size } => Apps::Sized(Transfer { size: *size }),
            AppSpec::Bursts { at, sizes } => Apps::Bursts(Bursts {
                at: at.clone(),
                sizes: sizes.clone(),
            }),
            AppSpec::OnOff { burst, period } => Apps::OnOff(OnOff {
                burst: *burst,
                period: *period,
            }),
            AppSpec::Web(_) => Apps::Driven(Driven { web_main: true }),
            AppSpec::WebChannel { .. } => Apps::Driven(Driven { web_main: false }),
        }
    }
}

impl App for Apps {
    fn total(&self) -> Option<u64> {
        each!(self, a => a.total())
    }
    fn stops_at_flow_stop(&self) -> bool {
        each!(self, a => a.stops_at_flow_stop())
    }
    fn schedule(&self, f: FlowId, start: Instant, at: &mut impl FnMut(Instant, Ev)) {
        each!(self, a => a.schedule(f, start, at))
    }
    fn start(&self, ep: &mut Endpoints) -> u64 {
        each!(self, a => a.start(ep))
    }
    fn write(&self, w: Write, at: &mut impl FnMut(Instant, Ev)) -> u64 {
        each!(self, a => a.write(w, at))
    }
    fn offers_all_it_sends(&self) -> bool {
        each!(self, a => a.offers_all_it_sends())
    }
}
