//! Applications: what the sending side of a flow writes, and when.
//!
//! Each application is a struct implementing [`App`], in its own file; [`Apps`] holds
//! the one of each flow (static dispatch) and [`Apps::new`] builds it from the
//! scenario's [`AppSpec`]. The engine asks the application for its first events when
//! the world is built (`schedule`), what it does at the flow's start (`start`) and at
//! each of its writes (`write`, an `Ev::AppWrite`). The transport does not matter to an
//! application: it writes through `FlowEnds::write`.
//!
//! Adding an application: a file here with a struct implementing [`App`] and
//! [`AppKind`] (how a scenario writes it), and its line in the `apps!` list below,
//! which declares its [`AppSpec`] variant, its place in [`Apps`] and the `app` kinds a
//! scenario may name (docs/architecture.md).

use super::endpoint::Endpoints;
use super::Ev;
use crate::engine::ids::FlowId;
use crate::model::WebSpec;
use crate::scenario::walk::{key_err, Tbl, R};
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

/// How a scenario writes a registered application: `app = "NAME"` or
/// `app = { kind = "NAME", KEY = VALUE, ... }`.
pub(super) trait AppKind: App {
    /// The keys of its table besides `kind`.
    const KEYS: &'static [&'static str] = &[];
    /// A complete `{ kind = ... }` table, when the bare name is not enough (it needs
    /// parameters): the error of a bare name shows it, and so do the docs.
    const EXAMPLE: Option<&'static str> = None;
    /// Its [`AppSpec`] from its table (`None`: the bare name, only without `EXAMPLE`),
    /// whose keys are checked; `start` is the flow's start.
    fn parse(t: Option<&Tbl>, start: Duration) -> R<AppSpec>;
}

/// Declares [`AppSpec`] and [`Apps`] from one line per application:
///
/// ```text
/// /// Documentation line (also the row of docs/scenarios.md).
/// Variant { field: Type, ... } = "name" in module::Struct;
/// ```
///
/// `module` is the application's file, `engine/app/module.rs`. `{ ... }` is left out
/// for an application without parameters. `Struct` implements
/// [`App`] and [`AppKind`] and has the variant's fields. Generated: the variant of
/// [`AppSpec`] (beside the web application's two, which `web.rs` drives), of [`Apps`]
/// with its dispatch (`each!`), [`Apps::new`], [`AppSpec::KINDS`] (the names a
/// scenario may give `app`), [`AppSpec::parse`] and [`AppSpec::ENTRIES`] with
/// [`doc_table`] (docs/scenarios.md).
macro_rules! apps {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $({ $($field:ident : $fty:ty),* $(,)? })? = $name:literal
            in $module:ident::$ty:ident;
    )+) => {
        $( mod $module; )+

        /// What a sending application offers to its transport (declared by `apps!` in
        /// `engine/app/mod.rs`, one line each, and the web application's two variants).
        #[derive(Clone, Debug, PartialEq)]
        pub enum AppSpec {
            $( $(#[doc = $doc])* $variant $({ $($field: $fty),* })?, )+
            /// Web page loads: the flow carries the responses of connection 0 (server to
            /// phone); its companion channels are flows of kind [`AppSpec::WebChannel`]
            /// appended after the declared flows (see `engine/web.rs`).
            Web(Arc<WebSpec>),
            /// A companion channel of the web flow `main`: connection `conn`'s requests
            /// (phone to server) when `request`, else its responses (connections 1 and up).
            WebChannel {
                main: usize,
                conn: u32,
                request: bool,
            },
        }

        impl AppSpec {
            /// The kinds a scenario's `app` may name, in the order of the list (the web
            /// application last).
            pub const KINDS: &'static [&'static str] = &[$($name,)+ "web"];

            /// Every kind: name, documentation line.
            pub const ENTRIES: &'static [Entry] = &[
                $( Entry {
                    name: $name,
                    aliases: &[],
                    doc: concat!($($doc),*),
                    module: stringify!($module),
                }, )+
                Entry { name: "web", aliases: &[], doc: WEB_DOC, module: "" },
            ];

            /// The application `kind` (one of [`Self::KINDS`] but `web`, lowercase) from
            /// its table `t` (`None`: the bare name) at key `at`.
            pub(crate) fn parse(kind: &str, t: Option<&Tbl>, start: Duration, at: &str) -> R<AppSpec> {
                match (kind, t) {
                    $(
                        ($name, None) => match <$module::$ty as AppKind>::EXAMPLE {
                            None => <$module::$ty as AppKind>::parse(None, start),
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
                            <$module::$ty as AppKind>::parse(Some(t), start)
                        }
                    )+
                    _ => unreachable!("app kind {kind:?} is not registered"),
                }
            }
        }

        /// The table of docs/scenarios.md: how a scenario writes each application.
        pub(crate) fn doc_table() -> String {
            let mut out = String::from("| form | meaning |\n|---|---|\n");
            let forms: &[Option<&str>] = &[$(<$module::$ty as AppKind>::EXAMPLE,)+ None];
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
            Driven(Driven),
        }

        /// Run `$body` with `$a` bound to the flow's [`App`].
        macro_rules! each {
            ($self:expr, $a:ident => $body:expr) => {
                match $self {
                    $( Apps::$variant($a) => $body, )+
                    Apps::Driven($a) => $body,
                }
            };
        }

        impl Apps {
            pub(super) fn new(spec: &AppSpec) -> Apps {
                match spec {
                    $( AppSpec::$variant $({ $($field),* })? => Apps::$variant($module::$ty {
                        $($( $field: Clone::clone($field), )*)?
                    }), )+
                    AppSpec::Web(_) => Apps::Driven(Driven { web_main: true }),
                    AppSpec::WebChannel { .. } => Apps::Driven(Driven { web_main: false }),
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
}

/// The docs row of `app = "web"`.
const WEB_DOC: &str = "Web page loads; the flow (server to client) carries responses and \
                       its parameters are in `[flows.web]`, see below.";

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

#[cfg(test)]
mod tests {
    use super::AppSpec;

    #[test]
    fn every_registered_app_has_its_file_on_the_architecture_map() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/architecture.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let files: Vec<String> = AppSpec::ENTRIES.iter().filter_map(|e| e.file()).collect();
        assert_eq!(
            files.len(),
            AppSpec::KINDS.len() - 1,
            "every kind but web has a file"
        );
        for f in &files {
            assert!(
                doc.contains(&format!("`{f}`")),
                "{f} is not in docs/architecture.md"
            );
        }
        assert!(!doc.contains("`no_such_app.rs`"));
    }
}
