//! The receiving side of a TCP connection: a finite receive buffer drained by the
//! application, cumulative and selective acknowledgments, delayed ACKs, timestamps
//! echo and window updates.
//!
//! Rules and where they come from:
//! * acceptability of a segment and immediate ACK of an unacceptable one: RFC 9293
//!   §3.10.7.4;
//! * delayed ACKs, at least every second full-sized segment, and an immediate ACK for
//!   out-of-order data or data that fills a hole: RFC 5681 §4.2, RFC 1122 §4.2.3.2;
//!   or Linux's quick-ACK mode, adaptive `ato` and SACK compression (`tcp::delack`);
//! * SACK blocks, the first one holding the most recent segment: RFC 2018 §4; with
//!   `dsack`, a D-SACK block before them for a segment that brought bytes already
//!   received: RFC 2883 §4 (`tcp::dsack`);
//! * TS.Recent and the echoed timestamp: RFC 7323 §4.3;
//! * the advertised window from the buffer's free space, never moving the right edge
//!   back, and receiver SWS avoidance: RFC 9293 §3.8.6.2.2, RFC 1122 §4.2.3.3;
//! * a window update when the application's reads open the window: RFC 9293
//!   §3.8.6.2.2 and BSD practice (an update once the window can grow by two segments
//!   or half the buffer), or when the policy asks for one (AFC's proactive feedback);
//! * the receiver's own RTT estimate, which policies use (AFC in the receiver
//!   placement, auto-tuning): from RFC 7323 timestamps when negotiated, otherwise the
//!   time to receive one advertised window of data, keeping the minimum (Linux's
//!   `tcp_rcv_rtt_measure` / `tcp_rcv_rtt_measure_ts`).
//!
//! * Mobility: [`TcpReceiver::freeze`] and [`TcpReceiver::unfreeze`] tell the window
//!   policy of a predicted disconnection and of the reconnection (Freeze-TCP, a
//!   policy layer: `flow::freeze`), and send the ACKs it asks for at once;
//!   [`TcpReceiver::signal_interface_change`] sends an ACK carrying the explicit
//!   interface-change notification (the signal of the vertical-handoff paper,
//!   Tsukamoto, Fukuda, Hori and Oie, "New flow control schemes of TCP for multimodal
//!   mobile hosts", IEICE Trans. Commun. E89-B(6), 2006; its form is an assumption).
//!
//! Polling order: after `handle_segment`, `handle_timeout` or `read`, call
//! `poll_transmit` until it returns `None`, then schedule `poll_timeout`.

use super::config::TcpConfig;
use super::delack::{AckDecision, AckPolicy, LinuxAck, RcvInfo};
use super::dsack;
use super::event::ReceiverEvent;
use super::Polled;
use crate::event::Events;
use crate::flow::{Classic, FreezeTcp, Policy, RcvState, RwndPolicy};
use crate::time::{Duration, Instant};
use crate::wire::{ExpOptions, Flags, SackBlocks, Segment, Timestamps};
use std::collections::VecDeque;
use std::sync::Arc;

/// Counters kept by the receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub segments_received: u64,
    /// Payload bytes that arrived, duplicates included.
    pub bytes_received: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    /// Segments dropped because they fell beyond the buffer.
    pub buffer_drops: u64,
    pub acks_sent: u64,
    pub zero_window_acks: u64,
    /// Zero-window advertisements following a non-zero one.
    pub zero_window_episodes: u64,
    /// ACKs sent only to open the window.
    pub window_updates: u64,
    /// ACKs repeating the previous ACK's acknowledgment number and window (duplicate
    /// ACKs, as RFC 5681 §2 and Wireshark define them).
    pub dup_acks: u64,
    /// Bytes read by the application.
    pub bytes_read: u64,
    /// Window updates sent because the policy asked (AFC's proactive feedback).
    pub policy_updates: u64,
    /// Freeze-TCP: freezes (zero windows on a warning), TR-ACKs sent, and
    /// interface-change notifications sent to the sender.
    pub freezes: u64,
    pub tr_acks: u64,
    pub handoff_notices: u64,
    /// Retransmitted segments that arrived carrying only bytes the receiver already
    /// had (below `RCV.NXT` or out of order): the simulator's ground truth of a
    /// spurious retransmission, what a D-SACK reports whole (`tcp::dsack`). Counted
    /// whether or not D-SACK is on.
    pub spurious_retransmits: u64,
    /// ACKs sent with a D-SACK block (RFC 2883).
    pub dsacks_sent: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Listen,
    Established,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Pending {
    None,
    Delayed,
    Now,
}

/// See the module documentation.
#[derive(Debug)]
pub struct TcpReceiver {
    /// Read-only, shared with the sender of the same connection (`TcpSender::new`).
    cfg: Arc<TcpConfig>,
    /// The receive-window policy: classic flow control inline, any other boxed
    /// (`flow::Policy`).
    policy: Policy,
    state: State,
    /// Established, with classic flow control held inline and without Linux's
    /// delayed-ACK engine, no SYN-ACK or handoff notice owed, nothing held out of
    /// order and no D-SACK owed (`refresh_plain`): in-order data takes
    /// `handle_segment`'s steady-state path and ACKs `poll_transmit_into`'s, which
    /// carry no SACK option. Such a receiver never owes extra ACKs or a forced
    /// update (classic flow control neither freezes nor asks for updates). Only
    /// `plain` implies all that: false is always safe (the general paths do the
    /// same), so it is cleared wherever one of them may stop holding and set again
    /// where the general paths can tell it holds.
    plain: bool,
    syn_ack_due: bool,
    ts_ok: bool,
    sack_ok: bool,
    wscale: u8,
    rcv_nxt: u64,
    rcv_read: u64,
    /// Out-of-order ranges `[l, r)`, sorted, disjoint and never adjacent (touching
    /// blocks merge). A deque: filling the first hole removes blocks at the front
    /// without moving the others, so that costs the same with 3 blocks as with 3,000
    /// (a window of thousands of segments).
    ooo: VecDeque<(u64, u64)>,
    ooo_bytes: u64,
    /// The most recently changed out-of-order blocks, whole, most recent first (RFC
    /// 2018 §4 order for the SACK option), the first `mru_len`: an ACK copies them
    /// without a search of `ooo`. Each is a block of `ooo` as it is now: a block
    /// changes only by a merge, which makes it the first entry, or by leaving `ooo`
    /// (`absorb_ooo`), which takes it out of the list.
    mru: [(u64, u64); SackBlocks::MAX],
    mru_len: u8,
    /// Right edge of the last advertised window.
    adv_right: u64,
    /// How far reads must be able to move the right edge before a window update is
    /// sent: min(2 MSS, buffer/2), at least 1 (`read`); from the configuration, which
    /// never changes.
    update_step: u64,
    last_adv_wnd: u64,
    zero_advertised: bool,
    pending: Pending,
    window_update_due: bool,
    full_segs_unacked: u32,
    delack_at: Option<Instant>,
    ts_recent: u32,
    last_ack_sent: u64,
    /// The next ACK is owed to the policy (sent even if the window did not move).
    forced_update: bool,
    /// Receiver RTT estimate (see the module documentation) and the window-based
    /// measurement in progress: (right edge advertised, when).
    rcv_rtt: Option<Duration>,
    rtt_probe: Option<(u64, Instant)>,
    /// ACKs owed regardless of anything new to say (the ZWA of a freeze, TR-ACKs).
    extra_acks: u32,
    /// The next ACK carries the interface-change notification.
    notice_due: bool,
    /// The D-SACK block the next ACK carries first (RFC 2883; Linux
    /// `duplicate_sack[0]`).
    dsack_due: Option<(u64, u64)>,
    /// Linux's delayed-ACK engine (`tcp::delack`), with `AckPolicy::Linux`; boxed, so
    /// that a receiver without it keeps 8 bytes for it instead of its size.
    linux_ack: Option<Box<LinuxAck>>,
    stats: ReceiverStats,
    /// Discrete happenings for the caller (`poll_event`, `tcp::event`).
    events: Events<ReceiverEvent>,
}

impl TcpReceiver {
    /// A receiver with the policy `cfg.flow_control` names. The configuration may be
    /// shared (an `Arc<TcpConfig>`) with the connection's sender: the receiver never
    /// changes it.
    pub fn new(cfg: impl Into<Arc<TcpConfig>>) -> Self {
        let cfg = cfg.into();
        let policy = cfg.flow_control.policy();
        Self::with_policy(cfg, policy)
    }

    /// A receiver with a policy of the caller's (a `Box<dyn RwndPolicy>` or a
    /// [`Policy`]).
    /// With `cfg.freeze`, Freeze-TCP ([`FreezeTcp`]) is layered over it.
    pub fn with_policy(cfg: impl Into<Arc<TcpConfig>>, policy: impl Into<Policy>) -> Self {
        let cfg = cfg.into();
        let policy = policy.into();
        let policy = if cfg.freeze {
            Policy::Boxed(Box::new(FreezeTcp::new(policy.into_boxed())))
        } else {
            policy
        };
        let wscale = cfg
            .wscale
            .unwrap_or_else(|| auto_wscale(policy.wscale_window(cfg.rcv_buf)));
        let handshake = cfg.handshake;
        let linux_ack = cfg.delayed_ack && cfg.ack_policy == AckPolicy::Linux;
        TcpReceiver {
            ts_ok: cfg.timestamps && !handshake,
            sack_ok: cfg.sack && !handshake,
            wscale,
            state: if handshake {
                State::Listen
            } else {
                State::Established
            },
            syn_ack_due: false,
            plain: !handshake && policy.is_classic() && !linux_ack,
            policy,
            rcv_nxt: 0,
            rcv_read: 0,
            ooo: VecDeque::new(),
            ooo_bytes: 0,
            mru: [(0, 0); SackBlocks::MAX],
            mru_len: 0,
            // Without a handshake the sender starts with the policy's first offer
            // (`FlowControl::initial_offer`, see `TcpSender`); that is the offer in
            // force.
            adv_right: if handshake {
                0
            } else {
                cfg.flow_control.initial_offer(cfg.rcv_buf)
            },
            update_step: (2 * cfg.mss as u64).min(cfg.rcv_buf / 2).max(1),
            last_adv_wnd: 0,
            zero_advertised: false,
            pending: Pending::None,
            window_update_due: false,
            full_segs_unacked: 0,
            delack_at: None,
            ts_recent: 0,
            last_ack_sent: 0,
            forced_update: false,
            rcv_rtt: None,
            rtt_probe: None,
            extra_acks: 0,
            notice_due: false,
            dsack_due: None,
            linux_ack: linux_ack
                .then(|| Box::new(LinuxAck::new(cfg.mss, if cfg.timestamps { 12 } else { 0 }))),
            stats: ReceiverStats::default(),
            events: Events::default(),
            cfg,
        }
    }

    fn rcv_state(&self, now: Instant) -> RcvState {
        RcvState {
            now,
            rcv_buf: self.cfg.rcv_buf,
            rcv_nxt: self.rcv_nxt,
            rcv_read: self.rcv_read,
            ooo_bytes: self.ooo_bytes,
            mss: self.cfg.mss,
            rtt: self.rcv_rtt,
            ts_tick: self.ts_ok.then_some(self.cfg.ts_granularity),
        }
    }

    /// The buffer as the policy sees it, for the hooks of a policy other than classic
    /// flow control; `None` for the inline classic one, which hears nothing and needs
    /// only the free space (`flow::Policy`): a state handed to a call through a vtable
    /// is written to memory every time, so it is built once per input, and only when
    /// some policy will read it.
    #[inline(always)]
    fn policy_state(&self, now: Instant) -> Option<RcvState> {
        (!self.policy.is_classic()).then(|| self.rcv_state(now))
    }

    /// The window the policy wants now, in bytes from `rcv_nxt` (`RwndPolicy::window`);
    /// `st` is [`Self::policy_state`] of the same input.
    #[inline(always)]
    fn wanted_window(&mut self, now: Instant, st: Option<&RcvState>) -> u64 {
        match st {
            Some(st) => self.policy.window(st),
            None => Classic.window(&self.rcv_state(now)),
        }
    }

    /// Take a receiver-side RTT sample from a segment of new in-order data.
    #[inline]
    fn measure_rtt(&mut self, now: Instant, seg: &Segment) {
        if self.ts_ok {
            // Linux tcp_rcv_rtt_measure_ts: the echo of our own TSval.
            if let Some(ts) = seg.ts.filter(|ts| ts.tsecr != 0) {
                let ticks = self.ts_now(now).wrapping_sub(ts.tsecr) as u64;
                let r = Duration::from_nanos(ticks * self.cfg.ts_granularity.as_nanos());
                if !r.is_zero() {
                    // RFC 6298's gain of 1/8.
                    self.rcv_rtt = Some(match self.rcv_rtt {
                        None => r,
                        Some(old) => Duration::from_nanos((7 * old.as_nanos() + r.as_nanos()) / 8),
                    });
                }
            }
            return;
        }
        // Linux tcp_rcv_rtt_measure: data beyond the right edge advertised at `t0`
        // cannot have been sent before the sender heard of a later edge, so the time
        // until it arrives is at least one RTT; the minimum is kept.
        match self.rtt_probe {
            Some((edge, _)) if self.rcv_nxt < edge => {}
            Some((_, t0)) => {
                let r = now - t0;
                if !r.is_zero() {
                    self.rcv_rtt = Some(self.rcv_rtt.map_or(r, |m| m.min(r)));
                }
                self.rtt_probe = Some((self.adv_right.max(self.rcv_nxt + 1), now));
            }
            None => self.rtt_probe = Some((self.adv_right.max(self.rcv_nxt + 1), now)),
        }
    }

    fn ts_now(&self, now: Instant) -> u32 {
        (now.as_nanos() / self.cfg.ts_granularity.as_nanos().max(1)) as u32
    }

    // ----- input --------------------------------------------------------------------

    /// A segment from the sender arrived.
    #[inline]
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) {
        if self.steady(seg) {
            self.take_steady(now, seg);
            return;
        }
        self.handle_any_segment(now, seg);
    }

    /// [`Self::handle_segment`], then [`Self::read`] of all that is readable (a
    /// greedy application, which reads after every segment); returns the bytes read.
    /// One call, so that the steady state reads without the tests `read` makes: a
    /// `plain` receiver has no hooks, and the segment's bytes are readable.
    #[inline]
    pub fn handle_segment_and_read(&mut self, now: Instant, seg: &Segment) -> u64 {
        if self.steady(seg) {
            self.take_steady(now, seg);
            let n = self.readable();
            debug_assert!(n >= seg.len as u64 && self.no_hooks());
            self.take_read(now, n, true);
            return n;
        }
        self.handle_any_segment(now, seg);
        let n = self.readable();
        self.read(now, n)
    }

    /// The steady state of a `plain` receiver: the next data in order (nothing is
    /// held out of order), within the buffer.
    #[inline(always)]
    fn steady(&self, seg: &Segment) -> bool {
        self.plain
            && seg.seq == self.rcv_nxt
            && seg.len != 0
            && !seg.window_probe
            && !seg.flags.contains(Flags::SYN)
            && seg.seq + seg.len as u64 <= self.rcv_read + self.cfg.rcv_buf
    }

    /// What the general path does with a [`Self::steady`] segment, without the tests
    /// it would pass through.
    #[inline(always)]
    fn take_steady(&mut self, now: Instant, seg: &Segment) {
        self.note_data(seg);
        self.rcv_nxt = seg.seq + seg.len as u64;
        self.measure_rtt(now, seg);
        self.count_for_delayed_ack(now, seg.len);
    }

    /// The segments that follow a loss: data beyond the highest block held out of
    /// order (so beyond `rcv_nxt`, and bringing nothing held), within the buffer, for
    /// an established receiver that nothing hooks into (`no_hooks`); never `plain`,
    /// since blocks are held. The general path would find each of its tests false
    /// but the out-of-order one, and leave `plain` false.
    #[inline(always)]
    fn beyond_holes(&self, seg: &Segment) -> bool {
        self.ooo.back().is_some_and(|b| seg.seq >= b.1)
            && seg.len != 0
            && !seg.window_probe
            && !seg.flags.contains(Flags::SYN)
            && self.state == State::Established
            && self.no_hooks()
            && seg.seq + seg.len as u64 <= self.rcv_read + self.cfg.rcv_buf
    }

    /// What the general path does with a [`Self::beyond_holes`] segment: its counts,
    /// the block, and an ACK at once (RFC 5681 §4.2); `plain` stays false.
    #[inline(always)]
    fn take_beyond_holes(&mut self, seg: &Segment) {
        debug_assert!(!self.plain && self.holds_nothing_from(seg.seq));
        self.note_data(seg);
        self.stats.out_of_order_segments += 1;
        self.insert_ooo(seg.seq, seg.seq + seg.len as u64);
        self.pending = Pending::Now;
    }

    /// [`Self::handle_segment`] for any segment; then `plain` as the segment left
    /// it (a SYN-ACK or D-SACK owed, a block held out of order, or all gone). The
    /// segments that follow a loss take their own path here, out of the steady
    /// state's way (tested inline, the extra test cost the in-order path).
    #[inline(never)]
    fn handle_any_segment(&mut self, now: Instant, seg: &Segment) {
        if self.beyond_holes(seg) {
            self.take_beyond_holes(seg);
            return;
        }
        self.handle_other_segment(now, seg);
    }

    /// [`Self::handle_any_segment`] for a segment not beyond the holes: out of line,
    /// so that the segments that are save no registers for the general path.
    #[inline(never)]
    fn handle_other_segment(&mut self, now: Instant, seg: &Segment) {
        self.handle_general(now, seg);
        self.refresh_plain();
    }

    /// What [`Self::handle_any_segment`] does with the segment.
    #[inline(always)]
    fn handle_general(&mut self, now: Instant, seg: &Segment) {
        if seg.flags.contains(Flags::SYN) {
            // RFC 9293 §3.5: answer a SYN (or a retransmitted one) with a SYN-ACK and
            // record the options the peer offered.
            self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
            self.sack_ok = self.cfg.sack && seg.sack_permitted;
            if let Some(ts) = seg.ts {
                self.ts_recent = ts.tsval;
            }
            self.state = State::Established;
            self.syn_ack_due = true;
            return;
        }
        if self.state == State::Listen {
            return; // no connection: a real stack would send RST
        }
        if let Some(st) = self.policy_state(now) {
            self.policy.on_segment(now, seg, &st);
        }

        if seg.window_probe {
            // A zero-window probe (RFC 9293 §3.8.6.1) elicits an ACK at once.
            self.pending = Pending::Now;
            self.enter_quickack_mode();
            return;
        }
        if seg.len == 0 {
            return;
        }
        self.note_data(seg);

        let start = seg.seq;
        let end = seg.seq + seg.len as u64;
        let buffer_end = self.rcv_read + self.cfg.rcv_buf;
        self.note_duplicate(seg, start, end);
        if end <= self.rcv_nxt {
            // Entirely old: a duplicate. ACK at once (RFC 9293 §3.10.7.4).
            self.stats.duplicate_segments += 1;
            self.pending = Pending::Now;
            self.enter_quickack_mode();
            return;
        }
        if end > buffer_end {
            // Beyond the buffer: dropped (this is how a sender that overruns the
            // advertised window loses data, e.g. under AFC).
            self.stats.buffer_drops += 1;
            self.pending = Pending::Now;
            self.enter_quickack_mode();
            return;
        }
        if start <= self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt = end;
            if had_holes {
                // The common in-order segment skips this: nothing is held out of order.
                self.absorb_ooo();
            }
            self.measure_rtt(now, seg);
            if self.linux_ack.is_some() {
                self.linux_decide(now, Some((seg.len, had_holes)));
            } else if had_holes {
                // RFC 5681 §4.2: ACK at once when a segment fills (part of) a gap.
                self.pending = Pending::Now;
            } else {
                self.count_for_delayed_ack(now, seg.len);
            }
        } else {
            self.stats.out_of_order_segments += 1;
            self.insert_ooo(start, end);
            if self.linux_ack.is_some() {
                self.linux_decide(now, None);
            } else {
                // RFC 5681 §4.2: an out-of-order segment is acknowledged at once.
                self.pending = Pending::Now;
            }
        }
    }

    /// The counts of a segment carrying data, and TS.Recent.
    #[inline(always)]
    fn note_data(&mut self, seg: &Segment) {
        self.stats.segments_received += 1;

        // RFC 7323 §4.3: TS.Recent is the TSval of the segment that starts at or
        // before the last ACK sent (the earliest unacknowledged one). A segment that
        // lies wholly below it is outside the window and rejected before TS.Recent is
        // updated (RFC 7323 §5.3, R2 before R3; Linux `tcp_validate_incoming`:
        // `tcp_sequence` fails against `rcv_wup`, `tcp_send_dupack` answers): the ACK
        // of an old duplicate echoes the TSval of what came before it.
        if self.ts_ok {
            if let Some(ts) = seg.ts {
                let end = seg.seq + seg.len as u64;
                if seg.seq <= self.last_ack_sent && end >= self.last_ack_sent {
                    self.ts_recent = ts.tsval;
                }
            }
        }
        // Apart from the other count: side by side, the two adds were made one
        // vector add, which costs three times the instructions of two adds to memory.
        self.stats.bytes_received += seg.len as u64;
    }

    /// Bytes of the segment the receiver already had: the ground-truth count of
    /// spurious retransmissions, and the D-SACK block of the next ACK (RFC 2883 §4,
    /// Linux `tcp_dsack_set`, sent only when SACK was agreed and `tcp_dsack` is on).
    fn note_duplicate(&mut self, seg: &Segment, start: u64, end: u64) {
        if self.holds_nothing_from(start) {
            return;
        }
        let (dup, all) = dsack::duplicate_range(self.rcv_nxt, &self.ooo, start, end);
        if seg.retransmission && all {
            self.stats.spurious_retransmits += 1;
        }
        if self.cfg.dsack && self.sack_ok && dup.is_some() {
            self.dsack_due = dup;
        }
    }

    /// Nothing is held at or beyond `start` (it is at least `rcv_nxt`, and no block
    /// ends beyond it): the common in-order segment, and the data that follows a
    /// loss (beyond the highest block), which `dsack::duplicate_range` would find
    /// brings nothing held.
    #[inline(always)]
    fn holds_nothing_from(&self, start: u64) -> bool {
        start >= self.rcv_nxt && self.ooo.back().is_none_or(|b| start >= b.1)
    }

    #[inline]
    fn count_for_delayed_ack(&mut self, now: Instant, len: u32) {
        if !self.cfg.delayed_ack {
            self.pending = Pending::Now;
            return;
        }
        if len >= self.cfg.mss {
            self.full_segs_unacked += 1;
        }
        if self.full_segs_unacked >= self.cfg.ack_every {
            self.pending = Pending::Now;
        } else if self.pending == Pending::None {
            self.pending = Pending::Delayed;
            self.delack_at = Some(now + self.cfg.delack_timeout);
        }
    }

    /// What Linux's delayed-ACK engine knows of this receiver.
    fn rcv_info(&self) -> RcvInfo {
        RcvInfo {
            rcv_wnd: self.last_adv_wnd,
            rtt: self.rcv_rtt,
            min_rto: self.cfg.min_rto,
        }
    }

    /// `tcp_enter_quickack_mode` on a duplicate or out-of-window segment (Linux).
    fn enter_quickack_mode(&mut self) {
        let wnd = self.last_adv_wnd;
        if let Some(la) = &mut self.linux_ack {
            la.enter_quickack_mode(wnd);
        }
    }

    /// `AckPolicy::Linux`: ask `tcp::delack` about new in-order data (`Some((len,
    /// filled a hole))`) or out-of-order data (`None`).
    fn linux_decide(&mut self, now: Instant, in_order: Option<(u32, bool)>) {
        let info = self.rcv_info();
        let grew = self.policy.wants_quick_ack();
        let st = self.policy_state(now);
        let wnd_ok = self.wanted_window(now, st.as_ref()) >= self.last_adv_wnd;
        let (unacked, rcv_nxt) = (self.rcv_nxt - self.last_ack_sent, self.rcv_nxt);
        let Some(la) = &mut self.linux_ack else {
            return;
        };
        let d = match in_order {
            Some((len, filled)) => la.on_in_order(now, len, unacked, filled, grew, wnd_ok, &info),
            None => la.on_out_of_order(now, rcv_nxt, grew, &info),
        };
        match d {
            AckDecision::Now => self.pending = Pending::Now,
            AckDecision::At(t) if self.pending != Pending::Now => {
                self.pending = Pending::Delayed;
                self.delack_at = Some(t);
            }
            AckDecision::At(_) | AckDecision::Keep => {}
        }
    }

    /// Data `[l, r)` arrived beyond `rcv_nxt`: it joins the blocks it overlaps or
    /// touches, and the block it is now part of becomes the most recent.
    #[inline(always)]
    fn insert_ooo(&mut self, l: u64, r: u64) {
        match self.ooo.back_mut() {
            // The two common cases after a loss, the segments that follow the hole:
            // data beyond the highest block, or touching it (only the highest block
            // can be merged: the one below ends before its left edge, not adjacent).
            Some(b) if l > b.1 => {
                self.ooo.push_back((l, r));
                self.ooo_bytes += r - l;
                // A new block: every listed block stays, one place down.
                let len = self.mru_len as usize;
                self.mru_to_front(len.min(SackBlocks::MAX - 1), (l, r));
            }
            Some(b) if l >= b.0 => {
                let right = r.max(b.1);
                self.ooo_bytes += right - b.1;
                b.1 = right;
                let left = b.0;
                if self.mru_len > 0 && self.mru[0].0 == left {
                    // Already the most recent: it only grew.
                    self.mru[0].1 = right;
                } else {
                    // Only the highest block's own entry, if listed, lies inside it.
                    let len = self.mru_len as usize;
                    let k = self.mru[..len].iter().position(|e| e.0 == left);
                    self.mru_to_front(k.unwrap_or(len), (left, right));
                }
            }
            _ => self.insert_ooo_general(l, r),
        }
    }

    /// [`Self::insert_ooo`] anywhere: merges every block `[l, r)` overlaps or touches.
    #[inline(never)]
    fn insert_ooo_general(&mut self, mut l: u64, mut r: u64) {
        let i = self.ooo.partition_point(|b| b.1 < l);
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= r {
            l = l.min(self.ooo[j].0);
            r = r.max(self.ooo[j].1);
            self.ooo_bytes -= self.ooo[j].1 - self.ooo[j].0;
            j += 1;
        }
        self.ooo.drain(i..j);
        self.ooo.insert(i, (l, r));
        self.ooo_bytes += r - l;
        self.mru_push(l, r);
    }

    /// [`Self::mru_push`] of a block whose entry is the `k`-th (or, `k` =
    /// `mru_len`, unlisted; at most the last place, which a full list drops): the
    /// entries before it move one place down, in place.
    #[inline(always)]
    fn mru_to_front(&mut self, k: usize, block: (u64, u64)) {
        let k = k.min(SackBlocks::MAX - 1);
        for i in (1..=k).rev() {
            self.mru[i] = self.mru[i - 1];
        }
        self.mru[0] = block;
        self.mru_len = self.mru_len.max(k as u8 + 1);
    }

    /// The block `[l, r)` of `ooo` just changed: it goes first in `mru`, and the
    /// blocks merged into it (their left edges fall inside it) leave the list.
    #[inline]
    fn mru_push(&mut self, l: u64, r: u64) {
        let mut next = [(0, 0); SackBlocks::MAX];
        next[0] = (l, r);
        let mut n = 1;
        for &(el, er) in &self.mru[..self.mru_len as usize] {
            if (el < l || el >= r) && n < next.len() {
                next[n] = (el, er);
                n += 1;
            }
        }
        self.mru = next;
        self.mru_len = n as u8;
    }

    /// New in-order data moved `rcv_nxt` into or past the first out-of-order blocks:
    /// they join the in-order data (`rcv_nxt` moves to their right edges) and leave
    /// the store, and the list of recent blocks. Only called with blocks held.
    fn absorb_ooo(&mut self) {
        let mut k = 0;
        while let Some(&(l, r)) = self.ooo.get(k) {
            if l > self.rcv_nxt {
                break;
            }
            self.ooo_bytes -= r - l;
            self.rcv_nxt = self.rcv_nxt.max(r);
            k += 1;
        }
        if k > 0 {
            self.ooo.drain(..k);
        }
        // What is left starts beyond rcv_nxt (the loop stopped at it): none is cut.
        debug_assert!(self.ooo.front().is_none_or(|b| b.0 > self.rcv_nxt));
        // The blocks absorbed are the ones that start below rcv_nxt now.
        let mut n = 0;
        for i in 0..self.mru_len as usize {
            let e = self.mru[i];
            if e.0 > self.rcv_nxt {
                self.mru[n] = e;
                n += 1;
            }
        }
        self.mru_len = n as u8;
    }

    /// Timers: the delayed-ACK timer.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(t) = self.delack_at {
            if now >= t && self.pending == Pending::Delayed {
                self.pending = Pending::Now;
                let info = self.rcv_info();
                if let Some(la) = &mut self.linux_ack {
                    la.on_timer(&info);
                }
            }
        }
        if self.policy.poll_timeout().is_some_and(|t| now >= t) {
            let st = self.rcv_state(now);
            self.policy.on_timeout(now, &st);
            if self.policy.wants_update(now, &st) {
                self.window_update_due = true;
                self.forced_update = true;
            }
        }
    }

    // ----- mobility (`tcp::handoff`) -------------------------------------------------

    /// A disconnection is predicted: the policy hears of it (Freeze-TCP, `flow::freeze`,
    /// freezes the window at zero); if it froze, one ACK goes out at once to say so.
    pub fn freeze(&mut self, now: Instant) {
        if self.state != State::Established {
            return;
        }
        if self.policy.on_disconnection_warning(now) {
            self.stats.freezes += 1;
            self.events.push(ReceiverEvent::Frozen);
            self.extra_acks = self.extra_acks.max(1);
        }
    }

    /// Reconnected: the copies of the ACK the policy asks for (Freeze-TCP's TR-ACKs)
    /// go out at once.
    pub fn unfreeze(&mut self, now: Instant) {
        let n = self.policy.on_reconnection(now);
        if n > 0 {
            self.extra_acks = n;
            self.stats.tr_acks += n as u64;
            self.events.push(ReceiverEvent::Unfrozen { tr_acks: n });
        }
    }

    /// The mobile receiver changed interface: tell the sender on an ACK sent at once
    /// (`HandoffSignal::AckOption`).
    pub fn signal_interface_change(&mut self, _now: Instant) {
        if self.state == State::Established {
            self.notice_due = true;
            self.refresh_plain();
        }
    }

    /// Freeze-TCP holds the window at zero.
    pub fn is_frozen(&self) -> bool {
        self.policy.holds_zero_window()
    }

    // ----- application --------------------------------------------------------------

    /// In-order bytes the application can read.
    pub fn readable(&self) -> u64 {
        self.rcv_nxt - self.rcv_read
    }

    /// Classic flow control, held inline, and no Linux delayed-ACK engine: nothing
    /// hooks into reads or in-order data (`read`, and `plain` once established).
    #[inline(always)]
    fn no_hooks(&self) -> bool {
        self.policy.is_classic() && self.linux_ack.is_none()
    }

    /// Sets `plain` from what it stands for, after any of it may have changed (a
    /// segment on the general path, a SYN-ACK or handoff notice owed or sent).
    fn refresh_plain(&mut self) {
        self.plain = self.state == State::Established
            && self.no_hooks()
            && !self.syn_ack_due
            && !self.notice_due
            && self.ooo.is_empty()
            && self.dsack_due.is_none();
    }

    /// The application reads up to `max` bytes; returns how many it got.
    ///
    /// Inlined, with the hooks of the policies other than classic flow control and of
    /// Linux's delayed-ACK engine out of line: the common reader (a greedy
    /// application after every segment) pays only for the window-update test.
    #[inline]
    pub fn read(&mut self, now: Instant, max: u64) -> u64 {
        let n = max.min(self.readable());
        if n == 0 {
            return 0;
        }
        self.take_read(now, n, self.no_hooks());
        n
    }

    /// The application takes `n` bytes (at least one, at most what is readable);
    /// `no_hooks` is [`Self::no_hooks`].
    #[inline(always)]
    fn take_read(&mut self, now: Instant, n: u64, no_hooks: bool) {
        self.rcv_read += n;
        self.stats.bytes_read += n;
        if no_hooks {
            // Classic flow control hears nothing of reads (`flow::Policy`). With an ACK
            // owed now (the common greedy read, right after a segment that is ACKed
            // at once) there is no update to decide: that ACK, the next one built,
            // advertises the window as it is then and clears the update owed, which
            // nothing reads before (`poll_transmit_into`'s window-only case needs an
            // ACK not owed now).
            if self.pending != Pending::Now {
                self.window_update_after_read(now, None);
            }
        } else {
            self.read_hooks(now, n);
        }
    }

    /// [`Self::read`] with a policy that hears of reads or Linux's delayed ACKs.
    #[inline(never)]
    fn read_hooks(&mut self, now: Instant, n: u64) {
        let st = self.policy_state(now);
        if let Some(st) = &st {
            self.policy.on_read(now, n, st);
        }
        if let Some(la) = &self.linux_ack {
            // Linux `tcp_cleanup_rbuf`: a read sends the ACK owed for more than one
            // rcv_mss that `__tcp_ack_snd_check` held back because the window shrank.
            let mss = la.current_rcv_mss().unwrap_or(self.cfg.mss) as u64;
            if self.pending == Pending::Delayed && self.rcv_nxt - self.last_ack_sent > mss {
                self.pending = Pending::Now;
            }
        }
        // The same state as `st` (on_read changes only the policy).
        self.window_update_after_read(now, st.as_ref());
    }

    /// Window update (RFC 9293 §3.8.6.2.2, RFC 1122 §4.2.3.3): once the right edge
    /// can move by min(2 MSS, buffer/2) (`update_step`), tell the sender; or when the
    /// policy asks. `st` is [`Self::policy_state`] after the read.
    #[inline(always)]
    fn window_update_after_read(&mut self, now: Instant, st: Option<&RcvState>) {
        let potential = self.rcv_nxt + self.wanted_window(now, st);
        if potential >= self.adv_right + self.update_step && self.cfg.window_updates {
            self.window_update_due = true;
        } else if let Some(st) = st {
            if self.policy.wants_update(now, st) {
                self.window_update_due = true;
                self.forced_update = true;
            }
        }
    }

    /// The window to put in the next ACK, in bytes, and the right edge it implies.
    /// (Inlined: left out of line once the configuration was shared, it cost about 25
    /// instructions per delivered packet.)
    #[inline]
    fn window_to_advertise(&mut self, now: Instant) -> u64 {
        if self.policy.holds_zero_window() {
            // Freeze-TCP: a zero window while a disconnection is expected or under
            // way, even though it shrinks the window (`flow::freeze`).
            return 0;
        }
        let st = self.policy_state(now);
        let want = self.wanted_window(now, st.as_ref());
        let shrink = self.policy.allow_shrink();
        self.window_for(want, shrink)
    }

    /// The window to advertise for a policy that wants `want` bytes from `rcv_nxt`
    /// and may (`shrink`) or may not move the right edge back, scaled as the 16-bit
    /// field carries it.
    #[inline(always)]
    fn window_for(&self, want: u64, shrink: bool) -> u64 {
        let mut right = self.rcv_nxt + want;
        if self.cfg.receiver_sws && right > self.adv_right {
            // RFC 1122 §4.2.3.3: do not advance the right edge by less than
            // min(buffer/2, MSS).
            let step = (self.cfg.rcv_buf / 2).min(self.cfg.mss as u64);
            if right - self.adv_right < step && self.adv_right >= self.rcv_nxt {
                right = self.adv_right;
            }
        }
        if !shrink {
            right = right.max(self.adv_right);
        }
        let wnd = right.saturating_sub(self.rcv_nxt);
        // The 16-bit field carries wnd >> wscale (RFC 7323 §2.3).
        let field = (wnd >> self.wscale).min(u16::MAX as u64);
        field << self.wscale
    }

    // ----- output -------------------------------------------------------------------

    /// The next segment to send (an ACK, a window update or a SYN-ACK).
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        let mut seg = Segment::default();
        self.poll_transmit_into(now, &mut seg).sent().then_some(seg)
    }

    /// [`Self::poll_transmit`] that writes the segment into `out` instead of returning
    /// it; `out` is untouched when there is nothing to send ([`Polled::Nothing`]). A
    /// caller that keeps the segment (the simulator's packet slab) then does not move
    /// a ~128-byte `Option` out. [`Polled::Last`]: nothing else is due.
    #[inline]
    pub fn poll_transmit_into(&mut self, now: Instant, out: &mut Segment) -> Polled {
        if self.plain {
            return self.poll_plain(now, out);
        }
        if self.syn_ack_due {
            self.syn_ack_due = false;
            self.refresh_plain();
            let wnd = self.window_to_advertise(now);
            // The SYN-ACK's window is the first offer (RFC 9293 §3.8.6.2.2).
            self.adv_right = self.rcv_nxt + wnd;
            self.last_adv_wnd = wnd;
            *out = Segment {
                flags: Flags::SYN | Flags::ACK,
                wnd,
                mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
                sack_permitted: self.sack_ok,
                wscale: Some(self.wscale),
                ts: self.ts_ok.then(|| Timestamps {
                    tsval: self.ts_now(now),
                    tsecr: self.ts_recent,
                }),
                ..Segment::default()
            };
            return self.sent();
        }
        if self.extra_acks > 0 || self.notice_due {
            let wnd = self.window_to_advertise(now);
            self.build_ack(now, wnd, out);
            if self.extra_acks > 0 {
                self.extra_acks -= 1;
            }
            if std::mem::take(&mut self.notice_due) {
                out.exp.handoff_notice = true;
                self.stats.handoff_notices += 1;
                self.events.push(ReceiverEvent::HandoffNotice);
                self.refresh_plain();
            }
            return self.sent();
        }
        let window_only = self.pending != Pending::Now && self.window_update_due;
        if self.pending != Pending::Now && !self.window_update_due {
            return Polled::Nothing;
        }
        let wnd = self.window_to_advertise(now);
        if window_only && !self.forced_update && self.rcv_nxt + wnd <= self.adv_right {
            // Nothing new to say.
            self.window_update_due = false;
            return Polled::Nothing;
        }
        // An update acknowledging nothing new is a pure window update.
        let pure_update = window_only && self.rcv_nxt == self.last_ack_sent;
        self.build_ack(now, wnd, out);
        if pure_update {
            self.stats.window_updates += 1;
        }
        // What `sent` would find: no SYN-ACK, extra ACK or notice was due (tested
        // above) and `build_ack` cleared the ACK and the window update owed.
        debug_assert_eq!(self.sent(), Polled::Last);
        Polled::Last
    }

    /// [`Self::poll_transmit_into`] for a `plain` receiver: no SYN-ACK, extra ACK,
    /// notice or forced update can be owed, and classic flow control inline holds no
    /// zero window, never lets the edge move back and adds no option; what is left
    /// of the general path is the ACK or window update owed.
    #[inline(always)]
    fn poll_plain(&mut self, now: Instant, out: &mut Segment) -> Polled {
        debug_assert!(!self.syn_ack_due && !self.notice_due && self.extra_acks == 0);
        debug_assert!(!self.forced_update && self.no_hooks());
        debug_assert!(self.ooo.is_empty() && self.dsack_due.is_none());
        let window_only = self.pending != Pending::Now;
        if window_only && !self.window_update_due {
            return Polled::Nothing;
        }
        let free = self.cfg.rcv_buf.saturating_sub(self.readable());
        let wnd = self.window_for(free, false);
        if window_only && self.rcv_nxt + wnd <= self.adv_right {
            // Nothing new to say.
            self.window_update_due = false;
            return Polled::Nothing;
        }
        let pure_update = window_only && self.rcv_nxt == self.last_ack_sent;
        self.write_ack(now, wnd, out, true);
        if pure_update {
            self.stats.window_updates += 1;
        }
        debug_assert_eq!(self.sent(), Polled::Last);
        Polled::Last
    }

    /// A segment was written: [`Polled::Last`] when the next poll would find nothing
    /// due (no SYN-ACK, extra ACK or notice, no ACK or window update owed), which
    /// it would answer without changing anything.
    #[inline(always)]
    fn sent(&self) -> Polled {
        let due = self.syn_ack_due
            || self.extra_acks > 0
            || self.notice_due
            || self.pending == Pending::Now
            || self.window_update_due;
        if due {
            Polled::Sent
        } else {
            Polled::Last
        }
    }

    /// The ACK advertising `wnd`, written into `out` field by field: every field is
    /// set but the SACK blocks past the live ones, which `out` (a reused packet slot)
    /// may still hold from an earlier segment and nothing reads (`SackBlocks`). A
    /// whole `Segment` built and copied in would write its 64 bytes of blocks too.
    #[inline(always)]
    fn build_ack(&mut self, now: Instant, wnd: u64, out: &mut Segment) {
        self.write_ack(now, wnd, out, false);
    }

    /// [`Self::build_ack`]; `plain`: the receiver is `plain`, which leaves out the
    /// SACK option, the policy's option, the forced update, a shrinking edge and
    /// Linux's engine.
    #[inline(always)]
    fn write_ack(&mut self, now: Instant, wnd: u64, out: &mut Segment, plain: bool) {
        out.seq = 0;
        out.ack = self.rcv_nxt;
        out.wnd = wnd;
        out.len = 0;
        out.ts = self.ts_ok.then(|| Timestamps {
            tsval: self.ts_now(now),
            tsecr: self.ts_recent,
        });
        out.flags = Flags::ACK;
        out.retransmission = false;
        out.window_probe = false;
        out.sack_permitted = false;
        out.mss = None;
        out.wscale = None;
        out.exp = ExpOptions {
            afc_rate: if plain {
                None
            } else {
                self.policy.option_value(now)
            },
            ..ExpOptions::default()
        };
        out.sack.clear();
        // The SACK option, when there is a block to report: out of line, so that the
        // common ACK (nothing held out of order, no D-SACK) does not pay for its search.
        if !plain && (self.dsack_due.is_some() || (self.sack_ok && !self.ooo.is_empty())) {
            self.write_sack_blocks(&mut out.sack);
        }
        if self.rcv_nxt == self.last_ack_sent {
            // Out of line: the steady state acknowledges new data, and the one test
            // is all it pays.
            self.note_same_ack(wnd);
        }
        self.stats.acks_sent += 1;
        if wnd == 0 || (!plain && self.forced_update) {
            self.note_rare_ack(wnd);
        }
        self.zero_advertised = wnd == 0;
        self.last_adv_wnd = wnd;
        // Window scaling truncates the window (RFC 7323 §2.3), so the edge offered can
        // fall short of `adv_right` by up to 2^wscale - 1 bytes (RFC 7323 §2.4).
        // Remember the furthest edge offered, so that truncations do not add up and
        // walk the right edge back.
        let edge = self.rcv_nxt + wnd;
        self.adv_right = if !plain && self.policy.allow_shrink() {
            edge
        } else {
            self.adv_right.max(edge)
        };
        self.last_ack_sent = self.rcv_nxt;
        if !plain {
            if let Some(la) = &mut self.linux_ack {
                la.on_ack_sent(self.pending != Pending::None);
            }
        }
        self.pending = Pending::None;
        self.window_update_due = false;
        self.full_segs_unacked = 0;
        self.delack_at = None;
    }

    /// An ACK acknowledging what the last one did is a duplicate if it also
    /// advertises the same window (`ReceiverStats::dup_acks`).
    #[cold]
    #[inline(never)]
    fn note_same_ack(&mut self, wnd: u64) {
        if wnd == self.last_adv_wnd && self.stats.acks_sent > 0 {
            self.stats.dup_acks += 1;
        }
    }

    /// The counts and events of an ACK that advertises a zero window or that the
    /// policy asked for (`forced_update`, cleared here): out of line, so that the
    /// common ACK, inlined, carries neither event push.
    #[inline(never)]
    fn note_rare_ack(&mut self, wnd: u64) {
        if wnd == 0 {
            self.stats.zero_window_acks += 1;
            if !self.zero_advertised {
                self.stats.zero_window_episodes += 1;
                self.events.push(ReceiverEvent::ZeroWindowAdvertised);
            }
        }
        if self.forced_update {
            self.stats.policy_updates += 1;
            self.events.push(ReceiverEvent::PolicyUpdate);
            self.forced_update = false;
        }
    }

    /// The SACK blocks of the ACK being built, into `sack` (empty).
    #[inline(never)]
    fn write_sack_blocks(&mut self, sack: &mut SackBlocks) {
        // RFC 2883 §4: a D-SACK block goes first, on this ACK only (Linux
        // `tcp_options_write` clears `rx_opt.dsack` once written).
        let dsack = self.dsack_due.take();
        if let Some((l, r)) = dsack {
            sack.push(l, r);
            self.stats.dsacks_sent += 1;
        }
        if self.sack_ok && !self.ooo.is_empty() {
            // RFC 2018 §4: the first block holds the most recently received segment,
            // then the other blocks, most recently changed first; three fit beside
            // timestamps. Slots left over carry the highest other blocks.
            let max_blocks = if self.ts_ok { 3 } else { 4 };
            let first = sack.len();
            for &(l, r) in &self.mru[..self.mru_len as usize] {
                if sack.len() == max_blocks {
                    break;
                }
                debug_assert!(self.ooo.binary_search(&(l, r)).is_ok());
                sack.push(l, r);
            }
            // The recent blocks are distinct blocks of `ooo`: when they are all of
            // them (one hole, the usual loss), there is nothing left to add.
            if self.ooo.len() != self.mru_len as usize && sack.len() < max_blocks {
                self.fill_sack_blocks(sack, first, max_blocks);
            }
        }
    }

    /// Slots of the SACK option left after the recent blocks, from `first` on, carry
    /// the highest other blocks (up to `max_blocks` in all). Out of line: the usual
    /// ACK needs none, and then `write_sack_blocks` saves no registers for the loop.
    #[inline(never)]
    fn fill_sack_blocks(&self, sack: &mut SackBlocks, first: usize, max_blocks: usize) {
        for &(l, r) in self.ooo.iter().rev() {
            if sack.len() == max_blocks {
                break;
            }
            if !sack.iter().skip(first).any(|b| b.0 == l) {
                sack.push(l, r);
            }
        }
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let d = if self.pending == Pending::Delayed {
            self.delack_at
        } else {
            None
        };
        Instant::earliest(d, self.policy.poll_timeout())
    }

    // ----- getters ------------------------------------------------------------------

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
    /// The oldest event not yet polled (`tcp::event`): drain after every input and
    /// `poll_transmit`.
    #[inline(always)]
    pub fn poll_event(&mut self) -> Option<ReceiverEvent> {
        self.events.poll()
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn bytes_read(&self) -> u64 {
        self.rcv_read
    }
    /// Bytes held in the buffer: unread in-order data plus out-of-order data.
    pub fn buffer_occupancy(&self) -> u64 {
        self.readable() + self.ooo_bytes
    }
    pub fn last_advertised_window(&self) -> u64 {
        self.last_adv_wnd
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn policy(&self) -> &dyn RwndPolicy {
        self.policy.as_dyn()
    }
    pub fn wscale(&self) -> u8 {
        self.wscale
    }
    /// The receiver's RTT estimate (see the module documentation).
    pub fn rcv_rtt(&self) -> Option<Duration> {
        self.rcv_rtt
    }
    /// The policy's application-rate estimate (AFC's AR), bytes per second.
    pub fn rate_estimate(&self) -> Option<f64> {
        self.policy.rate_estimate()
    }
    /// The receive buffer the policy grants now (auto-tuning), bytes.
    pub fn buffer_limit(&self) -> u64 {
        self.policy.buffer_limit(self.cfg.rcv_buf)
    }
    pub fn delack_timeout(&self) -> Duration {
        self.cfg.delack_timeout
    }
    /// Linux's delayed-ACK engine, with `AckPolicy::Linux`.
    pub fn linux_ack(&self) -> Option<&LinuxAck> {
        self.linux_ack.as_deref()
    }
}

/// Smallest window-scale shift whose 16-bit field covers `buf` (RFC 7323 §2.3, max 14).
pub fn auto_wscale(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buf >> s) > u16::MAX as u64 {
        s += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::FlowControl;

    /// A deterministic stream for the random inputs below (`crate::rng`).
    struct Mix(u64);
    impl Mix {
        fn below(&mut self, n: u64) -> u64 {
            crate::rng::splitmix64(&mut self.0) % n
        }
    }

    /// Everything a caller can see of a receiver, for comparing two of them.
    fn seen(r: &TcpReceiver) -> (ReceiverStats, u64, u64, u64, Option<Instant>, u64) {
        (
            r.stats().clone(),
            r.rcv_nxt(),
            r.bytes_read(),
            r.last_advertised_window(),
            r.poll_timeout(),
            r.buffer_occupancy(),
        )
    }

    /// Poll both receivers until they have nothing to send, writing into reused
    /// packet slots that hold an earlier, unrelated segment (as the simulator's slab
    /// does), and check they wrote the same segments and events.
    fn drain(a: &mut TcpReceiver, b: &mut TcpReceiver, now: Instant, dirty: &Segment) -> usize {
        let mut n = 0;
        loop {
            let (mut sa, mut sb) = (*dirty, *dirty);
            let (pa, pb) = (
                a.poll_transmit_into(now, &mut sa),
                b.poll_transmit_into(now, &mut sb),
            );
            assert_eq!(pa, pb, "poll answer at {now:?}");
            assert_eq!(sa, sb, "segment at {now:?}");
            loop {
                let ev = a.poll_event();
                assert_eq!(ev, b.poll_event());
                if ev.is_none() {
                    break;
                }
            }
            if pa == Polled::Nothing {
                return n;
            }
            n += 1;
            if pa == Polled::Last {
                // The caller may stop here; polling on must find nothing.
                let (mut sa, mut sb) = (*dirty, *dirty);
                assert_eq!(a.poll_transmit_into(now, &mut sa), Polled::Nothing);
                assert_eq!(b.poll_transmit_into(now, &mut sb), Polled::Nothing);
                assert_eq!(sa, *dirty);
                return n;
            }
        }
    }

    /// The steady-state paths of a `plain` receiver (in-order data in
    /// `handle_segment`, or with the read that follows in `handle_segment_and_read`,
    /// its ACK in `poll_transmit_into`, a read), and the path of the data beyond the
    /// holes (`beyond_holes`, which needs classic flow control inline too), do
    /// what the general ones do: a receiver with classic flow control inline (plain)
    /// and one with the same policy boxed (never plain, so always on the general
    /// paths) get the same random mix of in-order data, holes and their repair,
    /// duplicates, window probes, retransmitted SYNs, greedy and partial reads,
    /// delayed-ACK timers and handoff notices, over several configurations (ns-2's,
    /// with SACK and D-SACK, RFC delayed ACKs with timestamps, receiver SWS
    /// avoidance, a small buffer that fills), and must answer alike throughout.
    #[test]
    fn a_plain_receiver_behaves_as_the_general_one() {
        let mss = 1000u32;
        let base = TcpConfig {
            mss,
            ..TcpConfig::ns2()
        };
        let configs = [
            base.clone(),
            TcpConfig {
                sack: true,
                dsack: true,
                ..base.clone()
            },
            TcpConfig {
                sack: true,
                dsack: true,
                timestamps: true,
                delayed_ack: true,
                receiver_sws: true,
                rcv_buf: 6 * mss as u64,
                ..base.clone()
            },
            TcpConfig {
                handshake: false,
                receiver_sws: true,
                window_updates: false,
                rcv_buf: 4 * mss as u64 + 300,
                wscale: Some(3),
                ..base.clone()
            },
            TcpConfig {
                mss,
                rcv_buf: 8 * mss as u64,
                ..TcpConfig::default()
            },
        ];
        // A slot last used by an unrelated segment: every field set, SACK blocks too.
        let dirty = Segment::used_slot();
        for (ci, cfg) in configs.iter().enumerate() {
            for seed in 0..12u64 {
                let cfg = Arc::new(cfg.clone());
                let mut a = TcpReceiver::new(Arc::clone(&cfg));
                let mut b =
                    TcpReceiver::with_policy(Arc::clone(&cfg), FlowControl::Classic.build());
                assert!(!b.policy.is_classic());
                let mut r = Mix(seed * 31 + ci as u64);
                let mut now = Instant::ZERO;
                // The sender's view: the next new byte, and what it sent.
                let mut next = 0u64;
                let (mut plain_acks, mut acks) = (0, 0);
                let syn = |now: Instant| Segment {
                    flags: Flags::SYN,
                    mss: Some(mss as u16),
                    sack_permitted: true,
                    wscale: Some(0),
                    ts: Some(Timestamps {
                        tsval: (now.as_nanos() / 1_000_000) as u32,
                        tsecr: 0,
                    }),
                    ..Segment::default()
                };
                if cfg.handshake {
                    a.handle_segment(now, &syn(now));
                    b.handle_segment(now, &syn(now));
                    drain(&mut a, &mut b, now, &dirty);
                }
                for step in 0..1500 {
                    now += Duration::from_micros(1 + r.below(3000));
                    // A due delayed-ACK timer fires first.
                    if let Some(t) = a.poll_timeout().filter(|&t| t <= now) {
                        a.handle_timeout(t);
                        b.handle_timeout(t);
                        drain(&mut a, &mut b, t, &dirty);
                    }
                    // Stretches without new holes or retransmissions, where the
                    // steady state holds, between stretches with them.
                    let calm = (step / 250) % 2 == 1;
                    let x = match r.below(100) {
                        60..=79 if calm => r.below(60),
                        x => x,
                    };
                    let mut seg = Segment {
                        flags: Flags::ACK,
                        ts: Some(Timestamps {
                            tsval: (now.as_nanos() / 1_000_000) as u32,
                            tsecr: (r.below(50)) as u32,
                        }),
                        ..Segment::default()
                    };
                    match x {
                        // New data, in order (full-sized or short).
                        0..=59 => {
                            seg.seq = next.max(a.rcv_nxt());
                            seg.len = if r.below(5) == 0 {
                                1 + r.below(mss as u64) as u32
                            } else {
                                mss
                            };
                        }
                        // A hole: data beyond the next byte expected.
                        60..=69 => {
                            seg.seq = a.rcv_nxt() + mss as u64 * (1 + r.below(3));
                            seg.len = mss;
                        }
                        // A retransmission of something at or below what was sent.
                        70..=79 => {
                            seg.seq = r.below(next + 1);
                            seg.len = mss;
                            seg.retransmission = true;
                        }
                        // The hole at rcv_nxt repaired.
                        80..=86 => {
                            seg.seq = a.rcv_nxt();
                            seg.len = mss;
                            seg.retransmission = true;
                        }
                        // A zero-window probe.
                        87..=88 => {
                            seg.seq = a.rcv_nxt().saturating_sub(1);
                            seg.window_probe = true;
                        }
                        // A pure ACK (nothing to receive), or a retransmitted SYN.
                        89 => {}
                        90 => seg = syn(now),
                        // The application reads, or the receiver changes interface.
                        91..=96 => {
                            let n = r.below(3 * mss as u64);
                            assert_eq!(a.read(now, n), b.read(now, n));
                            drain(&mut a, &mut b, now, &dirty);
                            assert_eq!(seen(&a), seen(&b));
                            continue;
                        }
                        _ => {
                            a.signal_interface_change(now);
                            b.signal_interface_change(now);
                            drain(&mut a, &mut b, now, &dirty);
                            continue;
                        }
                    }
                    next = next.max(seg.seq + seg.len as u64);
                    let was_plain = a.plain;
                    b.handle_segment(now, &seg);
                    // Mostly a greedy application, which reads after every segment:
                    // in one call, against the two calls it stands for.
                    if r.below(4) != 0 {
                        let n = b.readable();
                        assert_eq!(a.handle_segment_and_read(now, &seg), b.read(now, n));
                    } else {
                        a.handle_segment(now, &seg);
                    }
                    let n = drain(&mut a, &mut b, now, &dirty);
                    acks += n;
                    if was_plain {
                        plain_acks += n;
                    }
                    assert!(!b.plain);
                    assert_eq!(seen(&a), seen(&b), "config {ci} seed {seed}");
                }
                assert!(
                    plain_acks > acks / 4,
                    "config {ci}: {plain_acks} of {acks} ACKs plain"
                );
            }
        }
    }
    /// `insert_ooo`'s paths at the back of the store (a block beyond the highest, or
    /// data touching it) do what the general merge does: two stores get the same
    /// random out-of-order data, mostly around the highest block, and now and then
    /// a hole filled (`absorb_ooo`); one inserts through `insert_ooo`, the other
    /// through `insert_ooo_general` only, and their blocks, byte counts and recent
    /// blocks (the SACK order) must stay the same. `note_duplicate`'s shortcut is
    /// checked against `dsack::duplicate_range` on the way.
    #[test]
    fn the_back_of_the_out_of_order_store_merges_as_the_general_insert() {
        let cfg = Arc::new(TcpConfig {
            sack: true,
            ..TcpConfig::ns2()
        });
        let (mut fast_paths, mut inserts) = (0, 0);
        for seed in 0..20u64 {
            let mut a = TcpReceiver::new(Arc::clone(&cfg));
            let mut b = TcpReceiver::new(Arc::clone(&cfg));
            let mut r = Mix(seed);
            for _ in 0..2000 {
                let top = a.ooo.back().map_or(a.rcv_nxt + 1, |b| b.1);
                if r.below(10) == 0 && !a.ooo.is_empty() {
                    // A retransmission fills the first hole, or part of it.
                    let to = a.ooo[0].0 + r.below(2);
                    for x in [&mut a, &mut b] {
                        x.rcv_nxt = to;
                        x.absorb_ooo();
                    }
                } else {
                    // Around the highest block: beyond it, touching it, inside it,
                    // or over the blocks below.
                    let l = (top + r.below(4))
                        .saturating_sub(r.below(6))
                        .max(a.rcv_nxt + 1);
                    let rr = l + 1 + r.below(4);
                    if a.holds_nothing_from(l) {
                        // What note_duplicate skips: nothing of it is held.
                        let held = dsack::duplicate_range(a.rcv_nxt, &a.ooo, l, rr);
                        assert_eq!(held, (None, false));
                    }
                    let back = a.ooo.back().copied();
                    if back.is_some_and(|(bl, _)| l >= bl) {
                        fast_paths += 1;
                    }
                    inserts += 1;
                    a.insert_ooo(l, rr);
                    b.insert_ooo_general(l, rr);
                }
                assert_eq!(a.ooo, b.ooo, "seed {seed}");
                assert_eq!(a.ooo_bytes, b.ooo_bytes);
                assert_eq!(a.ooo_bytes, a.ooo.iter().map(|b| b.1 - b.0).sum::<u64>());
                assert_eq!(a.mru_len, b.mru_len);
                assert_eq!(a.mru[..a.mru_len as usize], b.mru[..b.mru_len as usize]);
                // The recent blocks are distinct blocks of the store, as they are now
                // (write_sack_blocks copies them, and stops when they are all).
                let recent = &a.mru[..a.mru_len as usize];
                assert!(recent.iter().all(|e| a.ooo.contains(e)));
                assert!((1..recent.len()).all(|i| !recent[..i].contains(&recent[i])));
                assert_eq!(recent.is_empty(), a.ooo.is_empty());
            }
        }
        assert!(
            fast_paths > inserts / 2 && fast_paths < inserts,
            "{fast_paths} of {inserts}"
        );
    }
}
