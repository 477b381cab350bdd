//! Wireless single-path TCP options through the simulator: scenario fields, corruption reports
//! reaching TCP-ELN, TCP-Probing and the last-link heuristics end to end.

mod common;

use common::{flow, run, two_hosts};
use roam_sim::Scenario;

fn tcp_flow(size: &str, cc: &str, tcp_table: &str) -> String {
    format!(
        r#"
[[flow]]
id = "f"
protocol = "tcp"
cc = "{cc}"
from = "a"
to = "b"
size = "{size}"
[flow.tcp]
{tcp_table}
"#
    )
}

const LOSSY_LINK: &str = r#"rate = "5Mbps"
delay = "20ms"
wireless = true"#;

const FORWARD_LOSS: &str = r#"[link.forward]
loss = 0.02"#;

#[test]
fn wireless_options_are_selectable_from_scenario_files() {
    let text = two_hosts(
        "60s",
        LOSSY_LINK,
        "link_info = { window = \"2s\" }\n",
        &tcp_flow(
            "100KB",
            "westwood",
            r#"recovery = "probing"
eln = true
report_link_info = true
probing = { a = 0.3, b = 0.7 }
last_link = { max_cwnd = true, initial = true, per = true }"#,
        ),
    );
    let s = Scenario::from_toml_str(&text, "t").expect("loads");
    let f = run(&text);
    assert_eq!(flow(&f, "f").bytes_delivered, 100_000);
    assert!(matches!(
        s.links[0].link_info,
        roam_sim::link::meter::LinkInfoMode::Measured { .. }
    ));
}

#[test]
fn unknown_or_bad_wireless_fields_are_rejected() {
    for (extra, table) in [
        ("", "last_link = { bogus = true }"),
        ("", "recovery = \"magic\""),
        ("", "probing = { a = 2.0 }"),
        ("link_info = \"guess\"\n", ""),
        ("link_info = { window = \"0s\" }\n", ""),
    ] {
        let text = two_hosts(
            "10s",
            LOSSY_LINK,
            extra,
            &tcp_flow("10KB", "newreno", table),
        );
        assert!(
            Scenario::from_toml_str(&text, "t").is_err(),
            "accepted {extra:?} {table:?}"
        );
    }
}

fn eln_goodput(eln: bool, sack: bool) -> f64 {
    let table = format!("eln = {eln}\nsack = {sack}");
    let r = run(&two_hosts(
        "200s",
        LOSSY_LINK,
        FORWARD_LOSS,
        &tcp_flow("2MB", "newreno", &table),
    ));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 2_000_000, "eln={eln} sack={sack}");
    f.goodput_bps
}

#[test]
fn corruption_reports_let_tcp_eln_keep_its_window() {
    for sack in [true, false] {
        let plain = eln_goodput(false, sack);
        let eln = eln_goodput(true, sack);
        assert!(
            eln > 1.5 * plain,
            "sack={sack}: ELN {eln:.0} b/s vs plain {plain:.0} b/s"
        );
    }
}

#[test]
fn probing_and_westwood_transfers_stay_intact_over_a_bursty_channel() {
    let gilbert = r#"[link.forward]
gilbert = { good = { mean = "1s", loss = 0.0 }, bad = { mean = "1s", loss = 0.25 } }
[link.reverse]
gilbert = { good = { mean = "1s", loss = 0.0 }, bad = { mean = "1s", loss = 0.25 } }"#;
    for (cc, table) in [
        ("newreno", "recovery = \"probing\"\nsack = false"),
        ("newreno", "recovery = \"probing\"\nsack = true"),
        ("westwood", "sack = true"),
    ] {
        let r = run(&two_hosts(
            "600s",
            LOSSY_LINK,
            gilbert,
            &tcp_flow("1MB", cc, table),
        ));
        let f = flow(&r, "f");
        assert_eq!(f.integrity_errors, 0);
        assert_eq!(f.bytes_delivered, 1_000_000, "{cc} {table}");
    }
}
