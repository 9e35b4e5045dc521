//! Reactions of TCP to a vertical handoff (a change of datalink interface).
//!
//! The vertical-handoff paper (Tsukamoto, Fukuda, Hori, Oie, "New flow control schemes
//! of TCP for multimodal mobile hosts"; IEICE Trans. Commun. E89-B(6), 2006 for the journal
//! version) proposes two sender-side reactions, and cites Freeze-TCP as the
//! receiver-side alternative:
//!
//! * **Immediate Expiration of the Timeout Timer** (IETT, seed §IV.A): on the
//!   interface change the sender "forces the timer to immediately expire" and restarts
//!   by slow start, instead of waiting for the (backed-off) RTO. The forced expiry is
//!   not a backoff: the RTO is reset to its un-backed-off value.
//! * **Bandwidth-Aware ssthresh** (BA-SST, seed §IV.B, equations (1)–(2)): on the
//!   change, estimate the new path's bandwidth by packet pair on the ACKs of the first
//!   segments sent over it (Hoe, "Improving the start-up behavior of a congestion
//!   control scheme for TCP", SIGCOMM '96: the RTT from timing the first segment, the
//!   bandwidth from the spacing of the second and third ACKs) and set
//!   `ssthresh = max(2·MSS, BW × RTT)`. Refined, as Aron & Druschel ("TCP: Improving
//!   startup dynamics by adaptive timers and congestion control", Rice TR98-318,
//!   1998) do, by re-estimating from later packet pairs while the slow start that
//!   follows the change lasts ([`super::ext::ba_sst::PacketPair`]).
//!
//! IETT and BA-SST are sender extensions (`tcp::ext::iett`, `tcp::ext::ba_sst`).
//! * **Freeze-TCP** (Goff, Moronski, Phatak, Gupta, INFOCOM 2000): the mobile
//!   *receiver* advertises a zero window a warning time before a predicted
//!   disconnection, so the unmodified sender enters persist mode and keeps its cwnd
//!   and RTO; on reconnection the receiver sends three copies of its last ACK with the
//!   window reopened (TR-ACKs). A receive-window policy layer, `flow::freeze`, told
//!   by [`super::TcpReceiver::freeze`] and [`super::TcpReceiver::unfreeze`].
//!
//! How a mobile receiver tells the sender of the change is not in the seed
//! ([`HandoffSignal`], a named parameter whose default is reported as assumed).

use crate::time::Duration;

crate::named_enum! {
    /// Which sender-side reaction to an interface change a flow uses.
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
    pub enum HandoffReaction ("handoff reaction", reading "_" as "-") {
        /// Plain TCP: the change goes unnoticed.
        #[default]
        None = "none" | "tcp",
        /// Immediate Expiration of the Timeout Timer only.
        Iett = "iett" | "immediate-expiration",
        /// Bandwidth-aware ssthresh only (the restart still waits for the RTO).
        BaSst = "ba-sst" | "bandwidth-aware",
        /// Both: the seed's "Bandwidth Aware" scheme, which "also begins transmitting
        /// packets using slow start immediately after hand-off" (§VI.A).
        IettBaSst = "iett+ba-sst" | "ba-sst+iett",
    }
}

impl HandoffReaction {
    /// Expire the retransmission timer at once on a change.
    pub fn iett(self) -> bool {
        matches!(self, HandoffReaction::Iett | HandoffReaction::IettBaSst)
    }
    /// Estimate the new bandwidth and set ssthresh from it.
    pub fn ba_sst(self) -> bool {
        matches!(self, HandoffReaction::BaSst | HandoffReaction::IettBaSst)
    }
}

crate::named_enum! {
    /// How the sender learns of an interface change at the mobile receiver (unknown in
    /// the seed: [GUESS], reported as assumed).
    #[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
    pub enum HandoffSignal ("handoff signal", reading "_" as "-") {
        /// The mobile receiver sends an ACK at once on reconnection carrying an
        /// explicit "interface changed" notification (an experimental TCP option;
        /// mobiflow marks the segment, [`crate::wire::ExpOptions::handoff_notice`]). The
        /// sender reacts when that ACK arrives; a lost notification is not repeated.
        #[default]
        AckOption = "ack-option" | "option",
        /// An out-of-band signal (e.g. a Mobile IP binding update seen by the
        /// correspondent host) that reaches the sender one path one-way propagation
        /// delay after the reconnection, and cannot be lost.
        OutOfBand = "out-of-band" | "oob",
    }
}

/// What the mobile host knows of its new interface when it comes up. The reactions do
/// not use it (BA-SST measures the path end to end); it is kept for traces.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct InterfaceChange {
    /// Rate of the new access link, bits per second (0 when unknown).
    pub rate_bps: u64,
    /// Its propagation delay.
    pub delay: Duration,
}
