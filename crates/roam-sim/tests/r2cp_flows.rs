//! R²CP flows through the whole simulator (rcp-r2cp.txt §4): two interfaces, two servers,
//! interface down/up and server-failure events; every byte once, in order, unchanged.

mod common;

use common::{flow, run};
use proptest::prelude::*;

/// server1 —wired— r1 —wifi (iface 0)— mobile —cell (iface 1)— r2 —wired— server2.
fn scenario(seed: u64, wifi: &str, cell: &str, flows: &str, events: &str) -> String {
    format!(
        r#"name = "r2cp"
[run]
duration = "600s"
seed = {seed}
sample_interval = "0s"
[[node]]
name = "server1"
[[node]]
name = "server2"
[[node]]
name = "r1"
kind = "router"
[[node]]
name = "r2"
kind = "router"
[[node]]
name = "mobile"
[[link]]
name = "w1"
a = "server1"
b = "r1"
rate = "100Mbps"
delay = "5ms"
[[link]]
name = "wifi"
a = "r1"
b = "mobile"
wireless = true
{wifi}
[[link]]
name = "cell"
a = "r2"
b = "mobile"
wireless = true
{cell}
[[link]]
name = "w2"
a = "server2"
b = "r2"
rate = "100Mbps"
delay = "5ms"
{flows}
{events}"#
    )
}

fn two_pipes(scheme: &str, size: &str) -> String {
    format!(
        r#"[[flow]]
id = "f"
protocol = "r2cp"
from = "server1"
to = "mobile"
size = "{size}"
[flow.rcp]
max_retries = 4
[flow.r2cp]
scheme = "{scheme}"
[[flow.r2cp.pipe]]
iface = 0
server = "server1"
[[flow.r2cp.pipe]]
iface = 1
server = "server2"
"#
    )
}

#[test]
fn two_pipes_to_two_servers_aggregate_their_bandwidth() {
    let wifi = "rate = \"4Mbps\"\ndelay = \"10ms\"\nqueue = \"50p\"";
    let cell = "rate = \"2Mbps\"\ndelay = \"40ms\"\nqueue = \"50p\"";
    let r = run(&scenario(1, wifi, cell, &two_pipes("r2cp", "3MB"), ""));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 3_000_000);
    let t = f.completion_s.expect("completes");
    // 24 Mb over 6 Mb/s is 4 s; the best single path alone needs 6 s.
    assert!(t < 5.5, "completion {t} s");
    // Its scheduling overhead is reported; on two tidy paths it requests nothing twice.
    let m = f
        .multipath
        .expect("an R²CP flow reports its multipath counters");
    assert_eq!(m.bytes_redundant, 0, "{m:?}");
    assert_eq!(m.silences, 0, "{m:?}");
}

/// §4.4.3's policy: a secondary pipe takes only the tokens the primary leaves. Whatever order
/// the scheduler visits the pipes in, the primary gets its tokens and the connection keeps to
/// the target rate (a secondary refused its turn once ended the whole round and stalled it).
#[test]
fn a_secondary_pipe_under_a_token_policy_does_not_stall_the_connection() {
    let link = "rate = \"1Mbps\"\ndelay = \"10ms\"\nqueue = \"50p\"";
    let flows = two_pipes("r2cp", "1MB").replace(
        "[[flow.r2cp.pipe]]\niface = 1\nserver = \"server2\"\n",
        "policy_rate = \"720kbps\"\n[[flow.r2cp.pipe]]\niface = 1\nserver = \"server2\"\nrole = \"secondary\"\n",
    );
    // `policy_rate` belongs to [flow.r2cp]: move it before the first pipe.
    let flows = flows.replace("policy_rate = \"720kbps\"\n", "").replace(
        "scheme = \"r2cp\"\n",
        "scheme = \"r2cp\"\npolicy_rate = \"720kbps\"\n",
    );
    assert!(flows.contains("role = \"secondary\""));
    let r = run(&scenario(1, link, link, &flows, ""));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 1_000_000);
    let t = f.completion_s.expect("completes");
    // 8 Mb at 720 kb/s is 11.1 s.
    assert!((10.5..12.5).contains(&t), "completion {t} s");
}

#[test]
fn break_before_make_and_a_server_failure_keep_the_object_intact() {
    let wifi = "rate = \"4Mbps\"\ndelay = \"10ms\"\nqueue = \"50p\"";
    let cell = "rate = \"2Mbps\"\ndelay = \"40ms\"\nqueue = \"50p\"";
    let events = r#"
[[event]]
at = "1s"
node = "mobile"
iface = 0
up = false
[[event]]
at = "3s"
node = "mobile"
iface = 0
up = true
[[event]]
at = "5s"
node = "server2"
iface = 0
up = false
"#;
    let r = run(&scenario(2, wifi, cell, &two_pipes("r2cp", "4MB"), events));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 4_000_000);
    assert!(f.completion_s.is_some(), "{f:?}");
}

fn event(at_ms: u64, node: &str, iface: u8, up: bool) -> String {
    format!("[[event]]\nat = \"{at_ms}ms\"\nnode = \"{node}\"\niface = {iface}\nup = {up}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random loss on both wireless links, random interface flaps and one server failing,
    /// under each scheme: the object arrives whole whenever one path survives. (APPS repairs
    /// a stripe only on its own connection, so a dead server stalls it until that pipe gives
    /// up: `max_retries = 4` keeps that within the run.)
    #[test]
    fn every_byte_once_in_order_across_flaps_and_server_failure(
        seed in 1u64..1_000_000,
        scheme in prop_oneof![Just("r2cp"), Just("r2cp-s"), Just("apps")],
        loss in 0.0f64..0.05,
        flaps in proptest::collection::vec((0u8..2, 100u64..8000, 50u64..3000), 0..4),
        dead_server in proptest::option::of(200u64..8000),
        kb in 1u32..1500,
    ) {
        let wifi = format!("rate = \"4Mbps\"\ndelay = \"10ms\"\nqueue = \"50p\"\n[link.forward]\nloss = {loss}");
        let cell = format!("rate = \"2Mbps\"\ndelay = \"60ms\"\nqueue = \"50p\"\n[link.forward]\nloss = {loss}");
        let mut events = String::new();
        for (iface, at, len) in &flaps {
            events += &event(*at, "mobile", *iface, false);
            events += &event(at + len, "mobile", *iface, true);
        }
        if let Some(at) = dead_server {
            events += &event(at, "server2", 0, false);
        }
        let r = run(&scenario(seed, &wifi, &cell, &two_pipes(scheme, &format!("{kb}KB")), &events));
        let f = flow(&r, "f");
        prop_assert_eq!(f.integrity_errors, 0);
        prop_assert_eq!(f.bytes_delivered, u64::from(kb) * 1000);
        prop_assert!(f.completion_s.is_some(), "did not complete: {:?}", f);
    }
}
