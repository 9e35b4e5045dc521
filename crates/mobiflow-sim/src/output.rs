//! Writing a run's results to a folder.
//!
//! [`write_run`] writes five files, and only these five, into a folder that it creates
//! if needed:
//!
//! | file | content |
//! |---|---|
//! | `summary.json` | the [`Summary`], pretty-printed, fields in declaration order |
//! | `flow_series.csv` | [`FlowSeries`], one row per (sample time, flow): what every flow has |
//! | `tcp_series.csv` | [`TcpSeries`], one row per (sample time, TCP flow) |
//! | `tfrc_series.csv` | [`TfrcSeries`], one row per (sample time, TFRC / DCCP flow) |
//! | `link_series.csv` | [`LinkSeries`], one row per (sample time, link direction) |
//!
//! Other files already in the folder are left alone; the files above are replaced
//! (each is written to a temporary name in the same folder, then renamed, so that an
//! interrupted run never leaves half a file under the real name).
//!
//! The bytes depend only on the result: no time stamps, no host names, no hash-map
//! order. Floats in JSON are printed by `serde_json` (shortest round-trip form, `null`
//! for NaN and infinities); floats in CSV by Rust's `Display` for `f64` (shortest
//! round-trip form, never an exponent), with NaN and infinities written as an empty
//! field (a missing value for polars and pandas). The series have a header row even when
//! sampling was disabled, or no flow has that transport, and they hold no rows.
//!
//! The CSV columns are `time_s`, the index column, the name, then the table's columns
//! as declared in `results.rs` (`series_table!`), in the naming of every mobiflow table:
//! the index column is `flow_index` (into `summary.flows`), followed by `flow`, the
//! flow's name; `dir_index` (into `summary.links`) is followed by `dir`, the direction's
//! name (`link:a->b`). An infinite slow-start threshold is an empty field.

use crate::engine::RunResult;
pub use crate::results::SSTHRESH_INFINITE;
use crate::results::{
    Cell, FlowSeries, LinkSeries, Series, SeriesTable, Summary, TcpSeries, TfrcSeries,
};
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Name of the JSON summary written by [`write_run`].
pub const SUMMARY_FILE: &str = "summary.json";
/// Name of the per-flow time series written by [`write_run`].
pub const FLOW_SERIES_FILE: &str = FlowSeries::FILE;
/// Name of the TCP flows' time series written by [`write_run`].
pub const TCP_SERIES_FILE: &str = TcpSeries::FILE;
/// Name of the TFRC flows' time series written by [`write_run`].
pub const TFRC_SERIES_FILE: &str = TfrcSeries::FILE;
/// Name of the per-link-direction time series written by [`write_run`].
pub const LINK_SERIES_FILE: &str = LinkSeries::FILE;

/// The header of a series table's CSV: `time_s`, the index, the name, its columns.
pub fn columns<T: SeriesTable>() -> Vec<&'static str> {
    let mut c = vec!["time_s"];
    c.extend(T::INDEX);
    c.extend(T::COLUMNS);
    c
}

/// Writes `summary.json` and the four series into `dir`, creating it (and its parents)
/// if missing, and returns the paths written, in the order of the table above.
///
/// Only these files are touched: anything else in `dir` stays as it was.
pub fn write_run(result: &RunResult, dir: &Path) -> io::Result<Vec<PathBuf>> {
    write_results(&result.summary, &result.series, dir)
}

/// The four series as CSV bytes, in the order of [`write_run`]'s files (after the
/// summary): flow, TCP, TFRC, link.
pub fn series_csv(series: &Series, summary: &Summary) -> io::Result<[(&'static str, Vec<u8>); 4]> {
    // Check every table before formatting any, so that a malformed result is refused
    // whole.
    check(&series.flow)?;
    check(&series.tcp)?;
    check(&series.tfrc)?;
    check(&series.link)?;
    Ok([
        (FLOW_SERIES_FILE, csv(&series.flow, summary)?),
        (TCP_SERIES_FILE, csv(&series.tcp, summary)?),
        (TFRC_SERIES_FILE, csv(&series.tfrc, summary)?),
        (LINK_SERIES_FILE, csv(&series.link, summary)?),
    ])
}

/// One series table as CSV bytes.
fn csv<T: SeriesTable>(table: &T, summary: &Summary) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_series(&mut out, table, summary)?;
    Ok(out)
}

/// [`write_run`] for a summary and series held separately.
pub fn write_results(summary: &Summary, series: &Series, dir: &Path) -> io::Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{}: exists and is not a directory", dir.display()),
        ));
    }
    // Format the series before writing anything, so that a malformed result leaves
    // the folder untouched.
    let tables = series_csv(series, summary)?;
    fs::create_dir_all(dir)?;
    let summary_path = dir.join(SUMMARY_FILE);
    write_atomically(&summary_path, summary_json(summary).as_bytes())?;
    let mut paths = vec![summary_path];
    for (file, bytes) in &tables {
        let path = dir.join(file);
        write_atomically(&path, bytes)?;
        paths.push(path);
    }
    Ok(paths)
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

/// Writes a series table (header and rows) to `w`. `summary` supplies the names of the
/// flows or link directions.
pub fn write_series<W: Write, T: SeriesTable>(w: W, s: &T, summary: &Summary) -> io::Result<()> {
    let rows = check(s)?;
    let names: Vec<&str> = if T::INDEX[1] == "dir" {
        summary.links.iter().map(|l| l.name.as_str()).collect()
    } else {
        summary.flows.iter().map(|f| f.name.as_str()).collect()
    };
    let mut w = BufWriter::new(w);
    writeln!(w, "{}", columns::<T>().join(","))?;
    for i in 0..rows {
        let (t, ix) = s.key(i);
        let name = names.get(ix as usize).copied().unwrap_or("");
        // The time is a float cell as any other (`results::Cell`).
        Cell::write_cell(&t, &mut w)?;
        write!(w, ",{ix},")?;
        write_field(&mut w, name)?;
        s.write_cells(i, &mut w)?;
        writeln!(w)?;
    }
    w.flush()
}

/// A text field, quoted as RFC 4180 asks when it holds a comma, a quote or a line break.
fn write_field<W: Write>(w: &mut W, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(w, "\"{}\"", text.replace('"', "\"\""))
    } else {
        w.write_all(text.as_bytes())
    }
}

/// Checks that every column of a table has as many rows as `time_s`; returns that
/// number.
fn check<T: SeriesTable>(s: &T) -> io::Result<usize> {
    let columns = s.lengths();
    let rows = columns[0].1;
    for (name, len) in columns {
        if len != rows {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: column {name} has {len} rows, time_s has {rows}",
                    T::WHAT
                ),
            ));
        }
    }
    Ok(rows)
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
    use crate::results::{FlowSummary, LinkSummary, Ssthresh};
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
                srtt_ms: vec![f64::NAN, 100.25],
                read_rate_bps: vec![6e6, 0.0],
                goodput_bps: vec![1e-7, 1e21],
            },
            tcp: TcpSeries {
                time_s: vec![0.1, 0.2],
                flow: vec![0, 1],
                cwnd_bytes: vec![1460, 2920],
                ssthresh_bytes: vec![Ssthresh(u64::MAX), Ssthresh(65535)],
                rwnd_bytes: vec![65535, 0],
                flight_bytes: vec![0, 1460],
                rcv_buffer_bytes: vec![0, 10],
                snd_una: vec![1, 2],
                snd_nxt: vec![3, 4],
                flow_window_bytes: vec![65535, 0],
                ar_bps: vec![f64::NAN, 4e6],
                rcv_buf_limit_bytes: vec![262144, 262144],
                t_buff_ms: vec![f64::NAN, 12.5],
                policy_state: vec![-1, 2],
            },
            tfrc: TfrcSeries::default(),
            link: LinkSeries {
                time_s: vec![0.1],
                dir: vec![0],
                queue_packets: vec![3],
                queue_bytes: vec![4500],
                rate_bps: vec![15e6],
            },
        }
    }

    /// `table` written as CSV (the summary names the flows and directions).
    fn csv_text<T: SeriesTable>(table: &T) -> String {
        String::from_utf8(csv(table, &summary()).unwrap()).unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mobiflow-output-{}-{}", name, std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn flow_series_has_header_names_and_quoted_fields() {
        assert_eq!(
            csv_text(&series().flow),
            "time_s,flow_index,flow,srtt_ms,read_rate_bps,goodput_bps\n\
             0.1,0,bulk,,6000000,0.0000001\n\
             0.2,1,\"odd, \"\"name\"\"\",100.25,0,1000000000000000000000\n"
        );
    }

    #[test]
    fn tcp_series_writes_an_infinite_ssthresh_and_nan_as_empty_fields() {
        assert_eq!(
            csv_text(&series().tcp),
            "time_s,flow_index,flow,cwnd_bytes,ssthresh_bytes,rwnd_bytes,flight_bytes,\
             rcv_buffer_bytes,snd_una,snd_nxt,flow_window_bytes,ar_bps,rcv_buf_limit_bytes,\
             t_buff_ms,policy_state\n\
             0.1,0,bulk,1460,,65535,0,0,1,3,65535,,262144,,-1\n\
             0.2,1,\"odd, \"\"name\"\"\",2920,65535,0,1460,10,2,4,0,4000000,262144,12.5,2\n"
        );
    }

    #[test]
    fn link_series_names_directions() {
        assert_eq!(
            csv_text(&series().link),
            "time_s,dir_index,dir,queue_packets,queue_bytes,rate_bps\n\
             0.1,0,wan:server->phone,3,4500,15000000\n"
        );
    }

    #[test]
    fn empty_series_still_have_a_header() {
        assert_eq!(
            csv_text(&LinkSeries::default()),
            "time_s,dir_index,dir,queue_packets,queue_bytes,rate_bps\n"
        );
        assert_eq!(
            csv_text(&TfrcSeries::default()),
            "time_s,flow_index,flow,x_bps,x_recv_bps,p,bytes_sent,bytes_received,state,rx_state\n"
        );
    }

    #[test]
    fn ragged_series_are_refused_before_writing() {
        let dir = scratch("ragged");
        let mut s = series();
        s.tcp.snd_nxt.pop();
        let err = write_results(&summary(), &s, &dir).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(
            err.to_string().contains("TCP series: column snd_nxt"),
            "{err}"
        );
        assert!(!dir.exists(), "nothing is written, not even the folder");
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
        assert_eq!(
            names,
            [
                SUMMARY_FILE,
                FLOW_SERIES_FILE,
                TCP_SERIES_FILE,
                TFRC_SERIES_FILE,
                LINK_SERIES_FILE
            ]
        );
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
                "summary.json",
                "tcp_series.csv",
                "tfrc_series.csv",
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
