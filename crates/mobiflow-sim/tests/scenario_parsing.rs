//! Scenario files -> `Scenario`: the examples, overrides, and the messages of every
//! class of error (file, dotted key, reason).

mod common;

use common::overrides as ov;
use mobiflow_proto::cc::{CcKind, CubicParams};
use mobiflow_proto::tcp::TcpConfig;
use mobiflow_proto::time::Duration;
use mobiflow_sim::model::{
    AppSpec, DelayModel, QueueLimit, QueueSpec, RateModel, ReaderSpec, RedParams, Scenario,
    Transport,
};
use mobiflow_sim::scenario::{apply_override, load_file, load_str, ScenarioError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> PathBuf {
    repo_root().join("scenarios/examples").join(name)
}

fn traces_dir() -> PathBuf {
    repo_root().join("traces")
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn tcp(s: &Scenario, flow: usize) -> &TcpConfig {
    match &s.flows[flow].transport {
        Transport::Tcp(c) => c,
        Transport::Tfrc(_) => panic!("flow {flow} is not TCP"),
    }
}

fn assumed(s: &Scenario, key: &str) -> Option<String> {
    s.assumed
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

/// A minimal valid scenario to which each error test adds one mistake.
const BASE: &str = r#"
[[links]]
name = "access"
a = "server"
b = "phone"
rate = "15Mbps"
delay = "265ms"

[[flows]]
name = "bulk"
from = "server"
to = "phone"
"#;

fn load(text: &str) -> Result<Scenario, ScenarioError> {
    load_str(text, Some(Path::new("x.toml")), &[])
}

/// The message of loading `text` as `x.toml`, which must fail.
fn error(text: &str) -> String {
    error_with(text, &[])
}

fn error_with(text: &str, overrides: &[(&str, &str)]) -> String {
    match load_str(text, Some(Path::new("x.toml")), &ov(overrides)) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn load_with(text: &str, overrides: &[(&str, &str)]) -> Scenario {
    load_str(text, Some(Path::new("x.toml")), &ov(overrides)).unwrap()
}

fn assert_starts(msg: &str, prefix: &str) {
    assert!(
        msg.starts_with(prefix),
        "message:\n  {msg}\nshould start with:\n  {prefix}"
    );
}

// ---------------------------------------------------------------------------------
// The examples
// ---------------------------------------------------------------------------------

#[test]
fn every_example_loads() {
    let dir = repo_root().join("scenarios/examples");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        if path.file_name().unwrap() == "cellular_trace.toml" && !traces_dir().is_dir() {
            eprintln!("skipping {}: no {}", path.display(), traces_dir().display());
            continue;
        }
        let s = load_file(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.name, path.file_stem().unwrap().to_str().unwrap());
        assert_eq!(s.source.as_deref(), Some(path.as_path()));
        n += 1;
    }
    assert!(n >= 3, "only {n} examples found in {}", dir.display());
}

#[test]
fn rwnd_limited_is_a_256kb_buffer_over_a_530ms_rtt() {
    let s = load_file(&example("rwnd_limited.toml"), &[]).unwrap();
    assert_eq!(s.duration, secs(60));
    assert_eq!(s.seed, 1);
    assert_eq!(s.nodes, ["server", "phone"]);
    assert_eq!(s.links.len(), 1);
    let l = &s.links[0];
    assert_eq!((l.name.as_str(), l.a, l.b), ("access", 0, 1));
    for d in &l.dirs {
        assert!(matches!(d.rate, RateModel::Constant(15_000_000)));
        assert!(matches!(d.delay, DelayModel::Constant(x) if x == ms(265)));
        assert_eq!(
            d.queue,
            QueueSpec::DropTail {
                limit: QueueLimit::Packets(100)
            }
        );
        assert!(d.outages.is_empty());
    }
    let f = &s.flows[0];
    assert_eq!(
        (f.src, f.dst, f.start, f.stop),
        (0, 1, Duration::ZERO, None)
    );
    assert_eq!(f.app, AppSpec::Bulk);
    assert_eq!(f.reader, ReaderSpec::Greedy);
    let c = tcp(&s, 0);
    assert_eq!(c.rcv_buf, 256 * 1024);
    assert_eq!(c.cc, CcKind::NewReno);
    assert_eq!(
        TcpConfig {
            rcv_buf: 256 * 1024,
            ..TcpConfig::default()
        },
        *c
    );
    assert_eq!(
        s.measure.intervals,
        vec![("steady".to_string(), secs(10), secs(60))]
    );
    assert_eq!(s.measure.sample_interval, Some(ms(100)));
    // rcv_buf / RTT is about 3.96 Mb/s.
    let rtt = 2.0 * 0.265;
    let goodput = c.rcv_buf as f64 * 8.0 / rtt;
    assert!((goodput - 3.96e6).abs() < 0.01e6, "{goodput}");
}

#[test]
fn defaults_that_are_assumptions_are_listed_and_set_values_are_not() {
    let s = load_file(&example("rwnd_limited.toml"), &[]).unwrap();
    assert_eq!(assumed(&s, "links.0.queue_limit").as_deref(), Some("100p"));
    assert_eq!(
        assumed(&s, "tcp.max_backoff_exponent").as_deref(),
        Some("6")
    );
    assert_eq!(assumed(&s, "tcp.delack_timeout").as_deref(), Some("200ms"));
    for set in ["run.duration", "tcp.rcv_buf", "measure.sample_interval"] {
        assert_eq!(assumed(&s, set), None, "{set} is set by the file");
    }
    // Unset, they are reported.
    let s = load(BASE).unwrap();
    assert_eq!(assumed(&s, "run.duration").as_deref(), Some("60s"));
    assert_eq!(assumed(&s, "tcp.rcv_buf").as_deref(), Some("4MiB"));
    assert_eq!(
        assumed(&s, "measure.sample_interval").as_deref(),
        Some("100ms")
    );
    assert_eq!(s.name, "x");
}

#[test]
fn outage_example_has_one_outage_both_ways_and_three_intervals() {
    let s = load_file(&example("outage.toml"), &[]).unwrap();
    for d in &s.links[0].dirs {
        assert_eq!(d.outages, vec![(secs(20), secs(30))]);
        assert!(matches!(d.rate, RateModel::Constant(10_000_000)));
        assert!(matches!(d.delay, DelayModel::Constant(x) if x == ms(50)));
    }
    let labels: Vec<&str> = s
        .measure
        .intervals
        .iter()
        .map(|(l, _, _)| l.as_str())
        .collect();
    // Sorted by start time, not by label.
    assert_eq!(labels, ["before", "during", "after"]);
    assert_eq!(assumed(&s, "links.0.queue_limit"), None);
}

#[test]
fn fluctuating_reader_reads_0_6_6_mbps_in_1s_steps() {
    let s = load_file(&example("fluctuating_reader.toml"), &[]).unwrap();
    assert_eq!(s.duration, secs(120));
    assert_eq!(tcp(&s, 0).rcv_buf, 262_144);
    assert_eq!(
        s.flows[0].reader,
        ReaderSpec::Steps {
            rates_bps: vec![0, 6_000_000, 6_000_000],
            step: secs(1),
            interval: ms(10),
        }
    );
    assert_eq!(
        assumed(&s, "flows.0.reader.interval").as_deref(),
        Some("10ms")
    );
}

#[test]
fn cellular_example_reads_both_traces_relative_to_its_file() {
    if !traces_dir().is_dir() {
        eprintln!("skipping: no {}", traces_dir().display());
        return;
    }
    let s = load_file(&example("cellular_trace.toml"), &[]).unwrap();
    let [down, up] = &s.links[0].dirs;
    let (RateModel::Trace(down), RateModel::Trace(up)) = (&down.rate, &up.rate) else {
        panic!("expected traces");
    };
    assert!(down.path.ends_with("traces/TMobile-UMTS-driving.down"));
    assert!(up.path.ends_with("traces/TMobile-UMTS-driving.up"));
    assert_eq!(down.mtu, 1500);
    assert_eq!(down.opportunities_ms.len(), 156_262);
    assert_eq!(down.period_ms, 928_424);
    assert!((down.mean_rate_bps() - 2.02e6).abs() < 0.01e6);
    assert!((up.mean_rate_bps() - 0.943e6).abs() < 0.01e6);
    assert_eq!(tcp(&s, 0).cc, CcKind::Cubic(CubicParams::default()));
}

// ---------------------------------------------------------------------------------
// Schema details
// ---------------------------------------------------------------------------------

#[test]
fn per_direction_settings_override_the_link() {
    let s = load(&format!(
        r#"{BASE}
[links.ab]
rate_schedule = [["0s", "2Mbps"], ["1s", "4Mbps"]]
schedule_period = "3s"
queue = "red"
queue_limit = "64KB"
red = {{ max_p = 0.2 }}
[links.ba]
delay_schedule = [["0s", "1ms"], ["10s", "70ms"]]
outages = [["1s", "2s"], ["3s", "4s"]]
"#
    ))
    .unwrap();
    let [ab, ba] = &s.links[0].dirs;
    match &ab.rate {
        RateModel::Schedule { points, period } => {
            assert_eq!(points, &vec![(secs(0), 2_000_000), (secs(1), 4_000_000)]);
            assert_eq!(*period, Some(secs(3)));
        }
        r => panic!("{r:?}"),
    }
    assert!(matches!(ab.delay, DelayModel::Constant(x) if x == ms(265)));
    assert_eq!(
        ab.queue,
        QueueSpec::Red {
            limit: QueueLimit::Bytes(65536),
            red: RedParams {
                // ns-2.35's defaults: automatic thresholds and weight.
                min_th: None,
                max_th: None,
                w_q: None,
                max_p: 0.2,
                gentle: true,
                mean_pktsize: 500,
                wait: true,
                bytes: true,
                queue_in_bytes: true,
                target_delay: Duration::from_millis(5),
            },
        }
    );
    assert!(ab.outages.is_empty());
    assert!(matches!(ba.rate, RateModel::Constant(15_000_000)));
    match &ba.delay {
        DelayModel::Schedule { points, period } => {
            assert_eq!(points, &vec![(secs(0), ms(1)), (secs(10), ms(70))]);
            assert_eq!(*period, None);
        }
        d => panic!("{d:?}"),
    }
    assert_eq!(ba.outages, vec![(secs(1), secs(2)), (secs(3), secs(4))]);
    // RED's defaults are ns-2.35's, not assumptions of the project.
    assert_eq!(assumed(&s, "links.0.ab.red.min_th"), None);
    assert_eq!(
        assumed(&s, "links.0.ba.queue_limit").as_deref(),
        Some("100p")
    );
    assert_eq!(assumed(&s, "links.0.queue_limit"), None);
}

#[test]
fn applications_and_readers_of_every_kind() {
    let s = load(&format!(
        r#"{BASE}
start = "1s"
stop = "30s"
app = {{ kind = "bursts", at = ["1s", "5s"], sizes = "512KB" }}
reader = {{ kind = "sine", mean = "4Mbps", amplitude = "4Mbps", period = "10s", phase = 1 }}

[[flows]]
from = "phone"
to = "server"
app = {{ kind = "sized", size = "1.5MB" }}
reader = {{ kind = "constant", rate = "4Mbps", interval = "20ms" }}

[[flows]]
from = "phone"
to = "server"
app = {{ kind = "onoff", burst = "100KB", period = "1s" }}
"#
    ))
    .unwrap();
    let f = &s.flows;
    assert_eq!((f[0].start, f[0].stop), (secs(1), Some(secs(30))));
    assert_eq!(
        f[0].app,
        AppSpec::Bursts {
            at: vec![secs(1), secs(5)],
            sizes: vec![524_288, 524_288]
        }
    );
    assert_eq!(
        f[0].reader,
        ReaderSpec::Sine {
            mean_bps: 4_000_000,
            amplitude_bps: 4_000_000,
            period: secs(10),
            phase_rad: 1.0,
            interval: ms(10),
        }
    );
    assert_eq!((f[1].name.as_str(), f[1].src, f[1].dst), ("flow1", 1, 0));
    assert_eq!(f[1].app, AppSpec::Sized { size: 1_572_864 });
    assert_eq!(
        f[1].reader,
        ReaderSpec::Constant {
            rate_bps: 4_000_000,
            interval: ms(20)
        }
    );
    assert_eq!(
        f[2].app,
        AppSpec::OnOff {
            burst: 102_400,
            period: secs(1)
        }
    );
}

/// A TCP flow whose settings come out equal to the previous TCP flow's shares its
/// configuration (what a flow keeps, issue 19); one whose settings differ has its own,
/// which the next equal one shares.
#[test]
fn flows_with_equal_tcp_settings_share_one_configuration() {
    let flow = |name: &str, extra: &str| {
        format!("[[flows]]\nname = \"{name}\"\nfrom = \"server\"\nto = \"phone\"\n{extra}")
    };
    let s = load(&format!(
        "{BASE}{}{}{}{}",
        flow("b", ""),
        flow("c", "[flows.tcp]\nmss = 1000\n"),
        flow("d", "[flows.tcp]\nmss = 1000\n"),
        flow("e", "")
    ))
    .unwrap();
    let cfg = |i: usize| match &s.flows[i].transport {
        Transport::Tcp(c) => Arc::clone(c),
        Transport::Tfrc(_) => panic!("flow {i} is not TCP"),
    };
    assert!(Arc::ptr_eq(&cfg(0), &cfg(1)));
    assert!(!Arc::ptr_eq(&cfg(1), &cfg(2)));
    assert_eq!(cfg(2).mss, 1000);
    assert!(Arc::ptr_eq(&cfg(2), &cfg(3)));
    assert!(!Arc::ptr_eq(&cfg(3), &cfg(4)));
    assert_eq!(*cfg(4), *cfg(0));
}

#[test]
fn tcp_settings_layer_profile_then_tcp_then_flow_tcp_then_cc() {
    let s = load(&format!(
        r#"
[tcp]
profile = "ns2"
mss = 1460
initial_ssthresh = "inf"
max_send_window = "20000B"
{BASE}
cc = "cubic"
[flows.tcp]
profile = "rfc"
initial_window = "rfc6928"
wscale = 7
min_rto = "200ms"
"#
    ))
    .unwrap();
    let c = tcp(&s, 0);
    // The flow's profile is rfc; [tcp]'s fields still apply on top of it.
    let want = TcpConfig {
        mss: 1460,
        initial_ssthresh: u64::MAX,
        max_send_window: 20_000,
        cc: CcKind::Cubic(CubicParams::default()),
        initial_window: mobiflow_proto::tcp::InitialWindow::Rfc6928,
        wscale: Some(7),
        min_rto: ms(200),
        ..TcpConfig::default()
    };
    assert_eq!(*c, want);
}

#[test]
fn linux_profile_gives_the_kernel_defaults() {
    let s = load(&format!("[tcp]\nprofile = \"linux\"\n{BASE}")).unwrap();
    let c = tcp(&s, 0);
    assert_eq!(*c, TcpConfig::linux());
    assert_eq!((c.mss, c.initial_window_bytes()), (1448, 10 * 1448));
    assert_eq!(c.min_rto, Duration::from_millis(200));
    assert_eq!(c.cc, CcKind::Cubic(CubicParams::linux()));
    // The kernel's own timer values are not assumptions under this profile.
    assert!(!s.assumed.iter().any(|(k, _)| k == "tcp.delack_timeout"));
    assert!(s.assumed.iter().any(|(k, _)| k == "tcp.rcv_buf"));
}

/// The linux profile's receiver and timers (issue 20): Linux delayed ACKs, RTO formula,
/// restart after idle and auto-tuning, each of which a scenario can turn back to the
/// RFC's; a flow without `flow_control` keeps the profile's; unknown names are refused.
#[test]
fn linux_profile_receiver_and_timer_keys() {
    use mobiflow_proto::flow::FlowControl;
    use mobiflow_proto::tcp::{AckPolicy, IdleRestart, RtoFormula};
    let s = load(&format!("[tcp]\nprofile = \"linux\"\n{BASE}")).unwrap();
    let c = tcp(&s, 0);
    assert_eq!(c.ack_policy, AckPolicy::Linux);
    assert_eq!(c.rto_formula, RtoFormula::Linux);
    assert_eq!(c.idle_restart_rule, IdleRestart::Linux);
    assert_eq!(c.flow_control.name(), "linux");
    assert_eq!(c.rcv_buf, 3 << 20);
    let text = format!(
        "[tcp]\nprofile = \"linux\"\nack_policy = \"rfc5681\"\nrto_formula = \"rfc6298\"\n\
         idle_restart_rule = \"rfc5681\"\n{BASE}flow_control = \"classic\"\n"
    );
    let s = load(&text).unwrap();
    let c = tcp(&s, 0);
    assert_eq!(
        (c.ack_policy, c.rto_formula, c.idle_restart_rule),
        (
            AckPolicy::Rfc5681,
            RtoFormula::Rfc6298,
            IdleRestart::Rfc5681
        )
    );
    assert_eq!(c.flow_control, FlowControl::Classic);
    let s = load(&format!("{BASE}flow_control = \"linux\"\n")).unwrap();
    assert_eq!(tcp(&s, 0).flow_control.name(), "linux");
    assert_eq!(tcp(&s, 0).ack_policy, AckPolicy::Rfc5681);
    let e = error(&format!("[tcp]\nack_policy = \"bsd\"\n{BASE}"));
    assert!(
        e.contains("tcp.ack_policy: unknown ack_policy \"bsd\""),
        "{e}"
    );
    let e = error(&format!("[tcp]\nrto_formula = \"bsd\"\n{BASE}"));
    assert!(e.contains("tcp.rto_formula: unknown rto_formula"), "{e}");
    let e = error(&format!("[tcp]\nidle_restart_rule = \"bsd\"\n{BASE}"));
    assert!(
        e.contains("tcp.idle_restart_rule: unknown idle_restart_rule"),
        "{e}"
    );
}

/// `[flows.linux]`: Linux's receive buffer, read under the linux profile whether or
/// not the flow names its `flow_control`, refused with any other policy, checked.
#[test]
fn flows_linux_table_sets_the_receive_buffer() {
    use mobiflow_proto::flow::{FlowControl, LinuxRcvConfig};
    let table = "[flows.linux]\nscaling_ratio = 0.78125\ninitial_buf = \"64KB\"\n";
    let want = FlowControl::Linux(LinuxRcvConfig {
        initial_buf: 65_536, // KB is 1024 bytes (docs/scenarios.md, units)
        scaling_ratio: 0.78125,
    });
    let s = load(&format!("[tcp]\nprofile = \"linux\"\n{BASE}{table}")).unwrap();
    assert_eq!(tcp(&s, 0).flow_control, want);
    let s = load(&format!("{BASE}flow_control = \"linux\"\n{table}")).unwrap();
    assert_eq!(tcp(&s, 0).flow_control, want);
    let e = error(&format!("{BASE}{table}"));
    assert_eq!(
        e,
        "x.toml: flows.0.linux: only used with flow_control = \"linux\" (flow_control is \"classic\")"
    );
    let e = error(&format!(
        "[tcp]\nprofile = \"linux\"\n{BASE}[flows.linux]\nscaling_ratio = 0\n"
    ));
    assert_eq!(e, "x.toml: flows.0.linux.scaling_ratio: must be in (0, 1]");
}

#[test]
fn tcp_cubic_table_sets_the_knobs_over_the_profiles_cubic() {
    use mobiflow_proto::cc::{CubicArithmetic, HystartDetect};
    // The linux profile's CUBIC is the kernel's, also when the flow names cubic.
    let s = load(&format!(
        "[tcp]\nprofile = \"linux\"\n{BASE}cc = \"cubic\"\n"
    ))
    .unwrap();
    assert_eq!(tcp(&s, 0).cc, CcKind::Cubic(CubicParams::linux()));
    // [tcp.cubic] changes it key by key; [flows.tcp.cubic] wins over [tcp.cubic].
    let s = load(&format!(
        "[tcp]\nprofile = \"linux\"\n[tcp.cubic]\nhystart = false\nhz = 250\n{BASE}[flows.tcp.cubic]\nhz = 300\nhystart_detect = \"delay\"\n"
    ))
    .unwrap();
    let want = CubicParams {
        hystart: false,
        hz: 300,
        hystart_detect: HystartDetect::Delay,
        ..CubicParams::linux()
    };
    assert_eq!(tcp(&s, 0).cc, CcKind::Cubic(want));
    // Under the rfc profile: RFC 9438 without HyStart, unless asked.
    let s = load(&format!(
        "[tcp]\ncc = \"cubic\"\n[tcp.cubic]\nhystart = true\n{BASE}"
    ))
    .unwrap();
    let want = CubicParams {
        hystart: true,
        ..CubicParams::default()
    };
    assert_eq!(want.arithmetic, CubicArithmetic::Rfc9438);
    assert_eq!(tcp(&s, 0).cc, CcKind::Cubic(want));
}

#[test]
fn tcp_cubic_table_is_refused_without_a_cubic_flow() {
    let msg = error(&format!(
        "[tcp]\ncc = \"reno\"\n[tcp.cubic]\nhystart = true\n{BASE}"
    ));
    assert!(
        msg.contains("tcp.cubic") && msg.contains("no flow has cc = \"cubic\""),
        "{msg}"
    );
    let msg = error(&format!(
        "{BASE}cc = \"reno\"\n[flows.tcp.cubic]\nhystart = true\n"
    ));
    assert!(msg.contains("only used with cc = \"cubic\""), "{msg}");
    let msg = error(&format!(
        "[tcp]\ncc = \"cubic\"\n[tcp.cubic]\narithmetic = \"bsd\"\n{BASE}"
    ));
    assert!(msg.contains("unknown cubic arithmetic"), "{msg}");
}

#[test]
fn ns2_profile_gives_ns2_conventions() {
    let s = load(&format!("[tcp]\nprofile = \"ns2\"\n{BASE}")).unwrap();
    assert_eq!(*tcp(&s, 0), TcpConfig::ns2());
    // Only rcv_buf is an assumption under the ns-2 profile.
    let tcp_assumed: Vec<&str> = s
        .assumed
        .iter()
        .filter(|(k, _)| k.starts_with("tcp."))
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(tcp_assumed, ["tcp.rcv_buf"]);
}

#[test]
fn traces_are_parsed_and_shared_between_links() {
    let dir = std::env::temp_dir().join(format!("mobiflow-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.down"), "0\n0\n5\n\n12\n").unwrap();
    std::fs::write(dir.join("zero.down"), "0\n").unwrap();
    let text = r#"
[[links]]
a = "s"
b = "r"
trace = "t.down"
delay = "10ms"
[[links]]
a = "r"
b = "p"
trace = "t.down"
delay = "10ms"
[links.ba]
trace = "zero.down"
trace_mtu = "1000B"
[[flows]]
from = "s"
to = "p"
"#;
    let s = load_str(text, Some(&dir.join("s.toml")), &[]).unwrap();
    let t = |l: usize, d: usize| match &s.links[l].dirs[d].rate {
        RateModel::Trace(t) => t.clone(),
        r => panic!("{r:?}"),
    };
    assert_eq!(t(0, 0).opportunities_ms, vec![0, 0, 5, 12]);
    assert_eq!((t(0, 0).period_ms, t(0, 0).mtu), (12, 1500));
    assert_eq!(t(0, 0).path, dir.join("t.down"));
    assert!(Arc::ptr_eq(&t(0, 0), &t(1, 0)));
    assert!(Arc::ptr_eq(&t(0, 0), &t(0, 1)));
    // A trace whose only timestamp is 0 repeats every millisecond.
    assert_eq!((t(1, 1).period_ms, t(1, 1).mtu), (1, 1000));
    assert_eq!(s.nodes, ["s", "r", "p"]);

    std::fs::write(dir.join("bad.down"), "0\n5\nfive\n").unwrap();
    std::fs::write(dir.join("back.down"), "0\n5\n3\n").unwrap();
    std::fs::write(dir.join("empty.down"), "\n\n").unwrap();
    let one = |f: &str| {
        let text = format!(
            "[[links]]\na = \"s\"\nb = \"r\"\ntrace = \"{f}\"\ndelay = 0\n[[flows]]\nfrom = \"s\"\nto = \"r\"\n"
        );
        load_str(&text, Some(&dir.join("s.toml")), &[])
            .unwrap_err()
            .to_string()
    };
    let shown = dir.display();
    assert_eq!(
        one("bad.down"),
        format!(
            "{shown}/s.toml: links.0.trace: trace {shown}/bad.down, line 3: expected a whole \
             number of milliseconds, found \"five\""
        )
    );
    assert!(one("back.down").contains("line 3: timestamp 3 is before the previous one (5)"));
    assert!(one("empty.down").contains("has no delivery opportunities"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn loading_is_deterministic() {
    let a = load_file(&example("outage.toml"), &[]).unwrap();
    let b = load_file(&example("outage.toml"), &[]).unwrap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

// ---------------------------------------------------------------------------------
// Overrides
// ---------------------------------------------------------------------------------

#[test]
fn overrides_by_index() {
    let s = load_file(
        &example("rwnd_limited.toml"),
        &ov(&[
            ("flows.0.cc", "cubic"),
            ("links.0.rate", "10Mbps"),
            ("run.duration", "30s"),
            ("measure.intervals.steady", "[\"5s\", \"30s\"]"),
        ]),
    )
    .unwrap();
    assert_eq!(tcp(&s, 0).cc, CcKind::Cubic(CubicParams::default()));
    assert!(matches!(
        s.links[0].dirs[0].rate,
        RateModel::Constant(10_000_000)
    ));
    assert_eq!(s.duration, secs(30));
    assert_eq!(s.measure.intervals[0], ("steady".into(), secs(5), secs(30)));
}

#[test]
fn overrides_by_name_create_missing_tables() {
    let s = load_file(
        &example("rwnd_limited.toml"),
        &ov(&[
            ("flows.bulk.cc", "reno"),
            ("links.access.ab.rate", "2Mbps"),
            ("flows.bulk.tcp.mss", "1000"),
            ("flows.bulk.app", "{ kind = \"sized\", size = \"1MB\" }"),
            ("measure.sample_interval", "false"),
            ("tcp.initial_ssthresh", "inf"),
        ]),
    )
    .unwrap();
    assert_eq!(tcp(&s, 0).cc, CcKind::Reno);
    assert_eq!(tcp(&s, 0).mss, 1000);
    assert_eq!(tcp(&s, 0).initial_ssthresh, u64::MAX);
    assert!(matches!(
        s.links[0].dirs[0].rate,
        RateModel::Constant(2_000_000)
    ));
    assert!(matches!(
        s.links[0].dirs[1].rate,
        RateModel::Constant(15_000_000)
    ));
    assert_eq!(s.flows[0].app, AppSpec::Sized { size: 1 << 20 });
    assert_eq!(s.measure.sample_interval, None);
}

#[test]
fn unnamed_elements_answer_to_their_default_names() {
    let text = BASE.replace("name = \"bulk\"\n", "");
    let s = load_str(&text, None, &ov(&[("flows.flow0.start", "2s")])).unwrap();
    assert_eq!(s.flows[0].name, "flow0");
    assert_eq!(s.flows[0].start, secs(2));
}

#[test]
fn override_errors_name_the_key() {
    let e = error_with(BASE, &[("flows.3.cc", "reno")]);
    assert_eq!(
        e,
        "x.toml: flows.3.cc: in override flows.3.cc=reno: index 3 is out of range: flows has \
         1 element"
    );
    let e = error_with(BASE, &[("flows.web.cc", "reno")]);
    assert_starts(
        &e,
        "x.toml: flows.web.cc: in override flows.web.cc=reno: flows has no element named \"web\"; \
         names are \"bulk\"",
    );
    let e = error_with(BASE, &[("links.0.rate.x", "1")]);
    assert_starts(
        &e,
        "x.toml: links.0.rate.x: in override links.0.rate.x=1: links.0.rate is string \"15Mbps\", \
         not a table",
    );
    // A value that is refused later points back at the override that set it.
    // (The lists of names grow with the registration lists; today's names come first.)
    let e = error_with(BASE, &[("flows.bulk.cc", "vegas")]);
    assert_eq!(
        e,
        format!(
            "x.toml: flows.0.cc: unknown congestion control \"vegas\"; expected one of {} \
             (set by override flows.bulk.cc=vegas)",
            CcKind::NAMES.join(", ")
        )
    );
    assert!(CcKind::NAMES.starts_with(&["reno", "newreno", "cubic", "relentless", "fld", "bbr"]));
    // Every registered name is accepted; an unknown one is refused with the list, and
    // quoted lowercased.
    for name in mobiflow_proto::flow::FlowControl::NAMES {
        let s = load_with(BASE, &[("flows.0.flow_control", name)]);
        assert_eq!(tcp(&s, 0).flow_control.name(), *name);
    }
    let e = error_with(BASE, &[("flows.0.flow_control", "Vegas")]);
    let policies = mobiflow_proto::flow::FlowControl::NAMES;
    assert_eq!(
        e,
        format!(
            "x.toml: flows.0.flow_control: unknown flow control \"vegas\"; expected one of {} \
             (set by override flows.0.flow_control=Vegas)",
            policies.join(", ")
        )
    );
    assert!(policies.starts_with(&["classic", "afc", "autotune", "rsfc", "linux"]));
    // `extensions` takes the extensions turned on by name, and refuses the others.
    let s = load(&format!("{BASE}[flows.tcp]\nextensions = []\n")).unwrap();
    assert!(tcp(&s, 0).extensions.is_empty());
    let e = error(&format!("{BASE}[flows.tcp]\nextensions = [\"iett\"]\n"));
    assert_eq!(
        e,
        "x.toml: flows.0.tcp.extensions.0: \"iett\" is turned on by other keys, not by name \
         (see the sender extensions in docs/scenarios.md)"
    );
    let e = error(&format!("{BASE}[tcp]\nextensions = [\"warp\"]\n"));
    let extensions = mobiflow_proto::tcp::SenderExtName::NAMES;
    assert_eq!(
        e,
        format!(
            "x.toml: tcp.extensions.0: unknown sender extension \"warp\"; expected one of {}",
            extensions.join(", ")
        )
    );
    assert!(extensions.starts_with(&["ba-sst", "iett", "afc", "pacing"]));
    let e = error_with(BASE, &[("flows.0.redaer", "greedy")]);
    assert_starts(
        &e,
        "x.toml: flows.0.redaer: unknown key (did you mean \"reader\"?)",
    );
    assert!(
        e.ends_with("(set by override flows.0.redaer=greedy)"),
        "{e}"
    );
}

#[test]
fn apply_override_works_on_a_bare_table() {
    let mut doc: toml::Table = BASE.parse().unwrap();
    apply_override(&mut doc, "links.access.ba.delay", "70ms").unwrap();
    assert_eq!(doc["links"][0]["ba"]["delay"].as_str(), Some("70ms"));
    let e = apply_override(&mut doc, "links.9.delay", "1ms").unwrap_err();
    assert_eq!(
        e,
        "links.9.delay: index 9 is out of range: links has 1 element"
    );
}

// ---------------------------------------------------------------------------------
// Errors: each names the file, the dotted key and the reason
// ---------------------------------------------------------------------------------

#[test]
fn error_display_omits_missing_parts() {
    let e = ScenarioError {
        file: Some("a.toml".into()),
        key: Some("run.seed".into()),
        reason: "r".into(),
    };
    assert_eq!(e.to_string(), "a.toml: run.seed: r");
    let e = ScenarioError {
        file: None,
        key: Some("run.seed".into()),
        reason: "r".into(),
    };
    assert_eq!(e.to_string(), "run.seed: r");
    let e = ScenarioError {
        file: None,
        key: None,
        reason: "r".into(),
    };
    assert_eq!(e.to_string(), "r");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert_eq!(boxed.to_string(), "r");
}

#[test]
fn error_has_structured_fields() {
    let e = load(&format!("{BASE}redaer = 1\n")).unwrap_err();
    assert_eq!(e.file.as_deref(), Some(Path::new("x.toml")));
    assert_eq!(e.key.as_deref(), Some("flows.0.redaer"));
    assert!(e.reason.starts_with("unknown key"));
    let e = load_str(&format!("{BASE}redaer = 1\n"), None, &[]).unwrap_err();
    assert_starts(&e.to_string(), "flows.0.redaer: unknown key");
}

#[test]
fn error_missing_file() {
    let e = load_file(Path::new("/nonexistent/nope.toml"), &[]).unwrap_err();
    assert_starts(
        &e.to_string(),
        "/nonexistent/nope.toml: cannot read scenario: ",
    );
}

#[test]
fn error_toml_syntax_reports_line_and_column() {
    let e = error("name = \"x\"\n[run]\nduration = = 3\n");
    assert_starts(&e, "x.toml: line 3, column 12: invalid TOML: ");
    let e = error("[[links]\n");
    assert_starts(&e, "x.toml: line 1, column ");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn error_unknown_keys_everywhere() {
    let e = error(&format!("{BASE}redaer = \"greedy\"\n"));
    assert_eq!(
        e,
        "x.toml: flows.0.redaer: unknown key (did you mean \"reader\"?); expected one of name, \
         from, to, transport, start, stop, cc, app, reader, tcp, flow_control, afc, autotune, rsfc, \
         linux, web, tfrc"
    );
    assert_starts(
        &error(&format!("nmae = 1\n{BASE}")),
        "x.toml: nmae: unknown key (did you mean \"name\"?)",
    );
    assert_starts(
        &error(&format!("[run]\nseeed = 3\n{BASE}")),
        "x.toml: run.seeed: unknown key",
    );
    assert_starts(
        &error(&format!("[tcp]\nmsss = 3\n{BASE}")),
        "x.toml: tcp.msss: unknown key (did you mean \"mss\"?)",
    );
    assert_starts(
        &error(&format!("{BASE}[flows.tcp]\nsak = true\n")),
        "x.toml: flows.0.tcp.sak: unknown key (did you mean \"sack\"?)",
    );
    assert_starts(
        &error(&BASE.replace(
            "delay = \"265ms\"",
            "delay = \"265ms\"\n[links.ab]\nrat = 1",
        )),
        "x.toml: links.0.ab.rat: unknown key (did you mean \"rate\"?)",
    );
    assert_starts(
        &error(&format!("{BASE}app = {{ kind = \"sized\", sise = \"1MB\" }}\n")),
        "x.toml: flows.0.app.sise: unknown key (did you mean \"size\"?); expected one of kind, size",
    );
    assert_starts(
        &error(&format!(
            "{BASE}reader = {{ kind = \"constant\", rate = 1, intreval = \"1ms\" }}\n"
        )),
        "x.toml: flows.0.reader.intreval: unknown key (did you mean \"interval\"?)",
    );
    assert_starts(
        &error(&BASE.replace(
            "delay = \"265ms\"",
            "delay = \"265ms\"\nqueue = \"red\"\nred = { minth = 1 }",
        )),
        "x.toml: links.0.red.minth: unknown key (did you mean \"min_th\"?)",
    );
    assert_starts(
        &error(&format!("[measure]\nsample = 1\n{BASE}")),
        "x.toml: measure.sample: unknown key",
    );
}

#[test]
fn error_wrong_types() {
    assert_eq!(
        error(&BASE.replace("rate = \"15Mbps\"", "rate = true")),
        "x.toml: links.0.rate: expected a rate like \"15Mbps\", \"384kbps\", \"1.5Gbps\", \
         \"15 Mbit/s\" or a number of bits/s, found boolean true"
    );
    assert_eq!(
        error(&BASE.replace("from = \"server\"", "from = 3")),
        "x.toml: flows.0.from: expected a string, found integer 3"
    );
    assert_eq!(
        error(&format!("[run]\nseed = -1\n{BASE}")),
        "x.toml: run.seed: must not be negative, found -1"
    );
    assert_eq!(
        error(&format!("run = 3\n{BASE}")),
        "x.toml: run: expected a table, found integer 3"
    );
    assert_eq!(
        error(&format!("{BASE}[flows.tcp]\nsack = \"yes\"\n")),
        "x.toml: flows.0.tcp.sack: expected a boolean (true or false), found string \"yes\""
    );
    assert_starts(
        &error("links = 1\n"),
        "x.toml: links: expected an array, found integer 1",
    );
    assert_starts(
        &error(&format!("{BASE}reader = 5\n")),
        "x.toml: flows.0.reader: expected a string or a table with a kind",
    );
}

#[test]
fn error_bad_units() {
    assert_eq!(
        error(&BASE.replace("265ms", "265 parsecs")),
        "x.toml: links.0.delay: invalid time \"265 parsecs\": unknown unit \"parsecs\"; expected \
         a time like \"265ms\", \"1.5s\", \"100us\", \"10ns\", \"2min\" or a number of seconds"
    );
    assert_starts(
        &error(&BASE.replace("15Mbps", "15MBps")),
        "x.toml: links.0.rate: invalid rate \"15MBps\": rates are in bits per second, not bytes",
    );
    assert_starts(
        &error(&format!("[tcp]\nrcv_buf = \"256Kb\"\n{BASE}")),
        "x.toml: tcp.rcv_buf: invalid size \"256Kb\": \"b\" means bits",
    );
    assert_starts(
        &error(&BASE.replace(
            "delay = \"265ms\"",
            "delay = \"265ms\"\nqueue_limit = \"100 sheep\"",
        )),
        "x.toml: links.0.queue_limit: invalid queue limit \"100 sheep\": unknown unit",
    );
}

#[test]
fn error_unknown_and_unconnected_nodes() {
    assert_eq!(
        error(&BASE.replace("to = \"phone\"", "to = \"phon\"")),
        "x.toml: flows.0.to: unknown node \"phon\"; the links declare \"server\", \"phone\""
    );
    let text = format!("{BASE}\n[[links]]\na = \"laptop\"\nb = \"ap\"\nrate = 1\ndelay = 0\n")
        .replace("to = \"phone\"", "to = \"laptop\"");
    assert_eq!(
        error(&text),
        "x.toml: flows.0.to: \"laptop\" is not connected to \"server\" by any chain of links"
    );
    assert_starts(
        &error(&BASE.replace("to = \"phone\"", "to = \"server\"")),
        "x.toml: flows.0.to: a flow needs two different nodes",
    );
    assert_starts(
        &error(&BASE.replace("b = \"phone\"", "b = \"server\"")),
        "x.toml: links.0.b: a link joins two different nodes",
    );
}

#[test]
fn error_missing_required_keys() {
    assert_eq!(
        error(&BASE.replace("a = \"server\"\n", "")),
        "x.toml: links.0.a: required key is missing"
    );
    assert_starts(
        &error(&BASE.replace("rate = \"15Mbps\"\n", "")),
        "x.toml: links.0.rate: required key is missing: give one of rate, rate_schedule or trace",
    );
    assert_starts(
        &error(&BASE.replace("delay = \"265ms\"\n", "[links.ab]\ndelay = \"1ms\"\n")),
        "x.toml: links.0.delay: required key is missing: give delay or delay_schedule (here for \
         both directions, or in links.0.ba for \"phone\" -> \"server\")",
    );
    assert_starts(
        &error("[run]\n"),
        "x.toml: links: at least one link is required",
    );
    let links_only = BASE.split("[[flows]]").next().unwrap();
    assert_starts(
        &error(links_only),
        "x.toml: flows: at least one flow is required",
    );
    assert_eq!(
        error(&format!("{BASE}app = {{ kind = \"sized\" }}\n")),
        "x.toml: flows.0.app.size: required key is missing"
    );
    assert_starts(
        &error(&format!("{BASE}app = \"sized\"\n")),
        "x.toml: flows.0.app: app \"sized\" needs parameters; write e.g. app = { kind = \"sized\"",
    );
}

#[test]
fn every_registered_app_loads_by_its_name_or_by_the_example_its_error_gives() {
    for kind in AppSpec::KINDS {
        let bare = format!("{BASE}app = {kind:?}\n");
        let spec = match load(&bare) {
            Ok(s) => s.flows[0].app.clone(),
            Err(e) => {
                let e = e.to_string();
                let prefix = format!(
                    "x.toml: flows.0.app: app {kind:?} needs parameters; write e.g. app = "
                );
                let example = e.strip_prefix(&prefix).unwrap_or_else(|| panic!("{e}"));
                let s = load(&format!("{BASE}app = {example}\n")).unwrap();
                s.flows[0].app.clone()
            }
        };
        // The spec is the kind's (the web app's is `Web`), and the run starts it.
        let debug = format!("{spec:?}").to_ascii_lowercase();
        assert!(debug.starts_with(kind), "{kind}: {debug}");
    }
    assert_eq!(
        error(&format!("{BASE}app = \"ftp\"\n")),
        format!(
            "x.toml: flows.0.app: unknown app kind \"ftp\"; expected one of {}",
            AppSpec::KINDS.join(", ")
        )
    );
    assert!(AppSpec::KINDS.starts_with(&["bulk", "sized", "bursts", "onoff"]));
    assert_eq!(AppSpec::KINDS.last(), Some(&"web"));
}

#[test]
fn error_schedules() {
    let with = |s: &str| error(&BASE.replace("rate = \"15Mbps\"", s));
    assert_eq!(
        with("rate_schedule = []"),
        "x.toml: links.0.rate_schedule: a schedule needs at least one point"
    );
    assert_eq!(
        with("rate_schedule = [[\"0s\", \"1Mbps\"], [\"2s\", \"2Mbps\"], [\"1s\", \"3Mbps\"]]"),
        "x.toml: links.0.rate_schedule.2: time 1s is not after the previous point's 2s (points \
         must be sorted by time, without repeats)"
    );
    assert_starts(
        &with("rate_schedule = [[\"1s\", \"1Mbps\"]]"),
        "x.toml: links.0.rate_schedule.0: the first point must be at 0s",
    );
    assert_eq!(
        with(
            "rate_schedule = [[\"0s\", \"1Mbps\"], [\"3s\", \"2Mbps\"]]\nschedule_period = \"3s\""
        ),
        "x.toml: links.0.rate_schedule.1: time 3s is not before the schedule's period \
         (links.0.schedule_period = 3s)"
    );
    assert_starts(
        &with("rate_schedule = [[\"0s\", \"1Mbps\", \"2Mbps\"]]"),
        "x.toml: links.0.rate_schedule.0: expected a [time, rate] pair",
    );
    assert_eq!(
        with("rate_schedule = [[\"0s\", \"0Mbps\"]]"),
        "x.toml: links.0.rate_schedule: every rate is zero"
    );
    assert_eq!(
        error(&BASE.replace(
            "delay = \"265ms\"",
            "delay_schedule = [[\"0s\", \"1ms\"], [\"0s\", \"2ms\"]]"
        )),
        "x.toml: links.0.delay_schedule.1: time 0s is not after the previous point's 0s (points \
         must be sorted by time, without repeats)"
    );
    assert_eq!(
        with("rate = \"15Mbps\"\ntrace = \"x.down\""),
        "x.toml: links.0.trace: conflicts with links.0.rate; give only one of rate, \
         rate_schedule, trace"
    );
    assert_eq!(
        with("rate = \"0Mbps\""),
        "x.toml: links.0.rate: must be positive (use outages for a link that carries nothing)"
    );
}

#[test]
fn error_outages() {
    let with = |o: &str| {
        error(&BASE.replace(
            "delay = \"265ms\"",
            &format!("delay = \"265ms\"\noutages = {o}"),
        ))
    };
    assert_eq!(
        with("[[\"20s\", \"10s\"]]"),
        "x.toml: links.0.outages.0: end 10s is not after start 20s"
    );
    assert_eq!(
        with("[[\"10s\", \"20s\"], [\"15s\", \"25s\"]]"),
        "x.toml: links.0.outages.1: [15s, 25s] overlaps the previous outage [10s, 20s]"
    );
    assert_eq!(
        with("[[\"10s\", \"20s\"], [\"1s\", \"2s\"]]"),
        "x.toml: links.0.outages.1: starts at 1s, before the previous outage (10s); outages \
         must be sorted"
    );
    assert_eq!(
        with("[[\"10s\", \"10s\"]]"),
        "x.toml: links.0.outages.0: end 10s is not after start 10s"
    );
    assert_starts(
        &with("[\"10s\", \"20s\"]"),
        "x.toml: links.0.outages.0: expected a [start, end] pair",
    );
}

#[test]
fn error_missing_trace_names_the_resolved_path() {
    let text = BASE.replace("rate = \"15Mbps\"", "trace = \"../traces/nope.down\"");
    let e = load_str(&text, Some(Path::new("/some/dir/x.toml")), &[])
        .unwrap_err()
        .to_string();
    assert_starts(
        &e,
        "/some/dir/x.toml: links.0.trace: cannot read trace /some/dir/../traces/nope.down: ",
    );
}

#[test]
fn error_keys_that_would_have_no_effect() {
    assert_eq!(
        error(&BASE.replace("delay = \"265ms\"", "delay = \"265ms\"\ntrace_mtu = 1000")),
        "x.toml: links.0.trace_mtu: has no effect: no direction that reads it takes its rate \
         from a trace"
    );
    assert_starts(
        &error(&BASE.replace(
            "delay = \"265ms\"",
            "delay = \"265ms\"\nschedule_period = \"1s\"",
        )),
        "x.toml: links.0.schedule_period: has no effect",
    );
    assert_starts(
        &error(&BASE.replace(
            "delay = \"265ms\"",
            "delay = \"265ms\"\nred = { max_p = 0.5 }",
        )),
        "x.toml: links.0.red: has no effect: no direction that reads it has queue = \"red\"",
    );
}

#[test]
fn error_measure_intervals() {
    assert_eq!(
        error(&format!(
            "{BASE}[measure]\nintervals = {{ steady = [\"10s\", \"5s\"] }}\n"
        )),
        "x.toml: measure.intervals.steady: end 5s is not after start 10s"
    );
    assert_eq!(
        error(&format!(
            "{BASE}[measure]\nintervals = {{ steady = [\"10s\", \"70s\"] }}\n"
        )),
        "x.toml: measure.intervals.steady: ends at 70s, after the end of the run (run.duration \
         = 1min)"
            .replace("1min", "60s")
    );
    assert_starts(
        &error(&format!("{BASE}[measure]\nsample_interval = true\n")),
        "x.toml: measure.sample_interval: true is not a period",
    );
}

#[test]
fn error_flow_timing() {
    assert_eq!(
        error(&format!("{BASE}start = \"10s\"\nstop = \"5s\"\n")),
        "x.toml: flows.0.stop: 5s is not after the flow's start (10s)"
    );
    assert_eq!(
        error(&format!("{BASE}start = \"70s\"\n")),
        "x.toml: flows.0.start: starts at 70s, not before the end of the run (run.duration = 60s)"
    );
    assert_eq!(
        error(&format!("{BASE}start = \"2s\"\napp = {{ kind = \"bursts\", at = [\"1s\"], sizes = [\"1MB\"] }}\n")),
        "x.toml: flows.0.app.at.0: 1s is before the flow's start (2s)"
    );
    assert_starts(
        &error(&format!(
            "{BASE}app = {{ kind = \"bursts\", at = [\"1s\", \"2s\"], sizes = [\"1MB\"] }}\n"
        )),
        "x.toml: flows.0.app.sizes: has 1 sizes for 2 burst times",
    );
    assert_eq!(
        error(&format!("[run]\nduration = 0\n{BASE}")),
        "x.toml: run.duration: must be positive"
    );
}

#[test]
fn error_tcp_validation_maps_to_the_dotted_key() {
    assert_eq!(
        error(&format!("{BASE}[flows.tcp]\nrcv_buf = \"1KB\"\n")),
        "x.toml: flows.0.tcp.rcv_buf: must hold at least one segment (1460 bytes)"
    );
    assert_eq!(
        error(&format!("[tcp]\nrcv_buf = 100\n{BASE}")),
        "x.toml: tcp.rcv_buf: must hold at least one segment (1460 bytes)"
    );
    assert_eq!(
        error(&format!("[tcp]\nsack = false\n{BASE}")),
        "x.toml: flows.0.tcp.recovery: \"sack\" recovery needs sack = true (recovery is not \
         set: this is the \"rfc\" profile's default)"
    );
    assert_eq!(
        error(&format!("{BASE}cc = \"vegas\"\n")),
        format!(
            "x.toml: flows.0.cc: unknown congestion control \"vegas\"; expected one of {}",
            CcKind::NAMES.join(", ")
        )
    );
    assert_eq!(
        error(&format!(
            "{BASE}cc = \"reno\"\n[flows.tcp]\ncc = \"cubic\"\n"
        )),
        "x.toml: flows.0.cc: conflicts with flows.0.tcp.cc; set only one"
    );
    assert_eq!(
        error(&format!("[tcp]\nprofile = \"bsd\"\n{BASE}")),
        "x.toml: tcp.profile: unknown profile \"bsd\"; expected rfc, ns2 or linux"
    );
    assert_starts(
        &error(&format!("{BASE}[flows.tcp]\nwscale = 15\n")),
        "x.toml: flows.0.tcp.wscale: must be at most 14",
    );
    assert_starts(
        &error(&format!("{BASE}[flows.tcp]\nmin_rto = 0\n")),
        "x.toml: flows.0.tcp.min_rto: must be positive",
    );
    assert_starts(
        &error(&format!(
            "{BASE}[flows.tcp]\ninitial_window = \"rfc9999\"\n"
        )),
        "x.toml: flows.0.tcp.initial_window: unknown initial window \"rfc9999\"",
    );
    assert_starts(
        &error(&format!("{BASE}transport = \"udp\"\n")),
        "x.toml: flows.0.transport: unknown transport \"udp\"",
    );
}

#[test]
fn error_duplicates_and_unaddressable_names() {
    assert_eq!(
        error(&format!(
            "{BASE}[[flows]]\nname = \"bulk\"\nfrom = \"phone\"\nto = \"server\"\n"
        )),
        "x.toml: flows.1.name: duplicate flow name \"bulk\" (also flows.0)"
    );
    assert_starts(
        &error(&BASE.replace("name = \"bulk\"", "name = \"a.b\"")),
        "x.toml: flows.0.name: \"a.b\" contains '.'",
    );
    assert_starts(
        &error(&BASE.replace("name = \"access\"", "name = \"42\"")),
        "x.toml: links.0.name: \"42\" is all digits",
    );
    let parallel = BASE.replace(
        "[[flows]]",
        "[[links]]\na = \"phone\"\nb = \"server\"\nrate = 1\ndelay = 0\n[[flows]]",
    );
    assert_starts(
        &error(&parallel),
        "x.toml: links.1: joins phone and server, as links.0 does",
    );
}

// ---------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------

#[test]
fn no_panic_on_garbage() {
    let nasty = [
        "",
        "\u{0}",
        "=",
        "[[",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        "a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]",
        "links = \"x\"",
        "links = [1, 2]",
        "flows = [{}]",
        "[[links]]\n[[flows]]",
        "[[links]]\na = \"\"\nb = \"\"\nrate = \"\"\ndelay = \"\"",
        "[[links]]\na = 1\nb = 2",
        "[run]\nduration = 1e308",
        "[run]\nduration = -1e308",
        "[run]\nduration = nan\nseed = 9223372036854775807",
        "[run]\nduration = \"99999999999999999999999999999h\"",
        "[run]\nduration = 1979-05-27T07:32:00Z",
        "name = \"\u{1F600}\"\n[[links]]\na = \"\u{1F600}\"\nb = \"\u{2603}\"\nrate = \"1\u{b5}bps\"\ndelay = \"1\u{3bc}s\"",
        "\u{feff}name = 1",
        "[measure]\nintervals = { \"\" = [1, 2] }",
        "[measure]\nintervals = 3",
        "[[flows]]\napp = { kind = [] }\nreader = { }",
    ];
    for text in nasty {
        let _ = load_str(text, None, &[]);
        let _ = load_str(text, Some(Path::new("x.toml")), &[]);
        let _ = load_str(&format!("{BASE}\n{text}"), None, &[]);
    }
    for (k, v) in [
        ("", ""),
        (".", "1"),
        ("flows..cc", "1"),
        ("flows.-1.cc", "1"),
        ("flows.18446744073709551616.cc", "1"),
        ("links.0.rate", "[[[[[[[[[["),
        ("links.0.rate", "{"),
        ("links.0", "3"),
        ("links", "{}"),
        ("flows.0", "[]"),
        (
            "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g",
            "1",
        ),
        ("flows.bulk.tcp.rcv_buf", "inf"),
        ("flows.bulk.tcp.rcv_buf", "nan"),
        ("flows.bulk.tcp.mss", "-inf"),
        ("flows.bulk.start", "1e400"),
        ("run.seed", "0x7fffffffffffffff"),
    ] {
        let _ = load_str(BASE, Some(Path::new("x.toml")), &ov(&[(k, v)]));
    }
}

/// Deterministic mutations of the examples (deleted, duplicated, swapped and
/// replaced characters and lines): every one loads or is refused, none panics.
#[test]
fn no_panic_on_mutated_examples() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let alphabet: Vec<char> = "[]{}=\"',.#\n 0123456789-+eE_abcdefgsmMkKbBpi/\u{b5}"
        .chars()
        .collect();
    for name in [
        "rwnd_limited.toml",
        "outage.toml",
        "fluctuating_reader.toml",
    ] {
        let text = std::fs::read_to_string(example(name)).unwrap();
        for _ in 0..400 {
            let mut chars: Vec<char> = text.chars().collect();
            for _ in 0..1 + rand(4) {
                let i = rand(chars.len());
                match rand(4) {
                    0 => {
                        chars.remove(i);
                    }
                    1 => chars.insert(i, alphabet[rand(alphabet.len())]),
                    2 => chars[i] = alphabet[rand(alphabet.len())],
                    _ => {
                        let j = rand(chars.len());
                        chars.swap(i, j);
                    }
                }
            }
            let mutated: String = chars.into_iter().collect();
            let mut lines: Vec<&str> = mutated.lines().collect();
            if rand(3) == 0 && !lines.is_empty() {
                let i = rand(lines.len());
                let l = lines[i];
                lines.insert(rand(lines.len()), l);
            }
            let mutated = lines.join("\n");
            if let Err(e) = load_str(&mutated, Some(Path::new("m.toml")), &[]) {
                let msg = e.to_string();
                assert!(msg.starts_with("m.toml: "), "{msg}");
                assert!(!e.reason.is_empty());
            }
        }
    }
}

#[test]
fn rsfc_parameters_parse_and_unset_guesses_are_assumed() {
    use mobiflow_proto::flow::{Estimator, FlowControl, Growth, RsfcConfig};
    let s = load(&format!(
        "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\nestimator = \"echo\"\nts_tick = \"4ms\"\n\
         rho_window = \"rtt_min\"\nmonitor = false\nrho_check = false\nrho_rise = 0.2\n\
         initial_rwnd = \"buffer\"\n"
    ))
    .unwrap();
    let want = RsfcConfig {
        initial_rwnd_segments: None,
        estimator: Estimator::Echo,
        ts_tick: Some(ms(4)),
        rho_window: None,
        monitor: false,
        rho_check: false,
        rho_rise: 0.2,
        ..RsfcConfig::default()
    };
    assert_eq!(tcp(&s, 0).flow_control, FlowControl::Rsfc(want));
    assert_eq!(assumed(&s, "flows.0.rsfc.estimator"), None);
    assert_eq!(assumed(&s, "flows.0.rsfc.rho_rise"), None);
    assert_eq!(
        assumed(&s, "flows.0.rsfc.rtt_min_window").as_deref(),
        Some("10s")
    );
    assert_eq!(
        assumed(&s, "flows.0.rsfc.growth").as_deref(),
        Some("per_rtt")
    );
    // Defaults without a table: every guess reported.
    let s = load(&format!("{BASE}flow_control = \"rsfc\"\n")).unwrap();
    assert_eq!(
        tcp(&s, 0).flow_control,
        FlowControl::Rsfc(RsfcConfig {
            growth: Growth::PerRtt,
            ..RsfcConfig::default()
        })
    );
    assert_eq!(
        assumed(&s, "flows.0.rsfc.estimator").as_deref(),
        Some("owd")
    );
    assert_eq!(assumed(&s, "flows.0.rsfc.ts_tick").as_deref(), Some("auto"));
    assert_eq!(
        assumed(&s, "flows.0.rsfc.rho_window").as_deref(),
        Some("500ms")
    );
    assert_eq!(assumed(&s, "flows.0.rsfc.rho_rise").as_deref(), Some("0.1"));
    assert_eq!(
        assumed(&s, "flows.0.rsfc.initial_rwnd").as_deref(),
        Some("10")
    );
    assert_eq!(
        assumed(&s, "flows.0.rsfc.rebase_after").as_deref(),
        Some("2")
    );
    let s = load(&format!(
        "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\ninitial_rwnd = 4\nrebase_after = 0\n"
    ))
    .unwrap();
    assert_eq!(
        tcp(&s, 0).flow_control,
        FlowControl::Rsfc(RsfcConfig {
            initial_rwnd_segments: Some(4),
            rebase_after: 0,
            ..RsfcConfig::default()
        })
    );
    assert_eq!(assumed(&s, "flows.0.rsfc.initial_rwnd"), None);
}

#[test]
fn error_rsfc_needs_timestamps_and_valid_parameters() {
    assert_starts(
        &error(&format!(
            "{BASE}flow_control = \"rsfc\"\n[flows.tcp]\ntimestamps = false\n"
        )),
        "x.toml: flows.0.flow_control: \"rsfc\" needs TCP timestamps",
    );
    assert_starts(
        &error(&format!(
            "[tcp]\nprofile = \"ns2\"\n{BASE}flow_control = \"rsfc\"\n"
        )),
        "x.toml: flows.0.flow_control: \"rsfc\" needs TCP timestamps",
    );
    assert_eq!(
        error(&format!(
            "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\nthreshold_factor = 0\n"
        )),
        "x.toml: flows.0.rsfc.threshold_factor: must be a positive number"
    );
    assert_starts(
        &error(&format!(
            "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\nestimator = \"gps\"\n"
        )),
        "x.toml: flows.0.rsfc.estimator: unknown estimator \"gps\"",
    );
    assert_eq!(
        error(&format!(
            "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\ninitial_rwnd = 0\n"
        )),
        "x.toml: flows.0.rsfc.initial_rwnd: must be at least 1 segment"
    );
    assert_starts(
        &error(&format!(
            "{BASE}flow_control = \"rsfc\"\n[flows.rsfc]\ninitial_rwnd = \"all\"\n"
        )),
        "x.toml: flows.0.rsfc.initial_rwnd: expected a number of segments or \"buffer\"",
    );
    assert_starts(
        &error(&format!("{BASE}[flows.rsfc]\nmonitor = false\n")),
        "x.toml: flows.0.rsfc: only used with flow_control = \"rsfc\"",
    );
}

#[test]
fn link_loss_accepts_a_fraction_or_a_percentage() {
    let loss = |value: &str| {
        let s = load(&BASE.replace(
            "delay = \"265ms\"",
            &format!("delay = \"265ms\"\nloss = {value}"),
        ))
        .unwrap();
        (s.links[0].dirs[0].loss, s.links[0].dirs[1].loss)
    };
    assert_eq!(loss("0.01"), (0.01, 0.01));
    assert_eq!(loss("\"1%\""), (0.01, 0.01));
    assert_eq!(loss("\"0.5 %\""), (0.005, 0.005));
    assert_eq!(loss("0"), (0.0, 0.0));
}

#[test]
fn link_loss_refuses_bad_percentages_naming_the_key() {
    let with = |value: &str| {
        error(&BASE.replace(
            "delay = \"265ms\"",
            &format!("delay = \"265ms\"\nloss = {value}"),
        ))
    };
    assert_starts(
        &with("\"1\""),
        "x.toml: links.0.loss: expected a number (0.01) or a percentage",
    );
    assert_starts(
        &with("\"abc%\""),
        "x.toml: links.0.loss: expected a number (0.01) or a percentage",
    );
    assert_starts(
        &with("\"100%\""),
        "x.toml: links.0.loss: loss probability 1 is outside [0, 1)",
    );
}

#[test]
fn reorder_duplicate_and_fifo_are_read_per_direction() {
    let s = load(&BASE.replace(
        "delay = \"265ms\"",
        "delay = \"265ms\"\nreorder = \"2%\"\nreorder_delay = \"5ms\"\nduplicate = 0.01\nba = { fifo = true }",
    ))
    .unwrap();
    let (ab, ba) = (&s.links[0].dirs[0], &s.links[0].dirs[1]);
    assert_eq!(
        (ab.reorder, ab.reorder_delay, ab.duplicate),
        (0.02, ms(5), 0.01)
    );
    assert!(
        !ab.fifo,
        "ns-2's LinkDelay reorders on a delay drop by default"
    );
    assert!(ba.fifo);
    let plain = load(BASE).unwrap();
    let d = &plain.links[0].dirs[0];
    assert_eq!((d.fifo, d.reorder, d.duplicate), (false, 0.0, 0.0));
}

#[test]
fn reorder_needs_a_delay_and_a_delay_needs_reorder() {
    let with = |extra: &str| {
        error(&BASE.replace("delay = \"265ms\"", &format!("delay = \"265ms\"\n{extra}")))
    };
    assert_starts(
        &with("reorder = 0.01"),
        "x.toml: links.0.reorder: needs reorder_delay",
    );
    assert_starts(
        &with("reorder_delay = \"5ms\""),
        "x.toml: links.0.reorder_delay: has no effect without reorder",
    );
}

/// Found by the trace-reader fuzz target (tests/fuzz.rs): a timestamp of
/// 72036854775807 ms overflowed `Instant::from_millis` when the link looked for its
/// next opportunity (a panic with overflow checks, a wrapped, wrong time without).
/// Timestamps beyond half the range of simulated time are refused with the line.
#[test]
fn trace_timestamp_beyond_simulated_time_is_refused() {
    let dir = std::env::temp_dir().join(format!("mobiflow-trace-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "[[links]]\na = \"s\"\nb = \"p\"\ntrace = \"big.down\"\ndelay = \"10ms\"\n\
                [[flows]]\nfrom = \"s\"\nto = \"p\"\n";
    std::fs::write(dir.join("big.down"), "0\n5\n72036854775807\n").unwrap();
    let e = load_str(text, Some(&dir.join("s.toml")), &[]).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("links.0.trace"));
    assert!(
        e.reason.contains("line 3") && e.reason.contains("beyond"),
        "{e}"
    );
    // The largest timestamp accepted still runs without overflow.
    std::fs::write(dir.join("big.down"), "0\n9223372036854\n").unwrap();
    let mut sc = load_str(text, Some(&dir.join("s.toml")), &[]).unwrap();
    sc.duration = Duration::from_secs(1);
    let r = mobiflow_sim::run(&sc).unwrap();
    assert!(r.summary.flows[0].bytes_delivered <= 1500);
    let _ = std::fs::remove_dir_all(&dir);
}
