//! R²CP over loopback sockets: with more than one local address or server `fetch` runs one
//! R²CP pipe per (address, server) pair. Files arrive intact over four pipes, when one of two
//! servers is killed mid-transfer, and when a local address goes away mid-transfer and comes
//! back; a missing object fails cleanly, and so does a fetch whose every local address is down.
//! Local addresses 127.0.0.1 and 127.0.0.2 (Linux routes all of 127/8 to `lo`). Every loop is
//! bounded by a timeout far above what it needs; nothing asserts on speed.

mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use roam_net::{fetch, FetchPlan};
use support::{abort_at, assert_accounted, bounded, dir_with, local, pattern, serve};

#[tokio::test(flavor = "current_thread")]
async fn a_file_arrives_intact_over_two_addresses_and_two_servers() {
    let (dir, data) = dir_with("f", 8 << 20, 11);
    let (a, task_a) = serve(dir.path());
    let (b, task_b) = serve(dir.path());
    let out = dir.path().join("copy");
    let plan = FetchPlan::new(
        "f",
        vec![a, b],
        vec![local("127.0.0.1"), local("127.0.0.2")],
    );
    let mut max_pipes = 0;
    let report = bounded(fetch(&plan, &out, |p| {
        max_pipes = max_pipes.max(p.pipes.len())
    }))
    .await
    .unwrap();
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(!dir.path().join("copy.roam-part").exists());
    assert_eq!(report.per_path.len(), 4, "{report:?}");
    assert_eq!(max_pipes, 4);
    assert_accounted(&report, data.len());
    // Both servers and both local addresses carried data.
    for server in [a, b] {
        assert!(
            report.per_path.iter().any(|p| p.1 == server && p.2 > 0),
            "{report:?}"
        );
    }
    for ip in ["127.0.0.1", "127.0.0.2"] {
        assert!(
            report
                .per_path
                .iter()
                .any(|p| p.0.ip().to_string() == ip && p.2 > 0),
            "{report:?}"
        );
    }
    task_a.abort();
    task_b.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn killing_one_of_two_servers_mid_transfer_costs_no_restart() {
    let (dir, data) = dir_with("f", 16 << 20, 12);
    let (a, task_a) = serve(dir.path());
    let (b, task_b) = serve(dir.path());
    let (got, killer) = abort_at(2 << 20, task_a);
    let out = dir.path().join("copy");
    let mut plan = FetchPlan::new(
        "f",
        vec![a, b],
        vec![local("127.0.0.1"), local("127.0.0.2")],
    );
    plan.stall = Duration::from_millis(300);
    let report = bounded(fetch(&plan, &out, |p| {
        got.store(p.bytes, Ordering::Relaxed)
    }))
    .await
    .unwrap();
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert_accounted(&report, data.len());
    // The kill happened at 2 MB in order: the other server delivered the rest (how much the
    // dead one had delivered out of order by then depends on the machine's speed).
    assert!(killer.await.is_ok());
    let from_a: u64 = report
        .per_path
        .iter()
        .filter(|p| p.1 == a)
        .map(|p| p.2)
        .sum();
    assert!(from_a < data.len() as u64 / 2, "{report:?}");
    task_b.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_local_address_that_goes_away_mid_transfer_is_dropped_and_taken_back() {
    let (dir, data) = dir_with("f", 12 << 20, 13);
    let (a, task_a) = serve(dir.path());
    let out = dir.path().join("copy");
    let mut plan = FetchPlan::new("f", vec![a], vec![local("127.0.0.1"), local("127.0.0.2")]);
    let status = plan.status.clone();
    plan.stall = Duration::from_millis(800);
    let second: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    // Down after 2 MB, up again after 6 MB.
    let mut phase = 0;
    let mut down_while = Vec::new();
    let report = bounded(fetch(&plan, &out, |p| {
        let on_second: u64 = p
            .pipes
            .iter()
            .filter(|q| q.via.ip() == second)
            .map(|q| q.bytes)
            .sum();
        if phase == 0 && p.bytes >= 2 << 20 {
            status.set_down(second, true);
            phase = 1;
            down_while.push(on_second);
        } else if phase == 1 && p.bytes >= 6 << 20 {
            down_while.push(on_second);
            status.set_down(second, false);
            phase = 2;
        }
    }))
    .await
    .unwrap();
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert_eq!(phase, 2, "the transfer ended before the address came back");
    assert!(report.switches >= 1, "{report:?}");
    assert_accounted(&report, data.len());
    // Nothing arrived over the address while it was down (at most what was in flight
    // when it went: one window).
    let in_flight = 2 << 20;
    assert!(down_while[1] <= down_while[0] + in_flight, "{down_while:?}");
    task_a.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_missing_object_fails_cleanly_over_several_servers() {
    let dir = tempfile::tempdir().unwrap();
    let (a, task_a) = serve(dir.path());
    let (b, task_b) = serve(dir.path());
    let out = dir.path().join("none");
    let mut plan = FetchPlan::new("missing", vec![a, b], vec![local("127.0.0.1")]);
    plan.stall = Duration::from_millis(500);
    let e = bounded(fetch(&plan, &out, |_| {})).await.unwrap_err();
    assert!(e.to_string().contains("cannot fetch"), "{e}");
    assert!(!out.exists());
    assert!(!dir.path().join("none.roam-part").exists());
    task_a.abort();
    task_b.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_fetch_whose_every_local_address_is_down_gives_up_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), pattern(1 << 20, 14)).unwrap();
    let (a, task_a) = serve(dir.path());
    let out = dir.path().join("copy");
    let mut plan = FetchPlan::new("f", vec![a], vec![local("127.0.0.1"), local("127.0.0.2")]);
    plan.stall = Duration::from_millis(200);
    for ip in ["127.0.0.1", "127.0.0.2"] {
        plan.status.set_down(ip.parse().unwrap(), true);
    }
    let e = bounded(fetch(&plan, &out, |_| {})).await.unwrap_err();
    assert!(e.to_string().contains("no answer"), "{e}");
    assert!(!out.exists());
    task_a.abort();
}
