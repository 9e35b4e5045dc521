//! Proportional rate reduction (RFC 6937) for cwnd during SACK recovery, as Linux's
//! `tcp_init_cwnd_reduction` / `tcp_cwnd_reduction` compute it (in bytes here, in
//! segments there).
//!
//! While more than ssthresh is in flight, the sender sends `ssthresh / prior_cwnd` of
//! what the ACKs report delivered, so that the window comes down to ssthresh over one
//! round trip instead of stopping for half of it (RFC 6675 sets cwnd = ssthresh at
//! once). Once the flight is at or under ssthresh, PRR-SSRB (RFC 6937 §3.1,
//! slow-start reduction bound): as much as was delivered, one segment more when
//! `SND.UNA` advanced without a new loss (the kernel's form since its RFC 6937bis
//! update), never above ssthresh.

/// The state of one reduction (Linux `prior_cwnd`, `prr_delivered`, `prr_out`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// cwnd when the recovery began (RFC 6937 RecoverFS; Linux takes cwnd).
    prior_cwnd: u64,
    ssthresh: u64,
    /// Bytes delivered to the receiver since the recovery began (prr_delivered).
    delivered: u64,
    /// Bytes sent since the recovery began (prr_out).
    out: u64,
    /// The window PRR allows: pipe + sndcnt after the last ACK.
    cwnd: u64,
}

impl Prr {
    /// A recovery begins (`tcp_init_cwnd_reduction`): `prior_cwnd` before the
    /// reduction, `ssthresh` after it.
    pub fn start(prior_cwnd: u64, ssthresh: u64) -> Self {
        Prr {
            prior_cwnd: prior_cwnd.max(1),
            ssthresh,
            delivered: 0,
            out: 0,
            cwnd: 0,
        }
    }

    /// Bytes sent during the recovery (new data and retransmissions).
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// An ACK during the recovery (`tcp_cwnd_reduction`; RFC 6937 §3): `newly`
    /// delivered bytes (acknowledged or SACKed), `pipe` after the ACK's loss marks,
    /// `una_advanced`, `newly_lost` (the ACK marked a segment lost). An ACK that
    /// delivers nothing changes nothing.
    pub fn on_ack(
        &mut self,
        newly: u64,
        pipe: u64,
        una_advanced: bool,
        newly_lost: bool,
        mss: u64,
    ) {
        if newly == 0 {
            return;
        }
        self.delivered += newly;
        let sndcnt: i128 = if pipe > self.ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out,
            // rounded up to whole segments as the kernel counts them.
            let m = mss.max(1) as u128;
            let allowed = (self.ssthresh as u128 * self.delivered as u128)
                .div_ceil(self.prior_cwnd as u128 * m)
                * m;
            allowed as i128 - self.out as i128
        } else {
            // PRR-SSRB.
            let mut s = (self.delivered as i128 - self.out as i128).max(newly as i128);
            if una_advanced && !newly_lost {
                s += mss as i128;
            }
            s.min((self.ssthresh - pipe) as i128)
        };
        // The fast retransmit goes out whatever the above says.
        let sndcnt = if self.out == 0 {
            sndcnt.max(mss as i128)
        } else {
            sndcnt
        };
        self.cwnd = (pipe as i128 + sndcnt).max(0) as u64;
    }

    /// The congestion window PRR allows now.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn prr_sends_one_segment_for_every_two_delivered_while_halving() {
        // RFC 6937 §6, first example: cwnd 20 segments, ssthresh 10, one loss; each
        // duplicate ACK delivers one segment. While pipe > ssthresh, PRR sends on every
        // other ACK (ssthresh / RecoverFS = 1/2).
        let mut p = Prr::start(20 * MSS, 10 * MSS);
        let mut pipe = 19 * MSS; // the lost segment has left pipe
        let mut sent = Vec::new();
        for _ in 0..10 {
            pipe -= MSS; // one SACKed
            p.on_ack(MSS, pipe, false, false, MSS);
            let room = p.cwnd().saturating_sub(pipe) / MSS;
            for _ in 0..room {
                p.on_sent(MSS);
                pipe += MSS;
            }
            sent.push(room);
        }
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(pipe, 14 * MSS, "pipe falls by one segment every two ACKs");
    }

    #[test]
    fn prr_ssrb_sends_what_was_delivered_plus_one_when_una_advances() {
        // RFC 6937 §3.1 (PRR-SSRB), Linux `tcp_cwnd_reduction`: pipe at or under
        // ssthresh. A cumulative ACK of 2 segments without a new loss allows 3, never
        // past ssthresh.
        let mut p = Prr::start(20 * MSS, 10 * MSS);
        p.on_sent(MSS);
        p.on_ack(2 * MSS, 5 * MSS, true, false, MSS);
        assert_eq!(p.cwnd(), 8 * MSS);
        p.on_ack(2 * MSS, 9 * MSS, true, false, MSS);
        assert_eq!(p.cwnd(), 10 * MSS, "bounded by ssthresh");
        p.on_ack(MSS, 4 * MSS, false, true, MSS);
        assert_eq!(p.cwnd(), 4 * MSS + 4 * MSS, "prr_delivered - prr_out = 4");
    }

    #[test]
    fn the_first_ack_always_lets_the_fast_retransmit_out() {
        let mut p = Prr::start(4 * MSS, 2 * MSS);
        p.on_ack(100, 3 * MSS, false, false, MSS);
        assert_eq!(p.cwnd(), 4 * MSS);
    }
}
