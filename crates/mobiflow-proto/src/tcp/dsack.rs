//! D-SACK (RFC 2883): a receiver reports a segment that brought bytes it already had
//! in the first SACK block of its next ACK, and the sender tells such a block from an
//! ordinary one.
//!
//! * The receiver's side ([`duplicate_range`]): the bytes of an arriving segment that
//!   are already held, below `RCV.NXT` or in an out-of-order block, are the range to
//!   report (RFC 2883 §4 (1)–(2); Linux `tcp_data_queue`, `tcp_data_queue_ofo` call
//!   `tcp_dsack_set` with that range, and `tcp_established_options` puts the block
//!   first). One block is reported, for the latest duplicate, on the next ACK only.
//! * The sender's side ([`dsack_block`]): a first block below the cumulative ACK, or
//!   inside the second block, is a D-SACK (RFC 2883 §4.1; Linux `tcp_check_dsack`).
//!
//! The same test gives the simulator's ground truth of a spurious retransmission
//! (`ReceiverStats::spurious_retransmits`): a retransmitted segment all of whose
//! bytes the receiver already had, i.e. one a D-SACK reports whole.

use crate::wire::Segment;
use std::collections::VecDeque;

/// The bytes of `[start, end)` the receiver already holds, given `RCV.NXT` and its
/// out-of-order blocks (`[l, r)`, sorted and disjoint):
/// the first contiguous run of held bytes (the range a D-SACK reports, RFC 2883 §4),
/// and whether every byte of the segment was held.
pub fn duplicate_range(
    rcv_nxt: u64,
    ooo: &VecDeque<(u64, u64)>,
    start: u64,
    end: u64,
) -> (Option<(u64, u64)>, bool) {
    if start >= end {
        return (None, false);
    }
    if end <= rcv_nxt {
        return (Some((start, end)), true);
    }
    if start < rcv_nxt {
        // Partly old (Linux `tcp_data_queue`: `tcp_dsack_set(sk, seq, rcv_nxt)`); the
        // rest may also lie in an out-of-order block that starts at RCV.NXT.
        let i = ooo.partition_point(|b| b.1 <= rcv_nxt);
        let run_end = match ooo.get(i) {
            Some(&(l, r)) if l <= rcv_nxt => r.min(end),
            _ => rcv_nxt,
        };
        return (Some((start, run_end)), run_end >= end);
    }
    // Out of order: the first block the segment overlaps (`tcp_data_queue_ofo`).
    let i = ooo.partition_point(|b| b.1 <= start);
    match ooo.get(i) {
        Some(&(l, r)) if l < end => {
            let (dl, dr) = (l.max(start), r.min(end));
            (Some((dl, dr)), dl == start && dr == end)
        }
        _ => (None, false),
    }
}

/// The D-SACK block of an ACK, if its first SACK block is one (RFC 2883 §4.1, Linux
/// `tcp_check_dsack`): it lies below the cumulative ACK, or inside the second block.
pub fn dsack_block(seg: &Segment) -> Option<(u64, u64)> {
    let mut blocks = seg.sack.iter();
    let (l0, r0) = blocks.next()?;
    if l0 < seg.ack {
        return Some((l0, r0));
    }
    match blocks.next() {
        Some((l1, r1)) if l0 >= l1 && r0 <= r1 => Some((l0, r0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::sack_ack;

    #[test]
    fn an_old_segment_is_a_duplicate_whole() {
        // RFC 2883 §4 (1): a segment below RCV.NXT.
        assert_eq!(
            duplicate_range(5000, &VecDeque::new(), 1000, 2000),
            (Some((1000, 2000)), true)
        );
    }

    #[test]
    fn a_partly_old_segment_reports_its_old_part() {
        // Linux `tcp_data_queue`: `tcp_dsack_set(sk, seq, rcv_nxt)`.
        assert_eq!(
            duplicate_range(1500, &VecDeque::new(), 1000, 2000),
            (Some((1000, 1500)), false)
        );
        // ... with the rest held out of order too: all of it was had.
        assert_eq!(
            duplicate_range(1500, &VecDeque::from([(1500, 3000)]), 1000, 2000),
            (Some((1000, 2000)), true)
        );
    }

    #[test]
    fn an_out_of_order_duplicate_is_reported() {
        // RFC 2883 §4 (2): a duplicate of data held above a hole.
        let ooo = VecDeque::from([(3000, 5000), (7000, 8000)]);
        assert_eq!(
            duplicate_range(1000, &ooo, 4000, 5000),
            (Some((4000, 5000)), true)
        );
        assert_eq!(
            duplicate_range(1000, &ooo, 4500, 5500),
            (Some((4500, 5000)), false)
        );
        assert_eq!(duplicate_range(1000, &ooo, 5000, 6000), (None, false));
        assert_eq!(duplicate_range(1000, &ooo, 1000, 2000), (None, false));
    }

    #[test]
    fn the_sender_recognises_a_dsack_block() {
        // RFC 2883 §4.1 / Linux `tcp_check_dsack`: below the cumulative ACK ...
        assert_eq!(
            dsack_block(&sack_ack(5000, 0, &[(1000, 2000)])),
            Some((1000, 2000))
        );
        // ... or inside the second block.
        assert_eq!(
            dsack_block(&sack_ack(1000, 0, &[(4000, 5000), (3000, 6000)])),
            Some((4000, 5000))
        );
        // An ordinary SACK block is not one.
        assert_eq!(
            dsack_block(&sack_ack(1000, 0, &[(3000, 6000), (8000, 9000)])),
            None
        );
        assert_eq!(dsack_block(&sack_ack(1000, 0, &[])), None);
    }
}
