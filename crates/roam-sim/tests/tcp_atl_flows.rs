//! TCP-ATL in the simulator: the wireless receiver's link facts reach the source inside ACKs
//! (atl.txt §IV-A case 2) and the source adapts; data arrives intact.

mod common;

use common::{flow, run};

/// A wired source, a 10 ms wired hop, and a lossy 150 ms wireless hop to the receiver.
fn wireless_receiver(cc: &str) -> String {
    format!(
        r#"
[run]
duration = "60s"
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
rate = "2Mbps"
delay = "10ms"
queue = "50p"
[[link]]
name = "wl"
a = "r"
b = "mobile"
rate = "2Mbps"
delay = "150ms"
queue = "50p"
wireless = true
forward = {{ loss = 0.01 }}
[[flow]]
id = "f"
protocol = "tcp"
cc = "{cc}"
from = "server"
to = "mobile"
[flow.tcp]
report_link_info = true
"#
    )
}

#[test]
fn tcp_atl_adapts_to_a_wireless_receivers_reports_and_delivers_intact_data() {
    let atl = run(&wireless_receiver("atl"));
    let newreno = run(&wireless_receiver("newreno"));
    let (a, n) = (flow(&atl, "f"), flow(&newreno, "f"));
    assert_eq!(a.integrity_errors, 0);
    assert_eq!(a.cc, "atl");
    assert!(
        a.goodput_bps > 1.5 * n.goodput_bps,
        "{} vs {}",
        a.goodput_bps,
        n.goodput_bps
    );
}

#[test]
fn tcp_atl_on_a_wired_path_is_exactly_newreno() {
    let text = wireless_receiver("atl").replace(
        "wireless = true\nforward = { loss = 0.01 }",
        "wireless = false",
    );
    let other = text.replace("cc = \"atl\"", "cc = \"newreno\"");
    let (a, n) = (run(&text), run(&other));
    assert_eq!(flow(&a, "f").bytes_delivered, flow(&n, "f").bytes_delivered);
}
