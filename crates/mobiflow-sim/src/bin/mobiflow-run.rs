//! `mobiflow-run`: run a scenario from Rust alone, without the Python front end.
//!
//! For benchmarks and profilers (the engine's time, without interpreter start-up) and
//! for machines without Python. Prints one JSON line: wall seconds of the simulation,
//! events, data packets delivered in order (payload bytes / MSS summed over flows) and
//! the summary. Errors name the file, the key and the reason and exit with status 2.
//!
//! Usage: mobiflow-run SCENARIO.toml [--set KEY=VALUE]... [--out DIR]
//!        [--budget SIZE | --no-budget]
//!        mobiflow-run --doc-tables docs/scenarios.md
//!
//! `--doc-tables FILE` rewrites the parameter tables of `docs/scenarios.md` from the
//! declarations of `mobiflow_sim::scenario` (`make docs-tables`).
//!
//! A scenario whose estimated memory (`mobiflow_sim::budget`) exceeds the budget
//! (default 4 GiB) is refused with status 2, as by `mobiflow run`.

use mobiflow_sim::model::Transport;
use mobiflow_sim::scenario::split_override;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: mobiflow-run SCENARIO.toml [--set KEY=VALUE]... [--out DIR] \
     [--budget SIZE | --no-budget]\n       mobiflow-run --doc-tables docs/scenarios.md";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path: Option<PathBuf> = None;
    let mut overrides = Vec::new();
    let mut out: Option<PathBuf> = None;
    let mut budget = Some(mobiflow_sim::budget::DEFAULT_BUDGET_BYTES);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--set" => match args.next().map(|kv| split_override(&kv)) {
                Some(Ok(kv)) => overrides.push(kv),
                Some(Err(e)) => return usage(&e),
                None => return usage("--set needs KEY=VALUE"),
            },
            "--out" => match args.next() {
                Some(d) => out = Some(d.into()),
                None => return usage("--out needs a folder"),
            },
            "--budget" => match args.next().map(|b| mobiflow_sim::units::parse_size(&b)) {
                Some(Ok(b)) => budget = Some(b),
                Some(Err(e)) => return usage(&format!("--budget: {e}")),
                None => return usage("--budget needs a size like 8GB"),
            },
            "--no-budget" => budget = None,
            "--doc-tables" => match args.next() {
                Some(f) => return doc_tables(&PathBuf::from(f)),
                None => return usage("--doc-tables needs the file (docs/scenarios.md)"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if path.is_none() && !a.starts_with('-') => path = Some(a.into()),
            _ => return usage(&format!("unexpected argument {a:?}")),
        }
    }
    let Some(path) = path else {
        return usage("a scenario file is needed");
    };
    let sc = match mobiflow_sim::load_file(&path, &overrides) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(b) = budget {
        if let Err(e) = mobiflow_sim::budget::check(&sc, b) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let t0 = std::time::Instant::now();
    let opts = mobiflow_sim::RunOptions {
        out_dir: out.clone(),
        capture_all_hosts: false,
    };
    let result = match mobiflow_sim::run_with(&sc, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let packets: u64 = result
        .summary
        .flows
        .iter()
        .zip(&sc.flows)
        .map(|(f, spec)| {
            let per_packet = match &spec.transport {
                Transport::Tcp(cfg) => cfg.mss,
                Transport::Tfrc(t) => t.cfg.s,
            };
            f.bytes_delivered / per_packet.max(1) as u64
        })
        .sum();
    if let Some(dir) = out {
        if let Err(e) = mobiflow_sim::output::write_run(&result, &dir) {
            eprintln!("error: {}: {e}", dir.display());
            return ExitCode::from(1);
        }
    }
    let line = serde_json::json!({
        "wall_s": wall,
        "events": result.summary.events,
        "packets": packets,
        "summary": result.summary,
    });
    println!("{line}");
    ExitCode::SUCCESS
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n{USAGE}");
    ExitCode::from(2)
}

/// Rewrites the generated tables of the scenario documentation `file` in place.
fn doc_tables(file: &std::path::Path) -> ExitCode {
    let updated = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
        .and_then(|text| mobiflow_sim::scenario::update_doc_tables(&text))
        .and_then(|new| {
            std::fs::write(file, new).map_err(|e| format!("cannot write {}: {e}", file.display()))
        });
    match updated {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
