//! `roam testbed`: head-to-head downloads over the same emulated paths — kernel TCP per
//! controller on each path, Linux MPTCP over both, aria2 from two HTTP mirrors, `roam get` on
//! each path and R²CP over both interfaces and from two mirrors — each on a freshly started
//! emulation (traces replay from t = 0), every download verified.

mod modes;
mod plots;
mod report;
mod sim;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::{CliError, Result};
use modes::{Mode, RunOut};

/// `roam testbed --help` text.
pub const LONG_ABOUT: &str = "Download the same bytes over the same emulated paths with kernel \
TCP (Reno, Cubic, BBR per socket) on each path, Linux MPTCP over both (in-kernel path manager, \
one subflow per path), aria2c from two HTTP mirrors (range requests), roam get on each path, \
and R²CP over both interfaces and from two mirrors. Every mode runs on a fresh emulation \
(roam emu's link model; traces replay from t = 0) between a mobile-host namespace and a server \
namespace; every download is verified.\n\n\
CASE.toml is a roam emu links file with two [[link]]s (path A first; each link's `a` end is \
the mobile host) and a [testbed] table: name, size and quick_size (bytes, e.g. \"25MB\"), kind \
(\"static\", \"trace\" or \"blackout\") and, for a blackout, blackout = [START_S, END_S] of path A. \
Each roam mode is also simulated in-process (roam sim, same engine and configuration, same \
links, same bytes) and its emulated goodput judged against the simulator's (within 10 %). \
Writes per case runs.csv, series.csv (bytes delivered per second and path, per mode), \
sim_series.csv, summary.json and charts (goodput.svg, runs/MODE.svg, summary.svg; PNG copies \
with --png) under --out, and claims.json (the issue's goals, judged) beside them; prints a \
summary table beside the ideal (the best single-path runs of each path added; on a trace, what they delivered within the multipath run's duration). Root only.\n\n\
Examples:\n  \
roam testbed experiments/testbed/static-8-2.toml\n  \
roam testbed experiments/testbed/*.toml --quick --out /tmp/tb";

/// Arguments of `roam testbed`.
#[derive(Debug, Args)]
pub struct TestbedArgs {
    /// The cases.
    #[arg(value_name = "CASE.toml", required = true)]
    pub cases: Vec<PathBuf>,
    /// Short transfers (each case's quick_size) and fewer modes (Cubic only).
    #[arg(long)]
    pub quick: bool,
    /// Only these modes (comma-separated names as printed, e.g. tcp-cubic-a,mptcp,r2cp-2if).
    #[arg(long, value_delimiter = ',')]
    pub modes: Vec<String>,
    /// Output folder.
    #[arg(long, default_value = "results/testbed")]
    pub out: PathBuf,
    /// Give up on one download after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Load the cases and print what would run, without running anything (no root needed).
    #[arg(long)]
    pub dry_run: bool,
    /// Only simulate roam's modes over each case's links (no root needed) and print their
    /// goodput: the simulator's side of the comparison, in seconds.
    #[arg(long, conflicts_with = "dry_run")]
    pub sim_only: bool,
    /// Also write a PNG copy of every chart.
    #[arg(long)]
    pub png: bool,
}

/// One case file.
#[derive(Debug)]
pub struct Case {
    /// Its name.
    pub name: String,
    /// The file.
    pub file: PathBuf,
    /// The links document (without `[testbed]`).
    pub doc: toml::Table,
    /// Bytes downloaded.
    pub size: u64,
    /// `static`, `trace` or `blackout`.
    pub kind: String,
    /// Path A's blackout, seconds from the start.
    pub blackout: Option<(f64, f64)>,
    /// Its paths: 2, or 1 for a single-path case (kernel TCP and `roam get` on path A only).
    pub paths: usize,
}

fn bad(file: &Path, message: impl Into<String>) -> CliError {
    CliError::Scenario {
        path: file.to_path_buf(),
        message: message.into(),
    }
}

/// `25MB`, `500kB`, `1000000`: bytes (decimal units).
fn parse_size(v: &toml::Value) -> std::result::Result<u64, String> {
    match v {
        toml::Value::Integer(n) if *n > 0 => Ok(*n as u64),
        toml::Value::String(s) => {
            let s = s.trim();
            let (num, mult) = if let Some(n) = s.strip_suffix("MB") {
                (n, 1e6)
            } else if let Some(n) = s.strip_suffix("kB") {
                (n, 1e3)
            } else if let Some(n) = s.strip_suffix('B') {
                (n, 1.0)
            } else {
                (s, 1.0)
            };
            let x: f64 = num
                .trim()
                .parse()
                .map_err(|_| format!("expected a size like \"25MB\", got {s:?}"))?;
            if !(x > 0.0 && x * mult <= 1e11) {
                return Err(format!("size {s:?} out of range"));
            }
            Ok((x * mult) as u64)
        }
        other => Err(format!("expected a size like \"25MB\", got {other}")),
    }
}

/// Reads a case file.
pub fn load_case(file: &Path, quick: bool) -> Result<Case> {
    let text = std::fs::read_to_string(file).map_err(|source| CliError::ReadFile {
        path: file.to_path_buf(),
        source,
    })?;
    let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| CliError::Toml {
        path: file.to_path_buf(),
        message: e.to_string(),
    })?;
    let Some(toml::Value::Table(mut tb)) = doc.remove("testbed") else {
        return Err(bad(
            file,
            "testbed: missing (a [testbed] table with name and size)",
        ));
    };
    let name = match tb.remove("name") {
        Some(toml::Value::String(s)) => s,
        _ => return Err(bad(file, "testbed.name: missing or not a string")),
    };
    let key = if quick { "quick_size" } else { "size" };
    let size = tb
        .remove(key)
        .or_else(|| tb.get("size").cloned())
        .ok_or_else(|| bad(file, format!("testbed.{key}: missing")))
        .and_then(|v| parse_size(&v).map_err(|e| bad(file, format!("testbed.{key}: {e}"))))?;
    tb.remove("size");
    tb.remove("quick_size");
    let kind = match tb.remove("kind") {
        None => "static".to_string(),
        Some(toml::Value::String(s)) if ["static", "trace", "blackout"].contains(&s.as_str()) => s,
        Some(other) => {
            return Err(bad(
                file,
                format!(
                    "testbed.kind: expected \"static\", \"trace\" or \"blackout\", got {other}"
                ),
            ))
        }
    };
    let blackout = match tb.remove("blackout") {
        None => None,
        Some(toml::Value::Array(a)) if a.len() == 2 => {
            let f = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            match (f(&a[0]), f(&a[1])) {
                (Some(s), Some(e)) if s >= 0.0 && e > s => Some((s, e)),
                _ => return Err(bad(file, "testbed.blackout: expected [START_S, END_S]")),
            }
        }
        Some(_) => return Err(bad(file, "testbed.blackout: expected [START_S, END_S]")),
    };
    if let Some(k) = tb.keys().next() {
        return Err(bad(file, format!("testbed.{k}: unknown field")));
    }
    let paths = roam_emu::config::from_table(doc.clone(), file, &roam_emu::Selection::default())?;
    if !(1..=2).contains(&paths.len()) {
        return Err(bad(
            file,
            format!(
                "a test bed case has two [[link]]s (path A, path B), or one for a single-path \
                 case; {} given",
                paths.len()
            ),
        ));
    }
    Ok(Case {
        name,
        file: file.to_path_buf(),
        doc,
        size,
        kind,
        blackout,
        paths: paths.len(),
    })
}

/// Removes the namespaces killed emulations left (`roam_emu::stale`) and says so.
pub fn report_stale() {
    for name in roam_emu::remove_stale() {
        eprintln!("removed namespace {name}, left by an emulation that was killed");
    }
}

/// Runs `roam testbed`.
pub fn run(args: &TestbedArgs) -> Result<()> {
    let cases: Vec<Case> = args
        .cases
        .iter()
        .map(|f| load_case(f, args.quick))
        .collect::<Result<_>>()?;
    if args.dry_run {
        for c in &cases {
            let modes: Vec<String> = Mode::all(args.quick, c.paths)
                .iter()
                .map(Mode::name)
                .filter(|n| args.modes.is_empty() || args.modes.contains(n))
                .collect();
            println!(
                "{}: {} bytes, {}: {}",
                c.name,
                c.size,
                c.kind,
                modes.join(" ")
            );
        }
        return Ok(());
    }
    if args.sim_only {
        for c in &cases {
            for m in Mode::all(args.quick, c.paths)
                .into_iter()
                .filter(|m| args.modes.is_empty() || args.modes.contains(&m.name()))
            {
                match sim::simulate(c, &m) {
                    Some(Ok(s)) => println!(
                        "{}: {}: simulated {:.3} Mb/s",
                        c.name,
                        m.name(),
                        s.goodput_mbps
                    ),
                    Some(Err(why)) => println!("{}: {}: simulator: {why}", c.name, m.name()),
                    None => {}
                }
            }
        }
        return Ok(());
    }
    roam_emu::check_allowed()?;
    report_stale();
    // SIGTERM, SIGINT, SIGHUP: the download running is stopped, everything removed, and the
    // run ends with an error (SIGKILL leaves namespaces for the next run to remove).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _signals = roam_emu::SignalGuard::new(&stop)?;
    let png = crate::output::png_writer(args.png)?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Emu(format!("cannot find the roam executable: {e}")))?;
    let env = modes::Env::probe();
    let mut all = Vec::new();
    for case in &cases {
        let modes: Vec<Mode> = Mode::all(args.quick, case.paths)
            .into_iter()
            .filter(|m| args.modes.is_empty() || args.modes.iter().any(|n| *n == m.name()))
            .collect();
        if modes.is_empty() {
            return Err(CliError::Usage(format!(
                "--modes: none of {:?} is a mode (known: {})",
                args.modes,
                Mode::all(false, case.paths)
                    .iter()
                    .map(Mode::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let runs: Vec<RunOut> = modes::run_case(case, &modes, &exe, &env, args.timeout, &stop)?;
        report::write_case(&args.out, case, &runs)?;
        let charts = plots::write_case(
            &args.out.join(&case.name),
            case,
            &runs,
            report::ideal(case, &runs),
        )?;
        crate::output::write_pngs(png.as_ref(), &charts)?;
        report::print_case(case, &runs);
        all.push((case, runs));
    }
    report::write_claims(&args.out, &all)?;
    Ok(())
}
