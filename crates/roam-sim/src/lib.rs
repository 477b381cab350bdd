//! roam's deterministic discrete-event network simulator.
//!
//! Virtual time, one seeded RNG per run, events ordered by (time, sequence id). Hosts with
//! several interfaces, routers with static routes, point-to-point links with rate, propagation
//! delay, drop-tail queues and per-direction impairments. Protocol agents hand real encoded
//! datagrams to the sans-IO engines of `roam-proto`.

pub mod agent;
pub mod agents;
pub mod result;
