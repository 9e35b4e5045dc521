//! Disconnection planning, shared by the schemes that act before a predicted
//! disconnection: Freeze-TCP (`flow::freeze`) and Freeze-DCCP (`tfrc`).
//!
//! Both learn of a disconnection from the outages of the links on their path, in
//! either direction: overlapping or touching outages are one disconnection
//! ([`disconnections`]), and the scheme is warned a warning time before it starts
//! ([`warning_at`]). What each does with the warning, and when its warning time is, is
//! the scheme's.

use crate::time::Duration;

/// The disconnections a set of outages `[start, end)` (times since the start of the
/// run) makes: their union, as disjoint intervals in order of time.
pub fn disconnections(
    outages: impl IntoIterator<Item = (Duration, Duration)>,
) -> Vec<(Duration, Duration)> {
    let mut v: Vec<(Duration, Duration)> = outages.into_iter().collect();
    v.sort();
    let mut out: Vec<(Duration, Duration)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// When a scheme warned `warning` ahead learns of a disconnection starting at `start`:
/// `start - warning`, or the start of the run if that is earlier.
pub fn warning_at(start: Duration, warning: Duration) -> Duration {
    start.saturating_sub(warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::test_util::ms;

    #[test]
    fn overlapping_and_touching_outages_are_one_disconnection() {
        let d = disconnections([
            (ms(500), ms(700)),
            (ms(100), ms(200)),
            (ms(150), ms(300)),
            (ms(300), ms(350)),
            (ms(600), ms(650)),
        ]);
        assert_eq!(d, vec![(ms(100), ms(350)), (ms(500), ms(700))]);
        assert!(disconnections([]).is_empty());
    }

    #[test]
    fn a_warning_longer_than_the_time_before_the_disconnection_comes_at_zero() {
        assert_eq!(warning_at(ms(1000), ms(100)), ms(900));
        assert_eq!(warning_at(ms(50), ms(100)), Duration::ZERO);
    }
}
