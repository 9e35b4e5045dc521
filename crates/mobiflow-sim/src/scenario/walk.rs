//! Walking a TOML table while keeping the dotted key of every value, so that each
//! error names the key it is about.

use crate::units::{describe, duration_value, format_duration, size_value};
use mobiflow_proto::time::Duration;
use toml::{Table, Value};

/// An error about one key of the document (the file is added by the caller).
#[derive(Debug)]
pub(crate) struct KeyError {
    pub key: Option<String>,
    pub reason: String,
}

pub(crate) type R<T> = Result<T, KeyError>;

pub(crate) fn key_err(key: impl Into<String>, reason: impl Into<String>) -> KeyError {
    KeyError {
        key: Some(key.into()),
        reason: reason.into(),
    }
}

/// `path.key`, or `key` at the root.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A table and its dotted path (`""` for the root).
#[derive(Clone, Debug)]
pub(crate) struct Tbl<'a> {
    pub t: &'a Table,
    pub path: String,
}

impl<'a> Tbl<'a> {
    pub fn new(t: &'a Table, path: impl Into<String>) -> Self {
        Tbl {
            t,
            path: path.into(),
        }
    }

    /// The dotted key of `k` in this table.
    pub fn key(&self, k: &str) -> String {
        join(&self.path, k)
    }

    pub fn has(&self, k: &str) -> bool {
        self.t.contains_key(k)
    }

    pub fn get(&self, k: &str) -> Option<&'a Value> {
        self.t.get(k)
    }

    /// The array of tables `k` (`[[flows]]`, `[[links]]`), required and not empty:
    /// at least one `one`, each with `keys` (for the message when there is none).
    pub fn items(&self, k: &str, one: &str, keys: &str) -> R<&'a Vec<Value>> {
        let required = format!("at least one {one} is required");
        let Some(v) = self.get(k) else {
            let why = format!("{required} ([[{k}]] with {keys})");
            return Err(key_err(self.key(k), why));
        };
        let arr = as_array(v).map_err(|e| key_err(self.key(k), e))?;
        if arr.is_empty() {
            return Err(key_err(self.key(k), required));
        }
        Ok(arr)
    }

    /// Refuses any key not in `allowed`, suggesting the nearest allowed one.
    pub fn check_keys(&self, allowed: &[&str]) -> R<()> {
        for k in self.t.keys() {
            if !allowed.contains(&k.as_str()) {
                let mut reason = String::from("unknown key");
                if let Some(s) = suggest(k, allowed) {
                    reason.push_str(&format!(" (did you mean {s:?}?)"));
                }
                reason.push_str(&format!("; expected one of {}", allowed.join(", ")));
                return Err(key_err(self.key(k), reason));
            }
        }
        Ok(())
    }

    /// Converts `k` if present; the error names the key.
    pub fn opt<T>(&self, k: &str, f: impl FnOnce(&'a Value) -> Result<T, String>) -> R<Option<T>> {
        match self.t.get(k) {
            None => Ok(None),
            Some(v) => f(v).map(Some).map_err(|e| key_err(self.key(k), e)),
        }
    }

    /// Converts `k`, which must be present.
    pub fn req<T>(&self, k: &str, f: impl FnOnce(&'a Value) -> Result<T, String>) -> R<T> {
        self.opt(k, f)?
            .ok_or_else(|| key_err(self.key(k), "required key is missing"))
    }

    /// The sub-table `k`, if present (an error if `k` is not a table).
    pub fn table(&self, k: &str) -> R<Option<Tbl<'a>>> {
        let path = self.key(k);
        self.opt(k, as_table).map(|t| t.map(|t| Tbl::new(t, path)))
    }
}

/// Edit distance counting a swap of adjacent characters as one edit (optimal string
/// alignment), for "did you mean" hints.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The allowed key nearest to `k`, if it is near enough to be a typo.
pub(crate) fn suggest<'k>(k: &str, allowed: &[&'k str]) -> Option<&'k str> {
    if k.chars().count() > 64 {
        return None;
    }
    let lower = k.to_ascii_lowercase();
    allowed
        .iter()
        .map(|a| (distance(&lower, a), *a))
        .filter(|(d, a)| *d <= (a.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

pub(crate) fn expected(what: &str, v: &Value) -> String {
    format!("expected {what}, found {}", describe(v))
}

pub(crate) fn as_table(v: &Value) -> Result<&Table, String> {
    v.as_table().ok_or_else(|| expected("a table", v))
}

pub(crate) fn as_str(v: &Value) -> Result<&str, String> {
    v.as_str().ok_or_else(|| expected("a string", v))
}

pub(crate) fn as_bool(v: &Value) -> Result<bool, String> {
    v.as_bool()
        .ok_or_else(|| expected("a boolean (true or false)", v))
}

pub(crate) fn as_array(v: &Value) -> Result<&Vec<Value>, String> {
    v.as_array().ok_or_else(|| expected("an array", v))
}

pub(crate) fn as_u64(v: &Value) -> Result<u64, String> {
    match v {
        Value::Integer(i) => {
            u64::try_from(*i).map_err(|_| format!("must not be negative, found {i}"))
        }
        _ => Err(expected("an integer", v)),
    }
}

pub(crate) fn as_u32(v: &Value) -> Result<u32, String> {
    let n = as_u64(v)?;
    u32::try_from(n).map_err(|_| format!("must be at most {}, found {n}", u32::MAX))
}

/// A finite number; TOML integers are accepted too.
pub(crate) fn as_f64(v: &Value) -> Result<f64, String> {
    let f = match v {
        Value::Float(f) => *f,
        Value::Integer(i) => *i as f64,
        _ => return Err(expected("a number", v)),
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(format!("must be a finite number, found {f}"))
    }
}

/// A two-element array.
pub(crate) fn as_pair<'v>(v: &'v Value, what: &str) -> Result<(&'v Value, &'v Value), String> {
    match v.as_array().map(|a| a.as_slice()) {
        Some([x, y]) => Ok((x, y)),
        _ => Err(expected(what, v)),
    }
}

/// `[start, end]` with end after start (`like` is an example, shown when `v` is not a
/// pair).
pub(crate) fn as_span(v: &Value, like: &str) -> Result<(Duration, Duration), String> {
    let (s, e) = as_pair(v, &format!("a [start, end] pair like {like}"))?;
    let s = duration_value(s)?;
    let e = duration_value(e)?;
    if e <= s {
        return Err(format!(
            "end {} is not after start {}",
            format_duration(e),
            format_duration(s)
        ));
    }
    Ok((s, e))
}

/// A variant of a named enum, by its name.
pub(crate) fn named<T: crate::named::Named>(v: &Value) -> Result<T, String> {
    T::parse(as_str(v)?)
}

/// A name that `--set` can address: non-empty, no `.`, not all digits.
pub(crate) fn as_name(v: &Value) -> Result<String, String> {
    let s = as_str(v)?;
    if s.is_empty() {
        return Err("must not be empty".into());
    }
    if s.contains('.') {
        return Err(format!(
            "{s:?} contains '.', which overrides use to separate keys"
        ));
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{s:?} is all digits, which overrides would read as an index"
        ));
    }
    Ok(s.to_string())
}

/// A time, more than zero.
pub(crate) fn positive_duration(v: &Value) -> Result<Duration, String> {
    let d = duration_value(v)?;
    if d.is_zero() {
        return Err("must be positive".into());
    }
    Ok(d)
}

/// A size, more than zero.
pub(crate) fn positive_size(v: &Value) -> Result<u64, String> {
    let b = size_value(v)?;
    if b == 0 {
        return Err("must be positive".into());
    }
    Ok(b)
}

/// A time, or `"rtt"` (`None`: one RTT as the endpoint estimates it).
pub(crate) fn duration_or_rtt(v: &Value) -> Result<Option<Duration>, String> {
    match v {
        Value::String(s) if s.trim().eq_ignore_ascii_case("rtt") => Ok(None),
        v => positive_duration(v)
            .map(Some)
            .map_err(|e| format!("{e}, or \"rtt\" for one round-trip time")),
    }
}

/// What [`duration_or_rtt`] reads, as a scenario writes it.
pub(crate) fn text_or_rtt(d: Option<Duration>) -> String {
    d.map_or_else(|| "rtt".to_string(), format_duration)
}

/// A time, or `word` (`None`).
pub(crate) fn duration_or(
    word: &'static str,
) -> impl Fn(&Value) -> Result<Option<Duration>, String> {
    move |v| match v {
        Value::String(s) if s.trim().eq_ignore_ascii_case(word) => Ok(None),
        v => positive_duration(v)
            .map(Some)
            .map_err(|e| format!("{e}, or \"{word}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(suggest("redaer", &["reader", "from", "to"]), Some("reader"));
        assert_eq!(suggest("Rate", &["rate", "delay"]), Some("rate"));
        assert_eq!(suggest("xyz", &["reader", "from", "to"]), None);
        assert_eq!(suggest("nmae", &["name", "run"]), Some("name"));
    }
}
