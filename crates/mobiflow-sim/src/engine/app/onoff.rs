//! `on_off`: `burst` bytes every `period` from the flow's start until its stop.

use super::App;
use crate::engine::Ev;
use mobiflow_proto::time::{Duration, Instant};

pub(in crate::engine) struct OnOff {
    pub burst: u64,
    pub period: Duration,
}

impl App for OnOff {
    fn schedule(&self, f: u32, start: Instant, at: &mut impl FnMut(Instant, Ev)) {
        at(start, Ev::AppWrite(f, 0));
    }
    fn write(
        &self,
        f: u32,
        k: u32,
        now: Instant,
        stop: Option<Instant>,
        at: &mut impl FnMut(Instant, Ev),
    ) -> u64 {
        let next = now + self.period;
        if stop.is_none_or(|s| next < s) {
            at(next, Ev::AppWrite(f, k + 1));
        }
        self.burst
    }
}
