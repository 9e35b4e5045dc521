//! Packet captures checked by tshark (Debian's `tshark`): no malformed packet, and
//! tshark's own TCP analysis agrees with mobiflow's counters for the same flow. Skips,
//! saying so, where tshark is not installed.

mod common;

use common::{frames, run_captured};
use mobiflow_sim::results::FlowSummary;
use std::path::Path;

/// Runs `toml` with its captures in a fresh folder, hands tshark, the flow's summary and
/// the folder to `check`, then removes the folder; skips, saying so, where tshark is
/// not installed.
fn with_capture(toml: &str, name: &str, check: impl FnOnce(&Path, &FlowSummary, &Path)) {
    let Some(ts) = common::tshark() else {
        eprintln!("skipped: tshark is not installed (apt-get install -y tshark)");
        return;
    };
    let (f, dir) = run_captured(toml, &format!("pcap-{name}"));
    check(&ts, &f, &dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// tshark finds nothing malformed and no error in `file`.
fn assert_well_formed(ts: &Path, file: &Path) {
    assert_eq!(
        frames(ts, file, "_ws.malformed || _ws.expert.severity >= error"),
        0,
        "{}",
        file.display()
    );
}

/// tshark counts each filter's frames in `file` as wanted (`context` for the message).
fn assert_counts(ts: &Path, file: &Path, wants: &[(&str, u64)], context: &str) {
    for (filter, want) in wants {
        assert_eq!(
            frames(ts, file, filter),
            *want,
            "tshark's {filter:?}: {context}"
        );
    }
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
    with_capture(LOSSY, "lossy", |ts, f, dir| {
        let server = dir.join("server.pcap");
        for file in [&server, &dir.join("phone.pcap"), &dir.join("l.ab.pcap")] {
            assert!(frames(ts, file, "frame") > 1000, "{}", file.display());
            assert_well_formed(ts, file);
        }
        assert!(f.retransmits > 0, "the scenario must lose packets: {f:?}");
        let wants = [
            // At the sender every segment appears once, as it was sent, so tshark's flags
            // on data that goes backwards in sequence count exactly the segments mobiflow
            // resent. (Wireshark calls a resend that follows the previous one within an
            // RTT "out-of-order": at the sender, where nothing can be reordered, it is a
            // retransmission too.)
            (RESENT, f.retransmits),
            // ACKs are never lost here, so the sender sees every duplicate ACK sent.
            ("tcp.analysis.duplicate_ack", f.dup_acks),
            ("tcp.flags.syn == 1", 2),
        ];
        assert_counts(ts, &server, &wants, &format!("{f:?}"));
    });
}

#[test]
fn zero_window_capture_agrees_with_the_counters() {
    with_capture(ZERO_WINDOWS, "zero", |ts, f, dir| {
        let server = dir.join("server.pcap");
        assert_well_formed(ts, &server);
        assert!(f.zero_window_acks > 0, "{f:?}");
        let wants = [
            ("tcp.analysis.zero_window", f.zero_window_acks),
            ("tcp.analysis.window_update", f.window_updates),
            (RESENT, f.retransmits),
        ];
        assert_counts(ts, &server, &wants, &format!("{f:?}"));
    });
}

#[test]
fn handshake_carries_no_ack_number_without_the_ack_flag() {
    with_capture(LOSSY, "handshake", |ts, _, dir| {
        let server = dir.join("server.pcap");
        let wants = [
            // tshark's expert note "The acknowledgment number field is nonzero while the
            // ACK flag is not set" (tcp.ack.nonzero).
            ("tcp.ack.nonzero", 0),
            ("_ws.expert.severity >= warning && tcp.flags.syn == 1", 0),
            // The opening SYN, then the SYN-ACK: the second has the ACK flag and
            // acknowledges the first's sequence number + 1.
            ("tcp.flags.syn == 1 && tcp.flags.ack == 0", 1),
            ("tcp.flags.syn == 1 && tcp.flags.ack == 1", 1),
            (
                "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.ack == 1",
                1,
            ),
        ];
        assert_counts(ts, &server, &wants, "the handshake");
    });
}
