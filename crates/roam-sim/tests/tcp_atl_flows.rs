//! TCP-ATL in the simulator: the wireless receiver's link facts reach the source inside ACKs
//! (atl.txt §IV-A case 2) and the source adapts; data arrives intact.

mod common;

use common::{flow, run};

/// A wired source, a 10 ms wired hop, and a lossy 150 ms wireless hop to the receiver.
fn wireless_receiver(cc: &str) -> String {
    let topology = common::mobile_behind_router(
        "duration = \"60s\"",
        "rate = \"2Mbps\"\ndelay = \"10ms\"\nqueue = \"50p\"",
        "rate = \"2Mbps\"\ndelay = \"150ms\"\nqueue = \"50p\"\nforward = { loss = 0.01 }",
    );
    format!(
        r#"{topology}
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
    let wireless = wireless_receiver("atl");
    let text = wireless
        .replace("wireless = true", "wireless = false")
        .replace("forward = { loss = 0.01 }", "");
    assert_eq!(text.matches("wireless = false").count(), 1);
    assert!(!text.contains("loss"), "the path is wired and clean");
    let other = text.replace("cc = \"atl\"", "cc = \"newreno\"");
    let (a, n) = (run(&text), run(&other));
    assert_eq!(flow(&a, "f").bytes_delivered, flow(&n, "f").bytes_delivered);
}
