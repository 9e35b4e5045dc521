//! The receiver's loss history: loss detection, loss events, loss intervals and the
//! loss event rate p.
//!
//! Read RFC 5348 §5 and §6.3.1, and RFC 4342 §10.2, first.
//!
//! * **Detection** (RFC 5348 §5.1): a packet is lost once `NDUPACK` packets with a
//!   higher sequence number have arrived. Gaps in the sequence are kept as *holes*
//!   (a range plus the packets on either side) until then; a late packet splits or
//!   shrinks its hole.
//! * **Loss events**, RFC 5348 §5.2: a lost packet's nominal arrival time is
//!   interpolated between the packets around the hole,
//!   `T_loss = T_before + (T_after − T_before)·(S_loss − S_before)/(S_after − S_before)`;
//!   it starts a new event if `T_loss > T_old + R`, T_old being the interpolated time
//!   of the lost packet that started the current event.
//! * **Loss events**, CCID 3 (RFC 4342 §10.2, as Linux `tfrc_lh_interval_add`): the
//!   current event is *closed* once a packet whose window counter is more than 4
//!   (mod 16) past the CCVal of the event's first loss is seen (the packet before a
//!   hole counts); a loss then starts a new event, otherwise it joins the current one.
//! * **Intervals** (§5.3): a closed interval is the sequence distance between the
//!   starts of consecutive events; the open interval `I_0 = S_highest − S_start + 1`.
//!   The interval before the first event is replaced by the synthetic interval of
//!   §6.3.1 ([`crate::tfrc::equation::first_loss_interval`]).
//! * **Average** (§5.4): [`average_loss_interval`], `p = 1/I_mean`.
//! * **History discounting** (§5.5, optional, off unless
//!   [`LossHistory::set_history_discounting`]): [`discounted_loss_interval`]. When
//!   I_0 > 2·I_mean (I_mean over the closed intervals, each weighted by its own
//!   discount DF_i), the closed intervals are weighted down by
//!   `DF = max(2·I_mean/I_0, 0.5)`; when the next loss event closes I_0, every older
//!   DF_i is multiplied by the DF then in force and the newly closed interval starts
//!   at DF_1 = 1 (ns-2's `TfrcSinkAgent::est_loss`, `mult_factor_`, `minDiscountRatio_`
//!   0.5). Neither RFC 4342 nor ns-2's `Agent/DCCP/TFRC` discounts.
//!
//! ECN marks are not modelled.

use super::equation::first_loss_interval;
use crate::time::Instant;
use std::collections::VecDeque;

/// n, the number of loss intervals averaged (RFC 5348 §5.4).
pub const N_LOSS_INTERVALS: usize = 8;

/// `w_i = 1` for `i < n/2`, else `2·(n − i)/(n + 2)` (RFC 5348 §5.4), n = 8.
pub const LOSS_WEIGHTS: [f64; N_LOSS_INTERVALS] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Most holes the receiver tracks at once; beyond that the oldest is declared lost
/// without waiting for NDUPACK packets (keeps the ring bounded).
const MAX_HOLES: usize = 64;

/// The average loss interval of RFC 5348 §5.4 for the open interval `open` (I_0) and
/// the closed ones `closed` = [I_1, I_2, …] (most recent first, at most n used):
///
/// ```text
///   I_tot0 = Σ_{i=0}^{k−1} I_i·w_i     I_tot1 = Σ_{i=1}^{k} I_i·w_{i−1}     W_tot = Σ_{i=0}^{k−1} w_i
///   I_mean = max(I_tot0, I_tot1) / W_tot
/// ```
///
/// Returns `(I_mean, open_counted)`, where `open_counted` says I_tot0 won (the open
/// interval lowered p), or `None` with no closed interval.
pub fn average_loss_interval(open: f64, closed: &[f64]) -> Option<(f64, bool)> {
    let k = closed.len().min(N_LOSS_INTERVALS);
    if k == 0 {
        return None;
    }
    let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
    for (i, w) in LOSS_WEIGHTS.iter().enumerate().take(k) {
        let interval = if i == 0 { open } else { closed[i - 1] };
        tot0 += interval * w;
        w_tot += w;
        tot1 += closed[i] * w;
    }
    Some((tot0.max(tot1) / w_tot, tot0 > tot1))
}

/// The lower bound of the discount factor DF (RFC 5348 §5.5; ns-2's
/// `minDiscountRatio_`).
pub const MIN_DISCOUNT: f64 = 0.5;

/// The average loss interval with history discounting (RFC 5348 §5.5): `closed` and
/// `df` are I_1.. and their discount factors DF_1.. (most recent first). Returns
/// `(I_mean, DF)`, DF being the general discount factor now in force (1 when I_0 is not
/// more than twice the average), or `None` with no closed interval.
///
/// ```text
///   I_tot0 = I_0·w_0 + Σ_{i=1}^{k−1} I_i·w_i·DF_i·DF    W_tot0 = w_0 + Σ w_i·DF_i·DF
///   I_tot1 = Σ_{i=1}^{k} I_i·w_{i−1}·DF_i               W_tot1 = Σ w_{i−1}·DF_i
///   I_mean = max(I_tot0/W_tot0, I_tot1/W_tot1)
/// ```
pub fn discounted_loss_interval(open: f64, closed: &[f64], df: &[f64]) -> Option<(f64, f64)> {
    let k = closed.len().min(N_LOSS_INTERVALS).min(df.len());
    if k == 0 {
        return None;
    }
    let (mut tot1, mut w_tot1) = (0.0, 0.0);
    for i in 0..k {
        tot1 += closed[i] * LOSS_WEIGHTS[i] * df[i];
        w_tot1 += LOSS_WEIGHTS[i] * df[i];
    }
    let mean1 = tot1 / w_tot1;
    let general = if open > 2.0 * mean1 {
        (2.0 * mean1 / open).max(MIN_DISCOUNT)
    } else {
        1.0
    };
    let (mut tot0, mut w_tot0) = (open * LOSS_WEIGHTS[0], LOSS_WEIGHTS[0]);
    for i in 1..k {
        tot0 += closed[i - 1] * LOSS_WEIGHTS[i] * df[i - 1] * general;
        w_tot0 += LOSS_WEIGHTS[i] * df[i - 1] * general;
    }
    Some(((tot0 / w_tot0).max(mean1), general))
}

/// `(a − b) mod 16` for 4-bit window counters.
pub(crate) fn sub16(a: u8, b: u8) -> u8 {
    a.wrapping_sub(b) & 0x0f
}

/// A gap in the received sequence not yet declared lost.
#[derive(Copy, Clone, Debug)]
struct Hole {
    /// First missing sequence number.
    start: u64,
    /// One past the last missing sequence number.
    end: u64,
    /// Packets received with a sequence number above the hole.
    after: u32,
    /// The packets around the hole, for interpolation (§5.2); `s_before` is −1 when
    /// the very first packets are missing.
    s_before: f64,
    t_before: f64,
    s_after: f64,
    t_after: f64,
    /// CCVal of the packet before the hole (RFC 4342 §10.2, Linux's `loss_prev`).
    ccval_before: u8,
}

impl Hole {
    /// Interpolated nominal arrival time (ns) of sequence number `seq` (§5.2).
    fn t_loss(&self, seq: u64) -> f64 {
        if self.t_after <= self.t_before || self.s_after <= self.s_before {
            return self.t_before;
        }
        self.t_before
            + (self.t_after - self.t_before) * (seq as f64 - self.s_before)
                / (self.s_after - self.s_before)
    }
}

/// The first lost packet of the current loss event.
#[derive(Copy, Clone, Debug)]
struct EventStart {
    seq: u64,
    /// Interpolated time, ns.
    t: f64,
    ccval: u8,
    /// CCID 3: a packet more than 4 window-counter steps later has been seen.
    closed: bool,
}

/// What one arriving data packet did to the history.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Below the highest sequence number received and not filling a hole
    /// (a duplicate, or a packet already counted lost).
    pub stale: bool,
    /// New loss events this packet revealed.
    pub new_events: u32,
    /// Packets this arrival caused to be declared lost.
    pub newly_lost: u64,
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct LossHistory {
    ndupack: u32,
    ccid3: bool,
    b: f64,
    highest: Option<u64>,
    highest_at: Instant,
    highest_ccval: u8,
    holes: VecDeque<Hole>,
    cur: Option<EventStart>,
    /// Closed intervals I_1..I_k, most recent first (I_1 may be synthetic).
    closed: [f64; N_LOSS_INTERVALS],
    k: usize,
    /// RFC 5348 §5.5: on, and the discount factors DF_i of the closed intervals.
    discounting: bool,
    df: [f64; N_LOSS_INTERVALS],
    lost_packets: u64,
    loss_events: u64,
}

impl LossHistory {
    pub fn new(ndupack: u32, ccid3: bool, b: f64) -> Self {
        LossHistory {
            ndupack: ndupack.max(1),
            ccid3,
            b,
            highest: None,
            highest_at: Instant::ZERO,
            highest_ccval: 0,
            holes: VecDeque::with_capacity(8),
            cur: None,
            closed: [0.0; N_LOSS_INTERVALS],
            k: 0,
            discounting: false,
            df: [1.0; N_LOSS_INTERVALS],
            lost_packets: 0,
            loss_events: 0,
        }
    }

    /// Turn loss-history discounting (RFC 5348 §5.5) on or off.
    pub fn set_history_discounting(&mut self, on: bool) {
        self.discounting = on;
    }

    /// Record the arrival of data packet `seq` (window counter `ccval`) at `now`.
    /// `r` is the receiver's RTT estimate in seconds (0 if unknown), `s` the segment
    /// size and `x_target` the receive rate used if this arrival reveals the first
    /// loss event (§6.3.1; 0 when there is no measurement yet).
    pub fn on_packet(
        &mut self,
        now: Instant,
        seq: u64,
        ccval: u8,
        r: f64,
        s: f64,
        x_target: f64,
    ) -> Arrival {
        let mut out = Arrival::default();
        let t_now = now.as_nanos() as f64;
        match self.highest {
            None => {
                if seq > 0 {
                    self.push_hole(Hole {
                        start: 0,
                        end: seq,
                        after: 1,
                        s_before: -1.0,
                        t_before: t_now,
                        s_after: seq as f64,
                        t_after: t_now,
                        ccval_before: ccval,
                    });
                }
                self.set_highest(now, seq, ccval);
            }
            Some(h) if seq > h => {
                for hole in self.holes.iter_mut() {
                    hole.after += 1;
                }
                if seq > h + 1 {
                    let hole = Hole {
                        start: h + 1,
                        end: seq,
                        after: 1,
                        s_before: h as f64,
                        t_before: self.highest_at.as_nanos() as f64,
                        s_after: seq as f64,
                        t_after: t_now,
                        ccval_before: self.highest_ccval,
                    };
                    self.push_hole(hole);
                }
                self.set_highest(now, seq, ccval);
            }
            Some(_) => {
                // Late: fill (part of) a hole, or stale.
                match self
                    .holes
                    .iter()
                    .position(|x| x.start <= seq && seq < x.end)
                {
                    None => out.stale = true,
                    Some(i) => {
                        for hole in self.holes.iter_mut().take(i) {
                            hole.after += 1;
                        }
                        let hole = self.holes[i];
                        let left = Hole {
                            end: seq,
                            after: hole.after + 1,
                            ..hole
                        };
                        let right = Hole {
                            start: seq + 1,
                            ..hole
                        };
                        match (left.start < left.end, right.start < right.end) {
                            (true, true) => {
                                self.holes[i] = left;
                                self.holes.insert(i + 1, right);
                            }
                            (true, false) => self.holes[i] = left,
                            (false, true) => self.holes[i] = right,
                            (false, false) => {
                                self.holes.remove(i);
                            }
                        }
                    }
                }
            }
        }
        if !out.stale {
            if let Some(c) = self.cur.as_mut() {
                if seq > c.seq && sub16(ccval, c.ccval) > 4 {
                    c.closed = true;
                }
            }
        }
        while let Some(front) = self.holes.front() {
            if front.after < self.ndupack && self.holes.len() <= MAX_HOLES {
                break;
            }
            let hole = self.holes.pop_front().expect("front exists");
            out.newly_lost += hole.end - hole.start;
            out.new_events += self.declare_lost(&hole, r, s, x_target);
        }
        out
    }

    fn set_highest(&mut self, now: Instant, seq: u64, ccval: u8) {
        self.highest = Some(seq);
        self.highest_at = now;
        self.highest_ccval = ccval;
    }

    fn push_hole(&mut self, hole: Hole) {
        self.holes.push_back(hole);
    }

    /// Turn a hole into losses and loss events; returns the number of new events.
    fn declare_lost(&mut self, hole: &Hole, r: f64, s: f64, x_target: f64) -> u32 {
        self.lost_packets += hole.end - hole.start;
        let r_ns = r.max(0.0) * 1e9;
        let mut events = 0;
        let mut seq = hole.start;
        while seq < hole.end {
            let t = hole.t_loss(seq);
            let new_event = match self.cur {
                None => true,
                Some(c) if self.ccid3 => c.closed || sub16(hole.ccval_before, c.ccval) > 4,
                // RFC 5348 §5.2: same event if T_old + R >= T_new.
                Some(c) => t > c.t + r_ns,
            };
            if new_event {
                self.start_event(seq, t, hole.ccval_before, r, s, x_target);
                events += 1;
            }
            if self.ccid3 {
                // No packet inside a hole: its CCVal test cannot change within it.
                break;
            }
            // Next lost packet of this hole that falls more than R after the event's
            // start, solving T_loss(x) > T_old + R for x.
            let c = self.cur.expect("an event exists");
            let thresh = c.t + r_ns;
            if hole.t_after <= hole.t_before || hole.t_loss(hole.end - 1) <= thresh {
                break;
            }
            let x = hole.s_before
                + (thresh - hole.t_before) * (hole.s_after - hole.s_before)
                    / (hole.t_after - hole.t_before);
            let mut next = if x < 0.0 { 0 } else { x.floor() as u64 };
            next = next.max(seq + 1);
            while next > seq + 1 && hole.t_loss(next - 1) > thresh {
                next -= 1;
            }
            while next < hole.end && hole.t_loss(next) <= thresh {
                next += 1;
            }
            seq = next;
        }
        events
    }

    fn start_event(&mut self, seq: u64, t: f64, ccval: u8, r: f64, s: f64, x_target: f64) {
        match self.cur {
            None => {
                // RFC 5348 §6.3.1: the interval up to the first loss is replaced by the
                // synthetic one giving X_target.
                self.closed[0] = first_loss_interval(s, r, x_target, self.b);
                self.k = 1;
            }
            Some(c) => {
                if self.discounting {
                    // §5.5: the discount in force when I_0 closes sticks to the older
                    // intervals; the newly closed one starts undiscounted.
                    // I_0 as it stood up to this event's first loss.
                    let open = (seq - c.seq) as f64;
                    let general = discounted_loss_interval(open, self.closed_intervals(), &self.df)
                        .map_or(1.0, |(_, g)| g);
                    for d in &mut self.df[..self.k] {
                        *d *= general;
                    }
                    self.df.copy_within(0..N_LOSS_INTERVALS - 1, 1);
                    self.df[0] = 1.0;
                }
                // §5.3: the closed interval runs from the previous event's start to
                // this one's.
                self.closed.copy_within(0..N_LOSS_INTERVALS - 1, 1);
                self.closed[0] = (seq - c.seq) as f64;
                self.k = (self.k + 1).min(N_LOSS_INTERVALS);
            }
        }
        self.cur = Some(EventStart {
            seq,
            t,
            ccval,
            closed: false,
        });
        self.loss_events += 1;
    }

    /// Freeze-DCCP (end of PROBED): forget every interval and treat the current loss
    /// event as the first one, seeding p from `x_target` (§6.3.1) so that p
    /// describes the new path.
    pub fn restart_from_current_event(&mut self, r: f64, s: f64, x_target: f64) {
        if self.cur.is_some() {
            self.df = [1.0; N_LOSS_INTERVALS];
            self.closed = [0.0; N_LOSS_INTERVALS];
            self.closed[0] = first_loss_interval(s, r, x_target, self.b);
            self.k = 1;
        }
    }

    /// The open interval I_0 (packets from the start of the latest event to the
    /// highest received, inclusive), if there was a loss event.
    pub fn open_interval(&self) -> Option<f64> {
        let c = self.cur?;
        let h = self.highest?;
        Some((h.saturating_sub(c.seq) + 1) as f64)
    }

    /// The closed intervals I_1..I_k, most recent first.
    pub fn closed_intervals(&self) -> &[f64] {
        &self.closed[..self.k]
    }

    /// The loss event rate p (RFC 5348 §5.4); 0 before the first loss event.
    pub fn p(&self) -> f64 {
        match self.open_interval() {
            None => 0.0,
            Some(open) => {
                let mean = if self.discounting {
                    discounted_loss_interval(open, self.closed_intervals(), &self.df)
                        .map(|(m, _)| m)
                } else {
                    average_loss_interval(open, self.closed_intervals()).map(|(m, _)| m)
                };
                match mean {
                    Some(mean) if mean > 0.0 => (1.0 / mean).min(1.0),
                    _ => 0.0,
                }
            }
        }
    }

    /// A hole is waiting for NDUPACK packets.
    pub fn loss_pending(&self) -> bool {
        !self.holes.is_empty()
    }

    pub fn highest_seq(&self) -> Option<u64> {
        self.highest
    }

    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfrc::equation::{first_loss_interval, throughput};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    const CLOSED: [f64; 8] = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0];

    #[test]
    fn average_uses_the_eight_weights_without_the_open_interval() {
        // I_tot1 = 10+20+30+40 + .8·50 + .6·60 + .4·70 + .2·80 = 220, W_tot = 6.
        // I_tot0 = 5+10+20+30 + .8·40 + .6·50 + .4·60 + .2·70 = 165 < 220.
        let (mean, open_counted) = average_loss_interval(5.0, &CLOSED).unwrap();
        assert!(close(mean, 220.0 / 6.0), "{mean}");
        assert!(!open_counted);
    }

    #[test]
    fn average_counts_the_open_interval_when_it_lowers_p() {
        // I_tot0 = 200+10+20+30 + .8·40 + .6·50 + .4·60 + .2·70 = 360 > 220.
        let (mean, open_counted) = average_loss_interval(200.0, &CLOSED).unwrap();
        assert!(close(mean, 60.0), "{mean}");
        assert!(open_counted);
    }

    #[test]
    fn average_with_fewer_than_eight_intervals_uses_k_weights() {
        // k = 2: I_tot0 = 7·1 + 10·1 = 17, I_tot1 = 10·1 + 20·1 = 30, W_tot = 2.
        assert!(close(
            average_loss_interval(7.0, &[10.0, 20.0]).unwrap().0,
            15.0
        ));
        // k = 5: I_tot1 = 10+20+30+40+.8·50 = 140, W_tot = 4.8.
        let m = average_loss_interval(1.0, &CLOSED[..5]).unwrap().0;
        assert!(close(m, 140.0 / 4.8), "{m}");
        // Only the first eight closed intervals count.
        let mut nine = CLOSED.to_vec();
        nine.push(1e9);
        assert_eq!(
            average_loss_interval(5.0, &nine),
            average_loss_interval(5.0, &CLOSED)
        );
        assert_eq!(average_loss_interval(5.0, &[]), None);
    }

    fn ms(x: u64) -> Instant {
        Instant::from_millis(x)
    }

    /// Feed packets 0..n at 1 ms spacing, skipping `lost`.
    fn feed(h: &mut LossHistory, n: u64, lost: &[u64], r: f64) -> u32 {
        let mut events = 0;
        for seq in 0..n {
            if lost.contains(&seq) {
                continue;
            }
            events += h
                .on_packet(ms(seq), seq, 0, r, 1000.0, 100_000.0)
                .new_events;
        }
        events
    }

    #[test]
    fn loss_is_declared_after_ndupack_later_packets() {
        let mut h = LossHistory::new(3, false, 1.0);
        for seq in [0, 1, 2, 4, 5] {
            h.on_packet(ms(seq), seq, 0, 0.05, 1000.0, 1e5);
        }
        assert!(h.loss_pending());
        assert_eq!(h.lost_packets(), 0);
        let a = h.on_packet(ms(6), 6, 0, 0.05, 1000.0, 1e5);
        assert_eq!((a.newly_lost, a.new_events), (1, 1));
        assert!(!h.loss_pending());
    }

    #[test]
    fn reordered_packet_fills_its_hole_before_ndupack() {
        let mut h = LossHistory::new(3, false, 1.0);
        for seq in [0, 1, 3, 4, 2, 5, 6, 7] {
            h.on_packet(ms(seq), seq, 0, 0.05, 1000.0, 1e5);
        }
        assert_eq!(h.lost_packets(), 0);
        assert!(!h.loss_pending());
        assert_eq!(h.p(), 0.0);
    }

    #[test]
    fn first_loss_seeds_the_synthetic_interval() {
        let mut h = LossHistory::new(3, false, 1.0);
        let (r, s, x_target) = (0.05, 1000.0, 100_000.0);
        feed(&mut h, 200, &[100], r);
        let synthetic = first_loss_interval(s, r, x_target, 1.0);
        assert_eq!(h.closed_intervals(), &[synthetic]);
        // The 100 packets before the loss are not an interval; p follows X_target.
        let p = h.p();
        assert!(close(p, 1.0 / synthetic.max(h.open_interval().unwrap())));
        let x = throughput(s, r, 1.0 / synthetic, 1.0);
        assert!((x - x_target).abs() <= 0.05 * x_target);
    }

    #[test]
    fn losses_within_one_rtt_form_one_loss_event() {
        // 1 ms per packet, R = 50 ms: losses 30 packets apart are one event, 60 apart
        // are two.
        let mut h = LossHistory::new(3, false, 1.0);
        let events = feed(&mut h, 300, &[100, 130, 190], 0.05);
        assert_eq!(events, 2);
        assert_eq!(h.loss_events(), 2);
        assert_eq!(h.lost_packets(), 3);
        // Closed interval = distance between the events' first losses.
        assert_eq!(h.closed_intervals()[0], 90.0);
        assert_eq!(h.open_interval(), Some((299 - 190 + 1) as f64));
    }

    #[test]
    fn a_long_gap_spans_one_event_per_rtt_of_interpolated_time() {
        // Packets 0..=9 at 1 ms, then 10..=19 lost, then 20.. arrive after a 1 s gap:
        // the lost packets are spread over [9 ms, 1020 ms]; with R = 200 ms each
        // event covers 200 ms of interpolated time.
        let mut h = LossHistory::new(3, false, 1.0);
        for seq in 0..10 {
            h.on_packet(ms(seq), seq, 0, 0.2, 1000.0, 1e5);
        }
        let mut events = 0;
        for (i, seq) in (20..30).enumerate() {
            events += h
                .on_packet(ms(1020 + i as u64), seq, 0, 0.2, 1000.0, 1e5)
                .new_events;
        }
        // T_loss(S) = 9 + 1011·(S − 9)/11 ms: starts at S = 10 (101 ms), then the
        // first S past 301 ms is 13 (376.6 ms), then 16 (652.3), then 19 (928.0).
        assert_eq!(events, 4);
        assert_eq!(h.closed_intervals()[..3], [3.0, 3.0, 3.0]);
        assert_eq!(h.lost_packets(), 10);
    }

    #[test]
    fn ccid3_groups_losses_by_window_counter() {
        // CCVal advances by one every 10 packets. A loss starts a new event only if
        // the current one is closed by a packet more than 4 counters later.
        let mut h = LossHistory::new(3, true, 1.0);
        let lost = [100u64, 130, 160];
        let mut events = 0;
        for seq in 0..300u64 {
            if lost.contains(&seq) {
                continue;
            }
            let ccval = ((seq / 10) % 16) as u8;
            events += h
                .on_packet(ms(seq), seq, ccval, 0.0, 1000.0, 1e5)
                .new_events;
        }
        // 100 (CCVal 9 before it) starts the event; 130 (CCVal 12): 12 − 9 = 3 ≤ 4,
        // same event; 160: packets with CCVal 14 (> 9 + 4) were seen, new event.
        assert_eq!(events, 2);
        assert_eq!(h.closed_intervals()[0], 60.0);
    }

    #[test]
    fn ccid3_loss_events_follow_the_window_counter_not_arrival_times() {
        // RFC 4342 §10.2: two losses 300 ms apart (R = 50 ms) whose packets before the
        // holes carry CCVals 2 apart are one loss event for CCID 3; RFC 5348 §5.2's
        // interpolated times make them two.
        let run = |ccid3: bool| {
            let mut h = LossHistory::new(3, ccid3, 1.0);
            let mut events = 0;
            for seq in 0..40u64 {
                if seq == 10 || seq == 20 {
                    continue;
                }
                let ccval = if seq < 15 { 1 } else { 3 };
                events += h
                    .on_packet(ms(30 * seq), seq, ccval, 0.05, 1000.0, 1e5)
                    .new_events;
            }
            events
        };
        assert_eq!(run(true), 1);
        assert_eq!(run(false), 2);
    }

    #[test]
    fn discounting_is_off_by_default_and_equal_to_the_plain_average_when_unneeded() {
        let df = [1.0; N_LOSS_INTERVALS];
        // I_0 = 5 is not more than twice the mean: DF = 1, the §5.4 average.
        let (mean, general) = discounted_loss_interval(5.0, &CLOSED, &df).unwrap();
        assert_eq!(general, 1.0);
        assert!(close(mean, average_loss_interval(5.0, &CLOSED).unwrap().0));
        let mut h = LossHistory::new(3, false, 1.0);
        let mut d = LossHistory::new(3, false, 1.0);
        d.set_history_discounting(true);
        feed(&mut h, 400, &[100, 200, 300], 0.01);
        feed(&mut d, 400, &[100, 200, 300], 0.01);
        // Short open interval: discounting changes nothing.
        assert!(close(h.p(), d.p()));
    }

    #[test]
    fn discounting_weights_old_intervals_down_when_the_open_interval_is_long() {
        // RFC 5348 §5.5: closed intervals of 10, open interval 100 > 2·10: DF =
        // max(2·10/100, 0.5) = 0.5. I_tot0 = 100·1 + 10·(1+1+1+0.8+0.6+0.4+0.2)·0.5 = 125,
        // W_tot0 = 1 + 5·0.5 = 3.5: I_mean = 35.71 (no discounting: 100 + 50 over 6 = 25).
        let closed = [10.0; 8];
        let df = [1.0; N_LOSS_INTERVALS];
        let (mean, general) = discounted_loss_interval(100.0, &closed, &df).unwrap();
        assert_eq!(general, MIN_DISCOUNT);
        assert!(close(mean, 125.0 / 3.5));
        assert!(close(
            average_loss_interval(100.0, &closed).unwrap().0,
            25.0
        ));
        // DF never goes below 0.5, however long I_0.
        let (_, g) = discounted_loss_interval(1e6, &closed, &df).unwrap();
        assert_eq!(g, MIN_DISCOUNT);
        let (_, g) = discounted_loss_interval(30.0, &closed, &df).unwrap();
        assert!(close(g, 2.0 * 10.0 / 30.0));
    }

    #[test]
    fn discount_in_force_sticks_to_older_intervals_when_a_new_event_closes_i0() {
        // Events at 100, 110, 120 (intervals 10, 10), then a long loss-free run to 1000
        // (I_0 = 881 > 2·10: DF = 0.5) and a loss at 1000: the two old intervals keep
        // DF_i = 0.5, the newly closed one (880) starts at 1.
        let mut d = LossHistory::new(3, false, 1.0);
        d.set_history_discounting(true);
        let mut h = LossHistory::new(3, false, 1.0);
        feed(&mut d, 1100, &[100, 110, 120, 1000], 0.001);
        feed(&mut h, 1100, &[100, 110, 120, 1000], 0.001);
        assert_eq!(d.closed_intervals()[..3], [880.0, 10.0, 10.0]);
        assert_eq!(d.df[..3], [1.0, 0.5, 0.5]);
        // The old short intervals count less: p is lower than without discounting.
        assert!(d.p() < h.p(), "{} {}", d.p(), h.p());
    }

    #[test]
    fn ccid3_window_counter_wraps_modulo_16() {
        assert_eq!(sub16(2, 14), 4);
        assert_eq!(sub16(3, 14), 5);
        assert_eq!(sub16(14, 3), 11);
    }

    #[test]
    fn restart_from_current_event_drops_old_intervals() {
        let mut h = LossHistory::new(3, false, 1.0);
        feed(&mut h, 400, &[100, 200, 300], 0.01);
        assert_eq!(h.closed_intervals().len(), 3);
        h.restart_from_current_event(0.05, 1000.0, 50_000.0);
        assert_eq!(
            h.closed_intervals(),
            &[first_loss_interval(1000.0, 0.05, 50_000.0, 1.0)]
        );
        assert_eq!(h.open_interval(), Some(100.0));
    }
}
