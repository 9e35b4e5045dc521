//! Behaviour tests of the TFRC sender and receiver, one endpoint at a time (rate
//! rules, feedback rules, every Freeze-DCCP transition), and over an in-memory pair
//! (convergence to the equation, disconnections with and without freezing).

use super::event::SenderEvent;
use super::*;
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

fn ms(x: u64) -> Instant {
    Instant::from_millis(x)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// Feedback echoing a packet sent at `echo_ms` (no receiver delay), reporting
/// `x_recv` and `p`.
fn fb(echo_ms: u64, x_recv: f64, p: f64) -> TfrcFeedback {
    TfrcFeedback {
        echo_sent_at: ms(echo_ms),
        elapsed: Duration::ZERO,
        x_recv_bytes_per_s: x_recv,
        p,
        highest_seq: 0,
        loss_events: 0,
        freeze: FreezeSignals::default(),
    }
}

fn with(f: TfrcFeedback, sig: FreezeSignals) -> TfrcFeedback {
    TfrcFeedback { freeze: sig, ..f }
}

/// A greedy sender with the RFC defaults (s = 1000).
fn sender() -> TfrcSender {
    sender_with(TfrcConfig::default())
}

fn sender_with(cfg: TfrcConfig) -> TfrcSender {
    let mut s = TfrcSender::new(cfg);
    s.set_unlimited();
    s
}

/// Drive `s` alone from its current schedule up to `until`, handling its timers and
/// collecting what it sends.
fn run_sender(s: &mut TfrcSender, from: Instant, until: Instant) -> Vec<TfrcData> {
    let mut out = Vec::new();
    let mut now = from;
    loop {
        s.handle_timeout(now);
        while let Some(p) = s.poll_transmit(now) {
            out.push(p);
        }
        match s.poll_timeout() {
            Some(t) if t <= until => now = t.max(now + Duration::from_nanos(1)).min(until),
            _ => break,
        }
        if now >= until {
            s.handle_timeout(until);
            while let Some(p) = s.poll_transmit(until) {
                out.push(p);
            }
            break;
        }
    }
    out
}

/// Run `s` and hand it a feedback every 100 ms from `from_ms` to `to_ms` (inclusive),
/// each echoing the packet sent 100 ms earlier.
fn feed(s: &mut TfrcSender, from_ms: u64, to_ms: u64, x_recv: f64, p: f64) {
    let mut t = from_ms;
    while t <= to_ms {
        run_sender(s, ms(t - 100), ms(t));
        s.handle_feedback(ms(t), &fb(t - 100, x_recv, p));
        t += 100;
    }
}

/// A sender that has seen its first feedback at 100 ms (R = 100 ms, X = 40 000 B/s,
/// tld = 100 ms).
fn sender_after_first_feedback() -> TfrcSender {
    let mut s = sender();
    assert_eq!(s.poll_transmit(ms(0)).unwrap().seq, 0);
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    s
}

// ---------------------------------------------------------------------------------
// Sender: start-up, slow start, the X_recv limit
// ---------------------------------------------------------------------------------

#[test]
fn sender_starts_at_one_packet_per_second_with_a_two_second_nofeedback_timer() {
    let mut s = sender();
    assert_eq!(s.rate_bytes_per_s(), 1000.0);
    let p = s.poll_transmit(ms(0)).unwrap();
    assert_eq!((p.seq, p.len, p.rtt, p.ccval), (0, 1000, Duration::ZERO, 0));
    assert!(s.poll_transmit(ms(0)).is_none());
    assert_eq!(s.nofeedback_deadline(), Some(ms(2000)));
    assert_eq!(s.poll_timeout(), Some(ms(1000)));
}

#[test]
fn first_feedback_sets_r_and_the_initial_rate_w_init_over_r() {
    let s = sender_after_first_feedback();
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    // W_init = min(4·1000, max(2·1000, 4380)) = 4000 bytes per 100 ms.
    assert!(close(s.rate_bytes_per_s(), 40_000.0, 1e-12));
    // Nofeedback timer: max(4R, 2s/X) = 400 ms.
    assert_eq!(s.nofeedback_deadline(), Some(ms(500)));
}

/// A greedy sender given a handshake RTT of `rtt_ms`, checked to start at `rate`
/// (W_init/R), after its first packet at 0 ms.
fn started_after_handshake(rtt_ms: u64, rate: f64) -> TfrcSender {
    let mut s = sender_with(TfrcConfig {
        handshake_rtt: Some(Duration::from_millis(rtt_ms)),
        ..TfrcConfig::default()
    });
    assert!(close(s.rate_bytes_per_s(), rate, 1e-12));
    assert!(s.poll_transmit(ms(0)).is_some());
    s
}

/// A handshake RTT (RFC 5348 §4.2) sets the initial rate, but the first feedback's
/// sample replaces it (§4.3 step 2: "If no feedback has been received before, R =
/// R_sample"). Before, it was averaged in: R = 0.9·1 s + 0.1·100 ms = 910 ms.
#[test]
fn first_feedback_replaces_a_handshake_rtt_with_its_sample() {
    // W_init/R = 4000 B per 1 s.
    let mut s = started_after_handshake(1000, 4000.0);
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
}

/// With a handshake RTT, tld is the time the connection was set up (§4.2: "Upon
/// receiving an RTT measurement (e.g., after ... the SYN exchange ...), tld is set to
/// the current time"), so slow start doubles X no sooner than R after it. A first
/// feedback 100 ms after the start that gives no RTT sample (the receiver held it 100
/// ms) leaves R at the handshake's 400 ms: X must stay W_init/R. Before, tld was unset
/// until then, and X doubled at once.
#[test]
fn handshake_rtt_starts_the_slow_start_clock_at_the_first_packet() {
    let mut s = started_after_handshake(400, 10_000.0);
    let held = TfrcFeedback {
        elapsed: Duration::from_millis(100),
        ..fb(0, 0.0, 0.0)
    };
    s.handle_feedback(ms(100), &held);
    assert_eq!(s.rtt(), Some(Duration::from_millis(400)));
    assert!(
        close(s.rate_bytes_per_s(), 10_000.0, 1e-12),
        "{}",
        s.rate_bytes_per_s()
    );
    // R after the start, the next feedback may double it (the set still holds the
    // initial infinity: the interval was not data-limited).
    run_sender(&mut s, ms(0), ms(400));
    s.handle_feedback(ms(400), &fb(300, 10_000.0, 0.0));
    assert!(s.rate_bytes_per_s() > 10_000.0, "{}", s.rate_bytes_per_s());
}

#[test]
fn rtt_is_an_ewma_with_q_of_nine_tenths() {
    let mut s = sender_after_first_feedback();
    run_sender(&mut s, ms(100), ms(200));
    // Sample 200 ms: R = 0.9·100 + 0.1·200 = 110 ms.
    s.handle_feedback(ms(200), &fb(0, 1e6, 0.0));
    assert!(close(s.rtt().unwrap().as_secs_f64(), 0.110, 1e-9));
    // t_delay is subtracted from the sample.
    let mut f = fb(150, 1e6, 0.0);
    f.elapsed = Duration::from_millis(40);
    s.handle_feedback(ms(300), &f);
    // Sample 110 ms: R stays 110 ms.
    assert!(close(s.rtt().unwrap().as_secs_f64(), 0.110, 1e-9));
}

#[test]
fn slow_start_doubles_once_per_rtt_bounded_by_twice_x_recv() {
    let mut s = sender_after_first_feedback();
    // One RTT after tld: double (the initial ∞ entry of X_recv_set still limits
    // nothing).
    feed(&mut s, 200, 200, 30_000.0, 0.0);
    assert!(close(s.rate_bytes_per_s(), 80_000.0, 1e-12));
    run_sender(&mut s, ms(200), ms(250));
    // Less than an RTT later: no change.
    s.handle_feedback(ms(250), &fb(150, 30_000.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 80_000.0, 1e-12));
    run_sender(&mut s, ms(250), ms(300));
    // ∞ has aged out (older than 2R): 2·X_recv = 60 000 bounds the doubling.
    s.handle_feedback(ms(300), &fb(200, 30_000.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 60_000.0, 1e-12));
    feed(&mut s, 400, 400, 100_000.0, 0.0);
    assert!(close(s.rate_bytes_per_s(), 120_000.0, 1e-12));
    assert_eq!(
        s.stats().data_limited_feedback,
        1,
        "only the very first one"
    );
}

#[test]
fn slow_start_never_falls_below_the_initial_rate() {
    let mut s = sender_after_first_feedback();
    run_sender(&mut s, ms(100), ms(300));
    s.handle_feedback(ms(300), &fb(200, 1_000.0, 0.0));
    feed(&mut s, 400, 400, 1_000.0, 0.0);
    assert!(close(s.rate_bytes_per_s(), 40_000.0, 1e-12));
}

#[test]
fn x_recv_limits_the_equation_rate_to_twice_the_receive_rate() {
    let mut s = sender_after_first_feedback();
    feed(&mut s, 200, 300, 25_000.0, 0.0);
    // p = 0.01, R = 100 ms: X_Bps = 112 332 B/s; 2·X_recv = 50 000 limits.
    feed(&mut s, 400, 400, 25_000.0, 0.01);
    assert!(close(s.x_bps(), 112_332.234_363, 1e-9));
    assert!(close(s.rate_bytes_per_s(), 50_000.0, 1e-12));
    // A high receive rate: the equation limits.
    feed(&mut s, 500, 500, 1e6, 0.01);
    assert!(close(s.rate_bytes_per_s(), 112_332.234_363, 1e-9));
}

#[test]
fn rate_never_falls_below_one_packet_per_t_mbi() {
    let mut s = sender_after_first_feedback();
    // X_recv = 0 throughout: recv_limit = 0, so only the floor s/t_mbi remains.
    feed(&mut s, 200, 300, 0.0, 0.0);
    feed(&mut s, 400, 400, 0.0, 0.5);
    assert!(close(s.rate_bytes_per_s(), 1000.0 / 64.0, 1e-12));
}

/// Found by the property tests (mobiflow-sim `engine::props`): with t_mbi = 570 ms the
/// sender started at s/1 s = 1000 B/s, below its own floor s/t_mbi = 1754 B/s, and
/// stayed there until the first feedback; likewise W_init/R at the first feedback or
/// from a handshake RTT when R > W_init·t_mbi/s. RFC 5348 §4.3 keeps X >= s/t_mbi.
#[test]
fn rate_starts_at_or_above_one_packet_per_t_mbi_when_t_mbi_is_short() {
    let floor = |cfg: &TfrcConfig| cfg.s as f64 / cfg.t_mbi.as_secs_f64();
    let cfg = TfrcConfig {
        t_mbi: Duration::from_millis(570),
        ..TfrcConfig::default()
    };
    let s = sender_with(cfg.clone());
    assert!(close(s.rate_bytes_per_s(), floor(&cfg), 1e-12));
    // A handshake RTT of 600 s: W_init/R = 4000/600 B/s, below 1000/64.
    let cfg = TfrcConfig {
        handshake_rtt: Some(Duration::from_secs(600)),
        ..TfrcConfig::default()
    };
    let s = sender_with(cfg.clone());
    assert!(close(s.rate_bytes_per_s(), floor(&cfg), 1e-12));
    // A first feedback with R = 300 s: W_init/R = 13.3 B/s < 15.625 B/s.
    let mut s = sender();
    assert!(s.poll_transmit(ms(0)).is_some());
    s.handle_feedback(ms(300_000), &fb(0, 0.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 1000.0 / 64.0, 1e-12));
}

#[test]
fn data_limited_interval_with_new_loss_caps_at_the_halved_receive_rate() {
    // An application that sends one packet per 50 ms (20 000 B/s) while X allows more:
    // every feedback interval is data-limited.
    let mut s = TfrcSender::new(TfrcConfig::default());
    let mut now = ms(0);
    let mut fbs = 0;
    while now <= ms(1000) {
        s.write(1000);
        while s.poll_transmit(now).is_some() {}
        if now >= ms(100) && now.as_nanos() % 100_000_000 == 0 {
            let echo = now.as_nanos() / 1_000_000 - 100;
            s.handle_feedback(now, &fb(echo, 20_000.0, 0.0));
            fbs += 1;
        }
        now += Duration::from_millis(50);
    }
    assert!(fbs >= 9);
    assert!(s.stats().data_limited_feedback >= 5);
    // Data-limited, no loss: recv_limit = 2·max(X_recv_set) = 40 000, X doubles into it.
    assert!(close(s.rate_bytes_per_s(), 40_000.0, 1e-9));
    // Now a loss (p increases): halve the set, X_recv·0.85, recv_limit = max(set) =
    // max(20 000/2, 17 000) = 17 000; X = min(X_Bps, 17 000).
    s.write(1000);
    let _ = s.poll_transmit(now);
    s.handle_feedback(now, &fb(1000, 20_000.0, 0.01));
    assert!(
        close(s.rate_bytes_per_s(), 17_000.0, 1e-9),
        "{}",
        s.rate_bytes_per_s()
    );
}

// ---------------------------------------------------------------------------------
// Sender: the nofeedback timer (RFC 5348 §4.4)
// ---------------------------------------------------------------------------------

#[test]
fn nofeedback_without_any_feedback_halves_the_rate() {
    let mut s = sender();
    run_sender(&mut s, ms(0), ms(1999));
    s.handle_timeout(ms(2000));
    assert_eq!(s.rate_bytes_per_s(), 500.0);
    assert_eq!(s.stats().nofeedback_expiries, 1);
    // Restarted at max(4R, 2s/X) = 2·1000/500 = 4 s.
    assert_eq!(s.nofeedback_deadline(), Some(ms(6000)));
}

#[test]
fn nofeedback_when_idle_since_the_timer_was_set_does_not_halve() {
    // One packet, then nothing to send.
    let mut s = TfrcSender::new(TfrcConfig::default());
    s.write(1000);
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    assert_eq!(s.nofeedback_deadline(), Some(ms(500)));
    s.handle_timeout(ms(500));
    // p = 0 and X (40 000) < 2·recover_rate (80 000), idle all along: keep X.
    assert!(close(s.rate_bytes_per_s(), 40_000.0, 1e-12));
}

#[test]
fn nofeedback_in_slow_start_when_sending_halves_the_rate() {
    let mut s = sender_after_first_feedback();
    run_sender(&mut s, ms(100), ms(499));
    s.handle_timeout(ms(500));
    assert!(close(s.rate_bytes_per_s(), 20_000.0, 1e-12));
}

#[test]
fn nofeedback_update_limits_halves_x_recv_when_it_was_the_limit() {
    let mut s = sender_after_first_feedback();
    feed(&mut s, 200, 300, 25_000.0, 0.0);
    feed(&mut s, 400, 400, 25_000.0, 0.01);
    assert!(close(s.rate_bytes_per_s(), 50_000.0, 1e-12));
    let deadline = s.nofeedback_deadline().unwrap();
    run_sender(&mut s, ms(400), deadline - Duration::from_nanos(1));
    s.handle_timeout(deadline);
    // X_Bps (112 332) > 2·X_recv (50 000): Update_Limits(X_recv): the set becomes
    // {12 500}, X = min(X_Bps, 25 000).
    assert!(close(s.rate_bytes_per_s(), 25_000.0, 1e-12));
    assert!(close(s.x_recv_set_max(), 12_500.0, 1e-12));
}

#[test]
fn nofeedback_update_limits_halves_the_equation_rate_when_it_was_the_limit() {
    let mut s = sender_after_first_feedback();
    feed(&mut s, 200, 400, 1e6, 0.01);
    let x_bps = s.x_bps();
    let deadline = s.nofeedback_deadline().unwrap();
    run_sender(&mut s, ms(400), deadline - Duration::from_nanos(1));
    s.handle_timeout(deadline);
    // Update_Limits(X_Bps/2): X = X_Bps/2, set = {X_Bps/4}.
    assert!(close(s.rate_bytes_per_s(), x_bps / 2.0, 1e-12));
    assert!(close(s.x_recv_set_max(), x_bps / 4.0, 1e-12));
}

#[test]
fn nofeedback_with_loss_when_idle_and_x_recv_below_recover_rate_does_not_halve() {
    let mut s = TfrcSender::new(TfrcConfig::default());
    s.write(1000);
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    s.handle_feedback(ms(300), &fb(200, 10_000.0, 0.02));
    let x = s.rate_bytes_per_s();
    s.handle_timeout(s.nofeedback_deadline().unwrap());
    assert_eq!(s.rate_bytes_per_s(), x);
}

// ---------------------------------------------------------------------------------
// Sender: pacing, window counter, oscillation prevention, CCID 3 idle rule
// ---------------------------------------------------------------------------------

#[test]
fn pacing_interval_is_s_over_x() {
    let mut s = sender_after_first_feedback();
    let pkts = run_sender(&mut s, ms(100), ms(300));
    // X = 40 000 B/s, s = 1000: one packet every 25 ms from 100 ms (the late schedule
    // restarts at now; no burst).
    let times: Vec<u64> = pkts
        .iter()
        .map(|p| p.sent_at.as_nanos() / 1_000_000)
        .collect();
    assert_eq!(times, [100, 125, 150, 175, 200, 225, 250, 275, 300]);
    assert_eq!(s.t_ipi(), Duration::from_millis(25));
}

#[test]
fn t_delta_lets_a_packet_leave_up_to_half_the_granularity_early() {
    let cfg = TfrcConfig {
        t_gran: Duration::from_millis(10),
        ..TfrcConfig::default()
    };
    let mut s = sender_with(cfg);
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    s.poll_transmit(ms(100)).unwrap();
    // t_ipi = 25 ms, t_delta = min(12.5, 5) = 5 ms: next nominal 125 ms, allowed at 120.
    assert_eq!(s.poll_timeout(), Some(ms(120)));
    assert!(s.poll_transmit(ms(119)).is_none());
    let p = s.poll_transmit(ms(120)).unwrap();
    assert_eq!(p.seq, 2);
    // The schedule keeps its nominal times: next at 150 − 5.
    assert_eq!(s.poll_timeout(), Some(ms(145)));
}

#[test]
fn window_counter_advances_one_per_quarter_rtt_and_at_most_five() {
    let mut s = sender_after_first_feedback();
    // R = 100 ms: packets every 25 ms = one quarter RTT each.
    let pkts = run_sender(&mut s, ms(100), ms(200));
    let cc: Vec<u8> = pkts.iter().map(|p| p.ccval).collect();
    // Packet 0 at t = 0 set the clock; at 100 ms four quarters have passed.
    assert_eq!(cc, [4, 5, 6, 7, 8]);
    // After a long pause the counter moves by at most 5 (mod 16).
    let mut s2 = TfrcSender::new(TfrcConfig::default());
    s2.write(1000);
    s2.poll_transmit(ms(0)).unwrap();
    s2.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    s2.write(1000);
    let p = s2.poll_transmit(ms(5000)).unwrap();
    assert_eq!(p.ccval, 5);
    s2.write(1000);
    let p = s2.poll_transmit(ms(9000)).unwrap();
    assert_eq!(p.ccval, 10);
    s2.write(2000);
    let _ = s2.poll_transmit(ms(13_000)).unwrap();
    let p = s2.poll_transmit(ms(17_000)).unwrap();
    assert_eq!(p.ccval, (10 + 5 + 5) % 16);
}

/// Packets 0 (t = 0) and 1 (t = 100 ms, counter 4) sent, a first feedback at 100 ms
/// (R = 100 ms), then a feedback at 110 ms acknowledging packet 1 (R falls to 91 ms):
/// the CCVal of the packet sent at 125 ms.
fn ccval_after_ack_of_counter_four(cfg: TfrcConfig) -> u8 {
    let mut s = sender_with(cfg);
    assert_eq!(s.poll_transmit(ms(0)).unwrap().ccval, 0);
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    let p1 = s.poll_transmit(ms(100)).unwrap();
    assert_eq!((p1.seq, p1.ccval), (1, 4));
    let ack = TfrcFeedback {
        highest_seq: 1,
        ..fb(100, 40_000.0, 0.0)
    };
    s.handle_feedback(ms(110), &ack);
    assert!(s.poll_transmit(ms(110)).is_none());
    let p2 = s.poll_transmit(ms(125)).unwrap();
    assert_eq!(p2.seq, 2);
    p2.ccval
}

#[test]
fn ccid3_window_counter_is_at_least_four_past_the_acknowledged_packets() {
    // RFC 4342 §8.1 (ns-2 Agent/DCCP/TFRC `s_recv_wc_`): packet 1 carried 4 and is
    // acknowledged, so the next packet carries at least 8, although only one quarter
    // of the new R (22.75 ms) has passed since the counter last moved.
    assert_eq!(ccval_after_ack_of_counter_four(TfrcConfig::ccid3()), 8);
}

#[test]
fn tfrc_over_udp_window_counter_only_counts_quarter_rtts() {
    // Without CCID 3 the acknowledgement rule does not apply: 4 + one quarter RTT.
    assert_eq!(ccval_after_ack_of_counter_four(TfrcConfig::default()), 5);
}

#[test]
fn ccid3_acknowledgement_floor_is_taken_unwrapped_across_counter_wraps() {
    // Acknowledgements of packets 16 counter steps apart: the floor keeps rising
    // (an unwrapped comparison), it is not confused by 4-bit wrap-around.
    let mut s = sender_with(TfrcConfig::ccid3());
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    let mut now = 100;
    let mut last = 0u64;
    let mut seen = Vec::new();
    for _ in 0..12 {
        let p = loop {
            if let Some(p) = s.poll_transmit(ms(now)) {
                break p;
            }
            now += 1;
        };
        seen.push(p.ccval);
        // Acknowledge it at once (a 1 ms RTT sample keeps the quarter clock slow).
        let ack = TfrcFeedback {
            highest_seq: p.seq,
            ..fb(now, 40_000.0, 0.0)
        };
        s.handle_feedback(ms(now + 1), &ack);
        last = p.seq;
    }
    assert_eq!(last, 12);
    // Each acknowledged packet pushes the next counter 4 further: 4, 8, 12, 0, 4, ...
    for w in seen.windows(2) {
        assert!(loss_history::sub16(w[1], w[0]) >= 4, "{seen:?}");
    }
}

#[test]
fn min_p_floors_a_reported_loss_event_rate_but_not_zero() {
    // ns-2 Agent/DCCP/TFRC `s_smallest_p_` = 1e-5.
    let cfg = TfrcConfig {
        min_p: 1e-5,
        ..TfrcConfig::ccid3()
    };
    let mut s = sender_with(cfg.clone());
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    assert_eq!(s.p(), 0.0);
    s.handle_feedback(ms(200), &fb(100, 1e9, 1e-7));
    assert_eq!(s.p(), 1e-5);
    // X follows the equation at the floor, not at the reported 1e-7.
    let x_floor = throughput(1000.0, s.rtt().unwrap().as_secs_f64(), 1e-5, 1.0);
    assert!(close(s.x_bps(), x_floor, 1e-12));
    s.handle_feedback(ms(300), &fb(200, 1e9, 0.01));
    assert_eq!(s.p(), 0.01);
    // Without a floor (the default) the reported p is used as it is.
    let mut s0 = sender_with(TfrcConfig::ccid3());
    s0.poll_transmit(ms(0)).unwrap();
    s0.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    s0.handle_feedback(ms(200), &fb(100, 1e9, 1e-7));
    assert_eq!(s0.p(), 1e-7);
}

#[test]
fn oscillation_prevention_scales_the_interval_by_the_sqrt_rtt_ratio() {
    let cfg = TfrcConfig {
        oscillation_prevention: true,
        ..TfrcConfig::default()
    };
    let mut s = sender_with(cfg);
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    // First sample: R_sqmean = sqrt(0.1), X_inst = X.
    assert_eq!(s.t_ipi(), Duration::from_millis(25));
    run_sender(&mut s, ms(100), ms(500));
    // A 400 ms sample: R_sqmean = 0.9·sqrt(0.1) + 0.1·sqrt(0.4);
    // X_inst = X·R_sqmean/sqrt(0.4).
    s.handle_feedback(ms(500), &fb(100, 1e9, 0.0));
    let sqmean = 0.9 * 0.1f64.sqrt() + 0.1 * 0.4f64.sqrt();
    let x_inst = s.rate_bytes_per_s() * sqmean / 0.4f64.sqrt();
    assert!(close(s.t_ipi().as_secs_f64(), 1000.0 / x_inst, 1e-6));
    assert!(s.t_ipi().as_secs_f64() > 1000.0 / s.rate_bytes_per_s());
}

#[test]
fn ccid3_idle_sender_is_not_limited_below_the_initial_rate() {
    // RFC 4342 §5.1: after 2 RTTs of silence, 2·X_recv is not allowed to pull X
    // below W_init/R.
    let run = |cfg: TfrcConfig| {
        let mut s = TfrcSender::new(cfg);
        s.write(1000);
        s.poll_transmit(ms(0)).unwrap();
        s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
        s.handle_feedback(ms(600), &fb(0, 1_000.0, 0.01));
        s.rate_bytes_per_s()
    };
    // Plain RFC 5348: the interval was data-limited and p rose: recv_limit = 0.85·X_recv.
    assert!(close(run(TfrcConfig::default()), 850.0, 1e-12));
    // CCID 3: max(2·X_recv, initial_rate) = 4000 B / 0.15 s (R = 0.9·0.1 + 0.1·0.6).
    assert!(close(run(TfrcConfig::ccid3()), 4000.0 / 0.15, 1e-9));
}

// ---------------------------------------------------------------------------------
// Sender: Freeze-DCCP states
// ---------------------------------------------------------------------------------

/// A sender in congestion avoidance: R = 100 ms, p = 0.01, X_recv = 60 000.
fn sender_steady() -> TfrcSender {
    let mut s = sender_after_first_feedback();
    feed(&mut s, 200, 300, 60_000.0, 0.0);
    feed(&mut s, 400, 400, 60_000.0, 0.01);
    assert_eq!(s.state(), FreezeState::Normal);
    assert!(close(s.rate_bytes_per_s(), 112_332.234_363, 1e-9));
    s
}

#[test]
fn test_normal_local_freeze_signals_on_the_next_five_packets_then_stops() {
    let mut s = sender_steady();
    s.freeze(ms(400));
    assert_eq!(s.state(), FreezeState::Frozen);
    let pkts = run_sender(&mut s, ms(400), ms(1000));
    assert_eq!(pkts.len(), 5);
    assert!(pkts.iter().all(|p| p.freeze == FreezeSignals::FREEZE));
    assert_eq!(
        s.poll_timeout(),
        None,
        "frozen: no send time, no nofeedback timer"
    );
}

#[test]
fn test_normal_feedback_freeze_enters_frozen_saving_x_recv_and_p() {
    let mut s = sender_steady();
    s.handle_feedback(
        ms(450),
        &with(fb(350, 70_000.0, 0.02), FreezeSignals::FREEZE),
    );
    assert_eq!(s.state(), FreezeState::Frozen);
    assert_eq!(s.stats().freezes, 1);
    // A remote freeze sends nothing more at all.
    assert!(run_sender(&mut s, ms(450), ms(2000)).is_empty());
    // Later reports while frozen change nothing that restoration keeps.
    s.handle_feedback(ms(500), &fb(350, 1.0, 0.5));
    s.unfreeze(ms(3000));
    assert_eq!(s.state(), FreezeState::Restoring);
    // Restored: X_recv and p from the freezing feedback; X = X_recv saved.
    assert_eq!(s.x_recv(), 70_000.0);
    assert_eq!(s.p(), 0.02);
    assert_eq!(s.rate_bytes_per_s(), 70_000.0);
}

#[test]
fn test_frozen_sends_nothing_and_suspends_the_nofeedback_timer() {
    let mut s = sender_steady();
    s.handle_feedback(
        ms(450),
        &with(fb(350, 60_000.0, 0.01), FreezeSignals::FREEZE),
    );
    assert_eq!(s.nofeedback_deadline(), None);
    let x = s.rate_bytes_per_s();
    assert!(run_sender(&mut s, ms(450), ms(60_000)).is_empty());
    assert_eq!(s.stats().nofeedback_expiries, 0);
    assert_eq!(s.rate_bytes_per_s(), x);
}

#[test]
fn test_frozen_unfreeze_resumes_at_once_at_the_saved_receive_rate_carrying_restoring() {
    let mut s = sender_steady();
    s.handle_feedback(
        ms(450),
        &with(fb(350, 60_000.0, 0.01), FreezeSignals::FREEZE),
    );
    s.handle_feedback(
        ms(5000),
        &with(fb(350, 10.0, 0.01), FreezeSignals::UNFREEZE),
    );
    assert_eq!(s.state(), FreezeState::Restoring);
    assert_eq!(s.stats().restorations, 1);
    assert!(s.nofeedback_deadline().is_some());
    // The rate update of this same feedback: X = min(X_Bps, 2·X_recv saved).
    assert!(close(s.rate_bytes_per_s(), 112_332.234_363, 1e-9));
    let p = s.poll_transmit(ms(5000)).expect("sends at once");
    assert_eq!(p.freeze, FreezeSignals::RESTORING);
}

#[test]
fn test_frozen_local_unfreeze_sets_x_to_the_saved_receive_rate() {
    let mut s = sender_steady();
    s.freeze(ms(400));
    run_sender(&mut s, ms(400), ms(1000));
    s.unfreeze(ms(3000));
    assert_eq!(s.state(), FreezeState::Restoring);
    assert_eq!(s.rate_bytes_per_s(), 60_000.0);
    assert_eq!(s.p(), 0.01);
    let p = s.poll_transmit(ms(3000)).unwrap();
    assert_eq!(p.freeze, FreezeSignals::RESTORING);
    assert_eq!(s.t_ipi(), Duration::from_secs_f64(1000.0 / 60_000.0));
}

/// A sender restoring after a freeze at 400 ms and an unfreeze at 3 s.
fn sender_restoring() -> TfrcSender {
    let mut s = sender_steady();
    s.freeze(ms(400));
    run_sender(&mut s, ms(400), ms(1000));
    s.unfreeze(ms(3000));
    run_sender(&mut s, ms(3000), ms(3100));
    s
}

#[test]
fn test_restoring_ignores_rtt_samples_and_receive_rate_reports() {
    let mut s = sender_restoring();
    // A 900 ms RTT sample and a tiny receive rate, p unchanged.
    s.handle_feedback(ms(3100), &fb(2200, 5.0, 0.01));
    assert_eq!(s.state(), FreezeState::Restoring);
    assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
    assert_eq!(s.x_recv(), 60_000.0);
    // X = min(X_Bps(p, R), 2·X_recv saved).
    assert!(close(s.rate_bytes_per_s(), 112_332.234_363, 1e-9));
    assert!(run_sender(&mut s, ms(3100), ms(3200))
        .iter()
        .all(|p| p.freeze == FreezeSignals::RESTORING));
}

#[test]
fn test_restoring_p_increase_falls_back_to_normal() {
    let mut s = sender_restoring();
    s.handle_feedback(ms(3100), &fb(3000, 5_000.0, 0.02));
    assert_eq!(s.state(), FreezeState::Normal);
    assert_eq!(s.stats().fallbacks, 1);
    // Normal rules again: the equation for the new p (2·max(X_recv_set) = 120 000,
    // the restored entry, does not limit).
    assert!(close(
        s.rate_bytes_per_s(),
        throughput(1000.0, 0.1, 0.02, 1.0),
        1e-12
    ));
    let p = run_sender(&mut s, ms(3100), ms(3400));
    assert!(p.iter().all(|p| p.freeze.is_empty()));
}

#[test]
fn test_restoring_new_loss_event_without_a_p_rise_falls_back_to_normal() {
    // mobiflow addition (freeze_fallback_on_loss_event, default on).
    let mut s = sender_restoring();
    let mut f = fb(3000, 5_000.0, 0.01);
    f.loss_events = 1;
    s.handle_feedback(ms(3100), &f);
    assert_eq!(s.state(), FreezeState::Normal);
    // The authors' rule alone: p did not rise, keep restoring.
    let mut s = sender_with(TfrcConfig {
        freeze_fallback_on_loss_event: false,
        ..TfrcConfig::default()
    });
    s.poll_transmit(ms(0)).unwrap();
    s.handle_feedback(ms(100), &fb(0, 0.0, 0.0));
    feed(&mut s, 200, 300, 60_000.0, 0.0);
    feed(&mut s, 400, 400, 60_000.0, 0.01);
    s.freeze(ms(400));
    run_sender(&mut s, ms(400), ms(1000));
    s.unfreeze(ms(3000));
    run_sender(&mut s, ms(3000), ms(3100));
    s.handle_feedback(ms(3100), &f);
    assert_eq!(s.state(), FreezeState::Restoring);
}

#[test]
fn test_restoring_unfrozen_enters_probing() {
    let mut s = sender_restoring();
    s.handle_feedback(
        ms(3100),
        &with(fb(3000, 5.0, 0.01), FreezeSignals::UNFROZEN),
    );
    assert_eq!(s.state(), FreezeState::Probing);
    assert_eq!(s.stats().probings, 1);
    assert_eq!(s.x_recv(), 60_000.0);
    let pkts = run_sender(&mut s, ms(3100), ms(3200));
    assert!(!pkts.is_empty());
    assert!(pkts.iter().all(|p| p.freeze == FreezeSignals::PROBING));
}

#[test]
fn test_normal_unfrozen_is_ignored() {
    let mut s = sender_steady();
    s.handle_feedback(
        ms(500),
        &with(fb(400, 60_000.0, 0.01), FreezeSignals::UNFROZEN),
    );
    assert_eq!(s.state(), FreezeState::Normal);
}

/// A probing sender: R = 100 ms, p = 0.01, X_recv saved 60 000.
fn sender_probing() -> TfrcSender {
    let mut s = sender_restoring();
    s.handle_feedback(
        ms(3100),
        &with(fb(3000, 5.0, 0.01), FreezeSignals::UNFROZEN),
    );
    run_sender(&mut s, ms(3100), ms(3200));
    s
}

#[test]
fn test_probing_doubles_once_per_rtt_ignoring_p_bounded_by_twice_x_recv() {
    let mut s = sender_probing();
    // Entering PROBING (p = 0.01 > 0 ignored): X = min(2·60 000, 2·X_recv saved).
    assert!(close(s.rate_bytes_per_s(), 120_000.0, 1e-12));
    // 2·max(X_recv_set) = 2·70 000 bounds the doubling.
    s.handle_feedback(ms(3200), &fb(3100, 70_000.0, 0.01));
    assert_eq!(s.state(), FreezeState::Probing);
    assert!(close(s.rate_bytes_per_s(), 140_000.0, 1e-12));
    run_sender(&mut s, ms(3200), ms(3250));
    // Less than an RTT since the last doubling: no change.
    s.handle_feedback(ms(3250), &fb(3150, 500_000.0, 0.01));
    assert!(close(s.rate_bytes_per_s(), 140_000.0, 1e-12));
    run_sender(&mut s, ms(3250), ms(3300));
    s.handle_feedback(ms(3300), &fb(3200, 500_000.0, 0.01));
    assert!(close(s.rate_bytes_per_s(), 280_000.0, 1e-12));
    assert_eq!(s.state(), FreezeState::Probing);
}

#[test]
fn test_probing_p_drop_over_a_tenth_falls_back_to_normal() {
    let mut s = sender_probing();
    // 0.01 − 0.0095 = 0.0005 ≤ 0.001: stay.
    s.handle_feedback(ms(3200), &fb(3100, 500_000.0, 0.0095));
    assert_eq!(s.state(), FreezeState::Probing);
    // 0.0095 − 0.0080 = 0.0015 > 0.00095: back to normal.
    feed(&mut s, 3300, 3300, 500_000.0, 0.008);
    assert_eq!(s.state(), FreezeState::Normal);
    assert!(close(
        s.rate_bytes_per_s(),
        throughput(1000.0, s.rtt().unwrap().as_secs_f64(), 0.008, 1.0),
        1e-9
    ));
}

#[test]
fn test_probing_p_increase_falls_back_to_normal() {
    let mut s = sender_probing();
    s.handle_feedback(ms(3200), &fb(3100, 500_000.0, 0.05));
    assert_eq!(s.state(), FreezeState::Normal);
    assert_eq!(s.stats().fallbacks, 1);
}

#[test]
fn test_restoring_and_probing_refreeze_keeps_the_first_saved_values() {
    let mut s = sender_probing();
    s.handle_feedback(ms(3200), &fb(3100, 500_000.0, 0.0095));
    s.freeze(ms(3200));
    assert_eq!(s.state(), FreezeState::Frozen);
    run_sender(&mut s, ms(3200), ms(4000));
    s.unfreeze(ms(5000));
    assert_eq!(s.x_recv(), 60_000.0);
    assert_eq!(s.p(), 0.01);
}

// ---------------------------------------------------------------------------------
// Receiver: feedback rules
// ---------------------------------------------------------------------------------

fn data(seq: u64, sent_ms: u64, rtt_ms: u64, ccval: u8) -> TfrcData {
    TfrcData {
        seq,
        len: 1000,
        sent_at: ms(sent_ms),
        rtt: Duration::from_millis(rtt_ms),
        ccval,
        freeze: FreezeSignals::default(),
    }
}

fn sig(d: TfrcData, s: FreezeSignals) -> TfrcData {
    TfrcData { freeze: s, ..d }
}

fn drain(r: &mut TfrcReceiver, now: Instant) -> Vec<TfrcFeedback> {
    r.handle_timeout(now);
    let mut v = Vec::new();
    while let Some(f) = r.poll_transmit(now) {
        v.push(f);
    }
    v
}

#[test]
fn receiver_answers_the_first_data_packet_with_zero_rate_and_no_loss() {
    let mut r = TfrcReceiver::new(TfrcConfig::default());
    r.handle_data(ms(50), &data(0, 0, 0, 0));
    let f = drain(&mut r, ms(50));
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].x_recv_bytes_per_s, f[0].p), (0.0, 0.0));
    assert_eq!(f[0].echo_sent_at, ms(0));
    assert_eq!(r.stats().bytes_received, 1000);
}

#[test]
fn timer_feedback_once_per_rtt_reports_bytes_over_the_interval() {
    let mut r = TfrcReceiver::new(TfrcConfig::default());
    r.handle_data(ms(50), &data(0, 0, 100, 0));
    assert_eq!(drain(&mut r, ms(50)).len(), 1);
    assert_eq!(r.poll_timeout(), Some(ms(150)));
    // 10 packets in the next 100 ms, one every 10 ms.
    for i in 1..=10u64 {
        r.handle_data(ms(50 + 10 * i), &data(i, 10 * i, 100, 0));
        let f = drain(&mut r, ms(50 + 10 * i));
        if i < 10 {
            assert!(f.is_empty());
        } else {
            // The timer at 150 ms: 10 000 bytes in 100 ms.
            assert_eq!(f.len(), 1);
            assert!(close(f[0].x_recv_bytes_per_s, 100_000.0, 1e-9));
            // Echo of the last packet; t_delay = 0.
            assert_eq!(f[0].echo_sent_at, ms(100));
            assert_eq!(f[0].elapsed, Duration::ZERO);
        }
    }
    assert_eq!(r.poll_timeout(), Some(ms(250)));
    // Nothing arrives: the expiry sends nothing and disarms.
    assert!(drain(&mut r, ms(250)).is_empty());
    assert_eq!(r.poll_timeout(), None);
    // The next packet is answered at once (RFC 5348 §6.1 step 3).
    r.handle_data(ms(400), &data(11, 350, 100, 0));
    assert_eq!(drain(&mut r, ms(400)).len(), 1);
}

#[test]
fn timer_mode_sends_feedback_at_once_when_p_increases() {
    let mut r = TfrcReceiver::new(TfrcConfig::default());
    let mut now = 0;
    for seq in 0..50u64 {
        now = 10 + seq;
        if seq != 20 {
            r.handle_data(ms(now), &data(seq, seq, 100, 0));
        }
        let f = drain(&mut r, ms(now));
        if seq == 23 {
            // Third packet after the hole: loss event, p > 0: feedback now.
            assert_eq!(f.len(), 1);
            assert!(f[0].p > 0.0);
        }
    }
    assert_eq!(r.stats().loss_events, 1);
    assert_eq!(r.stats().packets_lost, 1);
    assert!(now > 0);
}

#[test]
fn ccval_mode_feedback_when_the_window_counter_advances_by_four() {
    let mut r = TfrcReceiver::new(TfrcConfig::ccid3());
    r.handle_data(ms(0), &data(0, 0, 100, 0));
    assert_eq!(drain(&mut r, ms(0)).len(), 1);
    assert_eq!(r.poll_timeout(), None, "no feedback timer in CCID 3 mode");
    let mut sent = Vec::new();
    for seq in 1..40u64 {
        // One quarter RTT per 5 packets.
        let cc = ((seq / 5) % 16) as u8;
        r.handle_data(ms(5 * seq), &data(seq, 5 * seq, 100, cc));
        if !drain(&mut r, ms(5 * seq)).is_empty() {
            sent.push((seq, cc));
        }
    }
    // CCVal 4 first appears on packet 20, 8 on packet 40 (not sent).
    assert_eq!(sent, [(20, 4)]);
}

#[test]
fn ccval_mode_feedback_on_a_new_loss_event() {
    let mut r = TfrcReceiver::new(TfrcConfig::ccid3());
    r.handle_data(ms(0), &data(0, 0, 100, 0));
    drain(&mut r, ms(0));
    for seq in [1, 2, 4, 5] {
        r.handle_data(ms(seq), &data(seq, seq, 100, 0));
        assert!(drain(&mut r, ms(seq)).is_empty());
    }
    r.handle_data(ms(6), &data(6, 6, 100, 0));
    let f = drain(&mut r, ms(6));
    assert_eq!(f.len(), 1);
    assert!(f[0].p > 0.0);
}

// ---------------------------------------------------------------------------------
// Receiver: Freeze-DCCP states
// ---------------------------------------------------------------------------------

/// A receiver that has had 20 packets (R = 100 ms, one per 10 ms) and a feedback.
fn receiver_normal() -> TfrcReceiver {
    let mut r = TfrcReceiver::new(TfrcConfig::default());
    for seq in 0..20u64 {
        r.handle_data(ms(10 * seq + 50), &data(seq, 10 * seq, 100, 0));
        drain(&mut r, ms(10 * seq + 50));
    }
    assert_eq!(r.state(), RxFreezeState::Normal);
    r
}

#[test]
fn test_rx_normal_freeze_signals_freeze_at_once_and_on_the_next_packets() {
    let mut r = receiver_normal();
    r.freeze(ms(245));
    assert_eq!(r.state(), RxFreezeState::SignalFreeze);
    let f = drain(&mut r, ms(245));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].freeze, FreezeSignals::FREEZE);
    // Four more copies, one per arriving data packet, then the normal schedule, still
    // carrying FREEZE.
    let mut copies = 0;
    for seq in 20..30u64 {
        r.handle_data(ms(10 * seq + 50), &data(seq, 10 * seq, 100, 0));
        for f in drain(&mut r, ms(10 * seq + 50)) {
            assert_eq!(f.freeze, FreezeSignals::FREEZE);
            copies += 1;
        }
    }
    assert_eq!(copies, 4, "4 redundant copies");
    assert_eq!(r.stats().signals_sent, 5);
}

#[test]
fn test_rx_signal_freeze_unfreeze_signals_unfreeze_until_restoring_arrives() {
    let mut r = receiver_normal();
    r.freeze(ms(245));
    drain(&mut r, ms(245));
    r.unfreeze(ms(5000));
    assert_eq!(r.state(), RxFreezeState::SignalUnfreeze);
    let f = drain(&mut r, ms(5000));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].freeze, FreezeSignals::UNFREEZE);
    // Nothing arrives (the sender is frozen): repeated every RTT, 5 copies in all.
    let mut last = 5000;
    let mut copies = 1;
    while let Some(at) = r.poll_timeout() {
        for f in drain(&mut r, at) {
            assert_eq!(f.freeze, FreezeSignals::UNFREEZE);
            copies += 1;
            last = at.as_nanos() / 1_000_000;
        }
    }
    assert_eq!(copies, 5);
    assert_eq!(last, 5400);
    // The sender restores: RESTORATION, signalling stops.
    r.handle_data(
        ms(5500),
        &sig(data(20, 5450, 100, 0), FreezeSignals::RESTORING),
    );
    assert_eq!(r.state(), RxFreezeState::Restoration);
    for f in drain(&mut r, ms(5500)) {
        assert!(f.freeze.is_empty());
    }
}

#[test]
fn test_rx_unfreeze_without_a_freeze_is_ignored() {
    let mut r = receiver_normal();
    r.unfreeze(ms(300));
    assert_eq!(r.state(), RxFreezeState::Normal);
    assert!(drain(&mut r, ms(300)).iter().all(|f| f.freeze.is_empty()));
}

#[test]
fn test_rx_normal_restoring_enters_restoration_for_a_sender_side_freeze() {
    let mut r = receiver_normal();
    r.handle_data(
        ms(5000),
        &sig(data(20, 4950, 100, 0), FreezeSignals::RESTORING),
    );
    assert_eq!(r.state(), RxFreezeState::Restoration);
}

/// A receiver in RESTORATION since 5 s (R = 100 ms), packets every 10 ms.
fn receiver_restoration() -> (TfrcReceiver, u64) {
    let mut r = receiver_normal();
    r.freeze(ms(245));
    drain(&mut r, ms(245));
    r.unfreeze(ms(4900));
    drain(&mut r, ms(4900));
    r.handle_data(
        ms(5000),
        &sig(data(20, 4950, 100, 0), FreezeSignals::RESTORING),
    );
    drain(&mut r, ms(5000));
    assert_eq!(r.state(), RxFreezeState::Restoration);
    (r, 21)
}

#[test]
fn test_rx_restoration_one_rtt_without_loss_enters_recovery1_signalling_unfrozen() {
    let (mut r, mut seq) = receiver_restoration();
    let mut unfrozen = 0;
    for k in 1..=20u64 {
        let t = 5000 + 10 * k;
        r.handle_data(
            ms(t),
            &sig(data(seq, t - 50, 100, 0), FreezeSignals::RESTORING),
        );
        seq += 1;
        if t <= 5100 {
            assert_eq!(r.state(), RxFreezeState::Restoration, "t = {t}");
        } else {
            assert_eq!(r.state(), RxFreezeState::Recovery1, "t = {t}");
        }
        for f in drain(&mut r, ms(t)) {
            if f.freeze == FreezeSignals::UNFROZEN {
                unfrozen += 1;
            }
        }
    }
    assert!(unfrozen >= 1);
}

#[test]
fn test_rx_restoration_loss_enters_recovery2() {
    let (mut r, seq) = receiver_restoration();
    // seq is lost; three later packets reveal it.
    for k in 1..=3u64 {
        let t = 5000 + 10 * k;
        r.handle_data(
            ms(t),
            &sig(data(seq + k, t - 50, 100, 0), FreezeSignals::RESTORING),
        );
    }
    assert_eq!(r.state(), RxFreezeState::Recovery2);
    // Still RESTORING: stay; then a plain packet: NORMAL.
    r.handle_data(
        ms(5040),
        &sig(data(seq + 4, 4990, 100, 0), FreezeSignals::RESTORING),
    );
    assert_eq!(r.state(), RxFreezeState::Recovery2);
    r.handle_data(ms(5050), &data(seq + 5, 5000, 100, 0));
    assert_eq!(r.state(), RxFreezeState::Normal);
}

#[test]
fn test_rx_restoration_packet_without_restoring_returns_to_normal() {
    let (mut r, seq) = receiver_restoration();
    r.handle_data(ms(5010), &data(seq, 4960, 100, 0));
    assert_eq!(r.state(), RxFreezeState::Normal);
}

/// A receiver in RECOVERY1.
fn receiver_recovery1() -> (TfrcReceiver, u64) {
    let (mut r, mut seq) = receiver_restoration();
    for k in 1..=11u64 {
        let t = 5000 + 10 * k;
        r.handle_data(
            ms(t),
            &sig(data(seq, t - 50, 100, 0), FreezeSignals::RESTORING),
        );
        seq += 1;
        drain(&mut r, ms(t));
    }
    assert_eq!(r.state(), RxFreezeState::Recovery1);
    (r, seq)
}

#[test]
fn test_rx_recovery1_loss_enters_recovery2() {
    let (mut r, seq) = receiver_recovery1();
    for k in 1..=3u64 {
        r.handle_data(
            ms(5110 + 10 * k),
            &sig(
                data(seq + k, 5060 + 10 * k, 100, 0),
                FreezeSignals::RESTORING,
            ),
        );
    }
    assert_eq!(r.state(), RxFreezeState::Recovery2);
}

#[test]
fn test_rx_recovery1_probing_enters_probed() {
    let (mut r, seq) = receiver_recovery1();
    r.handle_data(
        ms(5120),
        &sig(data(seq, 5070, 100, 0), FreezeSignals::PROBING),
    );
    assert_eq!(r.state(), RxFreezeState::Probed);
    for f in drain(&mut r, ms(5120)) {
        assert!(f.freeze.is_empty(), "PROBED sends no signal");
    }
}

#[test]
fn test_rx_recovery1_plain_packet_returns_to_normal() {
    let (mut r, seq) = receiver_recovery1();
    r.handle_data(ms(5120), &data(seq, 5070, 100, 0));
    assert_eq!(r.state(), RxFreezeState::Normal);
}

#[test]
fn test_rx_probed_first_loss_reseeds_p_from_the_receive_rate_and_returns_to_normal() {
    // History with a loss before the freeze: p from the old path.
    let mut r = TfrcReceiver::new(TfrcConfig::default());
    let mut seq = 0u64;
    let mut t = 50u64;
    for _ in 0..300 {
        if seq != 100 {
            r.handle_data(ms(t), &data(seq, t - 50, 100, 0));
        }
        drain(&mut r, ms(t));
        seq += 1;
        t += 10;
    }
    let p_old = r.p();
    assert!(p_old > 0.0);
    r.freeze(ms(t));
    drain(&mut r, ms(t));
    r.unfreeze(ms(t + 2000));
    drain(&mut r, ms(t + 2000));
    t += 2100;
    // Restoration, one RTT, then probing packets at 1 per ms (10× the old rate).
    for _ in 0..15 {
        r.handle_data(
            ms(t),
            &sig(data(seq, t - 50, 100, 0), FreezeSignals::RESTORING),
        );
        drain(&mut r, ms(t));
        seq += 1;
        t += 10;
    }
    assert_eq!(r.state(), RxFreezeState::Recovery1);
    for k in 0..300u64 {
        if k != 250 {
            r.handle_data(
                ms(t),
                &sig(data(seq, t - 50, 100, 0), FreezeSignals::PROBING),
            );
        }
        drain(&mut r, ms(t));
        if k < 253 {
            assert_eq!(r.state(), RxFreezeState::Probed, "k = {k}");
        }
        seq += 1;
        t += 1;
    }
    assert_eq!(r.state(), RxFreezeState::Normal);
    // One closed interval, the synthetic one for the new receive rate (~1 MB/s).
    let h = r.loss_history();
    assert_eq!(h.closed_intervals().len(), 1);
    let x = throughput(1000.0, 0.1, 1.0 / h.closed_intervals()[0], 1.0);
    assert!(x > 500_000.0 && x < 1_500_000.0, "{x}");
    assert!(r.p() < p_old);
}

#[test]
fn test_rx_probed_packet_without_probing_returns_to_normal() {
    let (mut r, seq) = receiver_recovery1();
    r.handle_data(
        ms(5120),
        &sig(data(seq, 5070, 100, 0), FreezeSignals::PROBING),
    );
    r.handle_data(ms(5130), &data(seq + 1, 5080, 100, 0));
    assert_eq!(r.state(), RxFreezeState::Normal);
}

#[test]
fn test_rx_freeze_from_any_state_signals_freeze() {
    let (mut r, _) = receiver_recovery1();
    r.freeze(ms(5200));
    assert_eq!(r.state(), RxFreezeState::SignalFreeze);
    assert_eq!(drain(&mut r, ms(5200))[0].freeze, FreezeSignals::FREEZE);
}

// ---------------------------------------------------------------------------------
// Pair: a sender and a receiver over a delay line with a bottleneck
// ---------------------------------------------------------------------------------

type DropFn = Box<dyn FnMut(&TfrcData) -> bool>;

/// Sender → receiver over a FIFO bottleneck of `rate_bps` (unbounded queue) and a
/// one-way delay; feedback back over a delay line. The path can be down for a while
/// (everything sent or arriving then is lost).
struct Pair {
    now: Instant,
    snd: TfrcSender,
    rcv: TfrcReceiver,
    delay: Duration,
    rate_bps: u64,
    busy_until: Instant,
    fwd: VecDeque<(Instant, TfrcData)>,
    rev: VecDeque<(Instant, TfrcFeedback)>,
    drop: DropFn,
    down: Option<(Instant, Instant)>,
    /// Drop-tail limit of the bottleneck queue, packets (including the one in
    /// service); `None` for unbounded.
    queue_limit: Option<usize>,
    data_dropped: u64,
    queue_drops: u64,
    data_lost_down: u64,
    /// (time, receiver bytes) samples at every arrival.
    delivered: Vec<(Instant, u64)>,
}

impl Pair {
    fn new(cfg: TfrcConfig, delay_ms: u64, rate_bps: u64) -> Self {
        let mut snd = TfrcSender::new(cfg.clone());
        snd.set_unlimited();
        Pair {
            now: Instant::ZERO,
            snd,
            rcv: TfrcReceiver::new(cfg),
            delay: Duration::from_millis(delay_ms),
            rate_bps,
            busy_until: Instant::ZERO,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            drop: Box::new(|_| false),
            down: None,
            queue_limit: None,
            data_dropped: 0,
            queue_drops: 0,
            data_lost_down: 0,
            delivered: Vec::new(),
        }
    }

    fn is_down(&self, t: Instant) -> bool {
        self.down.is_some_and(|(a, b)| a <= t && t < b)
    }

    fn poll(&mut self) {
        loop {
            let mut any = false;
            while let Some(p) = self.snd.poll_transmit(self.now) {
                any = true;
                let bytes = (p.len + self.snd.config().header_bytes) as u64;
                let start = self.busy_until.max(self.now);
                let done = start + Duration::transmission(bytes, self.rate_bps);
                let arrive = done + self.delay;
                let queued = self
                    .fwd
                    .iter()
                    .rev()
                    .take_while(|x| x.0 - self.delay > self.now)
                    .count();
                if self.is_down(self.now) || self.is_down(arrive) {
                    self.data_lost_down += 1;
                } else if self.queue_limit.is_some_and(|l| queued >= l) {
                    self.queue_drops += 1;
                } else if (self.drop)(&p) {
                    self.data_dropped += 1;
                } else {
                    self.busy_until = done;
                    self.fwd.push_back((arrive, p));
                }
            }
            while let Some(f) = self.rcv.poll_transmit(self.now) {
                any = true;
                let arrive = self.now + self.delay;
                if !self.is_down(self.now) && !self.is_down(arrive) {
                    self.rev.push_back((arrive, f));
                }
            }
            if !any {
                break;
            }
        }
    }

    fn next_event(&self) -> Option<Instant> {
        [
            self.fwd.front().map(|x| x.0),
            self.rev.front().map(|x| x.0),
            self.snd.poll_timeout(),
            self.rcv.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn run_until(&mut self, until: Instant) {
        self.poll();
        let mut guard = 0u64;
        while let Some(t) = self.next_event() {
            if t > until {
                break;
            }
            guard += 1;
            assert!(guard < 50_000_000, "runaway");
            self.now = t.max(self.now);
            while self.fwd.front().is_some_and(|x| x.0 <= self.now) {
                let (_, p) = self.fwd.pop_front().unwrap();
                self.rcv.handle_data(self.now, &p);
                self.delivered
                    .push((self.now, self.rcv.stats().bytes_received));
            }
            while self.rev.front().is_some_and(|x| x.0 <= self.now) {
                let (_, f) = self.rev.pop_front().unwrap();
                self.snd.handle_feedback(self.now, &f);
            }
            self.snd.handle_timeout(self.now);
            self.rcv.handle_timeout(self.now);
            self.poll();
            if self.next_event().is_some_and(|t| t <= self.now) {
                // Make progress even if an endpoint reports a past deadline.
                self.now += Duration::from_nanos(1);
            }
        }
        self.now = until.max(self.now);
        self.poll();
    }

    /// Receiver goodput between two times, bytes per second.
    fn goodput(&self, from: Instant, to: Instant) -> f64 {
        let at = |t: Instant| {
            self.delivered
                .iter()
                .take_while(|x| x.0 <= t)
                .last()
                .map_or(0, |x| x.1)
        };
        (at(to) - at(from)) as f64 / (to - from).as_secs_f64()
    }
}

fn periodic_loss_converges(cfg: TfrcConfig) {
    // R = 100 ms, 10 Mb/s (far above the equation rate), every 100th packet lost.
    let mut pair = Pair::new(cfg, 50, 10_000_000);
    pair.drop = Box::new(|p| p.seq % 100 == 50);
    pair.run_until(Instant::from_secs(200));
    let p = pair.rcv.p();
    assert!(close(p, 0.01, 0.15), "p = {p}");
    let r = pair.snd.rtt().unwrap().as_secs_f64();
    assert!(close(r, 0.1, 0.05), "R = {r}");
    let want = throughput(1000.0, 0.1, 0.01, 1.0);
    let got = pair.goodput(Instant::from_secs(50), Instant::from_secs(200));
    assert!(
        close(got, want, 0.20),
        "goodput {got:.0} B/s vs equation {want:.0} B/s"
    );
    assert_eq!(pair.data_lost_down, 0);
    // Plain TFRC is Freeze-DCCP never frozen: no state change, no signal.
    assert_eq!(pair.snd.state(), FreezeState::Normal);
    assert_eq!(pair.rcv.state(), RxFreezeState::Normal);
    assert_eq!(pair.snd.stats().signals_sent, 0);
    assert_eq!(pair.rcv.stats().signals_sent, 0);
}

#[test]
fn pair_periodic_loss_converges_to_the_equation_rate() {
    periodic_loss_converges(TfrcConfig::default());
}

#[test]
fn pair_ccid3_periodic_loss_converges_to_the_equation_rate() {
    periodic_loss_converges(TfrcConfig::ccid3());
}

#[test]
fn pair_without_loss_fills_the_bottleneck_in_slow_start() {
    // 2 Mb/s = 250 000 B/s of which 1000/1040 is payload.
    let mut pair = Pair::new(TfrcConfig::default(), 20, 2_000_000);
    pair.run_until(Instant::from_secs(20));
    let got = pair.goodput(Instant::from_secs(10), Instant::from_secs(20));
    assert!(got > 0.9 * 250_000.0 * 1000.0 / 1040.0, "{got}");
    assert_eq!(pair.rcv.stats().packets_lost, 0);
}

/// Run a flow, break the path for `outage` at 30 s, optionally freezing one end a
/// warning of one RTT before and unfreezing at reconnection.
fn disconnection(freeze_at: Option<&str>) -> Pair {
    let mut pair = Pair::new(TfrcConfig::ccid3(), 50, 10_000_000);
    pair.queue_limit = Some(50);
    // Periodic loss before the outage only, so that restoration meets no loss.
    pair.drop = Box::new(|p| p.seq % 200 == 100 && p.sent_at < Instant::from_secs(25));
    let (down, up) = (Instant::from_secs(30), Instant::from_secs(33));
    pair.run_until(down - Duration::from_millis(100));
    match freeze_at {
        Some("receiver") => pair.rcv.freeze(pair.now),
        Some("sender") => pair.snd.freeze(pair.now),
        _ => {}
    }
    pair.poll();
    pair.down = Some((down, up));
    pair.run_until(up);
    match freeze_at {
        Some("receiver") => pair.rcv.unfreeze(pair.now),
        Some("sender") => pair.snd.unfreeze(pair.now),
        _ => {}
    }
    pair.poll();
    pair.run_until(Instant::from_secs(40));
    pair
}

#[test]
fn pair_plain_tfrc_loses_packets_and_rate_across_a_disconnection() {
    let pair = disconnection(None);
    assert!(pair.data_lost_down > 20, "{}", pair.data_lost_down);
    assert!(pair.snd.stats().nofeedback_expiries >= 2);
    assert_eq!(pair.snd.state(), FreezeState::Normal);
}

#[test]
fn pair_receiver_freeze_avoids_losses_and_restores_then_probes() {
    let plain = disconnection(None);
    let pair = disconnection(Some("receiver"));
    assert_eq!(pair.data_lost_down, 0, "nothing sent into the outage");
    assert_eq!(pair.snd.stats().freezes, 1);
    assert_eq!(pair.snd.stats().restorations, 1);
    assert_eq!(pair.snd.stats().probings, 1);
    assert_eq!(pair.snd.state(), FreezeState::Normal);
    assert_eq!(pair.rcv.state(), RxFreezeState::Normal);
    // The second after reconnection carries more than plain TFRC's.
    let (a, b) = (Instant::from_secs(33), Instant::from_secs(34));
    assert!(
        pair.goodput(a, b) > 2.0 * plain.goodput(a, b),
        "freeze {} vs plain {}",
        pair.goodput(a, b),
        plain.goodput(a, b)
    );
}

#[test]
fn pair_sender_freeze_restores_and_probes_too() {
    let pair = disconnection(Some("sender"));
    assert!(pair.data_lost_down <= 5, "{}", pair.data_lost_down);
    assert_eq!(pair.snd.stats().freezes, 1);
    assert_eq!(pair.snd.stats().restorations, 1);
    assert_eq!(pair.snd.stats().probings, 1);
    assert_eq!(pair.snd.state(), FreezeState::Normal);
}

// ---------------------------------------------------------------------------------
// Freeze-DCCP: the transitions not covered above
// ---------------------------------------------------------------------------------

/// A receiver in each of its seven states, built by the paths of the tests above.
fn receivers_in_every_state() -> Vec<(RxFreezeState, TfrcReceiver)> {
    let normal = receiver_normal();
    let mut signal_freeze = receiver_normal();
    signal_freeze.freeze(ms(245));
    drain(&mut signal_freeze, ms(245));
    let mut signal_unfreeze = signal_freeze.clone();
    signal_unfreeze.unfreeze(ms(4900));
    drain(&mut signal_unfreeze, ms(4900));
    let (restoration, _) = receiver_restoration();
    let (recovery1, seq) = receiver_recovery1();
    let mut recovery2 = recovery1.clone();
    for k in 1..=3u64 {
        recovery2.handle_data(
            ms(5110 + 10 * k),
            &sig(
                data(seq + k, 5060 + 10 * k, 100, 0),
                FreezeSignals::RESTORING,
            ),
        );
    }
    let mut probed = recovery1.clone();
    probed.handle_data(
        ms(5120),
        &sig(data(seq, 5070, 100, 0), FreezeSignals::PROBING),
    );
    let all = vec![
        (RxFreezeState::Normal, normal),
        (RxFreezeState::SignalFreeze, signal_freeze),
        (RxFreezeState::SignalUnfreeze, signal_unfreeze),
        (RxFreezeState::Restoration, restoration),
        (RxFreezeState::Recovery1, recovery1),
        (RxFreezeState::Recovery2, recovery2),
        (RxFreezeState::Probed, probed),
    ];
    for (want, r) in &all {
        assert_eq!(r.state(), *want);
    }
    all
}

#[test]
fn test_rx_local_freeze_from_every_state_enters_signal_freeze() {
    for (from, mut r) in receivers_in_every_state() {
        r.freeze(ms(6000));
        assert_eq!(r.state(), RxFreezeState::SignalFreeze, "from {from}");
        let f = drain(&mut r, ms(6000));
        assert_eq!(f.len(), 1, "from {from}: one feedback at once");
        assert_eq!(f[0].freeze, FreezeSignals::FREEZE, "from {from}");
    }
}

#[test]
fn test_rx_local_unfreeze_acts_only_after_a_freeze() {
    for (from, mut r) in receivers_in_every_state() {
        r.unfreeze(ms(6000));
        let want = match from {
            RxFreezeState::SignalFreeze | RxFreezeState::SignalUnfreeze => {
                RxFreezeState::SignalUnfreeze
            }
            other => other,
        };
        assert_eq!(r.state(), want, "from {from}");
    }
}

#[test]
fn test_rx_recovery2_stays_while_restoring_then_a_plain_packet_returns_to_normal() {
    let mut all = receivers_in_every_state();
    let (_, mut r) = all.remove(5);
    assert_eq!(r.state(), RxFreezeState::Recovery2);
    r.handle_data(
        ms(5200),
        &sig(data(60, 5150, 100, 0), FreezeSignals::RESTORING),
    );
    assert_eq!(r.state(), RxFreezeState::Recovery2);
    for f in drain(&mut r, ms(5200)) {
        assert!(f.freeze.is_empty(), "RECOVERY2 signals nothing");
    }
    r.handle_data(ms(5210), &data(61, 5160, 100, 0));
    assert_eq!(r.state(), RxFreezeState::Normal);
}

#[test]
fn test_frozen_freeze_again_stays_frozen_with_the_first_saved_values() {
    let mut s = sender_steady();
    s.freeze(ms(400));
    run_sender(&mut s, ms(400), ms(1000));
    s.handle_feedback(ms(1100), &with(fb(350, 5.0, 0.5), FreezeSignals::FREEZE));
    s.freeze(ms(1200));
    assert_eq!(s.state(), FreezeState::Frozen);
    assert_eq!(s.stats().freezes, 1);
    s.unfreeze(ms(3000));
    assert_eq!(s.state(), FreezeState::Restoring);
    assert_eq!(s.rate_bytes_per_s(), 60_000.0);
    assert_eq!(s.p(), 0.01);
}

#[test]
fn test_each_state_change_is_queued_once_as_an_event() {
    // `tfrc::event`: a freeze repeated while frozen and an unfreeze repeated while
    // restoring change nothing, so they queue nothing; the nofeedback timer's expiry
    // is an event of its own.
    let mut s = sender_steady();
    while s.poll_event().is_some() {}
    s.freeze(ms(400));
    s.handle_feedback(ms(450), &with(fb(350, 5.0, 0.5), FreezeSignals::FREEZE));
    s.unfreeze(ms(3000));
    s.unfreeze(ms(3001));
    let events: Vec<_> = std::iter::from_fn(|| s.poll_event()).collect();
    use FreezeState::*;
    assert_eq!(
        events,
        [
            SenderEvent::StateChanged {
                from: Normal,
                to: Frozen
            },
            SenderEvent::StateChanged {
                from: Frozen,
                to: Restoring
            },
        ]
    );
    let mut t = sender_steady();
    let expiries = t.stats().nofeedback_expiries;
    run_sender(&mut t, ms(400), ms(60_000));
    let n = std::iter::from_fn(|| t.poll_event())
        .filter(|e| *e == SenderEvent::NoFeedbackExpiry)
        .count() as u64;
    assert!(t.stats().nofeedback_expiries > expiries);
    assert_eq!(n, t.stats().nofeedback_expiries);
}

#[test]
fn test_normal_local_unfreeze_and_unfreeze_feedback_are_ignored() {
    let mut s = sender_steady();
    let x = s.rate_bytes_per_s();
    s.unfreeze(ms(500));
    assert_eq!(s.state(), FreezeState::Normal);
    assert_eq!(s.rate_bytes_per_s(), x);
    s.handle_feedback(
        ms(500),
        &with(fb(400, 60_000.0, 0.01), FreezeSignals::UNFREEZE),
    );
    assert_eq!(s.state(), FreezeState::Normal);
    assert_eq!(s.stats().restorations, 0);
    let p = s.poll_transmit(ms(600)).unwrap();
    assert!(p.freeze.is_empty());
}

#[test]
fn test_probing_unfrozen_again_stays_probing_and_restoring_freeze_feedback_refreezes() {
    let mut s = sender_probing();
    assert_eq!(s.state(), FreezeState::Probing);
    s.handle_feedback(
        ms(3300),
        &with(fb(3200, 120_000.0, 0.01), FreezeSignals::UNFROZEN),
    );
    assert_eq!(s.state(), FreezeState::Probing);
    let mut r = sender_restoring();
    r.handle_feedback(
        ms(3150),
        &with(fb(3050, 60_000.0, 0.01), FreezeSignals::FREEZE),
    );
    assert_eq!(r.state(), FreezeState::Frozen);
}
