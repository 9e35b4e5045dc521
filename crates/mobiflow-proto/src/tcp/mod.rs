//! TCP, one direction of data: a [`TcpSender`] and a [`TcpReceiver`].
//!
//! Read RFC 9293 (the protocol), RFC 5681 (congestion control), RFC 6582 (NewReno),
//! RFC 2018 and RFC 6675 (SACK and SACK-based recovery), RFC 6298 (RTO), RFC 7323
//! (timestamps), RFC 1122 §4.2.3 (delayed ACKs, SWS avoidance, persist) first.
//!
//! mobiflow models each connection as a sender and a receiver, the way ns-2's
//! one-way agents do and every seed document measures: data flows one way, ACKs the
//! other. Two opposite transfers are two connections.

pub mod config;
pub mod cwv;
pub mod delack;
pub mod dsack;
pub mod event;
pub mod ext;
pub mod handoff;
pub mod idle;
pub mod jiffies;
pub mod prr;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sack;
pub mod sender;
pub mod tlp;
pub mod undo;

pub use config::{InitialWindow, LossDetection, Recovery, RttSampling, TcpConfig};
pub use delack::AckPolicy;
pub use event::{Detector, ReceiverEvent, SenderEvent};
pub use ext::ba_sst::PacketPair;
pub use ext::{SenderExt, SenderExtName, SenderExtSet, SenderExtension};
pub use handoff::{HandoffReaction, HandoffSignal, InterfaceChange};
pub use idle::IdleRestart;
pub use receiver::{ReceiverStats, TcpReceiver};
pub use rtt::{RtoFormula, RttEstimator};
pub use sender::{SenderStats, TcpSender};

/// What a `poll_transmit_into` call of [`TcpSender`] or [`TcpReceiver`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Polled {
    /// Nothing to send: the slot is untouched.
    Nothing,
    /// A segment is in the slot; poll again.
    Sent,
    /// A segment is in the slot, and the machine knows that a poll now would send
    /// nothing: it has done that poll's bookkeeping (what it records about the
    /// windows), so the caller may stop. Polling again anyway is harmless: it repeats
    /// the same bookkeeping on the same state and sends nothing.
    Last,
}

impl Polled {
    /// A segment was written.
    pub fn sent(self) -> bool {
        self != Polled::Nothing
    }
}
