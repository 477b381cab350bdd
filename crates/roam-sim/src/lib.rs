//! roam's deterministic discrete-event network simulator.
//!
//! Virtual time, one seeded RNG per run (split into named streams), events ordered by (time,
//! sequence id). Hosts with several interfaces, routers with static routes, point-to-point links
//! with rate, propagation delay, drop-tail queues and per-direction impairments. Protocol agents
//! hand real encoded datagrams to the sans-IO engines of `roam-proto`.
//!
//! ```no_run
//! let scenario = roam_sim::Scenario::load(std::path::Path::new("scenarios/validation/dumbbell-single.toml"))?;
//! let result = roam_sim::run(&scenario);
//! println!("{}", serde_json::to_string_pretty(&result)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod agent;
pub mod agents;
pub mod energy;
mod event;
pub mod link;
pub mod memory;
mod metrics;
mod packets;
pub mod result;
mod rng;
mod run;
pub mod scenario;
mod sim;
pub mod trace;

pub use run::{receiver_port, run, run_traced, run_with_progress, sender_port};
pub use scenario::{set_param, Scenario, ScenarioError};
