//! `roam get`'s output (`-o FILE`) against a real `roam serve` on loopback, as a careless
//! user and a hostile local user would use it (issue 28, items 1–3 and 12): the part file is
//! never followed through a symlink nor shared by two downloads, the output is replaced only
//! when it is a regular file or nothing, and a FIFO is streamed into. Every wait is bounded;
//! the server and helper processes are killed by guards, also on failure.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

mod common;
use common::{serve, Guard, ROAM};

fn data(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 7 % 256) as u8 ^ (i >> 12) as u8 ^ salt)
        .collect()
}

/// A served directory with `f` (2 MB) and `g` (2 MB, other bytes), and an output directory.
struct Bed {
    dir: tempfile::TempDir,
    f: Vec<u8>,
    g: Vec<u8>,
    _server: Guard,
    addr: String,
}

fn bed() -> Bed {
    let dir = tempfile::tempdir().unwrap();
    let srv = dir.path().join("srv");
    std::fs::create_dir(&srv).unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let (f, g) = (data(2 << 20, 0), data(2 << 20, 0x5a));
    std::fs::write(srv.join("f"), &f).unwrap();
    std::fs::write(srv.join("g"), &g).unwrap();
    let (server, addr) = serve(&srv);
    Bed {
        dir,
        f,
        g,
        _server: server,
        addr,
    }
}

impl Bed {
    fn out(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join("out").join(name)
    }

    fn get(&self, name: &str, out: &Path) -> Command {
        let mut c = Command::new(ROAM);
        c.args([
            "get", name, "--server", &self.addr, "--stall", "2", "-q", "-o",
        ])
        .arg(out);
        c
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_part_file_held_by_another_download_is_left_alone() {
    let b = bed();
    let out = b.out("same");
    let part = b.out("same.roam-part");
    // Another download holds the part file (flock(1) creates it and keeps it locked).
    let holder = Guard(
        Command::new("flock")
            .arg(&part)
            .args(["sleep", "30"])
            .spawn()
            .unwrap(),
    );
    for _ in 0..200 {
        if part.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(part.exists(), "flock(1) did not create the part file");
    let o = b.get("f", &out).output().unwrap();
    assert!(!o.status.success(), "a second download to one -o succeeded");
    assert!(stderr(&o).contains("another download"), "{}", stderr(&o));
    assert!(!out.exists(), "the loser wrote the output");
    assert_eq!(
        std::fs::metadata(&part).unwrap().len(),
        0,
        "it wrote the part file"
    );
    drop(holder);
}

#[test]
fn two_downloads_racing_to_one_output_never_mix() {
    let b = bed();
    let out = b.out("same");
    for round in 0..3 {
        let spawn = |name: &str| b.get(name, &out).stderr(Stdio::piped()).spawn().unwrap();
        let (f, g) = (spawn("f"), spawn("g"));
        let (f, g) = (f.wait_with_output().unwrap(), g.wait_with_output().unwrap());
        assert!(
            f.status.success() || g.status.success(),
            "round {round}: both failed: {} / {}",
            stderr(&f),
            stderr(&g)
        );
        for o in [&f, &g] {
            if !o.status.success() {
                assert!(stderr(o).contains("another download"), "{}", stderr(o));
            }
        }
        let got = std::fs::read(&out).unwrap();
        assert!(
            (f.status.success() && got == b.f) || (g.status.success() && got == b.g),
            "round {round}: the output is neither object whole"
        );
        assert!(!b.out("same.roam-part").exists());
        std::fs::remove_file(&out).unwrap();
    }
}

#[test]
fn a_planted_part_symlink_is_never_followed() {
    let b = bed();
    let victim = b.dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, b.out("x.roam-part")).unwrap();
    let o = b.get("f", &b.out("x")).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(!b.out("x").exists());
    let o = b.get("no-such-object", &b.out("x")).output().unwrap();
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn a_stale_part_file_is_replaced_not_reused() {
    let b = bed();
    std::fs::write(b.out("x.roam-part"), vec![0xee; 5 << 20]).unwrap();
    let o = b.get("f", &b.out("x")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(b.out("x")).unwrap() == b.f);
    assert!(!b.out("x.roam-part").exists());
}

#[test]
fn outputs_that_are_not_regular_files_are_never_replaced() {
    let b = bed();
    // A symlink to a regular file: neither replaced nor written through.
    let victim = b.dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let link = b.out("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = b.get("f", &link).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // A directory, with and without a trailing slash: refused before anything is written.
    let dir = b.out("d");
    std::fs::create_dir(&dir).unwrap();
    let slash = format!("{}/", dir.display());
    for target in [dir.clone(), slash.into()] {
        let o = b.get("f", &target).output().unwrap();
        assert!(!o.status.success());
        assert!(stderr(&o).contains("directory"), "{}", stderr(&o));
    }
    let listing: Vec<_> = std::fs::read_dir(b.out("")).unwrap().collect();
    assert_eq!(listing.len(), 2, "only `link` and `d` in out/: {listing:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_fifo_is_streamed_into_not_replaced() {
    let b = bed();
    let fifo = b.out("fifo");
    let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(st.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    // Not joined: with a broken `roam get` nobody opens the FIFO and the reader would block.
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let r = std::fs::File::open(&path).and_then(|mut f| f.read_to_end(&mut got));
        let _ = tx.send(r.map(|_| got));
    });
    let o = b.get("f", &fifo).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let got = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the FIFO's reader got nothing")
        .unwrap();
    assert!(got == b.f, "the FIFO's reader got other bytes");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(!b.out("fifo.roam-part").exists());
}

#[test]
fn a_character_device_is_written_not_replaced() {
    let b = bed();
    // A null device of our own (the same major/minor as /dev/null), so that a broken `roam
    // get` cannot replace the system's.
    let null = b.out("null");
    let made = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: mknod failed (not root, or no device support here)");
        return;
    }
    for protocol in ["rcp", "tcp"] {
        let o = b
            .get("f", &null)
            .args(["--protocol", protocol])
            .output()
            .unwrap();
        assert!(o.status.success(), "{protocol}: {}", stderr(&o));
        let md = std::fs::symlink_metadata(&null).unwrap();
        assert!(md.file_type().is_char_device(), "{protocol}: replaced");
        assert!(!b.out("null.roam-part").exists());
    }
}

/// `--continue` keeps the bytes of an earlier part file and fetches only the rest; the file is
/// verified as stored; the kept groups are verified against the object's BLAKE3 tree first, so
/// a wrong prefix is cut at its first bad group and fetched again (issue 28, items 9 and 11).
#[test]
fn continue_fetches_only_the_rest_and_verifies_the_whole() {
    let b = bed();
    let out = b.out("c");
    let part = b.out("c.roam-part");
    let prefix = 1 << 20;
    for multipath in [false, true] {
        std::fs::write(&part, &b.f[..prefix]).unwrap();
        let mut get = b.get("f", &out);
        get.args(["--continue", "--format", "json"]);
        if multipath {
            get.args(["--via", "127.0.0.1", "--via", "127.0.0.2"]);
        }
        let o = get.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read(&out).unwrap() == b.f, "content differs");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let fetched: u64 = v["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(
            fetched,
            (b.f.len() - prefix) as u64,
            "multipath {multipath}: {v}"
        );
        std::fs::remove_file(&out).unwrap();
    }
    // A part file whose bytes are wrong in its second 64 KiB group: its groups are verified
    // against the BLAKE3 tree before they are trusted, so the first one is kept and the rest
    // fetched again (before verified streaming, the download failed at the end).
    let mut wrong = b.f[..prefix].to_vec();
    wrong[(1 << 16) + 1000] ^= 1;
    std::fs::write(&part, &wrong).unwrap();
    let o = b
        .get("f", &out)
        .args(["--continue", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap() == b.f, "content differs");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fetched: u64 = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(fetched, (b.f.len() - (1 << 16)) as u64, "{v}");
    std::fs::remove_file(&out).unwrap();
    // Without --continue a stale part file is not trusted: all bytes are fetched again.
    std::fs::write(&part, &wrong).unwrap();
    let o = b.get("f", &out).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&out).unwrap() == b.f);
}

#[test]
fn continue_never_takes_over_another_users_part_file() {
    let b = bed();
    let part = b.out("c.roam-part");
    std::fs::write(&part, &b.f[..1000]).unwrap();
    if std::os::unix::fs::chown(&part, Some(65534), Some(65534)).is_err() {
        eprintln!("skipped: chown failed (not root)");
        return;
    }
    let o = b.get("f", &b.out("c")).arg("--continue").output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("another user"), "{}", stderr(&o));
    assert!(!b.out("c").exists());
}
