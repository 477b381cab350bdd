//! The send *stream*: the application's bytes ([`SendBuffer`]), the peer's receive window,
//! the persist timer and zero-window probing (RFC 1122 §4.2.2.17), the FIN's place after the
//! last byte, and the sender-side rules that size new data from the stream — silly-window
//! avoidance (RFC 1122 §4.2.3.4) and Nagle (RFC 896).
//!
//! A stream counts in [`StreamOffset`]s; which pipe sequence numbers carry its bytes is the
//! binding's business ([`super::IdentityBinding`] for the TCP-like engine).

use crate::seqspace::StreamOffset;
use crate::source::ByteSource;
use crate::tcp::send_buffer::SendBuffer;
use crate::Time;

/// One send stream.
#[derive(Debug)]
pub struct SendStream {
    pub(super) buf: SendBuffer,
    peer_window: u64,
    /// The largest window the peer has offered (RFC 1122 §4.2.3.4's "max(SND.WND)").
    max_peer_window: u64,
    fin_queued: bool,
    fin_sent: bool,
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    /// The persist timer fired with nothing outstanding: the next segment may probe a zero
    /// window or override silly-window avoidance.
    probe_pending: bool,
}

/// How much new data the stream lets go, before the pipe's window is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOffer {
    /// Unsent bytes queued from the offset asked about.
    pub avail: u64,
    /// Room in the peer's advertised window from that offset.
    pub wnd_room: u64,
    /// The FIN is queued and not yet sent.
    pub fin_pending: bool,
}

impl SendStream {
    /// A stream whose first byte is at `first`, buffering at most `capacity` bytes; the peer's
    /// window is taken to be `initial_peer_window` until it advertises one.
    pub fn new(first: StreamOffset, capacity: usize, initial_peer_window: u64) -> Self {
        SendStream {
            buf: SendBuffer::new(first.0, capacity),
            peer_window: initial_peer_window,
            max_peer_window: 0,
            fin_queued: false,
            fin_sent: false,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
        }
    }

    /// Application write; returns bytes accepted.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.fin_queued {
            return 0;
        }
        self.buf.write(data)
    }

    /// Takes the stream's bytes from `source` instead of copies (see [`crate::source`]);
    /// refused (false) once bytes were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>) -> bool {
        let origin = self.buf.end();
        self.buf.set_source(source, origin)
    }

    /// With a source: makes up to `n` more stream bytes available; returns how many were
    /// accepted (bounded by the send buffer).
    pub fn push(&mut self, n: u64) -> u64 {
        if self.fin_queued {
            return 0;
        }
        self.buf.push(n)
    }

    /// Free space in the send buffer.
    pub fn write_capacity(&self) -> usize {
        if self.fin_queued {
            0
        } else {
            self.buf.free()
        }
    }

    /// Queues a FIN after all written data.
    pub fn close(&mut self) {
        self.fin_queued = true;
    }

    /// The FIN was handed to a pipe.
    pub fn on_fin_sent(&mut self) {
        self.fin_sent = true;
    }

    /// True once the FIN was handed to a pipe.
    #[inline]
    pub fn fin_sent(&self) -> bool {
        self.fin_sent
    }

    /// The FIN is queued and not yet sent.
    #[inline]
    pub fn fin_pending(&self) -> bool {
        self.fin_queued && !self.fin_sent
    }

    /// The offset after the last byte written.
    #[inline]
    pub fn end(&self) -> StreamOffset {
        StreamOffset(self.buf.end())
    }

    /// Bytes the buffer holds at most.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Most bytes the stream holds (the send buffer; nothing with a [`ByteSource`]).
    pub fn memory_bound(&self) -> usize {
        self.buf.memory_bound()
    }

    /// Every byte before `offset` was delivered: the buffer releases them.
    #[inline]
    pub fn ack_to(&mut self, offset: StreamOffset) {
        self.buf.ack_to(offset.0);
    }

    /// Copies `len` bytes from `offset` into `out`.
    pub fn copy(&self, offset: StreamOffset, len: usize, out: &mut Vec<u8>) {
        self.buf.copy_range(offset.0, len, out);
    }

    /// Nothing is left to send from `next`: no byte beyond it, and no FIN pending.
    #[inline]
    pub fn drained(&self, next: StreamOffset) -> bool {
        self.buf.end() <= next.0 && !self.fin_pending()
    }

    /// The peer's advertised window.
    #[inline]
    pub fn peer_window(&self) -> u64 {
        self.peer_window
    }

    /// Sets the peer's advertised window (from the handshake).
    pub fn set_peer_window(&mut self, w: u64) {
        self.peer_window = w;
        self.max_peer_window = self.max_peer_window.max(w);
    }

    /// Takes the peer's advertised `window` from an acceptable acknowledgement; an open one
    /// ends the persist timer and its backoff (RFC 1122 §4.2.2.17: probing lasts while the
    /// window is zero).
    #[inline]
    pub fn take_window(&mut self, window: u64) {
        self.peer_window = window;
        self.max_peer_window = self.max_peer_window.max(window);
        if window > 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
    }

    /// What the stream offers from `next` (the first unsent offset) when `acked` is the first
    /// unacknowledged one (the left edge of the peer's window).
    #[inline]
    pub fn offer(&self, acked: StreamOffset, next: StreamOffset) -> StreamOffer {
        let right_edge = acked.plus(self.peer_window);
        StreamOffer {
            avail: self.end().since(next),
            wnd_room: right_edge.since(next),
            fin_pending: self.fin_pending(),
        }
    }

    /// Takes the persist timer's override (RFC 1122 §4.2.3.4): true once after it fired with
    /// nothing outstanding.
    #[inline]
    pub fn take_override(&mut self) -> bool {
        std::mem::take(&mut self.probe_pending)
    }

    /// The override is pending (the persist timer fired and no segment used it yet).
    #[inline]
    pub fn override_pending(&self) -> bool {
        self.probe_pending
    }

    /// Silly-window avoidance (RFC 1122 §4.2.3.4): a segment of `len` bytes shorter than the
    /// MSS that is not all the `avail` queued data leaves only if it fills at least half the
    /// largest window the peer has offered, or on the override timeout (`overriding`).
    #[inline]
    pub fn sws_holds(&self, len: u64, mss: u64, avail: u64, overriding: bool) -> bool {
        len > 0 && len < mss && len < avail && 2 * len < self.max_peer_window && !overriding
    }

    /// Arms the persist timer at `deadline` when nothing is outstanding (with data
    /// outstanding, its ACKs or the retransmission timer keep the connection going).
    #[inline]
    pub fn arm_persist(&mut self, nothing_outstanding: bool, deadline: impl FnOnce() -> Time) {
        if nothing_outstanding && self.persist_deadline.is_none() {
            self.persist_deadline = Some(deadline());
        }
    }

    /// The persist timer: if expired with nothing outstanding, it probes a zero window,
    /// backing off; for a window too small to fill (§4.2.3.4) it is the override timeout
    /// (RFC 1122 §4.2.2.17).
    pub fn on_timeout(&mut self, now: Time, nothing_outstanding: bool) {
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.persist_deadline = None;
            if nothing_outstanding {
                self.persist_backoff = (self.persist_backoff + 1).min(6);
                self.probe_pending = true;
            }
        }
    }

    /// One more unanswered zero-window probe: the probing interval's exponent, at most 6.
    pub fn back_off_persist(&mut self) -> u32 {
        self.persist_backoff = (self.persist_backoff + 1).min(6);
        self.persist_backoff
    }

    /// The persist timer's deadline.
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        self.persist_deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offer_is_bounded_by_the_data_and_the_peer_window() {
        let mut s = SendStream::new(StreamOffset(1), 10_000, 1000);
        assert_eq!(s.write(&[7; 3000]), 3000);
        s.take_window(2000);
        let o = s.offer(StreamOffset(1), StreamOffset(501));
        assert_eq!((o.avail, o.wnd_room, o.fin_pending), (2500, 1500, false));
        assert!(s.drained(StreamOffset(3001)) && !s.drained(StreamOffset(3000)));
        s.close();
        assert_eq!(s.write(b"late"), 0);
        assert!(s.fin_pending() && !s.drained(StreamOffset(3001)));
        s.on_fin_sent();
        assert!(s.drained(StreamOffset(3001)));
    }

    /// RFC 1122 §4.2.2.17: the persist timer, armed with nothing outstanding, grants one
    /// override when it fires; an open window cancels it and its backoff.
    #[test]
    fn the_persist_timer_grants_an_override_and_an_open_window_ends_it() {
        let mut s = SendStream::new(StreamOffset(1), 10_000, 1000);
        s.take_window(0);
        s.arm_persist(true, || Time::from_millis(200));
        s.arm_persist(true, || Time::from_millis(900));
        assert_eq!(s.deadline(), Some(Time::from_millis(200)), "armed once");
        s.on_timeout(Time::from_millis(200), true);
        assert!(s.override_pending() && s.take_override() && !s.take_override());
        assert_eq!(s.back_off_persist(), 2);
        s.arm_persist(false, || Time::from_millis(1));
        assert_eq!(s.deadline(), None, "never with data outstanding");
        s.arm_persist(true, || Time::from_millis(300));
        s.take_window(5000);
        assert_eq!(s.deadline(), None);
        assert_eq!(s.back_off_persist(), 1, "the backoff restarted");
    }
}
