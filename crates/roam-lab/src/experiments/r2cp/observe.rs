//! What the R²CP reproductions read from a run's packet trace (`roam_sim::run_traced`): every
//! DATA payload that reached the mobile host, by path, and every pull the mobile host sent.
//! From these: per-path and aggregate goodput over time (the timelines), the receive buffer's
//! occupancy at each arrival (Fig. 12(c)), duplicates, and data requested again.
//!
//! The trace is read from the one-line datagram summaries (`roam_wire::Summary`: `data [..]
//! seq=S len=L …`, `req [..] … blocks=#id:S-E,…`), so the simulator needs no R²CP-specific
//! counters. Observing never changes a run.

use std::collections::{BTreeMap, HashSet};

use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};

/// One DATA payload delivered to the mobile host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Arrival {
    /// Seconds.
    pub t: f64,
    /// Path index (position in [`Observer::paths`]).
    pub path: usize,
    /// Global offset.
    pub seq: u64,
    /// Payload bytes.
    pub len: u64,
}

/// One pull (a requested block) the mobile host sent, counted once per (path, pull id, range).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pull {
    /// Seconds (first time it was sent).
    pub t: f64,
    /// Path index.
    pub path: usize,
    /// Global range.
    pub start: u64,
    /// End (exclusive).
    pub end: u64,
}

/// Collects the arrivals and pulls of flow `flow` over the named wireless links (each link's
/// `fwd` direction carries DATA to the mobile host, `rev` its requests).
#[derive(Debug, Clone)]
pub(super) struct Observer {
    flow: String,
    /// Link names, one per path.
    pub paths: Vec<String>,
    /// Every DATA payload delivered to the mobile host, in time order.
    pub arrivals: Vec<Arrival>,
    /// Every distinct pull, in time order.
    pub pulls: Vec<Pull>,
    /// SYN+ACK arrivals (a pipe coming up), in time order.
    pub syn_acks: Vec<(f64, usize)>,
    seen: HashSet<(usize, u64, u64, u64)>,
}

impl Observer {
    /// Watches `flow` on the links `paths`.
    pub fn new(flow: &str, paths: &[&str]) -> Self {
        Observer {
            flow: flow.to_owned(),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            arrivals: Vec::new(),
            pulls: Vec::new(),
            syn_acks: Vec::new(),
            seen: HashSet::new(),
        }
    }

    fn path(&self, link: &str, dir: &str) -> Option<usize> {
        let (name, d) = link.rsplit_once(':')?;
        (d == dir)
            .then(|| self.paths.iter().position(|p| p == name))
            .flatten()
    }
}

/// `key=value` (a number) in a summary.
fn field(summary: &str, key: &str) -> Option<u64> {
    summary
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The pull blocks `#id:start-end` of a request summary.
fn blocks(summary: &str) -> Vec<(u64, u64, u64)> {
    let Some(list) = summary
        .split_whitespace()
        .find_map(|w| w.strip_prefix("blocks="))
    else {
        return Vec::new();
    };
    list.split(',')
        .filter_map(|b| {
            let (id, range) = b.strip_prefix('#')?.split_once(':')?;
            let (s, e) = range.split_once('-')?;
            Some((id.parse().ok()?, s.parse().ok()?, e.parse().ok()?))
        })
        .collect()
}

impl PacketObserver for Observer {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        let t = r.time.as_secs_f64();
        match r.fate {
            PacketFate::Delivered if r.summary.starts_with("data ") => {
                let Some(path) = self.path(r.link, "fwd") else {
                    return;
                };
                let flags = r.summary.split_whitespace().nth(1).unwrap_or("");
                if flags.contains('S') {
                    self.syn_acks.push((t, path));
                }
                if let (Some(seq), Some(len)) = (field(r.summary, "seq"), field(r.summary, "len")) {
                    if len > 0 {
                        self.arrivals.push(Arrival { t, path, seq, len });
                    }
                }
            }
            PacketFate::Sent if r.summary.starts_with("req ") => {
                let Some(path) = self.path(r.link, "rev") else {
                    return;
                };
                for (id, start, end) in blocks(r.summary) {
                    if end > start && self.seen.insert((path, id, start, end)) {
                        self.pulls.push(Pull {
                            t,
                            path,
                            start,
                            end,
                        });
                    }
                }
            }
            _ => {}
        }
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        flow == Some(self.flow.as_str())
    }
}

/// The receiver's reassembly, rebuilt from the arrivals: the in-order point, the bytes held
/// above it, and what each arrival found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Reassembly {
    /// Arrivals that carried at least one new byte.
    pub arrivals: u64,
    /// Of those, the ones that found at least 75 % of `buffer` held out of order (the
    /// application reads in-order data at once, so held = out of order; Fig. 12(c)).
    pub arrivals_75: u64,
    /// Payload bytes that arrived when already held or delivered.
    pub duplicate_bytes: u64,
    /// (time, in-order point after the arrival), at every advance.
    pub in_order: Vec<(f64, u64)>,
}

/// Replays `arrivals` through a reassembly buffer of `buffer` bytes.
pub(super) fn reassemble(arrivals: &[Arrival], start: u64, buffer: u64) -> Reassembly {
    let mut out = Reassembly::default();
    let mut next = start;
    // Held ranges above `next`: start → end, disjoint, not touching `next`.
    let mut held: BTreeMap<u64, u64> = BTreeMap::new();
    let mut held_bytes = 0u64;
    for a in arrivals {
        let (s, e) = (a.seq.max(next), a.seq + a.len);
        let new = if s < e {
            e - s - overlap(&held, s, e)
        } else {
            0
        };
        out.duplicate_bytes += a.len - new;
        if new == 0 {
            continue;
        }
        out.arrivals += 1;
        if held_bytes.saturating_mul(4) >= buffer.saturating_mul(3) {
            out.arrivals_75 += 1;
        }
        insert(&mut held, s, e);
        held_bytes += new;
        // Advance the in-order point over the range that now starts at it (merged with every
        // range it touches).
        if let Some(end) = held.remove(&next) {
            held_bytes -= end - next;
            next = end;
            out.in_order.push((a.t, next));
        }
    }
    out
}

/// Bytes per bin of `width` seconds over `[0, until)`, in Mb/s, of the arrivals on `path`
/// (`None`: every path).
pub(super) fn path_rate(
    arrivals: &[Arrival],
    path: Option<usize>,
    width: f64,
    until: f64,
) -> Vec<f64> {
    let n = (until / width).ceil().max(0.0) as usize;
    let mut bins = vec![0.0; n];
    for a in arrivals.iter().filter(|a| path.is_none_or(|p| a.path == p)) {
        let i = (a.t / width) as usize;
        if let Some(b) = bins.get_mut(i) {
            *b += a.len as f64 * 8.0;
        }
    }
    bins.iter().map(|b| b / width / 1e6).collect()
}

/// In-order goodput per bin of `width` seconds over `[0, until)`, in Mb/s.
pub(super) fn in_order_rate(r: &Reassembly, start: u64, width: f64, until: f64) -> Vec<f64> {
    let n = (until / width).ceil().max(0.0) as usize;
    let mut bins = vec![0.0; n];
    let mut last = start;
    for &(t, point) in &r.in_order {
        if let Some(b) = bins.get_mut((t / width) as usize) {
            *b += (point - last) as f64 * 8.0;
        }
        last = point;
    }
    bins.iter().map(|b| b / width / 1e6).collect()
}

/// Bytes of the pulls that asked again for data which had already arrived when the pull was
/// sent, and bytes pulled more than once in all (lost data asked again included).
pub(super) fn requested_again(o: &Observer) -> (u64, u64) {
    // Arrival coverage as of each pull time: replay both in time order.
    let mut got: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pulled: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut already, mut twice) = (0u64, 0u64);
    let mut ai = 0;
    for p in &o.pulls {
        while ai < o.arrivals.len() && o.arrivals[ai].t <= p.t {
            let a = o.arrivals[ai];
            insert(&mut got, a.seq, a.seq + a.len);
            ai += 1;
        }
        already += overlap(&got, p.start, p.end);
        twice += overlap(&pulled, p.start, p.end);
        insert(&mut pulled, p.start, p.end);
    }
    (already, twice)
}

/// Adds `[s, e)` to a set of disjoint ranges (merging).
fn insert(set: &mut BTreeMap<u64, u64>, s: u64, e: u64) {
    let (mut s, mut e) = (s, e);
    let touching: Vec<(u64, u64)> = set
        .range(..=e)
        .rev()
        .take_while(|(_, &he)| he >= s)
        .map(|(&a, &b)| (a, b))
        .collect();
    for (a, b) in touching {
        set.remove(&a);
        s = s.min(a);
        e = e.max(b);
    }
    set.insert(s, e);
}

/// Bytes of `[s, e)` inside the set.
fn overlap(set: &BTreeMap<u64, u64>, s: u64, e: u64) -> u64 {
    set.range(..e)
        .rev()
        .take_while(|(_, &he)| he > s)
        .map(|(&a, &b)| b.min(e) - a.max(s))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(t: f64, seq: u64, len: u64) -> Arrival {
        Arrival {
            t,
            path: 0,
            seq,
            len,
        }
    }

    #[test]
    fn summaries_parse() {
        assert_eq!(field("data [A] seq=3000 len=1000 wnd=5", "seq"), Some(3000));
        assert_eq!(field("data [A] seq=3000 len=1000 wnd=5", "len"), Some(1000));
        assert_eq!(
            blocks("req [A] req=0 deq=0 PUL blocks=#4:1000-2000,#3:0-1000"),
            vec![(4, 1000, 2000), (3, 0, 1000)]
        );
        assert!(blocks("req [A] req=0 deq=0").is_empty());
    }

    #[test]
    fn reassembly_counts_buffer_fill_duplicates_and_in_order_advances() {
        // Buffer of 4000: 2000 and 3000 arrive first (held 1000, then 2000 < 3000 = 75 %),
        // then 1000 (held 2000, not 75 %), then 0 (held 3000 ≥ 75 %) releases everything;
        // 2000 again is a duplicate.
        let a = [
            arr(0.1, 2000, 1000),
            arr(0.2, 3000, 1000),
            arr(0.3, 1000, 1000),
            arr(0.4, 0, 1000),
            arr(0.5, 2000, 1000),
        ];
        let r = reassemble(&a, 0, 4000);
        assert_eq!(r.arrivals, 4);
        assert_eq!(r.arrivals_75, 1);
        assert_eq!(r.duplicate_bytes, 1000);
        assert_eq!(r.in_order, vec![(0.4, 4000)]);
        let rate = in_order_rate(&r, 0, 0.25, 0.5);
        assert_eq!(rate, vec![0.0, 4000.0 * 8.0 / 0.25 / 1e6]);
    }

    #[test]
    fn pulls_of_received_data_are_counted() {
        let mut o = Observer::new("f", &["a"]);
        o.arrivals = vec![arr(0.1, 0, 1000)];
        for (t, s) in [(0.0, 0), (0.05, 1000), (0.2, 0), (0.3, 1000)] {
            o.pulls.push(Pull {
                t,
                path: 0,
                start: s,
                end: s + 1000,
            });
        }
        // 0-1000 asked again after it arrived; 1000-2000 asked twice before arriving.
        assert_eq!(requested_again(&o), (1000, 2000));
    }
}
