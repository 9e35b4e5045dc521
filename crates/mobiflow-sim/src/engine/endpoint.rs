//! The engine's view of a flow's two protocol machines: one trait, [`FlowEnds`], that
//! every transport implements (TCP here, TFRC / DCCP CCID 3 in `tfrc.rs`), and the
//! enum [`Endpoints`] the engine keeps per flow, which forwards each call to its
//! transport (static dispatch: one `match` per call, no boxing per packet).
//!
//! Adding a transport: a struct holding its machines that implements [`FlowEnds`]
//! (`forward_to_machines!` writes the methods that only call its `snd` or `rcv`), a
//! variant of [`Endpoints`] (and of `net::Body` for its packets), and its arm in
//! `Endpoints::new` and in the `each!` macro below.

use super::ids::{DirId, FlowId};
use super::net::{Body, Outgoing};
use super::observe::TcpObserved;
use super::tfrc::TfrcFlow;
use crate::model::{FlowSpec, Scenario, Transport};
use crate::results::{FlowSummary, Series, Ssthresh, SSTHRESH_INFINITE};
use mobiflow_proto::tcp::{Polled, TcpConfig, TcpReceiver, TcpSender};
use mobiflow_proto::time::{Duration, Instant};
use mobiflow_proto::wire::Segment;
use std::sync::Arc;

/// Which end of a flow: the sender (source of the data) or the receiver.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Sender = 0,
    Receiver = 1,
}

impl Side {
    /// 0 for the sender, 1 for the receiver (an index into per-side arrays).
    #[inline(always)]
    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// What the run measured of a flow outside its machines, for its summary.
pub(super) struct SummaryCtx<'a> {
    pub sc: &'a Scenario,
    pub start: Instant,
    pub end: Instant,
    /// Per flow: data packets lost to outages, to queues, to random loss, and queued
    /// or in flight when an outage started (`Net::data_lost`).
    pub data_lost: [u64; 4],
    /// The link directions of the flow's forward path.
    pub forward_path: Vec<DirId>,
}

/// Where an endpoint's packets go ([`FlowEnds::transmit`]): into the engine's packet
/// slab, then the network.
pub(super) trait Sink {
    /// The packet the next [`Sink::send_slot`] sends, taken from the slab: its
    /// segment, for a TCP machine to write in place (`poll_transmit_into`), and its
    /// size on the wire, for the engine to write once the segment is: nothing is
    /// copied on the way to the slab. [`Sink::free_slot`] gives it back if the
    /// machine writes nothing.
    fn tcp_slot(&mut self) -> (&mut Segment, &mut u32);
    /// Send the packet of [`Sink::tcp_slot`], `bytes` on the wire (its size, already
    /// written).
    fn send_slot(&mut self, bytes: u32);
    /// Give the packet of [`Sink::tcp_slot`] back to the slab unsent.
    fn free_slot(&mut self);
    /// Send a packet built elsewhere (copied once, into the slab), `bytes` on the
    /// wire.
    fn send(&mut self, out: Outgoing<'_>, bytes: u32);
}

/// A flow's two protocol machines, as the engine drives them.
pub(super) trait FlowEnds {
    /// Bytes the receiving application has been given.
    fn bytes_read(&self) -> u64;
    /// The receiving application reads up to `budget` bytes.
    fn read(&mut self, now: Instant, budget: u64);
    /// The sending application always has data (bulk).
    fn set_unlimited(&mut self);
    /// The sending application writes `bytes` more.
    fn write(&mut self, bytes: u64);
    /// The sending application writes nothing more.
    fn stop_writing(&mut self);
    /// The sending application is done (completion or end of run).
    fn finish(&mut self, now: Instant);
    fn handle_timeout(&mut self, side: Side, now: Instant);
    fn poll_timeout(&self, side: Side) -> Option<Instant>;
    /// For a wake-up of `side` at `now`: when its first timer is due, if that is after
    /// `now` and the wake-up would do nothing (`handle_timeout` changes nothing, and
    /// `transmit` finds nothing to send, as the engine polled `side` after its last
    /// input). `None` (what a transport without such a test answers): the wake-up runs.
    fn early_wake(&self, _side: Side, _now: Instant) -> Option<Instant> {
        None
    }
    /// A packet for `to` arrived. True if the receiving application read data (the
    /// engine then checks completions and wakes the application); `greedy`: the
    /// receiving application reads whatever it can at once.
    fn handle_packet(&mut self, now: Instant, to: Side, body: &Body, greedy: bool) -> bool;
    /// Hand every packet `side` has to send now to `sink`, with its size on the wire;
    /// returns when `side` next wants `handle_timeout` (its `poll_timeout` after
    /// sending). One call for both, which the engine makes after every input: the
    /// transport and the side are told apart once.
    fn transmit(&mut self, now: Instant, side: Side, sink: &mut impl Sink) -> Option<Instant>;
    /// Bytes the sender has sent (what a bulk flow offered).
    fn bytes_sent(&self) -> u64;
    /// One row of the flow series and one of its transport's series, at time `t`
    /// (`dt` the sampling period, both in s).
    fn sample(&mut self, s: &mut Series, t: f64, flow: FlowId, dt: f64);
    /// The flow's summary: `common` holds what the engine measured (name, bytes,
    /// goodput, intervals, completions, pages) and zeros; the transport fills in the rest.
    fn summary(&self, spec: &FlowSpec, ctx: &SummaryCtx, common: FlowSummary) -> FlowSummary;
}

/// The [`FlowEnds`] methods that only hand the call to the flow's sender `snd` or
/// receiver `rcv`, for a transport whose machines have methods of those names.
macro_rules! forward_to_machines {
    () => {
        fn set_unlimited(&mut self) {
            self.snd.set_unlimited();
        }
        fn write(&mut self, bytes: u64) {
            self.snd.write(bytes);
        }
        fn stop_writing(&mut self) {
            self.snd.stop_writing();
        }
        fn handle_timeout(&mut self, side: Side, now: Instant) {
            match side {
                Side::Sender => self.snd.handle_timeout(now),
                Side::Receiver => self.rcv.handle_timeout(now),
            }
        }
        fn poll_timeout(&self, side: Side) -> Option<Instant> {
            match side {
                Side::Sender => self.snd.poll_timeout(),
                Side::Receiver => self.rcv.poll_timeout(),
            }
        }
    };
}
pub(super) use forward_to_machines;

/// A TCP flow's sender and receiver, and the sampling state of its series.
pub(super) struct TcpEnds {
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    wire: WireSize,
    prev_sample_read: u64,
    prev_sample_rcv_nxt: u64,
    /// What the observer made of the machines' events.
    pub observed: TcpObserved,
}

impl FlowEnds for TcpEnds {
    fn bytes_read(&self) -> u64 {
        self.rcv.bytes_read()
    }
    fn read(&mut self, now: Instant, budget: u64) {
        self.rcv.read(now, budget);
    }
    fn finish(&mut self, now: Instant) {
        self.snd.finish(now);
    }
    forward_to_machines!();
    fn early_wake(&self, side: Side, now: Instant) -> Option<Instant> {
        match side {
            Side::Sender => self.snd.early_wake(now),
            Side::Receiver => None,
        }
    }
    #[inline]
    fn handle_packet(&mut self, now: Instant, to: Side, body: &Body, greedy: bool) -> bool {
        let Body::Tcp(seg) = body else {
            return false;
        };
        match to {
            Side::Receiver => {
                if greedy {
                    self.rcv.handle_segment_and_read(now, seg);
                } else {
                    self.rcv.handle_segment(now, seg);
                }
                greedy
            }
            Side::Sender => {
                self.snd.handle_segment(now, seg);
                false
            }
        }
    }
    #[inline]
    fn transmit(&mut self, now: Instant, side: Side, sink: &mut impl Sink) -> Option<Instant> {
        let wire = &self.wire;
        // Every drive of a machine ends in a flush of that end: take its events.
        match side {
            Side::Sender => {
                let snd = &mut self.snd;
                send_all(sink, wire, |seg| snd.poll_transmit_into(now, seg));
                self.observed.drain_sender(&mut self.snd);
                self.snd.poll_timeout()
            }
            Side::Receiver => {
                let rcv = &mut self.rcv;
                send_all(sink, wire, |seg| rcv.poll_transmit_into(now, seg));
                self.observed.drain_receiver(&mut self.rcv);
                self.rcv.poll_timeout()
            }
        }
    }
    fn bytes_sent(&self) -> u64 {
        self.snd.snd_nxt()
    }
    fn sample(&mut self, s: &mut Series, t: f64, flow: FlowId, dt: f64) {
        let (snd, rcv) = (&self.snd, &self.rcv);
        let read = rcv.bytes_read();
        let rn = rcv.rcv_nxt();
        let fs = &mut s.flow;
        fs.time_s.push(t);
        fs.flow.push(flow.0);
        fs.srtt_ms
            .push(snd.rtt().srtt().map_or(f64::NAN, |d| d.as_millis_f64()));
        fs.read_rate_bps
            .push((read - self.prev_sample_read) as f64 * 8.0 / dt);
        fs.goodput_bps
            .push((rn - self.prev_sample_rcv_nxt) as f64 * 8.0 / dt);
        let ts = &mut s.tcp;
        ts.time_s.push(t);
        ts.flow.push(flow.0);
        ts.cwnd_bytes.push(snd.cwnd());
        ts.ssthresh_bytes
            .push(Ssthresh(snd.ssthresh().min(SSTHRESH_INFINITE)));
        ts.rwnd_bytes.push(rcv.last_advertised_window());
        ts.flight_bytes.push(snd.flight());
        ts.rcv_buffer_bytes.push(rcv.buffer_occupancy());
        ts.snd_una.push(snd.snd_una());
        ts.snd_nxt.push(snd.snd_nxt());
        ts.flow_window_bytes.push(snd.flow_window());
        ts.ar_bps
            .push(rcv.rate_estimate().map_or(f64::NAN, |r| r * 8.0));
        ts.rcv_buf_limit_bytes.push(rcv.buffer_limit());
        let policy = rcv.policy();
        ts.t_buff_ms.push(
            policy
                .delay_estimate()
                .map_or(f64::NAN, |d| d.as_millis_f64()),
        );
        ts.policy_state
            .push(policy.state_code().map_or(-1, i32::from));
        self.prev_sample_read = read;
        self.prev_sample_rcv_nxt = rn;
    }
    fn summary(&self, spec: &FlowSpec, _: &SummaryCtx, common: FlowSummary) -> FlowSummary {
        let Some(cfg) = spec.transport.tcp() else {
            return common;
        };
        let ss = self.snd.stats();
        let rs = self.rcv.stats();
        let ob = &self.observed;
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis_f64());
        FlowSummary {
            protocol: "tcp".into(),
            cc: cfg.cc.name().into(),
            flow_control: cfg.flow_control.name().into(),
            segments_sent: ss.data_segments_sent,
            retransmits: ss.retransmits,
            timeouts: ob.timeouts,
            fast_retransmits: ob.fast_retransmits,
            spurious_retransmits: rs.spurious_retransmits,
            undos: ob.undos,
            zero_windows: ob.zero_windows,
            zero_window_acks: rs.zero_window_acks,
            window_probes: ob.window_probes,
            window_updates: rs.window_updates,
            dup_acks: rs.dup_acks,
            policy_updates: ob.policy_updates,
            hidden_congestion_events: ob.hidden_congestion_events,
            paced_segments: ss.paced_segments,
            zero_window_stalls: ob.zero_window_stalls,
            zero_window_stall_s: ob.zero_window_stall_time.as_secs_f64(),
            zero_window_stall_rtts: ob.zero_window_stall_rtts,
            idle_rtts: ss.idle_rtts,
            total_rtts: ss.total_rtts,
            rcv_buffer_drops: rs.buffer_drops,
            rtt_min_ms: ms(ss.rtt.min),
            rtt_mean_ms: ms(ss.rtt.mean()),
            rtt_p95_ms: ms(ss.rtt.quantile(0.95)),
            rtt_samples: ss.rtt.count,
            handoff: ob.handoff(),
            tfrc: None,
            ..common
        }
    }
}

/// How a TCP flow's packets are sized on the wire: `header_bytes` of headers, plus
/// their options if `count_option_bytes`.
struct WireSize {
    header_bytes: u32,
    count_option_bytes: bool,
}

/// Send what a TCP machine's `poll` writes, packet by packet, into the slots of
/// `sink`, sized by `wire` (read from the flow after each poll: held in registers
/// across the machine's work, the two values were spilled and reloaded).
#[inline(always)]
fn send_all(sink: &mut impl Sink, wire: &WireSize, mut poll: impl FnMut(&mut Segment) -> Polled) {
    loop {
        // The machine builds the segment in its packet's slot.
        let (seg, size) = sink.tcp_slot();
        let polled = poll(seg);
        if polled == Polled::Nothing {
            sink.free_slot();
            break;
        }
        let opts = if wire.count_option_bytes {
            seg.options_len()
        } else {
            0
        };
        let bytes = seg.len + wire.header_bytes + opts;
        *size = bytes;
        sink.send_slot(bytes);
        if polled == Polled::Last {
            // The machine did the bookkeeping of the poll that would send nothing.
            break;
        }
    }
}

/// The two protocol machines of a flow. TCP's stay inline (the hot path of most
/// runs); a TFRC flow is boxed.
#[allow(clippy::large_enum_variant)]
pub(super) enum Endpoints {
    Tcp(TcpEnds),
    Tfrc(Box<TfrcFlow>),
}

/// Run `$body` with `$e` bound to the transport's [`FlowEnds`] (the one place that
/// lists the transports for dispatch).
macro_rules! each {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Endpoints::Tcp($e) => $body,
            Endpoints::Tfrc($e) => $body,
        }
    };
}

impl Endpoints {
    /// The machines of a flow of transport `t`; `seed` seeds the random choices of its
    /// congestion control (`CcKind::with_seed`).
    pub(super) fn new(t: &Transport, seed: u64) -> Endpoints {
        match t {
            Transport::Tcp(cfg) => {
                // The sender keeps a copy of its own (read on every ACK), with the
                // connection's seed for its controller; the receiver reads the
                // scenario's, shared.
                Endpoints::Tcp(TcpEnds {
                    snd: TcpSender::new(TcpConfig {
                        cc: cfg.cc.with_seed(seed),
                        ..(**cfg).clone()
                    }),
                    rcv: TcpReceiver::new(Arc::clone(cfg)),
                    wire: WireSize {
                        header_bytes: cfg.header_bytes,
                        count_option_bytes: cfg.count_option_bytes,
                    },
                    prev_sample_read: 0,
                    prev_sample_rcv_nxt: 0,
                    observed: TcpObserved::default(),
                })
            }
            Transport::Tfrc(t) => Endpoints::Tfrc(Box::new(TfrcFlow::new(t))),
        }
    }

    /// The TCP sender and receiver (`None` for other transports): for what only
    /// TCP does (Freeze-TCP, the handoff reactions).
    pub(super) fn tcp_mut(&mut self) -> Option<&mut TcpEnds> {
        match self {
            Endpoints::Tcp(t) => Some(t),
            _ => None,
        }
    }

    /// The TFRC flow (`None` for other transports): for the Freeze-DCCP actions.
    pub(super) fn tfrc_mut(&mut self) -> Option<&mut TfrcFlow> {
        match self {
            Endpoints::Tfrc(t) => Some(t),
            _ => None,
        }
    }
}

impl FlowEnds for Endpoints {
    fn bytes_read(&self) -> u64 {
        each!(self, e => e.bytes_read())
    }
    fn read(&mut self, now: Instant, budget: u64) {
        each!(self, e => e.read(now, budget))
    }
    fn set_unlimited(&mut self) {
        each!(self, e => e.set_unlimited())
    }
    fn write(&mut self, bytes: u64) {
        each!(self, e => e.write(bytes))
    }
    fn stop_writing(&mut self) {
        each!(self, e => e.stop_writing())
    }
    fn finish(&mut self, now: Instant) {
        each!(self, e => e.finish(now))
    }
    fn handle_timeout(&mut self, side: Side, now: Instant) {
        each!(self, e => e.handle_timeout(side, now))
    }
    fn poll_timeout(&self, side: Side) -> Option<Instant> {
        each!(self, e => e.poll_timeout(side))
    }
    fn early_wake(&self, side: Side, now: Instant) -> Option<Instant> {
        each!(self, e => e.early_wake(side, now))
    }
    #[inline]
    fn handle_packet(&mut self, now: Instant, to: Side, body: &Body, greedy: bool) -> bool {
        each!(self, e => e.handle_packet(now, to, body, greedy))
    }
    #[inline]
    fn transmit(&mut self, now: Instant, side: Side, sink: &mut impl Sink) -> Option<Instant> {
        each!(self, e => e.transmit(now, side, sink))
    }
    fn bytes_sent(&self) -> u64 {
        each!(self, e => e.bytes_sent())
    }
    fn sample(&mut self, s: &mut Series, t: f64, flow: FlowId, dt: f64) {
        each!(self, e => e.sample(s, t, flow, dt))
    }
    fn summary(&self, spec: &FlowSpec, ctx: &SummaryCtx, common: FlowSummary) -> FlowSummary {
        each!(self, e => e.summary(spec, ctx, common))
    }
}
