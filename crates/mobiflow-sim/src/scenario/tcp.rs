//! `[tcp]` and `[flows.tcp]`, with `[tcp.cubic]`, `[tcp.relentless]` and `[tcp.fld]`:
//! one declaration per table ([`TCP`], [`CUBIC`], [`RELENTLESS`], [`FLD`]), read in layers (the profile, `[tcp]`,
//! `[flows.tcp]`, the flow's `cc`).

use super::params::{keys, read_layers, set, unset_assumed, Bad, Param};
use super::walk::{as_array, as_bool, as_str, as_u32, expected, key_err, named, Tbl, R};
use crate::model::{FlowSpec, Transport};
use crate::units::{duration_value, format_duration, format_size, size_value};
use mobiflow_proto::cc::{
    CcKind, Counting, CubicArithmetic, CubicParams, FldAlgo, FldCount, FldInitialWindow, FldParams,
    FldSwitch, HystartDetect, RelentlessParams, RelentlessTimeout,
};
use mobiflow_proto::named_enum;
use mobiflow_proto::tcp::{
    AckPolicy, HandoffReaction, HandoffSignal, IdleRestart, InitialWindow, LossDetection, Recovery,
    RtoFormula, RttSampling, SenderExtName, SenderExtSet, TcpConfig,
};
use toml::Value;

/// `profile`: read first, by hand (it picks the config the other keys change).
const PROFILE: Param<TcpConfig> = Param::manual(
    "profile",
    "`\"rfc\"` / `\"ns2\"` / `\"linux\"`",
    "`\"rfc\"`",
    "`rfc`: a standards-following stack (`TcpConfig::default()`). `ns2`: the conventions of ns-2.35's Agent/TCP/Newreno with a TCPSink (`TcpConfig::ns2()`), for comparison with ns-2. `linux`: the defaults of an unmodified Linux 6.x stack (`TcpConfig::linux()`), for comparison with the kernel in live mode.",
);

/// Every `TcpConfig` field a scenario may set, in the order of the documentation.
/// Assumed: the defaults that are a choice of this project rather than a standard's
/// (or ns-2's, under the `ns2` profile, whose TCPSink has no buffer limit: any finite
/// `rcv_buf` is our choice).
type Tcp = Param<TcpConfig>;
pub(crate) const TCP: &[Tcp] = &[
    PROFILE,
    Tcp::new(
        "mss",
        "size, bytes",
        set!(mss, u32_size),
        |d| d.mss.to_string(),
        "Maximum segment size (payload).",
    ),
    Tcp::new(
        "header_bytes",
        "size, bytes",
        set!(header_bytes, u32_size),
        |d| d.header_bytes.to_string(),
        "IP + TCP header bytes counted on the wire per segment.",
    ),
    Tcp::new(
        "count_option_bytes",
        "bool",
        set!(count_option_bytes, as_bool),
        |d| d.count_option_bytes.to_string(),
        "Count TCP options (timestamps, SACK) in the wire size.",
    ),
    Tcp::new(
        "cc",
        "a name of [Congestion controls](#congestion-controls-cc)",
        set!(cc, |v| as_str(v)?.parse::<CcKind>()),
        |d| d.cc.name().into(),
        "Congestion control. `cubic` takes its knobs from [`[tcp.cubic]`](#tcpcubic); `relentless` and `fld` take parameters from [`[tcp.relentless]` and `[tcp.fld]`](#tcprelentless-and-tcpfld). `bbr` is BBR v1 as Linux's `tcp_bbr.c`, with delivery-rate sampling and internal pacing at its pacing rate; its random start phase of the gain cycle is drawn from the run's seed.",
    ),
    Tcp::new(
        "recovery",
        "`\"reno\"`, `\"newreno\"`, `\"sack\"`",
        set!(recovery, |v| as_str(v)?.parse::<Recovery>()),
        |d| d.recovery.name().into(),
        "Loss recovery after a fast retransmit; `\"sack\"` needs `sack = true`.",
    ),
    Tcp::new(
        "dupack_threshold",
        "integer ≥ 1",
        set!(dupack_threshold, as_u32),
        |d| d.dupack_threshold.to_string(),
        "Duplicate ACKs that trigger a fast retransmit.",
    ),
    Tcp::new(
        "loss_detection",
        "`\"dupthresh\"`, `\"rack\"`",
        set!(loss_detection, |v| as_str(v)?.parse::<LossDetection>()),
        |d| d.loss_detection.name().into(),
        "Loss detection with SACK: `dupthresh`, RFC 6675's IsLost and a recovery on the `dupack_threshold`-th duplicate ACK; `rack`, RACK (RFC 8985 §6, Linux `tcp_rack_mark_lost`): a segment is lost once one sent after it is delivered and RACK.rtt plus a reordering window (min RTT / 4, zero in recovery or after `dupack_threshold` SACKed segments while no reordering has been seen) has passed, with a reorder timer; recovery starts only when RACK marks a loss (`profile = \"linux\"`: `rack`).",
    ),
    Tcp::new(
        "tlp",
        "bool",
        set!(tlp, as_bool),
        |d| d.tlp.to_string(),
        "Tail loss probe (RFC 8985 §7, Linux `tcp_schedule_loss_probe` / `tcp_send_loss_probe`; needs SACK): in the open state, 2·SRTT (+ 200 ms with one segment in flight, else + 2 ms) without an ACK sends one new segment beyond cwnd, or the last segment again, at most one probe per episode; a probe that repaired a loss reduces cwnd once (`profile = \"linux\"`: on).",
    ),
    Tcp::new(
        "prr",
        "bool",
        set!(prr, as_bool),
        |d| d.prr.to_string(),
        "Proportional rate reduction (RFC 6937, Linux `tcp_cwnd_reduction`) for cwnd during SACK recovery: sends ssthresh / cwnd-before of what is delivered while pipe is above ssthresh, then PRR-SSRB. Off: cwnd = ssthresh at the fast retransmit (RFC 6675) (`profile = \"linux\"`: on).",
    ),
    Tcp::new(
        "sack_rtt",
        "bool",
        set!(sack_rtt, as_bool),
        |d| d.sack_rtt.to_string(),
        "RTT samples from newly SACKed segments never retransmitted (Linux `tcp_sacktag_one` / `tcp_ack_update_rtt`) when the ACK gives no other sample, as duplicate ACKs in a recovery (`profile = \"linux\"`: on).",
    ),
    Tcp::new(
        "initial_window",
        "segments (integer ≥ 1), `\"rfc3390\"` or `\"rfc6928\"`",
        set!(initial_window, initial_window),
        |d| initial_window_text(d.initial_window),
        "Initial congestion window. With `cc = \"fld\"` the default is `\"rfc6928\"` (10 segments) **[assumed]**, in either profile.",
    ),
    Tcp::new(
        "initial_ssthresh",
        "size or `\"inf\"`",
        set!(initial_ssthresh, size_or_inf),
        |d| size_or_inf_text(d.initial_ssthresh),
        "Initial slow-start threshold.",
    ),
    Tcp::new(
        "max_cwnd",
        "size or `\"inf\"`",
        set!(max_cwnd, size_or_inf),
        |d| size_or_inf_text(d.max_cwnd),
        "Upper bound on cwnd growth (ns-2 `maxcwnd_`, applied where the window opens): the initial window is not capped by it.",
    ),
    Tcp::new(
        "max_send_window",
        "size or `\"inf\"`",
        set!(max_send_window, size_or_inf),
        |d| size_or_inf_text(d.max_send_window),
        "Upper bound on the sender's window whatever the receiver advertises (ns-2 `window_`, in bytes here; ns-2's own default is 20 packets).",
    ),
    Tcp::new(
        "window_counting",
        "`\"bytes\"`, `\"per_ack\"`, `\"segments\"`",
        set!(window_counting, |v| as_str(v)?.parse::<Counting>()),
        |d| d.window_counting.name().into(),
        "How Reno, NewReno, Relentless, FLD_TCP and RFC 9438 CUBIC count what an ACK acknowledged. `bytes`: RFC 5681 §3.1, slow start adds min(N, SMSS) per ACK (so a delayed ACK of two segments adds one) and a reduction sets ssthresh = max(FlightSize/2, 2 SMSS). `per_ack`: ns-2, each ACK that advances the window adds one segment in slow start and SMSS²/cwnd in congestion avoidance, and ssthresh is truncated to whole segments (ns-2's `ssthresh_` is an int). `segments`: Linux, slow start adds every segment delivered (`tcp_slow_start`: a delayed ACK of two adds two), congestion avoidance one segment per cwnd segments delivered (`tcp_cong_avoid_ai`), and a reduction sets ssthresh = max(cwnd/2, 2) segments (`tcp_reno_ssthresh`). CUBIC with `[tcp.cubic] arithmetic = \"linux\"` always counts segments.",
    ),
    Tcp::new(
        "min_rto",
        "time, > 0",
        set!(min_rto, duration_value),
        |d| format_duration(d.min_rto),
        "RTO lower bound.",
    ),
    Tcp::new(
        "max_rto",
        "time",
        set!(max_rto, duration_value),
        |d| format_duration(d.max_rto),
        "RTO upper bound; must not be below `min_rto`.",
    ),
    Tcp::new(
        "initial_rto",
        "time, > 0",
        set!(initial_rto, duration_value),
        |d| format_duration(d.initial_rto),
        "RTO before the first RTT sample.",
    ),
    Tcp::new(
        "clock_granularity",
        "time, > 0",
        set!(clock_granularity, duration_value),
        |d| format_duration(d.clock_granularity),
        "Clock granularity G of RFC 6298 and tick of the RTO arithmetic.",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "rto_formula",
        "`\"rfc6298\"` or `\"linux\"`",
        set!(rto_formula, |v| as_str(v)?.parse::<RtoFormula>()),
        |d| d.rto_formula.name().into(),
        "How the RTO follows from the RTT samples: RFC 6298 (SRTT + max(G, 4 RTTVAR), clamped to [`min_rto`, `max_rto`]) or Linux's `tcp_rtt_estimator` / `__tcp_set_rto` (SRTT + rttvar, where rttvar is 4 mdev held at its largest value of the last RTT, decays once per RTT and never falls below `min_rto`; a falling RTT raises mdev with gain 1/32); with `\"linux\"` the RTO is also a whole number of jiffies (4 ms at the kernel's default HZ = 250) and the retransmission timer, the loss probe's too, runs on the kernel's timer wheel, which fires it up to one granularity of its level late (32 ms for RTOs under 2 s, 256 ms up to 16 s: `tcp::jiffies`).",
    ),
    Tcp::new(
        "rtt_sampling",
        "`\"every-ack\"` or `\"timed-segment\"`",
        set!(rtt_sampling, |v| as_str(v)?.parse::<RttSampling>()),
        |d| d.rtt_sampling.name().into(),
        "RTT samples without timestamps: from every ACK of new data unless it covers a retransmitted segment (Linux), or from one timed segment per RTT, whose ACK counts even if it also covers retransmitted data (BSD, ns-2's `rtt_seq_`). After a timeout the first ends the RTO backoff only when all resent data is acknowledged, the second at the first ACK of a segment sent after it.",
    ),
    Tcp::new(
        "max_backoff_exponent",
        "integer 0..=30",
        set!(max_backoff_exponent, as_u32),
        |d| d.max_backoff_exponent.to_string(),
        "Maximum number of RTO doublings.",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "hold_ssthresh_on_repeated_rto",
        "bool",
        set!(hold_ssthresh_on_repeated_rto, as_bool),
        |d| d.hold_ssthresh_on_repeated_rto.to_string(),
        "On a second timeout of the same data hold ssthresh (RFC 5681 §3.1); `false` halves what is in flight again, as ns-2 does (2 segments).",
    ),
    Tcp::new(
        "timestamps",
        "bool",
        set!(timestamps, as_bool),
        |d| d.timestamps.to_string(),
        "RFC 7323 timestamps.",
    ),
    Tcp::new(
        "ts_granularity",
        "time, > 0",
        set!(ts_granularity, duration_value),
        |d| format_duration(d.ts_granularity),
        "Tick of the timestamp clock.",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "sack",
        "bool",
        set!(sack, as_bool),
        |d| d.sack.to_string(),
        "SACK (RFC 2018).",
    ),
    Tcp::new(
        "handshake",
        "bool",
        set!(handshake, as_bool),
        |d| d.handshake.to_string(),
        "SYN / SYN-ACK exchange before data (ns-2.35: `syn_ true`, `delay_growth_ true`, a 40-byte first packet; data starts one RTT later).",
    ),
    Tcp::new(
        "delayed_ack",
        "bool",
        set!(delayed_ack, as_bool),
        |d| d.delayed_ack.to_string(),
        "Delayed ACKs at the receiver.",
    ),
    Tcp::new(
        "delack_timeout",
        "time (> 0 with delayed ACKs)",
        set!(delack_timeout, duration_value),
        |d| format_duration(d.delack_timeout),
        "Delayed-ACK timer (RFC 1122 allows up to 500 ms).",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "ack_every",
        "integer ≥ 1",
        set!(ack_every, as_u32),
        |d| d.ack_every.to_string(),
        "Full-sized segments after which an ACK is sent at once.",
    ),
    Tcp::new(
        "ack_policy",
        "`\"rfc5681\"` or `\"linux\"`",
        set!(ack_policy, |v| as_str(v)?.parse::<AckPolicy>()),
        |d| d.ack_policy.name().into(),
        "When delayed ACKs go out: RFC 5681 §4.2 (every `ack_every` full segments, else after `delack_timeout`; out-of-order data at once) or Linux's (`tcp_event_data_recv`, `__tcp_ack_snd_check`, `tcp_send_delayed_ack`): quick-ACK mode (every segment at once, up to min(window / (2 MSS), 16) segments at the start, after a receive gap longer than the RTO and after a duplicate; one more for each segment that lets the window grow), otherwise at once after more than one MSS, else after the adaptive `ato` (40 ms up to the RTO, the timer at most 200 ms); SACK compression of the fourth and later duplicate ACKs (1 ms). `linux` ignores `ack_every` and `delack_timeout`.",
    ),
    Tcp::new(
        "rcv_buf",
        "size, at least one `mss`",
        set!(rcv_buf, size_value),
        |d| format_size(d.rcv_buf),
        "Receive buffer; the advertised window comes from its free space.",
    ).assumed(),
    Tcp::new(
        "wscale",
        "integer 0..=14 or `\"auto\"`",
        set!(wscale, wscale),
        |d| d.wscale.map_or_else(|| "auto".into(), |n| n.to_string()),
        "Window-scale shift offered by the receiver; `auto` takes the smallest one that fits `rcv_buf`.",
    ),
    Tcp::new(
        "receiver_sws",
        "bool",
        set!(receiver_sws, as_bool),
        |d| d.receiver_sws.to_string(),
        "Receiver silly-window-syndrome avoidance.",
    ),
    Tcp::new(
        "sender_sws",
        "bool",
        set!(sender_sws, as_bool),
        |d| d.sender_sws.to_string(),
        "Sender SWS avoidance (RFC 1122 §4.2.3.4): while data is in flight, no segment shorter than the MSS because the receiver's window is short, unless it is at least half the largest window offered. Off: the sender fills the offered window to its edge, as Linux and ns-2 do.",
    ),
    Tcp::new(
        "persist_min",
        "time, > 0",
        set!(persist_min, duration_value),
        |d| format_duration(d.persist_min),
        "Shortest persist-timer probe interval.",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "persist_max",
        "time, ≥ `persist_min`",
        set!(persist_max, duration_value),
        |d| format_duration(d.persist_max),
        "Longest persist-timer probe interval.",
    ).assumed_unless(&["ns2", "linux"]),
    Tcp::new(
        "idle_restart",
        "bool",
        set!(idle_restart, as_bool),
        |d| d.idle_restart.to_string(),
        "Restart from the initial window after an idle period longer than the RTO (RFC 5681 §4.1).",
    ),
    Tcp::new(
        "idle_restart_rule",
        "`\"rfc5681\"` or `\"linux\"`",
        set!(idle_restart_rule, |v| as_str(v)?.parse::<IdleRestart>()),
        |d| d.idle_restart_rule.name().into(),
        "With `idle_restart`: cwnd falls to min(initial window, cwnd) at once (RFC 5681 §4.1), or as Linux's `tcp_cwnd_restart`: halved once per RTO of idle time beyond the first, not below that restart window, with ssthresh raised to at least 3/4 of cwnd (`tcp_current_ssthresh`).",
    ),
    Tcp::new(
        "limited_transmit",
        "bool",
        set!(limited_transmit, as_bool),
        |d| d.limited_transmit.to_string(),
        "Limited transmit (RFC 3042; ns-2.35: `singledup_ 1`).",
    ),
    Tcp::new(
        "limited_transmit_after_timeout",
        "bool",
        set!(limited_transmit_after_timeout, as_bool),
        |d| d.limited_transmit_after_timeout.to_string(),
        "With `limited_transmit`, the first two duplicate ACKs after a retransmission timeout each let one more segment of the resend out beyond cwnd, as ns-2 does (`RenoTcpAgent::timeout` zeroes `dupacks_`; `TcpAgent::send_one`). Off: limited transmit only outside loss recovery.",
    ),
    Tcp::new(
        "rto_restart_on_fast_retransmit",
        "bool",
        set!(rto_restart_on_fast_retransmit, as_bool),
        |d| d.rto_restart_on_fast_retransmit.to_string(),
        "Restart the retransmission timer when a fast retransmit starts a recovery, as ns-2's `dupack_action` does (`reset_rtx_timer(1, 0)`). Off: RFC 6298 §5.3, the timer restarts only on ACKs of new data.",
    ),
    Tcp::new(
        "cwnd_validation",
        "bool",
        set!(cwnd_validation, as_bool),
        |d| d.cwnd_validation.to_string(),
        "Congestion-window validation (RFC 7661 §4, Linux's `tcp_is_cwnd_limited`): cwnd grows only while it is what limits the sender, not while the receiver's window or the application does. ns-2 grows it regardless.",
    ),
    Tcp::new(
        "dsack",
        "bool",
        set!(dsack, as_bool),
        |d| d.dsack.to_string(),
        "D-SACK at the receiver (RFC 2883; Linux `tcp_dsack = 1`, `tcp_dsack_set`): the first SACK block of the next ACK reports a segment that brought bytes already received. Only with `sack`.",
    ),
    Tcp::new(
        "undo",
        "bool",
        set!(undo, as_bool),
        |d| d.undo.to_string(),
        "Undo a congestion reduction proven spurious, as Linux does (`tcp_try_undo_recovery`, `tcp_try_undo_partial`, `tcp_try_undo_dsack`, `tcp_try_undo_loss`, `tcp_undo_cwnd_reduction`): by the Eifel detection (RFC 3522: the ACK echoes a timestamp older than the first retransmission; needs `timestamps`) or when every retransmission of the episode was D-SACKed (RFC 3708; needs the peer's D-SACK). The controller gets its window back and the resend stops.",
    ),
    Tcp::new(
        "frto",
        "bool",
        set!(frto, as_bool),
        |d| d.frto.to_string(),
        "F-RTO after a retransmission timeout (RFC 5682 §3.1, SACK-enhanced; Linux `tcp_frto = 2`, `tcp_process_loss`): new data on the first ACK that advances, instead of the go-back-N resend; if the next ACKs acknowledge data that was never retransmitted the timeout was spurious and is undone.",
    ),
    Tcp::new(
        "window_updates",
        "bool",
        set!(window_updates, as_bool),
        |d| d.window_updates.to_string(),
        "Send a window update when the application's reads open the window (RFC 9293 §3.8.6.2.2). `false`: the sender learns of a reopened window only from ACKs of arriving data or of its zero-window probes.",
    ),
    Tcp::new(
        "handoff_reaction",
        "`\"none\"`, `\"iett\"`, `\"ba-sst\"`, `\"iett+ba-sst\"`",
        set!(handoff_reaction, |v| as_str(v)?.parse::<HandoffReaction>()),
        |d| d.handoff_reaction.name().into(),
        "The sender's reaction to an interface change of the mobile host (K. Tsukamoto, Y. Fukuda, Y. Hori, Y. Oie, \"New flow control schemes of TCP for multimodal mobile hosts\", IEICE Trans. Commun. E89-B(6), 2006; see [Handoffs](#handoffs-and-mobility-events)): `iett` expires the retransmission timer at once (restart by slow start, no backoff); `ba-sst` sets ssthresh to a packet-pair estimate of the new path's bandwidth × its RTT (Hoe; refined as Aron & Druschel); `iett+ba-sst` is the paper's \"Bandwidth Aware\" scheme.",
    ),
    Tcp::new(
        "handoff_signal",
        "`\"ack-option\"`, `\"out-of-band\"`",
        set!(handoff_signal, |v| as_str(v)?.parse::<HandoffSignal>()),
        |d| d.handoff_signal.name().into(),
        "How a mobile *receiver* tells the sender: an ACK sent at once on reconnection carrying an explicit notice, or a signal that reaches the sender one path one-way propagation delay later. Reported as assumed when a reaction is on and it is unset.",
    ).assumed_when(reacts),
    Tcp::new(
        "ba_sst_refine",
        "bool",
        set!(ba_sst_refine, as_bool),
        |d| d.ba_sst_refine.to_string(),
        "BA-SST re-estimates from every later packet pair of the slow start after the change (median of the samples); `false`: only the first pair (Hoe).",
    ).assumed_when(|c| c.handoff_reaction.ba_sst()),
    Tcp::new(
        "handoff_reset_rtt",
        "bool",
        set!(handoff_reset_rtt, as_bool),
        |d| d.handoff_reset_rtt.to_string(),
        "On an interface change (with a reaction), forget SRTT and RTTVAR: the RTO restarts from `initial_rto` until the new path's first sample. Off: the old path's estimate stays (the seed does not say).",
    ).assumed_when(reacts),
    Tcp::new(
        "freeze",
        "bool",
        set!(freeze, as_bool),
        |d| d.freeze.to_string(),
        "Freeze-TCP at the receiver (Goff et al. 2000): a zero window `freeze_warning` before each disconnection of a link on the path next to the receiver, three TR-ACKs on reconnection. The sender is unmodified.",
    ),
    Tcp::new(
        "freeze_warning",
        "time",
        set!(freeze_warning, duration_value),
        |d| format_duration(d.freeze_warning),
        "How long before the disconnection the receiver freezes (ideally about one RTT). Reported as assumed when `freeze = true` and it is unset.",
    ).assumed_when(|c| c.freeze),
    Tcp::new(
        "extensions",
        "array of names of [Sender extensions](#sender-extensions-extensions)",
        |c, v| {
            c.extensions = extensions(v)?;
            Ok(())
        },
        |d| {
            let names: Vec<&str> = d.extensions.iter().map(SenderExtName::name).collect();
            names.join(", ")
        },
        "Sender extensions turned on by name: those of [Sender extensions](#sender-extensions-extensions) that say so (the others follow from other keys).",
    )
    .default_text("none"),

];

/// `extensions`: names of sender extensions that are turned on by name.
fn extensions(v: &Value) -> Result<SenderExtSet, Bad> {
    let mut set = SenderExtSet::EMPTY;
    for (i, x) in as_array(v)?.iter().enumerate() {
        let at = |reason: String| Bad {
            index: Some(i),
            reason,
        };
        let e: SenderExtName = named(x).map_err(at)?;
        if !e.listed() {
            return Err(at(format!(
                "{:?} is turned on by other keys, not by name (see the sender extensions in \
                 docs/scenarios.md)",
                e.name()
            )));
        }
        set = set.with(e);
    }
    Ok(set)
}

fn reacts(c: &TcpConfig) -> bool {
    c.handoff_reaction != HandoffReaction::None
}

/// Sub-tables of `[tcp]` and `[flows.tcp]` with the parameters of one controller.
pub(crate) const CC_TABLES: &[&str] = &["cubic", "fld", "relentless"];

/// Keys of `[tcp]` and `[flows.tcp]`.
pub(crate) fn tcp_keys() -> Vec<&'static str> {
    keys(TCP)
        .into_iter()
        .chain(CC_TABLES.iter().copied())
        .collect()
}

/// `[tcp.cubic]`: the arithmetic of CUBIC and HyStart. The defaults are the
/// profile's: RFC 9438 without HyStart (`rfc`, `ns2`), `tcp_cubic.c` (`linux`).
type Cub = Param<CubicParams>;
pub(crate) const CUBIC: &[Cub] = &[
    Cub::new(
        "arithmetic",
        "`\"rfc9438\"`, `\"linux\"`",
        set!(arithmetic, |v| as_str(v)?.parse::<CubicArithmetic>()),
        |d| d.arithmetic.name().into(),
        "`rfc9438`: RFC 9438 in bytes (`cc::cubic`). `linux`: the kernel's `tcp_cubic.c` in segments and jiffies (`cc::cubic_linux`): beta 717/1024, C in fixed point, the target one minimum RTT ahead, `cnt` per ACK (at least 2, at most 20 before the first loss), its Reno-friendly estimate, the whole state forgotten on a timeout, the epoch shifted by idle time.",
    ),
    Cub::new(
        "hz",
        "integer ≥ 1",
        set!(hz, |v| match as_u32(v)? {
            0 => Err("must be at least 1".to_string()),
            h => Ok(h),
        }),
        |d| d.hz.to_string(),
        "`CONFIG_HZ`, the jiffies per second of the `linux` arithmetic's clock.",
    ),
    Cub::new(
        "hystart",
        "bool",
        set!(hystart, as_bool),
        |d| d.hystart.to_string(),
        "HyStart (`tcp_cubic.c`, not HyStart++): leave slow start (ssthresh = cwnd) when a train of ACKs spans half the minimum RTT or a round's minimum RTT rises above it by `clamp(delay_min/8, 4 ms, 16 ms)`.",
    ),
    Cub::new(
        "hystart_detect",
        "`\"both\"`, `\"train\"`, `\"delay\"`",
        set!(hystart_detect, |v| as_str(v)?.parse::<HystartDetect>()),
        |d| d.hystart_detect.name().into(),
        "Which HyStart detectors run (`hystart_detect`).",
    ),
    Cub::new(
        "hystart_low_window",
        "segments",
        set!(hystart_low_window, as_u32),
        |d| d.hystart_low_window.to_string(),
        "No HyStart detection below this cwnd (`hystart_low_window`).",
    ),
    Cub::new(
        "hystart_ack_delta",
        "duration",
        set!(hystart_ack_delta, duration_value),
        |d| format_duration(d.hystart_ack_delta),
        "ACKs closer than this belong to one train (`hystart_ack_delta_us`).",
    ),
];

/// `[tcp.relentless]`.
pub(crate) const RELENTLESS: &[Param<RelentlessParams>] = &[Param::<RelentlessParams>::new(
    "timeout",
    "`\"reno\"`, `\"hold\"`",
    set!(timeout, |v| as_str(v)?.parse::<RelentlessTimeout>()),
    |d| d.timeout.name().into(),
    "After a retransmission timeout: `reno` sets ssthresh = max(FlightSize/2, 2 SMSS) as Reno; `hold` sets ssthresh = max(cwnd, 2 SMSS), as Mathis's Linux module. cwnd falls to one segment in both.",
)
.assumed()
.note("[guess]")];

/// `[tcp.fld]` (FLD_TCP: Moktan, "In the Interest of the Short: An approach for e2e
/// congestion control", talk slides, Aalto University, 2012). Every default is an
/// assumption ([slide]: stated by the slides, or [guess]; see `cc::fld`).
type Fld = Param<FldParams>;
pub(crate) const FLD: &[Fld] = &[
    Fld::new(
        "threshold",
        "size or `\"inf\"`",
        set!(threshold_bytes, size_or_inf),
        |d| format_size(d.threshold_bytes),
        "Bytes after which the flow leaves `below` for `above`. `\"inf\"`: never; `0`: `above` from the start.",
    )
    .assumed()
    .note("[slide: 2 MB; guess: binary]"),
    Fld::new(
        "count",
        "`\"sent\"`, `\"acked\"`",
        set!(count, |v| as_str(v)?.parse::<FldCount>()),
        |d| d.count.name().into(),
        "What counts towards the threshold: every payload byte sent, retransmissions included, or bytes newly acknowledged.",
    )
    .assumed()
    .note("[guess]"),
    Fld::new(
        "ss_factor",
        "integer ≥ 2",
        set!(ss_factor, |v| match as_u32(v)? {
            f if f >= 2 => Ok(f),
            f => Err(format!(
                "must be at least 2 (2 is the algorithm's own slow start), found {f}"
            )),
        }),
        |d| d.ss_factor.to_string(),
        "Slow start below the threshold multiplies the window by this per RTT: each ACK adds `ss_factor − 1` times the algorithm's own slow-start step (RFC 5681 eq. 2, `min(N, SMSS)`) [guess]. 2 is the algorithm's own slow start. With delayed ACKs and byte counting, factor 3 gives ×2 per RTT where Reno gives ×1.5.",
    )
    .assumed()
    .note("[slide]"),
    Fld::new(
        "below",
        "`\"relentless\"`, `\"reno\"`, `\"newreno\"`, `\"cubic\"`",
        set!(below, |v| as_str(v)?.parse::<FldAlgo>()),
        |d| d.below.name().into(),
        "Algorithm while the flow is below the threshold.",
    )
    .assumed()
    .note("[slide]"),
    Fld::new(
        "above",
        "the same",
        set!(above, |v| as_str(v)?.parse::<FldAlgo>()),
        |d| d.above.name().into(),
        "Algorithm after it.",
    )
    .assumed()
    .note("[slide]"),
    Fld::new(
        "switch",
        "`\"avoid\"`, `\"keep\"`",
        set!(switch, |v| as_str(v)?.parse::<FldSwitch>()),
        |d| d.switch.name().into(),
        "How `above` starts: with the current cwnd and ssthresh = cwnd (`avoid`, congestion avoidance), or with cwnd and ssthresh both kept (`keep`). A threshold crossed during a loss recovery takes effect when the recovery ends.",
    )
    .assumed()
    .note("[guess]"),
];

named_enum! {
    /// `profile`: the stack whose defaults the other keys change.
    #[derive(Copy, Clone, Debug, PartialEq, Eq)]
    pub(crate) enum Profile ("profile", expected "rfc, ns2 or linux") {
        Rfc = "rfc",
        Ns2 = "ns2" | "ns-2",
        Linux = "linux",
    }
}

/// The TCP configuration of flow `ft`: the profile, then `[tcp]`, then
/// `[flows.tcp]`, then the flow's `cc`. Also returns the assumed defaults it kept.
pub(crate) fn tcp_config(ft: &Tbl, global: Option<&Tbl>) -> R<(TcpConfig, Vec<(String, String)>)> {
    let local = ft.table("tcp")?;
    if let Some(l) = &local {
        l.check_keys(&tcp_keys())?;
    }
    // Each key comes from the most specific table that sets it.
    let layers: Vec<&Tbl> = local.iter().chain(global).collect();
    let source = |k: &str| layers.iter().copied().find(|l| l.has(k));
    let profile = match source("profile") {
        Some(l) => l.req("profile", named::<Profile>)?,
        None => Profile::Rfc,
    };
    let profile_name = profile.name();
    let mut cfg = match profile {
        Profile::Ns2 => TcpConfig::ns2(),
        Profile::Rfc => TcpConfig::default(),
        Profile::Linux => TcpConfig::linux(),
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
    for p in TCP {
        let f = p.key;
        let (key, v) = match (f, source(f)) {
            ("cc", _) if cc_short => (ft.key("cc"), ft.get("cc")),
            (_, Some(l)) => (l.key(f), l.get(f)),
            (_, None) => continue,
        };
        if let Some(v) = v {
            p.apply(&mut cfg, v, &key)?;
        }
    }
    // What no standard fixes (and, for the handoff and Freeze-TCP keys, what the
    // vertical-handoff paper and Goff et al. leave open when a flow relies on them).
    let mut assumed: Vec<(String, String)> = unset_assumed(TCP, &cfg, profile_name, |k| {
        source(k).is_some() || (k == "cc" && cc_short)
    })
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    cc_params(
        &mut cfg,
        profile,
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
    profile: Profile,
    layers: &[&Tbl],
    local: Option<&Tbl>,
    iw_set: bool,
    assumed: &mut Vec<(String, String)>,
) -> R<()> {
    let uses_fld = matches!(cfg.cc, CcKind::Fld(_));
    let uses_relentless = matches!(cfg.cc, CcKind::Relentless(_));
    let uses_cubic = matches!(cfg.cc, CcKind::Cubic(_));
    if let Some(l) = local {
        if l.has("cubic") && !uses_cubic {
            return Err(key_err(
                l.key("cubic"),
                format!(
                    "only used with cc = \"cubic\" (this flow's cc is {:?})",
                    cfg.cc.name()
                ),
            ));
        }
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
    let ctables = sub("cubic", &keys(CUBIC))?;
    if uses_cubic {
        // The profile's CUBIC, whether the profile or the scenario named it.
        let mut c = match profile {
            Profile::Linux => CubicParams::linux(),
            Profile::Rfc | Profile::Ns2 => CubicParams::default(),
        };
        read_layers(&ctables, CUBIC, &mut c)?;
        cfg.cc = CcKind::Cubic(c);
    }
    let rtables = sub("relentless", &keys(RELENTLESS))?;
    let mut relentless = RelentlessParams::default();
    read_layers(&rtables, RELENTLESS, &mut relentless)?;
    let timeout_set = rtables.iter().any(|t| t.has("timeout"));
    if uses_relentless {
        cfg.cc = CcKind::Relentless(relentless);
        if !timeout_set {
            assumed.push((
                "relentless.timeout".into(),
                relentless.timeout.name().into(),
            ));
        }
    }
    if !uses_fld {
        return Ok(());
    }
    let tables = sub("fld", &keys(FLD))?;
    let mut p = FldParams {
        relentless,
        ..FldParams::default()
    };
    read_layers(&tables, FLD, &mut p)?;
    let set = |k: &str| tables.iter().any(|t| t.has(k));
    for (k, text) in unset_assumed(FLD, &p, "", set) {
        assumed.push((format!("fld.{k}"), text));
    }
    if iw_set {
        p.initial_window = FldInitialWindow::Connection;
    } else {
        // FLD's IW10 is also the window the sender restarts from after an idle time.
        p.initial_window = FldInitialWindow::Rfc6928;
        cfg.initial_window = InitialWindow::Rfc6928;
        assumed.push(("initial_window".into(), "rfc6928".into()));
    }
    let relentless_runs = p.below == FldAlgo::Relentless || p.above == FldAlgo::Relentless;
    if relentless_runs && !timeout_set {
        assumed.push((
            "relentless.timeout".into(),
            p.relentless.timeout.name().into(),
        ));
    }
    cfg.cc = CcKind::Fld(p);
    Ok(())
}

/// `[tcp.cubic]`, `[tcp.fld]` or `[tcp.relentless]` that no flow's controller reads.
pub(crate) fn check_cc_tables_used(t: &Tbl, flows: &[FlowSpec]) -> R<()> {
    let uses = |f: fn(&CcKind) -> bool| {
        flows
            .iter()
            .any(|fl| matches!(&fl.transport, Transport::Tcp(c) if f(&c.cc)))
    };
    if t.has("cubic") && !uses(|c| matches!(c, CcKind::Cubic(_))) {
        return Err(key_err(
            t.key("cubic"),
            "has no effect: no flow has cc = \"cubic\"",
        ));
    }
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

/// `initial_window`: a number of segments, `"rfc3390"` or `"rfc6928"`.
fn initial_window(v: &Value) -> Result<InitialWindow, String> {
    match v {
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "rfc3390" => Ok(InitialWindow::Rfc3390),
            "rfc6928" => Ok(InitialWindow::Rfc6928),
            _ => Err(format!(
                "unknown initial window {s:?}; expected a number of segments, \
                 \"rfc3390\" or \"rfc6928\""
            )),
        },
        v => match as_u32(v) {
            Ok(0) => Err("must be at least 1 segment".into()),
            Ok(n) => Ok(InitialWindow::Segments(n)),
            Err(_) => Err(expected(
                "a number of segments, \"rfc3390\" or \"rfc6928\"",
                v,
            )),
        },
    }
}

fn initial_window_text(w: InitialWindow) -> String {
    match w {
        InitialWindow::Rfc3390 => "rfc3390".into(),
        InitialWindow::Rfc6928 => "rfc6928".into(),
        InitialWindow::Segments(n) => n.to_string(),
    }
}

/// `wscale`: a shift, or `"auto"` (`None`).
fn wscale(v: &Value) -> Result<Option<u8>, String> {
    match v {
        Value::String(s) if s.eq_ignore_ascii_case("auto") => Ok(None),
        v => match as_u32(v) {
            // RFC 7323 §2.3: the shift is at most 14.
            Ok(n) if n <= 14 => Ok(Some(n as u8)),
            Ok(n) => Err(format!("must be at most 14 (RFC 7323), found {n}")),
            Err(_) => Err(expected("a shift 0..=14 or \"auto\"", v)),
        },
    }
}

/// What [`size_or_inf`] reads, as a scenario writes it.
fn size_or_inf_text(b: u64) -> String {
    if b == u64::MAX {
        "inf".into()
    } else {
        format_size(b)
    }
}
