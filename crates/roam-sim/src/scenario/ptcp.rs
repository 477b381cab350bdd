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
//!
//! The baselines of ptcp.txt §2 and §5 run on the same pipes: `striping = "unaware"` or
//! `"smart"` replaces pTCP by an application striping over one independent TCP connection
//! per pipe (`agents/ptcp_striping.rs`), with a resequencing buffer of `reseq_buffer` bytes
//! (default: the receive buffer); smart striping needs a `weight` on every pipe (its
//! striping ratio, §5: "based on the average bandwidths of the different links").
//!
//! ```toml
//! [flow.ptcp]
//! striping = "smart"
//! reseq_buffer = "64KB"
//! [[flow.ptcp.pipe]]
//! to_iface = "wlan"
//! weight = 5.0
//! ```

use roam_proto::cc::CcKind;

use super::fields::{Fields, IfaceRef};
use super::{resolve_iface, units, LinkSpec, NodeSpec, TcpSetup};

/// One planned pipe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtcpPipeSetup {
    /// The sender's interface.
    pub from_iface: u32,
    /// The receiver's interface.
    pub to_iface: u32,
    /// The pipe's controller.
    pub cc: CcKind,
    /// Its share of the data under smart striping (ptcp.txt §5); 1 unless given.
    pub weight: f64,
}

/// Who stripes the data over the pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripingMode {
    /// pTCP itself (ptcp.txt §3–4).
    Ptcp,
    /// The "unaware" application of ptcp.txt §2: independent TCP connections, each send
    /// buffer filled in turn.
    Unaware,
    /// The "smart" application of ptcp.txt §5: independent TCP connections, records assigned
    /// by a fixed ratio of the pipes' weights.
    Smart,
}

/// How to build a pTCP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct PtcpSetup {
    /// Engine options and the default controller (from `[flow.tcp]` and `cc`).
    pub tcp: TcpSetup,
    /// The pipes.
    pub pipes: Vec<PtcpPipeSetup>,
    /// pTCP, or one of the application striping baselines.
    pub striping: StripingMode,
    /// The baselines' receiving application's resequencing buffer (bytes).
    pub reseq_buffer: u64,
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
        weight: 1.0,
    };
    let reseq_default = tcp.config.recv_buffer;
    let Some(mut t) = f.sub("ptcp")? else {
        return Ok(PtcpSetup {
            tcp,
            pipes: vec![default],
            striping: StripingMode::Ptcp,
            reseq_buffer: reseq_default,
        });
    };
    let striping = match t.get::<String>("striping")?.as_deref() {
        None | Some("ptcp") => StripingMode::Ptcp,
        Some("unaware") => StripingMode::Unaware,
        Some("smart") => StripingMode::Smart,
        Some(other) => {
            return Err(t.err(
                "striping",
                format!("expected \"ptcp\", \"unaware\" or \"smart\", got {other:?}"),
            ))
        }
    };
    let reseq_buffer = t
        .get_with("reseq_buffer", units::size)?
        .unwrap_or(reseq_default);
    if reseq_buffer < u64::from(tcp.config.mss) {
        return Err(t.err("reseq_buffer", "must hold at least one mss"));
    }
    let mut weights_missing = false;
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
        let weight = p.get::<f64>("weight")?;
        if let Some(w) = weight {
            if !(w.is_finite() && w > 0.0) {
                return Err(p.err("weight", format!("must be positive, got {w}")));
            }
        }
        weights_missing |= weight.is_none();
        p.finish()?;
        let pipe = PtcpPipeSetup {
            from_iface,
            to_iface,
            cc,
            weight: weight.unwrap_or(1.0),
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
    if striping == StripingMode::Smart && (weights_missing || pipes.is_empty()) {
        return Err(t.err_entry(
            "smart striping needs a `weight` on every [[flow.ptcp.pipe]] (ptcp.txt §5)",
        ));
    }
    t.finish()?;
    if pipes.is_empty() {
        pipes.push(default);
    }
    Ok(PtcpSetup {
        tcp,
        pipes,
        striping,
        reseq_buffer,
    })
}
