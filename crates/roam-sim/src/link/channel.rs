//! The sending side of one link direction: a drop-tail queue in front of a transmitter that
//! serialises packets at a fixed rate or drains them at a trace's delivery opportunities.

use std::collections::VecDeque;

use roam_proto::Time;

use super::trace::{TraceCursor, BYTES_PER_OPPORTUNITY};
use crate::scenario::QueueLimit;

/// A datagram waiting for (or in) the transmitter: its slot in the simulator's datagram table
/// (`crate::packets::Packets`) and its on-wire size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queued {
    pub pkt: u32,
    pub wire: u32,
}

/// How the transmitter drains the queue.
#[derive(Debug)]
enum Server {
    /// A packet occupies the transmitter for `wire · 8 / rate` seconds.
    Rate(u64),
    /// Each trace opportunity drains up to 1500 bytes (a packet may span opportunities).
    Trace(TraceCursor),
}

/// What became of a packet offered to the queue.
#[derive(Debug)]
pub(crate) enum Offer {
    /// The packet waits; if `wake` is set, the caller must call [`Channel::wake`] then.
    Queued { wake: Option<Time> },
    /// The queue was full (drop-tail); the packet is handed back.
    Dropped(Queued),
}

/// What a rate-driven transmitter did when woken ([`Channel::wake_rate`]).
#[derive(Debug)]
pub(crate) struct Woken {
    /// The packet put on the wire, and when it is fully sent.
    pub departed: Option<(Queued, Time)>,
    /// When to wake the transmitter next, if ever.
    pub next: Option<Time>,
}

/// Queue plus transmitter.
#[derive(Debug)]
pub(crate) struct Channel {
    queue: VecDeque<Queued>,
    queued_bytes: u64,
    limit: QueueLimit,
    busy_until: Time,
    wake_pending: bool,
    server: Server,
    head_sent: u64,
    cap_bits: f64,
    cap_since: Time,
    /// The last transmission time computed at the current rate, and for how many bytes: a
    /// direction's datagrams mostly have one or two sizes, so this spares most divisions.
    /// (0 bytes take 0 ns at any rate, which makes it right before the first packet and after
    /// a rate change.)
    last_wire: u32,
    last_tx_ns: u64,
}

/// Nanoseconds to serialise `wire` bytes at `rate` bits/s (rounded down).
fn tx_nanos(rate: u64, wire: u32) -> u64 {
    let rate = rate.max(1);
    // Any datagram (wire < 2.3 GB) fits in 64 bits, whose division is several times cheaper
    // than the 128-bit one; the quotient is the same.
    match u64::from(wire).checked_mul(8_000_000_000) {
        Some(bits_ns) => bits_ns / rate,
        // wire ≤ 2^32, so wire · 8e9 fits in u128 comfortably.
        None => {
            let ns = u128::from(wire) * 8_000_000_000 / u128::from(rate);
            u64::try_from(ns).unwrap_or(u64::MAX)
        }
    }
}

impl Channel {
    /// A fixed-rate transmitter.
    pub(crate) fn with_rate(rate: u64, limit: QueueLimit) -> Channel {
        Channel::new(Server::Rate(rate), limit)
    }

    /// A trace-driven transmitter.
    pub(crate) fn with_trace(cursor: TraceCursor, limit: QueueLimit) -> Channel {
        Channel::new(Server::Trace(cursor), limit)
    }

    fn new(server: Server, limit: QueueLimit) -> Channel {
        Channel {
            queue: VecDeque::new(),
            queued_bytes: 0,
            limit,
            busy_until: Time::ZERO,
            wake_pending: false,
            server,
            head_sent: 0,
            cap_bits: 0.0,
            cap_since: Time::ZERO,
            last_wire: 0,
            last_tx_ns: 0,
        }
    }

    /// [`tx_nanos`] at the current `rate` for `wire` bytes, from the one-entry cache if it
    /// holds that size.
    #[inline]
    fn tx_time(&mut self, rate: u64, wire: u32) -> u64 {
        if wire != self.last_wire {
            self.last_wire = wire;
            self.last_tx_ns = tx_nanos(rate, wire);
        }
        self.last_tx_ns
    }

    fn full(&self, wire: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.queue.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.queued_bytes + u64::from(wire) > b,
        }
    }

    /// A packet of `wire` bytes arrives at `now`: if the transmitter is rate-driven, idle and
    /// nothing waits, it takes the packet at once and this returns when it is fully sent;
    /// otherwise the packet must be [`Channel::offer`]ed to the queue. (Two steps, so that the
    /// common case does not move the packet in and out of the channel.)
    #[inline]
    pub(crate) fn start_if_idle(&mut self, now: Time, wire: u32) -> Option<Time> {
        let Server::Rate(rate) = self.server else {
            return None;
        };
        if !self.queue.is_empty() || self.busy_until > now {
            return None;
        }
        let done = now + std::time::Duration::from_nanos(self.tx_time(rate, wire));
        self.busy_until = done;
        Some(done)
    }

    /// Offers a packet at `now` to the queue ([`Channel::start_if_idle`] said no).
    pub(crate) fn offer(&mut self, now: Time, item: Queued) -> Offer {
        if self.full(item.wire) {
            return Offer::Dropped(item);
        }
        self.queued_bytes += u64::from(item.wire);
        self.queue.push_back(item);
        if self.wake_pending {
            return Offer::Queued { wake: None };
        }
        self.wake_pending = true;
        let wake = match &mut self.server {
            Server::Rate(_) => self.busy_until.max(now),
            Server::Trace(c) => {
                c.seek(now);
                c.next_time()
            }
        };
        Offer::Queued { wake: Some(wake) }
    }

    /// The transmitter may take the next packet(s) at `now`. Calls `depart(item, done)` for every
    /// packet put on the wire (fully sent at `done`) and returns when to wake it next, if ever.
    pub(crate) fn wake(&mut self, now: Time, mut depart: impl FnMut(Queued, Time)) -> Option<Time> {
        if let Some(woken) = self.wake_rate(now) {
            if let Some((item, done)) = woken.departed {
                depart(item, done);
            }
            return woken.next;
        }
        self.wake_pending = false;
        if let Server::Trace(c) = &mut self.server {
            c.seek(now);
            let mut budget = 0;
            while c.next_time() == now {
                budget += BYTES_PER_OPPORTUNITY;
                c.advance();
            }
            while budget > 0 {
                let Some(head) = self.queue.front() else {
                    break;
                };
                let left = u64::from(head.wire) - self.head_sent;
                if left > budget {
                    self.head_sent += budget;
                    break;
                }
                budget -= left;
                self.head_sent = 0;
                if let Some(item) = self.queue.pop_front() {
                    self.queued_bytes -= u64::from(item.wire);
                    depart(item, now);
                }
            }
        }
        if self.queue.is_empty() {
            return None;
        }
        self.wake_pending = true;
        Some(match &self.server {
            Server::Rate(_) => self.busy_until,
            Server::Trace(c) => c.next_time(),
        })
    }

    /// [`Channel::wake`] for a rate-driven transmitter, which puts at most one packet on the
    /// wire per wake-up (`None` if trace-driven): the packet that departed, if any, and when
    /// fully sent, and when to wake next, if ever.
    #[inline]
    pub(crate) fn wake_rate(&mut self, now: Time) -> Option<Woken> {
        let Server::Rate(rate) = self.server else {
            return None;
        };
        self.wake_pending = false;
        if self.busy_until > now {
            self.wake_pending = true;
            return Some(Woken {
                departed: None,
                next: Some(self.busy_until),
            });
        }
        let Some(item) = self.queue.pop_front() else {
            return Some(Woken {
                departed: None,
                next: None,
            });
        };
        self.queued_bytes -= u64::from(item.wire);
        let done = now + std::time::Duration::from_nanos(self.tx_time(rate, item.wire));
        self.busy_until = done;
        let next = if self.queue.is_empty() {
            None
        } else {
            self.wake_pending = true;
            Some(done)
        };
        Some(Woken {
            departed: Some((item, done)),
            next,
        })
    }

    fn capacity_between(&self, from: Time, to: Time) -> f64 {
        match &self.server {
            Server::Rate(rate) => *rate as f64 * (to - from).as_secs_f64(),
            Server::Trace(c) => {
                let t = c.trace();
                let n = t
                    .opportunities_until(to)
                    .saturating_sub(t.opportunities_until(from));
                (n * BYTES_PER_OPPORTUNITY * 8) as f64
            }
        }
    }

    /// Switches to a fixed rate from `now` on (packets already on the wire are unaffected).
    pub(crate) fn set_rate(&mut self, now: Time, rate: u64) {
        self.cap_bits += self.capacity_between(self.cap_since, now);
        self.cap_since = now;
        if matches!(self.server, Server::Trace(_)) {
            // A packet partly drained by the trace finishes at the new rate.
            self.head_sent = 0;
            self.busy_until = self.busy_until.max(now);
        }
        self.server = Server::Rate(rate);
        (self.last_wire, self.last_tx_ns) = (0, 0);
    }

    /// Current rate in bits/s (a trace's mean rate for trace-driven transmitters).
    pub(crate) fn rate_bps(&self) -> u64 {
        match &self.server {
            Server::Rate(r) => *r,
            Server::Trace(c) => c.trace().mean_rate_bps() as u64,
        }
    }

    /// Bits the transmitter could have sent from time zero to `end`.
    pub(crate) fn capacity_bits(&self, end: Time) -> f64 {
        self.cap_bits + self.capacity_between(self.cap_since, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(wire: u32) -> Queued {
        Queued { pkt: 0, wire }
    }

    #[test]
    fn transmission_time_is_exact_for_any_size() {
        assert_eq!(tx_nanos(10_000_000, 1040), 832_000);
        assert_eq!(tx_nanos(3, 1), 2_666_666_666);
        assert_eq!(tx_nanos(0, 1), 8_000_000_000);
        // Beyond 64 bits: the 128-bit path.
        assert_eq!(tx_nanos(8_000_000_000, u32::MAX), u64::from(u32::MAX));
        assert_eq!(tx_nanos(1, u32::MAX), u64::MAX);
    }

    /// The transmission time of a size seen before is the one computed at the current rate:
    /// a rate change is not answered from the cache.
    #[test]
    fn a_rate_change_changes_the_transmission_time_of_a_size_seen_before() {
        let mut ch = Channel::with_rate(8_000_000, QueueLimit::Packets(10));
        assert_eq!(
            ch.start_if_idle(Time::ZERO, 1000),
            Some(Time::from_millis(1))
        );
        let t = Time::from_millis(1);
        assert_eq!(ch.start_if_idle(t, 1000), Some(Time::from_millis(2)));
        let t = Time::from_millis(2);
        ch.set_rate(t, 4_000_000);
        assert_eq!(ch.start_if_idle(t, 1000), Some(Time::from_millis(4)));
        let t = Time::from_millis(4);
        assert_eq!(ch.start_if_idle(t, 500), Some(Time::from_millis(5)));
        assert!(matches!(ch.offer(t, item(1000)), Offer::Queued { .. }));
        let mut departed = Vec::new();
        ch.wake(Time::from_millis(5), |_, done| departed.push(done));
        assert_eq!(departed, vec![Time::from_millis(7)]);
    }

    #[test]
    fn idle_rate_transmitter_starts_at_once_and_queue_tail_drops() {
        let mut ch = Channel::with_rate(8_000_000, QueueLimit::Packets(1));
        let t0 = Time::ZERO;
        assert_eq!(ch.start_if_idle(t0, 1000), Some(Time::from_millis(1)));
        assert_eq!(ch.start_if_idle(t0, 1000), None, "busy");
        assert!(matches!(
            ch.offer(t0, item(1000)),
            Offer::Queued {
                wake: Some(t)
            } if t == Time::from_millis(1)
        ));
        assert!(matches!(ch.offer(t0, item(1000)), Offer::Dropped(_)));
        let mut departed = Vec::new();
        let next = ch.wake(Time::from_millis(1), |_, done| departed.push(done));
        assert_eq!(departed, vec![Time::from_millis(2)]);
        assert_eq!(next, None);
    }
}
