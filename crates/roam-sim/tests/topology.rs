//! Static routing over routers, multi-homed hosts and route overrides.

mod common;

use common::{flow, link, run};
use roam_sim::Scenario;

/// a — r0 — r1 — r2 — b, plus a shortcut r0 — r2 (slow), and a multi-homed host m on r2 via
/// "wifi" and "cell".
fn topo(routes: &str, flows: &str) -> String {
    format!(
        r#"
[run]
duration = "5s"
[[node]]
name = "a"
[[node]]
name = "b"
[[node]]
name = "m"
[[node]]
name = "r{{i}}"
count = 3
kind = "router"
[[link]]
name = "a-r0"
a = "a"
b = "r0"
rate = "100Mbps"
[[link]]
name = "r0-r1"
a = "r0"
b = "r1"
rate = "100Mbps"
[[link]]
name = "r1-r2"
a = "r1"
b = "r2"
rate = "100Mbps"
[[link]]
name = "shortcut"
a = "r0"
b = "r2"
rate = "1Mbps"
[[link]]
name = "r2-b"
a = "r2"
b = "b"
rate = "100Mbps"
[[link]]
name = "wifi"
a = "r2"
b = "m"
rate = "20Mbps"
[[link]]
name = "cell"
a = "r2"
b = "m"
rate = "5Mbps"
{routes}
{flows}
"#
    )
}

const TO_B: &str = r#"
[[flow]]
id = "ab"
protocol = "cbr"
from = "a"
to = "b"
rate = "500kbps"
"#;

#[test]
fn shortest_path_is_taken_over_routers() {
    let r = run(&topo("", TO_B));
    // Shortest is a-r0, shortcut, r2-b (three hops), not r0-r1-r2.
    assert!(link(&r, "shortcut:fwd").packets_sent > 0);
    assert_eq!(link(&r, "r0-r1:fwd").packets_sent, 0);
    let f = flow(&r, "ab");
    assert!(f.bytes_delivered as f64 > 0.99 * f.transport_bytes_sent as f64 - 2000.0);
}

#[test]
fn explicit_routes_override_computed_ones() {
    let routes = r#"
[[route]]
node = "r0"
to = "b"
via = "r0-r1"
"#;
    let r = run(&topo(routes, TO_B));
    assert_eq!(link(&r, "shortcut:fwd").packets_sent, 0);
    assert!(link(&r, "r0-r1:fwd").packets_sent > 0);
    assert!(link(&r, "r1-r2:fwd").packets_sent > 0);
}

#[test]
fn a_route_loop_is_an_error() {
    let routes = r#"
[[route]]
node = "r0"
to = "b"
via = "r0-r1"
[[route]]
node = "r1"
to = "b"
via = "r0-r1"
"#;
    let e = Scenario::from_toml_str(&topo(routes, TO_B), "t").unwrap_err();
    assert!(e.to_string().contains("loop"), "{e}");
}

#[test]
fn multi_homed_host_is_reached_on_the_chosen_interface() {
    let flows = r#"
[[flow]]
id = "to-cell"
protocol = "cbr"
from = "a"
to = "m"
to_iface = "cell"
rate = "1Mbps"
[[flow]]
id = "from-wifi"
protocol = "cbr"
from = "m"
from_iface = 0
to = "b"
rate = "1Mbps"
"#;
    let r = run(&topo("", flows));
    assert!(link(&r, "cell:fwd").packets_sent > 500);
    assert_eq!(link(&r, "wifi:fwd").packets_sent, 0);
    // m's interface 0 is wifi (the first link naming m); m is end b, so it sends on :rev.
    assert!(link(&r, "wifi:rev").packets_sent > 500);
    assert_eq!(link(&r, "cell:rev").packets_sent, 0);
    assert!(flow(&r, "to-cell").bytes_delivered > 0);
    assert!(flow(&r, "from-wifi").bytes_delivered > 0);
}
