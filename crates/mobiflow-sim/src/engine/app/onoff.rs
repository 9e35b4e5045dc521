//! `on_off`: `burst` bytes every `period` from the flow's start until its stop.

use super::{App, AppKind, AppSpec, FlowCx, Write};
use crate::engine::ids::FlowId;
use crate::engine::Ev;
use crate::scenario::walk::{positive_duration, positive_size, Tbl, R};
use mobiflow_proto::time::{Duration, Instant};

pub(in crate::engine) struct OnOff {
    pub burst: u64,
    pub period: Duration,
}

impl App for OnOff {
    fn schedule(&self, f: FlowId, start: Instant, at: &mut impl FnMut(Instant, Ev)) {
        at(start, Ev::AppWrite(f, 0));
    }
    fn write(&self, w: Write, at: &mut impl FnMut(Instant, Ev)) -> u64 {
        let next = w.now + self.period;
        if w.stop.is_none_or(|s| next < s) {
            at(next, Ev::AppWrite(w.f, w.k + 1));
        }
        self.burst
    }
}

impl AppKind for OnOff {
    const KEYS: &'static [&'static str] = &["burst", "period"];
    const EXAMPLE: Option<&'static str> =
        Some("{ kind = \"onoff\", burst = \"100KB\", period = \"1s\" }");
    fn parse(t: Option<&Tbl>, _: &mut FlowCx, _: &str) -> R<AppSpec> {
        let t = t.expect("onoff needs its table");
        Ok(AppSpec::OnOff {
            burst: t.req("burst", positive_size)?,
            period: t.req("period", positive_duration)?,
        })
    }
}
