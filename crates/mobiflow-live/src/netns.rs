//! Two network namespaces joined by two TUN devices, set up with `ip` and removed when
//! the [`Pair`] is dropped (on every path out of the program: normal exit, error, or a
//! signal turned into an orderly stop).

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

    /// Close the TUN devices and delete the namespaces (idempotent).
    pub fn teardown(&mut self) {
        for s in self.sides.iter_mut() {
            s.tun = None;
        }
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
