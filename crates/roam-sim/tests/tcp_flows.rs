//! TCP flows through the simulator: completion and integrity under impairments (the ns-3
//! anchors are in validation.rs).

mod common;

use common::{flow, run, two_hosts};
use roam_sim::result::FlowFailure;

fn tcp(id: &str, size: &str) -> String {
    format!(
        r#"
[[flow]]
id = "{id}"
protocol = "tcp"
from = "a"
to = "b"
size = "{size}"
"#
    )
}

#[test]
fn sized_flow_completes_and_the_run_stops() {
    let r = run(&two_hosts(
        "100s",
        r#"rate = "10Mbps"
delay = "10ms""#,
        "",
        &tcp("f", "1MB"),
    ));
    let f = flow(&r, "f");
    assert_eq!(f.bytes_delivered, 1_000_000);
    let done = f.completion_s.expect("completed");
    assert!(done > 0.8 && done < 5.0, "{done}");
    assert!(r.sim_seconds < 10.0, "{}", r.sim_seconds);
    assert!(f.overhead_pct > 0.0);
}

#[test]
fn transfer_survives_loss_reordering_duplication_and_blackouts() {
    let extra = r#"
[link.forward]
loss = 0.02
duplicate = 0.02
reorder = { probability = 0.05, delay = "15ms" }
blackouts = [{ at = "1s", duration = "1.5s" }]
[link.reverse]
loss = 0.02
duplicate = 0.01
"#;
    let r = run(&two_hosts(
        "300s",
        r#"rate = "5Mbps"
delay = "20ms""#,
        extra,
        &tcp("f", "2MB"),
    ));
    let f = flow(&r, "f");
    assert_eq!(f.bytes_delivered, 2_000_000, "{f:?}");
    assert!(f.completion_s.is_some());
    assert!(f.retransmitted_segments > 0);
}

/// The receiver's interface down from `down_at`, for good.
fn receiver_down_at(down_at: &str) -> String {
    format!("[[event]]\nat = \"{down_at}\"\nnode = \"b\"\niface = \"l\"\nup = false\n")
}

#[test]
fn a_flow_whose_peer_never_answers_reports_a_timed_out_handshake() {
    let text = two_hosts(
        "600s",
        "rate = \"1Mbps\"\ndelay = \"10ms\"",
        "",
        &(tcp("f", "100KB") + &receiver_down_at("0s")),
    );
    let f = run(&text).flows.remove(0);
    assert_eq!(f.bytes_delivered, 0);
    assert_eq!(f.completion_s, None);
    assert_eq!(f.failure, Some(FlowFailure::HandshakeTimedOut));
    // SYNs at 0, 1, 3, 7, 15, 31 and 63 s (the RTO doubling from 1 s), then 60 s (the RTO's
    // cap) for the last answer: the handshake gives up at 123 s, as Linux's would at ≈ 127 s.
    let at = f.failed_s.expect("when");
    assert!((122.0..=124.0).contains(&at), "failed at {at} s");
}

#[test]
fn an_established_flow_that_loses_its_peer_gives_up_at_its_retransmission_limit() {
    let flow = tcp("f", "10MB") + "[flow.tcp]\nmax_retries = 3\n";
    let text = two_hosts(
        "600s",
        "rate = \"1Mbps\"\ndelay = \"10ms\"",
        "",
        &(flow + &receiver_down_at("5s")),
    );
    let f = run(&text).flows.remove(0);
    assert!(f.bytes_delivered > 0);
    assert_eq!(f.failure, Some(FlowFailure::GaveUp));
    assert!(f.failed_s.expect("when") > 5.0);
}

#[test]
fn a_completed_flow_reports_no_failure() {
    let text = two_hosts(
        "60s",
        "rate = \"10Mbps\"\ndelay = \"10ms\"",
        "",
        &tcp("f", "100KB"),
    );
    let f = run(&text).flows.remove(0);
    assert!(f.completion_s.is_some());
    assert_eq!((f.failure, f.failed_s), (None, None));
}
