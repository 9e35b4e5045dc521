//! Mobility: what the endpoints of a flow learn when a link on its path goes down and
//! comes back (a vertical handoff, as in Tsukamoto, Fukuda, Hori and Oie, "New flow
//! control schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6),
//! 2006, or any outage).
//!
//! Disconnections are the links' outages (`DirSpec::outages`, into which `handoffs`
//! lower); the two directions' outages of a link are merged into the link's down
//! periods. For each flow whose path (either way) crosses the link, and each down
//! period `[s, e)`:
//! * the **mobile host** is the sender when the link touches the flow's source node,
//!   otherwise the receiver;
//! * **warning** at `s - freeze_warning`: a mobile receiver with Freeze-TCP freezes
//!   (zero window);
//! * **down** at `s`: nothing for TCP (a sender cannot tell a disconnection from
//!   loss; the seed's reactions act on reconnection);
//! * **up** at `e`, with the rate and delay the link has then (the new interface): a
//!   mobile sender reacts at once (`TcpSender::on_interface_change`); a mobile
//!   receiver unfreezes (TR-ACKs) and tells the sender as `handoff_signal` says, by
//!   a notice on an ACK sent at once, or out of band, delivered to the sender one
//!   path one-way propagation delay later.
//!
//! Flows with neither a handoff reaction nor Freeze-TCP get no events at all, so runs
//! without them are unchanged. Events are scheduled after the link's own outage and
//! schedule events of the same instant (FIFO ties), so at `e` the link is already up
//! with its new rate and delay.

use super::endpoint::Side;
use super::ids::{DirId, FlowId, NodeId};
use super::{Ev, World};
use mobiflow_proto::mobility::{disconnections, warning_at};
use mobiflow_proto::tcp::{HandoffReaction, HandoffSignal, InterfaceChange};
use mobiflow_proto::time::{Duration, Instant};

#[derive(Copy, Clone, Debug)]
pub(super) enum MobKind {
    Warning,
    Down,
    Up,
    /// The out-of-band notice reaches the sender.
    NotifySender(InterfaceChange),
}

#[derive(Copy, Clone, Debug)]
pub(super) struct MobEvent {
    flow: FlowId,
    /// The link's place in `Scenario::links`.
    link: usize,
    receiver_mobile: bool,
    kind: MobKind,
}

impl World<'_> {
    /// Link indices on the route from node `a` to node `b`.
    fn path_links(&self, a: usize, b: usize) -> Vec<usize> {
        let (a, b) = (NodeId::new(a), NodeId::new(b));
        self.net.path(a, b).into_iter().map(DirId::link).collect()
    }

    /// Propagation delay from node `a` to node `b` now.
    fn path_delay(&self, a: usize, b: usize) -> Duration {
        let mut total = Duration::ZERO;
        for d in self.net.path(NodeId::new(a), NodeId::new(b)) {
            total += self.net.dirs[d].dir().delay();
        }
        total
    }

    /// Schedule the mobility events of every flow that reacts to them.
    pub(super) fn plan_mobility(&mut self) {
        let sc = self.sc;
        for (fi, f) in sc.flows.iter().enumerate() {
            let Some(cfg) = f.transport.tcp() else {
                continue;
            };
            if cfg.handoff_reaction == HandoffReaction::None && !cfg.freeze {
                continue;
            }
            let mut links = self.path_links(f.src, f.dst);
            links.extend(self.path_links(f.dst, f.src));
            links.sort_unstable();
            links.dedup();
            for l in links {
                let spec = &sc.links[l];
                let down = disconnections(spec.dirs.iter().flat_map(|d| d.outages.iter().copied()));
                let receiver_mobile = spec.a != f.src && spec.b != f.src;
                for (s, e) in down {
                    let push = |w: &mut World, t: Duration, kind| {
                        w.mobility.push(MobEvent {
                            flow: FlowId::new(fi),
                            link: l,
                            receiver_mobile,
                            kind,
                        });
                        let k = (w.mobility.len() - 1) as u32;
                        w.net.at(Instant::ZERO + t, Ev::Mobility(k));
                    };
                    if cfg.freeze && receiver_mobile {
                        push(self, warning_at(s, cfg.freeze_warning), MobKind::Warning);
                    }
                    push(self, s, MobKind::Down);
                    push(self, e, MobKind::Up);
                }
            }
        }
    }

    /// Deliver mobility event `k`.
    pub(super) fn mobility(&mut self, k: u32) {
        let now = self.net.now;
        let ev = self.mobility[k as usize];
        let f = ev.flow;
        let spec = &self.sc.flows[f.index()];
        let Some(cfg) = spec.transport.tcp() else {
            return;
        };
        let (reaction, signal, freeze) = (cfg.handoff_reaction, cfg.handoff_signal, cfg.freeze);
        let (src, dst) = (spec.src, spec.dst);
        match ev.kind {
            MobKind::Warning => {
                if let Some(t) = self.flows[f].ep.tcp_mut() {
                    t.rcv.freeze(now);
                }
                self.flush(f, Side::Receiver);
            }
            MobKind::Down => {}
            MobKind::Up => {
                let dir = self.net.dirs[DirId::of(ev.link, 0)].dir();
                let change = InterfaceChange {
                    rate_bps: dir.rate_bps(),
                    delay: dir.delay(),
                };
                if !ev.receiver_mobile {
                    if reaction != HandoffReaction::None {
                        if let Some(t) = self.flows[f].ep.tcp_mut() {
                            t.snd.on_interface_change(now, &change);
                        }
                        self.flush(f, Side::Sender);
                    }
                    return;
                }
                let Some(rcv) = self.flows[f].ep.tcp_mut().map(|t| &mut t.rcv) else {
                    return;
                };
                if freeze {
                    rcv.unfreeze(now);
                }
                if reaction != HandoffReaction::None {
                    match signal {
                        HandoffSignal::AckOption => rcv.signal_interface_change(now),
                        HandoffSignal::OutOfBand => {
                            let t = now + self.path_delay(dst, src);
                            self.mobility.push(MobEvent {
                                kind: MobKind::NotifySender(change),
                                ..ev
                            });
                            let k = (self.mobility.len() - 1) as u32;
                            self.net.at(t, Ev::Mobility(k));
                        }
                    }
                }
                self.flush(f, Side::Receiver);
            }
            MobKind::NotifySender(change) => {
                if let Some(t) = self.flows[f].ep.tcp_mut() {
                    t.snd.on_interface_change(now, &change);
                }
                self.flush(f, Side::Sender);
            }
        }
    }
}
