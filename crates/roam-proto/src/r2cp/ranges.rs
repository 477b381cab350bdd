//! A set of disjoint half-open byte ranges: R²CP's *pending* structure (rcp-r2cp.txt §4.3.1:
//! "the ranges of sequence numbers for data yet to be requested") and the reassignment queue.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges `[start, end)` over global offsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// start → end; no two ranges overlap or touch.
    ranges: BTreeMap<u64, u64>,
    bytes: u64,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        RangeSet::default()
    }

    /// True if the set holds no byte.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Total bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The ranges, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&s, &e)| (s, e))
    }

    /// The lowest offset held.
    pub fn first(&self) -> Option<u64> {
        self.ranges.keys().next().copied()
    }

    /// True if every byte of `[start, end)` is held.
    pub fn contains(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        self.ranges
            .range(..=start)
            .next_back()
            .is_some_and(|(_, &e)| e >= end)
    }

    /// The end of the held range that contains `offset`, if one does.
    pub fn end_of(&self, offset: u64) -> Option<u64> {
        self.ranges
            .range(..=offset)
            .next_back()
            .and_then(|(_, &e)| (e > offset).then_some(e))
    }

    /// Adds `[start, end)`, merging with neighbours.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let (mut s, mut e) = (start, end);
        // Absorb every range that overlaps or touches [s, e).
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=e)
            .rev()
            .take_while(|(_, &re)| re >= s)
            .map(|(&rs, &re)| (rs, re))
            .collect();
        for (rs, re) in touching {
            self.ranges.remove(&rs);
            self.bytes -= re - rs;
            s = s.min(rs);
            e = e.max(re);
        }
        self.ranges.insert(s, e);
        self.bytes += e - s;
    }

    /// Removes `[start, end)` (bytes not held are ignored).
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let hit: Vec<(u64, u64)> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|(_, &re)| re > start)
            .map(|(&rs, &re)| (rs, re))
            .collect();
        for (rs, re) in hit {
            self.ranges.remove(&rs);
            self.bytes -= re - rs;
            if rs < start {
                self.ranges.insert(rs, start);
                self.bytes += start - rs;
            }
            if re > end {
                self.ranges.insert(end, re);
                self.bytes += re - end;
            }
        }
    }

    /// Removes every byte at or above `limit`.
    pub fn truncate(&mut self, limit: u64) {
        self.remove(limit, u64::MAX);
    }

    /// The unit of at most `max_len` bytes that starts `skip` bytes into the set (counting
    /// only held bytes, lowest first), cut at the end of the range it falls in. `None` if the
    /// set holds `skip` bytes or fewer.
    pub fn nth_unit(&self, skip: u64, max_len: u64) -> Option<(u64, u64)> {
        let mut left = skip;
        for (&s, &e) in &self.ranges {
            let len = e - s;
            if left < len {
                let start = s + left;
                return Some((start, e.min(start.saturating_add(max_len.max(1)))));
            }
            left -= len;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_merges_and_remove_splits() {
        let mut r = RangeSet::new();
        r.insert(0, 10);
        r.insert(20, 30);
        r.insert(10, 20);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(0, 30)]);
        r.remove(5, 8);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(0, 5), (8, 30)]);
        assert_eq!(r.bytes(), 27);
        assert!(r.contains(8, 30) && !r.contains(4, 9));
        r.truncate(20);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(0, 5), (8, 20)]);
        assert_eq!(r.bytes(), 17);
    }

    #[test]
    fn nth_unit_skips_held_bytes_only() {
        let mut r = RangeSet::new();
        r.insert(0, 3);
        r.insert(10, 20);
        assert_eq!(r.nth_unit(0, 2), Some((0, 2)));
        assert_eq!(r.nth_unit(2, 5), Some((2, 3)));
        assert_eq!(r.nth_unit(3, 5), Some((10, 15)));
        assert_eq!(r.nth_unit(12, 5), Some((19, 20)));
        assert_eq!(r.nth_unit(13, 5), None);
    }

    #[test]
    fn end_of_names_the_range_holding_an_offset() {
        let mut r = RangeSet::new();
        r.insert(10, 20);
        assert_eq!(r.end_of(9), None);
        assert_eq!(r.end_of(10), Some(20));
        assert_eq!(r.end_of(19), Some(20));
        assert_eq!(r.end_of(20), None);
    }
}
