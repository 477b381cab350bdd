//! Large scenarios: any number of interfaces per node, and the memory estimate that refuses a
//! scenario too large for the machine before it runs.

use roam_sim::memory::{check, estimate};
use roam_sim::Scenario;

/// The ns-3 validation dumbbell with `n` flows: every sender and receiver hangs off one of two
/// routers, so each router has `n + 1` interfaces.
fn dumbbell(n: usize, buffer: u64, duration: &str) -> Scenario {
    let text = format!(
        r#"
name = "dumbbell-{n}"
[run]
duration = "{duration}"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "s{{i}}"
count = {n}
[[node]]
name = "d{{i}}"
count = {n}
[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
[[link]]
name = "access-s{{i}}"
count = {n}
a = "s{{i}}"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[[link]]
name = "access-d{{i}}"
count = {n}
a = "r2"
b = "d{{i}}"
rate = "100Mbps"
delay = "1ms"
[[flow]]
id = "f{{i}}"
count = {n}
protocol = "tcp"
from = "s{{i}}"
to = "d{{i}}"
[flow.tcp]
mss = 1000
send_buffer = {buffer}
recv_buffer = {buffer}
"#
    );
    Scenario::from_toml_str(&text, "dumbbell").expect("valid scenario")
}

#[test]
fn a_router_with_a_thousand_interfaces_loads_and_runs() {
    let s = dumbbell(1000, 64 << 10, "200ms");
    assert_eq!(s.nodes[0].ifaces.len(), 1001);
    let r = roam_sim::run(&s);
    assert_eq!(r.flows.len(), 1000);
    // Flows that started before the end got some bytes through the shared bottleneck.
    assert!(r.flows.iter().any(|f| f.bytes_delivered > 0));
}

#[test]
fn the_estimate_follows_the_shared_bottleneck_not_the_buffers() {
    // 4 MiB buffers do not make a flow hold 4 MiB: 200 flows share one 10 Mb/s link.
    let big = estimate(&dumbbell(200, 4 << 20, "10s")).total;
    let small = estimate(&dumbbell(200, 64 << 10, "10s")).total;
    assert!(big < 64 << 20, "{big}");
    assert!(big <= 2 * small + (1 << 20), "{big} vs {small}");
    // A lone flow may fill what its path holds, and more flows need more memory.
    assert!(estimate(&dumbbell(2000, 4 << 20, "10s")).total > big);
}

#[test]
fn a_scenario_over_the_limit_is_refused_with_how_much_and_why() {
    let s = dumbbell(200, 4 << 20, "10s");
    let e = check(&s, 1 << 20, "--max-memory").unwrap_err().to_string();
    assert!(e.contains("dumbbell-200"), "{e}");
    assert!(e.contains("needs about"), "{e}");
    assert!(e.contains("--max-memory"), "{e}");
    assert!(e.contains("windows of 200 TCP flows"), "{e}");
    assert!(check(&s, 1 << 40, "--max-memory").is_ok());
}
