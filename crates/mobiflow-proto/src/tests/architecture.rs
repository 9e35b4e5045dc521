//! docs/architecture.md stays true: every file it names exists, and every congestion
//! controller, receive-window policy and sender extension registered in the code has
//! its file on the map (the simulator's apps: `engine/app/mod.rs`).

use crate::cc::CcKind;
use crate::flow::FlowControl;
use crate::registry::Entry;
use crate::tcp::{HandoffReaction, SenderExt, SenderExtension, TcpConfig, TcpSender};
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the crate lives in crates/")
}

fn doc() -> String {
    std::fs::read_to_string(repo().join("docs/architecture.md")).expect("docs/architecture.md")
}

/// Where a path the map names may be relative to: the repository, the protocol
/// crate's and the simulator's `src`, and the engine's apps (named by file alone).
const ROOTS: [&str; 4] = [
    "",
    "crates/mobiflow-proto/src",
    "crates/mobiflow-sim/src",
    "crates/mobiflow-sim/src/engine/app",
];

/// The `.rs` paths in backquotes, except the recipes' templates for a new file (their
/// names contain `NAME`).
fn named_files(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.contains("NAME") && !s.contains(' ') && s.ends_with(".rs"))
        .map(str::to_string)
        .collect()
}

/// A named path exists when it is a file under one of the [`ROOTS`].
fn exists(name: &str) -> bool {
    ROOTS.iter().any(|r| repo().join(r).join(name).is_file())
}

#[test]
fn every_file_the_architecture_map_names_exists() {
    let files = named_files(&doc());
    assert!(files.len() >= 20, "{files:?}");
    let missing: Vec<_> = files.iter().filter(|f| !exists(f)).collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
    // The check can fail: a file that is nowhere is reported.
    assert!(!exists("engine/no_such_module.rs"));
}

/// The files of a registration list's items (`dir/module.rs`) that docs/architecture.md
/// does not name.
fn off_the_map(doc: &str, dir: &str, entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter_map(Entry::file)
        .map(|f| format!("{dir}/{f}"))
        .filter(|f| !doc.contains(&format!("`{f}`")))
        .collect()
}

#[test]
fn every_registered_controller_policy_and_extension_is_on_the_map() {
    let doc = doc();
    for (dir, entries) in [
        ("cc", CcKind::ENTRIES),
        ("flow", FlowControl::ENTRIES),
        ("tcp/ext", SenderExt::ENTRIES),
    ] {
        assert!(entries.iter().any(|e| e.file().is_some()), "{dir}");
        let missing = off_the_map(&doc, dir, entries);
        assert!(
            missing.is_empty(),
            "not in docs/architecture.md: {missing:?}"
        );
    }
    // Every extension the sender builds is registered (with its own file).
    let cfg = TcpConfig {
        handoff_reaction: HandoffReaction::IettBaSst,
        flow_control: FlowControl::Afc(Default::default()),
        ..TcpConfig::default()
    };
    for e in TcpSender::new(cfg).extensions() {
        let file = format!("tcp/ext/{}.rs", e.name().replace('-', "_"));
        assert!(doc.contains(&file), "{file} is not in docs/architecture.md");
    }
    assert!(doc.contains("flow/freeze.rs"));
    // The check can fail: an item whose file the map does not name is reported.
    let unmapped = Entry {
        name: "x",
        aliases: &[],
        doc: "",
        module: "no_such_controller",
    };
    assert_eq!(
        off_the_map(&doc, "cc", &[unmapped]),
        ["cc/no_such_controller.rs"]
    );
}
