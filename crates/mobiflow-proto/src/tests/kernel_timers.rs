//! The linux profile's retransmission timer as the kernel runs it (`tcp::jiffies`):
//! the RTO in jiffies on the timer wheel, the loss probe's cap from the first
//! unacknowledged segment (`tcp_rto_delta_us`), and the probe armed after an undo
//! (`tcp_ack`'s `tcp_set_xmit_timer` after `tcp_fastretrans_alert`). One sender, no
//! network: segments in, segments out; 1000-byte segments.

use crate::cc::CaState;
use crate::tcp::{InitialWindow, TcpConfig, TcpSender};
use crate::time::test_util::t_ms;
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Segment, Timestamps};

const MSS: u64 = 1000;

fn linux(tlp: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        handshake: false,
        initial_window: InitialWindow::Segments(10),
        rcv_buf: 1_000_000,
        tlp,
        ..TcpConfig::linux()
    }
}

fn ack(ack: u64, tsecr: Option<u32>) -> Segment {
    Segment {
        ack,
        wnd: 1_000_000,
        flags: Flags::ACK,
        ts: tsecr.map(|tsecr| Timestamps { tsval: 1, tsecr }),
        ..Segment::default()
    }
}

fn drain(s: &mut TcpSender, t: Instant) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(t)).collect()
}

/// A sender that sent its initial window at `t0` and had the first segment
/// acknowledged 100 ms later (SRTT 100 ms, RTO 300 ms, 75 jiffies).
fn after_first_ack(tlp: bool, t0: Instant, unlimited: bool) -> TcpSender {
    let mut s = TcpSender::new(linux(tlp));
    if unlimited {
        s.set_unlimited();
    } else {
        s.write(10 * MSS);
    }
    assert_eq!(drain(&mut s, t0).len(), 10);
    let t1 = t0 + Duration::from_millis(100);
    s.handle_segment(t1, &ack(MSS, Some((t0.as_nanos() / 1_000_000) as u32)));
    drain(&mut s, t1);
    assert_eq!(s.rto(), Duration::from_millis(300));
    s
}

#[test]
fn backed_off_timeouts_run_on_the_timer_wheel() {
    // `icsk_retransmit_timer` is a timer-wheel timer (kernel/time/timer.c,
    // `calc_wheel_index`): it fires at the first boundary of its level's granularity
    // after its expiry, 4 ms (level 0), 32 ms (level 1: 63 to 503 jiffies) or 256 ms
    // (level 2: 504 to 4031 jiffies) at HZ = 250, never early. The RTO itself is a
    // whole number of jiffies (`usecs_to_jiffies`), doubled by each backoff.
    let t0 = t_ms(1001);
    let mut s = after_first_ack(false, t0, false);
    let mut armed_at = t0 + Duration::from_millis(100);
    let mut fired = Vec::new();
    for _ in 0..5 {
        let rto = s.rto();
        assert_eq!(rto.as_nanos() % 4_000_000, 0, "{rto:?} in whole jiffies");
        let due = s.poll_timeout().expect("the retransmission timer");
        let gran = match rto.as_nanos() / 4_000_000 {
            0..63 => 4,
            63..504 => 32,
            _ => 256,
        };
        assert!(due > armed_at + rto, "{due:?} never early");
        assert!(
            due <= armed_at + rto + Duration::from_millis(gran),
            "{due:?}"
        );
        assert_eq!(
            due.as_nanos() % (gran * 1_000_000),
            0,
            "{due:?} on a boundary"
        );
        s.handle_timeout(due);
        drain(&mut s, due);
        fired.push(due);
        armed_at = due;
    }
    assert_eq!(s.stats().timeouts, 5);
    // 300, 600, 1200, 2400 and 4800 ms from 1.101 s, each run late by the wheel:
    // the exact series would fire at 1.401, 2.001, 3.201, 5.601 and 10.401 s.
    assert_eq!(
        fired,
        [t_ms(1408), t_ms(2016), t_ms(3232), t_ms(5888), t_ms(10_752)]
    );
}

#[test]
fn the_loss_probe_is_capped_by_the_rto_of_the_first_unacknowledged_segment() {
    // Linux `tcp_schedule_loss_probe` after new data is sent: the PTO is at most
    // what is left of the RTO counted from the latest transmission of the head
    // (`tcp_rto_delta_us`), not from the last ACK. Sent at 0; the ACK at 100 ms
    // restarts the timer (RTO 300 ms) and schedules the probe at 2 SRTT + 2 jiffies;
    // new data at 250 ms reschedules it, capped at 0 + 300 ms.
    let t0 = t_ms(0);
    let mut s = after_first_ack(true, t0, false);
    s.write(MSS);
    assert_eq!(drain(&mut s, t_ms(250)).len(), 1);
    let pto = s.poll_timeout().expect("the probe timer");
    // 50 ms from 250 ms, 12 jiffies + 1 on the wheel's level 0.
    assert_eq!(pto, t_ms(304));
    s.handle_timeout(pto);
    let probe = drain(&mut s, pto);
    assert_eq!(probe.len(), 1, "the loss probe");
    assert_eq!(s.stats().loss_probes, 1);
}

#[test]
fn an_undo_on_an_ack_of_new_data_arms_the_loss_probe() {
    // Linux `tcp_ack`: `tcp_fastretrans_alert` undoes a spurious timeout
    // (`tcp_try_undo_loss`, Eifel: the ACK echoes the original's timestamp), then
    // `tcp_set_xmit_timer` schedules the loss probe in the open state it restored.
    // The application has written ten segments, all sent: nothing new goes out after
    // the undo to schedule the probe instead.
    let t0 = t_ms(0);
    let mut s = after_first_ack(true, t0, false);
    // No ACK after 100 ms: the probe, then the timeout.
    let mut now = t0;
    while s.stats().timeouts == 0 {
        now = s.poll_timeout().expect("a timer");
        s.handle_timeout(now);
        drain(&mut s, now);
    }
    assert_eq!(s.ca_state(), CaState::Loss);
    // The originals were only late: an ACK of five of them echoes their TSval (0).
    let t = now + Duration::from_millis(50);
    s.handle_segment(t, &ack(6 * MSS, Some(0)));
    assert_eq!((s.stats().undos, s.ca_state()), (1, CaState::Open));
    drain(&mut s, t);
    // The probe is due after 2 SRTT + 2 jiffies (run at a 32 ms boundary of the
    // wheel's level 1), before the RTO.
    let srtt = s.rtt().srtt().expect("srtt");
    let due = s.poll_timeout().expect("a timer");
    assert!(
        due - t <= srtt * 2 + Duration::from_millis(8 + 32),
        "{due:?} {srtt:?}"
    );
    assert!(due < t + s.rto(), "{due:?} before the RTO ({:?})", s.rto());
    let before = s.stats().loss_probes;
    s.handle_timeout(due);
    assert_eq!(drain(&mut s, due).len(), 1);
    assert_eq!(s.stats().loss_probes, before + 1, "the loss probe went out");
    assert_eq!(s.stats().timeouts, 1);
}
