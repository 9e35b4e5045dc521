//! docs/architecture.md stays true: every file it names exists, and every sender
//! extension and receive-window policy the code has is on its map.

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

/// The paths in backquotes that start with `crates/` or `tcp/`, `flow/` (relative to
/// the protocol crate's `src`), without the `NAME` placeholders of the recipes.
fn named_files(doc: &str) -> Vec<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.contains("NAME") && !s.contains(' ') && s.ends_with(".rs"))
        .map(|s| {
            if s.starts_with("crates/") {
                s.to_string()
            } else {
                format!("crates/mobiflow-proto/src/{s}")
            }
        })
        .collect()
}

#[test]
fn every_file_the_architecture_map_names_exists() {
    let files = named_files(&doc());
    assert!(files.len() >= 20, "{files:?}");
    let missing: Vec<_> = files.iter().filter(|f| !repo().join(f).is_file()).collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
}

#[test]
fn every_sender_extension_and_window_policy_is_on_the_map() {
    let doc = doc();
    let cfg = TcpConfig {
        handoff_reaction: HandoffReaction::IettBaSst,
        flow_control: FlowControl::Afc(Default::default()),
        ..TcpConfig::default()
    };
    let s = TcpSender::new(cfg);
    for e in s.extensions() {
        let file = format!("tcp/ext/{}.rs", e.name().replace('-', "_"));
        assert!(doc.contains(&file), "{file} is not in docs/architecture.md");
    }
    for name in FlowControl::NAMES {
        let file = format!("flow/{name}.rs");
        assert!(doc.contains(&file), "{file} is not in docs/architecture.md");
    }
    assert!(doc.contains("flow/freeze.rs"));
}
