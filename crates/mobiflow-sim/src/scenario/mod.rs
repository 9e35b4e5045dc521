//! TOML scenarios -> [`Scenario`].
//!
//! A scenario file is parsed into a [`toml::Table`], `--set KEY=VALUE` overrides are
//! applied to that table ([`apply_override`]), and the table is walked key by key into
//! the validated, unit-converted [`Scenario`] the engine consumes. Every refusal is a
//! [`ScenarioError`] naming the file, the dotted key and the reason, e.g.
//!
//! ```text
//! scenarios/examples/outage.toml: flows.0.redaer: unknown key (did you mean "reader"?); expected one of name, from, to, ...
//! ```
//!
//! The schema, with every key's unit and default, is documented in
//! `docs/scenarios.md`. Defaults that are this project's assumptions rather than a
//! standard's (or ns-2's) values are listed in [`Scenario::assumed`] when the
//! scenario does not set them.
//!
//! Layout: `walk` (typed access to a table with dotted paths), `overrides`, `link`
//! (links, schedules, traces, queues, outages), `flow` (flows, applications, readers,
//! TCP settings); this file holds the entry points, `[run]`, `[measure]` and the error
//! type.

mod flow;
pub(crate) mod flow_control;
mod link;
mod overrides;
mod params;
mod tcp;
mod tfrc;
pub(crate) mod walk;

pub use overrides::{apply_override, split_override};
pub use params::{generated_docs, registries, update_doc_tables, Registry};

use crate::model::{CaptureSpec, MahimahiTrace, MeasureSpec, Scenario};
use crate::units::{duration_value, format_duration};
use mobiflow_proto::time::Duration;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use walk::{as_span, as_str, as_u64, key_err, Tbl, R};

/// A scenario that cannot be loaded: `FILE: KEY: REASON` (missing parts omitted).
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The scenario file, if the scenario came from one.
    pub file: Option<PathBuf>,
    /// The dotted key the error is about (`flows.0.reader.rate`), if any.
    pub key: Option<String>,
    pub reason: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ScenarioError {}

/// Top-level keys.
pub(crate) const ROOT: &[params::Param<()>] = &[
    params::Param::manual(
        "name",
        "string",
        "the file name without `.toml` (`\"scenario\"` for text without a file)",
        "Name of the run, shown in the summary.",
    ),
    params::Param::manual("run", "table", "", "See [`[run]`](#run)."),
    params::Param::manual(
        "tcp",
        "table",
        "",
        "Defaults for every TCP flow; see [`[tcp]`](#tcp-and-flowstcp).",
    ),
    params::Param::manual(
        "links",
        "array of tables",
        "required, at least one",
        "See [`[[links]]`](#links).",
    ),
    params::Param::manual(
        "flows",
        "array of tables",
        "required, at least one",
        "See [`[[flows]]`](#flows).",
    ),
    params::Param::manual("measure", "table", "", "See [`[measure]`](#measure)."),
];

/// `[measure]` keys.
pub(crate) const MEASURE: &[params::Param<()>] = &[
    params::Param::manual(
        "sample_interval",
        "time, or `false`",
        "`\"100ms\"`",
        "Period of the sampled time series (cwnd, rwnd, queues, ...). `\"0s\"` or `false` turns them off.",
    )
    .assumed(),
    params::Param::manual(
        "intervals",
        "table: label -> `[start, end]`",
        "none",
        "Named intervals over which goodput is reported, for example `{ steady = [\"10s\", \"60s\"] }`. Each needs end > start and end ≤ `run.duration`. They are reported in order of start time.",
    ),
    params::Param::manual(
        "capture",
        "table",
        "none",
        "Packet captures (pcap files in the run's output folder, read by Wireshark and tshark); see below.",
    ),
];

/// `[measure.capture]` keys.
pub(crate) const CAPTURE: &[params::Param<()>] = &[
    params::Param::manual(
        "hosts",
        "array of node names",
        "`[]`",
        "Every packet these hosts send or receive, stamped when it is sent or received: `<node>.pcap`.",
    ),
    params::Param::manual(
        "links",
        "array of `LINK.ab` / `LINK.ba`",
        "`[]`",
        "Every packet of that link direction as it arrives at the far end: `<link>.<ab\\|ba>.pcap`.",
    ),
    params::Param::manual(
        "snaplen",
        "bytes, 68..=65535",
        "128",
        "Bytes stored per packet (headers and options fit; the zero payload is cut).",
    ),
];

/// Default run length: an assumption.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(60);
/// Default seed.
pub const DEFAULT_SEED: u64 = 1;

/// What `[run]` sets.
pub(crate) struct Run {
    pub duration: Duration,
    pub seed: u64,
}

impl Default for Run {
    fn default() -> Self {
        Run {
            duration: DEFAULT_DURATION,
            seed: DEFAULT_SEED,
        }
    }
}

/// `[run]`.
pub(crate) const RUN: &[params::Param<Run>] = &[
    params::Param::<Run>::new(
        "duration",
        "time, > 0",
        params::set!(duration, duration_value),
        |d| format_duration(d.duration),
        "Simulated time to run.",
    )
    .assumed(),
    params::Param::<Run>::new(
        "seed",
        "integer ≥ 0",
        params::set!(seed, as_u64),
        |d| d.seed.to_string(),
        "Seed of every random stream of the run, for example RED's drops. The same scenario and seed give the same results, byte for byte.",
    ),
];
/// Default sampling period of the time series: an assumption.
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// Loads a scenario file and applies `overrides` (`(dotted key, value)` pairs, in
/// order). Trace paths are resolved relative to the file's directory.
pub fn load_file(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: Some(path.to_path_buf()),
        key: None,
        reason: format!("cannot read scenario: {e}"),
    })?;
    load_str(&text, Some(path), overrides)
}

/// Loads a scenario from TOML text. `source` names the file in messages, gives the
/// default name (its stem) and the directory trace paths are relative to (the
/// current directory without it).
pub fn load_str(
    text: &str,
    source: Option<&Path>,
    overrides: &[(String, String)],
) -> Result<Scenario, ScenarioError> {
    let fail = |key: Option<String>, reason: String| ScenarioError {
        file: source.map(Path::to_path_buf),
        key,
        reason,
    };
    let mut doc: toml::Table =
        toml::from_str(text).map_err(|e| fail(None, syntax_error(text, &e)))?;
    let mut applied: Vec<(String, &str, &str)> = Vec::with_capacity(overrides.len());
    for (k, v) in overrides {
        let canon = overrides::apply(&mut doc, k, v).map_err(|e| {
            fail(
                Some(k.trim().to_string()),
                format!("in override {k}={v}: {e}"),
            )
        })?;
        applied.push((canon, k, v));
    }
    build(&doc, source).map_err(|e| {
        let mut reason = e.reason;
        // Point at the override that set the offending value, if one did.
        if let Some(key) = &e.key {
            if let Some((_, k, v)) = applied
                .iter()
                .rev()
                .find(|(canon, _, _)| key == canon || key.starts_with(&format!("{canon}.")))
            {
                reason.push_str(&format!(" (set by override {k}={v})"));
            }
        }
        fail(e.key, reason)
    })
}

/// Builds a scenario from an already parsed (and overridden) document.
pub fn from_table(doc: &toml::Table, source: Option<&Path>) -> Result<Scenario, ScenarioError> {
    build(doc, source).map_err(|e| ScenarioError {
        file: source.map(Path::to_path_buf),
        key: e.key,
        reason: e.reason,
    })
}

/// A TOML syntax error on one line: `line 3, column 7: invalid TOML: ...`.
fn syntax_error(text: &str, e: &toml::de::Error) -> String {
    let message = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    match e.span().and_then(|s| text.get(..s.start)) {
        Some(before) => {
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("line {line}, column {col}: invalid TOML: {message}")
        }
        None => format!("invalid TOML: {message}"),
    }
}

/// State shared by the parts of a walk.
pub(crate) struct Ctx {
    base_dir: Option<PathBuf>,
    assumed: Vec<(String, String)>,
    traces: HashMap<(PathBuf, u32), Arc<MahimahiTrace>>,
}

impl Ctx {
    /// Records a default that is an assumption.
    pub(crate) fn assume(&mut self, key: String, value: String) {
        self.assumed.push((key, value));
    }

    /// Loads (once) the trace at `rel`, relative to the scenario's directory.
    pub(crate) fn trace(&mut self, key: &str, rel: &str, mtu: u32) -> R<Arc<MahimahiTrace>> {
        if rel.trim().is_empty() {
            return Err(key_err(key, "the trace path is empty"));
        }
        let path = resolve_trace(self.base_dir.as_deref(), rel).map_err(|e| key_err(key, e))?;
        if let Some(t) = self.traces.get(&(path.clone(), mtu)) {
            return Ok(t.clone());
        }
        let t = Arc::new(link::read_trace(path.clone(), mtu).map_err(|e| key_err(key, e))?);
        self.traces.insert((path, mtu), t.clone());
        Ok(t)
    }
}

/// The environment variable that lists directories of traces referred to by name.
pub const TRACE_PATH_VAR: &str = "MOBIFLOW_TRACE_PATH";

/// Where the trace `rel` is: a path relative to the scenario's directory (or to the
/// working directory for a scenario given as text), or, for a bare file name that is
/// not there, the first directory of `$MOBIFLOW_TRACE_PATH` (`:`-separated) that holds
/// it. The Python package puts its shipped traces on that path, so
/// `trace = "ATT-LTE-driving-2016.down"` works from any directory.
pub(crate) fn resolve_trace(base_dir: Option<&Path>, rel: &str) -> Result<PathBuf, String> {
    let direct = match base_dir {
        Some(dir) => dir.join(rel),
        None => PathBuf::from(rel),
    };
    let bare = Path::new(rel).components().count() == 1 && !rel.contains(['/', '\\']);
    if direct.exists() || !bare {
        return Ok(direct);
    }
    let dirs = std::env::var_os(TRACE_PATH_VAR).unwrap_or_default();
    for dir in std::env::split_paths(&dirs) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        let candidate = dir.join(rel);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "cannot find trace {rel:?}: not at {} and not in any directory of ${TRACE_PATH_VAR}",
        direct.display()
    ))
}

fn build(doc: &toml::Table, source: Option<&Path>) -> R<Scenario> {
    let root = Tbl::new(doc, "");
    root.check_keys(&params::keys(ROOT))?;
    let mut ctx = Ctx {
        base_dir: source.and_then(Path::parent).map(Path::to_path_buf),
        assumed: Vec::new(),
        traces: HashMap::new(),
    };
    let name = match root.opt("name", |v| as_str(v).map(str::to_string))? {
        Some(n) if n.trim().is_empty() => return Err(key_err("name", "must not be empty")),
        Some(n) => n,
        None => source
            .and_then(Path::file_stem)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into()),
    };

    let mut run = Run::default();
    let run_table = root.table("run")?;
    if let Some(r) = &run_table {
        r.check_keys(&params::keys(RUN))?;
        params::read(r, RUN, &mut run)?;
        // After both keys are read, as before the declaration: a bad seed is reported
        // before a zero duration.
        if run.duration.is_zero() {
            return Err(key_err(r.key("duration"), "must be positive"));
        }
    }
    params::assume_unset(&mut ctx, "run", run_table.as_ref(), RUN, &run);
    let Run { duration, seed } = run;

    let link::Links { nodes, links } = link::parse_links(&root, &mut ctx)?;
    let flows = flow::parse_flows(&root, &nodes, &links, duration, &mut ctx)?;
    let measure = measure(&root, duration, &nodes, &links, &mut ctx)?;

    Ok(Scenario {
        name,
        source: source.map(Path::to_path_buf),
        duration,
        seed,
        nodes,
        links,
        flows,
        measure,
        assumed: ctx.assumed,
    })
}

fn measure(
    root: &Tbl,
    duration: Duration,
    nodes: &[String],
    links: &[crate::model::LinkSpec],
    ctx: &mut Ctx,
) -> R<MeasureSpec> {
    let m = root.table("measure")?;
    if let Some(m) = &m {
        m.check_keys(&params::keys(MEASURE))?;
    }
    let capture = match m
        .as_ref()
        .map(|m| m.table("capture"))
        .transpose()?
        .flatten()
    {
        Some(c) => capture(&c, nodes, links)?,
        None => CaptureSpec {
            snaplen: DEFAULT_SNAPLEN,
            ..CaptureSpec::default()
        },
    };
    let sample: Option<Option<Duration>> = match &m {
        Some(m) => m.opt("sample_interval", |v| match v {
            toml::Value::Boolean(false) => Ok(None),
            toml::Value::Boolean(true) => {
                Err("true is not a period; give a time like \"100ms\", or false to disable".into())
            }
            v => duration_value(v).map(|d| (!d.is_zero()).then_some(d)),
        })?,
        None => None,
    };
    let sample_interval = match sample {
        Some(s) => s,
        None => {
            ctx.assume(
                "measure.sample_interval".into(),
                format_duration(DEFAULT_SAMPLE_INTERVAL),
            );
            Some(DEFAULT_SAMPLE_INTERVAL)
        }
    };
    let mut intervals = Vec::new();
    if let Some(t) = m
        .as_ref()
        .map(|m| m.table("intervals"))
        .transpose()?
        .flatten()
    {
        for (label, v) in t.t {
            let key = t.key(label);
            if label.trim().is_empty() {
                return Err(key_err(key, "an interval label must not be empty"));
            }
            let at = |e: String| key_err(&key, e);
            let (s, e) = as_span(v, "[\"10s\", \"60s\"]").map_err(at)?;
            if e > duration {
                return Err(at(format!(
                    "ends at {}, after the end of the run (run.duration = {})",
                    format_duration(e),
                    format_duration(duration)
                )));
            }
            intervals.push((label.clone(), s, e));
        }
    }
    intervals.sort_by(|a, b| (a.1, a.2, &a.0).cmp(&(b.1, b.2, &b.0)));
    Ok(MeasureSpec {
        intervals,
        sample_interval,
        capture,
    })
}

/// Bytes of each captured packet kept by default: headers and options fit.
pub const DEFAULT_SNAPLEN: u32 = 128;

/// `[measure.capture]`: `hosts = ["phone"]`, `links = ["access.ab"]`, `snaplen = 128`.
fn capture(c: &Tbl, nodes: &[String], links: &[crate::model::LinkSpec]) -> R<CaptureSpec> {
    c.check_keys(&params::keys(CAPTURE))?;
    let names = |k: &str| -> R<Vec<(String, String)>> {
        Ok(c.opt(k, |v| match v {
            toml::Value::Array(a) => a
                .iter()
                .map(|x| as_str(x).map(str::to_string))
                .collect::<Result<Vec<_>, _>>(),
            _ => Err("expected an array of names".into()),
        })?
        .unwrap_or_default()
        .into_iter()
        .map(|n| (c.key(k), n))
        .collect())
    };
    let mut hosts = Vec::new();
    for (key, n) in names("hosts")? {
        match nodes.iter().position(|x| *x == n) {
            Some(i) if !hosts.contains(&i) => hosts.push(i),
            Some(_) => {}
            None => {
                return Err(key_err(
                    key,
                    format!("unknown node {n:?}; nodes are {}", nodes.join(", ")),
                ))
            }
        }
    }
    let mut dirs = Vec::new();
    for (key, n) in names("links")? {
        let (link, dir) = n.rsplit_once('.').unwrap_or((n.as_str(), ""));
        let k = match dir {
            "ab" => 0,
            "ba" => 1,
            _ => {
                return Err(key_err(
                    key,
                    format!("{n:?}: name a link direction as LINK.ab or LINK.ba"),
                ))
            }
        };
        let Some(li) = links.iter().position(|l| l.name == link) else {
            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(key_err(
                key,
                format!("unknown link {link:?}; links are {}", known.join(", ")),
            ));
        };
        let d = crate::engine::ids::DirId::of(li, k).index();
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    let snaplen = c
        .opt("snaplen", |v| {
            let n = as_u64(v)?;
            if !(68..=65535).contains(&n) {
                return Err(format!("{n} is outside 68..=65535 bytes"));
            }
            Ok(n as u32)
        })?
        .unwrap_or(DEFAULT_SNAPLEN);
    Ok(CaptureSpec {
        hosts,
        dirs,
        snaplen,
    })
}
