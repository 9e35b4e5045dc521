//! Vertical handoffs in whole runs (the vertical-handoff paper: Tsukamoto, Fukuda, Hori
//! and Oie, "New flow control schemes of TCP for multimodal mobile hosts", IEICE Trans.
//! Commun. E89-B(6), 2006): the `handoffs` syntax lowers to outages
//! and schedules, and `engine/mobility.rs` tells the right endpoint at the right time.
//! Run in release (`cargo test --release -p mobiflow-sim --test handoff`).

mod common;

use mobiflow_proto::time::Duration;
use mobiflow_sim::model::{DelayModel, RateModel};
use mobiflow_sim::results::FlowSummary;
use mobiflow_sim::scenario::load_str;

/// The vertical-handoff paper's first case:
/// fh -(10 Mb/s, 10 ms)- ar -(20 Mb/s, 1 ms -> 384 kb/s, 70 ms)- mh.
const CASE: &str = r#"
[run]
duration = "20s"

[tcp]
profile = "ns2"
max_send_window = 1000000
rcv_buf = "64MB"

[[links]]
name = "wired"
a = "fh"
b = "ar"
rate = "10Mbps"
delay = "10ms"
queue_limit = 49

[[links]]
name = "access"
a = "ar"
b = "mh"
rate = "20Mbps"
delay = "1ms"
queue_limit = 49
handoffs = [{ at = "10s", interruption = "0.5s", rate = "384kbps", delay = "70ms" }]

[measure]
intervals = { handoff = ["10s", "15s"] }
"#;

fn flow(from: &str, to: &str) -> String {
    common::flow("bulk", from, to, "bulk")
}

fn run(text: &str, sets: &[(&str, &str)]) -> FlowSummary {
    common::run_text(text, sets).flows[0].clone()
}

fn down(sets: &[(&str, &str)]) -> FlowSummary {
    run(&format!("{CASE}{}", flow("fh", "mh")), sets)
}

/// `better` delivered more than `tcp` over the handoff interval (10-15 s).
fn assert_more_across_the_handoff(better: &FlowSummary, tcp: &FlowSummary) {
    let (b, t) = (better.intervals["handoff"], tcp.intervals["handoff"]);
    assert!(b > t, "{b} vs {t}");
}

#[test]
fn handoffs_lower_to_outages_and_schedules_on_both_directions() {
    let sc = load_str(&format!("{CASE}{}", flow("fh", "mh")), None, &[]).unwrap();
    let access = &sc.links[1];
    for d in &access.dirs {
        assert_eq!(
            d.outages,
            vec![(Duration::from_secs(10), Duration::from_millis(10_500))]
        );
        match &d.rate {
            RateModel::Schedule { points, period } => {
                assert_eq!(
                    points,
                    &vec![
                        (Duration::ZERO, 20_000_000),
                        (Duration::from_millis(10_500), 384_000)
                    ]
                );
                assert!(period.is_none());
            }
            r => panic!("{r:?}"),
        }
        match &d.delay {
            DelayModel::Schedule { points, .. } => assert_eq!(
                points,
                &vec![
                    (Duration::ZERO, Duration::from_millis(1)),
                    (Duration::from_millis(10_500), Duration::from_millis(70))
                ]
            ),
            r => panic!("{r:?}"),
        }
    }
}

#[test]
fn handoffs_and_the_equivalent_outages_and_schedules_run_identically() {
    let lowered = CASE.replace(
        r#"handoffs = [{ at = "10s", interruption = "0.5s", rate = "384kbps", delay = "70ms" }]"#,
        "outages = [[\"10s\", \"10500ms\"]]",
    );
    let lowered = lowered.replace(
        "rate = \"20Mbps\"\ndelay = \"1ms\"",
        "rate_schedule = [[\"0s\", \"20Mbps\"], [\"10500ms\", \"384kbps\"]]\n\
         delay_schedule = [[\"0s\", \"1ms\"], [\"10500ms\", \"70ms\"]]",
    );
    assert_ne!(lowered, CASE);
    let a = down(&[]);
    let b = run(&format!("{lowered}{}", flow("fh", "mh")), &[]);
    assert_eq!(a, b);
}

#[test]
fn plain_tcp_gets_no_mobility_events() {
    let f = down(&[]);
    assert_eq!(f.handoff.interface_changes, 0);
    assert_eq!(f.handoff.notices, 0);
    assert_eq!(f.handoff.freezes, 0);
}

#[test]
fn a_mobile_receiver_notifies_the_sender_on_an_ack_by_default() {
    let f = down(&[("tcp.handoff_reaction", "iett")]);
    assert_eq!(f.handoff.notices, 1);
    assert_eq!(f.handoff.interface_changes, 1);
    assert_eq!(f.handoff.forced_expirations, 1);
}

#[test]
fn out_of_band_signal_reaches_the_sender_without_an_ack() {
    let f = down(&[
        ("tcp.handoff_reaction", "iett+ba-sst"),
        ("tcp.handoff_signal", "out-of-band"),
    ]);
    assert_eq!(f.handoff.notices, 0);
    assert_eq!(f.handoff.interface_changes, 1);
    assert_eq!(f.handoff.forced_expirations, 1);
    assert!(f.handoff.ba_sst_estimates >= 1);
}

#[test]
fn a_mobile_sender_reacts_locally() {
    // The mobile host sends: the flow goes mh -> fh, and the access link touches mh.
    let f = run(
        &format!("{CASE}{}", flow("mh", "fh")),
        &[("tcp.handoff_reaction", "iett")],
    );
    assert_eq!(f.handoff.notices, 0);
    assert_eq!(f.handoff.interface_changes, 1);
}

#[test]
fn ba_sst_measures_the_new_interface_and_beats_tcp_after_the_change() {
    let tcp = down(&[]);
    let ba = down(&[("tcp.handoff_reaction", "iett+ba-sst")]);
    let bw = ba.handoff.ba_sst_bps.expect("an estimate");
    // 384 kb/s carries 1000 payload bytes per 1040 on the wire.
    let want = 384e3 * 1000.0 / 1040.0;
    assert!((bw / want - 1.0).abs() < 0.02, "{bw} vs {want}");
    // ssthresh = BW x RTT: a few segments on a 384 kb/s, ~180 ms path.
    let ss = ba.handoff.ba_sst_ssthresh_bytes.unwrap();
    let rtt = ba.handoff.ba_sst_rtt_ms.unwrap() / 1e3;
    assert!(
        (ss as f64 - bw / 8.0 * rtt).abs() <= 1000.0,
        "{ss} {bw} {rtt}"
    );
    assert_more_across_the_handoff(&ba, &tcp);
}

#[test]
fn freeze_tcp_freezes_a_warning_ahead_and_sends_tr_acks() {
    // Same-rate "handoff" (the interface comes back unchanged): Freeze-TCP spares
    // the sender the timeouts plain TCP takes while disconnected, and it resumes at
    // reconnection with its old window.
    let same = CASE.replace(
        r#"rate = "384kbps", delay = "70ms""#,
        r#"rate = "20Mbps", delay = "1ms""#,
    );
    let text = format!("{same}{}", flow("fh", "mh"));
    let tcp = run(&text, &[]);
    let frozen = run(
        &text,
        &[("tcp.freeze", "true"), ("tcp.freeze_warning", "100ms")],
    );
    assert_eq!(frozen.handoff.freezes, 1);
    assert_eq!(frozen.handoff.tr_acks, 3);
    assert!(frozen.zero_windows >= 1);
    // No timeout while disconnected: the only ones after the change come from the
    // old window sent at once into the wired queue on reconnection.
    assert!(
        frozen.timeouts < tcp.timeouts,
        "{} vs {}",
        frozen.timeouts,
        tcp.timeouts
    );
    assert_more_across_the_handoff(&frozen, &tcp);
}

#[test]
fn handoff_runs_are_deterministic() {
    let sets = [
        ("tcp.handoff_reaction", "iett+ba-sst"),
        ("tcp.freeze", "true"),
    ];
    assert_eq!(down(&sets), down(&sets));
}

fn load_err(text: &str) -> String {
    load_str(text, None, &[]).unwrap_err().to_string()
}

#[test]
fn bad_handoffs_are_refused_with_the_key() {
    let base = format!("{CASE}{}", flow("fh", "mh"));
    // (text replaced in the base, its replacement, what the error says)
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            r#"interruption = "0.5s""#,
            r#"interruption = "0s""#,
            &["links.1.handoffs.0.interruption"],
        ),
        (
            r#"handoffs = [{ at"#,
            r#"handoffs = [{ at = "10.2s", interruption = "1s" }, { at"#,
            &["links.1.handoffs.1.at", "must be sorted"],
        ),
        (
            r#"delay = "70ms" }"#,
            r#"delay = "70ms", speed = 1 }"#,
            &["links.1.handoffs.0"],
        ),
        (
            "rate = \"20Mbps\"\ndelay = \"1ms\"",
            "rate_schedule = [[\"0s\", \"20Mbps\"]]\ndelay = \"1ms\"",
            &["links.1.rate_schedule", "conflicts with links.1.handoffs"],
        ),
        (
            "queue_limit = 49\nhandoffs",
            "queue_limit = 49\noutages = [[\"10200ms\", \"11s\"]]\nhandoffs",
            &["overlaps"],
        ),
    ];
    for (from, to, wants) in cases {
        let e = load_err(&base.replace(from, to));
        for want in wants {
            assert!(e.contains(want), "{e}");
        }
    }
    let e = load_err(&format!(
        "{base}[flows.tcp]\nhandoff_reaction = \"magic\"\n"
    ));
    assert!(e.contains("flows.0.tcp.handoff_reaction"), "{e}");
    assert!(e.contains("iett+ba-sst"), "{e}");
}

#[test]
fn freeze_starts_the_configured_warning_before_the_outage_and_ends_at_reconnection() {
    for (warning, from_ms) in [("100ms", 9900), ("300ms", 9700)] {
        let text = format!(
            "{CASE}{}[measure]\nsample_interval = \"10ms\"\n",
            flow("fh", "mh")
        )
        .replace(
            "[measure]\nintervals = { handoff = [\"10s\", \"15s\"] }\n",
            "",
        );
        let sets = common::overrides(&[("tcp.freeze", "true"), ("tcp.freeze_warning", warning)]);
        let sc = load_str(&text, None, &sets).expect("scenario loads");
        let series = mobiflow_sim::run(&sc).expect("run").series.tcp;
        let zero: Vec<u64> = series
            .time_s
            .iter()
            .zip(&series.rwnd_bytes)
            // (Before the first ACK the last advertised window is 0 too.)
            .filter(|(t, w)| **w == 0 && **t > 1.0)
            .map(|(t, _)| (t * 1000.0).round() as u64)
            .collect();
        // Sampled every 10 ms: the window is zero from the warning to reconnection.
        assert_eq!(zero.first(), Some(&from_ms), "{warning}");
        assert_eq!(zero.last(), Some(&10_490), "{warning}");
        assert_eq!(zero.len() as u64, (10_500 - from_ms) / 10, "{warning}");
    }
}
