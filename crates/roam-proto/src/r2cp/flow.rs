//! R²CP's flow control (rcp-r2cp.txt §3.3.4, §4.1.3): the receive buffer is charged per
//! *requested segment*, not by the span from the read point to a unit's end.
//!
//! §3.3.4: "a request is sent out only if the corresponding data, when received, will not
//! cause an overflow of the buffer at the receiver. This can be achieved by creating a
//! 'dummy' sk_buff (that does not contain any data) in the receive buffer for each data
//! segment requested. New requests are issued as long as new space is created in the
//! buffer." §4.1.3 gives the aggregate connection that "socket buffer management". So the
//! buffer holds, at any time, the bytes that arrived and were not read (in order or out of
//! order) plus one reservation per requested range whose data has not arrived; a range nobody
//! has requested yet (a gap rank scheduling leaves for a faster pipe) costs nothing. Design and
//! the one exception (ours): `docs/R2CP.md`, "Flow control".

use super::ranges::RangeSet;

/// The receive buffer's reservations: global ranges requested (through any pipe, possibly
/// lost and waiting to be requested again) whose data has not arrived — §3.3.4's "dummy"
/// sk_buffs. A reservation is made when a range leaves *pending* and released when its
/// bytes are stored; a lost, reassigned or re-requested range keeps its reservation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reservations {
    awaited: RangeSet,
}

impl Reservations {
    /// `[start, end)` was requested (a dummy sk_buff per requested segment).
    pub fn reserve(&mut self, start: u64, end: u64) {
        self.awaited.insert(start, end);
    }

    /// `[start, end)` arrived and is held by the buffer: its reservation is filled.
    pub fn fill(&mut self, start: u64, end: u64) {
        self.awaited.remove(start, end);
    }

    /// The end of the reserved range holding `offset`: data the connection requested and
    /// still waits for. `None` for bytes nobody requested (a DATA for them is not kept).
    pub fn awaited_end(&self, offset: u64) -> Option<u64> {
        self.awaited.end_of(offset)
    }

    /// Bytes reserved.
    pub fn bytes(&self) -> u64 {
        self.awaited.bytes()
    }

    /// Drops every reservation at or above `limit` (the object turned out shorter).
    pub fn truncate(&mut self, limit: u64) {
        self.awaited.truncate(limit);
    }

    /// Drops every reservation (the transfer is complete).
    pub fn clear(&mut self) {
        self.awaited = RangeSet::new();
    }
}

/// What the receive buffer holds and owes when a new unit is considered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferCharge {
    /// The receive buffer (`RcpConfig::recv_buffer`).
    pub capacity: u64,
    /// In-order bytes the application has not read.
    pub readable: u64,
    /// Out-of-order bytes held.
    pub out_of_order: u64,
    /// Bytes requested and not yet arrived ([`Reservations::bytes`]).
    pub reserved: u64,
    /// RCV.NXT: the lowest byte missing.
    pub rcv_nxt: u64,
}

impl BufferCharge {
    /// Bytes the buffer is charged for: held plus reserved.
    pub fn charged(&self) -> u64 {
        self.readable
            .saturating_add(self.out_of_order)
            .saturating_add(self.reserved)
    }

    /// Whether a new request for `[start, end)` may be issued.
    ///
    /// §3.3.4: "a request is sent out only if the corresponding data, when received, will not
    /// cause an overflow of the buffer": held + reserved + the new unit ≤ the buffer.
    ///
    /// Ours (the paper is silent): the unit at RCV.NXT is admitted whatever the charge while
    /// the application has read everything in order. Charging per requested segment lets a
    /// slow pipe's far-ahead units and the data above a gap fill the whole buffer while the
    /// gap itself is still unrequested; nothing would then ever free space (nothing in order
    /// to read) and the connection would stop for good. The exception admits one unit at a
    /// time (the next one only after this one arrived and was read), so the buffer is
    /// overdrawn by at most one unit.
    pub fn admits(&self, start: u64, end: u64) -> bool {
        let len = end.saturating_sub(start);
        self.charged().saturating_add(len) <= self.capacity
            || (start == self.rcv_nxt && self.readable == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// The former rule: a unit may be requested only if it ends within read point + buffer.
    fn span_admits(read_point: u64, capacity: u64, end: u64) -> bool {
        end <= read_point.saturating_add(capacity)
    }

    #[test]
    fn a_rank_skip_beyond_the_span_is_admitted_when_the_reservations_fit() {
        // Fig. 8 stretched: a 10-segment buffer, everything read up to 0; the fast pipe has
        // units 0..3 outstanding and will request 3..12 before a request sent now through the
        // slow pipe arrives, so the slow pipe's rank is 13: unit [12 000, 13 000).
        let mut r = Reservations::default();
        r.reserve(0, 3 * MSS);
        let charge = BufferCharge {
            capacity: 10 * MSS,
            readable: 0,
            out_of_order: 0,
            reserved: r.bytes(),
            rcv_nxt: 0,
        };
        let (s, e) = (12 * MSS, 13 * MSS);
        assert!(!span_admits(0, 10 * MSS, e), "the span rule refuses it");
        assert!(charge.admits(s, e), "§3.3.4: 3 reserved + 1 requested ≤ 10");
        // Once it is requested, the unrequested gap [3 000, 12 000) still costs nothing: six
        // more fast-pipe units fit, the seventh does not.
        r.reserve(s, e);
        let mut charge = BufferCharge {
            reserved: r.bytes(),
            ..charge
        };
        for k in 3..9 {
            assert!(charge.admits(k * MSS, (k + 1) * MSS), "unit {k}");
            r.reserve(k * MSS, (k + 1) * MSS);
            charge.reserved = r.bytes();
        }
        assert_eq!(charge.charged(), 10 * MSS);
        assert!(!charge.admits(9 * MSS, 10 * MSS));
        assert!(
            span_admits(0, 10 * MSS, 10 * MSS),
            "which the span rule admits"
        );
    }

    #[test]
    fn held_and_reserved_bytes_both_count_and_filling_moves_a_reservation_to_held() {
        let mut r = Reservations::default();
        r.reserve(0, 4 * MSS);
        r.reserve(6 * MSS, 8 * MSS);
        assert_eq!(r.bytes(), 6 * MSS);
        // [6 000, 8 000) arrives out of order: no longer reserved, now held.
        r.fill(6 * MSS, 8 * MSS);
        assert_eq!(r.bytes(), 4 * MSS);
        assert_eq!(
            r.awaited_end(6 * MSS),
            None,
            "nothing awaited there any more"
        );
        assert_eq!(r.awaited_end(2 * MSS), Some(4 * MSS));
        let charge = BufferCharge {
            capacity: 7 * MSS,
            readable: 0,
            out_of_order: 2 * MSS,
            reserved: r.bytes(),
            rcv_nxt: 0,
        };
        assert_eq!(charge.charged(), 6 * MSS);
        assert!(charge.admits(8 * MSS, 9 * MSS));
        assert!(!charge.admits(8 * MSS, 10 * MSS));
        r.truncate(3 * MSS);
        assert_eq!(r.bytes(), 3 * MSS);
        r.clear();
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn the_unit_at_rcv_nxt_is_admitted_over_a_full_buffer_only_when_nothing_is_unread() {
        // Out-of-order data and far-ahead reservations fill the buffer while the gap at
        // RCV.NXT = 5 000 was never requested: without the exception the connection stalls.
        let full = BufferCharge {
            capacity: 10 * MSS,
            readable: 0,
            out_of_order: 6 * MSS,
            reserved: 4 * MSS,
            rcv_nxt: 5 * MSS,
        };
        assert!(full.admits(5 * MSS, 6 * MSS), "the head unit");
        assert!(!full.admits(6 * MSS, 7 * MSS), "any other unit");
        // While the application has unread bytes, reading frees space: no exception.
        let unread = BufferCharge {
            readable: MSS,
            out_of_order: 5 * MSS,
            ..full
        };
        assert!(!unread.admits(5 * MSS, 6 * MSS));
    }

    #[test]
    fn huge_numbers_saturate() {
        let c = BufferCharge {
            capacity: 1 << 40,
            readable: u64::MAX,
            out_of_order: u64::MAX,
            reserved: u64::MAX,
            rcv_nxt: 0,
        };
        assert_eq!(c.charged(), u64::MAX);
        assert!(!c.admits(1, u64::MAX));
    }
}
