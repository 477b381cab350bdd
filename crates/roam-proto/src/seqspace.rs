//! The two number spaces of a sender: a pipe's sequence numbers and a stream's byte offsets.
//!
//! A TCP-like connection numbers one stream of bytes with one pipe's sequence numbers, so the
//! two coincide (an identity binding). A striping engine (pTCP, ptcp.txt §3.2) binds stream
//! bytes to the sequence numbers of several pipes, where they differ: distinct types keep a
//! pipe sequence number from being used as a stream offset or the reverse.

/// A sequence number in one sender pipe's own space (what its scoreboard, SACK blocks and
/// cumulative ACKs count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PipeSeq(pub u64);

/// A byte offset in the application's send stream (what the send buffer counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamOffset(pub u64);

impl PipeSeq {
    /// The sequence number `n` further on (saturating).
    #[inline]
    #[must_use]
    pub fn plus(self, n: u64) -> PipeSeq {
        PipeSeq(self.0.saturating_add(n))
    }

    /// Sequence numbers from `earlier` to `self` (0 if `earlier` is later).
    #[inline]
    pub fn since(self, earlier: PipeSeq) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl StreamOffset {
    /// The offset `n` bytes further on (saturating).
    #[inline]
    #[must_use]
    pub fn plus(self, n: u64) -> StreamOffset {
        StreamOffset(self.0.saturating_add(n))
    }

    /// Bytes from `earlier` to `self` (0 if `earlier` is later).
    #[inline]
    pub fn since(self, earlier: StreamOffset) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_saturate() {
        assert_eq!(PipeSeq(10).since(PipeSeq(4)), 6);
        assert_eq!(PipeSeq(4).since(PipeSeq(10)), 0);
        assert_eq!(PipeSeq(u64::MAX - 1).plus(5), PipeSeq(u64::MAX));
        assert_eq!(StreamOffset(7).plus(3).since(StreamOffset(7)), 3);
        assert_eq!(StreamOffset(1).since(StreamOffset(2)), 0);
    }
}
