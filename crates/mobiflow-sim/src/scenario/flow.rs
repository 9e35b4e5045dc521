//! `[[flows]]`: endpoints, timing, the application, the reader and TCP settings.

use super::flow_control::flow_control;
use super::params::Param;
use super::tcp::{check_cc_tables_used, tcp_config, tcp_keys, Profile};
use super::walk::{
    as_array, as_f64, as_name, as_str, expected, key_err, named, positive_duration, Tbl, R,
};
use super::Ctx;
use crate::engine::app::FlowCx;
use crate::model::{AppSpec, FlowSpec, LinkSpec, ReaderSpec, Transport};
use crate::units::{duration_value, format_duration, rate_value};
use mobiflow_proto::flow::FlowControl;
use mobiflow_proto::named_enum;
use mobiflow_proto::tcp::TcpConfig;
use mobiflow_proto::time::Duration;
use std::sync::Arc;
use toml::Value;

/// A key of `[[flows]]`, read by the hand-written code below (its checks depend on the
/// flow's other keys), and whether only a TCP flow takes it.
pub(crate) struct FlowKey {
    pub param: Param<()>,
    pub tcp_only: bool,
}

impl FlowKey {
    const fn any(param: Param<()>) -> Self {
        FlowKey {
            param,
            tcp_only: false,
        }
    }

    /// A key that a TFRC/DCCP flow refuses.
    const fn tcp(param: Param<()>) -> Self {
        FlowKey {
            param,
            tcp_only: true,
        }
    }
}

/// `[[flows]]`: its keys, in the order of the docs and of the "expected one of" list.
pub(crate) const FLOW: &[FlowKey] = &[
    FlowKey::any(Param::manual(
        "name",
        "string",
        "`\"flow<i>\"`",
        "Unique. No `.`, not all digits.",
    )),
    FlowKey::any(Param::manual(
        "from",
        "node name",
        "required",
        "Sending node.",
    )),
    FlowKey::any(Param::manual(
        "to",
        "node name",
        "required",
        "Receiving node. It must differ from `from` and be connected to it by a chain of links.",
    )),
    FlowKey::any(Param::manual(
        "transport",
        "`\"tcp\"`, `\"tfrc\"`, `\"dccp-ccid3\"`",
        "`\"tcp\"`",
        "TCP, TFRC (RFC 5348) over UDP, or DCCP CCID 3 (RFC 4342). TFRC/DCCP settings go in [`[flows.tfrc]`](#tfrc-and-dccp-ccid-3-flowstfrc); the TCP keys (`cc`, `tcp`, `flow_control`, `afc`, `autotune`, `rsfc`, `linux`) are refused there, and the reader must be `\"greedy\"`.",
    )),
    FlowKey::any(Param::manual(
        "start",
        "time",
        "`\"0s\"`",
        "When the flow starts (connection set-up, then data). It must be before `run.duration`.",
    )),
    FlowKey::any(Param::manual(
        "stop",
        "time",
        "none",
        "The sender stops offering new data at this time (bulk and on-off apps); a web app starts no page at or after it. It must be after `start`.",
    )),
    FlowKey::tcp(Param::manual(
        "cc",
        "a name of [Congestion controls](#congestion-controls-cc)",
        "the TCP configuration's",
        "Shorthand for `tcp.cc`. It may not be combined with `[flows.tcp] cc`.",
    )),
    FlowKey::any(Param::manual(
        "app",
        "see below",
        "`\"bulk\"`",
        "What the sender offers.",
    )),
    FlowKey::any(Param::manual(
        "reader",
        "see below",
        "`\"greedy\"`",
        "How the receiving application reads.",
    )),
    FlowKey::tcp(Param::manual(
        "tcp",
        "table",
        "",
        "Per-flow TCP settings; see [`[tcp]`](#tcp-and-flowstcp).",
    )),
    FlowKey::tcp(Param::manual(
        "flow_control",
        "a name of [Flow control](#flow-control-flows-afc-flows-autotune-flows-rsfc-and-flows-linux)",
        "`\"classic\"` (`\"linux\"` under the `linux` profile)",
        "Receive-window policy.",
    )),
    FlowKey::tcp(Param::manual(
        "afc",
        "table",
        "",
        "AFC's parameters; only with `flow_control = \"afc\"`.",
    )),
    FlowKey::tcp(Param::manual(
        "autotune",
        "table",
        "",
        "Auto-tuning's parameters; only with `flow_control = \"autotune\"`.",
    )),
    FlowKey::tcp(Param::manual(
        "rsfc",
        "table",
        "",
        "RSFC's parameters; only with `flow_control = \"rsfc\"`.",
    )),
    FlowKey::tcp(Param::manual(
        "linux",
        "table",
        "",
        "The parameters of Linux's receive buffer; only with `flow_control = \"linux\"` (the `linux` profile's).",
    )),
    FlowKey::any(Param::manual(
        "web",
        "table",
        "",
        "The pages of a web app; only with `app = \"web\"`. See [Web pages](#web-pages-app--web-and-flowsweb).",
    )),
    FlowKey::any(Param::manual(
        "tfrc",
        "table",
        "",
        "TFRC / DCCP CCID 3 / Freeze-DCCP settings; only with `transport = \"tfrc\"` or `\"dccp-ccid3\"`.",
    )),
];

/// The keys of `[[flows]]`.
fn flow_keys() -> Vec<&'static str> {
    FLOW.iter().map(|k| k.param.key).collect()
}

/// The keys of `[[flows]]` that only a TCP flow takes, in declaration order.
pub(crate) fn tcp_only_flow_keys() -> impl Iterator<Item = &'static str> {
    FLOW.iter().filter(|k| k.tcp_only).map(|k| k.param.key)
}

named_enum! {
    /// `transport`.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    enum TransportKind (
        "transport",
        expected "\"tcp\", \"tfrc\" or \"dccp-ccid3\"",
        quoting lowercase
    ) {
        Tcp = "tcp",
        Tfrc = "tfrc",
        Dccp = "dccp-ccid3" | "dccp",
    }
}

/// Default interval between reads of a non-greedy reader: an assumption.
pub(crate) const DEFAULT_READ_INTERVAL: Duration = Duration::from_millis(10);

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
        g.opt("profile", named::<Profile>)?;
    }
    let arr = root.items("flows", "flow", "from and to")?;
    let mut flows: Vec<FlowSpec> = Vec::with_capacity(arr.len());
    // (flow index, assumed TCP defaults) of the TCP flows.
    let mut tcp_assumed: Vec<(usize, Vec<(String, String)>)> = Vec::new();
    let mut last_tcp: Option<Arc<TcpConfig>> = None;
    // Flow name -> index, so that a duplicate is found without a scan per flow.
    let mut names: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(arr.len());
    for (i, v) in arr.iter().enumerate() {
        let path = format!("flows.{i}");
        let t = v
            .as_table()
            .ok_or_else(|| key_err(&path, expected("a table (a [[flows]] entry)", v)))?;
        let ft = Tbl::new(t, path.clone());
        let (mut flow, assumed) =
            parse_flow(&ft, i, nodes, links, duration, global_tcp.as_ref(), ctx)?;
        // A TCP configuration equal to the previous TCP flow's is that one, shared.
        if let Transport::Tcp(cfg) = &mut flow.transport {
            match &last_tcp {
                Some(prev) if **prev == **cfg => *cfg = Arc::clone(prev),
                _ => last_tcp = Some(Arc::clone(cfg)),
            }
        }
        if let Some(&j) = names.get(&flow.name) {
            return Err(key_err(
                format!("{path}.name"),
                format!("duplicate flow name {:?} (also flows.{j})", flow.name),
            ));
        }
        names.insert(flow.name.clone(), i);
        if matches!(flow.transport, Transport::Tcp(_)) {
            tcp_assumed.push((i, assumed));
        }
        flows.push(flow);
    }
    if let Some(g) = &global_tcp {
        check_cc_tables_used(g, &flows)?;
    }
    add_channels(&mut flows)?;
    // An assumed TCP default shared by every flow is reported once, as `tcp.<field>`.
    // (Decided once: a test per flow and default would cost flows² at 10,000 flows.)
    let shared: Vec<&(String, String)> = tcp_assumed.first().map_or_else(Vec::new, |(_, first)| {
        first
            .iter()
            .filter(|kv| tcp_assumed.iter().all(|(_, a)| a.contains(kv)))
            .collect()
    });
    for kv in &shared {
        ctx.assume(format!("tcp.{}", kv.0), kv.1.clone());
    }
    for (i, a) in &tcp_assumed {
        for kv in a.iter().filter(|kv| !shared.contains(kv)) {
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
) -> R<(FlowSpec, Vec<(String, String)>)> {
    ft.check_keys(&flow_keys())?;
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
    let dccp = match ft.opt("transport", named::<TransportKind>)? {
        None | Some(TransportKind::Tcp) => None,
        Some(TransportKind::Tfrc) => Some(false),
        Some(TransportKind::Dccp) => Some(true),
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
        let app = app(ft, start, false, ctx)?;
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
    tcp.flow_control = flow_control(ft, ctx, &tcp.flow_control)?;
    if matches!(tcp.flow_control, FlowControl::Rsfc(_)) && !tcp.timestamps {
        return Err(key_err(
            ft.key("flow_control"),
            "\"rsfc\" needs TCP timestamps (it estimates the uplink queueing delay from \
             them), but timestamps = false for this flow (set [tcp] or [flows.tcp] \
             timestamps = true; the ns2 profile turns them off)",
        ));
    }
    let app = app(ft, start, true, ctx)?;
    if !matches!(app, AppSpec::Web { .. }) && ft.has("web") {
        return Err(key_err(
            ft.key("web"),
            "only used with app = \"web\" (this flow's app is another kind)",
        ));
    }
    let reader = reader(ft, ctx)?;
    if matches!(app, AppSpec::Web { .. }) && reader != ReaderSpec::Greedy {
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
            transport: Transport::Tcp(Arc::new(tcp)),
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

fn app(ft: &Tbl, start: Duration, tcp: bool, ctx: &mut Ctx) -> R<AppSpec> {
    let Some((k, t)) = kind(ft, "app", AppSpec::KINDS)? else {
        return Ok(AppSpec::Bulk);
    };
    let mut cx = FlowCx {
        flow: ft,
        start,
        tcp,
        ctx,
    };
    AppSpec::parse(&k, t.as_ref(), &mut cx, &ft.key("app"))
}

/// Appends the channels every declared flow's application opens (the web
/// application's connections, `AppKind::channels`) after the declared flows.
fn add_channels(flows: &mut Vec<FlowSpec>) -> R<()> {
    for m in 0..flows.len() {
        for chan in AppSpec::channels(&flows[m], m) {
            if let Some(j) = flows.iter().position(|f| f.name == chan.name) {
                return Err(key_err(
                    format!("flows.{j}.name"),
                    format!(
                        "{:?} is the name of a channel of web flow flows.{m}; rename one",
                        chan.name
                    ),
                ));
            }
            flows.push(chan);
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

#[cfg(test)]
mod tests {
    use super::{tcp_only_flow_keys, FLOW};

    #[test]
    fn an_unknown_flow_key_lists_the_declared_keys_in_their_order() {
        let text = "[[links]]\na = \"s\"\nb = \"r\"\nrate = \"1Mbps\"\ndelay = \"10ms\"\n\
                    [[flows]]\nfrom = \"s\"\nto = \"r\"\nzzz = 1\n";
        let e = crate::scenario::load_str(text, None, &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows.0.zzz: unknown key; expected one of name, from, to, transport, start, \
             stop, cc, app, reader, tcp, flow_control, afc, autotune, rsfc, linux, web, tfrc"
        );
    }

    #[test]
    fn the_transport_row_names_the_keys_a_tfrc_flow_refuses() {
        let transport = FLOW.iter().find(|k| k.param.key == "transport").unwrap();
        let listed: Vec<String> = tcp_only_flow_keys().map(|k| format!("`{k}`")).collect();
        let want = format!("the TCP keys ({}) are refused there", listed.join(", "));
        assert!(
            transport.param.doc.contains(&want),
            "{:?} does not say {want:?}",
            transport.param.doc
        );
    }
}
