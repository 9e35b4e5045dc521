//! Spurious retransmissions: D-SACK at the receiver (RFC 2883), the ground-truth count
//! of spurious retransmissions, and the undo of spurious reductions (Eifel, RFC 3522;
//! D-SACK, RFC 3708; F-RTO, RFC 5682) as Linux does it (`tcp::dsack`, `tcp::undo`).
//!
//! Paths are 50 ms each way; segments carry 1000 bytes; the profile is `linux` unless
//! a test says otherwise.

use super::pair::Pair;
use super::{ns2_profile, rfc, sack_ack};
use crate::cc::CaState;
use crate::tcp::{
    Detector, InitialWindow, LossDetection, Recovery, SenderEvent, TcpConfig, TcpSender,
};
use crate::time::test_util::{ms, t_ms};
use crate::time::Instant;

const MSS: u64 = 1000;
/// The window the scripted ACKs advertise, 1 MB (as the receive buffer).
const RWND: u64 = 1_000_000;

fn linux() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        ..TcpConfig::linux()
    }
}

/// `linux` with the three knobs of this topic set to `on`, and timestamps to `ts`.
/// The linux profile with the spurious-retransmission knobs `on` or off, RFC 6298's
/// RTO, and loss detection by duplicate ACKs and the RTO alone (no RACK, no tail loss probe): the
/// scripted episodes below are a fast retransmit and a timeout, which RACK-TLP would
/// replace by a probe (`tests::rack_tlp` covers those).
fn linux_with(on: bool, ts: bool) -> TcpConfig {
    TcpConfig {
        dsack: on,
        undo: on,
        frto: on,
        timestamps: ts,
        loss_detection: LossDetection::DupThresh,
        tlp: false,
        // RFC 6298's RTO, under which the scripted spike times out as often with
        // F-RTO as without (the kernel's SRTT + 200 ms fires once less without it).
        rto_formula: crate::tcp::rtt::RtoFormula::Rfc6298,
        ..linux()
    }
}

/// A bulk transfer whose segment at `seq` (first transmission) is held back 40 ms: it
/// arrives after the segments behind it have drawn three duplicate ACKs, but before
/// the fast retransmission does (reordering, no loss).
fn reordered(cfg: TcpConfig, seq: u64) -> Pair {
    let mut p = Pair::new(cfg, ms(50));
    p.fwd.delay_first_tx_of(seq, ms(40));
    p.write(40 * MSS);
    p
}

/// The undo events the sender queued: which detector, and whether after a timeout.
fn undos(p: &Pair) -> Vec<(Detector, bool)> {
    p.snd_events
        .iter()
        .filter_map(|(_, e)| match *e {
            SenderEvent::Undo {
                detector,
                after_timeout,
            } => Some((detector, after_timeout)),
            _ => None,
        })
        .collect()
}

/// cwnd just before the first fast recovery began.
fn cwnd_before_recovery(p: &Pair) -> u64 {
    let i = p
        .trace
        .iter()
        .position(|c| c.ca == CaState::Recovery)
        .expect("a fast recovery");
    p.trace[i - 1].cwnd
}

#[test]
fn a_reordered_segment_draws_a_dsack_for_the_needless_retransmission() {
    // RFC 2883 §4 (1): the retransmission reaches a receiver that already has the
    // original; the next ACK's first SACK block reports it, below the cumulative ACK
    // (Linux `tcp_data_queue` -> `tcp_dsack_set`).
    let mut p = reordered(linux_with(true, true), 5 * MSS);
    p.drive_until(t_ms(1_000));
    assert_eq!(p.snd.stats().retransmits, 1);
    let dsacks: Vec<_> = p
        .acks()
        .filter_map(|a| a.seg.sack.iter().next().filter(|b| b.0 < a.seg.ack))
        .collect();
    assert_eq!(dsacks, vec![(5 * MSS, 6 * MSS)]);
    assert_eq!(p.rcv.stats().dsacks_sent, 1);
    assert_eq!(p.snd.stats().dsacks_received, 1);

    // Off (the rfc and ns2 profiles): no D-SACK block, the ACK says nothing of it.
    let mut q = reordered(linux_with(false, true), 5 * MSS);
    q.drive_until(t_ms(1_000));
    assert_eq!(q.snd.stats().retransmits, 1);
    assert!(q
        .acks()
        .all(|a| a.seg.sack.iter().next().is_none_or(|b| b.0 >= a.seg.ack)));
    assert_eq!(q.rcv.stats().dsacks_sent, 0);
}

#[test]
fn the_receiver_counts_a_retransmission_of_bytes_it_had_as_spurious() {
    // The ground truth, D-SACK or not: the retransmission brought nothing new.
    for on in [true, false] {
        let mut p = reordered(linux_with(on, true), 5 * MSS);
        p.drive_until(t_ms(1_000));
        assert_eq!(p.rcv.stats().spurious_retransmits, 1, "knobs {on}");
    }
    // A retransmission that repairs a real loss is not spurious.
    let mut p = Pair::new(linux_with(true, true), ms(50));
    p.fwd.drop_first_tx_of(5 * MSS);
    p.write(40 * MSS);
    p.drive_until(t_ms(1_000));
    assert_eq!(p.snd.stats().retransmits, 1);
    assert_eq!(p.rcv.stats().spurious_retransmits, 0);
    assert_eq!(p.snd.stats().undos, 0);
}

#[test]
fn a_fully_dsacked_recovery_is_undone_and_cwnd_returns() {
    // RFC 3708 §3, Linux `tcp_try_undo_dsack` (in `TCP_CA_Open`, after the recovery
    // ended): every retransmission of the episode D-SACKed -> `tcp_undo_cwnd_reduction`
    // restores the window (CUBIC's saved state). Timestamps off, so Eifel cannot
    // decide first.
    let mut p = reordered(linux_with(true, false), 5 * MSS);
    p.drive_until(t_ms(1_000));
    let before = cwnd_before_recovery(&p);
    let s = p.snd.stats();
    assert_eq!((s.fast_retransmits, s.dsacks_received, s.undos), (1, 1, 1));
    assert_eq!(undos(&p), [(Detector::Dsack, false)], "found by the D-SACK");
    let reduced = p.trace.iter().map(|c| c.cwnd).min().unwrap();
    assert!(reduced < before, "the fast retransmit reduced cwnd");
    let undone = p
        .trace
        .iter()
        .skip_while(|c| c.cwnd >= before)
        .find(|c| c.cwnd >= before)
        .expect("cwnd comes back");
    assert_eq!(
        undone.cwnd, before,
        "back to its value before the reduction"
    );
    assert_eq!(undone.ca, CaState::Open);

    // Without undo the reduction stands (ssthresh stays at beta * cwnd).
    let mut q = reordered(linux_with(false, false), 5 * MSS);
    q.drive_until(t_ms(1_000));
    assert_eq!(q.snd.stats().undos, 0);
    assert!(q.snd.ssthresh() < before);
    assert_eq!(p.snd.ssthresh(), u64::MAX, "slow start's ssthresh is back");
}

#[test]
fn eifel_undoes_the_recovery_on_the_ack_of_the_original() {
    // RFC 3522 §3.2, Linux `tcp_try_undo_recovery` / `tcp_packet_delayed`: the ACK that
    // ends the recovery echoes the TSval of the original (sent before the
    // retransmission), so the reduction is undone there, before any D-SACK.
    let mut p = reordered(linux_with(true, true), 5 * MSS);
    let mut undo_at = None;
    let mut dsack_at = None;
    while p.now < t_ms(1_000) && p.step() {
        if undo_at.is_none() && p.snd.stats().undos == 1 {
            undo_at = Some(p.now);
        }
        if dsack_at.is_none() && p.snd.stats().dsacks_received == 1 {
            dsack_at = Some(p.now);
        }
    }
    let (undo_at, dsack_at) = (undo_at.expect("undone"), dsack_at.expect("D-SACKed"));
    assert!(undo_at < dsack_at, "{undo_at:?} before {dsack_at:?}");
    assert_eq!(p.snd.stats().undos, 1);
    assert_eq!(undos(&p), [(Detector::Timestamps, false)], "found by Eifel");
    assert_eq!(p.snd.ssthresh(), u64::MAX);
}

/// A greedy transfer in which every data segment sent in `[from, from + 1 s)` takes
/// 700 ms longer, in order: a delay spike far longer than the RTO (about 300 ms
/// here), no loss.
fn delay_spike(cfg: TcpConfig, from: Instant) -> Pair {
    let mut p = Pair::new(cfg, ms(50));
    let until = from + ms(1_000);
    p.fwd
        .delay_if(ms(700), move |t, s| s.len > 0 && t >= from && t < until);
    p.set_unlimited();
    p
}

#[test]
fn frto_detects_a_spurious_timeout_and_sends_new_data_instead_of_resending() {
    // RFC 5682 §3.1 (Linux `tcp_process_loss`, `tcp_frto = 2`): after the timeout
    // only the head is resent; the ACKs of the delayed originals acknowledge data that
    // was never retransmitted (step 3b), so the timeout is undone: no go-back-N
    // resend, and cwnd / ssthresh back. Timestamps off: F-RTO alone decides.
    let from = t_ms(600);
    let mut p = delay_spike(linux_with(true, false), from);
    p.drive_until(t_ms(4_000));
    let s = p.snd.stats();
    // The timer backs off and fires again before the originals are acknowledged
    // (RFC 6298 §5.5); each timeout resends the head only.
    assert!(s.timeouts >= 1);
    assert_eq!((s.undos, s.rto_undos), (1, 1), "one episode, undone");
    assert_eq!(undos(&p), [(Detector::Frto, true)], "found by F-RTO");
    assert_eq!(s.retransmits, s.timeouts, "the head only, once per timeout");
    assert_eq!(p.rcv.stats().spurious_retransmits, s.retransmits);

    // Without F-RTO (and undo): the go-back-N resend of data that was not lost.
    let mut q = delay_spike(linux_with(false, false), from);
    q.drive_until(t_ms(4_000));
    let sq = q.snd.stats();
    assert_eq!((sq.timeouts, sq.undos), (s.timeouts, 0));
    assert!(sq.retransmits > 5, "{}", sq.retransmits);
    assert!(q.rcv.stats().spurious_retransmits > 5);
    assert!(
        p.rcv.bytes_read() > q.rcv.bytes_read(),
        "undone: more delivered ({} vs {})",
        p.rcv.bytes_read(),
        q.rcv.bytes_read()
    );
}

#[test]
fn eifel_undoes_a_spurious_timeout_with_timestamps() {
    // Linux `tcp_try_undo_loss(sk, false)`: the first ACK after the timeout echoes
    // the original's TSval, older than the retransmission.
    let mut p = delay_spike(linux_with(true, true), t_ms(600));
    p.drive_until(t_ms(4_000));
    let s = p.snd.stats();
    assert!(s.timeouts >= 1);
    // The timeout's episode is undone once. A fast recovery follows at ~2.3 s, and
    // is undone too: the segments sent once the spike is over (from 1.6 s) overtake
    // the last delayed ones, and the ACKs that SACK them are duplicate ACKs by RFC
    // 6675 §2 (new SACK information), three of them a fast retransmit under this
    // test's duplicate-ACK loss detection. The D-SACKs of the resent head are not
    // counted (`a_dsack_only_ack_is_not_a_duplicate_ack`). Every retransmission was
    // needless; none is a go-back-N resend of the window, which without undo and
    // F-RTO follows each timeout.
    assert_eq!((s.rto_undos, s.undos, s.fast_retransmits), (1, 2, 1));
    assert_eq!(
        undos(&p)[0],
        (Detector::Timestamps, true),
        "the timeout's, by Eifel"
    );
    assert_eq!(p.rcv.stats().spurious_retransmits, s.retransmits);
    let mut q = delay_spike(linux_with(false, true), t_ms(600));
    q.drive_until(t_ms(4_000));
    let sq = q.snd.stats();
    assert!(
        4 * s.retransmits < sq.retransmits,
        "{} vs {} without undo",
        s.retransmits,
        sq.retransmits
    );
}

#[test]
fn frto_keeps_the_reduction_when_the_loss_was_real() {
    // RFC 5682 §3.1 step 3a: after the new data of step 2b, duplicate ACKs (SACKs of
    // the new data alone) mean the outstanding data was lost: the conventional
    // recovery follows and nothing is undone.
    let mut p = Pair::new(linux_with(true, false), ms(50));
    p.fwd.blackout(t_ms(600), t_ms(800));
    p.write(400 * MSS);
    p.drive_until(t_ms(5_000));
    let s = p.snd.stats();
    assert!(s.timeouts >= 1);
    assert_eq!(s.undos, 0);
    assert_eq!(p.rcv.stats().spurious_retransmits, 0);
    assert_eq!(p.rcv.bytes_read(), 400 * MSS, "everything delivered");
}

/// A sender of `cfg` (SACK on, timestamps off, 1000-byte segments, initial window 10)
/// whose first segment was acknowledged at 100 ms: segments from 1000 on are
/// outstanding and the connection is open.
fn scripted_sender(cfg: TcpConfig) -> TcpSender {
    let mut s = TcpSender::new(TcpConfig {
        mss: MSS as u32,
        sack: true,
        timestamps: false,
        handshake: false,
        initial_window: InitialWindow::Segments(10),
        rcv_buf: RWND,
        ..cfg
    });
    s.set_unlimited();
    while s.poll_transmit(t_ms(0)).is_some() {}
    s.handle_segment(t_ms(100), &sack_ack(MSS, RWND, &[]));
    while s.poll_transmit(t_ms(100)).is_some() {}
    assert_eq!(s.ca_state(), CaState::Open);
    s
}

/// The senders that use SACK with duplicate-ACK loss detection: the `rfc` profile,
/// the `ns2` profile with `sack = true` (ns-2's Agent/TCP/Sack1) and `linux` with RACK
/// off.
fn sack_senders() -> [(&'static str, TcpConfig); 3] {
    [
        ("rfc", rfc()),
        (
            "ns2 sack",
            TcpConfig {
                recovery: Recovery::Sack,
                ..ns2_profile()
            },
        ),
        ("linux", linux_with(true, false)),
    ]
}

#[test]
fn a_dsack_only_ack_is_not_a_duplicate_ack() {
    // RFC 6675 §2 ("DupAck"): with SACK, an ACK at SND.UNA is a duplicate only when
    // its SACK information identifies octets neither acknowledged nor SACKed before.
    // A D-SACK (RFC 2883) reports data received twice: an ACK carrying only one
    // (below the cumulative ACK, RFC 2883 §4.1, or inside a block already SACKed) is
    // not a duplicate. Linux: `tcp_ack` counts no duplicate for an ACK with
    // `FLAG_DSACKING_ACK` (the F-RTO fix of 2022, "tcp: fix F-RTO may not work
    // correctly when receiving DSACK"); ns-2.35's Sack1 counts one only when the
    // scoreboard changed (`Sack1TcpAgent::recv`, `scb_->CheckUpdate()`).
    for (name, cfg) in sack_senders() {
        let mut s = scripted_sender(cfg.clone());
        // One ordinary SACK (a duplicate ACK), then five D-SACK-only ACKs: below the
        // cumulative ACK, and inside the block SACKed already.
        s.handle_segment(t_ms(110), &sack_ack(MSS, RWND, &[(3 * MSS, 4 * MSS)]));
        for k in 0..3 {
            s.handle_segment(t_ms(111 + k), &sack_ack(MSS, RWND, &[(0, MSS)]));
        }
        for k in 0..2 {
            let dsack = (3 * MSS, 4 * MSS);
            s.handle_segment(
                t_ms(114 + k),
                &sack_ack(MSS, RWND, &[dsack, (3 * MSS, 4 * MSS)]),
            );
        }
        assert_eq!(s.stats().dsacks_received, 5, "{name}");
        assert_eq!(s.stats().fast_retransmits, 0, "{name}: no fast retransmit");
        assert_eq!(s.ca_state(), CaState::Open, "{name}");

        // The same sender with two more ACKs that SACK new data: three duplicate
        // ACKs, a fast retransmit (RFC 6675 §5).
        s.handle_segment(t_ms(120), &sack_ack(MSS, RWND, &[(3 * MSS, 5 * MSS)]));
        s.handle_segment(t_ms(121), &sack_ack(MSS, RWND, &[(3 * MSS, 6 * MSS)]));
        assert_eq!(s.stats().fast_retransmits, 1, "{name}");
        assert_eq!(s.ca_state(), CaState::Recovery, "{name}");
    }
}

#[test]
fn a_dsack_during_frto_is_not_taken_for_a_real_loss() {
    // RFC 5682 §3.1 step 3 (Linux `tcp_process_loss`): after step 2b sent new data,
    // a duplicate ACK means the loss was real (3a), an ACK of never-retransmitted data
    // that the timeout was spurious (3b). A D-SACK-only ACK in between is neither: the
    // scenario of Linux's "tcp: fix F-RTO may not work correctly when receiving
    // DSACK" (2022), where a D-SACK of a segment resent before the timeout ended
    // F-RTO. F-RTO alone decides here: undo by Eifel or D-SACK is off.
    let cfg = TcpConfig {
        undo: false,
        ..linux_with(true, false)
    };
    let mut s = scripted_sender(cfg);
    let rto_at = s.poll_timeout().expect("the retransmission timer");
    s.handle_timeout(rto_at);
    assert_eq!((s.stats().timeouts, s.ca_state()), (1, CaState::Loss));
    let head = s.poll_transmit(rto_at).expect("the head resent");
    assert_eq!((head.seq, head.len), (MSS, MSS as u32));
    assert!(s.poll_transmit(rto_at).is_none(), "the head only");
    // Step 2b: the original of the head arrives after all; SND.UNA advances and new
    // data goes out instead of resending.
    let t = rto_at + ms(10);
    s.handle_segment(t, &sack_ack(2 * MSS, RWND, &[]));
    let new = s.poll_transmit(t).expect("new data (step 2b)");
    assert!(new.seq >= 11 * MSS, "new data, not a resend: {}", new.seq);
    while s.poll_transmit(t).is_some() {}
    // The resent head arrives as a duplicate: a D-SACK-only ACK.
    s.handle_segment(t + ms(1), &sack_ack(2 * MSS, RWND, &[(MSS, 2 * MSS)]));
    assert_eq!(s.ca_state(), CaState::Loss);
    // Step 3b: never-retransmitted data acknowledged: the timeout was spurious.
    s.handle_segment(t + ms(2), &sack_ack(3 * MSS, RWND, &[]));
    let st = s.stats();
    assert_eq!((st.undos, st.rto_undos), (1, 1), "undone by F-RTO");
    assert_eq!(s.ca_state(), CaState::Open);
    assert_eq!(st.retransmits, 1, "nothing resent but the head");
}
