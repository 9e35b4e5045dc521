//! AFC's rules at the endpoints (`flow::afc`; Sanadhya and Sivakumar, "Adaptive Flow
//! Control for TCP on Mobile Phones", IEEE INFOCOM 2011): the flow window in both
//! placements, buffer-loss hiding, proactive feedback, burst control, and the
//! receiver's own RTT estimate that the receiver placement and auto-tuning use.
//! The policy's own rules (AR EWMA, option encoding, feedback trigger) are tested in
//! `flow::afc`.

use super::pair::{Pair, Reader};
use super::{ack, ns2, rfc, sack_ack};
use crate::flow::afc::{decode_rate, encode_rate};
use crate::flow::{AfcConfig, AutotuneConfig, FlowControl, Placement};
use crate::tcp::{InitialWindow, Recovery, SenderExt, TcpConfig, TcpReceiver, TcpSender};
use crate::time::test_util::{ms, t_ms};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Segment};

const MSS: u64 = 1000;

/// AR the sender's AFC extension took from the option.
fn ar_peer(s: &TcpSender) -> Option<f64> {
    s.extensions()
        .iter()
        .find_map(SenderExt::afc)
        .and_then(|a| a.ar_peer())
}

/// The sender's AFC extension hides congestion signals.
fn hiding_congestion(s: &TcpSender) -> bool {
    s.extensions()
        .iter()
        .find_map(SenderExt::afc)
        .is_some_and(|a| a.hiding_congestion())
}

/// ns-2 conventions with SACK, `iw` initial segments, a big buffer, AFC as given.
fn cfg(afc: Option<AfcConfig>, iw: u32) -> TcpConfig {
    TcpConfig {
        sack: true,
        recovery: Recovery::Sack,
        initial_window: InitialWindow::Segments(iw),
        rcv_buf: 1_000_000,
        flow_control: afc.map_or(FlowControl::Classic, FlowControl::Afc),
        ..ns2()
    }
}

/// Everything the sender will send at `t`.
fn drain(s: &mut TcpSender, t: Instant) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(t)).collect()
}

/// A sender that sent `iw` segments at 0 and got the first acknowledged at 500 ms
/// (SRTT 500 ms) with window `wnd` and, optionally, AR in the option.
fn sender_after_first_ack(afc: Option<AfcConfig>, iw: u32, wnd: u64, ar: Option<f64>) -> TcpSender {
    let mut s = TcpSender::new(cfg(afc, iw));
    s.set_unlimited();
    assert_eq!(drain(&mut s, t_ms(0)).len(), iw as usize);
    let mut a = ack(MSS, wnd);
    a.exp.afc_rate = ar.map(encode_rate);
    s.handle_segment(t_ms(500), &a);
    assert_eq!(s.rtt().srtt(), Some(ms(500)));
    s
}

// ----- mechanism 1: flow window = advertised window + AR x RTT ------------------------

#[test]
fn sender_placement_flow_window_is_advertised_window_plus_ar_times_srtt() {
    let s = sender_after_first_ack(Some(AfcConfig::default()), 2, 10_000, Some(100_000.0));
    let ar = ar_peer(&s).expect("AR from the option");
    assert_eq!(ar, decode_rate(encode_rate(100_000.0)));
    assert!((ar / 100_000.0 - 1.0).abs() < 0.03);
    assert_eq!(s.flow_window(), 10_000 + (ar * 0.5) as u64);
}

#[test]
fn sender_placement_sends_up_to_the_flow_window_beyond_the_advertised_one() {
    let mut s = sender_after_first_ack(Some(AfcConfig::default()), 200, 10_000, Some(100_000.0));
    let fw = s.flow_window();
    assert!(fw > 50_000);
    drain(&mut s, t_ms(500));
    // Everything up to snd_una + flow window is out, not just the advertised 10 kB.
    assert_eq!(s.snd_nxt(), (MSS + fw).max(200 * MSS));
    let mut s = sender_after_first_ack(Some(AfcConfig::default()), 20, 100_000, Some(100_000.0));
    drain(&mut s, t_ms(500));
    assert!(
        s.snd_nxt() > 20 * MSS,
        "the window opens beyond what was sent"
    );
}

#[test]
fn without_rate_adaptation_or_in_receiver_placement_the_sender_keeps_the_advertised_window() {
    let off = AfcConfig {
        adapt_rate: false,
        ..AfcConfig::default()
    };
    let s = sender_after_first_ack(Some(off), 2, 10_000, Some(100_000.0));
    assert_eq!(s.flow_window(), 10_000);
    let rcv = AfcConfig {
        placement: Placement::Receiver,
        ..AfcConfig::default()
    };
    let s = sender_after_first_ack(Some(rcv), 2, 10_000, Some(100_000.0));
    assert_eq!(s.flow_window(), 10_000);
    let s = sender_after_first_ack(None, 2, 10_000, Some(100_000.0));
    assert_eq!(ar_peer(&s), None, "classic TCP ignores the option");
    assert_eq!(s.flow_window(), 10_000);
}

#[test]
fn sender_placement_receiver_carries_ar_on_every_ack() {
    let mut p = Pair::new(cfg(Some(AfcConfig::default()), 2), ms(100));
    p.reader = Reader::every(ms(10), 2_000);
    p.set_unlimited();
    p.drive_until(t_ms(3000));
    let acks: Vec<_> = p.rev.log.iter().filter(|s| s.at >= t_ms(1000)).collect();
    assert!(!acks.is_empty());
    assert!(acks.iter().all(|s| s.seg.exp.afc_rate.is_some()));
    // 2 kB every 10 ms = 200 kB/s
    let ar = ar_peer(&p.snd).unwrap();
    assert!((ar / 200_000.0 - 1.0).abs() < 0.1, "{ar}");
    assert_eq!(
        p.snd.flow_window(),
        p.snd.snd_wnd() + (ar * p.snd.rtt().srtt().unwrap().as_secs_f64()) as u64
    );
}

#[test]
fn receiver_placement_advertises_free_space_plus_ar_times_its_rtt_without_option() {
    let afc = AfcConfig {
        placement: Placement::Receiver,
        ..AfcConfig::default()
    };
    let mut c = cfg(Some(afc), 2);
    c.rcv_buf = 100_000;
    let mut p = Pair::new(c, ms(100));
    p.reader = Reader::every(ms(10), 1_000);
    p.set_unlimited();
    p.drive_until(t_ms(5000));
    assert!(p.rev.log.iter().all(|s| s.seg.exp.afc_rate.is_none()));
    let rtt = p.rcv.rcv_rtt().expect("receiver RTT estimate");
    let ar = p.rcv.rate_estimate().expect("AR");
    assert!((ar / 100_000.0 - 1.0).abs() < 0.1, "{ar}");
    // The window goes beyond the free space by AR x RTT (to the scale's rounding, and
    // one 1000-byte read that may have happened since the last ACK).
    let free = 100_000 - p.rcv.readable();
    let extra = (ar * rtt.as_secs_f64()) as u64;
    let w = p.rcv.last_advertised_window();
    let grain = 1u64 << p.rcv.wscale();
    assert!(extra > 10_000);
    assert!(
        w + 2 * grain + 1_000 >= free + extra && w <= free + extra + grain + 1_000,
        "{w} vs {free} + {extra}"
    );
}

// ----- mechanism 2: buffer losses hidden from congestion control ------------------------

/// Ten segments out; the first acknowledged with a zero window at 500 ms.
fn after_zero_window(hide: bool) -> TcpSender {
    let afc = AfcConfig {
        hide_buffer_losses: hide,
        pacing: false,
        ..AfcConfig::default()
    };
    let s = sender_after_first_ack(Some(afc), 10, 0, Some(0.0));
    assert_eq!(hiding_congestion(&s), hide);
    s
}

#[test]
fn after_a_zero_window_a_fast_retransmit_keeps_cwnd_and_ssthresh() {
    let mut s = after_zero_window(true);
    let (cwnd, ssthresh) = (s.cwnd(), s.ssthresh());
    for k in 0..3 {
        s.handle_segment(
            t_ms(510 + k),
            &sack_ack(MSS, 0, &[(2 * MSS, (3 + k) * MSS)]),
        );
    }
    let out = drain(&mut s, t_ms(512));
    assert!(
        out.iter().any(|g| g.retransmission && g.seq == MSS),
        "still retransmits"
    );
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.stats().hidden_congestion_events, 1);
    assert_eq!(s.ssthresh(), ssthresh);
    assert!(s.cc().window() >= cwnd);
}

#[test]
fn without_hiding_the_same_fast_retransmit_halves_the_window() {
    let mut s = after_zero_window(false);
    for k in 0..3 {
        s.handle_segment(
            t_ms(510 + k),
            &sack_ack(MSS, 0, &[(2 * MSS, (3 + k) * MSS)]),
        );
    }
    drain(&mut s, t_ms(512));
    assert_eq!(s.stats().hidden_congestion_events, 0);
    // FlightSize 9 segments / 2, in whole segments as ns-2's int `ssthresh_` (the
    // ns2 profile's `per_ack_counting`).
    assert_eq!(s.ssthresh(), 4 * MSS);
}

#[test]
fn after_a_zero_window_a_timeout_retransmits_without_collapsing_cwnd() {
    let mut s = after_zero_window(true);
    let cwnd = s.cc().window();
    let rto_at = s.poll_timeout().expect("RTO armed");
    s.handle_timeout(rto_at);
    let out = drain(&mut s, rto_at);
    assert_eq!(
        out.first().map(|g| (g.seq, g.retransmission)),
        Some((MSS, true))
    );
    assert_eq!(s.stats().timeouts, 1);
    assert_eq!(s.stats().hidden_congestion_events, 1);
    assert_eq!(s.cc().window(), cwnd);

    let mut s = after_zero_window(false);
    let rto_at = s.poll_timeout().unwrap();
    s.handle_timeout(rto_at);
    assert_eq!(
        s.cc().window(),
        MSS,
        "RFC 5681: one segment after a timeout"
    );
}

#[test]
fn a_hidden_timeout_does_not_back_off_the_timer() {
    let mut s = after_zero_window(true);
    let rto = s.rto();
    let rto_at = s.poll_timeout().unwrap();
    s.handle_timeout(rto_at);
    assert_eq!(s.rto(), rto);
    assert_eq!(s.rtt().backoff_exponent(), 0);
    let mut s = after_zero_window(false);
    let rto_at = s.poll_timeout().unwrap();
    s.handle_timeout(rto_at);
    assert_eq!(s.rtt().backoff_exponent(), 1);
}

#[test]
fn hiding_lasts_until_data_sent_after_the_window_reopened_is_acknowledged() {
    let mut s = after_zero_window(true);
    assert_eq!(s.snd_nxt(), 10 * MSS);
    // The window reopens: data from 10 000 on is fresh.
    s.handle_segment(t_ms(600), &ack(2 * MSS, 50_000));
    drain(&mut s, t_ms(600));
    assert!(s.snd_nxt() > 10 * MSS);
    assert!(hiding_congestion(&s));
    s.handle_segment(t_ms(700), &ack(10 * MSS, 50_000));
    assert!(hiding_congestion(&s), "only old data acknowledged");
    s.handle_segment(t_ms(1100), &ack(11 * MSS, 50_000));
    assert!(!hiding_congestion(&s), "fresh data acknowledged");
    drain(&mut s, t_ms(1100));
    assert!(s.snd_nxt() >= 15 * MSS);
    // A later loss is congestion again.
    let ssthresh = s.ssthresh();
    let una = s.snd_una();
    for k in 0..3 {
        s.handle_segment(
            t_ms(1110 + k),
            &sack_ack(una, 50_000, &[(una + MSS, una + (2 + k) * MSS)]),
        );
    }
    assert_eq!(s.stats().hidden_congestion_events, 0);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert!(s.ssthresh() < ssthresh);
}

/// The tail the full buffer dropped: after the zero window at 500 ms, segments 2..10
/// (sent at 0 ms) are neither acknowledged nor SACKed when the window reopens.
fn window_reopens_at(hide: bool, t: u64) -> (TcpSender, Vec<Segment>) {
    let mut s = after_zero_window(hide);
    s.handle_segment(t_ms(t), &ack(MSS, 50_000));
    let out = drain(&mut s, t_ms(t));
    (s, out)
}

#[test]
fn a_tail_dropped_by_the_full_buffer_is_resent_when_the_window_reopens() {
    // 700 ms after it was sent, a segment would have reached the receiver before this
    // ACK left it (SRTT 500 ms + min_RTT / 4 = 625 ms): it was dropped.
    let (s, out) = window_reopens_at(true, 700);
    let resent: Vec<u64> = out
        .iter()
        .filter(|g| g.retransmission)
        .map(|g| g.seq)
        .collect();
    assert_eq!(
        resent.first(),
        Some(&MSS),
        "the first dropped segment at once"
    );
    assert!(
        resent.len() > 1,
        "more of the tail as the window allows: {resent:?}"
    );
    assert_eq!(s.stats().buffer_loss_repairs, 1);
    assert_eq!(s.stats().timeouts, 0);
    assert_eq!(
        s.stats().hidden_congestion_events,
        1,
        "hidden: no congestion response"
    );
}

#[test]
fn segments_that_may_still_be_in_flight_are_not_resent() {
    // 600 ms after they left, within SRTT + min_RTT / 4: they may yet arrive.
    let (s, out) = window_reopens_at(true, 600);
    assert!(out.iter().all(|g| !g.retransmission), "{out:?}");
    assert_eq!(s.stats().buffer_loss_repairs, 0);
}

#[test]
fn without_hiding_buffer_losses_the_tail_waits_for_the_timer() {
    let (s, out) = window_reopens_at(false, 700);
    assert!(out.iter().all(|g| !g.retransmission));
    assert_eq!(s.stats().buffer_loss_repairs, 0);
}

#[test]
fn resending_the_first_unacknowledged_segment_of_a_hidden_loss_restarts_the_timer() {
    // The last ACK that advanced snd_una came at 500 ms; the repair resends MSS.. at
    // 700 ms. The timer runs from the resend (Linux `tcp_xmit_retransmit_queue`), not
    // from 500 ms, or it would expire before the repair could be acknowledged.
    let (s, out) = window_reopens_at(true, 700);
    assert_eq!(
        out.first().map(|g| (g.seq, g.retransmission)),
        Some((MSS, true))
    );
    assert_eq!(s.poll_timeout(), Some(t_ms(700) + s.rto()));
}

#[test]
fn without_hiding_the_timer_still_runs_from_the_last_advancing_ack() {
    let (s, _) = window_reopens_at(false, 700);
    assert_eq!(s.poll_timeout(), Some(t_ms(500) + s.rto()));
}

#[test]
fn a_timed_segment_that_is_resent_gives_no_rtt_sample() {
    // ns-2's timed-segment sampling (one segment per RTT). Segment 0 is lost: SACK
    // recovery at 102 ms stops timing it. New data sent during the recovery is timed
    // again; the first new segment (10 000..11 000) is lost too and resent. Karn's rule
    // (RFC 6298 §3): the ACK at 1 s that covers it must not give a 895 ms sample.
    let mut c = cfg(None, 10);
    c.rcv_buf = 1_000_000;
    let mut s = TcpSender::new(c);
    s.set_unlimited();
    assert_eq!(drain(&mut s, t_ms(0)).len(), 10);
    let wnd = 1_000_000;
    let mut resent_new = false;
    for k in 1..10u64 {
        let t = t_ms(100 + k);
        s.handle_segment(t, &sack_ack(0, wnd, &[(MSS, (k + 1) * MSS)]));
        drain(&mut s, t);
    }
    assert!(s.snd_nxt() > 11 * MSS, "new data sent in recovery");
    for k in 1..6u64 {
        let t = t_ms(200 + k);
        s.handle_segment(
            t,
            &sack_ack(0, wnd, &[(MSS, 10 * MSS), (11 * MSS, (11 + k) * MSS)]),
        );
        resent_new |= drain(&mut s, t)
            .iter()
            .any(|g| g.retransmission && g.seq == 10 * MSS);
    }
    assert!(resent_new, "the lost new segment is resent");
    // The ACK that covers the resent segment (and nothing sent after 200 ms).
    s.handle_segment(t_ms(1000), &ack(11 * MSS, wnd));
    assert_eq!(s.rtt().srtt(), None, "no sample from a resent segment");
}

// ----- mechanism 3: proactive feedback ------------------------------------------------

fn data(seq: u64) -> Segment {
    Segment {
        seq,
        len: MSS as u32,
        flags: Flags::ACK,
        ..Segment::default()
    }
}

#[test]
fn receiver_sends_a_window_update_with_the_new_ar_when_the_application_rate_collapses() {
    let mut c = cfg(Some(AfcConfig::default()), 2);
    c.rcv_buf = 100_000;
    let mut r = TcpReceiver::new(c);
    for k in 0..10 {
        r.handle_segment(t_ms(k), &data(k * MSS));
        let a = r.poll_transmit(t_ms(k)).expect("an ACK per segment");
        assert_eq!(a.exp.afc_rate, None, "no AR before the first sample");
    }
    r.read(t_ms(50), 10_000); // 100 kB/s over [0, 100 ms)
    assert_eq!(r.poll_timeout(), Some(t_ms(100)));
    r.handle_timeout(t_ms(100));
    let a = r.poll_transmit(t_ms(100)).expect("feedback: AR appeared");
    assert_eq!(a.exp.afc_rate, Some(encode_rate(100_000.0)));
    // The application stops. AR falls by 1/8 per 100 ms; at 700 ms it is 0.875^6 of
    // what the sender knows, a change of more than half: a window update carries it.
    for t in (200..=600).step_by(100) {
        r.handle_timeout(t_ms(t));
        assert!(r.poll_transmit(t_ms(t)).is_none(), "no feedback at {t} ms");
    }
    r.handle_timeout(t_ms(700));
    let a = r.poll_transmit(t_ms(700)).expect("proactive feedback");
    assert_eq!(a.ack, 10 * MSS);
    let sent = decode_rate(a.exp.afc_rate.unwrap());
    assert!(
        (sent / (100_000.0 * 0.875f64.powi(6)) - 1.0).abs() < 0.03,
        "{sent}"
    );
    assert_eq!(r.stats().policy_updates, 2);
}

#[test]
fn without_proactive_feedback_the_receiver_stays_silent() {
    let afc = AfcConfig {
        proactive_feedback: false,
        ..AfcConfig::default()
    };
    let mut c = cfg(Some(afc), 2);
    c.rcv_buf = 100_000;
    let mut r = TcpReceiver::new(c);
    r.handle_segment(t_ms(0), &data(0));
    r.poll_transmit(t_ms(0));
    r.read(t_ms(50), 1_000);
    assert_eq!(r.poll_timeout(), None);
    r.handle_timeout(t_ms(5000));
    assert!(r.poll_transmit(t_ms(5000)).is_none());
    assert_eq!(r.stats().policy_updates, 0);
}

// ----- mechanism 4: burst control -------------------------------------------------------

/// 50 segments sent at 0, all acknowledged at 500 ms with a zero window; at 600 ms a
/// window update opens 40 000 bytes.
fn window_jump(pacing: bool, ar: f64) -> TcpSender {
    let afc = AfcConfig {
        pacing,
        adapt_rate: false,
        ..AfcConfig::default()
    };
    let mut s = TcpSender::new(cfg(Some(afc), 50));
    s.set_unlimited();
    drain(&mut s, t_ms(0));
    let mut a = ack(50 * MSS, 0);
    a.exp.afc_rate = Some(encode_rate(ar));
    s.handle_segment(t_ms(500), &a);
    assert!(drain(&mut s, t_ms(500)).is_empty());
    s.handle_segment(t_ms(600), &ack(50 * MSS, 40_000));
    s
}

#[test]
fn a_window_jump_is_paced_after_burst_segments_at_cwnd_over_srtt() {
    let mut s = window_jump(true, 1_000.0);
    assert_eq!(
        drain(&mut s, t_ms(600)).len(),
        4,
        "burst_segments leave at once"
    );
    // cwnd 51 segments over SRTT 500 ms: 102 000 bytes/s, one segment per 9.8 ms.
    let gap = Duration::from_secs_f64(1000.0 / 102_000.0);
    let next = s.poll_timeout().expect("pacing timer");
    assert_eq!(next, t_ms(600) + gap);
    s.handle_timeout(next);
    assert_eq!(drain(&mut s, next).len(), 1);
    assert_eq!(s.poll_timeout(), Some(next + gap));
    assert_eq!(s.stats().paced_segments, 1);
}

#[test]
fn pacing_rate_is_the_reported_ar_when_it_is_faster() {
    let mut s = window_jump(true, 1_000_000.0); // AR 1 MB/s > cwnd/SRTT
    drain(&mut s, t_ms(600));
    let ar = decode_rate(encode_rate(1_000_000.0));
    assert_eq!(
        s.poll_timeout(),
        Some(t_ms(600) + Duration::from_secs_f64(1000.0 / ar))
    );
}

#[test]
fn without_pacing_the_whole_window_jump_leaves_at_once() {
    let mut s = window_jump(false, 1_000.0);
    assert_eq!(drain(&mut s, t_ms(600)).len(), 40);
    assert_eq!(s.stats().paced_segments, 0);
}

// ----- the receiver's RTT estimate ------------------------------------------------------

/// The receiver's RTT estimate after 500 kB over a 200 ms round trip with `cfg`.
fn receiver_rtt_after_a_transfer(cfg: TcpConfig) -> Duration {
    let mut p = Pair::new(cfg, ms(100));
    p.write(500_000);
    p.drive();
    p.rcv.rcv_rtt().expect("an estimate")
}

#[test]
fn receiver_estimates_rtt_from_the_window_without_timestamps() {
    let mut c = ns2();
    c.rcv_buf = 20_000; // window-limited
    let rtt = receiver_rtt_after_a_transfer(c);
    assert!(rtt >= ms(200) && rtt <= ms(202), "{rtt:?}");
}

#[test]
fn receiver_estimates_rtt_from_timestamps_when_negotiated() {
    let rtt = receiver_rtt_after_a_transfer(rfc());
    assert!(rtt >= ms(200) && rtt <= ms(260), "{rtt:?}");
}

// ----- classic flow control is unchanged ------------------------------------------------

#[test]
fn classic_receiver_never_carries_the_option() {
    let mut p = Pair::new(ns2(), ms(50));
    p.write(100_000);
    p.drive();
    assert!(p.rev.log.iter().all(|s| s.seg.exp.afc_rate.is_none()));
    assert_eq!(p.rcv.policy().name(), "classic");
}

// ----- the first offer without a handshake ----------------------------------------------

#[test]
fn without_a_handshake_auto_tuning_opens_with_its_initial_grant() {
    // ns-2's one-way agents have no SYN-ACK to carry the first window: both ends take
    // the policy's first offer, which for auto-tuning is its initial grant (Linux's
    // tcp_rmem[1]), not the physical buffer (tcp_rmem[2]).
    let grant = 10 * MSS;
    let c = TcpConfig {
        rcv_buf: 4 << 20,
        flow_control: FlowControl::Autotune(AutotuneConfig {
            initial_buf: grant,
            min_buf: grant,
            ..AutotuneConfig::default()
        }),
        ..cfg(None, 100)
    };
    let mut s = TcpSender::new(c.clone());
    s.set_unlimited();
    assert_eq!(drain(&mut s, t_ms(0)).len(), 10);
    let mut classic = TcpSender::new(TcpConfig {
        flow_control: FlowControl::Classic,
        ..c
    });
    classic.set_unlimited();
    assert_eq!(drain(&mut classic, t_ms(0)).len(), 100, "the whole buffer");
}
