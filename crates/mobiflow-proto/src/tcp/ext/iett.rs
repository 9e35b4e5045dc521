//! IETT, immediate expiration of the retransmission timer (the vertical-handoff paper:
//! Tsukamoto, Fukuda, Hori and Oie, "New flow control schemes of TCP for multimodal
//! mobile hosts", IEICE Trans. Commun. E89-B(6), 2006, §IV.A), as a sender extension.
//!
//! On an interface change, if data is outstanding, the retransmission timer expires
//! now: the sender restarts by slow start from `snd_una` (the RFC 5681 §3.1 timeout
//! response), and the RTO is not backed off for it; a backoff from timeouts during the
//! interruption is undone (Karn's backed-off RTO belongs to the old path). With
//! `handoff_reset_rtt`, SRTT and RTTVAR are forgotten first, so the RTO restarts from
//! `initial_rto`.

use super::{MobilityResponse, SenderCtx, SenderExtension};
use crate::tcp::config::TcpConfig;
use crate::tcp::event::SenderEvent;
use crate::tcp::handoff::InterfaceChange;

/// IETT (no state of its own).
#[derive(Clone, Debug)]
pub struct Iett {
    reset_rtt: bool,
}

impl Iett {
    pub fn new(cfg: &TcpConfig) -> Self {
        Iett {
            reset_rtt: cfg.handoff_reset_rtt,
        }
    }
}

impl SenderExtension for Iett {
    fn name(&self) -> &'static str {
        "iett"
    }

    fn on_interface_change(
        &mut self,
        cx: &mut SenderCtx,
        _change: &InterfaceChange,
    ) -> MobilityResponse {
        let expire_timer = cx.established && cx.outstanding;
        if expire_timer {
            cx.stats.forced_expirations += 1;
            cx.events.push(SenderEvent::ForcedExpiry);
        }
        MobilityResponse {
            reset_rtt: self.reset_rtt,
            expire_timer,
        }
    }
}
