//! Which pull ids an RCP sender has served (rcp-r2cp.txt §3.3.1, made tolerant of reordered
//! REQs; `docs/RCP.md`, "Reordering").
//!
//! §3.3.1 keeps the last three pulled blocks served in a cyclic buffer and serves any block a
//! REQ lists that is *newer than all of them*: a block listed again belongs to a REQ that was
//! lost. That assumes REQs arrive in the order they were sent. Where the uplink reorders them
//! (a burst of REQs leaving a cellular or Wi-Fi hop together, a user-space wire) a REQ
//! carrying pull 15 (and 13, 14 with it) may arrive before the one carrying pull 11: pulls 11
//! and 12 are then older than the newest served and were never served, and the paper's rule
//! drops them. Each becomes a hole the receiver must detect and pull again, with a window cut
//! each time — measured over a user-space wire that reorders packets delivered in the same
//! millisecond, about one cut a second on an LTE trace, an R²CP pipe held to a window of 10
//! to 30 packets. So the sender remembers which of the last [`WINDOW`] ids below the newest it
//! has served, and serves any listed id it has not. With REQs in order this serves exactly
//! what the paper's rule serves.

/// How many ids below the newest are remembered: a pull older than that and never served is
/// left to the receiver's loss detection (it pulls the range again under a new id).
pub const WINDOW: u32 = 128;

/// The served pull ids: the newest, and a bitmap of the [`WINDOW`] ids below it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServedPulls {
    /// The newest id served (0: none yet; ids skip 0).
    newest: u32,
    /// Bit k set: id `newest − 1 − k` was served.
    below: u128,
}

impl ServedPulls {
    /// Records `id` as served and returns true if it was not served before and is not too old
    /// to tell (then the caller serves its block); false otherwise. Ids compare by serial
    /// number arithmetic (RFC 1982), so the order survives their wrapping.
    pub fn take(&mut self, id: u32) -> bool {
        if self.newest == 0 {
            self.newest = id;
            return true;
        }
        let ahead = id.wrapping_sub(self.newest);
        if ahead == 0 {
            return false;
        }
        if (ahead as i32) > 0 {
            // Newer: the bitmap shifts by `ahead`; the former newest becomes bit ahead − 1.
            self.below = if ahead > WINDOW {
                0
            } else {
                let shifted = self.below.checked_shl(ahead).unwrap_or(0);
                shifted | (1u128 << (ahead - 1))
            };
            self.newest = id;
            return true;
        }
        let behind = self.newest.wrapping_sub(id);
        if behind > WINDOW {
            return false;
        }
        let bit = 1u128 << (behind - 1);
        if self.below & bit != 0 {
            return false;
        }
        self.below |= bit;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_ids_are_each_served_once() {
        let mut s = ServedPulls::default();
        for id in 1..=500 {
            assert!(s.take(id), "{id}");
            assert!(!s.take(id), "{id} again");
            // The three listed with it (the REQ's recent pulls) are known.
            for old in id.saturating_sub(2).max(1)..id {
                assert!(!s.take(old), "{old} listed again with {id}");
            }
        }
    }

    #[test]
    fn a_pull_overtaken_by_later_ones_is_still_served_once() {
        let mut s = ServedPulls::default();
        for id in 1..=10 {
            assert!(s.take(id));
        }
        // The REQ with 15 (and 13, 14) overtakes the one with 11 (and 9, 10).
        assert!(s.take(13));
        assert!(s.take(14));
        assert!(s.take(15));
        assert!(!s.take(9));
        assert!(!s.take(10));
        assert!(s.take(11), "overtaken, never served");
        assert!(s.take(12));
        assert!(!s.take(11));
        assert!(!s.take(12));
        assert!(!s.take(13));
    }

    #[test]
    fn ids_older_than_the_window_are_not_served_and_wrapping_keeps_the_order() {
        let mut s = ServedPulls::default();
        assert!(s.take(1));
        assert!(s.take(1 + WINDOW + 5));
        assert!(!s.take(2), "too old to tell");
        assert!(s.take(10 + WINDOW), "within the window, never served");

        let mut w = ServedPulls::default();
        assert!(w.take(u32::MAX - 1));
        assert!(w.take(u32::MAX));
        // Ids skip 0 when they wrap: 1 is newer than u32::MAX.
        assert!(w.take(1));
        assert!(!w.take(u32::MAX));
        assert!(!w.take(u32::MAX - 1));
        assert!(w.take(u32::MAX - 2), "older but never served");
    }
}
