//! TFRC / DCCP CCID 3 / Freeze-DCCP flows in the engine: link filling, the throughput
//! equation under random loss, Freeze-DCCP across an outage, determinism, scenario
//! errors and packet captures (tshark, where installed).

mod common;

use mobiflow_proto::tfrc::throughput;
use mobiflow_sim::load_str;
use mobiflow_sim::results::{FlowSummary, Summary};

fn scenario(transport: &str, rate: &str, extra_link: &str, tfrc: &str, duration: &str) -> String {
    format!(
        r#"
name = "t"
[run]
duration = "{duration}"
[[links]]
name = "l"
a = "s"
b = "r"
rate = "{rate}"
delay = "50ms"
queue = "droptail"
queue_limit = "100p"
{extra_link}
[[flows]]
name = "f"
from = "s"
to = "r"
transport = "{transport}"
[flows.tfrc]
{tfrc}
[measure]
sample_interval = "0s"
{intervals}
"#,
        intervals = if duration == "60s" || duration == "200s" {
            format!(r#"intervals = {{ late = ["30s", "{duration}"] }}"#)
        } else {
            String::new()
        }
    )
}

fn run_str(text: &str) -> Summary {
    common::run_text(text, &[])
}

fn flow(s: &Summary) -> &FlowSummary {
    &s.flows[0]
}

#[test]
fn a_tfrc_flow_alone_fills_the_bottleneck() {
    for transport in ["tfrc", "dccp-ccid3"] {
        let s = run_str(&scenario(transport, "10Mbps", "", "s = \"1000B\"", "60s"));
        let f = flow(&s);
        let hdr = if transport == "tfrc" { 40.0 } else { 36.0 };
        let capacity = 10e6 * 1000.0 / (1000.0 + hdr);
        let late = f.intervals["late"];
        assert!(
            late > 0.9 * capacity && late <= capacity * 1.001,
            "{transport}: {late} of {capacity}"
        );
        let t = f.tfrc.as_ref().expect("tfrc summary");
        assert_eq!(f.protocol, transport);
        assert!(t.packets_received > 0 && t.packets_sent >= t.packets_received);
        // Only queue overflow loses packets here; the rest of sent − received is in
        // the queue (≤ 100 packets) or on the wire (≤ 63 packets) at the end.
        assert!(t.lost_to_queues > 0 && t.packets_lost >= t.lost_to_queues);
        assert!(t.packets_lost - t.lost_to_queues <= 170, "{t:?}");
        assert_eq!(t.lost_to_outages, 0);
    }
}

#[test]
fn with_random_loss_the_rate_tracks_the_throughput_equation() {
    // 100 Mb/s is never the limit; 1 % of the data packets are lost at random.
    let text = scenario(
        "tfrc",
        "100Mbps",
        "ab = { loss = 0.01 }",
        "s = \"1000B\"",
        "200s",
    );
    let s = run_str(&text);
    let f = flow(&s);
    let t = f.tfrc.as_ref().unwrap();
    assert!(t.lost_to_link_errors > 0);
    let loss_rate = t.lost_to_link_errors as f64 / t.packets_sent as f64;
    assert!((loss_rate - 0.01).abs() < 0.002, "{loss_rate}");
    // p: loss events per packet over the run; R: the sender's estimate.
    let p = t.loss_events as f64 / t.packets_sent as f64;
    let r = f.rtt_mean_ms.unwrap() / 1000.0;
    assert!((r - 0.1).abs() < 0.01, "R {r}");
    let predicted = throughput(1000.0, r, p, 1.0) * 8.0;
    let measured = f.intervals["late"];
    assert!(
        (measured / predicted - 1.0).abs() < 0.2,
        "measured {measured} vs equation {predicted} at p = {p}"
    );
    // Loss events group the losses of one RTT: p is at most the loss rate.
    assert!(p <= loss_rate && p > loss_rate * 0.7, "p {p}");
    // Ten times the loss, about a third of the rate (X ~ 1/sqrt(p) at small p).
    let s10 = run_str(&text.replace("loss = 0.01", "loss = 0.1"));
    let ratio = flow(&s10).intervals["late"] / measured;
    assert!(ratio < 0.4 && ratio > 0.1, "ratio {ratio}");
}

fn outage(transport: &str, freeze: &str) -> Summary {
    run_str(&scenario(
        transport,
        "10Mbps",
        "outages = [[\"20s\", \"23s\"]]",
        &format!("s = \"500B\"\n{freeze}"),
        "60s",
    ))
}

#[test]
fn freeze_dccp_loses_fewer_packets_across_an_outage_and_recovers_faster() {
    for transport in ["tfrc", "dccp-ccid3"] {
        let plain = outage(transport, "");
        let frozen = outage(transport, "freeze = true");
        let sender = outage(transport, "freeze = true\nfreeze_side = \"sender\"");
        let (p, z, zs) = (
            flow(&plain).tfrc.as_ref().unwrap(),
            flow(&frozen).tfrc.as_ref().unwrap(),
            flow(&sender).tfrc.as_ref().unwrap(),
        );
        let (dp, dz, ds) = (
            &p.disconnections[0],
            &z.disconnections[0],
            &zs.disconnections[0],
        );
        assert!(dp.lost > 100, "{transport}: plain lost {}", dp.lost);
        assert!(
            dz.lost * 10 < dp.lost && ds.lost * 10 < dp.lost,
            "{transport}: {} {} vs {}",
            dz.lost,
            ds.lost,
            dp.lost
        );
        assert_eq!(dp.freeze_at_s, None);
        // Warning: one path RTT (100 ms) before the outage.
        assert!((dz.freeze_at_s.unwrap() - 19.9).abs() < 1e-6);
        assert!(z.freezes == 1 && z.restorations == 1 && zs.freezes == 1);
        assert!(dz.unused_packets * 5.0 < dp.unused_packets, "{dz:?} {dp:?}");
        assert!(ds.unused_packets * 5.0 < dp.unused_packets, "{ds:?} {dp:?}");
        assert!(dz.restored_after_s.unwrap() < dp.restored_after_s.unwrap_or(f64::INFINITY));
        assert!(dz.received_after > dp.received_after, "{transport}");
        // The state time line: frozen during the outage, restoring after it.
        let at = |t: &mobiflow_sim::results::TfrcSummary, when: f64| {
            t.states
                .iter()
                .rev()
                .find(|s| s.0 <= when)
                .map(|s| s.1.clone())
                .unwrap()
        };
        assert_eq!(at(z, 21.0), "FROZEN");
        assert_eq!(at(zs, 21.0), "FROZEN");
        assert_eq!(at(p, 21.0), "NORMAL");
        assert!(z.states.iter().any(|s| s.1 == "RESTORING"));
        assert!(z.states.iter().any(|s| s.2 == "SIGNAL_FREEZE"));
        assert!(z.states.iter().any(|s| s.2 == "SIGNAL_UNFREEZE"));
        // Plain TFRC halves its rate at each nofeedback expiry during the outage.
        assert!(p.nofeedback_expiries >= 2);
    }
}

#[test]
fn runs_are_deterministic() {
    let text = scenario(
        "dccp-ccid3",
        "10Mbps",
        "outages = [[\"20s\", \"23s\"]]\nloss = 0.001",
        "s = \"500B\"\nfreeze = true",
        "40s",
    );
    let a = serde_json::to_string(&run_str(&text)).unwrap();
    let b = serde_json::to_string(&run_str(&text)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn tcp_and_tfrc_share_a_link() {
    let text = r#"
[run]
duration = "60s"
[[links]]
name = "l"
a = "s"
b = "r"
rate = "10Mbps"
delay = "50ms"
queue_limit = "100p"
[[flows]]
name = "tcp"
from = "s"
to = "r"
cc = "newreno"
[[flows]]
name = "tfrc"
from = "s"
to = "r"
transport = "tfrc"
[measure]
intervals = { late = ["20s", "60s"] }
"#;
    let s = run_str(text);
    let (tcp, tfrc) = (&s.flows[0], &s.flows[1]);
    assert!(tcp.tfrc.is_none() && tfrc.tfrc.is_some());
    let total = tcp.intervals["late"] + tfrc.intervals["late"];
    assert!(total > 8.5e6, "{total}");
    let ratio = tfrc.intervals["late"] / tcp.intervals["late"];
    assert!(ratio > 0.2 && ratio < 5.0, "TFRC/TCP {ratio}");
}

fn err(text: &str) -> String {
    load_str(text, Some(std::path::Path::new("x.toml")), &[])
        .expect_err("refused")
        .to_string()
}

#[test]
fn bad_tfrc_settings_name_the_file_the_key_and_the_reason() {
    let base = scenario("tfrc", "10Mbps", "", "s = \"500B\"", "10s");
    // (text replaced in the base, its replacement, how the error starts)
    let tfrc = "transport = \"tfrc\"";
    let s = "s = \"500B\"";
    for (from, to, want) in [
        (
            tfrc,
            "transport = \"sctp\"",
            "flows.0.transport: unknown transport",
        ),
        (
            tfrc,
            "transport = \"tcp\"",
            "flows.0.tfrc: only used with transport",
        ),
        (
            s,
            "s = \"500B\"\nfreeze_warning = \"1s\"",
            "flows.0.tfrc.freeze_warning: only used with freeze = true",
        ),
        (s, "s = \"0B\"", "flows.0.tfrc.s: "),
        (
            s,
            "feedback = \"sometimes\"",
            "flows.0.tfrc.feedback: unknown feedback mode",
        ),
        (
            s,
            "freeze = true\nfreeze_side = \"middle\"",
            "flows.0.tfrc.freeze_side: ",
        ),
        (
            tfrc,
            "transport = \"tfrc\"\ncc = \"cubic\"",
            "flows.0.cc: only used by TCP flows",
        ),
        (
            tfrc,
            "transport = \"tfrc\"\napp = \"web\"",
            "flows.0.app: a web app needs TCP (requests and responses on reliable connections); this flow's transport is TFRC/DCCP",
        ),
        (s, "pacing = true", "flows.0.tfrc.pacing: "),
        (
            "queue_limit = \"100p\"",
            "queue_limit = \"100p\"\nloss = 1.5",
            "links.0.loss: ",
        ),
    ] {
        let e = err(&base.replace(from, to));
        assert!(e.starts_with(&format!("x.toml: {want}")), "{e}");
    }
    // The defaults that are assumptions are reported.
    let sc = load_str(&base.replace("s = \"500B\"", "freeze = true"), None, &[]).unwrap();
    let keys: Vec<&str> = sc.assumed.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.contains(&"flows.0.tfrc.freeze_warning"), "{keys:?}");
    assert!(keys.contains(&"flows.0.tfrc.freeze_side"), "{keys:?}");
}

#[test]
fn captures_of_tfrc_and_dccp_flows_parse_in_tshark() {
    let Some(tshark) = common::tshark() else {
        eprintln!("tshark not installed: skipped");
        return;
    };
    for (transport, proto) in [("tfrc", "udp"), ("dccp-ccid3", "dccp")] {
        let text = scenario(
            transport,
            "2Mbps",
            "outages = [[\"3s\", \"4s\"]]",
            "s = \"500B\"\nfreeze = true",
            "6s",
        )
        .replace(
            "[measure]",
            "[measure]\ncapture = { hosts = [\"s\", \"r\"], snaplen = 128 }",
        );
        let (f, dir) = common::run_captured(&text, &format!("tfrc-pcap-{transport}"));
        let t = f.tfrc.as_ref().unwrap();
        let file = dir.join("s.pcap");
        let fields = |filter: &str| common::frames(&tshark, &file, filter);
        assert_eq!(
            fields("_ws.malformed || _ws.expert.severity >= error"),
            0,
            "{transport}"
        );
        // Every data packet leaves s; every feedback packet arrives there.
        assert_eq!(
            fields(&format!("{proto} && ip.src == 10.0.0.1")),
            t.packets_sent
        );
        assert_eq!(
            fields(&format!("{proto} && ip.src == 10.0.0.2")),
            t.feedback_received
        );
        if proto == "dccp" {
            assert_eq!(fields("dccp.type == 2"), t.packets_sent);
            assert!(fields("dccp.type == 3") > 0);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
