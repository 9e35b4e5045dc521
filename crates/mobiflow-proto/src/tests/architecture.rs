//! docs/architecture.md stays true: every file it names exists, and every extension the
//! TCP sender builds is registered with its own file on the map. (The map of the
//! registered controllers, policies, extensions and apps is generated from their lists:
//! `crates/mobiflow-sim/tests/docs_tables.rs` checks it and that each item's file exists.)

use crate::flow::FlowControl;
use crate::tcp::{HandoffReaction, SenderExtension, TcpConfig, TcpSender};
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

#[test]
fn every_extension_the_sender_builds_is_on_the_map() {
    let doc = doc();
    let cfg = TcpConfig {
        handoff_reaction: HandoffReaction::IettBaSst,
        flow_control: FlowControl::Afc(Default::default()),
        ..TcpConfig::default()
    };
    let sender = TcpSender::new(cfg);
    let built = sender.extensions();
    assert!(built.len() >= 3, "{built:?}");
    for e in built {
        let file = format!("`tcp/ext/{}.rs`", e.name().replace('-', "_"));
        assert!(doc.contains(&file), "{file} is not in docs/architecture.md");
    }
    assert!(doc.contains("`flow/freeze.rs`"));
    // The check can fail: a file the map does not name is not found.
    assert!(!doc.contains("`tcp/ext/no_such_extension.rs`"));
}
