//! When a receiver acknowledges, as Linux 6.x does it ([`AckPolicy::Linux`]); the
//! receiver (`tcp::receiver`) asks this machine at each data segment whether to ACK at
//! once, later (and when), or not yet.
//!
//! Rules and the kernel functions that implement them (net/ipv4/tcp_input.c,
//! tcp_output.c, tcp_timer.c, include/net/inet_connection_sock.h):
//!
//! * **Quick-ACK mode** (`tcp_incr_quickack`, `tcp_enter_quickack_mode`,
//!   `tcp_in_quickack_mode`, `tcp_dec_quickack_mode`): while `quick > 0` every data
//!   segment is ACKed at once; each ACK that acknowledges data uses one. `quick` is
//!   raised to `min(rcv_wnd / (2 rcv_mss), TCP_MAX_QUICKACKS = 16)` (2 if that is 0)
//!   at the first data segment, after a receive gap longer than the RTO
//!   (`tcp_event_data_recv`), and on a duplicate or out-of-window segment
//!   (`tcp_data_queue`: `out_of_window`, which also resets `ato`). Out-of-order data
//!   does not enter it (since Linux 4.18, "tcp: do not force quickack when receiving
//!   out-of-order packets"); it is acknowledged through SACK compression below. A
//!   segment that lets the window grow (`tcp_grow_window`: `quick |= 1`) asks for one
//!   quick ACK: the window policy says so ([`crate::flow::RwndPolicy::wants_quick_ack`]).
//!   Interactive ("pingpong") mode needs the receiver to send data and is not modelled:
//!   the receiver here sends none.
//! * **Otherwise** (`__tcp_ack_snd_check`): at once when more than one `rcv_mss` is
//!   unacknowledged and the window would not shrink; a segment that fills the whole
//!   gap is acknowledged at once (`ICSK_ACK_NOW`, RFC 5681 §4.2); else the
//!   delayed-ACK timer.
//! * **ato** (`tcp_event_data_recv`): starts at `TCP_ATO_MIN` = 40 ms; with `m` the
//!   time since the previous data segment: `m <= 20 ms` → `ato = ato/2 + 20 ms`;
//!   `m < ato` → `ato = min(ato/2 + m, rto)`. A delayed-ACK timer that fires doubles
//!   it, up to the RTO (`tcp_delack_timer_handler`); leaving quick-ACK mode resets it
//!   to 40 ms.
//! * **The timer** (`tcp_send_delayed_ack`): `ato`, and when `ato` > 40 ms at most
//!   min(500 ms, max(SRTT, 40 ms)), never more than `TCP_DELACK_MAX` = 200 ms. A timer
//!   already running is not pushed later; if it would fire within `ato/4` the ACK goes
//!   at once.
//! * **rcv_mss** (`tcp_initialize_rcv_mss`, `tcp_measure_rcv_mss`): the guess of the
//!   peer's MSS starts at min(MSS, rcv_wnd/2, `TCP_MIN_RCVMSS` = 536), becomes the
//!   length of any longer segment, and drops to a shorter length seen twice in a row
//!   (segments shorter than 536 bytes of TCP header and payload are ignored). The
//!   PSH-flag cases and the `ICSK_ACK_PUSHED` shortcut are not modelled.
//! * **SACK compression** (`__tcp_ack_snd_check`, `tcp_compressed_ack_kick`): with
//!   data held out of order, the first three duplicate ACKs for one `rcv_nxt` go at
//!   once (`TCP_FASTRETRANS_THRESH`), later ones are held for min(1 ms
//!   `tcp_comp_sack_delay_ns`, RTT/20) or until 44 (`tcp_comp_sack_nr`) are pending.
//!
//! The receiver's own SRTT and RTO (of its sending side, which in the kernel come from
//! the handshake) are taken from the receiver's RTT estimate: RTO = SRTT + max(2 SRTT,
//! `min_rto`), Linux's RTO after one sample (`tcp::rtt`), 1 s before any.

use crate::time::{Duration, Instant};

/// `TCP_ATO_MIN`, also `TCP_DELACK_MIN` (HZ/25).
pub const ATO_MIN: Duration = Duration::from_millis(40);
/// `TCP_DELACK_MAX` (HZ/5).
pub const DELACK_MAX: Duration = Duration::from_millis(200);
/// The bound on `ato` outside interactive mode (HZ/2 in `tcp_send_delayed_ack`).
const ATO_MAX_BULK: Duration = Duration::from_millis(500);
/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_MIN_RCVMSS`, `TCP_MIN_MSS`.
const MIN_RCVMSS: u32 = 536;
const MIN_MSS: u32 = 88;
/// `TCP_TIMEOUT_INIT`: the RTO before any RTT sample.
const TIMEOUT_INIT: Duration = Duration::from_secs(1);
/// `TCP_FASTRETRANS_THRESH`, `tcp_comp_sack_nr`, `tcp_comp_sack_delay_ns`.
const DUPACKS_BEFORE_COMPRESSION: u32 = 3;
const COMP_SACK_NR: u32 = 44;
const COMP_SACK_DELAY: Duration = Duration::from_millis(1);

crate::named_enum! {
    /// Which rules decide when the receiver acknowledges.
    #[derive(Copy, Clone, PartialEq, Eq, Debug)]
    pub enum AckPolicy ("ack_policy", ignoring "-_ ") {
        /// RFC 5681 §4.2 / RFC 1122 §4.2.3.2: every `ack_every` full segments, else
        /// after `delack_timeout`; out-of-order data and gap fills at once.
        Rfc5681 = "rfc5681",
        /// Linux's quick-ACK mode, adaptive `ato` and SACK compression (this module).
        Linux = "linux",
    }
}

/// What to do about the segment just received.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AckDecision {
    /// Send an ACK now.
    Now,
    /// Send one at this time unless something sends one earlier.
    At(Instant),
    /// An ACK is already due at a time set before; nothing changes.
    Keep,
}

/// What the receiver knows when a data segment arrives.
#[derive(Copy, Clone, Debug)]
pub struct RcvInfo {
    /// The window last advertised (`rcv_wnd`).
    pub rcv_wnd: u64,
    /// The receiver's RTT estimate, if any (stands for its SRTT, see the module docs).
    pub rtt: Option<Duration>,
    /// `min_rto` of the connection's configuration (`TCP_RTO_MIN`).
    pub min_rto: Duration,
}

impl RcvInfo {
    /// The receiving socket's RTO (the module documentation).
    fn rto(&self) -> Duration {
        self.rtt
            .map_or(TIMEOUT_INIT, |r| r + (r * 2).max(self.min_rto))
    }
}

/// Linux's delayed-ACK state (`icsk_ack` of `struct inet_connection_sock` and the
/// SACK-compression fields of `struct tcp_sock`). See the module documentation.
#[derive(Clone, Debug)]
pub struct LinuxAck {
    mss: u32,
    /// Bytes of TCP options on every segment (12 with timestamps).
    opt_len: u32,
    quick: u32,
    /// `None` before the first data segment (`ato == 0` in the kernel).
    ato: Option<Duration>,
    lrcvtime: Option<Instant>,
    rcv_mss: Option<u32>,
    last_seg_size: u32,
    /// The delayed-ACK timer (`icsk_ack.timeout` while `ICSK_ACK_TIMER`).
    timer: Option<Instant>,
    /// The pending ACK is a compressed SACK, not a delayed ACK.
    compressed: bool,
    compressed_rcv_nxt: u64,
    dup_ack_counter: u32,
    compressed_ack: u32,
    /// Counters: ACKs sent in quick-ACK mode, delayed-ACK timer expiries.
    pub quick_acks: u64,
    pub delack_timeouts: u64,
}

impl LinuxAck {
    /// For a connection whose MSS is `mss` and whose segments carry `opt_len` bytes of
    /// options.
    pub fn new(mss: u32, opt_len: u32) -> Self {
        LinuxAck {
            mss,
            opt_len,
            quick: 0,
            ato: None,
            lrcvtime: None,
            rcv_mss: None,
            last_seg_size: 0,
            timer: None,
            compressed: false,
            compressed_rcv_nxt: 0,
            dup_ack_counter: 0,
            compressed_ack: 0,
            quick_acks: 0,
            delack_timeouts: 0,
        }
    }

    /// `tcp_initialize_rcv_mss`, done lazily (the window is known by then).
    fn rcv_mss(&mut self, rcv_wnd: u64) -> u32 {
        *self.rcv_mss.get_or_insert_with(|| {
            let wnd_half = (rcv_wnd / 2).min(u32::MAX as u64) as u32;
            self.mss.min(wnd_half).clamp(MIN_MSS, MIN_RCVMSS)
        })
    }

    /// `tcp_measure_rcv_mss` for a segment of `len` payload bytes.
    fn measure_rcv_mss(&mut self, len: u32, rcv_wnd: u64) {
        let cur = self.rcv_mss(rcv_wnd);
        let lss = std::mem::take(&mut self.last_seg_size);
        if len >= cur {
            self.rcv_mss = Some(len);
        } else if len + self.opt_len >= MIN_RCVMSS {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = Some(len);
            }
        }
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, rcv_wnd: u64) {
        let rcv_mss = self.rcv_mss(rcv_wnd) as u64;
        let q = (rcv_wnd / (2 * rcv_mss)).min(MAX_QUICKACKS as u64) as u32;
        let q = if q == 0 { 2.min(MAX_QUICKACKS) } else { q };
        self.quick = self.quick.max(q);
    }

    /// `tcp_enter_quickack_mode`: a duplicate or out-of-window segment.
    pub fn enter_quickack_mode(&mut self, rcv_wnd: u64) {
        self.incr_quickack(rcv_wnd);
        self.ato = Some(ATO_MIN);
    }

    /// In quick-ACK mode (`tcp_in_quickack_mode`; never interactive here).
    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_event_data_recv`: new in-order data of `len` bytes arrived at `now`;
    /// `grew` says whether it let the window grow (`tcp_grow_window`).
    fn on_data(&mut self, now: Instant, len: u32, grew: bool, info: &RcvInfo) {
        self.measure_rcv_mss(len, info.rcv_wnd);
        match (self.ato, self.lrcvtime) {
            (Some(ato), Some(last)) => {
                let m = now - last;
                let rto = info.rto();
                if m <= ATO_MIN / 2 {
                    self.ato = Some(ato / 2 + ATO_MIN / 2);
                } else if m < ato {
                    self.ato = Some((ato / 2 + m).min(rto));
                } else if m > rto {
                    // "Too long gap": the sender did not restart its window.
                    self.incr_quickack(info.rcv_wnd);
                }
            }
            _ => {
                // The first data segment starts the engine.
                self.incr_quickack(info.rcv_wnd);
                self.ato = Some(ATO_MIN);
            }
        }
        self.lrcvtime = Some(now);
        if grew {
            // `tcp_grow_window`: `icsk_ack.quick |= 1`, a bitwise or. An even budget
            // gains one that this segment's ACK spends again, so while the window
            // grows the budget does not run down.
            self.quick |= 1;
        }
    }

    /// New in-order data arrived: ACK now, at a time, or keep the pending timer.
    /// `unacked` is `rcv_nxt` less the last acknowledgment sent, `gap_filled` says the
    /// segment filled every hole, `wnd_ok` that the window to advertise now is no
    /// smaller than `rcv_wnd`.
    pub fn on_in_order(
        &mut self,
        now: Instant,
        len: u32,
        unacked: u64,
        gap_filled: bool,
        grew: bool,
        wnd_ok: bool,
        info: &RcvInfo,
    ) -> AckDecision {
        self.on_data(now, len, grew, info);
        let rcv_mss = self.rcv_mss(info.rcv_wnd) as u64;
        if gap_filled || (unacked > rcv_mss && wnd_ok) || self.in_quickack_mode() {
            return AckDecision::Now;
        }
        self.delayed(now, info)
    }

    /// Data arrived out of order (`tcp_data_queue_ofo`, then `__tcp_ack_snd_check`
    /// with a non-empty out-of-order queue): SACK compression.
    pub fn on_out_of_order(
        &mut self,
        now: Instant,
        rcv_nxt: u64,
        grew: bool,
        info: &RcvInfo,
    ) -> AckDecision {
        if grew {
            self.quick |= 1; // `tcp_grow_window`, as in `on_data`
        }
        if self.in_quickack_mode() || self.compressed_ack >= COMP_SACK_NR {
            return AckDecision::Now;
        }
        if self.compressed_rcv_nxt != rcv_nxt {
            self.compressed_rcv_nxt = rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < DUPACKS_BEFORE_COMPRESSION {
            self.dup_ack_counter += 1;
            return AckDecision::Now;
        }
        self.compressed_ack += 1;
        if self.timer.is_some() {
            return AckDecision::Keep;
        }
        let rtt = info.rtt.unwrap_or(Duration::ZERO);
        let t = now + COMP_SACK_DELAY.min(rtt / 20);
        self.timer = Some(t);
        self.compressed = true;
        AckDecision::At(t)
    }

    /// `tcp_send_delayed_ack`.
    fn delayed(&mut self, now: Instant, info: &RcvInfo) -> AckDecision {
        let mut ato = self.ato.unwrap_or(ATO_MIN);
        if ato > ATO_MIN {
            let mut max_ato = ATO_MAX_BULK;
            if let Some(srtt) = info.rtt {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        let ato = ato.min(DELACK_MAX);
        let mut t = now + ato;
        if let Some(old) = self.timer {
            if old <= now + ato / 4 {
                return AckDecision::Now;
            }
            t = t.min(old);
        }
        self.timer = Some(t);
        self.compressed = false;
        AckDecision::At(t)
    }

    /// The timer set by the last decision fired with an ACK still owed
    /// (`tcp_delack_timer_handler`: a missed delayed ACK inflates `ato`, up to the
    /// RTO; `tcp_compressed_ack_kick` changes nothing).
    pub fn on_timer(&mut self, info: &RcvInfo) {
        if !self.compressed {
            self.delack_timeouts += 1;
            if let Some(ato) = self.ato {
                self.ato = Some((ato * 2).min(info.rto()));
            }
        }
    }

    /// An ACK left (`tcp_event_ack_sent`); `acks_data` says it acknowledged data
    /// the receiver had scheduled an ACK for (`inet_csk_ack_scheduled`).
    pub fn on_ack_sent(&mut self, acks_data: bool) {
        if self.quick > 0 && acks_data {
            self.quick_acks += 1;
            self.quick -= 1;
            if self.quick == 0 {
                // Leaving quick-ACK mode deflates ato.
                self.ato = Some(ATO_MIN);
            }
        }
        self.compressed_ack = 0;
        self.timer = None;
        self.compressed = false;
    }

    /// The current `ato`, if the engine has started.
    pub fn ato(&self) -> Option<Duration> {
        self.ato
    }
    /// Quick ACKs left.
    pub fn quick(&self) -> u32 {
        self.quick
    }
    /// The current estimate of the peer's MSS.
    pub fn current_rcv_mss(&self) -> Option<u32> {
        self.rcv_mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::{ms, t_ms};

    fn info(rcv_wnd: u64) -> RcvInfo {
        RcvInfo {
            rcv_wnd,
            rtt: Some(ms(100)),
            min_rto: ms(200),
        }
    }

    /// An engine (1448-byte MSS) that received its first full segment at time zero.
    fn started(i: &RcvInfo) -> LinuxAck {
        let mut a = LinuxAck::new(1448, 12);
        a.on_in_order(t_ms(0), 1448, 0, false, false, true, i);
        a
    }

    /// [`started`], with its quick ACKs used up.
    fn out_of_quickack(i: &RcvInfo) -> LinuxAck {
        let mut a = started(i);
        a.quick = 0;
        a
    }

    /// `tcp_incr_quickack`: the first data segment allows rcv_wnd / (2 rcv_mss)
    /// quick ACKs, at most `TCP_MAX_QUICKACKS`; each ACK of data uses one.
    #[test]
    fn first_segment_allows_up_to_sixteen_quick_acks() {
        let mut a = LinuxAck::new(1448, 12);
        let i = info(65535);
        assert_eq!(
            a.on_in_order(t_ms(0), 1448, 1448, false, false, true, &i),
            AckDecision::Now
        );
        // 65535 / (2 × 1448) = 22, capped at 16.
        assert_eq!(a.quick(), 16);
        a.on_ack_sent(true);
        for k in 1..16u64 {
            let d = a.on_in_order(t_ms(k), 1448, 1448, false, false, true, &i);
            assert_eq!(d, AckDecision::Now);
            a.on_ack_sent(true);
        }
        assert_eq!((a.quick_acks, a.quick()), (16, 0));
        // Out of quick-ACK mode one full segment waits for the delayed-ACK timer...
        let d = a.on_in_order(t_ms(16), 1448, 1448, false, false, true, &i);
        assert_eq!(d, AckDecision::At(t_ms(16) + ATO_MIN));
        // ...and a second one is ACKed at once (__tcp_ack_snd_check).
        let d = a.on_in_order(t_ms(17), 1448, 2896, false, false, true, &i);
        assert_eq!(d, AckDecision::Now);
    }

    /// `tcp_incr_quickack` with a small window: rcv_wnd / (2 rcv_mss) quick ACKs.
    #[test]
    fn quick_acks_scale_with_the_window() {
        let mut a = LinuxAck::new(1448, 12);
        a.on_in_order(t_ms(0), 1448, 1448, false, false, true, &info(4 * 1448 * 2));
        assert_eq!(a.quick(), 4);
    }

    /// `tcp_event_data_recv`: segments 10 ms apart pull ato down to
    /// ato/2 + 20 ms, i.e. towards 40 ms; 30 ms apart, towards 2 × 30 = 60 ms.
    #[test]
    fn ato_adapts_to_the_inter_arrival_time() {
        let i = info(65535);
        let mut a = started(&i);
        assert_eq!(a.ato(), Some(ATO_MIN));
        for k in 1..10u64 {
            a.on_in_order(t_ms(30 * k), 1448, 0, false, false, true, &i);
        }
        // 40 → 50 → 55 → ... → 60 ms (m = 30 ms < ato: ato = ato/2 + 30 ms).
        let ato = a.ato().unwrap();
        assert!(ato > ms(59) && ato <= ms(60), "{ato:?}");
        let mut a = started(&i);
        a.ato = Some(ms(120));
        a.on_in_order(t_ms(10), 1448, 0, false, false, true, &i);
        assert_eq!(a.ato(), Some(ms(80))); // 120/2 + 20
    }

    /// `tcp_delack_timer_handler` doubles ato on a missed delayed ACK, and
    /// `tcp_send_delayed_ack` bounds the timer by SRTT and `TCP_DELACK_MAX`.
    #[test]
    fn missed_delayed_acks_inflate_ato_but_the_timer_stays_within_bounds() {
        let slow = RcvInfo {
            rcv_wnd: 65535,
            rtt: Some(ms(1000)),
            min_rto: ms(200),
        };
        let mut a = out_of_quickack(&slow);
        for _ in 0..6 {
            a.on_timer(&slow);
        }
        // 40 ms doubled six times is 2.56 s; the RTO (1000 + 2000 ms) is above it.
        assert_eq!(a.ato(), Some(ms(2560)));
        a.on_ack_sent(false);
        let d = a.on_in_order(t_ms(2000), 100, 100, false, false, true, &slow);
        assert_eq!(d, AckDecision::At(t_ms(2000) + DELACK_MAX));
    }

    /// A receive gap longer than the RTO re-enters quick-ACK mode
    /// (`tcp_event_data_recv`).
    #[test]
    fn an_idle_gap_longer_than_the_rto_reenters_quickack_mode() {
        let i = info(65535);
        let mut a = out_of_quickack(&i);
        // RTO = 100 + max(200, 200) = 300 ms.
        assert!(matches!(
            a.on_in_order(t_ms(250), 1448, 0, false, false, true, &i),
            AckDecision::At(_)
        ));
        a.on_ack_sent(true);
        let d = a.on_in_order(t_ms(600), 1448, 1448, false, false, true, &i);
        assert_eq!(d, AckDecision::Now);
        assert_eq!(a.quick(), 16);
    }

    /// `tcp_grow_window` sets `quick |= 1`: a segment that grows the window is ACKed
    /// at once.
    #[test]
    fn a_segment_that_grows_the_window_is_acked_at_once() {
        let i = info(65535);
        let mut a = out_of_quickack(&i);
        assert_eq!(
            a.on_in_order(t_ms(1), 1448, 1448, false, true, true, &i),
            AckDecision::Now
        );
    }

    /// `quick |= 1` is a bitwise or: while every segment grows the window the
    /// budget of 16 does not run down (each ACK spends the one the growth added), and
    /// once the window stops growing all 16 are still there: 10 + 16 single ACKs here.
    #[test]
    fn a_growing_window_keeps_the_quick_ack_budget() {
        let mut a = LinuxAck::new(1448, 12);
        let i = info(65535);
        for k in 0..10u64 {
            let d = a.on_in_order(t_ms(k), 1448, 1448, false, true, true, &i);
            assert_eq!(d, AckDecision::Now);
            a.on_ack_sent(true);
        }
        assert_eq!(a.quick(), 16);
        for k in 10..26u64 {
            let d = a.on_in_order(t_ms(k), 1448, 1448, false, false, true, &i);
            assert_eq!(d, AckDecision::Now, "segment {k}");
            a.on_ack_sent(true);
        }
        assert_eq!((a.quick_acks, a.quick()), (26, 0));
        // An odd budget is not raised by a growth: 15 | 1 = 15.
        let mut b = LinuxAck::new(1448, 12);
        b.on_in_order(t_ms(0), 1448, 1448, false, false, true, &i);
        b.on_ack_sent(true);
        b.on_in_order(t_ms(1), 1448, 1448, false, true, true, &i);
        assert_eq!(b.quick(), 15);
    }

    /// SACK compression (`__tcp_ack_snd_check`): three duplicate ACKs at once, then
    /// one held for min(1 ms, RTT/20).
    #[test]
    fn out_of_order_data_sends_three_dupacks_then_compresses() {
        let i = info(65535);
        let mut a = out_of_quickack(&i);
        for _ in 0..3 {
            assert_eq!(
                a.on_out_of_order(t_ms(10), 1448, false, &i),
                AckDecision::Now
            );
            a.on_ack_sent(false);
        }
        assert_eq!(
            a.on_out_of_order(t_ms(10), 1448, false, &i),
            AckDecision::At(t_ms(11))
        );
        assert_eq!(
            a.on_out_of_order(t_ms(10), 1448, false, &i),
            AckDecision::Keep
        );
        a.on_timer(&i);
        assert_eq!(a.delack_timeouts, 0);
    }

    /// `tcp_measure_rcv_mss`: a shorter segment lowers rcv_mss only when seen twice.
    #[test]
    fn rcv_mss_follows_segment_sizes() {
        let mut a = LinuxAck::new(1448, 12);
        a.measure_rcv_mss(1448, 65535);
        assert_eq!(a.current_rcv_mss(), Some(1448));
        a.measure_rcv_mss(1000, 65535);
        assert_eq!(a.current_rcv_mss(), Some(1448));
        a.measure_rcv_mss(1000, 65535);
        assert_eq!(a.current_rcv_mss(), Some(1000));
        let mut b = LinuxAck::new(1448, 12);
        b.measure_rcv_mss(300, 65535);
        assert_eq!(b.current_rcv_mss(), Some(536));
    }
}
