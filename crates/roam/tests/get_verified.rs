//! Verified streaming against lying mirrors (issue 28, item 9), with real `roam serve`
//! processes: the metadata is asked of every mirror and cross-checked (a mirror that disagrees
//! with the pinned digest or with a majority is dropped and named; a tie without a pin is an
//! error naming both sides), and each group of the object is verified against the BLAKE3 tree
//! as it arrives, so a mirror whose file changes mid-transfer is found out, dropped and named,
//! and only the rest is fetched from the others — the download completes intact. The
//! mid-transfer case runs in the namespace test bed (root only; skipped with a message
//! elsewhere), shaped so the transfer lasts seconds. Every wait is bounded; processes and
//! namespaces are removed by guards, also on failure.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::{serve, Guard, ROAM};

fn data(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 29 % 253) as u8 ^ (i >> 13) as u8)
        .collect()
}

/// `data` with every byte from `from` on changed.
fn corrupted(data: &[u8], from: usize) -> Vec<u8> {
    let mut bad = data.to_vec();
    for b in &mut bad[from..] {
        *b ^= 0x5a;
    }
    bad
}

/// Runs `roam get f` (JSON summary) from `servers` with `extra`, bounded by `timeout`.
fn get(servers: &[&str], extra: &[&str], out: &Path) -> Output {
    let mut c = Command::new(ROAM);
    c.args(["get", "f", "-q", "--format", "json", "-o"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for s in servers {
        c.args(["--server", s]);
    }
    c.output().unwrap()
}

/// The servers a summary says were dropped, with why.
fn dropped(o: &Output) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON summary");
    v["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["server"].as_str().unwrap().to_string(),
                d["why"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn metadata_is_cross_checked_between_mirrors() {
    let dir = tempfile::tempdir().unwrap();
    let (good_dir, bad_dir) = (dir.path().join("good"), dir.path().join("bad"));
    std::fs::create_dir(&good_dir).unwrap();
    std::fs::create_dir(&bad_dir).unwrap();
    let good = data(1 << 20);
    std::fs::write(good_dir.join("f"), &good).unwrap();
    std::fs::write(bad_dir.join("f"), corrupted(&good, 700_000)).unwrap();
    let (_a, a) = serve(&good_dir);
    let (_a2, a2) = serve(&good_dir);
    let (_b, b) = serve(&bad_dir);

    // Two mirrors that disagree, no pin: nobody can tell which is right.
    let out = dir.path().join("o1");
    let o = get(&[&b, &a], &[], &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "a tie must not pick a side");
    assert!(
        err.contains("disagree") && err.contains(&a) && err.contains(&b),
        "{err}"
    );
    assert!(!out.exists());

    // With the published digest pinned, the lying mirror is dropped, the other serves.
    let pin = blake3::hash(&good).to_hex().to_string();
    let out = dir.path().join("o2");
    let o = get(&[&b, &a], &["--blake3", &pin], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == good, "content differs");
    let d = dropped(&o);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, b);
    assert!(d[0].1.contains("metadata"), "{d:?}");

    // Without a pin, the majority of three decides.
    let out = dir.path().join("o3");
    let o = get(&[&b, &a, &a2], &[], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == good, "content differs");
    assert_eq!(dropped(&o).first().map(|d| d.0.clone()), Some(b.clone()));
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns.sh")
}

/// Why the namespace bed cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root".into());
    }
    let probe = format!("rn{}vprobe", std::process::id() % 10_000);
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    (!ok).then(|| "`ip netns add` failed".into())
}

/// The namespaces and the processes in them; all removed on drop.
struct Bed {
    prefix: String,
    children: Vec<Guard>,
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

#[test]
fn a_mirror_whose_file_changes_mid_transfer_is_found_out_and_dropped() {
    if let Some(why) = unavailable() {
        eprintln!("skipped: the namespace test bed needs root and ip netns ({why})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut bed = Bed {
        prefix: format!("rn{}4", std::process::id() % 10_000),
        children: Vec::new(),
    };
    let up = |args: &[&str]| {
        let st = Command::new("bash")
            .arg(script())
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "netns.sh {args:?} failed");
    };
    up(&["up", &bed.prefix]);
    // Each mirror's own link at 8 Mb/s: 8 MiB take seconds.
    up(&["shape", &bed.prefix, "s1", "8mbit"]);
    up(&["shape", &bed.prefix, "s2", "8mbit"]);
    let good = data(8 << 20);
    let mirror = |n: u8| {
        let d = dir.path().join(format!("srv{n}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("f"), &good).unwrap();
        d
    };
    let ns = |n: &str| format!("{}-{n}", bed.prefix);
    let srv2 = mirror(2);
    for (n, d) in [(1u8, mirror(1)), (2, srv2.clone())] {
        let child = Command::new("ip")
            .args(["netns", "exec", &ns(&format!("s{n}")), ROAM, "serve"])
            .arg(&d)
            .args(["--listen", &format!("10.77.{}.2:7000", n + 2)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        bed.children.push(Guard(child));
    }
    std::thread::sleep(Duration::from_millis(300));

    let out = dir.path().join("o");
    let get = Command::new("ip")
        .args(["netns", "exec", &ns("m"), ROAM, "get", "f"])
        .args(["--server", "10.77.3.2:7000", "--server", "10.77.4.2:7000"])
        .args(["--via", "10.77.1.2", "--quiet", "--format", "json", "-o"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let part = dir.path().join("o.roam-part");
    for _ in 0..3000 {
        if std::fs::metadata(&part).is_ok_and(|m| m.len() >= 1 << 20) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Mirror 2's file changes in place (same inode, same length) from 3 MiB on.
    let changed = corrupted(&good, 3 << 20);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(srv2.join("f"))
        .unwrap();
    f.write_all_at(&changed[3 << 20..], 3 << 20).unwrap();
    drop(f);

    let mut get = Guard(get);
    let mut done = false;
    for _ in 0..1200 {
        if get.0.try_wait().unwrap().is_some() {
            done = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(done, "roam get did not finish within 60 s");
    let mut stdout = Vec::new();
    let mut stderr = String::new();
    std::io::Read::read_to_end(&mut get.0.stdout.take().unwrap(), &mut stdout).unwrap();
    std::io::Read::read_to_string(&mut get.0.stderr.take().unwrap(), &mut stderr).unwrap();
    let status = get.0.wait().unwrap();
    assert!(status.success(), "roam get failed: {stderr}");
    assert!(std::fs::read(&out).unwrap() == good, "content differs");
    let o = Output {
        status,
        stdout,
        stderr: Vec::new(),
    };
    let d = dropped(&o);
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(d.len(), 1, "one mirror dropped: {d:?}");
    assert_eq!(d[0].0, "10.77.4.2:7000");
    assert!(d[0].1.contains("fail verification"), "{d:?}");
}
