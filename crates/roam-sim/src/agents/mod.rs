//! Agents that run on simulated hosts.

pub mod pattern;
pub mod tcp;
pub mod udp;
