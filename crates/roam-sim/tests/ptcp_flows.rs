//! pTCP flows through the whole simulator (ptcp.txt §3–5): a sender and a receiver joined by
//! two links, one pipe per link; every byte once, in order, unchanged, with loss on both links
//! and one of them going dark; aggregation near the sum of the links alone.

mod common;

use common::{flow, repo_path, run};
use proptest::prelude::*;

/// server —wwan (iface 0 on both)— mobile, server —wlan (iface 1 on both)— mobile.
fn scenario(seed: u64, wwan: &str, wlan: &str, flows: &str, events: &str) -> String {
    format!(
        r#"name = "ptcp"
[run]
duration = "600s"
seed = {seed}
sample_interval = "0s"
[[node]]
name = "server"
[[node]]
name = "mobile"
[[link]]
name = "wwan"
a = "server"
b = "mobile"
{wwan}
[[link]]
name = "wlan"
a = "server"
b = "mobile"
{wlan}
{flows}
{events}"#
    )
}

fn two_pipes(size: &str, extra: &str) -> String {
    format!(
        r#"[[flow]]
id = "f"
protocol = "ptcp"
from = "server"
to = "mobile"
size = "{size}"
[flow.tcp]
mss = 1000
{extra}
[[flow.ptcp.pipe]]
from_iface = "wwan"
to_iface = "wwan"
cc = "westwood"
[[flow.ptcp.pipe]]
from_iface = "wlan"
to_iface = "wlan"
cc = "newreno"
"#
    )
}

/// ptcp.txt §5.2.1 at one ratio (experiments/ptcp/rate_differential.toml: 500 kb/s with 400 ms
/// RTT beside 2 Mb/s with 100 ms, 120 s): pTCP's goodput is at least 90 % of the sum of what a
/// TCP flow gets on each link alone (measured: 2.221 Mb/s against 0.448 + 1.862, 96.1 %).
#[test]
fn rate_differential_reaches_ninety_percent_of_the_ideal() {
    let text = std::fs::read_to_string(repo_path("experiments/ptcp/rate_differential.toml"))
        .expect("the experiment");
    let ptcp = flow(&run(&text), "f").goodput_bps;
    let at = text.find("[[flow]]").expect("a flow");
    let alone: f64 = ["wwan", "wlan"]
        .iter()
        .map(|l| {
            let tcp = format!(
                "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"server\"\nto = \"mobile\"\nfrom_iface = \"{l}\"\nto_iface = \"{l}\"\ncc = \"newreno\"\n[flow.tcp]\nmss = 1000\n"
            );
            flow(&run(&(text[..at].to_string() + &tcp)), "f").goodput_bps
        })
        .sum();
    assert!(ptcp >= 0.9 * alone, "pTCP {ptcp:.0} b/s, ideal {alone:.0}");
}

/// 2 MB over 1 Mb/s (200 ms RTT, Westwood+) and 2 Mb/s (40 ms RTT, NewReno): the object
/// arrives whole, and sooner than over the faster link alone, whichever pipe the connection
/// opens on (measured: 8.28 s opening on the slow pipe, 8.07 s on the fast one, against
/// 8.73 s for TCP on the 2 Mb/s link, its handshake included; 7.97 s with both pipes
/// established at 0, before the handshake existed). Short transfers pay for slow start's
/// overshoot: about a quarter of the bytes sent are headers and bytes unbound from the slow
/// pipe and sent again on the other. Unbinding only what the slow pipe had deemed lost at its
/// halving took 11.53 s: the tail of its overshoot is never deemed lost by RFC 6675
/// (docs/PTCP.md).
#[test]
fn two_pipes_deliver_the_object_sooner_than_the_faster_link_alone() {
    let wwan = "rate = \"1Mbps\"\ndelay = \"100ms\"\nqueue = \"50p\"";
    let wlan = "rate = \"2Mbps\"\ndelay = \"20ms\"\nqueue = \"50p\"";
    let tcp = "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"server\"\nto = \"mobile\"\nfrom_iface = \"wlan\"\nto_iface = \"wlan\"\nsize = \"2MB\"\n[flow.tcp]\nmss = 1000\n";
    let alone = flow(&run(&scenario(1, wwan, wlan, tcp, "")), "f")
        .completion_s
        .expect("completes");
    let slow_first = two_pipes("2MB", "");
    let at = slow_first.find("[[flow.ptcp.pipe]]").expect("pipes");
    let pipes: Vec<&str> = slow_first[at..].split_inclusive("newreno\"\n").collect();
    let (wwan_pipe, wlan_pipe) = pipes[0].split_at(pipes[0][1..].find("[[flow").expect("two") + 1);
    let fast_first = format!("{}{wlan_pipe}{wwan_pipe}", &slow_first[..at]);
    for flows in [fast_first, slow_first] {
        let r = run(&scenario(1, wwan, wlan, &flows, ""));
        let f = flow(&r, "f");
        assert_eq!(f.integrity_errors, 0);
        assert_eq!(f.bytes_delivered, 2_000_000);
        let t = f.completion_s.expect("completes");
        assert!(
            t < alone,
            "pTCP {t} s, TCP on the faster link alone {alone} s\n{flows}"
        );
    }
}

#[test]
fn scenario_errors_name_the_pipe_field() {
    let wwan = "rate = \"1Mbps\"\ndelay = \"10ms\"";
    let bad_cc = two_pipes("1MB", "").replace("cc = \"westwood\"", "cc = \"nope\"");
    let e = roam_sim::Scenario::from_toml_str(&scenario(1, wwan, wwan, &bad_cc, ""), "t")
        .expect_err("an unknown controller");
    assert!(e.to_string().contains("cc"), "{e}");
    let twice = two_pipes("1MB", "").replace("\"wlan\"", "\"wwan\"");
    let e = roam_sim::Scenario::from_toml_str(&scenario(1, wwan, wwan, &twice, ""), "t")
        .expect_err("two pipes on one pair");
    assert!(e.to_string().contains("one pipe per pair"), "{e}");
}

fn event(at_ms: u64, node: &str, iface: u8, up: bool) -> String {
    format!("[[event]]\nat = \"{at_ms}ms\"\nnode = \"{node}\"\niface = {iface}\nup = {up}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Issue 31's integrity test through the simulator: random loss on both links in both
    /// directions, one interface of the receiver going dark for good at a random moment
    /// (its pipe black-holed), per-pipe controllers: the object arrives whole, once, in
    /// order, and the transfer completes.
    #[test]
    fn every_byte_once_in_order_with_loss_and_a_black_holed_pipe(
        seed in 1u64..1_000_000,
        loss in 0.0f64..0.05,
        dark in 0u8..2,
        dark_at in 0u64..8000,
        kb in 1u32..1500,
    ) {
        let link = |rate: &str, delay: &str| format!(
            "rate = \"{rate}\"\ndelay = \"{delay}\"\nqueue = \"50p\"\n[link.forward]\nloss = {loss}\n[link.reverse]\nloss = {loss}"
        );
        let events = event(dark_at, "mobile", dark, false);
        let r = run(&scenario(seed, &link("1Mbps", "100ms"), &link("2Mbps", "20ms"), &two_pipes(&format!("{kb}KB"), ""), &events));
        let f = flow(&r, "f");
        prop_assert_eq!(f.integrity_errors, 0);
        prop_assert_eq!(f.bytes_delivered, u64::from(kb) * 1000);
        prop_assert!(f.completion_s.is_some(), "did not complete: {:?}", f);
    }
}
