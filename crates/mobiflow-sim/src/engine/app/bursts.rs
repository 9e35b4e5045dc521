//! `bursts`: transfers of `sizes[k]` bytes handed to the socket at `at[k]`; each
//! burst's completion time is measured, and the flow is complete when all are read.

use super::{App, AppKind, AppSpec, FlowCx, Write};
use crate::engine::ids::FlowId;
use crate::engine::Ev;
use crate::scenario::walk::{as_array, key_err, positive_size, Tbl, R};
use crate::units::{duration_value, format_duration};
use mobiflow_proto::time::{Duration, Instant};
use toml::Value;

pub(in crate::engine) struct Bursts {
    pub at: Vec<Duration>,
    pub sizes: Vec<u64>,
}

impl App for Bursts {
    fn total(&self) -> Option<u64> {
        Some(self.sizes.iter().sum())
    }
    fn schedule(&self, f: FlowId, _: Instant, at: &mut impl FnMut(Instant, Ev)) {
        for (k, t) in self.at.iter().enumerate() {
            at(Instant::ZERO + *t, Ev::AppWrite(f, k as u32));
        }
    }
    fn write(&self, w: Write, _: &mut impl FnMut(Instant, Ev)) -> u64 {
        self.sizes[w.k as usize]
    }
}

impl AppKind for Bursts {
    const KEYS: &'static [&'static str] = &["at", "sizes"];
    const EXAMPLE: Option<&'static str> =
        Some("{ kind = \"bursts\", at = [\"1s\", \"5s\"], sizes = [\"512KB\", \"1MB\"] }");
    fn parse(t: Option<&Tbl>, cx: &mut FlowCx, _: &str) -> R<AppSpec> {
        let start = cx.start;
        let t = t.expect("bursts needs its table");
        let at_arr = t.req("at", as_array)?;
        if at_arr.is_empty() {
            return Err(key_err(t.key("at"), "needs at least one time"));
        }
        let mut at: Vec<Duration> = Vec::with_capacity(at_arr.len());
        for (j, v) in at_arr.iter().enumerate() {
            let k = format!("{}.{j}", t.key("at"));
            let d = duration_value(v).map_err(|e| key_err(&k, e))?;
            let before = |what: &str, t: Duration| {
                format!("{} is before {what} ({})", format_duration(d), format_duration(t))
            };
            if d < start {
                return Err(key_err(k, before("the flow's start", start)));
            }
            if let Some(&prev) = at.last() {
                if d < prev {
                    let why = before("the previous burst", prev) + "; times must be sorted";
                    return Err(key_err(k, why));
                }
            }
            at.push(d);
        }
        // `sizes` is one size per burst, or one size for all of them.
        let sizes = match t.get("sizes") {
            None => return Err(key_err(t.key("sizes"), "required key is missing")),
            Some(Value::Array(a)) => {
                if a.len() != at.len() {
                    return Err(key_err(
                        t.key("sizes"),
                        format!(
                            "has {} sizes for {} burst times; give one per time, or a \
                             single size for all",
                            a.len(),
                            at.len()
                        ),
                    ));
                }
                let mut sizes = Vec::with_capacity(a.len());
                for (j, v) in a.iter().enumerate() {
                    sizes.push(
                        positive_size(v)
                            .map_err(|e| key_err(format!("{}.{j}", t.key("sizes")), e))?,
                    );
                }
                sizes
            }
            Some(v) => {
                let b = positive_size(v).map_err(|e| key_err(t.key("sizes"), e))?;
                vec![b; at.len()]
            }
        };
        Ok(AppSpec::Bursts { at, sizes })
    }
}
