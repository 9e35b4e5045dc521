//! One declaration per parameter table.
//!
//! A table of a scenario (`[flows.afc]`, `[tcp]`, `[flows.tfrc]`, ...) is declared once,
//! as a slice of [`Param`]s: key, unit, default, whether the default is an assumption,
//! the documentation line and how the value is read into the typed config. From that
//! one slice come the allowed keys ([`keys`], so unknown-key errors list them), the
//! parsing ([`read`]), the `assumed` entries of unset keys ([`assume_unset`]) and the
//! table of `docs/scenarios.md` ([`doc_table`]; `make docs-tables` rewrites the tables
//! there and a test fails when they differ from the declarations).

use super::walk::{key_err, Tbl, R};
use mobiflow_proto::registry::Entry;
use toml::Value;

/// Why a value was refused: the reason, and the index of the element at fault when
/// the value is an array (the error then names `KEY.INDEX`).
#[derive(Debug)]
pub(crate) struct Bad {
    pub index: Option<usize>,
    pub reason: String,
}

impl From<String> for Bad {
    fn from(reason: String) -> Self {
        Bad {
            index: None,
            reason,
        }
    }
}

impl From<&str> for Bad {
    fn from(reason: &str) -> Self {
        Bad::from(reason.to_string())
    }
}

/// Reads a value into the config.
pub(crate) type Set<C> = fn(&mut C, &Value) -> Result<(), Bad>;

/// The docs' default column: the config's value as a scenario writes it, or a text.
pub(crate) enum Shown<C: 'static> {
    Show(fn(&C) -> String),
    Text(&'static str),
    /// `Scenario::assumed` reports the value as the function gives it; the docs say
    /// the text.
    ShowAs(fn(&C) -> String, &'static str),
}

/// When an unset key's default is reported in `Scenario::assumed`.
pub(crate) enum Assumed<C: 'static> {
    Never,
    Always,
    /// Always, except under the named TCP profiles (whose value is that stack's own).
    NotIn(&'static [&'static str]),
    /// Only when the (otherwise complete) config satisfies the condition.
    When(fn(&C) -> bool),
}

/// One key of a table.
pub(crate) struct Param<C: 'static> {
    pub key: &'static str,
    /// The docs' unit column.
    pub unit: &'static str,
    pub default: Shown<C>,
    /// Printed after the default in the docs (sources, notes).
    pub note: &'static str,
    pub assumed: Assumed<C>,
    /// The docs' meaning column.
    pub doc: &'static str,
    /// `None`: the key is read by hand-written code (it depends on other keys).
    pub set: Option<Set<C>>,
}

impl<C> Param<C> {
    /// A key read into the config by `set`, documented with the config's default.
    pub const fn new(
        key: &'static str,
        unit: &'static str,
        set: Set<C>,
        show: fn(&C) -> String,
        doc: &'static str,
    ) -> Self {
        Param {
            key,
            unit,
            default: Shown::Show(show),
            note: "",
            assumed: Assumed::Never,
            doc,
            set: Some(set),
        }
    }

    /// A key that hand-written code reads; `default` is the docs' text.
    pub const fn manual(
        key: &'static str,
        unit: &'static str,
        default: &'static str,
        doc: &'static str,
    ) -> Self {
        Param {
            key,
            unit,
            default: Shown::Text(default),
            note: "",
            assumed: Assumed::Never,
            doc,
            set: None,
        }
    }

    /// The default is an assumption (reported when the key is unset).
    pub const fn assumed(mut self) -> Self {
        self.assumed = Assumed::Always;
        self
    }

    pub const fn assumed_unless(mut self, profiles: &'static [&'static str]) -> Self {
        self.assumed = Assumed::NotIn(profiles);
        self
    }

    pub const fn assumed_when(mut self, when: fn(&C) -> bool) -> Self {
        self.assumed = Assumed::When(when);
        self
    }

    /// Text after the default in the docs.
    pub const fn note(mut self, note: &'static str) -> Self {
        self.note = note;
        self
    }

    /// The docs' default column says `text` instead of the config's value.
    pub const fn default_text(mut self, text: &'static str) -> Self {
        self.default = Shown::Text(text);
        self
    }

    /// The docs' default column says `text`; the value reported as assumed is still
    /// the config's.
    pub const fn docs_default(mut self, text: &'static str) -> Self {
        if let Shown::Show(f) = self.default {
            self.default = Shown::ShowAs(f, text);
        }
        self
    }

    /// Whether an unset key is reported as assumed for `cfg` under `profile`.
    pub fn is_assumed(&self, cfg: &C, profile: &str) -> bool {
        match self.assumed {
            Assumed::Never => false,
            Assumed::Always => true,
            Assumed::NotIn(ps) => !ps.contains(&profile),
            Assumed::When(f) => f(cfg),
        }
    }

    /// The value of `cfg` as a scenario would write it (empty for a text default).
    pub fn show(&self, cfg: &C) -> String {
        match self.default {
            Shown::Show(f) | Shown::ShowAs(f, _) => f(cfg),
            Shown::Text(_) => String::new(),
        }
    }

    /// Reads `v` into `cfg`; the error names `key` (or `key.INDEX`).
    pub fn apply(&self, cfg: &mut C, v: &Value, key: &str) -> R<()> {
        match self.set {
            Some(set) => set(cfg, v).map_err(|b| match b.index {
                Some(i) => key_err(format!("{key}.{i}"), b.reason),
                None => key_err(key, b.reason),
            }),
            None => Ok(()),
        }
    }
}

/// `c.FIELD = PARSE(v)?`: a [`Set`] for one field.
macro_rules! set {
    ($field:ident, $parse:expr) => {
        |c, v| {
            c.$field = ($parse)(v)?;
            Ok(())
        }
    };
}
pub(crate) use set;

/// The keys of a table, in declaration order.
pub(crate) fn keys<C>(ps: &[Param<C>]) -> Vec<&'static str> {
    ps.iter().map(|p| p.key).collect()
}

/// Reads every key of `t` that the declaration reads, in declaration order.
pub(crate) fn read<C>(t: &Tbl, ps: &[Param<C>], cfg: &mut C) -> R<()> {
    read_layers(std::slice::from_ref(t), ps, cfg)
}

/// Reads each key from the first of `layers` (most specific first) that sets it.
pub(crate) fn read_layers<C>(layers: &[Tbl], ps: &[Param<C>], cfg: &mut C) -> R<()> {
    for p in ps {
        if let Some((t, v)) = layers.iter().find_map(|t| t.get(p.key).map(|v| (t, v))) {
            p.apply(cfg, v, &t.key(p.key))?;
        }
    }
    Ok(())
}

/// The assumed defaults `cfg` keeps for the keys that are not set:
/// `(key, value as written)`.
pub(crate) fn unset_assumed<C>(
    ps: &[Param<C>],
    cfg: &C,
    profile: &str,
    is_set: impl Fn(&str) -> bool,
) -> Vec<(&'static str, String)> {
    ps.iter()
        .filter(|p| !is_set(p.key) && p.is_assumed(cfg, profile))
        .map(|p| (p.key, p.show(cfg)))
        .collect()
}

/// Reports in `ctx` the assumed defaults `cfg` keeps because `t` (if any) does not set
/// them, as `PATH.KEY`.
pub(crate) fn assume_unset<C>(
    ctx: &mut super::Ctx,
    path: &str,
    t: Option<&Tbl>,
    ps: &[Param<C>],
    cfg: &C,
) {
    for (k, text) in unset_assumed(ps, cfg, "", |k| t.is_some_and(|t| t.has(k))) {
        ctx.assume(format!("{path}.{k}"), text);
    }
}

/// A value as the docs write it: numbers and booleans bare, anything else as a TOML
/// string.
fn as_written(s: &str) -> String {
    let bare = s == "true" || s == "false" || (s.parse::<f64>().is_ok_and(f64::is_finite));
    if bare {
        s.to_string()
    } else {
        format!("`{s:?}`")
    }
}

/// The docs' default column of `p` for the config `d` (profile `profile`).
fn default_cell<C>(p: &Param<C>, d: &C, profile: &str) -> String {
    let mut cell = match p.default {
        Shown::Show(f) => as_written(&f(d)),
        Shown::Text(t) | Shown::ShowAs(_, t) => t.to_string(),
    };
    let assumed = match p.assumed {
        Assumed::Never => false,
        Assumed::Always | Assumed::When(_) => true,
        Assumed::NotIn(ps) => !ps.contains(&profile),
    };
    if assumed {
        cell.push_str(" **[assumed]**");
    }
    if !p.note.is_empty() {
        cell.push(' ');
        cell.push_str(p.note);
    }
    cell.trim().to_string()
}

/// The markdown table of a declaration: one default column per `(header, config,
/// profile)`.
pub(crate) fn doc_table<C>(
    key_header: &str,
    ps: &[Param<C>],
    columns: &[(&str, &C, &str)],
) -> String {
    doc_rows(key_header, &ps.iter().collect::<Vec<_>>(), columns)
}

/// [`doc_table`] of rows taken from several declarations (a link's own keys, then
/// those its directions share).
fn doc_rows<C>(key_header: &str, ps: &[&Param<C>], columns: &[(&str, &C, &str)]) -> String {
    let mut out = format!("| {key_header} | unit |");
    for (h, _, _) in columns {
        out.push_str(&format!(" {h} |"));
    }
    out.push_str(" meaning |\n|---|---|");
    out.push_str(&"---|".repeat(columns.len() + 1));
    out.push('\n');
    for p in ps {
        out.push_str(&format!("| `{}` | {} |", p.key, p.unit));
        for (_, d, profile) in columns {
            out.push_str(&format!(" {} |", default_cell(p, d, profile)));
        }
        out.push_str(&format!(" {} |\n", p.doc));
    }
    out
}

/// The table of a declaration with one default column, that of `C::default()`.
fn single<C: std::default::Default>(key_header: &str, ps: &[Param<C>]) -> String {
    doc_table(key_header, ps, &[("default", &C::default(), "")])
}

/// The table of a registration list (`mobiflow_proto::registry`): each name a scenario
/// may give `key`, the other names it accepts for it, and its documentation line.
pub(crate) fn registry_table(key: &str, entries: &[Entry]) -> String {
    let mut out = format!("| `{key}` | also accepted | meaning |\n|---|---|---|\n");
    for e in entries {
        let aliases: Vec<String> = e.aliases.iter().map(|a| format!("`{a:?}`")).collect();
        out.push_str(&format!(
            "| `{:?}` | {} | {} |\n",
            e.name,
            aliases.join(", "),
            e.doc()
        ));
    }
    out
}

/// A registration list (`mobiflow_proto::registry`) as docs/architecture.md maps it.
pub struct Registry {
    /// The key a scenario names its items with (`cc`), also the name of its table in
    /// docs/scenarios.md.
    pub key: &'static str,
    /// The name of its map in docs/architecture.md.
    pub table: &'static str,
    /// The source folder of the list's crate, relative to the repository.
    pub src: &'static str,
    /// The list's folder in `src`, where the file of each item's module is.
    pub dir: &'static str,
    /// Its items.
    pub entries: &'static [Entry],
}

impl Registry {
    /// The file of item `e`, relative to the repository, if its line names one.
    pub fn path(&self, e: &Entry) -> Option<String> {
        e.file().map(|f| format!("{}/{}/{f}", self.src, self.dir))
    }

    /// Its table in docs/architecture.md: each item's name, file (relative to
    /// [`Self::src`]) and documentation line.
    fn map_table(&self) -> String {
        let mut out = format!("| `{}` | file | what it is |\n|---|---|---|\n", self.key);
        for e in self.entries {
            let file = match e.file() {
                Some(f) => format!("`{}/{f}`", self.dir),
                None => "(none named)".to_string(),
            };
            out.push_str(&format!("| `{:?}` | {file} | {} |\n", e.name, e.doc()));
        }
        out
    }
}

/// The four registration lists, in the order of docs/architecture.md.
pub fn registries() -> [Registry; 4] {
    use mobiflow_proto::cc::CcKind;
    use mobiflow_proto::flow::FlowControl;
    use mobiflow_proto::tcp::SenderExt;
    const PROTO: &str = "crates/mobiflow-proto/src";
    [
        Registry {
            key: "cc",
            table: "registry.cc",
            src: PROTO,
            dir: "cc",
            entries: CcKind::ENTRIES,
        },
        Registry {
            key: "flow_control",
            table: "registry.flow_control",
            src: PROTO,
            dir: "flow",
            entries: FlowControl::ENTRIES,
        },
        Registry {
            key: "extensions",
            table: "registry.extensions",
            src: PROTO,
            dir: "tcp/ext",
            entries: SenderExt::ENTRIES,
        },
        Registry {
            key: "app",
            table: "registry.app",
            src: "crates/mobiflow-sim/src",
            dir: "engine/app",
            entries: crate::model::AppSpec::ENTRIES,
        },
    ]
}

/// The generated tables of `docs/architecture.md`: the map of each registration
/// list's items to their files.
fn architecture_tables() -> Vec<(&'static str, String)> {
    registries()
        .iter()
        .map(|r| (r.table, r.map_table()))
        .collect()
}

/// The generated tables of `docs/scenarios.md`: (name in the marker, table).
fn doc_tables() -> Vec<(&'static str, String)> {
    use super::flow_control::{AFC, AUTOTUNE, LINUX, RSFC, WEB};
    use super::tcp::{CUBIC, FLD, RELENTLESS, TCP};
    use super::tfrc::TFRC;
    use mobiflow_proto::cc::CubicParams;
    use mobiflow_proto::tcp::TcpConfig;
    // The registration lists' tables, from the lists' one declaration.
    let [cc, flow_control, extensions, _app] = registries();
    let registry = |r: &Registry| (r.key, registry_table(r.key, r.entries));
    let (rfc, ns2, linux) = (TcpConfig::default(), TcpConfig::ns2(), TcpConfig::linux());
    let profiles = [
        ("`rfc` default", &rfc, "rfc"),
        ("`ns2` default", &ns2, "ns2"),
        ("`linux` default", &linux, "linux"),
    ];
    use super::link::{DIR, HANDOFF, LINK_ONLY, RED};
    let link_keys: Vec<&Param<()>> = LINK_ONLY.iter().chain(DIR).collect();
    vec![
        ("top", single("key", super::ROOT)),
        ("run", single("key", super::RUN)),
        ("tcp", doc_table("key", TCP, &profiles)),
        registry(&cc),
        registry(&extensions),
        (
            "tcp.cubic",
            doc_table(
                "key",
                CUBIC,
                &[
                    ("`rfc`, `ns2` default", &CubicParams::default(), ""),
                    ("`linux` default", &CubicParams::linux(), ""),
                ],
            ),
        ),
        ("tcp.relentless", single("key", RELENTLESS)),
        ("tcp.fld", single("key", FLD)),
        (
            "flows",
            doc_rows(
                "key",
                &super::flow::FLOW
                    .iter()
                    .map(|k| &k.param)
                    .collect::<Vec<_>>(),
                &[("default", &(), "")],
            ),
        ),
        registry(&flow_control),
        ("flows.afc", single("`[flows.afc]` key", AFC)),
        ("flows.autotune", single("`[flows.autotune]` key", AUTOTUNE)),
        ("flows.rsfc", single("`[flows.rsfc]` key", RSFC)),
        ("flows.linux", single("`[flows.linux]` key", LINUX)),
        ("app", crate::engine::app::doc_table()),
        ("flows.web", single("`[flows.web]` key", WEB)),
        ("flows.tfrc", single("key", TFRC)),
        (
            "links",
            doc_rows("key", &link_keys, &[("default", &(), "")]),
        ),
        ("links.red", single("key", RED)),
        ("links.handoffs", single("key", HANDOFF)),
        ("measure", single("key", super::MEASURE)),
        ("measure.capture", single("key", super::CAPTURE)),
    ]
}

/// What gives a document's generated tables: (name in the marker, table).
type Tables = fn() -> Vec<(&'static str, String)>;

/// The documents with generated tables, in the docs folder, each with its tables.
const DOCS: [(&str, Tables); 2] = [
    ("scenarios.md", doc_tables),
    ("architecture.md", architecture_tables),
];

/// The file names of the documents in the docs folder whose tables
/// [`update_doc_tables`] rewrites.
pub fn generated_docs() -> impl Iterator<Item = &'static str> {
    DOCS.iter().map(|(f, _)| *f)
}

/// The line before each generated table.
const MARKER: &str = "<!-- generated table: ";

/// The text of the document `doc` (one of [`generated_docs`]: `scenarios.md` from the
/// parameter declarations and registration lists, `architecture.md` from the
/// registration lists) with every generated table rewritten: the table after each
/// `<!-- generated table: NAME ... -->` line is replaced. An error if `doc` has no
/// generated tables, a marker names no table or a table has no marker.
pub fn update_doc_tables(doc: &str, text: &str) -> Result<String, String> {
    let Some((_, tables)) = DOCS.iter().find(|(f, _)| *f == doc) else {
        return Err(format!("{doc} has no generated tables"));
    };
    let tables = tables();
    let mut seen = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(rest) = line.strip_prefix(MARKER) else {
            continue;
        };
        let name = rest.split_whitespace().next().unwrap_or("");
        let Some((_, table)) = tables.iter().find(|(n, _)| *n == name) else {
            return Err(format!("{line}: no declaration is called {name:?}"));
        };
        seen.push(name);
        while lines.peek().is_some_and(|l| l.starts_with('|')) {
            lines.next();
        }
        out.push_str(table);
    }
    if let Some((n, _)) = tables.iter().find(|(n, _)| !seen.contains(n)) {
        return Err(format!(
            "{doc}: no {MARKER}{n} --> line for the table {n:?}"
        ));
    }
    Ok(out)
}
