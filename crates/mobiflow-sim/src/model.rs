//! The validated, unit-converted form of a scenario: what the engine builds a world
//! from. `scenario.rs` turns TOML into this; nothing here knows about TOML.
//!
//! All times are [`Duration`]s from the start of the run, rates are bits per second,
//! sizes are bytes.

use mobiflow_proto::named_enum;
use mobiflow_proto::tcp::TcpConfig;
use mobiflow_proto::tfrc::TfrcConfig;
use mobiflow_proto::time::Duration;
use std::path::PathBuf;
use std::sync::Arc;

/// A whole scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Human name (defaults to the file stem).
    pub name: String,
    /// The file it came from, if any (for messages and relative paths).
    pub source: Option<PathBuf>,
    /// Simulated time to run.
    pub duration: Duration,
    /// Seed of every random stream in the run.
    pub seed: u64,
    /// Node names; links and flows refer to nodes by index into this list.
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    pub measure: MeasureSpec,
    /// Parameters whose default is an assumption (not from a seed document), as
    /// `(dotted key, value as written)`, reported in the summary.
    pub assumed: Vec<(String, String)>,
}

/// A duplex link between nodes `a` and `b`.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub a: usize,
    pub b: usize,
    /// `dirs[0]` carries a -> b, `dirs[1]` carries b -> a.
    pub dirs: [DirSpec; 2],
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct DirSpec {
    pub rate: RateModel,
    pub delay: DelayModel,
    pub queue: QueueSpec,
    /// Intervals `[start, end)` during which this direction carries nothing; what is
    /// queued or in flight when one starts is lost.
    pub outages: Vec<(Duration, Duration)>,
    /// Probability that a packet arriving at this direction is lost (independently,
    /// before the queue), like ns-2's uniform `ErrorModel`. 0: none.
    pub loss: f64,
    /// Keep the direction first-in first-out: a packet never arrives before one sent
    /// earlier, even when the delay drops. Off (the default), each packet takes the
    /// delay in force when its transmission starts, as ns-2's `LinkDelay` schedules
    /// it, so a delay drop lets later packets overtake earlier ones.
    pub fifo: bool,
    /// Probability that a packet is held back `reorder_delay` longer in propagation,
    /// so that packets sent within that time overtake it. 0: none.
    pub reorder: f64,
    pub reorder_delay: Duration,
    /// Probability that a packet arrives twice at the far end (the copy right after
    /// the original). 0: none.
    pub duplicate: f64,
}

impl DirSpec {
    /// A direction of this rate, delay and queue without impairments: no outage, loss,
    /// reordering or duplication, and delays as ns-2 applies them (not forced FIFO).
    pub fn new(rate: RateModel, delay: DelayModel, queue: QueueSpec) -> DirSpec {
        DirSpec {
            rate,
            delay,
            queue,
            outages: Vec::new(),
            loss: 0.0,
            fifo: false,
            reorder: 0.0,
            reorder_delay: Duration::ZERO,
            duplicate: 0.0,
        }
    }
}

/// Serialisation rate of a link direction.
#[derive(Clone, Debug)]
pub enum RateModel {
    Constant(u64),
    /// Piecewise-constant: `(time, rate_bps)` points sorted by time, the first at 0.
    /// With `period`, the schedule repeats every `period`.
    Schedule {
        points: Vec<(Duration, u64)>,
        period: Option<Duration>,
    },
    /// A Mahimahi trace: each entry is a delivery opportunity (ms since the start of
    /// the trace) for `mtu` bytes; the trace repeats every `period_ms`.
    Trace(Arc<MahimahiTrace>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MahimahiTrace {
    pub path: PathBuf,
    /// Opportunity times in milliseconds, non-decreasing.
    pub opportunities_ms: Vec<u64>,
    /// The trace repeats with this period (its last timestamp, at least 1 ms).
    pub period_ms: u64,
    /// Bytes each opportunity may carry (Mahimahi: 1500).
    pub mtu: u32,
}

impl MahimahiTrace {
    /// Mean capacity in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        self.opportunities_ms.len() as f64 * self.mtu as f64 * 8.0
            / (self.period_ms as f64 / 1000.0)
    }
}

/// Propagation delay of a link direction.
#[derive(Clone, Debug)]
pub enum DelayModel {
    Constant(Duration),
    /// Piecewise-constant `(time, delay)` points, the first at 0; optional period.
    Schedule {
        points: Vec<(Duration, Duration)>,
        period: Option<Duration>,
    },
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    DropTail {
        limit: QueueLimit,
    },
    /// Random Early Detection (Floyd & Jacobson 1993) as ns-2.35's `queue/red.cc` runs
    /// it, with ns-2's parameter names. `None` thresholds and weight are computed from
    /// the direction's initial rate and delay as ns-2.35 does by default
    /// (`thresh_ 0`, `maxthresh_ 0`, `q_weight_ -1`: `REDQueue::initialize_params`).
    Red {
        /// The hard limit (a packet arriving to a full queue is dropped).
        limit: QueueLimit,
        red: RedParams,
    },
}

/// RED's parameters, with ns-2's names (`queue/red.cc`). `None` thresholds and weight
/// are computed from the direction's initial rate and delay as ns-2.35 does by default
/// (`thresh_ 0`, `maxthresh_ 0`, `q_weight_ -1`: `REDQueue::initialize_params`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Average-queue thresholds, in packets (`thresh_`, `maxthresh_`); with
    /// `queue_in_bytes` they are scaled by `mean_pktsize`.
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    /// EWMA weight of the average queue (`q_weight_`).
    pub w_q: Option<f64>,
    /// Drop probability at `max_th` (`1/linterm_`).
    pub max_p: f64,
    /// Gentle RED: ramp from max_p to 1 between max_th and 2*max_th (`gentle_`).
    pub gentle: bool,
    /// Average packet size in bytes (`mean_pktsize_`): the idle-time decay, the
    /// automatic parameters, and the byte modes.
    pub mean_pktsize: u32,
    /// Wait between drops (`wait_`): no drop while count * p < 1.
    pub wait: bool,
    /// Byte mode (`bytes_`): the drop probability scales with the packet's size
    /// and `count` is counted in mean-sized packets.
    pub bytes: bool,
    /// The average follows the queue in bytes (`queue_in_bytes_`).
    pub queue_in_bytes: bool,
    /// Target queueing delay of the automatic `min_th` (`targetdelay_`).
    pub target_delay: Duration,
}

/// What a sending application offers to its transport: declared, one line per
/// application, by the `apps!` list of `engine/app/mod.rs`.
pub use crate::engine::app::AppSpec;

/// The pages a web application loads (`[flows.web]`).
#[derive(Clone, Debug, PartialEq)]
pub struct WebSpec {
    /// Pages to load, one after the other; `None`: until the end of the run (or `stop`).
    pub pages: Option<u32>,
    /// Pause between the end of one page and the first request of the next.
    pub think: Duration,
    /// Objects per page (the main document and what it refers to).
    pub objects: u32,
    /// Response size of object `k` is `object_sizes[k % len]`.
    pub object_sizes: Vec<u64>,
    /// Bytes of each request (phone to server).
    pub request_size: u64,
    /// Persistent connections, each with one request outstanding at a time.
    pub connections: u32,
    /// The main document (object 0) is fetched alone before the others are requested.
    pub main_first: bool,
}

impl Default for WebSpec {
    /// 44 objects of 7475 bytes (7.3 KiB): the average page (320 KB) and GET (7.3 KB)
    /// of the web metrics (Ramachandran, Google, 2010) cited by the FLD_TCP slides (Moktan,
    /// "In the Interest of the Short: An approach for e2e congestion control", talk
    /// slides, Aalto University, 2012). Assumed: 700-byte
    /// requests (HTTP/1.1 request headers run to several hundred bytes), 6 persistent
    /// connections (browsers' per-host limit), 1 s think time, main document first.
    fn default() -> Self {
        WebSpec {
            pages: None,
            think: Duration::from_secs(1),
            objects: 44,
            object_sizes: vec![7475],
            request_size: 700,
            connections: 6,
            main_first: true,
        }
    }
}

/// How the receiving application reads from the receive buffer.
#[derive(Clone, Debug, PartialEq)]
pub enum ReaderSpec {
    /// Reads everything as soon as it is in order.
    Greedy,
    /// Reads at most `rate_bps` on average, in chunks every `interval`.
    Constant { rate_bps: u64, interval: Duration },
    /// Cycles through `rates_bps`, each held for `step` (e.g. <0,6,6> Mb/s).
    Steps {
        rates_bps: Vec<u64>,
        step: Duration,
        interval: Duration,
    },
    /// `mean + amplitude * sin(2 pi t / period + phase)`, clipped at zero.
    Sine {
        mean_bps: u64,
        amplitude_bps: u64,
        period: Duration,
        phase_rad: f64,
        interval: Duration,
    },
}

/// Transport of a flow.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// Read-only once the scenario is built: flows with the same configuration share
    /// one, and the engine hands it to both machines of each (`TcpSender::new`), so a
    /// flow keeps no copy of its own (issue 19's memory per flow).
    Tcp(Arc<TcpConfig>),
    /// TFRC (RFC 5348) over UDP, or DCCP CCID 3 (RFC 4342): unreliable datagrams of
    /// `s` bytes paced by the TFRC rate.
    Tfrc(Box<TfrcSpec>),
}

impl Transport {
    /// The TCP configuration of a TCP flow.
    pub fn tcp(&self) -> Option<&TcpConfig> {
        match self {
            Transport::Tcp(c) => Some(c),
            Transport::Tfrc(_) => None,
        }
    }
    /// The TFRC settings of a TFRC / DCCP flow.
    pub fn tfrc(&self) -> Option<&TfrcSpec> {
        match self {
            Transport::Tfrc(t) => Some(t),
            Transport::Tcp(_) => None,
        }
    }
}

/// A TFRC or DCCP CCID 3 flow (`transport = "tfrc"` or `"dccp-ccid3"`, `[flows.tfrc]`).
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcSpec {
    /// The machines' configuration (segment size s, feedback mode, CCID 3 rules, ...).
    pub cfg: TfrcConfig,
    /// DCCP CCID 3 (`"dccp-ccid3"`): captured as DCCP; plain TFRC is captured as UDP.
    pub dccp: bool,
    /// Bytes of a feedback packet on the wire.
    pub feedback_bytes: u32,
    /// Freeze-DCCP, if on.
    pub freeze: Option<FreezeSpec>,
}

/// When and where Freeze-DCCP is triggered: `warning` before every outage of a link
/// direction on the flow's path, the chosen endpoint(s) call `freeze()`; when the
/// outage ends they call `unfreeze()`.
#[derive(Clone, Debug, PartialEq)]
pub struct FreezeSpec {
    pub warning: FreezeWarning,
    pub side: FreezeSide,
}

/// How long before a disconnection the freeze is triggered.
#[derive(Clone, Debug, PartialEq)]
pub enum FreezeWarning {
    Fixed(Duration),
    /// The path's two-way propagation delay at the flow's start (\[GUESS\]: "about 1
    /// RTT, as in Freeze-TCP"; docs/schemes/freeze-dccp.md).
    Rtt,
}

named_enum! {
    /// Which endpoint predicts the disconnection and detects the reconnection.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub enum FreezeSide ("side", expected "\"sender\" or \"receiver\"", quoting lowercase) {
        Sender = "sender",
        Receiver = "receiver",
    }
}

#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    /// Sending node (index into `Scenario::nodes`).
    pub src: usize,
    /// Receiving node.
    pub dst: usize,
    pub start: Duration,
    /// The sender stops offering new data at this time (bulk/on-off); `None` = never.
    pub stop: Option<Duration>,
    pub transport: Transport,
    pub app: AppSpec,
    pub reader: ReaderSpec,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MeasureSpec {
    /// Named intervals `(label, start, end)` over which goodput is reported.
    pub intervals: Vec<(String, Duration, Duration)>,
    /// Sampling period of the time series; `None` disables them.
    pub sample_interval: Option<Duration>,
    /// Packet capture points (written as pcap files when the run has an output folder).
    pub capture: CaptureSpec,
}

/// Where packets are captured.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CaptureSpec {
    /// Hosts (node indices): every packet they send or receive, stamped when sent or
    /// received.
    pub hosts: Vec<usize>,
    /// Link directions (`2 * link + 0` for a -> b, `+ 1` for b -> a): every packet as it
    /// arrives at the far end.
    pub dirs: Vec<usize>,
    /// Bytes of each packet stored (the rest of the zero payload is left out).
    pub snaplen: u32,
}

impl CaptureSpec {
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty() && self.dirs.is_empty()
    }
}
