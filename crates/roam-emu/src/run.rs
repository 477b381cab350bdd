//! Running an emulation: the wire on its own thread, a command behind it, and the stop that
//! Ctrl-C, SIGTERM, the command's end or a time limit brings; afterwards everything is
//! removed.

use std::ffi::OsString;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::PathModel;
use crate::error::{EmuError, Result};
use crate::topology::{self, Bed, Layout};
use crate::wire::WireReport;

/// A wire forwarding on its own thread over a laid-out bed.
#[derive(Debug)]
pub struct Running {
    /// The namespaces and addresses.
    pub bed: Bed,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<std::io::Result<WireReport>>>,
}

impl Running {
    /// Lays out `paths` and starts forwarding (the links' time zero is now); stops after
    /// `limit` if given.
    pub fn start(
        paths: Vec<PathModel>,
        layout: &Layout,
        limit: Option<Duration>,
    ) -> Result<Running> {
        Running::start_with_stop(paths, layout, limit, Arc::new(AtomicBool::new(false)))
    }

    /// [`Running::start`] with a stop flag the caller made first — typically one a
    /// [`SignalGuard`] already sets, so that a signal that comes while the namespaces and
    /// devices are being made stops the run (and everything is removed) instead of killing the
    /// process with its default action half way.
    pub fn start_with_stop(
        paths: Vec<PathModel>,
        layout: &Layout,
        limit: Option<Duration>,
        stop: Arc<AtomicBool>,
    ) -> Result<Running> {
        let (bed, wire) = topology::build(paths, layout)?;
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("roam-emu-wire".into())
            .spawn(move || wire.run(&flag, limit))
            .map_err(EmuError::Io)?;
        Ok(Running {
            bed,
            stop,
            thread: Some(thread),
        })
    }

    /// The flag that stops the wire (also set by [`Running::finish`]).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Whether the wire stopped (its limit passed, or it failed).
    pub fn stopped(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Stops the wire and removes everything; returns its counters.
    pub fn finish(mut self) -> Result<WireReport> {
        self.stop.store(true, Ordering::Relaxed);
        let out = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r.map_err(EmuError::Io),
            Some(Err(_)) => Err(EmuError::Io(std::io::Error::other(
                "the wire thread panicked",
            ))),
            None => Err(EmuError::Io(std::io::Error::other(
                "the wire was already finished",
            ))),
        };
        drop(self);
        out
    }

    /// A command to run on the inner side (`ip netns exec NS …` when it is a namespace), with
    /// `ROAM_EMU_PEER` (path 0's outer address), `ROAM_EMU_PEERS` and `ROAM_EMU_ADDRS` (every
    /// path's outer and inner addresses, comma-separated) in its environment.
    pub fn inner_command(&self, argv: &[OsString]) -> Command {
        let mut cmd = match &self.bed.inner_ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).args(argv);
                c
            }
            None => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        let list = |f: fn(&topology::PathAddrs) -> std::net::Ipv4Addr| {
            self.bed
                .addrs
                .iter()
                .map(|a| f(a).to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        cmd.env("ROAM_EMU_PEER", self.bed.addrs[0].outer.to_string())
            .env("ROAM_EMU_PEERS", list(|a| a.outer))
            .env("ROAM_EMU_ADDRS", list(|a| a.inner));
        cmd
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sets `flag` on SIGINT, SIGTERM and SIGHUP while alive.
pub struct SignalGuard {
    ids: Vec<signal_hook::SigId>,
}

impl SignalGuard {
    /// Registers the handlers.
    pub fn new(flag: &Arc<AtomicBool>) -> Result<SignalGuard> {
        let mut ids = Vec::new();
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            ids.push(signal_hook::flag::register(sig, Arc::clone(flag)).map_err(EmuError::Io)?);
        }
        Ok(SignalGuard { ids })
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Runs `argv` behind the running wire until it exits, the wire stops or a signal comes
/// (then the command is killed); returns its status (`None` if killed) and the wire's
/// counters. Everything is removed before this returns.
pub fn wrap(running: Running, argv: &[OsString]) -> Result<(Option<ExitStatus>, WireReport)> {
    let stop = running.stop_flag();
    let _signals = SignalGuard::new(&stop)?;
    if stop.load(Ordering::Relaxed) {
        // Interrupted while the links were being made: nothing to run.
        return Ok((None, running.finish()?));
    }
    let mut cmd = running.inner_command(argv);
    crate::sys::die_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| EmuError::Usage(format!("cannot run {:?}: {e}", argv[0])))?;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(EmuError::Io)? {
            break Some(st);
        }
        if stop.load(Ordering::Relaxed) || running.stopped() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let report = running.finish()?;
    Ok((status, report))
}

/// Forwards until a signal comes or `limit` passes (the `--join` mode without a command).
pub fn serve(running: Running, limit: Option<Duration>) -> Result<WireReport> {
    let stop = running.stop_flag();
    let _signals = SignalGuard::new(&stop)?;
    let t0 = crate::wire::monotonic();
    while !stop.load(Ordering::Relaxed)
        && !running.stopped()
        && limit.is_none_or(|l| t0.elapsed() < l)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    running.finish()
}

/// `paths` laid out by `layout` and run behind `argv` (`roam emu LINK.toml -- COMMAND`).
pub fn wrap_paths(
    paths: Vec<PathModel>,
    layout: &Layout,
    argv: &[OsString],
) -> Result<(Option<ExitStatus>, WireReport)> {
    if argv.is_empty() {
        return Err(EmuError::Usage("no command given after --".into()));
    }
    wrap(Running::start(paths, layout, None)?, argv)
}
