//! Link model: serialisation rate, drop-tail queues and impairments, checked with UDP traffic.

mod common;

use common::{cbr, flow, link, run, two_hosts};

#[test]
fn cbr_below_capacity_is_delivered_in_full_with_exact_delay() {
    // 1000-byte datagrams + 28 bytes of headers at 0.5 Mb/s over a 1 Mb/s link.
    let r = run(&two_hosts(
        "10s",
        r#"rate = "1Mbps"
delay = "10ms""#,
        "",
        &cbr("f", "500kbps", 1000),
    ));
    let f = flow(&r, "f");
    let sent = f.transport_bytes_sent;
    assert!(sent >= 620_000, "sent {sent}");
    // Everything sent more than one delay + serialisation before the end arrives.
    assert!(sent - f.bytes_delivered <= 2000, "{f:?}");
    assert_eq!(link(&r, "l:fwd").queue_drops, 0);
}

#[test]
fn overloaded_cbr_gets_the_link_rate_and_the_queue_drops_the_rest() {
    let r = run(&two_hosts(
        "20s",
        r#"rate = "1Mbps"
delay = "5ms"
queue = "20p""#,
        "",
        &cbr("f", "2Mbps", 972),
    ));
    let f = flow(&r, "f");
    // The link carries 1 Mb/s of 1000-byte wire packets, 972 bytes of payload each.
    let expected = 1e6 * 972.0 / 1000.0;
    assert!(
        (f.goodput_bps - expected).abs() / expected < 0.01,
        "goodput {} vs {expected}",
        f.goodput_bps
    );
    let l = link(&r, "l:fwd");
    assert!(l.queue_drops > 2000, "{l:?}");
    assert!((l.utilization - 1.0).abs() < 0.01, "{l:?}");
}

#[test]
fn byte_limited_queue_holds_that_many_bytes() {
    // A 5000-byte queue holds four 1028-byte packets (a fifth would exceed it).
    let r = run(&two_hosts(
        "1s",
        r#"rate = "1Mbps"
queue = "5000B""#,
        "",
        r#"
[[flow]]
id = "burst"
protocol = "cbr"
from = "a"
to = "b"
rate = "1Gbps"
packet_size = 1000
size = 10000
"#,
    ));
    let l = link(&r, "l:fwd");
    assert_eq!(l.packets_sent, 5, "{l:?}"); // one on the wire + four queued
    assert_eq!(l.queue_drops, 5);
}

#[test]
fn bernoulli_loss_rate_matches_the_probability() {
    let r = run(&two_hosts(
        "30s",
        r#"rate = "100Mbps""#,
        "[link.forward]\nloss = 0.05",
        &cbr("f", "8Mbps", 972),
    ));
    let l = link(&r, "l:fwd");
    let rate = l.impairment_drops as f64 / l.packets_sent as f64;
    assert!(l.packets_sent > 29_000, "{l:?}");
    // Binomial standard deviation ≈ 0.0013 at n = 30 000.
    assert!((rate - 0.05).abs() < 0.005, "loss rate {rate}");
}

#[test]
fn gilbert_elliott_long_run_loss_is_the_stationary_mix() {
    let extra = r#"
[link.forward.gilbert]
good = { mean = "100ms", loss = 0.01 }
bad = { mean = "50ms", loss = 0.5 }
"#;
    let r = run(&two_hosts(
        "300s",
        r#"rate = "100Mbps""#,
        extra,
        &cbr("f", "8Mbps", 972),
    ));
    let l = link(&r, "l:fwd");
    let rate = l.impairment_drops as f64 / l.packets_sent as f64;
    let expected = (0.1 * 0.01 + 0.05 * 0.5) / 0.15;
    assert!((rate - expected).abs() < 0.015, "loss {rate} vs {expected}");
}

#[test]
fn blackout_drops_everything_in_its_window_and_nothing_outside() {
    let extra = r#"
[link.forward]
blackouts = [{ at = "2s", duration = "1s" }]
"#;
    // 1000 datagrams per second.
    let r = run(&two_hosts(
        "5s",
        r#"rate = "100Mbps"
delay = "1ms""#,
        extra,
        &cbr("f", "8Mbps", 1000),
    ));
    let l = link(&r, "l:fwd");
    assert!((999..=1001).contains(&l.impairment_drops), "{l:?}");
    let s = &r.series[0];
    for (t, bps) in s.time_s.iter().zip(&s.throughput_bps) {
        if *t > 2.15 && *t < 3.0 {
            assert_eq!(*bps, 0.0, "bin ending {t}");
        }
        if *t < 1.95 || *t > 3.15 {
            assert!(*bps > 7.5e6, "bin ending {t}: {bps}");
        }
    }
}

#[test]
fn trace_driven_link_delivers_the_traces_capacity() {
    // 3 opportunities every 2 ms → 1500 B · 8 · 1500/s = 18 Mb/s.
    let dir = std::env::temp_dir().join(format!("roam-sim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.trace");
    std::fs::write(&trace, "1\n2\n2\n").unwrap();
    let extra = format!(
        "[link.forward]\ntrace = {:?}\nqueue = \"200p\"",
        trace.display().to_string()
    );
    // 1472-byte payloads: 1500 bytes on the wire, one per opportunity.
    let r = run(&two_hosts(
        "10s",
        r#"rate = "100Mbps""#,
        &extra,
        &cbr("f", "30Mbps", 1472),
    ));
    let l = link(&r, "l:fwd");
    assert!((l.utilization - 1.0).abs() < 0.01, "{l:?}");
    let expected = 1500.0 * 1472.0 * 8.0;
    let g = flow(&r, "f").goodput_bps;
    assert!((g - expected).abs() / expected < 0.01, "{g} vs {expected}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn duplication_delivers_extra_copies() {
    let r = run(&two_hosts(
        "20s",
        r#"rate = "100Mbps""#,
        "[link.forward]\nduplicate = 0.1",
        &cbr("f", "8Mbps", 1000),
    ));
    let f = flow(&r, "f");
    let ratio = f.bytes_delivered as f64 / f.transport_bytes_sent as f64;
    assert!((ratio - 1.1).abs() < 0.01, "{ratio}");
}

#[test]
fn jitter_delays_packets_but_keeps_them_in_order() {
    let tcp =
        "[[flow]]\nid = \"f\"\nprotocol = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nsize = \"2MiB\"\n";
    let transfer = |extra: &str| {
        run(&two_hosts(
            "30s",
            "rate = \"10Mbps\"\ndelay = \"10ms\"\nqueue = \"10000p\"",
            extra,
            tcp,
        ))
    };
    let plain = transfer("");
    let jittered = transfer("[link.forward]\njitter = \"5ms\"\n[link.reverse]\njitter = \"5ms\"");
    let (p, j) = (flow(&plain, "f"), flow(&jittered, "f"));
    // In order: no duplicate ACKs, so nothing is retransmitted; every byte arrives intact.
    assert_eq!(p.retransmitted_segments, 0, "{p:?}");
    assert_eq!(j.retransmitted_segments, 0, "{j:?}");
    assert_eq!(j.integrity_errors, 0);
    assert_eq!(j.bytes_delivered, 2 << 20);
    // The random delay slows the ACK clock: the transfer takes longer than without it.
    let (tp, tj) = (p.completion_s.expect("done"), j.completion_s.expect("done"));
    assert!(tj > tp, "jittered {tj} s vs plain {tp} s");
    // Same seed, same jitter.
    let again = transfer("[link.forward]\njitter = \"5ms\"\n[link.reverse]\njitter = \"5ms\"");
    assert_eq!(flow(&again, "f").completion_s, j.completion_s);
}

#[test]
fn scheduled_rate_change_takes_effect_at_its_time() {
    let events = r#"
[[event]]
at = "5s"
link = "l"
direction = "forward"
set = { rate = "500kbps" }
"#;
    let text = two_hosts(
        "10s",
        r#"rate = "1Mbps""#,
        "",
        &format!("{}{events}", cbr("f", "2Mbps", 972)),
    );
    let r = run(&text);
    let s = &r.series[0];
    let mean = |lo: f64, hi: f64| {
        let v: Vec<f64> = s
            .time_s
            .iter()
            .zip(&s.throughput_bps)
            .filter(|(t, _)| **t > lo && **t <= hi)
            .map(|(_, b)| *b)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!((mean(1.0, 5.0) - 972e3).abs() < 20e3, "{}", mean(1.0, 5.0));
    assert!(
        (mean(6.0, 10.0) - 486e3).abs() < 20e3,
        "{}",
        mean(6.0, 10.0)
    );
}

#[test]
fn interface_down_stops_sending_until_it_comes_back() {
    let events = r#"
[[event]]
at = "1s"
node = "a"
iface = 0
up = false
[[event]]
at = "2s"
node = "a"
iface = "l"
up = true
"#;
    let r = run(&two_hosts(
        "3s",
        r#"rate = "100Mbps""#,
        "",
        &format!("{}{events}", cbr("f", "8Mbps", 1000)),
    ));
    let f = flow(&r, "f");
    // Datagrams at 0, 1 ms, …, 3 s inclusive; those in [1 s, 2 s) meet the dead interface.
    assert_eq!(f.datagrams_sent, 3001);
    let l = link(&r, "l:fwd");
    assert_eq!(l.packets_sent, 2001, "{l:?}");
    assert_eq!(l.impairment_drops, 1000);
}

#[test]
fn pareto_on_off_source_averages_rate_times_duty_cycle() {
    let flows = r#"
[[flow]]
id = "p"
protocol = "pareto"
from = "a"
to = "b"
rate = "4Mbps"
packet_size = 500
on_time = "200ms"
off_time = "200ms"
shape = 2.5
"#;
    let r = run(&two_hosts("400s", r#"rate = "100Mbps""#, "", flows));
    let g = flow(&r, "p").goodput_bps;
    assert!((g - 2e6).abs() / 2e6 < 0.15, "goodput {g}");
}
