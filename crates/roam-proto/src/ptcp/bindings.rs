//! pTCP's bindings table (ptcp.txt §3 and §4.1, "bindings"): which stream bytes each pipe's
//! sequence numbers carry.
//!
//! * **Delayed binding** (§3, "Congestion Window Based Data Striping"): a pipe asks for data
//!   only when its window has room ([`Bindings::bind`] for its next sequence number); stream
//!   bytes are bound to it then, never earlier. With nothing unbound the answer is NO DATA
//!   (`None`) and the pipe joins the *active pipes*, resumed when data arrives
//!   ([`Bindings::take_active`]).
//! * **Dynamic reassignment** (§3): when a pipe's window shrinks, the data bound to its
//!   sequence numbers beyond the new window is unbound at once ([`Bindings::unbind_beyond`],
//!   or [`Bindings::unbind_beyond_where`] for a selection: the engine takes what the pipe
//!   still owes, not what is in flight) and goes to the next pipe that asks, before any new
//!   data. The pipe keeps a copy of what
//!   those sequence numbers carried: it sent them already (a binding is made when a segment
//!   is built), so a retransmission of them carries the same bytes, and a pipe
//!   acknowledgement never leaves a doubt about which bytes arrived. (§3 allows a TCP-v
//!   retransmission to carry other data; roam does not use that freedom: it would make a
//!   late arrival of the first transmission acknowledge bytes that were never received.)
//! * **Redundant striping** (§3, "Redundant Striping for Blackouts"): after a timeout, the
//!   first segment of the pipe's window is striped onto another pipe
//!   ([`Bindings::stripe_redundantly`]): the next pipe that asks gets the same bytes, and the
//!   timed-out pipe keeps its copy, since it needs one segment to recover.
//!
//! Sequence numbers are a pipe's ([`PipeSeq`]), bytes are the stream's ([`StreamOffset`]);
//! the set of unbound bytes is R²CP's [`RangeSet`] (to move to a module both engines share).

use std::collections::VecDeque;

use crate::r2cp::RangeSet;
use crate::seqspace::{PipeSeq, StreamOffset};

/// A pipe of one pTCP connection (an index into its pipes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PipeId(pub usize);

/// One binding: the pipe's sequence numbers `seq .. seq + len` carry the stream bytes
/// `offset .. offset + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The pipe's first sequence number.
    pub seq: PipeSeq,
    /// The stream offset of the first byte.
    pub offset: StreamOffset,
    /// Bytes.
    pub len: u32,
}

impl Bound {
    /// One past the last sequence number.
    pub fn seq_end(&self) -> PipeSeq {
        self.seq.plus(u64::from(self.len))
    }

    /// One past the last stream byte.
    pub fn offset_end(&self) -> StreamOffset {
        self.offset.plus(u64::from(self.len))
    }
}

/// A binding in a pipe's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    bound: Bound,
    /// The bytes were striped redundantly onto another pipe after a timeout: this is a copy,
    /// so unbinding it returns nothing to the unbound set.
    copy: bool,
}

/// The bindings of one pipe, in sequence order.
#[derive(Debug, Clone, Default)]
struct PipeTable {
    entries: VecDeque<Entry>,
    /// Stream bytes this pipe unbound from its shrunk window, for the *other* pipes: it still
    /// has them in flight (it keeps copies), so taking them back would only send them twice
    /// on the same path (§3: the pipe itself gets new data).
    unbound: RangeSet,
    /// NO DATA was answered: the pipe waits to be resumed.
    active: bool,
}

/// Bytes striped redundantly after a timeout, for another pipe than `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stripe {
    from: PipeId,
    offset: StreamOffset,
    len: u32,
}

/// The bindings table of one pTCP connection.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    /// The first stream offset never bound.
    next_new: StreamOffset,
    /// The stream's cumulative acknowledgement (pACK): nothing below it needs a pipe.
    acked: StreamOffset,
    /// Redundant stripes waiting for another pipe, oldest first.
    stripes: VecDeque<Stripe>,
    pipes: Vec<PipeTable>,
}

impl Bindings {
    /// An empty table whose stream starts at `first`.
    pub fn new(first: StreamOffset) -> Self {
        Bindings {
            next_new: first,
            acked: first,
            ..Bindings::default()
        }
    }

    /// Adds a pipe; it starts among the active pipes (ptcp.txt §4.1: "a TCP-v pipe is placed
    /// in active pipes initially when it is created").
    pub fn add_pipe(&mut self) -> PipeId {
        self.pipes.push(PipeTable {
            entries: VecDeque::new(),
            unbound: RangeSet::new(),
            active: true,
        });
        PipeId(self.pipes.len() - 1)
    }

    /// The first stream offset never bound.
    pub fn next_new(&self) -> StreamOffset {
        self.next_new
    }

    /// Bytes unbound and waiting for a pipe.
    pub fn unbound_bytes(&self) -> u64 {
        self.pipes.iter().map(|t| t.unbound.bytes()).sum()
    }

    /// Bytes unbound by other pipes than `pipe`: what it would get before new data.
    pub fn unbound_for(&self, pipe: PipeId) -> u64 {
        self.pipes
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != pipe.0)
            .map(|(_, t)| t.unbound.bytes())
            .sum()
    }

    /// The pipe's bindings, in sequence order.
    pub fn bound(&self, pipe: PipeId) -> impl Iterator<Item = Bound> + '_ {
        self.pipes
            .get(pipe.0)
            .into_iter()
            .flat_map(|t| t.entries.iter().map(|e| e.bound))
    }

    /// True while `pipe` waits to be resumed (it was answered NO DATA).
    pub fn is_active(&self, pipe: PipeId) -> bool {
        self.pipes.get(pipe.0).is_some_and(|t| t.active)
    }

    /// ptcp.txt §4.2 `send()`: `pipe` has room in its window for up to `max_len` bytes at its
    /// sequence number `seq` (its next new one, or one whose data was unbound) and asks for
    /// data. Binds, in this order: a redundant stripe of another pipe, the lowest unbound
    /// bytes, new bytes below `limit` (the end of the written data and of the peer's window,
    /// §4.5). NO DATA (`None`) puts the pipe among the active pipes. Also `None` (and no
    /// change) for an unknown pipe, `max_len` 0, or a `seq` below the end of the pipe's last
    /// binding (a retransmission: see [`Bindings::lookup`]).
    pub fn bind(
        &mut self,
        pipe: PipeId,
        seq: PipeSeq,
        max_len: u32,
        limit: StreamOffset,
    ) -> Option<Bound> {
        let table = self.pipes.get(pipe.0)?;
        if max_len == 0
            || table
                .entries
                .back()
                .is_some_and(|e| e.bound.seq_end() > seq)
        {
            return None;
        }
        let (offset, len) = if let Some(i) = self.stripes.iter().position(|s| s.from != pipe) {
            let s = self.stripes.remove(i)?;
            if s.len > max_len {
                // The rest waits for the next other pipe, in its place.
                let rest = Stripe {
                    from: s.from,
                    offset: s.offset.plus(u64::from(max_len)),
                    len: s.len - max_len,
                };
                self.stripes.insert(i, rest);
            }
            (s.offset, s.len.min(max_len))
        } else if let Some((from, start, end)) = self.lowest_unbound(pipe, max_len) {
            if let Some(t) = self.pipes.get_mut(from) {
                t.unbound.remove(start, end);
            }
            (StreamOffset(start), (end - start) as u32)
        } else {
            let len = limit.since(self.next_new).min(u64::from(max_len)) as u32;
            if len == 0 {
                if let Some(t) = self.pipes.get_mut(pipe.0) {
                    t.active = true;
                }
                return None;
            }
            let offset = self.next_new;
            self.next_new = offset.plus(u64::from(len));
            (offset, len)
        };
        let bound = Bound { seq, offset, len };
        let table = self.pipes.get_mut(pipe.0)?;
        table.active = false;
        table.entries.push_back(Entry { bound, copy: false });
        Some(bound)
    }

    /// True if `pipe` would get reassigned bytes before new data: another pipe's redundant
    /// stripe or bytes another pipe unbound.
    pub fn has_reassigned_for(&self, pipe: PipeId) -> bool {
        self.stripes.iter().any(|s| s.from != pipe) || self.unbound_for(pipe) > 0
    }

    /// The lowest unbound unit of at most `max_len` bytes another pipe than `pipe` unbound:
    /// (that pipe, start, end).
    fn lowest_unbound(&self, pipe: PipeId, max_len: u32) -> Option<(usize, u64, u64)> {
        self.pipes
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != pipe.0)
            .filter_map(|(i, t)| {
                t.unbound
                    .nth_unit(0, u64::from(max_len))
                    .map(|(s, e)| (i, s, e))
            })
            .min_by_key(|&(_, s, _)| s)
    }

    /// The binding of `pipe` that covers its sequence number `seq` (what a retransmission of
    /// it carries).
    pub fn lookup(&self, pipe: PipeId, seq: PipeSeq) -> Option<Bound> {
        let entries = &self.pipes.get(pipe.0)?.entries;
        let i = entries.partition_point(|e| e.bound.seq_end() <= seq);
        entries
            .get(i)
            .map(|e| e.bound)
            .filter(|b| b.seq <= seq && seq < b.seq_end())
    }

    /// `pipe` cumulatively acknowledged everything below `ack`: its bindings there are done.
    /// The bytes of a copy it delivered need no other pipe any more: they leave the unbound
    /// bytes and the stripes.
    pub fn on_pipe_ack(&mut self, pipe: PipeId, ack: PipeSeq) {
        loop {
            let Some(t) = self.pipes.get_mut(pipe.0) else {
                return;
            };
            let Some(e) = t
                .entries
                .front()
                .copied()
                .filter(|e| e.bound.seq_end() <= ack)
            else {
                return;
            };
            t.entries.pop_front();
            if e.copy {
                let (start, end) = (e.bound.offset, e.bound.offset_end());
                for other in &mut self.pipes {
                    other.unbound.remove(start.0, end.0);
                }
                self.stripes
                    .retain(|s| s.offset < start || s.offset.plus(u64::from(s.len)) > end);
            }
        }
    }

    /// The peer acknowledged the stream below `ack` (pACK): nothing there needs a pipe any
    /// more.
    pub fn on_stream_ack(&mut self, ack: StreamOffset) {
        self.acked = self.acked.max(ack);
        for t in &mut self.pipes {
            t.unbound.remove(0, ack.0);
        }
        self.stripes
            .retain(|s| s.offset.plus(u64::from(s.len)) > ack);
    }

    /// ptcp.txt §4.2 `shrunk()`: `pipe`'s window now ends at its sequence number `edge`
    /// (SND.UNA + cwnd); the bytes bound at and beyond it are unbound at once, for another
    /// pipe to take (§3, "Dynamic Reassignment"). A binding that straddles the edge stays (the
    /// pipe sends whole segments). The pipe keeps each unbound binding as a copy, for its own
    /// retransmission of those sequence numbers (module doc). Copies return nothing (another
    /// pipe holds their bytes, or they are unbound already), and bytes the stream
    /// acknowledgement already covers are not returned either. Returns the bytes made
    /// available.
    pub fn unbind_beyond(&mut self, pipe: PipeId, edge: PipeSeq) -> u64 {
        self.unbind_beyond_where(pipe, edge, |_| true)
    }

    /// [`Bindings::unbind_beyond`] for the bindings beyond `edge` that `owed` selects (by
    /// their first sequence number); the others stay bound.
    pub fn unbind_beyond_where(
        &mut self,
        pipe: PipeId,
        edge: PipeSeq,
        mut owed: impl FnMut(PipeSeq) -> bool,
    ) -> u64 {
        let Some(t) = self.pipes.get_mut(pipe.0) else {
            return 0;
        };
        let mut freed = 0;
        for e in t.entries.iter_mut().rev() {
            if e.bound.seq < edge {
                break;
            }
            if e.copy || !owed(e.bound.seq) {
                continue;
            }
            let (start, end) = (e.bound.offset.max(self.acked), e.bound.offset_end());
            if !std::mem::replace(&mut e.copy, true) && start < end {
                t.unbound.insert(start.0, end.0);
                freed += end.since(start);
            }
        }
        freed
    }

    /// ptcp.txt §3, "Redundant Striping for Blackouts": `pipe` timed out with `una` its first
    /// unacknowledged sequence number; the bytes bound there are offered to the next other
    /// pipe that asks, and `pipe` keeps a copy (it needs one segment to recover). Returns the
    /// binding striped, if `una` is bound and not already striped.
    pub fn stripe_redundantly(&mut self, pipe: PipeId, una: PipeSeq) -> Option<Bound> {
        let entries = &mut self.pipes.get_mut(pipe.0)?.entries;
        let e = entries
            .iter_mut()
            .find(|e| e.bound.seq <= una && una < e.bound.seq_end())
            .filter(|e| !e.copy)?;
        e.copy = true;
        let b = e.bound;
        self.stripes.push_back(Stripe {
            from: pipe,
            offset: b.offset,
            len: b.len,
        });
        Some(b)
    }

    /// ptcp.txt §4.1 `resume()`: data became available; the active pipes (answered NO DATA
    /// since) are appended to `out` and leave the active list.
    pub fn take_active(&mut self, out: &mut Vec<PipeId>) {
        for (i, t) in self.pipes.iter_mut().enumerate() {
            if std::mem::take(&mut t.active) {
                out.push(PipeId(i));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    /// Pipe `p` binds `n` full segments from its sequence number `first`.
    fn bind_n(b: &mut Bindings, p: PipeId, first: u64, n: u64, limit: u64) -> Vec<Bound> {
        (0..n)
            .map(|k| {
                let seq = PipeSeq(first + k * u64::from(MSS));
                b.bind(p, seq, MSS, StreamOffset(limit)).expect("data")
            })
            .collect()
    }

    #[test]
    fn delayed_binding_answers_no_data_and_resumes_the_active_pipes() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        let mut resumed = Vec::new();
        b.take_active(&mut resumed);
        assert_eq!(resumed, [p0, p1], "new pipes start active");
        // Nothing written: NO DATA, and the pipe waits.
        assert_eq!(b.bind(p0, PipeSeq(1), MSS, StreamOffset(0)), None);
        assert!(b.is_active(p0) && !b.is_active(p1));
        // 1500 bytes written: the first pipe that asks takes a full segment, the next the rest.
        let first = b.bind(p0, PipeSeq(1), MSS, StreamOffset(1500)).unwrap();
        assert_eq!((first.offset, first.len), (StreamOffset(0), MSS));
        assert!(!b.is_active(p0));
        let second = b.bind(p1, PipeSeq(7), MSS, StreamOffset(1500)).unwrap();
        assert_eq!(
            (second.seq, second.offset, second.len),
            (PipeSeq(7), StreamOffset(1000), 500)
        );
        assert_eq!(b.bind(p1, PipeSeq(507), MSS, StreamOffset(1500)), None);
        resumed.clear();
        b.take_active(&mut resumed);
        assert_eq!(resumed, [p1]);
        assert_eq!(b.next_new(), StreamOffset(1500));
    }

    #[test]
    fn the_flow_control_limit_bounds_new_data() {
        let mut b = Bindings::new(StreamOffset(100));
        let p = b.add_pipe();
        let got = b.bind(p, PipeSeq(1), MSS, StreamOffset(350)).unwrap();
        assert_eq!((got.offset, got.len), (StreamOffset(100), 250));
        assert_eq!(b.bind(p, PipeSeq(251), MSS, StreamOffset(350)), None);
    }

    #[test]
    fn a_shrunk_window_unbinds_what_lies_beyond_it_for_another_pipe() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        // Pipe 0 holds four segments (seq 1..4001 = stream 0..4000).
        bind_n(&mut b, p0, 1, 4, 10_000);
        // Its window halves to two segments: seq 2001.. is beyond it.
        assert_eq!(b.unbind_beyond(p0, PipeSeq(2001)), 2000);
        assert_eq!(b.unbound_bytes(), 2000);
        assert_eq!(b.unbind_beyond(p0, PipeSeq(2001)), 0, "once");
        // Pipe 1 asks: it gets the unbound bytes first, lowest first, before any new data.
        let got = bind_n(&mut b, p1, 50, 3, 10_000);
        let offsets: Vec<_> = got.iter().map(|g| g.offset.0).collect();
        assert_eq!(offsets, [2000, 3000, 4000]);
        // Pipe 0 keeps copies: a retransmission of its sequence number 2001 carries what it
        // first carried.
        assert_eq!(b.bound(p0).count(), 4);
        assert_eq!(
            b.lookup(p0, PipeSeq(2500)).map(|g| g.offset),
            Some(StreamOffset(2000))
        );
        // Its next new sequence number gets new data.
        let again = b
            .bind(p0, PipeSeq(4001), MSS, StreamOffset(10_000))
            .unwrap();
        assert_eq!(again.offset, StreamOffset(5000));
        // An edge inside a binding keeps it (whole segments).
        assert_eq!(b.unbind_beyond(p0, PipeSeq(4500)), 0);
        assert_eq!(b.unbound_bytes(), 0);
    }

    #[test]
    fn a_timeout_stripes_the_first_segment_onto_another_pipe_and_keeps_a_copy() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        bind_n(&mut b, p0, 1, 3, 10_000);
        let striped = b.stripe_redundantly(p0, PipeSeq(1)).unwrap();
        assert_eq!((striped.offset, striped.len), (StreamOffset(0), MSS));
        assert_eq!(b.stripe_redundantly(p0, PipeSeq(1)), None, "once");
        // The timed-out pipe itself does not take its own stripe: it gets new data.
        let own = b
            .bind(p0, PipeSeq(3001), MSS, StreamOffset(10_000))
            .unwrap();
        assert_eq!(own.offset, StreamOffset(3000));
        // The next other pipe takes the same bytes before anything else.
        let other = b.bind(p1, PipeSeq(9), MSS, StreamOffset(10_000)).unwrap();
        assert_eq!((other.offset, other.len), (StreamOffset(0), MSS));
        // The old pipe keeps its copy for its retransmission.
        assert_eq!(
            b.lookup(p0, PipeSeq(1)).map(|g| g.offset),
            Some(StreamOffset(0))
        );
        // Its window collapsing to nothing returns the others but not the copy.
        assert_eq!(b.unbind_beyond(p0, PipeSeq(1)), 3000);
        assert_eq!(b.unbound_bytes(), 3000);
    }

    #[test]
    fn a_stripe_larger_than_the_room_is_taken_in_pieces() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        bind_n(&mut b, p0, 1, 1, 10_000);
        b.stripe_redundantly(p0, PipeSeq(1)).unwrap();
        let a = b.bind(p1, PipeSeq(1), 600, StreamOffset(10_000)).unwrap();
        let c = b.bind(p1, PipeSeq(601), 600, StreamOffset(10_000)).unwrap();
        assert_eq!((a.offset.0, a.len, c.offset.0, c.len), (0, 600, 600, 400));
    }

    #[test]
    fn acknowledgements_retire_bindings_and_what_needs_no_pipe() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        bind_n(&mut b, p0, 1, 4, 10_000);
        b.on_pipe_ack(p0, PipeSeq(2001));
        assert_eq!(
            b.bound(p0).map(|g| g.seq.0).collect::<Vec<_>>(),
            [2001, 3001]
        );
        assert_eq!(b.lookup(p0, PipeSeq(1500)), None);
        b.unbind_beyond(p0, PipeSeq(2001));
        b.stripe_redundantly(p0, PipeSeq(2001));
        // The stream acknowledgement covers the unbound bytes: nothing is reassigned.
        b.on_stream_ack(StreamOffset(4000));
        assert_eq!(b.unbound_bytes(), 0);
        // Nor is what a shrinking pipe still holds below it.
        let mut c = Bindings::new(StreamOffset(0));
        let q = c.add_pipe();
        bind_n(&mut c, q, 1, 3, 10_000);
        c.on_stream_ack(StreamOffset(1500));
        assert_eq!(c.unbind_beyond(q, PipeSeq(1)), 1500);
        assert_eq!(c.pipes[q.0].unbound.first(), Some(1500));
        let next = b.bind(p1, PipeSeq(1), MSS, StreamOffset(10_000)).unwrap();
        assert_eq!(next.offset, StreamOffset(4000));
    }

    #[test]
    fn unbinding_only_what_is_owed_leaves_the_rest_bound() {
        let mut b = Bindings::new(StreamOffset(0));
        let (p0, p1) = (b.add_pipe(), b.add_pipe());
        bind_n(&mut b, p0, 1, 4, 10_000);
        // Beyond sequence number 1001: segments at 1001, 2001, 3001; only 2001 is owed.
        let freed = b.unbind_beyond_where(p0, PipeSeq(1001), |seq| seq == PipeSeq(2001));
        assert_eq!(freed, u64::from(MSS));
        assert_eq!(b.unbound_for(p1), u64::from(MSS));
        let got = b.bind(p1, PipeSeq(1), MSS, StreamOffset(4000)).unwrap();
        assert_eq!((got.offset, got.len), (StreamOffset(2000), MSS));
        // The others stayed bound (not copies): a later shrink can still unbind them, once.
        assert_eq!(b.unbind_beyond(p0, PipeSeq(1001)), 2 * u64::from(MSS));
        assert_eq!(b.unbind_beyond(p0, PipeSeq(1001)), 0);
    }

    mod props {
        use proptest::prelude::*;

        use super::super::*;

        /// One step of a random history of three pipes.
        #[derive(Debug, Clone)]
        enum Op {
            /// Pipe asks for up to `len` bytes at its next sequence number; `more` bytes written.
            Bind { pipe: usize, len: u32, more: u64 },
            /// Pipe's window shrinks to `keep` of its bindings; beyond them, those whose bit
            /// in `owed` is set (by position, cyclically) are unbound and kept as copies, the
            /// others stay bound (in flight: `PtcpSender`'s `unbind_owed`).
            Shrink { pipe: usize, keep: usize, owed: u8 },
            /// Pipe times out.
            Timeout { pipe: usize },
            /// Pipe acknowledges its first `n` bindings.
            PipeAck { pipe: usize, n: usize },
            /// The stream is acknowledged up to a fraction (in 1/8) of what was bound.
            StreamAck { eighths: u64 },
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                4 => (0..3usize, 1..3000u32, 0..5000u64)
                    .prop_map(|(pipe, len, more)| Op::Bind { pipe, len, more }),
                1 => (0..3usize, 0..6usize, any::<u8>())
                    .prop_map(|(pipe, keep, owed)| Op::Shrink { pipe, keep, owed }),
                1 => (0..3usize).prop_map(|pipe| Op::Timeout { pipe }),
                1 => (0..3usize, 0..4usize).prop_map(|(pipe, n)| Op::PipeAck { pipe, n }),
                1 => (0..9u64).prop_map(|eighths| Op::StreamAck { eighths }),
            ]
        }

        proptest! {
            /// Whatever the history, no stream byte is lost or bound twice: every byte below
            /// the first never bound is acknowledged, delivered by a pipe, unbound, waiting in
            /// a stripe, or bound to a pipe (as its own or as a copy after a stripe); no byte
            /// is both unbound and a pipe's own; no two pipes own a byte at once; a pipe's
            /// bindings are in order.
            #[test]
            fn no_byte_is_lost_or_owned_twice(ops in proptest::collection::vec(op(), 1..200)) {
                let mut b = Bindings::new(StreamOffset(0));
                let pipes = [b.add_pipe(), b.add_pipe(), b.add_pipe()];
                let mut next_seq = [1u64; 3];
                let mut written = 0u64;
                let mut stream_ack = 0u64;
                // Bytes a pipe acknowledged (delivered, maybe not yet stream-acknowledged).
                let mut delivered = RangeSet::new();
                for op in ops {
                    match op {
                        Op::Bind { pipe, len, more } => {
                            written += more;
                            let seq = PipeSeq(next_seq[pipe]);
                            if let Some(g) = b.bind(pipes[pipe], seq, len, StreamOffset(written)) {
                                prop_assert!(g.len >= 1 && g.len <= len);
                                prop_assert!(g.offset_end().0 <= written);
                                next_seq[pipe] = g.seq_end().0;
                            }
                        }
                        Op::Shrink { pipe, keep, owed } => {
                            let edge = b.bound(pipes[pipe]).nth(keep).map(|g| g.seq);
                            if let Some(edge) = edge {
                                let mut k = 0u32;
                                b.unbind_beyond_where(pipes[pipe], edge, |_| {
                                    k += 1;
                                    owed.rotate_right(k) & 1 == 1
                                });
                            }
                        }
                        Op::Timeout { pipe } => {
                            let first = b.bound(pipes[pipe]).next();
                            if let Some(first) = first {
                                b.stripe_redundantly(pipes[pipe], first.seq);
                            }
                        }
                        Op::PipeAck { pipe, n } => {
                            let acked: Vec<Bound> = b.bound(pipes[pipe]).take(n).collect();
                            if let Some(last) = acked.last() {
                                for g in &acked {
                                    delivered.insert(g.offset.0, g.offset_end().0);
                                }
                                b.on_pipe_ack(pipes[pipe], last.seq_end());
                            }
                        }
                        Op::StreamAck { eighths } => {
                            // Only what was delivered contiguously can be acknowledged.
                            let candidate = b.next_new().0 * eighths / 8;
                            let upto = delivered.end_of(stream_ack).unwrap_or(stream_ack);
                            let ack = candidate.min(upto).max(stream_ack);
                            stream_ack = ack;
                            b.on_stream_ack(StreamOffset(ack));
                        }
                    }
                    // Ownership: a pipe's own bindings are disjoint across pipes and from the
                    // unbound bytes; every pipe's bindings are in sequence order.
                    let mut owned = RangeSet::new();
                    let mut covered = RangeSet::new();
                    for &p in &pipes {
                        let mut last_end = 0;
                        for e in &b.pipes[p.0].entries {
                            let g = e.bound;
                            prop_assert!(g.seq.0 >= last_end, "pipe bindings out of order");
                            last_end = g.seq_end().0;
                            covered.insert(g.offset.0, g.offset_end().0);
                            if !e.copy {
                                let (s, t) = (g.offset.0, g.offset_end().0);
                                prop_assert!(owned.iter().all(|(a, z)| z <= s || a >= t),
                                    "a byte owned twice");
                                owned.insert(s, t);
                            }
                        }
                    }
                    for (s, t) in b.pipes.iter().flat_map(|t| t.unbound.iter()) {
                        prop_assert!(s >= stream_ack);
                        prop_assert!(owned.iter().all(|(a, z)| z <= s || a >= t),
                            "a byte both unbound and owned");
                        covered.insert(s, t);
                    }
                    for (s, t) in delivered.iter() {
                        covered.insert(s, t);
                    }
                    // A stripe not yet taken holds its bytes for the next other pipe.
                    for st in &b.stripes {
                        covered.insert(st.offset.0, st.offset.plus(u64::from(st.len)).0);
                    }
                    covered.insert(0, stream_ack);
                    prop_assert!(covered.contains(0, b.next_new().0), "a byte was lost");
                }
            }
        }
    }

    #[test]
    fn misuse_changes_nothing() {
        let mut b = Bindings::new(StreamOffset(0));
        let p = b.add_pipe();
        assert_eq!(b.bind(PipeId(9), PipeSeq(1), MSS, StreamOffset(10)), None);
        assert_eq!(b.bind(p, PipeSeq(1), 0, StreamOffset(10)), None);
        b.bind(p, PipeSeq(1), MSS, StreamOffset(5000)).unwrap();
        // A sequence number already bound is a retransmission, not a new binding.
        assert_eq!(b.bind(p, PipeSeq(500), MSS, StreamOffset(5000)), None);
        assert_eq!(b.next_new(), StreamOffset(1000));
        assert_eq!(b.unbind_beyond(PipeId(9), PipeSeq(0)), 0);
        assert_eq!(b.stripe_redundantly(p, PipeSeq(99_999)), None);
    }
}
