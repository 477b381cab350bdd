//! What `roam get` says when a server cannot give it the object (issue 28, item 12), against
//! real `roam serve` processes on loopback: a missing object is reported as missing at once
//! by every engine, also with two mirrors (before: about 8 s and "no progress" over R²CP); a
//! directory and a file the server may not read are reported as such, not as "no such
//! object". Every wait is bounded; servers are killed by guards, also on failure.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{Guard, ROAM};

/// Serves `dir` on a free loopback port, run by `prefix` (e.g. `setpriv …`) if given.
fn serve(dir: &Path, prefix: &[&str]) -> (Guard, String) {
    let command = match prefix.split_first() {
        Some((cmd, args)) => {
            let mut c = Command::new(cmd);
            c.args(args).arg(ROAM);
            c
        }
        None => Command::new(ROAM),
    };
    common::serve_with(command, dir)
}

/// Runs `roam get NAME` from `servers` with `extra`; it must fail. Returns its stderr and a
/// lower bound of how long it ran (counted 20 ms sleeps; bounded at 60 s).
fn get_fails(name: &str, servers: &[&str], extra: &[&str], out: &Path) -> (String, f64) {
    let mut c = Command::new(ROAM);
    c.args(["get", name, "-q", "-o"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for s in servers {
        c.args(["--server", s]);
    }
    let (err, secs) = common::run_to_failure(
        &mut c,
        Duration::from_millis(20),
        3000,
        &format!("{name}: roam get"),
    );
    assert!(!out.exists(), "{name}: no output on failure");
    (err, secs)
}

/// The engines: single-path RCP (first server), R²CP (both), TCP-like (first).
fn engines<'a>(
    a: &'a str,
    b: &'a str,
) -> [(&'static str, Vec<&'a str>, &'static [&'static str]); 3] {
    [
        ("rcp", vec![a], &[]),
        ("r2cp", vec![a, b], &[]),
        ("tcp", vec![a], &["--protocol", "tcp"]),
    ]
}

#[test]
fn a_missing_object_is_reported_at_once_by_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (_a, a) = serve(dir.path(), &[]);
    let (_b, b) = serve(dir.path(), &[]);
    for (engine, servers, extra) in engines(&a, &b) {
        let out = dir.path().join(format!("out-{engine}"));
        let (err, secs) = get_fails("absent", &servers, extra, &out);
        assert!(err.contains("no such object"), "{engine}: {err}");
        assert!(secs < 3.0, "{engine}: took {secs:.1} s to say so: {err}");
    }
}

#[test]
fn a_directory_is_reported_as_not_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let srv = dir.path().join("srv");
    std::fs::create_dir_all(srv.join("d")).unwrap();
    let (_a, a) = serve(&srv, &[]);
    let (_b, b) = serve(&srv, &[]);
    for (engine, servers, extra) in engines(&a, &b) {
        let out = dir.path().join(format!("out-{engine}"));
        let (err, _) = get_fails("d", &servers, extra, &out);
        assert!(err.contains("not a regular file"), "{engine}: {err}");
    }
}

#[test]
fn a_file_the_server_may_not_read_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let srv = dir.path().join("srv");
    std::fs::create_dir(&srv).unwrap();
    std::fs::write(srv.join("secret"), b"x").unwrap();
    std::fs::set_permissions(srv.join("secret"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads any file: run the server as nobody where that is possible.
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let prefix: &[&str] = if root {
        let setpriv = Command::new("setpriv")
            .arg("--help")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !setpriv {
            eprintln!("skipped: running as root without setpriv (root reads any file)");
            return;
        }
        for p in [dir.path(), srv.as_path()] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
    } else {
        &[]
    };
    let (_a, a) = serve(&srv, prefix);
    let (_b, b) = serve(&srv, prefix);
    for (engine, servers, extra) in engines(&a, &b) {
        let out = dir.path().join(format!("out-{engine}"));
        let (err, _) = get_fails("secret", &servers, extra, &out);
        assert!(err.contains("may not read"), "{engine}: {err}");
    }
}
