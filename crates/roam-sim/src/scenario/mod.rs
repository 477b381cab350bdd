//! Scenario files: a TOML description of a topology, its impairments, flows and timed events,
//! checked completely at load time (a loaded [`Scenario`] always runs). The format is described
//! in `docs/SCENARIOS.md`.

mod error;
mod fields;
pub(crate) mod http;
pub(crate) mod media;
pub(crate) mod rcp;
pub(crate) mod tcp;
mod template;
pub mod units;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toml::Value;

pub use error::ScenarioError;
use fields::{Fields, IfaceRef};
pub use rcp::RcpSetup;
pub use tcp::TcpSetup;
pub use template::{parse_param_value, set_param, MAX_EXPANDED};
pub use units::QueueLimit;

use crate::link::trace::Trace;
use crate::world;

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
    pub from_iface: u8,
    /// Destination host's interface (its address is the destination).
    pub to_iface: u8,
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
        iface: u8,
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
    pub iface: u8,
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
            if nodes[end].ifaces.len() > 256 {
                return Err(format!(
                    "node {:?}: more than 256 interfaces",
                    nodes[end].name
                ));
            }
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

    let scenario = Scenario {
        name,
        description,
        run,
        nodes,
        links,
        flows,
        events,
        routes,
    };
    let routing = world::Routing::compute(&scenario)?;
    for f in &scenario.flows {
        if !routing.reachable(&scenario, f.from, f.from_iface, f.to, f.to_iface) {
            return Err(format!(
                "flow {:?}: no route from {:?} to {:?}",
                f.id, scenario.nodes[f.from].name, scenario.nodes[f.to].name
            ));
        }
    }
    Ok(scenario)
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
    nodes
        .iter()
        .position(|n| n.name == name)
        .ok_or_else(|| f.err(key, format!("no node named {name:?}")))
}

fn link_by_name(f: &Fields, key: &str, links: &[LinkSpec], name: &str) -> Result<usize, String> {
    links
        .iter()
        .position(|l| l.name == name)
        .ok_or_else(|| f.err(key, format!("no link named {name:?}")))
}

/// Link-level defaults that each direction may override.
struct LinkDefaults {
    rate: Option<u64>,
    delay: Duration,
    queue: QueueLimit,
}

fn parse_link(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    base_dir: Option<&Path>,
) -> Result<LinkSpec, String> {
    let ctx = entry_ctx("link", &v, "name", pos);
    let mut f = Fields::new(v, &ctx, "")?;
    let name = f.req::<String>("name")?;
    let a_name = f.req::<String>("a")?;
    let a = node_by_name(&f, "a", nodes, &a_name)?;
    let b_name = f.req::<String>("b")?;
    let b = node_by_name(&f, "b", nodes, &b_name)?;
    if a == b {
        return Err(f.err("b", "a link must join two different nodes"));
    }
    let defaults = LinkDefaults {
        rate: f.get_with("rate", units::rate)?,
        delay: f.get::<Duration>("delay")?.unwrap_or_default(),
        queue: f
            .get::<QueueLimit>("queue")?
            .unwrap_or(QueueLimit::Packets(100)),
    };
    let wireless = f.get::<bool>("wireless")?;
    let link_info = f.get_with("link_info", link_info_mode)?.unwrap_or_default();
    let forward = parse_dir(f.sub("forward")?, &f, "forward", &defaults, base_dir)?;
    let reverse = parse_dir(f.sub("reverse")?, &f, "reverse", &defaults, base_dir)?;
    f.finish()?;
    let lossy = |d: &DirSpec| {
        d.loss > 0.0 || d.gilbert.is_some() || matches!(d.capacity, Capacity::Trace(_))
    };
    Ok(LinkSpec {
        name,
        a,
        b,
        wireless: wireless.unwrap_or(lossy(&forward) || lossy(&reverse)),
        link_info,
        forward,
        reverse,
    })
}

/// `link_info = "exact"` or `link_info = { window = "5s" }` (a positive duration).
fn link_info_mode(v: &Value) -> Result<crate::link::meter::LinkInfoMode, String> {
    use crate::link::meter::LinkInfoMode;
    match v {
        Value::String(s) if s == "exact" => Ok(LinkInfoMode::Exact),
        Value::Table(t) if t.len() == 1 && t.contains_key("window") => {
            let window = units::duration(&t["window"]).map_err(|e| format!("window: {e}"))?;
            if window.is_zero() {
                return Err("window: must be positive".into());
            }
            Ok(LinkInfoMode::Measured { window })
        }
        other => Err(format!(
            "expected \"exact\" or {{ window = \"5s\" }}, got {other}"
        )),
    }
}

fn parse_dir(
    sub: Option<Fields>,
    link: &Fields,
    which: &str,
    d: &LinkDefaults,
    base_dir: Option<&Path>,
) -> Result<DirSpec, String> {
    let Some(mut f) = sub else {
        let rate = d.rate.ok_or_else(|| {
            link.err("rate", format!("missing (needed by the {which} direction)"))
        })?;
        return Ok(DirSpec {
            capacity: Capacity::Rate(rate),
            delay: d.delay,
            queue: d.queue,
            loss: 0.0,
            gilbert: None,
            blackouts: Vec::new(),
            reorder: None,
            duplicate: 0.0,
            jitter: Duration::ZERO,
            drop_segments: None,
        });
    };
    let rate = f.get_with("rate", units::rate)?.or(d.rate);
    let delay = f.get::<Duration>("delay")?.unwrap_or(d.delay);
    let queue = f.get::<QueueLimit>("queue")?.unwrap_or(d.queue);
    let loss = f.get_with("loss", units::probability)?.unwrap_or(0.0);
    let duplicate = f.get_with("duplicate", units::probability)?.unwrap_or(0.0);
    let jitter = f.get::<Duration>("jitter")?.unwrap_or(Duration::ZERO);
    let trace = match f.get::<String>("trace")? {
        None => None,
        Some(p) => {
            let path = resolve(base_dir, &p);
            Some(Arc::new(Trace::load(&path).map_err(|e| f.err("trace", e))?))
        }
    };
    let capacity = match (trace, rate) {
        (Some(t), _) => Capacity::Trace(t),
        (None, Some(r)) => Capacity::Rate(r),
        (None, None) => {
            return Err(link.err(
                "rate",
                format!("missing (give rate, or {which}.rate or {which}.trace)"),
            ))
        }
    };
    let gilbert = match f.sub("gilbert")? {
        None => None,
        Some(g) => Some(parse_gilbert(g)?),
    };
    let mut blackouts = Vec::new();
    for mut bf in f.sub_array("blackouts")? {
        let at = bf.req::<Duration>("at")?;
        let duration = bf.req::<Duration>("duration")?;
        bf.finish()?;
        blackouts.push(Blackout { at, duration });
    }
    let drop_segments = match f.sub("drop_segments")? {
        None => None,
        Some(mut sf) => {
            let segments = sf.req::<Value>("segments")?;
            let segments = crate::link::segment_drop::parse_segments(&segments)
                .map_err(|e| sf.err("segments", e))?;
            let mss = sf.get::<u64>("mss")?.unwrap_or(1000);
            if mss == 0 {
                return Err(sf.err("mss", "must be positive"));
            }
            sf.finish()?;
            Some(crate::link::segment_drop::SegmentDropSpec { segments, mss })
        }
    };
    let reorder = match f.sub("reorder")? {
        None => None,
        Some(mut rf) => {
            let probability = rf.req_with("probability", units::probability)?;
            let delay = rf.req::<Duration>("delay")?;
            rf.finish()?;
            Some(ReorderSpec { probability, delay })
        }
    };
    f.finish()?;
    Ok(DirSpec {
        capacity,
        delay,
        queue,
        loss,
        gilbert,
        blackouts,
        reorder,
        duplicate,
        jitter,
        drop_segments,
    })
}

fn resolve(base_dir: Option<&Path>, p: &str) -> PathBuf {
    let path = Path::new(p);
    match base_dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

fn parse_gilbert(mut g: Fields) -> Result<GilbertSpec, String> {
    let state = |g: &mut Fields, key: &'static str| -> Result<GeState, String> {
        let mut s = g.sub(key)?.ok_or_else(|| g.err(key, "missing"))?;
        let mean = s.req::<Duration>("mean")?;
        if mean < Duration::from_micros(1) {
            return Err(s.err("mean", "must be at least 1us"));
        }
        let loss = s.req_with("loss", units::probability)?;
        s.finish()?;
        Ok(GeState { mean, loss })
    };
    let good = state(&mut g, "good")?;
    let bad = state(&mut g, "bad")?;
    let start_bad = match g.get::<String>("start")?.as_deref() {
        None | Some("good") => false,
        Some("bad") => true,
        Some(other) => {
            return Err(g.err(
                "start",
                format!("expected \"good\" or \"bad\", got {other:?}"),
            ))
        }
    };
    g.finish()?;
    Ok(GilbertSpec {
        good,
        bad,
        start_bad,
    })
}

fn resolve_iface(
    f: &Fields,
    key: &str,
    r: Option<IfaceRef>,
    node: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<u8, String> {
    let n = &nodes[node];
    if n.ifaces.is_empty() {
        return Err(f.err(key, format!("node {:?} has no links", n.name)));
    }
    match r {
        None => Ok(0),
        Some(IfaceRef::Index(i)) if usize::from(i) < n.ifaces.len() => Ok(i),
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
            .map(|i| i as u8)
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

fn parse_flow(
    v: Value,
    index: u64,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<FlowSpec, String> {
    let ctx = entry_ctx("flow", &v, "id", pos);
    let mut f = Fields::new(v, &ctx, "")?;
    let id = f.req::<String>("id")?;
    let protocol = f.req::<String>("protocol")?;
    let from_name = f.req::<String>("from")?;
    let from = host_by_name(&f, "from", nodes, &from_name)?;
    let to_name = f.req::<String>("to")?;
    let to = host_by_name(&f, "to", nodes, &to_name)?;
    if from == to {
        return Err(f.err("to", "must differ from `from`"));
    }
    let from_iface = f.get::<IfaceRef>("from_iface")?;
    let from_iface = resolve_iface(&f, "from_iface", from_iface, from, nodes, links)?;
    let to_iface = f.get::<IfaceRef>("to_iface")?;
    let to_iface = resolve_iface(&f, "to_iface", to_iface, to, nodes, links)?;
    let start = f.get::<Duration>("start")?.unwrap_or_default();
    let step = f.get::<Duration>("start_step")?.unwrap_or_default();
    let start = u32::try_from(index)
        .ok()
        .and_then(|i| step.checked_mul(i))
        .and_then(|s| start.checked_add(s))
        .ok_or_else(|| f.err("start_step", "start time overflows"))?;
    let size = f.get_with("size", units::size)?;
    let duration = f.get::<Duration>("duration")?;
    let cross = f.get::<bool>("cross")?.unwrap_or(false);
    let cc = f.get::<String>("cc")?;
    let tcp_table = f.get::<Value>("tcp")?;
    let rcp_table = f.get::<Value>("rcp")?;
    let http_table = f.get::<Value>("http")?;
    if http_table.is_some() && protocol != "http" {
        return Err(f.err("http", format!("not used by protocol {protocol:?}")));
    }
    if rcp_table.is_some() && protocol != "rcp" {
        return Err(f.err("rcp", format!("not used by protocol {protocol:?}")));
    }
    let energy = rcp::parse_energy(f.get::<Value>("energy")?).map_err(|e| f.err_entry(e))?;
    let rate = f.get_with("rate", units::rate)?;
    let packet_size = f.get_with("packet_size", units::size)?;
    let on = f.get::<Duration>("on_time")?;
    let off = f.get::<Duration>("off_time")?;
    let shape = f.get::<f64>("shape")?;
    let service = f.get::<String>("service")?;
    if service.is_some() && protocol != "atl" {
        return Err(f.err("service", format!("not used by protocol {protocol:?}")));
    }
    let udp_only = |f: &Fields, present: bool, key: &str| {
        if present {
            Err(f.err(key, format!("not used by protocol {protocol:?}")))
        } else {
            Ok(())
        }
    };
    let kind = match protocol.as_str() {
        "tcp" => {
            udp_only(&f, rate.is_some(), "rate")?;
            udp_only(&f, packet_size.is_some(), "packet_size")?;
            udp_only(&f, on.is_some(), "on_time")?;
            udp_only(&f, off.is_some(), "off_time")?;
            udp_only(&f, shape.is_some(), "shape")?;
            udp_only(&f, duration.is_some(), "duration")?;
            FlowKind::Tcp(tcp::parse(cc, tcp_table).map_err(|e| f.err_entry(e))?)
        }
        "http" => {
            udp_only(&f, rate.is_some(), "rate")?;
            udp_only(&f, packet_size.is_some(), "packet_size")?;
            udp_only(&f, on.is_some(), "on_time")?;
            udp_only(&f, off.is_some(), "off_time")?;
            udp_only(&f, shape.is_some(), "shape")?;
            udp_only(&f, duration.is_some(), "duration")?;
            udp_only(&f, tcp_table.is_some(), "tcp")?;
            udp_only(&f, cc.is_some(), "cc")?;
            udp_only(&f, size.is_some(), "size")?;
            FlowKind::Http(http::parse(http_table).map_err(|e| f.err_entry(e))?)
        }
        "rcp" => {
            udp_only(&f, rate.is_some(), "rate")?;
            udp_only(&f, packet_size.is_some(), "packet_size")?;
            udp_only(&f, on.is_some(), "on_time")?;
            udp_only(&f, off.is_some(), "off_time")?;
            udp_only(&f, shape.is_some(), "shape")?;
            udp_only(&f, duration.is_some(), "duration")?;
            udp_only(&f, tcp_table.is_some(), "tcp")?;
            FlowKind::Rcp(rcp::parse(cc, rcp_table).map_err(|e| f.err_entry(e))?)
        }
        "cbr" | "pareto" => {
            udp_only(&f, cc.is_some(), "cc")?;
            udp_only(&f, tcp_table.is_some(), "tcp")?;
            let rate_bps = rate.ok_or_else(|| f.err("rate", "missing"))?;
            let packet_size = packet_size.unwrap_or(1000);
            if !(1..=65_507).contains(&packet_size) {
                return Err(f.err("packet_size", "expected 1..=65507 bytes"));
            }
            let packet_size = packet_size as u32;
            if protocol == "cbr" {
                udp_only(&f, on.is_some(), "on_time")?;
                udp_only(&f, off.is_some(), "off_time")?;
                udp_only(&f, shape.is_some(), "shape")?;
                FlowKind::Cbr {
                    rate_bps,
                    packet_size,
                }
            } else {
                let shape = shape.unwrap_or(1.5);
                if !(shape > 1.0 && shape <= 100.0) {
                    return Err(f.err("shape", "expected a number in (1, 100]"));
                }
                let mean_on = on.unwrap_or(Duration::from_millis(500));
                let mean_off = off.unwrap_or(Duration::from_millis(500));
                if mean_on.is_zero() {
                    return Err(f.err("on_time", "must be positive"));
                }
                FlowKind::Pareto {
                    rate_bps,
                    packet_size,
                    mean_on,
                    mean_off,
                    shape,
                }
            }
        }
        "media" | "atl" => {
            udp_only(&f, on.is_some(), "on_time")?;
            udp_only(&f, off.is_some(), "off_time")?;
            udp_only(&f, shape.is_some(), "shape")?;
            let service = if protocol == "atl" {
                media::service(service.as_deref()).map_err(|e| f.err_entry(e))?
            } else {
                roam_proto::media::ServiceType::Media
            };
            if service == roam_proto::media::ServiceType::Reliable {
                // atl.txt §IV: reliable data runs TCP-ATL; the wireless end reports its link.
                udp_only(&f, rate.is_some(), "rate")?;
                udp_only(&f, packet_size.is_some(), "packet_size")?;
                udp_only(&f, duration.is_some(), "duration")?;
                let mut setup =
                    tcp::parse(cc.or(Some("atl".into())), tcp_table).map_err(|e| f.err_entry(e))?;
                std::sync::Arc::make_mut(&mut setup.config).report_link_info = true;
                FlowKind::Tcp(setup)
            } else {
                udp_only(&f, tcp_table.is_some(), "tcp")?;
                udp_only(&f, size.is_some(), "size")?;
                FlowKind::Media(
                    media::parse(cc.as_deref(), packet_size, rate).map_err(|e| f.err_entry(e))?,
                )
            }
        }
        other => {
            return Err(f.err(
                "protocol",
                format!(
                    "expected \"tcp\", \"cbr\", \"pareto\", \"media\" or \"atl\", got {other:?}"
                ),
            ))
        }
    };
    f.finish()?;
    Ok(FlowSpec {
        id,
        kind,
        from,
        to,
        from_iface,
        to_iface,
        start,
        size,
        stop: duration.map(|d| start.saturating_add(d)),
        cross,
        energy,
    })
}

fn parse_event(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<EventSpec, String> {
    let ctx = format!("event[{pos}]");
    let mut f = Fields::new(v, &ctx, "")?;
    let at = f.req::<Duration>("at")?;
    let link = f.get::<String>("link")?;
    let node = f.get::<String>("node")?;
    let action = match (link, node) {
        (Some(link), None) => {
            let link = link_by_name(&f, "link", links, &link)?;
            let (forward, reverse) = match f.get::<String>("direction")?.as_deref() {
                None | Some("both") => (true, true),
                Some("forward") => (true, false),
                Some("reverse") => (false, true),
                Some(other) => {
                    return Err(f.err(
                        "direction",
                        format!("expected \"forward\", \"reverse\" or \"both\", got {other:?}"),
                    ))
                }
            };
            let mut s = f.sub("set")?.ok_or_else(|| f.err("set", "missing"))?;
            let change = LinkChange {
                rate: s.get_with("rate", units::rate)?,
                delay: s.get::<Duration>("delay")?,
                loss: s.get_with("loss", units::probability)?,
                up: s.get::<bool>("up")?,
            };
            s.finish()?;
            EventAction::Link {
                link,
                forward,
                reverse,
                change,
            }
        }
        (None, Some(node)) => {
            let node = node_by_name(&f, "node", nodes, &node)?;
            let iface = f.get::<IfaceRef>("iface")?;
            if iface.is_none() {
                return Err(f.err("iface", "missing"));
            }
            let iface = resolve_iface(&f, "iface", iface, node, nodes, links)?;
            let up = f.req::<bool>("up")?;
            EventAction::Iface { node, iface, up }
        }
        _ => return Err(f.err_entry("give exactly one of `link` or `node`")),
    };
    f.finish()?;
    Ok(EventSpec { at, action })
}

fn parse_route(
    v: Value,
    pos: usize,
    nodes: &[NodeSpec],
    links: &[LinkSpec],
) -> Result<RouteSpec, String> {
    let ctx = format!("route[{pos}]");
    let mut f = Fields::new(v, &ctx, "")?;
    let router_name = f.req::<String>("node")?;
    let router = node_by_name(&f, "node", nodes, &router_name)?;
    if nodes[router].kind != NodeKind::Router {
        return Err(f.err("node", format!("{router_name:?} is not a router")));
    }
    let host_name = f.req::<String>("to")?;
    let host = host_by_name(&f, "to", nodes, &host_name)?;
    let iface = f.get::<IfaceRef>("to_iface")?;
    let iface = resolve_iface(&f, "to_iface", iface, host, nodes, links)?;
    let via = f.req::<String>("via")?;
    let link = link_by_name(&f, "via", links, &via)?;
    if links[link].a != router && links[link].b != router {
        return Err(f.err(
            "via",
            format!("link {via:?} is not attached to {router_name:?}"),
        ));
    }
    f.finish()?;
    Ok(RouteSpec {
        router,
        host,
        iface,
        link,
    })
}
