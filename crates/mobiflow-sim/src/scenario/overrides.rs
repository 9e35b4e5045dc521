//! `KEY=VALUE` overrides of a parsed document, addressed by dotted path.
//!
//! * Tables are addressed by key; missing intermediate tables are created.
//! * Arrays are addressed by index (`flows.0.cc`) or, for arrays of tables, by the
//!   element's `name` (`flows.bulk.cc`); an unnamed element of `flows` or `links`
//!   also answers to its default name (`flow0`, `link1`).
//! * The value is read as a TOML value if it parses as one (`1`, `true`, `"x"`,
//!   `["0s", "1s"]`, `{ kind = "sized", size = "1MB" }`), else taken as a string
//!   (`15Mbps`, `cubic`).

use super::walk::join;
use serde::Deserialize;
use toml::{Table, Value};

/// Deepest key an override may address (keeps the walk's recursion bounded).
const MAX_DEPTH: usize = 32;

/// Applies one override to `doc`. The error names the key.
///
/// ```
/// # use mobiflow_sim::scenario::apply_override;
/// let mut doc: toml::Table = "[[flows]]\nname = \"bulk\"\n".parse().unwrap();
/// apply_override(&mut doc, "flows.bulk.cc", "cubic").unwrap();
/// apply_override(&mut doc, "tcp.rcv_buf", "256KB").unwrap();
/// assert_eq!(doc["flows"][0]["cc"].as_str(), Some("cubic"));
/// assert!(apply_override(&mut doc, "flows.3.cc", "reno").is_err());
/// ```
pub fn apply_override(doc: &mut Table, key: &str, value: &str) -> Result<(), String> {
    apply(doc, key, value)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", key.trim()))
}

/// Splits a command-line `KEY=VALUE` at the first `=`.
pub fn split_override(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("override {arg:?} is not of the form KEY=VALUE")),
    }
}

/// The value an override's text stands for.
pub(crate) fn parse_value(text: &str) -> Value {
    let text = text.trim();
    match Value::deserialize(toml::de::ValueDeserializer::new(text)) {
        Ok(v) => v,
        Err(_) => Value::String(text.to_string()),
    }
}

/// Applies an override; returns the canonical key (array elements by index) or the
/// reason it cannot be applied.
pub(crate) fn apply(doc: &mut Table, key: &str, value: &str) -> Result<String, String> {
    let key = key.trim();
    if key.is_empty() {
        return Err("empty key".into());
    }
    let segs: Vec<&str> = key.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err("empty part in dotted key".into());
    }
    if segs.len() > MAX_DEPTH {
        return Err(format!("key is deeper than {MAX_DEPTH} parts"));
    }
    let mut canon = String::new();
    let mut w = Walk {
        segs: &segs,
        canon: &mut canon,
        value: parse_value(value),
    };
    w.in_table(doc, 0)?;
    Ok(canon)
}

struct Walk<'s> {
    segs: &'s [&'s str],
    canon: &'s mut String,
    value: Value,
}

impl Walk<'_> {
    /// The user's key up to and including part `i`.
    fn prefix(&self, i: usize) -> String {
        self.segs[..=i].join(".")
    }

    fn take_value(&mut self) -> Value {
        std::mem::replace(&mut self.value, Value::Boolean(false))
    }

    fn not_a_container(&self, i: usize, v: &Value) -> String {
        format!(
            "{} is {}, not a table or an array, so {} cannot be set",
            self.prefix(i),
            crate::units::describe(v),
            self.segs.join(".")
        )
    }

    fn in_table(&mut self, t: &mut Table, i: usize) -> Result<(), String> {
        let seg = self.segs[i];
        *self.canon = join(self.canon, seg);
        if i + 1 == self.segs.len() {
            let v = self.take_value();
            t.insert(seg.to_string(), v);
            return Ok(());
        }
        let child = t
            .entry(seg.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        match child {
            Value::Table(sub) => self.in_table(sub, i + 1),
            Value::Array(arr) => self.in_array(arr, i + 1),
            other => Err(self.not_a_container(i, other)),
        }
    }

    fn in_array(&mut self, arr: &mut [Value], i: usize) -> Result<(), String> {
        let idx = self.index(arr, i)?;
        *self.canon = join(self.canon, &idx.to_string());
        if i + 1 == self.segs.len() {
            arr[idx] = self.take_value();
            return Ok(());
        }
        match &mut arr[idx] {
            Value::Table(sub) => self.in_table(sub, i + 1),
            Value::Array(sub) => self.in_array(sub, i + 1),
            other => Err(self.not_a_container(i, other)),
        }
    }

    /// Resolves part `i` (an index or an element name) into an index of `arr`.
    fn index(&self, arr: &[Value], i: usize) -> Result<usize, String> {
        let seg = self.segs[i];
        let array = self.prefix(i - 1);
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            return match seg.parse::<usize>() {
                Ok(n) if n < arr.len() => Ok(n),
                _ => Err(format!(
                    "index {seg} is out of range: {array} has {} element{}",
                    arr.len(),
                    if arr.len() == 1 { "" } else { "s" }
                )),
            };
        }
        let name_of = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_string);
        if let Some(n) = arr.iter().position(|v| name_of(v).as_deref() == Some(seg)) {
            return Ok(n);
        }
        // Unnamed elements of `flows` and `links` answer to their default names.
        let singular = match self.segs[i - 1] {
            "flows" if i == 1 => Some("flow"),
            "links" if i == 1 => Some("link"),
            _ => None,
        };
        if let Some(single) = singular {
            if let Some(n) = seg
                .strip_prefix(single)
                .and_then(|d| d.parse::<usize>().ok())
                .filter(|n| *n < arr.len() && arr[*n].is_table() && name_of(&arr[*n]).is_none())
            {
                return Ok(n);
            }
        }
        let names: Vec<String> = arr
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_table())
            .map(|(n, v)| match (name_of(v), singular) {
                (Some(name), _) => format!("{name:?}"),
                (None, Some(single)) => format!("\"{single}{n}\""),
                (None, None) => format!("#{n} (unnamed)"),
            })
            .collect();
        Err(if names.is_empty() {
            format!(
                "{array} has no element named {seg:?} (it has {} elements; use an index)",
                arr.len()
            )
        } else {
            format!(
                "{array} has no element named {seg:?}; names are {} (or use an index 0..{})",
                names.join(", "),
                arr.len()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Table {
        s.parse().unwrap()
    }

    #[test]
    fn values_are_toml_when_they_parse_else_strings() {
        assert_eq!(parse_value("1"), Value::Integer(1));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("\"x y\""), Value::String("x y".into()));
        assert_eq!(parse_value("15Mbps"), Value::String("15Mbps".into()));
        assert_eq!(parse_value(" cubic "), Value::String("cubic".into()));
        assert!(parse_value("[\"0s\", \"1s\"]").is_array());
        assert!(parse_value("{ kind = \"sized\", size = \"1MB\" }").is_table());
        // A second key cannot sneak in.
        assert_eq!(parse_value("1\nx = 2"), Value::String("1\nx = 2".into()));
    }

    #[test]
    fn creates_missing_tables() {
        let mut d = doc("");
        apply_override(&mut d, "measure.intervals.steady", "[\"10s\", \"60s\"]").unwrap();
        assert_eq!(d["measure"]["intervals"]["steady"][1].as_str(), Some("60s"));
    }

    #[test]
    fn addresses_array_elements_by_index_name_and_default_name() {
        let mut d = doc("[[links]]\nname = \"access\"\n[[links]]\n[[flows]]\n");
        for (key, value, resolved) in [
            ("links.access.ab.rate", "1Mbps", "links.0.ab.rate"),
            ("links.link1.delay", "1ms", "links.1.delay"),
            ("flows.flow0.cc", "reno", "flows.0.cc"),
            ("flows.0.tcp.mss", "1000", "flows.0.tcp.mss"),
        ] {
            assert_eq!(apply(&mut d, key, value), Ok(resolved.into()), "{key}");
        }
        assert_eq!(d["links"][0]["ab"]["rate"].as_str(), Some("1Mbps"));
        assert_eq!(d["flows"][0]["tcp"]["mss"].as_integer(), Some(1000));
    }

    #[test]
    fn refuses_bad_paths_with_the_key() {
        let mut d = doc("name = \"x\"\n[[flows]]\nname = \"bulk\"\n");
        let e = apply_override(&mut d, "flows.3.cc", "reno").unwrap_err();
        assert!(e.starts_with("flows.3.cc: index 3 is out of range"), "{e}");
        let e = apply_override(&mut d, "flows.web.cc", "reno").unwrap_err();
        assert!(
            e.contains("no element named \"web\"") && e.contains("\"bulk\""),
            "{e}"
        );
        let e = apply_override(&mut d, "name.x", "1").unwrap_err();
        assert!(e.contains("name is string \"x\", not a table"), "{e}");
        assert!(apply_override(&mut d, "a..b", "1").is_err());
        assert!(apply_override(&mut d, "", "1").is_err());
        assert!(apply_override(&mut d, &"a.".repeat(100), "1").is_err());
        let e = apply_override(&mut d, "flows.99999999999999999999999.cc", "1").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn splits_key_value_arguments() {
        assert_eq!(
            split_override("flows.0.app={ kind = \"sized\", size = \"1MB\" }"),
            Ok((
                "flows.0.app".into(),
                "{ kind = \"sized\", size = \"1MB\" }".into()
            ))
        );
        assert!(split_override("novalue").is_err());
        assert!(split_override("=3").is_err());
    }
}
