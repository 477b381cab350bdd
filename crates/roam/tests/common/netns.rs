//! The network-namespace test bed of `scripts/netns.sh` as the CLI's tests drive it: whether
//! it can run here, a bed (its namespaces and the processes in them, all removed on drop, also
//! when a test fails), `roam serve` and `roam get` inside it, and bounded waits.
//!
//! The bed: `<prefix>-m` (the mobile host; interfaces `<prefix>a` via 10.77.1.2 and
//! `<prefix>b` via 10.77.2.2), `<prefix>-r` (the router) and `<prefix>-s1`, `<prefix>-s2`
//! (servers at 10.77.3.2 and 10.77.4.2); `<prefix>` is `rn<digits>`, as CI expects.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use super::{Guard, ROAM};

/// `scripts/netns.sh`.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns.sh")
}

/// Why the bed cannot run here, if it cannot: not root, or `ip netns add` fails.
pub fn unavailable() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root".into());
    }
    // One name per call: tests run in parallel, and one's `del` must not remove another's.
    static PROBES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("rn{}-probe{n}", std::process::id());
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    (!ok).then(|| "`ip netns add` failed (no iproute2 or no namespace support)".into())
}

/// The address `roam serve` listens on in server namespace `s` (1 or 2).
pub fn server_addr(s: u8) -> String {
    format!("10.77.{}.2:7000", s + 2)
}

/// A bed: its namespaces and the processes in them, all removed on drop; and a temporary
/// folder (served files, downloads).
pub struct Bed {
    /// `rn<digits>`: every namespace's name starts with it.
    pub prefix: String,
    /// Processes run in the bed, killed on drop (before the namespaces go).
    pub children: Vec<Guard>,
    /// The test's folder.
    pub dir: tempfile::TempDir,
}

impl Bed {
    /// A fresh bed, or `None` (with a message saying why the test is skipped) where it cannot
    /// run. `tag` tells the beds of one test binary apart; `rate` (e.g. `20mbit`, or empty for
    /// none) shapes the mobile host's two links.
    pub fn up(tag: u32, rate: &str) -> Option<Bed> {
        if let Some(why) = unavailable() {
            eprintln!("skipped: the namespace test bed needs root and ip netns ({why})");
            return None;
        }
        let bed = Bed {
            prefix: format!("rn{}{tag}", std::process::id() % 10_000),
            children: Vec::new(),
            dir: tempfile::tempdir().unwrap(),
        };
        bed.script(&["up", &bed.prefix, rate]);
        Some(bed)
    }

    /// Runs `scripts/netns.sh ARGS`; it must succeed.
    fn script(&self, args: &[&str]) {
        let st = Command::new("bash")
            .arg(script())
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "netns.sh {args:?} failed");
    }

    /// The full name of the bed's namespace `name` (`m`, `r`, `s1`, `s2`).
    pub fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// `<dir>/srv/f` holding `data`, the file [`Bed::serve`] serves.
    pub fn with_file(self, data: &[u8]) -> Bed {
        let srv = self.dir.path().join("srv");
        std::fs::create_dir_all(&srv).unwrap();
        std::fs::write(srv.join("f"), data).unwrap();
        self
    }

    /// Starts `roam serve <dir>/srv` in server namespace `s` (1 or 2); returns its index in
    /// `children`.
    pub fn serve(&mut self, s: u8) -> usize {
        let srv = self.dir.path().join("srv");
        self.serve_dir(s, &srv)
    }

    /// Starts `roam serve DIR` in server namespace `s` (1 or 2); returns its index in
    /// `children`.
    pub fn serve_dir(&mut self, s: u8, dir: &Path) -> usize {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns(&format!("s{s}")), ROAM, "serve"])
            .arg(dir)
            .args(["--listen", &server_addr(s)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.children.push(Guard(child));
        self.children.len() - 1
    }

    /// Starts `roam get ARGS -o OUT --format json --quiet` in the mobile host's namespace.
    pub fn get(&self, args: &[&str], out: &Path) -> Child {
        Command::new("ip")
            .args(["netns", "exec", &self.ns("m"), ROAM, "get"])
            .args(args)
            .arg("-o")
            .arg(out)
            .args(["--format", "json", "--quiet"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// A tbf rate on one link (`scripts/netns.sh shape`): a, b (router → mobile), s1, s2
    /// (server → router).
    pub fn shape(&self, link: &str, rate: &str) {
        self.shape_with_queue(link, rate, "");
    }

    /// [`Bed::shape`] with a tbf queue of `limit` bytes (e.g. `750kb`: a deep buffer).
    pub fn shape_with_queue(&self, link: &str, rate: &str, limit: &str) {
        self.script(&["shape", &self.prefix, link, rate, limit]);
    }

    /// Runs `ip ARGS`; it must succeed.
    pub fn ip(&self, args: &[&str]) {
        let st = Command::new("ip").args(args).status().unwrap();
        assert!(st.success(), "ip {args:?}");
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        self.children.clear();
        let _ = Command::new("bash")
            .arg(script())
            .args(["down", &self.prefix])
            .status();
    }
}

/// Waits (bounded: 30 s) until `path` holds at least `n` bytes.
pub fn wait_for_size(path: &Path, n: u64) {
    for _ in 0..3000 {
        if std::fs::metadata(path).is_ok_and(|m| m.len() >= n) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never reached {n} bytes", path.display());
}

/// Waits (bounded by `limit`, polled every 50 ms) for `child` to exit and returns its output;
/// past the limit it is killed and the test fails, naming `what`.
pub fn output_within(child: Child, limit: Duration, what: &str) -> Output {
    let mut child = Guard(child);
    let tick = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while child.0.try_wait().unwrap().is_none() {
        assert!(waited < limit, "{what} did not finish within {limit:?}");
        std::thread::sleep(tick);
        waited += tick;
    }
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    if let Some(mut o) = child.0.stdout.take() {
        std::io::Read::read_to_end(&mut o, &mut stdout).unwrap();
    }
    if let Some(mut e) = child.0.stderr.take() {
        std::io::Read::read_to_end(&mut e, &mut stderr).unwrap();
    }
    let status = child.0.wait().unwrap();
    Output {
        status,
        stdout,
        stderr,
    }
}
