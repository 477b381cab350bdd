//! Network namespaces and iproute2: creating, joining and removing them, and running `ip`
//! with an error that says what failed. Everything made is undone by [`Undo`] on drop, also
//! when the forwarding loop fails or the process is interrupted (the loop stops on the
//! signal and returns).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{EmuError, Result};

/// Runs `ip ARGS`; its error output becomes the error.
pub fn ip(args: &[&str]) -> Result<()> {
    let err = |message: String| EmuError::Ip {
        args: args.join(" "),
        message,
    };
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| err(format!("cannot run ip (install iproute2): {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()))
    }
}

/// Runs `ip -n NS ARGS`, or `ip ARGS` in the caller's namespace when `ns` is `None`.
pub fn ip_in(ns: Option<&str>, args: &[&str]) -> Result<()> {
    match ns {
        Some(n) => {
            let mut all = vec!["-n", n];
            all.extend_from_slice(args);
            ip(&all)
        }
        None => ip(args),
    }
}

/// Whether the named namespace exists (`ip netns` keeps them under /run/netns).
pub fn exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

/// Checks a namespace name: what `ip netns` accepts, without path tricks.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && !name.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(EmuError::Usage(format!(
            "bad namespace name {name:?} (letters, digits, '-', '_', '.')"
        )))
    }
}

/// What to undo, in reverse order, when dropped: namespaces made and `ip` settings added to
/// namespaces that were joined.
#[derive(Debug, Default)]
pub struct Undo {
    steps: Vec<Vec<String>>,
    /// Namespaces claimed for this process (`crate::stale`), released once deleted.
    claimed: Vec<String>,
}

impl Undo {
    /// Creates namespace `name` (refused if it exists), with its loopback up and reverse-path
    /// filtering off (a multi-homed host answers on the interface a packet came in on).
    pub fn add_namespace(&mut self, name: &str) -> Result<()> {
        check_name(name)?;
        if exists(name) {
            return Err(EmuError::NamespaceExists(name.to_string()));
        }
        ip(&["netns", "add", name])?;
        crate::stale::claim(name);
        self.steps
            .push(vec!["netns".into(), "del".into(), name.to_string()]);
        self.claimed.push(name.to_string());
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        for key in ["all", "default"] {
            let _ = Command::new("ip")
                .args(["netns", "exec", name, "sysctl", "-q", "-w"])
                .arg(format!("net.ipv4.conf.{key}.rp_filter=0"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        Ok(())
    }

    /// Runs `ip ARGS` now and `ip UNDO` when dropped.
    pub fn ip_with_undo(&mut self, args: &[&str], undo: &[&str]) -> Result<()> {
        ip(args)?;
        self.steps
            .push(undo.iter().map(|s| s.to_string()).collect());
        Ok(())
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        for step in self.steps.drain(..).rev() {
            let _ = Command::new("ip")
                .args(&step)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        for name in self.claimed.drain(..) {
            if !exists(&name) {
                crate::stale::release(&name);
            }
        }
    }
}
