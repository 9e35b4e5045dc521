//! Reader models: how fast the receiving application reads (`reader = ...`).

use crate::model::ReaderSpec;
use mobiflow_proto::time::Duration;

/// The read period of a rate-limited reader; `None` for a greedy one.
pub(super) fn reader_interval(r: &ReaderSpec) -> Option<Duration> {
    match r {
        ReaderSpec::Greedy => None,
        ReaderSpec::Constant { interval, .. }
        | ReaderSpec::Steps { interval, .. }
        | ReaderSpec::Sine { interval, .. } => Some(*interval),
    }
}

/// Read rate of a reader at time `t` since the flow's start, bits per second.
pub fn read_rate_at(r: &ReaderSpec, t: Duration) -> f64 {
    match r {
        ReaderSpec::Greedy => f64::INFINITY,
        ReaderSpec::Constant { rate_bps, .. } => *rate_bps as f64,
        ReaderSpec::Steps {
            rates_bps, step, ..
        } => {
            let k = (t.as_nanos() / step.as_nanos().max(1)) as usize % rates_bps.len().max(1);
            rates_bps.get(k).copied().unwrap_or(0) as f64
        }
        ReaderSpec::Sine {
            mean_bps,
            amplitude_bps,
            period,
            phase_rad,
            ..
        } => {
            let w = 2.0 * std::f64::consts::PI / period.as_secs_f64().max(1e-9);
            (*mean_bps as f64 + *amplitude_bps as f64 * (w * t.as_secs_f64() + phase_rad).sin())
                .max(0.0)
        }
    }
}

/// Bytes a reader may read over `(t0, t1]` (times since the flow's start): the
/// integral of its rate, exact for steps, by the midpoint rule for a sinusoid. What it
/// cannot read because the buffer is empty is not carried over.
pub fn read_budget(r: &ReaderSpec, t0: Duration, t1: Duration) -> u64 {
    if t1 <= t0 {
        return 0;
    }
    let bits = match r {
        ReaderSpec::Greedy => return u64::MAX,
        ReaderSpec::Steps { step, .. } => {
            // Integrate across step boundaries.
            let mut acc = 0.0;
            let mut a = t0;
            let s = step.as_nanos().max(1);
            while a < t1 {
                let next = Duration::from_nanos((a.as_nanos() / s + 1) * s).min(t1);
                acc += read_rate_at(r, a) * (next - a).as_secs_f64();
                a = next;
            }
            acc
        }
        _ => {
            let mid = Duration::from_nanos((t0.as_nanos() + t1.as_nanos()) / 2);
            read_rate_at(r, mid) * (t1 - t0).as_secs_f64()
        }
    };
    (bits / 8.0).round() as u64
}
