//! The emulator's error type: every failure a user can cause or meet, with what to do.

use std::path::PathBuf;

/// Why the emulator could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// Namespaces and TUN devices need root (or CAP_NET_ADMIN).
    #[error(
        "roam emu needs root (network namespaces and TUN devices): run it as root or with sudo"
    )]
    NotRoot,
    /// The TUN clone device is missing or unusable.
    #[error("TUN is unavailable ({path}: {source}); load the `tun` module (modprobe tun) or run where /dev/net/tun exists")]
    NoTun {
        /// The device path.
        path: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A namespace the emulator would create already exists.
    #[error("network namespace {0:?} already exists (left by an earlier run? remove it with `ip netns del {0}`)")]
    NamespaceExists(String),
    /// A namespace to join does not exist.
    #[error("network namespace {0:?} does not exist")]
    NoNamespace(String),
    /// `ip` (iproute2) failed or is missing.
    #[error("`ip {args}` failed: {message}")]
    Ip {
        /// The arguments.
        args: String,
        /// Its error output, or why it could not run.
        message: String,
    },
    /// The link file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The link file is not a valid scenario.
    #[error("{}: {message}", path.display())]
    Links {
        /// The file.
        path: PathBuf,
        /// What is wrong (names the field).
        message: String,
    },
    /// A TUN device could not be created or read.
    #[error("TUN device {name}: {source}")]
    Tun {
        /// The device.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Too many or too few paths, or a bad name.
    #[error("{0}")]
    Usage(String),
    /// The forwarding loop failed.
    #[error("forwarding: {0}")]
    Io(#[from] std::io::Error),
}

/// The emulator's result type.
pub type Result<T> = std::result::Result<T, EmuError>;
