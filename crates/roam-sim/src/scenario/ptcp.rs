//! The `[flow.ptcp]` table of pTCP flows (`protocol = "ptcp"`, ptcp.txt §3–4), checked at
//! load time: the pipes, one per (sender interface, receiver interface) pair, each with its
//! own controller. The pipes' engine options come from `[flow.tcp]` and the default
//! controller from `cc`, as for TCP.
//!
//! ```toml
//! [[flow]]
//! protocol = "ptcp"
//! from = "server"            # the sender
//! to = "mobile"              # the receiver
//! size = "10MB"
//! cc = "newreno"             # every pipe's controller unless the pipe names one
//! [[flow.ptcp.pipe]]
//! from_iface = 0             # sender interface (index or link name; default `from_iface`)
//! to_iface = "wlan"          # receiver interface (default `to_iface`)
//! cc = "westwood"            # this pipe's controller (ptcp.txt §4.2)
//! ```
//! Without any `[[flow.ptcp.pipe]]`, one pipe runs from `from_iface` to `to_iface`.

use roam_proto::cc::CcKind;

use super::fields::{Fields, IfaceRef};
use super::{resolve_iface, LinkSpec, NodeSpec, TcpSetup};

/// One planned pipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtcpPipeSetup {
    /// The sender's interface.
    pub from_iface: u32,
    /// The receiver's interface.
    pub to_iface: u32,
    /// The pipe's controller.
    pub cc: CcKind,
}

/// How to build a pTCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct PtcpSetup {
    /// Engine options and the default controller (from `[flow.tcp]` and `cc`).
    pub tcp: TcpSetup,
    /// The pipes.
    pub pipes: Vec<PtcpPipeSetup>,
}

/// Where the flow's default pipe runs.
pub(crate) struct Ends {
    pub from: usize,
    pub from_iface: u32,
    pub to: usize,
    pub to_iface: u32,
}

/// Most pipes one flow may plan (a per-connection limit, as ptcp.txt §4.2's per-host one).
pub const MAX_PIPES: usize = 16;

/// Checks the `[flow.ptcp]` table (`f` reads the flow entry).
pub(crate) fn parse(
    f: &mut Fields,
    tcp: TcpSetup,
    e: &Ends,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<PtcpSetup, String> {
    let default = PtcpPipeSetup {
        from_iface: e.from_iface,
        to_iface: e.to_iface,
        cc: tcp.cc_kind,
    };
    let Some(mut t) = f.sub("ptcp")? else {
        return Ok(PtcpSetup {
            tcp,
            pipes: vec![default],
        });
    };
    let mut pipes = Vec::new();
    for mut p in t.sub_array("pipe")? {
        let from_iface = match p.get::<IfaceRef>("from_iface")? {
            Some(i) => resolve_iface(&p, "from_iface", Some(i), e.from, nodes, links)?,
            None => e.from_iface,
        };
        let to_iface = match p.get::<IfaceRef>("to_iface")? {
            Some(i) => resolve_iface(&p, "to_iface", Some(i), e.to, nodes, links)?,
            None => e.to_iface,
        };
        let cc = match p.get::<String>("cc")? {
            Some(name) => name.parse().map_err(|err| p.err("cc", format!("{err}")))?,
            None => tcp.cc_kind,
        };
        p.finish()?;
        let pipe = PtcpPipeSetup {
            from_iface,
            to_iface,
            cc,
        };
        if pipes
            .iter()
            .any(|q: &PtcpPipeSetup| (q.from_iface, q.to_iface) == (from_iface, to_iface))
        {
            return Err(t.err_entry(format!(
                "two pipes from interface {from_iface} to interface {to_iface}: one pipe per pair (ptcp.txt §4.2)"
            )));
        }
        pipes.push(pipe);
    }
    if pipes.len() > MAX_PIPES {
        return Err(t.err_entry(format!("at most {MAX_PIPES} pipes")));
    }
    t.finish()?;
    if pipes.is_empty() {
        pipes.push(default);
    }
    Ok(PtcpSetup { tcp, pipes })
}
