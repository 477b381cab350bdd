//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

pub mod handoff;

use roam_sim::result::{FlowResult, LinkResult, RunResult};
use roam_sim::Scenario;

/// Two hosts `a` and `b` joined by link `l` (forward a → b), with `extra` appended to the link
/// table (e.g. `[link.forward]` sub-tables), and `flows` appended.
pub fn two_hosts(duration: &str, link: &str, extra: &str, flows: &str) -> String {
    format!(
        r#"
name = "two-hosts"
[run]
duration = "{duration}"
seed = 1
sample_interval = "100ms"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
{link}
{extra}
{flows}
"#
    )
}

/// A `server` —`wired`— router `r` —`wl` (wireless)— `mobile` topology: `run` is the body of
/// the `[run]` table, `wired` and `wireless` the attribute lines of the two links (the wireless
/// one may end with `[link.forward]` / `[link.reverse]` sub-tables). Flows and events follow.
pub fn mobile_behind_router(run: &str, wired: &str, wireless: &str) -> String {
    format!(
        r#"
[run]
{run}
[[node]]
name = "server"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "mobile"
[[link]]
name = "wired"
a = "server"
b = "r"
{wired}
[[link]]
name = "wl"
a = "r"
b = "mobile"
wireless = true
{wireless}
"#
    )
}

/// A CBR flow from a to b.
pub fn cbr(id: &str, rate: &str, packet_size: u32) -> String {
    format!(
        r#"
[[flow]]
id = "{id}"
protocol = "cbr"
from = "a"
to = "b"
rate = "{rate}"
packet_size = {packet_size}
"#
    )
}

/// Loads scenario text, panicking with the error message.
pub fn load(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "test").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Loads and runs scenario text.
pub fn run(text: &str) -> RunResult {
    roam_sim::run(&load(text))
}

/// The flow called `id`.
pub fn flow<'a>(r: &'a RunResult, id: &str) -> &'a FlowResult {
    r.flows.iter().find(|f| f.id == id).expect("flow")
}

/// The link direction called `id` (`name:fwd`).
pub fn link<'a>(r: &'a RunResult, id: &str) -> &'a LinkResult {
    r.links.iter().find(|l| l.id == id).expect("link")
}

/// Path of a file in the repository.
pub fn repo_path(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}
