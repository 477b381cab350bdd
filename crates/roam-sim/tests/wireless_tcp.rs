//! Wireless single-path TCP options through the simulator: scenario fields, corruption reports
//! reaching TCP-ELN, TCP-Probing and the last-link heuristics end to end.

mod common;

use common::{flow, run, two_hosts};
use roam_sim::result::FlowResult;
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
        ("", "last_link = { per = true, plr_window = 1000001 }"),
        ("", "last_link = { plr_window = -1 }"),
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

/// A 2 MB NewReno transfer over the 2 %-loss link, with or without ELN and SACK; checks it
/// arrived whole.
fn eln_flow(eln: bool, sack: bool) -> FlowResult {
    let table = format!("eln = {eln}\nsack = {sack}");
    let r = run(&two_hosts(
        "200s",
        LOSSY_LINK,
        FORWARD_LOSS,
        &tcp_flow("2MB", "newreno", &table),
    ));
    let f = flow(&r, "f").clone();
    assert_eq!(f.integrity_errors, 0);
    assert_eq!(f.bytes_delivered, 2_000_000, "eln={eln} sack={sack}");
    f
}

fn eln_goodput(eln: bool, sack: bool) -> f64 {
    eln_flow(eln, sack).goodput_bps
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

/// Retransmissions of a 2 MB transfer over a 7 Mb/s, 200 ms-RTT wireless link with a 100-packet
/// queue, with Initial Cwnd tuning: its window of BW·RTT ≈ 175 segments is paced at the
/// reported 7 Mb/s, or sent back to back (`initial_burst`).
fn initial_tuning_retransmissions(burst: bool) -> u64 {
    let link = r#"rate = "7Mbps"
delay = "100ms"
queue = "100p"
wireless = true"#;
    let table = format!(
        "sack = false\nreport_link_info = true\nlast_link = {{ initial = true, initial_burst = {burst} }}"
    );
    let text = two_hosts("30s", link, "", &tcp_flow("2MB", "newreno", &table));
    let f = run(&text);
    let main = flow(&f, "f");
    assert_eq!(main.bytes_delivered, 2_000_000, "transfer completes");
    main.retransmitted_segments
}

#[test]
fn paced_initial_window_fits_the_queue_a_burst_overflows() {
    // last-link-heuristics.txt §3.2 with our pacing (docs/DECISIONS.md): the simulator host
    // honours the engine's pacing deadlines, so the paced window never fills the queue.
    assert_eq!(initial_tuning_retransmissions(false), 0);
    let burst = initial_tuning_retransmissions(true);
    assert!(burst > 20, "back-to-back window lost only {burst} segments");
}

/// The PER heuristic's PLR over the whole connection, or over its last 500 transmissions
/// (`plr_window`), on a lossy 5 Mb/s link whose 20-packet queue the first slow start
/// overshoots: the flow's (recoveries, losses excused as wireless).
fn per_heuristic_losses(plr_window: u32) -> (u64, u64) {
    let link = format!("{LOSSY_LINK}\nqueue = \"20p\"");
    let table = format!(
        "sack = false\nreport_link_info = true\nlast_link = {{ per = true, plr_window = {plr_window} }}"
    );
    let r = run(&two_hosts(
        "120s",
        &link,
        "[link.forward]\nloss = 0.01",
        &tcp_flow("40MB", "newreno", &table),
    ));
    let f = flow(&r, "f");
    assert_eq!(f.integrity_errors, 0);
    (f.recoveries, f.wireless_excused)
}

#[test]
fn a_plr_window_lets_the_per_heuristic_forget_the_start_up_losses() {
    let (whole_recoveries, whole_excused) = per_heuristic_losses(0);
    let (recent_recoveries, recent_excused) = per_heuristic_losses(500);
    assert!(whole_recoveries > 0 && recent_recoveries > 0);
    // Over the whole connection the overshoot's retransmissions keep PLR above the PER for
    // long; over the last 500 transmissions they are soon forgotten.
    assert!(
        recent_excused * whole_recoveries > 2 * whole_excused * recent_recoveries,
        "excused {whole_excused}/{whole_recoveries} (whole) vs {recent_excused}/{recent_recoveries} (recent)"
    );
}

#[test]
fn flow_results_count_recoveries_and_losses_excused_as_wireless() {
    for eln in [false, true] {
        let f = eln_flow(eln, false);
        assert!(
            f.recoveries > 0,
            "eln={eln}: losses at 2 % start recoveries"
        );
        if eln {
            assert!(f.wireless_excused > 0, "ELN marks excuse wireless losses");
        } else {
            assert_eq!(f.wireless_excused, 0, "nothing excuses a loss without ELN");
        }
    }
}
