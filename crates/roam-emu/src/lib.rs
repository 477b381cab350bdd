//! roam's link emulator: the simulator's link model (`roam_sim::link::emulation::DirModel`,
//! the same code the simulator runs: rate or Mahimahi trace, delay, drop-tail queue, Bernoulli
//! and Gilbert–Elliott loss, blackouts, scheduled changes) applied in real time to real packets
//! between network namespaces, through pairs of TUN devices. One `[[link]]` description,
//! simulated by `roam sim` or emulated by `roam emu`. See `docs/EMU.md`.
//!
//! Linux only; needs root (namespaces, TUN). No netem is needed: the kernel here has none.

pub mod config;
pub mod error;
pub mod netns;
pub mod probe;
pub mod run;
pub mod stale;
pub mod sys;
pub mod topology;
pub mod wire;

pub use config::{load, PathModel, Selection};
pub use error::{EmuError, Result};
pub use run::{serve, wrap, wrap_paths, Running, SignalGuard};
pub use stale::{owned_name, remove_stale};
pub use topology::{check_allowed, unique_prefix, Bed, Layout, PathAddrs, Side};
pub use wire::{DirReport, Wire, WireReport};
