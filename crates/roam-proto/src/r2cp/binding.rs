//! R²CP's *binding* structure (rcp-r2cp.txt §4.3.1): "for each request sent out by one of the
//! RCP pipes, R²CP maintains the mapping between the local sequence number of the concerned
//! RCP pipe, and the global sequence number of the aggregate connection". One [`Binding`]
//! lives in each pipe's slot, which records the pipe.

use std::collections::BTreeMap;

/// The local ↔ global map of one pipe, and its local sequence space.
#[derive(Debug, Clone, Default)]
pub struct Binding {
    /// local start → (global start, global end).
    by_local: BTreeMap<u64, (u64, u64)>,
    /// global start → local start.
    by_global: BTreeMap<u64, u64>,
    /// The next unused local sequence number.
    next_local: u64,
}

impl Binding {
    /// An empty binding whose local space starts at 0.
    pub fn new() -> Self {
        Binding::default()
    }

    /// Binds the global range `[start, end)` to a new local unit; returns its local start.
    pub fn bind(&mut self, start: u64, end: u64) -> u64 {
        let local = self.next_local;
        self.next_local = self.next_local.saturating_add(end.saturating_sub(start));
        self.by_local.insert(local, (start, end));
        self.by_global.insert(start, local);
        local
    }

    /// The global range bound to the local unit at `local`.
    pub fn global(&self, local: u64) -> Option<(u64, u64)> {
        self.by_local.get(&local).copied()
    }

    /// The local unit bound to the global range starting at `start`.
    pub fn local(&self, start: u64) -> Option<u64> {
        self.by_global.get(&start).copied()
    }

    /// Removes the unit at `local`; returns its global range.
    pub fn unbind(&mut self, local: u64) -> Option<(u64, u64)> {
        let g = self.by_local.remove(&local)?;
        self.by_global.remove(&g.0);
        Some(g)
    }

    /// The first bound unit whose global start is at or after `offset`: (global start, local
    /// start).
    pub fn next_at_or_after(&self, offset: u64) -> Option<(u64, u64)> {
        self.by_global.range(offset..).next().map(|(&g, &l)| (g, l))
    }

    /// Every bound global range, in local (request) order.
    pub fn globals(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.by_local.values().copied()
    }

    /// Number of bound units.
    pub fn len(&self) -> usize {
        self.by_local.len()
    }

    /// True if nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.by_local.is_empty()
    }

    /// The next local sequence number a new unit gets.
    pub fn next_local(&self) -> u64 {
        self.next_local
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_space_is_contiguous_whatever_the_global_ranges() {
        let mut b = Binding::new();
        assert_eq!(b.bind(8000, 9000), 0);
        assert_eq!(b.bind(2000, 2500), 1000);
        assert_eq!(b.bind(12_000, 13_000), 1500);
        assert_eq!(b.local(2000), Some(1000));
        assert_eq!(b.global(1500), Some((12_000, 13_000)));
        assert_eq!(b.unbind(1000), Some((2000, 2500)));
        assert_eq!(b.local(2000), None);
        assert_eq!(
            b.globals().collect::<Vec<_>>(),
            vec![(8000, 9000), (12_000, 13_000)]
        );
        assert_eq!(b.next_local(), 2500);
        assert_eq!(b.next_at_or_after(0), Some((8000, 0)));
        assert_eq!(b.next_at_or_after(8001), Some((12_000, 1500)));
        assert_eq!(b.next_at_or_after(12_001), None);
    }
}
