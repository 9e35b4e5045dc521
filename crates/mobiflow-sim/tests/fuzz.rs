//! Fuzz targets (issue 22, point 1) on the stable harness: the scenario loader with
//! `--set` overrides, the Mahimahi trace reader, the unit parsers and the pcap
//! encoder. The targets are in `harness/targets.rs` (shared with the cargo-fuzz
//! targets of `fuzz/`), the mutation engine in `harness/mod.rs`; docs/fuzzing.md says
//! how to run them longer. `make test-fuzz` runs each for its default number of cases
//! with overflow checks on.

mod harness;

use harness::targets::{
    pcap_target, scenario_target, trace_target, units_target, KEYS, SET, VALUES,
};
use harness::{below, files, pick, repo, Rng};
use rand_core::{RngCore, SeedableRng};
use std::path::PathBuf;

fn trace_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("mobiflow-fuzz-trace-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn fuzz_scenario_loader_with_overrides() {
    let mut rng = Rng::seed_from_u64(7);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for f in files(&repo().join("scenarios"), ".toml") {
        let text = std::fs::read(&f).expect("scenario");
        // The file alone, and with one to three random overrides.
        let mut with = text.clone();
        with.extend_from_slice(SET.as_bytes());
        for _ in 0..1 + below(&mut rng, 3) {
            with.extend_from_slice(
                format!("{}={}\n", pick(&mut rng, KEYS), pick(&mut rng, VALUES)).as_bytes(),
            );
        }
        seeds.push(text);
        seeds.push(with);
    }
    let dict: Vec<&str> = VALUES.iter().chain(KEYS).copied().collect();
    harness::fuzz("scenario_loader", 6000, &seeds, &dict, |d| {
        scenario_target(&repo(), d)
    });
}

#[test]
fn fuzz_mahimahi_trace_reader() {
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for f in files(&repo().join("traces"), "") {
        if f.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("trace");
        // The first 300 lines of each shipped trace: the whole files are large.
        let head: String = text.lines().take(300).map(|l| format!("{l}\n")).collect();
        seeds.push(head.into_bytes());
    }
    for s in ["0\n", "1\n1\n1\n", "5", "\n\n7\n\n", "0\n0\n", "1\r\n2\r\n"] {
        seeds.push(s.as_bytes().to_vec());
    }
    let dict = [
        "0",
        "1",
        "\n",
        "\r\n",
        " ",
        "-1",
        "18446744073709551615",
        "18446744073709551616",
        "9223372036854775807",
        "4294967295",
        "1000000000000",
        "99999999999999",
        "+1",
        "1.5",
        "\u{feff}",
        "\t",
    ];
    let dir = trace_dir();
    harness::fuzz("trace_reader", 5000, &seeds, &dict, |d| {
        trace_target(&dir, d)
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fuzz_unit_parsers() {
    let mut seeds: Vec<Vec<u8>> = [
        "15Mbps",
        "15 Mbit/s",
        "384kbps",
        "1.5Gbps",
        "800bps",
        "2e6",
        "1_000kbps",
        "265ms",
        "1.5s",
        "100us",
        "100µs",
        "10ns",
        "2min",
        "1h",
        "256KB",
        "256KiB",
        "1.5MB",
        "1GB",
        "1460B",
        "1460 bytes",
        "100p",
        "100pkts",
        "100 packets",
        "64KB",
        "0",
        "0.5",
        "1e-9s",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    // Every quoted value of the shipped scenarios.
    for f in files(&repo().join("scenarios"), ".toml") {
        let text = std::fs::read_to_string(&f).expect("scenario");
        for part in text.split('"').skip(1).step_by(2) {
            if part.len() < 24 && part.starts_with(|c: char| c.is_ascii_digit()) {
                seeds.push(part.as_bytes().to_vec());
            }
        }
    }
    seeds.sort();
    seeds.dedup();
    harness::fuzz("unit_parsers", 200_000, &seeds, VALUES, units_target);
}

#[test]
fn fuzz_pcap_encoder() {
    let mut rng = Rng::seed_from_u64(3);
    let seeds: Vec<Vec<u8>> = (0..64)
        .map(|_| {
            let n = 16 + below(&mut rng, 200);
            (0..n).map(|_| rng.next_u64() as u8).collect()
        })
        .collect();
    let dict = [
        "\0\0\0\0\0\0\0\0",
        "\u{ff}\u{ff}\u{ff}\u{ff}",
        "\x7f\u{f0}",
        "\x01",
        "\x05",
    ];
    harness::fuzz("pcap_encoder", 500_000, &seeds, &dict, pcap_target);
}
