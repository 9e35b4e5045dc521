//! Sampling: one row of the flow and link time series every `sample_interval`.

use super::link;
use super::{Endpoints, World};
use crate::results::{FlowSeries, LinkSeries};
use mobiflow_proto::time::{Duration, Instant};

impl World<'_> {
    pub(super) fn sample(&mut self) {
        let t = self.net.now.as_secs_f64();
        let dt = self
            .sc
            .measure
            .sample_interval
            .unwrap_or(Duration::from_millis(100))
            .as_secs_f64();
        let dt_ns = self
            .sc
            .measure
            .sample_interval
            .unwrap_or(Duration::from_millis(100))
            .as_nanos();
        let fs: &mut FlowSeries = &mut self.series.flow;
        for (i, fr) in self.flows.iter_mut().enumerate() {
            fs.time_s.push(t);
            fs.flow.push(i as u32);
            let Endpoints::Tcp { snd, rcv } = &fr.ep else {
                if let Endpoints::Tfrc(tf) = &mut fr.ep {
                    Self::tfrc_sample(fs, tf, dt);
                }
                continue;
            };
            let read = rcv.bytes_read();
            let rn = rcv.rcv_nxt();
            fs.cwnd_bytes.push(snd.cwnd());
            fs.ssthresh_bytes.push(snd.ssthresh().min(u64::MAX / 4));
            fs.rwnd_bytes.push(rcv.last_advertised_window());
            fs.flight_bytes.push(snd.flight());
            fs.srtt_ms
                .push(snd.rtt().srtt().map_or(f64::NAN, |d| d.as_millis_f64()));
            fs.rcv_buffer_bytes.push(rcv.buffer_occupancy());
            fs.read_rate_bps
                .push((read - fr.prev_sample_read) as f64 * 8.0 / dt);
            fs.goodput_bps
                .push((rn - fr.prev_sample_rcv_nxt) as f64 * 8.0 / dt);
            fs.snd_una.push(snd.snd_una());
            fs.snd_nxt.push(snd.snd_nxt());
            fs.flow_window_bytes.push(snd.flow_window());
            fs.ar_bps
                .push(rcv.rate_estimate().map_or(f64::NAN, |r| r * 8.0));
            fs.rcv_buf_limit_bytes.push(rcv.buffer_limit());
            let policy = rcv.policy();
            fs.t_buff_ms.push(
                policy
                    .delay_estimate()
                    .map_or(f64::NAN, |d| d.as_millis_f64()),
            );
            fs.policy_state
                .push(policy.state_code().map_or(-1, i32::from));
            fs.tfrc_x_bps.push(f64::NAN);
            fs.tfrc_x_recv_bps.push(f64::NAN);
            fs.tfrc_p.push(f64::NAN);
            fs.tfrc_state.push(-1);
            fs.tfrc_rx_state.push(-1);
            fr.prev_sample_read = read;
            fr.prev_sample_rcv_nxt = rn;
        }
        let ls: &mut LinkSeries = &mut self.series.link;
        let now = self.net.now;
        for ld in self.net.dirs.iter_mut() {
            ld.advance(now);
            let d = ld.dir();
            ls.time_s.push(t);
            ls.dir.push(d.index as u32);
            ls.queue_packets.push(d.waiting(now) as u64);
            ls.queue_bytes.push(d.waiting_bytes(now));
            // A trace-driven direction: the capacity its trace offered over the last
            // sampling period (opportunities x bytes each / period), not the trace's
            // mean, so that capacity can be drawn under throughput (mm-graph).
            let rate = match (&d.trace, d.down) {
                (_, true) => 0.0,
                (Some(tr), false) => {
                    let from = Instant::from_nanos(now.as_nanos().saturating_sub(dt_ns));
                    link::trace_capacity_bps(&tr.trace, from, now)
                }
                (None, false) => d.rate_bps as f64,
            };
            ls.rate_bps.push(rate);
        }
    }
}
