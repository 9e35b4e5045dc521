//! `transport = "tfrc"` / `"dccp-ccid3"` and `[flows.tfrc]`: TFRC (RFC 5348), DCCP
//! CCID 3 (RFC 4342) and Freeze-DCCP settings of a flow.

use super::params::{assume_unset, keys, read, set, Bad, Param};
use super::walk::{as_bool, as_f64, as_u32, key_err, named, Tbl, R};
use super::Ctx;
use crate::model::{FreezeSide, FreezeSpec, FreezeWarning, TfrcSpec};
use crate::named::Named;
use crate::units::{duration_value, format_duration, format_size, size_value};
use mobiflow_proto::tfrc::{FeedbackMode, InitialRate, TfrcConfig};
use mobiflow_proto::time::Duration;
use toml::Value;

/// What `[flows.tfrc]` sets: the TFRC configuration, the feedback packet's size and
/// the Freeze-DCCP trigger (`freeze` and the two keys that only it reads).
#[derive(Clone, Debug)]
pub(crate) struct TfrcTable {
    pub cfg: TfrcConfig,
    pub feedback_bytes: u32,
    pub freeze: bool,
    pub warning: Option<FreezeWarning>,
    pub side: Option<FreezeSide>,
}

impl TfrcTable {
    /// The defaults of a `"tfrc"` or (`dccp`) a `"dccp-ccid3"` flow.
    fn new(dccp: bool) -> Self {
        let mut cfg = if dccp {
            TfrcConfig::ccid3()
        } else {
            TfrcConfig::default()
        };
        let (hdr, feedback_bytes) = wire_sizes(dccp);
        cfg.header_bytes = hdr;
        TfrcTable {
            cfg,
            feedback_bytes,
            freeze: false,
            warning: None,
            side: None,
        }
    }
}

impl Default for TfrcTable {
    fn default() -> Self {
        TfrcTable::new(false)
    }
}

/// A time, more than zero (this table's wording).
fn more_than_zero(v: &Value) -> Result<Duration, String> {
    let d = duration_value(v)?;
    if d == Duration::ZERO {
        Err("must be more than zero".into())
    } else {
        Ok(d)
    }
}

/// A number in [0, 1).
fn unit_interval(v: &Value) -> Result<f64, String> {
    let x = as_f64(v)?;
    if !(0.0..1.0).contains(&x) {
        Err(format!("{x} is outside [0, 1)"))
    } else {
        Ok(x)
    }
}

/// An integer of at least 1.
fn at_least_one(v: &Value) -> Result<u32, String> {
    let n = as_u32(v)?;
    if n == 0 {
        Err("must be at least 1".into())
    } else {
        Ok(n)
    }
}

/// The error of a Freeze-DCCP key on a flow without `freeze = true`.
fn freeze_only(c: &TfrcTable) -> Result<(), Bad> {
    if c.freeze {
        Ok(())
    } else {
        Err("only used with freeze = true (Freeze-DCCP is off for this flow)".into())
    }
}

/// `"rfc3390"` or a number of packets per RTT (RFC 5348 §4.2).
fn initial_rate(v: &Value) -> Result<InitialRate, String> {
    if let Some(s) = v.as_str() {
        return if s.eq_ignore_ascii_case("rfc3390") {
            Ok(InitialRate::Rfc3390)
        } else {
            Err(format!(
                "expected \"rfc3390\" or a number of packets per RTT, found {s:?}"
            ))
        };
    }
    let n = as_u32(v)?;
    if n == 0 {
        return Err("needs at least 1 packet per RTT".into());
    }
    Ok(InitialRate::Packets(n))
}

/// `c.cfg.FIELD = PARSE(v)?`.
macro_rules! set_cfg {
    ($field:ident, $parse:expr) => {
        |c, v| {
            c.cfg.$field = ($parse)(v)?;
            Ok(())
        }
    };
}

/// `[flows.tfrc]`: TFRC (RFC 5348), DCCP CCID 3 (RFC 4342) and Freeze-DCCP (Mehani,
/// Boreli and Ernst, ACM MobiArch 2009). The keys are read in this order; a value is
/// checked before the rule that a `freeze_*` key needs `freeze = true`, except for
/// `freeze_warning` and `freeze_side`, which are only read when Freeze-DCCP is on.
type Tfrc = Param<TfrcTable>;
pub(crate) const TFRC: &[Tfrc] = &[
    Tfrc::new(
        "s",
        "size, 1 B–65000 B",
        |c, v| {
            let s = size_value(v)?;
            if s == 0 || s > 65_000 {
                return Err(format!("packet size {s} B is out of range (1 B to 65000 B)").into());
            }
            c.cfg.s = s as u32;
            Ok(())
        },
        |d| format_size(u64::from(d.cfg.s)),
        "Segment size s (RFC 5348 §3.1).",
    ),
    Tfrc::new(
        "header_bytes",
        "integer",
        set_cfg!(header_bytes, as_u32),
        |d| d.cfg.header_bytes.to_string(),
        "Wire bytes added to each data packet.",
    )
    .docs_default("40 (tfrc: IP 20 + UDP 8 + seq/timestamp/RTT 12), 36 (dccp: IP 20 + DCCP 16)"),
    Tfrc::new(
        "feedback_bytes",
        "integer > 0",
        |c, v| {
            let n = as_u32(v)?;
            if n == 0 {
                return Err("must be more than zero".into());
            }
            c.feedback_bytes = n;
            Ok(())
        },
        |d| d.feedback_bytes.to_string(),
        "Wire size of a feedback packet.",
    )
    .docs_default("44 (tfrc), 68 (dccp: DCCP-Ack with Loss Event Rate, Receive Rate and Timestamp Echo options)"),
    Tfrc::new(
        "feedback",
        "`\"timer\"`, `\"ccval\"`",
        set_cfg!(feedback, named::<FeedbackMode>),
        |d| d.cfg.feedback.name().into(),
        "When the receiver sends feedback (RFC 5348 §6 or RFC 4342 §10.3).",
    )
    .docs_default("`\"timer\"` (tfrc), `\"ccval\"` (dccp)"),
    Tfrc::new(
        "ccid3",
        "bool",
        set_cfg!(ccid3, as_bool),
        |d| d.cfg.ccid3.to_string(),
        "CCID 3 loss events by CCVal and the idle rule.",
    )
    .docs_default("false (tfrc), true (dccp)"),
    Tfrc::new(
        "initial_rate",
        "`\"rfc3390\"` or packets per RTT",
        set_cfg!(initial_rate, initial_rate),
        |d| match d.cfg.initial_rate {
            InitialRate::Rfc3390 => "rfc3390".into(),
            InitialRate::Packets(n) => n.to_string(),
        },
        "W_init of RFC 5348 §4.2.",
    ),
    Tfrc::new(
        "handshake_rtt",
        "time > 0",
        set_cfg!(handshake_rtt, |v| more_than_zero(v).map(Some)),
        |d| d.cfg.handshake_rtt.map_or_else(|| "none".into(), format_duration),
        "An RTT known before the first feedback (the sender then starts at W_init/R).",
    )
    .docs_default("none"),
    Tfrc::new(
        "t_mbi",
        "time > 0",
        set_cfg!(t_mbi, more_than_zero),
        |d| format_duration(d.cfg.t_mbi),
        "Maximum back-off interval: X ≥ s/t_mbi.",
    ),
    Tfrc::new(
        "b",
        "number ≥ 1",
        |c, v| {
            let b = as_f64(v)?;
            if !(b >= 1.0 && b.is_finite()) {
                return Err(format!("{b} is below 1").into());
            }
            c.cfg.b = b;
            Ok(())
        },
        |d| d.cfg.b.to_string(),
        "Packets per TCP ACK in the throughput equation.",
    ),
    Tfrc::new(
        "ndupack",
        "integer ≥ 1",
        set_cfg!(ndupack, at_least_one),
        |d| d.cfg.ndupack.to_string(),
        "Packets after a hole before it counts as lost (§5.1).",
    ),
    Tfrc::new(
        "initial_nofeedback",
        "time > 0",
        set_cfg!(initial_nofeedback, more_than_zero),
        |d| format_duration(d.cfg.initial_nofeedback),
        "First nofeedback timeout (§4.2).",
    ),
    Tfrc::new(
        "rtt_q",
        "number in [0, 1)",
        set_cfg!(rtt_q, unit_interval),
        |d| d.cfg.rtt_q.to_string(),
        "RTT filter constant q (§4.3).",
    ),
    Tfrc::new(
        "oscillation_prevention",
        "bool",
        set_cfg!(oscillation_prevention, as_bool),
        |d| d.cfg.oscillation_prevention.to_string(),
        "§4.5.",
    ),
    Tfrc::new(
        "osc_q2",
        "number in [0, 1)",
        set_cfg!(osc_q2, unit_interval),
        |d| d.cfg.osc_q2.to_string(),
        "Its filter constant.",
    ),
    // An assumption that TfrcConfig::assumed reports, not a `Scenario::assumed` entry:
    // the docs mark it by hand.
    Tfrc::new(
        "t_gran",
        "time",
        set_cfg!(t_gran, duration_value),
        |d| format_duration(d.cfg.t_gran),
        "Scheduling granularity (§4.6).",
    )
    .note("**[assumed]**"),
    Tfrc::new(
        "min_p",
        "number in [0, 1)",
        set_cfg!(min_p, unit_interval),
        |d| d.cfg.min_p.to_string(),
        "Smallest loss event rate the sender uses: a reported p with 0 < p < `min_p` counts as `min_p`, which caps the equation rate at X(`min_p`). ns-2's `Agent/DCCP/TFRC` has `s_smallest_p_` = 1e-5; RFC 5348 and RFC 4342 have no floor.",
    )
    .note("(no floor)"),
    Tfrc::new(
        "history_discounting",
        "bool",
        set_cfg!(history_discounting, as_bool),
        |d| d.cfg.history_discounting.to_string(),
        "Loss-history discounting (RFC 5348 §5.5, optional): while the open loss interval is more than twice the average, older intervals weigh less (DF ≥ 0.5, as ns-2's `Agent/TFRCSink`). Neither RFC 4342 nor ns-2's `Agent/DCCP/TFRC` discounts.",
    ),
    Tfrc::new(
        "freeze",
        "bool",
        set!(freeze, as_bool),
        |d| d.freeze.to_string(),
        "Freeze-DCCP (O. Mehani, R. Boreli, T. Ernst, \"Analysis of TFRC in Disconnected Scenarios and Performance Improvements with Freeze-DCCP\", ACM MobiArch 2009; schemes.md §4.3).",
    ),
    Tfrc::new(
        "freeze_warning",
        "time, or `\"rtt\"`",
        |c, v| {
            freeze_only(c)?;
            c.warning = Some(if v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("rtt")) {
                FreezeWarning::Rtt
            } else {
                FreezeWarning::Fixed(duration_value(v)?)
            });
            Ok(())
        },
        |d| match d.warning {
            None | Some(FreezeWarning::Rtt) => "rtt".into(),
            Some(FreezeWarning::Fixed(w)) => format_duration(w),
        },
        "How long before each disconnection the flow is frozen; `\"rtt\"` is the path's two-way propagation delay at the start.",
    )
    .assumed_when(|c| c.freeze),
    Tfrc::new(
        "freeze_side",
        "`\"sender\"`, `\"receiver\"`",
        |c, v| {
            freeze_only(c)?;
            c.side = Some(named::<FreezeSide>(v)?);
            Ok(())
        },
        |d| d.side.unwrap_or(FreezeSide::Receiver).name().into(),
        "The endpoint that predicts the disconnection and sees the reconnection (calls freeze/unfreeze).",
    )
    .assumed_when(|c| c.freeze),
    Tfrc::new(
        "freeze_signal_packets",
        "integer ≥ 1",
        |c, v| {
            c.cfg.freeze_signal_packets = at_least_one(v)?;
            freeze_only(c)
        },
        |d| d.cfg.freeze_signal_packets.to_string(),
        "Packets that carry a local FREEZE/UNFREEZE signal.",
    ),
    Tfrc::new(
        "freeze_delta_p",
        "number > 0",
        |c, v| {
            let x = as_f64(v)?;
            if !(x > 0.0 && x.is_finite()) {
                return Err("must be more than zero".into());
            }
            c.cfg.freeze_delta_p = x;
            freeze_only(c)
        },
        |d| d.cfg.freeze_delta_p.to_string(),
        "PROBING ends when p falls by more than p/`freeze_delta_p`.",
    ),
    Tfrc::new(
        "freeze_signal_retry",
        "time > 0",
        |c, v| {
            c.cfg.freeze_signal_retry = Some(more_than_zero(v)?);
            freeze_only(c)
        },
        |d| d.cfg.freeze_signal_retry.map_or_else(|| "1 RTT".into(), format_duration),
        "How often a receiver repeats its UNFREEZE feedback while nothing arrives.",
    )
    .docs_default("one RTT")
    .assumed_when(|c| c.freeze),
    Tfrc::new(
        "freeze_fallback_on_loss_event",
        "bool",
        |c, v| {
            c.cfg.freeze_fallback_on_loss_event = as_bool(v)?;
            freeze_only(c)
        },
        |d| d.cfg.freeze_fallback_on_loss_event.to_string(),
        "A restoring sender also falls back on a loss event that left p unchanged.",
    )
    .assumed_when(|c| c.freeze),
];

/// Wire sizes. TFRC over UDP: IPv4 20 + UDP 8 + the RFC 5348 §3.2.1 header (sequence
/// number, timestamp, RTT: 12) = 40 per data packet; a feedback packet carries the four
/// fields of §3.2.2 (16) = 44. DCCP: IPv4 20 + the generic header with 48-bit
/// sequence numbers (16) = 36 per DCCP-Data packet; a DCCP-Ack adds the acknowledgment
/// subheader (8) and the options Loss Event Rate (6), Receive Rate (6) and Timestamp
/// Echo with elapsed time (10), padded to 32 bits: 68.
fn wire_sizes(dccp: bool) -> (u32, u32) {
    if dccp {
        (36, 68)
    } else {
        (40, 44)
    }
}

/// The TFRC settings of flow `ft` (its `[flows.tfrc]` table, if any).
pub(crate) fn tfrc_spec(ft: &Tbl, dccp: bool, ctx: &mut Ctx) -> R<TfrcSpec> {
    for k in super::flow::tcp_only_flow_keys() {
        if ft.has(k) {
            return Err(key_err(
                ft.key(k),
                format!(
                    "only used by TCP flows; this flow's transport is {:?} (its settings go \
                     in [flows.tfrc])",
                    if dccp { "dccp-ccid3" } else { "tfrc" }
                ),
            ));
        }
    }
    let mut c = TfrcTable::new(dccp);
    if let Some(t) = ft.table("tfrc")? {
        t.check_keys(&keys(TFRC))?;
        read(&t, TFRC, &mut c)?;
        assume_unset(ctx, &t.path, Some(&t), TFRC, &c);
    }
    let freeze = c.freeze.then(|| FreezeSpec {
        warning: c.warning.unwrap_or(FreezeWarning::Rtt),
        side: c.side.unwrap_or(FreezeSide::Receiver),
    });
    Ok(TfrcSpec {
        cfg: c.cfg,
        dccp,
        feedback_bytes: c.feedback_bytes,
        freeze,
    })
}
