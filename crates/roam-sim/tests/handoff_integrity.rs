//! Data integrity across handoffs, through the whole simulator: a server sends to a mobile host
//! behind a router; the mobile's wireless link is handed off at random instants (its rate, delay
//! and loss jump to those of another network, in both directions) and its interface goes down
//! and comes back up at random. TCP (every congestion controller and recovery a scenario can
//! select, with link info reported) and RCP (NewReno and RCP-STP receivers, with ELN) must still
//! deliver exactly the bytes written, once, in order, and complete.

mod common;

use common::handoff::{change, events, Change};
use common::{flow, run};
use proptest::prelude::*;

/// Server —(10 Mb/s, 5 ms)— router —(wireless, 2 Mb/s, 20 ms, 1 % loss)— mobile, then `flows`
/// and `events`.
fn scenario(seed: u64, flows: &str, events: &str) -> String {
    let topology = common::mobile_behind_router(
        &format!("duration = \"3000s\"\nseed = {seed}\nsample_interval = \"0s\""),
        "rate = \"10Mbps\"\ndelay = \"5ms\"\nqueue = \"100p\"",
        "rate = \"2Mbps\"\ndelay = \"20ms\"\nqueue = \"50p\"\n[link.forward]\nloss = 0.01",
    );
    format!("name = \"handoffs\"\n{topology}{flows}\n{events}")
}

/// Every TCP congestion controller / recovery combination a scenario can select here.
const TCP_VARIANTS: &[(&str, &str)] = &[
    ("newreno", ""),
    ("newreno", "sack = false\n"),
    ("newreno", "eln = true\n"),
    ("newreno", "recovery = \"probing\"\n"),
    (
        "newreno",
        "last_link = { max_cwnd = true, initial = true, per = true }\n",
    ),
    ("westwood", ""),
    ("atl", ""),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn tcp_delivers_every_byte_once_in_order_across_handoffs(
        seed in 1u64..1_000_000,
        variant in 0..TCP_VARIANTS.len(),
        changes in proptest::collection::vec(change(), 0..6),
        kib in 1u32..600,
    ) {
        let (cc, options) = TCP_VARIANTS[variant];
        let flows = format!(
            "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\ncc = \"{cc}\"\nfrom = \"server\"\n\
             to = \"mobile\"\nsize = \"{kib}KiB\"\n[flow.tcp]\nreport_link_info = true\n{options}"
        );
        let r = run(&scenario(seed, &flows, &events(&changes)));
        let f = flow(&r, "f");
        prop_assert_eq!(f.integrity_errors, 0);
        prop_assert_eq!(f.bytes_delivered, u64::from(kib) * 1024);
        prop_assert!(f.completion_s.is_some(), "did not complete: {:?}", f);
    }

    #[test]
    fn rcp_delivers_every_byte_once_in_order_across_handoffs(
        seed in 1u64..1_000_000,
        stp in any::<bool>(),
        eln in any::<bool>(),
        changes in proptest::collection::vec(change(), 0..6),
        kb in 1u32..600,
    ) {
        let cc = if stp { "stp" } else { "newreno" };
        let flows = format!(
            "[[flow]]\nid = \"f\"\nprotocol = \"rcp\"\ncc = \"{cc}\"\nfrom = \"server\"\n\
             to = \"mobile\"\nsize = \"{kb}KB\"\n[flow.rcp]\neln = {eln}\n"
        );
        let r = run(&scenario(seed, &flows, &events(&changes)));
        let f = flow(&r, "f");
        prop_assert_eq!(f.integrity_errors, 0);
        prop_assert_eq!(f.bytes_delivered, u64::from(kb) * 1000);
        prop_assert!(f.completion_s.is_some(), "did not complete: {:?}", f);
    }
}

/// Regression (found by the property test above): after a handoff to a slower, longer path the
/// probe answers all came back after the probe timer, and TCP-Probing restarted its exchange
/// forever. Late answers now lengthen the timer (docs/DECISIONS.md, "TCP-Probing").
#[test]
fn a_probe_cycle_survives_a_handoff_to_a_slower_longer_path() {
    let flows = "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"server\"\nto = \"mobile\"\n\
                 size = \"129KiB\"\n[flow.tcp]\nreport_link_info = true\nrecovery = \"probing\"\n";
    let handoff = [Change::Handoff {
        at_ms: 770,
        rate_kbps: 300,
        delay_ms: 153,
        loss: 0.0,
    }];
    let r = run(&scenario(1, flows, &events(&handoff)));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 129 * 1024);
    let done = f.completion_s.expect("completes");
    assert!(done < 30.0, "completed only at {done} s");
}
