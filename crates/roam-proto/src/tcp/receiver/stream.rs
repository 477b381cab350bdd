//! The receive stream: one reassembly of the peer's bytes by stream offset, the receive
//! buffer and the window it advertises, the end of the stream (FIN) and what the application
//! has read. It counts in [`StreamOffset`]s; which pipe carried a byte is none of its concern
//! (ptcp.txt §4.2: pTCP owns the single receive buffer, the pipes only its sequence numbers).

use super::super::reassembly::{Arrival, Reassembly, PIECE_OVERHEAD, SPARE_BOUND};
use crate::seqspace::StreamOffset;

/// What one arriving piece of the stream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamArrival {
    /// What the reassembly made of the bytes within the window.
    pub arrival: Arrival,
    /// Bytes within the window.
    pub usable: u64,
    /// Bytes arrived entirely beyond the window (answered with the window: a persist probe).
    pub beyond_window: bool,
    /// The end of the stream became in order with this arrival.
    pub fin_now: bool,
}

/// One reassembly and its receive buffer.
#[derive(Debug, Clone)]
pub struct ReceiveStream {
    reasm: Reassembly,
    capacity: u64,
    mss: u64,
    /// Right edge of the window last advertised (never moved left: RFC 793 / RFC 7323 §2.4).
    rcv_adv: u64,
    /// Offset of the end of the stream (the FIN's place), once seen.
    fin_seq: Option<u64>,
    fin_received: bool,
    bytes_delivered: u64,
}

impl ReceiveStream {
    /// A stream expecting `next` next, buffering at most `capacity` bytes of pieces of at most
    /// `mss` bytes. It holds at most `capacity / mss + 2` out-of-order pieces: a sender of full
    /// segments never needs more.
    pub fn new(next: StreamOffset, capacity: u64, mss: u64) -> Self {
        let max_pieces = capacity / mss.max(1) + 2;
        ReceiveStream {
            reasm: Reassembly::new(
                next.0,
                usize::try_from(capacity).unwrap_or(usize::MAX),
                usize::try_from(max_pieces).unwrap_or(usize::MAX),
            ),
            capacity,
            mss,
            rcv_adv: next.0.saturating_add(capacity),
            fin_seq: None,
            fin_received: false,
            bytes_delivered: 0,
        }
    }

    /// The next in-order offset expected (RCV.NXT under an identity binding; pACK in pTCP).
    #[inline]
    pub fn next(&self) -> StreamOffset {
        StreamOffset(self.reasm.rcv_nxt())
    }

    /// The reassembly (its out-of-order pieces are the SACK blocks of an identity-bound pipe).
    pub(in crate::tcp) fn reassembly_mut(&mut self) -> &mut Reassembly {
        &mut self.reasm
    }

    /// True while bytes are held beyond a gap.
    #[inline]
    pub fn has_holes(&self) -> bool {
        self.reasm.has_holes()
    }

    /// True once the end of the stream was received in order.
    pub fn fin_received(&self) -> bool {
        self.fin_received
    }

    /// In-order bytes the application has read so far.
    pub fn bytes_delivered(&self) -> u64 {
        self.bytes_delivered
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.reasm.readable()
    }

    /// Bytes held: in order and not yet read, plus out of order.
    pub fn buffered(&self) -> usize {
        self.reasm.buffered()
    }

    /// Out-of-order pieces held now, and at most.
    pub fn out_of_order_pieces(&self) -> (usize, usize) {
        (self.reasm.pieces(), self.reasm.max_pieces())
    }

    /// Out-of-order pieces refused so far because the most were held.
    pub fn refused_pieces(&self) -> u64 {
        self.reasm.refused()
    }

    /// Most bytes the stream holds: the buffer, the out-of-order pieces' overhead and the freed
    /// piece buffers kept for reuse (`docs/HANDSHAKE.md`, "Memory").
    pub fn memory_bound(&self) -> usize {
        usize::try_from(self.capacity)
            .unwrap_or(usize::MAX)
            .saturating_add(self.reasm.max_pieces().saturating_mul(PIECE_OVERHEAD))
            .saturating_add(SPARE_BOUND)
    }

    /// The window to advertise now: free buffer space, never shrinking the right edge.
    #[inline]
    pub fn window(&self) -> u64 {
        let free = self.capacity.saturating_sub(self.reasm.buffered() as u64);
        let keep = self.rcv_adv.saturating_sub(self.reasm.rcv_nxt());
        free.max(keep).min(u64::from(u32::MAX))
    }

    /// Records that `window` was advertised with the cumulative acknowledgement `next`.
    pub fn on_window_sent(&mut self, next: StreamOffset, window: u32) {
        self.rcv_adv = next.0.saturating_add(u64::from(window));
    }

    /// Takes the stream bytes `payload` at `offset`, followed by the end of the stream when
    /// `fin` (the caller checked that `offset + len + fin` fits the sequence space). Bytes
    /// beyond the window are dropped (RFC 793 §3.9). `None` for an empty piece without FIN.
    #[inline]
    pub fn on_data(
        &mut self,
        offset: StreamOffset,
        payload: &[u8],
        fin: bool,
    ) -> Option<StreamArrival> {
        let seq = offset.0;
        let end_of_data = seq + payload.len() as u64;
        if fin {
            self.fin_seq.get_or_insert(end_of_data);
        }
        if payload.is_empty() && !fin {
            return None;
        }
        // Trim to the receive window; data beyond it is dropped (RFC 793 §3.9).
        let right = self.reasm.rcv_nxt().saturating_add(self.window());
        let end = if end_of_data > right {
            right.max(seq)
        } else {
            end_of_data
        };
        let usable = &payload[..(end.saturating_sub(seq)) as usize];
        let mut beyond_window = false;
        let arrival = if usable.is_empty() {
            beyond_window = seq >= right && !payload.is_empty();
            Arrival::Duplicate
        } else {
            self.reasm.insert(seq, usable)
        };
        let mut fin_now = false;
        if self.fin_seq == Some(self.reasm.rcv_nxt()) && !self.fin_received {
            self.reasm.advance_control();
            self.fin_received = true;
            fin_now = true;
        }
        Some(StreamArrival {
            arrival,
            usable: usable.len() as u64,
            beyond_window,
            fin_now,
        })
    }

    /// Hands up to `max` readable bytes to `f` where they lie (one or two slices, in stream
    /// order). Returns the bytes read and whether the window grew enough to be announced: by
    /// two segments or half the buffer (receiver-side silly-window avoidance, RFC 1122
    /// §4.2.3.3).
    pub fn read_with(&mut self, max: usize, f: impl FnMut(&[u8])) -> (usize, bool) {
        let before = self.window();
        let n = self.reasm.read_with(max, f);
        self.bytes_delivered += n as u64;
        let after = self.window();
        let threshold = (2 * self.mss).min(self.capacity / 2);
        let advertised = self.rcv_adv.saturating_sub(self.reasm.rcv_nxt());
        let update = n > 0 && after > before && after.saturating_sub(advertised) >= threshold;
        (n, update)
    }
}
