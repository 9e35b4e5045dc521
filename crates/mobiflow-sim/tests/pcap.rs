//! Packet captures checked by tshark (Debian's `tshark`): no malformed packet, and
//! tshark's own TCP analysis agrees with mobiflow's counters for the same flow. Skips,
//! saying so, where tshark is not installed.

use mobiflow_sim::results::FlowSummary;
use mobiflow_sim::{load_str, run_with, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tshark() -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", "command -v tshark"])
        .output()
        .ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!p.is_empty()).then(|| PathBuf::from(p))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mobiflow-pcap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Frames of `file` matching the display filter.
fn count(tshark: &Path, file: &Path, filter: &str) -> u64 {
    let out = Command::new(tshark)
        .arg("-r")
        .arg(file)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64
}

fn run_captured(toml: &str, name: &str) -> (FlowSummary, PathBuf) {
    let sc = load_str(toml, None, &[]).expect("scenario");
    let dir = temp_dir(name);
    let r = run_with(
        &sc,
        &RunOptions {
            out_dir: Some(dir.clone()),
            capture_all_hosts: false,
        },
    )
    .expect("run");
    (r.summary.flows[0].clone(), dir)
}

/// Data segments tshark sees going backwards in sequence space.
const RESENT: &str =
    "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission \
     || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)";

const LOSSY: &str = r#"
[run]
duration = "15s"
[tcp]
rcv_buf = "4MB"
[[links]]
name = "l"
a = "server"
b = "phone"
rate = "10Mbps"
delay = "20ms"
queue_limit = 20
[[flows]]
name = "bulk"
from = "server"
to = "phone"
[measure]
sample_interval = false
capture = { hosts = ["server", "phone"], links = ["l.ab"] }
"#;

const ZERO_WINDOWS: &str = r#"
[run]
duration = "20s"
[tcp]
rcv_buf = "256KB"
[[links]]
name = "l"
a = "server"
b = "phone"
rate = "15Mbps"
delay = "100ms"
queue_limit = 1000
[[flows]]
name = "bulk"
from = "server"
to = "phone"
reader = { kind = "steps", rates = ["0Mbps", "6Mbps", "6Mbps"], step = "1s" }
[measure]
sample_interval = false
capture = { hosts = ["server"] }
"#;

#[test]
fn lossy_transfer_capture_is_well_formed_and_agrees_with_the_counters() {
    let Some(ts) = tshark() else {
        eprintln!("skipped: tshark is not installed (apt-get install -y tshark)");
        return;
    };
    let (f, dir) = run_captured(LOSSY, "lossy");
    let server = dir.join("server.pcap");
    for file in [&server, &dir.join("phone.pcap"), &dir.join("l.ab.pcap")] {
        assert!(count(&ts, file, "frame") > 1000, "{}", file.display());
        assert_eq!(
            count(&ts, file, "_ws.malformed || _ws.expert.severity == error"),
            0,
            "{}",
            file.display()
        );
    }
    assert!(f.retransmits > 0, "the scenario must lose packets: {f:?}");
    // At the sender every segment appears once, as it was sent, so tshark's flags on
    // data that goes backwards in sequence count exactly the segments mobiflow resent.
    // (Wireshark calls a resend that follows the previous one within an RTT
    // "out-of-order": at the sender, where nothing can be reordered, it is a
    // retransmission too.)
    let rtx = count(&ts, &server, RESENT);
    assert_eq!(
        rtx, f.retransmits,
        "tshark retransmissions vs mobiflow: {f:?}"
    );
    // ACKs are never lost here, so the sender sees every duplicate ACK sent.
    assert_eq!(
        count(&ts, &server, "tcp.analysis.duplicate_ack"),
        f.dup_acks,
        "{f:?}"
    );
    assert_eq!(count(&ts, &server, "tcp.flags.syn == 1"), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn zero_window_capture_agrees_with_the_counters() {
    let Some(ts) = tshark() else {
        eprintln!("skipped: tshark is not installed (apt-get install -y tshark)");
        return;
    };
    let (f, dir) = run_captured(ZERO_WINDOWS, "zero");
    let server = dir.join("server.pcap");
    assert_eq!(
        count(
            &ts,
            &server,
            "_ws.malformed || _ws.expert.severity == error"
        ),
        0
    );
    assert!(f.zero_window_acks > 0, "{f:?}");
    assert_eq!(
        count(&ts, &server, "tcp.analysis.zero_window"),
        f.zero_window_acks,
        "{f:?}"
    );
    assert_eq!(
        count(&ts, &server, "tcp.analysis.window_update"),
        f.window_updates,
        "{f:?}"
    );
    assert_eq!(count(&ts, &server, RESENT), f.retransmits, "{f:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn handshake_carries_no_ack_number_without_the_ack_flag() {
    let Some(ts) = tshark() else {
        eprintln!("skipped: tshark is not installed (apt-get install -y tshark)");
        return;
    };
    let (_, dir) = run_captured(LOSSY, "handshake");
    let server = dir.join("server.pcap");
    // tshark's expert note "The acknowledgment number field is nonzero while the ACK
    // flag is not set" (tcp.ack.nonzero).
    assert_eq!(count(&ts, &server, "tcp.ack.nonzero"), 0);
    assert_eq!(
        count(
            &ts,
            &server,
            "_ws.expert.severity >= warning && tcp.flags.syn == 1"
        ),
        0
    );
    // The opening SYN, then the SYN-ACK: the second has the ACK flag and acknowledges
    // the first's sequence number + 1.
    assert_eq!(
        count(&ts, &server, "tcp.flags.syn == 1 && tcp.flags.ack == 0"),
        1
    );
    assert_eq!(
        count(&ts, &server, "tcp.flags.syn == 1 && tcp.flags.ack == 1"),
        1
    );
    assert_eq!(
        count(
            &ts,
            &server,
            "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.ack == 1"
        ),
        1
    );
    let _ = std::fs::remove_dir_all(dir);
}
