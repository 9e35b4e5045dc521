//! The fuzz targets: functions of bytes that panic on a defect. Called by the stable
//! harness (`tests/fuzz.rs`, `make test-fuzz`) and by the cargo-fuzz targets of
//! `fuzz/` (coverage-guided, for long runs: docs/fuzzing.md).
//!
//! Every target checks more than "does not panic": a refused scenario is one line
//! (`FILE: KEY: REASON`), a trace is accepted exactly when it is a non-empty list of
//! non-decreasing whole milliseconds (within simulated time), a parsed value prints
//! back to itself, and an encoded packet is a well-formed frame (lengths, data
//! offsets, options, checksums).

use mobiflow_proto::tfrc::wire::FreezeSignals;
use mobiflow_proto::tfrc::{TfrcData, TfrcFeedback};
use mobiflow_proto::time::{Duration, Instant};
use mobiflow_proto::wire::{ExpOptions, Flags, SackBlocks, Segment, Timestamps};
use mobiflow_sim::engine::World;
use mobiflow_sim::pcap::{encode_tcp, encode_tfrc, FlowWire, TfrcPacket};
use mobiflow_sim::units;
use std::path::Path;

/// Values and keys the scenario and unit mutators splice in.
pub const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "10",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "0.0",
    "-0.0",
    "0.5",
    "1.5",
    "1e3",
    "1_000",
    "\"\"",
    "\"inf\"",
    "\"nan\"",
    "[]",
    "[[]]",
    "{}",
    "true",
    "false",
    "\"0s\"",
    "\"1ns\"",
    "\"1s\"",
    "\"100ms\"",
    "\"1e30s\"",
    "\"18446744073709551615ns\"",
    "\"1e9h\"",
    "\"0bps\"",
    "\"1bps\"",
    "\"1kbps\"",
    "\"15Mbps\"",
    "\"1e12Gbps\"",
    "\"1Tbps\"",
    "\"0B\"",
    "\"1B\"",
    "\"40B\"",
    "\"1460B\"",
    "\"64KB\"",
    "\"65535B\"",
    "\"1GB\"",
    "\"1e12GB\"",
    "\"0p\"",
    "\"1p\"",
    "\"4294967295p\"",
    "\"1%\"",
    "\"100%\"",
    "\"99.99%\"",
    "0.999999",
    "ns",
    "us",
    "ms",
    "s",
    "min",
    "h",
    "bps",
    "kbps",
    "Mbps",
    "Gbps",
    "B",
    "KB",
    "KiB",
    "MB",
    "GB",
    "p",
    "pkts",
    "µs",
    "e",
    "E",
    "-",
    ".",
    "_",
    "\"reno\"",
    "\"newreno\"",
    "\"cubic\"",
    "\"relentless\"",
    "\"fld\"",
    "\"tcp\"",
    "\"tfrc\"",
    "\"dccp-ccid3\"",
    "\"classic\"",
    "\"afc\"",
    "\"autotune\"",
    "\"rsfc\"",
    "\"red\"",
    "\"droptail\"",
    "\"ns2\"",
    "\"rfc\"",
    "\"sack\"",
    "\"greedy\"",
    "\"bulk\"",
    "\"web\"",
    "\"rtt\"",
    "\"auto\"",
    "\"buffer\"",
    "\"iett+ba-sst\"",
    "{ kind = \"sized\", size = \"1B\" }",
    "{ kind = \"steps\", rates = [\"0bps\"], step = \"1ns\" }",
    "{ kind = \"sine\", mean = \"1bps\", amplitude = \"1e12Gbps\", period = \"1ns\" }",
    "{ kind = \"onoff\", burst = \"1B\", period = \"1ns\" }",
    "{ kind = \"bursts\", at = [\"0s\", \"0s\"], sizes = \"1B\" }",
    "[[\"0s\", \"1ns\"]]",
    "[[\"0s\", \"0bps\"], [\"1ns\", \"1bps\"]]",
    "[[\"1s\", \"2s\"], [\"2s\", \"3s\"]]",
    "[{ at = \"0s\", interruption = \"1ns\" }]",
];

pub const KEYS: &[&str] = &[
    "run.duration",
    "run.seed",
    "measure.sample_interval",
    "measure.capture.snaplen",
    "tcp.profile",
    "tcp.mss",
    "tcp.rcv_buf",
    "tcp.wscale",
    "tcp.min_rto",
    "tcp.max_rto",
    "tcp.initial_rto",
    "tcp.initial_window",
    "tcp.initial_ssthresh",
    "tcp.max_cwnd",
    "tcp.max_send_window",
    "tcp.clock_granularity",
    "tcp.ts_granularity",
    "tcp.delack_timeout",
    "tcp.ack_every",
    "tcp.dupack_threshold",
    "tcp.persist_min",
    "tcp.persist_max",
    "tcp.max_backoff_exponent",
    "tcp.header_bytes",
    "tcp.cc",
    "tcp.recovery",
    "tcp.sack",
    "tcp.timestamps",
    "tcp.handshake",
    "tcp.freeze",
    "tcp.freeze_warning",
    "tcp.handoff_reaction",
    "tcp.fld.threshold",
    "tcp.fld.ss_factor",
    "links.0.rate",
    "links.0.delay",
    "links.0.queue",
    "links.0.queue_limit",
    "links.0.loss",
    "links.0.outages",
    "links.0.rate_schedule",
    "links.0.delay_schedule",
    "links.0.schedule_period",
    "links.0.handoffs",
    "links.0.trace_mtu",
    "links.0.red.min_th",
    "links.0.red.max_th",
    "links.0.red.w_q",
    "links.0.red.max_p",
    "links.0.red.mean_pktsize",
    "links.0.ab.rate",
    "links.0.ba.delay",
    "links.0.ab.outages",
    "flows.0.cc",
    "flows.0.transport",
    "flows.0.start",
    "flows.0.stop",
    "flows.0.app",
    "flows.0.reader",
    "flows.0.flow_control",
    "flows.0.tcp.mss",
    "flows.0.tcp.rcv_buf",
    "flows.0.afc.ar_alpha",
    "flows.0.afc.ar_sample_interval",
    "flows.0.afc.burst_segments",
    "flows.0.afc.placement",
    "flows.0.autotune.initial_buf",
    "flows.0.autotune.min_buf",
    "flows.0.autotune.headroom",
    "flows.0.rsfc.rho_window",
    "flows.0.rsfc.initial_rwnd",
    "flows.0.rsfc.ts_tick",
    "flows.0.tfrc.s",
    "flows.0.tfrc.t_mbi",
    "flows.0.tfrc.b",
    "flows.0.tfrc.initial_rate",
    "flows.0.tfrc.rtt_q",
    "flows.0.tfrc.min_p",
    "flows.0.tfrc.freeze",
    "flows.0.tfrc.freeze_warning",
    "flows.0.tfrc.handshake_rtt",
    "flows.0.web.objects",
    "flows.0.web.connections",
    "flows.0.web.object_size",
    "flows.1.cc",
    "flows.9.cc",
];

/// Events a fuzzed run may take: keeps each case short whatever the scenario asks.
const MAX_EVENTS: u64 = 20_000;

/// Runs the engine on a loaded scenario for at most `MAX_EVENTS` events.
fn run_briefly(sc: &mobiflow_sim::Scenario) {
    let Ok(mut w) = World::build(sc) else {
        return;
    };
    let mut n = 0;
    while n < MAX_EVENTS && w.step() {
        n += 1;
    }
    let r = w.finish();
    assert_eq!(
        r.summary.flows.len(),
        sc.flows.len().max(r.summary.flows.len())
    );
}

pub const SET: &str = "\n#%set\n";

/// Splits a loader input into the TOML text and its `KEY=VALUE` overrides.
pub fn split_input(data: &[u8]) -> (String, Vec<(String, String)>) {
    let text = String::from_utf8_lossy(data).into_owned();
    match text.split_once(SET) {
        Some((toml, sets)) => {
            let overrides = sets
                .lines()
                .filter_map(|l| mobiflow_sim::scenario::split_override(l).ok())
                .collect();
            (toml.to_string(), overrides)
        }
        None => (text, Vec::new()),
    }
}

/// A refused scenario is one line naming the file; a loaded one runs.
pub fn scenario_target(repo: &Path, data: &[u8]) {
    let (text, overrides) = split_input(data);
    // Trace paths resolve against the examples' folder, as the shipped scenarios do.
    let source = repo.join("scenarios/examples/fuzz.toml");
    match mobiflow_sim::load_str(&text, Some(&source), &overrides) {
        Ok(sc) => run_briefly(&sc),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "error is not one line: {line:?}");
            assert!(line.starts_with(&source.display().to_string()), "{line}");
        }
    }
}

/// Whether `text` is a valid Mahimahi trace by the documented rule.
pub fn trace_is_valid(text: &str) -> bool {
    let mut prev = None;
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match l.parse::<u64>() {
            // Timestamps beyond half the range of simulated time (u64 ns) are refused.
            Ok(v) if prev.is_none_or(|p| v >= p) && v <= u64::MAX / 1_000_000 / 2 => prev = Some(v),
            _ => return false,
        }
    }
    prev.is_some()
}

/// A trace is accepted exactly when it is valid, and a valid one drives a link.
pub fn trace_target(dir: &Path, data: &[u8]) {
    // Each thread of the test harness has its own file.
    let file = dir.join("t.trace");
    std::fs::write(&file, data).expect("write trace");
    let scenario = "[run]\nduration = \"2s\"\n\
        [[links]]\na = \"s\"\nb = \"m\"\ntrace = \"t.trace\"\ndelay = \"10ms\"\nqueue_limit = \"20p\"\n\
        [[flows]]\nfrom = \"s\"\nto = \"m\"\n\
        [[flows]]\nfrom = \"s\"\nto = \"m\"\ntransport = \"tfrc\"\n";
    let r = mobiflow_sim::load_str(scenario, Some(&dir.join("s.toml")), &[]);
    let valid = std::str::from_utf8(data).is_ok_and(trace_is_valid);
    match r {
        Ok(sc) => {
            assert!(valid, "an invalid trace was accepted");
            run_briefly(&sc);
        }
        Err(e) => {
            assert!(!valid, "a valid trace was refused: {e}");
            assert!(!e.to_string().contains('\n'), "error is not one line: {e}");
        }
    }
}

/// Every parser accepts what its formatter prints, giving back the same value.
pub fn units_target(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    round_trip(&s, "rate", units::parse_rate, units::format_rate);
    round_trip(&s, "time", units::parse_duration, units::format_duration);
    round_trip(&s, "size", units::parse_size, units::format_size);
    round_trip(
        &s,
        "queue limit",
        units::parse_queue_limit,
        units::format_queue_limit,
    );
    // The same text as a TOML value, and the bytes as a float and an integer.
    let v = toml::Value::String(s.to_string());
    let _ = units::rate_value(&v);
    let _ = units::duration_value(&v);
    let _ = units::size_value(&v);
    let _ = units::queue_limit_value(&v);
    if data.len() >= 8 {
        let bits = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
        for v in [
            toml::Value::Float(f64::from_bits(bits)),
            toml::Value::Integer(bits as i64),
        ] {
            let _ = units::rate_value(&v);
            let _ = units::duration_value(&v);
            let _ = units::size_value(&v);
            let _ = units::queue_limit_value(&v);
        }
    }
}

/// When `parse` accepts `s`, it accepts what `format` prints of the value, giving it back.
fn round_trip<T: Copy + PartialEq + std::fmt::Debug>(
    s: &str,
    what: &str,
    parse: fn(&str) -> Result<T, String>,
    format: fn(T) -> String,
) {
    if let Ok(v) = parse(s) {
        assert_eq!(parse(&format(v)), Ok(v), "{what} {s:?}");
    }
}

/// Bytes as a source of structured choices (exhausted bytes read as zeros).
struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |a, _| (a << 8) | self.u8() as u64)
    }
    fn u32(&mut self) -> u32 {
        self.u64() as u32
    }
    fn flag(&mut self) -> bool {
        self.u8() & 1 == 1
    }
}

fn be16(b: &[u8], i: usize) -> usize {
    u16::from_be_bytes([b[i], b[i + 1]]) as usize
}

/// RFC 1071 sum of `data` with `acc`, folded (0 or 0xffff when the checksum verifies).
fn fold(mut acc: u32, data: &[u8]) -> u16 {
    for c in data.chunks(2) {
        acc += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Checks the Ethernet and IPv4 headers of a frame; returns the transport header.
fn check_ip(frame: &[u8], full_len: usize, proto: u8) -> &[u8] {
    assert!(
        frame.len() >= 34 && frame.len() <= full_len,
        "frame {} of {full_len}",
        frame.len()
    );
    assert_eq!(&frame[12..14], &[8, 0], "ethertype");
    let ip = &frame[14..];
    assert_eq!(ip[0], 0x45);
    assert_eq!(ip[9], proto);
    assert_eq!(be16(ip, 2), full_len - 14, "IPv4 total length");
    assert_eq!(fold(0, &ip[..20]), 0xffff, "IPv4 header checksum");
    &ip[20..]
}

/// The pseudo-header sum of a frame's IPv4 header for a transport of `len` bytes.
fn pseudo(frame: &[u8], proto: u8, len: usize) -> u32 {
    let ip = &frame[14..];
    (12..20).step_by(2).map(|i| be16(ip, i) as u32).sum::<u32>()
        + proto as u32
        + (len >> 16) as u32
        + (len & 0xffff) as u32
}

pub fn pcap_target(data: &[u8]) {
    let mut b = Bytes(data);
    let fw = FlowWire::new(
        b.u8() as usize,
        b.u8() as usize,
        b.u8() as usize,
        b.u64(),
        b.u8() % 15,
    );
    let mut buf = Vec::new();
    if b.flag() {
        let mut sack = SackBlocks::new();
        for _ in 0..b.u8() % 6 {
            sack.push(b.u64() >> 16, b.u64() >> 16);
        }
        let flag_bits = b.u8();
        let mut seg = Segment {
            seq: b.u64() >> (b.u8() % 64),
            ack: b.u64() >> (b.u8() % 64),
            // Payload up to what an IPv4 packet can carry beside the largest headers.
            len: b.u32() % (65_535 - 20 - 60 + 1),
            flags: Flags(flag_bits & !(Flags::ACK.0)),
            wnd: b.u64() >> (b.u8() % 64),
            ts: b.flag().then(|| Timestamps {
                tsval: b.u32(),
                tsecr: b.u32(),
            }),
            sack,
            mss: b.flag().then(|| b.u64() as u16),
            sack_permitted: b.flag(),
            wscale: b.flag().then(|| b.u8()),
            exp: ExpOptions {
                afc_rate: b.flag().then(|| b.u8()),
                ..ExpOptions::default()
            },
            retransmission: b.flag(),
            window_probe: b.flag(),
        };
        // Drawn after the others, as when it was a field of its own.
        seg.exp.handoff_notice = b.flag();
        let to_receiver = b.flag();
        let full = encode_tcp(&mut buf, &fw, &seg, to_receiver, b.u64() as u16);
        let tcp = check_ip(&buf, full, 6);
        let hdr = (tcp[12] >> 4) as usize * 4;
        assert!(
            (20..=60).contains(&hdr) && hdr == tcp.len(),
            "data offset {hdr} of {}",
            tcp.len()
        );
        // The options parse to the end: every option's length fits.
        let mut i = 20;
        while i < hdr {
            match tcp[i] {
                0 | 1 => i += 1,
                _ => {
                    assert!(i + 1 < hdr, "option kind {} without a length", tcp[i]);
                    let l = tcp[i + 1] as usize;
                    assert!(
                        l >= 2 && i + l <= hdr,
                        "option {} of length {l} at {i} in {hdr}",
                        tcp[i]
                    );
                    if tcp[i] == 5 {
                        assert_eq!((l - 2) % 8, 0, "SACK option length {l}");
                    }
                    i += l;
                }
            }
        }
        let tcp_len = full - 34;
        assert_eq!(fold(pseudo(&buf, 6, tcp_len), tcp), 0xffff, "TCP checksum");
    } else {
        let dccp = b.flag();
        let signals = FreezeSignals(b.u8() & 0x1f);
        let pkt = if b.flag() {
            TfrcPacket::Data(TfrcData {
                seq: b.u64(),
                len: b.u32() % (65_535 - 20 - 64 + 1),
                sent_at: Instant::from_nanos(b.u64()),
                rtt: Duration::from_nanos(b.u64()),
                ccval: b.u8(),
                freeze: signals,
            })
        } else {
            TfrcPacket::Feedback(TfrcFeedback {
                echo_sent_at: Instant::from_nanos(b.u64()),
                elapsed: Duration::from_nanos(b.u64()),
                x_recv_bytes_per_s: f64::from_bits(b.u64()),
                p: f64::from_bits(b.u64()),
                highest_seq: b.u64(),
                loss_events: b.u64(),
                freeze: signals,
            })
        };
        let proto = if dccp { 33 } else { 17 };
        let full = encode_tfrc(&mut buf, &fw, &pkt, dccp, b.u64() as u16);
        let th = check_ip(&buf, full, proto);
        let t_len = full - 34;
        if dccp {
            assert_eq!(th[4] as usize * 4, th.len(), "DCCP data offset");
        } else {
            assert_eq!(be16(th, 4), t_len, "UDP length");
        }
        assert_eq!(fold(pseudo(&buf, proto, t_len), th), 0xffff, "checksum");
    }
}
