//! The event queue: a 4-ary min-heap ordered by (time, sequence id), so that events at the same
//! instant run in the order they were scheduled.
//!
//! Popping the earliest event is the simulator's most frequent operation (about one per packet
//! and hop). A 4-ary heap is half as deep as a binary one, its entries are 24 bytes, and the
//! (time, sequence id) pair is compared as one 128-bit number, so choosing among children needs
//! no data-dependent branches; `docs/SCALE.md` has the measurements. Any correct priority queue
//! over the unique (time, sequence id) keys pops the same order, so results do not depend on
//! this choice.

use roam_proto::Time;

/// What happens. Indices refer to the simulator's tables; kept small (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Call an agent's `start`.
    AgentStart(u32),
    /// An agent's timer may have expired.
    AgentTimer(u32),
    /// A link direction's transmitter may take the next packet.
    TxReady(u32),
    /// A packet (by its slot in the in-flight table, which also names the link direction)
    /// reaches the far end of a link direction.
    Arrive(u32),
    /// A Gilbert–Elliott channel changes state.
    GilbertFlip(u32),
    /// A blackout window opens (`on`) or closes on a link direction.
    Blackout { dir: u32, on: bool },
    /// A scenario `[[event]]` (by index).
    Scheduled(u32),
    /// End of a time-series bin.
    Sample,
}

/// Children per heap node.
const ARITY: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    kind: EventKind,
}

impl Entry {
    /// The ordering key: earlier first, then in scheduling order.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// Index and key of the smallest of `heap[first..first + ARITY]` (all present).
#[inline]
fn min_of_full(heap: &[Entry], first: usize) -> (usize, u128) {
    let c = &heap[first..first + ARITY];
    let (k0, k1, k2, k3) = (c[0].key(), c[1].key(), c[2].key(), c[3].key());
    let (a, ka) = if k1 < k0 { (1, k1) } else { (0, k0) };
    let (b, kb) = if k3 < k2 { (3, k3) } else { (2, k2) };
    if kb < ka {
        (first + b, kb)
    } else {
        (first + a, ka)
    }
}

/// Index and key of the smallest of `heap[first..]` (one to `ARITY` entries).
#[inline]
fn min_of_tail(heap: &[Entry], first: usize) -> (usize, u128) {
    let mut best = (first, heap[first].key());
    for (i, e) in heap.iter().enumerate().skip(first + 1) {
        let k = e.key();
        if k < best.1 {
            best = (i, k);
        }
    }
    best
}

/// Pending events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    /// The heap: `heap[i]`'s children are `heap[ARITY·i + 1 ..= ARITY·i + ARITY]`, none earlier.
    heap: Vec<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `kind` at `time`.
    pub(crate) fn push(&mut self, time: Time, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            time: time.as_nanos(),
            seq,
            kind,
        };
        let key = entry.key();
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = self.heap[parent];
            if p.key() <= key {
                break;
            }
            self.heap[i] = p;
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// Removes the earliest event if it is not later than `end`.
    pub(crate) fn pop_until(&mut self, end: Time) -> Option<(Time, EventKind)> {
        let top = *self.heap.first()?;
        if top.time > end.as_nanos() {
            return None;
        }
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n > 0 {
            // Sift the former last entry down from the root.
            let key = last.key();
            let mut i = 0;
            loop {
                let first = ARITY * i + 1;
                if first >= n {
                    break;
                }
                let (m, mk) = if first + ARITY <= n {
                    min_of_full(&self.heap, first)
                } else {
                    min_of_tail(&self.heap, first)
                };
                if key <= mk {
                    break;
                }
                self.heap[i] = self.heap[m];
                i = m;
            }
            self.heap[i] = last;
        }
        Some((Time::from_nanos(top.time), top.kind))
    }

    /// Events pending.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn entries_stay_small() {
        assert_eq!(std::mem::size_of::<EventKind>(), 8);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    #[test]
    fn ties_pop_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.push(Time::from_millis(2), EventKind::Sample);
        q.push(Time::from_millis(1), EventKind::AgentStart(7));
        q.push(Time::from_millis(1), EventKind::AgentStart(3));
        let end = Time::from_millis(1);
        assert_eq!(q.pop_until(end), Some((end, EventKind::AgentStart(7))));
        assert_eq!(q.pop_until(end), Some((end, EventKind::AgentStart(3))));
        assert_eq!(q.pop_until(end), None);
        assert_eq!(q.pop_until(Time::MAX).map(|e| e.1), Some(EventKind::Sample));
        assert_eq!(q.pop_until(Time::MAX), None);
    }

    proptest! {
        /// Interleaved pushes and pops give exactly the order of a sort by (time, scheduling
        /// order), as the standard library's binary heap did.
        #[test]
        fn pops_in_time_then_scheduling_order(
            ops in proptest::collection::vec((0u64..40, 0u8..3), 1..400),
        ) {
            let mut q = EventQueue::default();
            // The reference: pending (time, seq) pairs, popped as the minimum.
            let mut model: Vec<(u64, u32)> = Vec::new();
            let mut seq = 0u32;
            for (t, op) in ops {
                if op < 2 {
                    q.push(Time::from_nanos(t), EventKind::AgentTimer(seq));
                    model.push((t, seq));
                    seq += 1;
                } else {
                    // Pop everything up to a bound, checking each against the model.
                    let end = t;
                    loop {
                        let want = model.iter().copied().filter(|e| e.0 <= end).min();
                        let got = q.pop_until(Time::from_nanos(end));
                        match want {
                            None => {
                                prop_assert_eq!(got, None);
                                break;
                            }
                            Some(w) => {
                                model.retain(|e| *e != w);
                                prop_assert_eq!(
                                    got,
                                    Some((Time::from_nanos(w.0), EventKind::AgentTimer(w.1)))
                                );
                            }
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            model.sort_unstable();
            for w in model {
                prop_assert_eq!(
                    q.pop_until(Time::MAX),
                    Some((Time::from_nanos(w.0), EventKind::AgentTimer(w.1)))
                );
            }
            prop_assert_eq!(q.pop_until(Time::MAX), None);
        }
    }
}
