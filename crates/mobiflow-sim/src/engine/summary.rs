//! The run's results: the summary of every flow and link direction.

use super::linkdir::LinkDir;
use super::{mobility, Endpoints, RunResult, World};
use crate::model::{AppSpec, Transport};
use crate::results::{FlowSummary, LinkSummary, Summary};
use mobiflow_proto::time::Duration;
use std::collections::BTreeMap;

impl World<'_> {
    /// Assemble the results.
    pub fn finish(mut self) -> RunResult {
        let end = self.end;
        let sc = self.sc;
        for d in &mut self.net.dirs {
            d.close(end);
        }
        let mut tfrc_rows: Vec<Option<FlowSummary>> = (0..sc.flows.len())
            .map(|i| self.tfrc_summary(i, end))
            .collect();
        let mut flows = Vec::new();
        for (i, (fr, spec)) in self.flows.iter_mut().zip(&sc.flows).enumerate() {
            if !fr.finished {
                fr.ep.finish(end);
            }
            let (Endpoints::Tcp { snd, rcv }, Transport::Tcp(cfg)) = (&fr.ep, &spec.transport)
            else {
                flows.extend(tfrc_rows[i].take());
                continue;
            };
            let ss = snd.stats().clone();
            let rs = rcv.stats().clone();
            let delivered = rcv.bytes_read();
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
            let ms = |d: Option<Duration>| d.map(|d| d.as_millis_f64());
            flows.push(FlowSummary {
                name: spec.name.clone(),
                src: sc.nodes[spec.src].clone(),
                dst: sc.nodes[spec.dst].clone(),
                protocol: "tcp".into(),
                cc: cfg.cc.name().into(),
                flow_control: cfg.flow_control.name().into(),
                bytes_delivered: delivered,
                bytes_offered: if matches!(spec.app, AppSpec::Bulk) {
                    snd.snd_nxt()
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
                page_load_times_s: self
                    .web
                    .app_of_main(i as u32)
                    .map_or_else(Vec::new, |a| a.load_times_s.clone()),
                pages_started: self
                    .web
                    .app_of_main(i as u32)
                    .map_or(0, |a| a.pages_started),
                segments_sent: ss.data_segments_sent,
                retransmits: ss.retransmits,
                timeouts: ss.timeouts,
                fast_retransmits: ss.fast_retransmits,
                zero_windows: rs.zero_window_episodes,
                zero_window_acks: rs.zero_window_acks,
                window_probes: ss.window_probes,
                window_updates: rs.window_updates,
                dup_acks: rs.dup_acks,
                policy_updates: rs.policy_updates,
                hidden_congestion_events: ss.hidden_congestion_events,
                paced_segments: ss.paced_segments,
                zero_window_stalls: ss.zero_window_stalls,
                zero_window_stall_s: ss.zero_window_stall_time.as_secs_f64(),
                zero_window_stall_rtts: ss.zero_window_stall_rtts,
                idle_rtts: ss.idle_rtts,
                total_rtts: ss.total_rtts,
                rcv_buffer_drops: rs.buffer_drops,
                rtt_min_ms: ms(ss.rtt.min),
                rtt_mean_ms: ms(ss.rtt.mean()),
                rtt_p95_ms: ms(ss.rtt.quantile(0.95)),
                rtt_samples: ss.rtt.count,
                handoff: mobility::summary(&ss, &rs),
                tfrc: None,
            });
        }
        let mut links = Vec::new();
        for d in self.net.dirs.iter().map(LinkDir::dir) {
            let l = &sc.links[d.index / 2];
            let from = &sc.nodes[d.from];
            let to = &sc.nodes[d.to];
            links.push(LinkSummary {
                name: format!("{}:{}->{}", l.name, from, to),
                link: l.name.clone(),
                from: from.clone(),
                to: to.clone(),
                packets_sent: d.stats.packets_sent,
                bytes_sent: d.stats.bytes_sent,
                drops: d.stats.drops,
                early_drops: d.is_red().then_some(d.stats.early_drops),
                outage_losses: d.stats.outage_losses,
                random_losses: d.stats.random_losses,
                reordered: d.stats.reordered,
                duplicated: d.stats.duplicated,
                queue_max_packets: d.stats.queue_max,
                queue_mean_packets: if end.as_nanos() > 0 {
                    d.stats.queue_area as f64 / end.as_nanos() as f64
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
