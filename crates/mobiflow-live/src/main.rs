//! `mobiflow-live`: a mobiflow scenario's link, emulated in real time between two
//! network namespaces, for real Linux TCP and real applications.
//!
//! ```text
//! mobiflow-live run SCENARIO.toml [--set KEY=VALUE]... [--link NAME] [--in a|b]
//!               [--duration SECS] [--late-bound-ms MS] [--late-fraction F] [--report FILE.json] [--quiet]
//!               [--sysctl a|b:KEY=VALUE]... [-- COMMAND ARGS...]
//! mobiflow-live check
//! mobiflow-live cleanup
//! mobiflow-live --help | --version
//! ```
//!
//! `run` creates namespaces `mf-<pid>-a` (the link's `a` node, address 10.200.0.1)
//! and `mf-<pid>-b` (its `b` node, 10.200.0.2), a TUN device in each, and forwards
//! IP packets between them through the link's two directions, modelled by the
//! simulator's own code ([`mobiflow_sim::emu::ClockedDir`]): rate (constant, schedule
//! or Mahimahi trace), delay, DropTail/RED queue and outages. COMMAND runs inside the
//! `--in` namespace (default `b`) with `MOBIFLOW_NS_A`, `MOBIFLOW_NS_B`,
//! `MOBIFLOW_ADDR_A`, `MOBIFLOW_ADDR_B`, `MOBIFLOW_DEV_A`, `MOBIFLOW_DEV_B` and
//! `MOBIFLOW_T0_MONOTONIC_NS` (the link's time zero on CLOCK_MONOTONIC) in its
//! environment; the run ends when it exits
//! (its exit status is ours), after `--duration`, or on SIGINT/SIGTERM/SIGHUP.
//! Everything created is removed on every path out, with whatever still runs in the
//! namespaces. A run stopped by a signal exits with 128 + the signal (130 for Ctrl-C)
//! within a second, and presents no summary or report (they would cover part of it). Exit status 2: not root, no
//! /dev/net/tun, a bad scenario or usage.
//!
//! A `kill -9` is no path out: the emulator asks for SIGTERM when its parent dies
//! (so a killed `mobiflow live` front end still ends it in order) and COMMAND gets
//! SIGKILL when the emulator dies (`PR_SET_PDEATHSIG`). The namespaces of an emulator
//! killed outright stay; every `run` and `cleanup` remove those whose owner (the
//! process id in their name) is no longer running, with what still runs in them.

#[cfg(target_os = "linux")]
mod forward;
#[cfg(target_os = "linux")]
mod netns;
#[cfg(target_os = "linux")]
mod sys;

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("error: mobiflow-live needs Linux (TUN devices and network namespaces)");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
fn main() {
    std::process::exit(linux::main());
}

#[cfg(target_os = "linux")]
mod linux {
    use crate::{forward, netns, sys};
    use mobiflow_proto::time::Duration as SimDuration;
    use mobiflow_sim::emu::ClockedDir;
    use serde_json::json;
    use std::path::PathBuf;
    use std::process::{Child, Command};
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    /// How long the command and what else runs in the namespaces get between SIGTERM
    /// and SIGKILL when the run is interrupted (Ctrl-C, SIGTERM, SIGHUP): the whole
    /// stop, namespaces deleted, then takes well under a second.
    const INTERRUPT_GRACE: Duration = Duration::from_millis(300);

    use clap::{Parser, Subcommand};

    /// A scenario's link, emulated in real time between two network namespaces.
    #[derive(Parser, Debug)]
    #[command(name = "mobiflow-live", version, about, long_about = None)]
    struct Cli {
        #[command(subcommand)]
        command: Cmd,
    }

    #[derive(Subcommand, Debug)]
    enum Cmd {
        /// Emulate the link and run COMMAND behind it (needs root and /dev/net/tun).
        Run(RunArgs),
        /// Check that this machine can emulate: root, /dev/net/tun, ip.
        Check,
        /// Remove the namespaces and devices of emulators that are no longer running.
        Cleanup,
    }

    #[derive(clap::Args, Debug)]
    #[command(after_help = "COMMAND goes after --: mobiflow-live run SCENARIO.toml -- iperf3 -s")]
    struct RunArgs {
        /// The scenario file.
        #[arg(value_name = "SCENARIO.toml")]
        scenario: PathBuf,
        /// Override a value by dotted key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
        sets: Vec<(String, String)>,
        /// The link to emulate (default: the scenario's only link).
        #[arg(long, value_name = "NAME")]
        link: Option<String>,
        /// The namespace COMMAND runs in: the link's a or b end.
        #[arg(long = "in", value_name = "a|b", default_value = "b", value_parser = parse_side)]
        side: usize,
        /// Stop after SECS seconds.
        #[arg(long, value_name = "SECS", allow_hyphen_values = true, value_parser = parse_duration)]
        duration: Option<Duration>,
        /// A packet written later than this after its due time, or read later than
        /// this after it may have reached the TUN device, is late (milliseconds).
        #[arg(
            long = "late-bound-ms",
            value_name = "MS",
            default_value = "5",
            allow_hyphen_values = true,
            value_parser = parse_late_bound
        )]
        late_bound: Duration,
        /// The run is invalid when more than this fraction of packets is late.
        #[arg(
            long = "late-fraction",
            value_name = "F",
            default_value = "0.001",
            allow_hyphen_values = true,
            value_parser = parse_fraction
        )]
        late_fraction: f64,
        /// Write the link's counters and COMMAND's status here as JSON.
        #[arg(long, value_name = "FILE.json")]
        report: Option<PathBuf>,
        /// No per-second report.
        #[arg(long)]
        quiet: bool,
        /// Set a sysctl in one namespace (repeatable).
        #[arg(long = "sysctl", value_name = "a|b:KEY=VALUE", value_parser = parse_sysctl)]
        sysctls: Vec<(usize, String, String)>,
        /// The command to run in the --in namespace, after --.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    }

    type Args = RunArgs;

    fn parse_set(v: &str) -> Result<(String, String), String> {
        let (k, w) = v
            .split_once('=')
            .ok_or_else(|| format!("{v:?}: expected KEY=VALUE"))?;
        Ok((k.trim().into(), w.trim().into()))
    }

    fn parse_side(v: &str) -> Result<usize, String> {
        match v {
            "a" => Ok(0),
            "b" => Ok(1),
            o => Err(format!("{o:?}: expected a or b")),
        }
    }

    fn parse_duration(v: &str) -> Result<Duration, String> {
        v.parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("{v:?}: expected seconds > 0"))
    }

    fn parse_late_bound(v: &str) -> Result<Duration, String> {
        v.parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s / 1000.0))
            .ok_or_else(|| format!("{v:?}: expected ms >= 0"))
    }

    fn parse_fraction(v: &str) -> Result<f64, String> {
        v.parse()
            .ok()
            .filter(|s: &f64| (0.0..=1.0).contains(s))
            .ok_or_else(|| format!("{v:?}: expected 0..1"))
    }

    fn parse_sysctl(v: &str) -> Result<(usize, String, String), String> {
        let bad = || format!("{v:?}: expected a:KEY=VALUE or b:KEY=VALUE");
        let (side, kv) = v.split_once(':').ok_or_else(bad)?;
        let side = match side {
            "a" => 0,
            "b" => 1,
            _ => return Err(bad()),
        };
        let (k, w) = kv.split_once('=').ok_or_else(bad)?;
        Ok((side, k.into(), w.into()))
    }

    /// Why this machine cannot run the emulation, if it cannot.
    pub fn preflight() -> Result<(), String> {
        if !sys::is_root() {
            return Err("mobiflow live needs root (it creates network namespaces and TUN devices); run it with sudo".into());
        }
        if !std::path::Path::new("/dev/net/tun").exists() {
            return Err("/dev/net/tun does not exist: this kernel or container offers no TUN devices (modprobe tun, or run the container with --device /dev/net/tun)".into());
        }
        if let Err(e) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/net/tun")
        {
            return Err(format!("cannot open /dev/net/tun: {e}"));
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return Err("the `ip` command (iproute2) is not installed".into());
        }
        Ok(())
    }

    pub fn main() -> i32 {
        let cli = match Cli::try_parse() {
            Ok(cli) => cli,
            Err(e) => {
                // --help and --version print to stdout and succeed; a usage error is
                // clap's message (the argument, the reason, the usage) and status 2.
                let _ = e.print();
                return if e.use_stderr() { 2 } else { 0 };
            }
        };
        match cli.command {
            Cmd::Check => match preflight() {
                Ok(()) => {
                    println!("ok: root, /dev/net/tun and ip are available");
                    0
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    2
                }
            },
            Cmd::Cleanup => match preflight().and_then(|()| netns::remove_stale()) {
                Ok(removed) if removed.is_empty() => {
                    println!("cleanup: nothing left behind");
                    0
                }
                Ok(removed) => {
                    println!("cleanup: removed {}", removed.join(", "));
                    0
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    2
                }
            },
            Cmd::Run(args) => match run(&args) {
                Ok(code) => code,
                Err((code, e)) => {
                    eprintln!("error: {e}");
                    code
                }
            },
        }
    }

    fn run(args: &Args) -> Result<i32, (i32, String)> {
        let parent = sys::parent_pid();
        let sc =
            mobiflow_sim::load_file(&args.scenario, &args.sets).map_err(|e| (2, e.to_string()))?;
        let file = args.scenario.display();
        let li = match &args.link {
            Some(name) => sc
                .links
                .iter()
                .position(|l| &l.name == name)
                .ok_or_else(|| (2, format!("{file}: links: no link named {name:?}")))?,
            None if sc.links.len() == 1 => 0,
            None => {
                let n = sc.links.len();
                let msg = format!("{file}: links: {n} links; name the one to emulate with --link");
                return Err((2, msg));
            }
        };
        preflight().map_err(|e| (2, e))?;
        sys::install_signal_handlers();
        // Our parent's death (a `kill -9` of `mobiflow live`) is a SIGTERM to us: the
        // orderly stop that removes everything.
        if !sys::die_with_parent(libc::SIGTERM, parent) {
            return Err((
                1,
                "the parent process ended before the emulation started".into(),
            ));
        }
        match netns::remove_stale() {
            Ok(removed) if !removed.is_empty() && !args.quiet => {
                eprintln!(
                    "live: removed what dead emulators left: {}",
                    removed.join(", ")
                );
            }
            Ok(_) => {}
            Err(e) => eprintln!("warning: cannot remove what dead emulators left: {e}"),
        }
        if let Some(p) = &args.report {
            // A report left by an earlier run must not pass for this one's, which
            // writes none if it is interrupted.
            let _ = std::fs::remove_file(p);
        }
        let link = &sc.links[li];
        let horizon = sc.duration.max(SimDuration::from_secs(3600));
        let mut dirs = [0, 1].map(|k| ClockedDir::new(&link.dirs[k], li * 2 + k, sc.seed, horizon));
        let pid = std::process::id();
        let mut pair = netns::Pair::create(&format!("mf-{pid}"), &format!("mf{pid}"), 1500)
            .map_err(|e| (1, e))?;
        for (side, k, v) in &args.sysctls {
            netns::sysctl(&pair.sides[*side].ns, k, v).map_err(|e| (2, e))?;
        }
        // The link's time zero; commands get it as CLOCK_MONOTONIC nanoseconds.
        let t0 = Instant::now();
        let t0_ns = sys::monotonic_ns();
        let mut child: Option<Child> = None;
        if !args.command.is_empty() {
            let ns = &pair.sides[args.side].ns;
            let mut cmd = Command::new("ip");
            sys::kill_child_with_us(&mut cmd);
            let c = cmd
                .args(["netns", "exec", ns])
                .args(&args.command)
                .env("MOBIFLOW_NS_A", &pair.sides[0].ns)
                .env("MOBIFLOW_NS_B", &pair.sides[1].ns)
                .env("MOBIFLOW_ADDR_A", pair.sides[0].addr)
                .env("MOBIFLOW_ADDR_B", pair.sides[1].addr)
                .env("MOBIFLOW_DEV_A", &pair.sides[0].dev)
                .env("MOBIFLOW_DEV_B", &pair.sides[1].dev)
                .env("MOBIFLOW_T0_MONOTONIC_NS", t0_ns.to_string())
                .spawn()
                .map_err(|e| (1, format!("cannot run {:?}: {e}", args.command[0])))?;
            child = Some(c);
        }
        if !args.quiet {
            eprintln!(
                "live: {} link {:?}: {} ({}) <-> {} ({}), {}",
                sc.name,
                link.name,
                pair.sides[0].ns,
                pair.sides[0].addr,
                pair.sides[1].ns,
                pair.sides[1].addr,
                if args.command.is_empty() {
                    "no command".to_string()
                } else {
                    format!(
                        "running {:?} in {}",
                        args.command.join(" "),
                        pair.sides[args.side].ns
                    )
                }
            );
        }
        let opts = forward::Options {
            mtu: 1500,
            duration: args.duration.or_else(|| {
                child
                    .is_none()
                    .then(|| Duration::from_nanos(sc.duration.as_nanos()))
            }),
            late_bound: args.late_bound,
            quiet: args.quiet,
        };
        let mut status: Option<i32> = None;
        let mut last_check = Instant::now();
        let result = {
            let tuns = [
                pair.sides[0].tun.as_ref().expect("open"),
                pair.sides[1].tun.as_ref().expect("open"),
            ];
            forward::run(t0, tuns, &mut dirs, &opts, || {
                if sys::SIGNAL.load(Ordering::SeqCst) != 0 {
                    return true;
                }
                if last_check.elapsed() < Duration::from_millis(20) {
                    return false;
                }
                last_check = Instant::now();
                if let Some(c) = child.as_mut() {
                    if let Ok(Some(st)) = c.try_wait() {
                        status = Some(st.code().unwrap_or(1));
                        return true;
                    }
                }
                false
            })
        };
        let signal = sys::SIGNAL.load(Ordering::SeqCst);
        // Stop the command if it is still running (signal, duration, error), and
        // whatever else runs in the namespaces: SIGTERM, then SIGKILL after a grace
        // period, short when a person pressed Ctrl-C (the whole stop takes well under
        // a second) and 3 s otherwise.
        let grace = if signal != 0 {
            INTERRUPT_GRACE
        } else {
            Duration::from_secs(3)
        };
        if let Some(c) = child.as_mut() {
            if status.is_none() {
                sys::kill(c.id(), libc::SIGTERM);
                pair.signal_inside(libc::SIGTERM);
                let t = Instant::now();
                loop {
                    if let Ok(Some(st)) = c.try_wait() {
                        status = Some(st.code().unwrap_or(1));
                        break;
                    }
                    if t.elapsed() > grace {
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        let stats = [pair.dev_stats(0), pair.dev_stats(1)];
        pair.teardown();
        let out = result.map_err(|e| (1, format!("forwarding failed: {e}")))?;
        if signal != 0 {
            // Interrupted: the counters cover an arbitrary part of the run, so no
            // summary and no report is presented as the run's result; the shell's
            // 128 + signal, whatever the command did.
            eprintln!(
                "live: interrupted ({}): stopped {}, removed {} and {}",
                sys::signal_name(signal),
                if args.command.is_empty() {
                    "the emulation".to_string()
                } else {
                    format!("{:?}", args.command.join(" "))
                },
                pair.sides[0].ns,
                pair.sides[1].ns
            );
            return Ok(128 + signal);
        }

        // Validity: every packet lost must have been lost by the emulated link.
        let mut reasons: Vec<String> = Vec::new();
        let names = ["a->b", "b->a"];
        let mut dir_json = Vec::new();
        for d in 0..2 {
            let c = &out.counters[d];
            let st = dirs[d].stats();
            // The kernel's TUN queue towards us (tx of side d) overflowing, and writes
            // into side 1-d it refused (rx of 1-d dropped).
            let overruns = stats[d]
                .as_ref()
                .and_then(|s| s.pointer("/tx/dropped"))
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let rx_dropped = stats[1 - d]
                .as_ref()
                .and_then(|s| s.pointer("/rx/dropped"))
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            if overruns > 0 {
                reasons.push(format!(
                    "{}: {overruns} packets dropped by the kernel's TUN queue (reader overrun)",
                    names[d]
                ));
            }
            if c.oversize > 0 {
                reasons.push(format!(
                    "{}: {} packets larger than the MTU dropped (segmentation offload?)",
                    names[d], c.oversize
                ));
            }
            if c.write_errors > 0 {
                reasons.push(format!(
                    "{}: {} TUN writes failed",
                    names[d], c.write_errors
                ));
            }
            // More than the allowed fraction of `total` packets late, `what` them
            // (the largest lateness `max_us`).
            let mut late = |what: &str, n: u64, total: u64, max_us: u64| {
                if n as f64 > args.late_fraction * total.max(1) as f64 {
                    reasons.push(format!(
                        "{}: {n} of {total} packets {what} more than {:.1} ms (max {:.3} ms; allowed: {:.2} %)",
                        names[d],
                        args.late_bound.as_secs_f64() * 1e3,
                        max_us as f64 / 1e3,
                        args.late_fraction * 100.0
                    ));
                }
            };
            late(
                "written after their due time by",
                c.late,
                c.delivered_packets,
                c.max_late_us,
            );
            // A packet that waited in the TUN device enters the link late, in a burst
            // with those that waited beside it: like a late write, it changes what the
            // link does (a queue a burst overflows), not only when.
            late(
                "read after they may have reached the TUN device by",
                c.late_reads,
                c.packets_in,
                c.max_read_gap_us,
            );
            dir_json.push(json!({
                "dir": names[d],
                "packets_in": c.packets_in,
                "bytes_in": c.bytes_in,
                "delivered_packets": c.delivered_packets,
                "delivered_bytes": c.delivered_bytes,
                "drops": st.drops,
                "outage_losses": st.outage_losses,
                "random_losses": st.random_losses,
                "reordered": st.reordered,
                "duplicated": st.duplicated,
                "queue_max_pkts": st.queue_max,
                "late_packets": c.late,
                "max_late_ms": c.max_late_us as f64 / 1e3,
                "mean_late_ms": if c.delivered_packets > 0 { c.late_sum_us as f64 / 1e3 / c.delivered_packets as f64 } else { 0.0 },
                "late_reads": c.late_reads,
                "max_read_gap_ms": c.max_read_gap_us as f64 / 1e3,
                "write_errors": c.write_errors,
                "read_errors": c.read_errors,
                "oversize_packets": c.oversize,
                "non_ip_packets": c.non_ip,
                "malformed_packets": c.malformed,
                "tun_overruns": overruns,
                "tun_rx_dropped": rx_dropped,
            }));
        }
        let valid = reasons.is_empty();
        let report = json!({
            "scenario": sc.name,
            "link": link.name,
            "namespaces": [pair.sides[0].ns, pair.sides[1].ns],
            "addresses": netns::ADDRS,
            "elapsed_s": out.elapsed.as_secs_f64(),
            "late_bound_ms": args.late_bound.as_secs_f64() * 1e3,
            "late_fraction_allowed": args.late_fraction,
            "scheduling": if out.realtime { "SCHED_FIFO" } else { "nice -10" },
            "max_wake_delay_ms": out.max_wake_delay.map(|d| d.as_secs_f64() * 1e3),
            "dirs": dir_json,
            "seconds": out.seconds,
            "valid": valid,
            "invalid_reasons": reasons,
            "command_status": status,
        });
        if !args.quiet {
            for d in &report["dirs"].as_array().cloned().unwrap_or_default() {
                eprintln!(
                    "live {}: {} packets in, {} delivered, {} dropped by the queue, {} lost in outages, max queue {}, lateness mean {:.3} ms max {:.3} ms, read up to {:.3} ms after arrival",
                    d["dir"].as_str().unwrap_or(""),
                    d["packets_in"], d["delivered_packets"], d["drops"], d["outage_losses"], d["queue_max_pkts"],
                    d["mean_late_ms"].as_f64().unwrap_or(0.0), d["max_late_ms"].as_f64().unwrap_or(0.0),
                    d["max_read_gap_ms"].as_f64().unwrap_or(0.0)
                );
            }
            if valid {
                eprintln!("live: valid run (no packet lost outside the emulated link)");
            }
        }
        for r in &reasons {
            eprintln!("live: INVALID: {r}");
        }
        if let Some(p) = &args.report {
            let text = serde_json::to_string_pretty(&report).unwrap_or_default();
            std::fs::write(p, text).map_err(|e| (1, format!("{}: {e}", p.display())))?;
        }
        Ok(status.unwrap_or(0))
    }
}
