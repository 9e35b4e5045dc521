//! Spurious retransmissions in the engine, under `profile = "linux"`: a path that only
//! reorders (the link's `reorder` keys) and a delay spike longer than the RTO (a
//! `delay_schedule` step), with D-SACK, undo and F-RTO on (the profile's defaults)
//! and off. The summary's `spurious_retransmits` is the ground truth (a retransmission
//! that brought the receiver nothing new), `undos` what the sender detected.

mod common;

use mobiflow_sim::results::FlowSummary;

const OFF: &[(&str, &str)] = &[
    ("tcp.dsack", "false"),
    ("tcp.undo", "false"),
    ("tcp.frto", "false"),
];

fn run(text: &str, sets: &[(&str, &str)]) -> (FlowSummary, u64) {
    let s = common::run_text(text, sets);
    let drops = s.links.iter().map(|l| l.drops).sum();
    (s.flows[0].clone(), drops)
}

/// A bulk flow under `profile = "linux"` with a receive buffer of `rcv_buf`, over a
/// 10 Mb/s link with a 1000-packet queue whose delay and other keys are `link`.
fn scenario(rcv_buf: &str, link: &str) -> String {
    format!(
        r#"
[run]
duration = "30s"
[tcp]
profile = "linux"
rcv_buf = "{rcv_buf}"
[[links]]
name = "access"
a = "server"
b = "phone"
rate = "10Mbps"
queue_limit = "1000p"
{link}
{flow}
[measure]
sample_interval = false
"#,
        flow = common::flow("bulk", "server", "phone", "bulk")
    )
}

/// 1 % of packets held 20 ms longer on a 25 ms path; the 256 KB receive window keeps
/// the queue from overflowing, so nothing is lost.
fn reorder() -> String {
    scenario(
        "256KB",
        "delay = \"25ms\"\nreorder = 0.01\nreorder_delay = \"20ms\"",
    )
}

#[test]
fn reordering_alone_makes_spurious_retransmissions_that_linux_undoes() {
    let (on, drops_on) = run(&reorder(), &[]);
    let (off, drops_off) = run(&reorder(), OFF);
    assert_eq!(
        (drops_on, drops_off),
        (0, 0),
        "no loss: every retransmission is needless"
    );
    // Without undo, every fast retransmit is a reduction that stands; the receiver saw
    // each retransmission's bytes already (one may overtake its own delayed original).
    assert_eq!(off.undos, 0);
    assert!(off.fast_retransmits > 20, "{off:?}");
    assert!(off.spurious_retransmits + 2 >= off.retransmits, "{off:?}");
    // With D-SACK and Eifel (linux), each reduction is undone.
    assert!(on.fast_retransmits > 20, "{on:?}");
    // (The last episode may still be open when the run ends: at 20, 29, 31 and 40 s
    // every one is undone, at 30 s all but the last.)
    assert!(
        on.undos <= on.fast_retransmits && on.undos + 1 >= on.fast_retransmits,
        "{on:?}"
    );
    assert!(on.spurious_retransmits + 2 >= on.retransmits, "{on:?}");
    assert!(
        on.goodput_bps > 2.0 * off.goodput_bps,
        "{} vs {}",
        on.goodput_bps,
        off.goodput_bps
    );
}

/// The one-way delay jumps from 25 ms to 1.5 s for 1 s, in order, with no loss; the
/// receive window keeps the flow off the queue.
fn spike() -> String {
    scenario(
        "64KB",
        "delay_schedule = [[\"0s\", \"25ms\"], [\"10s\", \"1500ms\"], [\"11s\", \"25ms\"]]\nfifo = true",
    )
}

#[test]
fn a_delay_spike_longer_than_the_rto_is_a_spurious_timeout_that_frto_undoes() {
    // With the RFC's loss detection (duplicate ACKs, no RACK, no tail loss probe,
    // whose probe would be one more spurious retransmission before the timeout): this
    // test counts the timeout's. RACK-TLP with F-RTO is the linux profile's default.
    const DUPTHRESH: &[(&str, &str)] = &[("tcp.tlp", "false"), ("tcp.loss_detection", "dupthresh")];
    let (on, drops_on) = run(&spike(), DUPTHRESH);
    let (off, drops_off) = run(&spike(), &[OFF, DUPTHRESH].concat());
    assert_eq!((drops_on, drops_off), (0, 0));
    assert!(
        on.timeouts >= 1 && off.timeouts == on.timeouts,
        "{on:?} {off:?}"
    );
    // Without F-RTO: the go-back-N resend of a window that was not lost.
    assert_eq!(off.undos, 0);
    assert!(off.retransmits > 10 * off.timeouts, "{off:?}");
    assert_eq!(off.spurious_retransmits, off.retransmits);
    // With it (and Eifel): the head only, once per timeout, and the episode undone.
    assert_eq!(on.retransmits, on.timeouts, "{on:?}");
    assert_eq!(on.spurious_retransmits, on.retransmits);
    assert_eq!(on.undos, 1);
    assert!(on.bytes_delivered > off.bytes_delivered);
}
