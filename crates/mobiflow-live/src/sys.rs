//! The few system calls `mobiflow-live` needs that the standard library lacks: TUN
//! set-up (`TUNSETIFF`), `ppoll` with a nanosecond timeout, the timer slack, signal
//! handlers, `geteuid`, `kill` and the parent-death signal (`prctl(PR_SET_PDEATHSIG)`).
//! Every `unsafe` block of the crate is here.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The last terminating signal received (0: none).
pub static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGHUP set [`SIGNAL`] instead of killing the process, so the
/// main loop can remove what it created. SIGPIPE is ignored.
pub fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic; no flags, empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    // SAFETY: setting a signal's disposition to SIG_IGN.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The parent process's id.
pub fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}

/// Ask the kernel to send `sig` to this process when its parent dies
/// (`prctl(PR_SET_PDEATHSIG)`, prctl(2)): a `kill -9` of the `mobiflow live` front end
/// then ends the emulator too, which removes its namespaces. Returns false if the
/// parent was already gone (its id changed from `parent`) when the request took
/// effect: the caller should stop at once.
pub fn die_with_parent(sig: libc::c_int, parent: u32) -> bool {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0);
    }
    parent_pid() == parent
}

/// Make the process `cmd` starts receive SIGKILL when this process dies
/// (`PR_SET_PDEATHSIG` set between fork and exec; it survives the exec of `ip netns
/// exec` and of the command it execs, which are not set-user-ID). If this process is
/// already gone when the child gets there, the child exits at once.
pub fn kill_child_with_us(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let us = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and calls only
    // async-signal-safe functions (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != us {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// True if process `pid` exists and runs a program named `comm` (`/proc/PID/comm`):
/// a reused process id of another program does not count.
pub fn runs(pid: u32, comm: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim_end() == comm)
}

/// CLOCK_MONOTONIC in nanoseconds (what Python's `time.monotonic_ns()` reads), so
/// that programs in the namespaces can share the emulator's time origin.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The name of the signals the emulator stops on (`SIGINT` for Ctrl-C).
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// Send `sig` to process `pid`.
pub fn kill(pid: u32, sig: libc::c_int) {
    // SAFETY: kill has no memory effects.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Raise this thread's scheduling priority (nice `nice`, negative is higher), so that
/// the forwarder wakes on time on a busy machine. Best effort.
pub fn set_nice(nice: i32) {
    // SAFETY: setpriority on the calling thread (who = 0); no memory effects.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
    }
}

/// Run this thread under SCHED_FIFO at `prio` (1..99): it then preempts ordinary
/// work (compilers, other runs) when a packet is due. The forwarder sleeps between
/// events, so it takes little CPU. Returns false if the kernel refused.
pub fn set_realtime(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: p is a valid sched_param; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

/// Timer slack of this thread (Linux default 50 us): 1 us, so that timed waits wake
/// when asked.
pub fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
// _IOW('T', 202, int)
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Open a new TUN device `name` (IFF_TUN | IFF_NO_PI: each read or write is one IP
/// packet), non-blocking. The device lives as long as the file.
pub fn open_tun(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name {name:?} is empty or longer than 15 bytes"),
        ));
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    for (d, s) in req.name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which IfReq lays out (16-byte
    // name, then a union whose first member is the short flags, 40 bytes in all).
    let r = unsafe { libc::ioctl(f.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Wait until one of `files` is readable or `timeout` passes. Returns the readable
/// indices; an interrupted wait returns none.
pub fn wait_readable(files: &[&File], timeout: Duration, ready: &mut Vec<usize>) -> io::Result<()> {
    ready.clear();
    let mut fds: Vec<libc::pollfd> = files
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: fds points to fds.len() initialised pollfd; ts is a valid timespec; no
    // signal mask.
    let r = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(());
        }
        return Err(e);
    }
    for (i, p) in fds.iter().enumerate() {
        if p.revents & libc::POLLIN != 0 {
            ready.push(i);
        }
    }
    Ok(())
}
