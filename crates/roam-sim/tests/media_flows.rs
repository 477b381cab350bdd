//! Media flows (RCP-ATL and the plain rate AIMD) and the ATL service selection, in the simulator.

mod common;

use common::{flow, load, run, two_hosts};
use roam_sim::scenario::FlowKind;

const LINK: &str = r#"rate = "2Mbps"
delay = "20ms"
queue = "50p"
wireless = true"#;

fn media(cc: &str) -> String {
    format!(
        r#"
[[flow]]
id = "m"
protocol = "media"
cc = "{cc}"
from = "a"
to = "b"
"#
    )
}

#[test]
fn media_flows_deliver_intact_packets_and_measure_delay_and_jitter() {
    for cc in ["rcp-atl", "aimd"] {
        let text = two_hosts("30s", LINK, "[link.forward]\nloss = 0.01", &media(cc));
        let r = run(&text);
        let f = flow(&r, "m");
        assert_eq!(f.protocol, "media");
        assert_eq!(f.integrity_errors, 0, "{cc}");
        assert!(f.goodput_bps > 100_000.0, "{cc}: {}", f.goodput_bps);
        let m = f.media.expect("media stats");
        assert!(m.packets_received > 0 && m.packets_received < m.packets_sent);
        // One-way delay is at least the propagation delay plus one transmission.
        assert!(m.mean_delay_s >= 0.020, "{cc}: {}", m.mean_delay_s);
        assert!(m.mean_jitter_s >= 0.0 && m.max_jitter_s >= m.mean_jitter_s);
    }
}

#[test]
fn media_runs_are_deterministic() {
    let text = two_hosts(
        "10s",
        LINK,
        "[link.forward]\nloss = 0.02",
        &media("rcp-atl"),
    );
    assert_eq!(run(&text), run(&text));
}

#[test]
fn rcp_atl_keeps_more_goodput_than_plain_aimd_over_a_lossy_slow_hop() {
    // Mechanism check: a lossy 150 ms wireless hop in front of a 10 ms wired hop. RCP-ATL's
    // gentler β and larger α (eq. 13) keep the rate up where the (1, ½) rate AIMD keeps halving.
    let goodput = |cc: &str| {
        let text = format!(
            r#"
[run]
duration = "60s"
[[node]]
name = "a"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
[[link]]
name = "wl"
a = "a"
b = "r"
rate = "2Mbps"
delay = "150ms"
queue = "50p"
wireless = true
forward = {{ loss = 0.02 }}
[[link]]
name = "wired"
a = "r"
b = "b"
rate = "2Mbps"
delay = "10ms"
queue = "50p"
{}"#,
            media(cc)
        );
        flow(&run(&text), "m").goodput_bps
    };
    let (atl, aimd) = (goodput("rcp-atl"), goodput("aimd"));
    assert!(atl > 1.5 * aimd, "{atl} vs {aimd}");
}

#[test]
fn the_requested_service_selects_tcp_atl_or_rcp_atl() {
    let flows = |service: &str| {
        format!(
            r#"
[[flow]]
id = "x"
protocol = "atl"
service = "{service}"
from = "a"
to = "b"
"#
        )
    };
    let s = load(&two_hosts("1s", LINK, "", &flows("reliable")));
    match &s.flows[0].kind {
        FlowKind::Tcp(t) => {
            assert_eq!(t.cc, "atl");
            assert!(t.config.report_link_info);
        }
        other => panic!("reliable gave {other:?}"),
    }
    let s = load(&two_hosts("1s", LINK, "", &flows("media")));
    assert!(matches!(&s.flows[0].kind, FlowKind::Media(_)));
    assert_eq!(s.flows[0].kind.cc(), "rcp-atl");
}

#[test]
fn bad_media_fields_are_load_errors() {
    let bad = [
        (media("cubic"), "cc"),
        (
            media("aimd").replace("to = \"b\"", "to = \"b\"\nservice = \"media\""),
            "service",
        ),
        (
            media("aimd").replace("to = \"b\"", "to = \"b\"\nsize = \"1MB\""),
            "size",
        ),
        (
            media("aimd").replace("to = \"b\"", "to = \"b\"\npacket_size = 0"),
            "packet_size",
        ),
    ];
    for (flows, field) in bad {
        let text = two_hosts("1s", LINK, "", &flows);
        let err = roam_sim::Scenario::from_toml_str(&text, "t")
            .expect_err(field)
            .to_string();
        assert!(err.contains(field), "{field}: {err}");
    }
}
