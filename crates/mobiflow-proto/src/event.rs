//! Events: the discrete happenings of a protocol machine (a timeout, a recovery
//! entered, a reduction undone, a state change), queued by the machine and drained by
//! its caller, as quinn-proto's `Connection::poll` hands out its events: after any
//! `handle_*` call or `poll_transmit`, call the machine's `poll_event` until it returns
//! `None`. A caller that never drains lets the queue grow by one entry per happening.
//!
//! What a machine counts per packet (segments and bytes sent, duplicate ACKs, window
//! updates) stays a plain counter in its stats, read at the end: an event per packet
//! would cost a queue entry per packet on the hot path.

use std::collections::VecDeque;

/// A machine's queue of events of type `E`, oldest first. Empty, it holds no
/// allocation; once it has grown, pushing reuses its room, and polling an empty queue
/// is one length test.
#[derive(Clone, Debug)]
pub struct Events<E> {
    q: VecDeque<E>,
}

impl<E> Default for Events<E> {
    fn default() -> Self {
        Events { q: VecDeque::new() }
    }
}

impl<E> Events<E> {
    /// Queue `e`.
    #[inline]
    pub fn push(&mut self, e: E) {
        self.q.push_back(e);
    }

    /// The oldest event not yet polled.
    #[inline(always)]
    pub fn poll(&mut self) -> Option<E> {
        if self.q.is_empty() {
            return None;
        }
        self.q.pop_front()
    }

    /// Events queued and not yet polled.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Events;

    #[test]
    fn events_come_out_oldest_first_and_the_queue_empties() {
        let mut q = Events::default();
        assert_eq!(q.poll(), None::<u32>);
        q.push(1);
        q.push(2);
        assert_eq!(q.len(), 2);
        assert_eq!(q.poll(), Some(1));
        q.push(3);
        assert_eq!((q.poll(), q.poll(), q.poll()), (Some(2), Some(3), None));
        assert!(q.is_empty());
    }
}
