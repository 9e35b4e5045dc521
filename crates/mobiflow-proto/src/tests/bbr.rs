//! Behaviour tests of BBR v1 (`cc::bbr`, Linux `net/ipv4/tcp_bbr.c`) with the
//! sender's delivery-rate sampling (`tcp::rate`) and pacing (`tcp::pacing`), over a
//! [`Pair`]: the Linux profile (1448-byte segments, 1500 bytes on the wire with the
//! timestamp option), a 10 Mb/s bottleneck with an unlimited queue and 20 ms each way
//! unless a test says otherwise.

use super::pair::Pair;
use super::{ack, sack_ack};
use crate::cc::{BbrParams, CcKind, CcMetrics};
use crate::tcp::TcpConfig;
use crate::time::test_util::{ms, t_ms};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Segment};

const MSS: u64 = 1448;
const WIRE: u64 = 1500;

/// Linux TCP with BBR (seed 7).
fn bbr_linux() -> TcpConfig {
    TcpConfig {
        cc: CcKind::Bbr(BbrParams { seed: 7 }),
        ..TcpConfig::linux()
    }
}

fn bbr_pair(rate_bps: u64, one_way: Duration) -> Pair {
    let mut p = Pair::new(bbr_linux(), one_way);
    p.fwd.rate_bps = Some(rate_bps);
    p.set_unlimited();
    p
}

fn metrics(p: &Pair) -> CcMetrics {
    p.snd.cc().metrics()
}

/// Payload bytes per second a bottleneck of `rate_bps` carries in full segments.
fn payload_rate(rate_bps: u64) -> f64 {
    rate_bps as f64 / 8.0 * MSS as f64 / WIRE as f64
}

/// Step until `t`, calling `f` after every event.
fn drive_watching(p: &mut Pair, t: Instant, mut f: impl FnMut(&Pair)) {
    while p.now < t && p.step() {
        f(p);
    }
}

/// Startup (`bbr_high_gain` = 2/ln 2 for pacing and cwnd): the data sent doubles
/// every round trip while the pipe is not full; STARTUP ends (DRAIN, then PROBE_BW)
/// once the bandwidth estimate has grown less than 25 % in three rounds in a row
/// (`bbr_check_full_bw_reached`, `bbr_full_bw_cnt = 3`), not before.
#[test]
fn startup_doubles_delivery_per_round_and_exits_after_three_rounds_without_growth() {
    // 100 Mb/s, RTT 40 ms: a BDP of about 330 segments, so IW10 doubles five times.
    let mut p = bbr_pair(100_000_000, ms(20));
    let rtt = ms(40);
    // (round, bw estimate) at each round start, and the round STARTUP ended.
    let mut per_round: Vec<(u64, f64)> = Vec::new();
    let mut exit_round = None;
    drive_watching(&mut p, t_ms(3000), |p| {
        let m = metrics(p);
        let (r, bw) = (m.rounds.unwrap(), m.bw_bytes_per_sec.unwrap());
        if per_round.last().is_none_or(|&(lr, _)| lr != r) {
            per_round.push((r, bw));
        } else if let Some(last) = per_round.last_mut() {
            last.1 = bw;
        }
        if exit_round.is_none() && m.mode != Some("startup") {
            exit_round = Some(r);
        }
    });
    // Data segments sent per RTT from the first data (one RTT after the SYN).
    let first = p.fwd.data().next().unwrap().at;
    let sent_in = |k: u64| {
        let (a, b) = (first + rtt * k, first + rtt * (k + 1));
        p.fwd.data().filter(|s| s.at >= a && s.at < b).count() as f64
    };
    assert_eq!(sent_in(0), 10.0, "the initial window");
    // Rounds 1 and 2 go at the initial pacing rate, 2/ln 2 × IW / SRTT
    // (`bbr_init_pacing_rate_from_rtt`): about 29 segments per RTT. From there each
    // round sends twice the one before, until the pipe is full.
    // (Round 2 sends 31 or 32 by where its boundaries fall against the pacing
    // release times: 31 with RFC 6298's SRTT, 32 with the kernel's estimator and
    // delayed ACKs of the linux profile.)
    assert_eq!(sent_in(1), 20.0);
    assert!((29.0..=33.0).contains(&sent_in(2)), "{}", sent_in(2));
    for k in 2..6 {
        let ratio = sent_in(k + 1) / sent_in(k);
        assert!(
            (1.8..=2.3).contains(&ratio),
            "round {k} -> {}: {} -> {} segments",
            k + 1,
            sent_in(k),
            sent_in(k + 1)
        );
    }
    // The estimate at the end of each round; the last round that raised it by 25 %
    // or more; STARTUP ends at the third round start after the one that saw it.
    let est = |r: u64| per_round.iter().find(|x| x.0 == r).map_or(0.0, |x| x.1);
    let last_growth = (1..40u64)
        .filter(|&r| est(r) >= 1.25 * est(r - 1))
        .max()
        .unwrap();
    assert!(est(last_growth) >= 0.99 * payload_rate(100_000_000));
    assert_eq!(exit_round, Some(last_growth + 4), "{per_round:?}");
    assert_eq!(
        metrics(&p).mode,
        Some("probe_bw"),
        "DRAIN leads to PROBE_BW"
    );
}

/// On a 10 Mb/s, 40 ms path the bandwidth estimate converges to the bottleneck's
/// payload rate (`bbr_update_bw`'s max filter of delivery-rate samples), and the
/// queue BBR keeps stays within what `cwnd_gain` = 2 allows: one BDP above the pipe
/// (plus the quantisation budget), so no RTT sample after STARTUP exceeds twice
/// the minimum by more than that budget, and the mean is far below.
#[test]
fn bandwidth_estimate_converges_to_the_bottleneck_and_the_queue_stays_within_one_bdp() {
    let mut p = bbr_pair(10_000_000, ms(20));
    p.drive_until(Instant::from_secs(2));
    let bdp = payload_rate(10_000_000) * 0.0412;
    // Bytes in flight beyond one BDP sit in the bottleneck's queue.
    let (mut max_queue, mut sum_queue, mut n) = (0.0f64, 0.0, 0u64);
    drive_watching(&mut p, Instant::from_secs(20), |p| {
        let q = (p.snd.flight() as f64 - bdp).max(0.0);
        max_queue = max_queue.max(q);
        sum_queue += q;
        n += 1;
    });
    let m = metrics(&p);
    let bw = m.bw_bytes_per_sec.unwrap();
    let want = payload_rate(10_000_000);
    assert!((bw / want - 1.0).abs() < 0.01, "bw {bw} vs {want}");
    // The minimum RTT: 40 ms of propagation, a segment's serialisation (1.2 ms).
    let min_rtt = m.min_rtt.unwrap().as_millis_f64();
    assert!((41.2..42.0).contains(&min_rtt), "min_rtt {min_rtt}");
    // cwnd_gain - 1 = one BDP of queue at most, plus the quantisation budget
    // (`bbr_quantization_budget`: 3 × 2 segments, rounded to even, + 2 in the
    // 1.25 phase).
    let budget = 10.0 * MSS as f64;
    assert!(
        max_queue <= bdp + budget,
        "max queue {max_queue} B, BDP {bdp} B"
    );
    let mean_queue = sum_queue / n as f64;
    assert!(
        mean_queue < 0.5 * bdp,
        "mean queue {mean_queue} B, BDP {bdp} B"
    );
    // And the link is used: goodput within 3 % of the payload rate.
    let read = p.rcv.bytes_read() as f64;
    assert!(read / 20.0 > 0.9 * want, "goodput {} B/s", read / 20.0);
}

/// PROBE_RTT (`bbr_update_min_rtt`): when the minimum RTT has not been renewed for
/// 10 s, cwnd drops to 4 segments for at least 200 ms and a round, then PROBE_BW
/// resumes; a long transfer does so about every 10 s.
#[test]
fn probe_rtt_comes_every_ten_seconds_at_four_segments_for_200_ms() {
    let mut p = bbr_pair(10_000_000, ms(20));
    let mut entries: Vec<Instant> = Vec::new();
    let mut exits: Vec<Instant> = Vec::new();
    let mut max_cwnd_in_probe = 0;
    let mut prev = None;
    drive_watching(&mut p, Instant::from_secs(35), |p| {
        let m = metrics(p);
        let in_probe = m.mode == Some("probe_rtt");
        if in_probe {
            max_cwnd_in_probe = max_cwnd_in_probe.max(p.snd.cwnd());
        }
        match (prev, in_probe) {
            (Some(false) | None, true) => entries.push(p.now),
            (Some(true), false) => exits.push(p.now),
            _ => {}
        }
        prev = Some(in_probe);
    });
    assert_eq!(entries.len(), 3, "entries {entries:?}");
    assert!(
        (10.0..10.6).contains(&entries[0].as_secs_f64()),
        "{entries:?}"
    );
    for w in entries.windows(2) {
        let gap = (w[1] - w[0]).as_secs_f64();
        assert!((10.0..10.6).contains(&gap), "{entries:?}");
    }
    for (a, b) in entries.iter().zip(&exits) {
        let d = (*b - *a).as_secs_f64();
        assert!((0.2..0.4).contains(&d), "PROBE_RTT lasted {d} s");
    }
    assert!(max_cwnd_in_probe <= 4 * MSS, "cwnd {max_cwnd_in_probe}");
}

/// Internal pacing (`tcp_pacing_check`, `tcp_update_skb_after_send`): past the
/// first ten segments, the sender never sends faster than the controller's pacing
/// rate, even over a path with no bottleneck at all, where an unpaced sender would
/// send each window at one instant.
#[test]
fn the_pacing_rate_bounds_the_sending_rate() {
    let mut p = Pair::new(bbr_linux(), ms(50));
    p.set_unlimited();
    // The pacing rate in force at each data segment's departure.
    let mut rates: Vec<(Instant, u64)> = Vec::new();
    drive_watching(&mut p, t_ms(1500), |p| {
        rates.push((p.now, p.snd.cc().pacing_rate().unwrap()));
    });
    let rate_at = |t: Instant| {
        rates
            .iter()
            .take_while(|r| r.0 <= t)
            .map(|r| r.1)
            .chain(rates.iter().take_while(|r| r.0 <= t + ms(1)).map(|r| r.1))
            .max()
            .unwrap_or(u64::MAX)
    };
    let data: Vec<_> = p.fwd.data().copied().collect();
    assert!(data.len() > 200, "{} segments", data.len());
    let mut checked = 0;
    for w in data.windows(2).skip(10) {
        let gap = (w[1].at - w[0].at).as_secs_f64();
        let len = w[0].seg.len as f64;
        // At most half the gap is forgiven for lateness (EDT credit).
        let min_gap = len / rate_at(w[0].at) as f64 / 2.0;
        assert!(
            gap >= min_gap * 0.999,
            "{:?} -> {:?}: gap {gap} < {min_gap}",
            w[0].at,
            w[1].at
        );
        checked += 1;
    }
    assert!(checked > 100);
    // Without the pacer the same sender puts whole windows out at one instant.
    let same_instant = data
        .windows(2)
        .skip(10)
        .filter(|w| w[0].at == w[1].at)
        .count();
    assert_eq!(same_instant, 0);
}

/// A loss in PROBE_BW: the first round of the recovery conserves packets (cwnd =
/// what is in flight plus what was delivered, `bbr_set_cwnd_to_recover_or_restore`),
/// and the cwnd of before the recovery comes back when it ends.
#[test]
fn recovery_conserves_packets_then_restores_the_prior_cwnd() {
    let mut p = bbr_pair(10_000_000, ms(20));
    p.drive_until(Instant::from_secs(5));
    let before = p.snd.cwnd();
    let nxt = p.snd.snd_nxt();
    p.fwd.drop_first_tx_of(nxt + 5 * MSS);
    let mut min_in_recovery = u64::MAX;
    let mut saw_recovery = false;
    drive_watching(&mut p, Instant::from_secs(6), |p| {
        if p.snd.ca_state() == crate::cc::CaState::Recovery {
            saw_recovery = true;
            min_in_recovery = min_in_recovery.min(p.snd.cwnd());
        }
    });
    assert!(saw_recovery);
    assert!(min_in_recovery < before, "{min_in_recovery} vs {before}");
    assert!(p.snd.cwnd() >= before, "{} vs {before}", p.snd.cwnd());
    assert_eq!(p.snd.stats().timeouts, 0);
}

/// Without SACK (RFC 6582 NewReno recovery), the window the duplicate ACKs inflate
/// starts from BBR's cwnd, not from its ssthresh, which BBR leaves "infinite" (Linux
/// `TCP_INFINITE_SSTHRESH`; Linux counts each duplicate ACK as a SACKed segment,
/// `tcp_add_reno_sack`; DRAIN sets it, STARTUP does not): a loss does not open the
/// window to gigabytes.
#[test]
fn without_sack_a_recovery_inflates_the_cwnd_not_the_infinite_ssthresh() {
    let cfg = TcpConfig {
        sack: false,
        recovery: crate::tcp::Recovery::NewReno,
        ..bbr_linux()
    };
    let mut p = Pair::new(cfg, ms(20));
    p.fwd.rate_bps = Some(10_000_000);
    p.set_unlimited();
    // A loss in STARTUP, before DRAIN gives ssthresh a value.
    p.drive_until(t_ms(150));
    assert_eq!(metrics(&p).mode, Some("startup"));
    let nxt = p.snd.snd_nxt();
    p.fwd.drop_first_tx_of(nxt + 5 * MSS);
    // The window in force during the recovery (`TcpSender::cwnd`: the inflated one),
    // and BBR's cwnd when it began.
    let mut max_window = 0;
    let mut before = None;
    drive_watching(&mut p, Instant::from_secs(1), |p| {
        if p.snd.ca_state() == crate::cc::CaState::Recovery {
            before.get_or_insert(p.snd.cc().window());
            max_window = max_window.max(p.snd.cwnd());
        }
    });
    let before = before.expect("a recovery");
    assert!(
        max_window <= 2 * before + 4 * MSS,
        "window {max_window} in recovery, cwnd {before} before"
    );
}

/// In a SACK recovery BBR's own cwnd governs the sender, not proportional rate
/// reduction: Linux `tcp_cong_control` hands the ACK to a controller with
/// `cong_control` and returns before `tcp_cwnd_reduction` (PRR), and BBR's
/// `bbr_set_cwnd_to_recover_or_restore` does the packet conservation of the first
/// round itself.
#[test]
fn a_recovery_under_bbr_uses_bbrs_cwnd_not_prr() {
    let mut p = bbr_pair(10_000_000, ms(20));
    // Twenty segments' first transmissions lost at 2 s, in steady state.
    p.fwd
        .drop_if(|t, s| s.len > 0 && !s.retransmission && t >= t_ms(2_000) && t < t_ms(2_017));
    let mut in_recovery = 0;
    drive_watching(&mut p, t_ms(4_000), |p| {
        if p.snd.ca_state() == crate::cc::CaState::Recovery {
            in_recovery += 1;
            assert_eq!(p.snd.cwnd(), p.snd.cc().window(), "at {:?}", p.now);
        }
    });
    assert!(in_recovery > 0, "a recovery");
    assert_eq!(p.snd.stats().timeouts, 0);
}

/// The ACKs Linux's `tcp_clean_rtx_queue` marks `FLAG_ACK_MAYBE_DELAYED` (BBR then
/// takes no expired minimum RTT from them): one whole segment shorter than an MSS
/// acknowledged, with no SACK information and no ECE. A SACK block, ECE, part of the
/// segment or an ACK of two segments is not one.
#[test]
fn the_sender_recognises_an_ack_of_one_lone_runt() {
    let mut p = Pair::new(bbr_linux(), ms(20));
    p.write(500);
    p.drive_until(t_ms(45));
    let una = p.snd.snd_una();
    assert_eq!(p.snd.snd_nxt(), una + 500, "the runt left");
    let wnd = 1 << 20;
    assert!(p.snd.is_runt_ack(&ack(una + 500, wnd)));
    let sacked = sack_ack(una + 500, wnd, &[(una + 1000, una + 1500)]);
    assert!(!p.snd.is_runt_ack(&sacked));
    let ece = Segment {
        flags: Flags::ACK | Flags::ECE,
        ..ack(una + 500, wnd)
    };
    assert!(!p.snd.is_runt_ack(&ece));
    assert!(!p.snd.is_runt_ack(&ack(una + 400, wnd)), "part of it");
    p.write(300);
    p.drive_until(t_ms(46));
    assert!(!p.snd.is_runt_ack(&ack(una + 800, wnd)), "two segments");
}
