//! `[[flows]]`: endpoints, timing, the application, the reader and TCP settings.

use super::walk::{as_array, as_bool, as_f64, as_name, as_str, as_u32, expected, key_err, Tbl, R};
use super::Ctx;
use crate::model::{AppSpec, FlowSpec, LinkSpec, ReaderSpec, Transport, WebSpec};
use crate::units::{duration_value, format_duration, format_size, rate_value, size_value};
use mobiflow_proto::cc::{
    CcKind, FldAlgo, FldCount, FldInitialWindow, FldParams, FldSwitch, RelentlessParams,
    RelentlessTimeout,
};
use mobiflow_proto::flow::{
    AfcConfig, AutotuneConfig, Estimator, FlowControl, Growth, Placement, RsfcConfig,
};
use mobiflow_proto::tcp::{
    HandoffReaction, HandoffSignal, InitialWindow, Recovery, RttSampling, TcpConfig,
};
use mobiflow_proto::time::Duration;
use toml::Value;

const FLOW_KEYS: &[&str] = &[
    "name",
    "from",
    "to",
    "transport",
    "start",
    "stop",
    "cc",
    "app",
    "reader",
    "tcp",
    "flow_control",
    "afc",
    "autotune",
    "rsfc",
    "web",
    "tfrc",
];

/// Keys of `[flows.web]`.
const WEB_KEYS: &[&str] = &[
    "pages",
    "think",
    "objects",
    "object_size",
    "request_size",
    "connections",
    "main_first",
];

/// Keys of `[flows.afc]`.
const AFC_KEYS: &[&str] = &[
    "placement",
    "adapt_rate",
    "hide_buffer_losses",
    "proactive_feedback",
    "pacing",
    "ar_alpha",
    "ar_sample_interval",
    "feedback_threshold",
    "feedback_min_interval",
    "burst_segments",
];

/// Keys of `[flows.rsfc]`.
const RSFC_KEYS: &[&str] = &[
    "estimator",
    "ts_tick",
    "rho_window",
    "rtt_min_window",
    "threshold_factor",
    "growth",
    "monitor",
    "rho_check",
    "rho_rise",
    "initial_rwnd",
    "rebase_after",
];

/// Keys of `[flows.autotune]`.
const AUTOTUNE_KEYS: &[&str] = &[
    "initial_buf",
    "min_buf",
    "headroom",
    "grow_only",
    "interval",
];

/// Every `TcpConfig` field a scenario may set, in the order of the documentation.
pub(crate) const TCP_FIELDS: &[&str] = &[
    "mss",
    "header_bytes",
    "count_option_bytes",
    "cc",
    "recovery",
    "dupack_threshold",
    "initial_window",
    "initial_ssthresh",
    "max_cwnd",
    "max_send_window",
    "per_ack_counting",
    "min_rto",
    "max_rto",
    "initial_rto",
    "clock_granularity",
    "rtt_sampling",
    "max_backoff_exponent",
    "hold_ssthresh_on_repeated_rto",
    "timestamps",
    "ts_granularity",
    "sack",
    "handshake",
    "delayed_ack",
    "delack_timeout",
    "ack_every",
    "rcv_buf",
    "wscale",
    "receiver_sws",
    "sender_sws",
    "persist_min",
    "persist_max",
    "idle_restart",
    "limited_transmit",
    "limited_transmit_after_timeout",
    "rto_restart_on_fast_retransmit",
    "cwnd_validation",
    "window_updates",
    "handoff_reaction",
    "handoff_signal",
    "ba_sst_refine",
    "handoff_reset_rtt",
    "freeze",
    "freeze_warning",
];

/// Sub-tables of `[tcp]` and `[flows.tcp]` with the parameters of one controller.
pub(crate) const CC_TABLES: &[&str] = &["fld", "relentless"];

/// Keys of `[tcp.fld]` (FLD_TCP: Moktan, "In the Interest of the Short: An approach for
/// e2e congestion control", talk slides, Aalto University, 2012). Every default is an
/// assumption
/// ([SLIDE]: stated by the slides, or [GUESS]; see `cc::fld`).
const FLD_KEYS: &[&str] = &[
    "threshold",
    "count",
    "ss_factor",
    "below",
    "above",
    "switch",
];

/// Keys of `[tcp.relentless]`.
const RELENTLESS_KEYS: &[&str] = &["timeout"];

/// Keys of `[tcp]` and `[flows.tcp]`.
pub(crate) fn tcp_keys() -> Vec<&'static str> {
    std::iter::once("profile")
        .chain(TCP_FIELDS.iter().copied())
        .chain(CC_TABLES.iter().copied())
        .collect()
}

/// Default interval between reads of a non-greedy reader: an assumption.
pub(crate) const DEFAULT_READ_INTERVAL: Duration = Duration::from_millis(10);

/// Fields whose default in a profile is a choice of this project rather than a
/// standard's (or ns-2's) value; reported in `Scenario::assumed` when not set.
fn assumed_tcp_fields(profile: &str) -> &'static [&'static str] {
    match profile {
        // ns-2's TCPSink has no buffer limit: any finite rcv_buf is our choice.
        "ns2" => &["rcv_buf"],
        _ => &[
            "rcv_buf",
            "max_backoff_exponent",
            "clock_granularity",
            "ts_granularity",
            "delack_timeout",
            "persist_min",
            "persist_max",
        ],
    }
}

pub(crate) fn parse_flows(
    root: &Tbl,
    nodes: &[String],
    links: &[LinkSpec],
    duration: Duration,
    ctx: &mut Ctx,
) -> R<Vec<FlowSpec>> {
    let global_tcp = root.table("tcp")?;
    if let Some(g) = &global_tcp {
        g.check_keys(&tcp_keys())?;
        g.opt("profile", profile)?;
    }
    let Some(v) = root.get("flows") else {
        return Err(key_err(
            "flows",
            "at least one flow is required ([[flows]] with from and to)",
        ));
    };
    let arr = as_array(v).map_err(|e| key_err("flows", e))?;
    if arr.is_empty() {
        return Err(key_err("flows", "at least one flow is required"));
    }
    let mut flows: Vec<FlowSpec> = Vec::with_capacity(arr.len());
    // (flow index, assumed TCP defaults) of the TCP flows.
    let mut tcp_assumed: Vec<(usize, Vec<(&'static str, String)>)> = Vec::new();
    for (i, v) in arr.iter().enumerate() {
        let path = format!("flows.{i}");
        let t = v
            .as_table()
            .ok_or_else(|| key_err(&path, expected("a table (a [[flows]] entry)", v)))?;
        let ft = Tbl::new(t, path.clone());
        let (flow, assumed) = parse_flow(&ft, i, nodes, links, duration, global_tcp.as_ref(), ctx)?;
        if let Some(j) = flows.iter().position(|f| f.name == flow.name) {
            return Err(key_err(
                format!("{path}.name"),
                format!("duplicate flow name {:?} (also flows.{j})", flow.name),
            ));
        }
        if matches!(flow.transport, Transport::Tcp(_)) {
            tcp_assumed.push((i, assumed));
        }
        flows.push(flow);
    }
    if let Some(g) = &global_tcp {
        check_cc_tables_used(g, &flows)?;
    }
    add_web_channels(&mut flows)?;
    // An assumed TCP default shared by every flow is reported once, as `tcp.<field>`.
    let shared = |kv: &(&str, String)| tcp_assumed.iter().all(|(_, a)| a.contains(kv));
    if let Some((_, first)) = tcp_assumed.first() {
        for kv in first.iter().filter(|kv| shared(kv)) {
            ctx.assume(format!("tcp.{}", kv.0), kv.1.clone());
        }
    }
    for (i, a) in &tcp_assumed {
        for kv in a.iter().filter(|kv| !shared(kv)) {
            ctx.assume(format!("flows.{i}.tcp.{}", kv.0), kv.1.clone());
        }
    }
    Ok(flows)
}

fn parse_flow(
    ft: &Tbl,
    i: usize,
    nodes: &[String],
    links: &[LinkSpec],
    duration: Duration,
    global_tcp: Option<&Tbl>,
    ctx: &mut Ctx,
) -> R<(FlowSpec, Vec<(&'static str, String)>)> {
    ft.check_keys(FLOW_KEYS)?;
    let name = ft
        .opt("name", as_name)?
        .unwrap_or_else(|| format!("flow{i}"));
    let node = |k: &str| -> R<usize> {
        let n = ft.req(k, |v| as_str(v).map(str::to_string))?;
        nodes.iter().position(|x| *x == n).ok_or_else(|| {
            let known: Vec<String> = nodes.iter().map(|n| format!("{n:?}")).collect();
            key_err(
                ft.key(k),
                format!("unknown node {n:?}; the links declare {}", known.join(", ")),
            )
        })
    };
    let src = node("from")?;
    let dst = node("to")?;
    if src == dst {
        return Err(key_err(
            ft.key("to"),
            format!(
                "a flow needs two different nodes; from and to are both {:?}",
                nodes[src]
            ),
        ));
    }
    if !connected(nodes.len(), links, src, dst) {
        return Err(key_err(
            ft.key("to"),
            format!(
                "{:?} is not connected to {:?} by any chain of links",
                nodes[dst], nodes[src]
            ),
        ));
    }
    let transport = ft
        .opt("transport", |v| as_str(v).map(str::to_ascii_lowercase))?
        .unwrap_or_else(|| "tcp".into());
    let dccp = match transport.as_str() {
        "tcp" => None,
        "tfrc" => Some(false),
        "dccp-ccid3" | "dccp" => Some(true),
        _ => {
            return Err(key_err(
                ft.key("transport"),
                format!(
                    "unknown transport {transport:?}; expected \"tcp\", \"tfrc\" or \
                     \"dccp-ccid3\""
                ),
            ))
        }
    };
    if dccp.is_none() && ft.has("tfrc") {
        return Err(key_err(
            ft.key("tfrc"),
            "only used with transport = \"tfrc\" or \"dccp-ccid3\" (transport is \"tcp\")",
        ));
    }
    let start = ft.opt("start", duration_value)?.unwrap_or(Duration::ZERO);
    if start >= duration {
        return Err(key_err(
            ft.key("start"),
            format!(
                "starts at {}, not before the end of the run (run.duration = {})",
                format_duration(start),
                format_duration(duration)
            ),
        ));
    }
    let stop = ft.opt("stop", duration_value)?;
    if let Some(s) = stop {
        if s <= start {
            return Err(key_err(
                ft.key("stop"),
                format!(
                    "{} is not after the flow's start ({})",
                    format_duration(s),
                    format_duration(start)
                ),
            ));
        }
    }
    if let Some(dccp) = dccp {
        let tfrc = super::tfrc::tfrc_spec(ft, dccp, ctx)?;
        let reader = reader(ft, ctx)?;
        if reader != ReaderSpec::Greedy {
            return Err(key_err(
                ft.key("reader"),
                "a TFRC/DCCP receiver hands every datagram to the application as it \
                 arrives: only reader = \"greedy\" applies",
            ));
        }
        let app = app(ft, start)?;
        if matches!(app, AppSpec::Web(_)) {
            return Err(key_err(
                ft.key("app"),
                "a web app needs TCP (requests and responses on reliable connections);                  this flow's transport is TFRC/DCCP",
            ));
        }
        let flow = FlowSpec {
            name,
            src,
            dst,
            start,
            stop,
            transport: Transport::Tfrc(Box::new(tfrc)),
            app,
            reader,
        };
        return Ok((flow, Vec::new()));
    }
    let (mut tcp, assumed) = tcp_config(ft, global_tcp)?;
    tcp.flow_control = flow_control(ft, ctx)?;
    if matches!(tcp.flow_control, FlowControl::Rsfc(_)) && !tcp.timestamps {
        return Err(key_err(
            ft.key("flow_control"),
            "\"rsfc\" needs TCP timestamps (it estimates the uplink queueing delay from \
             them), but timestamps = false for this flow (set [tcp] or [flows.tcp] \
             timestamps = true; the ns2 profile turns them off)",
        ));
    }
    let app = app(ft, start)?;
    let app = match app {
        AppSpec::Web(_) => AppSpec::Web(std::sync::Arc::new(web(ft, ctx)?)),
        a => {
            if ft.has("web") {
                return Err(key_err(
                    ft.key("web"),
                    "only used with app = \"web\" (this flow's app is another kind)",
                ));
            }
            a
        }
    };
    let reader = reader(ft, ctx)?;
    if matches!(app, AppSpec::Web(_)) && reader != ReaderSpec::Greedy {
        return Err(key_err(
            ft.key("reader"),
            "a web flow's reader must be greedy (a browser reads responses as they come)",
        ));
    }
    Ok((
        FlowSpec {
            name,
            src,
            dst,
            start,
            stop,
            transport: Transport::Tcp(Box::new(tcp)),
            app,
            reader,
        },
        assumed,
    ))
}

/// Whether `b` can be reached from `a` over the (duplex) links.
fn connected(n: usize, links: &[LinkSpec], a: usize, b: usize) -> bool {
    let mut seen = vec![false; n];
    let mut stack = vec![a];
    while let Some(x) = stack.pop() {
        if x == b {
            return true;
        }
        if std::mem::replace(&mut seen[x], true) {
            continue;
        }
        for l in links {
            if l.a == x && !seen[l.b] {
                stack.push(l.b);
            } else if l.b == x && !seen[l.a] {
                stack.push(l.a);
            }
        }
    }
    false
}

fn positive_duration(v: &Value) -> Result<Duration, String> {
    let d = duration_value(v)?;
    if d.is_zero() {
        return Err("must be positive".into());
    }
    Ok(d)
}

fn positive_size(v: &Value) -> Result<u64, String> {
    let b = size_value(v)?;
    if b == 0 {
        return Err("must be positive".into());
    }
    Ok(b)
}

/// `{ kind = "...", ... }` or a bare kind: the kind and the table, if any.
fn kind<'a>(ft: &Tbl<'a>, key: &str, kinds: &[&str]) -> R<Option<(String, Option<Tbl<'a>>)>> {
    let Some(v) = ft.get(key) else {
        return Ok(None);
    };
    let full = ft.key(key);
    let check = |k: &str, at: &str| -> R<String> {
        let l = k.to_ascii_lowercase();
        if kinds.contains(&l.as_str()) {
            Ok(l)
        } else {
            Err(key_err(
                at,
                format!(
                    "unknown {key} kind {k:?}; expected one of {}",
                    kinds.join(", ")
                ),
            ))
        }
    };
    match v {
        Value::String(s) => Ok(Some((check(s, &full)?, None))),
        Value::Table(t) => {
            let t = Tbl::new(t, full);
            let k = t.req("kind", as_str)?;
            let k = check(k, &t.key("kind"))?;
            Ok(Some((k, Some(t))))
        }
        other => Err(key_err(
            full,
            expected(
                &format!("a string or a table with a kind ({})", kinds.join(", ")),
                other,
            ),
        )),
    }
}

fn app(ft: &Tbl, start: Duration) -> R<AppSpec> {
    let kinds = ["bulk", "sized", "bursts", "onoff", "web"];
    let Some((k, t)) = kind(ft, "app", &kinds)? else {
        return Ok(AppSpec::Bulk);
    };
    // Placeholder: the web parameters come from `[flows.web]` (see `web`).
    let web = || AppSpec::Web(std::sync::Arc::new(WebSpec::default()));
    let Some(t) = t else {
        return match k.as_str() {
            "bulk" => Ok(AppSpec::Bulk),
            "web" => Ok(web()),
            _ => Err(key_err(
                ft.key("app"),
                format!(
                    "app {k:?} needs parameters; write e.g. {}",
                    match k.as_str() {
                        "sized" => "app = { kind = \"sized\", size = \"1MB\" }",
                        "bursts" => "app = { kind = \"bursts\", at = [\"1s\", \"5s\"], sizes = [\"512KB\", \"1MB\"] }",
                        _ => "app = { kind = \"onoff\", burst = \"100KB\", period = \"1s\" }",
                    }
                ),
            )),
        };
    };
    match k.as_str() {
        "bulk" => {
            t.check_keys(&["kind"])?;
            Ok(AppSpec::Bulk)
        }
        "web" => {
            t.check_keys(&["kind"])?;
            Ok(web())
        }
        "sized" => {
            t.check_keys(&["kind", "size"])?;
            Ok(AppSpec::Sized {
                size: t.req("size", positive_size)?,
            })
        }
        "onoff" => {
            t.check_keys(&["kind", "burst", "period"])?;
            Ok(AppSpec::OnOff {
                burst: t.req("burst", positive_size)?,
                period: t.req("period", positive_duration)?,
            })
        }
        _ => {
            t.check_keys(&["kind", "at", "sizes"])?;
            let at_arr = t.req("at", as_array)?;
            if at_arr.is_empty() {
                return Err(key_err(t.key("at"), "needs at least one time"));
            }
            let mut at: Vec<Duration> = Vec::with_capacity(at_arr.len());
            for (j, v) in at_arr.iter().enumerate() {
                let k = format!("{}.{j}", t.key("at"));
                let d = duration_value(v).map_err(|e| key_err(&k, e))?;
                if d < start {
                    return Err(key_err(
                        k,
                        format!(
                            "{} is before the flow's start ({})",
                            format_duration(d),
                            format_duration(start)
                        ),
                    ));
                }
                if let Some(&prev) = at.last() {
                    if d < prev {
                        return Err(key_err(
                            k,
                            format!(
                                "{} is before the previous burst ({}); times must be sorted",
                                format_duration(d),
                                format_duration(prev)
                            ),
                        ));
                    }
                }
                at.push(d);
            }
            // `sizes` is one size per burst, or one size for all of them.
            let sizes = match t.get("sizes") {
                None => return Err(key_err(t.key("sizes"), "required key is missing")),
                Some(Value::Array(a)) => {
                    if a.len() != at.len() {
                        return Err(key_err(
                            t.key("sizes"),
                            format!(
                                "has {} sizes for {} burst times; give one per time, or a \
                                 single size for all",
                                a.len(),
                                at.len()
                            ),
                        ));
                    }
                    let mut sizes = Vec::with_capacity(a.len());
                    for (j, v) in a.iter().enumerate() {
                        sizes.push(
                            positive_size(v)
                                .map_err(|e| key_err(format!("{}.{j}", t.key("sizes")), e))?,
                        );
                    }
                    sizes
                }
                Some(v) => {
                    let b = positive_size(v).map_err(|e| key_err(t.key("sizes"), e))?;
                    vec![b; at.len()]
                }
            };
            Ok(AppSpec::Bursts { at, sizes })
        }
    }
}

/// `[flows.web]`: the pages of a web application. Defaults: 44 objects of 7475 bytes
/// (7.3 KiB), i.e. a 321 KiB page, from the figures the FLD_TCP slides cite (Google web metrics,
/// Ramachandran 2010: average page 320 KB, average GET 7.3 KB); the request size, the
/// connections, the think time and fetching the main document first are assumptions.
fn web(ft: &Tbl, ctx: &mut Ctx) -> R<WebSpec> {
    let mut w = WebSpec::default();
    let t = ft.table("web")?;
    if let Some(t) = &t {
        t.check_keys(WEB_KEYS)?;
        if let Some(n) = t.opt("pages", as_u32)? {
            if n == 0 {
                return Err(key_err(
                    t.key("pages"),
                    "must be at least 1 (leave it out to load pages until the end)",
                ));
            }
            w.pages = Some(n);
        }
        if let Some(d) = t.opt("think", duration_value)? {
            w.think = d;
        }
        if let Some(n) = t.opt("objects", as_u32)? {
            if n == 0 {
                return Err(key_err(t.key("objects"), "must be at least 1"));
            }
            w.objects = n;
        }
        match t.get("object_size") {
            None => {}
            Some(Value::Array(a)) => {
                if a.is_empty() {
                    return Err(key_err(t.key("object_size"), "needs at least one size"));
                }
                let mut v = Vec::with_capacity(a.len());
                for (j, x) in a.iter().enumerate() {
                    v.push(
                        positive_size(x)
                            .map_err(|e| key_err(format!("{}.{j}", t.key("object_size")), e))?,
                    );
                }
                w.object_sizes = v;
            }
            Some(x) => {
                w.object_sizes =
                    vec![positive_size(x).map_err(|e| key_err(t.key("object_size"), e))?];
            }
        }
        if let Some(b) = t.opt("request_size", positive_size)? {
            w.request_size = b;
        }
        if let Some(n) = t.opt("connections", as_u32)? {
            if n == 0 || n > 64 {
                return Err(key_err(t.key("connections"), "must be between 1 and 64"));
            }
            w.connections = n;
        }
        if let Some(b) = t.opt("main_first", as_bool)? {
            w.main_first = b;
        }
    }
    let set = |k: &str| t.as_ref().is_some_and(|t| t.has(k));
    let d = WebSpec::default();
    for (k, text) in [
        ("request_size", format_size(d.request_size)),
        ("connections", d.connections.to_string()),
        ("think", format_duration(d.think)),
        ("main_first", d.main_first.to_string()),
    ] {
        if !set(k) {
            ctx.assume(format!("{}.web.{k}", ft.path), text);
        }
    }
    Ok(w)
}

/// Appends the companion channels of every web flow after the declared flows: for
/// connection `k`, a request flow (phone to server) named `NAME.req` (k = 0) or
/// `NAME.cK.req`, and for k >= 1 a response flow `NAME.cK`. They use the web flow's
/// TCP settings with classic flow control and a greedy reader.
fn add_web_channels(flows: &mut Vec<FlowSpec>) -> R<()> {
    let declared = flows.len();
    for m in 0..declared {
        let AppSpec::Web(spec) = &flows[m].app else {
            continue;
        };
        let main = flows[m].clone();
        let conns = spec.connections;
        for conn in 0..conns {
            let base = if conn == 0 {
                main.name.clone()
            } else {
                format!("{}.c{conn}", main.name)
            };
            // Web flows are TCP (a TFRC/DCCP flow with app = "web" is refused above).
            let Some(cfg) = main.transport.tcp() else {
                continue;
            };
            let mut cfg = cfg.clone();
            cfg.flow_control = mobiflow_proto::flow::FlowControl::Classic;
            let mut chans = Vec::new();
            if conn > 0 {
                chans.push((base.clone(), main.src, main.dst, false));
            }
            chans.push((format!("{base}.req"), main.dst, main.src, true));
            for (name, src, dst, request) in chans {
                if let Some(j) = flows.iter().position(|f| f.name == name) {
                    return Err(key_err(
                        format!("flows.{j}.name"),
                        format!(
                            "{name:?} is the name of a channel of web flow flows.{m}; rename one"
                        ),
                    ));
                }
                flows.push(FlowSpec {
                    name,
                    src,
                    dst,
                    start: main.start,
                    stop: None,
                    transport: Transport::Tcp(Box::new(cfg.clone())),
                    app: AppSpec::WebChannel {
                        main: m,
                        conn,
                        request,
                    },
                    reader: ReaderSpec::Greedy,
                });
            }
        }
    }
    Ok(())
}

fn reader(ft: &Tbl, ctx: &mut Ctx) -> R<ReaderSpec> {
    let kinds = ["greedy", "constant", "steps", "sine"];
    let Some((k, t)) = kind(ft, "reader", &kinds)? else {
        return Ok(ReaderSpec::Greedy);
    };
    let Some(t) = t else {
        return match k.as_str() {
            "greedy" => Ok(ReaderSpec::Greedy),
            _ => Err(key_err(
                ft.key("reader"),
                format!(
                    "reader {k:?} needs parameters; write e.g. {}",
                    match k.as_str() {
                        "constant" => "reader = { kind = \"constant\", rate = \"4Mbps\" }",
                        "steps" => "reader = { kind = \"steps\", rates = [\"0Mbps\", \"6Mbps\", \"6Mbps\"], step = \"1s\" }",
                        _ => "reader = { kind = \"sine\", mean = \"4Mbps\", amplitude = \"4Mbps\", period = \"10s\" }",
                    }
                ),
            )),
        };
    };
    if k == "greedy" {
        t.check_keys(&["kind"])?;
        return Ok(ReaderSpec::Greedy);
    }
    let interval = match t.opt("interval", positive_duration)? {
        Some(d) => d,
        None => {
            ctx.assume(t.key("interval"), format_duration(DEFAULT_READ_INTERVAL));
            DEFAULT_READ_INTERVAL
        }
    };
    match k.as_str() {
        "constant" => {
            t.check_keys(&["kind", "rate", "interval"])?;
            Ok(ReaderSpec::Constant {
                rate_bps: t.req("rate", rate_value)?,
                interval,
            })
        }
        "steps" => {
            t.check_keys(&["kind", "rates", "step", "interval"])?;
            let arr = t.req("rates", as_array)?;
            if arr.is_empty() {
                return Err(key_err(t.key("rates"), "needs at least one rate"));
            }
            let mut rates_bps = Vec::with_capacity(arr.len());
            for (j, v) in arr.iter().enumerate() {
                rates_bps.push(
                    rate_value(v).map_err(|e| key_err(format!("{}.{j}", t.key("rates")), e))?,
                );
            }
            Ok(ReaderSpec::Steps {
                rates_bps,
                step: t.req("step", positive_duration)?,
                interval,
            })
        }
        _ => {
            t.check_keys(&["kind", "mean", "amplitude", "period", "phase", "interval"])?;
            Ok(ReaderSpec::Sine {
                mean_bps: t.req("mean", rate_value)?,
                amplitude_bps: t.req("amplitude", rate_value)?,
                period: t.req("period", positive_duration)?,
                phase_rad: t.opt("phase", as_f64)?.unwrap_or(0.0),
                interval,
            })
        }
    }
}

/// A time, or `"rtt"` (`None`: one RTT as the endpoint estimates it).
fn duration_or_rtt(v: &Value) -> Result<Option<Duration>, String> {
    match v {
        Value::String(s) if s.trim().eq_ignore_ascii_case("rtt") => Ok(None),
        v => positive_duration(v)
            .map(Some)
            .map_err(|e| format!("{e}, or \"rtt\" for one round-trip time")),
    }
}

fn text_or_rtt(d: Option<Duration>) -> String {
    d.map_or_else(|| "rtt".to_string(), format_duration)
}

/// A time, or `word` (`None`).
fn duration_or(word: &'static str) -> impl Fn(&Value) -> Result<Option<Duration>, String> {
    move |v| match v {
        Value::String(s) if s.trim().eq_ignore_ascii_case(word) => Ok(None),
        v => positive_duration(v)
            .map(Some)
            .map_err(|e| format!("{e}, or \"{word}\"")),
    }
}

/// `flow_control` and its parameter table (`[flows.afc]`, `[flows.autotune]` or
/// `[flows.rsfc]`). Defaults that are assumptions (the seeds give no value) are
/// reported.
fn flow_control(ft: &Tbl, ctx: &mut Ctx) -> R<FlowControl> {
    let kind = ft
        .opt("flow_control", |v| {
            let s = as_str(v)?.to_ascii_lowercase();
            if FlowControl::NAMES.contains(&s.as_str()) {
                Ok(s)
            } else {
                Err(format!(
                    "unknown flow control {s:?}; expected one of {}",
                    FlowControl::NAMES.join(", ")
                ))
            }
        })?
        .unwrap_or_else(|| "classic".into());
    for (table, needs) in [("afc", "afc"), ("autotune", "autotune"), ("rsfc", "rsfc")] {
        if ft.has(table) && kind != needs {
            return Err(key_err(
                ft.key(table),
                format!("only used with flow_control = {needs:?} (flow_control is {kind:?})"),
            ));
        }
    }
    match kind.as_str() {
        "afc" => {
            let mut c = AfcConfig::default();
            if let Some(t) = ft.table("afc")? {
                t.check_keys(AFC_KEYS)?;
                if let Some(p) = t.opt("placement", |v| as_str(v)?.parse::<Placement>())? {
                    c.placement = p;
                }
                for (k, slot) in [
                    ("adapt_rate", &mut c.adapt_rate),
                    ("hide_buffer_losses", &mut c.hide_buffer_losses),
                    ("proactive_feedback", &mut c.proactive_feedback),
                    ("pacing", &mut c.pacing),
                ] {
                    if let Some(b) = t.opt(k, as_bool)? {
                        *slot = b;
                    }
                }
                if let Some(x) = t.opt("ar_alpha", as_f64)? {
                    c.ar_alpha = x;
                }
                if let Some(x) = t.opt("ar_sample_interval", positive_duration)? {
                    c.ar_sample_interval = x;
                }
                if let Some(x) = t.opt("feedback_threshold", as_f64)? {
                    c.feedback_threshold = x;
                }
                if let Some(x) = t.opt("feedback_min_interval", duration_or_rtt)? {
                    c.feedback_min_interval = x;
                }
                if let Some(x) = t.opt("burst_segments", as_u32)? {
                    c.burst_segments = x;
                }
                if let Err((f, why)) = c.validate() {
                    return Err(key_err(t.key(f), why));
                }
            }
            let set = |k: &str| {
                ft.get("afc")
                    .and_then(Value::as_table)
                    .is_some_and(|t| t.contains_key(k))
            };
            let d = AfcConfig::default();
            for (k, text) in [
                ("placement", d.placement.name().to_string()),
                ("ar_alpha", d.ar_alpha.to_string()),
                ("ar_sample_interval", format_duration(d.ar_sample_interval)),
                ("feedback_threshold", d.feedback_threshold.to_string()),
                (
                    "feedback_min_interval",
                    text_or_rtt(d.feedback_min_interval),
                ),
                ("burst_segments", d.burst_segments.to_string()),
            ] {
                if !set(k) {
                    ctx.assume(format!("{}.afc.{k}", ft.path), text);
                }
            }
            Ok(FlowControl::Afc(c))
        }
        "autotune" => {
            let mut c = AutotuneConfig::default();
            if let Some(t) = ft.table("autotune")? {
                t.check_keys(AUTOTUNE_KEYS)?;
                if let Some(x) = t.opt("initial_buf", positive_size)? {
                    c.initial_buf = x;
                }
                if let Some(x) = t.opt("min_buf", positive_size)? {
                    c.min_buf = x;
                }
                if let Some(x) = t.opt("headroom", as_f64)? {
                    c.headroom = x;
                }
                if let Some(x) = t.opt("grow_only", as_bool)? {
                    c.grow_only = x;
                }
                if let Some(x) = t.opt("interval", duration_or_rtt)? {
                    c.interval = x;
                }
                if let Err((f, why)) = c.validate() {
                    return Err(key_err(t.key(f), why));
                }
            }
            let set = |k: &str| {
                ft.get("autotune")
                    .and_then(Value::as_table)
                    .is_some_and(|t| t.contains_key(k))
            };
            let d = AutotuneConfig::default();
            for (k, text) in [
                ("initial_buf", format_size(d.initial_buf)),
                ("min_buf", format_size(d.min_buf)),
                ("headroom", d.headroom.to_string()),
                ("grow_only", d.grow_only.to_string()),
                ("interval", text_or_rtt(d.interval)),
            ] {
                if !set(k) {
                    ctx.assume(format!("{}.autotune.{k}", ft.path), text);
                }
            }
            Ok(FlowControl::Autotune(c))
        }
        "rsfc" => {
            let mut c = RsfcConfig::default();
            if let Some(t) = ft.table("rsfc")? {
                t.check_keys(RSFC_KEYS)?;
                if let Some(x) = t.opt("estimator", |v| as_str(v)?.parse::<Estimator>())? {
                    c.estimator = x;
                }
                if let Some(x) = t.opt("ts_tick", duration_or("auto"))? {
                    c.ts_tick = x;
                }
                if let Some(x) = t.opt("rho_window", duration_or("rtt_min"))? {
                    c.rho_window = x;
                }
                if let Some(x) = t.opt("rtt_min_window", positive_duration)? {
                    c.rtt_min_window = x;
                }
                if let Some(x) = t.opt("threshold_factor", as_f64)? {
                    c.threshold_factor = x;
                }
                if let Some(x) = t.opt("growth", |v| as_str(v)?.parse::<Growth>())? {
                    c.growth = x;
                }
                for (k, slot) in [("monitor", &mut c.monitor), ("rho_check", &mut c.rho_check)] {
                    if let Some(b) = t.opt(k, as_bool)? {
                        *slot = b;
                    }
                }
                if let Some(x) = t.opt("rho_rise", as_f64)? {
                    c.rho_rise = x;
                }
                if let Some(x) = t.opt("initial_rwnd", |v| match v {
                    Value::String(s) if s.eq_ignore_ascii_case("buffer") => Ok(None),
                    Value::Integer(_) => as_u32(v).map(Some),
                    other => Err(expected(
                        "a number of segments or \"buffer\" (the whole receive buffer)",
                        other,
                    )),
                })? {
                    c.initial_rwnd_segments = x;
                }
                if let Some(x) = t.opt("rebase_after", as_u32)? {
                    c.rebase_after = x;
                }
                if let Err((f, why)) = c.validate() {
                    return Err(key_err(t.key(f), why));
                }
            }
            let set = |k: &str| {
                ft.get("rsfc")
                    .and_then(Value::as_table)
                    .is_some_and(|t| t.contains_key(k))
            };
            let d = RsfcConfig::default();
            for (k, text) in [
                ("estimator", d.estimator.name().to_string()),
                (
                    "ts_tick",
                    d.ts_tick.map_or_else(|| "auto".into(), format_duration),
                ),
                (
                    "rho_window",
                    d.rho_window
                        .map_or_else(|| "rtt_min".into(), format_duration),
                ),
                ("rtt_min_window", format_duration(d.rtt_min_window)),
                ("growth", d.growth.name().to_string()),
                ("rho_rise", d.rho_rise.to_string()),
                (
                    "initial_rwnd",
                    d.initial_rwnd_segments
                        .map_or_else(|| "buffer".into(), |n| n.to_string()),
                ),
                ("rebase_after", d.rebase_after.to_string()),
            ] {
                if !set(k) {
                    ctx.assume(format!("{}.rsfc.{k}", ft.path), text);
                }
            }
            Ok(FlowControl::Rsfc(c))
        }
        _ => Ok(FlowControl::Classic),
    }
}

fn profile(v: &Value) -> Result<&'static str, String> {
    let s = as_str(v)?;
    match s.to_ascii_lowercase().as_str() {
        "rfc" => Ok("rfc"),
        "ns2" | "ns-2" => Ok("ns2"),
        _ => Err(format!("unknown profile {s:?}; expected rfc or ns2")),
    }
}

/// The TCP configuration of flow `ft`: the profile, then `[tcp]`, then
/// `[flows.tcp]`, then the flow's `cc`. Also returns the assumed defaults it kept.
fn tcp_config(ft: &Tbl, global: Option<&Tbl>) -> R<(TcpConfig, Vec<(&'static str, String)>)> {
    let local = ft.table("tcp")?;
    if let Some(l) = &local {
        l.check_keys(&tcp_keys())?;
    }
    // Each key comes from the most specific table that sets it.
    let layers: Vec<&Tbl> = local.iter().chain(global).collect();
    let source = |k: &str| layers.iter().copied().find(|l| l.has(k));
    let profile_name = match source("profile") {
        Some(l) => l.req("profile", profile)?,
        None => "rfc",
    };
    let mut cfg = match profile_name {
        "ns2" => TcpConfig::ns2(),
        _ => TcpConfig::default(),
    };
    let cc_short = ft.has("cc");
    if cc_short {
        if let Some(l) = &local {
            if l.has("cc") {
                return Err(key_err(
                    ft.key("cc"),
                    format!("conflicts with {}; set only one", l.key("cc")),
                ));
            }
        }
    }
    let mut assumed = Vec::new();
    for &f in TCP_FIELDS {
        let (key, v) = match (f, source(f)) {
            ("cc", _) if cc_short => (ft.key("cc"), ft.get("cc")),
            (_, Some(l)) => (l.key(f), l.get(f)),
            (_, None) => {
                if assumed_tcp_fields(profile_name).contains(&f) {
                    assumed.push((f, field_text(&cfg, f)));
                }
                continue;
            }
        };
        if let Some(v) = v {
            set_field(&mut cfg, f, v).map_err(|e| key_err(key, e))?;
        }
    }
    // What the vertical-handoff paper (Tsukamoto, Fukuda, Hori and Oie, "New flow control
    // schemes of TCP for multimodal mobile hosts", IEICE Trans. Commun. E89-B(6), 2006)
    // leaves open, reported as assumed when a flow relies on it.
    if cfg.handoff_reaction != HandoffReaction::None {
        if source("handoff_signal").is_none() {
            assumed.push(("handoff_signal", cfg.handoff_signal.name().into()));
        }
        if source("handoff_reset_rtt").is_none() {
            assumed.push(("handoff_reset_rtt", cfg.handoff_reset_rtt.to_string()));
        }
        if cfg.handoff_reaction.ba_sst() && source("ba_sst_refine").is_none() {
            assumed.push(("ba_sst_refine", cfg.ba_sst_refine.to_string()));
        }
    }
    if cfg.freeze && source("freeze_warning").is_none() {
        assumed.push(("freeze_warning", format_duration(cfg.freeze_warning)));
    }
    cc_params(
        &mut cfg,
        &layers,
        local.as_ref(),
        source("initial_window").is_some(),
        &mut assumed,
    )?;
    // Where a field's value came from, to blame the right key.
    let blame = |f: &str| -> (String, String) {
        if f == "cc" && cc_short {
            return (ft.key("cc"), String::new());
        }
        match source(f) {
            Some(l) => (l.key(f), String::new()),
            None => (
                format!("{}.tcp.{f}", ft.path),
                format!(" ({f} is not set: this is the {profile_name:?} profile's default)"),
            ),
        }
    };
    let check = |ok: bool, f: &str, why: &str| -> R<()> {
        if ok {
            return Ok(());
        }
        let (k, note) = blame(f);
        Err(key_err(k, format!("{why}{note}")))
    };
    if let Err((f, why)) = cfg.validate() {
        check(false, f, &why)?;
    }
    // Checks that keep the machines away from zero-period timers and shift overflow.
    check(!cfg.min_rto.is_zero(), "min_rto", "must be positive")?;
    check(
        !cfg.initial_rto.is_zero(),
        "initial_rto",
        "must be positive",
    )?;
    check(
        !cfg.clock_granularity.is_zero(),
        "clock_granularity",
        "must be positive",
    )?;
    check(
        !cfg.persist_min.is_zero(),
        "persist_min",
        "must be positive",
    )?;
    check(
        cfg.persist_min <= cfg.persist_max,
        "persist_max",
        &format!(
            "must not be below persist_min ({})",
            format_duration(cfg.persist_min)
        ),
    )?;
    check(
        !(cfg.delayed_ack && cfg.delack_timeout.is_zero()),
        "delack_timeout",
        "must be positive when delayed_ack is on",
    )?;
    check(
        cfg.max_backoff_exponent <= 30,
        "max_backoff_exponent",
        "must be at most 30",
    )?;
    Ok((cfg, assumed))
}

/// `[tcp.fld]` and `[tcp.relentless]`: the parameters of FLD_TCP and Relentless TCP,
/// merged key by key (`[flows.tcp]`, then `[tcp]`, then the defaults, all of which are
/// assumptions). A flow with `cc = "fld"` takes its initial window from
/// `tcp.initial_window` when the scenario sets it, and otherwise uses FLD's own
/// (RFC 6928, 10 segments), which then also becomes the connection's restart window.
fn cc_params(
    cfg: &mut TcpConfig,
    layers: &[&Tbl],
    local: Option<&Tbl>,
    iw_set: bool,
    assumed: &mut Vec<(&'static str, String)>,
) -> R<()> {
    let uses_fld = matches!(cfg.cc, CcKind::Fld(_));
    let uses_relentless = matches!(cfg.cc, CcKind::Relentless(_));
    if let Some(l) = local {
        if l.has("fld") && !uses_fld {
            return Err(key_err(
                l.key("fld"),
                format!(
                    "only used with cc = \"fld\" (this flow's cc is {:?})",
                    cfg.cc.name()
                ),
            ));
        }
        if l.has("relentless") && !uses_fld && !uses_relentless {
            return Err(key_err(
                l.key("relentless"),
                format!(
                    "only used with cc = \"relentless\" or \"fld\" (this flow's cc is {:?})",
                    cfg.cc.name()
                ),
            ));
        }
    }
    let sub = |name: &str, keys: &[&str]| -> R<Vec<Tbl>> {
        let mut found = Vec::new();
        for l in layers {
            if let Some(t) = l.table(name)? {
                t.check_keys(keys)?;
                found.push(t);
            }
        }
        Ok(found)
    };
    let rtables = sub("relentless", RELENTLESS_KEYS)?;
    let mut relentless = RelentlessParams::default();
    let timeout_set = match rtables.iter().find(|t| t.has("timeout")) {
        Some(t) => {
            relentless.timeout = t.req("timeout", |v| as_str(v)?.parse::<RelentlessTimeout>())?;
            true
        }
        None => false,
    };
    if uses_relentless {
        cfg.cc = CcKind::Relentless(relentless);
        if !timeout_set {
            assumed.push(("relentless.timeout", relentless.timeout.name().into()));
        }
    }
    if !uses_fld {
        return Ok(());
    }
    let tables = sub("fld", FLD_KEYS)?;
    let find = |k: &str| tables.iter().find(|t| t.has(k));
    let mut p = FldParams {
        relentless,
        ..FldParams::default()
    };
    match find("threshold") {
        Some(t) => p.threshold_bytes = t.req("threshold", size_or_inf)?,
        None => assumed.push(("fld.threshold", format_size(p.threshold_bytes))),
    }
    match find("count") {
        Some(t) => p.count = t.req("count", |v| as_str(v)?.parse::<FldCount>())?,
        None => assumed.push(("fld.count", p.count.name().into())),
    }
    match find("ss_factor") {
        Some(t) => {
            p.ss_factor = t.req("ss_factor", |v| match as_u32(v)? {
                f if f >= 2 => Ok(f),
                f => Err(format!(
                    "must be at least 2 (2 is the algorithm's own slow start), found {f}"
                )),
            })?
        }
        None => assumed.push(("fld.ss_factor", p.ss_factor.to_string())),
    }
    match find("below") {
        Some(t) => p.below = t.req("below", |v| as_str(v)?.parse::<FldAlgo>())?,
        None => assumed.push(("fld.below", p.below.name().into())),
    }
    match find("above") {
        Some(t) => p.above = t.req("above", |v| as_str(v)?.parse::<FldAlgo>())?,
        None => assumed.push(("fld.above", p.above.name().into())),
    }
    match find("switch") {
        Some(t) => p.switch = t.req("switch", |v| as_str(v)?.parse::<FldSwitch>())?,
        None => assumed.push(("fld.switch", p.switch.name().into())),
    }
    if iw_set {
        p.initial_window = FldInitialWindow::Connection;
    } else {
        // FLD's IW10 is also the window the sender restarts from after an idle time.
        p.initial_window = FldInitialWindow::Rfc6928;
        cfg.initial_window = InitialWindow::Rfc6928;
        assumed.push(("initial_window", "rfc6928".into()));
    }
    let relentless_runs = p.below == FldAlgo::Relentless || p.above == FldAlgo::Relentless;
    if relentless_runs && !timeout_set {
        assumed.push(("relentless.timeout", p.relentless.timeout.name().into()));
    }
    cfg.cc = CcKind::Fld(p);
    Ok(())
}

/// `[tcp.fld]` or `[tcp.relentless]` that no flow's controller reads.
fn check_cc_tables_used(t: &Tbl, flows: &[FlowSpec]) -> R<()> {
    let uses = |f: fn(&CcKind) -> bool| {
        flows
            .iter()
            .any(|fl| matches!(&fl.transport, Transport::Tcp(c) if f(&c.cc)))
    };
    if t.has("fld") && !uses(|c| matches!(c, CcKind::Fld(_))) {
        return Err(key_err(
            t.key("fld"),
            "has no effect: no flow has cc = \"fld\"",
        ));
    }
    if t.has("relentless") && !uses(|c| matches!(c, CcKind::Fld(_) | CcKind::Relentless(_))) {
        return Err(key_err(
            t.key("relentless"),
            "has no effect: no flow has cc = \"relentless\" or \"fld\"",
        ));
    }
    Ok(())
}

/// A size, or `"inf"` (also a TOML `inf`) for no limit.
fn size_or_inf(v: &Value) -> Result<u64, String> {
    match v {
        Value::String(s)
            if matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "inf" | "infinite" | "none"
            ) =>
        {
            Ok(u64::MAX)
        }
        Value::Float(f) if *f == f64::INFINITY => Ok(u64::MAX),
        v => size_value(v).map_err(|e| format!("{e}, or \"inf\" for no limit")),
    }
}

fn u32_size(v: &Value) -> Result<u32, String> {
    let b = size_value(v)?;
    u32::try_from(b).map_err(|_| format!("{b} bytes is too large"))
}

fn set_field(c: &mut TcpConfig, f: &str, v: &Value) -> Result<(), String> {
    match f {
        "mss" => c.mss = u32_size(v)?,
        "header_bytes" => c.header_bytes = u32_size(v)?,
        "count_option_bytes" => c.count_option_bytes = as_bool(v)?,
        "cc" => c.cc = as_str(v)?.parse::<CcKind>()?,
        "recovery" => c.recovery = as_str(v)?.parse::<Recovery>()?,
        "rtt_sampling" => c.rtt_sampling = as_str(v)?.parse::<RttSampling>()?,
        "dupack_threshold" => c.dupack_threshold = as_u32(v)?,
        "initial_window" => {
            c.initial_window = match v {
                Value::String(s) => match s.to_ascii_lowercase().as_str() {
                    "rfc3390" => InitialWindow::Rfc3390,
                    "rfc6928" => InitialWindow::Rfc6928,
                    _ => {
                        return Err(format!(
                            "unknown initial window {s:?}; expected a number of segments, \
                             \"rfc3390\" or \"rfc6928\""
                        ))
                    }
                },
                v => match as_u32(v) {
                    Ok(0) => return Err("must be at least 1 segment".into()),
                    Ok(n) => InitialWindow::Segments(n),
                    Err(_) => {
                        return Err(expected(
                            "a number of segments, \"rfc3390\" or \"rfc6928\"",
                            v,
                        ))
                    }
                },
            }
        }
        "initial_ssthresh" => c.initial_ssthresh = size_or_inf(v)?,
        "max_cwnd" => c.max_cwnd = size_or_inf(v)?,
        "max_send_window" => c.max_send_window = size_or_inf(v)?,
        "per_ack_counting" => c.per_ack_counting = as_bool(v)?,
        "min_rto" => c.min_rto = duration_value(v)?,
        "max_rto" => c.max_rto = duration_value(v)?,
        "initial_rto" => c.initial_rto = duration_value(v)?,
        "clock_granularity" => c.clock_granularity = duration_value(v)?,
        "max_backoff_exponent" => c.max_backoff_exponent = as_u32(v)?,
        "timestamps" => c.timestamps = as_bool(v)?,
        "ts_granularity" => c.ts_granularity = duration_value(v)?,
        "sack" => c.sack = as_bool(v)?,
        "handshake" => c.handshake = as_bool(v)?,
        "delayed_ack" => c.delayed_ack = as_bool(v)?,
        "delack_timeout" => c.delack_timeout = duration_value(v)?,
        "ack_every" => c.ack_every = as_u32(v)?,
        "rcv_buf" => c.rcv_buf = size_value(v)?,
        "wscale" => {
            c.wscale = match v {
                Value::String(s) if s.eq_ignore_ascii_case("auto") => None,
                v => match as_u32(v) {
                    // RFC 7323 §2.3: the shift is at most 14.
                    Ok(n) if n <= 14 => Some(n as u8),
                    Ok(n) => return Err(format!("must be at most 14 (RFC 7323), found {n}")),
                    Err(_) => return Err(expected("a shift 0..=14 or \"auto\"", v)),
                },
            }
        }
        "receiver_sws" => c.receiver_sws = as_bool(v)?,
        "sender_sws" => c.sender_sws = as_bool(v)?,
        "persist_min" => c.persist_min = duration_value(v)?,
        "persist_max" => c.persist_max = duration_value(v)?,
        "idle_restart" => c.idle_restart = as_bool(v)?,
        "limited_transmit" => c.limited_transmit = as_bool(v)?,
        "limited_transmit_after_timeout" => c.limited_transmit_after_timeout = as_bool(v)?,
        "rto_restart_on_fast_retransmit" => c.rto_restart_on_fast_retransmit = as_bool(v)?,
        "cwnd_validation" => c.cwnd_validation = as_bool(v)?,
        "window_updates" => c.window_updates = as_bool(v)?,
        "hold_ssthresh_on_repeated_rto" => c.hold_ssthresh_on_repeated_rto = as_bool(v)?,
        "handoff_reaction" => c.handoff_reaction = as_str(v)?.parse::<HandoffReaction>()?,
        "handoff_signal" => c.handoff_signal = as_str(v)?.parse::<HandoffSignal>()?,
        "ba_sst_refine" => c.ba_sst_refine = as_bool(v)?,
        "handoff_reset_rtt" => c.handoff_reset_rtt = as_bool(v)?,
        "freeze" => c.freeze = as_bool(v)?,
        "freeze_warning" => c.freeze_warning = duration_value(v)?,
        _ => return Err("unknown TCP field".into()),
    }
    Ok(())
}

/// A field's value as a scenario would write it (for the assumed list).
fn field_text(c: &TcpConfig, f: &str) -> String {
    match f {
        "rcv_buf" => format_size(c.rcv_buf),
        "max_backoff_exponent" => c.max_backoff_exponent.to_string(),
        "clock_granularity" => format_duration(c.clock_granularity),
        "ts_granularity" => format_duration(c.ts_granularity),
        "delack_timeout" => format_duration(c.delack_timeout),
        "persist_min" => format_duration(c.persist_min),
        "persist_max" => format_duration(c.persist_max),
        _ => String::new(),
    }
}
