//! Data integrity when several flows of different protocols share one impaired wireless link:
//! one to three TCP or RCP downloads with random options (controller, SACK, delayed ACKs,
//! TCP-Probing, ELN, last-link heuristics, window caps, segment sizes, receive buffers, RCP-STP,
//! sleep, status requests), staggered starts, random link rate, delay and queue, loss,
//! reordering and duplication in both directions, an optional Gilbert–Elliott channel, and
//! random handoffs and outages. Every flow must deliver exactly its bytes, once, in order.
//!
//! Handshakes may retry up to 20 times here, so that a run of SYNs lost to outages and loss —
//! a correct give-up after the default 6 — does not end a flow before it starts.

mod common;

use common::handoff::{change, events, Change};
use proptest::prelude::*;

/// One download from the server to the mobile.
#[derive(Debug, Clone)]
struct Download {
    rcp: bool,
    /// TCP: newreno / westwood / atl. RCP: stp / newreno / newreno.
    controller: u8,
    sack: bool,
    delayed_ack: bool,
    probing: bool,
    eln: bool,
    last_link: bool,
    sleep: bool,
    max_window_segments: u32,
    mss: u32,
    recv_buffer_kb: u32,
    status_interval_ms: u32,
    kb: u32,
    start_ms: u32,
}

fn download() -> impl Strategy<Value = Download> {
    (
        (
            any::<bool>(),
            0u8..3,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            any::<bool>(),
            prop_oneof![Just(0u32), 2u32..64],
            200u32..1460,
            prop_oneof![Just(0u32), 4u32..200],
            prop_oneof![Just(0u32), 1u32..200],
            1u32..300,
            0u32..3000,
        ),
    )
        .prop_map(
            |(
                (rcp, controller, sack, delayed_ack, probing, eln, last_link),
                (sleep, max_window_segments, mss, recv_buffer_kb, status_interval_ms, kb, start_ms),
            )| Download {
                rcp,
                controller,
                sack,
                delayed_ack,
                probing,
                eln,
                last_link,
                sleep,
                max_window_segments,
                mss,
                recv_buffer_kb,
                status_interval_ms,
                kb,
                start_ms,
            },
        )
}

/// The `[[flow]]` entry of download `i`; `sleep` only where the channel has bad states.
fn flow_entry(i: usize, d: &Download, gilbert: bool) -> String {
    let head = format!(
        "[[flow]]\nid = \"f{i}\"\nfrom = \"server\"\nto = \"mobile\"\nsize = \"{}KB\"\n\
         start = \"{}ms\"\n",
        d.kb, d.start_ms
    );
    if d.rcp {
        let cc = if d.controller == 0 { "stp" } else { "newreno" };
        format!(
            "{head}protocol = \"rcp\"\ncc = \"{cc}\"\n[flow.rcp]\nmax_syn_retries = 20\n\
             eln = {}\nsleep = {}\nmax_window_segments = {}\nstatus_interval_ms = {}\n",
            d.eln,
            d.sleep && gilbert,
            d.max_window_segments,
            d.status_interval_ms
        )
    } else {
        let cc = ["newreno", "westwood", "atl"][usize::from(d.controller)];
        let recovery = if d.probing { "probing" } else { "standard" };
        let recv_buffer = if d.recv_buffer_kb > 0 {
            format!("recv_buffer = {}\n", d.recv_buffer_kb * 1000)
        } else {
            String::new()
        };
        let ll = d.last_link;
        format!(
            "{head}protocol = \"tcp\"\ncc = \"{cc}\"\n[flow.tcp]\nmax_syn_retries = 20\n\
             sack = {}\ndelayed_ack = {}\nrecovery = \"{recovery}\"\neln = {}\n\
             report_link_info = true\nmax_window_segments = {}\nmss = {}\n{recv_buffer}\
             last_link = {{ max_cwnd = {ll}, initial = {ll}, per = {ll} }}\n",
            d.sack, d.delayed_ack, d.eln, d.max_window_segments, d.mss
        )
    }
}

/// The wireless link's impairments.
#[derive(Debug, Clone)]
struct Channel {
    rate_kbps: u32,
    delay_ms: u32,
    queue: u32,
    forward_loss: f64,
    reverse_loss: f64,
    reorder: f64,
    duplicate: f64,
    gilbert: bool,
}

fn channel() -> impl Strategy<Value = Channel> {
    (
        50u32..10_000,
        0u32..400,
        2u32..100,
        0.0..0.08f64,
        0.0..0.08f64,
        0.0..0.1f64,
        0.0..0.05f64,
        any::<bool>(),
    )
        .prop_map(
            |(
                rate_kbps,
                delay_ms,
                queue,
                forward_loss,
                reverse_loss,
                reorder,
                duplicate,
                gilbert,
            )| {
                Channel {
                    rate_kbps,
                    delay_ms,
                    queue,
                    forward_loss,
                    reverse_loss,
                    reorder,
                    duplicate,
                    gilbert,
                }
            },
        )
}

/// Server —(20 Mb/s, 5 ms)— router —(wireless `c`)— mobile.
fn scenario(seed: u64, c: &Channel, downloads: &[Download], changes: &[Change]) -> String {
    let gilbert = if c.gilbert {
        "gilbert = { good = { mean = \"2s\", loss = 0.001 }, bad = { mean = \"500ms\", loss = 0.2 } }"
    } else {
        ""
    };
    let run = format!("duration = \"5000s\"\nseed = {seed}\nsample_interval = \"0s\"");
    let wireless = format!(
        "rate = \"{}kbps\"\ndelay = \"{}ms\"\nqueue = \"{}p\"\n[link.forward]\nloss = {}\n\
         reorder = {{ probability = {}, delay = \"7ms\" }}\nduplicate = {}\n{gilbert}\n\
         [link.reverse]\nloss = {}\nduplicate = {}\n",
        c.rate_kbps,
        c.delay_ms,
        c.queue,
        c.forward_loss,
        c.reorder,
        c.duplicate,
        c.reverse_loss,
        c.duplicate
    );
    let wired = "rate = \"20Mbps\"\ndelay = \"5ms\"\nqueue = \"100p\"";
    let mut text = format!(
        "name = \"shared-link\"\n{}",
        common::mobile_behind_router(&run, wired, &wireless)
    );
    for (i, d) in downloads.iter().enumerate() {
        text += &flow_entry(i, d, c.gilbert);
    }
    text + &events(changes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_flow_on_a_shared_impaired_link_delivers_its_bytes_once_in_order(
        seed in 1u64..1_000_000,
        c in channel(),
        downloads in proptest::collection::vec(download(), 1..4),
        changes in proptest::collection::vec(change(), 0..5),
    ) {
        let text = scenario(seed, &c, &downloads, &changes);
        let r = common::run(&text);
        for (d, f) in downloads.iter().zip(&r.flows) {
            prop_assert_eq!(f.integrity_errors, 0, "{}", text);
            prop_assert_eq!(f.bytes_delivered, u64::from(d.kb) * 1000, "{:?}\n{}", f, text);
        }
    }
}
