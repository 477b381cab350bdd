//! `roam emu` as a user runs it: the wrapped command's status is roam's, everything it made is
//! gone afterwards (also after a failing command and after Ctrl-C), and a namespace that
//! already exists is refused with a clear error. Root only: elsewhere each test says why it
//! skipped and passes. Namespaces are `rn<digits>-…`, removed by a guard also on failure.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

const ROAM: &str = env!("CARGO_BIN_EXE_roam");

fn next() -> u32 {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A links file and namespace names for one test; the namespaces are deleted on drop.
struct Case {
    dir: tempfile::TempDir,
    names: Vec<String>,
}

impl Case {
    /// A fresh case, or `None` (saying why the test is skipped) where the emulator cannot run.
    fn new() -> Option<Case> {
        if let Err(why) = roam_emu::check_allowed() {
            eprintln!("skipped: {why}");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("links.toml"),
            "[[link]]\nname = \"p\"\nrate = \"10Mbps\"\ndelay = \"5ms\"\n",
        )
        .unwrap();
        Some(Case {
            dir,
            names: Vec::new(),
        })
    }

    /// `roam emu <the links file> ARGS`.
    fn emu(&self, args: &[&str]) -> Command {
        let mut c = Command::new(ROAM);
        c.arg("emu").arg(self.file()).args(args);
        c
    }

    fn file(&self) -> PathBuf {
        self.dir.path().join("links.toml")
    }

    /// A fresh name, removed on drop whoever made it.
    fn name(&mut self, what: &str) -> String {
        let n = format!("rn{}{}-{what}", std::process::id() % 100_000, next());
        self.names.push(n.clone());
        n
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip")
                .args(["netns", "del", n])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn exists(ns: &str) -> bool {
    std::path::Path::new("/run/netns").join(ns).exists()
}

/// Outer namespace for the tests: made here (the emulator joins it).
fn outer(case: &mut Case) -> String {
    let n = case.name("out");
    assert!(Command::new("ip")
        .args(["netns", "add", &n])
        .status()
        .unwrap()
        .success());
    n
}

#[test]
fn the_commands_status_is_returned_and_everything_is_removed() {
    let Some(mut case) = Case::new() else {
        return;
    };
    let out = outer(&mut case);
    let inner = case.name("emu");
    // The command sees the link: its peer answers through it (ping is not installed
    // everywhere; the outer address is reachable when its route is there).
    let st = case
        .emu(&["--netns", &inner, "--outer-netns", &out, "--"])
        .args([
            "sh",
            "-c",
            "ip route get \"$ROAM_EMU_PEER\" | grep -q re && exit 7",
        ])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(7));
    assert!(!exists(&inner), "the command's namespace is removed");
    // A failing command: roam emu fails with it and still cleans up.
    let st = case
        .emu(&["--netns", &inner, "--outer-netns", &out, "--", "false"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(1));
    assert!(!exists(&inner));
}

#[test]
fn an_existing_namespace_is_refused() {
    let Some(mut case) = Case::new() else {
        return;
    };
    let taken = outer(&mut case);
    let out = case
        .emu(&["--netns", &taken, "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already exists"), "{err}");
    assert!(exists(&taken), "a namespace it did not make is left alone");
}

#[test]
fn ctrl_c_stops_the_command_and_removes_everything() {
    let Some(mut case) = Case::new() else {
        return;
    };
    let out = outer(&mut case);
    let inner = case.name("emu");
    let mut child = case
        .emu(&[
            "--netns",
            &inner,
            "--outer-netns",
            &out,
            "--",
            "sleep",
            "30",
        ])
        .spawn()
        .unwrap();
    // Wait (bounded) until the namespace is up, then interrupt roam alone.
    for _ in 0..200 {
        if exists(&inner) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let mut status = None;
    for _ in 0..500 {
        if let Some(st) = child.try_wait().unwrap() {
            status = Some(st);
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let Some(st) = status else {
        let _ = child.kill();
        panic!("roam emu did not stop within 5 s of SIGINT");
    };
    assert_eq!(st.code(), Some(130));
    assert!(!exists(&inner));
}
