//! The receiver's reassembly queue and SACK block generation (RFC 2018).
//!
//! Memory is bounded whatever the peer sends: bytes already held (in order or out of order)
//! are never stored again, so overlapping and duplicated segments add only the bytes of their
//! gaps; the out-of-order pieces are at most [`Reassembly::max_pieces`] (pieces beyond it are
//! refused, as Linux prunes its out-of-order queue under memory pressure: the peer
//! retransmits them); and the in-order queue never allocates past its capacity. Pieces are not
//! copied together: a peer sending tiny segments from right to left would make that quadratic.
//! The bound is stated in `docs/HANDSHAKE.md` ("Memory").

use std::collections::VecDeque;

use roam_wire::{SackBlock, MAX_SACK_BLOCKS};

use super::pieces::Pieces;

/// Bytes one stored out-of-order piece costs beside its payload, at most: its entry (key and
/// `Vec` header, 32 bytes) with its share of the sorted queue's slack (the queue at most
/// doubles) or of the `BTreeMap` node's slack and edges (never both: the queue's allocation
/// is dropped when the pieces move into the map), and the allocator's rounding of the
/// payload.
pub const PIECE_OVERHEAD: usize = 128;

/// In-order bytes waiting for the application plus out-of-order ranges.
#[derive(Debug, Clone)]
pub struct Reassembly {
    /// Next in-order sequence number expected (RCV.NXT).
    rcv_nxt: u64,
    /// In-order bytes not yet read by the application.
    ready: VecDeque<u8>,
    /// Most bytes `ready` may need (the receive buffer): its allocation never grows past it.
    capacity: usize,
    /// Out-of-order segments by starting sequence number (non-overlapping): a sorted queue,
    /// or a map once a peer makes inserts land deep inside it (`pieces.rs`).
    ooo: Pieces,
    ooo_bytes: usize,
    /// Most out-of-order pieces held.
    max_pieces: usize,
    /// Out-of-order pieces refused because `max_pieces` were held.
    refused: u64,
    /// Starts of out-of-order blocks, most recently changed first (RFC 2018 §4).
    recent: Vec<u64>,
    /// Bounds `[start, end)` of the block most recently changed, while they are known to be
    /// those of a maximal run of held out-of-order bytes (`None` when unknown): a sender's
    /// next segment beyond a hole usually extends it, and its SACK block then needs no walk
    /// over its pieces.
    last_block: Option<(u64, u64)>,
}

/// What happened to one arriving segment's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Advanced RCV.NXT (possibly filling a hole).
    InOrder {
        /// True if out-of-order data was joined (a hole was filled).
        filled_hole: bool,
    },
    /// Stored beyond a hole.
    OutOfOrder,
    /// Nothing new (entirely duplicate).
    Duplicate,
}

impl Reassembly {
    /// Expects `rcv_nxt` next, holds at most `capacity` bytes in order and at most
    /// `max_pieces` (at least one) out-of-order pieces.
    pub fn new(rcv_nxt: u64, capacity: usize, max_pieces: usize) -> Self {
        Reassembly {
            rcv_nxt,
            ready: VecDeque::new(),
            capacity,
            ooo: Pieces::default(),
            ooo_bytes: 0,
            max_pieces: max_pieces.max(1),
            refused: 0,
            recent: Vec::new(),
            last_block: None,
        }
    }

    /// Most out-of-order pieces held.
    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    /// Out-of-order pieces held now.
    pub fn pieces(&self) -> usize {
        self.ooo.len()
    }

    /// Out-of-order pieces refused so far because the queue held its maximum.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Appends in-order bytes, growing the queue geometrically but never past its capacity
    /// (left to itself a `VecDeque` doubles: up to twice the receive buffer).
    fn extend_ready(&mut self, bytes: &[u8]) {
        let needed = self.ready.len() + bytes.len();
        if needed > self.ready.capacity() {
            let target = needed.max(2 * self.ready.capacity()).min(self.capacity);
            self.ready
                .reserve_exact(target.saturating_sub(self.ready.len()));
        }
        self.ready.extend(bytes);
    }

    /// RCV.NXT.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Advances RCV.NXT past a control bit (SYN/FIN) without data.
    pub fn advance_control(&mut self) {
        self.rcv_nxt = self.rcv_nxt.saturating_add(1);
    }

    /// Bytes buffered (in-order unread plus out-of-order).
    #[inline]
    pub fn buffered(&self) -> usize {
        self.ready.len() + self.ooo_bytes
    }

    /// In-order bytes readable.
    #[inline]
    pub fn readable(&self) -> usize {
        self.ready.len()
    }

    /// True if there is out-of-order data (a hole at RCV.NXT).
    pub fn has_holes(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// Hands up to `max` readable bytes to `f` where they lie (one or two slices, in stream
    /// order, never empty), then drops them from the queue; returns how many.
    pub fn read_with(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        let n = max.min(self.ready.len());
        if n == 0 {
            return 0;
        }
        let (a, b) = self.ready.as_slices();
        if n <= a.len() {
            f(&a[..n]);
        } else {
            f(a);
            f(&b[..n - a.len()]);
        }
        self.ready.drain(..n);
        n
    }

    /// Accepts payload starting at `seq`, already trimmed by the caller to the receive window.
    pub fn insert(&mut self, seq: u64, payload: &[u8]) -> Arrival {
        // A range ending past the sequence space is never stored (the caller's window trim
        // already excludes it; this keeps the queue sound on its own).
        let Some(end) = seq.checked_add(payload.len() as u64) else {
            return Arrival::Duplicate;
        };
        if end <= self.rcv_nxt || payload.is_empty() {
            return Arrival::Duplicate;
        }
        if seq <= self.rcv_nxt {
            let skip = (self.rcv_nxt - seq) as usize;
            self.extend_ready(&payload[skip..]);
            self.rcv_nxt = end;
            let filled = self.pull_contiguous();
            return Arrival::InOrder {
                filled_hole: filled,
            };
        }
        if self.store_out_of_order(seq, payload, end) {
            Arrival::OutOfOrder
        } else {
            Arrival::Duplicate
        }
    }

    /// Stores `[seq, seq+len)` minus what is already held; returns false if nothing was new.
    fn store_out_of_order(&mut self, seq: u64, payload: &[u8], end: u64) -> bool {
        // Collect the gaps of [seq, end) not covered by stored segments (usually one: the
        // first is kept aside so that it needs no allocation).
        let mut cursor = seq;
        let mut first: Option<(u64, u64)> = None;
        let mut more: Vec<(u64, u64)> = Vec::new();
        let mut push = |gap: (u64, u64)| match first {
            None => first = Some(gap),
            Some(_) => more.push(gap),
        };
        for (s, e) in self.ooo.walk_from_holder(seq) {
            if s >= end {
                break;
            }
            if e <= cursor {
                continue;
            }
            if s > cursor {
                push((cursor, s.min(end)));
            }
            cursor = cursor.max(e);
            if cursor >= end {
                break;
            }
        }
        // The segment's tail was not held before: a new piece ends exactly at `end`.
        let tail_gap = cursor < end;
        if tail_gap {
            push((cursor, end));
        }
        let Some(first) = first else {
            return false;
        };
        if self.ooo.len() + 1 + more.len() > self.max_pieces {
            // Refused whole (a partial store would only add more small pieces).
            self.refused += 1;
            return false;
        }
        for (s, e) in std::iter::once(first).chain(more) {
            let a = (s - seq) as usize;
            let b = (e - seq) as usize;
            self.ooo.insert(s, payload[a..b].to_vec());
            self.ooo_bytes += b - a;
        }
        // `block_start` is what the recency list records: the start of the block when `seq`
        // starts a piece, else `seq` itself (inside a piece held before); `sack_blocks` maps
        // either to the whole block. `last_block` keeps the block's true bounds.
        let block_start = match self.last_block {
            // [seq, end) is now held and touches or overlaps the last block, which was
            // maximal: the block still starts where it did (nothing below `seq` was added).
            Some((start, last_end)) if start <= seq && seq <= last_end => {
                // A piece ends at `last_end` (the block's last) or at `end` (the new tail).
                let new_end = if end <= last_end {
                    self.run_end_from(last_end)
                } else if tail_gap {
                    self.run_end_from(end)
                } else {
                    self.run_end(end)
                };
                self.last_block = Some((start, new_end));
                if self.ooo.starts_at(seq) {
                    start
                } else {
                    seq
                }
            }
            _ => {
                let recorded = self.block_start(seq);
                let start = if self.ooo.starts_at(recorded) {
                    recorded
                } else {
                    let holder = self.ooo.last_below(recorded);
                    self.block_start(holder.map_or(recorded, |(k, _)| k))
                };
                self.last_block = Some((start, self.run_end(end)));
                recorded
            }
        };
        self.recent.retain(|&s| s != block_start);
        self.recent.insert(0, block_start);
        // Without SACK nobody reads the list: keep it short anyway.
        self.recent.truncate(MAX_SACK_BLOCKS * 2);
        true
    }

    /// Moves out-of-order data that became contiguous into `ready`.
    fn pull_contiguous(&mut self) -> bool {
        let mut filled = false;
        while let Some((s, data)) = self.ooo.pop_first_reached(self.rcv_nxt) {
            self.ooo_bytes -= data.len();
            let end = s + data.len() as u64;
            if end > self.rcv_nxt {
                let skip = (self.rcv_nxt - s) as usize;
                self.extend_ready(&data[skip..]);
                self.rcv_nxt = end;
            }
            filled = true;
        }
        if filled {
            let nxt = self.rcv_nxt;
            self.recent.retain(|&s| s > nxt);
            // A block beyond RCV.NXT lost none of its pieces; one at or below it is gone.
            if self.last_block.is_some_and(|(start, _)| start <= nxt) {
                self.last_block = None;
            }
        }
        filled
    }

    /// The start of the maximal contiguous stored range containing `seq` (which must be
    /// stored). One backward walk over the block's pieces.
    fn block_start(&self, seq: u64) -> u64 {
        let mut start = seq;
        for (s, e) in self.ooo.walk_below(seq) {
            if e != start {
                break;
            }
            start = s;
        }
        start
    }

    /// The end of the maximal contiguous stored range containing byte `held_to - 1` (which
    /// must be stored): from the piece holding it, one forward walk.
    fn run_end(&self, held_to: u64) -> u64 {
        let end = self.ooo.last_below(held_to).map_or(held_to, |(_, e)| e);
        self.run_end_from(end)
    }

    /// The end of the maximal contiguous stored range whose held bytes reach `end`, where a
    /// stored piece ends: the pieces that continue it from there.
    fn run_end_from(&self, mut end: u64) -> u64 {
        for (s, e) in self.ooo.walk_from(end) {
            if s != end {
                break;
            }
            end = e;
        }
        end
    }

    /// The maximal contiguous stored range containing `seq` (which must be stored).
    fn block_containing(&self, seq: u64) -> (u64, u64) {
        let start = self.block_start(seq);
        let mut end = start;
        for (s, e) in self.ooo.walk_from(start) {
            if s != end {
                break;
            }
            end = e;
        }
        (start, end)
    }

    /// SACK blocks to send: the most recently changed block first, then others by recency
    /// (RFC 2018 §4), at most `MAX_SACK_BLOCKS`.
    #[inline]
    pub fn sack_blocks(&mut self, out: &mut roam_wire::Options) {
        out.sack_len = 0;
        if self.ooo.is_empty() {
            // Every ACK of in-order data: no call into the general path below.
            self.recent.clear();
            return;
        }
        self.held_sack_blocks(out);
    }

    /// [`Reassembly::sack_blocks`] with out-of-order data held.
    fn held_sack_blocks(&mut self, out: &mut roam_wire::Options) {
        let mut seen: [SackBlock; MAX_SACK_BLOCKS] = Default::default();
        let mut n = 0;
        let mut i = 0;
        while i < self.recent.len() && n < MAX_SACK_BLOCKS {
            let s = self.recent[i];
            if let Some((start, end)) = self.last_block.filter(|b| b.0 <= s && s < b.1) {
                // Inside the last block: held (valid), and the block's bounds are known.
                let block = SackBlock { start, end };
                if !seen[..n].contains(&block) {
                    seen[n] = block;
                    n += 1;
                    out.push_sack(block);
                }
                i += 1;
                continue;
            }
            let holder = self.ooo.last_at_or_below(s);
            let valid = matches!(holder, Some((_, e)) if e > s);
            if !valid {
                self.recent.remove(i);
                continue;
            }
            let (bs, be) = self.block_containing(holder.map(|h| h.0).unwrap_or(s));
            let block = SackBlock { start: bs, end: be };
            if !seen[..n].contains(&block) {
                seen[n] = block;
                n += 1;
                out.push_sack(block);
            }
            i += 1;
        }
        self.recent.truncate(MAX_SACK_BLOCKS * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_a_hole_and_reports_sack_blocks() {
        let mut r = Reassembly::new(0, 1 << 20, 1000);
        assert_eq!(
            r.insert(0, &[0; 10]),
            Arrival::InOrder { filled_hole: false }
        );
        assert_eq!(r.insert(20, &[2; 10]), Arrival::OutOfOrder);
        assert_eq!(r.insert(40, &[4; 10]), Arrival::OutOfOrder);
        let mut o = roam_wire::Options::default();
        r.sack_blocks(&mut o);
        assert_eq!(
            o.sack_blocks(),
            &[
                SackBlock { start: 40, end: 50 },
                SackBlock { start: 20, end: 30 }
            ]
        );
        assert_eq!(r.insert(25, &[2; 10]), Arrival::OutOfOrder);
        r.sack_blocks(&mut o);
        assert_eq!(o.sack_blocks()[0], SackBlock { start: 20, end: 35 });
        assert_eq!(
            r.insert(10, &[1; 10]),
            Arrival::InOrder { filled_hole: true }
        );
        assert_eq!(r.rcv_nxt(), 35);
        r.sack_blocks(&mut o);
        assert_eq!(o.sack_blocks(), &[SackBlock { start: 40, end: 50 }]);
        let mut out = Vec::new();
        assert_eq!(r.read_with(100, |b| out.extend_from_slice(b)), 35);
        assert_eq!(&out[10..20], &[1; 10]);
        assert_eq!(r.insert(5, &[9; 5]), Arrival::Duplicate);
    }

    /// The stream's byte at sequence number `seq`.
    fn byte(seq: u64) -> u8 {
        (seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
    }

    fn segment(seq: u64, len: u64) -> Vec<u8> {
        (seq..seq + len).map(byte).collect()
    }

    /// A peer's worst case: thousands of tiny segments, duplicated and overlapping, beyond a
    /// hole. Each byte is stored once, the pieces stay within their bound, and when the hole
    /// is filled the stream is intact.
    #[test]
    fn tiny_overlapping_and_duplicate_segments_are_stored_once_within_the_piece_bound() {
        let mut r = Reassembly::new(0, 10_000, 40);
        for round in 0..20u64 {
            for seq in 1000..1400u64 {
                let len = 1 + (seq + round) % 3;
                r.insert(seq, &segment(seq, len));
                assert!(r.pieces() <= 40, "{} pieces", r.pieces());
                assert!(r.buffered() <= 1402, "{} bytes", r.buffered());
            }
        }
        assert!(r.refused() > 0, "the bound was reached");
        // Duplicates of what is held add nothing.
        let held = r.buffered();
        for seq in 1000..1010 {
            r.insert(seq, &segment(seq, 1));
        }
        assert_eq!(r.buffered(), held);
        // Far apart (every other byte) they are capped too.
        for seq in (5000..9000u64).step_by(2) {
            r.insert(seq, &segment(seq, 1));
        }
        assert!(r.pieces() <= 40);
        // The sender fills the hole and resends everything: the stream is intact.
        assert_eq!(
            r.insert(0, &segment(0, 9000)),
            Arrival::InOrder { filled_hole: true }
        );
        assert_eq!(r.pieces(), 0);
        let mut out = Vec::new();
        assert_eq!(r.read_with(usize::MAX, |b| out.extend_from_slice(b)), 9000);
        assert_eq!(out, segment(0, 9000));
    }

    /// Bytes handed in place come in stream order, also when the queue's ring wraps (two
    /// slices), only as many as asked, and each once.
    #[test]
    fn bytes_read_in_place_keep_their_order_across_the_ring_wrap() {
        let mut r = Reassembly::new(0, 1000, 10);
        assert_eq!(
            r.insert(0, &segment(0, 1000)),
            Arrival::InOrder { filled_hole: false }
        );
        let mut out = Vec::new();
        assert_eq!(r.read_with(700, |b| out.extend_from_slice(b)), 700);
        // The next 600 bytes wrap around the end of the 1000-byte ring.
        r.insert(1000, &segment(1000, 600));
        let mut slices = 0;
        assert_eq!(
            r.read_with(800, |b| {
                slices += 1;
                out.extend_from_slice(b);
            }),
            800
        );
        assert_eq!(slices, 2);
        assert_eq!(r.read_with(usize::MAX, |b| out.extend_from_slice(b)), 100);
        assert_eq!(out, segment(0, 1600));
        assert_eq!(r.read_with(usize::MAX, |_| panic!("nothing left")), 0);
    }

    /// Random segments (overlapping, duplicated, out of order) against a byte-by-byte model:
    /// the in-order bytes match, every SACK block reported is a maximal run of held bytes
    /// beyond RCV.NXT, and the first one holds the latest out-of-order segment (RFC 2018 §4).
    /// A twin that never uses the last block's cached bounds (the general path) keeps the same
    /// recency list and reports the same blocks.
    #[test]
    fn sack_blocks_are_maximal_runs_and_the_latest_comes_first() {
        const LEN: usize = 3000;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for _ in 0..20 {
            let mut r = Reassembly::new(0, 1 << 20, 10_000);
            let mut general = r.clone();
            let mut held = vec![false; LEN];
            for _ in 0..300 {
                let seq = next(LEN as u64 - 60);
                let len = 1 + next(60);
                let arrival = r.insert(seq, &segment(seq, len));
                general.last_block = None;
                assert_eq!(general.insert(seq, &segment(seq, len)), arrival);
                assert_eq!(general.recent, r.recent);
                for b in &mut held[seq as usize..(seq + len) as usize] {
                    *b = true;
                }
                let nxt = held.iter().position(|b| !b).unwrap_or(LEN) as u64;
                assert_eq!(r.rcv_nxt(), nxt);
                if let Some((start, end)) = r.last_block {
                    assert_eq!(r.block_containing(start), (start, end), "cached bounds");
                }
                let mut o = roam_wire::Options::default();
                r.sack_blocks(&mut o);
                let mut o_general = roam_wire::Options::default();
                general.last_block = None;
                general.sack_blocks(&mut o_general);
                assert_eq!(o.sack_blocks(), o_general.sack_blocks());
                for block in o.sack_blocks() {
                    let (s, e) = (block.start as usize, block.end as usize);
                    assert!(block.start > nxt, "{block:?} at or below {nxt}");
                    assert!(held[s..e].iter().all(|b| *b), "{block:?} has a gap");
                    assert!(
                        !held[s - 1] && (e == LEN || !held[e]),
                        "{block:?} not maximal"
                    );
                }
                if arrival == Arrival::OutOfOrder {
                    let first = o.sack_blocks()[0];
                    assert!(first.start <= seq && seq < first.end, "{first:?} vs {seq}");
                }
            }
            let mut out = Vec::new();
            r.read_with(usize::MAX, |b| out.extend_from_slice(b));
            assert_eq!(out, segment(0, r.rcv_nxt()));
        }
    }

    /// One step of a peer (or the application) in the representation model test.
    #[derive(Debug, Clone)]
    enum Step {
        /// A segment starting `offset` bytes past RCV.NXT − 16 (so some are duplicates).
        Segment { offset: u64, len: u64 },
        /// A segment from RCV.NXT on: fills the first hole, pulls what became contiguous.
        Fill { len: u64 },
        /// The application reads up to `max` bytes.
        Read { max: usize },
    }

    /// Mostly tiny segments anywhere in a 2000-byte window (many pieces, inserts deep inside
    /// the queue, overlaps and duplicates), some longer ones, partial fills, and fills of the
    /// whole window (which empty the pieces).
    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            80 => (0..2000u64, 1..8u64).prop_map(|(offset, len)| Step::Segment { offset, len }),
            10 => (0..2000u64, 8..300u64).prop_map(|(offset, len)| Step::Segment { offset, len }),
            4 => (1..400u64).prop_map(|len| Step::Fill { len }),
            1 => Just(Step::Fill { len: 2400 }),
            5 => (0..3000usize).prop_map(|max| Step::Read { max }),
        ]
    }

    /// Random steps against a byte-by-byte model, through both representations of the
    /// out-of-order pieces (the sorted queue while few are held or inserts land near its ends,
    /// the map after a deep insert, the queue again once the map empties): every arrival is
    /// classified as the model says, RCV.NXT and the bytes held match, the pieces stay
    /// sorted, disjoint and beyond RCV.NXT, every SACK block is a maximal held run, and every
    /// byte is read once, in order, unchanged. The run must have switched both ways.
    #[test]
    fn both_piece_representations_deliver_every_byte_once_in_order() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        use std::cell::Cell;

        let to_map = Cell::new(0u32);
        let to_queue = Cell::new(0u32);
        let mut runner = TestRunner::new(Config {
            cases: 64,
            ..Config::default()
        });
        let steps = proptest::collection::vec(step(), 1..1500);
        let result = runner.run(&steps, |steps| {
            let mut r = Reassembly::new(0, 1 << 20, 100_000);
            let mut held: Vec<bool> = Vec::new();
            let (mut nxt, mut read) = (0u64, 0u64);
            let mut o = roam_wire::Options::default();
            // The last step fills every hole: all that arrived is read below.
            let last = Step::Fill { len: 2400 };
            for step in steps.into_iter().chain(std::iter::once(last)) {
                let (seq, len) = match step {
                    Step::Segment { offset, len } => (nxt.saturating_sub(16) + offset, len),
                    Step::Fill { len } => (nxt, len),
                    Step::Read { max } => {
                        let mut got = Vec::new();
                        let n = r.read_with(max, |b| got.extend_from_slice(b));
                        prop_assert_eq!(n as u64, (max as u64).min(nxt - read));
                        prop_assert_eq!(&got, &segment(read, n as u64));
                        read += n as u64;
                        continue;
                    }
                };
                let end = seq + len;
                if held.len() < end as usize + 1 {
                    held.resize(end as usize + 1, false);
                }
                let expected = if end <= nxt {
                    Arrival::Duplicate
                } else if seq <= nxt {
                    Arrival::InOrder {
                        filled_hole: held[nxt as usize..=end as usize].iter().any(|b| *b),
                    }
                } else if held[seq as usize..end as usize].iter().all(|b| *b) {
                    Arrival::Duplicate
                } else {
                    Arrival::OutOfOrder
                };
                let was_map = r.ooo.is_map();
                prop_assert_eq!(r.insert(seq, &segment(seq, len)), expected);
                match (was_map, r.ooo.is_map()) {
                    (false, true) => to_map.set(to_map.get() + 1),
                    (true, false) => to_queue.set(to_queue.get() + 1),
                    _ => {}
                }
                held[seq as usize..end as usize].fill(true);
                while held.get(nxt as usize) == Some(&true) {
                    nxt += 1;
                }
                prop_assert_eq!(r.rcv_nxt(), nxt);
                let beyond = held[nxt as usize..].iter().filter(|b| **b).count();
                prop_assert_eq!(r.buffered() as u64, nxt - read + beyond as u64);
                prop_assert_eq!(r.refused(), 0);
                // Sorted, disjoint, beyond RCV.NXT, and holding exactly the held bytes.
                let mut last_end = nxt + 1;
                let mut stored = 0;
                for (s, e) in r.ooo.walk_from(0) {
                    prop_assert!(s >= last_end && e > s, "{s}..{e} after {last_end}");
                    prop_assert!(held[s as usize..e as usize].iter().all(|b| *b));
                    stored += e - s;
                    last_end = e;
                }
                prop_assert_eq!(stored, beyond as u64);
                prop_assert_eq!(r.pieces() == 0, beyond == 0);
                r.sack_blocks(&mut o);
                for block in o.sack_blocks() {
                    let (s, e) = (block.start as usize, block.end as usize);
                    prop_assert!(block.start > nxt && held[s..e].iter().all(|b| *b));
                    prop_assert!(!held[s - 1] && held.get(e) != Some(&true), "{block:?}");
                }
            }
            prop_assert_eq!(r.pieces(), 0);
            prop_assert!(!r.ooo.is_map());
            let mut rest = Vec::new();
            r.read_with(usize::MAX, |b| rest.extend_from_slice(b));
            prop_assert_eq!(rest, segment(read, nxt - read));
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        assert!(
            to_map.get() > 0 && to_queue.get() > 0,
            "{to_map:?} {to_queue:?}"
        );
    }

    /// Not a check (nothing is asserted on time): prints how long 65,536 pieces of 64 bytes
    /// take to store (with the SACK blocks of each acknowledgement), then to deliver, in three
    /// orders: in order (a sender beyond a hole), alternately from both ends (each piece lands
    /// in the middle of those held: SegmentSmack), and ascending below 32 pieces held at the far
    /// end (each insert moves the most entries the queue allows); the pieces adjacent (one
    /// block each side) or 64 bytes apart. Run by hand:
    /// `cargo test --profile ci -p roam-proto --lib hostile_piece_orders -- --ignored --nocapture`
    #[test]
    #[ignore = "timing, run by hand"]
    #[allow(clippy::disallowed_methods)] // a by-hand wall-clock measurement, not engine code
    fn hostile_piece_orders_timing() {
        const N: u64 = 65_536;
        const PIECE: u64 = 64;
        let in_order: Vec<u64> = (0..N).collect();
        let both_ends: Vec<u64> = (0..N)
            .map(|i| if i % 2 == 0 { i / 2 } else { N - 1 - i / 2 })
            .collect();
        let below_far_end: Vec<u64> = (N - 32..N).chain(0..N - 32).collect();
        let payload = [7u8; PIECE as usize];
        for (spacing, stride) in [("adjacent", PIECE), ("64 B apart", 2 * PIECE)] {
            for (name, order) in [
                ("in order", &in_order),
                ("both ends", &both_ends),
                ("below 32 at the end", &below_far_end),
            ] {
                let mut r = Reassembly::new(0, 16 << 20, N as usize + 2);
                let mut o = roam_wire::Options::default();
                let start = std::time::Instant::now();
                for slot in order {
                    r.insert(PIECE + slot * stride, &payload);
                    r.sack_blocks(&mut o);
                }
                let stored = start.elapsed();
                r.insert(0, &vec![7u8; (N * stride + PIECE) as usize]);
                let mut n = 0;
                r.read_with(usize::MAX, |b| n += b.len());
                println!(
                    "{spacing:>10}, {name:<19}: stored in {:>8.3} ms, all in {:>8.3} ms ({n} bytes)",
                    stored.as_secs_f64() * 1e3,
                    start.elapsed().as_secs_f64() * 1e3
                );
            }
        }
    }

    #[test]
    fn the_in_order_queue_never_allocates_past_its_capacity() {
        let capacity = 100_000;
        let mut r = Reassembly::new(0, capacity, 10);
        for seq in 0..capacity as u64 / 7 {
            r.insert(seq * 7, &segment(seq * 7, 7));
        }
        assert_eq!(r.readable(), capacity / 7 * 7);
        assert!(r.ready.capacity() <= capacity, "{}", r.ready.capacity());
    }

    #[test]
    fn without_sack_the_recent_block_list_stays_short() {
        let mut r = Reassembly::new(0, 1 << 20, 10_000);
        for seq in (10..20_000u64).step_by(10) {
            r.insert(seq, &segment(seq, 1));
        }
        assert!(r.recent.len() <= 2 * MAX_SACK_BLOCKS);
    }

    #[test]
    fn a_range_past_the_end_of_the_sequence_space_is_not_stored() {
        let mut r = Reassembly::new(u64::MAX - 20, 1 << 20, 1000);
        assert_eq!(r.insert(u64::MAX - 5, &[1; 10]), Arrival::Duplicate);
        assert_eq!(r.insert(u64::MAX - 10, &[1; 10]), Arrival::OutOfOrder);
        assert_eq!(r.buffered(), 10);
    }

    #[test]
    fn overlapping_out_of_order_data_is_stored_once() {
        let mut r = Reassembly::new(0, 1 << 20, 1000);
        r.insert(10, &[1; 10]);
        r.insert(5, &[1; 20]);
        assert_eq!(r.buffered(), 20);
        r.insert(0, &[1; 5]);
        assert_eq!(r.rcv_nxt(), 25);
        assert_eq!(r.readable(), 25);
    }
}
