//! What the loopback test files share: test data, local addresses, a served directory.
//! (Each test file compiles this module on its own and uses only part of it.)
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;

use roam_net::{LocalSpec, NetError, Server};

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
