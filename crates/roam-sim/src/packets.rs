//! Datagrams inside the network (queued at a link or on its wire), each kept in one slot from
//! the moment an agent sends it until it is delivered or dropped.
//!
//! Link queues, lanes and events carry a datagram's slot index (4 bytes) instead of the
//! 56-byte [`Packet`]: a router's hop moves no datagram, and a datagram is copied once into
//! the network and once out of it. Freed slots are reused, most recently freed first; which
//! slot a datagram gets changes no result (nothing orders by it).

use crate::agent::Packet;

/// A datagram in the network, and the link direction of its pending arrival when that arrival
/// is scheduled on its own (see [`crate::event::EventKind::Arrive`]).
#[derive(Debug)]
struct Slot {
    pkt: Option<Packet>,
    dir: u32,
}

/// The datagrams in the network, by slot.
#[derive(Debug, Default)]
pub(crate) struct Packets {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Packets {
    /// Keeps `pkt` in a free slot and returns its index.
    // Always inlined (into the agents' send), with a new slot out of line: the datagram is
    // written once, into its slot.
    #[inline(always)]
    pub(crate) fn put(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i as usize) {
                    s.pkt = Some(pkt);
                }
                i
            }
            None => self.put_new(pkt),
        }
    }

    /// [`Packets::put`] when no slot is free.
    #[cold]
    #[inline(never)]
    fn put_new(&mut self, pkt: Packet) -> u32 {
        self.slots.push(Slot {
            pkt: Some(pkt),
            dir: 0,
        });
        (self.slots.len() - 1) as u32
    }

    /// The datagram in slot `i`, if any.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> Option<&Packet> {
        self.slots.get(i as usize).and_then(|s| s.pkt.as_ref())
    }

    /// Takes the datagram out of slot `i` (if any) and frees the slot.
    #[inline]
    pub(crate) fn take(&mut self, i: u32) -> Option<Packet> {
        let pkt = self.slots.get_mut(i as usize)?.pkt.take()?;
        self.free.push(i);
        Some(pkt)
    }

    /// Notes that slot `i`'s datagram arrives over link direction `dir` on its own.
    #[inline]
    pub(crate) fn set_dir(&mut self, i: u32, dir: u32) {
        if let Some(s) = self.slots.get_mut(i as usize) {
            s.dir = dir;
        }
    }

    /// The link direction noted for slot `i` by [`Packets::set_dir`].
    #[inline]
    pub(crate) fn dir(&self, i: u32) -> u32 {
        self.slots.get(i as usize).map_or(0, |s| s.dir)
    }

    /// Datagrams held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Addr, SockAddr};

    fn packet(byte: u8) -> Packet {
        let a = SockAddr {
            addr: Addr(1),
            port: 2,
        };
        Packet {
            src: a,
            dst: a,
            payload: vec![byte],
            flow: None,
        }
    }

    #[test]
    fn slots_are_reused_and_emptied_slots_hold_nothing() {
        let mut p = Packets::default();
        let a = p.put(packet(1));
        let b = p.put(packet(2));
        assert_ne!(a, b);
        assert_eq!(p.get(b).map(|x| x.payload[0]), Some(2));
        assert_eq!(p.take(a).map(|x| x.payload[0]), Some(1));
        assert_eq!(p.take(a), None, "taken twice");
        assert!(p.get(a).is_none());
        assert_eq!(p.len(), 1);
        let c = p.put(packet(3));
        assert_eq!(c, a, "the freed slot");
        p.set_dir(c, 7);
        assert_eq!(p.dir(c), 7);
        assert_eq!(p.get(99), None);
        assert_eq!(p.take(99), None);
        assert_eq!(p.len(), 2);
    }
}
