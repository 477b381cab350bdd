//! Command-line arguments (clap derive). Every argument is validated here or in the command
//! that uses it, with a message that says what is wrong and what is expected.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use crate::cmd::Format;

/// roam — transport protocols for mobile hosts on wireless networks.
#[derive(Debug, Parser)]
#[command(
    name = "roam",
    version,
    about = "Transport protocols for mobile wireless hosts: simulate, sweep, reproduce and benchmark \
them, and run them over real UDP (serve, get, perf)",
    long_about = "roam implements transport-protocol engines for mobile, multi-homed hosts once, \
sans-IO, and drives the same engines from two hosts.\n\n\
The simulator (sim, sweep, reproduce, bench): a deterministic discrete-event network simulator \
for TCP NewReno/SACK, TCP-ELN, Westwood+, CUBIC, BBR, TCP-Probing, last-link heuristics, \
TCP-ATL, RCP-ATL, RCP, RCP-STP, R²CP (one receiver, pipes over several interfaces and servers) \
and pTCP (one sender striping over several paths). Scenarios are TOML files describing hosts, \
links, impairments and flows; the same scenario and seed always give byte-identical results.\n\n\
The runtime (serve, get, perf) over real UDP sockets: `roam serve` serves a directory, `roam get` \
downloads one file from it verified (RCP on one path; R²CP over several --via addresses or \
--server mirrors, surviving a lost interface or server; TCP-like with --protocol tcp), `roam perf` \
measures goodput per engine and controller. `roam emu` and `roam testbed` put real packets \
through the simulator's link model between network namespaces (root only).\n\n\
Examples (from the repository root):\n  \
roam sim scenarios/validation/dumbbell-single.toml\n  \
roam sim scenarios/validation/dumbbell-lossy.toml --set link.bottleneck.forward.loss=0.02 --format json > result.json\n  \
roam sweep scenarios/validation/dumbbell-lossy.toml --param link.bottleneck.forward.loss=0,0.001,0.01 --seeds 10\n  \
roam reproduce r2cp --quick\n  \
roam bench --no-ns3\n  \
roam serve ./public --listen 127.0.0.1:7000\n  \
roam get big.iso --server 10.0.1.1:7000 --server 10.0.2.1:7000 --via 10.9.1.2 --via 10.9.2.2 -o big.iso\n  \
roam perf client --server 127.0.0.1:7100 --seconds 5",
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
output folder (default out/<scenario-name>/); --png adds a PNG copy of each plot (2080 × 1040). \
The throughput plot adds the aggregate of the flows; with more than six flows the plots show \
the flows of highest, median and lowest goodput, each named in the legend.\n\n\
Overrides use dotted paths into the scenario file and are applied before it is validated. \
Array entries are addressed by name or id (link.bottleneck.forward.loss, flow.f{i}.size for a \
repeated entry) or by index (flow.0.size); values are TOML (0.01, true, \"10Mbps\") or bare \
text (10Mbps).\n\n\
Examples (from the repository root):\n  \
roam sim scenarios/validation/dumbbell-single.toml\n  \
roam sim scenarios/validation/dumbbell-shared.toml --seed 7 --set run.duration=30s --out /tmp/run7\n  \
roam sim scenarios/validation/dumbbell-shared.toml --format json | jq '.aggregate.goodput_bps'\n  \
roam sim scenarios/examples/wireless-gilbert.toml --set run.duration=5s --trace trace.csv --trace-flow download   # what happened to \
each of the download's datagrams, link by link")]
    Sim(SimArgs),
    /// Run a scenario over a grid of parameter values × seeds, in parallel, with 95 % CIs.
    #[command(
        long_about = "Run a scenario over a grid of parameter values × seeds.\n\n\
The grid is the cartesian product of every --param's values (first --param varies slowest) \
times seeds 1..=N (the seed overrides run.seed). Runs execute in parallel; results are ordered \
by grid point and seed regardless of scheduling. For each grid point the mean and the half-width \
of the 95 % Student-t confidence interval are reported for the aggregate goodput (the bytes of \
all flows over one interval, from the first start to the last end; not the sum of per-flow \
averages), Jain's index, each flow's goodput, completion time (of the flows that completed) and \
overhead; aggregates and means leave cross traffic out.\n\n\
Writes long (tidy) CSV tables to the output folder (default out/sweep-<scenario-name>/): \
sweep.csv (one row per grid point: mean and CI of each run-level metric), sweep_flows.csv (one \
row per grid point and flow), runs.csv (one row per run) and flows.csv (one row per run and \
flow, every field of roam sim's flows.csv), each with a column per swept parameter; and plots against the first --param whose values are \
numbers, else against the first --param's values by name (one line per combination of the \
other parameters, 95 % CI bars): goodput.svg, and \
completion.svg when flows complete (--png adds PNG copies).\n\n\
Examples (from the repository root):\n  \
roam sweep scenarios/validation/dumbbell-lossy.toml --param link.bottleneck.forward.loss=0,0.001,0.01 --seeds 10\n  \
roam sweep scenarios/validation/dumbbell-shared.toml --set run.duration=30s --param link.bottleneck.delay=10ms,50ms --param link.bottleneck.forward.loss=0.01,0.02 --seeds 5 --jobs 2\n  \
roam sweep scenarios/examples/wireless-gilbert.toml --param flow.download.cc=newreno,westwood --seeds 5 --title \"Download over a bursty channel\" --label westwood=Westwood+"
    )]
    Sweep(SweepArgs),
    /// Measure simulator speed (events/s, packets/s) and, when ns-3 is installed, compare with
    /// ns-3 run in the same session.
    #[command(
        long_about = "Measure simulator speed on the validation dumbbells and on 200 and 1000 flows, \
and compare with ns-3 run in the same session on the same machine.\n\n\
Each scenario runs --repeat times; the median wall time is reported with events/s, simulated \
link packets/s and the peak memory of the runs (roam's and ns-3's). The ns-3 program of the same dumbbell (bench/ns3/ns3-dumbbell.cc) runs with the \
same flows, duration and bottleneck (rate, delay, queue, loss), --repeat times, alternating with \
roam's runs (roam, ns-3, roam, ns-3, ...: on a shared machine whose speed drifts, both see the \
same stretch of it), and the ratio of the median wall times is the speed-up. The program is --ns3 PATH, or else built once from the \
repository's source into target/ns3-dumbbell/ when pkg-config finds ns-3 (apt-get install -y \
libns3-dev libgsl-dev; see bench/ns3/README.md). Without ns-3, or with --no-ns3, roam's figures \
are printed with no ratio: wall times measured elsewhere are never compared.\n\n\
Examples:\n  \
roam bench\n  \
roam bench --repeat 5 --ns3 target/ns3-dumbbell/ns3-dumbbell   # a program built before\n  \
roam bench --scenario scenarios/validation/dumbbell-lossy.toml --repeat 1 --no-ns3"
    )]
    Bench(BenchArgs),
    /// Reproduce a paper's experiments and compare with its published numbers.
    #[command(long_about = "Reproduce a paper's experiments in the simulator.\n\n\
Runs the scenario set under experiments/<NAME>/ over the paper's parameter grid and seeds, in \
parallel, and writes results/<NAME>/report.md (our table beside the paper's numbers, plots) and \
results/<NAME>/claims.json (one entry per claim: id, claim, ours, paper, verdict — holds, fails \
or not judged, computed from the measured numbers: a claim fails when a number it needs is \
missing or not finite, and is not judged when a confidence interval it takes as tolerance rests \
on fewer than 5 seeds), and every table as CSV under tables/ (one number per cell). --quick is a \
smoke test (fewer seeds, shorter runs, smaller transfers; the report says so at its top); --png \
adds a PNG copy of each plot.\n\n\
Examples:\n  \
roam reproduce --list\n  \
roam reproduce probing --quick\n  \
roam reproduce atl --out /tmp/atl\n  \
roam reproduce rcp --png   # PNG copies of the plots, for documents that take bitmaps only")]
    Reproduce(ReproduceArgs),
    /// Serve the files of a directory over real UDP (RCP and TCP-like), to `roam get`.
    #[command(long_about = crate::cmd::serve::LONG_ABOUT)]
    Serve(crate::cmd::serve::ServeArgs),
    /// Download one file from `roam serve` servers, verified: RCP, or R²CP over several paths
    /// or mirrors (surviving a lost path or server), or TCP-like.
    #[command(long_about = crate::cmd::get::LONG_ABOUT)]
    Get(crate::cmd::get::GetArgs),
    /// Measure goodput over real UDP per engine and controller, like iperf3.
    #[command(long_about = crate::cmd::perf::LONG_ABOUT)]
    Perf(crate::cmd::perf::PerfArgs),
    /// Emulate a scenario's links on real packets between network namespaces (root only).
    #[command(long_about = crate::cmd::emu::LONG_ABOUT)]
    Emu(crate::cmd::emu::EmuArgs),
    /// Head-to-head downloads over emulated paths: kernel TCP, MPTCP, aria2 and roam (root only).
    #[command(long_about = crate::cmd::testbed::LONG_ABOUT)]
    Testbed(crate::cmd::testbed::TestbedArgs),
    /// The test bed's UDP/TCP/HTTP probe (used inside its namespaces).
    #[command(hide = true)]
    EmuProbe {
        /// The probe's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
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
    /// A smoke test: fewer seeds, shorter runs, smaller transfers (numbers not comparable with
    /// the paper's).
    #[arg(long)]
    pub quick: bool,
    /// Output folder [default: results/<NAME>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Repository root holding experiments/ [default: the current folder or the first parent
    /// that holds experiments/ and scenarios/, else the clone this roam was built in].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
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
    /// Write the datagrams crossing every link (or --pcap-link's) to this pcapng file, for
    /// Wireshark or tshark: in IPv4/UDP with addresses 10.0.0.0 + k (the k-th host interface in
    /// scenario order) and the simulator's ports, simulated timestamps, one interface per link
    /// direction; each datagram put on the wire, and each drop with the comment
    /// `roam: dropped (<event>)`. Large: use short runs or --pcap-link.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// With --pcap: capture only this link (`NAME`: both directions; `NAME:fwd` or
    /// `NAME:rev`: one).
    #[arg(long, value_name = "NAME", requires = "pcap")]
    pub pcap_link: Option<String>,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Refuse to run when the scenario is estimated to need more memory than this, e.g.
    /// `--max-memory 6GiB` [default: what the machine, its cgroup and ulimit -v allow].
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: Option<u64>,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Arguments of `roam sweep`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    /// `roam sweep merge DIR...`: join the shards' outputs.
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// Scenario file (TOML).
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,
    /// A parameter to sweep: dotted key and comma-separated values, e.g.
    /// `--param link.bottleneck.forward.loss=0,0.01` (repeatable; the grid is their product).
    #[arg(long = "param", value_name = "KEY=V1,V2,...", value_parser = parse_param)]
    pub params: Vec<Param>,
    /// Number of seeds per grid point (seeds 1..=N).
    #[arg(long, value_name = "N", required = true,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub seeds: Option<u64>,
    /// Run only shard I of N (1 ≤ I ≤ N): every N-th run of the grid × seeds list, from the
    /// I-th on. Writes `shard-I-of-N.jsonl` (the runs' records) into the output folder instead
    /// of tables and plots; `roam sweep merge` joins the N shards into the files one sweep
    /// writes, byte for byte. For batch schedulers (a SLURM job array: `--shard
    /// $SLURM_ARRAY_TASK_ID/N`).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Parallel runs [default: all cores].
    #[arg(long, short, value_name = "J", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Folder for the CSV tables and plots [default: out/sweep-<scenario-name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Fixed overrides applied to every run, e.g. `--set run.duration=60` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_override)]
    pub set: Vec<Override>,
    /// Title of the plots [default: the scenario's name].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// X-axis label of the plots [default: the swept parameter's name and unit].
    #[arg(long, value_name = "TEXT")]
    pub xlabel: Option<String>,
    /// A name for a swept parameter or one of its values in axis labels, legends and ticks,
    /// e.g. `--label link.wlan.forward.loss="wireless loss"` or `--label newreno=NewReno`
    /// (repeatable).
    #[arg(long = "label", value_name = "KEY=TEXT", value_parser = parse_label)]
    pub labels: Vec<Override>,
    /// Also write every SVG plot as a PNG beside it (2× scale, text in an installed sans-serif
    /// font such as DejaVu Sans; fails at once if no font is installed).
    #[arg(long)]
    pub png: bool,
    /// Refuse to run when the parallel runs are estimated to need more memory than this, e.g.
    /// `--max-memory 6GiB` [default: what the machine, its cgroup and ulimit -v allow].
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub max_memory: Option<u64>,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Subcommands of `roam sweep`.
#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Join the outputs of `roam sweep --shard I/N` (every shard's `shard-I-of-N.jsonl`, in the
    /// given folders) into the tables and plots one `roam sweep` writes.
    Merge(SweepMergeArgs),
}

/// Arguments of `roam sweep merge`.
#[derive(Debug, Args)]
pub struct SweepMergeArgs {
    /// Folders holding the shards' `shard-I-of-N.jsonl` files (all N of one sweep).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Folder for the CSV tables and plots [default: out/sweep-<scenario-name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write every SVG plot as a PNG beside it (as `roam sweep --png`).
    #[arg(long)]
    pub png: bool,
}

/// Parses `I/N` with 1 ≤ I ≤ N.
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("expected I/N such as 2/8, got {s:?}"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("expected I/N such as 2/8, got {s:?}"))
    };
    let (i, n) = (num(i)?, num(n)?);
    if n == 0 || i == 0 || i > n || n > 1_000_000 {
        return Err(format!("shard {i}/{n}: need 1 ≤ I ≤ N ≤ 1000000"));
    }
    Ok((i, n))
}

/// Arguments of `roam bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenario to benchmark (repeatable) [default: the validation dumbbells
    /// scenarios/validation/dumbbell-single.toml and dumbbell-shared.toml (1 and 20 flows,
    /// 300 s), then scenarios/scale/dumbbell-200.toml and dumbbell-1000.toml (60 s)].
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenarios: Vec<PathBuf>,
    /// Runs per scenario; the median wall time is reported.
    #[arg(long, value_name = "R", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// ns-3 dumbbell program to run in this session [default: built from
    /// bench/ns3/ns3-dumbbell.cc when ns-3 is installed].
    #[arg(long, value_name = "PATH", conflicts_with = "no_ns3")]
    pub ns3: Option<PathBuf>,
    /// Do not run ns-3 (roam's figures only, no speed-up).
    #[arg(long)]
    pub no_ns3: bool,
    /// Repository root holding scenarios/ and bench/ [default: found from the current folder
    /// or the roam executable].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Parses a memory size such as `6GiB`, `512MiB` or a plain number of bytes.
pub fn parse_memory(s: &str) -> Result<u64, String> {
    let v = match s.trim().parse::<u64>() {
        Ok(n) => toml::Value::Integer(i64::try_from(n).map_err(|_| "too large".to_string())?),
        Err(_) => toml::Value::String(s.trim().to_string()),
    };
    match roam_sim::scenario::units::size(&v) {
        Ok(0) => Err("must be more than 0 bytes".into()),
        r => r,
    }
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

/// Parses `key=text` for `--label` (the text may hold spaces and `=`).
pub fn parse_label(s: &str) -> Result<Override, String> {
    let (key, text) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=TEXT (e.g. newreno=NewReno), got `{s}`"))?;
    let (key, text) = (key.trim(), text.trim());
    if key.is_empty() || text.is_empty() {
        return Err(format!("expected KEY=TEXT with both parts, got `{s}`"));
    }
    Ok(Override {
        key: key.to_owned(),
        value: text.to_owned(),
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
    fn label_keeps_the_text_whole() {
        let l = parse_label("flow.f.cc = congestion control = cc").unwrap();
        assert_eq!(
            (l.key.as_str(), l.value.as_str()),
            ("flow.f.cc", "congestion control = cc")
        );
        assert!(parse_label("newreno").unwrap_err().contains("KEY=TEXT"));
        assert!(parse_label("=x").is_err() && parse_label("x=").is_err());
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

    /// The example command lines of a help text: the lines starting with `roam ` after its
    /// `Examples` heading, without a trailing comment, pipe or redirection.
    pub(crate) fn examples(help: &str) -> Vec<String> {
        help.lines()
            .map(str::trim)
            .skip_while(|l| !l.starts_with("Examples"))
            .filter(|l| l.starts_with("roam "))
            .map(|l| {
                let cut = [" # ", " | ", " > "]
                    .iter()
                    .filter_map(|sep| l.find(sep))
                    .min()
                    .unwrap_or(l.len());
                l[..cut].trim().to_owned()
            })
            .collect()
    }

    /// Splits a command line into words, honouring double and single quotes.
    pub(crate) fn words(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quote: Option<char> = None;
        let mut any = false;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => cur.push(c),
                (None, '"' | '\'') => {
                    quote = Some(c);
                    any = true;
                }
                (None, c) if c.is_whitespace() => {
                    if any || !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    any = false;
                }
                (None, c) => cur.push(c),
            }
        }
        if any || !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    #[test]
    fn every_help_example_parses_and_names_files_that_exist() {
        use clap::CommandFactory;
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut cmd = Cli::command();
        let mut helps = vec![cmd.render_long_help().to_string()];
        for sub in ["sim", "sweep", "bench", "reproduce"] {
            let sc = cmd.find_subcommand_mut(sub).expect("subcommand");
            helps.push(sc.render_long_help().to_string());
        }
        let mut n = 0;
        for line in helps.iter().flat_map(|h| examples(h)) {
            let args = words(&line);
            if let Err(e) = Cli::try_parse_from(&args) {
                panic!("`{line}` does not parse: {e}");
            }
            for w in args.iter().filter(|w| w.ends_with(".toml")) {
                assert!(
                    repo.join(w).is_file(),
                    "`{line}` names {w}, which does not exist"
                );
            }
            n += 1;
        }
        assert!(n >= 15, "{n} examples");
    }

    #[test]
    fn example_lines_are_split_like_a_shell() {
        assert_eq!(
            words("roam sweep a.toml --title \"A b\" --label x='y z'"),
            ["roam", "sweep", "a.toml", "--title", "A b", "--label", "x=y z"]
        );
        assert_eq!(
            examples(
                "roam drives engines\nExamples:\n  roam sim a.toml --format json | jq .x\n  roam bench   # note"
            ),
            ["roam sim a.toml --format json", "roam bench"]
        );
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
