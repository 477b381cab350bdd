//! The connection table: a slab of connections addressed by [`Handle`], the paths of each
//! (the host's local and remote address for every [`PathId`]) and the connection-id index
//! datagrams are demultiplexed by.

use std::collections::HashMap;

use roam_wire::ConnId;

use super::{EndpointConnection, PathId};
use crate::Time;

/// A connection held by an endpoint. Handles are not reused while the endpoint lives long
/// enough for a host to confuse them: a slot's generation changes every time it is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    index: u32,
    generation: u32,
}

impl Handle {
    /// The slot index (dense, small: usable to index a host's own per-connection tables).
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// Where one path of a connection leaves from and goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathAddrs<L, A> {
    /// The path.
    pub path: PathId,
    /// The host's local address (socket) for it.
    pub local: L,
    /// The peer's address.
    pub remote: A,
}

/// One held connection and the endpoint's bookkeeping for it.
#[derive(Debug)]
pub(super) struct Entry<C, L, A> {
    pub conn: C,
    pub paths: Vec<PathAddrs<L, A>>,
    /// The conn ids registered in the index for this connection.
    pub ids: Vec<(ConnId, PathId)>,
    /// The peer it was accepted from (its host counted against the per-host cap,
    /// `EndpointConfig::max_per_peer`), `None` if inserted.
    pub accepted_from: Option<A>,
    pub memory: usize,
    /// When the connection last received a datagram (or was created): the idle timer's base.
    pub last_heard: Time,
    /// The deadline currently in the timer heap for it.
    pub deadline: Option<Time>,
    /// True while it sits in the send queue.
    pub queued: bool,
    /// True while it waits for its deadline to be re-read after `connection_mut`.
    pub touched: bool,
}

impl<C, L: Copy + Eq, A: Copy + Eq> Entry<C, L, A> {
    /// The addresses of `path`.
    pub fn path(&self, path: PathId) -> Option<&PathAddrs<L, A>> {
        self.paths.iter().find(|p| p.path == path)
    }
}

struct Slot<C, L, A> {
    generation: u32,
    entry: Option<Entry<C, L, A>>,
}

/// The slab and the conn-id index.
pub(super) struct Table<C, L, A> {
    slots: Vec<Slot<C, L, A>>,
    free: Vec<u32>,
    by_id: HashMap<ConnId, (Handle, PathId)>,
    /// The last id [`Table::lookup`] found, and its answer: a host with one busy connection
    /// (every simulated flow's end, a bulk transfer) demultiplexes most datagrams by one
    /// comparison instead of a keyed hash. Cleared whenever `by_id` changes; a hit needs the
    /// exact id, so chosen ids gain nothing from it.
    last_hit: Option<(ConnId, Handle, PathId)>,
    live: usize,
}

impl<C: EndpointConnection, L: Copy + Eq, A: Copy + Eq> Table<C, L, A> {
    pub fn new() -> Self {
        Table {
            slots: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
            last_hit: None,
            live: 0,
        }
    }

    /// Connections held.
    pub fn len(&self) -> usize {
        self.live
    }

    /// The connection `id` belongs to, and the path.
    pub fn lookup(&mut self, id: ConnId) -> Option<(Handle, PathId)> {
        if let Some((last, h, path)) = self.last_hit {
            if last == id {
                return Some((h, path));
            }
        }
        let found = self.by_id.get(&id).copied();
        if let Some((h, path)) = found {
            self.last_hit = Some((id, h, path));
        }
        found
    }

    /// True if any of `ids` is held by a connection other than `except`.
    pub fn any_in_use(&self, ids: &[(ConnId, PathId)], except: Option<Handle>) -> bool {
        ids.iter()
            .any(|(id, _)| self.by_id.get(id).is_some_and(|(h, _)| Some(*h) != except))
    }

    pub fn get(&self, h: Handle) -> Option<&Entry<C, L, A>> {
        self.slots
            .get(h.index())
            .filter(|s| s.generation == h.generation)
            .and_then(|s| s.entry.as_ref())
    }

    pub fn get_mut(&mut self, h: Handle) -> Option<&mut Entry<C, L, A>> {
        self.slots
            .get_mut(h.index())
            .filter(|s| s.generation == h.generation)
            .and_then(|s| s.entry.as_mut())
    }

    /// Stores `entry` (its conn ids are registered by [`Table::sync_ids`]).
    pub fn insert(&mut self, entry: Entry<C, L, A>) -> Handle {
        self.live += 1;
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.entry = Some(entry);
            return Handle {
                index,
                generation: slot.generation,
            };
        }
        let index = u32::try_from(self.slots.len()).expect("fewer than 2^32 connections");
        self.slots.push(Slot {
            generation: 0,
            entry: Some(entry),
        });
        Handle {
            index,
            generation: 0,
        }
    }

    /// Re-reads the connection's conn ids and registers those whose path is mapped and
    /// whose id no other connection holds; unregisters the ones it no longer has.
    pub fn sync_ids(&mut self, h: Handle, scratch: &mut Vec<(ConnId, PathId)>) {
        self.last_hit = None;
        let Some(e) = self.get(h) else { return };
        scratch.clear();
        e.conn.conn_ids(scratch);
        let wanted: Vec<(ConnId, PathId)> = scratch
            .iter()
            .copied()
            .filter(|(_, p)| e.path(*p).is_some())
            .collect();
        let old = e.ids.clone();
        for (id, _) in old.iter().filter(|o| !wanted.contains(o)) {
            if self.by_id.get(id).is_some_and(|(owner, _)| *owner == h) {
                self.by_id.remove(id);
            }
        }
        let mut kept = Vec::with_capacity(wanted.len());
        for (id, path) in wanted {
            match self.by_id.get(&id) {
                Some((owner, _)) if *owner != h => {}
                _ => {
                    self.by_id.insert(id, (h, path));
                    kept.push((id, path));
                }
            }
        }
        if let Some(e) = self.get_mut(h) {
            e.ids = kept;
        }
    }

    /// Removes the connection and its conn ids.
    pub fn remove(&mut self, h: Handle) -> Option<Entry<C, L, A>> {
        let slot = self.slots.get_mut(h.index())?;
        if slot.generation != h.generation {
            return None;
        }
        let entry = slot.entry.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.last_hit = None;
        self.free.push(h.index);
        self.live -= 1;
        for (id, _) in &entry.ids {
            if self.by_id.get(id).is_some_and(|(owner, _)| *owner == h) {
                self.by_id.remove(id);
            }
        }
        Some(entry)
    }

    /// Handles of every connection held (order of slots).
    pub fn handles(&self) -> impl Iterator<Item = Handle> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.entry.as_ref().map(|_| Handle {
                index: i as u32,
                generation: s.generation,
            })
        })
    }
}
