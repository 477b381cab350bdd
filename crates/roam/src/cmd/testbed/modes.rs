//! The test bed's modes and running one: a fresh emulation, a server in the server namespace,
//! a client in the mobile host's, a bounded wait, the download verified, the emulation
//! removed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use roam_emu::{Layout, Running, Selection, Side};

use super::Case;
use crate::error::{CliError, Result};

/// A run's note when a signal stopped it.
const INTERRUPTED: &str = "interrupted";

/// Second byte of the test bed's 10.S.k.0/24 subnets.
const SUBNET: u8 = 97;

/// One way of downloading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Kernel TCP with this controller on path 0 (A) or 1 (B).
    Tcp(&'static str, usize),
    /// Linux MPTCP over both paths.
    Mptcp,
    /// aria2c from the two mirrors.
    Aria2,
    /// `roam get` (RCP) on one path.
    Roam(usize),
    /// `roam get --cc rate` (RCP with the receiver's rate controller, RCP-Rate) on one path:
    /// in single-path cases, roam's other oracle-free configuration beside the default.
    RoamRate(usize),
    /// R²CP over both interfaces to one server.
    R2cpInterfaces,
    /// R²CP from two mirrors.
    R2cpMirrors,
}

fn path_name(k: usize) -> char {
    (b'a' + k as u8) as char
}

impl Mode {
    /// Every mode over `paths` paths (2, or 1 for a single-path case: no multipath modes),
    /// or the quick set.
    pub fn all(quick: bool, paths: usize) -> Vec<Mode> {
        let ccs: &[&'static str] = if quick {
            &["cubic"]
        } else {
            &["reno", "cubic", "bbr"]
        };
        let mut v = Vec::new();
        for k in 0..paths {
            for cc in ccs {
                v.push(Mode::Tcp(cc, k));
            }
        }
        if paths >= 2 {
            v.extend([Mode::Mptcp, Mode::Aria2]);
        }
        v.extend((0..paths).map(Mode::Roam));
        if paths == 1 {
            v.push(Mode::RoamRate(0));
        }
        if paths >= 2 {
            v.extend([Mode::R2cpInterfaces, Mode::R2cpMirrors]);
        }
        v
    }

    /// Its name in tables and files.
    pub fn name(&self) -> String {
        match self {
            Mode::Tcp(cc, k) => format!("tcp-{cc}-{}", path_name(*k)),
            Mode::Mptcp => "mptcp".into(),
            Mode::Aria2 => "aria2".into(),
            Mode::Roam(k) => format!("roam-{}", path_name(*k)),
            Mode::RoamRate(k) => format!("roam-rate-{}", path_name(*k)),
            Mode::R2cpInterfaces => "r2cp-2if".into(),
            Mode::R2cpMirrors => "r2cp-2mirror".into(),
        }
    }

    /// The path a single-path mode uses.
    pub fn single_path(&self) -> Option<usize> {
        match self {
            Mode::Tcp(_, k) | Mode::Roam(k) | Mode::RoamRate(k) => Some(*k),
            _ => None,
        }
    }

    /// Whether it is one of roam's multipath engines.
    pub fn roam_multipath(&self) -> bool {
        matches!(self, Mode::R2cpInterfaces | Mode::R2cpMirrors)
    }
}

/// What the machine offers.
#[derive(Debug)]
pub struct Env {
    /// aria2c is installed.
    pub aria2: bool,
    /// The kernel's congestion controllers.
    pub ccs: Vec<String>,
}

impl Env {
    /// Looks.
    pub fn probe() -> Env {
        let aria2 = Command::new("aria2c")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        // BBR is a module: load it if it is there (best effort).
        let _ = Command::new("modprobe")
            .arg("tcp_bbr")
            .stderr(Stdio::null())
            .status();
        let ccs = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        Env { aria2, ccs }
    }
}

/// One run's outcome.
#[derive(Debug, Clone)]
pub struct RunOut {
    /// The mode.
    pub mode: Mode,
    /// Downloaded and verified.
    pub ok: bool,
    /// The client's wall time.
    pub seconds: f64,
    /// Bytes · 8 / seconds, in Mb/s (0 when not ok).
    pub goodput_mbps: f64,
    /// Why not ok, or what was skipped.
    pub note: String,
    /// Bytes delivered to the mobile host per second, per path (IP packets, from the wire).
    pub per_second: Vec<Vec<u64>>,
    /// The simulator's goodput for the same mode over the same links, where simulated.
    pub sim_mbps: Option<f64>,
    /// The simulator's goodput in each second (Mb/s), where simulated.
    pub sim_per_second: Vec<f64>,
    /// Why a roam mode has no simulated goodput (the scenario failed, the flow did not end).
    pub sim_note: String,
}

/// A child killed on drop.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn next_id() -> u32 {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `ip netns exec NS ARGV…`, killed if this process dies (so that a `roam testbed` killed
/// with SIGKILL leaves no server or client holding its namespaces).
fn in_ns(ns: &str, argv: &[OsString]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(argv);
    roam_emu::sys::die_with_parent(&mut c);
    c
}

fn os(v: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    v.iter().map(|s| s.as_ref().to_os_string()).collect()
}

/// Starts a server that prints one line when it is ready; waits for that line (at most 20 s).
fn start_server(mut cmd: Command) -> std::result::Result<Kill, String> {
    let mut child = Kill(
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?,
    );
    let out = child.0.stdout.take().ok_or("no server output")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut r = BufReader::new(out);
        let _ = r.read_line(&mut line);
        let _ = tx.send(line);
        // Keep draining, so that a chatty server never blocks on a full pipe.
        let mut sink = String::new();
        while r.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(line) if !line.trim().is_empty() => Ok(child),
        Ok(_) => Err("the server exited before it was ready".into()),
        Err(_) => Err("the server did not say it was ready within 20 s".into()),
    }
}

/// Runs `cmd` to its end within `limit` or until `stop` is set; (success, wall seconds, last
/// line of its output).
fn run_client(mut cmd: Command, limit: Duration, stop: &AtomicBool) -> (bool, f64, String) {
    let t0 = roam_emu::wire::monotonic();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => Kill(c),
        Err(e) => return (false, 0.0, format!("cannot start: {e}")),
    };
    loop {
        match child.0.try_wait() {
            Ok(Some(st)) => {
                let secs = t0.elapsed().as_secs_f64();
                let mut text = String::new();
                if let Some(mut o) = child.0.stdout.take() {
                    let _ = std::io::Read::read_to_string(&mut o, &mut text);
                }
                if let Some(mut e) = child.0.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut text);
                }
                let last = text.lines().last().unwrap_or_default().to_string();
                return (st.success(), secs, last);
            }
            Ok(None) if t0.elapsed() >= limit => {
                return (false, t0.elapsed().as_secs_f64(), "timed out".into())
            }
            Ok(None) if stop.load(Ordering::Relaxed) => {
                return (false, t0.elapsed().as_secs_f64(), INTERRUPTED.into())
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return (false, 0.0, e.to_string()),
        }
    }
}

/// A deterministic blob of `size` bytes (the same for every mode).
fn make_blob(dir: &Path, size: u64) -> std::io::Result<PathBuf> {
    let pub_dir = dir.join("pub");
    std::fs::create_dir_all(&pub_dir)?;
    let path = pub_dir.join("blob");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut data = Vec::with_capacity(size as usize);
    while (data.len() as u64) < size {
        // xorshift64: incompressible enough for a transfer test.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.extend_from_slice(&x.to_le_bytes());
    }
    data.truncate(size as usize);
    std::fs::write(&path, data)?;
    Ok(path)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Runs every mode of `case`.
pub fn run_case(
    case: &Case,
    modes: &[Mode],
    exe: &Path,
    env: &Env,
    timeout: f64,
    stop: &AtomicBool,
) -> Result<Vec<RunOut>> {
    let dir = tempfile::tempdir().map_err(|e| CliError::Emu(format!("temporary folder: {e}")))?;
    let blob = make_blob(dir.path(), case.size).map_err(|e| CliError::write(dir.path(), e))?;
    let mut out = Vec::new();
    for m in modes {
        let skip = match m {
            Mode::Aria2 if !env.aria2 => Some("aria2c is not installed (apt-get install aria2)"),
            Mode::Tcp(cc, _) if !env.ccs.iter().any(|c| c == cc) => {
                Some("the kernel lacks this congestion controller")
            }
            _ => None,
        };
        let r = match skip {
            Some(why) => RunOut {
                mode: m.clone(),
                ok: false,
                seconds: 0.0,
                goodput_mbps: 0.0,
                note: format!("skipped: {why}"),
                per_second: Vec::new(),
                sim_mbps: None,
                sim_per_second: Vec::new(),
                sim_note: String::new(),
            },
            None => {
                let mut r = run_one(case, m, exe, &blob, dir.path(), timeout, stop)?;
                if stop.load(Ordering::Relaxed) {
                    return Err(CliError::Emu(format!(
                        "{}: {}: interrupted by a signal; everything it made is removed",
                        case.name,
                        m.name()
                    )));
                }
                match super::sim::simulate(case, m) {
                    Some(Ok(sim)) => {
                        r.sim_mbps = Some(sim.goodput_mbps);
                        r.sim_per_second = sim.per_second_mbps;
                    }
                    Some(Err(why)) => r.sim_note = why,
                    None => {}
                }
                r
            }
        };
        eprintln!(
            "{}: {}: {}{}",
            case.name,
            m.name(),
            if r.ok {
                format!("{:.3} Mb/s over {:.1} s", r.goodput_mbps, r.seconds)
            } else {
                r.note.clone()
            },
            r.sim_mbps
                .map_or(String::new(), |g| format!(" (simulated {g:.3} Mb/s)"))
        );
        out.push(r);
    }
    Ok(out)
}

fn run_one(
    case: &Case,
    mode: &Mode,
    exe: &Path,
    blob: &Path,
    dir: &Path,
    timeout: f64,
    stop: &AtomicBool,
) -> Result<RunOut> {
    let paths = roam_emu::config::from_table(case.doc.clone(), &case.file, &Selection::default())?;
    // rn<PID>-emu<N>m and …s: a later run removes them if this one is killed (roam_emu::stale).
    let n = next_id();
    let (m, s) = (
        roam_emu::owned_name(&format!("{n}m")),
        roam_emu::owned_name(&format!("{n}s")),
    );
    let layout = Layout {
        inner: Side::Create(m.clone()),
        outer: Side::Create(s.clone()),
        subnet: SUBNET,
        prefix: roam_emu::unique_prefix(),
    };
    let limit = Duration::from_secs_f64(timeout.max(1.0));
    let running = Running::start(paths, &layout, Some(limit + Duration::from_secs(30)))?;
    let addr = |k: u8, side: u8| format!("10.{SUBNET}.{k}.{side}");
    let got = dir.join(format!("got-{}", mode.name()));
    let _ = std::fs::remove_file(&got);
    let size = case.size.to_string();
    let serve_limit = (timeout + 20.0).to_string();
    let exe_s = exe.as_os_str();
    let result: std::result::Result<(bool, f64, String), String> = (|| match mode {
        Mode::Tcp(cc, k) => {
            let _srv = start_server(in_ns(
                &s,
                &os(&[
                    &exe_s,
                    &"emu-probe",
                    &"tcp-serve",
                    &"0.0.0.0:5000",
                    &size,
                    &serve_limit,
                    cc,
                ]),
            ))?;
            let dst = format!("{}:5000", addr(*k as u8 + 1, 2));
            Ok(run_client(
                in_ns(&m, &os(&[&exe_s, &"emu-probe", &"tcp-get", &dst, &size])),
                limit,
                stop,
            ))
        }
        Mode::Mptcp => {
            let b_dev = format!("{}i1", layout.prefix);
            for ns in [&m, &s] {
                roam_emu::netns::ip(&[
                    "-n",
                    ns,
                    "mptcp",
                    "limits",
                    "set",
                    "subflow",
                    "2",
                    "add_addr_accepted",
                    "2",
                ])
                .map_err(|e| e.to_string())?;
            }
            roam_emu::netns::ip(&[
                "-n",
                &m,
                "mptcp",
                "endpoint",
                "add",
                &addr(2, 1),
                "dev",
                &b_dev,
                "subflow",
            ])
            .map_err(|e| e.to_string())?;
            let _srv = start_server(in_ns(
                &s,
                &os(&[
                    &exe_s,
                    &"emu-probe",
                    &"tcp-serve",
                    &"0.0.0.0:5000",
                    &size,
                    &serve_limit,
                    &"default",
                    &"mptcp",
                ]),
            ))?;
            let dst = format!("{}:5000", addr(1, 2));
            Ok(run_client(
                in_ns(
                    &m,
                    &os(&[&exe_s, &"emu-probe", &"tcp-get", &dst, &size, &"mptcp"]),
                ),
                limit,
                stop,
            ))
        }
        Mode::Aria2 => {
            let _srv = start_server(in_ns(
                &s,
                &os(&[
                    &exe_s,
                    &"emu-probe",
                    &"http-serve",
                    &"0.0.0.0:8080",
                    &blob,
                    &serve_limit,
                ]),
            ))?;
            let name = got
                .file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_default();
            let u1 = format!("http://{}:8080/blob", addr(1, 2));
            let u2 = format!("http://{}:8080/blob", addr(2, 2));
            let r = run_client(
                in_ns(
                    &m,
                    &os(&[
                        &"aria2c",
                        &"-q",
                        &"--allow-overwrite=true",
                        &"--file-allocation=none",
                        &"--split=2",
                        &"--max-connection-per-server=1",
                        &"--min-split-size=1M",
                        &"-d",
                        &dir,
                        &"-o",
                        &name,
                        &u1,
                        &u2,
                    ]),
                ),
                limit,
                stop,
            );
            Ok(verified(r, blob, &got))
        }
        Mode::Roam(_) | Mode::RoamRate(_) | Mode::R2cpInterfaces | Mode::R2cpMirrors => {
            let pub_dir = blob.parent().unwrap_or(dir);
            let l1 = format!("{}:7000", addr(1, 2));
            let l2 = format!("{}:7000", addr(2, 2));
            // One listening address per path (a single-path case has no path B).
            let mut serve = os(&[&exe_s, &"serve", &pub_dir, &"--format", &"json"]);
            for l in [&l1, &l2].into_iter().take(case.paths) {
                serve.extend(os(&[&"--listen", l]));
            }
            let _srv = start_server(in_ns(&s, &serve))?;
            let mut argv = os(&[&exe_s, &"get", &"blob", &"-q", &"-o", &got]);
            let extra: Vec<String> = match mode {
                Mode::Roam(k) | Mode::RoamRate(k) => {
                    let rate = matches!(mode, Mode::RoamRate(_));
                    let k = *k as u8 + 1;
                    let mut v = vec![
                        "--server".into(),
                        format!("{}:7000", addr(k, 2)),
                        "--via".into(),
                        addr(k, 1),
                    ];
                    if rate {
                        v.extend(["--cc".into(), "rate".into()]);
                    }
                    v
                }
                Mode::R2cpInterfaces => vec![
                    "--server".into(),
                    l1.clone(),
                    "--via".into(),
                    addr(1, 1),
                    "--via".into(),
                    addr(2, 1),
                ],
                _ => vec!["--server".into(), l1.clone(), "--server".into(), l2.clone()],
            };
            argv.extend(extra.into_iter().map(OsString::from));
            let r = run_client(in_ns(&m, &argv), limit, stop);
            Ok(verified(r, blob, &got))
        }
    })();
    let report = running.finish()?;
    let _ = std::fs::remove_file(&got);
    let per_second = report
        .paths
        .iter()
        .map(|p| p[1].per_second.clone())
        .collect();
    let (ok, seconds, note) = match result {
        Ok((true, secs, _)) => (true, secs, String::new()),
        Ok((false, secs, why)) => (false, secs, why),
        Err(why) => (false, 0.0, why),
    };
    Ok(RunOut {
        mode: mode.clone(),
        ok,
        seconds,
        goodput_mbps: if ok && seconds > 0.0 {
            case.size as f64 * 8.0 / seconds / 1e6
        } else {
            0.0
        },
        note,
        per_second,
        sim_mbps: None,
        sim_per_second: Vec::new(),
        sim_note: String::new(),
    })
}

/// A client's result, failed unless `got` holds exactly the blob.
fn verified(r: (bool, f64, String), blob: &Path, got: &Path) -> (bool, f64, String) {
    match r {
        (true, secs, _) if same_file(blob, got) => (true, secs, String::new()),
        (true, secs, _) => (false, secs, "the downloaded file differs".into()),
        other => other,
    }
}
