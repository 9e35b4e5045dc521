//! The generated tables of `docs/scenarios.md` (parameters, registered items) and of
//! `docs/architecture.md` (the registered items' files) are the ones the code generates:
//! a key, unit, default, assumed marker, meaning, registered item or its file changed in
//! the code and not in the docs (or the reverse) fails here, and so does a registered
//! item whose file does not exist. `make docs-tables` rewrites them.

use mobiflow_proto::registry::Entry;
use mobiflow_sim::scenario::{generated_docs, registries, update_doc_tables, Registry};
use std::path::Path;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(doc: &str) -> String {
    std::fs::read_to_string(Path::new(REPO).join("docs").join(doc)).unwrap()
}

#[test]
fn docs_tables_are_the_generated_ones() {
    let docs: Vec<_> = generated_docs().collect();
    assert_eq!(docs, ["scenarios.md", "architecture.md"]);
    for doc in docs {
        let text = read(doc);
        let generated = update_doc_tables(doc, &text).unwrap();
        if generated != text {
            let first = text
                .lines()
                .zip(generated.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("docs:      {a}\ngenerated: {b}"))
                .unwrap_or_default();
            panic!("docs/{doc} differs from the code; run `make docs-tables`\n{first}");
        }
    }
}

#[test]
fn a_table_without_its_marker_is_an_error() {
    for (doc, table) in [
        ("scenarios.md", "flows.afc"),
        ("architecture.md", "registry.cc"),
    ] {
        let marker = format!("<!-- generated table: {table} ");
        let text = read(doc);
        assert!(text.contains(&marker), "{doc}: {marker}");
        let err = update_doc_tables(doc, &text.replace(&marker, "<!-- ")).unwrap_err();
        assert!(err.contains(table), "{err}");
    }
    assert!(update_doc_tables("README.md", "").is_err());
}

/// The items of `lists` whose file (relative to the repository) is not a file, and
/// `"KEY NAME: no file named"` for one whose line names none.
fn missing_files(lists: &[Registry]) -> Vec<String> {
    lists
        .iter()
        .flat_map(|r| r.entries.iter().map(move |e| (r, e)))
        .filter_map(|(r, e)| match r.path(e) {
            None => Some(format!("{} {}: no file named", r.key, e.name)),
            Some(p) => (!Path::new(REPO).join(&p).is_file()).then_some(p),
        })
        .collect()
}

#[test]
fn every_registered_item_has_its_file() {
    let lists = registries();
    let missing = missing_files(&lists);
    assert!(
        missing.is_empty(),
        "registered, but no such file: {missing:?}"
    );
    for r in &lists {
        assert!(!r.entries.is_empty(), "{}", r.key);
    }
    // The check can fail: a module without its file, and a line that names none.
    static UNFILED: [Entry; 2] = [
        Entry {
            name: "x",
            aliases: &[],
            doc: "",
            module: "no_such_controller",
        },
        Entry {
            name: "y",
            aliases: &[],
            doc: "",
            module: "",
        },
    ];
    let [cc, ..] = registries();
    let fake = Registry {
        entries: &UNFILED,
        ..cc
    };
    assert_eq!(
        missing_files(&[fake]),
        [
            "crates/mobiflow-proto/src/cc/no_such_controller.rs",
            "cc y: no file named"
        ]
    );
}
