//! RCP flows in the simulator: integrity under impairments, scenario checks, sleep policy
//! and energy accounting.

mod common;

use common::{flow, load, run, two_hosts};
use roam_sim::result::FlowFailure;
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

/// `facts = "estimated"`: the receiver judges holes itself (Spike) instead of the link's
/// corruption reports; with random wireless loss it excuses holes and keeps integrity, with
/// congestion drops only (a 10-packet queue, no loss) it excuses none.
#[test]
fn rcp_estimated_facts_excuse_wireless_holes_and_no_congestion_drop() {
    let link = "rate = \"2Mbps\"\ndelay = \"15ms\"\nwireless = true";
    let lossy = two_hosts(
        "100s",
        link,
        "[link.forward]\nloss = 0.05",
        &rcp_flow("500KB", "eln = true\nfacts = \"estimated\""),
    );
    let f = run(&lossy).flows[0].clone();
    assert_eq!(f.bytes_delivered, 500_000);
    assert_eq!(f.integrity_errors, 0);
    assert!(f.wireless_excused > 0, "{f:?}");
    let congested = two_hosts(
        "30s",
        &format!("{link}\nqueue = \"10p\""),
        "",
        &rcp_flow(
            "2MB",
            "eln = true\nfacts = \"estimated\"\ninitial_window = 10",
        ),
    );
    let f = run(&congested).flows[0].clone();
    assert_eq!(f.integrity_errors, 0);
    assert!(f.recoveries > 0, "the queue must overflow: {f:?}");
    assert_eq!(f.wireless_excused, 0, "{f:?}");
    for (rcp, want) in [
        ("facts = \"estimated\"", "eln = true"),
        ("eln = true\nfacts = \"guess\"", "rcp.facts"),
    ] {
        let text = two_hosts("1s", "rate = \"2Mbps\"", "", &rcp_flow("1MB", rcp));
        let err = Scenario::from_toml_str(&text, "t").unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
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
    assert!(s.sleep_s.unwrap() > 1.0, "{s:?}");
    assert_eq!(a.sleep_s, Some(0.0));
    assert!(s.energy_j.unwrap() > 0.0 && a.energy_j.unwrap() > 0.0);
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
    // The run ends with the transfer (~4.5 s): ~4.3 s receiving 1 MB at 2 Mb/s (1.4 W), the
    // ACKs sent (1.65 W), idle otherwise (0.5 W).
    let e = r.flows[0].energy_j.expect("metered");
    assert!(e > 4.0 * 1.4 && e < 8.0, "{e}");
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

#[test]
fn an_rcp_receiver_whose_sender_never_answers_reports_a_timed_out_handshake() {
    let down = "[[event]]\nat = \"0s\"\nnode = \"a\"\niface = \"l\"\nup = false\n";
    let text = two_hosts(
        "600s",
        "rate = \"2Mbps\"\ndelay = \"15ms\"",
        "",
        &(rcp_flow("100KB", "") + down),
    );
    let f = run(&text).flows.remove(0);
    assert_eq!(f.bytes_delivered, 0);
    assert_eq!(f.failure, Some(FlowFailure::HandshakeTimedOut));
    assert!(f.failed_s.is_some_and(|t| t > 60.0), "{f:?}");
}

/// Sender expiry (docs/RCP.md): across a 20 s outage a sender with a 5 s idle timeout expires,
/// and the receiver's first request after the outage is answered with a reset; without the
/// timeout the same transfer resumes and completes.
#[test]
fn a_sender_that_expires_during_an_outage_resets_the_returning_receiver() {
    let outage = "blackouts = [{ at = \"1s\", duration = \"20s\" }]";
    let text = |rcp: &str| {
        two_hosts(
            "120s",
            "rate = \"2Mbps\"\ndelay = \"15ms\"",
            &format!("[link.forward]\n{outage}\n[link.reverse]\n{outage}"),
            &rcp_flow("1MB", rcp),
        )
    };
    let expiring = run(&text("idle_timeout_ms = 5000")).flows.remove(0);
    assert_eq!(expiring.failure, Some(FlowFailure::Reset), "{expiring:?}");
    assert!(
        expiring.failed_s.is_some_and(|t| t > 20.9),
        "reset only once the outage is over: {expiring:?}"
    );
    assert!(expiring.bytes_delivered < 1_000_000);
    assert_eq!(expiring.integrity_errors, 0);

    let patient = run(&text("idle_timeout_ms = 0")).flows.remove(0);
    assert_eq!(patient.failure, None, "{patient:?}");
    assert_eq!(patient.bytes_delivered, 1_000_000);
}
