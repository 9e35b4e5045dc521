//! The sender's scoreboard: one record per segment sent and not yet cumulatively
//! acknowledged, with its SACK and loss marks (RFC 6675 §2–§4).
//!
//! Segments keep the boundaries they were first sent with, so a record is the unit of
//! retransmission. The scoreboard answers RFC 6675's questions: `IsLost` (§4,
//! DupThresh SACKed segments above), `pipe` (§4, SetPipe) and `NextSeg` (§4).

use super::rate::{Delivered, TxState};
use crate::time::Instant;
use std::collections::VecDeque;

/// One segment in flight.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SegRec {
    pub start: u64,
    pub end: u64,
    /// Time of the latest (re)transmission.
    pub sent_at: Instant,
    /// Transmissions so far (1 = never retransmitted).
    pub tx_count: u16,
    pub sacked: bool,
    /// Marked lost and not retransmitted since.
    pub lost: bool,
    /// Sent while the application had nothing more to give (RFC 7661).
    pub app_limited: bool,
}

impl SegRec {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Outstanding segments in sequence order.
/// What a cumulative ACK removed from the scoreboard ([`Scoreboard::ack_to`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Acked {
    /// The newest record removed whole, to take an RTT sample from.
    pub last: Option<SegRec>,
    /// Bytes removed that were not already SACKed (newly delivered by this ACK).
    pub newly: u64,
    /// The latest send time among the records removed whole: the segment whose
    /// arrival triggered the ACK (a retransmission that filled a hole acknowledges
    /// older ones too).
    pub latest_sent: Option<Instant>,
}

/// What the SACK blocks and the cumulative ACK of one ACK delivered, for the loss
/// detection and RTT rules that look at individual segments (RACK, RFC 8985 §6.2
/// step 2; Linux `tcp_sacktag_one`'s `first_sackt` and `reord`). Gathered by
/// [`Scoreboard::sack`] and [`Scoreboard::ack_to`] once [`Scoreboard::track_delivery`]
/// was called (a sender without RACK or SACK RTT samples reads none of it); read and
/// reset with [`Scoreboard::take_delivery`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// The newly delivered record (SACKed, or cumulatively acknowledged without
    /// having been SACKed) sent last, ties broken by the higher end (RFC 8985
    /// `RACK_sent_after`).
    pub newest: Option<SegRec>,
    /// The earliest send time of a newly SACKed record never retransmitted.
    pub first_sacked_original: Option<Instant>,
    /// The lowest start of a newly delivered record never retransmitted.
    pub lowest_original: Option<u64>,
}

impl Delivery {
    fn note(&mut self, r: &SegRec, by_sack: bool) {
        if self
            .newest
            .is_none_or(|n| (r.sent_at, r.end) > (n.sent_at, n.end))
        {
            self.newest = Some(*r);
        }
        if r.tx_count == 1 {
            if by_sack {
                self.first_sacked_original = Some(
                    self.first_sacked_original
                        .map_or(r.sent_at, |t| t.min(r.sent_at)),
                );
            }
            self.lowest_original = Some(self.lowest_original.map_or(r.start, |s| s.min(r.start)));
        }
    }
}

/// `repr(C)`, the fields in the order written: what every ACK and every new segment
/// reads (`ack_to`'s test of the marks, `pipe`, the records' ring) comes first, in
/// one cache line, as with many flows each packet finds its flow's scoreboard out of
/// the L1 cache; Rust's own order put `pipe` and the flags two lines apart.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct Scoreboard {
    recs: VecDeque<SegRec>,
    /// Bytes counted by RFC 6675's pipe: not SACKed and not marked lost.
    pipe: u64,
    /// Records marked lost and awaiting retransmission.
    lost_count: u32,
    sacked_count: u32,
    /// Delivery-rate estimation (`tcp::rate`), only when [`Self::track_rate`] was
    /// called: `tx`, each record's send-time state, beside `recs` at the same index,
    /// and, since [`Self::take_delivered`], the bytes delivered and the delivered
    /// record sent last.
    tracks_rate: bool,
    tracks_delivery: bool,
    /// The span a block starting in none of them replaces.
    next_span: u8,
    /// Where the last IsLost scan stopped: the index of the first record ending above
    /// `lost_scan_end`, unless records were removed since (checked before each use).
    /// With `sack_idx`, in the first line: the counts above are `u32` to make room.
    lost_scan_idx: u32,
    /// Where the last [`Self::sack`] scan stopped: the index of the first record
    /// starting at or above its block's right edge, checked before each use as
    /// `lost_scan_idx` is. A duplicate ACK grows the block of the one before from that
    /// edge, so its scan starts there without a search.
    sack_idx: u32,
    /// Start offsets of the highest SACKed records, ascending, at most `TOP` of them:
    /// RFC 6675's IsLost needs only the DupThresh-th highest.
    top_sacked: Vec<u64>,
    /// Every record ending at or below this offset has been through IsLost.
    lost_scan_end: u64,
    /// Spans `[left, right)` of sequence space in which every record lying wholly
    /// inside is SACKed: the blocks of the latest [`Self::sack`] calls, cut at the
    /// last record sent. A receiver repeats its blocks on every ACK and grows the first
    /// (RFC 2018 §4), so a block that starts inside a span is scanned from the span's
    /// right edge, not again from its left one (without this, each ACK of a recovery
    /// rescanned the whole block). Emptied when SACK marks are dropped or a record's
    /// bounds change.
    sacked_spans: [(u64, u64); SPANS],
    /// What the current ACK delivered so far, when `tracks_delivery`.
    delivery: Delivery,
    /// Bytes ever marked lost (Linux `tp->lost`).
    lost_total: u64,
    tx: VecDeque<TxState>,
    delivered_bytes: u64,
    delivered_pick: Option<Delivered>,
}

/// How many of the highest SACKed records the scoreboard tracks; a DupThresh above it
/// falls back to a full scan.
const TOP: usize = 16;

/// How many recent SACK blocks the scoreboard remembers as SACKed spans: the most an
/// ACK carries with timestamps (RFC 2018 §3; four without, when the fourth block,
/// the oldest, is scanned in full). Four made a flow's endpoints 16 bytes larger than
/// the per-flow memory goal allows (`memory_tests` in the simulator's engine).
const SPANS: usize = 3;

impl Scoreboard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    pub fn len(&self) -> usize {
        self.recs.len()
    }
    pub fn iter(&self) -> impl Iterator<Item = &SegRec> {
        self.recs.iter()
    }
    pub fn front(&self) -> Option<&SegRec> {
        self.recs.front()
    }
    pub fn get(&self, i: usize) -> Option<&SegRec> {
        self.recs.get(i)
    }
    /// RFC 6675 pipe in bytes: outstanding bytes neither SACKed nor marked lost
    /// (retransmissions count once they are sent again).
    pub fn pipe(&self) -> u64 {
        self.pipe
    }
    pub fn lost_count(&self) -> usize {
        self.lost_count as usize
    }
    pub fn sacked_count(&self) -> usize {
        self.sacked_count as usize
    }

    /// Gather what each ACK delivered ([`Delivery`]) from now on.
    pub fn track_delivery(&mut self) {
        self.tracks_delivery = true;
    }

    /// Keep each record's delivery-rate state from now on (before the first push).
    pub fn track_rate(&mut self) {
        self.tracks_rate = true;
    }

    /// Record `i` was (re)sent with this delivery-rate state (`i` = `len() - 1` for a
    /// record just pushed). Only when tracking.
    pub fn set_tx(&mut self, i: usize, tx: TxState) {
        if i == self.tx.len() {
            self.tx.push_back(tx);
        } else {
            self.tx[i] = tx;
        }
    }

    /// Bytes ever marked lost.
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// The bytes delivered (cumulatively acknowledged or SACKed for the first time)
    /// since the last call, and of the records delivered the one sent last, with its
    /// delivery-rate state (Linux `tcp_rate_skb_delivered`). Only when tracking.
    pub fn take_delivered(&mut self) -> (u64, Option<Delivered>) {
        (
            std::mem::take(&mut self.delivered_bytes),
            self.delivered_pick.take(),
        )
    }

    /// Record `r` (with delivery-rate state `tx`) was delivered.
    fn note_delivered(&mut self, r: &SegRec, tx: TxState) {
        self.delivered_bytes += r.len();
        let d = Delivered {
            sent_at: r.sent_at,
            end: r.end,
            retransmitted: r.tx_count > 1,
            tx,
        };
        self.delivered_pick = Delivered::newer(self.delivered_pick, d);
    }

    /// A new segment was sent at the right edge.
    pub fn push(&mut self, rec: SegRec) {
        debug_assert!(self.recs.back().is_none_or(|b| b.end <= rec.start));
        // `ack_to_unmarked` stops at a record ending at the ACK: none is empty.
        debug_assert!(rec.start < rec.end);
        self.pipe += rec.len();
        self.recs.push_back(rec);
    }

    /// Remove every record below the cumulative `ack` (see [`Acked`]).
    #[inline(always)]
    pub fn ack_to(&mut self, ack: u64) -> Acked {
        // One test per ACK: the loop without rate tracking is the one it always was.
        if self.tracks_rate {
            self.ack_to_impl::<true>(ack)
        } else if self.tracks_delivery {
            self.ack_to_impl::<false>(ack)
        } else {
            self.ack_to_untracked(ack)
        }
    }

    /// [`Self::ack_to`] for a scoreboard that tracks neither delivery rates nor
    /// deliveries (a `plain` sender's): the test of the tracking flags left out.
    #[inline(always)]
    pub fn ack_to_untracked(&mut self, ack: u64) -> Acked {
        debug_assert!(!self.tracks_rate && !self.tracks_delivery);
        if self.sacked_count == 0 && self.lost_count == 0 {
            self.ack_to_unmarked(ack)
        } else {
            self.ack_to_marked(ack)
        }
    }

    /// [`Self::ack_to_impl`] without tracking, when records are SACKed or marked lost
    /// (the full ACK that ends a recovery, which removes the whole window): the
    /// records removed are read in one pass and dropped together, their counts and
    /// pipe updated once, and their entries in `top_sacked` dropped at once. Those are
    /// its lowest entries (`forget`, one record at a time, removes each as the lowest):
    /// every entry below the end of the last record removed, as the records left
    /// start at or above it.
    #[inline(never)]
    fn ack_to_marked(&mut self, ack: u64) -> Acked {
        let (mut n, mut newly, mut unmarked, mut sacked, mut lost) = (0, 0, 0, 0, 0);
        // Send times are instants from zero, so zero is below every one of them.
        let mut latest = Instant::ZERO;
        let mut last: Option<&SegRec> = None;
        for r in self.recs.iter() {
            if r.end > ack {
                break;
            }
            n += 1;
            if r.sacked {
                sacked += 1;
            } else {
                newly += r.len();
                if r.lost {
                    lost += 1;
                } else {
                    unmarked += r.len();
                }
            }
            latest = latest.max(r.sent_at);
            last = Some(r);
        }
        let last = last.copied();
        if let Some(l) = last {
            if sacked > 0 {
                let k = self.top_sacked.partition_point(|&x| x < l.end);
                self.top_sacked.drain(..k);
            }
            self.sacked_count -= sacked;
            self.lost_count -= lost;
            self.pipe -= unmarked;
            self.recs.drain(..n);
        }
        let cut = self.trim_front(ack);
        Acked {
            last,
            newly: newly + cut,
            latest_sent: last.map(|_| latest),
        }
    }

    #[inline(never)]
    fn ack_to_impl<const RATE: bool>(&mut self, ack: u64) -> Acked {
        let mut last: Option<SegRec> = None;
        let mut newly = 0;
        let mut latest_sent: Option<Instant> = None;
        while let Some(front) = self.recs.front_mut() {
            if front.end > ack {
                break;
            }
            let r = self.recs.pop_front().expect("front exists");
            self.forget(&r);
            if RATE {
                let tx = self.tx.pop_front().unwrap_or_default();
                if !r.sacked {
                    self.note_delivered(&r, tx);
                }
            }
            if !r.sacked {
                newly += r.len();
                if self.tracks_delivery {
                    self.delivery.note(&r, false);
                }
            }
            latest_sent = Some(latest_sent.map_or(r.sent_at, |t| t.max(r.sent_at)));
            last = Some(r);
        }
        let cut = self.trim_front(ack);
        if RATE {
            self.delivered_bytes += cut;
        }
        Acked {
            last,
            newly: newly + cut,
            latest_sent,
        }
    }

    /// [`Self::ack_to`] when no record is SACKed or marked lost and nothing is
    /// tracked, nearly every ACK of a transfer without losses: every record removed
    /// leaves pipe and is newly delivered, with none of the marks' bookkeeping per
    /// record.
    #[inline(always)]
    fn ack_to_unmarked(&mut self, ack: u64) -> Acked {
        // The ACK of exactly the oldest record (every ACK of a receiver that acks each
        // segment): the record after it starts at or above the ACK and is not empty
        // (`push`), so the loop below would stop there with nothing to trim.
        if let Some(&r) = self.recs.front() {
            if r.end == ack {
                self.recs.pop_front();
                self.pipe -= r.len();
                return Acked {
                    last: Some(r),
                    newly: r.len(),
                    latest_sent: Some(r.sent_at),
                };
            }
        }
        let mut last: Option<SegRec> = None;
        let mut newly = 0;
        let mut latest_sent: Option<Instant> = None;
        let mut cut = 0;
        while let Some(&r) = self.recs.front() {
            if r.end > ack {
                // The record the loop stops at is the one `trim_front` would look up
                // again: trim only when the ACK falls inside it.
                if r.start < ack {
                    cut = self.trim_front(ack);
                }
                break;
            }
            self.recs.pop_front();
            newly += r.len();
            latest_sent = Some(latest_sent.map_or(r.sent_at, |t| t.max(r.sent_at)));
            last = Some(r);
        }
        self.pipe -= newly;
        Acked {
            last,
            newly: newly + cut,
            latest_sent,
        }
    }

    /// A partial ACK inside the oldest record (after a peer coalesced differently, or
    /// a window probe byte): trim the record to start at `ack`. Returns the bytes cut
    /// that were not already SACKed (newly delivered).
    #[inline(always)]
    fn trim_front(&mut self, ack: u64) -> u64 {
        let Some(front) = self.recs.front_mut() else {
            return 0;
        };
        if front.start >= ack {
            return 0;
        }
        // Trimmed, an un-SACKed record may now lie wholly inside a SACKed span.
        self.sacked_spans = [(0, 0); SPANS];
        let cut = ack - front.start;
        let mut newly = 0;
        if front.sacked {
            if let Some(x) = self.top_sacked.first_mut() {
                if *x == front.start {
                    *x = ack;
                }
            }
        } else {
            if !front.lost {
                self.pipe -= cut;
            }
            newly = cut;
        }
        front.start = ack;
        newly
    }

    /// What the SACK blocks and cumulative ACK processed since the last
    /// [`Self::take_delivery`] delivered.
    pub fn delivery(&self) -> &Delivery {
        &self.delivery
    }

    /// What the SACK blocks and cumulative ACK processed since the last call
    /// delivered ([`Delivery`]); resets it.
    pub fn take_delivery(&mut self) -> Delivery {
        std::mem::take(&mut self.delivery)
    }

    fn forget(&mut self, r: &SegRec) {
        if r.sacked {
            self.sacked_count -= 1;
            // Popped from the front: if it is in the top list it is its lowest entry.
            if self.top_sacked.first() == Some(&r.start) {
                self.top_sacked.remove(0);
            }
        } else if r.lost {
            self.lost_count -= 1;
        } else {
            self.pipe -= r.len();
        }
    }

    /// Mark records inside `[left, right)` as SACKed (RFC 2018). Returns the bytes
    /// newly SACKed.
    pub fn sack(&mut self, left: u64, right: u64) -> u64 {
        if self.tracks_rate {
            self.sack_impl::<true>(left, right)
        } else {
            self.sack_impl::<false>(left, right)
        }
    }

    #[inline(always)]
    fn sack_impl<const RATE: bool>(&mut self, left: u64, right: u64) -> u64 {
        let mut newly = 0;
        // Records ending at or below `from` are already SACKed, or do not lie wholly
        // inside the block: those inside a remembered span that holds `left`.
        let (mut from, mut slot) = (left, usize::from(self.next_span));
        for (k, &(l, r)) in self.sacked_spans.iter().enumerate() {
            if l <= left && left <= r && r > from {
                (from, slot) = (r, k);
            }
        }
        if right <= from {
            // The block lies inside a remembered span (or is empty): every record
            // wholly inside it is SACKed already (a receiver repeats its older blocks
            // unchanged on every ACK, RFC 2018 §4). The span stays: it holds the block.
            return 0;
        }
        let mut i = self.index_after(self.sack_idx, from);
        while i < self.recs.len() {
            let r = self.recs[i];
            if r.start >= right {
                break;
            }
            if r.start >= left && r.end <= right && !r.sacked {
                if r.lost {
                    self.lost_count -= 1;
                } else {
                    self.pipe -= r.len();
                }
                let m = &mut self.recs[i];
                m.sacked = true;
                m.lost = false;
                self.sacked_count += 1;
                newly += r.len();
                if self.tracks_delivery {
                    self.delivery.note(&r, true);
                }
                if RATE {
                    let tx = self.tx[i];
                    self.note_delivered(&r, tx);
                }
                let at = self.top_sacked.partition_point(|&x| x < r.start);
                if self.top_sacked.len() < TOP || at > 0 {
                    self.top_sacked.insert(at, r.start);
                    if self.top_sacked.len() > TOP {
                        self.top_sacked.remove(0);
                    }
                }
            }
            i += 1;
        }
        self.sack_idx = u32::try_from(i).unwrap_or(u32::MAX);
        // Every record wholly inside the block is SACKed now; one sent later starts at
        // or above the last record's end.
        let edge = self
            .recs
            .back()
            .map_or(left, |b| b.end)
            .clamp(left, right.max(left));
        self.sacked_spans[slot] = (left, edge);
        if slot == usize::from(self.next_span) {
            self.next_span = ((slot + 1) % SPANS) as u8;
        }
        newly
    }

    /// Mark record `i` lost (it will be retransmitted). No-op if SACKed or already lost.
    pub fn mark_lost(&mut self, i: usize) -> bool {
        let r = &mut self.recs[i];
        if r.sacked || r.lost {
            return false;
        }
        r.lost = true;
        self.pipe -= r.len();
        self.lost_total += r.len();
        self.lost_count += 1;
        true
    }

    /// RFC 6675 §4 IsLost, applied to the whole scoreboard: every un-SACKed record with
    /// at least `dupthresh` SACKed records above it (or `(dupthresh-1)*mss` SACKed bytes
    /// above it) and not yet retransmitted is marked lost. Returns how many were marked.
    pub fn mark_lost_by_sack(&mut self, dupthresh: u32, mss: u64) -> usize {
        if self.sacked_count == 0 {
            return 0;
        }
        let k = dupthresh.max(1) as usize;
        if k > TOP {
            return self.mark_lost_by_full_scan(dupthresh, mss);
        }
        if self.top_sacked.len() < k {
            return 0;
        }
        // Segments are at most one SMSS, so "more than (DupThresh-1)*SMSS bytes SACKed
        // above" implies "DupThresh SACKed segments above": a record is lost iff it
        // ends at or below the start of the DupThresh-th highest SACKed record. Records
        // below `lost_scan_end` were judged before and their verdict cannot change.
        let s = self.top_sacked[self.top_sacked.len() - k];
        if s <= self.lost_scan_end {
            return 0;
        }
        let mut marked = 0;
        // The first record ending above `lost_scan_end`: during a recovery, where the
        // last scan stopped (each duplicate ACK moves `s` up one record, and only a
        // cumulative ACK removes records: the index is then checked to be wrong and
        // the records are searched).
        let mut i = self.index_after(self.lost_scan_idx, self.lost_scan_end);
        while i < self.recs.len() && self.recs[i].end <= s {
            if self.recs[i].tx_count == 1 && self.mark_lost(i) {
                marked += 1;
            }
            i += 1;
        }
        self.lost_scan_end = s;
        // An index beyond `u32` is never taken (it is above every length checked).
        self.lost_scan_idx = u32::try_from(i).unwrap_or(u32::MAX);
        marked
    }

    /// The index of the first record ending above `at`: `hint` where it is that index
    /// (checked against its neighbours), else found by a binary search. An index
    /// beyond `u32` is never taken (it is above every length checked).
    #[inline(always)]
    fn index_after(&self, hint: u32, at: u64) -> usize {
        let (n, h) = (self.recs.len(), hint as usize);
        if h <= n && (h == 0 || self.recs[h - 1].end <= at) && (h == n || self.recs[h].end > at) {
            h
        } else {
            self.recs.partition_point(|r| r.end <= at)
        }
    }

    /// IsLost by scanning every record (for a DupThresh above what is tracked).
    fn mark_lost_by_full_scan(&mut self, dupthresh: u32, mss: u64) -> usize {
        let mut above_segs = 0u32;
        let mut above_bytes = 0u64;
        let mut marked = 0;
        for i in (0..self.recs.len()).rev() {
            let r = self.recs[i];
            if r.sacked {
                above_segs += 1;
                above_bytes += r.len();
                continue;
            }
            let lost =
                above_segs >= dupthresh || above_bytes > (dupthresh.saturating_sub(1) as u64) * mss;
            if lost && r.tx_count == 1 && self.mark_lost(i) {
                marked += 1;
            }
        }
        marked
    }

    /// Mark every outstanding, un-SACKed record lost (after a retransmission timeout).
    pub fn mark_all_lost(&mut self) -> usize {
        let mut n = 0;
        for i in 0..self.recs.len() {
            if self.mark_lost(i) {
                n += 1;
            }
        }
        n
    }

    /// Mark lost every outstanding record that is neither SACKed nor already marked
    /// lost and was (last) sent at or before `cutoff`. Returns how many were marked.
    /// (AFC's repair of receive-buffer losses, `TcpSender::repair_buffer_losses`.)
    pub fn mark_lost_sent_before(&mut self, cutoff: Instant) -> usize {
        let mut n = 0;
        for i in 0..self.recs.len() {
            if self.recs[i].sent_at <= cutoff && self.mark_lost(i) {
                n += 1;
            }
        }
        n
    }

    /// Index of the first record marked lost (RFC 6675 NextSeg rule 1).
    pub fn first_lost(&self) -> Option<usize> {
        if self.lost_count == 0 {
            return None;
        }
        self.recs.iter().position(|r| r.lost)
    }

    /// Record `i` was retransmitted at `now`.
    pub fn retransmitted(&mut self, i: usize, now: Instant) {
        let r = &mut self.recs[i];
        if r.lost {
            r.lost = false;
            self.lost_count -= 1;
            self.pipe += r.len();
        }
        r.tx_count = r.tx_count.saturating_add(1);
        r.sent_at = now;
    }

    /// Highest SACKed byte + 1, if any (RFC 6675 HighSACK).
    pub fn high_sacked(&self) -> Option<u64> {
        if self.sacked_count == 0 {
            return None;
        }
        self.recs.iter().rev().find(|r| r.sacked).map(|r| r.end)
    }

    /// RFC 6675 NextSeg rule (3): the first record neither SACKed, marked lost nor
    /// retransmitted that lies below HighSACK.
    pub fn first_unsacked_below_high_sack(&self) -> Option<usize> {
        let high = self.high_sacked()?;
        self.recs
            .iter()
            .take_while(|r| r.end <= high)
            .position(|r| !r.sacked && !r.lost && r.tx_count == 1)
    }

    /// Clear every loss mark not yet acted on (Linux `tcp_undo_cwnd_reduction` with
    /// `unmark_loss`, after a reduction proved spurious): the records count in pipe
    /// again, and IsLost judges them anew.
    pub fn unmark_lost(&mut self) {
        for r in self.recs.iter_mut() {
            if r.lost {
                r.lost = false;
                self.pipe += r.end - r.start;
            }
        }
        self.lost_count = 0;
        self.lost_scan_end = 0;
    }

    /// Drop all SACK marks (RFC 6675 §5.1 allows it after a timeout; also used when
    /// the peer reneges).
    pub fn clear_sacks(&mut self) {
        self.top_sacked.clear();
        self.sacked_spans = [(0, 0); SPANS];
        self.lost_scan_end = 0;
        for r in self.recs.iter_mut() {
            if r.sacked {
                r.sacked = false;
                self.sacked_count -= 1;
                self.pipe += r.end - r.start;
            }
        }
    }
}

#[cfg(test)]
impl Scoreboard {
    /// A scoreboard of `n` segments of `size` bytes from sequence 0, each sent once at
    /// time zero, none SACKed or lost (for tests).
    pub(crate) fn sent_once(n: u64, size: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(SegRec {
                start: i * size,
                end: (i + 1) * size,
                sent_at: Instant::ZERO,
                tx_count: 1,
                sacked: false,
                lost: false,
                app_limited: false,
            });
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    /// `ack_to_unmarked` (with its path for the ACK of exactly the oldest record)
    /// leaves the scoreboard and answers as the general loop does, for every kind of
    /// cumulative ACK: of nothing, inside a record, at a record's end, over several.
    #[test]
    fn the_unmarked_ack_behaves_as_the_general_one() {
        let fresh = || {
            let mut b = Scoreboard::new();
            for (i, len) in [1000u64, 500, 1000, 200, 1000, 1000].iter().enumerate() {
                let start = b.recs.back().map_or(0, |r| r.end);
                b.push(SegRec {
                    start,
                    end: start + len,
                    sent_at: Instant::ZERO + Duration::from_millis(10 - i as u64),
                    tx_count: 1,
                    sacked: false,
                    lost: false,
                    app_limited: i % 2 == 1,
                });
            }
            b
        };
        for acks in [
            &[1000u64, 1500, 2500, 2700, 3700, 4700][..],
            &[0, 700, 1000, 2600, 2700, 4700],
            &[1500, 1600, 2500, 4000, 4700],
            &[4700],
        ] {
            let (mut fast, mut general) = (fresh(), fresh());
            for &ack in acks {
                assert_eq!(fast.ack_to_unmarked(ack), general.ack_to_impl::<false>(ack));
                assert_eq!(fast.pipe, general.pipe);
                assert!(fast.recs.iter().eq(general.recs.iter()));
                assert_eq!(fast.sacked_spans, general.sacked_spans);
            }
        }
    }

    /// `ack_to_marked` (one pass, the records dropped together) leaves the scoreboard
    /// and answers as the general loop does, with records SACKed, marked lost and
    /// resent, `top_sacked` full or not, and ACKs of nothing, inside a record, at a
    /// record's end and over the whole window.
    #[test]
    fn the_marked_ack_behaves_as_the_general_one() {
        let mut state = 19u64;
        let mut rnd = |n: u64| crate::rng::splitmix64(&mut state) % n;
        for _ in 0..300 {
            let (mut fast, mut general) = (Scoreboard::new(), Scoreboard::new());
            let (mut una, mut nxt) = (0u64, 0u64);
            for step in 0..120u64 {
                match rnd(10) {
                    0..=2 => {
                        let len = 50 + rnd(4) * 50;
                        let rec = SegRec {
                            start: nxt,
                            end: nxt + len,
                            sent_at: Instant::from_millis(rnd(50)),
                            tx_count: 1,
                            sacked: false,
                            lost: false,
                            app_limited: rnd(2) == 0,
                        };
                        nxt += len;
                        fast.push(rec);
                        general.push(rec);
                    }
                    3 | 4 => {
                        una = (una + rnd(600)).min(nxt);
                        if rnd(4) == 0 {
                            una = nxt;
                        }
                        assert_eq!(fast.ack_to_marked(una), general.ack_to_impl::<false>(una));
                    }
                    5 if !fast.is_empty() => {
                        let i = rnd(fast.len() as u64) as usize;
                        fast.mark_lost(i);
                        general.mark_lost(i);
                        if rnd(2) == 0 {
                            let at = Instant::from_millis(50 + step);
                            fast.retransmitted(i, at);
                            general.retransmitted(i, at);
                        }
                    }
                    _ => {
                        let l = una + rnd(1500);
                        let r = l + 50 + rnd(400);
                        assert_eq!(fast.sack(l, r), general.sack(l, r));
                        assert_eq!(
                            fast.mark_lost_by_sack(3, 200),
                            general.mark_lost_by_sack(3, 200)
                        );
                    }
                }
                assert!(fast.recs.iter().eq(general.recs.iter()));
                assert_eq!(
                    (
                        fast.pipe,
                        fast.sacked_count,
                        fast.lost_count,
                        fast.lost_total
                    ),
                    (
                        general.pipe,
                        general.sacked_count,
                        general.lost_count,
                        general.lost_total
                    )
                );
                assert_eq!(fast.top_sacked, general.top_sacked);
                assert_eq!(fast.sacked_spans, general.sacked_spans);
            }
        }
    }

    /// The fields of every ACK and every new segment stay in the first cache line
    /// (see [`Scoreboard`]).
    #[test]
    fn the_per_packet_fields_lie_in_the_first_line() {
        use std::mem::offset_of;
        let ends = [
            offset_of!(Scoreboard, recs) + size_of::<VecDeque<SegRec>>(),
            offset_of!(Scoreboard, pipe) + 8,
            offset_of!(Scoreboard, lost_count) + 4,
            offset_of!(Scoreboard, sacked_count) + 4,
            offset_of!(Scoreboard, tracks_rate) + 1,
            offset_of!(Scoreboard, tracks_delivery) + 1,
        ];
        assert!(ends.iter().all(|&e| e <= 64), "{ends:?}");
    }

    fn board(n: u64) -> Scoreboard {
        Scoreboard::sent_once(n, 100)
    }

    #[test]
    fn pipe_counts_every_outstanding_byte_before_any_loss() {
        assert_eq!(board(5).pipe(), 500);
    }

    #[test]
    fn sack_removes_bytes_from_pipe() {
        let mut b = board(5);
        assert_eq!(b.sack(200, 400), 200);
        assert_eq!(b.pipe(), 300);
        assert_eq!(b.sack(200, 400), 0, "a repeated SACK adds nothing");
    }

    #[test]
    fn a_segment_is_lost_once_dupthresh_segments_above_it_are_sacked() {
        let mut b = board(5);
        b.sack(100, 300);
        assert_eq!(b.mark_lost_by_sack(3, 100), 0);
        b.sack(300, 400);
        assert_eq!(b.mark_lost_by_sack(3, 100), 1);
        assert_eq!(b.first_lost(), Some(0));
        assert_eq!(b.pipe(), 100); // only the last segment
    }

    #[test]
    fn retransmission_puts_a_lost_segment_back_into_pipe() {
        let mut b = board(3);
        b.mark_lost(0);
        assert_eq!(b.pipe(), 200);
        b.retransmitted(0, Instant::from_millis(5));
        assert_eq!(b.pipe(), 300);
        assert_eq!(b.get(0).unwrap().tx_count, 2);
        assert_eq!(b.lost_count(), 0);
    }

    #[test]
    fn cumulative_ack_pops_records_and_reports_newly_acked_bytes() {
        let mut b = board(4);
        b.sack(200, 300);
        let Acked { last, newly, .. } = b.ack_to(300);
        assert_eq!(last.unwrap().end, 300);
        assert_eq!(newly, 200, "the SACKed segment was already counted");
        assert_eq!(b.len(), 1);
        assert_eq!(b.pipe(), 100);
    }

    #[test]
    fn partial_ack_inside_a_segment_trims_it() {
        let mut b = board(2);
        let newly = b.ack_to(150).newly;
        assert_eq!(newly, 150);
        assert_eq!(b.front().unwrap().start, 150);
        assert_eq!(b.pipe(), 50);
    }

    #[test]
    fn timeout_marks_all_unsacked_lost() {
        let mut b = board(4);
        b.sack(300, 400);
        assert_eq!(b.mark_all_lost(), 3);
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.high_sacked(), Some(400));
    }

    #[test]
    fn incremental_is_lost_marks_what_a_full_scan_marks() {
        // Random SACK and cumulative-ACK sequences (a small LCG keeps it deterministic):
        // after every step the incremental IsLost and the full scan agree.
        let mut x: u64 = 12345;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..200 {
            let mut a = board(60);
            let mut b = board(60);
            let mut ack = 0;
            for _ in 0..40 {
                match rnd(4) {
                    0 => {
                        ack += rnd(3) * 100;
                        a.ack_to(ack);
                        b.ack_to(ack);
                    }
                    _ => {
                        let l = ack + rnd(40) * 100;
                        let r = l + (1 + rnd(4)) * 100;
                        a.sack(l, r);
                        b.sack(l, r);
                    }
                }
                let dt = 3;
                a.mark_lost_by_sack(dt, 100);
                b.mark_lost_by_full_scan(dt, 100);
                let la: Vec<bool> = a.iter().map(|r| r.lost).collect();
                let lb: Vec<bool> = b.iter().map(|r| r.lost).collect();
                assert_eq!(la, lb);
                assert_eq!(a.pipe(), b.pipe());
            }
        }
    }

    /// The remembered SACKed spans only skip records that are SACKed already: a board
    /// that forgets them before every block marks the same records and counts the same
    /// bytes, through blocks that grow, repeat, merge and move, partial ACKs that trim
    /// a record, uneven segment sizes and dropped SACK marks. The scan's starting
    /// index (`sack_idx`) is checked the same way.
    #[test]
    fn sacked_spans_skip_only_records_already_sacked() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let (mut a, mut b) = (Scoreboard::new(), Scoreboard::new());
            let (mut una, mut nxt) = (0u64, 0u64);
            let mut blocks: Vec<(u64, u64)> = Vec::new();
            for _ in 0..80 {
                match rnd(8) {
                    0 | 1 => {
                        let len = 50 + rnd(4) * 50;
                        let rec = SegRec {
                            start: nxt,
                            end: nxt + len,
                            sent_at: Instant::ZERO,
                            tx_count: 1,
                            sacked: false,
                            lost: false,
                            app_limited: false,
                        };
                        nxt += len;
                        a.push(rec);
                        b.push(rec);
                    }
                    2 => {
                        una = (una + rnd(250)).min(nxt);
                        assert_eq!(a.ack_to(una), b.ack_to(una));
                    }
                    3 if rnd(8) == 0 => {
                        a.clear_sacks();
                        b.clear_sacks();
                    }
                    _ => {
                        // A new block, or one seen before: repeated, grown at its
                        // right edge or merged with the next, or a part of it.
                        let (l, r) = match blocks.len() {
                            n if n > 0 && rnd(4) == 0 => {
                                let (l, r) = blocks[rnd(n as u64) as usize];
                                let q = (r - l) / 4;
                                ((l + q).max(una), r - q)
                            }
                            n if n > 0 && rnd(3) > 0 => {
                                let (l, r) = blocks[rnd(n as u64) as usize];
                                (l.max(una), r + rnd(3) * 100)
                            }
                            _ => {
                                let l = una + rnd(1000);
                                (l, l + 50 + rnd(400))
                            }
                        };
                        blocks.push((l, r));
                        // `b` remembers no span and no place to scan from.
                        b.sacked_spans = [(0, 0); SPANS];
                        b.sack_idx = u32::MAX;
                        assert_eq!(a.sack(l, r), b.sack(l, r), "block {l}-{r}");
                    }
                }
                assert!(a.iter().eq(b.iter()));
                assert_eq!(
                    (a.pipe(), a.sacked_count(), a.lost_count()),
                    (b.pipe(), b.sacked_count(), b.lost_count())
                );
            }
        }
    }
}
