//! Agents that run on simulated hosts.

pub mod media;
pub mod http;
pub mod pattern;
pub mod rcp;
pub mod tcp;
pub mod udp;
