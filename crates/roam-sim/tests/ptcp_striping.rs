//! The application striping baselines of ptcp.txt §2 and §5 (`[flow.ptcp] striping =
//! "unaware"` or `"smart"`): independent TCP connections, one per link, and an application
//! that stripes records over them and resequences them. Every byte arrives once, in order,
//! unchanged (with loss on both links); the unaware application is held back by the slower
//! link where the smart one is not (§2's head-of-line blocking).

mod common;

use common::{flow, run};

/// server —wwan (500 kb/s, 200 ms)— mobile, server —wlan (`wlan_rate`, 50 ms)— mobile; one
/// striping flow of `size` (or unbounded) with mode `mode`; 64 KB socket and resequencing
/// buffers, so that records go over both connections and arrive out of order.
fn scenario(mode: &str, wlan_rate: &str, weight: f64, size: &str, loss: f64) -> String {
    format!(
        r#"name = "striping"
[run]
duration = "300s"
seed = 3
sample_interval = "0s"
[[node]]
name = "server"
[[node]]
name = "mobile"
[[link]]
name = "wwan"
a = "server"
b = "mobile"
rate = "500kbps"
delay = "200ms"
queue = "50p"
[link.forward]
loss = {loss}
[[link]]
name = "wlan"
a = "server"
b = "mobile"
rate = "{wlan_rate}"
delay = "50ms"
queue = "50p"
[link.forward]
loss = {loss}
[[flow]]
id = "f"
protocol = "ptcp"
from = "server"
to = "mobile"
{size}
[flow.tcp]
mss = 1000
send_buffer = 65536
recv_buffer = 65536
[flow.ptcp]
striping = "{mode}"
reseq_buffer = "64KB"
[[flow.ptcp.pipe]]
from_iface = "wwan"
to_iface = "wwan"
weight = 0.5
[[flow.ptcp.pipe]]
from_iface = "wlan"
to_iface = "wlan"
weight = {weight}
"#
    )
}

#[test]
fn striped_transfers_arrive_whole_with_loss() {
    for mode in ["unaware", "smart"] {
        for loss in [0.0, 0.01] {
            let r = run(&scenario(mode, "2Mbps", 2.0, "size = \"3MB\"", loss));
            let f = flow(&r, "f");
            assert_eq!(f.integrity_errors, 0, "{mode} loss {loss}");
            assert_eq!(f.bytes_delivered, 3_000_000, "{mode} loss {loss}");
            assert!(f.completion_s.is_some(), "{mode} loss {loss}: completes");
            assert!(f.failure.is_none(), "{mode} loss {loss}");
        }
    }
}

/// ptcp.txt §2: with a 10:1 rate ratio, the unaware application's fast connection waits for
/// the slow one (its records fill the resequencing buffer), the smart one's does not.
#[test]
fn unaware_striping_is_held_back_by_the_slow_link() {
    let unaware = flow(&run(&scenario("unaware", "5Mbps", 5.0, "", 0.0)), "f").goodput_bps;
    let smart = flow(&run(&scenario("smart", "5Mbps", 5.0, "", 0.0)), "f").goodput_bps;
    assert!(
        unaware < 0.6 * smart,
        "unaware {unaware:.0} b/s, smart {smart:.0} b/s"
    );
}

#[test]
fn runs_are_deterministic() {
    let text = scenario("unaware", "2Mbps", 2.0, "", 0.01);
    let (a, b) = (run(&text), run(&text));
    assert_eq!(flow(&a, "f").bytes_delivered, flow(&b, "f").bytes_delivered);
    assert_eq!(a.events, b.events);
}

#[test]
fn scenario_errors_name_the_striping_fields() {
    let bad = scenario("unaware", "2Mbps", 2.0, "", 0.0).replace("\"unaware\"", "\"clever\"");
    let e = roam_sim::Scenario::from_toml_str(&bad, "t").expect_err("an unknown mode");
    assert!(e.to_string().contains("striping"), "{e}");
    let no_weight = scenario("smart", "2Mbps", 2.0, "", 0.0).replace("weight = 0.5\n", "");
    let e = roam_sim::Scenario::from_toml_str(&no_weight, "t").expect_err("a missing weight");
    assert!(e.to_string().contains("weight"), "{e}");
    let zero = scenario("smart", "2Mbps", 0.0, "", 0.0);
    let e = roam_sim::Scenario::from_toml_str(&zero, "t").expect_err("a zero weight");
    assert!(e.to_string().contains("weight"), "{e}");
    let tiny = scenario("smart", "2Mbps", 2.0, "", 0.0).replace("\"64KB\"", "\"10\"");
    let e = roam_sim::Scenario::from_toml_str(&tiny, "t").expect_err("a tiny buffer");
    assert!(e.to_string().contains("reseq_buffer"), "{e}");
}
