//! `roam bench`: simulator speed on the validation dumbbells, compared with ns-3 3.37.

use std::path::{Path, PathBuf};
use std::process::Command;

use roam_sim::result::RunResult;

use crate::cli::BenchArgs;
use crate::cmd::{note, print, stem};
use crate::engine;
use crate::error::{CliError, Result};
use crate::output::{fmt_num, table};
use crate::progress;
use crate::timing::timed;
use roam_lab::stats::median;

/// The scenarios benchmarked when none is given.
pub const DEFAULT_SCENARIOS: [&str; 2] = [
    "scenarios/validation/dumbbell-single.toml",
    "scenarios/validation/dumbbell-shared.toml",
];

/// The link whose forward loss is the ns-3 dumbbell's `--loss` (0 when there is none).
const BOTTLENECK: &str = "bottleneck";

/// ns-3 3.37 figures from `anchors/README.md` for the scenarios of the same name:
/// (file stem, wall seconds on one core, total goodput Mb/s).
const NS3_REFERENCE: [(&str, f64, f64); 2] = [
    ("dumbbell-single", 21.3, 9.479),
    ("dumbbell-shared", 36.1, 9.483),
];

/// What one ns-3 run printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns3Line {
    /// Total goodput (Mb/s).
    pub total_goodput_mbps: f64,
    /// Wall time the program measured (s).
    pub wall_s: f64,
}

/// Parses the `ns3 flows=.. time=.. loss=.. total_goodput_mbps=.. jain=.. wall_s=..` line.
pub fn parse_ns3_line(output: &str) -> Option<Ns3Line> {
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

/// The ns-3 figures a row is compared with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ns3Figures {
    Measured(Ns3Line),
    Reference(Ns3Line),
    None,
}

/// One benchmarked scenario.
struct BenchRow {
    name: String,
    result: RunResult,
    wall_s: f64,
    ns3: Ns3Figures,
}

/// The aggregate goodput (Mb/s): all flows' bytes over one interval, as ns-3's total (bytes /
/// simulated time).
fn total_goodput_mbps(r: &RunResult) -> f64 {
    r.aggregate.goodput_bps / 1e6
}

/// Runs the ns-3 program `repeat` times with the dumbbell's flows, duration and loss and returns
/// the median wall time and goodput.
fn run_ns3(
    program: &Path,
    flows: usize,
    time_s: f64,
    loss: f64,
    repeat: u32,
    quiet: bool,
) -> Result<Ns3Line> {
    let name = program.display().to_string();
    let mut lines = Vec::new();
    let bar = progress::bar(u64::from(repeat), "ns-3", quiet);
    for _ in 0..repeat {
        let out = Command::new(program)
            .arg(format!("--flows={flows}"))
            .arg(format!("--time={time_s}"))
            .arg(format!("--loss={loss}"))
            .output()
            .map_err(|e| CliError::External {
                program: name.clone(),
                message: format!("cannot run: {e}"),
            })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(CliError::External {
                program: name.clone(),
                message: format!(
                    "exited with {}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            });
        }
        lines.push(parse_ns3_line(&stdout).ok_or_else(|| CliError::External {
            program: name.clone(),
            message: format!(
                "no `ns3 … total_goodput_mbps=… wall_s=…` line in its output: {}",
                stdout.trim()
            ),
        })?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let med = |f: fn(&Ns3Line) -> f64| median(&lines.iter().map(f).collect::<Vec<_>>());
    Ok(Ns3Line {
        total_goodput_mbps: med(|l| l.total_goodput_mbps).unwrap_or(f64::NAN),
        wall_s: med(|l| l.wall_s).unwrap_or(f64::NAN),
    })
}

fn bench_one(path: &Path, args: &BenchArgs) -> Result<BenchRow> {
    let scenario = engine::build(engine::load_doc(path)?, path)?;
    let loss = scenario
        .link_index(BOTTLENECK)
        .map_or(0.0, |i| scenario.links[i].forward.loss);
    let bar = progress::bar(u64::from(args.repeat), &stem(path), args.quiet);
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..args.repeat {
        let (r, wall) = timed(|| engine::run(&scenario));
        walls.push(wall.as_secs_f64());
        last = Some(r?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let result = last.ok_or_else(|| CliError::Usage("--repeat must be at least 1".to_owned()))?;
    let wall_s = median(&walls).unwrap_or(f64::NAN);

    let ns3 = match &args.ns3 {
        Some(program) => {
            let flows = result.flows.iter().filter(|f| !f.cross).count();
            note(&format!(
                "running {} --flows={flows} --time={} --loss={loss} ({}×)",
                program.display(),
                result.sim_seconds,
                args.repeat
            ));
            Ns3Figures::Measured(run_ns3(
                program,
                flows,
                result.sim_seconds,
                loss,
                args.repeat,
                args.quiet,
            )?)
        }
        None => NS3_REFERENCE
            .iter()
            .find(|(s, _, _)| *s == stem(path))
            .map_or(Ns3Figures::None, |&(_, wall_s, g)| {
                Ns3Figures::Reference(Ns3Line {
                    total_goodput_mbps: g,
                    wall_s,
                })
            }),
    };
    Ok(BenchRow {
        name: result.scenario.clone(),
        result,
        wall_s,
        ns3,
    })
}

fn render(rows: &[BenchRow], repeat: u32) -> String {
    let header: Vec<String> = [
        "scenario",
        "sim (s)",
        "wall (s)",
        "events/s",
        "link packets/s",
        "goodput (Mb/s)",
        "ns-3 goodput (Mb/s)",
        "ns-3 wall (s)",
        "speed-up vs ns-3",
        "ns-3 figures",
    ]
    .map(str::to_owned)
    .to_vec();
    let per_s = |n: u64, wall: f64| {
        if wall > 0.0 {
            fmt_num(n as f64 / wall, 0)
        } else {
            "-".to_owned()
        }
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let (ns3, source) = match r.ns3 {
                Ns3Figures::Measured(l) => (Some(l), "measured now"),
                Ns3Figures::Reference(l) => (Some(l), "reference (anchors/README.md)"),
                Ns3Figures::None => (None, "none (no --ns3, no reference)"),
            };
            vec![
                r.name.clone(),
                fmt_num(r.result.sim_seconds, 1),
                fmt_num(r.wall_s, 3),
                per_s(r.result.events, r.wall_s),
                per_s(r.result.link_packets, r.wall_s),
                fmt_num(total_goodput_mbps(&r.result), 3),
                ns3.map_or("-".to_owned(), |l| fmt_num(l.total_goodput_mbps, 3)),
                ns3.map_or("-".to_owned(), |l| fmt_num(l.wall_s, 2)),
                ns3.map_or("-".to_owned(), |l| {
                    if r.wall_s > 0.0 {
                        format!("{}×", fmt_num(l.wall_s / r.wall_s, 1))
                    } else {
                        "-".to_owned()
                    }
                }),
                source.to_owned(),
            ]
        })
        .collect();
    let mut t = table::simple(&header, &body, 1);
    if let Some(col) = t.column_mut(header.len() - 1) {
        col.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
    format!("{t}\nwall times are medians of {repeat} run(s) on this machine, one core each\n")
}

/// Runs `roam bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    let scenarios: Vec<PathBuf> = if args.scenarios.is_empty() {
        DEFAULT_SCENARIOS.iter().map(PathBuf::from).collect()
    } else {
        args.scenarios.clone()
    };
    if let Some(p) = &args.ns3 {
        if !p.is_file() {
            return Err(CliError::External {
                program: p.display().to_string(),
                message: "no such file (build it from anchors/ns3-dumbbell.cc)".to_owned(),
            });
        }
    }
    let rows = scenarios
        .iter()
        .map(|p| bench_one(p, args))
        .collect::<Result<Vec<_>>>()?;
    print(&render(&rows, args.repeat))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ns3_output() {
        let out = "some log\nns3 flows=20 time=300 loss=0 total_goodput_mbps=9.4830 jain=0.9999 wall_s=36.100\n";
        assert_eq!(
            parse_ns3_line(out),
            Some(Ns3Line {
                total_goodput_mbps: 9.483,
                wall_s: 36.1
            })
        );
        assert_eq!(parse_ns3_line("ns3 flows=1 wall_s=x"), None);
        assert_eq!(parse_ns3_line(""), None);
    }
}
