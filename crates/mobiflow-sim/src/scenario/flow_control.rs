//! `flow_control` and its parameter tables `[flows.afc]`, `[flows.autotune]`,
//! `[flows.rsfc]` and `[flows.linux]`, and the pages of a web app, `[flows.web]`: one
//! declaration each.

use super::params::{assume_unset, keys, read, set, Bad, Param};
use super::walk::{
    as_bool, as_f64, as_str, as_u32, duration_or, duration_or_rtt, expected, key_err,
    positive_duration, positive_size, text_or_rtt, Tbl, R,
};
use super::Ctx;
use crate::model::WebSpec;
use crate::units::{format_duration, format_size};
use mobiflow_proto::flow::{
    AfcConfig, AutotuneConfig, Estimator, FlowControl, FlowControlName, Growth, LinuxRcvConfig,
    Placement, RsfcConfig,
};
use mobiflow_proto::named::Named;
use toml::Value;

/// `[flows.afc]` (Sanadhya and Sivakumar, "Adaptive Flow Control for TCP on Mobile
/// Phones", IEEE INFOCOM 2011). The seed gives no numbers: every numeric default is
/// assumed.
type Afc = Param<AfcConfig>;
pub(crate) const AFC: &[Afc] = &[
    Afc::new(
        "placement",
        "`\"sender\"` / `\"receiver\"`",
        set!(placement, |v| as_str(v)?.parse::<Placement>()),
        |d| d.placement.name().into(),
        "`sender`: the receiver advertises the free space and carries AR in a 2-byte TCP option (one byte: 1000 B/s x 2^((k-1)/12), 0 for none); the sender adds AR x SRTT. `receiver`: the receiver advertises free space + AR x its own RTT estimate (timestamps, or the time to receive one window), with no option; the ACK of a segment dropped for want of buffer space carries the bare free space (zero).",
    )
    .assumed(),
    Afc::new(
        "adapt_rate",
        "bool",
        set!(adapt_rate, as_bool),
        |d| d.adapt_rate.to_string(),
        "Mechanism 1: the flow window.",
    ),
    Afc::new(
        "hide_buffer_losses",
        "bool",
        set!(hide_buffer_losses, as_bool),
        |d| d.hide_buffer_losses.to_string(),
        "Mechanism 2: after an ACK offering less than one segment, fast retransmits and timeouts change neither cwnd nor ssthresh nor the RTO backoff (the data is still resent) until data sent after the window reopened is acknowledged.",
    ),
    Afc::new(
        "proactive_feedback",
        "bool",
        set!(proactive_feedback, as_bool),
        |d| d.proactive_feedback.to_string(),
        "Mechanism 3: a window update (with the option) as soon as AR differs from what the sender last heard by more than `feedback_threshold`.",
    ),
    Afc::new(
        "pacing",
        "bool",
        set!(pacing, as_bool),
        |d| d.pacing.to_string(),
        "Mechanism 4: when the usable window jumps by more than `burst_segments`, the rest is paced at max(AR, cwnd/SRTT).",
    ),
    Afc::new(
        "ar_alpha",
        "number in (0, 1]",
        set!(ar_alpha, as_f64),
        |d| d.ar_alpha.to_string(),
        "EWMA weight of a new AR sample.",
    )
    .assumed(),
    Afc::new(
        "ar_sample_interval",
        "time, > 0",
        set!(ar_sample_interval, positive_duration),
        |d| format_duration(d.ar_sample_interval),
        "Interval over which one AR sample is measured (an interval without reads is a sample of 0).",
    )
    .assumed(),
    Afc::new(
        "feedback_threshold",
        "number > 0",
        set!(feedback_threshold, as_f64),
        |d| d.feedback_threshold.to_string(),
        "Relative change of AR that triggers proactive feedback (changes below one segment per sampling interval do not count).",
    )
    .assumed(),
    Afc::new(
        "feedback_min_interval",
        "time, or `\"rtt\"`",
        set!(feedback_min_interval, duration_or_rtt),
        |d| text_or_rtt(d.feedback_min_interval),
        "Shortest time between two proactive updates; `\"rtt\"`: the receiver's RTT estimate (`ar_sample_interval` before it has one).",
    )
    .assumed(),
    Afc::new(
        "burst_segments",
        "integer ≥ 1",
        set!(burst_segments, as_u32),
        |d| d.burst_segments.to_string(),
        "A usable-window jump larger than this many segments is paced.",
    )
    .assumed(),
];

/// `[flows.autotune]`: the receive-buffer auto-tuning baseline of the AFC paper. Every
/// default is assumed.
type Autotune = Param<AutotuneConfig>;
pub(crate) const AUTOTUNE: &[Autotune] = &[
    Autotune::new(
        "initial_buf",
        "size, > 0",
        set!(initial_buf, positive_size),
        |d| format_size(d.initial_buf),
        "Buffer granted before the first evaluation (Linux: 87380 x 3/4).",
    )
    .assumed(),
    Autotune::new(
        "min_buf",
        "size, ≤ `initial_buf`",
        set!(min_buf, positive_size),
        |d| format_size(d.min_buf),
        "Smallest grant (never below one MSS).",
    )
    .assumed(),
    Autotune::new(
        "headroom",
        "number > 0",
        set!(headroom, as_f64),
        |d| d.headroom.to_string(),
        "Factor on min(perceived NW, AAR) x RTT: 1 is the seed's formula, Linux's dynamic right-sizing uses 2.",
    )
    .assumed(),
    Autotune::new(
        "grow_only",
        "bool",
        set!(grow_only, as_bool),
        |d| d.grow_only.to_string(),
        "Never shrink the grant (as Linux).",
    )
    .assumed(),
    Autotune::new(
        "interval",
        "time, or `\"rtt\"`",
        set!(interval, duration_or_rtt),
        |d| text_or_rtt(d.interval),
        "Evaluation period; `\"rtt\"`: the receiver's RTT estimate (100 ms before it has one).",
    )
    .assumed(),
];

/// `[flows.linux]`: Linux's receive buffer (`flow::linux`). The defaults are the
/// kernel's: `tcp_rmem[1]` and `TCP_DEFAULT_SCALING_RATIO`.
type LinuxRcv = Param<LinuxRcvConfig>;
pub(crate) const LINUX: &[LinuxRcv] = &[
    LinuxRcv::new(
        "initial_buf",
        "size, > 0",
        set!(initial_buf, positive_size),
        |d| format_size(d.initial_buf),
        "The buffer a connection starts with (`tcp_rmem[1]`); auto-tuning grows it from there up to the buffer whose window is `rcv_buf`.",
    ),
    LinuxRcv::new(
        "scaling_ratio",
        "number in (0, 1]",
        set!(scaling_ratio, as_f64),
        |d| d.scaling_ratio.to_string(),
        "The part of the buffer that is window (`scaling_ratio` / 256, `tcp_win_from_space`). The kernel learns it from the first packets (payload / skb truesize, which depends on the network device's driver) and starts from one half (`TCP_DEFAULT_SCALING_RATIO`); `mobiflow live compare` sets it to the ratio the kernel measured on its TUN device (200 / 256 = 0.78125 there).",
    ),
];

/// `[flows.rsfc]` (Xu, Leong, Leong and Razeen, "Dynamic Regulation of Mobile 3G/HSPA
/// Uplink Buffer with Receiver-side Flow Control", IEEE ICNP 2012). The slides give the
/// control law and `T = RTT_min`; the rest is assumed.
type Rsfc = Param<RsfcConfig>;
pub(crate) const RSFC: &[Rsfc] = &[
    Rsfc::new(
        "estimator",
        "`\"owd\"` / `\"echo\"`",
        set!(estimator, |v| as_str(v)?.parse::<Estimator>()),
        |d| d.estimator.name().into(),
        "`owd`: one-way-delay variation, `d = t_arrival - g x TSval`, `t_buff = d - min d` over `rtt_min_window` (the unknown clock offset cancels). `echo`: the receiver's RTT sample `r` from the echo (TSecr) of its own TSval, `t_buff = r - RTT_min`.",
    )
    .assumed(),
    Rsfc::new(
        "ts_tick",
        "time, or `\"auto\"`",
        set!(ts_tick, duration_or("auto")),
        |d| d.ts_tick.map_or_else(|| "auto".into(), format_duration),
        "The phone's TSval tick `g` for `owd`. `\"auto\"`: (arrival span) / (TSval span) from the first data segment, once the arrivals span 1 s, snapped to the nearest of 1, 4 and 10 ms (unless more than a factor of 2 from all of them), refined with every segment.",
    )
    .assumed(),
    Rsfc::new(
        "rho_window",
        "time, or `\"rtt_min\"`",
        set!(rho_window, duration_or("rtt_min")),
        |d| d.rho_window.map_or_else(|| "rtt_min".into(), format_duration),
        "Window of the receive-rate measurement (bytes arrived in the window / the window).",
    )
    .assumed(),
    Rsfc::new(
        "rtt_min_window",
        "time, > 0",
        set!(rtt_min_window, positive_duration),
        |d| format_duration(d.rtt_min_window),
        "`RTT_min` (and `min d`) is the minimum over this window, so that a change of the base RTT is tracked. `RTT_min` comes from the echo samples with either estimator.",
    )
    .assumed(),
    Rsfc::new(
        "threshold_factor",
        "number > 0",
        set!(threshold_factor, as_f64),
        |d| d.threshold_factor.to_string(),
        "`T = threshold_factor x RTT_min` (the slides: `T = RTT_min`).",
    ),
    Rsfc::new(
        "growth",
        "`\"per_rtt\"` / `\"per_ack\"`",
        set!(growth, |v| as_str(v)?.parse::<Growth>()),
        |d| d.growth.name().into(),
        "SLOW growth, \"rwnd++\" on the slides: one MSS per RTT, or one MSS per data segment received.",
    )
    .assumed(),
    Rsfc::new(
        "monitor",
        "bool",
        set!(monitor, as_bool),
        |d| d.monitor.to_string(),
        "The MONITOR state (hold one RTT after a clamp); off for the seed's ablation.",
    ),
    Rsfc::new(
        "rho_check",
        "bool",
        set!(rho_check, as_bool),
        |d| d.rho_check.to_string(),
        "Leave MONITOR (or FAST) for SLOW when rho rose by more than `rho_rise`; off for the seed's ablation.",
    ),
    Rsfc::new(
        "rho_rise",
        "number ≥ 0",
        set!(rho_rise, as_f64),
        |d| d.rho_rise.to_string(),
        "Relative rise of rho that counts.",
    )
    .assumed(),
    Rsfc::new(
        "initial_rwnd",
        "segments (integer ≥ 1), or `\"buffer\"`",
        set!(initial_rwnd_segments, |v: &Value| match v {
            Value::String(s) if s.eq_ignore_ascii_case("buffer") => Ok(None),
            Value::Integer(_) => as_u32(v).map(Some),
            other => Err(expected(
                "a number of segments or \"buffer\" (the whole receive buffer)",
                other,
            )),
        }),
        |d| {
            d.initial_rwnd_segments
                .map_or_else(|| "buffer".into(), |n| n.to_string())
        },
        "The first window: Linux's initial receive window (10 segments since 3.0), the kernel the seed's RSFC was built in. `\"buffer\"` offers the whole receive buffer first, as classic flow control does; since the right edge never moves back, a clamp then only bites once the data in flight has used that offer up (with a 4 MiB buffer and a 2 Mb/s uplink, ~17 s).",
    )
    .assumed(),
    Rsfc::new(
        "rebase_after",
        "integer ≥ 0",
        set!(rebase_after, as_u32),
        |d| d.rebase_after.to_string(),
        "MONITOR holds in a row that must end with `t_buff` within a tenth of its value at the clamp, under the clamped window, before `RTT_min` and `min d` restart (a delay increase, not a queue); 0 never. A clamped window drains a real queue within one hold; the second confirms.",
    )
    .assumed(),
];

/// `[flows.web]`: the pages of a web application. Defaults: 44 objects of 7475 bytes
/// (7.3 KiB), i.e. a 321 KiB page, from the figures the FLD_TCP slides cite (Google web
/// metrics, Ramachandran 2010: average page 320 KB, average GET 7.3 KB); the request
/// size, the connections, the think time and fetching the main document first are
/// assumptions.
type Web = Param<WebSpec>;
pub(crate) const WEB: &[Web] = &[
    Web::new(
        "pages",
        "integer ≥ 1",
        set!(pages, |v| match as_u32(v)? {
            0 => Err("must be at least 1 (leave it out to load pages until the end)".to_string()),
            n => Ok(Some(n)),
        }),
        |_| String::new(),
        "Pages to load.",
    )
    .default_text("until the end of the run"),
    Web::new(
        "think",
        "time",
        set!(think, crate::units::duration_value),
        |d| format_duration(d.think),
        "Pause between the end of a page and the next page's first request.",
    )
    .assumed(),
    Web::new(
        "objects",
        "integer ≥ 1",
        set!(objects, |v| match as_u32(v)? {
            0 => Err("must be at least 1".to_string()),
            n => Ok(n),
        }),
        |d| d.objects.to_string(),
        "Objects per page: the average page (320 KB) over the average GET (7.3 KB) of the web metrics (Ramachandran, Google, 2010) that the FLD_TCP slides cite (G. R. Moktan, \"In the Interest of the Short: An approach for e2e congestion control\", talk slides, Aalto University, 2012).",
    ),
    Web::new(
        "object_size",
        "size, or array of sizes",
        set!(object_sizes, |v: &Value| match v {
            Value::Array(a) if a.is_empty() => Err(Bad::from("needs at least one size")),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(j, x)| {
                    positive_size(x).map_err(|reason| Bad {
                        index: Some(j),
                        reason,
                    })
                })
                .collect(),
            x => Ok(vec![positive_size(x)?]),
        }),
        |d| {
            let sizes: Vec<String> = d.object_sizes.iter().map(|&b| format_size(b)).collect();
            sizes.join(", ")
        },
        "Response size; object k of a page has `object_size[k % len]`.",
    )
    .note("(7.3 KiB)"),
    Web::new(
        "request_size",
        "size",
        set!(request_size, positive_size),
        |d| format_size(d.request_size),
        "Bytes of each request (HTTP/1.1 request headers run to several hundred bytes).",
    )
    .assumed(),
    Web::new(
        "connections",
        "integer, 1-64",
        set!(connections, |v| match as_u32(v)? {
            n if n == 0 || n > 64 => Err("must be between 1 and 64".to_string()),
            n => Ok(n),
        }),
        |d| d.connections.to_string(),
        "Persistent connections (browsers' per-host limit).",
    )
    .assumed(),
    Web::new(
        "main_first",
        "bool",
        set!(main_first, as_bool),
        |d| d.main_first.to_string(),
        "Fetch the main document alone first.",
    )
    .assumed(),
];

/// Reads the optional table `name` of flow `ft` into `C`'s defaults by its declaration,
/// checks it, and reports the assumed defaults it keeps as `flows.<i>.<name>.<key>`.
pub(crate) fn table<C: Default>(
    ft: &Tbl,
    name: &str,
    ps: &[Param<C>],
    validate: fn(&C) -> Result<(), (&'static str, String)>,
    ctx: &mut Ctx,
) -> R<C> {
    let mut c = C::default();
    let t = ft.table(name)?;
    if let Some(t) = &t {
        t.check_keys(&keys(ps))?;
        read(t, ps, &mut c)?;
        if let Err((f, why)) = validate(&c) {
            return Err(key_err(t.key(f), why));
        }
    }
    assume_unset(ctx, &ft.key(name), t.as_ref(), ps, &c);
    Ok(c)
}

/// `flow_control` and its parameter table (`[flows.afc]`, `[flows.autotune]`,
/// `[flows.rsfc]` or `[flows.linux]`). Defaults that are assumptions (the seeds give
/// no value) are reported.
pub(crate) fn flow_control(ft: &Tbl, ctx: &mut Ctx, profile: &FlowControl) -> R<FlowControl> {
    let set = ft.opt("flow_control", |v| FlowControlName::parse(as_str(v)?))?;
    // Unset: the profile's (`linux` auto-tunes, the others are classic).
    let kind = set.map_or_else(|| profile.name(), FlowControlName::name);
    for table in ["afc", "autotune", "rsfc", "linux"] {
        if ft.has(table) && kind != table {
            return Err(key_err(
                ft.key(table),
                format!("only used with flow_control = {table:?} (flow_control is {kind:?})"),
            ));
        }
    }
    // The policy named, or the profile's; a policy with a parameter table reads it
    // (absent, its defaults), any other keeps its parameters.
    Ok(
        match set.map_or_else(|| profile.clone(), FlowControlName::kind) {
            FlowControl::Afc(_) => {
                FlowControl::Afc(table(ft, "afc", AFC, AfcConfig::validate, ctx)?)
            }
            FlowControl::Autotune(_) => FlowControl::Autotune(table(
                ft,
                "autotune",
                AUTOTUNE,
                AutotuneConfig::validate,
                ctx,
            )?),
            FlowControl::Rsfc(_) => {
                FlowControl::Rsfc(table(ft, "rsfc", RSFC, RsfcConfig::validate, ctx)?)
            }
            FlowControl::Linux(_) => {
                FlowControl::Linux(table(ft, "linux", LINUX, LinuxRcvConfig::validate, ctx)?)
            }
            other => other,
        },
    )
}

/// `[flows.web]`.
pub(crate) fn web(ft: &Tbl, ctx: &mut Ctx) -> R<WebSpec> {
    table(ft, "web", WEB, |_| Ok(()), ctx)
}
