//! What the `roam` CLI's integration tests share: the binary, a guard that kills a child
//! process on drop, a `roam serve` on a free loopback port, test data, and the namespace test
//! bed ([`netns`]). Each test file is its own crate and uses only part of this, hence the
//! `dead_code` allowance.
#![allow(dead_code)]

pub mod netns;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The `roam` binary under test.
pub const ROAM: &str = env!("CARGO_BIN_EXE_roam");

/// A child process, killed (and reaped) on drop, also when a test fails.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `len` pseudo-random bytes (xorshift): no two offsets of a file look alike, so a misplaced
/// range cannot pass for the right one.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A temporary folder whose `srv` folder holds one file, `name`, of `bytes`; returns the
/// folder and the `srv` path (to serve).
pub fn srv_with(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let srv = dir.path().join("srv");
    std::fs::create_dir(&srv).unwrap();
    std::fs::write(srv.join(name), bytes).unwrap();
    (dir, srv)
}

/// Serves `dir` on a free loopback port; returns the guard and the address it listens on.
pub fn serve(dir: &Path) -> (Guard, String) {
    serve_with(Command::new(ROAM), dir)
}

/// As [`serve`], run by `command` (the `roam` binary itself, or a wrapper such as `setpriv …`
/// whose arguments end with it).
pub fn serve_with(mut command: Command, dir: &Path) -> (Guard, String) {
    let mut child = command
        .arg("serve")
        .arg(dir)
        .args(["--listen", "127.0.0.1:0", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).expect("one JSON line");
    let addr = v["listening"][0].as_str().expect("an address").to_string();
    (Guard(child), addr)
}

/// Runs `command` (its stderr piped) until it exits, polling every `tick` at most `ticks`
/// times; it must fail. Returns its stderr and a lower bound of how long it ran (ticks
/// counted). `what` names the run in the assertion messages.
pub fn run_to_failure(
    command: &mut Command,
    tick: std::time::Duration,
    ticks: u32,
    what: &str,
) -> (String, f64) {
    let mut child = Guard(command.spawn().unwrap());
    let mut n = 0u32;
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            assert!(!status.success(), "{what}: succeeded");
            break;
        }
        assert!(n < ticks, "{what}: still running after {:?}", tick * ticks);
        std::thread::sleep(tick);
        n += 1;
    }
    let mut err = String::new();
    if let Some(mut e) = child.0.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
    }
    (err, f64::from(n) * tick.as_secs_f64())
}
