//! The few system calls std does not wrap: attaching to a TUN device (the `TUNSETIFF` ioctl),
//! waiting on several descriptors with a nanosecond timeout (`ppoll`; `poll` and `epoll_wait`
//! take milliseconds, too coarse for a delay that must be right within 1 ms), the timer slack
//! that lets the kernel wake that wait late, the real-time scheduling class, the effective
//! user id, and a child's death signal (`PR_SET_PDEATHSIG`, set between fork and exec).
//!
//! `unsafe` is allowed in this module only, for these calls to C functions and the one
//! `pre_exec` hook: each states why it is sound.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// Where the TUN clone device lives.
pub const TUN_DEVICE: &str = "/dev/net/tun";

/// `TUNSETIFF` (`_IOW('T', 202, int)`, linux/if_tun.h).
const TUNSETIFF: u64 = 0x4004_54ca;
/// A layer-3 device (linux/if_tun.h).
const IFF_TUN: libc::c_short = 0x0001;
/// No packet-information prefix: reads and writes are bare IP packets.
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as `TUNSETIFF` reads it: the name, then the flags at the start of the
/// 24-byte union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates the TUN device `name` (at most 15 bytes) in the caller's network namespace and
/// returns its queue, non-blocking. The device is not persistent: it disappears when the
/// returned file is closed, whatever happens to the process.
pub fn open_tun(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.bytes().any(|b| b == 0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(TUN_DEVICE)?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: the descriptor is open (owned by `file`); TUNSETIFF reads and writes one
    // `struct ifreq` (40 bytes, which `IfReq` is, `repr(C)`) through the pointer, which points
    // at a live, exclusively borrowed value for the whole call.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            TUNSETIFF as _,
            std::ptr::addr_of_mut!(req),
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// Waits until one of `fds` is readable or `timeout` passes (`None`: forever); sets
/// `ready[i]` for each readable `fds[i]`. An interrupting signal returns with none ready.
pub fn wait_readable(
    fds: &[RawFd],
    ready: &mut [bool],
    timeout: Option<Duration>,
) -> io::Result<()> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(d.subsec_nanos()),
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `polls` is a live array of `polls.len()` pollfd entries the kernel may write;
    // `ts_ptr` is null or points at a live timespec; a null signal mask keeps the current one.
    let rc = unsafe {
        libc::ppoll(
            polls.as_mut_ptr(),
            polls.len() as libc::nfds_t,
            ts_ptr,
            std::ptr::null(),
        )
    };
    ready.iter_mut().for_each(|r| *r = false);
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(e)
        };
    }
    for (r, p) in ready.iter_mut().zip(&polls) {
        *r = p.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0;
    }
    Ok(())
}

/// Asks the kernel to wake this thread's timed waits at most 1 µs late (the default slack is
/// 50 µs). Best effort: a failure leaves the default.
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long argument (the slack in ns) and
    // touches no memory of ours.
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// Puts the calling thread in the real-time FIFO class at a low priority (10 of 99), so that a
/// loaded machine (compilers, the stacks under test) delays its wake-ups less. Bounded by
/// the kernel's real-time throttling (by default 95 % of each second); the forwarding loop
/// sleeps whenever it has nothing due. Best effort: returns whether it took.
pub fn realtime_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: pid 0 is the calling thread; the pointer is to a live sched_param for the call.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, std::ptr::addr_of!(param)) == 0 }
}

/// Whether the process runs with effective user id 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Makes the command's process get SIGKILL when the thread that spawns it dies
/// (`PR_SET_PDEATHSIG`, kept across `exec` of a program that is not set-user-id, which `ip`
/// and roam are not; `ip netns exec` execs its command without forking), so a server or
/// client run inside an emulation's namespace does not outlive a `roam emu` or
/// `roam testbed` that was killed with SIGKILL and would otherwise keep that namespace
/// alive. If the parent is already gone when the child starts, the spawn fails instead.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the hook runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: prctl and getppid are plain system calls that allocate nothing and
    // take no lock; the closure captures one integer and builds its error from a raw errno
    // (no allocation: `io::Error::from_raw_os_error`).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Sends SIGKILL to process `pid` (best effort; ids 0, 1 and those beyond `pid_t` are
/// refused, so it never signals a process group or init).
pub fn kill(pid: u32) {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return;
    };
    if p > 1 {
        // SAFETY: kill takes a process id and a signal number and touches no memory of ours.
        let _ = unsafe { libc::kill(p, libc::SIGKILL) };
    }
}
