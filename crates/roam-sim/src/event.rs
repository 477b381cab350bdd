//! The event queue: events ordered by (time, sequence id), so that events at the same instant
//! run in the order they were scheduled.
//!
//! Popping the earliest event is the simulator's most frequent operation (about one per packet
//! and hop), so the queue is built to keep its heaps small:
//! - **Lanes.** A link direction's packets usually arrive in the order they left, so each
//!   direction has a first-in-first-out lane of arrivals (with the packets) and only the lane's
//!   first event is in a heap: popping it puts the lane's next event in its place with one
//!   sift, and scheduling behind it costs no sift at all. An event that would not keep its lane
//!   in order (a packet that overtakes the one before it: reordering, a delay cut) is refused
//!   and the caller schedules it on its own.
//! - **Two heaps.** Link events (lanes' first arrivals, arrivals on their own, transmitter
//!   wake-ups) are many and near; the rest (agent timers and starts, scenario and channel
//!   events, samples) are few per link event and mostly far ahead. Each has its own heap, and a
//!   pop takes the earlier of the two tops. On the 20-flow dumbbell the link heap holds about 7
//!   entries where one heap of every event held 75; the other heap's earliest key is kept
//!   beside it, so that a pop reads one heap.
//! - **Wake-ups in place.** A transmitter's wake-up usually schedules the next one: a popped
//!   wake-up stays at the top of the link heap until its handler ends it
//!   ([`EventQueue::end_wake`]), and the next wake-up takes its place with one sift.
//! - **The heaps** are binary, padded to a whole pair of children, 24-byte entries whose
//!   (time, sequence id) is compared as one 128-bit number; removing the top walks the hole
//!   down to a leaf along the earlier child and lets the replacement rise from there (it is
//!   usually one of the latest, so it rises little). `docs/SCALE.md` has the measurements.
//!
//! Each event keeps the sequence id it was given when scheduled and a lane's first event is its
//! earliest, so the queue pops exactly the order one plain heap of all events would (any
//! correct priority queue over the unique (time, sequence id) keys does): results do not
//! depend on these choices.

use roam_proto::Time;

/// What happens. Indices refer to the simulator's tables; kept small (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Call an agent's `start`.
    AgentStart(u32),
    /// An agent's timer may have expired.
    AgentTimer(u32),
    /// A datagram that overtook another (by its slot in the simulator's datagram table, which
    /// also notes the link direction) reaches the far end of a link direction. In-order
    /// datagrams travel in their direction's lane instead ([`Popped::Lane`]).
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

/// What the queue hands back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Popped<P> {
    /// An event scheduled with [`EventQueue::push`].
    Event(EventKind),
    /// The first event of lane `.0` (scheduled with [`EventQueue::push_in_lane`]), with what it
    /// carries.
    Lane(u32, P),
    /// Link direction `.0`'s transmitter may take the next packet (scheduled with
    /// [`EventQueue::push_wake`]). Left in the queue until the caller ends its handling with
    /// [`EventQueue::end_wake`], before the next pop: the next wake-up then takes its place.
    TxReady(u32),
}

/// A heap entry's event: the first of a lane's, a transmitter's wake-up, or a plain one. Two
/// numbers, read and written as one word (an enum's tag and payload were written byte by
/// byte, and told apart by several tests): what it is and its argument (the lane, the link
/// direction, the plain event's index).
#[derive(Debug, Clone, Copy)]
struct Item {
    what: u32,
    arg: u32,
}

impl Item {
    /// `what` of lane `arg`'s first event.
    const LANE: u32 = 0;
    /// `what` of a wake-up of link direction `arg`'s transmitter.
    const WAKE: u32 = 1;

    #[inline]
    fn lane(lane: u32) -> Item {
        Item {
            what: Item::LANE,
            arg: lane,
        }
    }

    #[inline]
    fn wake(dir: u32) -> Item {
        Item {
            what: Item::WAKE,
            arg: dir,
        }
    }

    /// A plain event: `what` from 2 on.
    fn event(kind: EventKind) -> Item {
        let (what, arg) = match kind {
            EventKind::AgentStart(a) => (2, a),
            EventKind::AgentTimer(a) => (3, a),
            EventKind::Arrive(pkt) => (4, pkt),
            EventKind::GilbertFlip(dir) => (5, dir),
            EventKind::Blackout { dir, on: false } => (6, dir),
            EventKind::Blackout { dir, on: true } => (7, dir),
            EventKind::Scheduled(i) => (8, i),
            EventKind::Sample => (9, 0),
        };
        Item { what, arg }
    }

    /// The plain event this is (made by [`Item::event`]: `what` from 2 to 9).
    fn kind(self) -> EventKind {
        let arg = self.arg;
        match self.what {
            2 => EventKind::AgentStart(arg),
            3 => EventKind::AgentTimer(arg),
            4 => EventKind::Arrive(arg),
            5 => EventKind::GilbertFlip(arg),
            6 => EventKind::Blackout {
                dir: arg,
                on: false,
            },
            7 => EventKind::Blackout { dir: arg, on: true },
            8 => EventKind::Scheduled(arg),
            _ => EventKind::Sample,
        }
    }
}

/// The ordering key of an event at `time` scheduled as number `seq`: earlier first, then in
/// scheduling order.
#[inline]
fn key(time: u64, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

/// A heap entry.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    item: Item,
}

impl Entry {
    /// No event: later than every real one (a sequence id never reaches `u64::MAX`).
    const NONE: Entry = Entry {
        time: u64::MAX,
        seq: u64::MAX,
        item: Item {
            what: Item::LANE,
            arg: 0,
        },
    };

    /// The ordering key.
    #[inline]
    fn key(&self) -> u128 {
        key(self.time, self.seq)
    }
}

/// A binary min-heap of entries by key.
///
/// Padded with [`Entry::NONE`] to a whole pair of children, so that choosing a child always
/// compares two keys, with no lone last child to treat apart. Index arithmetic uses shifts
/// and wrapping additions: indices stay below the length, far from overflowing.
#[derive(Debug)]
struct Heap {
    /// `entries[i]`'s children are `entries[2i + 1]` and `entries[2i + 2]`, neither earlier;
    /// from `len` on, every entry is [`Entry::NONE`]; the length is odd and above `len`.
    entries: Vec<Entry>,
    /// Entries in use.
    len: usize,
}

impl Default for Heap {
    fn default() -> Heap {
        Heap {
            entries: vec![Entry::NONE],
            len: 0,
        }
    }
}

/// The parent of node `i` (> 0).
#[inline]
fn parent(i: usize) -> usize {
    i.wrapping_sub(1) >> 1
}

/// Puts `entry` into the hole at `i`, moving later parents down until the one above is not
/// later than it.
#[inline(always)]
fn sift_up(heap: &mut [Entry], mut i: usize, entry: Entry) {
    let key = entry.key();
    while i > 0 {
        let p = parent(i);
        let up = heap[p];
        if up.key() <= key {
            break;
        }
        heap[i] = up;
        i = p;
    }
    heap[i] = entry;
}

impl Heap {
    /// The earliest entry ([`Entry::NONE`] if empty).
    #[inline]
    fn top(&self) -> Entry {
        self.entries[0]
    }

    fn push(&mut self, entry: Entry) {
        let i = self.len;
        if i.wrapping_add(1) == self.entries.len() {
            self.entries.extend([Entry::NONE; 2]);
        }
        self.len = i.wrapping_add(1);
        sift_up(self.entries.as_mut_slice(), i, entry);
    }

    /// Removes the earliest entry (if any).
    fn remove_top(&mut self) {
        let Some(last) = self.len.checked_sub(1) else {
            return;
        };
        self.len = last;
        let entry = std::mem::replace(&mut self.entries[last], Entry::NONE);
        if last > 0 {
            self.replace_top(entry);
        }
    }

    /// Puts `entry` in place of the (non-empty) heap's earliest entry.
    ///
    /// Bottom-up: the hole left at the root moves down to a leaf along the earlier child, then
    /// `entry` rises from there (an entry put at the root is usually one of the latest, so it
    /// rises little, and each level down costs one comparison instead of two).
    // Always inlined (into the pop of a lane's event, and `remove_top`): called out of line,
    // passing the entry through memory, it cost about 5 M more instructions on the 20-flow
    // dumbbell (30 s).
    #[inline(always)]
    fn replace_top(&mut self, entry: Entry) {
        let n = self.len;
        // Entries `0..=n` (there is always one beyond the length): a node whose first child is
        // below `n` has its second child at most `n`, so with the slice's length known to be
        // `n + 1` the optimiser drops the bounds checks of both children and of the parent
        // (`first >> 1`, written instead of the previous level's `m` for that reason).
        let heap = &mut self.entries[..=n];
        let mut i = 0;
        let mut first: usize = 1;
        while first < n {
            let second = first.wrapping_add(1);
            let m = first.wrapping_add(usize::from(heap[second].key() < heap[first].key()));
            heap[first >> 1] = heap[m];
            i = m;
            first = (i << 1) | 1;
        }
        sift_up(heap, i, entry);
    }
}

/// One event of a lane: its time, sequence id and what it carries.
#[derive(Debug, Clone, Copy)]
struct LaneEntry<P> {
    time: u64,
    seq: u64,
    payload: P,
}

/// A lane: first-in-first-out entries in a ring whose size is zero or a power of two, so that
/// an index wraps by a mask, and whose push is small enough to inline (the standard
/// library's `VecDeque` wraps by comparison and pushes through a call).
#[derive(Debug)]
struct Ring<T> {
    /// The ring; `len` entries in use from `head` on (wrapping), the rest stale copies.
    slots: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    fn new() -> Ring<T> {
        Ring {
            slots: Vec::new(),
            head: 0,
            len: 0,
        }
    }

    /// The ring's index mask (the size is a power of two, or zero while nothing was pushed).
    #[inline]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.slots.get(self.head)
    }

    #[inline]
    fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        let last = self.head.wrapping_add(self.len).wrapping_sub(1);
        self.slots.get(last & self.mask())
    }

    #[inline]
    fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let first = *self.slots.get(self.head)?;
        self.head = self.head.wrapping_add(1) & self.mask();
        self.len -= 1;
        Some(first)
    }

    #[inline(always)]
    fn push_back(&mut self, entry: T) {
        if self.len == self.slots.len() {
            self.grow_and_push(entry);
            return;
        }
        let i = self.head.wrapping_add(self.len) & self.mask();
        if let Some(slot) = self.slots.get_mut(i) {
            *slot = entry;
            self.len += 1;
        }
    }

    /// [`Ring::push_back`] into a full ring: doubles it (at least 8 entries), the entries in
    /// order from the start.
    #[cold]
    #[inline(never)]
    fn grow_and_push(&mut self, entry: T) {
        let size = self.slots.len().saturating_mul(2).max(8);
        let mask = self.mask();
        let mut slots = Vec::with_capacity(size);
        slots.extend((0..self.len).map(|k| self.slots[self.head.wrapping_add(k) & mask]));
        slots.push(entry);
        slots.resize(size, entry);
        self.slots = slots;
        self.head = 0;
        self.len += 1;
    }
}

/// Pending events, each lane's carrying a `P` (see the module documentation).
#[derive(Debug)]
pub(crate) struct EventQueue<P> {
    /// Link events: lanes' first arrivals, arrivals on their own, transmitter wake-ups.
    link: Heap,
    /// Every other event.
    other: Heap,
    /// The key of `other`'s earliest entry (that of [`Entry::NONE`] if empty), kept beside
    /// it: the heap changes about once per hundred pops, each of which compares its top.
    other_first: u128,
    /// Lanes, each in increasing (time, sequence id) order; a non-empty lane's first event is
    /// in `link`.
    lanes: Vec<Ring<LaneEntry<P>>>,
    next_seq: u64,
}

impl<P: Copy> EventQueue<P> {
    /// An empty queue with `lanes` lanes.
    pub(crate) fn with_lanes(lanes: usize) -> EventQueue<P> {
        EventQueue {
            link: Heap::default(),
            other: Heap::default(),
            other_first: Entry::NONE.key(),
            lanes: (0..lanes).map(|_| Ring::new()).collect(),
            next_seq: 0,
        }
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        // Wrapping: one id per event scheduled, never near 2^64.
        self.next_seq = seq.wrapping_add(1);
        seq
    }

    /// Schedules `kind` at `time`.
    pub(crate) fn push(&mut self, time: Time, kind: EventKind) {
        let entry = Entry {
            time: time.as_nanos(),
            seq: self.take_seq(),
            item: Item::event(kind),
        };
        match kind {
            EventKind::Arrive(_) => self.link.push(entry),
            _ => {
                self.other_first = self.other_first.min(entry.key());
                self.other.push(entry);
            }
        }
    }

    /// Schedules a wake-up of link direction `dir`'s transmitter at `time` (popped as
    /// [`Popped::TxReady`]).
    pub(crate) fn push_wake(&mut self, time: Time, dir: u32) {
        let entry = Entry {
            time: time.as_nanos(),
            seq: self.take_seq(),
            item: Item::wake(dir),
        };
        self.link.push(entry);
    }

    /// Schedules an event carrying `payload` at `time` in lane `lane`, if that keeps the lane in
    /// order (nothing in it is later); otherwise hands `payload` back and schedules nothing (the
    /// caller then [`EventQueue::push`]es the event on its own).
    // Always inlined (one caller each): left to itself the inliner has called these out of
    // line after unrelated changes elsewhere in the crate, at about 7 M instructions each on
    // the 20-flow dumbbell (30 s).
    #[inline(always)]
    pub(crate) fn push_in_lane(&mut self, lane: u32, time: Time, payload: P) -> Result<(), P> {
        let time = time.as_nanos();
        let Some(l) = self.lanes.get(lane as usize) else {
            return Err(payload);
        };
        if l.back().is_some_and(|last| last.time > time) {
            return Err(payload);
        }
        let seq = self.take_seq();
        let l = &mut self.lanes[lane as usize];
        let first = l.is_empty();
        l.push_back(LaneEntry { time, seq, payload });
        if first {
            self.link.push(Entry {
                time,
                seq,
                item: Item::lane(lane),
            });
        }
        Ok(())
    }

    /// Removes the earliest event if it is not later than `end`.
    #[inline(always)]
    pub(crate) fn pop_until(&mut self, end: Time) -> Option<(Time, Popped<P>)> {
        let l = self.link.top();
        let (heap, top) = if self.other_first < l.key() {
            let o = self.other.top();
            (&mut self.other, o)
        } else {
            (&mut self.link, l)
        };
        if top.time > end.as_nanos() || heap.len == 0 {
            return None;
        }
        let at = Time::from_nanos(top.time);
        match top.item.what {
            Item::LANE => {
                let lane = top.item.arg;
                let l = &mut self.lanes[lane as usize];
                let first = l.pop_front()?;
                match l.front() {
                    Some(next) => heap.replace_top(Entry {
                        time: next.time,
                        seq: next.seq,
                        item: top.item,
                    }),
                    None => heap.remove_top(),
                }
                Some((at, Popped::Lane(lane, first.payload)))
            }
            // Left at the top (of the link heap, where wake-ups are), earlier than anything
            // scheduled until `end_wake` replaces or removes it.
            Item::WAKE => Some((at, Popped::TxReady(top.item.arg))),
            _ => {
                heap.remove_top();
                self.other_first = self.other.top().key();
                Some((at, Popped::Event(top.item.kind())))
            }
        }
    }

    /// Ends the handling of a [`Popped::TxReady`]: schedules the transmitter's next wake-up at
    /// `next` in the popped one's place (one sift, where removing it and scheduling the next
    /// took two) or, if none, removes it. The next wake-up takes its sequence id now, as
    /// [`EventQueue::push`] would.
    pub(crate) fn end_wake(&mut self, dir: u32, next: Option<Time>) {
        match next {
            Some(t) => {
                let entry = Entry {
                    time: t.as_nanos(),
                    seq: self.take_seq(),
                    item: Item::wake(dir),
                };
                self.link.replace_top(entry);
            }
            None => self.link.remove_top(),
        }
    }

    /// Events pending.
    #[cfg(test)]
    fn len(&self) -> usize {
        let queued = self.lanes.iter().map(|l| l.len().saturating_sub(1));
        self.link.len + self.other.len + queued.sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn items_stay_small() {
        assert_eq!(std::mem::size_of::<EventKind>(), 8);
        assert_eq!(std::mem::size_of::<Item>(), 8);
        assert_eq!(std::mem::size_of::<Entry>(), 24);
    }

    /// Every plain event comes back from its heap item as it went in.
    #[test]
    fn plain_events_survive_their_encoding() {
        let kinds = [
            EventKind::AgentStart(7),
            EventKind::AgentTimer(8),
            EventKind::Arrive(9),
            EventKind::GilbertFlip(10),
            EventKind::Blackout { dir: 11, on: false },
            EventKind::Blackout { dir: 12, on: true },
            EventKind::Scheduled(13),
            EventKind::Sample,
        ];
        for kind in kinds {
            let item = Item::event(kind);
            assert!(item.what > Item::WAKE);
            assert_eq!(item.kind(), kind);
        }
    }

    /// A ring gives its entries back first in, first out, across wraps and growth.
    #[test]
    fn a_ring_is_first_in_first_out_across_wraps_and_growth() {
        let mut r = Ring::new();
        let mut model = std::collections::VecDeque::new();
        assert_eq!(r.pop_front(), None);
        assert_eq!(r.back(), None);
        for k in 0..300u32 {
            // Pushes outnumber pops, so the ring wraps at every size before it grows.
            r.push_back(k);
            model.push_back(k);
            if k % 3 == 0 {
                assert_eq!(r.pop_front(), model.pop_front());
            }
            assert_eq!(r.front(), model.front());
            assert_eq!(r.back(), model.back());
            assert_eq!(r.len(), model.len());
        }
        while let Some(k) = model.pop_front() {
            assert_eq!(r.pop_front(), Some(k));
        }
        assert!(r.is_empty());
        assert_eq!(r.front(), None);
    }

    #[test]
    fn ties_pop_in_scheduling_order() {
        let mut q = EventQueue::<()>::with_lanes(0);
        q.push(Time::from_millis(2), EventKind::Sample);
        q.push(Time::from_millis(1), EventKind::AgentStart(7));
        q.push(Time::from_millis(1), EventKind::AgentStart(3));
        let end = Time::from_millis(1);
        let ev = |k| Some((end, Popped::Event(k)));
        assert_eq!(q.pop_until(end), ev(EventKind::AgentStart(7)));
        assert_eq!(q.pop_until(end), ev(EventKind::AgentStart(3)));
        assert_eq!(q.pop_until(end), None);
        assert_eq!(
            q.pop_until(Time::MAX).map(|e| e.1),
            Some(Popped::Event(EventKind::Sample))
        );
        assert_eq!(q.pop_until(Time::MAX), None);
    }

    #[test]
    fn a_lane_refuses_an_event_that_would_overtake() {
        let mut q = EventQueue::with_lanes(1);
        assert_eq!(q.push_in_lane(0, Time::from_millis(5), 'a'), Ok(()));
        assert_eq!(q.push_in_lane(0, Time::from_millis(5), 'b'), Ok(()));
        assert_eq!(q.push_in_lane(0, Time::from_millis(4), 'c'), Err('c'));
        assert_eq!(
            q.push_in_lane(1, Time::from_millis(6), 'd'),
            Err('d'),
            "no lane 1"
        );
        q.push(Time::from_millis(4), EventKind::Arrive(9));
        let at = |ms| Time::from_millis(ms);
        assert_eq!(
            q.pop_until(Time::MAX),
            Some((at(4), Popped::Event(EventKind::Arrive(9))))
        );
        assert_eq!(q.pop_until(Time::MAX), Some((at(5), Popped::Lane(0, 'a'))));
        assert_eq!(q.pop_until(Time::MAX), Some((at(5), Popped::Lane(0, 'b'))));
        assert_eq!(q.pop_until(Time::MAX), None);
    }

    /// What the model expects a pop to give, by sequence id.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Want {
        Event(u32),
        Lane(u32),
        Arrive(u32),
        Wake(u32),
    }

    /// Ends a wake-up the queue popped as the simulator does: an arrival is scheduled
    /// meanwhile (by the departure), then the next wake-up takes the popped one's place, or
    /// (odd sequence ids, late times) none does; the model learns of both.
    fn end_popped_wake(
        q: &mut EventQueue<u32>,
        popped: (u64, u32, Want),
        seq: &mut u32,
        model: &mut Vec<(u64, u32, Want)>,
    ) {
        let (t, id, _) = popped;
        q.push(Time::from_nanos(t + 2), EventKind::Arrive(*seq));
        model.push((t + 2, *seq, Want::Arrive(*seq)));
        *seq += 1;
        if id % 2 == 0 && t < 60 {
            let next = t + 1 + u64::from(id % 4);
            q.end_wake(*seq, Some(Time::from_nanos(next)));
            model.push((next, *seq, Want::Wake(*seq)));
            *seq += 1;
        } else {
            q.end_wake(id, None);
        }
    }

    proptest! {
        /// Interleaved pushes (plain, into one of three lanes at times that may go back, or
        /// transmitter wake-ups, each ended by the next one or by none) and pops give exactly
        /// the order of a sort by (time, scheduling order), as a plain heap of every event (the
        /// standard library's binary heap before) did.
        #[test]
        fn pops_in_time_then_scheduling_order(
            ops in proptest::collection::vec((0u64..40, 0u8..7), 1..400),
        ) {
            let mut q = EventQueue::with_lanes(3);
            // The reference: pending (time, seq, what), popped as the minimum.
            let mut model: Vec<(u64, u32, Want)> = Vec::new();
            let mut seq = 0u32;
            for (t, op) in ops {
                match op {
                    0 | 1 => {
                        q.push(Time::from_nanos(t), EventKind::AgentTimer(seq));
                        model.push((t, seq, Want::Event(seq)));
                        seq += 1;
                    }
                    2..=4 => {
                        let lane = u32::from(op - 2);
                        // A refused event is pushed on its own, as the simulator does.
                        if q.push_in_lane(lane, Time::from_nanos(t), seq).is_ok() {
                            model.push((t, seq, Want::Lane(lane)));
                        } else {
                            // Refused only behind a later event of the lane.
                            let later = model.iter().any(|m| m.2 == Want::Lane(lane) && m.0 > t);
                            prop_assert!(later);
                            q.push(Time::from_nanos(t), EventKind::AgentTimer(seq));
                            model.push((t, seq, Want::Event(seq)));
                        }
                        seq += 1;
                    }
                    5 => {
                        q.push_wake(Time::from_nanos(t), seq);
                        model.push((t, seq, Want::Wake(seq)));
                        seq += 1;
                    }
                    _ => {
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
                                    prop_assert_eq!(got, Some(expected(w)));
                                    if let Want::Wake(_) = w.2 {
                                        end_popped_wake(&mut q, w, &mut seq, &mut model);
                                    }
                                }
                            }
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            while let Some(w) = model.iter().copied().min() {
                model.retain(|e| *e != w);
                prop_assert_eq!(q.pop_until(Time::MAX), Some(expected(w)));
                if let Want::Wake(_) = w.2 {
                    end_popped_wake(&mut q, w, &mut seq, &mut model);
                }
            }
            prop_assert_eq!(q.pop_until(Time::MAX), None);
        }
    }

    /// The pop the model's `(time, seq, what)` stands for.
    fn expected(w: (u64, u32, Want)) -> (Time, Popped<u32>) {
        let popped = match w.2 {
            Want::Event(s) => Popped::Event(EventKind::AgentTimer(s)),
            Want::Lane(lane) => Popped::Lane(lane, w.1),
            Want::Arrive(s) => Popped::Event(EventKind::Arrive(s)),
            Want::Wake(dir) => Popped::TxReady(dir),
        };
        (Time::from_nanos(w.0), popped)
    }
}
