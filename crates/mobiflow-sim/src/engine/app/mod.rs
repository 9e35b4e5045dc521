//! Applications: what the sending side of a flow writes, and when.
//!
//! Each application is a struct implementing [`App`], in its own file; [`Apps`] holds
//! the one of each flow (static dispatch) and [`Apps::new`] builds it from the
//! scenario's [`AppSpec`]. The engine asks the application for its first events when
//! the world is built (`schedule`), what it does at the flow's start (`start`) and at
//! each of its writes (`write`, an `Ev::AppWrite`). The transport does not matter to an
//! application: it writes through `FlowEnds::write`.
//!
//! An application that spans several flows (the web application: one connection's
//! requests go one way, responses the other, over several connections) opens
//! *channels*: flows of their own whose spec names the flow of the application
//! (`opens` in the list below), which the engine hands to it (`adopt`) and whose reads
//! it hears (`on_read`). It writes on them, and schedules events of its own
//! (`Ev::App`, `on_event`), through an [`Io`].
//!
//! Adding an application: a file here with a struct implementing [`App`] and
//! [`AppKind`] (how a scenario writes it), and its line in the `apps!` list below,
//! which declares its [`AppSpec`] variant, its place in [`Apps`] and the `app` kinds a
//! scenario may name (docs/architecture.md).

use super::endpoint::{Endpoints, FlowEnds};
use super::ids::IdVec;
use super::net::Net;
use super::{Ev, FlowRt};
use crate::engine::ids::FlowId;
use crate::model::{FlowSpec, WebSpec};
use crate::results::FlowSummary;
use crate::scenario::walk::{key_err, Tbl, R};
use crate::scenario::Ctx;
use mobiflow_proto::registry::Entry;
use mobiflow_proto::time::{Duration, Instant};
use std::sync::Arc;

/// An `Ev::AppWrite(f, k)` at `now` (nothing is written at or after the flow's `stop`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Write {
    pub f: FlowId,
    pub k: u32,
    pub now: Instant,
    pub stop: Option<Instant>,
}

/// What an application does outside the writes of its own flow's `Ev::AppWrite`s:
/// writes on the flows it drives (its own and its channels), and events of its own.
/// The engine sends what was written when the hook returns, flow by flow in the order
/// of their first write (writing on one flow does not change another, so this is what
/// sending each at once would give).
pub(super) struct Io<'w> {
    pub now: Instant,
    pub(super) flows: &'w mut IdVec<FlowId, FlowRt>,
    pub(super) net: &'w mut Net,
    /// The flows written, to be sent.
    pub(super) written: &'w mut Vec<FlowId>,
}

impl Io<'_> {
    /// Writes `bytes` on flow `f`; returns the bytes written on `f` so far (the stream
    /// offset at which these end).
    pub fn write(&mut self, f: FlowId, bytes: u64) -> u64 {
        let fr = &mut self.flows[f];
        fr.ep.write(bytes);
        fr.written += bytes;
        if !self.written.contains(&f) {
            self.written.push(f);
        }
        fr.written
    }

    /// Schedules `ev` at `t`.
    pub fn at(&mut self, t: Instant, ev: Ev) {
        self.net.at(t, ev);
    }
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
    /// A channel: the flow whose application writes this one (`None`: its own).
    fn driver(&self) -> Option<FlowId> {
        None
    }
    /// Flow `f`, of spec `spec`, is one of its channels (when the world is built).
    fn adopt(&mut self, _f: FlowId, _spec: &AppSpec) {}
    /// An `Ev::App(f, k)` it scheduled for its flow `f`.
    fn on_event(&mut self, _k: u32, _io: &mut Io) {}
    /// Does it want `on_read` of its flow (a channel: of the flow it belongs to)?
    fn hears_reads(&self) -> bool {
        false
    }
    /// The receiving application of flow `f` (its own or one of its channels) read
    /// data: `read` bytes in all. Only if it `hears_reads`.
    fn on_read(&mut self, _f: FlowId, _read: u64, _io: &mut Io) {}
    /// What it measured, into its flow's summary.
    fn report(&self, _s: &mut FlowSummary) {}
}

/// A channel of another flow's application, which writes it and hears its reads (the
/// web application's request flows and its other connections).
pub(super) struct Channel {
    driver: FlowId,
}

impl App for Channel {
    fn driver(&self) -> Option<FlowId> {
        Some(self.driver)
    }
    fn hears_reads(&self) -> bool {
        // Its application does (it writes the channel in answer to reads).
        true
    }
}

/// What an application's parser sees of its flow besides its `app` table.
pub(crate) struct FlowCx<'c, 't> {
    /// The flow's `[[flows]]` entry (an application with a table of its own there,
    /// as `[flows.web]`, reads it).
    pub flow: &'c Tbl<'t>,
    /// The flow's start.
    pub start: Duration,
    /// Is the flow TCP?
    pub tcp: bool,
    pub ctx: &'c mut Ctx,
}

/// How a scenario writes a registered application: `app = "NAME"` or
/// `app = { kind = "NAME", KEY = VALUE, ... }`.
pub(super) trait AppKind: App {
    /// The keys of its table besides `kind`.
    const KEYS: &'static [&'static str] = &[];
    /// A complete `{ kind = ... }` table, when the bare name is not enough (it needs
    /// parameters): the error of a bare name shows it, and so do the docs.
    const EXAMPLE: Option<&'static str> = None;
    /// Its [`AppSpec`] from its table (`None`: the bare name, only without `EXAMPLE`),
    /// whose keys are checked, at key `at`.
    fn parse(t: Option<&Tbl>, cx: &mut FlowCx, at: &str) -> R<AppSpec>;
    /// The flows it opens as channels (specs of its `opens` variant), appended after
    /// the declared flows, for its flow `main`, the `m`-th declared.
    fn channels(_main: &FlowSpec, _m: usize) -> Vec<FlowSpec> {
        Vec::new()
    }
}

/// The application of one line of `apps!`: `Struct { field: clone, ... }`, or with
/// `built by new`, `Struct::new(f, flow, &field, ...)`.
macro_rules! app_new {
    ($m:ident::$ty:ident; $f:ident, $flow:ident; $($field:ident),*) => {
        $m::$ty { $($field: Clone::clone($field)),* }
    };
    ($m:ident::$ty:ident, $new:ident; $f:ident, $flow:ident; $($field:ident),*) => {
        $m::$ty::$new($f, $flow, $($field),*)
    };
}

/// Declares [`AppSpec`] and [`Apps`] from one line per application:
///
/// ```text
/// /// Documentation line (also the row of docs/scenarios.md).
/// Variant { field: Type, ... } = "name" in module::Struct;
/// ```
///
/// `module` is the application's file, `engine/app/module.rs`. `{ ... }` is left out
/// for an application without parameters. `Struct` implements [`App`] and
/// [`AppKind`] and has the variant's fields, or, with `, built by new` after it, is
/// built by `Struct::new(flow id, &FlowSpec, &field, ...)`. `, opens Channel { main:
/// usize, ... }` declares the spec of the flows it opens as channels (`main`: the index
/// of the application's flow; the rest is for the application's `adopt`), which its
/// `AppKind::channels` gives. Generated: the variants of [`AppSpec`], of [`Apps`] with
/// its dispatch (`each!`), [`Apps::new`], [`AppSpec::KINDS`] (the names a scenario may
/// give `app`), [`AppSpec::parse`], [`AppSpec::channels`] and [`AppSpec::ENTRIES`] with
/// [`doc_table`] (docs/scenarios.md).
macro_rules! apps {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $({ $($field:ident : $fty:ty),* $(,)? })? = $name:literal
            in $module:ident::$ty:ident $(, built by $new:ident)?
            $(, opens $(#[doc = $cdoc:literal])*
                $channel:ident { $($cfield:ident : $cty:ty),* $(,)? })?;
    )+) => {
        $( mod $module; )+

        /// What a sending application offers to its transport (declared by `apps!` in
        /// `engine/app/mod.rs`, one line each), and the channels an application opens.
        #[derive(Clone, Debug, PartialEq)]
        pub enum AppSpec {
            $(
                $(#[doc = $doc])* $variant $({ $($field: $fty),* })?,
                $( $(#[doc = $cdoc])* $channel { $($cfield: $cty),* }, )?
            )+
        }

        impl AppSpec {
            /// The kinds a scenario's `app` may name, in the order of the list.
            pub const KINDS: &'static [&'static str] = &[$($name,)+];

            /// Every kind: name, documentation line.
            pub const ENTRIES: &'static [Entry] = &[
                $( Entry {
                    name: $name,
                    aliases: &[],
                    doc: concat!($($doc),*),
                    module: stringify!($module),
                }, )+
            ];

            /// The application `kind` (one of [`Self::KINDS`], lowercase) from its table
            /// `t` (`None`: the bare name) at key `at`.
            pub(crate) fn parse(kind: &str, t: Option<&Tbl>, cx: &mut FlowCx, at: &str) -> R<AppSpec> {
                match (kind, t) {
                    $(
                        ($name, None) => match <$module::$ty as AppKind>::EXAMPLE {
                            None => <$module::$ty as AppKind>::parse(None, cx, at),
                            Some(e) => Err(key_err(
                                at,
                                format!("app {kind:?} needs parameters; write e.g. app = {e}"),
                            )),
                        },
                        ($name, Some(t)) => {
                            let keys: Vec<&str> = std::iter::once("kind")
                                .chain(<$module::$ty as AppKind>::KEYS.iter().copied())
                                .collect();
                            t.check_keys(&keys)?;
                            <$module::$ty as AppKind>::parse(Some(t), cx, at)
                        }
                    )+
                    _ => unreachable!("app kind {kind:?} is not registered"),
                }
            }

            /// The channels the application of flow `main` (the `m`-th declared) opens.
            pub(crate) fn channels(main: &FlowSpec, m: usize) -> Vec<FlowSpec> {
                #[allow(unreachable_patterns)] // no line `opens` channels
                match &main.app {
                    $( AppSpec::$variant { .. } => <$module::$ty as AppKind>::channels(main, m), )+
                    _ => Vec::new(),
                }
            }
        }

        /// The table of docs/scenarios.md: how a scenario writes each application.
        pub(crate) fn doc_table() -> String {
            let mut out = String::from("| form | meaning |\n|---|---|\n");
            let forms: &[Option<&str>] = &[$(<$module::$ty as AppKind>::EXAMPLE,)+];
            for (e, form) in AppSpec::ENTRIES.iter().zip(forms) {
                let form = match form {
                    Some(f) => format!("`{f}`"),
                    None => format!("`{:?}` or `{{ kind = {:?} }}`", e.name, e.name),
                };
                out.push_str(&format!("| {form} | {} |\n", e.doc()));
            }
            out
        }

        /// The application of a flow.
        pub(super) enum Apps {
            $( $variant($module::$ty), )+
            Channel(Channel),
        }

        /// Run `$body` with `$a` bound to the flow's [`App`].
        macro_rules! each {
            ($self:expr, $a:ident => $body:expr) => {
                match $self {
                    $( Apps::$variant($a) => $body, )+
                    Apps::Channel($a) => $body,
                }
            };
        }

        impl Apps {
            /// The application of flow `f`, declared as `flow`.
            pub(super) fn new(f: FlowId, flow: &FlowSpec) -> Apps {
                match &flow.app {
                    $(
                        AppSpec::$variant $({ $($field),* })? => Apps::$variant(
                            app_new!($module::$ty $(, $new)?; f, flow; $($($field),*)?)
                        ),
                        $( AppSpec::$channel { main, .. } => Apps::Channel(Channel {
                            driver: FlowId::new(*main),
                        }), )?
                    )+
                }
            }
        }
    };
}

apps! {
    /// Always has data, like ns-2's FTP.
    Bulk = "bulk" in bulk::Bulk;
    /// One transfer of `size` bytes (> 0), at the flow's start.
    Sized { size: u64 } = "sized" in sized::Transfer;
    /// Writes `sizes[i]` bytes at time `at[i]`. Times are since the start of the run,
    /// sorted, and not before the flow's `start`. `sizes` has one size per time, or is a
    /// single size used for all.
    Bursts { at: Vec<Duration>, sizes: Vec<u64> } = "bursts" in bursts::Bursts;
    /// Writes `burst` bytes every `period`, from the flow's start until `stop`.
    OnOff { burst: u64, period: Duration } = "onoff" in onoff::OnOff;
    /// Web page loads; the flow (server to client) carries responses and its
    /// parameters are in `[flows.web]`.
    Web { spec: Arc<WebSpec> } = "web" in web::WebApp, built by new,
        opens
        /// A channel of the web flow `main` (an index of `Scenario::flows`): connection
        /// `conn`'s requests (phone to server) when `request`, else its responses
        /// (connections 1 and up).
        WebChannel { main: usize, conn: u32, request: bool };
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
    fn driver(&self) -> Option<FlowId> {
        each!(self, a => a.driver())
    }
    fn adopt(&mut self, f: FlowId, spec: &AppSpec) {
        each!(self, a => a.adopt(f, spec))
    }
    fn on_event(&mut self, k: u32, io: &mut Io) {
        each!(self, a => a.on_event(k, io))
    }
    fn hears_reads(&self) -> bool {
        each!(self, a => a.hears_reads())
    }
    fn on_read(&mut self, f: FlowId, read: u64, io: &mut Io) {
        each!(self, a => a.on_read(f, read, io))
    }
    fn report(&self, s: &mut FlowSummary) {
        each!(self, a => a.report(s))
    }
}
