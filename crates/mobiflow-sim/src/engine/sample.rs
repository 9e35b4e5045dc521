//! Sampling: one row of the flow and link time series every `sample_interval`.

use super::endpoint::FlowEnds;
use super::link;
use super::World;
use crate::results::LinkSeries;
use mobiflow_proto::time::{Duration, Instant};

impl World<'_> {
    pub(super) fn sample(&mut self) {
        let t = self.net.now.as_secs_f64();
        let period = self
            .sc
            .measure
            .sample_interval
            .unwrap_or(Duration::from_millis(100));
        let (dt, dt_ns) = (period.as_secs_f64(), period.as_nanos());
        for (i, fr) in self.flows.iter_ids_mut() {
            fr.ep.sample(&mut self.series, t, i, dt);
        }
        let ls: &mut LinkSeries = &mut self.series.link;
        let now = self.net.now;
        for ld in self.net.dirs.iter_mut() {
            ld.advance(now);
            let d = ld.dir();
            ls.time_s.push(t);
            ls.dir.push(d.index.0);
            ls.queue_packets.push(d.waiting(now) as u64);
            ls.queue_bytes.push(d.waiting_bytes(now));
            // A trace-driven direction: the capacity its trace offered over the last
            // sampling period (opportunities x bytes each / period), not the trace's
            // mean, so that capacity can be drawn under throughput (mm-graph).
            let rate = match (&d.trace, d.is_down()) {
                (_, true) => 0.0,
                (Some(tr), false) => {
                    let from = Instant::from_nanos(now.as_nanos().saturating_sub(dt_ns));
                    link::trace_capacity_bps(&tr.trace, from, now)
                }
                (None, false) => d.rate_bps() as f64,
            };
            ls.rate_bps.push(rate);
        }
    }
}
