//! The metadata is asked of every mirror at once (issue 28): a mirror that does not answer
//! delays no other mirror's answer, and once a strict majority of all the mirrors agree the
//! download goes on without waiting for it. Before, the mirrors were asked one after another,
//! so a silent first mirror cost two stalls before the next was even asked. Against real
//! `roam serve` processes on loopback and a UDP socket that never answers. Every wait is
//! bounded; servers are killed by guards, also on failure.

use std::net::UdpSocket;
use std::process::{Command, Output};
use std::time::Duration;

mod common;
use common::{serve, ROAM};

/// The stall given to `roam get`: a silent mirror costs two of them when waited for.
const STALL: f64 = 3.0;

/// Runs `roam get f` from `servers` (JSON summary); returns its output and wall time.
fn get(servers: &[&str], out: &std::path::Path) -> (Output, Duration) {
    let mut c = Command::new(ROAM);
    c.args([
        "get",
        "f",
        "-q",
        "--format",
        "json",
        "--stall",
        &STALL.to_string(),
    ])
    .arg("-o")
    .arg(out);
    for s in servers {
        c.args(["--server", s]);
    }
    let started = roam_net::Clock::wall();
    let o = c.output().unwrap();
    (o, started.elapsed())
}

#[test]
fn a_silent_mirror_does_not_hold_the_others_metadata_back() {
    let good = common::pattern(1 << 20);
    let (dir, srv) = common::srv_with("f", &good);
    let bad_dir = dir.path().join("bad");
    std::fs::create_dir(&bad_dir).unwrap();
    let mut bad = good.clone();
    bad[700_000] ^= 1;
    std::fs::write(bad_dir.join("f"), &bad).unwrap();
    let (_a, a) = serve(&srv);
    let (_b, b) = serve(&srv);
    let (_l, liar) = serve(&bad_dir);
    // A mirror that never answers: a bound socket nobody reads.
    let silent_socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent = silent_socket.local_addr().unwrap().to_string();

    // Silent first, then two that agree: a strict majority of the three, settled at once.
    let out = dir.path().join("o1");
    let (o, took) = get(&[&silent, &a, &b], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == good, "content differs");
    // Asked in turn, the silent mirror alone costs two stalls (2 x 3 s) before the next is
    // asked; asked at once, the download is done well before one stall.
    assert!(
        took.as_secs_f64() < STALL,
        "took {took:?}: the silent mirror held the others back"
    );

    // Silent, one honest, one liar: no majority of the three without the silent one, so its
    // answer is waited for (it gives up); then a tie, which is refused with both sides named.
    let out = dir.path().join("o2");
    let (o, _) = get(&[&silent, &a, &liar], &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a tie must not pick a side");
    assert!(
        err.contains("disagree") && err.contains(&a) && err.contains(&liar),
        "{err}"
    );
    assert!(!out.exists());
    drop(silent_socket);
}
