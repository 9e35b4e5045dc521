//! `mobiflow-run`: run a scenario from Rust alone, without the Python front end.
//!
//! For benchmarks and profilers (the engine's time, without interpreter start-up) and
//! for machines without Python. Prints one JSON line: wall seconds of the simulation,
//! events, data packets delivered in order (payload bytes / MSS summed over flows) and
//! the summary. Errors name the file, the key and the reason and exit with status 2.
//!
//! Usage: mobiflow-run SCENARIO.toml [--set KEY=VALUE]... [--out DIR]
//!        [--budget SIZE | --no-budget]
//!        mobiflow-run --doc-tables docs
//!
//! `--doc-tables DOCS` rewrites the generated tables of the documents in the folder
//! `DOCS` (`make docs-tables`): those of `scenarios.md` from the declarations of
//! `mobiflow_sim::scenario` and the registration lists, the map of registered items in
//! `architecture.md` from the registration lists.
//!
//! A scenario whose estimated memory (`mobiflow_sim::budget`) exceeds the budget
//! (default 4 GiB) is refused with status 2, as by `mobiflow run`.

use mobiflow_sim::model::Transport;
use mobiflow_sim::scenario::split_override;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: mobiflow-run SCENARIO.toml [--set KEY=VALUE]... [--out DIR] \
     [--budget SIZE | --no-budget]\n       mobiflow-run --doc-tables docs";

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
                None => return usage("--doc-tables needs the docs folder (docs)"),
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
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = write_line(&mut stdout, wall, packets, result.summary) {
        eprintln!("error: writing the result: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The result line: `{"events", "packets", "summary", "wall_s"}` as compact JSON with
/// every object's keys sorted, byte for byte what printing `serde_json::json!` of it
/// gives, without building the whole tree at once: the flows' summaries are turned
/// into JSON one at a time (with 10,000 flows the tree was most of the peak memory).
fn write_line(
    out: &mut impl std::io::Write,
    wall: f64,
    packets: u64,
    mut summary: mobiflow_sim::results::Summary,
) -> std::io::Result<()> {
    use serde_json::{to_value, Value};
    let flows = std::mem::take(&mut summary.flows);
    let Value::Object(rest) = to_value(&summary)? else {
        unreachable!("a summary serialises as an object")
    };
    let events = to_value(summary.events)?;
    write!(
        out,
        "{{\"events\":{events},\"packets\":{packets},\"summary\":{{"
    )?;
    for (i, (key, value)) in rest.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(out, "{sep}{}:", Value::String(key.clone()))?;
        if key == "flows" {
            out.write_all(b"[")?;
            for (j, f) in flows.iter().enumerate() {
                let sep = if j == 0 { "" } else { "," };
                write!(out, "{sep}{}", to_value(f)?)?;
            }
            out.write_all(b"]")?;
        } else {
            write!(out, "{value}")?;
        }
    }
    writeln!(out, "}},\"wall_s\":{}}}", to_value(wall)?)
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n{USAGE}");
    ExitCode::from(2)
}

/// Rewrites the generated tables of the documents in the folder `docs` in place.
fn doc_tables(docs: &std::path::Path) -> ExitCode {
    let updated = mobiflow_sim::scenario::generated_docs().try_for_each(|doc| {
        let file = docs.join(doc);
        std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))
            .and_then(|text| mobiflow_sim::scenario::update_doc_tables(doc, &text))
            .and_then(|new| {
                std::fs::write(&file, new)
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))
            })
    });
    match updated {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::write_line;

    /// The line written flow by flow is byte for byte the JSON of the whole result
    /// built as one tree (keys sorted), as the program printed it before.
    #[test]
    fn the_result_line_is_the_json_of_the_whole_tree() {
        let toml = "name = \"t\"\n[run]\nduration = \"2s\"\n\
            [[links]]\nname = \"l\"\na = \"s\"\nb = \"r\"\nrate = \"10Mbps\"\ndelay = \"10ms\"\n\
            [[flows]]\nname = \"a\"\nfrom = \"s\"\nto = \"r\"\n\
            [[flows]]\nname = \"b\"\nfrom = \"s\"\nto = \"r\"\nstart = \"0.5s\"\n";
        let sc = mobiflow_sim::scenario::load_str(toml, None, &[]).expect("valid scenario");
        let summary = mobiflow_sim::run(&sc).expect("runs").summary;
        assert_eq!(summary.flows.len(), 2);
        let tree = serde_json::json!({
            "wall_s": 0.25,
            "events": summary.events,
            "packets": 1234,
            "summary": summary,
        });
        let mut out = Vec::new();
        write_line(&mut out, 0.25, 1234, summary).expect("writes");
        assert_eq!(String::from_utf8(out).unwrap(), format!("{tree}\n"));
    }
}
