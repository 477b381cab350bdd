//! The network-namespace test bed (`scripts/netns.sh`): `roam serve` in two server namespaces,
//! `roam get` in a mobile-host namespace with two interfaces. Root only: elsewhere each test
//! says why it skipped and passes. Every namespace is removed by a guard, also on failure.
//! Waits are bounded by counts and generous limits; nothing asserts on speed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const ROAM: &str = env!("CARGO_BIN_EXE_roam");

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns.sh")
}

/// Why the test bed cannot run here, if it cannot.
fn unavailable() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root".into());
    }
    let probe = format!("roamprobe{}", std::process::id());
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    (!ok).then(|| "`ip netns add` failed (no iproute2 or no namespace support)".into())
}

/// The namespaces and the processes in them; all removed on drop.
struct Bed {
    prefix: String,
    children: Vec<Child>,
    dir: tempfile::TempDir,
}

impl Bed {
    fn up(tag: u32, rate: &str) -> Bed {
        let prefix = format!("rn{}{tag}", std::process::id() % 10_000);
        let bed = Bed {
            prefix,
            children: Vec::new(),
            dir: tempfile::tempdir().unwrap(),
        };
        let st = Command::new("bash")
            .arg(script())
            .args(["up", &bed.prefix, rate])
            .status()
            .unwrap();
        assert!(st.success(), "netns.sh up failed");
        bed
    }

    fn ns(&self, name: &str) -> String {
        format!("{}-{name}", self.prefix)
    }

    /// Starts `roam serve` in server namespace `s` (1 or 2); returns its index in `children`.
    fn serve(&mut self, s: u8) -> usize {
        let addr = format!("10.77.{}.2:7000", s + 2);
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns(&format!("s{s}")), ROAM, "serve"])
            .arg(self.dir.path().join("srv"))
            .args(["--listen", &addr])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.children.push(child);
        self.children.len() - 1
    }

    /// Starts `roam get` in the mobile namespace.
    fn get(&self, args: &[&str], out: &Path) -> Child {
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

    fn ip(&self, args: &[&str]) {
        let st = Command::new("ip").args(args).status().unwrap();
        assert!(st.success(), "ip {args:?}");
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("bash")
            .arg(script())
            .args(["down", &self.prefix])
            .status();
    }
}

fn pattern(len: usize) -> Vec<u8> {
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

/// Sets up a bed with a served file of `len` bytes.
fn bed_with_file(tag: u32, rate: &str, len: usize) -> Option<(Bed, Vec<u8>)> {
    if let Some(why) = unavailable() {
        eprintln!("skipped: the namespace test bed needs root and ip netns ({why})");
        return None;
    }
    let bed = Bed::up(tag, rate);
    let data = pattern(len);
    std::fs::create_dir_all(bed.dir.path().join("srv")).unwrap();
    std::fs::write(bed.dir.path().join("srv/f"), &data).unwrap();
    Some((bed, data))
}

/// Waits (bounded) until `path` holds at least `n` bytes.
fn wait_for_size(path: &Path, n: u64) {
    for _ in 0..3000 {
        if std::fs::metadata(path).is_ok_and(|m| m.len() >= n) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never reached {n} bytes", path.display());
}

/// Waits (bounded) for `roam get` and returns its output.
fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "roam get failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn switches(out: &Output) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["switches"].as_u64().unwrap()
}

#[test]
fn a_file_arrives_intact_over_each_interface() {
    let Some((mut bed, data)) = bed_with_file(1, "100mbit", 4 << 20) else {
        return;
    };
    bed.serve(1);
    bed.serve(2);
    std::thread::sleep(Duration::from_millis(300));
    for (via, server) in [
        ("10.77.1.2", "10.77.3.2:7000"),
        ("10.77.2.2", "10.77.4.2:7000"),
    ] {
        let out = bed.dir.path().join(format!("o-{via}"));
        finish(bed.get(&["f", "--server", server, "--via", via], &out));
        assert!(std::fs::read(&out).unwrap() == data, "via {via}");
    }
}

#[test]
fn taking_the_interface_in_use_down_does_not_stop_the_transfer() {
    let Some((mut bed, data)) = bed_with_file(2, "20mbit", 12 << 20) else {
        return;
    };
    bed.serve(1);
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.dir.path().join("o");
    let args = [
        "f",
        "--server",
        "10.77.3.2:7000",
        "--via",
        "10.77.1.2",
        "--via",
        "10.77.2.2",
        "--stall",
        "1",
    ];
    let child = bed.get(&args, &out);
    wait_for_size(&bed.dir.path().join("o.roam-part"), 2 << 20);
    let (m, dev) = (bed.ns("m"), format!("{}a", bed.prefix));
    bed.ip(&["-n", &m, "link", "set", &dev, "down"]);
    let res = finish(child);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(switches(&res) >= 1);
}

#[test]
fn killing_the_server_in_use_does_not_stop_the_transfer() {
    let Some((mut bed, data)) = bed_with_file(3, "20mbit", 12 << 20) else {
        return;
    };
    let first = bed.serve(1);
    bed.serve(2);
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.dir.path().join("o");
    let args = [
        "f",
        "--server",
        "10.77.3.2:7000",
        "--server",
        "10.77.4.2:7000",
        "--via",
        "10.77.1.2",
        "--stall",
        "1",
    ];
    let child = bed.get(&args, &out);
    wait_for_size(&bed.dir.path().join("o.roam-part"), 2 << 20);
    bed.children[first].kill().unwrap();
    let res = finish(child);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(switches(&res) >= 1);
}
