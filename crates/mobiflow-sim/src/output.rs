//! Writing a run's results to a folder.
//!
//! [`write_run`] writes three files, and only these three, into a folder that it creates
//! if needed:
//!
//! | file | content |
//! |---|---|
//! | `summary.json` | the [`Summary`], pretty-printed, fields in declaration order |
//! | `flow_series.csv` | [`FlowSeries`], one row per (sample time, flow) |
//! | `link_series.csv` | [`LinkSeries`], one row per (sample time, link direction) |
//!
//! Other files already in the folder are left alone; the three files above are replaced
//! (each is written to a temporary name in the same folder, then renamed, so that an
//! interrupted run never leaves half a file under the real name).
//!
//! The bytes depend only on the result: no time stamps, no host names, no hash-map
//! order. Floats in JSON are printed by `serde_json` (shortest round-trip form, `null`
//! for NaN and infinities); floats in CSV by Rust's `Display` for `f64` (shortest
//! round-trip form, never an exponent), with NaN and infinities written as an empty
//! field (a missing value for polars and pandas). The series have a header row even when
//! sampling was disabled and they hold no rows.
//!
//! The CSV columns are the fields of [`FlowSeries`] and [`LinkSeries`], in order, in the
//! naming of every mobiflow table: the index column is `flow_index` (into
//! `summary.flows`), followed by `flow`, the flow's name; `dir_index` (into
//! `summary.links`) is followed by `dir`, the direction's name (`link:a->b`). An
//! infinite slow-start threshold is an empty field.

use crate::engine::RunResult;
use crate::results::{FlowSeries, LinkSeries, Series, Summary};
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Name of the JSON summary written by [`write_run`].
pub const SUMMARY_FILE: &str = "summary.json";
/// Name of the per-flow time series written by [`write_run`].
pub const FLOW_SERIES_FILE: &str = "flow_series.csv";
/// Name of the per-link-direction time series written by [`write_run`].
pub const LINK_SERIES_FILE: &str = "link_series.csv";

/// Column names of `flow_series.csv`, in order.
pub const FLOW_SERIES_COLUMNS: &[&str] = &[
    "time_s",
    "flow_index",
    "flow",
    "cwnd_bytes",
    "ssthresh_bytes",
    "rwnd_bytes",
    "flight_bytes",
    "srtt_ms",
    "rcv_buffer_bytes",
    "read_rate_bps",
    "goodput_bps",
    "snd_una",
    "snd_nxt",
    "flow_window_bytes",
    "ar_bps",
    "rcv_buf_limit_bytes",
    "t_buff_ms",
    "policy_state",
    "tfrc_x_bps",
    "tfrc_x_recv_bps",
    "tfrc_p",
    "tfrc_state",
    "tfrc_rx_state",
];

/// Column names of `link_series.csv`, in order.
pub const LINK_SERIES_COLUMNS: &[&str] = &[
    "time_s",
    "dir_index",
    "dir",
    "queue_packets",
    "queue_bytes",
    "rate_bps",
];

/// Writes `summary.json`, `flow_series.csv` and `link_series.csv` into `dir`, creating
/// it (and its parents) if missing, and returns the paths written, in that order.
///
/// Only these three files are touched: anything else in `dir` stays as it was.
pub fn write_run(result: &RunResult, dir: &Path) -> io::Result<Vec<PathBuf>> {
    write_results(&result.summary, &result.series, dir)
}

/// [`write_run`] for a summary and series held separately.
pub fn write_results(summary: &Summary, series: &Series, dir: &Path) -> io::Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{}: exists and is not a directory", dir.display()),
        ));
    }
    fs::create_dir_all(dir)?;
    // Check the series before writing anything, so that a malformed result leaves
    // the folder untouched.
    check_flow_series(&series.flow)?;
    check_link_series(&series.link)?;

    let summary_path = dir.join(SUMMARY_FILE);
    write_atomically(&summary_path, summary_json(summary).as_bytes())?;

    let flow_path = dir.join(FLOW_SERIES_FILE);
    let mut flow_csv = Vec::new();
    write_flow_series(&mut flow_csv, &series.flow, summary)?;
    write_atomically(&flow_path, &flow_csv)?;

    let link_path = dir.join(LINK_SERIES_FILE);
    let mut link_csv = Vec::new();
    write_link_series(&mut link_csv, &series.link, summary)?;
    write_atomically(&link_path, &link_csv)?;

    Ok(vec![summary_path, flow_path, link_path])
}

/// The summary as written to `summary.json`: pretty-printed JSON with two-space
/// indentation, fields in declaration order, and a final newline.
pub fn summary_json(summary: &Summary) -> String {
    // Serialising plain structs, strings, numbers and BTreeMaps with string keys
    // cannot fail.
    let mut text = serde_json::to_string_pretty(summary).expect("a Summary serialises to JSON");
    text.push('\n');
    text
}

/// Writes `flow_series.csv` (header and rows) to `w`. `summary` supplies flow names.
pub fn write_flow_series<W: Write>(w: W, s: &FlowSeries, summary: &Summary) -> io::Result<()> {
    let rows = check_flow_series(s)?;
    let mut w = BufWriter::new(w);
    write_header(&mut w, FLOW_SERIES_COLUMNS)?;
    for i in 0..rows {
        let flow = s.flow[i];
        let name = summary.flows.get(flow as usize).map(|f| f.name.as_str());
        write_row_start(&mut w, s.time_s[i], flow, name)?;
        writeln!(
            w,
            ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.cwnd_bytes[i],
            Ssthresh(s.ssthresh_bytes[i]),
            s.rwnd_bytes[i],
            s.flight_bytes[i],
            F(s.srtt_ms[i]),
            s.rcv_buffer_bytes[i],
            F(s.read_rate_bps[i]),
            F(s.goodput_bps[i]),
            s.snd_una[i],
            s.snd_nxt[i],
            s.flow_window_bytes[i],
            F(s.ar_bps[i]),
            s.rcv_buf_limit_bytes[i],
            F(s.t_buff_ms[i]),
            s.policy_state[i],
            F(s.tfrc_x_bps[i]),
            F(s.tfrc_x_recv_bps[i]),
            F(s.tfrc_p[i]),
            s.tfrc_state[i],
            s.tfrc_rx_state[i],
        )?;
    }
    w.flush()
}

/// Writes `link_series.csv` (header and rows) to `w`. `summary` supplies direction names.
pub fn write_link_series<W: Write>(w: W, s: &LinkSeries, summary: &Summary) -> io::Result<()> {
    let rows = check_link_series(s)?;
    let mut w = BufWriter::new(w);
    write_header(&mut w, LINK_SERIES_COLUMNS)?;
    for i in 0..rows {
        let dir = s.dir[i];
        let name = summary.links.get(dir as usize).map(|l| l.name.as_str());
        write_row_start(&mut w, s.time_s[i], dir, name)?;
        writeln!(
            w,
            ",{},{},{}",
            s.queue_packets[i],
            s.queue_bytes[i],
            F(s.rate_bps[i]),
        )?;
    }
    w.flush()
}

/// The slow-start threshold at or above which it counts as infinite (the engine caps an
/// infinite threshold at `u64::MAX / 4`, so that arithmetic on it cannot overflow).
pub const SSTHRESH_INFINITE: u64 = u64::MAX / 4;

/// A slow-start threshold as a CSV field: empty (null) while it is infinite, never the
/// cap `u64::MAX / 4` as if it were a size.
struct Ssthresh(u64);

impl std::fmt::Display for Ssthresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 >= SSTHRESH_INFINITE {
            Ok(())
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// A float as a CSV field: shortest round-trip decimal, empty if not finite.
struct F(f64);

impl std::fmt::Display for F {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_finite() {
            write!(f, "{}", self.0)
        } else {
            Ok(())
        }
    }
}

fn write_header<W: Write>(w: &mut W, columns: &[&str]) -> io::Result<()> {
    writeln!(w, "{}", columns.join(","))
}

/// The columns every series row starts with: `time_s`, the flow's or direction's
/// index and its name (empty when the summary has none); the rest of the row follows,
/// each column after a comma.
fn write_row_start<W: Write>(
    w: &mut W,
    time_s: f64,
    index: u32,
    name: Option<&str>,
) -> io::Result<()> {
    write!(w, "{},{},", F(time_s), index)?;
    write_field(w, name.unwrap_or(""))
}

/// A text field, quoted as RFC 4180 asks when it holds a comma, a quote or a line break.
fn write_field<W: Write>(w: &mut W, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(w, "\"{}\"", text.replace('"', "\"\""))
    } else {
        w.write_all(text.as_bytes())
    }
}

/// Checks that every column has as many rows as `time_s`; returns that number.
fn check_lengths(table: &str, columns: &[(&str, usize)]) -> io::Result<usize> {
    let rows = columns[0].1;
    for &(name, len) in columns {
        if len != rows {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{table}: column {name} has {len} rows, time_s has {rows}"),
            ));
        }
    }
    Ok(rows)
}

fn check_flow_series(s: &FlowSeries) -> io::Result<usize> {
    check_lengths(
        "flow series",
        &[
            ("time_s", s.time_s.len()),
            ("flow", s.flow.len()),
            ("cwnd_bytes", s.cwnd_bytes.len()),
            ("ssthresh_bytes", s.ssthresh_bytes.len()),
            ("rwnd_bytes", s.rwnd_bytes.len()),
            ("flight_bytes", s.flight_bytes.len()),
            ("srtt_ms", s.srtt_ms.len()),
            ("rcv_buffer_bytes", s.rcv_buffer_bytes.len()),
            ("read_rate_bps", s.read_rate_bps.len()),
            ("goodput_bps", s.goodput_bps.len()),
            ("snd_una", s.snd_una.len()),
            ("snd_nxt", s.snd_nxt.len()),
            ("flow_window_bytes", s.flow_window_bytes.len()),
            ("ar_bps", s.ar_bps.len()),
            ("rcv_buf_limit_bytes", s.rcv_buf_limit_bytes.len()),
            ("t_buff_ms", s.t_buff_ms.len()),
            ("policy_state", s.policy_state.len()),
            ("tfrc_x_bps", s.tfrc_x_bps.len()),
            ("tfrc_x_recv_bps", s.tfrc_x_recv_bps.len()),
            ("tfrc_p", s.tfrc_p.len()),
            ("tfrc_state", s.tfrc_state.len()),
            ("tfrc_rx_state", s.tfrc_rx_state.len()),
        ],
    )
}

fn check_link_series(s: &LinkSeries) -> io::Result<usize> {
    check_lengths(
        "link series",
        &[
            ("time_s", s.time_s.len()),
            ("dir", s.dir.len()),
            ("queue_packets", s.queue_packets.len()),
            ("queue_bytes", s.queue_bytes.len()),
            ("rate_bps", s.rate_bps.len()),
        ],
    )
}

/// Writes `bytes` to a temporary file beside `path`, then renames it to `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{FlowSummary, LinkSummary};
    use std::collections::BTreeMap;

    fn flow(name: &str) -> FlowSummary {
        FlowSummary {
            name: name.into(),
            src: "server".into(),
            dst: "phone".into(),
            protocol: "tcp".into(),
            cc: "reno".into(),
            flow_control: "classic".into(),
            bytes_delivered: 1_000,
            bytes_offered: 2_000,
            goodput_bps: 1.5e6,
            intervals: BTreeMap::from([("all".to_string(), 1.25e6), ("b".into(), 0.1)]),
            completion_time_s: None,
            burst_completion_times_s: vec![0.5],
            page_load_times_s: vec![],
            pages_started: 0,
            segments_sent: 10,
            retransmits: 1,
            timeouts: 0,
            fast_retransmits: 1,
            spurious_retransmits: 0,
            undos: 0,
            zero_windows: 2,
            zero_window_acks: 3,
            window_probes: 0,
            window_updates: 0,
            dup_acks: 0,
            policy_updates: 0,
            hidden_congestion_events: 0,
            paced_segments: 0,
            zero_window_stalls: 0,
            zero_window_stall_s: 0.0,
            zero_window_stall_rtts: 0,
            idle_rtts: 4,
            total_rtts: 50,
            rcv_buffer_drops: 0,
            rtt_min_ms: Some(100.0),
            rtt_mean_ms: Some(120.5),
            rtt_p95_ms: None,
            rtt_samples: 9,
            handoff: Default::default(),
            tfrc: None,
        }
    }

    fn summary() -> Summary {
        Summary {
            mobiflow_version: "0.0.0".into(),
            scenario: "unit".into(),
            seed: 7,
            duration_s: 10.0,
            flows: vec![flow("bulk"), flow("odd, \"name\"")],
            links: vec![LinkSummary {
                name: "wan:server->phone".into(),
                link: "wan".into(),
                from: "server".into(),
                to: "phone".into(),
                packets_sent: 10,
                bytes_sent: 15_000,
                drops: 1,
                early_drops: None,
                outage_losses: 0,
                random_losses: 0,
                reordered: 0,
                duplicated: 0,
                queue_max_packets: 5,
                queue_mean_packets: 0.75,
            }],
            assumed: BTreeMap::from([("links.0.queue".to_string(), "100p".to_string())]),
            events: 1234,
        }
    }

    fn series() -> Series {
        Series {
            flow: FlowSeries {
                time_s: vec![0.1, 0.2],
                flow: vec![0, 1],
                cwnd_bytes: vec![1460, 2920],
                ssthresh_bytes: vec![u64::MAX, 65535],
                rwnd_bytes: vec![65535, 0],
                flight_bytes: vec![0, 1460],
                srtt_ms: vec![f64::NAN, 100.25],
                rcv_buffer_bytes: vec![0, 10],
                read_rate_bps: vec![6e6, 0.0],
                goodput_bps: vec![1e-7, 1e21],
                snd_una: vec![1, 2],
                snd_nxt: vec![3, 4],
                flow_window_bytes: vec![65535, 0],
                ar_bps: vec![f64::NAN, 4e6],
                rcv_buf_limit_bytes: vec![262144, 262144],
                t_buff_ms: vec![f64::NAN, 12.5],
                policy_state: vec![-1, 2],
                tfrc_x_bps: vec![f64::NAN, f64::NAN],
                tfrc_x_recv_bps: vec![f64::NAN, f64::NAN],
                tfrc_p: vec![f64::NAN, f64::NAN],
                tfrc_state: vec![-1, -1],
                tfrc_rx_state: vec![-1, -1],
            },
            link: LinkSeries {
                time_s: vec![0.1],
                dir: vec![0],
                queue_packets: vec![3],
                queue_bytes: vec![4500],
                rate_bps: vec![15e6],
            },
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mobiflow-output-{}-{}", name, std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn flow_series_has_header_names_and_quoted_fields() {
        let mut out = Vec::new();
        write_flow_series(&mut out, &series().flow, &summary()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], FLOW_SERIES_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "0.1,0,bulk,1460,,65535,0,,0,6000000,0.0000001,1,3,65535,,262144,,-1,\
             ,,,-1,-1"
        );
        assert_eq!(
            lines[2],
            "0.2,1,\"odd, \"\"name\"\"\",2920,65535,0,1460,100.25,10,0,\
             1000000000000000000000,2,4,0,4000000,262144,12.5,2,,,,-1,-1"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn link_series_names_directions() {
        let mut out = Vec::new();
        write_link_series(&mut out, &series().link, &summary()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_s,dir_index,dir,queue_packets,queue_bytes,rate_bps\n\
             0.1,0,wan:server->phone,3,4500,15000000\n"
        );
    }

    #[test]
    fn empty_series_still_have_a_header() {
        let mut out = Vec::new();
        write_link_series(&mut out, &LinkSeries::default(), &summary()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_s,dir_index,dir,queue_packets,queue_bytes,rate_bps\n"
        );
    }

    #[test]
    fn ragged_series_are_refused_before_writing() {
        let dir = scratch("ragged");
        let mut s = series();
        s.flow.snd_nxt.pop();
        let err = write_results(&summary(), &s, &dir).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("snd_nxt"), "{err}");
        assert!(!dir.join(SUMMARY_FILE).exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn summary_json_keeps_field_order_and_ends_with_newline() {
        let text = summary_json(&summary());
        assert!(text.starts_with("{\n  \"mobiflow_version\": \"0.0.0\",\n  \"scenario\""));
        assert!(text.ends_with("}\n"));
        let seed = text.find("\"seed\"").unwrap();
        let flows = text.find("\"flows\"").unwrap();
        let events = text.find("\"events\"").unwrap();
        assert!(seed < flows && flows < events);
    }

    #[test]
    fn write_results_creates_the_folder_and_keeps_other_files() {
        let dir = scratch("write").join("nested");
        let paths = write_results(&summary(), &series(), &dir).unwrap();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
            .collect();
        assert_eq!(names, [SUMMARY_FILE, FLOW_SERIES_FILE, LINK_SERIES_FILE]);
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let first: Vec<Vec<u8>> = paths.iter().map(|p| fs::read(p).unwrap()).collect();
        write_results(&summary(), &series(), &dir).unwrap();
        let second: Vec<Vec<u8>> = paths.iter().map(|p| fs::read(p).unwrap()).collect();
        assert_eq!(first, second);
        assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
        let mut left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "flow_series.csv",
                "link_series.csv",
                "notes.txt",
                "summary.json"
            ]
        );
        fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_file_in_the_way_is_an_error() {
        let dir = scratch("file");
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("taken");
        fs::write(&file, "x").unwrap();
        let err = write_results(&summary(), &series(), &file).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "x");
        fs::remove_dir_all(&dir).unwrap();
    }
}
