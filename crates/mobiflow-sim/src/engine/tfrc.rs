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

use super::{Body, Endpoints, Ev, Pkt, World};
use crate::model::{FreezeSide, FreezeWarning, RateModel, Scenario, TfrcSpec};
use crate::results::{DisconnectionSummary, FlowSeries, FlowSummary, TfrcSummary};
use mobiflow_proto::mobility::{disconnections, warning_at};
use mobiflow_proto::tfrc::{FreezeState, RxFreezeState, TfrcReceiver, TfrcSender};
use mobiflow_proto::time::{Duration, Instant};

/// The TFRC sender around one feedback packet (test builds: `World::fb_log`).
#[cfg(test)]
#[derive(Clone, Debug)]
pub(super) struct FeedbackStep {
    pub flow: u32,
    pub x_before: f64,
    pub state_before: FreezeState,
    /// X, the state, the X_recv set's maximum and R once the feedback was handled.
    pub x: f64,
    pub state: FreezeState,
    pub x_recv_set_max: f64,
    pub rtt: Option<Duration>,
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

/// The sender's X, X_recv, R and p just before a disconnection, the flow's outage
/// losses counted then (all, and in the network), and the nofeedback deadline.
type Before = (f64, f64, Option<Duration>, f64, u64, u64, Option<Instant>);

/// A TFRC flow's machines and measurements.
pub(super) struct TfrcFlow {
    pub snd: TfrcSender,
    pub rcv: TfrcReceiver,
    /// Merged disconnections of the path, `[start, end)`.
    disc: Vec<(Instant, Instant)>,
    /// Per disconnection: (x, x_recv, rtt, p) at its start, outage losses counted then.
    before: Vec<Option<Before>>,
    freeze_at: Vec<Option<Instant>>,
    actions: Vec<(Instant, Action)>,
    /// Payload bytes received per BIN since time zero.
    rx_bins: Vec<u64>,
    states: Vec<(f64, String, String)>,
    last_state: (FreezeState, RxFreezeState),
    prev_sample_rx: u64,
}

impl TfrcFlow {
    pub(super) fn new(spec: &TfrcSpec) -> Self {
        let snd = TfrcSender::new(spec.cfg.clone());
        let rcv = TfrcReceiver::new(spec.cfg.clone());
        let last_state = (snd.state(), rcv.state());
        TfrcFlow {
            snd,
            rcv,
            disc: Vec::new(),
            before: Vec::new(),
            freeze_at: Vec::new(),
            actions: Vec::new(),
            rx_bins: Vec::new(),
            states: vec![(0.0, last_state.0.to_string(), last_state.1.to_string())],
            last_state,
            prev_sample_rx: 0,
        }
    }

    pub(super) fn bytes_received(&self) -> u64 {
        self.rcv.stats().bytes_received
    }

    /// Note a state change of either machine.
    fn track_state(&mut self, now: Instant) {
        let st = (self.snd.state(), self.rcv.state());
        if st != self.last_state {
            self.last_state = st;
            self.states
                .push((now.as_secs_f64(), st.0.to_string(), st.1.to_string()));
        }
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

/// The link directions from `a` to `b` along the static routes.
pub(super) fn path_dirs(
    route: &[Option<u32>],
    n: usize,
    dirs_to: &[usize],
    a: usize,
    b: usize,
) -> Vec<u32> {
    let mut out = Vec::new();
    let mut node = a;
    while node != b && out.len() <= dirs_to.len() {
        let Some(d) = route[node * n + b] else { break };
        out.push(d);
        node = dirs_to[d as usize];
    }
    out
}

impl World<'_> {
    /// After the world is built: the disconnections of each TFRC flow's path and the
    /// snapshot, freeze and unfreeze events. Called after the link events are
    /// scheduled, so that an unfreeze at an outage's end runs after the link is up.
    pub(super) fn schedule_tfrc(&mut self) {
        let sc: &Scenario = self.sc;
        let n = self.net.n_nodes;
        let dirs_to: Vec<usize> = self.net.dirs.iter().map(|d| d.to).collect();
        for (fi, spec) in sc.flows.iter().enumerate() {
            let Some(t) = spec.transport.tfrc() else {
                continue;
            };
            let mut path = path_dirs(&self.net.route, n, &dirs_to, spec.src, spec.dst);
            path.extend(path_dirs(&self.net.route, n, &dirs_to, spec.dst, spec.src));
            let mut outages = Vec::new();
            let mut rtt = Duration::ZERO;
            for &d in &path {
                let ds = &sc.links[d as usize / 2].dirs[d as usize % 2];
                outages.extend(ds.outages.iter().copied());
                rtt += self.net.dirs[d as usize].delay;
            }
            let disc = disconnections(outages);
            let start = Instant::ZERO + spec.start;
            let Endpoints::Tfrc(tf) = &mut self.flows[fi].ep else {
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
                self.net.at(at, Ev::Tfrc(fi as u32, i as u32));
            }
        }
    }

    /// A TFRC action event (snapshot, freeze, unfreeze).
    pub(super) fn tfrc_action(&mut self, f: u32, i: u32) {
        let now = self.net.now;
        let side = self.sc.flows[f as usize]
            .transport
            .tfrc()
            .and_then(|t| t.freeze.as_ref())
            .map(|z| z.side);
        let Endpoints::Tfrc(tf) = &mut self.flows[f as usize].ep else {
            return;
        };
        let (_, act) = tf.actions[i as usize];
        let [lost_to_outages, _, _, lost_at_start] = self.net.data_lost[f as usize];
        let flush_side = match act {
            Action::Snapshot(k) => {
                tf.before[k] = Some((
                    tf.snd.rate_bytes_per_s(),
                    tf.snd.x_recv(),
                    tf.snd.rtt(),
                    tf.snd.p(),
                    lost_to_outages,
                    lost_at_start,
                    tf.snd.nofeedback_deadline(),
                ));
                None
            }
            Action::Freeze => match side {
                Some(FreezeSide::Sender) => {
                    tf.snd.freeze(now);
                    Some(false)
                }
                _ => {
                    tf.rcv.freeze(now);
                    Some(true)
                }
            },
            Action::Unfreeze => match side {
                Some(FreezeSide::Sender) => {
                    tf.snd.unfreeze(now);
                    Some(false)
                }
                _ => {
                    tf.rcv.unfreeze(now);
                    Some(true)
                }
            },
        };
        tf.track_state(now);
        if let Some(receiver) = flush_side {
            self.flush(f, receiver);
        }
    }

    /// A TFRC packet reached its destination endpoint.
    pub(super) fn tfrc_deliver(&mut self, f: u32, body: Body) {
        let now = self.net.now;
        let Endpoints::Tfrc(tf) = &mut self.flows[f as usize].ep else {
            return;
        };
        match body {
            Body::TfrcData(d) => {
                tf.rcv.handle_data(now, &d);
                tf.bin_rx(now, d.len as u64);
                tf.track_state(now);
                self.after_read(f);
                self.flush(f, true);
            }
            Body::TfrcFeedback(fb) => {
                #[cfg(test)]
                let before = (tf.snd.rate_bytes_per_s(), tf.snd.state());
                tf.snd.handle_feedback(now, &fb);
                #[cfg(test)]
                if let Some(log) = &mut self.fb_log {
                    log.push(FeedbackStep {
                        flow: f,
                        x_before: before.0,
                        state_before: before.1,
                        x: tf.snd.rate_bytes_per_s(),
                        state: tf.snd.state(),
                        x_recv_set_max: tf.snd.x_recv_set_max(),
                        rtt: tf.snd.rtt(),
                    });
                }
                tf.track_state(now);
                self.flush(f, false);
            }
            Body::Tcp(_) => {}
        }
    }

    /// Send what a TFRC endpoint has to send.
    pub(super) fn tfrc_transmit(&mut self, f: u32, receiver: bool) {
        let now = self.net.now;
        let spec = &self.sc.flows[f as usize];
        let Some(t) = spec.transport.tfrc() else {
            return;
        };
        let (from, dst) = if receiver {
            (spec.dst, spec.src)
        } else {
            (spec.src, spec.dst)
        };
        let Endpoints::Tfrc(tf) = &mut self.flows[f as usize].ep else {
            return;
        };
        let net = &mut self.net;
        loop {
            let (body, bytes) = if receiver {
                match tf.rcv.poll_transmit(now) {
                    Some(fb) => (Body::TfrcFeedback(fb), t.feedback_bytes),
                    None => break,
                }
            } else {
                match tf.snd.poll_transmit(now) {
                    Some(d) => (Body::TfrcData(d), d.len + t.cfg.header_bytes),
                    None => break,
                }
            };
            let id = net.alloc(Pkt {
                flow: f,
                to_receiver: !receiver,
                dst: dst as u32,
                bytes,
                body,
            });
            if let Some(cap) = &mut self.capture {
                cap.sent(from, now, &net.pkts[id as usize]);
            }
            net.forward(from, id);
        }
        tf.track_state(now);
    }

    /// One sample row of a TFRC flow.
    pub(super) fn tfrc_sample(fs: &mut FlowSeries, tf: &mut TfrcFlow, dt: f64) {
        let rx = tf.bytes_received();
        let rate = (rx - tf.prev_sample_rx) as f64 * 8.0 / dt;
        tf.prev_sample_rx = rx;
        fs.cwnd_bytes.push(0);
        fs.ssthresh_bytes.push(0);
        fs.rwnd_bytes.push(0);
        fs.flight_bytes.push(0);
        fs.srtt_ms
            .push(tf.snd.rtt().map_or(f64::NAN, |d| d.as_millis_f64()));
        fs.rcv_buffer_bytes.push(0);
        fs.read_rate_bps.push(rate);
        fs.goodput_bps.push(rate);
        fs.snd_una.push(rx);
        fs.snd_nxt.push(tf.snd.stats().bytes_sent);
        fs.flow_window_bytes.push(0);
        fs.ar_bps.push(f64::NAN);
        fs.rcv_buf_limit_bytes.push(0);
        fs.t_buff_ms.push(f64::NAN);
        fs.policy_state.push(-1);
        fs.tfrc_x_bps.push(tf.snd.rate_bytes_per_s() * 8.0);
        fs.tfrc_x_recv_bps.push(tf.snd.x_recv() * 8.0);
        fs.tfrc_p.push(tf.snd.p());
        fs.tfrc_state.push(sender_code(tf.snd.state()));
        fs.tfrc_rx_state.push(receiver_code(tf.rcv.state()));
    }

    /// The summary of TFRC flow `i`.
    pub(super) fn tfrc_summary(&self, i: usize, end: Instant) -> Option<FlowSummary> {
        let sc = self.sc;
        let spec = &sc.flows[i];
        let t = spec.transport.tfrc()?;
        let fr = &self.flows[i];
        let Endpoints::Tfrc(tf) = &fr.ep else {
            return None;
        };
        let ss = tf.snd.stats();
        let [lost_to_outages, lost_to_queues, lost_to_link_errors, lost_at_starts] =
            self.net.data_lost[i];
        let rs = tf.rcv.stats();
        let s = t.cfg.s as f64;
        let payload_share = s / (s + t.cfg.header_bytes as f64);
        // Forward path for the capacity after each reconnection.
        let dirs_to: Vec<usize> = self.net.dirs.iter().map(|d| d.to).collect();
        let fwd = path_dirs(
            &self.net.route,
            self.net.n_nodes,
            &dirs_to,
            spec.src,
            spec.dst,
        );
        let mut disconnections = Vec::new();
        for (k, &(ds, de)) in tf.disc.iter().enumerate() {
            let next = tf.disc.get(k + 1).map_or(end, |d| d.0).min(end);
            let cap = |t: Instant| {
                fwd.iter()
                    .map(|&d| rate_at(&sc.links[d as usize / 2].dirs[d as usize % 2].rate, t))
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
                .max((fr.start.as_nanos() / BIN.as_nanos()) as usize + 1)
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
            let (x, xr, r, p, lost0, start0, nfb) =
                tf.before[k].unwrap_or((0.0, 0.0, None, 0.0, 0, 0, None));
            let (lost_end, start_end) = match tf.before.get(k + 1).copied().flatten() {
                Some(b) => (b.4, b.5),
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
                x_before_bps: x * 8.0,
                x_recv_before_bps: xr * 8.0,
                rtt_before_ms: r.map(|d| d.as_millis_f64()),
                p_before: p,
                lost: lost_end - lost0,
                lost_in_network: start_end - start0,
                first_nofeedback_s: nfb.map(|t| if t > ds { (t - ds).as_secs_f64() } else { 0.0 }),
                capacity_before_bps: cap_before,
                capacity_after_bps: cap_bps,
                rx_rate_before_bps: rx_rate_before,
                target_bps,
                unused_packets: unused / s,
                restored_after_s: restored,
                restore_fraction: RESTORE_FRACTION,
                received_after: (rx_after as f64 / s).round() as u64,
                window_s: (w_end - de).as_secs_f64(),
            });
        }
        let delivered = tf.bytes_received();
        let active = (fr.completion.unwrap_or(end) - fr.start).as_secs_f64();
        let mut intervals = std::collections::BTreeMap::new();
        for (k, (label, a, b)) in sc.measure.intervals.iter().enumerate() {
            let (b0, b1) = self.interval_bytes[k][i];
            let span = (*b - *a).as_secs_f64();
            let v = if span > 0.0 {
                b1.saturating_sub(b0) as f64 * 8.0 / span
            } else {
                0.0
            };
            intervals.insert(label.clone(), v);
        }
        let rtt = tf.snd.rtt().map(|d| d.as_millis_f64());
        Some(FlowSummary {
            name: spec.name.clone(),
            src: sc.nodes[spec.src].clone(),
            dst: sc.nodes[spec.dst].clone(),
            protocol: if t.dccp { "dccp-ccid3" } else { "tfrc" }.into(),
            cc: if t.freeze.is_some() {
                "freeze-tfrc"
            } else {
                "tfrc"
            }
            .into(),
            flow_control: "none".into(),
            bytes_delivered: delivered,
            bytes_offered: if matches!(spec.app, crate::model::AppSpec::Bulk) {
                ss.bytes_sent
            } else {
                fr.written
            },
            goodput_bps: if active > 0.0 {
                delivered as f64 * 8.0 / active
            } else {
                0.0
            },
            intervals,
            completion_time_s: fr.completion.map(|c| (c - fr.start).as_secs_f64()),
            burst_completion_times_s: fr.burst_done.clone(),
            segments_sent: ss.packets_sent,
            retransmits: 0,
            timeouts: ss.nofeedback_expiries,
            fast_retransmits: 0,
            zero_windows: 0,
            zero_window_acks: 0,
            window_probes: 0,
            window_updates: 0,
            dup_acks: 0,
            policy_updates: 0,
            hidden_congestion_events: 0,
            paced_segments: 0,
            zero_window_stalls: 0,
            zero_window_stall_s: 0.0,
            zero_window_stall_rtts: 0,
            idle_rtts: 0,
            total_rtts: 0,
            rcv_buffer_drops: 0,
            rtt_min_ms: None,
            rtt_mean_ms: rtt,
            rtt_p95_ms: None,
            rtt_samples: ss.rtt_samples,
            page_load_times_s: Vec::new(),
            pages_started: 0,
            handoff: Default::default(),
            tfrc: Some(TfrcSummary {
                s: t.cfg.s,
                freeze: t.freeze.is_some(),
                packets_sent: ss.packets_sent,
                packets_received: rs.packets_received,
                packets_lost: ss.packets_sent.saturating_sub(rs.packets_received),
                lost_to_outages,
                lost_to_queues,
                lost_to_link_errors,
                losses_detected: rs.packets_lost,
                loss_events: rs.loss_events,
                feedback_sent: rs.feedback_sent,
                feedback_received: ss.feedback_received,
                nofeedback_expiries: ss.nofeedback_expiries,
                x_bps: tf.snd.rate_bytes_per_s() * 8.0,
                x_recv_bps: tf.snd.x_recv() * 8.0,
                p: tf.snd.p(),
                freezes: ss.freezes,
                restorations: ss.restorations,
                probings: ss.probings,
                fallbacks: ss.fallbacks,
                states: tf.states.clone(),
                disconnections,
            }),
        })
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
