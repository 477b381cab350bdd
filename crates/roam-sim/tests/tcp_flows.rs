//! TCP flows through the simulator: completion and integrity under impairments (the ns-3
//! anchors are in validation.rs).

mod common;

use common::{flow, run, two_hosts};

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
