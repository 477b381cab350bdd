//! `roam get`: download one file from `roam serve` servers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use roam_net::{fetch, fetch_tcp, FetchPlan};
use roam_proto::r2cp::Scheme;
use roam_proto::rcp::RcpCc;

use crate::cli::Format;
use crate::error::{CliError, Result};

/// `roam get --help` text.
pub const LONG_ABOUT: &str = "Download one file from `roam serve` servers.\n\n\
The object's length and BLAKE3 digest are fetched first (.roam-meta/NAME); the bytes go to \
FILE.roam-part and are renamed to FILE only once length and digest match, so a failed download \
never leaves a partial file under the final name. With one --via and one --server the download \
is one RCP connection; when it stops delivering for --stall seconds a new connection asks only \
for the bytes not yet received. With more than one --via or --server it runs over R²CP: one pipe \
per (via, server) pair, their bandwidths added, data assigned to pipes by --scheme. A pipe whose \
local address fails (a socket error, the interface going down) or that delivers nothing for \
--stall seconds is removed while the transfer runs, its outstanding requests moved to the other \
pipes; its pair gets a new pipe after a backoff (0.25 s doubling to 8 s), so an interface that \
comes back or a server that restarts is used again. The progress bar shows each pipe's rate. \
Exits non-zero with a one-line message if it cannot complete. With --protocol tcp the object is streamed by the \
TCP-like engine (verified the same way); a server that fails is left for the next --server, \
which sends the object again from its first byte.\n\n\
Examples:\n  \
roam get big.iso --server 127.0.0.1:7000 -o big.iso\n  \
roam get big.iso --server 10.0.1.1:7000 --server 10.0.2.1:7000 --via 10.9.1.2 --via 10.9.2.2 -o big.iso\n  \
roam get big.iso --server 127.0.0.1:7000 --cc westwood --format json -o /tmp/big.iso\n  \
roam get big.iso --server 127.0.0.1:7000 --protocol tcp -o big.iso\n  \
roam get big.iso --server 10.0.1.1:7000 --via 10.9.1.2 --link 10.9.1.2:pw=0.01,dw=20ms,bw=2Mbps --cc atl -o big.iso";

/// The engine a download runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// RCP: receiver-driven; over R²CP (one pipe per via and server) when more than one
    /// --via or --server is given.
    Rcp,
    /// The TCP-like engine: the server streams the object; a failed server is left for the
    /// next one, which sends the object from its first byte (first --via only).
    Tcp,
}

/// The R²CP scheduling scheme (rcp-r2cp.txt §4.4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// R²CP: data bound by rank, the estimated arrival order.
    R2cp,
    /// R²CP-s: the next unbound data to each request.
    #[value(name = "r2cp-s")]
    R2cpS,
    /// APPS: stripes dealt round robin to the pipes.
    Apps,
}

impl SchemeArg {
    fn scheme(self) -> Scheme {
        match self {
            SchemeArg::R2cp => Scheme::Rank,
            SchemeArg::R2cpS => Scheme::Fcfs,
            SchemeArg::Apps => Scheme::Apps {
                stripe: APPS_STRIPE,
            },
        }
    }
}

/// APPS stripe: 16 segments of the runtime's 1400-byte MSS (docs/R2CP.md).
const APPS_STRIPE: u64 = 16 * 1400;

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
    /// How R²CP assigns data to pipes (several --via or --server): r2cp (by estimated
    /// arrival order), r2cp-s (first come, first served) or apps (striping).
    #[arg(long, value_enum, default_value_t = SchemeArg::R2cp)]
    pub scheme: SchemeArg,
    /// Receiver congestion controller (newreno, westwood, cubic, bbr, stp, rate, …).
    #[arg(long, value_name = "CC", default_value = "newreno")]
    pub cc: String,
    /// Seconds without progress before a connection (R²CP: a pipe) is abandoned.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub stall: f64,
    /// Where to write the file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Facts about a local link, handed to every connection opened on that address
    /// (repeatable): ADDR:pw=0.01,dw=20ms,bw=2Mbps,per=0.01 (add `wired` for a wired hop).
    /// Used by controllers that adapt to the wireless hop (atl) and reported to the server
    /// over TCP.
    #[arg(long, value_name = "ADDR:FACTS")]
    pub link: Vec<String>,
    /// A file of link facts: one ADDR:FACTS entry per line as for --link, `#` comments;
    /// --link entries override the file's for the same address.
    #[arg(long, value_name = "FILE")]
    pub links: Option<PathBuf>,
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
    let mut plan = FetchPlan::new(&args.name, args.server.clone(), vias.clone());
    plan.cc = cc;
    plan.scheme = args.scheme.scheme();
    plan.stall = Duration::from_secs_f64(args.stall);
    plan.links = super::serve::link_table(args.links.as_deref(), &args.link)?;
    let bar = progress_bar(args.quiet);
    let rt = super::serve::runtime()?;
    let show = |p: &roam_net::Progress| {
        if let Some(t) = p.total {
            bar.set_length(t);
        }
        bar.set_position(p.bytes);
        bar.set_message(pipe_rates(&p.pipes));
    };
    let multipath = args.protocol == Protocol::Rcp && (vias.len() > 1 || args.server.len() > 1);
    let report = rt.block_on(async {
        match args.protocol {
            Protocol::Rcp => fetch(&plan, &args.output, show).await,
            Protocol::Tcp => fetch_tcp(&plan, &args.output, show).await,
        }
    });
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
                    "protocol": protocol_name(args, multipath),
                    "switches": report.switches,
                    "paths": paths,
                })
            );
        }
        Format::Table => {
            println!(
                "{}: {} bytes in {:.2} s ({:.1} Mb/s) over {}, BLAKE3 {} verified, {} switch(es)",
                args.output.display(),
                report.bytes,
                report.seconds,
                mbps(report.bytes),
                protocol_name(args, multipath),
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

/// The engine the summary names: `rcp`, `tcp`, or the R²CP scheme.
fn protocol_name(args: &GetArgs, multipath: bool) -> &'static str {
    match args.protocol {
        Protocol::Tcp => "tcp",
        Protocol::Rcp if multipath => args.scheme.scheme().name(),
        Protocol::Rcp => "rcp",
    }
}

/// The progress bar's second line: each pipe (local address → server) and its rate; a pipe
/// not open now is marked `(down)`.
fn pipe_rates(pipes: &[roam_net::PipeProgress]) -> String {
    pipes
        .iter()
        .map(|p| {
            let down = if p.up { "" } else { " (down)" };
            format!(
                "{} → {} {:.1} Mb/s{down}",
                p.via,
                p.server,
                p.rate_bps / 1e6
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
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
        "[{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec}\n  {wide_msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe(via: &str, rate_bps: f64, up: bool) -> roam_net::PipeProgress {
        roam_net::PipeProgress {
            via: via.parse().unwrap(),
            server: "10.0.0.9:7000".parse().unwrap(),
            bytes: 1,
            rate_bps,
            up,
        }
    }

    #[test]
    fn each_pipe_shows_its_own_rate() {
        let msg = pipe_rates(&[
            pipe("10.0.0.1:1", 8e6, true),
            pipe("10.0.0.2:1", 0.0, false),
        ]);
        assert_eq!(
            msg,
            "10.0.0.1:1 → 10.0.0.9:7000 8.0 Mb/s | 10.0.0.2:1 → 10.0.0.9:7000 0.0 Mb/s (down)"
        );
    }
}
