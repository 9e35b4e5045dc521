//! The sender's side of RACK (`tcp::rack`), the tail loss probe (`tcp::tlp`), PRR
//! (`tcp::prr`) and RTT samples from SACKed data: where `TcpSender` calls them, in
//! the order Linux's `tcp_ack` does (`tcp_sacktag_write_queue` and
//! `tcp_clean_rtx_queue` deliver, `tcp_ack_update_rtt` samples,
//! `tcp_fastretrans_alert` detects losses and may start a recovery,
//! `tcp_cong_control` runs `tcp_cwnd_reduction`, `tcp_set_xmit_timer` schedules the
//! probe). Every step is off unless its `TcpConfig` knob is on, and needs SACK.

use super::TcpSender;
use crate::cc::{CaState, CongestionController, CongestionEvent, CongestionKind, RecoveryExit};
use crate::tcp::config::Recovery;
use crate::tcp::event::SenderEvent;
use crate::tcp::prr::Prr;
use crate::tcp::tlp::{EpisodeEnd, Probe};
use crate::time::{Duration, Instant};
use crate::wire::Segment;

/// What the steps after an ACK need from before it.
pub(super) struct BeforeAck {
    /// The highest SACKed byte (Linux `prior_fack`), for RACK's reordering check.
    prior_high_sacked: Option<u64>,
    prior_una: u64,
    prior_wnd: u64,
    lost_count: usize,
}

impl TcpSender {
    /// RACK decides losses: with SACK recovery (without SACK, RFC 6582 as in Linux's
    /// `tcp_newreno_mark_lost`; a SACK connection in Linux always recovers by SACK).
    pub(super) fn rack_on(&self) -> bool {
        self.rack.is_some() && self.recovery() == Recovery::Sack
    }

    /// The window PRR allows, during a SACK recovery with `prr`.
    pub(super) fn prr_cwnd(&self) -> Option<u64> {
        if self.ca == CaState::Recovery && self.recovery() == Recovery::Sack {
            self.prr.as_ref().map(Prr::cwnd)
        } else {
            None
        }
    }

    /// Linux `tcp_ack_update_rtt`'s `sack_rtt_us`: the RTT of the earliest-sent
    /// segment the ACK newly SACKed that was never retransmitted (`first_sackt` in
    /// `tcp_sacktag_one`), with `sack_rtt`. (The kernel prefers the sample of the
    /// cumulative ACK when there is one; so does `on_new_ack`.)
    pub(super) fn sack_rtt_sample(&self, now: Instant) -> Option<Duration> {
        if !(self.cfg.sack_rtt && self.sack_ok) {
            return None;
        }
        self.sb
            .delivery()
            .first_sacked_original
            .map(|t| now.saturating_since(t))
    }

    /// Before an ACK is processed: `None` when no step is on.
    pub(super) fn loss_steps_before_ack(&self) -> Option<BeforeAck> {
        if !self.sack_ok
            || (self.rack.is_none() && self.tlp.is_none() && !self.cfg.prr && !self.cfg.sack_rtt)
        {
            return None;
        }
        Some(BeforeAck {
            prior_high_sacked: if self.rack.is_some() {
                self.sb.high_sacked()
            } else {
                None
            },
            prior_una: self.snd_una,
            prior_wnd: self.snd_wnd,
            lost_count: self.sb.lost_count(),
        })
    }

    fn min_and_smoothed_rtt(&self) -> (Duration, Duration) {
        let min_rtt = self.rtt.min_rtt().unwrap_or_default();
        (min_rtt, self.rtt.srtt().unwrap_or(min_rtt))
    }

    fn reo_wnd(&self) -> Duration {
        let (min_rtt, srtt) = self.min_and_smoothed_rtt();
        self.rack.as_ref().map_or(Duration::ZERO, |r| {
            r.reo_wnd(
                self.ca,
                self.sb.sacked_count(),
                self.cfg.dupack_threshold,
                min_rtt,
                srtt,
            )
        })
    }

    /// After the ACK's SACK blocks and cumulative part are processed: RACK (RFC 8985
    /// §6.2; a loss starts a recovery in the open state), PRR (RFC 6937) and the tail
    /// loss probe's episode and timer (RFC 8985 §7.4, §7.2).
    pub(super) fn loss_steps_after_ack(
        &mut self,
        now: Instant,
        seg: &Segment,
        before: &BeforeAck,
        newly_acked: u64,
        newly_sacked: u64,
    ) {
        let delivery = self.sb.take_delivery();
        let delivered = newly_acked + newly_sacked;
        let mut rack_marked = 0;
        if self.rack_on() {
            let (min_rtt, _) = self.min_and_smoothed_rtt();
            if let Some(r) = self.rack.as_mut() {
                r.on_delivery(now, &delivery, delivered, before.prior_high_sacked, min_rtt);
            }
            let (w, rto) = (self.reo_wnd(), self.rtt.rto());
            if let Some(r) = self.rack.as_mut() {
                rack_marked = r.mark_lost(now, &mut self.sb, w, rto);
            }
            if rack_marked > 0 && self.ca == CaState::Open {
                self.enter_recovery(now);
            }
        }
        let una_advanced = self.snd_una > before.prior_una;
        if self.prr_cwnd().is_some() {
            let newly_lost = rack_marked > 0 || self.sb.lost_count() > before.lost_count;
            let (pipe, mss) = (self.sb.pipe(), self.mss());
            if let Some(p) = self.prr.as_mut() {
                p.on_ack(delivered, pipe, una_advanced, newly_lost, mss);
            }
        }
        if let Some(t) = self.tlp.as_mut() {
            let pure_dupack =
                !una_advanced && newly_sacked == 0 && seg.len == 0 && seg.wnd == before.prior_wnd;
            if t.on_ack(seg.ack, pure_dupack) == Some(EpisodeEnd::Loss) {
                self.probe_found_loss(now);
            }
            // Linux `tcp_set_xmit_timer` on an ACK of new data, unless RACK armed the
            // reorder timer in the slot the probe shares with it.
            if self.rack.as_ref().is_some_and(|r| r.timer().is_some()) {
                if let Some(t) = self.tlp.as_mut() {
                    t.cancel();
                }
            } else if una_advanced {
                self.schedule_probe(now, true);
            }
        }
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): the probe repaired a loss, so the
    /// window is reduced once, as a recovery entered and left at once would
    /// (`tcp_init_cwnd_reduction`, CWR, `tcp_end_cwnd_reduction`: cwnd = ssthresh).
    fn probe_found_loss(&mut self, now: Instant) {
        self.stats.loss_probe_recoveries += 1;
        self.events.push(SenderEvent::LossProbeRecovery);
        self.cc.on_congestion_event(&CongestionEvent {
            now,
            kind: CongestionKind::FastRetransmit,
            in_flight: self.flight_size(),
            lost_bytes: self.mss(),
            mss: self.cfg.mss,
            repeated: false,
        });
        self.cc.on_recovery_exit(&RecoveryExit {
            now,
            in_flight: self.sb.pipe(),
            retransmitted_segments: 1,
            mss: self.cfg.mss,
        });
    }

    /// Schedule the probe (Linux `tcp_schedule_loss_probe`): only in the open state
    /// with SACK and data outstanding; otherwise the retransmission timer alone runs.
    /// `advancing_rto`: the RTO is being restarted, so it is a whole RTO away.
    #[inline]
    pub(super) fn schedule_probe(&mut self, now: Instant, advancing_rto: bool) {
        if self.tlp.is_some() {
            self.schedule_tlp(now, advancing_rto);
        }
    }

    /// [`Self::schedule_probe`] with a probe: out of line, so that a sender without
    /// one (the ns2 and rfc profiles) pays only the test on each new segment.
    #[inline(never)]
    fn schedule_tlp(&mut self, now: Instant, advancing_rto: bool) {
        let ok = self.sack_ok && self.ca == CaState::Open && !self.sb.is_empty();
        let srtt = self.rtt.srtt();
        let one_in_flight = self.sb.len() == 1;
        // Linux `tcp_schedule_loss_probe`: at most the whole RTO when an ACK restarts
        // the timer, else what is left of the RTO counted from the latest transmission
        // of the first unacknowledged segment (`tcp_rto_delta_us`), no cap when that
        // is past.
        let rto_delta = if advancing_rto {
            self.rtt.rto()
        } else {
            self.sb.front().map_or(Duration::ZERO, |head| {
                (head.sent_at + self.rtt.rto()).saturating_since(now)
            })
        };
        if let Some(t) = self.tlp.as_mut() {
            if ok {
                t.schedule(now, srtt, one_in_flight, rto_delta);
            } else {
                t.cancel();
            }
        }
    }

    /// The reorder timer and the probe timer, before the retransmission timer.
    pub(super) fn loss_timers(&mut self, now: Instant) {
        let due = |timer: Option<Instant>| timer.is_some_and(|t| now >= t);
        if due(self.rack.as_ref().and_then(|r| r.timer())) {
            self.on_reorder_timer(now);
        }
        if due(self.tlp.as_ref().and_then(|t| t.timer())) {
            self.on_probe_timer(now);
        }
    }

    /// Linux `tcp_rack_reo_timeout`: RACK looks again; a loss it finds in the open
    /// state starts a recovery, whose PRR counts one segment delivered
    /// (`tcp_cwnd_reduction(sk, 1, ...)`). (The kernel enters recovery from the loss
    /// state too; here a timeout's go-back-N resend goes on.)
    fn on_reorder_timer(&mut self, now: Instant) {
        let w = self.reo_wnd();
        let marked = match self.rack.as_mut() {
            Some(r) => r.on_timer(now, &mut self.sb, w),
            None => 0,
        };
        if marked > 0 && self.ca == CaState::Open {
            self.enter_recovery(now);
            let (pipe, mss) = (self.sb.pipe(), self.mss());
            if self.prr_cwnd().is_some() {
                if let Some(p) = self.prr.as_mut() {
                    p.on_ack(mss, pipe, false, true, mss);
                }
            }
        }
    }

    /// Linux `tcp_send_loss_probe`: new data if the receiver's window allows the
    /// next segment (`tcp_snd_wnd_test`), else the last segment again; the
    /// retransmission timer restarts from the probe.
    fn on_probe_timer(&mut self, now: Instant) {
        let app_room = self.app_end.saturating_sub(self.snd_nxt);
        let next_len = self.mss().min(app_room);
        let new_data = app_room > 0 && self.snd_nxt + next_len <= self.snd_una + self.flow_window();
        let probe = match self.tlp.as_mut() {
            Some(t) if self.ca == CaState::Open && !self.sb.is_empty() => t.on_timer(new_data),
            Some(t) => {
                t.cancel();
                None
            }
            None => None,
        };
        if probe.is_some() {
            self.probe = probe;
            self.arm_rto(now);
        }
    }

    /// Send the probe the timer asked for (from `poll_transmit`).
    pub(super) fn send_probe(&mut self, now: Instant, probe: Probe) -> Option<Segment> {
        let seg = match probe {
            // `tcp_write_xmit` with `push_one = 2`: one segment, beyond cwnd.
            Probe::NewData => {
                let mut seg = Segment::default();
                self.send_new_data(now, false, u64::MAX / 2, &mut seg)
                    .then_some(seg)
            }
            Probe::Retransmit => {
                let last = self.sb.len().checked_sub(1)?;
                Some(self.retransmit(now, last))
            }
        }?;
        self.stats.loss_probes += 1;
        self.events.push(SenderEvent::LossProbe);
        let snd_nxt = self.snd_nxt;
        if let Some(t) = self.tlp.as_mut() {
            t.on_probe_sent(probe, snd_nxt);
        }
        Some(seg)
    }

    /// A recovery begins: PRR starts from the window before the reduction
    /// (`tcp_init_cwnd_reduction`), and a probe episode ends. A controller that sets
    /// cwnd itself from rate samples (BBR) gets no PRR: Linux `tcp_cong_control`
    /// hands such a controller (`cong_control`) the ACK and returns before
    /// `tcp_cwnd_reduction`.
    pub(super) fn loss_steps_on_recovery(&mut self, prior_cwnd: u64) {
        if self.cfg.prr && self.sack_ok && !self.recovery_hidden && self.rate.is_none() {
            self.prr = Some(Prr::start(prior_cwnd, self.cc.ssthresh()));
        }
        if let Some(t) = self.tlp.as_mut() {
            t.end_episode();
            t.cancel();
        }
    }

    /// A retransmission timeout takes the place of the reorder and probe timers
    /// (they share its slot in Linux) and ends a PRR reduction and a probe episode.
    pub(super) fn loss_steps_on_rto(&mut self) {
        self.prr = None;
        if let Some(r) = self.rack.as_mut() {
            r.stop_timer();
        }
        if let Some(t) = self.tlp.as_mut() {
            t.end_episode();
            t.cancel();
        }
    }
}
