//! Building the emulated paths: the namespaces on each side, one pair of TUN devices per path
//! (one end in each namespace), their addresses and the inner side's per-source routing, and
//! the [`Wire`] between them. Everything is undone when the returned [`Bed`] is dropped (TUN
//! devices vanish with their descriptors, created namespaces are deleted, rules added to
//! joined namespaces removed).

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::config::PathModel;
use crate::error::{EmuError, Result};
use crate::netns::{self, Undo};
use crate::sys;
use crate::wire::Wire;

/// Most paths one emulation carries.
pub const MAX_PATHS: usize = 16;
/// First routing table of the inner side's per-source rules (one per path).
const TABLE_BASE: u32 = 2900;

/// One side of the paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Side {
    /// A namespace made for this emulation (refused if it exists), deleted afterwards.
    Create(String),
    /// An existing namespace.
    Join(String),
    /// The caller's own namespace.
    Here,
}

impl Side {
    fn ns(&self) -> Option<&str> {
        match self {
            Side::Create(n) | Side::Join(n) => Some(n),
            Side::Here => None,
        }
    }
}

/// How to lay the paths out.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The command's side: each link's `a` (or `--inner` node).
    pub inner: Side,
    /// The far side.
    pub outer: Side,
    /// Path k uses 10.`subnet`.(k+1).1 inside and .2 outside, /24.
    pub subnet: u8,
    /// TUN device names are `{prefix}i{k}` and `{prefix}o{k}` (at most 10 bytes).
    pub prefix: String,
}

/// A TUN name prefix no other emulation of this process uses: `re` + pid + a counter.
pub fn unique_prefix() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed) % 100;
    format!("re{}x{n}", std::process::id() % 100_000)
}

/// The addresses of one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathAddrs {
    /// The inner end.
    pub inner: Ipv4Addr,
    /// The outer end.
    pub outer: Ipv4Addr,
}

/// The laid-out paths; dropping it removes everything it made.
#[derive(Debug)]
pub struct Bed {
    /// The inner namespace (`None`: the caller's).
    pub inner_ns: Option<String>,
    /// The outer namespace (`None`: the caller's).
    pub outer_ns: Option<String>,
    /// Per path, in order.
    pub addrs: Vec<PathAddrs>,
    /// Per path, the link's name.
    pub names: Vec<String>,
    /// Undone on drop.
    #[allow(dead_code)] // Held for its `Drop`.
    undo: Undo,
}

/// Checks that this process may emulate: root and a TUN device.
pub fn check_allowed() -> Result<()> {
    if !sys::is_root() {
        return Err(EmuError::NotRoot);
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(sys::TUN_DEVICE)
        .map(drop)
        .map_err(|source| EmuError::NoTun {
            path: sys::TUN_DEVICE,
            source,
        })
}

/// Lays out `paths` as `layout` says and returns the bed and the wire to run.
pub fn build(paths: Vec<PathModel>, layout: &Layout) -> Result<(Bed, Wire)> {
    if paths.is_empty() || paths.len() > MAX_PATHS {
        return Err(EmuError::Usage(format!(
            "between 1 and {MAX_PATHS} links can be emulated at once ({} given)",
            paths.len()
        )));
    }
    if layout.prefix.is_empty() || layout.prefix.len() > 10 {
        return Err(EmuError::Usage(
            "the TUN name prefix must be 1 to 10 bytes".into(),
        ));
    }
    check_allowed()?;
    if [&layout.inner, &layout.outer]
        .iter()
        .any(|s| matches!(s, Side::Create(_)))
    {
        // What an emulation killed with SIGKILL left behind (see `stale`).
        crate::stale::remove_stale();
    }
    let mut undo = Undo::default();
    for side in [&layout.inner, &layout.outer] {
        match side {
            Side::Create(n) => undo.add_namespace(n)?,
            Side::Join(n) => {
                netns::check_name(n)?;
                if !netns::exists(n) {
                    return Err(EmuError::NoNamespace(n.clone()));
                }
            }
            Side::Here => {}
        }
    }
    if layout.inner.ns() == layout.outer.ns() {
        return Err(EmuError::Usage(
            "the two sides must be different namespaces".into(),
        ));
    }
    let mut ends = Vec::new();
    let mut addrs = Vec::new();
    let names = paths.iter().map(|p| p.name.clone()).collect();
    for k in 0..paths.len() {
        let net = u8::try_from(k + 1).unwrap_or(u8::MAX);
        let pa = PathAddrs {
            inner: Ipv4Addr::new(10, layout.subnet, net, 1),
            outer: Ipv4Addr::new(10, layout.subnet, net, 2),
        };
        for (side, addr, tag) in [
            (&layout.inner, pa.inner, 'i'),
            (&layout.outer, pa.outer, 'o'),
        ] {
            let name = format!("{}{tag}{k}", layout.prefix);
            let file = sys::open_tun(&name).map_err(|source| EmuError::Tun {
                name: name.clone(),
                source,
            })?;
            ends.push(file);
            if let Some(ns) = side.ns() {
                netns::ip(&["link", "set", &name, "netns", ns])?;
            }
            let cidr = format!("{addr}/24");
            netns::ip_in(side.ns(), &["addr", "add", &cidr, "dev", &name])?;
            netns::ip_in(side.ns(), &["link", "set", &name, "up"])?;
        }
        addrs.push(pa);
    }
    // The inner side is multi-homed: what leaves from path k's address goes over path k,
    // whichever outer address it is for (MPTCP subflows, R²CP pipes to either mirror).
    if paths.len() > 1 {
        let all = format!("10.{}.0.0/16", layout.subnet);
        for (k, pa) in addrs.iter().enumerate() {
            let table = (TABLE_BASE + k as u32).to_string();
            let from = pa.inner.to_string();
            let dev = format!("{}i{k}", layout.prefix);
            let ns = layout.inner.ns();
            let mut rule = Vec::new();
            if let Some(n) = ns {
                rule.extend(["-n", n]);
            }
            let add: Vec<&str> = rule
                .iter()
                .copied()
                .chain(["rule", "add", "from", &from, "table", &table])
                .collect();
            let del: Vec<&str> = rule
                .iter()
                .copied()
                .chain(["rule", "del", "from", &from, "table", &table])
                .collect();
            undo.ip_with_undo(&add, &del)?;
            netns::ip_in(ns, &["route", "add", &all, "dev", &dev, "table", &table])?;
        }
    }
    let bed = Bed {
        inner_ns: layout.inner.ns().map(str::to_string),
        outer_ns: layout.outer.ns().map(str::to_string),
        addrs,
        names,
        undo,
    };
    let wire = Wire::new(paths, ends).map_err(EmuError::Io)?;
    Ok((bed, wire))
}
