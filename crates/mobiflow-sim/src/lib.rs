//! # mobiflow-sim: a deterministic discrete-event simulator of the mobile world
//!
//! Built on the sans-IO machines of `mobiflow-proto`. A run is a pure function of its
//! [`model::Scenario`] (which includes the seed): same input, same bytes out.
//!
//! ## Map
//!
//! * [`named`]: `named_enum!`, enums with names (`NAMES`, `name()`, parsing).
//! * [`units`]: parsing of values like `"15Mbps"`, `"265ms"`, `"256KB"`.
//! * [`scenario`]: TOML scenarios -> [`model::Scenario`], `--set` overrides by dotted
//!   path, and errors that name the file, the key and the reason.
//! * [`model`]: the validated scenario the engine builds a world from.
//! * [`engine`]: the event loop (`engine/mod.rs`) and its parts: the network, routes
//!   and packet slab (`net.rs`); link directions, each a sans-IO machine that owns its
//!   timeline (`linkdir.rs`) around its queue and pipe (`link.rs`: DropTail and RED
//!   queues, rate and delay schedules, Mahimahi traces, outages, loss, reordering);
//!   the endpoint adapter every transport implements (`endpoint.rs`: TCP; `tfrc.rs`:
//!   TFRC / DCCP CCID 3); applications (`app/`, the web application among them);
//!   reader models (`reader.rs`); mobility events (`mobility.rs`); sampling (`sample.rs`), summaries
//!   (`summary.rs`) and packet captures (`capture.rs`). docs/architecture.md walks one
//!   packet through them.
//! * [`budget`]: what a scenario will need (series rows, packets, memory), before it
//!   runs, and the budget check that refuses what cannot fit.
//! * [`emu`]: the engine's link direction machine driven by an outside clock (real-time
//!   emulation, `mobiflow-live`).
//! * [`results`]: the summary and the sampled time series.
//! * [`output`]: writing results to a folder (JSON summary, CSV series).
//! * [`pcap`]: the pcap format of packet captures (TCP, UDP and DCCP headers).

/// Enums with names; declared in the protocol crate (`mobiflow_proto::named`).
pub use mobiflow_proto::named;
pub use mobiflow_proto::named_enum;
pub mod budget;
pub mod emu;
pub mod engine;
pub mod model;
pub mod output;
pub mod pcap;
pub mod results;
pub mod scenario;
pub mod units;

pub use engine::{run, run_controlled, run_with, RunError, RunOptions, RunResult};
pub use model::Scenario;
pub use scenario::{load_file, load_str, ScenarioError};

/// Version string reported in every summary.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
