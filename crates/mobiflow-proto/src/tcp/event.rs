//! The events of the TCP machines ([`crate::event`]): what the sender and the
//! receiver queue for their caller (`TcpSender::poll_event`,
//! `TcpReceiver::poll_event`). Each variant names where it is emitted.

use crate::cc::CongestionKind;
use crate::time::Duration;

/// What found a reduction spurious (`tcp::undo`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Detector {
    /// The Eifel algorithm: the ACK echoes a timestamp older than the first
    /// retransmission (RFC 3522, Linux `tcp_packet_delayed`).
    Timestamps,
    /// Every retransmission of the episode was D-SACKed (RFC 3708, Linux
    /// `undo_retrans == 0`).
    Dsack,
    /// F-RTO: never-retransmitted data was acknowledged after a timeout (RFC 5682
    /// §3.1 step 3b).
    Frto,
}

/// A discrete happening of a [`crate::tcp::TcpSender`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SenderEvent {
    /// The retransmission timer expired (RFC 6298 §5.4–5.7; `on_rto`, also when an
    /// extension expired it on its own timer).
    Timeout,
    /// The SYN was resent after a timeout (RFC 6298 §5 applied to the SYN; `expire`).
    SynRetransmit,
    /// A fast retransmit: fast recovery entered (RFC 5681 §3.2, RFC 6675 §5;
    /// `enter_recovery`, also for an extension's own losses).
    RecoveryEntered,
    /// Fast recovery ended (RFC 6582 §3.2 step 3; `exit_recovery`).
    RecoveryExited,
    /// An extension kept a congestion signal of this kind from the congestion
    /// controller (`Response::Hide`, AFC: `enter_recovery`, `expire`).
    CongestionHidden(CongestionKind),
    /// The persist timer sent a window probe (RFC 9293 §3.8.6.1; `poll_transmit`).
    WindowProbe,
    /// A tail loss probe was sent (RFC 8985 §7.3; `send_probe`).
    LossProbe,
    /// A loss probe repaired a loss and the window was reduced once (RFC 8985 §7.4;
    /// `probe_found_loss`).
    LossProbeRecovery,
    /// A congestion reduction was undone as spurious (`spurious_after_ack`, Linux
    /// `tcp_try_undo_*`): which detector found it, and whether the episode was a
    /// timeout.
    Undo {
        detector: Detector,
        after_timeout: bool,
    },
    /// A zero-window stall ended: new data left again (`send_new_data`). Its length
    /// (from the last new data before the zero window) and ceil(length / SRTT).
    ZeroWindowStallEnded { length: Duration, rtts: u64 },
    /// The sender learnt of an interface change of the mobile host
    /// (`on_interface_change`).
    InterfaceChange,
    /// IETT expired the retransmission timer at once on an interface change
    /// (`tcp::ext::iett`).
    ForcedExpiry,
    /// BA-SST applied an estimate (`tcp::ext::ba_sst`): the bandwidth (payload
    /// bits/s), the RTT it used and the ssthresh it set (bytes).
    BaSstEstimate {
        bps: f64,
        rtt: Duration,
        ssthresh: u64,
    },
}

/// A discrete happening of a [`crate::tcp::TcpReceiver`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReceiverEvent {
    /// A zero window was advertised after a non-zero one (`build_ack`).
    ZeroWindowAdvertised,
    /// An ACK went out because the window policy asked for an update (AFC's
    /// proactive feedback, a grown auto-tuned buffer; `build_ack`).
    PolicyUpdate,
    /// Freeze-TCP froze the window at zero on a disconnection warning (`freeze`).
    Frozen,
    /// Reconnected: the policy asked for this many copies of the ACK (Freeze-TCP's
    /// TR-ACKs; `unfreeze`).
    Unfrozen { tr_acks: u32 },
    /// A handoff notice left on an ACK (`HandoffSignal::AckOption`; `poll_transmit`).
    HandoffNotice,
}
