//! `roam bench`: simulator speed on the validation dumbbells, and the speed-up over ns-3 when
//! ns-3 ran in the same session on the same machine (never against figures from elsewhere).

use std::path::{Path, PathBuf};

use roam_sim::result::RunResult;

use crate::cli::BenchArgs;
use crate::cmd::{note, print, stem};
use crate::engine;
use crate::error::{CliError, Result};
use crate::ns3::{self, Found, Ns3Line, Toolchain};
use crate::output::{fmt_num, table};
use crate::peak_memory;
use crate::progress;
use crate::timing::timed;
use roam_lab::stats::median;
use roam_sim::memory::Bytes;

/// The scenarios benchmarked when none is given, relative to the repository root: the
/// validation dumbbells, then 200 and 1000 flows on the same dumbbell for 60 s.
pub const DEFAULT_SCENARIOS: [&str; 4] = [
    "scenarios/validation/dumbbell-single.toml",
    "scenarios/validation/dumbbell-shared.toml",
    "scenarios/scale/dumbbell-200.toml",
    "scenarios/scale/dumbbell-1000.toml",
];

/// The ns-3 side of one benchmarked scenario.
#[derive(Debug, Clone, PartialEq)]
enum Ns3Side {
    /// Medians of `--repeat` runs in this session, and the largest peak memory (bytes).
    Measured(Ns3Line, Option<u64>),
    /// Not run, and why.
    NotRun(String),
}

/// One benchmarked scenario.
struct BenchRow {
    name: String,
    result: RunResult,
    wall_s: f64,
    /// Largest peak resident memory of the runs (bytes), where the platform tells.
    peak: Option<u64>,
    ns3: Ns3Side,
}

/// The aggregate goodput (Mb/s): all flows' bytes over one interval, as ns-3's total (bytes /
/// simulated time).
fn total_goodput_mbps(r: &RunResult) -> f64 {
    r.aggregate.goodput_bps / 1e6
}

/// The medians of ns-3's runs (goodput and wall time) and their largest peak memory.
fn ns3_summary(lines: &[Ns3Line], peak: Option<u64>) -> Ns3Side {
    let med = |f: fn(&Ns3Line) -> f64| median(&lines.iter().map(f).collect::<Vec<_>>());
    let line = Ns3Line {
        total_goodput_mbps: med(|l| l.total_goodput_mbps).unwrap_or(f64::NAN),
        wall_s: med(|l| l.wall_s).unwrap_or(f64::NAN),
    };
    Ns3Side::Measured(line, peak)
}

/// Runs `path` `--repeat` times and, when the ns-3 program can run it, ns-3 as often,
/// alternating (roam, ns-3, roam, ns-3, …): on a shared machine whose speed drifts, both then
/// see the same stretch of it, and the ratio of the medians does not depend on which ran first.
fn bench_one(path: &Path, program: &Found, args: &BenchArgs) -> Result<BenchRow> {
    let scenario = engine::build(engine::load_doc(path)?, path)?;
    let ns3_plan = match (program, ns3::args_for(&scenario)) {
        (Found::Unavailable(why), _) => Err(why.clone()),
        (Found::Program(_), None) => Err(format!(
            "not a dumbbell (no rate-driven link named `{}` with a packet queue)",
            ns3::BOTTLENECK
        )),
        (Found::Program(p), Some(ns3_args)) => {
            note(&format!(
                "running {} {} ({}×, alternating with roam's runs)",
                p.display(),
                ns3_args.join(" "),
                args.repeat
            ));
            Ok((p, ns3_args))
        }
    };
    let bar = progress::bar(u64::from(args.repeat), &stem(path), args.quiet);
    let mut walls = Vec::new();
    let mut last = None;
    let mut peak: Option<u64> = None;
    let mut ns3_lines = Vec::new();
    let mut ns3_peak: Option<u64> = None;
    for _ in 0..args.repeat {
        peak_memory::reset_own();
        let (r, wall) = timed(|| engine::run(&scenario));
        walls.push(wall.as_secs_f64());
        peak = peak.max(peak_memory::own_peak());
        last = Some(r?);
        if let Ok((p, ns3_args)) = &ns3_plan {
            let (line, p) = ns3::run_once(p, ns3_args)?;
            ns3_lines.push(line);
            ns3_peak = ns3_peak.max(p);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let result = last.ok_or_else(|| CliError::Usage("--repeat must be at least 1".to_owned()))?;
    let wall_s = median(&walls).unwrap_or(f64::NAN);
    let ns3 = match ns3_plan {
        Ok(_) => ns3_summary(&ns3_lines, ns3_peak),
        Err(why) => Ns3Side::NotRun(why),
    };
    Ok(BenchRow {
        name: result.scenario.clone(),
        result,
        wall_s,
        peak,
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
        "peak memory",
        "goodput (Mb/s)",
        "ns-3 goodput (Mb/s)",
        "ns-3 wall (s)",
        "ns-3 peak memory",
        "speed-up vs ns-3",
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
            let (ns3, ns3_peak) = match &r.ns3 {
                Ns3Side::Measured(l, p) => (Some(*l), *p),
                Ns3Side::NotRun(_) => (None, None),
            };
            let mem = |p: Option<u64>| p.map_or("-".to_owned(), |b| Bytes(b).to_string());
            vec![
                r.name.clone(),
                fmt_num(r.result.sim_seconds, 1),
                fmt_num(r.wall_s, 3),
                per_s(r.result.events, r.wall_s),
                per_s(r.result.link_packets, r.wall_s),
                mem(r.peak),
                fmt_num(total_goodput_mbps(&r.result), 3),
                ns3.map_or("-".to_owned(), |l| fmt_num(l.total_goodput_mbps, 3)),
                ns3.map_or("-".to_owned(), |l| fmt_num(l.wall_s, 2)),
                mem(ns3_peak),
                ns3.map_or("-".to_owned(), |l| {
                    if r.wall_s > 0.0 && l.wall_s.is_finite() {
                        format!("{}×", fmt_num(l.wall_s / r.wall_s, 1))
                    } else {
                        "-".to_owned()
                    }
                }),
            ]
        })
        .collect();
    let mut text = format!(
        "{}\nwall times are medians of {repeat} run(s) in this session on this machine, one core \
         each (roam's runs alternate with ns-3's where ns-3 ran); peak memory is the largest \
         resident set of those runs (Linux VmHWM)\n",
        table::simple(&header, &body, 1)
    );
    for r in rows {
        if let Ns3Side::NotRun(why) = &r.ns3 {
            text.push_str(&format!("{}: no ns-3 run, so no speed-up: {why}\n", r.name));
        }
    }
    text
}

/// Runs `roam bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    // The repository root holds the default scenarios and the ns-3 source. A --root that is
    // not one is an error; a root that cannot be found only matters when it is needed.
    let root: std::result::Result<PathBuf, String> = match &args.root {
        Some(dir) => Ok(crate::root::find(Some(dir))?),
        None => crate::root::find(None).map_err(|e| e.to_string()),
    };
    let scenarios: Vec<PathBuf> = if args.scenarios.is_empty() {
        let root = root.as_ref().map_err(|e| CliError::Usage(e.clone()))?;
        DEFAULT_SCENARIOS.iter().map(|s| root.join(s)).collect()
    } else {
        args.scenarios.clone()
    };
    let program = match (&args.ns3, args.no_ns3) {
        (_, true) => Found::Unavailable("--no-ns3 was given".to_owned()),
        (Some(p), false) if !p.is_file() => {
            return Err(CliError::External {
                program: p.display().to_string(),
                message: format!(
                    "no such file (build it from {}, see bench/ns3/README.md)",
                    ns3::SOURCE
                ),
            })
        }
        (Some(p), false) => Found::Program(p.clone()),
        (None, false) => match &root {
            Ok(root) => ns3::find_or_build(root, &Toolchain::default(), &note)?,
            Err(e) => Found::Unavailable(format!("{e} (to build {})", ns3::SOURCE)),
        },
    };
    let rows = scenarios
        .iter()
        .map(|p| bench_one(p, &program, args))
        .collect::<Result<Vec<_>>>()?;
    print(&render(&rows, args.repeat))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ns3: Ns3Side) -> BenchRow {
        BenchRow {
            name: "d".to_owned(),
            result: RunResult {
                scenario: "d".to_owned(),
                seed: 1,
                sim_seconds: 300.0,
                events: 1_000_000,
                link_packets: 500_000,
                jain_index: 1.0,
                aggregate: roam_sim::result::Aggregate {
                    flows: 1,
                    bytes_delivered: 355_000_000,
                    from_s: 0.0,
                    to_s: 300.0,
                    goodput_bps: 9.47e6,
                },
                flows: vec![],
                links: vec![],
                warnings: vec![],
                series: vec![],
            },
            wall_s: 2.0,
            peak: Some(30 << 20),
            ns3,
        }
    }

    #[test]
    fn a_speed_up_only_from_ns3_measured_in_this_session() {
        let measured = render(
            &[row(Ns3Side::Measured(
                Ns3Line {
                    total_goodput_mbps: 9.48,
                    wall_s: 21.0,
                },
                Some(40 << 20),
            ))],
            3,
        );
        assert!(measured.contains("10.5×"), "{measured}");
        assert!(
            measured.contains("30.0 MiB") && measured.contains("40.0 MiB"),
            "{measured}"
        );
        assert!(!measured.contains("no ns-3 run"));
        let without = render(&[row(Ns3Side::NotRun("ns-3 is not installed".into()))], 3);
        assert!(!without.contains('×'), "{without}");
        assert!(
            without.contains("d: no ns-3 run, so no speed-up: ns-3 is not installed"),
            "{without}"
        );
    }
}
