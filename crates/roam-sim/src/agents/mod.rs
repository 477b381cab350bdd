//! Agents that run on simulated hosts.

pub mod tcp;
pub mod udp;
