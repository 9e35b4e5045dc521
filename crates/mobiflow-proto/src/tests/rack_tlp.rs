//! Behaviour tests of RACK (RFC 8985 §6), the tail loss probe (§7), PRR (RFC 6937)
//! and RTT samples from SACKed data, over a [`Pair`], each against the old behaviour
//! (the same connection with the knob off).

use super::pair::{Fate, Pair};
use super::{bottlenecked, rfc};
use crate::cc::CcKind;
use crate::tcp::{InitialWindow, LossDetection, TcpConfig};
use crate::time::test_util::{ms, t_ms};
use crate::time::Instant;

const MSS: u64 = 1000;

fn with_rack(cfg: TcpConfig) -> TcpConfig {
    TcpConfig {
        loss_detection: LossDetection::Rack,
        ..cfg
    }
}

/// Times at which the ACKs reached the sender.
fn ack_arrivals(p: &Pair) -> Vec<Instant> {
    p.rev
        .log
        .iter()
        .filter_map(|s| match s.fate {
            Fate::Arrives(t) if s.seg.len == 0 => Some(t),
            _ => None,
        })
        .collect()
}

/// Three segments, the first lost: two duplicate ACKs only.
fn first_of_three_lost(cfg: TcpConfig) -> Pair {
    let mut p = Pair::new(cfg, ms(50));
    p.fwd.drop_first_tx_of(0);
    p.write(3 * MSS);
    p.drive_until(t_ms(3_000));
    p
}

#[test]
fn rack_marks_a_loss_on_two_duplicate_acks_once_the_reordering_window_has_passed() {
    // RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`: the data leaves at 100 ms
    // (after the handshake), segments 1 and 2 are SACKed at 200 ms, RACK.rtt = 100 ms
    // and the window is min_rtt / 4 = 25 ms: segment 0 is lost at 225 ms; the reorder
    // timer (`tcp_rack_mark_lost`: + TCP_TIMEOUT_MIN_US, 2 ms) resends it at 227 ms.
    let p = first_of_three_lost(with_rack(rfc()));
    assert_eq!(p.fwd.tx_times(0), vec![t_ms(100), t_ms(227)]);
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.snd.stats().fast_retransmits, 1);
    assert_eq!(p.snd.snd_una(), 3 * MSS);

    // RFC 6675's DupThresh rule never sees three duplicate ACKs: the RTO resends.
    let old = first_of_three_lost(rfc());
    assert_eq!(old.snd.stats().timeouts, 1);
    assert!(
        old.fwd.tx_times(0)[1] >= t_ms(1_100),
        "{:?}",
        old.fwd.tx_times(0)
    );
}

#[test]
fn rack_reorder_timer_does_not_fire_when_the_late_segment_arrives_within_the_window() {
    // RFC 8985 §6.2: reordering shorter than the window is no loss. Segment 0 is
    // delayed by 10 ms (less than 25 ms): no retransmission, no recovery.
    let mut p = Pair::new(with_rack(rfc()), ms(50));
    p.fwd.delay_first_tx_of(0, ms(10));
    p.write(3 * MSS);
    p.drive_until(t_ms(3_000));
    assert_eq!(p.fwd.tx_times(0), vec![t_ms(100)]);
    assert_eq!(p.snd.stats().retransmits, 0);
    assert_eq!(p.snd.stats().fast_retransmits, 0);
}

#[test]
fn rack_finds_a_lost_retransmission_without_a_timeout() {
    // RFC 8985 §2.2 / §6.2: RACK judges a retransmission by its own send time, so once
    // new data sent after it is SACKed, a lost retransmission is lost again. RFC
    // 6675's IsLost never marks a retransmitted segment: only the RTO resends it.
    let run = |cfg: TcpConfig| {
        let cfg = TcpConfig {
            initial_window: InitialWindow::Segments(10),
            ..cfg
        };
        let mut p = bottlenecked(cfg);
        p.fwd.drop_tx_of(0, 2);
        p.set_unlimited();
        p.drive_until(t_ms(2_000));
        p
    };
    let p = run(with_rack(rfc()));
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.fwd.tx_times(0).len(), 3);
    assert!(p.snd.snd_una() > 100 * MSS);
    let old = run(rfc());
    assert_eq!(old.snd.stats().timeouts, 1);
}

/// Ten segments in the initial window of a Linux-like sender over a 40 ms path, the
/// last two lost: a tail loss, no duplicate ACK.
fn tail_loss(cfg: TcpConfig) -> Pair {
    let mut p = Pair::new(cfg, ms(20));
    p.fwd.drop_first_tx_of(8 * MSS);
    p.fwd.drop_first_tx_of(9 * MSS);
    p.write(10 * MSS);
    p.drive_until(t_ms(5_000));
    p
}

fn linux_1000() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        ..TcpConfig::linux()
    }
}

#[test]
fn tail_loss_is_repaired_by_a_probe_two_srtt_after_the_last_ack_instead_of_a_timeout() {
    // RFC 8985 §7: the last ACK (of segment 7) arrives at 80 ms; the PTO is
    // 2·SRTT + TCP_TIMEOUT_MIN = 80 ms + 2 jiffies = 88 ms (Linux
    // `tcp_schedule_loss_probe`, two segments out), which the timer wheel runs one
    // jiffy after its expiry (`tcp::jiffies`), so the last segment is resent at 172
    // ms; its SACK (212 ms) lets RACK mark segment 8 lost (sent at 40 ms, out for
    // more than RACK.rtt + min_rtt/4), which is resent at once and acknowledged at
    // 252 ms: about four RTTs after the data left.
    let p = tail_loss(linux_1000());
    let s = p.snd.stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.loss_probes, 1);
    assert_eq!(p.fwd.tx_times(9 * MSS), vec![t_ms(40), t_ms(172)]);
    assert_eq!(p.fwd.tx_times(8 * MSS), vec![t_ms(40), t_ms(212)]);
    assert_eq!(p.snd.snd_una(), 10 * MSS);
    let done = *ack_arrivals(&p).last().expect("acks");
    assert_eq!(done, t_ms(252));

    // Without the probe the retransmission timer (at least 200 ms after 80 ms) resends.
    let old = tail_loss(TcpConfig {
        tlp: false,
        ..linux_1000()
    });
    assert_eq!(old.snd.stats().timeouts, 1);
    assert!(*ack_arrivals(&old).last().expect("acks") >= t_ms(320));
}

#[test]
fn a_probe_of_new_data_goes_out_beyond_cwnd_when_a_whole_window_is_lost() {
    // Linux `tcp_send_loss_probe`: new data if the receiver's window allows, whatever
    // cwnd says (`tcp_write_xmit` with push_one = 2). The whole initial window (sent
    // at 40 ms) is lost and no ACK comes; the PTO, 2·SRTT + 2 jiffies after the last
    // transmission and run by the timer wheel a jiffy after that (`tcp::jiffies`),
    // sends segment 10 at 132 ms, beyond the full cwnd; its SACK lets
    // RACK mark the ten lost, repaired without a timeout.
    let run = |cfg: TcpConfig| {
        let mut p = Pair::new(cfg, ms(20));
        p.fwd
            .drop_if(|_, s| s.len > 0 && s.seq < 10 * MSS && !s.retransmission);
        p.write(20 * MSS);
        p.drive_until(t_ms(5_000));
        p
    };
    let p = run(linux_1000());
    assert_eq!(p.snd.stats().loss_probes, 1);
    assert_eq!(p.fwd.tx_times(10 * MSS), vec![t_ms(132)]);
    assert_eq!(p.snd.stats().timeouts, 0);
    assert_eq!(p.snd.snd_una(), 20 * MSS);
    let old = run(TcpConfig {
        tlp: false,
        ..linux_1000()
    });
    assert_eq!(old.snd.stats().timeouts, 1);
}

/// RFC 6937 §6's first example: cwnd 20 segments, one loss, ssthresh 10 (NewReno),
/// a duplicate ACK per delivered segment (no delayed ACKs), and more data to send.
/// Returns, for each duplicate ACK in order, how many segments left on it.
fn prr_example(prr: bool) -> Vec<usize> {
    let cfg = TcpConfig {
        cc: CcKind::NewReno,
        initial_window: InitialWindow::Segments(20),
        delayed_ack: false,
        prr,
        ..rfc()
    };
    let mut p = bottlenecked(cfg);
    p.bulk_losing(&[0], t_ms(300));
    let dupacks: Vec<Instant> = p
        .rev
        .log
        .iter()
        .filter(|s| {
            s.seg.ack == 0 && s.seg.len == 0 && !s.seg.flags.contains(crate::wire::Flags::SYN)
        })
        .filter_map(|s| match s.fate {
            Fate::Arrives(t) => Some(t),
            Fate::Dropped => None,
        })
        .collect();
    dupacks
        .iter()
        .take(19)
        .map(|&t| p.fwd.data().filter(|s| s.at == t).count())
        .collect()
}

#[test]
fn prr_spreads_the_reduction_over_the_recovery_as_rfc_6937_example_one() {
    // RFC 6937 §6: after the fast retransmit (on the third duplicate ACK), PRR sends
    // one new segment for every two delivered (ssthresh / RecoverFS = 1/2), where RFC
    // 6675 waits until pipe has fallen to ssthresh and then sends one per ACK.
    let prr = prr_example(true);
    let rfc6675 = prr_example(false);
    // Limited transmit on the first two, the retransmission on the third; then PRR
    // sends one segment on every other ACK until pipe is down to ssthresh at the last
    // duplicate ACK (where PRR-SSRB, in the kernel's form, sends nothing more until
    // SND.UNA advances), while RFC 6675 is silent for nine ACKs and then sends one
    // per ACK. (Same shape as the RFC's table; here pipe meets ssthresh one ACK
    // earlier in both.)
    assert_eq!(
        prr,
        [1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
    );
    assert_eq!(
        rfc6675,
        [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    );
}

#[test]
fn a_sack_rtt_sample_updates_srtt_on_duplicate_acks() {
    // Linux `tcp_sacktag_one` / `tcp_ack_update_rtt`: a duplicate ACK that SACKs a
    // segment never retransmitted is an RTT sample. The path grows from 100 ms to
    // 300 ms of RTT just before the data leaves: only the SACK samples see it before
    // the retransmission is acknowledged.
    let run = |sack_rtt: bool| {
        let cfg = TcpConfig { sack_rtt, ..rfc() };
        let mut p = Pair::new(cfg, ms(50));
        p.fwd.drop_first_tx_of(0);
        p.write(4 * MSS);
        // The SYN has left on the 50 ms path; the data leaves at 100 ms on the longer
        // one, and the three duplicate ACKs arrive at 100 + 300 = 400 ms.
        p.drive_until(t_ms(1));
        p.fwd.latency = ms(250);
        p.drive_until(t_ms(401));
        (
            p.snd.stats().rtt.count,
            p.snd.rtt().srtt().expect("sampled"),
        )
    };
    let (n_on, srtt_on) = run(true);
    let (n_off, srtt_off) = run(false);
    assert_eq!(n_off, 1, "the handshake only");
    assert_eq!(srtt_off, ms(100));
    assert_eq!(n_on, 4, "one sample per duplicate ACK");
    assert!(srtt_on > ms(150), "{srtt_on:?}");
}
