//! The receiving half of a connection: one receiver pipe ([`ReceiverPipe`]: when to
//! acknowledge, RFC 5681 §4.2; the timestamp to echo, RFC 7323 §4.3; the TCP-ELN ranges) over
//! one receive stream ([`ReceiveStream`]: the reassembly, the advertised window, the FIN, what
//! the application read) through an identity binding: the pipe's sequence number *n* is the
//! stream's offset *n*, so the reassembly's in-order point and out-of-order pieces are the
//! pipe's cumulative acknowledgement and SACK blocks (RFC 2018).
//!
//! pTCP (ptcp.txt §4.2) composes the same halves differently: one stream, one pipe per
//! interface, each pipe recording its own sequence numbers.

mod pipe;
mod stream;

pub use pipe::ReceiverPipe;
pub use stream::{ReceiveStream, StreamArrival};

use super::sender::IdentityBinding;
use crate::seqspace::{PipeSeq, StreamOffset};
use crate::Time;

/// The receiving half: one stream over one pipe.
#[derive(Debug)]
pub struct Receiver {
    pipe: ReceiverPipe,
    stream: ReceiveStream,
    binding: IdentityBinding,
}

impl Receiver {
    /// A receiver expecting `rcv_nxt` next (one past the peer's SYN), buffering at most
    /// `capacity` bytes of segments of at most `mss` bytes. It holds at most
    /// `capacity / mss + 2` out-of-order pieces: a sender of full segments never needs more.
    pub fn new(rcv_nxt: u64, capacity: u64, mss: u64, delayed_ack: bool, delack_ms: u64) -> Self {
        let binding = IdentityBinding;
        let first = PipeSeq(rcv_nxt);
        Receiver {
            pipe: ReceiverPipe::new(first, mss, delayed_ack, delack_ms),
            stream: ReceiveStream::new(binding.offset(first), capacity, mss),
            binding,
        }
    }

    /// The receiver pipe.
    pub fn pipe(&self) -> &ReceiverPipe {
        &self.pipe
    }

    /// The receive stream.
    pub fn stream(&self) -> &ReceiveStream {
        &self.stream
    }

    /// Records that the segment `[seq, seq + len)` arrived corrupted on the local wireless hop
    /// (reported by the host; TCP-ELN). At most 1024 ranges are remembered.
    pub fn note_corrupted(&mut self, seq: u64, len: u64) {
        let rcv_nxt = PipeSeq(self.rcv_nxt());
        self.pipe.note_corrupted(PipeSeq(seq), len, rcv_nxt);
    }

    /// The ELN bit for the next ACK (rcp-r2cp.txt §3.4.2): set when the hole at the
    /// acknowledgement point was lost on the wireless hop. Forgets repaired holes.
    pub fn eln_mark(&mut self) -> bool {
        let rcv_nxt = PipeSeq(self.rcv_nxt());
        self.pipe.eln_mark(rcv_nxt, self.stream.has_holes())
    }

    /// RCV.NXT: the acknowledgement number to send.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.binding.seq(self.stream.next()).0
    }

    /// The timestamp to echo.
    pub fn ts_recent(&self) -> u32 {
        self.pipe.ts_recent()
    }

    /// Records the TSval of the peer's SYN (or SYN-ACK, or a repeated SYN) as TS.Recent, so the
    /// handshake's answer echoes it (RFC 7323 §3.2, §4.3: the SYN occupies one sequence number,
    /// which `on_segment`'s payload-only test would miss).
    pub fn on_syn(&mut self, ts_val: u32) {
        self.pipe.on_syn(ts_val);
    }

    /// True once the peer's FIN was received in order (end of stream).
    pub fn fin_received(&self) -> bool {
        self.stream.fin_received()
    }

    /// In-order bytes the application has read so far.
    pub fn bytes_delivered(&self) -> u64 {
        self.stream.bytes_delivered()
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.stream.readable()
    }

    /// Bytes held: in order and not yet read, plus out of order.
    pub fn buffered(&self) -> usize {
        self.stream.buffered()
    }

    /// Out-of-order pieces held now, and at most.
    pub fn out_of_order_pieces(&self) -> (usize, usize) {
        self.stream.out_of_order_pieces()
    }

    /// Out-of-order pieces refused so far because the most were held (a sender of full
    /// segments never causes this).
    pub fn refused_pieces(&self) -> u64 {
        self.stream.refused_pieces()
    }

    /// Most bytes this receiver holds: the buffer, the out-of-order pieces' overhead, the
    /// freed piece buffers kept for reuse and the ELN ranges (see `docs/HANDSHAKE.md`,
    /// "Memory").
    pub fn memory_bound(&self) -> usize {
        self.stream
            .memory_bound()
            .saturating_add(self.pipe.memory_bound())
    }

    /// The window to advertise now: free buffer space, never shrinking the right edge.
    #[inline]
    pub fn window(&self) -> u64 {
        self.stream.window()
    }

    /// Records that an ACK is being sent carrying `ack` and `window`: the current RCV.NXT and
    /// [`Receiver::window`], as the connection wrote them into the segment (taken from it
    /// rather than computed again).
    pub fn on_ack_sent(&mut self, ack: u64, window: u32) {
        debug_assert_eq!((ack, u64::from(window)), (self.rcv_nxt(), self.window()));
        let ack = PipeSeq(ack);
        self.pipe.on_ack_sent(ack);
        self.stream.on_window_sent(self.binding.offset(ack), window);
    }

    /// True when an ACK should go out now.
    pub fn wants_ack(&self) -> bool {
        self.pipe.wants_ack()
    }

    /// Requests an immediate ACK (e.g. after a duplicate SYN or an unacceptable segment).
    pub fn force_ack(&mut self) {
        self.pipe.force_ack();
    }

    /// Delayed-ACK deadline.
    pub fn deadline(&self) -> Option<Time> {
        self.pipe.deadline()
    }

    /// Handles an expired delayed-ACK timer.
    pub fn on_timeout(&mut self, now: Time) {
        self.pipe.on_timeout(now);
    }

    /// Fills SACK blocks into `opts`: the reassembly's out-of-order pieces, which the identity
    /// binding makes the pipe's.
    pub fn fill_sack(&mut self, opts: &mut roam_wire::Options) {
        self.stream.reassembly_mut().sack_blocks(opts);
    }

    /// Whether [`Receiver::fill_sack`] would fill any block; when not, it has done what
    /// `fill_sack` would (so an ACK without SACK blocks needs no options block to fill).
    #[inline]
    pub fn sack_blocks_due(&mut self) -> bool {
        self.stream.reassembly_mut().sack_blocks_due()
    }

    /// Processes the sequence part of a segment. Returns in-order bytes that became readable.
    pub fn on_segment(
        &mut self,
        now: Time,
        seq: u64,
        payload: &[u8],
        fin: bool,
        ts_val: u32,
    ) -> u64 {
        let Some(seg_end) = seq
            .checked_add(payload.len() as u64)
            .and_then(|end| end.checked_add(u64::from(fin)))
        else {
            // A segment ending past the sequence space lies beyond any window we offer: it is
            // dropped and answered with an ACK, as any unacceptable segment (RFC 793 §3.9).
            self.pipe.force_ack();
            return 0;
        };
        self.pipe
            .on_timestamp(PipeSeq(seq), PipeSeq(seg_end), ts_val);
        let readable_before = self.stream.readable();
        let offset: StreamOffset = self.binding.offset(PipeSeq(seq));
        let Some(got) = self.stream.on_data(offset, payload, fin) else {
            return 0;
        };
        if got.beyond_window || got.fin_now {
            // Out of window: answer with our window (persist probe); the FIN: at once.
            self.pipe.force_ack();
        }
        self.pipe
            .on_arrival(now, got.arrival, got.usable, self.stream.has_holes());
        (self.stream.readable() - readable_before) as u64
    }

    /// Moves up to `max` readable bytes into `out`; may schedule a window update.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        self.read_with(max, |bytes| out.extend_from_slice(bytes))
    }

    /// As [`Receiver::read`], but hands the bytes to `f` where they lie (one or two slices,
    /// in stream order) instead of copying them out.
    pub fn read_with(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize {
        let (n, update) = self.stream.read_with(max, f);
        if update {
            self.pipe.force_ack();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver() -> Receiver {
        Receiver::new(1000, 10_000, 1000, false, 200)
    }

    #[test]
    fn a_segment_ending_past_the_sequence_space_is_dropped_and_acknowledged() {
        let mut r = receiver();
        for (seq, len, fin) in [(u64::MAX - 10, 100, false), (u64::MAX, 0, true)] {
            assert_eq!(r.on_segment(Time::ZERO, seq, &vec![1; len], fin, 7), 0);
            assert!(r.wants_ack(), "answered like any unacceptable segment");
            r.on_ack_sent(r.rcv_nxt(), r.window() as u32);
        }
        assert_eq!(r.rcv_nxt(), 1000);
        assert_eq!(r.buffered(), 0);
        assert!(!r.fin_received());
        assert_eq!(
            r.ts_recent(),
            0,
            "an unacceptable segment does not set TS.Recent"
        );
        // The connection goes on.
        assert_eq!(r.on_segment(Time::ZERO, 1000, &[2; 10], false, 8), 10);
    }

    #[test]
    fn a_receiver_at_the_end_of_the_sequence_space_saturates_its_window_edge() {
        let mut r = Receiver::new(u64::MAX - 5, 10_000, 1000, false, 200);
        r.on_ack_sent(r.rcv_nxt(), r.window() as u32);
        assert_eq!(r.on_segment(Time::ZERO, u64::MAX - 5, &[3; 5], false, 1), 5);
        assert_eq!(r.rcv_nxt(), u64::MAX);
        assert_eq!(r.on_segment(Time::ZERO, u64::MAX, &[3; 5], false, 1), 0);
    }
}
