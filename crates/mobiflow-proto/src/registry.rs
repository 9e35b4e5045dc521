//! What the registration lists of the pluggable kinds (`cc::CcKind`,
//! `flow::FlowControl`, `tcp::ext::SenderExt`, and the simulator's apps) tell the rest
//! of the project about each registered item: its name, the other names a scenario
//! may use for it, its documentation line and its file, from which the simulator
//! generates the tables of docs/scenarios.md and the map of registered items in
//! docs/architecture.md (`make docs-tables`).
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
    /// list) or names as another line's (`also in module`), or `""` when its line
    /// names none.
    pub module: &'static str,
}

impl Entry {
    /// The documentation line without the leading space of each `///` line.
    pub fn doc(&self) -> &'static str {
        self.doc.trim()
    }

    /// The file of its module, relative to the list's directory (`reno.rs`), if its
    /// line names one.
    pub fn file(&self) -> Option<String> {
        (!self.module.is_empty()).then(|| format!("{}.rs", self.module))
    }
}

/// The part of a registration list that every kind with default parameters shares:
/// for the enum `$kind` (declared by the list), the `named_enum!` `$names` of its
/// variants' names, `$names::kind` (the variant with its default parameters),
/// `$kind::ENTRIES` and `$kind::id`. Called by `congestion_controls!` and
/// `flow_controls!`; one item is `[doc lines] Variant (ParamsType or nothing) = "name"
/// [aliases] [module or nothing]`.
#[doc(hidden)]
#[macro_export]
macro_rules! registry_names {
    (
        $kind:ident, $names:ident ($what:literal $(, quoting $lower:ident)?),
        $( [$($doc:literal)*] $variant:ident ($($param:ty)?) = $name:literal
            [$($alias:literal)*] [$($module:ident)?] ),+
    ) => {
        $crate::named_enum! {
            #[doc = concat!("The name of a [`", stringify!($kind), "`], without its parameters.")]
            #[derive(Copy, Clone, PartialEq, Eq, Debug)]
            pub enum $names ($what $(, quoting $lower)?) {
                $( $variant = $name $(| $alias)* ),+
            }
        }

        impl $names {
            /// The item of this name with its default parameters.
            pub fn kind(self) -> $kind {
                match self {
                    $( $names::$variant => $kind::$variant $((<$param>::default()))? ),+
                }
            }
        }

        impl $kind {
            /// Every item of the list: name, aliases, documentation line, module.
            pub const ENTRIES: &'static [$crate::registry::Entry] = &[
                $( $crate::registry::Entry {
                    name: $name,
                    aliases: &[$($alias),*],
                    doc: concat!($($doc),*),
                    module: concat!("" $(, stringify!($module))?),
                } ),+
            ];

            /// The name without the parameters.
            pub fn id(&self) -> $names {
                match self {
                    $( $kind::$variant { .. } => $names::$variant ),+
                }
            }
        }
    };
}
