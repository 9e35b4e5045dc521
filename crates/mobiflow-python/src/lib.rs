//! # mobiflow-python: the `mobiflow._mobiflow` extension module
//!
//! Bindings only. Every function here loads a scenario with `mobiflow_sim`, runs it
//! or describes it, and hands the result to Python as a JSON string; the Python
//! package (`py/python/mobiflow`) turns that into dicts, tables and files. No
//! simulation logic lives in this crate, and no engine crate depends on pyo3.
//!
//! Errors cross as Python exceptions:
//!
//! * a scenario that is wrong (bad file, bad key, bad value, bad `--set`) raises
//!   `mobiflow.ScenarioError`, a `ValueError` with attributes `file`, `key` and
//!   `reason`, whose message is `FILE: KEY: REASON`;
//! * a failure during the run raises `RuntimeError` with the engine's message;
//! * a failure to write the output folder raises `OSError`.
//!
//! The GIL is released while a scenario is loaded, run and written, so Python threads
//! may run several scenarios at once. While the engine runs it takes the GIL back
//! every 50 ms of wall time to check for signals (`Python::check_signals`): Ctrl-C
//! raises `KeyboardInterrupt` out of the call within that time, and nothing partial
//! is written or returned. A `progress(simulated_s, duration_s)` callable, if given,
//! is called at the same moments; an exception it raises stops the run the same way.
//!
//! Before a run, the scenario's resource estimate (`mobiflow_sim::budget`) is checked
//! against `budget` bytes (default 4 GiB, `None` to skip): a scenario over it raises
//! `ScenarioError` naming the key that causes it and the estimate.
//!
//! Besides running, the module converts between the forms a scenario takes in Python:
//! TOML text with overrides applied (`apply_overrides`), and TOML <-> JSON
//! (`toml_to_json`, `json_to_toml`) so that the package can show a scenario as a dict
//! and build one from a dict without a TOML library of its own. `run_str_results`
//! returns the series as the CSV bytes `output` writes, so that a run kept in memory
//! and a run read back from its folder are the same bytes.

mod freeze_model;

use mobiflow_sim::model::{
    AppSpec, DelayModel, DirSpec, FlowSpec, LinkSpec, QueueLimit, QueueSpec, RateModel, ReaderSpec,
    Scenario, Transport,
};
use mobiflow_sim::named::Named;
use mobiflow_sim::scenario::apply_override;
use mobiflow_sim::{output, ScenarioError};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The Python exception type, in a module of its own so that its Python name is
/// `mobiflow.ScenarioError` (the name of the Rust item) without clashing with
/// `mobiflow_sim::ScenarioError`.
mod exceptions {
    use pyo3::create_exception;
    use pyo3::exceptions::PyValueError;

    create_exception!(
        mobiflow,
        ScenarioError,
        PyValueError,
        "A scenario that cannot be run: the file, the dotted key and the reason.\n\n\
         Attributes: file (str | None), key (str | None), reason (str)."
    );
}
use exceptions::ScenarioError as PyScenarioError;

/// Everything that can go wrong in a call, without holding the GIL.
enum Failure {
    Scenario(ScenarioError),
    Run(String),
    Output(PathBuf, std::io::Error),
    /// The run was stopped by a signal or by the progress callback's exception.
    Interrupted(PyErr),
}

impl Failure {
    fn into_pyerr(self, py: Python<'_>) -> PyErr {
        match self {
            Failure::Scenario(e) => scenario_error(py, &e),
            Failure::Run(msg) => PyRuntimeError::new_err(msg),
            Failure::Interrupted(e) => e,
            Failure::Output(dir, e) => {
                PyOSError::new_err(format!("cannot write results to {}: {e}", dir.display()))
            }
        }
    }
}

/// A `ScenarioError` exception carrying the file, key and reason as attributes.
fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let err = PyScenarioError::new_err(e.to_string());
    let value = err.value(py);
    let file = e.file.as_ref().map(|p| p.display().to_string());
    let set = value
        .setattr("file", file)
        .and_then(|()| value.setattr("key", e.key.clone()))
        .and_then(|()| value.setattr("reason", e.reason.clone()));
    match set {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// Where a scenario comes from: a file, or TOML text (with the file it stands for).
enum Input<'a> {
    File(&'a Path),
    Text(&'a str, Option<&'a Path>),
}

/// Without the GIL (other Python threads go on meanwhile): loads the scenario with
/// `overrides` and hands it to `work`; what fails is raised as its Python exception.
fn with_scenario<T: Send>(
    py: Python<'_>,
    input: Input,
    overrides: &[(String, String)],
    work: impl FnOnce(&Scenario) -> Result<T, Failure> + Send,
) -> PyResult<T> {
    py.allow_threads(|| {
        let scenario = match input {
            Input::File(path) => mobiflow_sim::load_file(path, overrides),
            Input::Text(text, source) => mobiflow_sim::load_str(text, source, overrides),
        };
        work(&scenario.map_err(Failure::Scenario)?)
    })
    .map_err(|f| f.into_pyerr(py))
}

/// How a run is watched and bounded: the memory budget, and the progress callable.
struct Control {
    budget: Option<u64>,
    progress: Option<PyObject>,
}

/// Runs a scenario and writes its results into `out_dir` if given; packet captures
/// (the scenario's `[measure.capture]` points, and every host with `pcap`) go there
/// too, and need it. Called without the GIL: the control hook takes it back to check
/// for signals and report progress.
fn simulate(
    scenario: &Scenario,
    out_dir: Option<&Path>,
    pcap: bool,
    control: &Control,
) -> Result<mobiflow_sim::RunResult, Failure> {
    if pcap && out_dir.is_none() {
        return Err(Failure::Run(
            "packet captures need an output folder (--out DIR)".into(),
        ));
    }
    if let Some(budget) = control.budget {
        mobiflow_sim::budget::check(scenario, budget).map_err(Failure::Scenario)?;
    }
    let opts = mobiflow_sim::RunOptions {
        out_dir: out_dir.map(Path::to_path_buf),
        capture_all_hosts: pcap,
    };
    let duration_s = scenario.duration.as_secs_f64();
    let mut stopped: Option<PyErr> = None;
    let mut hook = |now: mobiflow_proto::time::Instant| {
        Python::with_gil(|py| {
            let checked = py.check_signals().and_then(|()| match &control.progress {
                Some(cb) => cb.call1(py, (now.as_secs_f64(), duration_s)).map(|_| ()),
                None => Ok(()),
            });
            match checked {
                Ok(()) => true,
                Err(e) => {
                    stopped = Some(e);
                    false
                }
            }
        })
    };
    let result = mobiflow_sim::run_controlled(scenario, &opts, &mut hook);
    if let Some(e) = stopped {
        return Err(Failure::Interrupted(e));
    }
    let result = result.map_err(|e| Failure::Run(e.to_string()))?;
    if let Some(dir) = out_dir {
        output::write_run(&result, dir).map_err(|e| Failure::Output(dir.to_path_buf(), e))?;
    }
    Ok(result)
}

/// Runs a loaded scenario, writes its results to `out_dir` if given, and returns the
/// summary as JSON (the exact bytes of `summary.json`).
fn run_scenario(
    scenario: &Scenario,
    out_dir: Option<&Path>,
    pcap: bool,
    control: &Control,
) -> Result<String, Failure> {
    let result = simulate(scenario, out_dir, pcap, control)?;
    Ok(output::summary_json(&result.summary))
}

/// A run's summary JSON and its series as CSV bytes (the exact bytes of
/// `summary.json` and of each `<which>_series.csv`), keyed by `flow`, `tcp`, `tfrc`,
/// `link`.
struct Results {
    summary: String,
    series: Vec<(&'static str, Vec<u8>)>,
}

/// Runs a loaded scenario and keeps everything it reports in memory (the series only
/// with `series`); writes it to `out_dir` too if given.
fn run_scenario_results(
    scenario: &Scenario,
    out_dir: Option<&Path>,
    pcap: bool,
    control: &Control,
    series: bool,
) -> Result<Results, Failure> {
    let result = simulate(scenario, out_dir, pcap, control)?;
    let series = if series {
        output::series_csv(&result.series, &result.summary)
            .map_err(|e| Failure::Run(format!("cannot format the series: {e}")))?
            .into_iter()
            .map(|(file, csv)| (file.trim_end_matches("_series.csv"), csv))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Results {
        summary: output::summary_json(&result.summary),
        series,
    })
}

/// Parses TOML text into a table. A syntax error is reported exactly as loading the
/// scenario reports it (`FILE: line L, column C: invalid TOML: ...`).
fn parse_toml(text: &str, source: Option<&Path>) -> Result<toml::Table, ScenarioError> {
    toml::from_str(text).map_err(|e| match mobiflow_sim::load_str(text, source, &[]) {
        // Loading starts with the same parse, so it fails the same way, with the
        // engine's wording of the message.
        Err(err) if err.key.is_none() => err,
        _ => ScenarioError {
            file: source.map(Path::to_path_buf),
            key: None,
            reason: format!("invalid TOML: {}", e.message().trim()),
        },
    })
}

/// Checks a scenario file without running it and describes it as JSON.
///
/// `overrides` are `(dotted key, value)` pairs applied on top of the file, as the
/// command line's `--set KEY=VALUE`. Raises `ScenarioError` if the scenario is wrong.
#[pyfunction]
#[pyo3(signature = (path, overrides = Vec::new()))]
fn validate_file(
    py: Python<'_>,
    path: PathBuf,
    overrides: Vec<(String, String)>,
) -> PyResult<String> {
    with_scenario(py, Input::File(&path), &overrides, |sc| {
        Ok(describe_json(sc))
    })
}

/// Loads, runs and (if `out_dir` is given) writes a scenario file; returns the summary
/// as JSON.
///
/// Raises `ScenarioError` if the scenario is wrong, `RuntimeError` if the run fails and
/// `OSError` if the results cannot be written.
#[pyfunction]
#[pyo3(signature = (path, overrides = Vec::new(), out_dir = None, pcap = false, budget = Some(mobiflow_sim::budget::DEFAULT_BUDGET_BYTES), progress = None))]
#[allow(clippy::too_many_arguments)]
fn run_file(
    py: Python<'_>,
    path: PathBuf,
    overrides: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    pcap: bool,
    budget: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let control = Control { budget, progress };
    with_scenario(py, Input::File(&path), &overrides, |sc| {
        run_scenario(sc, out_dir.as_deref(), pcap, &control)
    })
}

/// [`validate_file`] for a scenario given as TOML text.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), source = None))]
fn validate_str(
    py: Python<'_>,
    text: String,
    overrides: Vec<(String, String)>,
    source: Option<PathBuf>,
) -> PyResult<String> {
    let input = Input::Text(&text, source.as_deref());
    with_scenario(py, input, &overrides, |sc| Ok(describe_json(sc)))
}

/// [`run_file`] for a scenario given as TOML text, also returning the sampled series:
/// `(summary JSON, {which: CSV})` with `which` one of `flow`, `tcp`, `tfrc`, `link`,
/// the bytes `out_dir` would receive (an empty dict with `series = False`). Writes them
/// into `out_dir` too if it is given, with the pcap files of the scenario's capture
/// points (and of every host with `pcap`). `source`, if given, names the file the text
/// stands for: messages mention it and relative paths (traces) resolve against its
/// folder.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), out_dir = None, source = None, pcap = false, budget = Some(mobiflow_sim::budget::DEFAULT_BUDGET_BYTES), progress = None, series = true))]
#[allow(clippy::too_many_arguments)]
fn run_str_results<'py>(
    py: Python<'py>,
    text: String,
    overrides: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    source: Option<PathBuf>,
    pcap: bool,
    budget: Option<u64>,
    progress: Option<PyObject>,
    series: bool,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let control = Control { budget, progress };
    let input = Input::Text(&text, source.as_deref());
    let results = with_scenario(py, input, &overrides, |sc| {
        run_scenario_results(sc, out_dir.as_deref(), pcap, &control, series)
    })?;
    let series = PyDict::new(py);
    for (which, csv) in &results.series {
        series.set_item(*which, PyBytes::new(py, csv))?;
    }
    Ok((results.summary, series))
}

/// The resource estimate of a scenario given as TOML text, as JSON (see
/// `mobiflow_sim::budget::Estimate`). With `budget`, raises `ScenarioError` if the
/// estimate exceeds it (what a run would raise, without running).
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), source = None, budget = None))]
fn estimate_str(
    py: Python<'_>,
    text: String,
    overrides: Vec<(String, String)>,
    source: Option<PathBuf>,
    budget: Option<u64>,
) -> PyResult<String> {
    let input = Input::Text(&text, source.as_deref());
    with_scenario(py, input, &overrides, |sc| {
        let estimate = match budget {
            Some(b) => mobiflow_sim::budget::check(sc, b).map_err(Failure::Scenario)?,
            None => mobiflow_sim::budget::estimate(sc),
        };
        serde_json::to_string(&estimate).map_err(|e| Failure::Run(e.to_string()))
    })
}

/// The default resource budget in bytes.
#[pyfunction]
fn default_budget() -> u64 {
    mobiflow_sim::budget::DEFAULT_BUDGET_BYTES
}

/// Parses a size like `"8GB"` into bytes (K, M, G are multiples of 1024).
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    mobiflow_sim::units::parse_size(text).map_err(PyValueError::new_err)
}

/// Applies overrides to TOML text and returns the resulting document as TOML text.
///
/// Without overrides the text is returned as it is (comments included). With them,
/// the document is written anew (keys sorted, comments dropped). Only the paths are
/// checked here, not the values: `validate_str` checks those. Raises `ScenarioError`
/// for invalid TOML or an override whose path does not exist.
#[pyfunction]
#[pyo3(signature = (text, overrides = Vec::new(), source = None))]
fn apply_overrides(
    py: Python<'_>,
    text: String,
    overrides: Vec<(String, String)>,
    source: Option<PathBuf>,
) -> PyResult<String> {
    py.allow_threads(|| {
        let mut doc = parse_toml(&text, source.as_deref())?;
        if overrides.is_empty() {
            return Ok(text);
        }
        for (key, value) in &overrides {
            let key = key.trim();
            apply_override(&mut doc, key, value).map_err(|e| {
                let reason = e.strip_prefix(&format!("{key}: ")).unwrap_or(&e);
                ScenarioError {
                    file: source.clone(),
                    key: Some(key.to_string()),
                    reason: format!("in override {key}={value}: {reason}"),
                }
            })?;
        }
        Ok(doc.to_string())
    })
    .map_err(|e: ScenarioError| scenario_error(py, &e))
}

/// Parses TOML text and returns it as JSON (tables as objects, arrays as arrays).
/// Raises `ScenarioError` for invalid TOML, naming the line and column.
#[pyfunction]
#[pyo3(signature = (text, source = None))]
fn toml_to_json(py: Python<'_>, text: String, source: Option<PathBuf>) -> PyResult<String> {
    let doc = parse_toml(&text, source.as_deref()).map_err(|e| scenario_error(py, &e))?;
    serde_json::to_string(&doc).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Writes a JSON object as a TOML document. Raises `ValueError` for what TOML cannot
/// hold: a top level that is not an object, or `null` anywhere.
#[pyfunction]
fn json_to_toml(json: &str) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| PyValueError::new_err(format!("invalid JSON: {e}")))?;
    if !value.is_object() {
        return Err(PyValueError::new_err(
            "a scenario is a table: expected a JSON object at the top level",
        ));
    }
    if let Some(path) = find_null(&value, String::new()) {
        return Err(PyValueError::new_err(format!(
            "{path}: TOML has no null (None); leave the key out to get its default"
        )));
    }
    toml::to_string(&value).map_err(|e| PyValueError::new_err(format!("cannot write TOML: {e}")))
}

/// The dotted path of the first `null` in `value`, if any.
fn find_null(value: &serde_json::Value, path: String) -> Option<String> {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match value {
        serde_json::Value::Null => Some(if path.is_empty() {
            "value".into()
        } else {
            path
        }),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_null(v, join(&i.to_string()))),
        serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| find_null(v, join(k))),
        _ => None,
    }
}

/// The version of the engine (the workspace version).
#[pyfunction]
fn version() -> &'static str {
    mobiflow_sim::VERSION
}

#[pymodule]
fn _mobiflow(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_file, m)?)?;
    m.add_function(wrap_pyfunction!(validate_str, m)?)?;
    m.add_function(wrap_pyfunction!(run_file, m)?)?;
    m.add_function(wrap_pyfunction!(run_str_results, m)?)?;
    m.add_function(wrap_pyfunction!(apply_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_str, m)?)?;
    m.add_function(wrap_pyfunction!(default_budget, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(freeze_model::freeze_dccp_model, m)?)?;
    m.add_function(wrap_pyfunction!(freeze_model::freeze_dccp_handover, m)?)?;
    m.add("ScenarioError", m.py().get_type::<PyScenarioError>())?;
    Ok(())
}

// ---------------------------------------------------------------------------------
// Description of a validated scenario (what `mobiflow validate` prints). Units are in
// the field names: seconds, bits per second, bytes, packets.
// ---------------------------------------------------------------------------------

#[derive(Serialize)]
struct Description<'a> {
    scenario: &'a str,
    source: Option<String>,
    seed: u64,
    duration_s: f64,
    nodes: &'a [String],
    links: Vec<LinkDesc<'a>>,
    flows: Vec<FlowDesc<'a>>,
    intervals: Vec<IntervalDesc<'a>>,
    sample_interval_s: Option<f64>,
    assumed: BTreeMap<&'a str, &'a str>,
}

#[derive(Serialize)]
struct LinkDesc<'a> {
    name: &'a str,
    a: &'a str,
    b: &'a str,
    dirs: Vec<DirDesc<'a>>,
}

#[derive(Serialize)]
struct DirDesc<'a> {
    from: &'a str,
    to: &'a str,
    rate: RateDesc,
    delay: DelayDesc,
    queue: QueueDesc,
    outages_s: Vec<(f64, f64)>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum RateDesc {
    Constant {
        bps: u64,
    },
    Schedule {
        points: Vec<(f64, u64)>,
        period_s: Option<f64>,
    },
    Trace {
        path: String,
        mean_bps: f64,
        opportunities: usize,
        period_ms: u64,
        mtu_bytes: u32,
    },
    Other {
        debug: String,
    },
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum DelayDesc {
    Constant {
        s: f64,
    },
    Schedule {
        points: Vec<(f64, f64)>,
        period_s: Option<f64>,
    },
    Other {
        debug: String,
    },
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum QueueDesc {
    Droptail {
        limit_packets: Option<u32>,
        limit_bytes: Option<u64>,
    },
    Red {
        limit_packets: Option<u32>,
        limit_bytes: Option<u64>,
        /// `None`: "auto" (ns-2.35's automatic value).
        min_th: Option<f64>,
        max_th: Option<f64>,
        w_q: Option<f64>,
        max_p: f64,
        gentle: bool,
        mean_pktsize_bytes: u32,
        wait: bool,
        bytes: bool,
        queue_in_bytes: bool,
        target_delay_s: f64,
    },
    Other {
        debug: String,
    },
}

#[derive(Serialize)]
struct FlowDesc<'a> {
    name: &'a str,
    src: &'a str,
    dst: &'a str,
    start_s: f64,
    stop_s: Option<f64>,
    transport: TransportDesc,
    app: AppDesc,
    reader: ReaderDesc,
}

#[derive(Serialize)]
#[serde(tag = "protocol", rename_all = "snake_case")]
enum TransportDesc {
    Tcp {
        cc: &'static str,
        recovery: &'static str,
        mss_bytes: u32,
        rcv_buf_bytes: u64,
        sack: bool,
        timestamps: bool,
        delayed_ack: bool,
        /// The receive-window policy's name (`flow_control`).
        flow_control: &'static str,
    },
    /// TFRC (`protocol = "tfrc"`) or DCCP CCID 3 (`"dccp_ccid3"`).
    Tfrc(TfrcDesc),
    DccpCcid3(TfrcDesc),
    Other {
        debug: String,
    },
}

/// The fields of a TFRC or DCCP CCID 3 flow's description.
#[derive(Serialize)]
struct TfrcDesc {
    s_bytes: u32,
    header_bytes: u32,
    feedback_bytes: u32,
    feedback: &'static str,
    ccid3: bool,
    freeze: bool,
    freeze_warning: Option<String>,
    freeze_side: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum AppDesc {
    Bulk,
    Sized {
        bytes: u64,
    },
    Bursts {
        at_s: Vec<f64>,
        bytes: Vec<u64>,
    },
    OnOff {
        burst_bytes: u64,
        period_s: f64,
    },
    Web {
        pages: Option<u32>,
        think_s: f64,
        objects: u32,
        object_bytes: Vec<u64>,
        request_bytes: u64,
        connections: u32,
        main_first: bool,
    },
    WebChannel {
        main: usize,
        conn: u32,
        request: bool,
    },
    Other {
        debug: String,
    },
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum ReaderDesc {
    Greedy,
    Constant {
        rate_bps: u64,
        interval_s: f64,
    },
    Steps {
        rates_bps: Vec<u64>,
        step_s: f64,
        interval_s: f64,
    },
    Sine {
        mean_bps: u64,
        amplitude_bps: u64,
        period_s: f64,
        phase_rad: f64,
        interval_s: f64,
    },
    Other {
        debug: String,
    },
}

#[derive(Serialize)]
struct IntervalDesc<'a> {
    name: &'a str,
    start_s: f64,
    end_s: f64,
}

/// The scenario as pretty JSON with a final newline.
fn describe_json(s: &Scenario) -> String {
    let mut text =
        serde_json::to_string_pretty(&describe(s)).expect("a description serialises to JSON");
    text.push('\n');
    text
}

fn describe(s: &Scenario) -> Description<'_> {
    Description {
        scenario: &s.name,
        source: s.source.as_ref().map(|p| p.display().to_string()),
        seed: s.seed,
        duration_s: s.duration.as_secs_f64(),
        nodes: &s.nodes,
        links: s.links.iter().map(|l| describe_link(s, l)).collect(),
        flows: s.flows.iter().map(|f| describe_flow(s, f)).collect(),
        intervals: s
            .measure
            .intervals
            .iter()
            .map(|(name, start, end)| IntervalDesc {
                name,
                start_s: start.as_secs_f64(),
                end_s: end.as_secs_f64(),
            })
            .collect(),
        sample_interval_s: s.measure.sample_interval.map(|d| d.as_secs_f64()),
        assumed: s
            .assumed
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
    }
}

fn node(s: &Scenario, i: usize) -> &str {
    s.nodes.get(i).map(String::as_str).unwrap_or("?")
}

fn describe_link<'a>(s: &'a Scenario, l: &'a LinkSpec) -> LinkDesc<'a> {
    let (a, b) = (node(s, l.a), node(s, l.b));
    LinkDesc {
        name: &l.name,
        a,
        b,
        dirs: vec![
            describe_dir(a, b, &l.dirs[0]),
            describe_dir(b, a, &l.dirs[1]),
        ],
    }
}

fn describe_dir<'a>(from: &'a str, to: &'a str, d: &DirSpec) -> DirDesc<'a> {
    DirDesc {
        from,
        to,
        rate: describe_rate(&d.rate),
        delay: describe_delay(&d.delay),
        queue: describe_queue(&d.queue),
        outages_s: d
            .outages
            .iter()
            .map(|(start, end)| (start.as_secs_f64(), end.as_secs_f64()))
            .collect(),
    }
}

fn describe_rate(r: &RateModel) -> RateDesc {
    match r {
        RateModel::Constant(bps) => RateDesc::Constant { bps: *bps },
        RateModel::Schedule { points, period } => RateDesc::Schedule {
            points: points
                .iter()
                .map(|(t, bps)| (t.as_secs_f64(), *bps))
                .collect(),
            period_s: period.map(|p| p.as_secs_f64()),
        },
        RateModel::Trace(t) => RateDesc::Trace {
            path: t.path.display().to_string(),
            mean_bps: t.mean_rate_bps(),
            opportunities: t.opportunities_ms.len(),
            period_ms: t.period_ms,
            mtu_bytes: t.mtu,
        },
        #[allow(unreachable_patterns)]
        other => RateDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}

fn describe_delay(d: &DelayModel) -> DelayDesc {
    match d {
        DelayModel::Constant(delay) => DelayDesc::Constant {
            s: delay.as_secs_f64(),
        },
        DelayModel::Schedule { points, period } => DelayDesc::Schedule {
            points: points
                .iter()
                .map(|(t, delay)| (t.as_secs_f64(), delay.as_secs_f64()))
                .collect(),
            period_s: period.map(|p| p.as_secs_f64()),
        },
        #[allow(unreachable_patterns)]
        other => DelayDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}

fn limit(l: &QueueLimit) -> (Option<u32>, Option<u64>) {
    match l {
        QueueLimit::Packets(p) => (Some(*p), None),
        QueueLimit::Bytes(b) => (None, Some(*b)),
    }
}

fn describe_queue(q: &QueueSpec) -> QueueDesc {
    match q {
        QueueSpec::DropTail { limit: l } => {
            let (limit_packets, limit_bytes) = limit(l);
            QueueDesc::Droptail {
                limit_packets,
                limit_bytes,
            }
        }
        QueueSpec::Red { limit: l, red: r } => {
            let (limit_packets, limit_bytes) = limit(l);
            QueueDesc::Red {
                limit_packets,
                limit_bytes,
                min_th: r.min_th,
                max_th: r.max_th,
                w_q: r.w_q,
                max_p: r.max_p,
                gentle: r.gentle,
                mean_pktsize_bytes: r.mean_pktsize,
                wait: r.wait,
                bytes: r.bytes,
                queue_in_bytes: r.queue_in_bytes,
                target_delay_s: r.target_delay.as_secs_f64(),
            }
        }
        #[allow(unreachable_patterns)]
        other => QueueDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}

fn describe_flow<'a>(s: &'a Scenario, f: &'a FlowSpec) -> FlowDesc<'a> {
    FlowDesc {
        name: &f.name,
        src: node(s, f.src),
        dst: node(s, f.dst),
        start_s: f.start.as_secs_f64(),
        stop_s: f.stop.map(|d| d.as_secs_f64()),
        transport: describe_transport(&f.transport),
        app: describe_app(&f.app),
        reader: describe_reader(&f.reader),
    }
}

fn describe_transport(t: &Transport) -> TransportDesc {
    match t {
        Transport::Tcp(cfg) => TransportDesc::Tcp {
            cc: cfg.cc.name(),
            recovery: cfg.recovery.name(),
            mss_bytes: cfg.mss,
            rcv_buf_bytes: cfg.rcv_buf,
            sack: cfg.sack,
            timestamps: cfg.timestamps,
            delayed_ack: cfg.delayed_ack,
            flow_control: cfg.flow_control.name(),
        },
        Transport::Tfrc(t) => {
            let desc = TfrcDesc {
                s_bytes: t.cfg.s,
                header_bytes: t.cfg.header_bytes,
                feedback_bytes: t.feedback_bytes,
                feedback: t.cfg.feedback.name(),
                ccid3: t.cfg.ccid3,
                freeze: t.freeze.is_some(),
                freeze_warning: t.freeze.as_ref().map(|f| match &f.warning {
                    mobiflow_sim::model::FreezeWarning::Rtt => "rtt".to_string(),
                    mobiflow_sim::model::FreezeWarning::Fixed(d) => {
                        mobiflow_sim::units::format_duration(*d)
                    }
                }),
                freeze_side: t.freeze.as_ref().map(|f| f.side.name()),
            };
            if t.dccp {
                TransportDesc::DccpCcid3(desc)
            } else {
                TransportDesc::Tfrc(desc)
            }
        }
        #[allow(unreachable_patterns)]
        other => TransportDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}

fn describe_app(a: &AppSpec) -> AppDesc {
    match a {
        AppSpec::Bulk => AppDesc::Bulk,
        AppSpec::Sized { size } => AppDesc::Sized { bytes: *size },
        AppSpec::Bursts { at, sizes } => AppDesc::Bursts {
            at_s: at.iter().map(|d| d.as_secs_f64()).collect(),
            bytes: sizes.clone(),
        },
        AppSpec::OnOff { burst, period } => AppDesc::OnOff {
            burst_bytes: *burst,
            period_s: period.as_secs_f64(),
        },
        AppSpec::Web { spec: w } => AppDesc::Web {
            pages: w.pages,
            think_s: w.think.as_secs_f64(),
            objects: w.objects,
            object_bytes: w.object_sizes.clone(),
            request_bytes: w.request_size,
            connections: w.connections,
            main_first: w.main_first,
        },
        AppSpec::WebChannel {
            main,
            conn,
            request,
        } => AppDesc::WebChannel {
            main: *main,
            conn: *conn,
            request: *request,
        },
        #[allow(unreachable_patterns)]
        other => AppDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}

fn describe_reader(r: &ReaderSpec) -> ReaderDesc {
    match r {
        ReaderSpec::Greedy => ReaderDesc::Greedy,
        ReaderSpec::Constant { rate_bps, interval } => ReaderDesc::Constant {
            rate_bps: *rate_bps,
            interval_s: interval.as_secs_f64(),
        },
        ReaderSpec::Steps {
            rates_bps,
            step,
            interval,
        } => ReaderDesc::Steps {
            rates_bps: rates_bps.clone(),
            step_s: step.as_secs_f64(),
            interval_s: interval.as_secs_f64(),
        },
        ReaderSpec::Sine {
            mean_bps,
            amplitude_bps,
            period,
            phase_rad,
            interval,
        } => ReaderDesc::Sine {
            mean_bps: *mean_bps,
            amplitude_bps: *amplitude_bps,
            period_s: period.as_secs_f64(),
            phase_rad: *phase_rad,
            interval_s: interval.as_secs_f64(),
        },
        #[allow(unreachable_patterns)]
        other => ReaderDesc::Other {
            debug: format!("{other:?}"),
        },
    }
}
