//! Tests that need more than one module (style guide tiers 2 and 3).
//!
//! * [`pair`]: the in-memory `Pair` harness (a sender and a receiver joined by two
//!   links with latency, a bottleneck, loss and reordering), quinn-proto style.
//! * `tcp_state`: state-machine tests of one endpoint at a time, segment in,
//!   segment out (smoltcp style, with `send!`/`recv!` macros).
//! * `tcp_pair`: behaviour tests of a whole connection over a `Pair`, one group per
//!   topic.
//! * `rack_tlp`: RACK, the tail loss probe, PRR and SACK RTT samples over a `Pair`,
//!   each against the same connection with its knob off.
//! * `architecture`: docs/architecture.md names files that exist.

pub mod pair;

mod afc;
mod architecture;
mod bbr;
mod handoff;
mod hystart;
mod kernel_timers;
mod rack_tlp;
mod spurious;
mod tcp_pair;
mod tcp_state;

use crate::tcp::TcpConfig;
use crate::time::test_util::ms;
use crate::wire::{Flags, SackBlocks, Segment};
use pair::Pair;

/// ns-2's one-way agents (no SACK, timestamps or delayed ACKs) with 1000-byte
/// segments, as a plain sender for unit tests: without the `ns2` profile's SYN
/// exchange and limited transmit (ns-2's `syn_` and `singledup_`), so that a test
/// starts with data at once and counts duplicate ACKs without new data between.
pub fn ns2() -> TcpConfig {
    TcpConfig {
        handshake: false,
        limited_transmit: false,
        ..TcpConfig::ns2()
    }
}

/// The `ns2` profile itself: ns-2.35's defaults, SYN exchange and limited transmit
/// included.
pub fn ns2_profile() -> TcpConfig {
    TcpConfig::ns2()
}

/// The RFC defaults (handshake, SACK, timestamps, delayed ACKs, limited transmit)
/// with 1000-byte segments so that the arithmetic in the tests stays readable.
pub fn rfc() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        ..TcpConfig::default()
    }
}

/// SACK blocks from `(left, right)` pairs, first one first.
pub fn sack_of(blocks: &[(u64, u64)]) -> SackBlocks {
    let mut sack = SackBlocks::new();
    for &(l, r) in blocks {
        sack.push(l, r);
    }
    sack
}

/// A pure ACK of `ack` advertising the window `wnd`.
pub fn ack(ack: u64, wnd: u64) -> Segment {
    Segment {
        ack,
        wnd,
        flags: Flags::ACK,
        ..Segment::default()
    }
}

/// [`ack`] with the SACK blocks `blocks`, first one first.
pub fn sack_ack(a: u64, wnd: u64, blocks: &[(u64, u64)]) -> Segment {
    Segment {
        sack: sack_of(blocks),
        ..ack(a, wnd)
    }
}

/// The key `validate` names in refusing the defaults of `T` with `change` applied.
pub fn refused<T: Default>(
    validate: fn(&T) -> Result<(), (&'static str, String)>,
    change: impl FnOnce(&mut T),
) -> &'static str {
    let mut params = T::default();
    change(&mut params);
    validate(&params).expect_err("refused").0
}

/// A bottleneck of one 1000-byte segment (plus 40 bytes of header) per millisecond,
/// so that segments sent together arrive one millisecond apart.
pub const ONE_SEG_PER_MS: u64 = 8_320_000;

/// A [`Pair`] of `cfg`, 50 ms each way, behind a bottleneck of [`ONE_SEG_PER_MS`].
pub fn bottlenecked(cfg: TcpConfig) -> Pair {
    let mut p = Pair::new(cfg, ms(50));
    p.fwd.rate_bps = Some(ONE_SEG_PER_MS);
    p
}
