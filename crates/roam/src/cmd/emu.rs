//! `roam emu`: emulate a scenario's links between network namespaces, behind a command or
//! between two existing namespaces (`roam-emu`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use roam_emu::{Layout, Running, Selection, Side};

use crate::error::{CliError, Result};

/// `roam emu --help` text.
pub const LONG_ABOUT: &str = "Emulate links on real packets: each [[link]] of LINK.toml becomes \
one path between two network namespaces (a pair of TUN devices), each direction running the \
simulator's own link model in real time — rate or Mahimahi trace, one-way delay, drop-tail \
queue, Bernoulli and Gilbert–Elliott loss, blackouts and the link's [[event]] changes.\n\n\
LINK.toml is a scenario file (its flows are ignored) or just [[link]] entries. Each link's `a` \
end (or --inner NODE's end) is the inner side: the command's namespace. Path k has the inner \
address 10.S.k.1 and the outer 10.S.k.2 (/24, S = --subnet, k from 1); with several paths the \
inner side routes by source address, so each address leaves over its own path.\n\n\
With `-- COMMAND`, the command runs in a new namespace (--netns, default rn<pid>-emu) behind \
the links, the outer side being this namespace or --outer-netns; ROAM_EMU_PEER (path 1's outer \
address), ROAM_EMU_PEERS and ROAM_EMU_ADDRS are set for it. roam emu exits with its status. \
With --join INNER OUTER it links two existing namespaces until Ctrl-C or --duration (or, with a \
command, until the command, run in INNER, exits). Everything made — namespaces, TUN devices, \
routing rules — is removed on exit, also on Ctrl-C and when the command fails. Root only.\n\n\
Examples:\n  \
roam emu scenarios/examples/lte-trace.toml --link lte --inner phone -- ping -c 3 10.99.1.2\n  \
roam emu links.toml --join rn1-mobile rn1-server --duration 60s --stats wire.json";

/// Arguments of `roam emu`.
#[derive(Debug, Args)]
pub struct EmuArgs {
    /// The links: a scenario file, or a file of `[[link]]` entries.
    #[arg(value_name = "LINK.toml")]
    pub file: PathBuf,
    /// Emulate only these links, in this order (repeatable; default: every link).
    #[arg(long, value_name = "NAME")]
    pub link: Vec<String>,
    /// The node whose end of each link is the inner side (default: each link's `a`).
    #[arg(long, value_name = "NODE")]
    pub inner: Option<String>,
    /// Seed of the random loss (default: the file's run.seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Join two existing namespaces instead of making one for the command.
    #[arg(long, num_args = 2, value_names = ["INNER", "OUTER"])]
    pub join: Option<Vec<String>>,
    /// The namespace made for the command (default rn<pid>-emu; refused if it exists).
    #[arg(long, value_name = "NAME", conflicts_with = "join")]
    pub netns: Option<String>,
    /// An existing namespace for the outer side (default: this one).
    #[arg(long, value_name = "NAME", conflicts_with = "join")]
    pub outer_netns: Option<String>,
    /// Second byte of the paths' 10.S.k.0/24 subnets.
    #[arg(long, default_value_t = 99)]
    pub subnet: u8,
    /// Stop after this long (e.g. 30s, 2m).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Write the wire's counters (per direction: read, written, drops, bytes per second) here
    /// as JSON.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// The command to run behind the links (after --).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let v = toml::Value::String(s.to_string());
    roam_sim::scenario::units::duration(&v)
}

impl From<roam_emu::EmuError> for CliError {
    fn from(e: roam_emu::EmuError) -> CliError {
        CliError::Emu(e.to_string())
    }
}

/// Runs `roam emu`; returns the command's exit code (0 without a command).
pub fn run(args: &EmuArgs) -> Result<i32> {
    let sel = Selection {
        links: args.link.clone(),
        inner: args.inner.clone(),
        seed: args.seed,
    };
    let paths = roam_emu::load(&args.file, &sel)?;
    let (inner, outer) = match &args.join {
        Some(v) => (Side::Join(v[0].clone()), Side::Join(v[1].clone())),
        None => {
            if args.command.is_empty() {
                return Err(CliError::Emu(
                    "give a command after -- (or --join INNER OUTER to link two namespaces)".into(),
                ));
            }
            let own = args
                .netns
                .clone()
                .unwrap_or_else(|| roam_emu::owned_name(""));
            let outer = args.outer_netns.clone().map_or(Side::Here, Side::Join);
            (Side::Create(own), outer)
        }
    };
    let layout = Layout {
        inner,
        outer,
        subnet: args.subnet,
        prefix: roam_emu::unique_prefix(),
    };
    super::testbed::report_stale();
    // Signals are caught before anything is made: a Ctrl-C while the namespaces and devices
    // are being set up stops the run like one that comes later (everything removed, 130),
    // instead of killing roam with them half made (seen under load: SIGINT 200 ms after the
    // namespace appeared, before the handlers of `wrap` were in place).
    let stop = Arc::new(AtomicBool::new(false));
    let _signals = roam_emu::SignalGuard::new(&stop)?;
    let running = Running::start_with_stop(paths, &layout, args.duration, stop)?;
    let (code, report) = if args.command.is_empty() {
        (0, roam_emu::serve(running, args.duration)?)
    } else {
        let (status, report) = roam_emu::wrap(running, &args.command)?;
        // Killed by a signal or by us: 130, as a shell reports an interrupted command.
        (status.and_then(|s| s.code()).unwrap_or(130), report)
    };
    if let Some(path) = &args.stats {
        let text = stats_json(&report);
        std::fs::write(path, text).map_err(|source| CliError::WriteFile {
            path: path.clone(),
            source,
        })?;
    }
    Ok(code)
}

/// The wire's counters as JSON.
fn stats_json(r: &roam_emu::WireReport) -> String {
    let dir = |d: &roam_emu::DirReport| {
        serde_json::json!({
            "read": d.read,
            "written": d.written,
            "bytes_written": d.bytes_written,
            "queue_drops": d.model.queue_drops,
            "impairment_drops": d.model.impairment_drops,
            "write_errors": d.write_errors,
            "overflow": d.overflow,
            "bytes_per_second": d.per_second,
        })
    };
    let paths: Vec<_> = r
        .paths
        .iter()
        .map(|[up, down]| serde_json::json!({ "up": dir(up), "down": dir(down) }))
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "elapsed_s": r.elapsed.as_secs_f64(),
        "paths": paths,
    }))
    .unwrap_or_default()
}
