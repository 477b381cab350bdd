//! Command-line arguments (clap derive). Every argument is validated here or in the command
//! that uses it, with a message that says what is wrong and what is expected.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// roam — transport protocols for mobile hosts on wireless networks.
#[derive(Debug, Parser)]
#[command(
    name = "roam",
    version,
    about = "Simulate, sweep, reproduce and benchmark transport protocols for mobile wireless hosts",
    long_about = "roam drives sans-IO transport-protocol engines (TCP NewReno/SACK, TCP-ELN, \
Westwood+, TCP-Probing, last-link heuristics, TCP-ATL, RCP-ATL, RCP, RCP-STP) through a \
deterministic discrete-event network simulator.\n\n\
Scenarios are TOML files describing hosts, links, impairments and flows. The same scenario and \
seed always give byte-identical results.\n\n\
Examples:\n  \
roam sim scenarios/validation/dumbbell-single.toml\n  \
roam sim lossy.toml --set link.bottleneck.forward.loss=0.01 --format json > result.json\n  \
roam sweep lossy.toml --param link.bottleneck.forward.loss=0,0.001,0.01 --seeds 10\n  \
roam reproduce probing --quick\n  \
roam bench --ns3 ./ns3-dumbbell",
    propagate_version = true
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one scenario and report per-flow results, CSV files and plots.
    #[command(long_about = "Run one scenario and report per-flow results.\n\n\
The summary goes to the terminal (a table, or one JSON object with --format json); result.json, \
series.csv, flows.csv, links.csv and throughput/cwnd/seq SVG plots are always written to the \
output folder (default out/<scenario-name>/); --png adds a PNG copy of each plot.\n\n\
Overrides use dotted paths into the scenario file and are applied before it is validated. \
Array entries are addressed by name or id (link.bottleneck.forward.loss, flow.f{i}.size for a \
repeated entry) or by index (flow.0.size); values are TOML (0.01, true, \"10Mbps\") or bare \
text (10Mbps).\n\n\
Examples:\n  \
roam sim scenarios/validation/dumbbell-single.toml\n  \
roam sim dumbbell.toml --seed 7 --set run.duration=30 --out /tmp/run7\n  \
roam sim dumbbell.toml --format json | jq '.flows[].goodput_bps'\n  \
roam sim wifi.toml --set run.duration=5 --trace trace.csv --trace-flow f   # what happened to \
each of f's datagrams, link by link")]
    Sim(SimArgs),
    /// Run a scenario over a grid of parameter values × seeds, in parallel, with 95 % CIs.
    #[command(
        long_about = "Run a scenario over a grid of parameter values × seeds.\n\n\
The grid is the cartesian product of every --param's values (first --param varies slowest) \
times seeds 1..=N (the seed overrides run.seed). Runs execute in parallel; results are ordered \
by grid point and seed regardless of scheduling. For each grid point the mean and the half-width \
of the 95 % Student-t confidence interval are reported for total goodput, Jain's index, each \
flow's goodput, completion time (of the flows that completed) and overhead; totals and means \
leave cross traffic out.\n\n\
Writes sweep.csv (one row per grid point) and runs.csv (one row per run) to the output folder \
(default out/sweep-<scenario-name>/), and plots against the first --param whose values are \
numbers, else against the first --param's values by name (one line per combination of the \
other parameters, 95 % CI bars): goodput.svg, and \
completion.svg when flows complete (--png adds PNG copies).\n\n\
Examples:\n  \
roam sweep lossy.toml --param link.bottleneck.forward.loss=0,0.001,0.01 --seeds 10\n  \
roam sweep dumbbell.toml --param link.bottleneck.delay=10ms,50ms --param link.bottleneck.forward.loss=0.01,0.02 --seeds 5 --jobs 2"
    )]
    Sweep(SweepArgs),
    /// Measure simulator speed (events/s, packets/s) and compare with ns-3.
    #[command(
        long_about = "Measure simulator speed on the validation dumbbells and compare with ns-3.\n\n\
Each scenario runs --repeat times; the median wall time is reported with events/s, simulated \
link packets/s and the speed-up over ns-3 3.37 on the same dumbbell. With --ns3 the ns-3 \
program built from anchors/ns3-dumbbell.cc is run in the same session (same flows, duration and \
loss, --repeat times, median); without it the reference wall times from anchors/README.md are \
used (21.3 s single, 36.1 s shared) and the table says so.\n\n\
Examples:\n  \
roam bench\n  \
roam bench --repeat 5 --ns3 /work/ns3/ns3-dumbbell\n  \
roam bench --scenario my-dumbbell.toml --repeat 1"
    )]
    Bench(BenchArgs),
    /// Reproduce a paper's experiments and compare with its published numbers.
    #[command(long_about = "Reproduce a paper's experiments in the simulator.\n\n\
Runs the scenario set under experiments/<NAME>/ over the paper's parameter grid and seeds, in \
parallel, and writes results/<NAME>/report.md (our table beside the paper's numbers, plots) and \
results/<NAME>/claims.json (one entry per claim: id, claim, ours, paper, holds — the verdict is \
computed from the measured numbers). --quick uses fewer seeds and shorter runs; --png adds a \
PNG copy of each plot.\n\n\
Examples:\n  \
roam reproduce --list\n  \
roam reproduce probing --quick\n  \
roam reproduce atl --out /tmp/atl\n  \
roam reproduce rcp --png   # PNG copies of the plots, for documents that take bitmaps only")]
    Reproduce(ReproduceArgs),
    /// Serve the files of a directory over real UDP (RCP and TCP-like), to `roam get`.
    #[command(long_about = crate::cmd::serve::LONG_ABOUT)]
    Serve(crate::cmd::serve::ServeArgs),
    /// Download one file from `roam serve` servers, verified, surviving a lost path or server.
    #[command(long_about = crate::cmd::get::LONG_ABOUT)]
    Get(crate::cmd::get::GetArgs),
    /// Measure goodput over real UDP per engine and controller, like iperf3.
    #[command(long_about = crate::cmd::perf::LONG_ABOUT)]
    Perf(crate::cmd::perf::PerfArgs),
}

/// Arguments of `roam reproduce`.
#[derive(Debug, clap::Args)]
pub struct ReproduceArgs {
    /// Experiment to run (see --list).
    #[arg(value_name = "NAME", required_unless_present = "list")]
    pub name: Option<String>,
    /// List the available experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Fewer seeds and shorter runs.
    #[arg(long)]
    pub quick: bool,
    /// Output folder [default: results/<NAME>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Repository root holding experiments/ [default: the current directory].
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How `roam sim` reports on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human-readable table (summary on stdout, timing on stderr).
    Table,
    /// Exactly one JSON object on stdout (deterministic for a scenario and seed).
    Json,
}

/// A `key=value` scenario override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Dotted path into the scenario, e.g. `link.bottleneck.forward.loss`.
    pub key: String,
    /// Value as written on the command line (parsed as a TOML value by the scenario loader).
    pub value: String,
}

/// A `key=v1,v2,...` sweep parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Dotted path into the scenario.
    pub key: String,
    /// The values to sweep, in the given order.
    pub values: Vec<String>,
}

/// Arguments of `roam sim`.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Folder for result.json, CSV files and plots [default: out/<scenario-name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed of the run's RNG (overrides `run.seed`).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Override a scenario value by dotted path, e.g. `--set link.bottleneck.forward.loss=0.01`
    /// (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_override)]
    pub set: Vec<Override>,
    /// Write a packet trace to this CSV file: one row per thing that happened to a datagram at
    /// a link direction (queued, queue_drop, sent, duplicated, lost, outage_drop, corrupted,
    /// delivered, forwarded, misrouted), with a tcpdump-style summary of the datagram. Large:
    /// use short runs or --trace-flow.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// With --trace: keep only this flow's datagrams (repeatable).
    #[arg(long, value_name = "ID", requires = "trace")]
    pub trace_flow: Vec<String>,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `roam sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// A parameter to sweep: dotted key and comma-separated values, e.g.
    /// `--param link.bottleneck.forward.loss=0,0.01` (repeatable; the grid is their product).
    #[arg(long = "param", value_name = "KEY=V1,V2,...", value_parser = parse_param)]
    pub params: Vec<Param>,
    /// Number of seeds per grid point (seeds 1..=N).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub seeds: u64,
    /// Parallel runs [default: all cores].
    #[arg(long, short, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Folder for sweep.csv and runs.csv [default: out/sweep-<scenario-name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Fixed overrides applied to every run, e.g. `--set run.duration=60` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_override)]
    pub set: Vec<Override>,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `roam bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenario to benchmark (repeatable) [default: scenarios/validation/dumbbell-single.toml
    /// and scenarios/validation/dumbbell-shared.toml].
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenarios: Vec<PathBuf>,
    /// Runs per scenario; the median wall time is reported.
    #[arg(long, value_name = "R", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// ns-3 dumbbell binary (built from anchors/ns3-dumbbell.cc) to measure in this session.
    #[arg(long, value_name = "PATH")]
    pub ns3: Option<PathBuf>,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Parses `key=value` (value may be empty only if quoted in TOML terms, so we require text).
pub fn parse_override(s: &str) -> Result<Override, String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE (e.g. run.seed=3), got `{s}`"))?;
    let key = key.trim();
    check_key(key, s)?;
    let value = value.trim();
    if value.is_empty() {
        return Err(format!("missing value after `=` in `{s}`"));
    }
    Ok(Override {
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

/// Parses `key=v1,v2,...`.
pub fn parse_param(s: &str) -> Result<Param, String> {
    let (key, values) = s.split_once('=').ok_or_else(|| {
        format!("expected KEY=V1,V2,... (e.g. link.bottleneck.forward.loss=0,0.01), got `{s}`")
    })?;
    let key = key.trim();
    check_key(key, s)?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "empty value in `{s}` (values are separated by single commas)"
        ));
    }
    Ok(Param {
        key: key.to_owned(),
        values,
    })
}

fn check_key(key: &str, whole: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err(format!("missing key before `=` in `{whole}`"));
    }
    if key.split('.').any(str::is_empty) {
        return Err(format!(
            "malformed key `{key}` in `{whole}` (expected a dotted path such as run.seed)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_parses_and_trims() {
        let o = parse_override("run.seed = 7").unwrap();
        assert_eq!(o.key, "run.seed");
        assert_eq!(o.value, "7");
        // `=` inside the value is kept.
        assert_eq!(parse_override("a.b=x=y").unwrap().value, "x=y");
    }

    #[test]
    fn override_rejects_malformed() {
        assert!(parse_override("run.seed")
            .unwrap_err()
            .contains("KEY=VALUE"));
        assert!(parse_override("=3").unwrap_err().contains("missing key"));
        assert!(parse_override("a..b=3")
            .unwrap_err()
            .contains("malformed key"));
        assert!(parse_override("a=").unwrap_err().contains("missing value"));
    }

    #[test]
    fn param_parses_values_in_order() {
        let p = parse_param("link.l.forward.loss=0, 0.01,0.1").unwrap();
        assert_eq!(p.key, "link.l.forward.loss");
        assert_eq!(p.values, ["0", "0.01", "0.1"]);
    }

    #[test]
    fn param_rejects_malformed() {
        assert!(parse_param("loss").unwrap_err().contains("KEY=V1,V2"));
        assert!(parse_param("loss=0,,1")
            .unwrap_err()
            .contains("empty value"));
        assert!(parse_param("loss=").unwrap_err().contains("empty value"));
        assert!(parse_param(".x=1").unwrap_err().contains("malformed key"));
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
