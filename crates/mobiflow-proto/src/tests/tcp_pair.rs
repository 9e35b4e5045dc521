//! Behaviour tests of a whole TCP connection (sender + receiver) over a [`Pair`].
//!
//! Every test names the rule it checks and cites where the rule comes from. Unless a
//! test says otherwise the path is 50 ms each way (RTT 100 ms), segments carry 1000
//! bytes, and the receiving application reads greedily.

use super::pair::{Fate, Pair, Reader, Sent};
use super::{bottlenecked, ns2, ns2_profile, rfc, ONE_SEG_PER_MS};
use crate::cc::{CaState, CcKind};
use crate::tcp::{InitialWindow, Recovery, SenderEvent, TcpConfig};
use crate::time::test_util::{ms, t_ms};
use crate::time::{Duration, Instant};
use crate::wire::Flags;

const MSS: u64 = 1000;

fn arrival(s: &Sent) -> Instant {
    match s.fate {
        Fate::Arrives(t) => t,
        Fate::Dropped => panic!("segment {s:?} was dropped"),
    }
}

/// Arrival times at the sender of the ACKs that carry `ack`, in order.
fn ack_arrivals(p: &Pair, ack: u64) -> Vec<Instant> {
    p.acks()
        .filter(|s| s.seg.ack == ack && !s.dropped())
        .map(arrival)
        .collect()
}

/// Data segments the sender emitted at exactly `t`.
fn data_sent_at(p: &Pair, t: Instant) -> Vec<Sent> {
    p.fwd.data().filter(|s| s.at == t).copied().collect()
}

/// The sender's state right after everything at `t` was processed.
fn trace_at(p: &Pair, t: Instant) -> super::pair::CwndPoint {
    *p.trace
        .iter()
        .rev()
        .find(|c| c.at <= t)
        .expect("trace starts at zero")
}

/// A NewReno sender without SACK, delayed ACKs or limited transmit whose flight is
/// held at ten segments by the send window, over a path that spaces segments one
/// millisecond apart.
fn ns2_ten_segment_window() -> Pair {
    ns2_ten_segment_window_with(Recovery::NewReno)
}

fn ns2_ten_segment_window_with(recovery: Recovery) -> Pair {
    let cfg = TcpConfig {
        max_send_window: 10 * MSS,
        recovery,
        ..ns2()
    };
    bottlenecked(cfg)
}

// =====================================================================================
// Connection setup (RFC 9293 §3.5, RFC 7323 §2–§3, RFC 2018 §2)
// =====================================================================================

#[test]
fn handshake_exchanges_syn_and_syn_ack_before_any_data() {
    let mut p = Pair::new(rfc(), ms(50));
    p.write(10_000);
    p.drive_until(t_ms(99));
    assert!(!p.fwd.log.is_empty());
    let syn = p.fwd.log[0];
    assert_eq!(syn.at, Instant::ZERO);
    assert!(syn.seg.flags.contains(Flags::SYN));
    assert_eq!(syn.seg.mss, Some(1000));
    assert_eq!(p.fwd.data().count(), 0, "no data before the SYN-ACK");
    let syn_ack = p.rev.log[0];
    assert!(syn_ack.seg.flags.contains(Flags::SYN | Flags::ACK));
    assert_eq!(syn_ack.at, t_ms(50));
    assert!(!p.snd.is_established());

    p.drive_until(t_ms(100));
    assert!(p.snd.is_established());
    let first = p.fwd.data().next().expect("data after the SYN-ACK");
    assert_eq!(first.at, t_ms(100), "data one RTT after the SYN");
    assert_eq!(first.seg.seq, 0);
    // RFC 6298 §2.2: the SYN's RTT is the first sample.
    assert_eq!(p.snd.rtt().srtt(), Some(ms(100)));
}

#[test]
fn handshake_negotiates_sack_and_timestamps() {
    let mut p = Pair::new(rfc(), ms(50));
    p.write(10_000);
    p.drive_until(t_ms(50));
    let syn = p.fwd.log[0].seg;
    assert!(syn.sack_permitted);
    assert!(syn.ts.is_some());
    let syn_ack = p.rev.log[0].seg;
    assert!(syn_ack.sack_permitted);
    let ts = syn_ack.ts.expect("timestamps on the SYN-ACK");
    assert_eq!(
        ts.tsecr,
        syn.ts.unwrap().tsval,
        "SYN-ACK echoes the SYN's TSval"
    );
    p.drive();
    assert!(p.snd.sack_enabled());
    assert!(p.snd.timestamps_enabled());
    assert!(p.fwd.data().all(|s| s.seg.ts.is_some()));
    assert!(p.acks().all(|s| s.seg.ts.is_some()));
    assert_eq!(p.rcv.bytes_read(), 10_000);
}

#[test]
fn handshake_with_a_peer_without_sack_or_timestamps_turns_both_off() {
    let rcv = TcpConfig {
        sack: false,
        timestamps: false,
        recovery: Recovery::NewReno,
        ..rfc()
    };
    let mut p = Pair::with_configs(rfc(), rcv, ms(50));
    p.write(10_000);
    p.drive();
    assert!(!p.rev.log[0].seg.sack_permitted);
    assert!(p.rev.log[0].seg.ts.is_none());
    assert!(!p.snd.sack_enabled());
    assert!(!p.snd.timestamps_enabled());
    assert!(p.fwd.data().all(|s| s.seg.ts.is_none()));
    assert_eq!(p.rcv.bytes_read(), 10_000);
}

#[test]
fn no_handshake_profile_sends_the_initial_window_at_once() {
    let mut p = Pair::new(ns2(), ms(50));
    p.write(10_000);
    p.drive_until(Instant::ZERO);
    let first: Vec<_> = data_sent_at(&p, Instant::ZERO);
    assert_eq!(first.len(), 2, "ns-2 windowInit_ 2");
    assert!(p.fwd.log.iter().all(|s| !s.seg.flags.contains(Flags::SYN)));
    p.drive();
    assert_eq!(p.rcv.bytes_read(), 10_000);
}

/// ns-2.35's one-way TCP with its defaults `syn_ true` and `delay_growth_ true`
/// (`tcl/lib/ns-default.tcl`; `TcpAgent::output` sends seqno 0 as a 40-byte packet,
/// `NewRenoTcpAgent::recv` sets cwnd to `windowInit_` when it is acknowledged): the
/// `ns2` profile sends a header-only SYN, and its two-packet initial window one RTT
/// later, timed from the SYN's RTT.
#[test]
fn ns2_profile_sends_a_header_only_syn_and_the_initial_window_one_rtt_later() {
    let mut p = Pair::new(ns2_profile(), ms(50));
    p.write(10_000);
    p.drive_until(t_ms(99));
    let syn = p.fwd.log[0];
    assert_eq!(syn.at, Instant::ZERO);
    assert!(syn.seg.flags.contains(Flags::SYN));
    assert_eq!(syn.seg.len, 0, "the SYN carries no data");
    assert_eq!(
        p.fwd.data().count(),
        0,
        "no data before the SYN is acknowledged"
    );
    p.drive_until(t_ms(100));
    assert_eq!(
        data_sent_at(&p, t_ms(100)).len(),
        2,
        "windowInit_ 2 after the SYN"
    );
    assert_eq!(
        p.snd.rtt().srtt(),
        Some(ms(100)),
        "the SYN's RTT is the first sample"
    );
    assert!(!p.snd.sack_enabled() && !p.snd.timestamps_enabled());
    p.drive();
    assert_eq!(p.rcv.bytes_read(), 10_000);
}

/// ns-2.35's default `singledup_ 1` (`TcpAgent::send_one`; RFC 3042): the `ns2`
/// profile sends one new packet on each of the first two duplicate ACKs.
#[test]
fn ns2_profile_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let cfg = TcpConfig {
        max_cwnd: 10 * MSS,
        ..ns2_profile()
    };
    let p = segment_30000_lost_once(cfg);
    assert_one_new_segment_on_the_first_two_dupacks(&p, "third dupACK: fast retransmit");
}

#[test]
fn lost_syn_is_resent_after_the_initial_rto_and_data_starts_with_one_segment() {
    let mut p = Pair::new(rfc(), ms(50));
    p.fwd.drop_once_if(|_, s| s.flags.contains(Flags::SYN));
    p.write(20_000);
    p.drive_until(Instant::from_secs(1) + ms(100));
    let syns: Vec<_> = p
        .fwd
        .log
        .iter()
        .filter(|s| s.seg.flags.contains(Flags::SYN))
        .map(|s| s.at)
        .collect();
    assert_eq!(
        syns,
        vec![Instant::ZERO, Instant::from_secs(1)],
        "RFC 6298 §2.1"
    );
    let t_data = Instant::from_secs(1) + ms(100);
    // RFC 5681 §3.1 (and RFC 3390 §2): the initial window is one segment when the
    // SYN was lost.
    assert_eq!(data_sent_at(&p, t_data).len(), 1);
    // RFC 6298 §5.7: after a timeout on the SYN, the RTO is 3 s when data starts.
    assert_eq!(p.snd.rto(), Duration::from_secs(3));
    p.drive();
    assert_eq!(p.rcv.bytes_read(), 20_000);
}

#[test]
fn lost_syn_ack_is_repaired_by_the_syn_retransmission() {
    let mut p = Pair::new(rfc(), ms(50));
    p.rev.drop_once_if(|_, s| s.flags.contains(Flags::SYN));
    p.write(20_000);
    p.drive();
    let syn_acks = p
        .rev
        .log
        .iter()
        .filter(|s| s.seg.flags.contains(Flags::SYN))
        .count();
    assert_eq!(syn_acks, 2, "the second SYN is answered again");
    assert_eq!(
        p.fwd
            .log
            .iter()
            .filter(|s| s.seg.flags.contains(Flags::SYN))
            .count(),
        2
    );
    let t_data = Instant::from_secs(1) + ms(100);
    assert_eq!(
        data_sent_at(&p, t_data).len(),
        1,
        "RFC 5681 §3.1: one segment"
    );
    assert_eq!(p.rcv.bytes_read(), 20_000);
}

/// The RFC profile without a handshake and with an initial window of 4 segments, 50 ms
/// each way: the set-up of the slow-start, idle-restart and delayed-ACK tests.
fn iw4_pair() -> Pair {
    let cfg = TcpConfig {
        handshake: false,
        initial_window: InitialWindow::Segments(4),
        ..rfc()
    };
    Pair::new(cfg, ms(50))
}

// =====================================================================================
// Congestion window: slow start, congestion avoidance, idle restart, CUBIC's
// reduction (RFC 5681 §3.1 and §4.1, RFC 9438 §4.6)
// =====================================================================================

#[test]
fn slow_start_doubles_the_window_every_rtt_without_delayed_acks() {
    let mut p = Pair::new(ns2(), ms(50));
    p.set_unlimited();
    p.drive_until(t_ms(650));
    // No delayed ACKs: every segment is acknowledged, each ACK adds one segment, so
    // round k sends 2 * 2^k segments, all at k * RTT.
    for k in 0..7u64 {
        let t = t_ms(100 * k);
        assert_eq!(data_sent_at(&p, t).len() as u64, 2 << k, "round {k}");
        assert_eq!(trace_at(&p, t).cwnd, (2 << k) * MSS, "cwnd after round {k}");
    }
    assert_eq!(p.snd.stats().retransmits, 0);
}

#[test]
fn slow_start_grows_about_one_and_a_half_times_per_rtt_with_delayed_acks() {
    let mut p = iw4_pair();
    p.set_unlimited();
    p.drive_until(t_ms(750));
    // RFC 5681 §3.1 eq. (2): cwnd += min(N, SMSS) per ACK, and an ACK covers two
    // segments, so cwnd grows by exactly one segment per ACK ...
    let acks_before = |t: Instant| {
        let mut una = 0;
        p.acks()
            .filter(|s| arrival(s) <= t)
            .filter(|s| {
                let new = s.seg.ack > una;
                una = una.max(s.seg.ack);
                new
            })
            .count() as u64
    };
    for k in 1..8u64 {
        let t = t_ms(100 * k);
        assert_eq!(
            trace_at(&p, t).cwnd,
            4 * MSS + acks_before(t) * MSS,
            "cwnd at {t:?}"
        );
    }
    // ... which is about half a window per round: 4, 6, 9, 13-14, ...
    let per_round: Vec<u64> = (0..7u64)
        .map(|k| {
            p.fwd
                .data()
                .filter(|s| s.at >= t_ms(100 * k) && s.at < t_ms(100 * (k + 1)))
                .count() as u64
        })
        .collect();
    for k in 1..per_round.len() {
        let ratio = per_round[k] as f64 / per_round[k - 1] as f64;
        assert!(
            (1.3..=1.7).contains(&ratio),
            "segments per round {per_round:?}, ratio {ratio} at round {k}"
        );
    }
}

#[test]
fn slow_start_gives_way_to_congestion_avoidance_at_ssthresh() {
    let cfg = TcpConfig {
        initial_ssthresh: 8 * MSS,
        ..ns2()
    };
    let mut p = Pair::new(cfg, ms(50));
    p.set_unlimited();
    p.drive_until(t_ms(1050));
    // 2, 4, 8 segments in slow start, then one more segment per RTT (eq. 3).
    let per_round: Vec<usize> = (0..10u64)
        .map(|k| data_sent_at(&p, t_ms(100 * k)).len())
        .collect();
    assert_eq!(&per_round[..3], &[2, 4, 8]);
    for k in 4..10 {
        let c = trace_at(&p, t_ms(100 * k) + ms(1)).cwnd;
        let c_prev = trace_at(&p, t_ms(100 * (k - 1)) + ms(1)).cwnd;
        assert!(
            c - c_prev <= MSS + MSS / 4 && c > c_prev,
            "congestion avoidance grows by about one segment per RTT: {c_prev} -> {c}"
        );
    }
}

#[test]
fn idle_restart_begins_again_from_the_initial_window() {
    let mut p = iw4_pair();
    p.write(100_000);
    p.drive();
    assert!(p.snd.cwnd() > 20 * MSS);
    // RFC 5681 §4.1: idle for more than an RTO, the window restarts at min(IW, cwnd).
    p.drive_until(Instant::from_secs(10));
    p.write(100_000);
    assert_eq!(data_sent_at(&p, Instant::from_secs(10)).len(), 4);
    p.drive();
    assert_eq!(p.rcv.bytes_read(), 200_000);
}

#[test]
fn cubic_fast_retransmit_keeps_seven_tenths_of_the_window() {
    let cfg = TcpConfig {
        cc: CcKind::Cubic(Default::default()),
        max_cwnd: 20 * MSS,
        limited_transmit: false,
        ..rfc()
    };
    let mut p = bottlenecked(cfg);
    p.bulk_losing(&[60_000], Instant::from_secs(3));
    let entry = p.first_time_in(CaState::Recovery).unwrap();
    let c = trace_at(&p, entry);
    // RFC 9438 §4.6: ssthresh = cwnd * beta_cubic, cwnd = ssthresh.
    assert_eq!(c.ssthresh, 14 * MSS);
    assert_eq!(c.cwnd, 14 * MSS);
    assert_eq!(p.snd.stats().timeouts, 0);
}

// =====================================================================================
// Delayed ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2)
// =====================================================================================

#[test]
fn delayed_ack_acknowledges_every_second_full_sized_segment() {
    let mut p = iw4_pair();
    p.write(40_000);
    p.drive();
    let acks: Vec<u64> = p.acks().map(|s| s.seg.ack).collect();
    assert_eq!(&acks[..2], &[2000, 4000]);
    assert_eq!(
        p.acks().next().unwrap().at,
        t_ms(50),
        "sent as the 2nd arrives"
    );
    // Every ACK covers two new segments, except those the timer sends.
    let mut prev = 0;
    let mut timer_acks = 0;
    for s in p.acks() {
        let d = s.seg.ack - prev;
        if d != 2 * MSS {
            assert_eq!(d, MSS);
            timer_acks += 1;
        }
        prev = s.seg.ack;
    }
    assert!(timer_acks <= 3, "{acks:?}");
    assert_eq!(*acks.last().unwrap(), 40_000);
}

#[test]
fn delayed_ack_timer_acknowledges_a_lone_segment() {
    let mut p = iw4_pair();
    p.write(3000);
    p.drive();
    let acks: Vec<(Instant, u64)> = p.acks().map(|s| (s.at, s.seg.ack)).collect();
    // Two segments: an ACK at once; the third waits for the delayed-ACK timeout.
    assert_eq!(acks, vec![(t_ms(50), 2000), (t_ms(250), 3000)]);
}

#[test]
fn without_delayed_acks_every_segment_is_acknowledged_at_once() {
    let mut p = Pair::new(ns2(), ms(50));
    p.write(10_000);
    p.drive();
    assert_eq!(p.acks().count(), 10);
    for s in p.acks() {
        let data = p
            .fwd
            .data()
            .find(|d| d.seg.seq + d.seg.len as u64 == s.seg.ack)
            .unwrap();
        assert_eq!(arrival(data), s.at);
    }
}

#[test]
fn a_fast_recovery_and_a_timeout_are_queued_as_events_in_their_order() {
    // `tcp::event`: one loss repaired by fast retransmit (entry, then exit on the full
    // ACK), then a blackout that only the retransmission timer ends.
    let mut p = Pair::new(rfc(), ms(50));
    p.fwd.drop_first_tx_of(10_000);
    p.fwd.blackout(t_ms(1_000), t_ms(3_000));
    p.set_unlimited();
    p.drive_until(t_ms(4_000));
    let kinds: Vec<SenderEvent> = p.snd_events.iter().map(|e| e.1).collect();
    let first = |e: SenderEvent| kinds.iter().position(|k| *k == e);
    let (entered, exited, timeout) = (
        first(SenderEvent::RecoveryEntered).expect("a fast retransmit"),
        first(SenderEvent::RecoveryExited).expect("its end"),
        first(SenderEvent::Timeout).expect("a timeout"),
    );
    assert!(entered < exited && exited < timeout, "{kinds:?}");
    let count = |e: SenderEvent| kinds.iter().filter(|k| **k == e).count() as u64;
    let s = p.snd.stats();
    assert_eq!(count(SenderEvent::RecoveryEntered), s.fast_retransmits);
    assert_eq!(count(SenderEvent::Timeout), s.timeouts);
    assert_eq!(p.snd.poll_event(), None, "the pair drained them all");
}

// =====================================================================================
// Out-of-order data and SACK blocks (RFC 5681 §4.2, RFC 2018 §4)
// =====================================================================================

#[test]
fn out_of_order_segment_triggers_an_immediate_dupack_with_a_sack_block() {
    let mut p = iw4_pair();
    p.fwd.drop_first_tx_of(1000);
    p.write(4000);
    p.drive_until(t_ms(50));
    let acks: Vec<_> = p.acks().map(|s| s.seg).collect();
    assert_eq!(acks.len(), 2, "{acks:?}");
    for a in &acks {
        assert_eq!(a.ack, 1000);
    }
    assert_eq!(acks[0].sack.iter().collect::<Vec<_>>(), vec![(2000, 3000)]);
    assert_eq!(acks[1].sack.iter().collect::<Vec<_>>(), vec![(2000, 4000)]);
    assert!(
        p.acks().all(|s| s.at == t_ms(50)),
        "no delay for out-of-order data"
    );
}

#[test]
fn first_sack_block_holds_the_most_recently_received_segment() {
    let cfg = TcpConfig {
        handshake: false,
        initial_window: InitialWindow::Segments(8),
        ..rfc()
    };
    let mut p = bottlenecked(cfg);
    p.fwd.drop_first_tx_of(1000);
    p.fwd.drop_first_tx_of(3000);
    p.fwd.drop_first_tx_of(6000);
    // Segment 4000 overtakes 2000 so the newest block is not the highest one.
    p.fwd.delay_first_tx_of(2000, ms(10));
    p.write(8000);
    p.drive_until(t_ms(70));
    let blocks: Vec<Vec<(u64, u64)>> = p
        .acks()
        .filter(|s| !s.seg.sack.is_empty())
        .map(|s| s.seg.sack.iter().collect())
        .collect();
    assert_eq!(
        blocks,
        vec![
            vec![(4000, 5000)],
            vec![(4000, 6000)],
            vec![(7000, 8000), (4000, 6000)],
            vec![(2000, 3000), (7000, 8000), (4000, 6000)],
        ]
    );
}

#[test]
fn segment_that_fills_a_hole_is_acknowledged_at_once() {
    let mut p = iw4_pair();
    p.fwd.delay_first_tx_of(1000, ms(10));
    p.write(4000);
    p.drive();
    let acks: Vec<(Instant, u64)> = p.acks().map(|s| (s.at, s.seg.ack)).collect();
    // 0 (delayed, then folded into the dupACK for 2000), 2000 and 3000 out of order,
    // then 1000 fills the hole 10 ms later and is acknowledged at once.
    assert_eq!(
        acks,
        vec![(t_ms(50), 1000), (t_ms(50), 1000), (t_ms(60), 4000)]
    );
}

// =====================================================================================
// Fast retransmit and NewReno recovery without SACK (RFC 5681 §3.2, RFC 6582)
// =====================================================================================

#[test]
fn three_dupacks_trigger_fast_retransmit_and_ssthresh_is_half_the_flight() {
    let mut p = ns2_ten_segment_window();
    p.bulk_losing(&[30_000], Instant::from_secs(2));
    // The first ACK carrying 30_000 is new; the next three are duplicates.
    let a = ack_arrivals(&p, 30_000);
    assert!(a.len() >= 4, "{a:?}");
    assert!(
        a[1] < a[2] && a[2] < a[3],
        "dupACKs are spaced by the bottleneck"
    );
    let tx = p.fwd.tx_times(30_000);
    assert_eq!(tx.len(), 2, "one fast retransmission, nothing else: {tx:?}");
    assert_eq!(tx[1], a[3], "retransmitted on the third dupACK, not before");
    assert!(p
        .fwd
        .log
        .iter()
        .any(|s| s.at == tx[1] && s.seg.retransmission));
    let c = trace_at(&p, a[3]);
    assert_eq!(c.ca, CaState::Recovery);
    // FlightSize was ten segments: ssthresh = FlightSize / 2 (eq. 4), and cwnd is
    // inflated by the three segments that left the network (§3.2 step 4).
    assert_eq!(c.ssthresh, 5 * MSS);
    assert_eq!(c.cwnd, 8 * MSS);
    assert_eq!(p.snd.stats().fast_retransmits, 1);
    assert_eq!(p.snd.stats().timeouts, 0);
}

#[test]
fn two_dupacks_from_reordering_do_not_trigger_a_retransmission() {
    let mut p = ns2_ten_segment_window();
    // 30_000 arrives after 31_000 and 32_000 but before 33_000.
    p.fwd
        .delay_first_tx_of(30_000, Duration::from_micros(2_500));
    p.set_unlimited();
    p.drive_until(Instant::from_secs(2));
    assert_eq!(
        ack_arrivals(&p, 30_000).len(),
        3,
        "one new ACK and two dupACKs"
    );
    assert_eq!(p.snd.stats().retransmits, 0);
    assert!(p.trace.iter().all(|c| c.ca == CaState::Open));
}

/// Two losses in one window: 30_000 and 34_000.
fn ns2_two_losses(recovery: Recovery) -> Pair {
    let mut p = ns2_ten_segment_window_with(recovery);
    p.bulk_losing(&[30_000, 34_000], Instant::from_secs(3));
    p
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole_without_leaving_recovery() {
    let p = ns2_two_losses(Recovery::NewReno);
    let partial = ack_arrivals(&p, 34_000)[0];
    let tx = p.fwd.tx_times(34_000);
    assert_eq!(tx.len(), 2, "{tx:?}");
    assert_eq!(tx[1], partial, "RFC 6582 §3.2 step 5: retransmit at once");
    let c = trace_at(&p, partial);
    assert_eq!(
        c.ca,
        CaState::Recovery,
        "a partial ACK does not end recovery"
    );
    assert_eq!(c.ssthresh, 5 * MSS, "and does not reduce the window again");
    assert_eq!(p.snd.stats().fast_retransmits, 1);
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.snd.stats().retransmits, 2);
}

#[test]
fn newreno_full_ack_ends_recovery_and_deflates_cwnd_to_ssthresh() {
    let p = ns2_two_losses(Recovery::NewReno);
    // `recover` is 40_000, the highest byte sent when recovery began.
    let full = ack_arrivals(&p, 40_000)[0];
    let before = trace_at(&p, full - Duration::from_nanos(1));
    assert_eq!(before.ca, CaState::Recovery);
    assert!(before.cwnd > 5 * MSS, "inflated during recovery");
    let c = trace_at(&p, full);
    assert_eq!(c.ca, CaState::Open);
    assert_eq!(c.ssthresh, 5 * MSS);
    // RFC 6582 §3.2 step 3 option (2): cwnd = ssthresh. The full ACK itself may then
    // count towards congestion avoidance (at most one segment, as Linux and ns-2).
    assert!(
        c.cwnd >= c.ssthresh && c.cwnd <= c.ssthresh + MSS,
        "cwnd {} after the full ACK",
        c.cwnd
    );
}

#[test]
fn reno_leaves_recovery_on_the_first_new_ack() {
    let p = ns2_two_losses(Recovery::Reno);
    let partial = ack_arrivals(&p, 34_000)[0];
    let c = trace_at(&p, partial);
    assert_eq!(c.ca, CaState::Open, "RFC 5681 §3.2 step 6");
    assert_eq!(c.ssthresh, 5 * MSS);
    assert!(
        c.cwnd >= c.ssthresh && c.cwnd <= c.ssthresh + MSS,
        "deflated"
    );
    // Nothing is left to produce dupACKs: the second hole waits for the timer.
    let tx = p.fwd.tx_times(34_000);
    assert!(tx.len() >= 2 && tx[1] > partial + ms(150), "{tx:?}");
    assert_eq!(p.snd.stats().timeouts, 1);
}

// =====================================================================================
// SACK-based loss recovery (RFC 6675)
// =====================================================================================

/// The RFC profile, window held at twenty segments by the send window.
fn sack_twenty_segment_window() -> Pair {
    let cfg = TcpConfig {
        max_send_window: 20 * MSS,
        ..rfc()
    };
    bottlenecked(cfg)
}

#[test]
fn sack_recovery_repairs_two_losses_in_one_window_without_a_timeout() {
    let mut p = sack_twenty_segment_window();
    p.bulk_losing(&[60_000, 65_000], Instant::from_secs(3));
    let st = p.snd.stats();
    assert_eq!(st.timeouts, 0);
    assert_eq!(st.fast_retransmits, 1);
    assert_eq!(st.retransmits, 2, "each hole is resent once");
    let entry = p.first_time_in(CaState::Recovery).unwrap();
    let exit = p
        .trace
        .iter()
        .find(|c| c.at > entry && c.ca == CaState::Open)
        .unwrap()
        .at;
    for seq in [60_000, 65_000] {
        let tx = p.fwd.tx_times(seq);
        assert_eq!(tx.len(), 2);
        assert!(
            tx[1] >= entry && tx[1] < exit,
            "{seq} resent during recovery"
        );
    }
    // Both retransmissions go out within one RTT of entering recovery.
    assert!(p.fwd.tx_times(65_000)[1] < entry + ms(100));
    assert!(p.snd.snd_una() > 100_000);
}

#[test]
fn sack_recovery_sets_ssthresh_and_cwnd_to_half_the_flight() {
    let mut p = sack_twenty_segment_window();
    // Late enough for cwnd to exceed the send window: the flight is 20 segments.
    p.bulk_losing(&[60_000], Instant::from_secs(3));
    let entry = p.first_time_in(CaState::Recovery).unwrap();
    let c = trace_at(&p, entry);
    let first_dupack = ack_arrivals(&p, 60_000)[1];
    let high = p
        .fwd
        .data()
        .filter(|s| s.at < first_dupack)
        .map(|s| s.seg.seq + s.seg.len as u64)
        .max()
        .unwrap();
    assert_eq!(high - 60_000, 20 * MSS);
    // RFC 6675 §5 step 4.2: ssthresh = cwnd = FlightSize / 2.
    assert_eq!(c.ssthresh, 10 * MSS);
    assert_eq!(c.cwnd, 10 * MSS);
    assert_eq!(p.snd.stats().retransmits, 1);
}

#[test]
fn sack_recovery_without_sack_from_the_peer_still_repairs_two_losses() {
    // The sender asks for SACK recovery but the peer does not permit SACK: the
    // sender must fall back to NewReno rather than wait for the timer.
    let snd = TcpConfig {
        max_send_window: 10 * MSS,
        ..rfc()
    };
    let rcv = TcpConfig {
        sack: false,
        recovery: Recovery::NewReno,
        ..snd.clone()
    };
    let mut p = Pair::with_configs(snd, rcv, ms(50));
    p.fwd.rate_bps = Some(ONE_SEG_PER_MS);
    p.bulk_losing(&[30_000, 34_000], Instant::from_secs(3));
    assert!(!p.snd.sack_enabled());
    assert_eq!(p.snd.stats().fast_retransmits, 1);
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.snd.stats().retransmits, 2);
}

#[test]
fn sack_recovery_repairs_a_hole_near_the_end_of_the_data_without_a_timeout() {
    // 20 segments and nothing more to send; 5_000 and 18_000 are lost. Only one
    // segment (19_000) is SACKed above 18_000, so IsLost never holds for it: RFC 6675
    // NextSeg rule 3 resends it once nothing else can be sent.
    for recovery in [Recovery::NewReno, Recovery::Sack] {
        let cfg = TcpConfig {
            recovery,
            sack: recovery == Recovery::Sack,
            initial_window: InitialWindow::Segments(20),
            ..rfc()
        };
        let mut p = bottlenecked(cfg);
        p.fwd.drop_first_tx_of(5_000);
        p.fwd.drop_first_tx_of(18_000);
        p.write(20_000);
        p.drive();
        assert_eq!(p.rcv.bytes_read(), 20_000);
        assert_eq!(p.snd.stats().timeouts, 0, "{recovery:?}");
        assert_eq!(p.snd.stats().retransmits, 2, "{recovery:?}");
    }
}

// =====================================================================================
// Limited transmit (RFC 3042, RFC 6675 §5 step 3)
// =====================================================================================

/// A sender whose cwnd is capped at ten segments (rwnd is large), one loss at 30_000.
fn limited_transmit_pair(sack: bool, limited_transmit: bool) -> Pair {
    let base = if sack {
        TcpConfig {
            handshake: false,
            delayed_ack: false,
            ..rfc()
        }
    } else {
        ns2()
    };
    segment_30000_lost_once(TcpConfig {
        max_cwnd: 10 * MSS,
        limited_transmit,
        ..base
    })
}

/// A greedy connection with `cfg` over a bottleneck of one segment per ms whose first
/// transmission of sequence 30 000 is lost, driven for 2 s.
fn segment_30000_lost_once(cfg: TcpConfig) -> Pair {
    let mut p = bottlenecked(cfg);
    p.bulk_losing(&[30_000], Instant::from_secs(2));
    p
}

/// RFC 3042: one new segment on each of the first two duplicate ACKs, none on the
/// third (`third`: why), which fast-retransmits 30 000.
fn assert_one_new_segment_on_the_first_two_dupacks(p: &Pair, third: &str) {
    let a = ack_arrivals(p, 30_000);
    assert_eq!(new_data_sent_at(p, a[1]), 1, "first dupACK");
    assert_eq!(new_data_sent_at(p, a[2]), 1, "second dupACK");
    assert_eq!(new_data_sent_at(p, a[3]), 0, "{third}");
    assert_eq!(p.fwd.tx_times(30_000)[1], a[3]);
}

fn new_data_sent_at(p: &Pair, t: Instant) -> usize {
    data_sent_at(p, t)
        .iter()
        .filter(|s| !s.seg.retransmission)
        .count()
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let p = limited_transmit_pair(false, true);
    assert_one_new_segment_on_the_first_two_dupacks(&p, "third dupACK: fast retransmit only");
}

#[test]
fn limited_transmit_with_sack_sends_one_new_segment_per_dupack() {
    let p = limited_transmit_pair(true, true);
    let a = ack_arrivals(&p, 30_000);
    assert_eq!(new_data_sent_at(&p, a[1]), 1, "first dupACK");
    assert_eq!(new_data_sent_at(&p, a[2]), 1, "second dupACK");
    assert_eq!(p.fwd.tx_times(30_000)[1], a[3]);
}

#[test]
fn limited_transmit_segments_are_not_counted_in_ssthresh() {
    for sack in [false, true] {
        let p = limited_transmit_pair(sack, true);
        let entry = p.first_time_in(CaState::Recovery).unwrap();
        // RFC 5681 §3.2 step 2 and RFC 6675 §5 step 4.2: FlightSize is the ten
        // segments of cwnd, not the twelve that include limited transmit.
        assert_eq!(trace_at(&p, entry).ssthresh, 5 * MSS, "sack = {sack}");
    }
}

#[test]
fn without_limited_transmit_dupacks_send_no_new_data() {
    for sack in [false, true] {
        let p = limited_transmit_pair(sack, false);
        let a = ack_arrivals(&p, 30_000);
        assert_eq!(new_data_sent_at(&p, a[1]), 0, "sack = {sack}");
        assert_eq!(new_data_sent_at(&p, a[2]), 0, "sack = {sack}");
        assert_eq!(trace_at(&p, a[3]).ssthresh, 5 * MSS, "sack = {sack}");
    }
}

// =====================================================================================
// Retransmission timeout (RFC 6298 §5, RFC 5681 §3.1)
// =====================================================================================

#[test]
fn rto_fires_one_rto_after_the_last_ack_on_a_tail_loss() {
    let mut p = Pair::new(ns2(), ms(50));
    p.fwd.drop_nth_data(9); // the last segment, 9_000
    p.write(10_000);
    // The last ACK for new data (8_000 -> 9_000) restarts the timer (§5.3).
    p.drive_until(t_ms(300));
    let last_ack = ack_arrivals(&p, 9_000)[0];
    assert_eq!(last_ack, t_ms(300));
    let rto = p.snd.rto();
    assert!(rto >= ms(200) && rto <= ms(400), "rto {rto:?}");
    p.drive();
    let tx = p.fwd.tx_times(9_000);
    assert_eq!(tx, vec![t_ms(200), last_ack + rto]);
    assert_eq!(p.snd.stats().timeouts, 1);
    assert_eq!(p.rcv.bytes_read(), 10_000);
}

#[test]
fn rto_backs_off_exponentially_across_consecutive_timeouts_up_to_max_rto() {
    let cfg = TcpConfig {
        max_rto: Duration::from_secs(3),
        ..ns2()
    };
    let mut p = Pair::new(cfg, ms(50));
    // Everything the sender sends from 1 s on is lost.
    p.fwd.drop_if(|t, _| t >= Instant::from_secs(1));
    p.set_unlimited();
    p.drive_until(Instant::from_secs(1));
    // The ACKs in flight at 1 s still arrive; snapshot the RTO after the last one.
    let last_ack = p.rev.log.iter().map(arrival).max().unwrap();
    p.drive_until(last_ack);
    let una_after = p.snd.snd_una();
    let rto = p.snd.rto();
    p.drive_until(Instant::from_secs(30));
    let tx = p.fwd.tx_times(una_after);
    assert!(tx.len() >= 7, "{tx:?}");
    // First retransmission one RTO after the timer was last restarted, then the
    // gaps double (§5.5) until max_rto caps them.
    assert_eq!(tx[1], last_ack + rto);
    for i in 2..tx.len() {
        let expect = rto.saturating_mul(1 << (i - 1)).min(Duration::from_secs(3));
        assert_eq!(tx[i] - tx[i - 1], expect, "gap {i}: {tx:?}");
    }
    // Only the segment at snd_una is retransmitted while nothing comes back.
    assert_eq!(p.fwd.retransmissions().count(), tx.len() - 1);
}

#[test]
fn rto_collapses_cwnd_to_one_segment_and_halves_the_flight() {
    let mut p = ns2_ten_segment_window();
    p.fwd.drop_if(|t, _| t >= Instant::from_secs(1));
    p.set_unlimited();
    p.drive_until(Instant::from_secs(10));
    let first_rto = p.first_time_in(CaState::Loss).unwrap();
    let c = trace_at(&p, first_rto);
    assert_eq!(c.cwnd, MSS, "RFC 5681 §3.1: cwnd = LW = 1 segment");
    assert_eq!(c.ssthresh, 5 * MSS, "ssthresh = FlightSize / 2");
    assert_eq!(
        data_sent_at(&p, first_rto).len(),
        1,
        "one segment after the RTO"
    );
}

#[test]
fn after_a_timeout_slow_start_resends_the_window_and_completes() {
    let mut p = ns2_ten_segment_window();
    // A 300 ms outage in the forward path.
    p.fwd
        .blackout(Instant::from_secs(1), Instant::from_secs(1) + ms(300));
    p.write(200_000);
    p.drive();
    assert_eq!(p.rcv.bytes_read(), 200_000);
    assert!(p.snd.stats().timeouts >= 1);
    assert_eq!(p.rcv.stats().buffer_drops, 0);
}

// =====================================================================================
// RTT sampling (RFC 6298 §3 Karn's rule, RFC 7323 §4)
// =====================================================================================

#[test]
fn rtt_samples_match_the_path_rtt() {
    use crate::tcp::RttSampling;
    // Every ACK of new data is a sample, or one timed segment per round trip (ns-2):
    // 50 segments in slow start from 2 take 5 rounds (2+4+8+16+20).
    for (sampling, lo, hi) in [
        (RttSampling::EveryAck, 40, 50),
        (RttSampling::TimedSegment, 5, 6),
    ] {
        let cfg = TcpConfig {
            rtt_sampling: sampling,
            ..ns2()
        };
        let mut p = Pair::new(cfg, ms(50));
        p.write(50_000);
        p.drive();
        let st = &p.snd.stats().rtt;
        assert!(
            (lo..=hi).contains(&st.count),
            "{sampling:?}: {} samples",
            st.count
        );
        assert_eq!(st.min, Some(ms(100)));
        assert_eq!(st.max, Some(ms(100)));
        assert_eq!(p.snd.rtt().srtt(), Some(ms(100)));
    }
}

#[test]
fn karn_no_rtt_sample_from_an_ack_of_a_retransmitted_segment() {
    // Without timestamps the ACK of a retransmission is ambiguous, and so is any ACK
    // that covers a retransmitted segment: it may have been sent when the
    // retransmission filled the hole, long after the later segments arrived.
    for drop in [vec![9_000], vec![30_000], vec![30_000, 34_000]] {
        let mut p = ns2_ten_segment_window();
        for &d in &drop {
            p.fwd.drop_first_tx_of(d);
        }
        p.write(60_000);
        p.drive();
        let st = &p.snd.stats().rtt;
        assert!(p.snd.stats().retransmits >= 1);
        // The path RTT is 100 ms plus at most ten segments of serialisation.
        assert!(
            st.max.unwrap() <= ms(112),
            "drops {drop:?}: an RTT sample of {:?} came from a retransmission",
            st.max.unwrap()
        );
    }
}

#[test]
fn timestamps_give_rtt_samples_after_a_retransmission() {
    let cfg = TcpConfig {
        handshake: false,
        delayed_ack: false,
        ..rfc()
    };
    let mut p = Pair::new(cfg, ms(50));
    p.fwd.drop_first_tx_of(9_000);
    p.write(10_000);
    while p.fwd.tx_times(9_000).len() < 2 {
        assert!(p.step());
    }
    let before = p.snd.stats().rtt.count;
    p.drive();
    assert_eq!(p.snd.stats().timeouts, 1);
    assert_eq!(p.snd.stats().rtt.count, before + 1, "RFC 7323 §4.1");
    assert_eq!(p.snd.rtt().latest(), Some(ms(100)));
}

#[test]
fn without_timestamps_the_ack_of_a_timed_out_segment_gives_no_sample() {
    let mut p = Pair::new(ns2(), ms(50));
    p.fwd.drop_first_tx_of(9_000);
    p.write(10_000);
    p.drive_until(t_ms(300));
    let before = p.snd.stats().rtt.count;
    p.drive();
    assert_eq!(p.snd.stats().timeouts, 1);
    assert_eq!(p.snd.stats().rtt.count, before, "Karn's rule (RFC 6298 §3)");
}

// =====================================================================================
// Flow control: receive window, zero window, persist timer, window updates, SWS
// (RFC 9293 §3.8.6, RFC 1122 §4.2.2.17 and §4.2.3.3)
// =====================================================================================

/// RFC profile without handshake, a 20_000-byte receive buffer (no window scaling).
fn small_buffer(rcv_buf: u64) -> Pair {
    let cfg = TcpConfig {
        handshake: false,
        rcv_buf,
        persist_max: Duration::from_secs(16),
        ..rfc()
    };
    Pair::new(cfg, ms(50))
}

/// [`small_buffer`] whose application never reads, sending without limit until
/// `until`: the window closes once `rcv_buf` bytes are in.
fn never_read(rcv_buf: u64, until: Instant) -> Pair {
    let mut p = small_buffer(rcv_buf);
    p.reader = Reader::Never;
    p.set_unlimited();
    p.drive_until(until);
    p
}

#[test]
fn a_greedy_reader_needs_no_window_updates() {
    // The window never closes, so every ACK already carries the full window: an
    // update for a read would only defeat the delayed ACK (RFC 1122 §4.2.3.3).
    for handshake in [false, true] {
        let cfg = TcpConfig { handshake, ..rfc() };
        let mut p = Pair::new(cfg, ms(50));
        p.write(3000);
        p.drive();
        assert_eq!(p.rcv.stats().window_updates, 0, "handshake {handshake}");
        // Two segments, one ACK; the odd one is acknowledged by the timer.
        let acks: Vec<u64> = p.acks().map(|s| s.seg.ack).collect();
        assert_eq!(acks, vec![2000, 3000], "handshake {handshake}");
    }
}

#[test]
fn a_reader_that_never_reads_stops_the_sender_at_exactly_the_buffer_size() {
    for buf in [20_000, 20_500] {
        let p = never_read(buf, Instant::from_secs(10));
        assert_eq!(p.snd.snd_nxt(), buf, "buffer {buf}");
        assert_eq!(p.snd.snd_una(), buf);
        assert!(p.fwd.data().all(|s| s.seg.seq + s.seg.len as u64 <= buf));
        assert_eq!(p.rcv.stats().buffer_drops, 0);
        assert_eq!(p.rcv.buffer_occupancy(), buf);
        // RFC 9293 §3.8.6: the last ACK advertises a zero window.
        let last = p.acks().last().unwrap().seg;
        assert_eq!((last.ack, last.wnd), (buf, 0));
        assert!(p.rcv.stats().zero_window_acks >= 1);
    }
}

#[test]
fn the_sender_never_sends_beyond_the_right_edge_it_was_offered() {
    let mut p = small_buffer(20_000);
    p.reader = Reader::Periodic {
        next: t_ms(500),
        every: ms(300),
        bytes: 3_000,
    };
    p.fwd.drop_random_data(7, 0.02);
    p.set_unlimited();
    p.drive_until(Instant::from_secs(10));
    // RFC 9293 §3.8.6.2.1: nothing beyond SND.UNA + SND.WND of the ACKs that had
    // arrived (before any ACK, the buffer the sender assumes without a handshake).
    for s in p.fwd.data() {
        let edge = p
            .acks()
            .filter(|a| !a.dropped() && arrival(a) <= s.at)
            .map(|a| a.seg.ack + a.seg.wnd)
            .max()
            .unwrap_or(20_000);
        assert!(s.seg.seq + s.seg.len as u64 <= edge, "{s:?} beyond {edge}");
    }
    // So the receiver, holding exactly what it offered, never drops for lack of room.
    assert_eq!(p.rcv.stats().buffer_drops, 0);
    assert_eq!(p.rcv.bytes_read(), 3_000 * 32);
}

#[test]
fn persist_timer_probes_a_zero_window_with_exponential_backoff() {
    let mut p = never_read(20_000, Instant::from_secs(2));
    let zero_ack = p
        .acks()
        .find(|s| s.seg.wnd == 0)
        .map(arrival)
        .expect("a zero window");
    p.drive_until(Instant::from_secs(60));
    let probes: Vec<Instant> = p
        .fwd
        .log
        .iter()
        .filter(|s| s.seg.window_probe)
        .map(|s| s.at)
        .collect();
    assert!(probes.len() >= 5, "{probes:?}");
    // The first probe one persist interval (the RTO, at least persist_min) after the
    // zero window, then doubling, capped at persist_max.
    let base = p.snd.rto().max(p.snd.config().persist_min);
    assert_eq!(probes[0] - zero_ack, base);
    for i in 1..probes.len() {
        let expect = base.saturating_mul(1 << i).min(Duration::from_secs(16));
        assert_eq!(probes[i] - probes[i - 1], expect, "gap {i}: {probes:?}");
    }
    // Each probe is answered, with the window still zero.
    for &t in &probes {
        assert!(p.acks().any(|s| s.at == t + ms(50) && s.seg.wnd == 0));
    }
    assert_eq!(p.snd.stats().window_probes, probes.len() as u64);
    assert_eq!(p.snd.stats().timeouts, 0, "probing is not retransmitting");
    assert_eq!(p.snd.snd_nxt(), 20_000);
}

#[test]
fn a_read_that_opens_the_window_sends_a_window_update_and_transfer_resumes() {
    let mut p = never_read(20_000, Instant::from_secs(3));
    assert_eq!(p.read(10_000), 10_000);
    p.drive_until(Instant::from_secs(4));
    let update = p
        .acks()
        .find(|s| s.at == Instant::from_secs(3))
        .expect("a window update at the read");
    assert_eq!((update.seg.ack, update.seg.wnd), (20_000, 10_000));
    assert_eq!(p.rcv.stats().window_updates, 1);
    let resumed = p.fwd.data().find(|s| s.seg.seq == 20_000).unwrap();
    assert_eq!(resumed.at, Instant::from_secs(3) + ms(50));
    assert_eq!(p.snd.snd_nxt(), 30_000, "exactly up to the new right edge");
}

#[test]
fn a_lost_window_update_is_recovered_by_the_next_probe() {
    let mut p = small_buffer(20_000);
    p.reader = Reader::at(&[(Instant::from_secs(3), 10_000)]);
    p.rev
        .drop_if(|t, s| t == Instant::from_secs(3) && s.wnd > 0 && s.ack == 20_000);
    p.set_unlimited();
    p.drive_until(Instant::from_secs(40));
    assert!(p.rev.log.iter().any(|s| s.dropped()));
    let next_probe = p
        .fwd
        .log
        .iter()
        .find(|s| s.seg.window_probe && s.at > Instant::from_secs(3))
        .expect("a probe after the read")
        .at;
    let resumed = p.fwd.data().find(|s| s.seg.seq == 20_000).unwrap();
    assert_eq!(resumed.at, next_probe + ms(100));
    assert_eq!(p.snd.snd_nxt(), 30_000);
}

/// Every ACK's right edge (ack + wnd), in the order sent.
fn right_edges(p: &Pair) -> Vec<(Instant, u64)> {
    p.acks().map(|s| (s.at, s.seg.ack + s.seg.wnd)).collect()
}

#[test]
fn receiver_never_moves_the_right_edge_of_its_window_back() {
    for seed in 1..=3 {
        let mut p = small_buffer(30_000);
        p.reader = Reader::every(ms(7), 700);
        p.fwd.drop_random_data(seed, 0.03);
        p.set_unlimited();
        p.drive_until(Instant::from_secs(10));
        let edges = right_edges(&p);
        for w in edges.windows(2) {
            assert!(
                w[1].1 >= w[0].1,
                "seed {seed}: right edge moved back: {w:?}"
            );
        }
        assert!(p.rcv.bytes_read() > 200_000);
    }
}

#[test]
fn with_window_scaling_the_right_edge_retracts_by_less_than_the_scale_unit() {
    // RFC 7323 §2.4: with a scale factor the right edge may appear to move back, by
    // less than 2^shift bytes; it must not move back further.
    let cfg = TcpConfig {
        handshake: false,
        rcv_buf: 1 << 20,
        ..rfc()
    };
    let mut p = Pair::new(cfg, ms(50));
    let unit = 1u64 << p.rcv.wscale();
    assert!(unit > 1);
    p.reader = Reader::every(ms(3), 3_333);
    p.set_unlimited();
    p.drive_until(Instant::from_secs(5));
    let edges = right_edges(&p);
    let mut max_edge = 0u64;
    let mut worst = 0u64;
    for &(_, e) in &edges {
        worst = worst.max(max_edge.saturating_sub(e));
        max_edge = max_edge.max(e);
    }
    assert!(
        worst < unit,
        "the right edge moved back by {worst} bytes (unit {unit})"
    );
}

#[test]
fn receiver_sws_avoidance_never_advertises_a_small_window_increase() {
    // Reads of 100 bytes every 10 ms: the window would creep open 100 bytes at a
    // time. RFC 1122 §4.2.3.3: the right edge moves by min(MSS, buffer/2) or more.
    for buf in [20_000, 1_500] {
        let mut p = small_buffer(buf);
        p.reader = Reader::every(ms(10), 100);
        p.set_unlimited();
        p.drive_until(Instant::from_secs(20));
        let step = MSS.min(buf / 2);
        let edges = right_edges(&p);
        let mut moves = 0;
        for w in edges.windows(2) {
            let d = w[1].1.saturating_sub(w[0].1);
            assert!(
                d == 0 || d >= step,
                "buffer {buf}: right edge crept by {d}: {w:?}"
            );
            moves += usize::from(d > 0);
        }
        assert!(moves > 10, "buffer {buf}: the window did open");
    }
}

#[test]
fn sender_sws_avoidance_sends_short_segments_only_with_nothing_in_flight() {
    // The receiver does no SWS avoidance and the reader creeps the window open by
    // 300 bytes at a time; RFC 1122 §4.2.3.4 keeps the sender from following it.
    for sender_sws in [false, true] {
        let cfg = TcpConfig {
            handshake: false,
            rcv_buf: 10_000,
            receiver_sws: false,
            sender_sws,
            ..rfc()
        };
        let mut p = Pair::new(cfg, ms(50));
        p.reader = Reader::every(ms(10), 300);
        p.set_unlimited();
        p.drive_until(Instant::from_secs(10));
        let mut runts_in_flight = 0;
        for s in p.fwd.data().filter(|s| (s.seg.len as u64) < MSS) {
            let acked = p
                .acks()
                .filter(|a| arrival(a) <= s.at)
                .map(|a| a.seg.ack)
                .max()
                .unwrap_or(0);
            runts_in_flight += usize::from(acked < s.seg.seq);
        }
        if sender_sws {
            assert_eq!(runts_in_flight, 0);
        } else {
            assert!(runts_in_flight > 10, "the window creeps without it");
        }
        assert!(p.rcv.bytes_read() > 250_000, "{}", p.rcv.bytes_read());
    }
}

#[test]
fn window_limited_transfer_reaches_the_buffer_per_rtt() {
    for buf in [32_000u64, 64_000] {
        let cfg = TcpConfig {
            rcv_buf: buf,
            ..rfc()
        };
        let mut p = Pair::new(cfg, ms(50));
        p.fwd.rate_bps = Some(100_000_000);
        p.set_unlimited();
        p.drive_until(Instant::from_secs(3));
        let read0 = p.rcv.bytes_read();
        p.drive_until(Instant::from_secs(13));
        let rate = (p.rcv.bytes_read() - read0) as f64 / 10.0;
        let ideal = buf as f64 / p.rtt().as_secs_f64();
        assert!(
            (rate / ideal - 1.0).abs() < 0.03,
            "buffer {buf}: {rate:.0} B/s, ideal {ideal:.0} B/s"
        );
        assert_eq!(p.snd.stats().retransmits, 0);
    }
}

// =====================================================================================
// Whole transfers under loss and reordering
// =====================================================================================

fn transfer(cfg: TcpConfig, n: u64, seed: u64, setup: impl FnOnce(&mut Pair)) -> Pair {
    let mut p = Pair::new(cfg, ms(20));
    p.fwd.rate_bps = Some(10_000_000);
    setup(&mut p);
    p.write(n);
    p.drive_until_read(n, Instant::from_secs(2_000));
    p.drive_for(Duration::from_secs(5));
    assert_eq!(p.rcv.bytes_read(), n, "seed {seed}");
    assert_eq!(p.rcv.rcv_nxt(), n, "seed {seed}: nothing beyond the end");
    assert_eq!(p.snd.snd_una(), n, "seed {seed}");
    assert_eq!(p.snd.snd_nxt(), n, "seed {seed}");
    assert!(p.snd.is_idle());
    assert!(p.fwd.data().all(|s| s.seg.seq + s.seg.len as u64 <= n));
    p
}

#[test]
fn transfer_completes_under_random_loss_for_every_recovery_and_cc() {
    const N: u64 = 300_000;
    for recovery in [Recovery::Reno, Recovery::NewReno, Recovery::Sack] {
        for cc in [
            CcKind::Reno,
            CcKind::NewReno,
            CcKind::Cubic(Default::default()),
            CcKind::Relentless(Default::default()),
            CcKind::Fld(Default::default()),
            // FLD_TCP crossing its threshold mid-transfer.
            CcKind::Fld(crate::cc::FldParams {
                threshold_bytes: 100_000,
                ..Default::default()
            }),
        ] {
            for seed in 1..=4u64 {
                let cfg = TcpConfig {
                    cc,
                    recovery,
                    sack: recovery == Recovery::Sack,
                    min_rto: ms(200),
                    ..rfc()
                };
                let p = transfer(cfg, N, seed, |p| {
                    p.fwd.drop_random_data(seed, 0.03);
                    p.rev.drop_if({
                        let mut rng = super::pair::Lcg::new(seed + 100);
                        move |_, _| rng.chance(0.01)
                    });
                });
                let st = p.snd.stats();
                assert!(
                    st.retransmits > 0,
                    "{recovery:?}/{cc:?}/{seed}: losses happened"
                );
                assert!(
                    st.fast_retransmits > 0,
                    "{recovery:?}/{cc:?}/{seed}: some losses repaired without the timer"
                );
            }
        }
    }
}

#[test]
fn transfer_completes_in_the_ns2_profile_under_random_loss() {
    for seed in 1..=4u64 {
        transfer(ns2(), 300_000, seed, |p| p.fwd.drop_random_data(seed, 0.05));
    }
}

#[test]
fn transfer_completes_under_reordering_without_spurious_timeouts() {
    for recovery in [Recovery::NewReno, Recovery::Sack] {
        for seed in 1..=3u64 {
            let cfg = TcpConfig {
                recovery,
                sack: recovery == Recovery::Sack,
                ..rfc()
            };
            let p = transfer(cfg, 300_000, seed, |p| {
                let mut rng = super::pair::Lcg::new(seed);
                p.fwd.delay_if(Duration::from_micros(1_500), move |_, s| {
                    s.len > 0 && rng.chance(0.05)
                });
            });
            assert_eq!(p.snd.stats().timeouts, 0, "{recovery:?}/{seed}");
        }
    }
}

#[test]
fn transfer_completes_with_a_slow_reader_and_a_small_buffer() {
    for seed in 1..=3u64 {
        let cfg = TcpConfig {
            rcv_buf: 8_000,
            min_rto: ms(200),
            ..rfc()
        };
        let p = transfer(cfg, 100_000, seed, |p| {
            p.reader = Reader::every(ms(5), 1_200);
            p.fwd.drop_random_data(seed, 0.02);
        });
        assert_eq!(p.rcv.stats().buffer_drops, 0, "seed {seed}");
    }
}

/// Linux's quick-ACK mode (`tcp_event_data_recv` → `tcp_incr_quickack`, up to
/// `TCP_MAX_QUICKACKS` = 16 at the start of a connection; `tcp::delack`): the receiver
/// of the `linux` profile ACKs each segment of the initial window at once, so the
/// sender's cwnd can double in the first RTT; RFC 5681's policy ACKs every second one.
#[test]
fn linux_receiver_acks_every_segment_of_the_initial_window() {
    let run = |ack_policy| {
        let cfg = TcpConfig {
            ack_policy,
            ..TcpConfig::linux()
        };
        let mut p = Pair::new(cfg, ms(50));
        p.fwd.rate_bps = Some(10_000_000);
        p.write(1_000_000);
        // The SYN-ACK at 100 ms, the initial window arrives from 150 ms over ~12 ms.
        p.drive_until(t_ms(199));
        p.acks()
            .filter(|s| !s.seg.flags.contains(Flags::SYN) && s.seg.ack > 0)
            .count()
    };
    assert_eq!(run(crate::tcp::AckPolicy::Linux), 10);
    assert_eq!(run(crate::tcp::AckPolicy::Rfc5681), 5);
}
