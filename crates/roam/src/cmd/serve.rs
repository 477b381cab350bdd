//! `roam serve`: serve a directory over real UDP until interrupted.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use roam_net::{LocalSpec, Server};

use super::{link_table, runtime, Format};
use crate::error::Result;

/// `roam serve --help` text.
pub const LONG_ABOUT: &str = "Serve the files under DIR over real UDP until interrupted.\n\n\
Every file under DIR is an object named by its path relative to DIR (never outside it: names \
with .. or a leading /, and symlinks that lead out, are refused). Each object NAME also has a \
synthesised companion .roam-meta/NAME carrying its length and BLAKE3 digest, which `roam get` \
fetches first to verify what it receives (see docs/RUNTIME.md). One socket is bound per \
--listen address; `roam get` can use several servers as mirrors.\n\n\
Examples:\n  \
roam serve ./public --listen 127.0.0.1:7000\n  \
roam serve /srv/files --listen 10.0.1.1:7000 --listen 10.0.2.1:7000\n  \
roam serve ./public --listen 0.0.0.0:7000 --format json   # one JSON line with the bound addresses";

/// Arguments of `roam serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Directory whose files are served.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Address and port to listen on (repeatable; port 0 picks a free port).
    #[arg(long, value_name = "ADDR:PORT", required = true)]
    pub listen: Vec<SocketAddr>,
    /// Facts about a local link (repeatable): ADDR:pw=0.01,dw=20ms,bw=2Mbps,per=0.01 (add
    /// `wired` for a wired hop); handed to the TCP-like connections accepted on that address.
    #[arg(long, value_name = "ADDR:FACTS")]
    pub link: Vec<String>,
    /// A file of link facts: one ADDR:FACTS entry per line as for --link, `#` comments;
    /// --link entries override the file's for the same address.
    #[arg(long, value_name = "FILE")]
    pub links: Option<PathBuf>,
    /// Output format of the startup line.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `roam serve`.
pub fn run(args: &ServeArgs) -> Result<()> {
    let rt = runtime()?;
    rt.block_on(async {
        let locals: Vec<LocalSpec> = args.listen.iter().copied().map(LocalSpec::addr).collect();
        let mut server = Server::bind(&args.dir, &locals)?;
        server.set_links(link_table(args.links.as_deref(), &args.link)?);
        let bound: Vec<String> = (0..locals.len())
            .filter_map(|i| server.local_addr(i))
            .map(|a| a.to_string())
            .collect();
        match args.format {
            Format::Json => println!(
                "{}",
                serde_json::json!({ "dir": args.dir.display().to_string(), "listening": bound })
            ),
            Format::Table => super::note(&format!(
                "serving {} on {}",
                args.dir.display(),
                bound.join(", ")
            )),
        }
        server.run().await?;
        Ok(())
    })
}
