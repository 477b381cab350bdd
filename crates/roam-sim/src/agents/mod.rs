//! Agents that run on simulated hosts.

pub mod http;
pub mod media;
pub mod pattern;
pub mod r2cp;
pub mod rcp;
pub mod tcp;
mod tcp_host;
pub mod udp;
