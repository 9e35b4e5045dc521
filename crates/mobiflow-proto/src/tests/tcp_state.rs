//! State-machine tests of one TCP endpoint at a time: segments in, segments out, no
//! network (smoltcp's `socket/tcp.rs` tests). One banner per state; names are
//! `test_<state>_<event>`.

use super::{ns2, rfc, sack_of};
use crate::tcp::sack::Scoreboard;
use crate::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::time::test_util::t_ms;
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Segment, Timestamps};

const MSS: u64 = 1000;

/// A data segment from the sender (the template every test starts from).
fn send_templ(seq: u64, len: u32) -> Segment {
    Segment {
        seq,
        len,
        flags: Flags::ACK,
        ..Segment::default()
    }
}

/// An ACK from the receiver.
fn recv_templ(ack: u64, wnd: u64) -> Segment {
    Segment {
        ack,
        wnd,
        flags: Flags::ACK,
        ..Segment::default()
    }
}

/// Hand `$seg` to endpoint `$ep` at `$t`.
macro_rules! send {
    ($ep:expr, $t:expr, $seg:expr) => {
        $ep.handle_segment($t, &$seg)
    };
}

/// The endpoint must emit a segment now; optionally check fields of it.
macro_rules! recv {
    ($ep:expr, $t:expr) => {
        $ep.poll_transmit($t).expect("a segment")
    };
    ($ep:expr, $t:expr, $($field:ident : $value:expr),+ $(,)?) => {{
        let s = $ep.poll_transmit($t).expect("a segment");
        $( assert_eq!(s.$field, $value, concat!("field ", stringify!($field))); )+
        s
    }};
}

/// The endpoint must have nothing to send.
macro_rules! recv_nothing {
    ($ep:expr, $t:expr) => {
        if let Some(s) = $ep.poll_transmit($t) {
            panic!("expected nothing, got {s:?}");
        }
    };
}

/// Compare two segments on the fields a receiver decides, with a readable message.
macro_rules! sanity {
    ($got:expr, $want:expr) => {{
        let (g, w): (Segment, Segment) = ($got, $want);
        assert_eq!(
            (g.ack, g.wnd, g.sack.iter().collect::<Vec<_>>()),
            (w.ack, w.wnd, w.sack.iter().collect::<Vec<_>>()),
            "\n got  {g:?}\n want {w:?}"
        );
    }};
}

/// A receiver past the handshake (ns-2 conventions: no SACK, no timestamps, no
/// delayed ACKs) with a 10-segment buffer.
fn receiver_established_with(f: impl FnOnce(&mut TcpConfig)) -> TcpReceiver {
    let mut cfg = TcpConfig {
        rcv_buf: 10 * MSS,
        ..ns2()
    };
    f(&mut cfg);
    TcpReceiver::new(cfg)
}

fn receiver_established() -> TcpReceiver {
    receiver_established_with(|_| {})
}

/// The RFC profile without a handshake: SACK, timestamps, delayed ACKs.
fn receiver_established_rfc(rcv_buf: u64) -> TcpReceiver {
    TcpReceiver::new(TcpConfig {
        handshake: false,
        rcv_buf,
        ..rfc()
    })
}

// =====================================================================================
// Receiver, LISTEN
// =====================================================================================

#[test]
fn test_listen_syn_is_answered_with_a_syn_ack_carrying_the_options() {
    let mut r = TcpReceiver::new(TcpConfig {
        rcv_buf: 20_000,
        ..rfc()
    });
    let syn = Segment {
        flags: Flags::SYN,
        mss: Some(1000),
        sack_permitted: true,
        wscale: Some(0),
        ts: Some(Timestamps { tsval: 7, tsecr: 0 }),
        ..Segment::default()
    };
    send!(r, t_ms(10), syn);
    let sa = recv!(r, t_ms(10), wnd: 20_000, mss: Some(1000), sack_permitted: true);
    assert!(sa.flags.contains(Flags::SYN | Flags::ACK));
    assert_eq!(
        sa.ts.unwrap().tsecr,
        7,
        "RFC 7323 §3.2: echo the SYN's TSval"
    );
    recv_nothing!(r, t_ms(10));
}

#[test]
fn test_listen_data_before_the_syn_is_ignored() {
    let mut r = TcpReceiver::new(rfc());
    send!(r, t_ms(1), send_templ(0, 1000));
    recv_nothing!(r, t_ms(1));
    assert_eq!(r.rcv_nxt(), 0);
}

#[test]
fn test_listen_syn_without_options_turns_sack_and_timestamps_off() {
    let mut r = TcpReceiver::new(rfc());
    send!(
        r,
        t_ms(0),
        Segment {
            flags: Flags::SYN,
            ..Segment::default()
        }
    );
    let sa = recv!(r, t_ms(0), sack_permitted: false, ts: None);
    assert!(sa.flags.contains(Flags::SYN));
    // Later ACKs carry neither.
    send!(r, t_ms(1), send_templ(1000, 1000));
    recv!(r, t_ms(1), ack: 0, ts: None);
}

// =====================================================================================
// Receiver, ESTABLISHED
// =====================================================================================

#[test]
fn test_established_in_order_segment_is_acked_with_the_free_window() {
    let mut r = receiver_established();
    send!(r, t_ms(0), send_templ(0, 1000));
    sanity!(recv!(r, t_ms(0)), recv_templ(1000, 9 * MSS));
    recv_nothing!(r, t_ms(0));
}

#[test]
fn test_established_delayed_ack_waits_for_the_second_full_segment_or_the_timer() {
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), send_templ(0, 1000));
    recv_nothing!(r, t_ms(0));
    assert_eq!(
        r.poll_timeout(),
        Some(t_ms(200)),
        "RFC 1122: at most 500 ms"
    );
    send!(r, t_ms(5), send_templ(1000, 1000));
    recv!(r, t_ms(5), ack: 2000);
    assert_eq!(r.poll_timeout(), None);
    send!(r, t_ms(10), send_templ(2000, 1000));
    recv_nothing!(r, t_ms(10));
    r.handle_timeout(t_ms(209));
    recv_nothing!(r, t_ms(209));
    r.handle_timeout(t_ms(210));
    recv!(r, t_ms(210), ack: 3000);
}

#[test]
fn test_established_short_segments_do_not_count_towards_the_second_full_segment() {
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), send_templ(0, 400));
    send!(r, t_ms(1), send_templ(400, 400));
    send!(r, t_ms(2), send_templ(800, 400));
    recv_nothing!(r, t_ms(2));
    r.handle_timeout(t_ms(200));
    recv!(r, t_ms(200), ack: 1200);
}

#[test]
fn test_established_out_of_order_segment_is_acked_at_once_with_a_sack_block() {
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), send_templ(2000, 1000));
    sanity!(
        recv!(r, t_ms(0)),
        Segment {
            sack: sack_of(&[(2000, 3000)]),
            ..recv_templ(0, 100_000)
        }
    );
    assert_eq!(r.stats().out_of_order_segments, 1);
}

#[test]
fn test_established_sack_blocks_most_recent_first_at_most_three_beside_timestamps() {
    let mut r = receiver_established_rfc(100_000);
    for (i, seq) in [2000u64, 4000, 6000, 8000, 10_000].into_iter().enumerate() {
        send!(r, t_ms(i as u64), send_templ(seq, 1000));
        let _ = recv!(r, t_ms(i as u64));
    }
    // Extend the oldest block: it becomes the most recent.
    send!(r, t_ms(9), send_templ(3000, 1000));
    let a = recv!(r, t_ms(9));
    assert_eq!(
        a.sack.iter().collect::<Vec<_>>(),
        vec![(2000, 5000), (10_000, 11_000), (8000, 9000)]
    );
}

#[test]
fn test_established_four_sack_blocks_without_timestamps() {
    let mut r = TcpReceiver::new(TcpConfig {
        handshake: false,
        timestamps: false,
        rcv_buf: 100_000,
        ..rfc()
    });
    for (i, seq) in [2000u64, 4000, 6000, 8000, 10_000].into_iter().enumerate() {
        send!(r, t_ms(i as u64), send_templ(seq, 1000));
        let _ = recv!(r, t_ms(i as u64));
    }
    send!(r, t_ms(9), send_templ(6000, 1000));
    let a = recv!(r, t_ms(9));
    assert_eq!(
        a.sack.iter().collect::<Vec<_>>(),
        vec![(6000, 7000), (10_000, 11_000), (8000, 9000), (4000, 5000)]
    );
}

#[test]
fn test_established_segment_filling_the_hole_is_acked_at_once_and_trims_sack() {
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), send_templ(1000, 1000));
    send!(r, t_ms(0), send_templ(3000, 1000));
    let _ = recv!(r, t_ms(0));
    send!(r, t_ms(1), send_templ(0, 1000));
    // Nothing read yet: the window is the buffer less the 2000 bytes in order.
    sanity!(
        recv!(r, t_ms(1)),
        Segment {
            sack: sack_of(&[(3000, 4000)]),
            ..recv_templ(2000, 98_000)
        }
    );
}

#[test]
fn test_established_duplicate_segment_is_acked_at_once() {
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), send_templ(0, 1000));
    send!(r, t_ms(0), send_templ(1000, 1000));
    let _ = recv!(r, t_ms(0), ack: 2000);
    send!(r, t_ms(5), send_templ(0, 1000));
    recv!(r, t_ms(5), ack: 2000);
    assert_eq!(r.stats().duplicate_segments, 1);
}

#[test]
fn test_established_segment_beyond_the_buffer_is_dropped_and_acked() {
    let mut r = receiver_established();
    send!(r, t_ms(0), send_templ(9500, 1000));
    sanity!(recv!(r, t_ms(0)), recv_templ(0, 10 * MSS));
    assert_eq!(r.stats().buffer_drops, 1);
    assert_eq!(r.buffer_occupancy(), 0);
}

#[test]
fn test_established_full_buffer_advertises_zero_and_a_probe_is_answered() {
    let mut r = receiver_established();
    for i in 0..10 {
        send!(r, t_ms(i), send_templ(i * MSS, 1000));
        let _ = recv!(r, t_ms(i));
    }
    assert_eq!(r.last_advertised_window(), 0);
    let probe = Segment {
        seq: 10 * MSS,
        window_probe: true,
        ..send_templ(10 * MSS, 0)
    };
    send!(r, t_ms(100), probe);
    sanity!(recv!(r, t_ms(100)), recv_templ(10 * MSS, 0));
    assert_eq!(r.stats().zero_window_episodes, 1);
}

#[test]
fn test_established_read_sends_a_window_update_once_two_segments_fit() {
    let mut r = receiver_established();
    for i in 0..10 {
        send!(r, t_ms(i), send_templ(i * MSS, 1000));
        let _ = recv!(r, t_ms(i));
    }
    assert_eq!(r.read(t_ms(20), 1500), 1500);
    recv_nothing!(r, t_ms(20));
    assert_eq!(r.read(t_ms(30), 500), 500);
    let u = recv!(r, t_ms(30));
    sanity!(u, recv_templ(10 * MSS, 2 * MSS));
    assert_eq!(r.stats().window_updates, 1);
}

#[test]
fn test_established_sws_avoidance_holds_the_right_edge_for_small_reads() {
    let mut r = TcpReceiver::new(TcpConfig {
        rcv_buf: 10 * MSS,
        receiver_sws: true,
        ..ns2()
    });
    for i in 0..10 {
        send!(r, t_ms(i), send_templ(i * MSS, 1000));
        let _ = recv!(r, t_ms(i));
    }
    r.read(t_ms(20), 600);
    // A probe now must not reveal a 600-byte window (< min(MSS, buf/2)).
    send!(
        r,
        t_ms(21),
        Segment {
            window_probe: true,
            ..send_templ(10 * MSS, 0)
        }
    );
    sanity!(recv!(r, t_ms(21)), recv_templ(10 * MSS, 0));
    r.read(t_ms(22), 400);
    send!(
        r,
        t_ms(23),
        Segment {
            window_probe: true,
            ..send_templ(10 * MSS, 0)
        }
    );
    sanity!(recv!(r, t_ms(23)), recv_templ(10 * MSS, MSS));
}

/// A 1000-byte data segment at `seq` carrying the timestamp `tsval`.
fn with_ts(seq: u64, tsval: u32) -> Segment {
    Segment {
        ts: Some(Timestamps { tsval, tsecr: 0 }),
        ..send_templ(seq, 1000)
    }
}

#[test]
fn test_established_ts_recent_echoes_the_earliest_unacknowledged_segment() {
    let mut r = receiver_established_rfc(100_000);
    // RFC 7323 §4.3 (A): with a delayed ACK, echo the first of the two segments.
    send!(r, t_ms(0), with_ts(0, 100));
    send!(r, t_ms(1), with_ts(1000, 101));
    assert_eq!(recv!(r, t_ms(1)).ts.unwrap().tsecr, 100);
    // (B) out of order: the echo stays with the last in-order segment ...
    send!(r, t_ms(2), with_ts(3000, 102));
    assert_eq!(recv!(r, t_ms(2), ack: 2000).ts.unwrap().tsecr, 100);
    // ... until the segment that fills the hole, whose TSval is echoed.
    send!(r, t_ms(3), with_ts(2000, 103));
    assert_eq!(recv!(r, t_ms(3), ack: 4000).ts.unwrap().tsecr, 103);
}

#[test]
fn test_established_an_old_duplicate_does_not_update_ts_recent() {
    // RFC 7323 §5.3: a segment wholly below the window is rejected (R2) before
    // TS.Recent is recorded (R3); Linux `tcp_validate_incoming` answers it with
    // `tcp_send_dupack` without `tcp_replace_ts_recent`. The ACK of a late
    // retransmission of data already acknowledged echoes the TSval of the segment
    // that last advanced the window, so that the sender's Eifel test sees the
    // original's (RFC 3522 §3.2).
    let mut r = receiver_established_rfc(100_000);
    send!(r, t_ms(0), with_ts(0, 100));
    send!(r, t_ms(1), with_ts(1000, 101));
    assert_eq!(recv!(r, t_ms(1), ack: 2000).ts.unwrap().tsecr, 100);
    send!(r, t_ms(500), with_ts(0, 600));
    assert_eq!(recv!(r, t_ms(500), ack: 2000).ts.unwrap().tsecr, 100);
    // The next in-order segments are recorded as before.
    send!(r, t_ms(501), with_ts(2000, 601));
    send!(r, t_ms(501), with_ts(3000, 602));
    assert_eq!(recv!(r, t_ms(501), ack: 4000).ts.unwrap().tsecr, 601);
}

// =====================================================================================
// Sender, SYN-SENT
// =====================================================================================

#[test]
fn test_syn_sent_sends_one_syn_with_the_options_then_waits() {
    let mut s = TcpSender::new(rfc());
    s.write(10_000);
    let syn = recv!(s, t_ms(0), mss: Some(1000), sack_permitted: true);
    assert!(syn.flags.contains(Flags::SYN));
    assert!(syn.ts.is_some());
    recv_nothing!(s, t_ms(0));
    assert_eq!(s.poll_timeout(), Some(t_ms(1000)), "RFC 6298 §2.1: 1 s");
}

#[test]
fn test_syn_sent_syn_ack_establishes_and_takes_the_window() {
    let mut s = TcpSender::new(rfc());
    s.write(10_000);
    let _ = recv!(s, t_ms(0));
    let syn_ack = Segment {
        flags: Flags::SYN | Flags::ACK,
        wnd: 3000,
        sack_permitted: true,
        ts: Some(Timestamps { tsval: 5, tsecr: 0 }),
        ..Segment::default()
    };
    send!(s, t_ms(80), syn_ack);
    assert!(s.is_established());
    assert!(s.sack_enabled() && s.timestamps_enabled());
    assert_eq!(s.snd_wnd(), 3000);
    for seq in [0, 1000, 2000] {
        recv!(s, t_ms(80), seq: seq, len: 1000);
    }
    recv_nothing!(s, t_ms(80));
}

// =====================================================================================
// Sender, ESTABLISHED
// =====================================================================================

/// An ns-2 sender (no handshake) that has sent its two-segment initial window.
fn sender_established() -> TcpSender {
    let mut s = TcpSender::new(TcpConfig {
        rcv_buf: 100 * MSS,
        ..ns2()
    });
    s.set_unlimited();
    recv!(s, t_ms(0), seq: 0);
    recv!(s, t_ms(0), seq: 1000);
    recv_nothing!(s, t_ms(0));
    s
}

#[test]
fn test_established_sending_arms_the_rto_and_a_full_ack_disarms_it() {
    let mut s = TcpSender::new(TcpConfig {
        rcv_buf: 100 * MSS,
        ..ns2()
    });
    s.write(2000);
    let _ = recv!(s, t_ms(0));
    assert_eq!(
        s.poll_timeout(),
        Some(Instant::from_secs(3)),
        "ns-2 initial RTO"
    );
    let _ = recv!(s, t_ms(0));
    send!(s, t_ms(100), recv_templ(2000, 100 * MSS));
    assert_eq!(s.poll_timeout(), None);
    assert!(s.is_idle());
}

#[test]
fn test_established_ack_for_unsent_data_is_ignored() {
    let mut s = sender_established();
    send!(s, t_ms(100), recv_templ(5000, 100 * MSS));
    assert_eq!(s.snd_una(), 0);
    recv_nothing!(s, t_ms(100));
}

#[test]
fn test_established_window_change_with_the_same_ack_is_not_a_dupack() {
    let mut s = sender_established();
    // Without SACK a dupACK must repeat the window (RFC 5681 §2).
    for (i, wnd) in [90, 80, 70, 60].into_iter().enumerate() {
        send!(s, t_ms(100 + i as u64), recv_templ(0, wnd * MSS));
    }
    assert_eq!(s.stats().fast_retransmits, 0);
    for _ in 0..3 {
        send!(s, t_ms(110), recv_templ(0, 60 * MSS));
    }
    assert_eq!(s.stats().fast_retransmits, 1);
    recv!(s, t_ms(110), seq: 0, retransmission: true);
}

#[test]
fn test_established_an_old_ack_does_not_change_the_window() {
    let mut s = sender_established();
    send!(s, t_ms(100), recv_templ(1000, 50 * MSS));
    send!(s, t_ms(101), recv_templ(0, 0));
    assert_eq!(s.snd_wnd(), 50 * MSS);
}

#[test]
fn test_established_zero_window_with_nothing_in_flight_arms_the_persist_timer() {
    let mut s = sender_established();
    send!(s, t_ms(100), recv_templ(2000, 0));
    recv_nothing!(s, t_ms(100));
    // RTO after one 100 ms sample is 300 ms, at least persist_min (200 ms).
    let at = s.poll_timeout().expect("persist timer");
    assert_eq!(at, t_ms(100) + s.rto());
    s.handle_timeout(at);
    let probe = recv!(s, at, seq: 2000, len: 0);
    assert!(probe.window_probe);
    recv_nothing!(s, at);
    // The next probe waits twice as long.
    assert_eq!(s.poll_timeout(), Some(at + s.rto() * 2));
    // A window update stops the timer and lets data out.
    send!(s, at + Duration::from_millis(1), recv_templ(2000, 2 * MSS));
    recv!(s, at + Duration::from_millis(1), seq: 2000, len: 1000);
}

#[test]
fn test_established_rto_resends_the_first_segment_with_a_backed_off_timer() {
    let mut s = sender_established();
    let rto = s.rto();
    s.handle_timeout(Instant::ZERO + rto);
    recv!(s, Instant::ZERO + rto, seq: 0, retransmission: true);
    recv_nothing!(s, Instant::ZERO + rto);
    assert_eq!(s.cwnd(), MSS);
    assert_eq!(s.poll_timeout(), Some(Instant::ZERO + rto + rto * 2));
}

/// After a timeout, the first ACK that covers both resent data and a segment sent for
/// the first time after the timeout: with one timed segment (ns-2, BSD) it is a valid
/// sample of that segment and ends the RTO backoff (RFC 6298 §5 note on Karn's
/// algorithm); with per-ACK sampling that refuses ACKs covering retransmitted data
/// (Linux without timestamps) the backed-off RTO stays.
#[test]
fn test_established_rtt_sampling_after_a_timeout() {
    use crate::tcp::RttSampling;
    let run = |sampling: RttSampling| -> (Duration, Duration) {
        let mut s = TcpSender::new(TcpConfig {
            rcv_buf: 100 * MSS,
            rtt_sampling: sampling,
            ..ns2()
        });
        s.set_unlimited();
        recv!(s, t_ms(0), seq: 0);
        recv!(s, t_ms(0), seq: 1000);
        recv_nothing!(s, t_ms(0));
        let t0 = t_ms(3000); // ns-2's initial RTO
        s.handle_timeout(t0);
        recv!(s, t0, seq: 0, retransmission: true);
        let backed_off = s.rto();
        // The ACK of the resent first segment: no sample either way (Karn).
        send!(
            s,
            t0 + Duration::from_millis(100),
            recv_templ(1000, 100 * MSS)
        );
        assert_eq!(
            s.rto(),
            backed_off,
            "{sampling:?}: sampled a retransmission"
        );
        // Slow start resends 1000.. and sends 2000.. for the first time.
        recv!(s, t0 + Duration::from_millis(100), seq: 1000, retransmission: true);
        recv!(s, t0 + Duration::from_millis(100), seq: 2000);
        send!(
            s,
            t0 + Duration::from_millis(200),
            recv_templ(3000, 100 * MSS)
        );
        (backed_off, s.rto())
    };
    let (backed_off, timed) = run(RttSampling::TimedSegment);
    assert_eq!(
        backed_off,
        Duration::from_secs(6),
        "3 s initial RTO doubled"
    );
    // One 100 ms sample: SRTT 100 ms, RTTVAR 50 ms, RTO max(200 ms, 100 + 4*50) = 300 ms.
    assert_eq!(timed, Duration::from_millis(300));
    let (_, every) = run(RttSampling::EveryAck);
    assert_eq!(every, backed_off);
}

// =====================================================================================
// Scoreboard (RFC 6675 §4)
// =====================================================================================

fn board(n: u64) -> Scoreboard {
    Scoreboard::sent_once(n, MSS)
}

#[test]
fn test_scoreboard_next_seg_rule_3_is_the_first_unsacked_hole_below_high_sack() {
    let mut b = board(6);
    assert_eq!(b.first_unsacked_below_high_sack(), None, "nothing SACKed");
    b.sack(2 * MSS, 3 * MSS);
    b.sack(4 * MSS, 5 * MSS);
    b.mark_lost(0);
    assert_eq!(b.first_unsacked_below_high_sack(), Some(1));
    b.retransmitted(1, t_ms(1));
    assert_eq!(b.first_unsacked_below_high_sack(), Some(3));
    b.retransmitted(3, t_ms(1));
    assert_eq!(
        b.first_unsacked_below_high_sack(),
        None,
        "5 is above HighSACK"
    );
}

// ----- NewReno after a timeout (RFC 6582 §3.2 step 1, §4) ---------------------------

/// An ns-2-like NewReno sender (no SACK) that timed out with ten segments out and
/// resent them all (go-back-N); `recover` is then 10 000, the byte after the highest
/// sent. The receiver acknowledges everything up to `acked`, then sends three
/// duplicate ACKs at `acked`.
fn newreno_dupacks_after_a_timeout_at(acked: u64) -> TcpSender {
    let mut s = TcpSender::new(TcpConfig {
        sack: false,
        recovery: crate::tcp::Recovery::NewReno,
        initial_window: crate::tcp::InitialWindow::Segments(10),
        rcv_buf: 1_000_000,
        ..ns2()
    });
    s.set_unlimited();
    let first: Vec<Segment> = std::iter::from_fn(|| s.poll_transmit(t_ms(0))).collect();
    assert_eq!(first.len(), 10);
    let rto_at = s.poll_timeout().expect("RTO armed");
    s.handle_timeout(rto_at);
    assert_eq!(s.stats().timeouts, 1);
    let mut t = rto_at;
    // Slow start resends 0..10 000 as the ACKs come back, then sends new data.
    let mut next = 1000;
    while next <= acked {
        t += Duration::from_millis(100);
        s.handle_segment(t, &recv_templ(next, 1_000_000));
        while s.poll_transmit(t).is_some() {}
        next += 1000;
    }
    assert!(
        s.snd_nxt() > acked,
        "new data beyond the acknowledged point is out"
    );
    for k in 1..=3 {
        s.handle_segment(t + Duration::from_millis(k), &recv_templ(acked, 1_000_000));
    }
    s
}

#[test]
fn newreno_dupacks_at_exactly_recover_after_a_timeout_do_not_fast_retransmit() {
    // They answer resent data the receiver already held: no second reduction.
    let s = newreno_dupacks_after_a_timeout_at(10_000);
    assert_eq!(s.stats().fast_retransmits, 0);
}

#[test]
fn newreno_dupacks_beyond_recover_after_a_timeout_fast_retransmit() {
    let s = newreno_dupacks_after_a_timeout_at(11_000);
    assert_eq!(s.stats().fast_retransmits, 1);
}

/// An ns-2 sender with four segments out and one RTT sample of 100 ms (RTO 300 ms)
/// whose duplicate ACKs come back 250 ms after the last new ACK, as when the ACKs of
/// a download wait behind an upload's data on a slow uplink (the `asym_updown` twin).
/// Returns the sender right after the third duplicate ACK, and that instant.
fn fast_retransmit_late_in_the_rto(restart: bool) -> (TcpSender, Instant) {
    let mut s = TcpSender::new(TcpConfig {
        rcv_buf: 100 * MSS,
        rto_restart_on_fast_retransmit: restart,
        ..ns2()
    });
    s.set_unlimited();
    recv!(s, t_ms(0), seq: 0);
    recv!(s, t_ms(0), seq: 1000);
    // The first segment's ACK: a 100 ms sample, cwnd 3, segments 2000..4000 out.
    send!(s, t_ms(100), recv_templ(1000, 100 * MSS));
    while s.poll_transmit(t_ms(100)).is_some() {}
    assert_eq!(s.rto(), Duration::from_millis(300));
    assert_eq!(s.poll_timeout(), Some(t_ms(400)));
    // 1000..2000 is lost; three duplicate ACKs arrive 250 ms later.
    for k in 0..3 {
        send!(s, t_ms(350 + k), recv_templ(1000, 100 * MSS));
    }
    assert_eq!(s.stats().fast_retransmits, 1);
    recv!(s, t_ms(352), seq: 1000, retransmission: true);
    (s, t_ms(352))
}

#[test]
fn ns2_fast_retransmit_restarts_the_retransmission_timer() {
    // ns-2.35 `NewRenoTcpAgent::dupack_action`: `reset_rtx_timer(1, 0)` before the
    // retransmission, so it has a whole RTO to be acknowledged.
    let (s, fr) = fast_retransmit_late_in_the_rto(true);
    assert!(TcpConfig::ns2().rto_restart_on_fast_retransmit);
    assert_eq!(s.poll_timeout(), Some(fr + s.rto()));
}

#[test]
fn rfc_fast_retransmit_leaves_the_retransmission_timer_running() {
    // RFC 6298 §5.3: only an ACK of new data restarts the timer; the retransmission
    // has the 50 ms left of the RTO armed by the last new ACK.
    let (s, _) = fast_retransmit_late_in_the_rto(false);
    assert!(!TcpConfig::default().rto_restart_on_fast_retransmit);
    assert_eq!(s.poll_timeout(), Some(t_ms(400)));
}

/// An ns-2 sender (limited transmit on) with 0..5000 out whose timer expires (cwnd 1,
/// 0..1000 resent), then two duplicate ACKs of 0 arrive, the receiver answering
/// segments sent before the timeout. Returns the starts of what the two send.
fn sent_on_dupacks_after_a_timeout(after_timeout: bool) -> Vec<u64> {
    let mut s = TcpSender::new(TcpConfig {
        rcv_buf: 100 * MSS,
        limited_transmit: true,
        limited_transmit_after_timeout: after_timeout,
        initial_window: crate::tcp::InitialWindow::Segments(5),
        ..ns2()
    });
    s.set_unlimited();
    let first: Vec<Segment> = std::iter::from_fn(|| s.poll_transmit(t_ms(0))).collect();
    assert_eq!(first.len(), 5);
    let rto_at = s.poll_timeout().expect("RTO armed");
    s.handle_timeout(rto_at);
    recv!(s, rto_at, seq: 0, retransmission: true);
    recv_nothing!(s, rto_at);
    let mut out = Vec::new();
    for k in 1..=2 {
        let t = rto_at + Duration::from_millis(k);
        s.handle_segment(t, &recv_templ(0, 100 * MSS));
        out.extend(std::iter::from_fn(|| s.poll_transmit(t)).map(|g| g.seq));
    }
    out
}

#[test]
fn ns2_limited_transmit_also_follows_a_timeout() {
    // ns-2.35 `RenoTcpAgent::timeout` zeroes `dupacks_`; `TcpAgent::send_one` then
    // sends the next packet of the resend on each of the first two duplicate ACKs
    // (`t_seqno_ <= highest_ack_ + cwnd_ + dupacks_`).
    assert!(TcpConfig::ns2().limited_transmit_after_timeout);
    assert_eq!(sent_on_dupacks_after_a_timeout(true), vec![1000, 2000]);
}

#[test]
fn rfc_limited_transmit_waits_for_the_end_of_a_timeout_recovery() {
    assert!(!TcpConfig::default().limited_transmit_after_timeout);
    assert_eq!(sent_on_dupacks_after_a_timeout(false), Vec::<u64>::new());
}
