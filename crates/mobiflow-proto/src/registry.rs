//! What the registration lists of the pluggable kinds (`cc::CcKind`,
//! `flow::FlowControl`, `tcp::ext::SenderExt`, and the simulator's apps) tell the rest
//! of the project about each registered item: its name, the other names a scenario
//! may use for it, and its documentation line, from which the simulator generates the
//! tables of docs/scenarios.md (`make docs-tables`).
//!
//! Each list is one macro invocation in the kind's `mod.rs` (e.g. `congestion_controls!`
//! in `cc/mod.rs`); a new item is one file and one line there (docs/architecture.md).

/// One registered item.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name a scenario uses.
    pub name: &'static str,
    /// Other names accepted for it (not listed in error messages).
    pub aliases: &'static [&'static str],
    /// Its documentation line (the doc comment of its line in the list).
    pub doc: &'static str,
    /// The module its line declares (`in module`: the file `module.rs` beside the
    /// list), or `""` when it lives in another item's module.
    pub module: &'static str,
}

impl Entry {
    /// The documentation line without the leading space of each `///` line.
    pub fn doc(&self) -> &'static str {
        self.doc.trim()
    }

    /// The file of its module, relative to the list's directory (`reno.rs`), if it has
    /// one of its own.
    pub fn file(&self) -> Option<String> {
        (!self.module.is_empty()).then(|| format!("{}.rs", self.module))
    }
}
