//! The events of the TFRC / DCCP CCID 3 machines ([`crate::event`]): what the sender
//! and the receiver queue for their caller (`TfrcSender::poll_event`,
//! `TfrcReceiver::poll_event`). Each variant names where it is emitted.

use super::receiver::RxFreezeState;
use super::sender::FreezeState;
use crate::event::Events;

/// Moves a Freeze-DCCP state (the sender's or the receiver's `set_state`) to `to`,
/// queuing `changed(from, to)` when it is a change.
pub(super) fn change_state<S: Copy + PartialEq, E>(
    state: &mut S,
    to: S,
    events: &mut Events<E>,
    changed: impl FnOnce(S, S) -> E,
) {
    if *state != to {
        events.push(changed(*state, to));
        *state = to;
    }
}

/// A discrete happening of a [`super::TfrcSender`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SenderEvent {
    /// The nofeedback timer expired (RFC 5348 §4.4; `on_nofeedback`).
    NoFeedbackExpiry,
    /// The Freeze-DCCP state changed (`set_state`): into FROZEN on a freeze, FROZEN
    /// to RESTORING on an unfreeze, RESTORING to PROBING, and back to NORMAL on a
    /// fallback.
    StateChanged { from: FreezeState, to: FreezeState },
}

/// A discrete happening of a [`super::TfrcReceiver`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReceiverEvent {
    /// The Freeze-DCCP receiver state changed (`set_state`).
    StateChanged {
        from: RxFreezeState,
        to: RxFreezeState,
    },
    /// A data packet started this many new loss events (RFC 5348 §5.2;
    /// `handle_data`).
    LossEvents(u64),
}
