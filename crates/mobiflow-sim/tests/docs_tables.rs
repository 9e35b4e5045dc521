//! The parameter tables of `docs/scenarios.md` are the ones the declarations in
//! `mobiflow_sim::scenario` generate: a key, unit, default, assumed marker or meaning
//! changed in the code and not in the docs (or the reverse) fails here.
//! `make docs-tables` rewrites them.

use mobiflow_sim::scenario::update_doc_tables;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");

#[test]
fn docs_tables_are_the_generated_ones() {
    let text = std::fs::read_to_string(DOC).unwrap();
    let generated = update_doc_tables(&text).unwrap();
    if generated != text {
        let first = text
            .lines()
            .zip(generated.lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("docs:      {a}\ngenerated: {b}"))
            .unwrap_or_default();
        panic!("docs/scenarios.md differs from the declarations; run `make docs-tables`\n{first}");
    }
}

#[test]
fn a_table_without_its_marker_is_an_error() {
    let text = std::fs::read_to_string(DOC).unwrap();
    let without = text.replace("<!-- generated table: flows.afc ", "<!-- ");
    let err = update_doc_tables(&without).unwrap_err();
    assert!(err.contains("flows.afc"), "{err}");
}
