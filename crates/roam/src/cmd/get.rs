//! `roam get`: download one file from `roam serve` servers.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use roam_net::{fetch, fetch_tcp, FetchPlan};
use roam_proto::r2cp::Scheme;
use roam_proto::rcp::RcpCc;

use super::Format;
use crate::error::{CliError, Result};

/// `roam get --help` text.
pub const LONG_ABOUT: &str = "Download one file from `roam serve` servers.\n\n\
The object's length and BLAKE3 digest are fetched first (.roam-meta/NAME; from every --server, \
cross-checked: the --blake3 pin's or a majority's, a mirror that disagrees is dropped and named; \
while a server is still hashing a large file the progress line says so and the client waits), \
then the BLAKE3 tree (.roam-tree/NAME), against which every 64 KiB-or-larger group is verified \
as it arrives: a mirror whose bytes fail is found out, dropped and named in the summary, and \
only the rest is fetched from the others. The bytes go to \
FILE.roam-part (created exclusively, never through a symlink, locked: a second download to the \
same FILE stops at once) and are renamed to FILE only once length and digest of the file as \
stored match, so a failed download never leaves a partial file under the final name. FILE is \
replaced only if it is a regular file; a character device or FIFO (/dev/null, a named pipe, \
/dev/stdout) is written into as the bytes arrive; anything else (a directory, a symlink to a \
file) is refused. With one --via and one --server the download \
is one RCP connection; when it stops delivering for --stall seconds a new connection asks only \
for the bytes not yet received, again and again with a backoff (up to 8 s) through an outage \
until --give-up-after seconds pass without a byte (R²CP and the TCP-like engine too, once connected). With more than one --via or --server it runs over R²CP: one pipe \
per (via, server) pair, their bandwidths added, data assigned to pipes by --scheme. A pipe whose \
local address fails (a socket error, the interface going down) or that delivers nothing for \
--stall seconds is removed while the transfer runs, its outstanding requests moved to the other \
pipes; its pair gets a new pipe after a backoff (0.25 s doubling to 8 s), so an interface that \
comes back or a server that restarts is used again. The progress display shows one line per pipe with its rate. \
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
    /// R²CP: couple the pipes' window increase (RFC 6356 LIA), so that two mirrors behind one
    /// access link take about one flow's share of it, not two. Off by default, as in upstream
    /// Linux MPTCP: a phone's Wi-Fi and cellular paths are disjoint, and coupling leaves a
    /// slow, long path nearly unused (8 + 2 Mb/s at 30/210 ms: 7.64 Mb/s coupled, 9.10 not).
    #[arg(long)]
    pub coupled: bool,
    /// Receiver congestion controller (newreno, westwood, cubic, bbr, stp, rate, …).
    #[arg(long, value_name = "CC", default_value = "newreno")]
    pub cc: String,
    /// Seconds without progress before a connection (R²CP: a pipe) is abandoned.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub stall: f64,
    /// Seconds without a byte after which a download gives up (every engine rides out
    /// outages until then, opening new connections or pipes after each --stall with a
    /// backoff up to 8 s; the progress line says it is waiting). Before any connection was ever established
    /// it gives up after a few attempts instead (a wrong address or a server that is down).
    #[arg(long, value_name = "SECONDS", default_value_t = 900.0)]
    pub give_up_after: f64,
    /// The object's expected BLAKE3 digest (64 hex digits, as a published checksum or b3sum
    /// gives it): a server whose metadata says otherwise is refused before the object is
    /// fetched, so neither a lying mirror nor the path can substitute the file.
    #[arg(long, value_name = "HEX")]
    pub blake3: Option<String>,
    /// Continue from FILE.roam-part left by an earlier download of the same object that was
    /// killed or gave up (only one of ours, never one another download holds): its bytes are
    /// kept and only the rest is fetched (RCP and R²CP; the TCP-like engine starts again);
    /// the whole file is verified as stored at the end, so a part file with wrong bytes (or
    /// from another version of the object) fails the download instead of passing.
    #[arg(long = "continue", short = 'c')]
    pub resume: bool,
    /// Where to write the file: a new or regular file (replaced once verified), or a
    /// character device or FIFO (written into).
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
    if let Some(bad) = args
        .server
        .iter()
        .find(|s| s.port() == 0 || s.ip().is_unspecified() || s.ip().is_multicast())
    {
        return Err(CliError::Usage(format!(
            "--server {bad}: expected a server's address and port (not port 0, not an \
             unspecified or multicast address)"
        )));
    }
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
    if !(args.give_up_after.is_finite()
        && args.give_up_after >= args.stall
        && args.give_up_after < 1e7)
    {
        return Err(CliError::Usage(
            "--give-up-after: expected seconds, at least --stall".into(),
        ));
    }
    let mut plan = FetchPlan::new(&args.name, args.server.clone(), vias.clone());
    plan.give_up_after = Duration::from_secs_f64(args.give_up_after);
    plan.resume = args.resume;
    if let Some(hex) = &args.blake3 {
        plan.expected_digest = Some(
            roam_net::parse_digest(hex)
                .map_err(|why| CliError::Usage(format!("--blake3: {why}")))?,
        );
    }
    plan.cc = cc;
    plan.scheme = args.scheme.scheme();
    plan.coupled = args.coupled;
    plan.stall = Duration::from_secs_f64(args.stall);
    plan.links = super::link_table(args.links.as_deref(), &args.link)?;
    let mut display = Display::new(args.quiet);
    let rt = super::runtime()?;
    let show = |p: &roam_net::Progress| display.show(p, args.give_up_after);
    let multipath = args.protocol == Protocol::Rcp && (vias.len() > 1 || args.server.len() > 1);
    let report = rt.block_on(async {
        match args.protocol {
            Protocol::Rcp => fetch(&plan, &args.output, show).await,
            Protocol::Tcp => fetch_tcp(&plan, &args.output, show).await,
        }
    });
    display.clear();
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
                    "dropped": report.dropped.iter().map(|(server, why)| {
                        serde_json::json!({"server": server.to_string(), "why": why})
                    }).collect::<Vec<_>>(),
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
            for (server, why) in &report.dropped {
                println!("  dropped {server}: {why}");
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

/// One pipe's progress line: local address → server and its rate; a pipe not open now is
/// marked `(down)`.
fn pipe_line(p: &roam_net::PipeProgress) -> String {
    let down = if p.up { "" } else { " (down)" };
    format!(
        "  {} → {} {:.1} Mb/s{down}",
        p.via,
        p.server,
        p.rate_bps / 1e6
    )
}

/// The status line under the bar, while the download waits: for the path to come back, or for
/// the server to finish computing the digest of a large file.
fn status_line(p: &roam_net::Progress, give_up_after: f64) -> Option<String> {
    if let Some((hashed, len)) = p.server_hashing {
        let pct = if len == 0 {
            100.0
        } else {
            hashed as f64 * 100.0 / len as f64
        };
        return Some(format!(
            "  waiting for {}: computing the digest, {pct:.0} % of {len} bytes",
            p.server
        ));
    }
    p.waiting.map(|idle| {
        format!(
            "  waiting for the path: no data for {idle:.0} s (gives up after {give_up_after:.0} s)"
        )
    })
}

/// The progress display on a terminal: the bar (bytes, total, rate), then one line per pipe
/// (indicatif's `MultiProgress`, so a line per (via, server) never wraps mid-address), or a
/// line saying the fetch waits for the path.
struct Display {
    multi: MultiProgress,
    bar: ProgressBar,
    /// The status line under the bar (waiting), shown only while waiting.
    status: Option<ProgressBar>,
    pipes: Vec<((SocketAddr, SocketAddr), ProgressBar)>,
}

impl Display {
    fn new(quiet: bool) -> Display {
        use std::io::IsTerminal;
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let bar = multi.add(ProgressBar::new(0));
        let style = ProgressStyle::with_template(
            "[{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Display {
            multi,
            bar,
            status: None,
            pipes: Vec::new(),
        }
    }

    fn line(&self) -> ProgressBar {
        let line = self.multi.add(ProgressBar::new(0));
        line.set_style(
            ProgressStyle::with_template("{wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        line
    }

    fn show(&mut self, p: &roam_net::Progress, give_up_after: f64) {
        if let Some(t) = p.total {
            self.bar.set_length(t);
        }
        self.bar.set_position(p.bytes);
        for pipe in &p.pipes {
            let key = (pipe.via, pipe.server);
            let i = match self.pipes.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    let line = self.line();
                    self.pipes.push((key, line));
                    self.pipes.len() - 1
                }
            };
            self.pipes[i].1.set_message(pipe_line(pipe));
        }
        match status_line(p, give_up_after) {
            Some(message) => {
                if self.status.is_none() {
                    self.status = Some(self.line());
                }
                if let Some(s) = &self.status {
                    s.set_message(message);
                }
            }
            None => {
                if let Some(s) = self.status.take() {
                    s.finish_and_clear();
                    self.multi.remove(&s);
                }
            }
        }
    }

    fn clear(&self) {
        for (_, line) in &self.pipes {
            line.finish_and_clear();
        }
        if let Some(s) = &self.status {
            s.finish_and_clear();
        }
        self.bar.finish_and_clear();
        let _ = self.multi.clear();
    }
}

fn blake3_hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
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
    fn the_status_line_says_what_the_download_waits_for() {
        let mut p = roam_net::Progress {
            bytes: 0,
            total: Some(1000),
            via: "10.0.0.1:1".parse().unwrap(),
            server: "10.0.0.9:7000".parse().unwrap(),
            switches: 0,
            pipes: Vec::new(),
            waiting: None,
            server_hashing: None,
        };
        assert_eq!(status_line(&p, 900.0), None);
        p.waiting = Some(12.4);
        assert_eq!(
            status_line(&p, 900.0).unwrap(),
            "  waiting for the path: no data for 12 s (gives up after 900 s)"
        );
        p.server_hashing = Some((250, 1000));
        assert_eq!(
            status_line(&p, 900.0).unwrap(),
            "  waiting for 10.0.0.9:7000: computing the digest, 25 % of 1000 bytes"
        );
    }

    #[test]
    fn each_pipe_has_its_own_line_that_fits_a_terminal() {
        assert_eq!(
            pipe_line(&pipe("10.0.0.1:1", 8e6, true)),
            "  10.0.0.1:1 → 10.0.0.9:7000 8.0 Mb/s"
        );
        let v6 = pipe("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff]:65535", 0.0, false);
        let line = pipe_line(&v6);
        assert!(line.ends_with("0.0 Mb/s (down)"), "{line}");
        assert!(line.chars().count() <= 120, "{line}");
    }
}
