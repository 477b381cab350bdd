//! `roam get`: download one file from `roam serve` servers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use roam_net::{fetch, fetch_tcp, FetchPlan};
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
one-line message if it cannot complete. With --protocol tcp the object is streamed by the \
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
    /// RCP: receiver-driven, resumable from another local address or server.
    Rcp,
    /// The TCP-like engine: the server streams the object; a failed server is left for the
    /// next one, which sends the object from its first byte (first --via only).
    Tcp,
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
    /// Facts about a local link, handed to every connection opened on that address
    /// (repeatable): ADDR:pw=0.01,dw=20ms,bw=2Mbps,per=0.01 (add `wired` for a wired hop).
    /// Used by controllers that adapt to the wireless hop (atl) and reported to the server
    /// over TCP.
    #[arg(long, value_name = "ADDR:FACTS")]
    pub link: Vec<String>,
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
    plan.links = super::serve::link_table(&args.link)?;
    let bar = progress_bar(args.quiet);
    let rt = super::serve::runtime()?;
    let mut rates = PathRates::default();
    let show = |p: &roam_net::Progress| {
        if let Some(t) = p.total {
            bar.set_length(t);
        }
        bar.set_position(p.bytes);
        if let Some(msg) = rates.update(p, roam_net::Clock::wall()) {
            bar.set_message(msg);
        }
    };
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

/// The rate of each (local address, server) path for the progress bar: bytes each path
/// delivered, averaged over windows of at least half a second (a path not in use decays to 0).
#[derive(Default)]
struct PathRates {
    /// (via, server, bits per second).
    paths: Vec<(SocketAddr, SocketAddr, f64)>,
    /// Start of the current window, and the total byte count then.
    window: Option<(std::time::Instant, u64)>,
    /// Bytes delivered in the current window, per path index.
    delta: Vec<u64>,
    last_bytes: u64,
}

impl PathRates {
    /// Takes a progress report; returns the new message once a window closed.
    fn update(&mut self, p: &roam_net::Progress, now: std::time::Instant) -> Option<String> {
        let i = match self
            .paths
            .iter()
            .position(|(v, s, _)| (*v, *s) == (p.via, p.server))
        {
            Some(i) => i,
            None => {
                self.paths.push((p.via, p.server, 0.0));
                self.delta.push(0);
                self.paths.len() - 1
            }
        };
        self.delta[i] += p.bytes.saturating_sub(self.last_bytes);
        self.last_bytes = p.bytes;
        let (start, _) = *self.window.get_or_insert((now, p.bytes));
        let secs = now.duration_since(start).as_secs_f64();
        if secs < 0.5 {
            return (self.paths.len() == 1 && self.paths[0].2 == 0.0)
                .then(|| format!("{} → {}", p.via, p.server));
        }
        for (path, d) in self.paths.iter_mut().zip(self.delta.iter_mut()) {
            path.2 = *d as f64 * 8.0 / secs;
            *d = 0;
        }
        self.window = Some((now, p.bytes));
        Some(
            self.paths
                .iter()
                .map(|(v, s, bps)| format!("{v} → {s} {:.1} Mb/s", bps / 1e6))
                .collect::<Vec<_>>()
                .join(" | "),
        )
    }
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
    use std::time::Duration;

    use super::*;

    fn progress(bytes: u64, via: &str, server: &str) -> roam_net::Progress {
        roam_net::Progress {
            bytes,
            total: Some(10_000_000),
            via: via.parse().unwrap(),
            server: server.parse().unwrap(),
            switches: 0,
        }
    }

    #[test]
    fn each_path_shows_its_own_rate() {
        let t0 = roam_net::Clock::wall();
        let mut r = PathRates::default();
        let (a, b, s) = ("10.0.0.1:1", "10.0.0.2:1", "10.0.0.9:7000");
        assert!(r.update(&progress(0, a, s), t0).is_some());
        r.update(&progress(250_000, a, s), t0 + Duration::from_millis(200));
        // One second: 1 MB over a (8 Mb/s), then a switch and 0.5 MB over b (4 Mb/s).
        r.update(&progress(1_000_000, a, s), t0 + Duration::from_millis(400));
        let msg = r
            .update(&progress(1_500_000, b, s), t0 + Duration::from_secs(1))
            .expect("a window closed");
        assert_eq!(
            msg,
            "10.0.0.1:1 → 10.0.0.9:7000 8.0 Mb/s | 10.0.0.2:1 → 10.0.0.9:7000 4.0 Mb/s"
        );
        // a delivers nothing more: its rate falls to 0.
        let msg = r
            .update(&progress(2_000_000, b, s), t0 + Duration::from_secs(2))
            .unwrap();
        assert!(
            msg.starts_with("10.0.0.1:1 → 10.0.0.9:7000 0.0 Mb/s |"),
            "{msg}"
        );
    }
}
