//! The endpoint's timer heap: one deadline per connection, kept lazily (a changed deadline
//! pushes a new entry; stale entries are skipped when they surface and the heap is rebuilt
//! when they outnumber the live ones), so the earliest deadline costs O(log n), not a scan.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::demux::Handle;
use crate::Time;

/// Deadlines of the connections, earliest first.
#[derive(Debug, Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(Time, Handle)>>,
}

impl Timers {
    /// Records `h`'s new deadline (the caller keeps the current one in the connection entry
    /// and only calls this when it changed).
    pub fn schedule(&mut self, at: Time, h: Handle) {
        self.heap.push(Reverse((at, h)));
    }

    /// The earliest entry, which may be stale (the caller checks against the entry).
    pub fn peek(&self) -> Option<(Time, Handle)> {
        self.heap.peek().map(|Reverse(x)| *x)
    }

    /// Removes the earliest entry.
    pub fn pop(&mut self) -> Option<(Time, Handle)> {
        self.heap.pop().map(|Reverse(x)| x)
    }

    /// Entries held, stale ones included.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Replaces the heap by the live deadlines only.
    pub fn rebuild(&mut self, live: impl Iterator<Item = (Time, Handle)>) {
        self.heap = live.map(Reverse).collect();
    }
}
