//! Resource budgets: what a scenario will need, estimated before it runs.
//!
//! A valid scenario can still ask for more than the machine has: `sample_interval =
//! "1ns"` on a 60 s run asks for 6·10^10 samples per flow and would fill every byte of
//! memory long before it ended. [`estimate`] computes, from the scenario alone and
//! without running it,
//!
//! * the series rows: `(floor(duration / sample_interval) + 1)` samples, each one row
//!   per flow and one row per link direction (the engine samples at 0 and then every
//!   interval up to and including the end);
//! * the packets that can be in flight at once: the smaller of what the links can hold
//!   (every queue full plus every pipe full of the smallest packet) and what the
//!   windows allow (each TCP flow's receive buffer in segments, plus one ACK per
//!   segment); with a TFRC flow, which has no window, the links bound it alone;
//! * the memory both take, from the per-row and per-packet costs below.
//!
//! [`check`] refuses a scenario whose estimate exceeds a budget, as a
//! [`ScenarioError`] naming the key that causes most of it. The costs are upper
//! bounds of the engine's own storage, not of the operating system's accounting:
//! the estimate is meant to catch a run that cannot fit, not to predict its peak.

use crate::model::{DelayModel, QueueLimit, QueueSpec, RateModel, Scenario, Transport};
use crate::ScenarioError;
use serde::Serialize;

/// The default budget: 4 GiB, a sixth of the 24 GB machine the suite runs on, so that
/// two sweep workers and the rest of the system fit beside a run at the limit.
pub const DEFAULT_BUDGET_BYTES: u64 = 4 << 30;

/// Bytes of one flow's rows of a sample held in memory: its row of the flow series
/// (three eight-byte columns, the time and a four-byte index: `results::FlowSeries`)
/// and of its transport's series (TCP, the larger: eleven eight-byte columns, the time,
/// a four-byte index and a four-byte state: `results::TcpSeries`), doubled for `Vec`
/// growth (a column's capacity is at most twice its length), plus the two rows as CSV
/// text (the series cross to Python as CSV; the two rows of a flow of
/// `examples/cellular_trace.toml` measure about 130 bytes, and 320 leaves room for
/// longer numbers).
pub const FLOW_ROW_BYTES: u64 = 2 * ((4 * 8 + 4) + (12 * 8 + 2 * 4)) + 320;

/// Bytes of one link-series row: four eight-byte columns and one four-byte one
/// (`results::LinkSeries`), doubled for `Vec` growth, plus 64 bytes of CSV (a row of
/// `examples/cellular_trace.toml` measures about 40).
pub const LINK_ROW_BYTES: u64 = 2 * (4 * 8 + 4) + 64;

/// The smallest packet the engine carries (a bare TCP ACK: 20 bytes of IP header and
/// 20 of TCP, RFC 9293 §3.1), which bounds how many packets a byte-limited queue or a
/// pipe can hold.
const MIN_PACKET_BYTES: u64 = 40;

/// What a scenario will need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Samples taken (0 without sampling).
    pub samples: u64,
    pub flow_rows: u64,
    pub link_rows: u64,
    /// Packets that can exist at once.
    pub packets: u64,
    /// Bytes of the series and of the packets.
    pub series_bytes: u64,
    pub packet_bytes: u64,
    pub bytes: u64,
    /// The dotted key behind the larger of the two parts, and what it is set to.
    pub key: String,
}

/// Bytes the engine keeps for one packet in a queue or a pipe.
fn packet_cost() -> u64 {
    crate::engine::PACKET_BYTES as u64
}

fn max_rate_bps(r: &RateModel) -> u64 {
    match r {
        RateModel::Constant(bps) => *bps,
        RateModel::Schedule { points, .. } => points.iter().map(|p| p.1).max().unwrap_or(0),
        // A trace delivers at most one `mtu` per opportunity; several may share a
        // millisecond, so bound it by the busiest millisecond.
        RateModel::Trace(t) => {
            let mut busiest = 0u64;
            let mut run = 0u64;
            let mut last = None;
            for &ms in &t.opportunities_ms {
                run = if last == Some(ms) { run + 1 } else { 1 };
                last = Some(ms);
                busiest = busiest.max(run);
            }
            busiest.saturating_mul(t.mtu as u64 * 8 * 1000)
        }
    }
}

fn max_delay_s(d: &DelayModel) -> f64 {
    match d {
        DelayModel::Constant(x) => x.as_secs_f64(),
        DelayModel::Schedule { points, .. } => {
            points.iter().map(|p| p.1.as_secs_f64()).fold(0.0, f64::max)
        }
    }
}

fn queue_packets(q: &QueueSpec) -> u64 {
    let limit = match q {
        QueueSpec::DropTail { limit } | QueueSpec::Red { limit, .. } => limit,
    };
    match limit {
        QueueLimit::Packets(p) => *p as u64,
        QueueLimit::Bytes(b) => b.div_ceil(MIN_PACKET_BYTES),
    }
}

/// Estimates what running `sc` will need (see the module documentation).
pub fn estimate(sc: &Scenario) -> Estimate {
    let samples = match sc.measure.sample_interval {
        Some(iv) if !iv.is_zero() => sc.duration.as_nanos() / iv.as_nanos() + 1,
        _ => 0,
    };
    let dirs = 2 * sc.links.len() as u64;
    let flow_rows = samples.saturating_mul(sc.flows.len() as u64);
    let link_rows = samples.saturating_mul(dirs);
    let series_bytes = flow_rows
        .saturating_mul(FLOW_ROW_BYTES)
        .saturating_add(link_rows.saturating_mul(LINK_ROW_BYTES));

    // What the links can hold, and the link that holds most.
    let mut link_bound = 0u64;
    let mut biggest_link = (0u64, 0usize);
    for (i, l) in sc.links.iter().enumerate() {
        let mut held = 0u64;
        for d in &l.dirs {
            let pipe_bits = max_rate_bps(&d.rate) as f64 * max_delay_s(&d.delay);
            let pipe = (pipe_bits / 8.0 / MIN_PACKET_BYTES as f64).ceil();
            let pipe = if pipe.is_finite() && pipe < u64::MAX as f64 {
                pipe as u64
            } else {
                u64::MAX
            };
            held = held
                .saturating_add(queue_packets(&d.queue))
                .saturating_add(pipe);
        }
        link_bound = link_bound.saturating_add(held);
        if held > biggest_link.0 {
            biggest_link = (held, i);
        }
    }
    // What the windows allow; a TFRC flow has none.
    let mut window_bound = Some(0u64);
    let mut biggest_flow = (0u64, 0usize);
    for (i, f) in sc.flows.iter().enumerate() {
        match &f.transport {
            Transport::Tcp(c) => {
                let segs = c.rcv_buf.div_ceil(c.mss.max(1) as u64).saturating_mul(2);
                window_bound = window_bound.map(|w| w.saturating_add(segs));
                if segs > biggest_flow.0 {
                    biggest_flow = (segs, i);
                }
            }
            Transport::Tfrc(_) => window_bound = None,
        }
    }
    let (packets, packet_key) = match window_bound {
        Some(w) if w < link_bound => (w, format!("flows.{}.tcp.rcv_buf", biggest_flow.1)),
        _ => (link_bound, format!("links.{}.queue_limit", biggest_link.1)),
    };
    let packet_bytes = packets.saturating_mul(packet_cost());
    let key = if series_bytes >= packet_bytes {
        "measure.sample_interval".to_string()
    } else {
        packet_key
    };
    Estimate {
        samples,
        flow_rows,
        link_rows,
        packets,
        series_bytes,
        packet_bytes,
        bytes: series_bytes.saturating_add(packet_bytes),
        key,
    }
}

/// A size for people: bytes, KiB, MiB, GiB or TiB with one decimal.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Refuses `sc` when its estimate exceeds `budget_bytes`.
pub fn check(sc: &Scenario, budget_bytes: u64) -> Result<Estimate, ScenarioError> {
    let e = estimate(sc);
    if e.bytes <= budget_bytes {
        return Ok(e);
    }
    let reason = format!(
        "the run would need about {} of memory ({} series rows, {} packets in flight), \
         over the budget of {}; raise it with --budget SIZE or turn the check off with \
         --no-budget",
        human_size(e.bytes),
        e.flow_rows.saturating_add(e.link_rows),
        e.packets,
        human_size(budget_bytes),
    );
    Err(ScenarioError {
        file: sc.source.clone(),
        key: Some(e.key),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "[run]\nduration = \"60s\"\n[[links]]\na = \"s\"\nb = \"c\"\nrate = \"10Mbps\"\n\
             delay = \"20ms\"\nqueue_limit = \"100p\"\n[[flows]]\nfrom = \"s\"\nto = \"c\"\n\
             app = \"bulk\"\n{extra}"
        );
        crate::load_str(&text, None, &[]).expect("a valid scenario")
    }

    #[test]
    fn one_nanosecond_sampling_over_a_minute_is_refused_naming_sample_interval() {
        let sc = scenario("[measure]\nsample_interval = \"1ns\"\n");
        let e = estimate(&sc);
        assert_eq!(e.samples, 60_000_000_001);
        assert_eq!(e.flow_rows, 60_000_000_001);
        assert_eq!(e.link_rows, 120_000_000_002);
        let err = check(&sc, DEFAULT_BUDGET_BYTES).expect_err("refused");
        assert_eq!(err.key.as_deref(), Some("measure.sample_interval"));
        assert!(err.reason.contains("series rows"), "{}", err.reason);
    }

    #[test]
    fn sizes_for_people_use_binary_units() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(4 << 30), "4.0 GiB");
        assert_eq!(human_size(3 << 19), "1.5 MiB");
    }

    #[test]
    fn the_default_sampling_fits_the_default_budget() {
        let sc = scenario("");
        let e = check(&sc, DEFAULT_BUDGET_BYTES).expect("fits");
        // 100 ms over 60 s: 601 samples of one flow and two link directions.
        assert_eq!((e.samples, e.flow_rows, e.link_rows), (601, 601, 1202));
    }

    #[test]
    fn packets_are_bounded_by_the_windows_when_all_flows_are_tcp() {
        // A queue of a billion packets cannot fill with one flow whose window is
        // 4 MB: the window bounds the packets.
        let mut big = scenario("");
        big.links[0].dirs[0].queue = QueueSpec::DropTail {
            limit: QueueLimit::Packets(1_000_000_000),
        };
        let e = estimate(&big);
        let tcp = big.flows[0].transport.tcp().expect("tcp");
        assert_eq!(e.packets, 2 * tcp.rcv_buf.div_ceil(tcp.mss as u64));
    }

    #[test]
    fn a_huge_receive_buffer_over_a_huge_queue_is_refused_naming_the_buffer() {
        let mut sc = scenario("[measure]\nsample_interval = false\n");
        sc.links[0].dirs[0].queue = QueueSpec::DropTail {
            limit: QueueLimit::Packets(4_000_000_000),
        };
        if let Transport::Tcp(c) = &mut sc.flows[0].transport {
            std::sync::Arc::make_mut(c).rcv_buf = 1 << 40;
        }
        let err = check(&sc, DEFAULT_BUDGET_BYTES).expect_err("refused");
        assert_eq!(err.key.as_deref(), Some("flows.0.tcp.rcv_buf"));
        let ok = check(&sc, u64::MAX);
        assert!(ok.is_ok());
    }
}
