//! `roam perf`: goodput of one connection per engine and controller over real UDP, like
//! iperf3 (`roam perf server` on one side, `roam perf client` on the other).

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use roam_net::{perf_rcp, perf_tcp, Amount, LocalSpec, Server};
use roam_proto::cc::CcKind;
use roam_proto::rcp::RcpCc;

use super::Format;
use crate::error::{CliError, Result};

/// `roam perf --help` text.
pub const LONG_ABOUT: &str = "Measure goodput over real UDP, like iperf3.\n\n\
`roam perf server` serves generated objects (RCP) and discards TCP-like streams; `roam perf \
client` runs one connection per (protocol, controller) in turn for --bytes or --seconds and \
prints one summary table (or one JSON object with --format json). RCP bytes are checked against \
the generated pattern; TCP-like time ends when the close is acknowledged.\n\n\
Examples:\n  \
roam perf server --listen 127.0.0.1:7100\n  \
roam perf client --server 127.0.0.1:7100 --seconds 5\n  \
roam perf client --server 10.77.3.2:7100 --via 10.77.1.2 --protocol rcp --cc newreno,westwood --bytes 100000000 --format json";

/// Arguments of `roam perf`.
#[derive(Debug, Args)]
pub struct PerfArgs {
    /// Server or client.
    #[command(subcommand)]
    pub side: PerfSide,
}

/// The two sides.
#[derive(Debug, Subcommand)]
pub enum PerfSide {
    /// Serve until interrupted.
    Server {
        /// Address and port to listen on (repeatable).
        #[arg(long, value_name = "ADDR:PORT", required = true)]
        listen: Vec<SocketAddr>,
    },
    /// Measure against a server.
    Client(ClientArgs),
}

/// Protocols `roam perf client` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerfProtocol {
    /// RCP (receiver-driven).
    Rcp,
    /// The TCP-like engine.
    Tcp,
}

/// Arguments of `roam perf client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The server.
    #[arg(long, value_name = "ADDR:PORT")]
    pub server: SocketAddr,
    /// Local address to send from [default: any].
    #[arg(long, value_name = "LOCAL_ADDR:PORT")]
    pub via: Option<SocketAddr>,
    /// Protocols to measure (comma-separated) [default: rcp,tcp].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub protocol: Vec<PerfProtocol>,
    /// Controllers (comma-separated; each applies to the protocols that know it)
    /// [default: newreno].
    #[arg(long, value_delimiter = ',', value_name = "CC")]
    pub cc: Vec<String>,
    /// Bytes per measurement.
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub bytes: Option<u64>,
    /// Seconds per measurement [default: 5].
    #[arg(long, value_name = "S")]
    pub seconds: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `roam perf`.
pub fn run(args: &PerfArgs) -> Result<()> {
    let rt = super::runtime()?;
    match &args.side {
        PerfSide::Server { listen } => rt.block_on(async {
            let dir = std::env::temp_dir();
            let locals: Vec<LocalSpec> = listen.iter().copied().map(LocalSpec::addr).collect();
            // The served directory is irrelevant: perf objects are generated. The temporary
            // directory exists everywhere.
            let server = Server::bind(&dir, &locals)?;
            let bound: Vec<String> = (0..locals.len())
                .filter_map(|i| server.local_addr(i).map(|a| a.to_string()))
                .collect();
            super::note(&format!("perf server on {}", bound.join(", ")));
            server.run().await?;
            Ok(())
        }),
        PerfSide::Client(c) => client(&rt, c),
    }
}

fn client(rt: &tokio::runtime::Runtime, c: &ClientArgs) -> Result<()> {
    let amount = match (c.bytes, c.seconds) {
        (Some(n), _) => Amount::Bytes(n),
        (None, s) => {
            let s = s.unwrap_or(5.0);
            if !(s.is_finite() && s > 0.0 && s <= 3600.0) {
                return Err(CliError::Usage("--seconds: expected 0 < S <= 3600".into()));
            }
            Amount::Duration(Duration::from_secs_f64(s))
        }
    };
    let via = c.via.unwrap_or_else(|| {
        if c.server.is_ipv4() {
            SocketAddr::from(([0, 0, 0, 0], 0))
        } else {
            SocketAddr::from(([0u16; 8], 0))
        }
    });
    let protocols = if c.protocol.is_empty() {
        vec![PerfProtocol::Rcp, PerfProtocol::Tcp]
    } else {
        c.protocol.clone()
    };
    let ccs = if c.cc.is_empty() {
        vec!["newreno".to_string()]
    } else {
        c.cc.clone()
    };
    let mut rows = Vec::new();
    for p in &protocols {
        for cc in &ccs {
            let report = match p {
                PerfProtocol::Rcp => {
                    let Ok(k) = cc.parse::<RcpCc>() else { continue };
                    rt.block_on(perf_rcp(c.server, via, k, amount))?
                }
                PerfProtocol::Tcp => {
                    let Ok(k) = cc.parse::<CcKind>() else {
                        continue;
                    };
                    rt.block_on(perf_tcp(c.server, via, k, amount))?
                }
            };
            rows.push((format!("{p:?}").to_lowercase(), cc.clone(), report));
        }
    }
    if rows.is_empty() {
        return Err(CliError::Usage(
            "--cc: no controller applies to the protocols asked for".into(),
        ));
    }
    match c.format {
        Format::Json => {
            let runs: Vec<_> = rows
                .iter()
                .map(|(p, cc, r)| {
                    serde_json::json!({"protocol": p, "cc": cc, "bytes": r.bytes,
                        "seconds": r.seconds, "goodput_mbps": r.bps() / 1e6})
                })
                .collect();
            println!(
                "{}",
                serde_json::json!({"server": c.server.to_string(), "via": via.to_string(), "runs": runs})
            );
        }
        Format::Table => {
            let mut t = comfy_table::Table::new();
            t.set_header(["protocol", "cc", "path", "bytes", "seconds", "goodput Mb/s"]);
            for (p, cc, r) in &rows {
                t.add_row([
                    p.clone(),
                    cc.clone(),
                    format!("{via} → {}", c.server),
                    r.bytes.to_string(),
                    format!("{:.2}", r.seconds),
                    format!("{:.1}", r.bps() / 1e6),
                ]);
            }
            println!("{t}");
        }
    }
    Ok(())
}
