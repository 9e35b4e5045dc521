//! TFRC / DCCP CCID 3 flows in the engine: the sender and receiver machines of
//! `mobiflow_proto::tfrc`, the Freeze-DCCP trigger and the per-flow measurements.
//!
//! The freeze trigger: the outages of every link direction on the flow's forward and
//! reverse paths are merged into disconnections; `warning` before each one starts the
//! predicting endpoint (the receiver by default, as in Freeze-TCP: the mobile host
//! predicts and detects; docs/schemes/freeze-dccp.md) calls `freeze()`, and when it
//! ends the same endpoint calls `unfreeze()` (it sees its link come back). With a
//! receiver trigger the sender learns of both through the receiver's FREEZE/UNFREEZE
//! feedback (the authors' state machine: "Local unfreeze (reconnected) →
//! SIGNAL_UNFREEZE"); a sender trigger acts at
//! once (the sender then restores on its own, "FROZEN → RESTORING: ... or on a local
//! unfreeze").

use super::endpoint::{forward_to_machines, FlowEnds, Side, Sink, SummaryCtx};
use super::ids::{FlowId, NodeId};
use super::net::{Body, Outgoing};
use super::observe::TfrcObserved;
use super::{Ev, World};
use crate::model::{FlowSpec, FreezeSide, FreezeWarning, RateModel, Scenario, TfrcSpec};
use crate::results::{DisconnectionSummary, FlowSummary, Series, TfrcSummary};
use crate::units::{BitsPerSec, BytesPerSec};
use mobiflow_proto::mobility::{disconnections, warning_at};
use mobiflow_proto::tfrc::{FreezeState, RxFreezeState, TfrcReceiver, TfrcSender};
use mobiflow_proto::time::{Duration, Instant};

/// The TFRC sender around one feedback packet (test builds: `World::fb_log`).
#[cfg(test)]
#[derive(Clone, Debug)]
pub(super) struct FeedbackStep {
    pub flow: FlowId,
    pub x_before: f64,
    pub state_before: FreezeState,
    /// X, the state, the X_recv set's maximum and R once the feedback was handled.
    pub x: f64,
    pub state: FreezeState,
    pub x_recv_set_max: f64,
    pub rtt: Option<Duration>,
}

#[cfg(test)]
impl FeedbackStep {
    /// The step of flow `f`'s sender from `before` (`TfrcFlow::feedback_state`) to now.
    pub(super) fn new(f: FlowId, before: (f64, FreezeState), tf: &TfrcFlow) -> Self {
        FeedbackStep {
            flow: f,
            x_before: before.0,
            state_before: before.1,
            x: tf.snd.rate_bytes_per_s(),
            state: tf.snd.state(),
            x_recv_set_max: tf.snd.x_recv_set_max(),
            rtt: tf.snd.rtt(),
        }
    }
}

/// Width of the receive-rate bins used for the unused-bandwidth measure.
const BIN: Duration = Duration::from_millis(50);
/// Receive rate, as a fraction of the new path's payload capacity, that counts as
/// restored (mobiflow's reading of the seed's "until the rate is restored").
pub(super) const RESTORE_FRACTION: f64 = 0.9;
/// Window after each reconnection over which received packets are counted.
const AFTER_WINDOW: Duration = Duration::from_secs(10);
/// Window before each disconnection over which the receive rate is measured.
const BEFORE_WINDOW: Duration = Duration::from_secs(2);

/// What a TFRC action event does.
#[derive(Copy, Clone, Debug)]
enum Action {
    /// Record the sender's state just before disconnection `k`.
    Snapshot(usize),
    Freeze,
    Unfreeze,
}

/// The sender's state just before a disconnection, and the flow's losses then.
#[derive(Copy, Clone, Debug, Default)]
struct Before {
    /// X, X_recv (bytes/s), R and p.
    x: f64,
    x_recv: f64,
    rtt: Option<Duration>,
    p: f64,
    /// Data packets lost to outages so far, and of those, in the network when an
    /// outage started.
    lost_to_outages: u64,
    lost_at_start: u64,
    nofeedback_deadline: Option<Instant>,
}

/// A TFRC flow's machines and measurements.
pub(super) struct TfrcFlow {
    pub snd: TfrcSender,
    pub rcv: TfrcReceiver,
    /// Bytes on the wire of a data packet beyond its payload, and of a feedback packet.
    header_bytes: u32,
    feedback_bytes: u32,
    /// Merged disconnections of the path, `[start, end)`.
    disc: Vec<(Instant, Instant)>,
    /// Per disconnection: (x, x_recv, rtt, p) at its start, outage losses counted then.
    before: Vec<Option<Before>>,
    freeze_at: Vec<Option<Instant>>,
    actions: Vec<(Instant, Action)>,
    /// Payload bytes received per BIN since time zero.
    rx_bins: Vec<u64>,
    /// What the observer made of the machines' events (counters, Freeze-DCCP states).
    pub(super) observed: TfrcObserved,
    prev_sample_rx: u64,
}

impl TfrcFlow {
    /// The sender's rate and state, before a feedback packet (test builds: `fb_log`).
    #[cfg(test)]
    pub(super) fn feedback_state(&self) -> (f64, FreezeState) {
        (self.snd.rate_bytes_per_s(), self.snd.state())
    }

    pub(super) fn new(spec: &TfrcSpec) -> Self {
        let snd = TfrcSender::new(spec.cfg.clone());
        let rcv = TfrcReceiver::new(spec.cfg.clone());
        let observed = TfrcObserved::new(&snd, &rcv);
        TfrcFlow {
            snd,
            rcv,
            header_bytes: spec.cfg.header_bytes,
            feedback_bytes: spec.feedback_bytes,
            disc: Vec::new(),
            before: Vec::new(),
            freeze_at: Vec::new(),
            actions: Vec::new(),
            rx_bins: Vec::new(),
            observed,
            prev_sample_rx: 0,
        }
    }

    pub(super) fn bytes_received(&self) -> u64 {
        self.rcv.stats().bytes_received
    }

    /// Hand both machines' events to the observer (after every drive of either).
    fn observe(&mut self, now: Instant) {
        self.observed.drain(now, &mut self.snd, &mut self.rcv);
    }

    fn bin_rx(&mut self, now: Instant, bytes: u64) {
        let k = (now.as_nanos() / BIN.as_nanos()) as usize;
        if self.rx_bins.len() <= k {
            self.rx_bins.resize(k + 1, 0);
        }
        self.rx_bins[k] += bytes;
    }
}

fn sender_code(s: FreezeState) -> i8 {
    match s {
        FreezeState::Normal => 0,
        FreezeState::Frozen => 1,
        FreezeState::Restoring => 2,
        FreezeState::Probing => 3,
    }
}

fn receiver_code(s: RxFreezeState) -> i8 {
    match s {
        RxFreezeState::Normal => 0,
        RxFreezeState::SignalFreeze => 1,
        RxFreezeState::SignalUnfreeze => 2,
        RxFreezeState::Restoration => 3,
        RxFreezeState::Recovery1 => 4,
        RxFreezeState::Recovery2 => 5,
        RxFreezeState::Probed => 6,
    }
}

impl World<'_> {
    /// After the world is built: the disconnections of each TFRC flow's path and the
    /// snapshot, freeze and unfreeze events. Called after the link events are
    /// scheduled, so that an unfreeze at an outage's end runs after the link is up.
    pub(super) fn schedule_tfrc(&mut self) {
        let sc: &Scenario = self.sc;
        for (fi, spec) in sc.flows.iter().enumerate() {
            let Some(t) = spec.transport.tfrc() else {
                continue;
            };
            let fi = FlowId::new(fi);
            let (src, dst) = (NodeId::new(spec.src), NodeId::new(spec.dst));
            let mut path = self.net.path(src, dst);
            path.extend(self.net.path(dst, src));
            let mut outages = Vec::new();
            let mut rtt = Duration::ZERO;
            for &d in &path {
                let ds = &sc.links[d.link()].dirs[d.k()];
                outages.extend(ds.outages.iter().copied());
                rtt += self.net.dirs[d].dir().delay();
            }
            let disc = disconnections(outages);
            let start = Instant::ZERO + spec.start;
            let Some(tf) = self.flows[fi].ep.tfrc_mut() else {
                continue;
            };
            for (k, &(s, e)) in disc.iter().enumerate() {
                let (s, e) = (Instant::ZERO + s, Instant::ZERO + e);
                tf.disc.push((s, e));
                tf.before.push(None);
                let snap = if s > Instant::ZERO {
                    s - Duration::from_nanos(1)
                } else {
                    s
                };
                tf.actions.push((snap, Action::Snapshot(k)));
                let mut fz = None;
                if let Some(f) = &t.freeze {
                    let w = match f.warning {
                        FreezeWarning::Fixed(w) => w,
                        FreezeWarning::Rtt => rtt,
                    };
                    let at = (Instant::ZERO + warning_at(s - Instant::ZERO, w)).max(start);
                    if at < e {
                        fz = Some(at);
                        tf.actions.push((at, Action::Freeze));
                        tf.actions.push((e, Action::Unfreeze));
                    }
                }
                tf.freeze_at.push(fz);
            }
            let acts: Vec<Instant> = tf.actions.iter().map(|a| a.0).collect();
            for (i, at) in acts.into_iter().enumerate() {
                self.net.at(at, Ev::Tfrc(fi, i as u32));
            }
        }
    }

    /// A TFRC action event (snapshot, freeze, unfreeze).
    pub(super) fn tfrc_action(&mut self, f: FlowId, i: u32) {
        let now = self.net.now;
        let side = self.sc.flows[f.index()]
            .transport
            .tfrc()
            .and_then(|t| t.freeze.as_ref())
            .map(|z| z.side);
        let Some(tf) = self.flows[f].ep.tfrc_mut() else {
            return;
        };
        let (_, act) = tf.actions[i as usize];
        let [lost_to_outages, _, _, lost_at_start] = self.net.data_lost[f];
        let flush_side = match act {
            Action::Snapshot(k) => {
                tf.before[k] = Some(Before {
                    x: tf.snd.rate_bytes_per_s(),
                    x_recv: tf.snd.x_recv(),
                    rtt: tf.snd.rtt(),
                    p: tf.snd.p(),
                    lost_to_outages,
                    lost_at_start,
                    nofeedback_deadline: tf.snd.nofeedback_deadline(),
                });
                None
            }
            Action::Freeze | Action::Unfreeze => {
                // The end that predicts the disconnection freezes and unfreezes.
                let at = match side {
                    Some(FreezeSide::Sender) => Side::Sender,
                    _ => Side::Receiver,
                };
                match (at, act) {
                    (Side::Sender, Action::Freeze) => tf.snd.freeze(now),
                    (Side::Sender, _) => tf.snd.unfreeze(now),
                    (Side::Receiver, Action::Freeze) => tf.rcv.freeze(now),
                    (Side::Receiver, _) => tf.rcv.unfreeze(now),
                }
                Some(at)
            }
        };
        tf.observe(now);
        if let Some(side) = flush_side {
            self.flush(f, side);
        }
    }
}

impl FlowEnds for TfrcFlow {
    fn bytes_read(&self) -> u64 {
        self.bytes_received()
    }
    /// TFRC hands data to the application as it arrives (no receive buffer).
    fn read(&mut self, _: Instant, _: u64) {}
    fn finish(&mut self, _: Instant) {}
    forward_to_machines!();
    fn handle_packet(&mut self, now: Instant, _: Side, body: &Body, _: bool) -> bool {
        match body {
            Body::TfrcData(d) => {
                self.rcv.handle_data(now, d);
                self.bin_rx(now, d.len as u64);
                self.observe(now);
                true
            }
            Body::TfrcFeedback(fb) => {
                self.snd.handle_feedback(now, fb);
                self.observe(now);
                false
            }
            Body::Tcp(_) => false,
        }
    }
    fn transmit(&mut self, now: Instant, side: Side, sink: &mut impl Sink) -> Option<Instant> {
        loop {
            match side {
                Side::Receiver => match self.rcv.poll_transmit(now) {
                    Some(fb) => sink.send(Outgoing::TfrcFeedback(&fb), self.feedback_bytes),
                    None => break,
                },
                Side::Sender => match self.snd.poll_transmit(now) {
                    Some(d) => sink.send(Outgoing::TfrcData(&d), d.len + self.header_bytes),
                    None => break,
                },
            }
        }
        self.observe(now);
        self.poll_timeout(side)
    }
    fn bytes_sent(&self) -> u64 {
        self.snd.stats().bytes_sent
    }

    /// One sample row of a TFRC flow.
    fn sample(&mut self, s: &mut Series, t: f64, flow: FlowId, dt: f64) {
        let tf = self;
        let rx = tf.bytes_received();
        let rate = (rx - tf.prev_sample_rx) as f64 * 8.0 / dt;
        tf.prev_sample_rx = rx;
        let fs = &mut s.flow;
        fs.time_s.push(t);
        fs.flow.push(flow.0);
        fs.srtt_ms
            .push(tf.snd.rtt().map_or(f64::NAN, |d| d.as_millis_f64()));
        fs.read_rate_bps.push(rate);
        fs.goodput_bps.push(rate);
        let ts = &mut s.tfrc;
        ts.time_s.push(t);
        ts.flow.push(flow.0);
        ts.x_bps
            .push(BitsPerSec::from(BytesPerSec(tf.snd.rate_bytes_per_s())).into());
        ts.x_recv_bps
            .push(BitsPerSec::from(BytesPerSec(tf.snd.x_recv())).into());
        ts.p.push(tf.snd.p());
        ts.bytes_sent.push(tf.snd.stats().bytes_sent);
        ts.bytes_received.push(rx);
        ts.state.push(sender_code(tf.observed.state.0));
        ts.rx_state.push(receiver_code(tf.observed.state.1));
    }

    fn summary(&self, spec: &FlowSpec, ctx: &SummaryCtx, common: FlowSummary) -> FlowSummary {
        let (sc, end, tf) = (ctx.sc, ctx.end, self);
        let Some(t) = spec.transport.tfrc() else {
            return common;
        };
        let ss = tf.snd.stats();
        let [lost_to_outages, lost_to_queues, lost_to_link_errors, lost_at_starts] = ctx.data_lost;
        let rs = tf.rcv.stats();
        let ob = &tf.observed;
        let s = t.cfg.s as f64;
        let payload_share = s / (s + t.cfg.header_bytes as f64);
        // Forward path for the capacity after each reconnection.
        let fwd = &ctx.forward_path;
        let mut disconnections = Vec::new();
        for (k, &(ds, de)) in tf.disc.iter().enumerate() {
            let next = tf.disc.get(k + 1).map_or(end, |d| d.0).min(end);
            let cap = |t: Instant| {
                fwd.iter()
                    .map(|&d| rate_at(&sc.links[d.link()].dirs[d.k()].rate, t))
                    .fold(f64::INFINITY, f64::min)
                    * payload_share
            };
            let cap_bps = cap(de);
            let cap_before = cap(if ds > Instant::ZERO {
                ds - Duration::from_nanos(1)
            } else {
                ds
            });
            // Receive rate over the BEFORE_WINDOW before the disconnection.
            let b1 = (ds.as_nanos() / BIN.as_nanos()) as usize;
            let b0 = b1.saturating_sub((BEFORE_WINDOW.as_nanos() / BIN.as_nanos()) as usize);
            let b0 = b0
                .max((ctx.start.as_nanos() / BIN.as_nanos()) as usize + 1)
                .min(b1);
            let rx_before: u64 = (b0..b1)
                .map(|b| tf.rx_bins.get(b).copied().unwrap_or(0))
                .sum();
            let rx_rate_before = if b1 > b0 {
                rx_before as f64 * 8.0 / ((b1 - b0) as f64 * BIN.as_secs_f64())
            } else {
                0.0
            };
            // The rate counted as restored: the share of the old path's capacity the
            // flow used before, applied to the new path.
            let share = if cap_before > 0.0 && cap_before.is_finite() {
                (rx_rate_before / cap_before).min(1.0)
            } else {
                0.0
            };
            let target_bps = share * cap_bps;
            let b = tf.before[k].unwrap_or_default();
            let (lost_end, start_end) = match tf.before.get(k + 1).copied().flatten() {
                Some(n) => (n.lost_to_outages, n.lost_at_start),
                None => (lost_to_outages, lost_at_starts),
            };
            // Unused capacity from the reconnection until restored.
            let cap_bytes_per_bin = target_bps / 8.0 * BIN.as_secs_f64();
            let mut unused = 0.0;
            let mut restored = None;
            let first = (de.as_nanos() / BIN.as_nanos()) as usize;
            let last = (next.as_nanos() / BIN.as_nanos()) as usize;
            if target_bps.is_finite() && target_bps > 0.0 && de < next {
                for b in first..last {
                    let got = tf.rx_bins.get(b).copied().unwrap_or(0) as f64;
                    if got >= RESTORE_FRACTION * cap_bytes_per_bin {
                        restored = Some(((b - first) as f64) * BIN.as_secs_f64());
                        break;
                    }
                    unused += (cap_bytes_per_bin - got).max(0.0);
                }
            }
            let w_end = (de + AFTER_WINDOW).min(end);
            let wb = (w_end.as_nanos() / BIN.as_nanos()) as usize;
            let rx_after: u64 = (first..wb)
                .map(|b| tf.rx_bins.get(b).copied().unwrap_or(0))
                .sum();
            disconnections.push(DisconnectionSummary {
                start_s: ds.as_secs_f64(),
                end_s: de.as_secs_f64(),
                freeze_at_s: tf.freeze_at[k].map(|t| t.as_secs_f64()),
                x_before_bps: BytesPerSec(b.x).into(),
                x_recv_before_bps: BytesPerSec(b.x_recv).into(),
                rtt_before_ms: b.rtt.map(|d| d.as_millis_f64()),
                p_before: b.p,
                lost: lost_end - b.lost_to_outages,
                lost_in_network: start_end - b.lost_at_start,
                first_nofeedback_s: b.nofeedback_deadline.map(|t| {
                    if t > ds {
                        (t - ds).as_secs_f64()
                    } else {
                        0.0
                    }
                }),
                capacity_before_bps: BitsPerSec(cap_before),
                capacity_after_bps: BitsPerSec(cap_bps),
                rx_rate_before_bps: BitsPerSec(rx_rate_before),
                target_bps: BitsPerSec(target_bps),
                unused_packets: unused / s,
                restored_after_s: restored,
                restore_fraction: RESTORE_FRACTION,
                received_after: (rx_after as f64 / s).round() as u64,
                window_s: (w_end - de).as_secs_f64(),
            });
        }
        let rtt = tf.snd.rtt().map(|d| d.as_millis_f64());
        FlowSummary {
            protocol: if t.dccp { "dccp-ccid3" } else { "tfrc" }.into(),
            cc: if t.freeze.is_some() {
                "freeze-tfrc"
            } else {
                "tfrc"
            }
            .into(),
            flow_control: "none".into(),
            segments_sent: ss.packets_sent,
            timeouts: ob.nofeedback_expiries,
            rtt_mean_ms: rtt,
            rtt_samples: ss.rtt_samples,
            tfrc: Some(Box::new(TfrcSummary {
                s: t.cfg.s,
                freeze: t.freeze.is_some(),
                packets_sent: ss.packets_sent,
                packets_received: rs.packets_received,
                packets_lost: ss.packets_sent.saturating_sub(rs.packets_received),
                lost_to_outages,
                lost_to_queues,
                lost_to_link_errors,
                losses_detected: rs.packets_lost,
                loss_events: ob.loss_events,
                feedback_sent: rs.feedback_sent,
                feedback_received: ss.feedback_received,
                nofeedback_expiries: ob.nofeedback_expiries,
                x_bps: BytesPerSec(tf.snd.rate_bytes_per_s()).into(),
                x_recv_bps: BytesPerSec(tf.snd.x_recv()).into(),
                p: tf.snd.p(),
                freezes: ob.freezes,
                restorations: ob.restorations,
                probings: ob.probings,
                fallbacks: ob.fallbacks,
                states: ob.states.clone(),
                disconnections,
            })),
            // TCP's counters (retransmits, windows, RTT quantiles, handoff) are not
            // TFRC's: they keep `common`'s zeros.
            ..common
        }
    }
}

/// Rate of a link direction at `t` (a trace's mean rate).
fn rate_at(r: &RateModel, t: Instant) -> f64 {
    match r {
        RateModel::Constant(b) => *b as f64,
        RateModel::Schedule { points, period } => {
            super::link::schedule_at(points, *period, t - Instant::ZERO) as f64
        }
        RateModel::Trace(tr) => tr.mean_rate_bps(),
    }
}
