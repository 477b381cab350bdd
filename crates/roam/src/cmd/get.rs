//! `roam get`: download one file from `roam serve` servers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use roam_net::{fetch, FetchPlan};
use roam_proto::rcp::RcpCc;

use crate::cli::Format;
use crate::error::{CliError, Result};

/// `roam get --help` text.
pub const LONG_ABOUT: &str = "Download one file from `roam serve` servers.\n\n\
The object's length and BLAKE3 digest are fetched first (.roam-meta/NAME); the bytes go to \
FILE.roam-part and are renamed to FILE only once length and digest match, so a failed download \
never leaves a partial file under the final name. When the local address in use or the server \
stops delivering for --stall seconds, the download continues on a new connection from the next \
--via address or --server, asking only for the bytes not yet received. Exits non-zero with a \
one-line message if it cannot complete.\n\n\
Examples:\n  \
roam get big.iso --server 127.0.0.1:7000 -o big.iso\n  \
roam get big.iso --server 10.0.1.1:7000 --server 10.0.2.1:7000 --via 10.9.1.2 --via 10.9.2.2 -o big.iso\n  \
roam get big.iso --server 127.0.0.1:7000 --cc westwood --format json -o /tmp/big.iso";

/// The engine a download runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// RCP: receiver-driven, resumable from another local address or server.
    Rcp,
}

/// Arguments of `roam get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// Name of the object (its path under the server's directory).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Server address and port (repeatable: mirrors, tried in order).
    #[arg(long, value_name = "ADDR:PORT", required = true)]
    pub server: Vec<SocketAddr>,
    /// Local address to send from (repeatable: interfaces, tried in order; port optional)
    /// [default: any address of the server's family].
    #[arg(long, value_name = "LOCAL_ADDR", value_parser = parse_local)]
    pub via: Vec<SocketAddr>,
    /// Transport engine.
    #[arg(long, value_enum, default_value_t = Protocol::Rcp)]
    pub protocol: Protocol,
    /// Receiver congestion controller (newreno, westwood, stp, …).
    #[arg(long, value_name = "CC", default_value = "newreno")]
    pub cc: String,
    /// Seconds without progress before switching to another local address or server.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub stall: f64,
    /// Where to write the file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `ADDR` or `ADDR:PORT`.
fn parse_local(s: &str) -> std::result::Result<SocketAddr, String> {
    s.parse::<SocketAddr>()
        .or_else(|_| {
            s.parse::<std::net::IpAddr>()
                .map(|ip| SocketAddr::new(ip, 0))
        })
        .map_err(|_| format!("{s:?} is not an address (expected 10.0.0.2 or 10.0.0.2:5000)"))
}

/// Runs `roam get`.
pub fn run(args: &GetArgs) -> Result<()> {
    let cc: RcpCc = args
        .cc
        .parse()
        .map_err(|e| CliError::Usage(format!("--cc: {e}")))?;
    if !(args.stall.is_finite() && args.stall > 0.0 && args.stall < 86_400.0) {
        return Err(CliError::Usage(
            "--stall: expected seconds between 0 and 86400".into(),
        ));
    }
    let vias = if args.via.is_empty() {
        let any: SocketAddr = if args.server[0].is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        }
        .parse()
        .map_err(|_| CliError::Usage("no default local address".into()))?;
        vec![any]
    } else {
        args.via.clone()
    };
    let mut plan = FetchPlan::new(&args.name, args.server.clone(), vias);
    plan.cc = cc;
    plan.stall = Duration::from_secs_f64(args.stall);
    let bar = progress_bar(args.quiet);
    let rt = super::serve::runtime()?;
    let report = rt.block_on(fetch(&plan, &args.output, |p| {
        if let Some(t) = p.total {
            bar.set_length(t);
        }
        bar.set_position(p.bytes);
        bar.set_message(format!("{} → {}", p.via, p.server));
    }));
    bar.finish_and_clear();
    let report = report?;
    let mbps = |bytes: u64| bytes as f64 * 8.0 / report.seconds.max(1e-9) / 1e6;
    match args.format {
        Format::Json => {
            let paths: Vec<_> = report
                .per_path
                .iter()
                .map(|(via, server, bytes)| {
                    serde_json::json!({"via": via.to_string(), "server": server.to_string(), "bytes": bytes})
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({
                    "name": args.name,
                    "file": args.output.display().to_string(),
                    "bytes": report.bytes,
                    "blake3": blake3_hex(&report.digest),
                    "seconds": report.seconds,
                    "goodput_mbps": mbps(report.bytes),
                    "switches": report.switches,
                    "paths": paths,
                })
            );
        }
        Format::Table => {
            println!(
                "{}: {} bytes in {:.2} s ({:.1} Mb/s), BLAKE3 {} verified, {} switch(es)",
                args.output.display(),
                report.bytes,
                report.seconds,
                mbps(report.bytes),
                blake3_hex(&report.digest),
                report.switches
            );
            for (via, server, bytes) in &report.per_path {
                println!("  {via} → {server}: {bytes} bytes");
            }
        }
    }
    Ok(())
}

fn blake3_hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn progress_bar(quiet: bool) -> ProgressBar {
    use std::io::IsTerminal;
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let pb = ProgressBar::with_draw_target(None, target);
    let style = ProgressStyle::with_template(
        "{msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb
}
