//! Helpers shared by the integration tests: each test file is a crate of its own and
//! takes this module with `mod common;`, using what it needs of it.

#![allow(dead_code)]

use mobiflow_sim::results::{FlowSummary, Summary};
use mobiflow_sim::{load_file, load_str, run, run_with, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A path in the repository (`scenarios/afc`, `traces`).
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// `--set` style overrides as the loaders take them.
pub fn overrides(sets: &[(&str, &str)]) -> Vec<(String, String)> {
    sets.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The summary of a run of the scenario `text` with the overrides `sets`.
pub fn run_text(text: &str, sets: &[(&str, &str)]) -> Summary {
    let sc = load_str(text, None, &overrides(sets)).expect("scenario loads");
    run(&sc).expect("run").summary
}

/// A `[[flows]]` table: flow `name` from `from` to `to` with app `app`; the caller
/// may append keys of its own.
pub fn flow(name: &str, from: &str, to: &str, app: &str) -> String {
    format!("[[flows]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\napp = \"{app}\"\n")
}

/// The HSPA access of the RSFC paper (Xu, Leong, Leong and Razeen, "Dynamic Regulation
/// of Mobile 3G/HSPA Uplink Buffer with Receiver-side Flow Control", IEEE ICNP 2012):
/// 7.2 Mb/s down, 2 Mb/s up, 40 ms each way, a 1000-packet buffer both ways; 60 s runs.
pub const HSPA: &str = r#"
[run]
duration = "60s"

[[links]]
name = "hspa"
a = "server"
b = "phone"
delay = "40ms"
queue_limit = "1000p"
[links.ab]
rate = "7.2Mbps"
[links.ba]
rate = "2Mbps"
"#;

/// Where tshark is installed, if it is.
pub fn tshark() -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", "command -v tshark"])
        .output()
        .ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!p.is_empty()).then(|| PathBuf::from(p))
}

/// Frames of the capture `file` matching the display filter.
pub fn frames(tshark: &Path, file: &Path, filter: &str) -> u64 {
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

/// Runs the scenario `text` writing its outputs (captures among them) to a fresh
/// temporary folder named after `name`: the first flow's summary and the folder.
pub fn run_captured(text: &str, name: &str) -> (FlowSummary, PathBuf) {
    let sc = load_str(text, None, &[]).expect("scenario loads");
    let dir = std::env::temp_dir().join(format!("mobiflow-capture-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
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

/// The summary of a run of the scenario file `rel` (a path in the repository) with the
/// overrides `sets`.
pub fn run_file(rel: &str, sets: &[(&str, &str)]) -> Summary {
    let path = repo(rel);
    let sc =
        load_file(&path, &overrides(sets)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    run(&sc).expect("run").summary
}
