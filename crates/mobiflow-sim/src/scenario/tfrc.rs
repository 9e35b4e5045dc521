//! `transport = "tfrc"` / `"dccp-ccid3"` and `[flows.tfrc]`: TFRC (RFC 5348), DCCP
//! CCID 3 (RFC 4342) and Freeze-DCCP settings of a flow.

use super::walk::{as_bool, as_f64, as_u32, key_err, named, Tbl, R};
use super::Ctx;
use crate::model::{FreezeSide, FreezeSpec, FreezeWarning, TfrcSpec};
use crate::units::{duration_value, size_value};
use mobiflow_proto::tfrc::{FeedbackMode, InitialRate, TfrcConfig};
use mobiflow_proto::time::Duration;

named_enum! {
    impl FeedbackMode (
        "feedback mode",
        expected "\"timer\" (RFC 5348 §6) or \"ccval\" (RFC 4342 §10.3)",
        quoting lowercase
    ) {
        Timer = "timer",
        CcVal = "ccval",
    }
}

/// Keys of `[flows.tfrc]` (then [`FREEZE_KEYS`]).
pub(crate) const TFRC_KEYS: &[&str] = &[
    "s",
    "header_bytes",
    "feedback_bytes",
    "feedback",
    "ccid3",
    "initial_rate",
    "handshake_rtt",
    "t_mbi",
    "b",
    "ndupack",
    "initial_nofeedback",
    "rtt_q",
    "oscillation_prevention",
    "osc_q2",
    "t_gran",
    "min_p",
    "history_discounting",
    "freeze",
];

/// Keys of `[flows.tfrc]` that only Freeze-DCCP reads (listed after [`TFRC_KEYS`]).
const FREEZE_KEYS: &[&str] = &[
    "freeze_warning",
    "freeze_side",
    "freeze_signal_packets",
    "freeze_delta_p",
    "freeze_signal_retry",
    "freeze_fallback_on_loss_event",
];

/// Keys of `[[flows]]` that only a TCP flow has.
pub(crate) const TCP_ONLY_FLOW_KEYS: &[&str] =
    &["cc", "tcp", "flow_control", "afc", "autotune", "rsfc"];

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
    for k in TCP_ONLY_FLOW_KEYS {
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
    let mut cfg = if dccp {
        TfrcConfig::ccid3()
    } else {
        TfrcConfig::default()
    };
    let (hdr, fb) = wire_sizes(dccp);
    cfg.header_bytes = hdr;
    let mut feedback_bytes = fb;
    let mut freeze = None;
    let Some(t) = ft.table("tfrc")? else {
        return Ok(TfrcSpec {
            cfg,
            dccp,
            feedback_bytes,
            freeze,
        });
    };
    let keys: Vec<&str> = TFRC_KEYS.iter().chain(FREEZE_KEYS).copied().collect();
    t.check_keys(&keys)?;
    let positive = |k: &str, d: Duration| -> R<Duration> {
        if d == Duration::ZERO {
            Err(key_err(t.key(k), "must be more than zero"))
        } else {
            Ok(d)
        }
    };
    if let Some(s) = t.opt("s", size_value)? {
        if s == 0 || s > 65_000 {
            return Err(key_err(
                t.key("s"),
                format!("packet size {s} B is out of range (1 B to 65000 B)"),
            ));
        }
        cfg.s = s as u32;
    }
    if let Some(v) = t.opt("header_bytes", as_u32)? {
        cfg.header_bytes = v;
    }
    if let Some(v) = t.opt("feedback_bytes", as_u32)? {
        if v == 0 {
            return Err(key_err(t.key("feedback_bytes"), "must be more than zero"));
        }
        feedback_bytes = v;
    }
    if let Some(m) = t.opt("feedback", named::<FeedbackMode>)? {
        cfg.feedback = m;
    }
    if let Some(b) = t.opt("ccid3", as_bool)? {
        cfg.ccid3 = b;
    }
    if let Some(r) = t.opt("initial_rate", |v| {
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
    })? {
        cfg.initial_rate = r;
    }
    if let Some(d) = t.opt("handshake_rtt", duration_value)? {
        cfg.handshake_rtt = Some(positive("handshake_rtt", d)?);
    }
    if let Some(d) = t.opt("t_mbi", duration_value)? {
        cfg.t_mbi = positive("t_mbi", d)?;
    }
    if let Some(d) = t.opt("initial_nofeedback", duration_value)? {
        cfg.initial_nofeedback = positive("initial_nofeedback", d)?;
    }
    if let Some(d) = t.opt("t_gran", duration_value)? {
        cfg.t_gran = d;
    }
    let unit = |k: &str| -> R<Option<f64>> {
        t.opt(k, |v| {
            let x = as_f64(v)?;
            if !(0.0..1.0).contains(&x) {
                Err(format!("{x} is outside [0, 1)"))
            } else {
                Ok(x)
            }
        })
    };
    if let Some(q) = unit("rtt_q")? {
        cfg.rtt_q = q;
    }
    if let Some(q) = unit("osc_q2")? {
        cfg.osc_q2 = q;
    }
    if let Some(b) = t.opt("b", as_f64)? {
        if !(b >= 1.0 && b.is_finite()) {
            return Err(key_err(t.key("b"), format!("{b} is below 1")));
        }
        cfg.b = b;
    }
    if let Some(n) = t.opt("ndupack", as_u32)? {
        if n == 0 {
            return Err(key_err(t.key("ndupack"), "must be at least 1"));
        }
        cfg.ndupack = n;
    }
    if let Some(b) = t.opt("oscillation_prevention", as_bool)? {
        cfg.oscillation_prevention = b;
    }
    if let Some(p) = unit("min_p")? {
        cfg.min_p = p;
    }
    if let Some(b) = t.opt("history_discounting", as_bool)? {
        cfg.history_discounting = b;
    }
    if let Some(n) = t.opt("freeze_signal_packets", as_u32)? {
        if n == 0 {
            return Err(key_err(
                t.key("freeze_signal_packets"),
                "must be at least 1",
            ));
        }
        cfg.freeze_signal_packets = n;
    }
    if let Some(x) = t.opt("freeze_delta_p", as_f64)? {
        if !(x > 0.0 && x.is_finite()) {
            return Err(key_err(t.key("freeze_delta_p"), "must be more than zero"));
        }
        cfg.freeze_delta_p = x;
    }
    let retry_set = t.has("freeze_signal_retry");
    if let Some(d) = t.opt("freeze_signal_retry", duration_value)? {
        cfg.freeze_signal_retry = Some(positive("freeze_signal_retry", d)?);
    }
    let fallback_set = t.has("freeze_fallback_on_loss_event");
    if let Some(b) = t.opt("freeze_fallback_on_loss_event", as_bool)? {
        cfg.freeze_fallback_on_loss_event = b;
    }
    let on = t.opt("freeze", as_bool)?.unwrap_or(false);
    for &k in FREEZE_KEYS {
        if !on && t.has(k) {
            return Err(key_err(
                t.key(k),
                "only used with freeze = true (Freeze-DCCP is off for this flow)",
            ));
        }
    }
    if on {
        let warning = t.opt("freeze_warning", |v| {
            if v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("rtt")) {
                Ok(FreezeWarning::Rtt)
            } else {
                duration_value(v).map(FreezeWarning::Fixed)
            }
        })?;
        if warning.is_none() {
            ctx.assume(t.key("freeze_warning"), "rtt".into());
        }
        let side = t.opt("freeze_side", named::<FreezeSide>)?;
        if side.is_none() {
            ctx.assume(t.key("freeze_side"), "receiver".into());
        }
        if !retry_set {
            ctx.assume(t.key("freeze_signal_retry"), "1 RTT".into());
        }
        if !fallback_set {
            ctx.assume(
                t.key("freeze_fallback_on_loss_event"),
                cfg.freeze_fallback_on_loss_event.to_string(),
            );
        }
        freeze = Some(FreezeSpec {
            warning: warning.unwrap_or(FreezeWarning::Rtt),
            side: side.unwrap_or(FreezeSide::Receiver),
        });
    }
    Ok(TfrcSpec {
        cfg,
        dccp,
        feedback_bytes,
        freeze,
    })
}
