//! The TCP throughput equation of TFRC (RFC 5348 §3.1), its inverse, and the initial
//! window (RFC 5348 §4.2, RFC 3390).
//!
//! ```text
//!                               s
//!   X_Bps = ----------------------------------------------------------    (RFC 5348 §3.1)
//!           R·sqrt(2·b·p/3) + t_RTO·(3·sqrt(3·b·p/8))·p·(1 + 32·p²)
//!
//!   with t_RTO = 4·R:   X_Bps = s / (R·f(p)),
//!                       f(p) = sqrt(2·b·p/3) + 12·sqrt(3·b·p/8)·p·(1 + 32·p²)
//! ```
//!
//! s in bytes, R and t_RTO in seconds, p the loss event rate; X_Bps in bytes per
//! second.

/// The full equation with an explicit t_RTO (RFC 5348 §3.1), in bytes per second.
/// Infinite for p = 0.
pub fn throughput_rto(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom = r * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    if denom <= 0.0 {
        f64::INFINITY
    } else {
        s / denom
    }
}

/// f(p) for t_RTO = 4·R: `X_Bps = s / (R·f(p))`.
pub fn tcp_f(p: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    (2.0 * b * p / 3.0).sqrt() + 12.0 * (3.0 * b * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p)
}

/// X_Bps with t_RTO = 4·R, as RFC 5348 §3.1 recommends, in bytes per second.
pub fn throughput(s: f64, r: f64, p: f64, b: f64) -> f64 {
    throughput_rto(s, r, p, b, 4.0 * r)
}

/// The p in (0, 1] with `f(p) = fval` (f is increasing), by bisection in log space;
/// clamps to the ends of the range. Deterministic: a fixed 100 halvings.
pub fn invert_f(fval: f64, b: f64) -> f64 {
    const P_MIN: f64 = 1e-10;
    if fval <= tcp_f(P_MIN, b) {
        return P_MIN;
    }
    if fval >= tcp_f(1.0, b) {
        return 1.0;
    }
    let (mut lo, mut hi) = (P_MIN.ln(), 0.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if tcp_f(mid.exp(), b) < fval {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The synthetic first loss interval of RFC 5348 §6.3.1: `1/p` for the p at which
/// the equation gives `x_target` for the current R (the RFC asks for a rate within
/// 5 % of X_target; this inversion is exact to floating-point precision).
///
/// With `x_target = s/(2·R)` (the RFC's rule when the first data packet is lost)
/// f(p) = 2, p ≈ 0.2064 and the interval is ≈ 4.84 packets (Linux rounds it to 5).
pub fn first_loss_interval(s: f64, r: f64, x_target: f64, b: f64) -> f64 {
    let usable = x_target > 0.0 && r > 0.0;
    if !usable {
        // No usable target: the "first data packet lost" rule, f(p) = 2.
        return 1.0 / invert_f(2.0, b);
    }
    1.0 / invert_f(s / (r * x_target), b)
}

/// W_init in bytes: `min(4·s, max(2·s, 4380))` (RFC 5348 §4.2, from RFC 3390).
pub fn initial_window(s: u32) -> f64 {
    let s = s as f64;
    (4.0 * s).min((2.0 * s).max(4380.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn equation_matches_worked_values() {
        // Reference values computed independently from the RFC 5348 §3.1 formula.
        assert!(close(
            throughput(1000.0, 0.1, 0.01, 1.0),
            112_332.234_363,
            1e-9
        ));
        assert!(close(
            throughput(1460.0, 0.2, 0.001, 1.0),
            280_205.850_916,
            1e-9
        ));
        assert!(close(
            throughput(500.0, 0.05, 0.1, 1.0),
            17_701.020_778,
            1e-9
        ));
        assert!(close(tcp_f(0.01, 1.0), 0.089_021_642_423, 1e-9));
    }

    #[test]
    fn equation_uses_t_rto_of_four_rtts() {
        for &(r, p) in &[(0.01, 0.001), (0.1, 0.05), (0.5, 0.3)] {
            assert_eq!(
                throughput(1000.0, r, p, 1.0),
                throughput_rto(1000.0, r, p, 1.0, 4.0 * r)
            );
        }
        // A larger t_RTO lowers the rate.
        assert!(throughput_rto(1000.0, 0.1, 0.05, 1.0, 0.8) < throughput(1000.0, 0.1, 0.05, 1.0));
    }

    #[test]
    fn equation_is_decreasing_in_p_and_r_and_linear_in_s() {
        let mut last = f64::INFINITY;
        let mut p = 1e-6;
        while p <= 1.0 {
            let x = throughput(1000.0, 0.1, p, 1.0);
            assert!(x < last, "X must fall as p grows (p = {p})");
            last = x;
            p *= 1.5;
        }
        assert!(throughput(1000.0, 0.2, 0.01, 1.0) < throughput(1000.0, 0.1, 0.01, 1.0));
        assert!(close(
            throughput(2000.0, 0.1, 0.01, 1.0),
            2.0 * throughput(1000.0, 0.1, 0.01, 1.0),
            1e-12
        ));
        assert_eq!(throughput(1000.0, 0.1, 0.0, 1.0), f64::INFINITY);
    }

    #[test]
    fn inverse_recovers_p() {
        for &p in &[1e-5, 1e-3, 0.01, 0.2, 0.9] {
            let q = invert_f(tcp_f(p, 1.0), 1.0);
            assert!(close(q, p, 1e-9), "p = {p}, inverted {q}");
        }
    }

    #[test]
    fn first_loss_interval_gives_the_target_rate_within_five_percent() {
        let (s, r) = (1000.0, 0.08);
        for &x_target in &[5_000.0, 125_000.0, 1_250_000.0] {
            let i = first_loss_interval(s, r, x_target, 1.0);
            let x = throughput(s, r, 1.0 / i, 1.0);
            assert!(close(x, x_target, 0.05), "target {x_target}, got {x}");
        }
    }

    #[test]
    fn first_data_packet_lost_gives_an_interval_of_about_five() {
        // X_target = s/(2R): f(p) = 2, p = 0.2064, 1/p = 4.84 (Linux: 5).
        let i = first_loss_interval(1000.0, 0.1, 1000.0 / 0.2, 1.0);
        assert!(close(i, 4.844_283, 1e-5), "{i}");
        assert!(close(first_loss_interval(1000.0, 0.0, 0.0, 1.0), i, 1e-9));
    }

    #[test]
    fn initial_window_follows_rfc3390() {
        assert_eq!(initial_window(1000), 4000.0);
        assert_eq!(initial_window(500), 2000.0);
        assert_eq!(initial_window(1460), 4380.0);
        assert_eq!(initial_window(3000), 6000.0);
    }
}
