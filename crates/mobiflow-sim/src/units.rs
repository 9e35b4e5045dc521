//! Parsing and formatting of quantities written with units.
//!
//! | quantity | accepted | result |
//! |---|---|---|
//! | rate | `"15Mbps"`, `"15Mb/s"`, `"15 Mbit/s"`, `"15Mb"` (ns-2), `"384kbps"`, `"384Kbps"`, `"1.5Gbps"`, `"800bps"`; a bare number is bits/s | bits per second (`u64`) |
//! | time | `"265ms"`, `"1s"`, `"1.5s"`, `"100us"`, `"10ns"`, `"2min"`, `"1h"`; a bare number is seconds | [`Duration`] |
//! | size | `"256KB"`, `"256KiB"`, `"1MB"`, `"1.5MB"`, `"1460B"`; a bare integer is bytes | bytes (`u64`) |
//! | queue limit | `"100p"`, `"100pkts"`, `"100 packets"`, a bare integer (packets), or a size (bytes) | [`QueueLimit`] |
//!
//! Rate prefixes are decimal (k = 10^3, M = 10^6, G = 10^9, as in networking; the
//! prefix is case-insensitive, as in ns-2, so `"15mbps"` is 15 Mbit/s). Rates are
//! always in *bits*: an upper-case `B` (bytes) in a rate is refused rather than
//! silently multiplied by 8.
//!
//! Size prefixes are binary: `K`/`k` = 1024, `M` = 1024^2, `G` = 1024^3, whether
//! written `KB` or `KiB` (the convention of socket buffer sizes). A lower-case `b`
//! (bits) in a size is refused.
//!
//! Numbers are decimal with an optional fraction and exponent (`1.5`, `2e6`) and are
//! converted exactly (no binary floating point): `"1.5s"` is exactly 1 500 000 000 ns.
//! Rates and times round to the nearest bit/s or nanosecond; sizes and packet counts
//! must come out whole. Whitespace between the number and the unit is allowed.
//!
//! The `*_value` functions accept a TOML value: a string as above, or a TOML integer
//! or float in the base unit (bits/s, seconds, bytes, packets).
//!
//! The `format_*` functions print a quantity so that the parser reads it back exactly.

use crate::model::QueueLimit;
use mobiflow_proto::time::Duration;
use serde::Serialize;

/// A rate in bits per second: what scenarios write (`"15Mbps"`) and what summaries
/// report (the `_bps` fields). Serialised as the bare number.
#[derive(Copy, Clone, Debug, Default, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct BitsPerSec(pub f64);

/// A rate in bytes per second: what the protocol machines compute. TFRC's X and
/// X_recv are bytes per second (RFC 5348 §3.1: X in bytes/s, s in bytes), although
/// `mobiflow_proto::tfrc::TfrcSender::x_bps()` has "bps" in its name.
#[derive(Copy, Clone, Debug, Default, PartialEq, PartialOrd)]
pub struct BytesPerSec(pub f64);

impl From<BytesPerSec> for BitsPerSec {
    fn from(r: BytesPerSec) -> Self {
        BitsPerSec(r.0 * 8.0)
    }
}

impl From<BitsPerSec> for f64 {
    fn from(r: BitsPerSec) -> Self {
        r.0
    }
}

const NS_PER_SEC: u128 = 1_000_000_000;
const KIB: u128 = 1024;

/// A non-negative decimal number as written: `mantissa * 10^exp10`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    exp10: i32,
}

/// Splits `s` into a leading decimal number and the rest (trimmed).
fn split_number(s: &str) -> Result<(Decimal, &str), String> {
    let t = s.trim();
    let bytes = t.as_bytes();
    let mut i = 0;
    match bytes.first() {
        None => return Err("empty value".into()),
        Some(b'+') => i = 1,
        Some(b'-') => return Err("must not be negative".into()),
        Some(_) => {}
    }
    // Digits before and after the point, without `_` separators (as in TOML: 1_000).
    let (mut int_digits, mut frac_digits) = (String::new(), String::new());
    let mut seen_point = false;
    while i < bytes.len() {
        let c = bytes[i];
        let digits = if seen_point {
            &mut frac_digits
        } else {
            &mut int_digits
        };
        if c.is_ascii_digit() {
            digits.push(c as char);
        } else if c == b'.' && !seen_point {
            seen_point = true;
        } else if c == b'_'
            && !digits.is_empty()
            && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit())
        {
        } else {
            break;
        }
        i += 1;
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return Err("does not start with a number".into());
    }
    let frac = frac_digits.trim_end_matches('0');
    let all = format!("{int_digits}{frac}");
    let all = all.trim_start_matches('0');
    if all.len() > 38 {
        return Err("number has too many digits".into());
    }
    // At most 38 digits: fits a u128.
    let mantissa = all.bytes().fold(0u128, |m, d| m * 10 + (d - b'0') as u128);
    let mut exp10 = -(frac.len() as i32);
    // Optional exponent: e/E, optional sign, at least one digit.
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        let mut neg = false;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            neg = bytes[j] == b'-';
            j += 1;
        }
        let start = j;
        let mut e: i32 = 0;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            e = e * 10 + (bytes[j] - b'0') as i32;
            if e > 1000 {
                return Err("exponent out of range".into());
            }
            j += 1;
        }
        if j > start {
            exp10 += if neg { -e } else { e };
            i = j;
        }
    }
    Ok((Decimal { mantissa, exp10 }, t[i..].trim_start()))
}

/// Rounding wanted by a conversion.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Round {
    Nearest,
    Exact,
}

/// `d * num`, as an integer; `Err` with "inexact" when `Round::Exact` and the result
/// has a fraction, or "out of range" on overflow.
fn scale(d: Decimal, num: u128, round: Round) -> Result<u128, &'static str> {
    let pow10 = |k: u32| 10u128.checked_pow(k);
    if d.mantissa == 0 {
        return Ok(0);
    }
    if d.exp10 >= 0 {
        let p = pow10(d.exp10 as u32).ok_or("out of range")?;
        return d
            .mantissa
            .checked_mul(p)
            .and_then(|v| v.checked_mul(num))
            .ok_or("out of range");
    }
    let top = d.mantissa.checked_mul(num).ok_or("out of range")?;
    let Some(den) = pow10((-d.exp10) as u32) else {
        // Smaller than 1 / 10^38 of the base unit.
        return match round {
            Round::Nearest => Ok(0),
            Round::Exact => Err("inexact"),
        };
    };
    let (q, r) = (top / den, top % den);
    match round {
        Round::Exact if r != 0 => Err("inexact"),
        Round::Exact => Ok(q),
        Round::Nearest => Ok(if r >= den - r { q + 1 } else { q }),
    }
}

fn to_u64(v: u128) -> Result<u64, &'static str> {
    u64::try_from(v).map_err(|_| "out of range")
}

const RATE_HELP: &str = "expected a rate like \"15Mbps\", \"384kbps\", \"1.5Gbps\", \"15 Mbit/s\" \
     or a number of bits/s";

/// Parses a rate into bits per second.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("invalid rate {s:?}: {why}");
    let (num, unit) = split_number(s).map_err(|e| bad(&format!("{e}; {RATE_HELP}")))?;
    let (mult, rest) = match unit.chars().next() {
        Some('k' | 'K') => (1_000u128, &unit[1..]),
        Some('m' | 'M') => (1_000_000, &unit[1..]),
        Some('g' | 'G') => (1_000_000_000, &unit[1..]),
        Some('T') => (1_000_000_000_000, &unit[1..]),
        _ => (1, unit),
    };
    let bit_units = ["b", "bps", "b/s", "bit", "bits", "bit/s", "bits/s", "bitps"];
    let byte_units = ["B", "Bps", "B/s", "byte/s", "bytes/s", "Byte/s", "Bytes/s"];
    if unit.is_empty() {
        // Bare number: bits/s.
    } else if rest.is_empty() && mult != 1 {
        // "15M": accept as ns-2 does.
    } else if !bit_units.contains(&rest) {
        if byte_units.contains(&rest) {
            return Err(bad(
                "rates are in bits per second, not bytes; write e.g. \"8Mbps\" for 1 MB/s",
            ));
        }
        return Err(bad(&format!("unknown unit {unit:?}; {RATE_HELP}")));
    }
    let v = scale(num, mult, Round::Nearest).map_err(bad)?;
    to_u64(v).map_err(bad)
}

const TIME_HELP: &str =
    "expected a time like \"265ms\", \"1.5s\", \"100us\", \"10ns\", \"2min\" or a number of seconds";

/// Parses a time span.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = |why: &str| format!("invalid time {s:?}: {why}");
    let (num, unit) = split_number(s).map_err(|e| bad(&format!("{e}; {TIME_HELP}")))?;
    let ns_per: u128 = match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "" | "s" | "sec" | "secs" | "second" | "seconds" => NS_PER_SEC,
        "min" | "mins" | "minute" | "minutes" => 60 * NS_PER_SEC,
        "h" | "hr" | "hour" | "hours" => 3600 * NS_PER_SEC,
        _ => return Err(bad(&format!("unknown unit {unit:?}; {TIME_HELP}"))),
    };
    let v = scale(num, ns_per, Round::Nearest).map_err(bad)?;
    Ok(Duration::from_nanos(to_u64(v).map_err(bad)?))
}

const SIZE_HELP: &str = "expected a size like \"256KB\", \"1.5MB\", \"1460B\" (K = 1024) or a \
     number of bytes";

/// Parses a size into bytes. `K`, `M`, `G` are binary (1024) multiples.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("invalid size {s:?}: {why}");
    let (num, unit) = split_number(s).map_err(|e| bad(&format!("{e}; {SIZE_HELP}")))?;
    let (mult, rest) = match unit.chars().next() {
        Some('k' | 'K') => (KIB, &unit[1..]),
        Some('M') => (KIB * KIB, &unit[1..]),
        Some('G') => (KIB * KIB * KIB, &unit[1..]),
        _ => (1, unit),
    };
    let ok = match (mult, rest) {
        (1, "" | "B" | "byte" | "bytes") => true,
        (m, "B" | "iB") if m > 1 => true,
        _ => false,
    };
    if !ok {
        if rest == "b" || rest == "bit" || rest == "bits" || rest.ends_with("bps") {
            return Err(bad(&format!(
                "\"b\" means bits; sizes are in bytes (\"B\"); {SIZE_HELP}"
            )));
        }
        return Err(bad(&format!("unknown unit {unit:?}; {SIZE_HELP}")));
    }
    let v = scale(num, mult, Round::Exact).map_err(|e| match e {
        "inexact" => bad("not a whole number of bytes"),
        e => bad(e),
    })?;
    to_u64(v).map_err(bad)
}

/// Parses a queue limit: packets (`"100p"`, `"100pkts"`, `"100 packets"`, `"100"`) or
/// a size (bytes).
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, String> {
    let bad = |why: &str| format!("invalid queue limit {s:?}: {why}");
    let help =
        "expected packets like \"100p\", \"100pkts\", \"100 packets\", or a size like \"64KB\"";
    let (num, unit) = split_number(s).map_err(|e| bad(&format!("{e}; {help}")))?;
    match unit {
        "" | "p" | "pkt" | "pkts" | "packet" | "packets" => {
            let n = scale(num, 1, Round::Exact).map_err(|e| match e {
                "inexact" => bad("not a whole number of packets"),
                e => bad(e),
            })?;
            let n = u32::try_from(n).map_err(|_| bad("too many packets"))?;
            Ok(QueueLimit::Packets(n))
        }
        _ => match parse_size(s) {
            Ok(b) => Ok(QueueLimit::Bytes(b)),
            Err(_) if !unit.contains('B') && !unit.starts_with('b') => {
                Err(bad(&format!("unknown unit {unit:?}; {help}")))
            }
            Err(e) => Err(e),
        },
    }
}

/// Describes a TOML value for messages: `integer 3`, `string "x"`, `table`.
pub fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("string {s:?}"),
        toml::Value::Integer(i) => format!("integer {i}"),
        toml::Value::Float(f) => format!("float {f}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("datetime {d}"),
        toml::Value::Array(a) => format!("array of {} elements", a.len()),
        toml::Value::Table(_) => "table".to_string(),
    }
}

fn non_negative(i: i64, what: &str) -> Result<u64, String> {
    u64::try_from(i).map_err(|_| format!("{what} must not be negative, found {i}"))
}

fn float_in_base(f: f64, what: &str) -> Result<f64, String> {
    if !f.is_finite() {
        return Err(format!("{what} must be finite, found {f}"));
    }
    if f < 0.0 {
        return Err(format!("{what} must not be negative, found {f}"));
    }
    Ok(f)
}

/// A rate from TOML: a string with units, or a number of bits/s.
pub fn rate_value(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::String(s) => parse_rate(s),
        toml::Value::Integer(i) => non_negative(*i, "a rate"),
        toml::Value::Float(f) => {
            let f = float_in_base(*f, "a rate")?;
            if f >= u64::MAX as f64 {
                return Err(format!("rate {f} bits/s is out of range"));
            }
            Ok(f.round() as u64)
        }
        other => Err(format!("{RATE_HELP}, found {}", describe(other))),
    }
}

/// A time from TOML: a string with units, or a number of seconds.
pub fn duration_value(v: &toml::Value) -> Result<Duration, String> {
    match v {
        toml::Value::String(s) => parse_duration(s),
        toml::Value::Integer(i) => {
            let s = non_negative(*i, "a time")?;
            s.checked_mul(1_000_000_000)
                .map(Duration::from_nanos)
                .ok_or_else(|| format!("time {s}s is out of range"))
        }
        toml::Value::Float(f) => {
            let f = float_in_base(*f, "a time")?;
            let ns = f * 1e9;
            if ns >= u64::MAX as f64 {
                return Err(format!("time {f}s is out of range"));
            }
            Ok(Duration::from_nanos(ns.round() as u64))
        }
        other => Err(format!("{TIME_HELP}, found {}", describe(other))),
    }
}

/// A size from TOML: a string with units, or a whole number of bytes.
pub fn size_value(v: &toml::Value) -> Result<u64, String> {
    match v {
        toml::Value::String(s) => parse_size(s),
        toml::Value::Integer(i) => non_negative(*i, "a size"),
        toml::Value::Float(f) => {
            let f = float_in_base(*f, "a size")?;
            if f.fract() != 0.0 {
                return Err(format!("size {f} is not a whole number of bytes"));
            }
            if f >= u64::MAX as f64 {
                return Err(format!("size {f} bytes is out of range"));
            }
            Ok(f as u64)
        }
        other => Err(format!("{SIZE_HELP}, found {}", describe(other))),
    }
}

/// A queue limit from TOML: an integer (packets) or a string.
pub fn queue_limit_value(v: &toml::Value) -> Result<QueueLimit, String> {
    match v {
        toml::Value::String(s) => parse_queue_limit(s),
        toml::Value::Integer(i) => u32::try_from(*i).map(QueueLimit::Packets).map_err(|_| {
            format!(
                "a packet count must be between 0 and {}, found {i}",
                u32::MAX
            )
        }),
        other => Err(format!(
            "expected a queue limit like \"100p\" or \"64KB\", or an integer number of packets, \
             found {}",
            describe(other)
        )),
    }
}

/// Prints `v / unit` as an exact decimal: `1500000, 1000000` -> `"1.5"`.
fn exact_decimal(v: u64, unit: u64) -> String {
    let (int, frac) = (v / unit, v % unit);
    if frac == 0 {
        return int.to_string();
    }
    let width = unit.ilog10() as usize;
    let frac = format!("{frac:0width$}");
    format!("{int}.{}", frac.trim_end_matches('0'))
}

/// Prints a rate with the largest decimal prefix that keeps it readable:
/// `15000000` -> `"15Mbps"`, `1500000000` -> `"1.5Gbps"`, `800` -> `"800bps"`.
pub fn format_rate(bps: u64) -> String {
    for (unit, name) in [
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "kbps"),
    ] {
        if bps >= unit {
            return format!("{}{name}", exact_decimal(bps, unit));
        }
    }
    format!("{bps}bps")
}

/// Prints a time with the largest unit not above it: `"1.5s"`, `"265ms"`, `"100us"`,
/// `"10ns"`, `"0s"`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0s".into();
    }
    for (unit, name) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns >= unit {
            return format!("{}{name}", exact_decimal(ns, unit));
        }
    }
    format!("{ns}ns")
}

/// Prints a size with a binary prefix when it is an exact multiple: `262144` ->
/// `"256KiB"`, `1460` -> `"1460B"`.
pub fn format_size(bytes: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// Prints a queue limit: `"100p"` or a size.
pub fn format_queue_limit(q: QueueLimit) -> String {
    match q {
        QueueLimit::Packets(n) => format!("{n}p"),
        QueueLimit::Bytes(b) => format_size(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_in_bytes_per_second_is_eight_times_as_many_bits() {
        let r: BitsPerSec = BytesPerSec(125_000.0).into();
        assert_eq!(r, BitsPerSec(1_000_000.0));
        // Summaries keep the bare number.
        assert_eq!(serde_json::to_string(&r).unwrap(), "1000000.0");
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// `parse` refuses each input with a message that contains its fragment (any
    /// message for "").
    fn assert_refused<T: std::fmt::Debug>(
        parse: fn(&str) -> Result<T, String>,
        cases: &[(&str, &str)],
    ) {
        for (input, fragment) in cases {
            let e = parse(input).expect_err(input);
            assert!(e.contains(fragment), "{input:?}: {e}");
        }
    }

    #[test]
    fn rates_in_every_spelling() {
        for (s, bps) in [
            ("15Mbps", 15_000_000),
            ("15Mb/s", 15_000_000),
            ("15 Mbit/s", 15_000_000),
            ("15mbps", 15_000_000),
            ("15Mb", 15_000_000),
            ("15M", 15_000_000),
            ("384kbps", 384_000),
            ("384Kbps", 384_000),
            ("384 kbit/s", 384_000),
            ("1.5Gbps", 1_500_000_000),
            ("800bps", 800),
            ("800", 800),
            ("2e6", 2_000_000),
            ("0.1Mbps", 100_000),
            ("+3kbps", 3_000),
            ("1_000kbps", 1_000_000),
            (" 4Mbps ", 4_000_000),
            ("0Mbps", 0),
            (
                "1.0000000000000000000000000000000000000000000Mbps",
                1_000_000,
            ),
        ] {
            assert_eq!(parse_rate(s), Ok(bps), "{s}");
        }
    }

    #[test]
    fn rates_round_to_the_nearest_bit_per_second() {
        assert_eq!(parse_rate("1.0005kbps"), Ok(1001));
        assert_eq!(parse_rate("0.4bps"), Ok(0));
    }

    #[test]
    fn rates_refuse_bytes_negative_and_junk() {
        assert_refused(
            parse_rate,
            &[
                ("1MBps", "not bytes"),
                ("-1Mbps", "negative"),
                ("Mbps", "does not start with a number"),
                ("", ""),
                ("15 Mbps x", "unknown unit"),
                ("15furlongs", "unknown unit \"furlongs\""),
                ("99999999999999999999Gbps", "out of range"),
                ("1e999Gbps", ""),
                ("1e1001", "exponent"),
            ],
        );
    }

    #[test]
    fn times_in_every_unit() {
        for (s, d) in [
            ("265ms", ms(265)),
            ("1s", ms(1000)),
            ("1.5s", ms(1500)),
            ("100us", Duration::from_micros(100)),
            ("100\u{b5}s", Duration::from_micros(100)),
            ("10ns", Duration::from_nanos(10)),
            ("2min", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("3", Duration::from_secs(3)),
            ("0.25", ms(250)),
            ("0s", Duration::ZERO),
            ("1.5 s", ms(1500)),
            ("0.0000000005s", Duration::from_nanos(1)),
        ] {
            assert_eq!(parse_duration(s), Ok(d), "{s}");
        }
    }

    #[test]
    fn times_refuse_bad_units_and_overflow() {
        assert_refused(
            parse_duration,
            &[
                ("5 parsecs", "unknown unit"),
                ("1MS", "unknown unit"),
                ("-1s", "negative"),
                ("1e12h", "out of range"),
                (".", ""),
            ],
        );
    }

    #[test]
    fn sizes_are_binary_multiples() {
        for (s, b) in [
            ("256KB", 256 * 1024),
            ("256KiB", 256 * 1024),
            ("256kB", 256 * 1024),
            ("1MB", 1 << 20),
            ("1.5MB", 3 << 19),
            ("1GiB", 1 << 30),
            ("1460B", 1460),
            ("1460", 1460),
            ("1460 bytes", 1460),
            ("0.5KB", 512),
        ] {
            assert_eq!(parse_size(s), Ok(b), "{s}");
        }
    }

    #[test]
    fn sizes_refuse_bits_and_fractions() {
        assert_refused(
            parse_size,
            &[
                ("256Kb", "bits"),
                ("0.1KB", "whole number"),
                ("1.5", "whole number"),
                ("3 apples", "unknown unit"),
                ("17179869184GB", "out of range"),
            ],
        );
    }

    #[test]
    fn queue_limits_in_packets_or_bytes() {
        for (s, q) in [
            ("100p", QueueLimit::Packets(100)),
            ("100pkts", QueueLimit::Packets(100)),
            ("100 packets", QueueLimit::Packets(100)),
            ("100", QueueLimit::Packets(100)),
            ("64KB", QueueLimit::Bytes(65536)),
            ("1500B", QueueLimit::Bytes(1500)),
        ] {
            assert_eq!(parse_queue_limit(s), Ok(q), "{s}");
        }
        assert_refused(
            parse_queue_limit,
            &[
                ("1.5p", "whole number"),
                ("100 sheep", "unknown unit"),
                ("5000000000p", "too many"),
            ],
        );
    }

    #[test]
    fn toml_numbers_are_base_units() {
        use toml::Value;
        assert_eq!(rate_value(&Value::Integer(800)), Ok(800));
        assert_eq!(rate_value(&Value::Float(1.5e6)), Ok(1_500_000));
        assert!(rate_value(&Value::Integer(-1)).is_err());
        assert!(rate_value(&Value::Float(f64::NAN)).is_err());
        assert!(rate_value(&Value::Float(f64::INFINITY)).is_err());
        assert!(rate_value(&Value::Boolean(true))
            .unwrap_err()
            .contains("found boolean true"));
        assert_eq!(duration_value(&Value::Integer(2)), Ok(ms(2000)));
        assert_eq!(duration_value(&Value::Float(0.01)), Ok(ms(10)));
        assert!(duration_value(&Value::Integer(i64::MAX)).is_err());
        assert!(duration_value(&Value::Float(1e300)).is_err());
        assert_eq!(size_value(&Value::Integer(1460)), Ok(1460));
        assert_eq!(size_value(&Value::Float(1460.0)), Ok(1460));
        assert!(size_value(&Value::Float(14.5)).is_err());
        assert_eq!(
            queue_limit_value(&Value::Integer(50)),
            Ok(QueueLimit::Packets(50))
        );
        assert!(queue_limit_value(&Value::Float(50.0)).is_err());
    }

    #[test]
    fn formatting_round_trips() {
        for bps in [
            0,
            1,
            800,
            384_000,
            1_500_000,
            15_000_000,
            1_234_567,
            1_500_000_000,
        ] {
            assert_eq!(
                parse_rate(&format_rate(bps)),
                Ok(bps),
                "{}",
                format_rate(bps)
            );
        }
        assert_eq!(format_rate(15_000_000), "15Mbps");
        assert_eq!(format_rate(1_500_000_000), "1.5Gbps");
        for ns in [
            0,
            1,
            10,
            100_000,
            265_000_000,
            1_500_000_000,
            60_000_000_000,
            1_000_001,
        ] {
            let d = Duration::from_nanos(ns);
            assert_eq!(
                parse_duration(&format_duration(d)),
                Ok(d),
                "{}",
                format_duration(d)
            );
        }
        assert_eq!(format_duration(ms(265)), "265ms");
        assert_eq!(format_duration(ms(1500)), "1.5s");
        for b in [0, 1460, 262_144, 1 << 22, 3 << 19] {
            assert_eq!(parse_size(&format_size(b)), Ok(b), "{}", format_size(b));
        }
        assert_eq!(format_size(262_144), "256KiB");
        assert_eq!(format_queue_limit(QueueLimit::Packets(100)), "100p");
    }

    #[test]
    fn nothing_panics_on_garbage() {
        for s in [
            "",
            " ",
            ".",
            "..",
            "e",
            "1e",
            "1e+",
            "1.2.3",
            "+",
            "-",
            "_",
            "1__0",
            "\u{0}",
            "\u{1F600}",
            "9".repeat(100).as_str(),
            "1e-999",
            "0.",
            ".5",
            "1 e5",
            "µ",
            "1µ",
            "5\u{3bc}",
            "NaN",
            "inf",
            "-inf",
            "1/0",
        ] {
            let _ = parse_rate(s);
            let _ = parse_duration(s);
            let _ = parse_size(s);
            let _ = parse_queue_limit(s);
        }
    }
}
