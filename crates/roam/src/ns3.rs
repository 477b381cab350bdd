//! The ns-3 reference program of `roam bench` (`bench/ns3/ns3-dumbbell.cc`): where to find it
//! or how to build it, how to run it on a dumbbell scenario, and how to read its one line of
//! output.

use std::path::{Path, PathBuf};
use std::process::Command;

use roam_sim::scenario::{Capacity, QueueLimit};
use roam_sim::Scenario;

use crate::error::{CliError, Result};

/// The program's source, relative to the repository root.
pub const SOURCE: &str = "bench/ns3/ns3-dumbbell.cc";
/// The ns-3 modules the program links against (pkg-config names).
pub const MODULES: [&str; 6] = [
    "ns3-core",
    "ns3-network",
    "ns3-internet",
    "ns3-point-to-point",
    "ns3-applications",
    "ns3-traffic-control",
];
/// The link of a dumbbell scenario that the program's bottleneck stands for.
pub const BOTTLENECK: &str = "bottleneck";

/// What one ns-3 run printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns3Line {
    /// Total goodput (Mb/s): application bytes received / simulated time.
    pub total_goodput_mbps: f64,
    /// Wall time the program measured (s).
    pub wall_s: f64,
}

/// Parses the `ns3 flows=.. time=.. loss=.. total_goodput_mbps=.. jain=.. wall_s=..` line.
pub fn parse_line(output: &str) -> Option<Ns3Line> {
    let line = output.lines().find(|l| l.starts_with("ns3 "))?;
    let field = |name: &str| -> Option<f64> {
        line.split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.parse().ok())
    };
    Some(Ns3Line {
        total_goodput_mbps: field("total_goodput_mbps")?,
        wall_s: field("wall_s")?,
    })
}

/// The program's command-line arguments for a dumbbell scenario: its non-cross flows, duration
/// and the `bottleneck` link's forward rate, delay, queue and loss. `None` when the scenario is
/// not a dumbbell the program can stand for (no `bottleneck` link, a trace-driven or
/// byte-limited bottleneck).
pub fn args_for(s: &Scenario) -> Option<Vec<String>> {
    let link = &s.links[s.link_index(BOTTLENECK)?];
    let dir = &link.forward;
    let Capacity::Rate(bps) = dir.capacity else {
        return None;
    };
    let QueueLimit::Packets(queue) = dir.queue else {
        return None;
    };
    let flows = s.flows.iter().filter(|f| !f.cross).count();
    Some(vec![
        format!("--flows={flows}"),
        format!("--time={}", s.run.duration.as_secs_f64()),
        format!("--loss={}", dir.loss),
        format!("--bw={bps}bps"),
        format!("--delay={}us", dir.delay.as_micros()),
        format!("--queue={queue}"),
    ])
}

/// Runs `program` with `args` once and reads its line; also its peak resident memory (bytes)
/// where the platform tells.
pub fn run_once(program: &Path, args: &[String]) -> Result<(Ns3Line, Option<u64>)> {
    let name = program.display().to_string();
    let (out, peak) = crate::peak_memory::output_with_peak(Command::new(program).args(args))
        .map_err(|e| CliError::External {
            program: name.clone(),
            message: format!("cannot run: {e}"),
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(CliError::External {
            program: name,
            message: format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    let line = parse_line(&stdout).ok_or_else(|| CliError::External {
        program: name,
        message: format!(
            "no `ns3 … total_goodput_mbps=… wall_s=…` line in its output: {}",
            stdout.trim()
        ),
    })?;
    Ok((line, peak))
}

/// The tools used to find and build the program (replaceable in tests).
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// `pkg-config`.
    pub pkg_config: PathBuf,
    /// A C++ compiler (`g++`).
    pub cxx: PathBuf,
}

impl Default for Toolchain {
    fn default() -> Self {
        Toolchain {
            pkg_config: "pkg-config".into(),
            cxx: "g++".into(),
        }
    }
}

/// Where the ns-3 program comes from in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A program to run.
    Program(PathBuf),
    /// No program: why, in words (printed instead of a speed-up).
    Unavailable(String),
}

/// The program built from `root`'s [`SOURCE`] into `root/target/ns3-dumbbell/`, compiled first
/// when it is missing or older than the source; [`Found::Unavailable`] when ns-3 is not
/// installed (pkg-config does not know its modules) or the source is missing. A compiler error
/// with ns-3 installed is an error, not a silent absence.
pub fn find_or_build(root: &Path, tools: &Toolchain, note: &dyn Fn(&str)) -> Result<Found> {
    let source = root.join(SOURCE);
    if !source.is_file() {
        return Ok(Found::Unavailable(format!(
            "{} is missing",
            source.display()
        )));
    }
    let flags = Command::new(&tools.pkg_config)
        .args(["--cflags", "--libs"])
        .args(MODULES)
        .output();
    let flags = match flags {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(_) => {
            return Ok(Found::Unavailable(
                "ns-3 is not installed (pkg-config does not know ns3-core; \
                 apt-get install -y libns3-dev libgsl-dev)"
                    .to_owned(),
            ))
        }
        Err(e) => {
            return Ok(Found::Unavailable(format!(
                "cannot run {}: {e}",
                tools.pkg_config.display()
            )))
        }
    };
    let dir = root.join("target").join("ns3-dumbbell");
    let program = dir.join("ns3-dumbbell");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = matches!(
        (modified(&program), modified(&source)),
        (Some(b), Some(s)) if b >= s
    );
    if fresh {
        return Ok(Found::Program(program));
    }
    std::fs::create_dir_all(&dir).map_err(|e| CliError::write(&dir, e))?;
    note(&format!(
        "building the ns-3 dumbbell: {} -O2 {} -> {}",
        tools.cxx.display(),
        source.display(),
        program.display()
    ));
    let out = Command::new(&tools.cxx)
        .arg("-O2")
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .args(flags.split_whitespace())
        .output()
        .map_err(|e| CliError::External {
            program: tools.cxx.display().to_string(),
            message: format!("cannot run: {e}"),
        })?;
    if !out.status.success() {
        return Err(CliError::External {
            program: tools.cxx.display().to_string(),
            message: format!(
                "building {} failed: {}",
                source.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(Found::Program(program))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_programs_line() {
        let out = "some log\nns3 flows=20 time=300 loss=0 total_goodput_mbps=9.4830 jain=0.9999 wall_s=36.100\n";
        assert_eq!(
            parse_line(out),
            Some(Ns3Line {
                total_goodput_mbps: 9.483,
                wall_s: 36.1
            })
        );
        assert_eq!(parse_line("ns3 flows=1 wall_s=x"), None);
        assert_eq!(parse_line(""), None);
    }

    #[test]
    fn the_program_stands_for_the_validation_dumbbell() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let s = Scenario::load(&repo.join("scenarios/validation/dumbbell-lossy.toml")).unwrap();
        assert_eq!(
            args_for(&s).unwrap(),
            [
                "--flows=1",
                "--time=300",
                "--loss=0.01",
                "--bw=10000000bps",
                "--delay=20000us",
                "--queue=100"
            ]
        );
        let other = Scenario::load(&repo.join("scenarios/examples/lte-trace.toml")).unwrap();
        assert_eq!(args_for(&other), None, "no bottleneck link");
    }

    /// An executable shell script in `dir`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn without_ns3_there_is_no_program_and_a_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join("bench/ns3")).unwrap();
        let tools = Toolchain {
            pkg_config: script(tmp.path(), "pkg-config", "exit 1"),
            cxx: script(tmp.path(), "cxx", "exit 1"),
        };
        let missing = find_or_build(&root, &tools, &|_| {}).unwrap();
        assert!(matches!(missing, Found::Unavailable(ref why) if why.contains("missing")));
        std::fs::write(root.join(SOURCE), "int main() {}").unwrap();
        match find_or_build(&root, &tools, &|_| {}).unwrap() {
            Found::Unavailable(why) => assert!(why.contains("libns3-dev"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn with_ns3_the_program_is_built_once_and_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join("bench/ns3")).unwrap();
        std::fs::write(root.join(SOURCE), "int main() {}").unwrap();
        let log = tmp.path().join("built");
        // A "compiler" that writes its output file (the argument after -o) and logs the call.
        let tools = Toolchain {
            pkg_config: script(tmp.path(), "pkg-config", "echo -lns3-core"),
            cxx: script(
                tmp.path(),
                "cxx",
                &format!("echo \"$@\" >> {}; touch \"$3\"", log.display()),
            ),
        };
        let notes = std::cell::RefCell::new(Vec::new());
        let found = find_or_build(&root, &tools, &|n| notes.borrow_mut().push(n.to_owned()));
        let program = root.join("target/ns3-dumbbell/ns3-dumbbell");
        assert_eq!(found.unwrap(), Found::Program(program.clone()));
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(
            calls.contains("-O2 -o") && calls.contains("-lns3-core"),
            "{calls}"
        );
        assert_eq!(notes.borrow().len(), 1);
        // Built and newer than the source: not built again.
        find_or_build(&root, &tools, &|_| {}).unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    }
}
