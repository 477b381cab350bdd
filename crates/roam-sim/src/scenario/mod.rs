//! Scenario files: a TOML description of a topology, its impairments, flows and timed events,
//! checked completely at load time (a loaded [`Scenario`] always runs). The format is described
//! in `docs/SCENARIOS.md`.

mod error;
mod events;
mod fields;
mod flows;
pub(crate) mod http;
mod links;
pub(crate) mod media;
pub(crate) mod ptcp;
pub(crate) mod r2cp;
pub(crate) mod rcp;
pub(crate) mod routing;
pub(crate) mod tcp;
mod template;
pub mod units;
mod warnings;
mod wording;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toml::Value;

pub use error::ScenarioError;
use fields::{Fields, IfaceRef};
pub use ptcp::{PtcpPipeSetup, PtcpSetup, StripingMode};
pub use r2cp::{PipeSetup, R2cpSetup};
pub use rcp::RcpSetup;
pub use tcp::TcpSetup;
pub use template::{parse_param_value, set_param, MAX_EXPANDED};
pub use units::QueueLimit;
pub(crate) use warnings::secs;

use crate::link::trace::Trace;
use events::{parse_event, parse_route};
use flows::parse_flow;
use links::parse_link;
use routing::Routing;

/// A checked scenario, ready to [`crate::run`].
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Name (the file's `name`, else the name hint, e.g. the file stem).
    pub name: String,
    /// Free-text description.
    pub description: String,
    /// Run parameters.
    pub run: RunConfig,
    /// Hosts and routers, in file order (after `count` expansion).
    pub nodes: Vec<NodeSpec>,
    /// Point-to-point links, in file order.
    pub links: Vec<LinkSpec>,
    /// Flows, in file order.
    pub flows: Vec<FlowSpec>,
    /// Timed changes, in file order.
    pub events: Vec<EventSpec>,
    /// Explicit routes that override the computed ones.
    pub routes: Vec<RouteSpec>,
    /// Addresses and routes of `nodes`, `links` and `routes`, computed once when the scenario
    /// was checked and used by the memory estimate and the run: change the topology through
    /// the document ([`set_param`]) and check it again, not through these fields.
    routing: Arc<Routing>,
}

/// The `[run]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Simulated time to run (`duration`).
    pub duration: Duration,
    /// Seed of the run's random streams (`seed`, default 1).
    pub seed: u64,
    /// Width of a time-series bin (`sample_interval`, default 1 s; 0 disables sampling).
    pub sample_interval: Duration,
    /// Bytes added to every datagram on the wire (`header_overhead`, default 28 = IPv4 + UDP).
    pub header_overhead: u32,
    /// End the run once every non-cross flow is sized and complete (`stop_when_done`, default
    /// true).
    pub stop_when_done: bool,
}

/// Whether a node forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host: has an address per interface, runs agents, never forwards.
    Host,
    /// A router: forwards by static routes, runs no agents.
    Router,
}

/// A `[[node]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// Unique name.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// Links attached to this node, by interface index (the order links name the node).
    pub ifaces: Vec<usize>,
}

/// A `[[link]]`: full duplex; `forward` is a → b, `reverse` b → a.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    /// Unique name.
    pub name: String,
    /// Node index of end a.
    pub a: usize,
    /// Node index of end b.
    pub b: usize,
    /// Whether the link is a wireless hop (`wireless`; default: true if either direction has
    /// random loss, Gilbert–Elliott or a trace). Reported to agents in link info.
    pub wireless: bool,
    /// How link info's loss figures are produced (`link_info = "exact"`, the default, or
    /// `link_info = { window = "5s" }` to measure them over a sliding window).
    pub link_info: crate::link::meter::LinkInfoMode,
    /// Direction a → b.
    pub forward: DirSpec,
    /// Direction b → a.
    pub reverse: DirSpec,
}

/// How fast a link direction drains its queue.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// A fixed rate in bits/s.
    Rate(u64),
    /// A Mahimahi trace.
    Trace(Arc<Trace>),
}

/// One direction of a link.
#[derive(Debug, Clone, PartialEq)]
pub struct DirSpec {
    /// Serialisation rate or trace.
    pub capacity: Capacity,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Drop-tail queue limit (default 100 packets).
    pub queue: QueueLimit,
    /// Bernoulli loss probability for packets arriving at the far end.
    pub loss: f64,
    /// Two-state Gilbert–Elliott loss.
    pub gilbert: Option<GilbertSpec>,
    /// Windows in which every arriving packet is dropped.
    pub blackouts: Vec<Blackout>,
    /// Random extra delay (reordering).
    pub reorder: Option<ReorderSpec>,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
    /// Upper bound of a uniform random extra delay per packet that keeps packets in order
    /// (`jitter`; zero = none).
    pub jitter: Duration,
    /// Drop the first transmission of these data segments (`drop_segments`).
    pub drop_segments: Option<crate::link::segment_drop::SegmentDropSpec>,
}

/// Gilbert–Elliott parameters: exponential sojourns in each state, Bernoulli loss within it.
#[derive(Debug, Clone, PartialEq)]
pub struct GilbertSpec {
    /// The good state.
    pub good: GeState,
    /// The bad state.
    pub bad: GeState,
    /// Start in the bad state (`start = "bad"`; default good).
    pub start_bad: bool,
}

/// One Gilbert–Elliott state.
#[derive(Debug, Clone, PartialEq)]
pub struct GeState {
    /// Mean sojourn time.
    pub mean: Duration,
    /// Loss probability while in the state.
    pub loss: f64,
}

impl GilbertSpec {
    /// Long-run loss probability: π_good·loss_good + π_bad·loss_bad with π proportional to the
    /// mean sojourns.
    pub fn mean_loss(&self) -> f64 {
        let g = self.good.mean.as_secs_f64();
        let b = self.bad.mean.as_secs_f64();
        (g * self.good.loss + b * self.bad.loss) / (g + b)
    }
}

/// A blackout window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blackout {
    /// Start (from time zero).
    pub at: Duration,
    /// Length.
    pub duration: Duration,
}

/// Reordering: each packet is held back by `delay` with probability `probability`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReorderSpec {
    /// Probability of holding a packet back.
    pub probability: f64,
    /// Extra delay of a held-back packet.
    pub delay: Duration,
}

/// What a flow sends.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowKind {
    /// A TCP connection (sender on `from`, receiver on `to`).
    Tcp(TcpSetup),
    /// An RCP connection: the sender serves the object on `from`, the receiver on `to` opens
    /// the connection and drives it (rcp-r2cp.txt §3).
    Rcp(RcpSetup),
    /// An R²CP connection (rcp-r2cp.txt §4): the receiver on `to` pulls one object through
    /// several pipes (interface, server); the servers are unchanged RCP senders.
    R2cp(R2cpSetup),
    /// A pTCP connection (ptcp.txt §3–4): the sender on `from` stripes one stream over one
    /// TCP-v pipe per planned interface pair to the receiver on `to`.
    Ptcp(PtcpSetup),
    /// HTTP-like request/response traffic over TCP (server on `from`, client on `to`).
    Http(crate::agents::http::HttpParams),
    /// Constant-bit-rate UDP.
    Cbr {
        /// Sending rate, bits/s of datagram payload.
        rate_bps: u64,
        /// Datagram payload size.
        packet_size: u32,
    },
    /// A rate-controlled media flow: RCP-ATL or the plain rate AIMD baseline (atl.txt §IV-B).
    Media(media::MediaSetup),
    /// Pareto on/off UDP (ns-2 style).
    Pareto {
        /// Sending rate during bursts.
        rate_bps: u64,
        /// Datagram payload size.
        packet_size: u32,
        /// Mean burst length.
        mean_on: Duration,
        /// Mean idle time.
        mean_off: Duration,
        /// Pareto shape (> 1).
        shape: f64,
    },
}

impl FlowKind {
    /// Protocol name as in scenario files.
    pub fn protocol(&self) -> &'static str {
        match self {
            FlowKind::Tcp(_) => "tcp",
            FlowKind::Rcp(_) => "rcp",
            FlowKind::R2cp(_) => "r2cp",
            FlowKind::Ptcp(_) => "ptcp",
            FlowKind::Http(_) => "http",
            FlowKind::Cbr { .. } => "cbr",
            FlowKind::Pareto { .. } => "pareto",
            FlowKind::Media(_) => "media",
        }
    }

    /// Congestion controller name, or empty.
    pub fn cc(&self) -> &str {
        match self {
            FlowKind::Tcp(t) => &t.cc,
            FlowKind::Rcp(r) => &r.cc,
            FlowKind::R2cp(r) => &r.rcp.cc,
            FlowKind::Ptcp(p) => &p.tcp.cc,
            FlowKind::Media(m) => m.kind.name(),
            _ => "",
        }
    }
}

/// A `[[flow]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSpec {
    /// Unique id.
    pub id: String,
    /// Protocol and its parameters.
    pub kind: FlowKind,
    /// Source host (node index).
    pub from: usize,
    /// Destination host (node index).
    pub to: usize,
    /// Source host's interface.
    pub from_iface: u32,
    /// Destination host's interface (its address is the destination).
    pub to_iface: u32,
    /// Start time (`start + index · start_step`).
    pub start: Duration,
    /// Bytes to transfer, or unlimited.
    pub size: Option<u64>,
    /// When a UDP source stops (`start + duration`).
    pub stop: Option<Duration>,
    /// Cross traffic (excluded from Jain's index and the stop condition).
    pub cross: bool,
    /// Meter the energy of the receiver's interface (`energy = true | { idle_w = W }`).
    pub energy: Option<crate::energy::PowerModel>,
}

/// A timed `[[event]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSpec {
    /// When.
    pub at: Duration,
    /// What changes.
    pub action: EventAction,
}

/// What an event changes.
#[derive(Debug, Clone, PartialEq)]
pub enum EventAction {
    /// New parameters for one or both directions of a link.
    Link {
        /// Link index.
        link: usize,
        /// Apply to a → b.
        forward: bool,
        /// Apply to b → a.
        reverse: bool,
        /// The new values.
        change: LinkChange,
    },
    /// A host or router interface goes up or down.
    Iface {
        /// Node index.
        node: usize,
        /// Interface index.
        iface: u32,
        /// New state.
        up: bool,
    },
}

/// New values for a link direction; `None` keeps the current one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkChange {
    /// Fixed rate (replaces a trace).
    pub rate: Option<u64>,
    /// Propagation delay.
    pub delay: Option<Duration>,
    /// Bernoulli loss.
    pub loss: Option<f64>,
    /// Whether the direction carries packets at all.
    pub up: Option<bool>,
}

/// A `[[route]]` override: router `router` sends packets for host `host`'s interface `iface`
/// over link `link`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    /// Router (node index).
    pub router: usize,
    /// Destination host (node index).
    pub host: usize,
    /// Destination interface of that host.
    pub iface: u32,
    /// Outgoing link (attached to the router).
    pub link: usize,
}

impl Scenario {
    /// Parses and checks scenario text. `name_hint` names the scenario when it has no `name`.
    /// Relative trace paths are resolved against the current directory.
    pub fn from_toml_str(text: &str, name_hint: &str) -> Result<Scenario, ScenarioError> {
        let doc = parse_document(text)?;
        Scenario::from_value_in(doc, name_hint, None)
    }

    /// Checks a parsed scenario document (e.g. after [`set_param`] overrides). Relative trace
    /// paths are resolved against the current directory.
    pub fn from_value(doc: Value, name_hint: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_value_in(doc, name_hint, None)
    }

    /// Like [`Scenario::from_value`], resolving relative trace paths against `base_dir` (the
    /// directory of the scenario file).
    pub fn from_value_in(
        doc: Value,
        name_hint: &str,
        base_dir: Option<&Path>,
    ) -> Result<Scenario, ScenarioError> {
        build(doc, name_hint, base_dir).map_err(ScenarioError::Invalid)
    }

    /// Reads a scenario file. The name hint is the file stem; relative trace paths are resolved
    /// against the file's directory.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let doc = load_document(path)?;
        let hint = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Scenario::from_value_in(doc, &hint, path.parent())
    }

    /// Index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Index of the link called `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// Addresses and routes, as computed when the scenario was checked.
    pub(crate) fn routing(&self) -> &Arc<Routing> {
        &self.routing
    }
}

/// Parses TOML text into a scenario document (for [`set_param`] before
/// [`Scenario::from_value`]).
pub fn parse_document(text: &str) -> Result<Value, ScenarioError> {
    text.parse::<toml::Table>()
        .map(Value::Table)
        .map_err(|e| ScenarioError::Syntax(e.to_string().trim_end().to_string()))
}

/// Reads a scenario file into a document.
pub fn load_document(path: &Path) -> Result<Value, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_document(&text)
}

/// Most flows in one scenario (ports are allocated per flow).
pub const MAX_FLOWS: usize = 20_000;

fn build(doc: Value, name_hint: &str, base_dir: Option<&Path>) -> Result<Scenario, String> {
    let mut top = Fields::new(doc, "", "")?;
    let name = top
        .get::<String>("name")?
        .unwrap_or_else(|| name_hint.to_string());
    let description = top.get::<String>("description")?.unwrap_or_default();
    let run = match top.sub("run")? {
        Some(f) => parse_run(f)?,
        None => return Err("run: missing (at least `[run] duration = \"...\"`)".into()),
    };
    let raw_nodes = top_array(&mut top, "node")?;
    let raw_links = top_array(&mut top, "link")?;
    let raw_flows = top_array(&mut top, "flow")?;
    let raw_events = top_array(&mut top, "event")?;
    let raw_routes = top_array(&mut top, "route")?;
    top.finish()?;

    let mut nodes = Vec::new();
    for e in template::expand("node", raw_nodes)? {
        nodes.push(parse_node(e.value, nodes.len())?);
    }
    check_unique(nodes.iter().map(|n| n.name.as_str()), "node", "name")?;

    let mut links = Vec::new();
    for e in template::expand("link", raw_links)? {
        let link = parse_link(e.value, links.len(), &nodes, base_dir)?;
        links.push(link);
    }
    check_unique(links.iter().map(|l| l.name.as_str()), "link", "name")?;
    for (li, l) in links.iter().enumerate() {
        for end in [l.a, l.b] {
            nodes[end].ifaces.push(li);
        }
    }

    let mut routes = Vec::new();
    for (i, v) in raw_routes.into_iter().enumerate() {
        routes.push(parse_route(v, i, &nodes, &links)?);
    }

    let mut flows = Vec::new();
    for e in template::expand("flow", raw_flows)? {
        let flow = parse_flow(e.value, e.index, flows.len(), &nodes, &links)?;
        flows.push(flow);
        if flows.len() > MAX_FLOWS {
            return Err(format!("flow: more than {MAX_FLOWS} flows"));
        }
    }
    check_unique(flows.iter().map(|f| f.id.as_str()), "flow", "id")?;

    let mut events = Vec::new();
    for (i, v) in raw_events.into_iter().enumerate() {
        events.push(parse_event(v, i, &nodes, &links)?);
    }

    let routing = Routing::compute(&nodes, &links, &routes)?;
    for f in &flows {
        if !routing.reachable(&nodes, &links, f.from, f.from_iface, f.to, f.to_iface) {
            return Err(format!(
                "flow {:?}: no route from {:?} to {:?}",
                f.id, nodes[f.from].name, nodes[f.to].name
            ));
        }
    }
    Ok(Scenario {
        name,
        description,
        run,
        nodes,
        links,
        flows,
        events,
        routes,
        routing: Arc::new(routing),
    })
}

fn top_array(top: &mut Fields, key: &'static str) -> Result<Vec<Value>, String> {
    match top.get::<Value>(key)? {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("{key}: expected an array of tables ([[{key}]])")),
    }
}

fn check_unique<'a>(
    names: impl Iterator<Item = &'a str>,
    section: &str,
    key: &str,
) -> Result<(), String> {
    let mut seen: Vec<&str> = names.collect();
    seen.sort_unstable();
    for w in seen.windows(2) {
        if w[0] == w[1] {
            return Err(format!("{section} {:?}: {key} is used twice", w[0]));
        }
    }
    Ok(())
}

fn parse_run(mut f: Fields) -> Result<RunConfig, String> {
    let duration = f.req::<Duration>("duration")?;
    if duration.is_zero() {
        return Err(f.err("duration", "must be positive"));
    }
    let seed = f.get::<u64>("seed")?.unwrap_or(1);
    let sample_interval = f
        .get::<Duration>("sample_interval")?
        .unwrap_or(Duration::from_secs(1));
    if !sample_interval.is_zero() && sample_interval < Duration::from_micros(1) {
        return Err(f.err("sample_interval", "must be 0 (off) or at least 1us"));
    }
    if !sample_interval.is_zero() && duration.as_nanos() / sample_interval.as_nanos() > 10_000_000 {
        return Err(f.err(
            "sample_interval",
            "more than 10^7 bins; use a wider interval",
        ));
    }
    let header_overhead = f.get::<u64>("header_overhead")?.unwrap_or(28);
    if header_overhead > 65_535 {
        return Err(f.err("header_overhead", "at most 65535 bytes"));
    }
    let stop_when_done = f.get::<bool>("stop_when_done")?.unwrap_or(true);
    f.finish()?;
    Ok(RunConfig {
        duration,
        seed,
        sample_interval,
        header_overhead: header_overhead as u32,
        stop_when_done,
    })
}

fn entry_ctx(section: &str, v: &Value, key: &str, pos: usize) -> String {
    match v.get(key).and_then(Value::as_str) {
        Some(name) => format!("{section} {name:?}"),
        None => format!("{section}[{pos}]"),
    }
}

fn parse_node(v: Value, pos: usize) -> Result<NodeSpec, String> {
    let ctx = entry_ctx("node", &v, "name", pos);
    let mut f = Fields::new(v, &ctx, "")?;
    let name = f.req::<String>("name")?;
    if name.is_empty() {
        return Err(f.err("name", "must not be empty"));
    }
    let kind = match f.get::<String>("kind")?.as_deref() {
        None | Some("host") => NodeKind::Host,
        Some("router") => NodeKind::Router,
        Some(other) => {
            return Err(f.err(
                "kind",
                format!("expected \"host\" or \"router\", got {other:?}"),
            ))
        }
    };
    f.finish()?;
    Ok(NodeSpec {
        name,
        kind,
        ifaces: Vec::new(),
    })
}

fn node_by_name(f: &Fields, key: &str, nodes: &[NodeSpec], name: &str) -> Result<usize, String> {
    nodes.iter().position(|n| n.name == name).ok_or_else(|| {
        let hint = did_you_mean(name, nodes.iter().map(|n| n.name.as_str()));
        f.err(key, format!("no node named {name:?}{hint}"))
    })
}

fn link_by_name(f: &Fields, key: &str, links: &[LinkSpec], name: &str) -> Result<usize, String> {
    links.iter().position(|l| l.name == name).ok_or_else(|| {
        let hint = did_you_mean(name, links.iter().map(|l| l.name.as_str()));
        f.err(key, format!("no link named {name:?}{hint}"))
    })
}

/// `; did you mean "x"?` when one of `names` looks like a misspelling of `name`, else nothing.
fn did_you_mean<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    wording::closest(name, names)
        .map(|n| format!("; did you mean {n:?}?"))
        .unwrap_or_default()
}

fn resolve_iface(
    f: &Fields,
    key: &str,
    r: Option<IfaceRef>,
    node: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<u32, String> {
    let n = &nodes[node];
    if n.ifaces.is_empty() {
        return Err(f.err(key, format!("node {:?} has no links", n.name)));
    }
    match r {
        None => Ok(0),
        Some(IfaceRef::Index(i)) if (i as usize) < n.ifaces.len() => Ok(i),
        Some(IfaceRef::Index(i)) => Err(f.err(
            key,
            format!(
                "node {:?} has {} interfaces, no index {i}",
                n.name,
                n.ifaces.len()
            ),
        )),
        Some(IfaceRef::Link(name)) => n
            .ifaces
            .iter()
            .position(|&l| links[l].name == name)
            .map(|i| i as u32)
            .ok_or_else(|| f.err(key, format!("node {:?} has no link named {name:?}", n.name))),
    }
}

fn host_by_name(f: &Fields, key: &str, nodes: &[NodeSpec], name: &str) -> Result<usize, String> {
    let i = node_by_name(f, key, nodes, name)?;
    if nodes[i].kind != NodeKind::Host {
        return Err(f.err(
            key,
            format!("{name:?} is a router; flows run between hosts"),
        ));
    }
    Ok(i)
}
