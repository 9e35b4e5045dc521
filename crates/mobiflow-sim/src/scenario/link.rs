//! `[[links]]`: nodes, rates, delays, schedules, traces, queues, outages, handoffs.
//!
//! A handoff (a change of the access link's datalink interface, as in Tsukamoto, Fukuda,
//! Hori and Oie, "New flow control schemes of TCP for multimodal mobile hosts", IEICE
//! Trans. Commun. E89-B(6), 2006) is sugar:
//! `handoffs = [{ at, interruption, rate, delay }]` lowers to an outage
//! `[at, at + interruption)` on both directions plus rate and delay schedule points at
//! its end, so `DirSpec::outages` stays the one description of disconnections.

use super::params::{keys, Param};
use super::walk::{
    as_array, as_bool, as_f64, as_name, as_pair, as_span, as_str, as_u32, key_err, named,
    positive_duration, Tbl, R,
};
use super::Ctx;
use crate::model::{
    DelayModel, DirSpec, LinkSpec, MahimahiTrace, QueueLimit, QueueSpec, RateModel, RedParams,
};
use crate::units::{
    duration_value, format_duration, format_queue_limit, queue_limit_value, rate_value, size_value,
};
use mobiflow_proto::named_enum;
use mobiflow_proto::time::Duration;
use std::collections::HashSet;
use std::path::PathBuf;

/// `[[links]]` keys that only a link sets, not its directions (declared once: the
/// allowed keys and the docs' table come from here; the parsing is hand-written, since
/// the keys depend on one another).
pub(crate) const LINK_ONLY: &[Param<()>] = &[
    Param::manual(
        "name",
        "string",
        "`\"link<i>\"` (`link0`, `link1`, ...)",
        "Unique. No `.`, and not all digits, so that `--set` can address it.",
    ),
    Param::manual("a", "node name", "required", "One end of the link."),
    Param::manual(
        "b",
        "node name",
        "required",
        "The other end; it must differ from `a`. Direction `ab` carries a -> b, `ba` carries b -> a.",
    ),
    Param::manual(
        "ab",
        "table",
        "",
        "Settings for the a -> b direction only; see [Per-direction settings](#per-direction-settings).",
    ),
    Param::manual("ba", "table", "", "Settings for the b -> a direction only."),
    Param::manual(
        "handoffs",
        "array of tables",
        "none",
        "Changes of the link's datalink interface (link level only, both directions); see [Handoffs and mobility events](#handoffs-and-mobility-events).",
    ),
];

/// Keys a link or one of its directions (`[links.ab]`, `[links.ba]`) may set.
pub(crate) const DIR: &[Param<()>] = &[
    Param::manual(
        "rate",
        "rate, > 0",
        "one of `rate`, `rate_schedule`, `trace` is required",
        "Constant serialisation rate.",
    ),
    Param::manual(
        "rate_schedule",
        "array of `[time, rate]`",
        "",
        "Piecewise-constant rate: each point holds until the next one. The first point must be at `\"0s\"`. Times must be strictly increasing. A rate may be 0 (nothing is sent), but not every rate.",
    ),
    Param::manual(
        "trace",
        "path",
        "",
        "A Mahimahi trace (see below). The path is relative to the scenario file's directory.",
    ),
    Param::manual(
        "trace_mtu",
        "size, bytes",
        "1500",
        "Bytes per trace delivery opportunity (Mahimahi's MTU). Only allowed where a trace is used.",
    ),
    Param::manual(
        "delay",
        "time",
        "one of `delay`, `delay_schedule` is required",
        "One-way propagation delay.",
    ),
    Param::manual(
        "delay_schedule",
        "array of `[time, delay]`",
        "",
        "Piecewise-constant delay, with the same rules as `rate_schedule`.",
    ),
    Param::manual(
        "schedule_period",
        "time, > 0",
        "none (the last value holds forever)",
        "Makes `rate_schedule` and `delay_schedule` repeat with this period. Every point must come before it. Only allowed where a schedule is used.",
    ),
    Param::manual(
        "queue",
        "`\"droptail\"` or `\"red\"`",
        "`\"droptail\"`",
        "Queue discipline at the sending end of each direction.",
    ),
    Param::manual(
        "queue_limit",
        "queue limit, > 0",
        "`\"100p\"`",
        "Queue capacity, in packets or bytes.",
    )
    .assumed()
    .note("(ns-2's default is 50 packets)"),
    Param::manual(
        "red",
        "table",
        "see below",
        "RED parameters. Only allowed where `queue = \"red\"`.",
    ),
    Param::manual(
        "outages",
        "array of `[start, end]`",
        "none",
        "Intervals `[start, end)` in which the direction carries nothing. Whatever is queued or in flight when an outage starts is lost. Each outage must have end > start. Outages must be sorted and must not overlap. They do not repeat.",
    ),
    Param::manual(
        "loss",
        "probability in [0, 1): a number (`0.01`) or a percentage string (`\"1%\"`)",
        "0 (none)",
        "Random loss: each packet arriving at the direction is lost with this probability, independently, before the queue (like ns-2's uniform `ErrorModel`). Draws come from the run's seed, so a scenario with `loss` > 0 gives different results per seed. Counted as `random_losses` in the link summary.",
    ),
    Param::manual(
        "fifo",
        "bool",
        "false",
        "Keep the direction first-in first-out. Off (ns-2's behaviour), each packet takes the delay in force when its transmission starts (ns-2's `LinkDelay`), so when the delay drops (a `delay_schedule` step down, a handoff to a shorter path) packets sent after the change overtake those still in flight, as on a real path. On, a packet never arrives before one sent earlier (mobiflow's behaviour before issue 17). Counted as `reordered` in the link summary either way.",
    ),
    Param::manual(
        "reorder",
        "probability in [0, 1)",
        "0 (none)",
        "Random reordering: each packet is held back `reorder_delay` longer in propagation with this probability, so packets sent within that time overtake it. Needs `reorder_delay`.",
    ),
    Param::manual(
        "reorder_delay",
        "duration",
        "—",
        "How much longer a reordered packet takes (only with `reorder`).",
    ),
    Param::manual(
        "duplicate",
        "probability in [0, 1)",
        "0 (none)",
        "Random duplication: each packet arrives twice at the far end (the copy right after the original) with this probability; counted as `duplicated`. The live emulator writes such a packet twice.",
    ),
];

/// Keys of one entry of `handoffs`.
pub(crate) const HANDOFF: &[Param<()>] = &[
    Param::manual(
        "at",
        "time",
        "required",
        "When the old interface goes down.",
    ),
    Param::manual(
        "interruption",
        "time, > 0",
        "required",
        "How long neither interface carries anything.",
    ),
    Param::manual(
        "rate",
        "rate, > 0",
        "unchanged",
        "The new interface's rate (both directions).",
    ),
    Param::manual(
        "delay",
        "time",
        "unchanged",
        "Its propagation delay (both directions).",
    ),
];

/// One handoff: the link goes down at `at` for `interruption`, and comes back with
/// `rate` and `delay` (unchanged when not given).
struct Handoff {
    at: Duration,
    interruption: Duration,
    rate: Option<u64>,
    delay: Option<Duration>,
}

/// Keys of a `red` table (ns-2.35's defaults, `tcl/lib/ns-default.tcl`, and
/// `queue/red.cc`).
pub(crate) const RED: &[Param<()>] = &[
    Param::manual(
        "min_th",
        "packets (number ≥ 0) or `\"auto\"`",
        "`\"auto\"` (ns-2.35 `thresh_ 0`)",
        "Lower threshold of the average queue. `\"auto\"`: 5 packets, or half the queue that `target_delay` gives at the direction's initial rate in `mean_pktsize` packets, if more.",
    ),
    Param::manual(
        "max_th",
        "packets (number > `min_th`) or `\"auto\"`",
        "`\"auto\"` (`maxthresh_ 0`)",
        "Upper threshold. `\"auto\"`: 3 `min_th`.",
    ),
    Param::manual(
        "w_q",
        "number in (0, 1] or `\"auto\"`",
        "`\"auto\"` (`q_weight_ -1`)",
        "EWMA weight of the average queue. `\"auto\"`: 1 − exp(−1 / (10 · RTT · C)), C the initial rate in `mean_pktsize` packets per second, RTT = max(0.1 s, 3 (delay + 1/C)).",
    ),
    Param::manual(
        "max_p",
        "number in (0, 1]",
        "0.1 (`linterm_ 10`)",
        "Drop probability at `max_th`.",
    ),
    Param::manual(
        "gentle",
        "bool",
        "true (`gentle_ true`)",
        "Gentle RED: the probability ramps from `max_p` to 1 between `max_th` and 2 `max_th`.",
    ),
    Param::manual(
        "mean_pktsize",
        "bytes (integer > 0)",
        "500 (`mean_pktsize_ 500`)",
        "Average packet size: the idle-time decay, the automatic values, the byte modes.",
    ),
    Param::manual(
        "wait",
        "bool",
        "true (`wait_ true`)",
        "Wait between drops: no early drop until count · p ≥ 1, then p / (2 − count · p); off: p / (1 − count · p) (Floyd & Jacobson §7).",
    ),
    Param::manual(
        "bytes",
        "bool",
        "true (`bytes_ true`)",
        "Byte mode: `count` in mean-sized packets, and the probability scaled by the packet's size over `mean_pktsize`.",
    ),
    Param::manual(
        "queue_in_bytes",
        "bool",
        "true (`queue_in_bytes_ true`)",
        "The average follows the queue in bytes; the thresholds are then `min_th`, `max_th` times `mean_pktsize`.",
    ),
    Param::manual(
        "target_delay",
        "duration",
        "`\"5ms\"` (`targetdelay_ 0.005`)",
        "Target queueing delay of the automatic `min_th`.",
    ),
];

named_enum! {
    /// `queue`: the discipline at the sending end of a direction.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    enum Queue ("queue", expected "droptail or red") {
        DropTail = "droptail" | "drop-tail" | "drop_tail",
        Red = "red",
    }
}

pub(crate) const DEFAULT_QUEUE_LIMIT: QueueLimit = QueueLimit::Packets(100);

/// Bytes per Mahimahi delivery opportunity (Mahimahi's MTU).
pub(crate) const DEFAULT_TRACE_MTU: u32 = 1500;

/// RED defaults: ns-2.35's (`tcl/lib/ns-default.tcl`, `Queue/RED set ...`), each
/// settable: `thresh_ 0`, `maxthresh_ 0` and `q_weight_ -1` ("auto": computed from the
/// link's rate and delay by `REDQueue::initialize_params`, with `targetdelay_ 0.005`),
/// `linterm_ 10` (max_p 0.1), `gentle_ true`, `wait_ true`, `bytes_ true`,
/// `queue_in_bytes_ true`, `mean_pktsize_ 500`. One difference: with
/// `queue_in_bytes_`, ns-2 also reads `limit_` as `limit_ * mean_pktsize_` bytes;
/// here `queue_limit` says its own unit ("20p" or "10000B").
const RED_DEFAULT_MAX_P: f64 = 0.1;
const RED_DEFAULT_GENTLE: bool = true;
const RED_DEFAULT_WAIT: bool = true;
const RED_DEFAULT_BYTES: bool = true;
const RED_DEFAULT_QUEUE_IN_BYTES: bool = true;
const RED_DEFAULT_MEAN_PKTSIZE: u32 = 500;
const RED_DEFAULT_TARGET_DELAY: Duration = Duration::from_millis(5);

/// A RED threshold or weight: a number, or "auto" (`None`) for ns-2.35's automatic
/// value.
fn auto_f64(v: &toml::Value) -> Result<Option<f64>, String> {
    if let Ok(s) = as_str(v) {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(None);
        }
        return Err(format!("expected a number or \"auto\", got {s:?}"));
    }
    as_f64(v).map(Some)
}

/// What the links declare.
pub(crate) struct Links {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
}

pub(crate) fn parse_links(root: &Tbl, ctx: &mut Ctx) -> R<Links> {
    let arr = root.items("links", "link", "a, b, rate and delay")?;
    let mut nodes: Vec<String> = Vec::new();
    let mut links: Vec<LinkSpec> = Vec::new();
    for (i, v) in arr.iter().enumerate() {
        let path = format!("links.{i}");
        let t = v.as_table().ok_or_else(|| {
            key_err(
                &path,
                super::walk::expected("a table (a [[links]] entry)", v),
            )
        })?;
        let link = parse_link(&Tbl::new(t, path.clone()), i, &mut nodes, ctx)?;
        if let Some(j) = links.iter().position(|l| l.name == link.name) {
            return Err(key_err(
                format!("{path}.name"),
                format!("duplicate link name {:?} (also links.{j})", link.name),
            ));
        }
        if let Some(j) = links
            .iter()
            .position(|l| (l.a, l.b) == (link.a, link.b) || (l.a, l.b) == (link.b, link.a))
        {
            return Err(key_err(
                path,
                format!(
                    "joins {} and {}, as links.{j} does; parallel links are not supported \
                     (routing would be ambiguous)",
                    nodes[link.a], nodes[link.b]
                ),
            ));
        }
        links.push(link);
    }
    Ok(Links { nodes, links })
}

fn node_index(nodes: &mut Vec<String>, name: String) -> usize {
    match nodes.iter().position(|n| *n == name) {
        Some(i) => i,
        None => {
            nodes.push(name);
            nodes.len() - 1
        }
    }
}

fn as_node(v: &toml::Value) -> Result<String, String> {
    let s = as_str(v)?;
    if s.trim().is_empty() {
        return Err("a node name must not be empty".into());
    }
    Ok(s.to_string())
}

fn parse_link(lt: &Tbl, i: usize, nodes: &mut Vec<String>, ctx: &mut Ctx) -> R<LinkSpec> {
    let allowed: Vec<&str> = keys(LINK_ONLY).into_iter().chain(keys(DIR)).collect();
    lt.check_keys(&allowed)?;
    let name = lt
        .opt("name", as_name)?
        .unwrap_or_else(|| format!("link{i}"));
    let a = lt.req("a", as_node)?;
    let b = lt.req("b", as_node)?;
    if a == b {
        return Err(key_err(
            lt.key("b"),
            format!("a link joins two different nodes; both ends are {a:?}"),
        ));
    }
    let ab = lt.table("ab")?;
    let ba = lt.table("ba")?;
    for d in ab.iter().chain(ba.iter()) {
        d.check_keys(&keys(DIR))?;
    }
    let mut used = HashSet::new();
    let mut defaults: [Vec<(&'static str, String)>; 2] = [Vec::new(), Vec::new()];
    // Direction `k` (0: ab, 1: ba): its own table over the link's.
    let mut dir = |k: usize, table: &Option<Tbl>, from: &str, to: &str| {
        let hint = format!(
            " (here for both directions, or in {}.{} for {from:?} -> {to:?})",
            lt.path,
            ["ab", "ba"][k]
        );
        parse_dir(
            &layers(table, lt),
            &lt.path,
            &hint,
            &mut used,
            &mut defaults[k],
            ctx,
        )
    };
    let dir_ab = dir(0, &ab, &a, &b)?;
    let dir_ba = dir(1, &ba, &b, &a)?;
    check_unused(lt, &ab, &ba, &used)?;
    let (mut dir_ab, mut dir_ba) = (dir_ab, dir_ba);
    if lt.has("handoffs") {
        let hs = handoffs(lt, &ab, &ba)?;
        let key = lt.key("handoffs");
        lower_handoffs(&mut dir_ab, &hs, &key)?;
        lower_handoffs(&mut dir_ba, &hs, &key)?;
    }
    // Defaults used by both directions are reported once, for the link.
    for (d, dir) in ["ab", "ba"].iter().enumerate() {
        for (k, v) in &defaults[d] {
            let both = defaults[1 - d].iter().any(|(k2, v2)| k2 == k && v2 == v);
            if both && d == 1 {
                continue;
            }
            let key = if both {
                lt.key(k)
            } else {
                format!("{}.{dir}.{k}", lt.path)
            };
            ctx.assume(key, v.clone());
        }
    }
    Ok(LinkSpec {
        name,
        a: node_index(nodes, a),
        b: node_index(nodes, b),
        dirs: [dir_ab, dir_ba],
    })
}

/// The tables a direction reads, most specific first.
fn layers<'a>(dir: &Option<Tbl<'a>>, link: &Tbl<'a>) -> Vec<Tbl<'a>> {
    dir.iter().chain(std::iter::once(link)).cloned().collect()
}

/// The first layer that sets `k`.
fn lookup<'a, 'l>(layers: &'l [Tbl<'a>], k: &str) -> Option<&'l Tbl<'a>> {
    layers.iter().find(|l| l.has(k))
}

/// The first layer that sets any key of a group, and the group key it sets; an error
/// if that layer sets more than one.
fn group<'a, 'l>(
    layers: &'l [Tbl<'a>],
    keys: &[&'static str],
) -> R<Option<(&'l Tbl<'a>, &'static str)>> {
    let Some(l) = layers.iter().find(|l| keys.iter().any(|k| l.has(k))) else {
        return Ok(None);
    };
    let set: Vec<&'static str> = keys.iter().copied().filter(|k| l.has(k)).collect();
    if set.len() > 1 {
        return Err(key_err(
            l.key(set[1]),
            format!(
                "conflicts with {}; give only one of {}",
                l.key(set[0]),
                keys.join(", ")
            ),
        ));
    }
    Ok(Some((l, set[0])))
}

fn parse_dir(
    layers: &[Tbl],
    link_path: &str,
    dir_hint: &str,
    used: &mut HashSet<String>,
    defaults: &mut Vec<(&'static str, String)>,
    ctx: &mut Ctx,
) -> R<DirSpec> {
    // schedule_period applies to this direction's rate and delay schedules.
    let period_layer = lookup(layers, "schedule_period");
    let period = match period_layer {
        Some(l) => l.opt("schedule_period", positive_duration)?,
        None => None,
    };
    let period_key = period_layer.map(|l| l.key("schedule_period"));

    let rate = match group(layers, &["rate", "rate_schedule", "trace"])? {
        None => {
            return Err(key_err(
                format!("{link_path}.rate"),
                format!(
                    "required key is missing: give one of rate, rate_schedule or trace{dir_hint}"
                ),
            ))
        }
        Some((l, "rate")) => {
            let r = l.req("rate", rate_value)?;
            if r == 0 {
                return Err(key_err(
                    l.key("rate"),
                    "must be positive (use outages for a link that carries nothing)",
                ));
            }
            RateModel::Constant(r)
        }
        Some((l, "rate_schedule")) => {
            let points = schedule(
                l,
                "rate_schedule",
                "a [time, rate] pair like [\"1s\", \"4Mbps\"]",
                rate_value,
                period,
                period_key.as_deref(),
            )?;
            if points.iter().all(|(_, r)| *r == 0) {
                return Err(key_err(l.key("rate_schedule"), "every rate is zero"));
            }
            if let Some(k) = &period_key {
                used.insert(k.clone());
            }
            RateModel::Schedule { points, period }
        }
        Some((l, _)) => {
            let mtu_layer = lookup(layers, "trace_mtu");
            let mtu = match mtu_layer {
                Some(ml) => {
                    used.insert(ml.key("trace_mtu"));
                    ml.req("trace_mtu", |v| {
                        let b = size_value(v)?;
                        match u32::try_from(b) {
                            Ok(0) => Err("must be positive".to_string()),
                            Ok(b) => Ok(b),
                            Err(_) => Err(format!("{b} bytes is too large")),
                        }
                    })?
                }
                None => DEFAULT_TRACE_MTU,
            };
            let rel = l.req("trace", as_str)?;
            RateModel::Trace(ctx.trace(&l.key("trace"), rel, mtu)?)
        }
    };

    let delay = match group(layers, &["delay", "delay_schedule"])? {
        None => {
            return Err(key_err(
                format!("{link_path}.delay"),
                format!("required key is missing: give delay or delay_schedule{dir_hint}"),
            ))
        }
        Some((l, "delay")) => DelayModel::Constant(l.req("delay", duration_value)?),
        Some((l, _)) => {
            let points = schedule(
                l,
                "delay_schedule",
                "a [time, delay] pair like [\"10s\", \"70ms\"]",
                duration_value,
                period,
                period_key.as_deref(),
            )?;
            if let Some(k) = &period_key {
                used.insert(k.clone());
            }
            DelayModel::Schedule { points, period }
        }
    };

    let queue = parse_queue(layers, used, defaults)?;

    let outages = match lookup(layers, "outages").and_then(|l| Some((l, l.get("outages")?))) {
        Some((l, v)) => outages(v, &l.key("outages"))?,
        None => Vec::new(),
    };
    // A probability in [0, 1) (`what` names it in the message), 0 when absent.
    let probability = |k: &str, what: &str| -> R<f64> {
        match lookup(layers, k) {
            Some(l) => l.req(k, |v| {
                let p = loss_probability(v)?;
                if (0.0..1.0).contains(&p) {
                    Ok(p)
                } else {
                    Err(format!(
                        "{what} {p} is outside [0, 1) (a fraction like 0.01, or a percentage like \"1%\")"
                    ))
                }
            }),
            None => Ok(0.0),
        }
    };
    let loss = probability("loss", "loss probability")?;
    let fifo = match lookup(layers, "fifo") {
        Some(l) => l.req("fifo", as_bool)?,
        None => false,
    };
    let reorder = probability("reorder", "probability")?;
    let duplicate = probability("duplicate", "probability")?;
    let reorder_delay = match lookup(layers, "reorder_delay") {
        Some(l) => {
            let d = l.req("reorder_delay", duration_value)?;
            if reorder == 0.0 {
                return Err(key_err(
                    l.key("reorder_delay"),
                    "has no effect without reorder (a probability above 0)",
                ));
            }
            d
        }
        None if reorder > 0.0 => {
            let l = lookup(layers, "reorder").map_or(link_path.to_string(), |l| l.key("reorder"));
            return Err(key_err(
                l,
                "needs reorder_delay: how much longer a reordered packet takes",
            ));
        }
        None => Duration::ZERO,
    };
    Ok(DirSpec {
        rate,
        delay,
        queue,
        outages,
        loss,
        fifo,
        reorder,
        reorder_delay,
        duplicate,
    })
}

/// A loss probability: a number (a fraction, `0.01`) or a string percentage (`"1%"`,
/// `"0.5 %"`).
fn loss_probability(v: &toml::Value) -> Result<f64, String> {
    match v.as_str() {
        Some(text) => {
            let number = text.trim().strip_suffix('%').ok_or_else(|| {
                format!("expected a number (0.01) or a percentage (\"1%\"), found \"{text}\"")
            })?;
            let pct: f64 = number.trim().parse().map_err(|_| {
                format!("expected a number (0.01) or a percentage (\"1%\"), found \"{text}\"")
            })?;
            if pct.is_finite() {
                Ok(pct / 100.0)
            } else {
                Err(format!("must be a finite percentage, found \"{text}\""))
            }
        }
        None => as_f64(v),
    }
}

/// A schedule: `[[time, value], ...]`, the first at 0, times increasing, all before
/// `period` if there is one.
fn schedule<T>(
    l: &Tbl,
    key: &str,
    what: &str,
    conv: fn(&toml::Value) -> Result<T, String>,
    period: Option<Duration>,
    period_key: Option<&str>,
) -> R<Vec<(Duration, T)>> {
    let full = l.key(key);
    let arr = l.req(key, as_array)?;
    if arr.is_empty() {
        return Err(key_err(full, "a schedule needs at least one point"));
    }
    let mut points: Vec<(Duration, T)> = Vec::with_capacity(arr.len());
    for (i, p) in arr.iter().enumerate() {
        let pk = format!("{full}.{i}");
        let (t, v) = as_pair(p, what).map_err(|e| key_err(&pk, e))?;
        let t = duration_value(t).map_err(|e| key_err(&pk, e))?;
        let v = conv(v).map_err(|e| key_err(&pk, e))?;
        if i == 0 && !t.is_zero() {
            return Err(key_err(
                pk,
                format!(
                    "the first point must be at 0s (the value before it would be undefined), \
                     found {}",
                    format_duration(t)
                ),
            ));
        }
        if let Some((prev, _)) = points.last() {
            if t <= *prev {
                return Err(key_err(
                    pk,
                    format!(
                        "time {} is not after the previous point's {} (points must be sorted \
                         by time, without repeats)",
                        format_duration(t),
                        format_duration(*prev)
                    ),
                ));
            }
        }
        if let Some(per) = period {
            if t >= per {
                return Err(key_err(
                    pk,
                    format!(
                        "time {} is not before the schedule's period ({} = {})",
                        format_duration(t),
                        period_key.unwrap_or("schedule_period"),
                        format_duration(per)
                    ),
                ));
            }
        }
        points.push((t, v));
    }
    Ok(points)
}

/// `handoffs = [{ at, interruption, rate, delay }, ...]`: sorted, each after the end
/// of the previous interruption. The link's interface before the first handoff is
/// its constant `rate` and `delay`.
fn handoffs(lt: &Tbl, ab: &Option<Tbl>, ba: &Option<Tbl>) -> R<Vec<Handoff>> {
    let key = lt.key("handoffs");
    for l in std::iter::once(lt).chain(ab.iter()).chain(ba.iter()) {
        for k in [
            "rate_schedule",
            "delay_schedule",
            "trace",
            "schedule_period",
        ] {
            if l.has(k) {
                return Err(key_err(
                    l.key(k),
                    format!(
                        "conflicts with {key}: a link with handoffs starts with its constant \
                         rate and delay, and each handoff sets the next ones"
                    ),
                ));
            }
        }
    }
    let arr = lt.req("handoffs", as_array)?;
    let mut out: Vec<Handoff> = Vec::with_capacity(arr.len());
    for (i, v) in arr.iter().enumerate() {
        let path = format!("{key}.{i}");
        let t = v.as_table().ok_or_else(|| {
            key_err(
                &path,
                super::walk::expected(
                    "a table like { at = \"10s\", interruption = \"0.5s\", rate = \"384kbps\", \
                     delay = \"70ms\" }",
                    v,
                ),
            )
        })?;
        let h = Tbl::new(t, path.clone());
        h.check_keys(&keys(HANDOFF))?;
        let at = h.req("at", duration_value)?;
        let interruption = h.req("interruption", positive_duration)?;
        let rate = h.opt("rate", |v| match rate_value(v)? {
            0 => Err("must be positive".to_string()),
            r => Ok(r),
        })?;
        let delay = h.opt("delay", duration_value)?;
        if let Some(prev) = out.last() {
            let end = prev.at + prev.interruption;
            if at < end {
                return Err(key_err(
                    h.key("at"),
                    format!(
                        "{} is before the end of the previous handoff's interruption ({}); \
                         handoffs must be sorted and must not overlap",
                        format_duration(at),
                        format_duration(end)
                    ),
                ));
            }
        }
        out.push(Handoff {
            at,
            interruption,
            rate,
            delay,
        });
    }
    Ok(out)
}

/// Lower handoffs onto one direction: outages plus rate and delay schedules.
fn lower_handoffs(d: &mut DirSpec, hs: &[Handoff], key: &str) -> R<()> {
    let (RateModel::Constant(r0), DelayModel::Constant(d0)) = (&d.rate, &d.delay) else {
        return Err(key_err(
            key,
            "a link with handoffs needs a constant rate and delay (its first interface)",
        ));
    };
    let (mut rate, mut delay) = (*r0, *d0);
    let mut rates = vec![(Duration::ZERO, rate)];
    let mut delays = vec![(Duration::ZERO, delay)];
    let mut outages = d.outages.clone();
    for h in hs {
        let end = h.at + h.interruption;
        rate = h.rate.unwrap_or(rate);
        delay = h.delay.unwrap_or(delay);
        rates.push((end, rate));
        delays.push((end, delay));
        outages.push((h.at, end));
    }
    outages.sort();
    for w in outages.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(key_err(
                key,
                format!(
                    "the interruption [{}, {}] overlaps the outage [{}, {}]",
                    format_duration(w[1].0),
                    format_duration(w[1].1),
                    format_duration(w[0].0),
                    format_duration(w[0].1)
                ),
            ));
        }
    }
    d.rate = RateModel::Schedule {
        points: rates,
        period: None,
    };
    d.delay = DelayModel::Schedule {
        points: delays,
        period: None,
    };
    d.outages = outages;
    Ok(())
}

/// `[[start, end], ...]`: sorted, not overlapping, each non-empty.
pub(crate) fn outages(v: &toml::Value, key: &str) -> R<Vec<(Duration, Duration)>> {
    let arr = as_array(v).map_err(|e| key_err(key, e))?;
    let mut out: Vec<(Duration, Duration)> = Vec::with_capacity(arr.len());
    for (i, p) in arr.iter().enumerate() {
        let at = |e: String| key_err(format!("{key}.{i}"), e);
        let (s, e) = as_span(p, "[\"10s\", \"20s\"]").map_err(at)?;
        if let Some(&(ps, pe)) = out.last() {
            if s < ps {
                return Err(at(format!(
                    "starts at {}, before the previous outage ({}); outages must be sorted",
                    format_duration(s),
                    format_duration(ps)
                )));
            }
            if s < pe {
                return Err(at(format!(
                    "[{}, {}] overlaps the previous outage [{}, {}]",
                    format_duration(s),
                    format_duration(e),
                    format_duration(ps),
                    format_duration(pe)
                )));
            }
        }
        out.push((s, e));
    }
    Ok(out)
}

fn parse_queue(
    layers: &[Tbl],
    used: &mut HashSet<String>,
    defaults: &mut Vec<(&'static str, String)>,
) -> R<QueueSpec> {
    let red = match lookup(layers, "queue") {
        None => false,
        Some(l) => l.req("queue", named::<Queue>)? == Queue::Red,
    };
    let limit = match lookup(layers, "queue_limit") {
        Some(l) => l.req("queue_limit", |v| {
            let q = queue_limit_value(v)?;
            match q {
                QueueLimit::Packets(0) | QueueLimit::Bytes(0) => Err("must be positive".into()),
                q => Ok(q),
            }
        })?,
        None => {
            defaults.push(("queue_limit", format_queue_limit(DEFAULT_QUEUE_LIMIT)));
            DEFAULT_QUEUE_LIMIT
        }
    };
    if !red {
        return Ok(QueueSpec::DropTail { limit });
    }
    // RED parameters merge key by key: direction, then link, then defaults.
    let mut reds: Vec<Tbl> = Vec::new();
    for l in layers {
        if let Some(r) = l.table("red")? {
            r.check_keys(&keys(RED))?;
            used.insert(l.key("red"));
            reds.push(r);
        }
    }
    let find = |k: &str| reds.iter().find(|r| r.has(k));
    let auto = |k: &str| -> R<Option<f64>> {
        match find(k) {
            Some(r) => r.req(k, auto_f64),
            None => Ok(None),
        }
    };
    let flag = |k: &str, d: bool| -> R<bool> {
        match find(k) {
            Some(r) => r.req(k, as_bool),
            None => Ok(d),
        }
    };
    let min_th = auto("min_th")?;
    let max_th = auto("max_th")?;
    let w_q = auto("w_q")?;
    let max_p = match find("max_p") {
        Some(r) => r.req("max_p", as_f64)?,
        None => RED_DEFAULT_MAX_P,
    };
    let gentle = flag("gentle", RED_DEFAULT_GENTLE)?;
    let wait = flag("wait", RED_DEFAULT_WAIT)?;
    let bytes = flag("bytes", RED_DEFAULT_BYTES)?;
    let queue_in_bytes = flag("queue_in_bytes", RED_DEFAULT_QUEUE_IN_BYTES)?;
    let target_delay = match find("target_delay") {
        Some(r) => r.req("target_delay", duration_value)?,
        None => RED_DEFAULT_TARGET_DELAY,
    };
    let mean_pktsize = match find("mean_pktsize") {
        Some(r) => r.req("mean_pktsize", |v| {
            let n = as_u32(v).or_else(|_| {
                size_value(v).and_then(|b| u32::try_from(b).map_err(|_| "too large".into()))
            })?;
            if n == 0 {
                return Err("must be positive".into());
            }
            Ok(n)
        })?,
        None => RED_DEFAULT_MEAN_PKTSIZE,
    };
    let red_key = |k: &str| {
        find(k)
            .map(|r| r.key(k))
            .unwrap_or_else(|| format!("{}.red.{k}", layers[layers.len() - 1].path))
    };
    if min_th.is_some_and(|x| x < 0.0) {
        return Err(key_err(red_key("min_th"), "must not be negative"));
    }
    if let (Some(lo), Some(hi)) = (min_th, max_th) {
        if hi <= lo {
            return Err(key_err(
                red_key("max_th"),
                format!("must be above min_th ({lo})"),
            ));
        }
    }
    if max_th.is_some_and(|x| x <= 0.0) {
        return Err(key_err(red_key("max_th"), "must be positive"));
    }
    if w_q.is_some_and(|w| !(w > 0.0 && w <= 1.0)) {
        return Err(key_err(red_key("w_q"), "must be in (0, 1]"));
    }
    if !(max_p > 0.0 && max_p <= 1.0) {
        return Err(key_err(red_key("max_p"), "must be in (0, 1]"));
    }
    Ok(QueueSpec::Red {
        limit,
        red: RedParams {
            min_th,
            max_th,
            w_q,
            max_p,
            gentle,
            mean_pktsize,
            wait,
            bytes,
            queue_in_bytes,
            target_delay,
        },
    })
}

/// Keys that only matter together with another one must not be silently ignored.
fn check_unused(lt: &Tbl, ab: &Option<Tbl>, ba: &Option<Tbl>, used: &HashSet<String>) -> R<()> {
    for l in ab.iter().chain(ba.iter()).chain(std::iter::once(lt)) {
        for (k, why) in [
            (
                "trace_mtu",
                "has no effect: no direction that reads it takes its rate from a trace",
            ),
            (
                "schedule_period",
                "has no effect: no direction that reads it has a rate_schedule or delay_schedule",
            ),
            (
                "red",
                "has no effect: no direction that reads it has queue = \"red\"",
            ),
        ] {
            if l.has(k) && !used.contains(&l.key(k)) {
                return Err(key_err(l.key(k), why));
            }
        }
    }
    Ok(())
}

/// Reads a Mahimahi trace: one delivery opportunity per line, integer milliseconds,
/// non-decreasing; the trace repeats with its last timestamp as the period.
/// The largest timestamp a trace may hold, in milliseconds: half the range of
/// simulated time (u64 nanoseconds).
pub(crate) const MAX_TRACE_MS: u64 = u64::MAX / 1_000_000 / 2;

pub(crate) fn read_trace(path: PathBuf, mtu: u32) -> Result<MahimahiTrace, String> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read trace {shown}: {e}"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("trace {shown} is not a text file (Mahimahi traces are text)"))?;
    let mut opportunities_ms: Vec<u64> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let ms: u64 = line.parse().map_err(|_| {
            let mut l = line.to_string();
            if l.len() > 40 {
                let mut cut = 40;
                while !l.is_char_boundary(cut) {
                    cut -= 1;
                }
                l.truncate(cut);
                l.push_str("...");
            }
            format!(
                "trace {shown}, line {}: expected a whole number of milliseconds, found {l:?}",
                n + 1
            )
        })?;
        // Simulated time is u64 nanoseconds (about 584 years); half of that leaves room
        // for the trace's repetitions (`TraceState::next_opportunity`) without overflow.
        if ms > MAX_TRACE_MS {
            return Err(format!(
                "trace {shown}, line {}: timestamp {ms} ms is beyond the longest trace \
                 mobiflow can replay ({MAX_TRACE_MS} ms, about 292 years)",
                n + 1
            ));
        }
        if let Some(&prev) = opportunities_ms.last() {
            if ms < prev {
                return Err(format!(
                    "trace {shown}, line {}: timestamp {ms} is before the previous one ({prev}); \
                     timestamps must not decrease",
                    n + 1
                ));
            }
        }
        opportunities_ms.push(ms);
    }
    let Some(&last) = opportunities_ms.last() else {
        return Err(format!("trace {shown} has no delivery opportunities"));
    };
    Ok(MahimahiTrace {
        path,
        opportunities_ms,
        period_ms: last.max(1),
        mtu,
    })
}
