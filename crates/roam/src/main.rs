//! `roam`: the command-line tool of the roam transport-protocol suite.
//!
//! The simulator's commands: `roam sim` runs one scenario, `roam sweep` a grid of parameters ×
//! seeds in parallel, `roam reproduce` a paper's experiments, `roam bench` the simulator's speed
//! against ns-3. The runtime's, over real UDP: `roam serve`, `roam get` (RCP, R²CP over several
//! paths or mirrors, TCP-like), `roam perf`; and `roam emu` / `roam testbed` between network
//! namespaces. See `roam --help` and `docs/ARCHITECTURE.md`.

#![deny(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use roam::cli::{Cli, Command};
use roam::{cmd, error};

fn main() -> ExitCode {
    init_diagnostics();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap formats usage errors (exit 2) and --help/--version (exit 0) itself.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let outcome = match &cli.command {
        Command::Sim(args) => cmd::sim::run(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Reproduce(args) => cmd::reproduce::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Get(args) => cmd::get::run(args),
        Command::Perf(args) => cmd::perf::run(args),
        Command::Emu(args) => match cmd::emu::run(args) {
            // The wrapped command's status.
            Ok(code) => return ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => Err(e),
        },
        Command::Testbed(args) => cmd::testbed::run(args),
        Command::EmuProbe { args } => {
            let mut all = vec!["roam emu-probe".to_string()];
            all.extend(args.iter().cloned());
            roam_emu::probe::main(&all).map_err(error::CliError::Emu)
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            cmd::note(&format!("error: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// The runtime's diagnostics (`tracing` events of roam-net: pipes opened, stalled and failed,
/// per-pipe state of R²CP downloads) go to stderr when `ROAM_LOG` names a level or filter,
/// e.g. `ROAM_LOG=debug roam get …` or `ROAM_LOG=roam_net::fetch=trace`. Without it nothing
/// is recorded.
fn init_diagnostics() {
    let Ok(filter) = std::env::var("ROAM_LOG") else {
        return;
    };
    match tracing_subscriber::EnvFilter::try_new(&filter) {
        Ok(filter) => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init(),
        Err(e) => eprintln!("roam: ignoring ROAM_LOG={filter:?}: {e}"),
    }
}
