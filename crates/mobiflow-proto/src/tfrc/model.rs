//! The analytical model of TFRC across a disconnection, from the seed (Mehani, Boreli
//! and Ernst, "Analysis of TFRC in Disconnected Scenarios and Performance Improvements
//! with Freeze-DCCP", ACM MobiArch 2009, as its slides give it), and its
//! table "Analytically-Derived Possible Performance Improvements".
//!
//! Notation (the seed's): s the packet size (bytes), R the RTT before the
//! disconnection, X_d the sending rate when it starts (bytes/s), t_D its length,
//! t_mbi = 64 s. Time after the disconnection is cut into No-Feedback Intervals (NFIs)
//! i = 0, 1, …, each one nofeedback timeout t_RTO^i long; the sender halves its rate
//! at the end of each.
//!
//! ```text
//!   t_RTO^i = 4R            if i < i_t          i_t = ⌈log2(2R·X_d/s)⌉ ≤ i_x
//!           = 2s/X^i        otherwise
//!   X^i     = X_d/2^i       if 0 ≤ i < i_x      i_x = ⌈log2(X_d·t_mbi/s)⌉
//!           = s/t_mbi       otherwise
//!
//!   (1) n_lost = ⌊7/8 · t_D·X^0/s⌋                                         if t_D ≤ t_RTO^0
//!              = ⌊7/8 · t_RTO^0·X^0/s + Σ_{i=1}^{i_D−1} t_RTO^i·X^i/s
//!                                     + t_RTO^{i_D}·X^{i_D}/(2s)⌋          otherwise
//!   (2) n_wasted  = (1/s)·( t_idle·X_d + Σ_{i=0}^{n_ss} R_new·(X_d − 2^i·X_c) )
//!   (3) n'_wasted = (1/s)·(X_max − X_d)·(t_idle + t_ss) + (R_new/s)·Σ_{i=0}^{n_grow} (X_max − X^i)
//! ```
//!
//! The slides give the formulas but not the definitions of i_D, t_idle, X_c, n_ss,
//! t_ss, n_grow and the X^i of (3), nor the R and X_d behind the table. mobiflow's
//! reading (every item is a documented assumption, see [`Assumptions`]):
//!
//! * i_D is the NFI in which the disconnection ends: the smallest i with
//!   `Σ_{j=0}^{i} t_RTO^j ≥ t_D` (the half count of NFI i_D in (1) is the reconnection
//!   falling, on average, in its middle).
//! * X_c = X^{i_D}, the rate at reconnection.
//! * t_idle = s/(2·X_c) + R_new: on average half a packet interval at X_c before the
//!   first packet on the new path, then one new RTT before its feedback returns.
//! * n_ss = ⌈log2(X_d/X_c)⌉ − 1: the slow-start rounds (one R_new each, rates
//!   X_c, 2X_c, …) below X_d; t_ss = (n_ss + 1)·R_new; none if X_c ≥ X_d.
//! * (3) applies when the new path is faster (X_max > X_d): the rate then doubles
//!   from X_d, X^i = 2^i·X_d for i = 0..n_grow with n_grow = ⌈log2(X_max/X_d)⌉ − 1.
//! * The table's "unused bandwidth" is (2) + (3) when X_max ≥ X_d, and 0 when the new
//!   path is slower (restoring the old rate gains nothing then; the seed's table has
//!   zeros there).
//! * From the seed's link table and handoff times: R = 2·Delay_wireless + RTT_wired,
//!   R_new likewise for the new path, with RTT_wired = 0.1 s (from `T_handoff = 2.5 +
//!   RTT_wireless + RTT_wired = 2.6 + 2·Delay_wireless`); X_d and X_max the link
//!   bandwidths; t_D = T_handoff of the new network.

/// The seed's technologies, in table order.
pub const TECHNOLOGIES: [&str; 4] = ["UMTS", "802.16", "802.11b", "802.11g"];

/// The seed's "Packet losses (1)" table (rows: from, columns: to).
pub const PAPER_LOSSES: [[f64; 4]; 4] = [
    [306.0, 236.0, 226.0, 224.0],
    [2760.0, 2614.0, 2614.0, 2614.0],
    [1080.0, 1078.0, 1078.0, 1078.0],
    [2909.0, 2907.0, 2907.0, 2907.0],
];

/// The seed's "Unused bandwidth (2) & (3) [500 B packets]" table.
pub const PAPER_UNUSED: [[f64; 4]; 4] = [
    [0.0, 82938.0, 263.0, 109_541.0],
    [0.0, 471.0, 155.0, 1029.0],
    [0.0, 0.0, 1085.0, 54674.0],
    [0.0, 0.0, 0.0, 4699.0],
];

/// A wireless technology from the seed's "Link characteristics".
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Link {
    pub name: &'static str,
    pub bandwidth_bps: f64,
    /// One-way delay of the wireless link, seconds.
    pub delay_s: f64,
}

/// The seed's link characteristics: UMTS 384 kb/s 125 ms; 802.16 9.5 Mb/s 40 ms;
/// 802.11b 11 Mb/s 10 ms; 802.11g 54 Mb/s 10 ms.
pub fn seed_links() -> [Link; 4] {
    [
        Link {
            name: "UMTS",
            bandwidth_bps: 384e3,
            delay_s: 0.125,
        },
        Link {
            name: "802.16",
            bandwidth_bps: 9.5e6,
            delay_s: 0.040,
        },
        Link {
            name: "802.11b",
            bandwidth_bps: 11e6,
            delay_s: 0.010,
        },
        Link {
            name: "802.11g",
            bandwidth_bps: 54e6,
            delay_s: 0.010,
        },
    ]
}

/// The constants and readings behind the table. Only `s` and `t_mbi` come from the
/// seed's formulas and table; the rest are \[SLIDE\]-derived or assumed (module docs).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Assumptions {
    /// s, bytes (the table's "500 B packets").
    pub s: f64,
    /// t_mbi, seconds (RFC 5348).
    pub t_mbi: f64,
    /// RTT of the wired part, seconds: 0.1 [SLIDE, from T_handoff = 2.6 + 2·Delay].
    pub rtt_wired: f64,
    /// The layer-2/3 part of the handoff time, seconds: 2.5 \[SLIDE\].
    pub handoff_base: f64,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            s: 500.0,
            t_mbi: 64.0,
            rtt_wired: 0.1,
            handoff_base: 2.5,
        }
    }
}

impl Assumptions {
    /// The path RTT through `link`: `2·Delay_wireless + RTT_wired`.
    pub fn rtt(&self, link: &Link) -> f64 {
        2.0 * link.delay_s + self.rtt_wired
    }

    /// `T_handoff = 2.5 + RTT_wireless + RTT_wired` for a handoff *to* `link` (the
    /// seed's "Handoff times": 2.85 s UMTS, 2.68 s 802.16, 2.62 s 802.11b/g).
    pub fn handoff_time(&self, link: &Link) -> f64 {
        self.handoff_base + 2.0 * link.delay_s + self.rtt_wired
    }
}

fn ceil_log2(x: f64) -> u32 {
    if x <= 1.0 {
        0
    } else {
        x.log2().ceil() as u32
    }
}

/// `i_x = ⌈log2(X_d·t_mbi/s)⌉`: the first NFI at the floor rate s/t_mbi.
pub fn i_x(x_d: f64, s: f64, t_mbi: f64) -> u32 {
    ceil_log2(x_d * t_mbi / s)
}

/// `i_t = ⌈log2(2R·X_d/s)⌉`: the first NFI whose timeout is 2s/X^i rather than 4R
/// (≤ i_x whenever 2R ≤ t_mbi).
pub fn i_t(r: f64, x_d: f64, s: f64) -> u32 {
    ceil_log2(2.0 * r * x_d / s)
}

/// `X^i = X_d/2^i` for `0 ≤ i < i_x`, else `s/t_mbi`: the rate during NFI i.
pub fn x_i(i: u32, x_d: f64, s: f64, t_mbi: f64) -> f64 {
    if i < i_x(x_d, s, t_mbi) {
        x_d / 2f64.powi(i as i32)
    } else {
        s / t_mbi
    }
}

/// `t_RTO^i = 4R` for `i < i_t`, else `2s/X^i`: the length of NFI i.
pub fn t_rto_i(i: u32, r: f64, x_d: f64, s: f64, t_mbi: f64) -> f64 {
    if i < i_t(r, x_d, s) {
        4.0 * r
    } else {
        2.0 * s / x_i(i, x_d, s, t_mbi)
    }
}

/// i_D, the NFI in which a disconnection of length t_D ends: the smallest i with
/// `Σ_{j=0}^{i} t_RTO^j ≥ t_D` (mobiflow's reading).
pub fn i_d(t_d: f64, r: f64, x_d: f64, s: f64, t_mbi: f64) -> u32 {
    let mut end = 0.0;
    let mut i = 0;
    loop {
        end += t_rto_i(i, r, x_d, s, t_mbi);
        if end >= t_d || i > 10_000 {
            return i;
        }
        i += 1;
    }
}

/// Equation (1): packets sent into a disconnection of length `t_d` by a TFRC sender
/// at `x_d` with RTT `r`.
pub fn n_lost(t_d: f64, r: f64, x_d: f64, s: f64, t_mbi: f64) -> u64 {
    let t0 = t_rto_i(0, r, x_d, s, t_mbi);
    let x0 = x_i(0, x_d, s, t_mbi);
    if t_d <= t0 {
        return (7.0 / 8.0 * t_d * x0 / s).floor() as u64;
    }
    let id = i_d(t_d, r, x_d, s, t_mbi);
    let mut n = 7.0 / 8.0 * t0 * x0 / s;
    for i in 1..id {
        n += t_rto_i(i, r, x_d, s, t_mbi) * x_i(i, x_d, s, t_mbi) / s;
    }
    n += t_rto_i(id, r, x_d, s, t_mbi) * x_i(id, x_d, s, t_mbi) / (2.0 * s);
    n.floor() as u64
}

/// Equation (2): packets' worth of capacity left unused after reconnection while the
/// sender is idle for `t_idle` then slow-starts from `x_c` back to `x_d`, one round
/// of `r_new` per doubling, rounds `i = 0..=n_ss` (`n_ss < 0`: no slow start).
pub fn n_wasted(t_idle: f64, x_d: f64, x_c: f64, r_new: f64, n_ss: i32, s: f64) -> f64 {
    let mut sum = 0.0;
    for i in 0..=n_ss.max(-1) {
        sum += r_new * (x_d - 2f64.powi(i) * x_c);
    }
    (t_idle * x_d + sum) / s
}

/// Equation (3): the extra unused capacity when the new path offers `x_max > x_d`:
/// the gap during `t_idle + t_ss`, then rounds `i = 0..=n_grow` of `r_new` at rates
/// `X^i = 2^i·x_d` (mobiflow's reading of X^i here).
pub fn n_wasted_bigger(
    x_max: f64,
    x_d: f64,
    t_idle: f64,
    t_ss: f64,
    r_new: f64,
    n_grow: i32,
    s: f64,
) -> f64 {
    let mut sum = 0.0;
    for i in 0..=n_grow.max(-1) {
        sum += x_max - 2f64.powi(i) * x_d;
    }
    (x_max - x_d) * (t_idle + t_ss) / s + r_new / s * sum
}

/// Every quantity of the model for one handover, from the old path to the new one.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Handover {
    pub r: f64,
    pub r_new: f64,
    pub x_d: f64,
    pub x_max: f64,
    pub t_d: f64,
    pub i_t: u32,
    pub i_x: u32,
    pub i_d: u32,
    pub x_c: f64,
    pub t_idle: f64,
    pub n_ss: i32,
    pub t_ss: f64,
    pub n_grow: i32,
    /// (1).
    pub n_lost: u64,
    /// (2).
    pub n_wasted: f64,
    /// (3), 0 unless the new path is faster.
    pub n_wasted_bigger: f64,
}

impl Handover {
    /// The table's "unused bandwidth" cell: (2) + (3), or 0 when the new path is slower.
    pub fn unused(&self) -> f64 {
        if self.x_max < self.x_d {
            0.0
        } else {
            self.n_wasted + self.n_wasted_bigger
        }
    }
}

/// The model for a handover from `from` to `to` (rates from the link bandwidths, RTTs
/// and t_D from the seed's formulas; see the module docs for each reading).
pub fn handover(from: &Link, to: &Link, a: &Assumptions) -> Handover {
    handover_at(a.rtt(from), from.bandwidth_bps / 8.0, to, a)
}

/// The model for a handover to `to` of a sender at rate `x_d` (bytes/s) with RTT `r`
/// (seconds) on the old path: [`handover`] with R and X_d given rather than derived
/// from the old link (e.g. measured in a simulation, or fitted by
/// [`fit_losses_row`]).
pub fn handover_at(r: f64, x_d: f64, to: &Link, a: &Assumptions) -> Handover {
    let (s, t_mbi) = (a.s, a.t_mbi);
    let r_new = a.rtt(to);
    let x_max = to.bandwidth_bps / 8.0;
    let t_d = a.handoff_time(to);
    let id = i_d(t_d, r, x_d, s, t_mbi);
    let x_c = x_i(id, x_d, s, t_mbi);
    let t_idle = s / (2.0 * x_c) + r_new;
    let n_ss = if x_c < x_d {
        ceil_log2(x_d / x_c) as i32 - 1
    } else {
        -1
    };
    let t_ss = (n_ss + 1) as f64 * r_new;
    let n_grow = if x_max > x_d {
        ceil_log2(x_max / x_d) as i32 - 1
    } else {
        -1
    };
    Handover {
        r,
        r_new,
        x_d,
        x_max,
        t_d,
        i_t: i_t(r, x_d, s),
        i_x: i_x(x_d, s, t_mbi),
        i_d: id,
        x_c,
        t_idle,
        n_ss,
        t_ss,
        n_grow,
        n_lost: n_lost(t_d, r, x_d, s, t_mbi),
        n_wasted: n_wasted(t_idle, x_d, x_c, r_new, n_ss, s),
        n_wasted_bigger: if x_max > x_d {
            n_wasted_bigger(x_max, x_d, t_idle, t_ss, r_new, n_grow, s)
        } else {
            0.0
        },
    }
}

/// The (R, X_d) that make equation (1) give a row of the seed's losses table.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RowFit {
    /// RTT, seconds.
    pub r: f64,
    /// X_d, bytes per second.
    pub x_d: f64,
    /// Equation (1) at (R, X_d) for each destination's t_D.
    pub values: [u64; 4],
    /// Sum of |paper − value| over the row.
    pub error: f64,
}

/// Search (R, X_d) on a grid (R from 20 ms to 3 s by 5 ms; X_d from 5 % to 400 % of
/// `x_nominal` by 0.5 %) for the pair whose equation-(1) losses at the four handoff
/// times `t_d` come closest to `paper` (sum of absolute differences; ties: the X_d
/// nearest `x_nominal`, then the smallest R). While every NFI lasts 4R, (1) depends
/// on R and X_d mostly through R·X_d, so the fit pins that product more than either;
/// the tie rule reports the R that goes with the nominal rate where it can. This asks
/// what R and X_d the seed's table implies; it is an analysis, not a default.
pub fn fit_losses_row(paper: &[f64; 4], t_d: &[f64; 4], x_nominal: f64, a: &Assumptions) -> RowFit {
    let mut best: Option<RowFit> = None;
    for ri in 4..=600 {
        let r = ri as f64 * 0.005;
        for fi in 10..=800 {
            let x_d = x_nominal * fi as f64 * 0.005;
            let values: [u64; 4] = std::array::from_fn(|k| n_lost(t_d[k], r, x_d, a.s, a.t_mbi));
            let error: f64 = values
                .iter()
                .zip(paper)
                .map(|(v, p)| (*v as f64 - p).abs())
                .sum();
            let better = match &best {
                None => true,
                Some(b) => {
                    error < b.error
                        || (error == b.error && (x_d - x_nominal).abs() < (b.x_d - x_nominal).abs())
                }
            };
            if better {
                best = Some(RowFit {
                    r,
                    x_d,
                    values,
                    error,
                });
            }
        }
    }
    best.expect("the grid is not empty")
}

/// For each row of the seed's losses table, the (R, X_d) that reproduce it best
/// (see [`fit_losses_row`]), with t_D the seed's handoff time of each destination.
pub fn fit_losses_table(a: &Assumptions) -> [RowFit; 4] {
    let links = seed_links();
    let t_d: [f64; 4] = std::array::from_fn(|j| a.handoff_time(&links[j]));
    std::array::from_fn(|i| fit_losses_row(&PAPER_LOSSES[i], &t_d, links[i].bandwidth_bps / 8.0, a))
}

/// One cell: the seed's number and mobiflow's.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Cell {
    pub paper: f64,
    pub computed: f64,
}

impl Cell {
    /// Equal after rounding both to whole packets.
    pub fn matches(&self) -> bool {
        self.paper.round() == self.computed.round()
    }
}

/// The seed's "Analytically-Derived Possible Performance Improvements" (rows: from,
/// columns: to, in [`TECHNOLOGIES`] order), paper and computed side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct ImprovementTable {
    pub technologies: [&'static str; 4],
    /// Packets lost over the disconnection, equation (1) (all avoided by freezing).
    pub losses: [[Cell; 4]; 4],
    /// Unused capacity after reconnection, (2) and (3), in 500-byte packets.
    pub unused: [[Cell; 4]; 4],
    pub handovers: [[Handover; 4]; 4],
}

impl ImprovementTable {
    /// Cells whose rounded values agree, out of 32.
    pub fn matching_cells(&self) -> usize {
        self.losses
            .iter()
            .chain(self.unused.iter())
            .flatten()
            .filter(|c| c.matches())
            .count()
    }
}

/// Compute the table from the seed's link characteristics and handoff times.
pub fn improvement_table(a: &Assumptions) -> ImprovementTable {
    let links = seed_links();
    table_of(std::array::from_fn(|i| {
        std::array::from_fn(|j| handover(&links[i], &links[j], a))
    }))
}

/// The table with each row's R and X_d given (`rx[i] = (R, X_d)` of the old network
/// `i`), e.g. the fitted ones of [`fit_losses_table`].
pub fn improvement_table_at(rx: &[(f64, f64); 4], a: &Assumptions) -> ImprovementTable {
    let links = seed_links();
    table_of(std::array::from_fn(|i| {
        std::array::from_fn(|j| handover_at(rx[i].0, rx[i].1, &links[j], a))
    }))
}

fn table_of(handovers: [[Handover; 4]; 4]) -> ImprovementTable {
    ImprovementTable {
        technologies: TECHNOLOGIES,
        losses: std::array::from_fn(|i| {
            std::array::from_fn(|j| Cell {
                paper: PAPER_LOSSES[i][j],
                computed: handovers[i][j].n_lost as f64,
            })
        }),
        unused: std::array::from_fn(|i| {
            std::array::from_fn(|j| Cell {
                paper: PAPER_UNUSED[i][j],
                computed: handovers[i][j].unused(),
            })
        }),
        handovers,
    }
}

impl std::fmt::Display for ImprovementTable {
    /// Both tables, "paper / computed" per cell.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (title, rows) in [
            ("Packet losses (1)", &self.losses),
            ("Unused bandwidth (2) & (3) [500 B packets]", &self.unused),
        ] {
            writeln!(f, "{title}: paper / computed")?;
            write!(f, "{:>9}", "from \\ to")?;
            for t in self.technologies {
                write!(f, " {t:>17}")?;
            }
            writeln!(f)?;
            for (name, row) in self.technologies.iter().zip(rows.iter()) {
                write!(f, "{name:>9}")?;
                for c in row {
                    write!(f, " {:>8.0}/{:<8.0}", c.paper, c.computed)?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: f64 = 500.0;
    const T_MBI: f64 = 64.0;

    #[test]
    fn rate_halves_per_nfi_down_to_one_packet_per_t_mbi() {
        // X_d = 100 packets/s: X_d·t_mbi/s = 6400, i_x = ⌈12.64⌉ = 13.
        let x_d = 100.0 * S;
        assert_eq!(i_x(x_d, S, T_MBI), 13);
        assert_eq!(x_i(0, x_d, S, T_MBI), x_d);
        assert_eq!(x_i(3, x_d, S, T_MBI), x_d / 8.0);
        assert_eq!(x_i(12, x_d, S, T_MBI), x_d / 4096.0);
        assert_eq!(x_i(13, x_d, S, T_MBI), S / T_MBI);
        assert_eq!(x_i(40, x_d, S, T_MBI), S / T_MBI);
    }

    #[test]
    fn nfi_length_is_four_rtts_then_two_packet_intervals() {
        // R = 0.1 s, X_d = 100 packets/s: 2R·X_d/s = 20, i_t = ⌈4.32⌉ = 5.
        let (r, x_d) = (0.1, 100.0 * S);
        assert_eq!(i_t(r, x_d, S), 5);
        for i in 0..5 {
            assert_eq!(t_rto_i(i, r, x_d, S, T_MBI), 0.4);
        }
        // i = 5: X^5 = 100/32 packets/s, 2s/X^5 = 0.64 s > 4R.
        assert!((t_rto_i(5, r, x_d, S, T_MBI) - 0.64).abs() < 1e-12);
        assert!((t_rto_i(13, r, x_d, S, T_MBI) - 128.0).abs() < 1e-9);
        assert!(i_t(r, x_d, S) <= i_x(x_d, S, T_MBI));
    }

    #[test]
    fn n_lost_within_the_first_nfi_is_seven_eighths_of_the_packets_sent() {
        // t_D = 0.3 s ≤ t_RTO^0 = 0.4 s: ⌊7/8 · 0.3 · 100⌋ = 26.
        assert_eq!(n_lost(0.3, 0.1, 100.0 * S, S, T_MBI), 26);
    }

    #[test]
    fn n_lost_sums_the_nfis_and_half_the_last() {
        // R = 0.1, X_d = 100 pkt/s, t_D = 1.0 s: NFIs end at 0.4, 0.8, 1.2 → i_D = 2.
        // 7/8·0.4·100 + 0.4·50 + 0.4·25/2 = 35 + 20 + 5 = 60.
        assert_eq!(i_d(1.0, 0.1, 100.0 * S, S, T_MBI), 2);
        assert_eq!(n_lost(1.0, 0.1, 100.0 * S, S, T_MBI), 60);
        // t_D = 3 s: NFIs 0–4 are 0.4 s (end 2.0), NFI 5 is 0.64 s (end 2.64), NFI 6 is
        // 1.28 s (end 3.92) → i_D = 6:
        // 35 + 0.4·(50+25+12.5+6.25) + 0.64·3.125 + 1.28·1.5625/2 = 35+37.5+2+1 = 75.5.
        assert_eq!(i_d(3.0, 0.1, 100.0 * S, S, T_MBI), 6);
        assert_eq!(n_lost(3.0, 0.1, 100.0 * S, S, T_MBI), 75);
    }

    #[test]
    fn n_wasted_counts_idle_time_and_slow_start_rounds() {
        // X_d = 100 pkt/s, X_c = 25 pkt/s, R_new = 0.1, t_idle = 0.2, n_ss = 1:
        // (0.2·100 + 0.1·(100−25) + 0.1·(100−50)) = 20 + 7.5 + 5 = 32.5 packets.
        let w = n_wasted(0.2, 100.0 * S, 25.0 * S, 0.1, 1, S);
        assert!((w - 32.5).abs() < 1e-9, "{w}");
        assert!((n_wasted(0.2, 100.0 * S, 100.0 * S, 0.1, -1, S) - 20.0).abs() < 1e-9);
    }

    #[test]
    fn n_wasted_bigger_counts_the_gap_and_the_growth() {
        // X_max = 400, X_d = 100 pkt/s, t_idle + t_ss = 0.4, R_new = 0.1, n_grow = 1:
        // 300·0.4 + 0.1·((400−100) + (400−200)) = 120 + 50 = 170 packets.
        let w = n_wasted_bigger(400.0 * S, 100.0 * S, 0.2, 0.2, 0.1, 1, S);
        assert!((w - 170.0).abs() < 1e-9, "{w}");
    }

    #[test]
    fn seed_handoff_times_follow_from_the_link_delays() {
        let a = Assumptions::default();
        let l = seed_links();
        let t: Vec<f64> = l.iter().map(|x| a.handoff_time(x)).collect();
        for (got, want) in t.iter().zip([2.85, 2.68, 2.62, 2.62]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn table_keeps_the_papers_numbers_beside_the_computed_ones() {
        let t = improvement_table(&Assumptions::default());
        assert_eq!(t.technologies, TECHNOLOGIES);
        for i in 0..4 {
            for j in 0..4 {
                assert_eq!(t.losses[i][j].paper, PAPER_LOSSES[i][j]);
                assert_eq!(t.unused[i][j].paper, PAPER_UNUSED[i][j]);
                assert_eq!(t.losses[i][j].computed, t.handovers[i][j].n_lost as f64);
            }
        }
    }

    #[test]
    fn table_matches_the_paper_where_the_seeds_inputs_suffice() {
        // Handovers to a slower network: the paper's zeros, by the reading above.
        let t = improvement_table(&Assumptions::default());
        for (i, j) in [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)] {
            assert!(t.unused[i][j].matches(), "unused[{i}][{j}]");
        }
        // Everything else is documented as not reproducible from the slides' inputs
        // (see the report); pin the computed values so that changes are noticed.
        let losses: Vec<u64> = t.handovers.iter().flatten().map(|h| h.n_lost).collect();
        assert_eq!(
            losses,
            [
                201, 151, 151, 151, 2885, 2885, 2885, 2885, 2413, 2413, 2413, 2413, 11846, 11846,
                11846, 11846
            ]
        );
        let unused: Vec<f64> = t
            .unused
            .iter()
            .flatten()
            .map(|c| c.computed.round())
            .collect();
        assert_eq!(
            unused,
            [
                78.0, 2473.0, 1976.0, 13397.0, 0.0, 1340.0, 1120.0, 9118.0, 0.0, 0.0, 1676.0,
                12029.0, 0.0, 0.0, 0.0, 8167.0
            ]
        );
    }
}

#[cfg(test)]
mod fit_tests {
    use super::*;

    #[test]
    fn the_seeds_losses_follow_from_equation_1_with_other_r_and_x_d() {
        // With the slides' R and X_d, equation (1) misses every cell of the losses
        // table (see the pinned values above); with a fitted (R, X_d) per row, it
        // comes within a few packets of each row. The fitted R differ from
        // 2·Delay_wireless + 0.1 s, which is the point of the analysis.
        let a = Assumptions::default();
        let fits = fit_losses_table(&a);
        for (i, f) in fits.iter().enumerate() {
            assert!(f.error <= 10.0, "row {i}: {f:?}");
        }
        // The fit is a search, not an identity: equation (1) at the fitted pair.
        let links = seed_links();
        for (i, f) in fits.iter().enumerate() {
            for (j, l) in links.iter().enumerate() {
                let td = a.handoff_time(l);
                assert_eq!(f.values[j], n_lost(td, f.r, f.x_d, a.s, a.t_mbi), "{i},{j}");
            }
        }
        let t = improvement_table_at(&fits.map(|f| (f.r, f.x_d)), &a);
        assert!(t.losses.iter().flatten().filter(|c| c.matches()).count() >= 6);
    }
}
