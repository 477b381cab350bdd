//! The reassembly's sorted, disjoint ranges of sequence numbers (its out-of-order pieces and
//! the blocks they form): a sorted queue while every change is cheap, a `BTreeMap` once a
//! peer makes changes land deep inside it.
//!
//! A sender's segments beyond a hole arrive in order: the queue appends them and hands them
//! back from the front when the hole is filled, both without a search or an allocation per
//! range, and its lookups are binary searches over contiguous memory. But a `VecDeque`
//! insert or removal moves every entry on the shorter side of its position: a peer ordering
//! tiny pieces to land mid-queue would make each datagram move half the piece bound (the
//! SegmentSmack class of attack, CVE-2018-5390). So no change moves more than [`MAX_SHIFT`]
//! entries: one that would turns the queue into a map (O(log n) changes) before it is made,
//! and the map turns back into an empty queue once its last range leaves.
//! The design and its measured worst case: `docs/HANDSHAKE.md` ("Memory").

use std::collections::{btree_map, vec_deque, BTreeMap, VecDeque};

/// Most queue entries one insert or removal may move. An entry is at most 32 bytes (start
/// and `Vec` header), so 32 of them are a 1 KiB move: about what copying one 1000-byte
/// segment into its piece costs, and less than a `BTreeMap` insert with its search and node
/// allocations. Ordinary traffic seldom reaches it: pieces beyond a hole are appended (no
/// move); only a retransmission filling a hole deep inside a large window does (in the
/// repository's scenarios at most three times per run, with 80 to 280 pieces held: the map
/// then serves until that recovery ends).
pub const MAX_SHIFT: usize = 32;

/// What is stored for a range beside its start, and where the range ends.
pub trait Span {
    /// The end (exclusive) of the range starting at `start`. Stored ranges end inside the
    /// sequence space (checked when their segment arrived).
    fn end(&self, start: u64) -> u64;
}

/// A piece: its bytes.
impl Span for Vec<u8> {
    #[inline]
    fn end(&self, start: u64) -> u64 {
        start + self.len() as u64
    }
}

/// A block: its end.
impl Span for u64 {
    #[inline]
    fn end(&self, _start: u64) -> u64 {
        *self
    }
}

/// Non-overlapping ranges by start, in sequence order.
#[derive(Debug, Clone)]
pub enum Sorted<V> {
    /// Sorted by start; inserts and removals move at most [`MAX_SHIFT`] entries.
    Queue(VecDeque<(u64, V)>),
    /// Used from the first change that would have moved more until the last range leaves.
    Map(BTreeMap<u64, V>),
}

impl<V> Default for Sorted<V> {
    fn default() -> Self {
        Sorted::Queue(VecDeque::new())
    }
}

/// The `(start, end)` of ranges in sequence order.
pub enum Walk<'a, V> {
    /// Over the queue.
    Queue(vec_deque::Iter<'a, (u64, V)>),
    /// Over the map.
    Map(btree_map::Range<'a, u64, V>),
}

impl<V: Span> Iterator for Walk<'_, V> {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        match self {
            Walk::Queue(it) => it.next().map(|(s, v)| (*s, v.end(*s))),
            Walk::Map(it) => it.next().map(|(s, v)| (*s, v.end(*s))),
        }
    }
}

/// True if an insert or removal at `at` among `len` entries moves at most [`MAX_SHIFT`].
#[inline]
fn cheap(at: usize, len: usize) -> bool {
    at.min(len - at) <= MAX_SHIFT
}

impl<V: Span> Sorted<V> {
    /// Ranges held.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Sorted::Queue(q) => q.len(),
            Sorted::Map(m) => m.len(),
        }
    }

    /// True if no range is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while the ranges are in the map (a peer made a change land deep in the queue).
    #[cfg(test)]
    pub fn is_map(&self) -> bool {
        matches!(self, Sorted::Map(_))
    }

    /// The map holding the queue's ranges (it replaces the queue: the queue's allocation is
    /// freed, so the two are never held together).
    fn into_map(q: &mut VecDeque<(u64, V)>) -> BTreeMap<u64, V> {
        // Sorted already: the map is built in one pass.
        std::mem::take(q).into_iter().collect()
    }

    /// Stores `value` starting at `start`; its range must not overlap one held.
    pub fn insert(&mut self, start: u64, value: V) {
        match self {
            Sorted::Map(m) => {
                m.insert(start, value);
            }
            Sorted::Queue(q) => {
                // Beyond the last range: a sender's next segment beyond a hole.
                if !matches!(q.back(), Some((s, _)) if *s >= start) {
                    q.push_back((start, value));
                    return;
                }
                let at = q.partition_point(|(s, _)| *s < start);
                if cheap(at, q.len()) {
                    q.insert(at, (start, value));
                    return;
                }
                let mut map = Self::into_map(q);
                map.insert(start, value);
                *self = Sorted::Map(map);
            }
        }
    }

    /// Removes the range starting at `start`, if one does.
    pub fn remove(&mut self, start: u64) {
        match self {
            Sorted::Map(m) => {
                m.remove(&start);
                if m.is_empty() {
                    *self = Sorted::default();
                }
            }
            Sorted::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s < start);
                if !matches!(q.get(at), Some((s, _)) if *s == start) {
                    return;
                }
                if cheap(at, q.len() - 1) {
                    q.remove(at);
                    return;
                }
                let mut map = Self::into_map(q);
                map.remove(&start);
                *self = Sorted::Map(map);
            }
        }
    }

    /// Removes the first range if it starts at or below `seq` (the map, once empty, turns
    /// back into a queue).
    #[inline]
    pub fn pop_first_reached(&mut self, seq: u64) -> Option<(u64, V)> {
        match self {
            Sorted::Queue(q) => match q.front() {
                Some((s, _)) if *s <= seq => q.pop_front(),
                _ => None,
            },
            Sorted::Map(m) => {
                let first = m.first_entry().filter(|e| *e.key() <= seq)?;
                let range = first.remove_entry();
                if m.is_empty() {
                    *self = Sorted::default();
                }
                Some(range)
            }
        }
    }

    /// True if a range starts at `seq`.
    #[inline]
    pub fn starts_at(&self, seq: u64) -> bool {
        match self {
            Sorted::Queue(q) => q
                .get(q.partition_point(|(s, _)| *s < seq))
                .is_some_and(|(s, _)| *s == seq),
            Sorted::Map(m) => m.contains_key(&seq),
        }
    }

    /// The last range starting at or below `seq`: its start and end.
    #[inline]
    pub fn last_at_or_below(&self, seq: u64) -> Option<(u64, u64)> {
        match self {
            Sorted::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s <= seq).checked_sub(1)?;
                let (s, v) = &q[at];
                Some((*s, v.end(*s)))
            }
            Sorted::Map(m) => m.range(..=seq).next_back().map(|(s, v)| (*s, v.end(*s))),
        }
    }

    /// The last range starting at or below `seq`: its start and what is stored for it.
    #[inline]
    pub fn last_at_or_below_mut(&mut self, seq: u64) -> Option<(u64, &mut V)> {
        match self {
            Sorted::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s <= seq).checked_sub(1)?;
                let (s, v) = &mut q[at];
                Some((*s, v))
            }
            Sorted::Map(m) => m.range_mut(..=seq).next_back().map(|(s, v)| (*s, v)),
        }
    }

    /// The last range: its start and what is stored for it.
    #[inline]
    pub fn last_mut(&mut self) -> Option<(u64, &mut V)> {
        match self {
            Sorted::Queue(q) => q.back_mut().map(|(s, v)| (*s, v)),
            Sorted::Map(m) => m.iter_mut().next_back().map(|(s, v)| (*s, v)),
        }
    }

    /// Ranges starting at or above `seq`, first to last.
    #[inline]
    pub fn walk_from(&self, seq: u64) -> Walk<'_, V> {
        match self {
            Sorted::Queue(q) => Walk::Queue(q.range(q.partition_point(|(s, _)| *s < seq)..)),
            Sorted::Map(m) => Walk::Map(m.range(seq..)),
        }
    }

    /// Ranges from the last one starting at or below `seq` (from the first if none does),
    /// first to last.
    #[inline]
    pub fn walk_from_holder(&self, seq: u64) -> Walk<'_, V> {
        match self {
            Sorted::Queue(q) => {
                let at = q.partition_point(|(s, _)| *s <= seq).saturating_sub(1);
                Walk::Queue(q.range(at..))
            }
            Sorted::Map(m) => {
                let from = m.range(..=seq).next_back().map_or(seq, |(s, _)| *s);
                Walk::Map(m.range(from..))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts<V: Span>(p: &Sorted<V>) -> Vec<u64> {
        p.walk_from(0).map(|(s, _)| s).collect()
    }

    /// Appends and inserts near either end stay in the queue; the first insert that would
    /// move more than `MAX_SHIFT` entries makes a map with the same ranges; emptying the map
    /// makes a queue again.
    #[test]
    fn the_queue_turns_into_a_map_on_a_deep_insert_and_back_once_empty() {
        let mut p = Sorted::default();
        let n = 2 * MAX_SHIFT as u64 + 4;
        for i in 1..=n {
            p.insert(10 * i, vec![0u8; 5]);
        }
        // Within MAX_SHIFT of the front and of the back.
        p.insert(10 * (MAX_SHIFT as u64) + 5, vec![0; 1]);
        p.insert(10 * (n - MAX_SHIFT as u64) + 5, vec![0; 1]);
        p.insert(5, vec![0; 1]);
        assert!(!p.is_map());
        let mut expected = starts(&p);
        // Half-way: more than MAX_SHIFT entries on either side.
        let mid = 10 * (n / 2) + 7;
        p.insert(mid, vec![0; 1]);
        assert!(p.is_map());
        expected.push(mid);
        expected.sort_unstable();
        assert_eq!(starts(&p), expected);
        assert_eq!(p.len(), expected.len());
        assert_eq!(p.last_at_or_below(mid), Some((mid, mid + 1)));
        assert_eq!(p.last_at_or_below(mid - 1), Some((mid - 7, mid - 2)));
        assert!(p.starts_at(10 * n) && !p.starts_at(10 * n + 1));
        assert_eq!(p.pop_first_reached(4), None);
        for s in &expected {
            assert!(p.is_map());
            assert_eq!(p.pop_first_reached(u64::MAX).map(|e| e.0), Some(*s));
        }
        assert!(!p.is_map() && p.is_empty());
        assert_eq!(p.pop_first_reached(u64::MAX), None);
    }

    /// Removals near either end stay in the queue; one deep inside makes a map, and removing
    /// its last range makes a queue again.
    #[test]
    fn a_deep_removal_makes_a_map_and_the_last_one_a_queue() {
        let mut b: Sorted<u64> = Sorted::default();
        let n = 2 * MAX_SHIFT as u64 + 8;
        for i in 1..=n {
            b.insert(10 * i, 10 * i + 5);
        }
        b.remove(10);
        b.remove(10 * n);
        b.remove(10 * n + 1); // none starts there
        assert!(!b.is_map() && b.len() == n as usize - 2);
        b.remove(10 * (n / 2));
        assert!(b.is_map() && b.len() == n as usize - 3);
        assert!(!b.starts_at(10 * (n / 2)));
        if let Some((s, e)) = b.last_at_or_below_mut(10 * (n / 2) + 3) {
            assert_eq!(s, 10 * (n / 2 - 1));
            *e += 1;
        }
        assert_eq!(
            b.last_at_or_below(10 * (n / 2)),
            Some((10 * (n / 2 - 1), 10 * (n / 2 - 1) + 6))
        );
        for s in starts(&b) {
            assert!(b.is_map());
            b.remove(s);
        }
        assert!(!b.is_map() && b.is_empty());
    }

    /// Both representations answer every lookup alike.
    #[test]
    fn queue_and_map_answer_alike() {
        let mut queue: Sorted<u64> = Sorted::default();
        for (s, e) in [(3u64, 7), (10, 14), (20, 21), (21, 25), (40, 44)] {
            queue.insert(s, e);
        }
        let mut map = Sorted::Map(queue.walk_from(0).collect());
        for seq in 0..50 {
            assert_eq!(queue.starts_at(seq), map.starts_at(seq), "{seq}");
            assert_eq!(queue.last_at_or_below(seq), map.last_at_or_below(seq));
            assert_eq!(
                queue.last_at_or_below_mut(seq).map(|(s, e)| (s, *e)),
                map.last_at_or_below_mut(seq).map(|(s, e)| (s, *e))
            );
            assert!(queue.walk_from(seq).eq(map.walk_from(seq)));
            assert!(queue.walk_from_holder(seq).eq(map.walk_from_holder(seq)));
        }
        assert_eq!(queue.last_mut().map(|(s, e)| (s, *e)), Some((40, 44)));
        assert_eq!(map.last_mut().map(|(s, e)| (s, *e)), Some((40, 44)));
    }
}
