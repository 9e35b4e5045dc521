//! The run's results: the summary of every flow and link direction.

use super::app::App;
use super::endpoint::{FlowEnds, SummaryCtx};
use super::ids::{FlowId, IdVec, NodeId};
use super::linkdir::LinkDir;
use super::{RunResult, World};
use crate::results::{FlowSummary, LinkSummary, Summary};
use std::collections::BTreeMap;

impl World<'_> {
    /// Assemble the results.
    pub fn finish(mut self) -> RunResult {
        let end = self.end;
        let sc = self.sc;
        for d in &mut self.net.dirs {
            d.close(end);
        }
        // Each flow's runtime (its machines, their buffers) is dropped once its
        // summary is made, so that the summaries reuse that memory: with 10,000 flows
        // the summaries and every flow's machines at once were the run's peak (issue
        // 19's memory per flow).
        let runtimes = std::mem::replace(&mut self.flows, IdVec::from(Vec::new()));
        let mut flows = Vec::with_capacity(runtimes.len());
        for (i, (mut fr, spec)) in runtimes.into_iter().zip(&sc.flows).enumerate() {
            if !fr.finished {
                fr.ep.finish(end);
            }
            let delivered = fr.ep.bytes_read();
            let active_end = fr.completion.unwrap_or(end);
            let active = (active_end - fr.start).as_secs_f64();
            let mut intervals = BTreeMap::new();
            for (k, (label, s, e)) in sc.measure.intervals.iter().enumerate() {
                let (b0, b1) = self.interval_bytes[k][i];
                let span = (*e - *s).as_secs_f64();
                let v = if span > 0.0 {
                    b1.saturating_sub(b0) as f64 * 8.0 / span
                } else {
                    0.0
                };
                intervals.insert(label.clone(), v);
            }
            let app = &self.apps[FlowId::new(i)];
            let mut common = FlowSummary {
                name: spec.name.clone(),
                src: sc.nodes[spec.src].clone(),
                dst: sc.nodes[spec.dst].clone(),
                bytes_delivered: delivered,
                bytes_offered: if app.offers_all_it_sends() {
                    fr.ep.bytes_sent()
                } else {
                    fr.written
                },
                goodput_bps: if active > 0.0 {
                    delivered as f64 * 8.0 / active
                } else {
                    0.0
                },
                intervals,
                completion_time_s: fr.completion.map(|c| (c - fr.start).as_secs_f64()),
                burst_completion_times_s: fr.burst_done.clone(),
                ..FlowSummary::default()
            };
            app.report(&mut common);
            let ctx = SummaryCtx {
                sc,
                start: fr.start,
                end,
                data_lost: self.net.data_lost[FlowId::new(i)],
                forward_path: self.net.path(NodeId::new(spec.src), NodeId::new(spec.dst)),
            };
            flows.push(fr.ep.summary(spec, &ctx, common));
        }
        let mut links = Vec::new();
        for d in self.net.dirs.iter().map(LinkDir::dir) {
            let st = d.stats();
            let l = &sc.links[d.index.link()];
            let from = &sc.nodes[d.from.index()];
            let to = &sc.nodes[d.to.index()];
            links.push(LinkSummary {
                name: format!("{}:{}->{}", l.name, from, to),
                link: l.name.clone(),
                from: from.clone(),
                to: to.clone(),
                packets_sent: st.packets_sent,
                bytes_sent: st.bytes_sent,
                drops: st.drops,
                early_drops: d.is_red().then_some(st.early_drops),
                outage_losses: st.outage_losses,
                random_losses: st.random_losses,
                reordered: st.reordered,
                duplicated: st.duplicated,
                queue_max_packets: st.queue_max,
                queue_mean_packets: if end.as_nanos() > 0 {
                    st.queue_area as f64 / end.as_nanos() as f64
                } else {
                    0.0
                },
            });
        }
        RunResult {
            summary: Summary {
                mobiflow_version: crate::VERSION.into(),
                scenario: sc.name.clone(),
                seed: sc.seed,
                duration_s: sc.duration.as_secs_f64(),
                flows,
                links,
                assumed: sc.assumed.iter().cloned().collect(),
                events: self.events,
            },
            series: self.series,
        }
    }
}
