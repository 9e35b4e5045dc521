//! # mobiflow-proto: sans-IO transport protocol machines for mobile hosts
//!
//! This crate holds the protocol logic of mobiflow and nothing else: no clock, no
//! sockets, no threads, no allocation per packet, no Python. Every machine is driven
//! from outside with the same four method families (the quinn-proto / smoltcp style):
//!
//! * input: `handle_segment(now, seg)` and `handle_timeout(now)`;
//! * application commands: `write` / `read` of byte *counts* (payload is virtual);
//! * output: `poll_transmit(now)`, `poll_timeout()`, and `poll_event()` for the
//!   machine's discrete happenings (a timeout, a recovery, an undo, a state change:
//!   [`event`]);
//! * getters taking `&self`.
//!
//! Time is an [`time::Instant`] handed in by the caller and never decreases.
//!
//! ## Map
//!
//! * [`time`]: integer-nanosecond `Instant` and `Duration`.
//! * [`wire`]: the segment representation (flags, timestamps, SACK blocks, options).
//! * [`cc`]: the `CongestionController` trait and the controllers of its
//!   `congestion_controls!` list (Reno, NewReno, CUBIC, Relentless, FLD_TCP, BBR).
//! * [`tcp`]: the TCP sender (RFC 9293, 5681, 6582, 6675, 6298, 7323) and receiver
//!   (finite buffer, delayed ACKs, SACK generation, window updates, SWS avoidance).
//! * [`flow`]: receive-window policies, the `flow_controls!` list: the classic one, and
//!   the hooks mobile schemes (AFC, RSFC, auto-tuning, Linux's, Freeze-TCP) plug into.
//! * [`tcp::ext`]: sender extensions, the sender-side hooks, the `sender_extensions!`
//!   list (AFC's sender half, IETT, BA-SST, Linux pacing).
//! * [`named`]: `named_enum!`, enums with names (`NAMES`, `name()`, parsing whose error
//!   lists the names).
//! * [`registry`]: what the registration lists of controllers, window policies and
//!   sender extensions say about each item (name, aliases, documentation line).
//! * [`mobility`]: the disconnection planner Freeze-TCP and Freeze-DCCP share.
//! * [`event`]: the queue of discrete happenings a machine hands its caller
//!   (`poll_event`); the TCP machines' events are in `tcp::event`, TFRC's in
//!   `tfrc::event`.
//! * [`tfrc`]: TFRC (RFC 5348) / DCCP CCID 3 (RFC 4342) sender and receiver with the
//!   Freeze-DCCP states, and the analytical model of TFRC across a disconnection.

pub mod cc;
pub mod event;
pub mod flow;
pub mod mobility;
pub mod named;
pub mod registry;
mod rng;
pub mod tcp;
pub mod tfrc;
pub mod time;
pub mod wire;

pub use time::{Duration, Instant};

#[cfg(test)]
mod tests;
