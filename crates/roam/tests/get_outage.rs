//! `roam get` rides out an outage (issue 28, item 10) over single-path RCP, R²CP (two mirrors)
//! and the TCP-like engine: in the namespace test bed (`scripts/netns.sh`), the router's side
//! of the mobile host's link is taken down for 15 s mid-transfer — a blackhole, as in a
//! tunnel: the mobile's own interface stays up, nothing arrives — and brought back; the
//! download must complete. Before, single-path RCP gave up after 8 connections of one
//! `--stall` each, R²CP after its pipe attempts ran out, TCP after one stall per server; with
//! `--give-up-after 5` the same outage ends the download with that message. Root only (skipped with a message elsewhere); the
//! namespaces are removed by a guard, also on failure; every wait is bounded.

use std::time::Duration;

mod common;
use common::netns::{output_within, wait_for_size, Bed};
use common::pattern;

/// How long the path is dark.
const OUTAGE: Duration = Duration::from_secs(15);

/// What a download through an outage must end with.
enum Expect {
    /// Completes intact.
    Intact,
    /// Fails, with a message containing this.
    GivesUp(&'static str),
}

/// In a fresh bed (`tag` names it), serves an 8 MiB file from the given server namespaces
/// (1, 2), starts `roam get` with `args` (servers, via, engine) from the mobile host, takes
/// the router's side of the mobile link down for [`OUTAGE`] once 1 MiB has arrived, brings it
/// back, and checks the outcome, bounded at 60 s after the path is back.
fn through_an_outage(tag: u32, servers: &[u8], args: &[&str], expect: Expect) {
    let data = pattern(8 << 20);
    let Some(bed) = Bed::up(tag, "20mbit") else {
        return;
    };
    let mut bed = bed.with_file(&data);
    for &s in servers {
        bed.serve(s);
    }
    std::thread::sleep(Duration::from_millis(300));

    let out = bed.dir.path().join("o");
    let get = bed.get(
        &[&["f", "--via", "10.77.1.2", "--stall", "1"], args].concat(),
        &out,
    );
    let part = bed.dir.path().join("o.roam-part");
    wait_for_size(&part, 1 << 20);
    let (router, link) = (bed.ns("r"), format!("{}ra", bed.prefix));
    bed.ip(&["-n", &router, "link", "set", &link, "down"]);
    std::thread::sleep(OUTAGE);
    bed.ip(&["-n", &router, "link", "set", &link, "up"]);

    // Bounded: 60 s after the path is back.
    let o = output_within(
        get,
        Duration::from_secs(60),
        "roam get after the path came back",
    );
    let status = o.status;
    let err = String::from_utf8_lossy(&o.stderr);
    match expect {
        Expect::Intact => {
            assert!(status.success(), "roam get gave up: {err}");
            assert!(std::fs::read(&out).unwrap() == data, "content differs");
            eprintln!("{}", String::from_utf8_lossy(&o.stdout));
        }
        Expect::GivesUp(why) => {
            assert!(!status.success(), "roam get should have given up");
            assert!(err.contains(why), "{err}");
            assert!(!out.exists() && !part.exists(), "nothing left behind");
            eprintln!("{err}");
        }
    }
}

#[test]
fn a_single_path_get_rides_out_a_fifteen_second_outage() {
    through_an_outage(9, &[1], &["--server", "10.77.3.2:7000"], Expect::Intact);
}

#[test]
fn an_r2cp_get_from_two_mirrors_rides_out_a_fifteen_second_outage() {
    let servers = ["--server", "10.77.3.2:7000", "--server", "10.77.4.2:7000"];
    through_an_outage(8, &[1, 2], &servers, Expect::Intact);
}

#[test]
fn a_tcp_get_rides_out_a_fifteen_second_outage() {
    let args = ["--server", "10.77.3.2:7000", "--protocol", "tcp"];
    through_an_outage(7, &[1], &args, Expect::Intact);
}

#[test]
fn give_up_after_ends_an_r2cp_get_and_a_tcp_get_in_an_outage() {
    let r2cp = [
        "--server",
        "10.77.3.2:7000",
        "--server",
        "10.77.4.2:7000",
        "--give-up-after",
        "5",
    ];
    through_an_outage(6, &[1, 2], &r2cp, Expect::GivesUp("gave up after 5 s"));
    let tcp = [
        "--server",
        "10.77.3.2:7000",
        "--protocol",
        "tcp",
        "--give-up-after",
        "5",
    ];
    through_an_outage(5, &[1], &tcp, Expect::GivesUp("gave up after 5 s"));
}
