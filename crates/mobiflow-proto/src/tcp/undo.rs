//! Detecting spurious retransmissions at the sender, and what it then undoes, as Linux
//! does (`tcp_input.c`), with the RFCs each rule follows:
//!
//! * An *episode* starts with a fast retransmit or a timeout (Linux `tcp_init_undo`):
//!   `SND.UNA` is the undo marker, and the retransmissions of the episode are counted
//!   (`undo_retrans`); the first one's TSval is kept (`retrans_stamp`).
//! * Eifel detection (RFC 3522 §3.2; Linux `tcp_packet_delayed`): an ACK whose
//!   echoed timestamp is older than the first retransmission was sent for an
//!   original, so the original was not lost.
//! * D-SACK detection (RFC 3708 §3; Linux `tcp_check_dsack`, `tcp_sacktag_one`):
//!   each D-SACK of a retransmission of the episode takes one off the count; at zero
//!   every retransmission was needless.
//! * F-RTO (RFC 5682 §3.1, the SACK-enhanced algorithm; Linux `tcp_process_loss`
//!   with `tcp_frto = 2`): after a timeout, the first ACK that advances `SND.UNA`
//!   lets new data out instead of the go-back-N resend (step 2b); if the next ACKs
//!   acknowledge data below the recovery point that was never retransmitted, the
//!   timeout was spurious (step 3b); a duplicate ACK or a SACK of the new data
//!   alone means the loss was real (step 3a).
//!
//! When one of these proves the reduction spurious, the sender restores the
//! controller's window (`CongestionController::on_spurious_congestion`, Linux
//! `tcp_undo_cwnd_reduction`; RFC 4015's response) and returns to the open state
//! without the resend: Linux `tcp_try_undo_recovery` (a full ACK), `tcp_try_undo_partial`
//! (a partial ACK, Eifel only, when no retransmission is outstanding),
//! `tcp_try_undo_dsack` (in recovery or after it), `tcp_try_undo_loss` (after a
//! timeout). The sender calls [`Undo`] at the points named in its methods.

use super::dsack::dsack_block;
use super::event::Detector;
use super::sack::Scoreboard;
use crate::cc::CaState;
use crate::wire::Segment;

/// The undo state of one connection (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Undo {
    /// Eifel and D-SACK detection are on (`TcpConfig::undo`); F-RTO has its own knob.
    enabled: bool,
    /// Linux `undo_marker`: `SND.UNA` when the episode began; `None` when there is
    /// nothing to undo.
    marker: Option<u64>,
    /// Linux `undo_retrans`: retransmissions of the episode not yet D-SACKed; `None`
    /// (Linux -1) before the first.
    retrans: Option<u64>,
    /// Linux `retrans_stamp`: the TSval of the episode's first retransmission.
    retrans_stamp: Option<u32>,
    /// F-RTO in progress (Linux `tp->frto`).
    frto: bool,
    /// F-RTO step 2b: send new data rather than resend (Linux `REXMIT_NEW`), until the
    /// next ACK.
    frto_new_data: bool,
    /// `SND.UNA` at the last timeout: a timeout with `SND.UNA` still there repeats it
    /// (Linux `icsk_retransmits` > 0).
    timeout_una: Option<u64>,
}

impl Undo {
    /// The state of a new connection; `enabled`: `TcpConfig::undo`.
    pub fn new(enabled: bool) -> Self {
        Undo {
            enabled,
            ..Undo::default()
        }
    }

    /// A fast retransmit or a timeout starts an episode at `snd_una` (Linux
    /// `tcp_init_undo`).
    pub fn start(&mut self, snd_una: u64) {
        self.marker = Some(snd_una);
        self.retrans = None;
        self.retrans_stamp = None;
    }

    /// A timeout with `SND.UNA` at `snd_una`, in state `ca` (before it changes): an
    /// episode starts unless one is under way (Linux `tcp_enter_loss` calls
    /// `tcp_init_undo` outside a recovery, or in `TCP_CA_Loss` once `SND.UNA` moved
    /// since the last timeout), and F-RTO runs when no recovery was under way or the
    /// timeout repeats one of the same data (`tp->frto = ... (new_recovery ||
    /// icsk_retransmits)`; RFC 5682 §3.1 step 1).
    pub fn on_timeout(&mut self, ca: CaState, snd_una: u64, frto: bool) {
        let repeated = ca == CaState::Loss && self.timeout_una == Some(snd_una);
        if ca == CaState::Open || (ca == CaState::Loss && !repeated) {
            self.start(snd_una);
        }
        self.timeout_una = Some(snd_una);
        self.frto = frto && (ca == CaState::Open || repeated);
        self.frto_new_data = false;
    }

    /// A segment was retransmitted with TSval `tsval` (Linux `tcp_retransmit_skb`:
    /// `retrans_stamp`, `undo_retrans`).
    pub fn on_retransmit(&mut self, tsval: Option<u32>) {
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = tsval;
        }
        if self.marker.is_some() {
            self.retrans = Some(self.retrans.unwrap_or(0) + 1);
        }
    }

    /// A D-SACK block `[l, r)` arrived on an ACK; `prior_una` is `SND.UNA` before the
    /// ACK. Each retransmission of the episode it reports takes one off the count:
    /// below `SND.UNA` by its length in segments (Linux `tcp_check_dsack`, "dumb
    /// counting"), above it by the retransmitted records it covers
    /// (`tcp_sacktag_one`).
    pub fn on_dsack(&mut self, (l, r): (u64, u64), prior_una: u64, sb: &Scoreboard, mss: u64) {
        let (Some(marker), Some(n)) = (self.marker, self.retrans) else {
            return;
        };
        if n == 0 || r <= marker {
            return;
        }
        let dup = if r <= prior_una {
            (r - l).div_ceil(mss.max(1))
        } else {
            sb.iter()
                .filter(|s| s.start >= l && s.end <= r && s.tx_count > 1)
                .count() as u64
        };
        self.retrans = Some(n.saturating_sub(dup));
    }

    /// Eifel (RFC 3522 §3.2, Linux `tcp_packet_delayed`): the ACK echoes a timestamp
    /// older than the episode's first retransmission.
    pub fn packet_delayed(&self, tsecr: Option<u32>) -> bool {
        if !self.enabled {
            return false;
        }
        match (self.retrans_stamp, tsecr) {
            (Some(stamp), Some(ecr)) if ecr != 0 => (ecr.wrapping_sub(stamp) as i32) < 0,
            _ => false,
        }
    }

    /// Every retransmission of the episode was D-SACKed (RFC 3708; Linux
    /// `tcp_try_undo_dsack`'s `!undo_retrans`).
    pub fn all_dsacked(&self) -> bool {
        self.enabled && self.marker.is_some() && self.retrans == Some(0)
    }

    /// Linux `tcp_may_undo`: an episode to undo, and evidence that it was spurious.
    pub fn may_undo(&self, tsecr: Option<u32>) -> bool {
        self.evidence(tsecr).is_some()
    }

    /// The evidence `may_undo` finds, in its order: every retransmission D-SACKed
    /// (`!undo_retrans`), else an Eifel timestamp (`tcp_packet_delayed`).
    fn evidence(&self, tsecr: Option<u32>) -> Option<Detector> {
        if !self.enabled || self.marker.is_none() {
            None
        } else if self.retrans == Some(0) {
            Some(Detector::Dsack)
        } else if self.packet_delayed(tsecr) {
            Some(Detector::Timestamps)
        } else {
            None
        }
    }

    /// An episode is open (Linux `undo_marker != 0`).
    pub fn pending(&self) -> bool {
        self.marker.is_some()
    }

    /// F-RTO is in progress.
    pub fn frto(&self) -> bool {
        self.frto
    }

    /// F-RTO step 3a (the loss was real) or a fallback: the conventional resend.
    pub fn stop_frto(&mut self) {
        self.frto = false;
        self.frto_new_data = false;
    }

    /// F-RTO step 2b: new data goes first on this ACK.
    pub fn send_new_data_first(&mut self) {
        self.frto_new_data = true;
    }

    /// Whether step 2b is in force (until the next ACK).
    pub fn new_data_first(&self) -> bool {
        self.frto && self.frto_new_data
    }

    /// An ACK arrived: step 2b held for the ACK before it only.
    pub fn on_ack(&mut self) {
        self.frto_new_data = false;
    }

    /// The reduction was undone (Linux `tcp_undo_cwnd_reduction` clears
    /// `undo_marker`), or the episode is forgotten.
    pub fn done(&mut self) {
        self.marker = None;
        self.retrans = None;
        self.retrans_stamp = None;
        self.stop_frto();
    }

    /// The connection is open again with nothing retransmitted outstanding (Linux
    /// `tcp_fastretrans_alert`: `retrans_stamp = 0` in `TCP_CA_Open`): the Eifel test
    /// no longer applies, the D-SACK count still does.
    pub fn on_open(&mut self) {
        self.retrans_stamp = None;
    }
}

/// What the sender knows once an ACK has been processed, for [`Undo::after_ack`].
#[derive(Copy, Clone, Debug)]
pub struct AckView {
    /// The state before the ACK, and after the sender processed it.
    pub prior_ca: CaState,
    pub ca: CaState,
    /// The ACK advanced `SND.UNA` (Linux `FLAG_SND_UNA_ADVANCED`).
    pub advanced: bool,
    /// Its echoed timestamp, when timestamps are in use.
    pub tsecr: Option<u32>,
    /// [`acks_original`], computed before the ACK was applied (`FLAG_ORIG_SACK_ACKED`).
    pub orig_acked: bool,
    /// It SACKed new data or was a duplicate ACK (`FLAG_DATA_SACKED || num_dupack`).
    pub sacked_or_dupack: bool,
    /// New data was sent since the recovery point was set (`after(snd_nxt,
    /// high_seq)`).
    pub sent_beyond_recovery_point: bool,
    /// `SND.UNA` reached the recovery point.
    pub recovered: bool,
    /// The application and the receiver's window allow new data
    /// (`!tcp_write_queue_empty && after(tcp_wnd_end, snd_nxt)`).
    pub can_send_new: bool,
    /// [`retransmission_outstanding`] after the ACK.
    pub retrans_outstanding: bool,
}

/// What the sender does after an ACK ([`Undo::after_ack`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing.
    Keep,
    /// The reduction was spurious: restore the window, clear the loss marks (no
    /// resend) and reopen; `timeout` says the episode was a timeout, `detector` what
    /// found it spurious.
    Undo { timeout: bool, detector: Detector },
    /// F-RTO step 2b: move the recovery point to `SND.NXT` and send new data first.
    FrtoNewData,
}

impl Undo {
    /// The decisions of Linux `tcp_fastretrans_alert` / `tcp_process_loss` about an
    /// undo, in their order, once the ACK `v` describes has been processed.
    pub fn after_ack(&mut self, v: &AckView) -> Verdict {
        match v.prior_ca {
            CaState::Loss => {
                // `tcp_try_undo_loss(sk, false)`: Eifel, or every resend D-SACKed.
                if let (true, Some(detector)) = (v.advanced, self.evidence(v.tsecr)) {
                    return Verdict::Undo {
                        timeout: true,
                        detector,
                    };
                }
                if self.frto {
                    // RFC 5682 §3.1 step 3b: never-retransmitted data acknowledged.
                    if v.orig_acked {
                        return Verdict::Undo {
                            timeout: true,
                            detector: Detector::Frto,
                        };
                    }
                    if v.sent_beyond_recovery_point {
                        if v.sacked_or_dupack {
                            self.stop_frto(); // step 3a: the loss was real
                        }
                    } else if v.advanced && !v.recovered {
                        if v.can_send_new {
                            return Verdict::FrtoNewData; // step 2b
                        }
                        self.stop_frto();
                    }
                }
                if v.recovered {
                    // `tcp_try_undo_recovery` (RFC 5682 §3.1 step 2a).
                    if let Some(detector) = self.evidence(v.tsecr) {
                        return Verdict::Undo {
                            timeout: true,
                            detector,
                        };
                    }
                    self.on_open();
                }
                Verdict::Keep
            }
            CaState::Recovery => {
                if v.advanced && v.ca == CaState::Open {
                    // A full ACK: `tcp_try_undo_recovery`.
                    if let Some(detector) = self.evidence(v.tsecr) {
                        return Verdict::Undo {
                            timeout: false,
                            detector,
                        };
                    }
                    self.on_open();
                    return Verdict::Keep;
                }
                // A partial ACK: `tcp_try_undo_partial`, Eifel only, once no
                // retransmission is outstanding.
                if v.advanced
                    && self.pending()
                    && self.packet_delayed(v.tsecr)
                    && !v.retrans_outstanding
                {
                    return Verdict::Undo {
                        timeout: false,
                        detector: Detector::Timestamps,
                    };
                }
                if self.all_dsacked() {
                    // `tcp_try_undo_dsack`
                    return Verdict::Undo {
                        timeout: false,
                        detector: Detector::Dsack,
                    };
                }
                Verdict::Keep
            }
            CaState::Open => {
                // Late D-SACKs after the recovery ended (`tcp_try_undo_dsack` in
                // `TCP_CA_Open`).
                if self.all_dsacked() {
                    return Verdict::Undo {
                        timeout: false,
                        detector: Detector::Dsack,
                    };
                }
                Verdict::Keep
            }
        }
    }
}

/// F-RTO step 3b's evidence (Linux `FLAG_ORIG_SACK_ACKED`): the ACK acknowledges,
/// cumulatively or by a SACK block that is not a D-SACK, a segment ending at or below
/// `high_seq` that was never retransmitted and not SACKed before. Call before the ACK
/// updates the scoreboard.
pub fn acks_original(sb: &Scoreboard, seg: &Segment, high_seq: u64, sack_ok: bool) -> bool {
    let skip = usize::from(sack_ok && dsack_block(seg).is_some());
    sb.iter()
        .take_while(|r| r.end <= high_seq)
        .filter(|r| r.tx_count == 1 && !r.sacked)
        .any(|r| {
            r.end <= seg.ack
                || (sack_ok
                    && seg
                        .sack
                        .iter()
                        .skip(skip)
                        .any(|(l, rr)| l <= r.start && r.end <= rr))
        })
}

/// A retransmission of the episode is outstanding: sent again and neither SACKed nor
/// acknowledged (Linux `retrans_out`).
pub fn retransmission_outstanding(sb: &Scoreboard) -> bool {
    sb.iter().any(|r| r.tx_count > 1 && !r.sacked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eifel_compares_the_echo_with_the_first_retransmission() {
        // RFC 3522 §3.2: TSecr older than the retransmission's TSval.
        let mut u = Undo::new(true);
        u.start(0);
        u.on_retransmit(Some(100));
        u.on_retransmit(Some(150));
        assert!(u.packet_delayed(Some(99)));
        assert!(!u.packet_delayed(Some(100)));
        assert!(!u.packet_delayed(None));
        assert!(u.may_undo(Some(99)));
        assert!(!u.may_undo(Some(120)));
    }

    #[test]
    fn every_retransmission_dsacked_allows_an_undo() {
        // RFC 3708 §3 / Linux `tcp_check_dsack`: a D-SACK below SND.UNA counts its
        // segments.
        let mut u = Undo::new(true);
        u.start(1000);
        assert!(
            !u.all_dsacked(),
            "no retransmission yet (Linux undo_retrans = -1)"
        );
        u.on_retransmit(None);
        u.on_retransmit(None);
        let sb = Scoreboard::new();
        u.on_dsack((1000, 2000), 5000, &sb, 1000);
        assert!(!u.all_dsacked());
        // A D-SACK at or below the marker is of an older episode.
        u.on_dsack((0, 1000), 5000, &sb, 1000);
        assert!(!u.all_dsacked());
        u.on_dsack((2000, 3000), 5000, &sb, 1000);
        assert!(u.all_dsacked());
        u.done();
        assert!(!u.may_undo(None));
    }
}
