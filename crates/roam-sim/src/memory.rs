//! An estimate of the memory a scenario needs, made before it runs, so that a scenario too
//! large for the machine is refused with a clear message instead of aborting half-way with
//! "memory allocation failed".
//!

//! its path can hold in flight — twice the path's round-trip bandwidth-delay product plus every
//! queue on the way, the factor two for slow start's overshoot before a loss is noticed — and
//! never more than its buffers allow. Payload is not held at the senders (they pull it from a
//! byte source when they encode a segment), so what remains per flow is the receiver's
//! out-of-order data, the sender's per-segment records, and fixed per-connection state. Links
//! hold at most their queues; the routing tables and time series are counted exactly.
//! Design notes: `docs/SCALE.md`.

use std::fmt;

use crate::scenario::routing::{far_end, Routing, NO_ROUTE};
use crate::scenario::{Capacity, FlowKind, NodeKind, QueueLimit, Scenario};

/// Fixed state of one connection end (structures, timers, controller, option buffers).
const PER_CONNECTION: u64 = 8 << 10;
/// Bytes a sender keeps per segment in flight (its scoreboard record).
const PER_SEGMENT: u64 = 64;
/// Bytes of one queued or in-flight datagram beyond its payload (the `Packet`, the slab slot).
const PER_PACKET: u64 = 96;
/// Bytes of one pending event.
const PER_EVENT: u64 = 32;
/// A datagram's on-wire size when a scenario does not say (MSS plus headers).
const TYPICAL_PACKET: u64 = 1100;
/// Bytes per flow per time-series bin (throughput, window and counters).
const PER_SAMPLE: u64 = 48;
/// The simulator itself before any scenario: code, libraries, the pattern table, buffers
/// (about 6 MiB resident for the single-flow dumbbell, measured with `roam bench`).
const PROGRAM: u64 = 6 << 20;

/// What a scenario is expected to need, by part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Total bytes.
    pub total: u64,
    /// The parts, largest first: (what, bytes).
    pub parts: Vec<(String, u64)>,
}

impl MemoryEstimate {
    /// A one-line breakdown of the largest parts ("2.1 GiB: 1000 TCP flows' windows 1.9 GiB, …").
    pub fn breakdown(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .filter(|(_, b)| *b > 0)
            .take(4)
            .map(|(what, b)| format!("{what} {}", Bytes(*b)))
            .collect();
        format!("{}: {}", Bytes(self.total), parts.join(", "))
    }
}

/// Bytes, printed with a binary unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        match self.0 {
            n if n >= 1 << 30 => write!(f, "{:.1} GiB", b / f64::from(1u32 << 30)),
            n if n >= 1 << 20 => write!(f, "{:.1} MiB", b / f64::from(1u32 << 20)),
            n if n >= 1 << 10 => write!(f, "{:.1} KiB", b / 1024.0),
            n => write!(f, "{n} B"),
        }
    }
}

/// Why a scenario was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "scenario {name:?} needs about {} but only {} is available ({why}); estimate {}. Use smaller \
     send_buffer/recv_buffer, fewer flows or a shorter sample_interval, or raise the limit with \
     --max-memory",
    Bytes(estimate.total),
    Bytes(*limit),
    estimate.breakdown()
)]
pub struct MemoryError {
    /// The scenario's name.
    pub name: String,
    /// What it needs.
    pub estimate: MemoryEstimate,
    /// The limit it exceeds.
    pub limit: u64,
    /// Where the limit comes from (`--max-memory`, the machine's available memory, a cgroup).
    pub why: String,
}

/// Refuses `s` when its estimate exceeds `limit` (with where that limit comes from).
pub fn check(s: &Scenario, limit: u64, why: &str) -> Result<MemoryEstimate, MemoryError> {
    let estimate = estimate(s);
    if estimate.total > limit {
        return Err(MemoryError {
            name: s.name.clone(),
            estimate,
            limit,
            why: why.to_string(),
        });
    }
    Ok(estimate)
}

/// Estimates what running `s` needs.
pub fn estimate(s: &Scenario) -> MemoryEstimate {
    let routing = s.routing();
    let paths: Vec<Vec<usize>> = s
        .flows
        .iter()
        .map(|f| path_links(s, routing, f.from, f.from_iface, f.to, f.to_iface))
        .collect();
    // How many window-based flows cross each link: they share what it can hold.
    let mut sharing = vec![0u64; s.links.len()];
    for (f, path) in s.flows.iter().zip(&paths) {
        if window_based(&f.kind) {
            for &l in path {
                sharing[l] += 1;
            }
        }
    }
    let mut windows = [0u64; 3]; // TCP, RCP, other
    let mut counts = [0u64; 3];
    let mut udp_queues = 0u64;
    for (f, path) in s.flows.iter().zip(&paths) {
        let (k, held) = match &f.kind {
            FlowKind::Tcp(t) => {
                let limit = t.config.recv_buffer.min(t.config.send_buffer);
                (
                    0,
                    window_held(s, path, &sharing, u64::from(t.config.mss), limit, f.size),
                )
            }
            FlowKind::Rcp(r) => {
                let limit = r.config.recv_buffer;
                (
                    1,
                    window_held(s, path, &sharing, u64::from(r.config.mss), limit, f.size),
                )
            }
            FlowKind::R2cp(r) => {
                // One receive buffer for the connection, a window per pipe (each on its own
                // path): the pipes' windows, but never more than the buffer holds.
                let cfg = &r.rcp.config;
                let mss = u64::from(cfg.mss);
                let pipes: u64 = r
                    .pipes
                    .iter()
                    .map(|p| {
                        let path = path_links(s, routing, p.server, p.server_iface, f.to, p.iface);
                        window_held(s, &path, &sharing, mss, cfg.recv_buffer, f.size)
                    })
                    .fold(0u64, u64::saturating_add);
                (
                    1,
                    pipes.min(2 * cfg.recv_buffer + cfg.recv_buffer / mss.max(1) * PER_SEGMENT),
                )
            }
            FlowKind::Ptcp(p) if p.striping != crate::scenario::StripingMode::Ptcp => {
                // The striping baselines (`agents/ptcp_striping.rs`): one TCP connection per
                // pipe, its send buffer holding written bytes and its receive buffer filling
                // while the application waits for another pipe, plus the resequencing buffer.
                let cfg = &p.tcp.config;
                let per_pipe = cfg.send_buffer.saturating_add(cfg.recv_buffer);
                let pipes = (p.pipes.len() as u64).saturating_mul(per_pipe);
                (0, pipes.saturating_add(p.reseq_buffer))
            }
            FlowKind::Ptcp(p) => {
                // One send and one receive buffer for the connection, a window per pipe (each
                // on its own path), never more than the buffers hold.
                let cfg = &p.tcp.config;
                let mss = u64::from(cfg.mss);
                let limit = cfg.recv_buffer.min(cfg.send_buffer);
                let pipes: u64 = p
                    .pipes
                    .iter()
                    .map(|q| {
                        let path = path_links(s, routing, f.from, q.from_iface, f.to, q.to_iface);
                        window_held(s, &path, &sharing, mss, limit, f.size)
                    })
                    .fold(0u64, u64::saturating_add);
                (0, pipes.min(2 * limit + limit / mss.max(1) * PER_SEGMENT))
            }
            FlowKind::Http(_) => (2, window_held(s, path, &sharing, 1000, 4 << 20, None)),
            FlowKind::Cbr { .. } | FlowKind::Pareto { .. } | FlowKind::Media(_) => {
                // Datagram sources hold nothing themselves but can fill every queue on the way.
                udp_queues = udp_queues.saturating_add(path_queues(s, path));
                (2, 0)
            }
        };
        windows[k] = windows[k].saturating_add(held.saturating_add(2 * PER_CONNECTION));
        counts[k] += 1;
    }
    let all_queues = s
        .links
        .iter()
        .flat_map(|l| [&l.forward, &l.reverse])
        .map(|d| queue_bytes(&d.queue))
        .fold(0u64, u64::saturating_add);
    let queues = udp_queues.min(all_queues);
    let routers = s
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Router)
        .count() as u64;
    let tables = routers * routing.owners.len() as u64 * 4;
    let bins = if s.run.sample_interval.is_zero() {
        0
    } else {
        (s.run.duration.as_nanos() / s.run.sample_interval.as_nanos()) as u64 + 1
    };
    let series = bins
        .saturating_mul(s.flows.len() as u64)
        .saturating_mul(PER_SAMPLE);
    // Timers of every agent, and an event per datagram in flight (bounded by what is held).
    let held: u64 = windows.iter().fold(queues, |a, &b| a.saturating_add(b));
    let events = (2 * s.flows.len() as u64 + held / TYPICAL_PACKET) * PER_EVENT;
    let mut parts = vec![
        (format!("windows of {} TCP flows", counts[0]), windows[0]),
        (
            format!("windows of {} RCP and R²CP flows", counts[1]),
            windows[1],
        ),
        (format!("{} other flows", counts[2]), windows[2]),
        ("queued datagram traffic".to_string(), queues),
        ("routing tables".to_string(), tables),
        (format!("time series ({bins} bins)"), series),
        ("events".to_string(), events),
        ("the simulator itself".to_string(), PROGRAM),
    ];
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    let total = parts.iter().map(|p| p.1).fold(0u64, u64::saturating_add);
    MemoryEstimate { total, parts }
}

fn window_based(kind: &FlowKind) -> bool {
    matches!(
        kind,
        FlowKind::Tcp(_) | FlowKind::Rcp(_) | FlowKind::Http(_)
    )
}

/// What one window-based flow holds: its window once in the network and once in the
/// receiver's reassembly buffer (the worst case after a loss), plus a record per segment. The
/// window is at most twice the flow's share of what the tightest link on its path can hold
/// (bandwidth-delay product plus queues: more overflows that queue and is cut back; twice for
/// slow start's overshoot and unfair shares), at least four segments, and never more than its
/// buffers or its size allow.
fn window_held(
    s: &Scenario,
    path: &[usize],
    sharing: &[u64],
    mss: u64,
    buffers: u64,
    size: Option<u64>,
) -> u64 {
    let rtt_ns: u128 = path
        .iter()
        .flat_map(|&l| [&s.links[l].forward, &s.links[l].reverse])
        .map(|d| d.delay.as_nanos())
        .sum();
    let share = path
        .iter()
        .map(|&l| {
            let link = &s.links[l];
            let rate = rate_bps(&link.forward.capacity).max(rate_bps(&link.reverse.capacity));
            let bdp = (u128::from(rate) * rtt_ns / 8 / 1_000_000_000).min(u128::from(u64::MAX));
            let holds = (bdp as u64)
                .saturating_add(queue_bytes(&link.forward.queue))
                .saturating_add(queue_bytes(&link.reverse.queue));
            holds / sharing[l].max(1)
        })
        .min()
        .unwrap_or(0);
    let mss = mss.max(1);
    let window = share
        .saturating_mul(2)
        .max(4 * mss)
        .min(buffers)
        .min(size.unwrap_or(u64::MAX));
    window
        .saturating_mul(2)
        .saturating_add(window / mss * PER_SEGMENT)
}

fn queue_bytes(q: &QueueLimit) -> u64 {
    match *q {
        QueueLimit::Packets(n) => n.saturating_mul(TYPICAL_PACKET + PER_PACKET),
        QueueLimit::Bytes(b) => b.saturating_add(b / TYPICAL_PACKET * PER_PACKET),
    }
}

fn path_queues(s: &Scenario, path: &[usize]) -> u64 {
    path.iter()
        .map(|&l| {
            queue_bytes(&s.links[l].forward.queue).max(queue_bytes(&s.links[l].reverse.queue))
        })
        .fold(0u64, u64::saturating_add)
}

/// The links from `from`/`from_iface` to `to`/`to_iface`, by the scenario's routes.
fn path_links(
    s: &Scenario,
    routing: &Routing,
    from: usize,
    from_iface: u32,
    to: usize,
    to_iface: u32,
) -> Vec<usize> {
    let Some(&first) = s.nodes[from].ifaces.get(from_iface as usize) else {
        return Vec::new();
    };
    let target = routing.addr_index(to, to_iface) as usize;
    let mut path = vec![first];
    let mut u = far_end(&s.links, first, from);
    for _ in 0..=s.nodes.len() {
        if s.nodes[u].kind == NodeKind::Host {
            break;
        }
        match routing.tables[u].get(target) {
            Some(&dir) if dir != NO_ROUTE => {
                let l = (dir / 2) as usize;
                path.push(l);
                u = far_end(&s.links, l, u);
            }
            _ => break,
        }
    }
    path
}

fn rate_bps(c: &Capacity) -> u64 {
    match c {
        Capacity::Rate(r) => *r,
        Capacity::Trace(t) => t.peak_rate_bps(),
    }
}

/// The memory this process may use: the smallest of the machine's available memory
/// (`MemAvailable` in /proc/meminfo), the cgroup's limit less its usage, and the address-space
/// limit, each with its name. `None` where none can be read (then nothing is refused).
pub fn available_memory() -> Option<(u64, String)> {
    let mut best: Option<(u64, String)> = None;
    let mut consider = |bytes: Option<u64>, why: &str| {
        if let Some(b) = bytes {
            if best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, why.to_string()));
            }
        }
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    consider(
        meminfo
            .as_deref()
            .and_then(|m| meminfo_kib(m, "MemAvailable:"))
            .map(|k| k * 1024),
        "the machine's available memory",
    );
    let cg_max = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok();
    let cg_now = std::fs::read_to_string("/sys/fs/cgroup/memory.current").ok();
    if let (Some(max), Some(now)) = (cg_max, cg_now) {
        if let (Ok(max), Ok(now)) = (max.trim().parse::<u64>(), now.trim().parse::<u64>()) {
            consider(Some(max.saturating_sub(now)), "the cgroup's memory limit");
        }
    }
    let limits = std::fs::read_to_string("/proc/self/limits").ok();
    consider(
        limits.as_deref().and_then(address_space_limit),
        "the address-space limit (ulimit -v)",
    );
    best
}

fn meminfo_kib(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    // "Max address space   <soft>   <hard>   bytes": the soft limit, or "unlimited".
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_meminfo_and_limits() {
        let m = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_kib(m, "MemAvailable:"), Some(20_000_000));
        let l = "Limit                     Soft Limit           Hard Limit           Units\n\
                 Max address space         6442450944           unlimited            bytes\n";
        assert_eq!(address_space_limit(l), Some(6_442_450_944));
        let u = "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_limit(u), None);
    }

    #[test]
    fn prints_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(3 << 20).to_string(), "3.0 MiB");
        assert_eq!(Bytes(5 << 30).to_string(), "5.0 GiB");
    }
}
