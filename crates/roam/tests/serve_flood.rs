//! One host cannot lock every other out of a real `roam serve` (issue 28, item 4): a flood of
//! address-validated RCP connections from 70 source ports of 127.0.0.1 (64 each, 4 480 in
//! all: more than the server's 4 096-connection table), left idle once accepted as an attacker
//! would, and then a download from another host (127.0.0.2) must still complete. The flood is
//! bounded in time (a few seconds) and in count; the server is killed by a guard.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use roam_net::engines::rcp_config;
use roam_net::{Driver, LocalSpec, NetConn};
use roam_proto::endpoint::{EndpointConfig, Handle, NoAcceptor, PathAddrs, PathId};
use roam_proto::rcp::{RcpCc, RcpReceiver};
use roam_wire::ConnId;

mod common;
use common::{Guard, ROAM};

/// Source ports of the flooding host, and connections from each (the server's per-address
/// cap before issue 28).
const PORTS: usize = 70;
const PER_PORT: usize = 64;

/// How long the flood runs.
const FLOOD_FOR: Duration = Duration::from_secs(4);

/// Serves `dir` on a free loopback port.
fn serve(dir: &std::path::Path) -> (Guard, SocketAddr) {
    let (guard, addr) = common::serve(dir);
    (guard, addr.parse().unwrap())
}

/// Opens `PORTS × PER_PORT` RCP connections from 127.0.0.1 to `server` for a large generated
/// object, drops each silently once its first bytes show that the server accepted it, and
/// returns how many were accepted.
fn flood(server: SocketAddr) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let locals: Vec<LocalSpec> = (0..PORTS)
            .map(|_| LocalSpec::addr("127.0.0.1:0".parse().unwrap()))
            .collect();
        let config = EndpointConfig {
            max_connections: 2 * PORTS * PER_PORT,
            max_memory: usize::MAX,
            ..EndpointConfig::default()
        };
        let mut d = Driver::bind(&locals, config, NoAcceptor::default()).unwrap();
        let rcp = Arc::new(rcp_config());
        let mut open: Vec<Handle> = Vec::new();
        for (local, n) in (0..PORTS).flat_map(|l| (0..PER_PORT).map(move |n| (l, n))) {
            let now = d.now();
            let r = RcpReceiver::connect(
                rcp.clone(),
                RcpCc::default(),
                ConnId(((local as u64) << 32) | n as u64 | 1 << 63),
                b".roam-perf/1099511627776",
                (0, 1 << 40),
                now,
            )
            .unwrap();
            let path = PathAddrs {
                path: PathId::PRIMARY,
                local,
                remote: server,
            };
            let h = d
                .endpoint()
                .insert(now, NetConn::RcpReceiver(Box::new(r)), &[path])
                .unwrap();
            open.push(h);
        }
        let started = roam_net::Clock::wall();
        let mut accepted = 0;
        let mut buf = Vec::new();
        while started.elapsed() < FLOOD_FOR && !open.is_empty() {
            d.step(Duration::from_millis(20)).await;
            let ep = d.endpoint();
            open.retain(|&h| {
                let Some(NetConn::RcpReceiver(r)) = ep.connection_mut(h) else {
                    return false;
                };
                buf.clear();
                if r.read(&mut buf, usize::MAX) == 0 {
                    return true;
                }
                // Accepted: go silent (the server holds it until its idle expiry).
                accepted += 1;
                let _ = ep.remove(h);
                false
            });
        }
        accepted
    })
}

#[test]
fn a_flood_from_many_ports_of_one_host_leaves_room_for_another_host() {
    let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
    let (dir, srv) = common::srv_with("f", &bytes);
    let (_server, addr) = serve(&srv);

    let accepted = flood(addr);
    eprintln!(
        "flood: {accepted} of {} connections accepted",
        PORTS * PER_PORT
    );
    assert!(accepted >= 1, "the flood never reached the server");

    let out = dir.path().join("copy");
    let o = Command::new(ROAM)
        .args([
            "get",
            "f",
            "--server",
            &addr.to_string(),
            "--via",
            "127.0.0.2",
        ])
        .args(["-q", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "another host was locked out after {accepted} flood connections: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::read(&out).unwrap() == bytes);
}
