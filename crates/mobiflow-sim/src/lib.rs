//! # mobiflow-sim: a deterministic discrete-event simulator of the mobile world
//!
//! Built on the sans-IO machines of `mobiflow-proto`. A run is a pure function of its
//! [`model::Scenario`] (which includes the seed): same input, same bytes out.
//!
//! ## Map
//!
//! * [`units`]: parsing of values like `"15Mbps"`, `"265ms"`, `"256KB"`.
//! * [`scenario`]: TOML scenarios -> [`model::Scenario`], `--set` overrides by dotted
//!   path, and errors that name the file, the key and the reason.
//! * [`model`]: the validated scenario the engine builds a world from.
//! * [`engine`]: the event loop, links (rate and delay schedules, Mahimahi traces,
//!   outages, DropTail and RED queues), hosts, applications and measurement.
//! * [`budget`]: what a scenario will need (series rows, packets, memory), before it
//!   runs, and the budget check that refuses what cannot fit.
//! * [`emu`]: a link direction driven by an outside clock (real-time emulation).
//! * [`results`]: the summary and the sampled time series.
//! * [`output`]: writing results to a folder (JSON summary, CSV series).

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
