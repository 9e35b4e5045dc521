//! `bursts`: transfers of `sizes[k]` bytes handed to the socket at `at[k]`; each
//! burst's completion time is measured, and the flow is complete when all are read.

use super::{App, Write};
use crate::engine::ids::FlowId;
use crate::engine::Ev;
use mobiflow_proto::time::{Duration, Instant};

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
