//! Many TCP-like gets of one server at once on a loaded machine (issue 28, item 8): twenty
//! clients, four rounds, a 20 MiB file, while two threads burn CPU — the scenario, in
//! which 6 of 80 gets failed with "nothing arrived for 3.0 s" (reproduced on its commit:
//! 6 and 11 of 80 in two runs; RCP survived). Bisected to 6a6cb24: before it a TCP-like get
//! made one connection per server and failed when it did not come up within the stall on the
//! loaded loopback; since, it retries with a backoff (this test, then with a 3 s budget, fails
//! at 5e89f6a, the commit before, with that message). Then CI failed it once more (1 of 80,
//! silent 3 s while connected): the server, holding its per-host share of 64 connections
//! for the one loopback host, displaced that host's connection quiet longest if quiet for
//! 250 ms — a live transfer waiting out an RTO backoff on the loaded machine could be it, and
//! was never heard from again. Now finished connections are displaced first and open ones
//! only after 10 s of silence (`roam_proto::endpoint`, `make_room`). Each get may stay silent
//! for at most 5 s (`--stall 3 --give-up-after 5`): a connection the server forgot went silent
//! and fails the test as it failed the user, while an RTO backoff of 0.2 + 0.4 + 0.8 + 1.6 s on
//! the loaded loopback is ridden out, as kernel TCP rides it out. Loopback only; bounded: every
//! get gives up after 5 s without a byte, the burners stop when the test ends (or after 10
//! minutes); the server is killed by a guard, also on failure.
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

mod common;
use common::{serve, ROAM};

/// Threads that spin until `stop` (or 10 minutes), as other work on the machine.
fn burn(n: usize, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..n)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let started = roam_net::Clock::wall();
                while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(600)
                {
                    std::hint::spin_loop();
                }
            })
        })
        .collect()
}

#[test]
fn twenty_concurrent_tcp_gets_on_a_loaded_machine_all_arrive() {
    let bytes = common::pattern(20 << 20);
    let (dir, srv) = common::srv_with("f", &bytes);
    let (_server, addr) = serve(&srv);
    let stop = Arc::new(AtomicBool::new(false));
    let burners = burn(2, &stop);
    let mut failed = Vec::new();
    for round in 0..4 {
        let clients: Vec<_> = (0..20)
            .map(|c| {
                let (addr, out) = (addr.clone(), dir.path().join(format!("c{c}")));
                std::thread::spawn(move || {
                    let o = Command::new(ROAM)
                        .args(["get", "f", "--server", &addr, "--protocol", "tcp"])
                        .args(["--stall", "3", "--give-up-after", "5", "-q", "-o"])
                        .arg(&out)
                        .output()
                        .unwrap();
                    (c, out, o)
                })
            })
            .collect();
        for client in clients {
            let (c, out, o) = client.join().unwrap();
            if !o.status.success() {
                let err = String::from_utf8_lossy(&o.stderr).into_owned();
                failed.push(format!("round {round} client {c}: {err}"));
            } else if std::fs::read(&out).ok().as_deref() != Some(&bytes[..]) {
                failed.push(format!("round {round} client {c}: content differs"));
            }
            let _ = std::fs::remove_file(&out);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
    assert!(
        failed.is_empty(),
        "{} of 80 failed: {failed:#?}",
        failed.len()
    );
}
