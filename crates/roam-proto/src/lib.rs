//! roam's sans-IO protocol engines.
//!
//! Engines never touch sockets, clocks, threads or a global RNG: the host (the simulator in
//! `roam-sim`, or a UDP runtime) hands them time and datagrams and asks them for datagrams and
//! deadlines. See `docs/ARCHITECTURE.md` for the driving contract.

pub mod time;

pub use time::Time;
pub mod cc;
pub mod linkinfo;
pub mod media;
pub mod rcp;
pub mod rtt;
pub mod tcp;
