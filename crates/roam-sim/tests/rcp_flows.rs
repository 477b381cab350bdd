//! RCP flows in the simulator: integrity under impairments, scenario checks, sleep policy
//! and energy accounting.

mod common;

use common::{flow, load, run, two_hosts};
use roam_sim::Scenario;

fn rcp_flow(size: &str, rcp: &str) -> String {
    format!(
        r#"
[[flow]]
id = "f"
protocol = "rcp"
from = "a"
to = "b"
start = "100ms"
size = "{size}"
[flow.rcp]
{rcp}
"#
    )
}

#[test]
fn rcp_flow_delivers_every_byte_under_loss_reordering_and_duplication() {
    let text = two_hosts(
        "200s",
        "rate = \"2Mbps\"\ndelay = \"15ms\"",
        r#"[link.forward]
loss = 0.03
reorder = { probability = 0.05, delay = "3ms" }
duplicate = 0.02
blackouts = [{ at = "3s", duration = "1s" }]
[link.reverse]
loss = 0.03"#,
        &rcp_flow("1MB", ""),
    );
    let r = run(&text);
    let f = flow(&r, "f");
    assert_eq!(f.protocol, "rcp");
    assert_eq!(f.bytes_delivered, 1_000_000);
    assert_eq!(f.integrity_errors, 0);
    assert!(f.completion_s.is_some());
    assert!(f.retransmitted_segments > 0);
}

#[test]
fn rcp_eln_flow_recovers_wireless_losses_with_integrity() {
    let text = two_hosts(
        "100s",
        "rate = \"2Mbps\"\ndelay = \"15ms\"\nwireless = true",
        "[link.forward]\nloss = 0.05",
        &rcp_flow("500KB", "eln = true"),
    );
    let f = run(&text).flows[0].clone();
    assert_eq!(f.bytes_delivered, 500_000);
    assert_eq!(f.integrity_errors, 0);
}

#[test]
fn rcp_table_errors_name_the_field() {
    let text = two_hosts("1s", "rate = \"2Mbps\"", "", &rcp_flow("1MB", "msss = 3"));
    let err = Scenario::from_toml_str(&text, "t").unwrap_err().to_string();
    assert!(err.contains("rcp.msss"), "{err}");
    let text = two_hosts("1s", "rate = \"2Mbps\"", "", &rcp_flow("1MB", "sleep = 3"));
    let err = Scenario::from_toml_str(&text, "t").unwrap_err().to_string();
    assert!(err.contains("rcp.sleep"), "{err}");
    let bad_cc = rcp_flow("1MB", "").replace("start = ", "cc = \"cubicx\"\nstart = ");
    let err = Scenario::from_toml_str(&two_hosts("1s", "rate = \"2Mbps\"", "", &bad_cc), "t")
        .unwrap_err()
        .to_string();
    assert!(err.contains("stp"), "{err}");
}

#[test]
fn sleeping_receiver_saves_energy_and_keeps_integrity() {
    let channel = r#"[link.forward]
gilbert = { good = { mean = "5s", loss = 0.0001 }, bad = { mean = "3s", loss = 0.1 } }
[link.reverse]
gilbert = { good = { mean = "5s", loss = 0.0001 }, bad = { mean = "3s", loss = 0.1 } }"#;
    let link = "rate = \"2Mbps\"\ndelay = \"15ms\"";
    let asleep = run(&two_hosts(
        "60s",
        link,
        channel,
        &rcp_flow("4MB", "sleep = true"),
    ));
    let awake = run(&two_hosts(
        "60s",
        link,
        channel,
        &rcp_flow("4MB", "energy = true"),
    ));
    let (s, a) = (&asleep.flows[0], &awake.flows[0]);
    assert_eq!(s.integrity_errors, 0);
    assert_eq!(s.bytes_delivered, 4_000_000);
    let (es, ea) = (s.energy.unwrap(), a.energy.unwrap());
    assert!(es.sleep_s > 1.0, "{es:?}");
    assert_eq!(ea.sleep_s, 0.0);
    assert!(es.joules > 0.0 && ea.joules > 0.0);
}

#[test]
fn tcp_flow_energy_is_metered_when_asked() {
    let tcp = r#"
[[flow]]
id = "t"
protocol = "tcp"
from = "a"
to = "b"
size = "1MB"
energy = { idle_w = 0.5 }
"#;
    let r = run(&two_hosts(
        "30s",
        "rate = \"2Mbps\"\ndelay = \"15ms\"",
        "",
        tcp,
    ));
    let e = r.flows[0].energy.expect("metered");
    assert!(e.rx_s > 3.9 && e.rx_s < 5.0, "{e:?}");
    assert!(e.tx_s > 0.0);
    let _ = load(&two_hosts("1s", "rate = \"2Mbps\"", "", tcp));
}

#[test]
fn http_like_flow_exchanges_heavy_tailed_responses() {
    let http = r#"
[[flow]]
id = "h"
protocol = "http"
from = "a"
to = "b"
cross = true
[flow.http]
mean_response = "20KB"
think = "200ms"
"#;
    let r = run(&two_hosts(
        "30s",
        "rate = \"2Mbps\"\ndelay = \"20ms\"",
        "",
        http,
    ));
    let f = &r.flows[0];
    assert_eq!(f.protocol, "http");
    assert!(f.bytes_delivered > 200_000, "{}", f.bytes_delivered);
    assert!(f.bytes_delivered < 7_500_000);
    let bad = http.replace("think = ", "thinkk = ");
    let err = Scenario::from_toml_str(&two_hosts("1s", "rate = \"2Mbps\"", "", &bad), "t")
        .unwrap_err()
        .to_string();
    assert!(err.contains("http.thinkk"), "{err}");
}
