//! Property test: RCP flows through the simulator deliver every byte once, in order,
//! unchanged, under random loss, reordering, duplication and blackouts in both directions,
//! with and without ELN and sleep, for NewReno and RCP-STP receivers.

mod common;

use common::{run, two_hosts};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn rcp_flow_delivers_every_byte_once_in_order(
        seed in 1u64..1000,
        loss in 0.0..0.08f64,
        rev_loss in 0.0..0.08f64,
        reorder in 0.0..0.1f64,
        duplicate in 0.0..0.05f64,
        blackout_at in 1u64..5,
        blackout_ms in 0u64..2000,
        size_kb in 1u64..400,
        stp in any::<bool>(),
        eln in any::<bool>(),
        gilbert in any::<bool>(),
    ) {
        let channel = if gilbert {
            r#"gilbert = { good = { mean = "2s", loss = 0.001 }, bad = { mean = "500ms", loss = 0.2 } }"#
        } else {
            ""
        };
        let extra = format!(
            r#"[link.forward]
loss = {loss}
reorder = {{ probability = {reorder}, delay = "4ms" }}
duplicate = {duplicate}
blackouts = [{{ at = "{blackout_at}s", duration = "{blackout_ms}ms" }}]
{channel}
[link.reverse]
loss = {rev_loss}
duplicate = {duplicate}"#
        );
        let cc = if stp { "stp" } else { "newreno" };
        let flow = format!(
            r#"
[[flow]]
id = "f"
protocol = "rcp"
from = "a"
to = "b"
cc = "{cc}"
size = "{size_kb}KB"
[flow.rcp]
eln = {eln}
sleep = {gilbert}
"#
        );
        let text = two_hosts("600s", "rate = \"2Mbps\"\ndelay = \"15ms\"\nwireless = true", &extra, &flow)
            .replace("seed = 1", &format!("seed = {seed}"));
        let r = run(&text);
        let f = &r.flows[0];
        prop_assert_eq!(f.integrity_errors, 0);
        prop_assert_eq!(f.bytes_delivered, size_kb * 1000);
        prop_assert!(f.completion_s.is_some());
    }
}
