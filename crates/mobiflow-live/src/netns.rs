//! Two network namespaces joined by two TUN devices, set up with `ip` and removed when
//! the [`Pair`] is dropped (on every path out of the program: normal exit, error, or a
//! signal turned into an orderly stop).
//!
//! A `kill -9` leaves no such path: the TUN devices go with the process (they live as
//! long as its file descriptors), but the namespaces stay (`ip netns add` pins them
//! under /run/netns), with whatever still runs inside. Their names carry the owner's
//! process id (`mf-<pid>-a`, `mf-<pid>-b`; devices `mf<pid>a`, `mf<pid>b`), so
//! [`remove_stale`] can tell them from those of a running emulator: every start and
//! `mobiflow-live cleanup` remove the ones whose owner is dead.

use crate::sys;
use std::fs::File;
use std::process::{Command, Stdio};

/// One side of the emulated link.
pub struct Side {
    pub ns: String,
    pub dev: String,
    pub addr: &'static str,
    pub tun: Option<File>,
}

/// Both sides; `sides[0]` is the link's `a` end, `sides[1]` its `b` end.
pub struct Pair {
    pub sides: [Side; 2],
    created: Vec<String>,
}

pub const ADDRS: [&str; 2] = ["10.200.0.1", "10.200.0.2"];

/// Run `ip ARGS...`; an error carries its stderr.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Output of `ip ARGS...`.
pub fn ip_output(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Set a sysctl inside namespace `ns`.
pub fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), String> {
    let kv = format!("{key}={value}");
    ip(&["netns", "exec", ns, "sysctl", "-q", "-w", &kv])
        .map_err(|e| format!("sysctl {kv} in {ns}: {e}"))
}

/// The name of the program that owns the namespaces (its `/proc/PID/comm`).
pub const OWNER_COMM: &str = "mobiflow-live";

/// The owner's process id in a namespace name `mf-<pid>-a|b` or a device name
/// `mf<pid>a|b`; `None` for names that are not ours.
pub fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("mf")?;
    let rest = rest.strip_prefix('-').map_or(rest, |r| r);
    let rest = rest
        .strip_suffix("-a")
        .or_else(|| rest.strip_suffix("-b"))
        .or_else(|| rest.strip_suffix('a'))
        .or_else(|| rest.strip_suffix('b'))?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// Names of our namespaces (`ip netns list`) and of our devices left in this namespace
/// (`ip -o link show`) whose owner is no longer running.
pub fn stale() -> Result<(Vec<String>, Vec<String>), String> {
    let dead = |name: &str| owner_of(name).is_some_and(|pid| !sys::runs(pid, OWNER_COMM));
    let namespaces = ip_output(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("mf-") && dead(n))
        .map(str::to_string)
        .collect();
    // `ip -o link show` lines: "7: mf123a: <FLAGS> ..." (a name may carry "@peer").
    let devices = ip_output(&["-o", "link", "show"])?
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n))
        .filter(|n| !n.starts_with("mf-") && dead(n))
        .map(str::to_string)
        .collect();
    Ok((namespaces, devices))
}

/// Send `sig` to every process that runs in namespace `ns` (`ip netns pids`); how
/// many there were.
pub fn signal_inside(ns: &str, sig: libc::c_int) -> usize {
    let pids: Vec<u32> = ip_output(&["netns", "pids", ns])
        .map(|out| {
            out.lines()
                .filter_map(|p| p.trim().parse::<u32>().ok())
                .collect()
        })
        .unwrap_or_default();
    for &pid in &pids {
        sys::kill(pid, sig);
    }
    pids.len()
}

/// Remove the namespaces and devices of emulators that are no longer running: first
/// every process still inside such a namespace (SIGKILL: its emulator, which would
/// have stopped it, is gone), then the namespace. Returns what was removed.
pub fn remove_stale() -> Result<Vec<String>, String> {
    let (namespaces, devices) = stale()?;
    let mut removed = Vec::new();
    for ns in namespaces {
        signal_inside(&ns, libc::SIGKILL);
        ip(&["netns", "del", &ns])?;
        removed.push(ns);
    }
    for dev in devices {
        ip(&["link", "del", "dev", &dev])?;
        removed.push(dev);
    }
    Ok(removed)
}

impl Pair {
    /// Create namespaces `<prefix>-a` and `<prefix>-b`, a TUN device in each
    /// (`<tag>a`, `<tag>b`), point-to-point addresses 10.200.0.1 <-> 10.200.0.2, MTU
    /// `mtu`, loopback up and IPv6 off (no stray router solicitations on the link).
    /// The TUN queue towards the emulator holds 10000 packets (`txqueuelen`; Linux
    /// drops beyond it): a sender released by a large cumulative ACK after a stall
    /// can hand the device well over a thousand packets at once.
    pub fn create(prefix: &str, tag: &str, mtu: u32) -> Result<Pair, String> {
        let mut pair = Pair {
            sides: [0, 1].map(|i| Side {
                ns: format!("{prefix}-{}", ["a", "b"][i]),
                dev: format!("{tag}{}", ["a", "b"][i]),
                addr: ADDRS[i],
                tun: None,
            }),
            created: Vec::new(),
        };
        for i in 0..2 {
            let ns = pair.sides[i].ns.clone();
            ip(&["netns", "add", &ns])?;
            pair.created.push(ns.clone());
            for k in ["all", "default"] {
                sysctl(&ns, &format!("net.ipv6.conf.{k}.disable_ipv6"), "1")?;
            }
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        let mtu = mtu.to_string();
        for i in 0..2 {
            let (ns, dev) = (pair.sides[i].ns.clone(), pair.sides[i].dev.clone());
            let f = sys::open_tun(&dev).map_err(|e| format!("cannot create TUN {dev}: {e}"))?;
            pair.sides[i].tun = Some(f);
            ip(&["link", "set", "dev", &dev, "netns", &ns])?;
            let peer = format!("{}/32", ADDRS[1 - i]);
            let me = format!("{}/32", ADDRS[i]);
            ip(&["-n", &ns, "addr", "add", &me, "peer", &peer, "dev", &dev])?;
            ip(&[
                "-n",
                &ns,
                "link",
                "set",
                "dev",
                &dev,
                "mtu",
                &mtu,
                "txqueuelen",
                "10000",
                "up",
            ])?;
        }
        Ok(pair)
    }

    /// Counters of a side's TUN device (`ip -s -j link`): the kernel's view.
    pub fn dev_stats(&self, i: usize) -> Option<serde_json::Value> {
        let s = &self.sides[i];
        let out = ip_output(&["-n", &s.ns, "-s", "-j", "link", "show", "dev", &s.dev]).ok()?;
        let v: serde_json::Value = serde_json::from_str(&out).ok()?;
        v.get(0)?.get("stats64").cloned()
    }

    /// Send `sig` to every process in either namespace; how many there were.
    pub fn signal_inside(&self, sig: libc::c_int) -> usize {
        self.created.iter().map(|ns| signal_inside(ns, sig)).sum()
    }

    /// Close the TUN devices, end whatever still runs in the namespaces (SIGKILL: a
    /// process the command left behind, or one that ignored SIGTERM, would otherwise
    /// outlive its namespace's name) and delete the namespaces (idempotent).
    pub fn teardown(&mut self) {
        for s in self.sides.iter_mut() {
            s.tun = None;
        }
        self.signal_inside(libc::SIGKILL);
        for ns in self.created.drain(..).rev() {
            if let Err(e) = ip(&["netns", "del", &ns]) {
                eprintln!("warning: {e}");
            }
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.teardown();
    }
}

#[cfg(test)]
mod tests {
    use super::owner_of;

    #[test]
    fn owners_are_read_from_our_names_only() {
        assert_eq!(owner_of("mf-1234-a"), Some(1234));
        assert_eq!(owner_of("mf-1234-b"), Some(1234));
        assert_eq!(owner_of("mf1234a"), Some(1234));
        assert_eq!(owner_of("mf1234b"), Some(1234));
        for other in [
            "mf-a",
            "mf--a",
            "mf-12x-a",
            "eth0",
            "mf-1234-c",
            "mfa",
            "lo",
        ] {
            assert_eq!(owner_of(other), None, "{other}");
        }
    }
}
