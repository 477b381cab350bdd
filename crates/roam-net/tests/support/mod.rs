//! What the loopback test files share: test data, local addresses, a served directory, a
//! server killed mid-transfer, handshakes to send, and the bound on every test.
//! (Each test file compiles this module on its own and uses only part of it.)
#![allow(dead_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roam_net::{LocalSpec, NetError, Server};
use roam_proto::cc::CcKind;
use roam_proto::{tcp, Time};
use roam_wire::ConnId;

/// The bound on every test: far above what any needs.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Runs `f`, failing the test if it takes longer than [`LIMIT`].
pub async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("the test took far longer than it needs")
}

/// `len` pseudo-random bytes (xorshift from `seed`): no two offsets of a file look alike, so a
/// misplaced range cannot pass for the right one.
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A temporary folder holding the file `name`: `len` bytes of [`pattern`] from `seed`, also
/// returned.
pub fn dir_with(name: &str, len: usize, seed: u32) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(len, seed);
    std::fs::write(dir.path().join(name), &data).unwrap();
    (dir, data)
}

/// Bytes each (local address, server) pair delivered add up to the object, `len`: nothing
/// counted twice, nothing lost.
pub fn assert_accounted(report: &roam_net::FetchReport, len: usize) {
    let delivered: u64 = report.per_path.iter().map(|p| p.2).sum();
    assert_eq!(delivered, len as u64, "{report:?}");
}

/// `ip` with port 0 (the kernel picks a free port); Linux routes all of 127/8 to `lo`.
pub fn local(ip: &str) -> SocketAddr {
    format!("{ip}:0").parse().expect("an IP address")
}

/// 127.0.0.1 with a free port.
pub fn loopback() -> SocketAddr {
    local("127.0.0.1")
}

/// Serves `dir` on 127.0.0.1 from a spawned task; the caller aborts the task to kill it.
pub fn serve(dir: &Path) -> (SocketAddr, tokio::task::JoinHandle<Result<(), NetError>>) {
    let server = Server::bind(dir, &[LocalSpec::addr(loopback())]).unwrap();
    let addr = server.local_addr(0).unwrap();
    (addr, tokio::spawn(server.run()))
}

/// A served task to kill mid-transfer: aborts `server` once the returned counter (which the
/// fetch's progress callback stores its bytes in) reaches `bytes`.
pub fn abort_at(
    bytes: u64,
    server: tokio::task::JoinHandle<Result<(), NetError>>,
) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
    let got = Arc::new(AtomicU64::new(0));
    let watcher = {
        let got = got.clone();
        tokio::spawn(async move {
            while got.load(Ordering::Relaxed) < bytes {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            server.abort();
        })
    };
    (got, watcher)
}

/// Steps `server` (serving its connections) until `client` ends; returns what it returned.
pub async fn serve_until<T>(server: &mut Server, mut client: tokio::task::JoinHandle<T>) -> T {
    loop {
        tokio::select! {
            r = &mut client => break r.unwrap(),
            _ = server.step() => server.serve_connections(),
        }
    }
}

/// The first datagram of an RCP download of object `f` (connection `conn`): its SYN.
pub fn rcp_syn(conn: u64) -> Vec<u8> {
    let mut syn = Vec::new();
    let mut r = roam_proto::rcp::RcpReceiver::connect(
        Arc::new(roam_net::engines::rcp_config()),
        Default::default(),
        ConnId(conn),
        b"f",
        (0, u64::MAX),
        Time::ZERO,
    )
    .unwrap();
    r.poll_transmit(Time::ZERO, &mut syn).unwrap();
    syn
}

/// The first datagram of a TCP-like connection `conn` with initial sequence number `isn`:
/// its SYN.
pub fn tcp_syn(conn: u64, isn: u64) -> Vec<u8> {
    let mut syn = Vec::new();
    let cfg = Arc::new(roam_net::engines::tcp_config());
    let mut c =
        tcp::Connection::connect(cfg, CcKind::NewReno, ConnId(conn), isn, Time::ZERO).unwrap();
    c.poll_transmit(Time::ZERO, &mut syn).unwrap();
    syn
}
