//! Tail loss probe (RFC 8985 §7), as Linux schedules and sends it
//! (`tcp_schedule_loss_probe`, `tcp_send_loss_probe` in net/ipv4/tcp_output.c,
//! `tcp_process_tlp_ack` in tcp_input.c; `tcp_early_retrans = 3`).
//!
//! In the open state with SACK, every ACK of new data and every transmission of new
//! data schedules a probe timeout (PTO) of two SRTT, plus `TCP_RTO_MIN` (the worst
//! delayed ACK) when one segment is in flight, else plus `TCP_TIMEOUT_MIN`, never
//! later than the retransmission timer would fire. The kernel keeps the PTO in the
//! retransmission timer's slot; here the RTO stays armed beside it and fires only if
//! the probe does not help. When the PTO fires the sender sends one new segment if
//! the receiver's window allows, whatever cwnd says, else retransmits its last
//! segment; the probe's ACK (a SACK of it) then lets RACK find the lost tail. One
//! probe per episode: the episode ends when an ACK covers `tlp_high_seq` (§7.4).
//!
//! The cap is the kernel's: the retransmission timer counted from the latest
//! transmission of the first unacknowledged segment (`tcp_rto_delta_us`), whole when
//! an ACK restarts it; on the kernel's clock (`Clock::Jiffies`, the sender's
//! `TcpConfig::clock`) the timeout is in jiffies and runs on the timer wheel
//! (`tcp::jiffies`).

use super::jiffies::{self, Clock};
use crate::time::{Duration, Instant};

/// Linux `TCP_RTO_MIN`: the delayed-ACK allowance with one segment in flight
/// (RFC 8985 §7.2 WCDelAckT).
const MAX_ACK_DELAY: Duration = Duration::from_millis(200);
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000).
const TIMEOUT_MIN: Duration = Duration::from_millis(2);
/// Linux `TCP_TIMEOUT_INIT`: the PTO before any RTT sample.
const TIMEOUT_INIT: Duration = Duration::from_secs(1);

/// What the probe timer asks the sender to send.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// One new segment, beyond cwnd if need be.
    NewData,
    /// The last segment sent, again.
    Retransmit,
}

/// How an ACK ended a probe episode (RFC 8985 §7.4, Linux `tcp_process_tlp_ack`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EpisodeEnd {
    /// No loss: the probe was new data, or a duplicate ACK shows the original and
    /// the probe both arrived.
    NoLoss,
    /// The ACK covers more than the probe: the probe repaired a loss, and cwnd is
    /// reduced once (Linux enters and leaves CWR at once).
    Loss,
}

/// The probe's state for one connection.
#[derive(Clone, Debug, Default)]
pub struct Tlp {
    /// The sender's clock: on `Clock::Jiffies` the timeout is in jiffies on the
    /// timer wheel (`tcp::jiffies`).
    clock: Clock,
    /// The probe timeout, if scheduled.
    pto_at: Option<Instant>,
    /// `SND.NXT` when the probe was sent, while its episode lasts (`tlp_high_seq`).
    high_seq: Option<u64>,
    /// The probe was a retransmission (`tlp_retrans`).
    retrans: bool,
}

impl Tlp {
    /// A probe timer on the sender's `clock`.
    pub fn new(clock: Clock) -> Self {
        Tlp {
            clock,
            ..Self::default()
        }
    }

    /// Schedule the probe (`tcp_schedule_loss_probe`): `srtt` if any, `one_in_flight`,
    /// and how far away the retransmission timer is (`rto_delta`: the whole RTO when
    /// the timer is being restarted).
    pub fn schedule(
        &mut self,
        now: Instant,
        srtt: Option<Duration>,
        one_in_flight: bool,
        rto_delta: Duration,
    ) {
        if self.clock == Clock::Jiffies {
            // `timeout = usecs_to_jiffies(srtt_us >> 2)` plus `TCP_RTO_MIN` or
            // `TCP_TIMEOUT_MIN` (2 jiffies), at most `usecs_to_jiffies(rto_delta_us)`,
            // armed on the wheel (`tcp_reset_xmit_timer`).
            let j = match srtt {
                Some(s) => {
                    jiffies::to_jiffies(s * 2)
                        + if one_in_flight {
                            jiffies::to_jiffies(MAX_ACK_DELAY)
                        } else {
                            jiffies::TIMEOUT_MIN_JIFFIES
                        }
                }
                None => jiffies::to_jiffies(TIMEOUT_INIT),
            };
            let j = if rto_delta.is_zero() {
                j
            } else {
                j.min(jiffies::to_jiffies(rto_delta))
            };
            self.pto_at = Some(jiffies::wheel_expiry(now, j));
            return;
        }
        let pto = match srtt {
            Some(s) => {
                s * 2
                    + if one_in_flight {
                        MAX_ACK_DELAY
                    } else {
                        TIMEOUT_MIN
                    }
            }
            None => TIMEOUT_INIT,
        };
        let pto = if rto_delta.is_zero() {
            pto
        } else {
            pto.min(rto_delta)
        };
        self.pto_at = Some(now + pto);
    }

    /// Cancel the probe timer (a recovery or a timeout took over).
    pub fn cancel(&mut self) {
        self.pto_at = None;
    }

    /// When the probe timer is due, if armed.
    pub fn timer(&self) -> Option<Instant> {
        self.pto_at
    }

    /// The probe timer fired (`tcp_send_loss_probe`): what to send, if anything
    /// (nothing while an earlier probe's episode lasts). `new_data`: the receiver's
    /// window lets a new segment out.
    pub fn on_timer(&mut self, new_data: bool) -> Option<Probe> {
        self.pto_at = None;
        if self.high_seq.is_some() {
            return None;
        }
        Some(if new_data {
            Probe::NewData
        } else {
            Probe::Retransmit
        })
    }

    /// The probe went out; `snd_nxt` after it.
    pub fn on_probe_sent(&mut self, probe: Probe, snd_nxt: u64) {
        self.retrans = probe == Probe::Retransmit;
        self.high_seq = Some(snd_nxt);
    }

    /// A recovery or a timeout ends the episode (`tcp_init_cwnd_reduction` and
    /// `tcp_enter_loss` clear `tlp_high_seq`).
    pub fn end_episode(&mut self) {
        self.high_seq = None;
    }

    /// An ACK during an episode (`tcp_process_tlp_ack`): `ack`, and whether it is a
    /// pure duplicate ACK (it acknowledges and SACKs nothing new and carries no data
    /// or window update).
    pub fn on_ack(&mut self, ack: u64, pure_dupack: bool) -> Option<EpisodeEnd> {
        let high = self.high_seq?;
        if ack < high {
            return None;
        }
        let end = if !self.retrans {
            EpisodeEnd::NoLoss
        } else if ack > high {
            EpisodeEnd::Loss
        } else if pure_dupack {
            EpisodeEnd::NoLoss
        } else {
            return None;
        };
        self.high_seq = None;
        Some(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::{ms, t_ms};

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_allowance_with_one_segment_out() {
        // Linux `tcp_schedule_loss_probe` (RFC 8985 §7.2).
        let mut t = Tlp::new(Clock::Exact);
        t.schedule(t_ms(0), Some(ms(50)), false, ms(1000));
        assert_eq!(t.timer(), Some(t_ms(102)));
        t.schedule(t_ms(0), Some(ms(50)), true, ms(1000));
        assert_eq!(t.timer(), Some(t_ms(300)));
        t.schedule(t_ms(0), Some(ms(50)), true, ms(250));
        assert_eq!(t.timer(), Some(t_ms(250)), "never after the RTO");
        t.schedule(t_ms(0), None, false, Duration::ZERO);
        assert_eq!(t.timer(), Some(t_ms(1000)));
    }

    #[test]
    fn one_probe_per_episode_and_the_episode_ends_on_an_ack_beyond_it() {
        // RFC 8985 §7.3–7.4.
        let mut t = Tlp::new(Clock::Exact);
        assert_eq!(t.on_timer(false), Some(Probe::Retransmit));
        t.on_probe_sent(Probe::Retransmit, 10_000);
        assert_eq!(t.on_timer(false), None, "an episode is under way");
        assert_eq!(t.on_ack(9_000, false), None);
        assert_eq!(t.on_ack(10_000, false), None, "the probe's own ACK");
        assert_eq!(t.on_ack(11_000, false), Some(EpisodeEnd::Loss));
        t.on_probe_sent(Probe::Retransmit, 12_000);
        assert_eq!(t.on_ack(12_000, true), Some(EpisodeEnd::NoLoss));
        t.on_probe_sent(Probe::NewData, 13_000);
        assert_eq!(t.on_ack(13_000, false), Some(EpisodeEnd::NoLoss));
    }
}
