//! Reactions to a vertical handoff (`tcp::handoff`; Tsukamoto, Fukuda, Hori and Oie, "New
//! flow control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun.
//! E89-B(6), 2006): IETT, BA-SST and
//! Freeze-TCP, each checked against its rule on a [`Pair`] whose links go dark and
//! come back as another interface.

use super::ns2;
use super::pair::Pair;
use crate::tcp::{HandoffReaction, InterfaceChange, PacketPair, TcpConfig};
use crate::time::test_util::{ms, t_ms};
use crate::time::Instant;

const MSS: u64 = 1000;

/// ns-2 conventions, a window cap of `window` segments and a reaction.
fn cfg(reaction: HandoffReaction, window: u64) -> TcpConfig {
    TcpConfig {
        max_send_window: window * MSS,
        handoff_reaction: reaction,
        ..ns2()
    }
}

/// A greedy transfer over `one_way` latency and a bottleneck of `rate` bits/s,
/// driven to `until`; then both directions go dark over `[until, until + gap)`.
fn pair_with_outage(c: TcpConfig, one_way: u64, rate: u64, until: u64, gap: u64) -> Pair {
    let mut p = Pair::new(c, ms(one_way));
    p.fwd.rate_bps = Some(rate);
    p.set_unlimited();
    p.drive_until(t_ms(until));
    p.fwd.blackout(t_ms(until), t_ms(until + gap));
    p.rev.blackout(t_ms(until), t_ms(until + gap));
    p
}

/// The sender learns now of an interface change (a notice without a bandwidth
/// estimate), and whatever it sends in reaction leaves.
fn notify_now(p: &mut Pair) {
    p.snd
        .on_interface_change(p.now, &InterfaceChange::default());
    p.flush();
}

/// Data segments the sender emitted in `[from, to)`.
fn data_sent_in(p: &Pair, from: Instant, to: Instant) -> Vec<(Instant, u64)> {
    p.fwd
        .data()
        .filter(|s| s.at >= from && s.at < to)
        .map(|s| (s.at, s.seg.seq))
        .collect()
}

// ----- IETT ------------------------------------------------------------------------

/// A greedy transfer of `reaction` (10 ms one way, 10 Mb/s) dark from 2 s for `gap`
/// ms, at the end of the outage: the sender has not been told yet.
fn back_from_outage(reaction: HandoffReaction, gap: u64) -> Pair {
    let mut p = pair_with_outage(cfg(reaction, 20), 10, 10_000_000, 2000, gap);
    p.drive_until(t_ms(2000 + gap));
    p
}

#[test]
fn iett_retransmits_at_the_notification_instead_of_the_backed_off_rto() {
    let mut runs = Vec::new();
    for reaction in [HandoffReaction::None, HandoffReaction::Iett] {
        // 1.5 s dark: the RTO (>= 200 ms) fires and backs off during the outage.
        let mut p = back_from_outage(reaction, 1500);
        let timeouts_before = p.snd.stats().timeouts;
        assert!(timeouts_before >= 2, "the outage must cost timeouts");
        let backed_off = p.snd.rto();
        notify_now(&mut p);
        let una = p.snd.snd_una();
        let first = p
            .fwd
            .data()
            .find(|s| s.at >= t_ms(3500) && s.seg.seq == una)
            .map(|s| s.at);
        runs.push((reaction, first, timeouts_before, backed_off, p));
    }
    let (_, tcp_first, ..) = &runs[0];
    let (_, iett_first, timeouts, backed_off, p) = &runs[1];
    // IETT: the first unacknowledged segment leaves at the notification itself.
    assert_eq!(*iett_first, Some(t_ms(3500)));
    // Plain TCP sends nothing at 3.5 s: it waits for its backed-off timer.
    assert!(tcp_first.is_none(), "TCP retransmitted at {tcp_first:?}");
    // The forced expiry is not a timeout and does not back the timer off: the RTO
    // is back to its un-backed-off value.
    assert_eq!(p.snd.stats().timeouts, *timeouts);
    assert_eq!(p.snd.stats().forced_expirations, 1);
    assert!(
        p.snd.rto() < *backed_off,
        "{:?} vs {backed_off:?}",
        p.snd.rto()
    );
    // Restart by slow start: one segment.
    assert_eq!(p.snd.cwnd(), MSS);
}

#[test]
fn iett_restarts_sooner_and_delivers_more_than_tcp_after_a_long_outage() {
    let mut read = Vec::new();
    for reaction in [HandoffReaction::None, HandoffReaction::Iett] {
        let mut p = back_from_outage(reaction, 3500);
        notify_now(&mut p);
        let at_change = p.rcv.bytes_read();
        p.drive_until(t_ms(7000));
        read.push(p.rcv.bytes_read() - at_change);
    }
    assert!(read[1] > read[0] + 100 * MSS, "{read:?}");
}

#[test]
fn handoff_reset_rtt_forgets_the_old_paths_estimate() {
    for reset in [false, true] {
        let mut c = cfg(HandoffReaction::Iett, 20);
        c.handoff_reset_rtt = reset;
        let mut p = Pair::new(c, ms(10));
        p.set_unlimited();
        p.drive_until(t_ms(1000));
        assert!(p.snd.rtt().srtt().is_some());
        p.snd
            .on_interface_change(p.now, &InterfaceChange::default());
        assert_eq!(p.snd.rtt().srtt().is_none(), reset);
        if reset {
            assert_eq!(p.snd.rto(), ns2().initial_rto);
        }
    }
}

#[test]
fn iett_does_nothing_without_outstanding_data() {
    let mut p = Pair::new(cfg(HandoffReaction::Iett, 20), ms(10));
    p.write(5 * MSS);
    p.drive();
    let cwnd = p.snd.cwnd();
    notify_now(&mut p);
    assert_eq!(p.snd.stats().forced_expirations, 0);
    assert_eq!(p.snd.cwnd(), cwnd);
    assert_eq!(p.snd.stats().interface_changes, 1);
}

// ----- BA-SST ----------------------------------------------------------------------

#[test]
fn packet_pair_uses_back_to_back_segments_of_the_new_path_only() {
    let since = t_ms(1000);
    let mut pp = PacketPair::new(since, false);
    // An ACK of a segment sent before the change says nothing of the new path.
    assert_eq!(pp.on_ack(t_ms(1010), MSS, t_ms(990)), None);
    assert_eq!(pp.rtt(), None);
    pp.on_sent(t_ms(1000));
    // First ACK: the RTT of the first segment (Hoe), no bandwidth yet.
    assert_eq!(pp.on_ack(t_ms(1100), MSS, t_ms(1000)), None);
    assert_eq!(pp.rtt(), Some(ms(100)));
    // Two segments sent together at 1100; their ACKs 20 ms apart: 1000 B / 20 ms.
    assert_eq!(pp.on_ack(t_ms(1200), MSS, t_ms(1100)), None);
    let bw = pp.on_ack(t_ms(1220), MSS, t_ms(1100)).expect("an estimate");
    assert!((bw - 50_000.0).abs() < 1e-6, "{bw}");
    // ssthresh = BW x RTT (equations (1)-(2)).
    assert_eq!(pp.ssthresh(1000), Some(5000));
    // Without refinement (Hoe only), later pairs do not move the estimate.
    assert_eq!(pp.on_ack(t_ms(1230), MSS, t_ms(1220)), None);
    assert_eq!(pp.samples(), 1);
}

#[test]
fn packet_pair_refines_with_the_median_of_later_pairs() {
    let mut pp = PacketPair::new(t_ms(0), true);
    pp.on_sent(t_ms(0));
    pp.on_ack(t_ms(100), MSS, t_ms(0));
    pp.on_ack(t_ms(200), MSS, t_ms(100));
    assert_eq!(pp.on_ack(t_ms(220), MSS, t_ms(100)), Some(50_000.0));
    // A second pair 10 ms apart and a third 20 ms apart: the median is 50 kB/s.
    pp.on_ack(t_ms(300), MSS, t_ms(220));
    assert_eq!(pp.on_ack(t_ms(310), MSS, t_ms(220)), Some(75_000.0));
    pp.on_ack(t_ms(400), MSS, t_ms(310));
    assert_eq!(pp.on_ack(t_ms(420), MSS, t_ms(310)), Some(50_000.0));
    // A pair that left as far apart as it arrived is not a packet pair.
    assert_eq!(pp.on_ack(t_ms(440), MSS, t_ms(420)), None);
    pp.close();
    assert_eq!(pp.on_ack(t_ms(450), MSS, t_ms(440)), None);
    assert_eq!(pp.samples(), 3);
}

#[test]
fn ba_sst_sets_ssthresh_to_the_packet_pair_estimate_times_the_rtt() {
    // 2 Mb/s, 20 ms before; 384 kb/s, 70 ms after a 0.5 s interruption.
    let mut c = cfg(HandoffReaction::IettBaSst, 40);
    c.ba_sst_refine = false;
    let mut p = pair_with_outage(c, 20, 2_000_000, 3000, 500);
    p.drive_until(t_ms(3500));
    p.fwd.rate_bps = Some(384_000);
    p.fwd.latency = ms(70);
    p.rev.latency = ms(70);
    notify_now(&mut p);
    p.drive_until(t_ms(6000));
    let st = p.snd.stats();
    assert_eq!(st.ba_sst_estimates, 1);
    // The bottleneck serialises 1040 wire bytes in 21.67 ms: 1000 B of payload per
    // 21.67 ms is 369.2 kb/s of goodput.
    let want_bw = 1000.0 * 8.0 / (1040.0 * 8.0 / 384_000.0);
    assert!(
        (st.ba_sst_last_bps / want_bw - 1.0).abs() < 0.01,
        "{} vs {want_bw}",
        st.ba_sst_last_bps
    );
    // RTT of the first segment: 140 ms of propagation plus one serialisation.
    let want_rtt = 0.140 + 1040.0 * 8.0 / 384_000.0;
    assert!(
        (st.ba_sst_last_rtt.as_secs_f64() - want_rtt).abs() < 1e-3,
        "{:?} vs {want_rtt}",
        st.ba_sst_last_rtt
    );
    let want_ss = (st.ba_sst_last_bps / 8.0 * st.ba_sst_last_rtt.as_secs_f64()) as u64;
    assert_eq!(st.ba_sst_last_ssthresh, want_ss.max(2 * MSS));
    // The estimate became ssthresh at the third ACK after the change.
    let set = p
        .trace
        .iter()
        .find(|x| x.at > t_ms(3500) && x.ssthresh == st.ba_sst_last_ssthresh)
        .expect("ssthresh set from the estimate");
    assert!(set.at < t_ms(3500) + ms(2 * 162 + 30), "{:?}", set.at);
}

#[test]
fn handoff_notice_ack_is_a_notification_not_a_duplicate_ack() {
    let mut p = Pair::new(cfg(HandoffReaction::Iett, 20), ms(10));
    p.set_unlimited();
    p.drive_until(t_ms(500));
    p.rcv.signal_interface_change(p.now);
    p.flush();
    let notice = p.acks().last().expect("an ACK").seg;
    assert!(notice.exp.handoff_notice);
    assert_eq!(p.rcv.stats().handoff_notices, 1);
    p.drive_until(t_ms(520));
    assert_eq!(p.snd.stats().interface_changes, 1);
    assert_eq!(p.snd.stats().forced_expirations, 1);
    assert_eq!(p.snd.stats().fast_retransmits, 0);
}

// ----- Freeze-TCP ------------------------------------------------------------------

#[test]
fn freeze_zero_window_keeps_cwnd_and_the_sender_does_not_back_off() {
    let mut c = cfg(HandoffReaction::None, 30);
    c.freeze = true;
    let mut p = Pair::new(c, ms(10));
    p.fwd.rate_bps = Some(10_000_000);
    p.set_unlimited();
    p.drive_until(t_ms(2000));
    let cwnd_at_warning = p.snd.cwnd();
    // Warning one RTT-ish before the disconnection at 2.05 s.
    p.rcv.freeze(p.now);
    p.flush();
    let zwa = p.acks().last().expect("a ZWA").seg;
    assert_eq!(zwa.wnd, 0);
    assert!(p.rcv.is_frozen());
    p.fwd.blackout(t_ms(2050), t_ms(3000));
    p.rev.blackout(t_ms(2050), t_ms(3000));
    // What was in flight drains (its ACKs may still grow cwnd, never shrink it).
    p.drive_until(t_ms(2050));
    let cwnd = p.snd.cwnd();
    assert!(cwnd >= cwnd_at_warning);
    assert_eq!(p.snd.flight(), 0);
    let ssthresh = p.snd.ssthresh();
    let rto = p.snd.rto();
    p.drive_until(t_ms(3000));
    // Nothing new after the ZWA arrived (2.01 s): only zero-length window probes.
    let late: Vec<_> = data_sent_in(&p, t_ms(2011), t_ms(3000));
    assert!(late.is_empty(), "{late:?}");
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.snd.cwnd(), cwnd);
    assert_eq!(p.snd.ssthresh(), ssthresh);
    assert_eq!(p.snd.rto(), rto);
    assert!(p.snd.stats().window_probes >= 1);
    // Reconnection: three TR-ACKs with the window reopened...
    let before = p.acks().count();
    p.rcv.unfreeze(p.now);
    p.flush();
    let tr: Vec<_> = p.acks().skip(before).map(|s| s.seg).collect();
    assert_eq!(tr.len(), 3);
    assert!(tr.iter().all(|s| s.wnd > 0 && s.ack == tr[0].ack));
    // ...and the sender resumes one propagation delay later, with its old window.
    p.drive_until(t_ms(3010));
    let resumed = data_sent_in(&p, t_ms(3000), t_ms(3011));
    assert!(!resumed.is_empty());
    assert!(resumed.iter().all(|(t, _)| *t == t_ms(3010)));
    assert_eq!(resumed.len() as u64, cwnd.min(30 * MSS) / MSS);
    assert_eq!(p.snd.stats().timeouts, 0);
}

#[test]
fn without_freeze_the_same_outage_costs_timeouts_and_cwnd() {
    let mut p = pair_with_outage(cfg(HandoffReaction::None, 30), 10, 10_000_000, 2050, 950);
    p.drive_until(t_ms(3000));
    assert!(p.snd.stats().timeouts >= 1);
    assert_eq!(p.snd.cwnd(), MSS);
}

#[test]
fn frozen_receiver_advertises_zero_on_every_ack_until_unfrozen() {
    let mut c = ns2();
    c.freeze = true;
    let mut p = Pair::new(c, ms(10));
    p.set_unlimited();
    p.drive_until(t_ms(300));
    p.rcv.freeze(p.now);
    p.flush();
    let n = p.acks().count();
    // In-flight data still arrives and is acknowledged, with a zero window.
    p.drive_until(t_ms(340));
    let frozen: Vec<_> = p.acks().skip(n).map(|s| s.seg).collect();
    assert!(frozen.len() > 1);
    assert!(frozen.iter().all(|s| s.wnd == 0));
    assert!(p.rcv.stats().zero_window_episodes >= 1);
    p.rcv.unfreeze(p.now);
    p.flush();
    assert!(!p.rcv.is_frozen());
    assert_eq!(p.rcv.stats().tr_acks, 3);
    assert!(p.acks().last().expect("TR-ACK").seg.wnd > 0);
}
