//! The `[flow.r2cp]` table of R²CP flows (`protocol = "r2cp"`, rcp-r2cp.txt §4), checked at
//! load time: the assignment scheme, the pipes (interface, server, when), and the policy.
//! Engine options and the controller come from `cc` and `[flow.rcp]` as for RCP.
//!
//! ```toml
//! [[flow]]
//! protocol = "r2cp"
//! from = "server1"           # the default server of every pipe
//! to = "mobile"              # the receiver (opens the pipes)
//! size = "10MB"
//! cc = "newreno"
//! [flow.r2cp]
//! scheme = "r2cp"            # "r2cp" (rank), "r2cp-s" (FCFS) or "apps" (striping)
//! apps_stripe = "16KB"       # APPS stripe size (default 16 segments)
//! policy_rate = "720kbps"    # token-bucket target rate (§4.4.3; default: no policy)
//! policy_depth = "4KB"       # bucket depth (default 4 segments)
//! coupled = true             # RFC 6356 coupled increase across the pipes (default false)
//! stall = "3s"               # the host's stall rule, as `roam get --stall` (default: off;
//!                            # a failed pipe is reopened after a backoff either way)
//! [[flow.r2cp.pipe]]
//! iface = 0                  # receiver interface (index or link name)
//! server = "server2"         # default: `from`
//! server_iface = 0
//! start = "5s"               # created then (or when the interface is up)
//! stop = "20s"               # deleted then …
//! removal = "drain"          # … make-before-break ("drain") or break-before-make ("break")
//! role = "secondary"         # "primary" (default) or "secondary" under the policy
//! facts = "estimated"        # the pipe judges its own holes (Spike, issue 30) instead of the
//!                            # link's corruption reports ("oracle"); needs `[flow.rcp] eln`.
//!                            # Default: `[flow.rcp] facts`, else "oracle"
//! ```
//! Without any `[[flow.r2cp.pipe]]`, one pipe runs from `to_iface` to `from`.

use std::time::Duration;

use roam_proto::r2cp::{PipeRole, Removal, Scheme, TokenPolicy};

use super::fields::{Fields, IfaceRef};
use super::{host_by_name, resolve_iface, units, LinkSpec, NodeSpec, RcpSetup};

/// One planned pipe.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeSetup {
    /// Receiver interface.
    pub iface: u32,
    /// Server host (node index) and its interface.
    pub server: usize,
    /// Server interface.
    pub server_iface: u32,
    /// Earliest creation.
    pub start: Duration,
    /// Deletion time and kind.
    pub stop: Option<(Duration, Removal)>,
    /// Policy role.
    pub role: PipeRole,
    /// Wireless-loss facts estimated by the pipe itself (`facts = "estimated"`) instead of
    /// the link's corruption reports.
    pub estimated_facts: bool,
}

/// How to build an R²CP flow.
#[derive(Debug, Clone, PartialEq)]
pub struct R2cpSetup {
    /// Controller and engine options (shared with RCP's `[flow.rcp]`).
    pub rcp: RcpSetup,
    /// Assignment scheme.
    pub scheme: Scheme,
    /// The pipes.
    pub pipes: Vec<PipeSetup>,
    /// Aggregation policy.
    pub policy: Option<TokenPolicy>,
    /// Coupled increase across the pipes (RFC 6356 LIA).
    pub coupled: bool,
    /// The host's stall rule (`roam_proto::r2cp::reopen::PipeWatch`): a pipe that delivers
    /// nothing this long with requests outstanding, or is not up this long after it was
    /// opened, is deleted and its pair reopened after the backoff. `None`: off.
    pub stall: Option<Duration>,
}

impl R2cpSetup {
    /// Every server host, with the interface of its first pipe, without repeats, in pipe
    /// order (one server agent per host: a host's pipes must all use one of its interfaces).
    pub fn servers(&self) -> Vec<(usize, u32)> {
        let mut out: Vec<(usize, u32)> = Vec::new();
        for p in &self.pipes {
            if !out.iter().any(|s| s.0 == p.server) {
                out.push((p.server, p.server_iface));
            }
        }
        out
    }
}

/// Where the flow's default pipe runs.
pub(crate) struct Defaults {
    pub from: usize,
    pub from_iface: u32,
    pub to: usize,
    pub to_iface: u32,
}

/// Checks the `[flow.r2cp]` table (`f` reads the flow entry).
pub(crate) fn parse(
    f: &mut Fields,
    rcp: RcpSetup,
    d: &Defaults,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<R2cpSetup, String> {
    let mss = u64::from(rcp.config.mss);
    let facts = rcp.estimated_facts;
    let Some(mut t) = f.sub("r2cp")? else {
        return Ok(R2cpSetup {
            rcp,
            scheme: Scheme::Rank,
            pipes: vec![default_pipe(d, facts)],
            policy: None,
            coupled: false,
            stall: None,
        });
    };
    let stripe = t.get_with("apps_stripe", units::size)?.unwrap_or(16 * mss);
    if stripe == 0 {
        return Err(t.err("apps_stripe", "must be positive"));
    }
    let scheme = match t.get::<String>("scheme")?.as_deref() {
        None | Some("r2cp") => Scheme::Rank,
        Some("r2cp-s") => Scheme::Fcfs,
        Some("apps") => Scheme::Apps { stripe },
        Some(other) => {
            return Err(t.err(
                "scheme",
                format!("expected \"r2cp\", \"r2cp-s\" or \"apps\", got {other:?}"),
            ))
        }
    };
    let coupled = t.get::<bool>("coupled")?.unwrap_or(false);
    let stall = t.get::<Duration>("stall")?;
    if stall.is_some_and(|s| s.is_zero()) {
        return Err(t.err("stall", "must be positive"));
    }
    let rate = t.get_with("policy_rate", units::rate)?;
    let depth = t.get_with("policy_depth", units::size)?.unwrap_or(4 * mss);
    if depth < mss {
        return Err(t.err("policy_depth", "must hold at least one segment"));
    }
    let policy = rate.map(|r| TokenPolicy {
        rate_bps: r as f64,
        depth_bytes: depth,
    });
    let mut pipes = Vec::new();
    for mut p in t.sub_array("pipe")? {
        let iface = p.get::<IfaceRef>("iface")?;
        let iface = if iface.is_some() {
            resolve_iface(&p, "iface", iface, d.to, nodes, links)?
        } else {
            d.to_iface
        };
        let (server, server_iface) = match p.get::<String>("server")? {
            Some(name) => {
                let s = host_by_name(&p, "server", nodes, &name)?;
                if s == d.to {
                    return Err(p.err("server", "must differ from the receiver `to`"));
                }
                let si = p.get::<IfaceRef>("server_iface")?;
                (s, resolve_iface(&p, "server_iface", si, s, nodes, links)?)
            }
            None => (d.from, d.from_iface),
        };
        let start = p.get::<Duration>("start")?.unwrap_or_default();
        let stop = p.get::<Duration>("stop")?;
        let removal = match p.get::<String>("removal")?.as_deref() {
            None | Some("drain") => Removal::Drain,
            Some("break") => Removal::Break,
            Some(other) => {
                return Err(p.err(
                    "removal",
                    format!("expected \"drain\" or \"break\", got {other:?}"),
                ))
            }
        };
        if stop.is_some_and(|s| s <= start) {
            return Err(p.err("stop", "must be after start"));
        }
        let role = match p.get::<String>("role")?.as_deref() {
            None | Some("primary") => PipeRole::Primary,
            Some("secondary") => PipeRole::Secondary,
            Some(other) => {
                return Err(p.err(
                    "role",
                    format!("expected \"primary\" or \"secondary\", got {other:?}"),
                ))
            }
        };
        let estimated_facts = match p.get::<String>("facts")?.as_deref() {
            None => facts,
            Some("oracle") => false,
            Some("estimated") if rcp.config.eln => true,
            Some("estimated") => {
                return Err(p.err(
                    "facts",
                    "\"estimated\" feeds ELN; set [flow.rcp] eln = true",
                ))
            }
            Some(other) => {
                return Err(p.err(
                    "facts",
                    format!("expected \"oracle\" or \"estimated\", got {other:?}"),
                ))
            }
        };
        p.finish()?;
        pipes.push(PipeSetup {
            iface,
            server,
            server_iface,
            start,
            stop: stop.map(|s| (s, removal)),
            role,
            estimated_facts,
        });
    }
    t.finish()?;
    if pipes.is_empty() {
        pipes.push(default_pipe(d, facts));
    }
    for p in &pipes {
        if pipes
            .iter()
            .any(|q| q.server == p.server && q.server_iface != p.server_iface)
        {
            return Err(f.err(
                "r2cp",
                "all pipes to one server must use the same server_iface",
            ));
        }
    }
    if pipes.len() > 64 {
        return Err(f.err("r2cp", "at most 64 pipes"));
    }
    Ok(R2cpSetup {
        rcp,
        scheme,
        pipes,
        policy,
        coupled,
        stall,
    })
}

fn default_pipe(d: &Defaults, estimated_facts: bool) -> PipeSetup {
    PipeSetup {
        iface: d.to_iface,
        server: d.from,
        server_iface: d.from_iface,
        start: Duration::ZERO,
        stop: None,
        role: PipeRole::Primary,
        estimated_facts,
    }
}
