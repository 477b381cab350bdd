//! A `roam emu` or `roam testbed` that is killed leaves nothing behind for long: with SIGTERM
//! it removes everything before it exits; with SIGKILL the processes it ran inside its
//! namespaces die with it (PR_SET_PDEATHSIG), its TUN devices vanish with its descriptors,
//! and the next run removes the namespaces (`rn<PID>-emu…`, the killed process's id).
//! Root only: elsewhere each test says why it skipped and passes. Every namespace a test
//! waits for is deleted by a guard also when the test fails. Loops are bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ROAM: &str = env!("CARGO_BIN_EXE_roam");

/// One test at a time: the next run of one test would otherwise remove what another's killed
/// run left before that test looks.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the serial lock for one test, or `None` (saying why) where the emulator cannot run.
fn one_at_a_time() -> Option<std::sync::MutexGuard<'static, ()>> {
    if let Err(why) = roam_emu::check_allowed() {
        eprintln!("skipped: {why}");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Namespaces deleted on drop (whoever made them), and a child killed on drop.
struct Guard {
    names: Vec<String>,
    child: Option<Child>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for n in &self.names {
            for pid in pids_in(n) {
                signal("KILL", pid);
            }
            let _ = Command::new("ip")
                .args(["netns", "del", n])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn exists(ns: &str) -> bool {
    Path::new("/run/netns").join(ns).exists()
}

fn pids_in(ns: &str) -> Vec<u32> {
    let out = Command::new("ip")
        .args(["netns", "pids", ns])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Running and not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = &s[s.rfind(')')? + 1..];
            after.split_whitespace().next().map(|st| st != "Z")
        })
        .unwrap_or(false)
}

fn signal(sig: &str, pid: u32) {
    let _ = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Waits up to `secs` for `f`.
fn wait_for(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let t0 = roam_emu::wire::monotonic();
    while t0.elapsed() < Duration::from_secs(secs) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// TUN devices of process `pid`'s emulations in this namespace (`re<PID % 100000>x…`).
fn tun_devices_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["-o", "link"]).output().unwrap();
    let prefix = format!("re{}x", pid % 100_000);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

fn links_file(dir: &Path) -> PathBuf {
    let f = dir.join("links.toml");
    std::fs::write(
        &f,
        "[[link]]\nname = \"p\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\n",
    )
    .unwrap();
    f
}

/// Starts `roam ARGS`, waits until namespace `ns(pid)` exists with processes inside; returns
/// the guard (holding the child) and those processes.
fn start(args: &[&std::ffi::OsStr], ns: impl Fn(u32) -> Vec<String>) -> (Guard, Vec<u32>, u32) {
    let child = Command::new(ROAM)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let names = ns(pid);
    let mut g = Guard {
        names: names.clone(),
        child: Some(child),
    };
    let mut inside = Vec::new();
    let up = wait_for(30, || {
        inside = names.iter().flat_map(|n| pids_in(n)).collect();
        names.iter().all(|n| exists(n)) && !inside.is_empty()
    });
    if !up {
        let mut c = g.child.take().unwrap();
        let _ = c.kill();
        let out = c.wait_with_output().unwrap();
        panic!(
            "{names:?} never appeared with processes inside: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (g, inside, pid)
}

/// The next run: `roam emu` wrapping `true`; returns its error output.
fn next_run(dir: &Path) -> String {
    let out = Command::new(ROAM)
        .arg("emu")
        .arg(links_file(dir))
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

fn emu_args(dir: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "emu".into(),
        links_file(dir).into(),
        "--".into(),
        "sleep".into(),
        "60".into(),
    ]
}

fn as_os(v: &[std::ffi::OsString]) -> Vec<&std::ffi::OsStr> {
    v.iter().map(|s| s.as_os_str()).collect()
}

/// `roam ARGS` (`args(dir)`, `dir` the test's folder), killed with SIGKILL once its namespaces
/// (`ns(pid)`) hold processes: those die with it (the wrapped command, or the test bed's
/// server and client), its TUN devices go with its descriptors, and the namespaces (left:
/// SIGKILL gives no chance) are removed by the next run (or another roam starting meanwhile).
fn assert_sigkill_leaves_nothing_the_next_run_does_not_remove(
    args: fn(&Path) -> Vec<std::ffi::OsString>,
    ns: impl Fn(u32) -> Vec<String>,
) {
    let Some(_one) = one_at_a_time() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut g, inside, pid) = start(&as_os(&args(dir.path())), ns);
    let mut c = g.child.take().unwrap();
    c.kill().unwrap();
    let _ = c.wait();
    assert!(
        wait_for(5, || inside.iter().all(|p| !alive(*p))),
        "still running in {:?}: {inside:?}",
        g.names
    );
    assert_eq!(tun_devices_of(pid), Vec::<String>::new());
    let err = next_run(dir.path());
    for ns in &g.names {
        assert!(
            wait_for(10, || !exists(ns)),
            "{ns} still there after the next run: {err}"
        );
    }
}

/// After a stopped run: its processes `inside` are gone, and so are its TUN devices.
fn assert_processes_and_devices_gone(inside: &[u32], pid: u32) {
    assert!(
        wait_for(5, || inside.iter().all(|p| !alive(*p))),
        "{inside:?}"
    );
    assert_eq!(tun_devices_of(pid), Vec::<String>::new());
}

#[test]
fn emu_killed_with_sigkill_leaves_nothing_the_next_run_does_not_remove() {
    assert_sigkill_leaves_nothing_the_next_run_does_not_remove(emu_args, |p| {
        vec![format!("rn{p}-emu")]
    });
}

#[test]
fn emu_stopped_with_sigterm_removes_everything_itself() {
    let Some(_one) = one_at_a_time() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = emu_args(dir.path());
    let (mut g, inside, pid) = start(&as_os(&args), |p| vec![format!("rn{p}-emu")]);
    signal("TERM", pid);
    let mut c = g.child.take().unwrap();
    assert!(
        wait_for(20, || c.try_wait().unwrap().is_some()),
        "roam emu did not stop"
    );
    // Removed by roam itself before it exits (the tests here run one at a time, so no other
    // roam sweeps it); the wait covers a loaded machine's slow `ip netns del`.
    assert!(
        wait_for(5, || !exists(&g.names[0])),
        "{} still there after roam emu stopped",
        g.names[0]
    );
    assert_processes_and_devices_gone(&inside, pid);
}

fn testbed_args(out: &Path) -> Vec<std::ffi::OsString> {
    vec![
        "testbed".into(),
        "--quick".into(),
        "--modes".into(),
        "roam-b".into(),
        "--timeout".into(),
        "60".into(),
        "--out".into(),
        out.into(),
        repo().join("experiments/testbed/static-8-2.toml").into(),
    ]
}

/// The test bed's first emulation: its mobile host's and server's namespaces.
fn testbed_ns(pid: u32) -> Vec<String> {
    vec![format!("rn{pid}-emu0m"), format!("rn{pid}-emu0s")]
}

#[test]
fn testbed_killed_with_sigkill_leaves_nothing_the_next_run_does_not_remove() {
    assert_sigkill_leaves_nothing_the_next_run_does_not_remove(testbed_args, testbed_ns);
}

#[test]
fn testbed_stopped_with_sigterm_removes_everything_and_fails() {
    let Some(_one) = one_at_a_time() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = testbed_args(dir.path());
    let (mut g, inside, pid) = start(&as_os(&args), testbed_ns);
    signal("TERM", pid);
    let c = g.child.take().unwrap();
    let t0 = roam_emu::wire::monotonic();
    let out = c.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    for ns in &g.names {
        assert!(!exists(ns), "{ns}: {err}");
    }
    assert_processes_and_devices_gone(&inside, pid);
}
