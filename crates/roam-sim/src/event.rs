//! The event queue: a binary heap ordered by (time, sequence id), so that events at the same
//! instant run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use roam_proto::Time;

/// What happens. Indices refer to the simulator's tables; kept small (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Call an agent's `start`.
    AgentStart(u32),
    /// An agent's timer may have expired.
    AgentTimer(u32),
    /// A link direction's transmitter may take the next packet.
    TxReady(u32),
    /// A packet (in the in-flight slab) reaches the far end of a link direction.
    Arrive { dir: u32, slot: u32 },
    /// A Gilbert–Elliott channel changes state.
    GilbertFlip(u32),
    /// A blackout window opens (`on`) or closes on a link direction.
    Blackout { dir: u32, on: bool },
    /// A scenario `[[event]]` (by index).
    Scheduled(u32),
    /// End of a time-series bin.
    Sample,
}

#[derive(Debug)]
struct Entry {
    time: Time,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that the max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `kind` at `time`.
    pub(crate) fn push(&mut self, time: Time, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, kind });
    }

    /// Removes the earliest event if it is not later than `end`.
    pub(crate) fn pop_until(&mut self, end: Time) -> Option<(Time, EventKind)> {
        if self.heap.peek()?.time > end {
            return None;
        }
        self.heap.pop().map(|e| (e.time, e.kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
