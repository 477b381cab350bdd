//! The scheduler of the R²CP receiver (rcp-r2cp.txt §4.1.4, §4.3.1): which global range each
//! pipe request carries — holes first (to the pipe with room and the earliest arrival), then
//! reassigned ranges, then new data by rank — within the receive buffer's charge (§3.3.4) and
//! an optional token-bucket policy (§4.4.3). Design: `docs/R2CP.md`.

use std::time::Duration;

use super::R2cpReceiver;
use crate::r2cp::flow::BufferCharge;
use crate::r2cp::rank::{skip_bytes, PipeRate};
use crate::r2cp::slot::{PipeState, Slot};
use crate::r2cp::{PipeRole, Scheme};
use crate::Time;

impl R2cpReceiver {
    /// Estimated request-to-data time of a slot, if known.
    fn rate(s: &Slot) -> Option<PipeRate> {
        s.rtt_estimate().map(|srtt| PipeRate {
            srtt,
            cwnd: s.pipe.cwnd(),
        })
    }

    /// A slot may get new bindings.
    pub(super) fn usable(s: &Slot) -> bool {
        s.state == PipeState::Established && !s.draining
    }

    /// A pipe in timeout backoff: its RTO fired and it has not delivered since (a delivery's
    /// RTT sample ends the backoff).
    pub(super) fn timed_out(s: &Slot) -> bool {
        s.pipe.rtt().backoff_count() > 0
    }

    /// A slot may get reassigned or new units: usable and not in timeout backoff, unless no
    /// pipe is out of backoff (then every usable pipe may; as single-path RCP). §4.1.4: "any
    /// loss detected by individual RCP pipes is reported to R²CP such that the corresponding
    /// request is reassigned to another pipe that has space in its window"; a pipe that lost
    /// everything to a timeout has no space: it only probes until it delivers again.
    ///
    /// A pipe taken for dead after a silence (`head.rs`) is treated alike until it delivers.
    pub(super) fn takes_units(&self, j: usize) -> bool {
        let s = &self.slots[j];
        let out = |s: &Slot| Self::timed_out(s) || s.silent;
        Self::usable(s) && (!out(s) || !self.slots.iter().any(|o| Self::usable(o) && !out(o)))
    }

    /// Slot indices ordered by estimated arrival (smallest RTT first; unknown last).
    fn by_arrival(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.slots.len()).collect();
        idx.sort_by_key(|&i| (self.slots[i].rtt_estimate().unwrap_or(Duration::MAX), i));
        idx
    }

    /// Whether slot `i` is a secondary pipe that must leave the tokens for `len` bytes to a
    /// primary pipe that has room now (§4.4.3: "the secondary pipe (RCP-2) is allowed to
    /// consume only tokens not used by the first pipe (RCP-1)").
    pub(super) fn secondary_waits(&self, i: usize, len: u64) -> bool {
        self.policy.is_some()
            && self.slots[i].spec.role == PipeRole::Secondary
            && self.slots.iter().enumerate().any(|(j, s)| {
                s.spec.role == PipeRole::Primary && self.takes_units(j) && s.pipe.has_room(len)
            })
    }

    /// Takes tokens for `len` bytes bound to slot `i`, if the policy allows (§4.4.3).
    pub(super) fn take_tokens(&mut self, now: Time, i: usize, len: u64) -> bool {
        if self.secondary_waits(i, len) {
            return false;
        }
        let Some(bucket) = self.policy.as_mut() else {
            return true;
        };
        if bucket.take(now, len) {
            true
        } else {
            self.token_blocked = true;
            false
        }
    }

    /// What the receive buffer holds and owes now (§3.3.4).
    pub(super) fn charge(&self) -> BufferCharge {
        BufferCharge {
            capacity: self.config.recv_buffer,
            readable: self.buf.readable() as u64,
            out_of_order: self.buf.out_of_order_bytes() as u64,
            reserved: self.reserved.bytes(),
            rcv_nxt: self.buf.rcv_nxt(),
        }
    }

    /// Whether a new unit `[start, end)` for slot `i` fits the receive buffer: §3.3.4's charge
    /// per requested segment ([`BufferCharge::admits`]); for APPS, also each connection's own
    /// buffer share, as the span from the read point over its stripes (with a fixed set of
    /// connections the shares sum to the buffer, so only the share binds; the charge keeps
    /// the bound when connections come and go and the stripes are dealt anew).
    fn fits_buffer(&self, i: usize, start: u64, end: u64) -> bool {
        let read = self.buf.read_point();
        if !self.charge().admits(start, end) {
            return false;
        }
        match self.scheme {
            Scheme::Apps { stripe } => {
                let n = self.apps_members().len().max(1) as u64;
                let Some(k) = self.apps_index(i) else {
                    return false;
                };
                let own = |x: u64| stripe_bytes_below(x, self.range_start, stripe, n, k);
                own(end).saturating_sub(own(read)) <= self.config.recv_buffer / n
            }
            Scheme::Rank | Scheme::Fcfs => true,
        }
    }

    /// The APPS connections: every established, non-draining pipe, in creation order.
    fn apps_members(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| Self::usable(&self.slots[i]))
            .collect()
    }

    fn apps_index(&self, i: usize) -> Option<u64> {
        self.apps_members()
            .iter()
            .position(|&j| j == i)
            .map(|k| k as u64)
    }

    /// Binds `[s, e)` to slot `i` as a new local unit and queues its pull.
    ///
    /// A range the slot already has outstanding (a unit requested a second time while its
    /// first request is out, `head.rs`, coming back to the same pipe) is not bound twice: the
    /// unit it has stands for it (a global start maps to one local unit per pipe).
    pub(super) fn bind(&mut self, now: Time, i: usize, s: u64, e: u64) {
        if self.slots[i].binding.local(s).is_some() {
            return;
        }
        let due = self.due(now, i);
        let slot = &mut self.slots[i];
        let local = slot.binding.bind(s, e);
        slot.pipe.on_requested(now, local, local + (e - s));
        slot.est.on_request(now, local, due);
        slot.pull(s, e);
    }

    /// The scheduler (§4.1.4, §4.3.1): holes first, then new data by rank.
    pub(super) fn make_requests(&mut self, now: Time) {
        if self.eof {
            return;
        }
        self.token_blocked = false;
        self.detect_silence(now);
        self.schedule_holes(now);
        if self.token_blocked {
            return;
        }
        self.rescue_head(now);
        if self.token_blocked {
            return;
        }
        self.schedule_reassigned(now);
        if self.token_blocked {
            return;
        }
        self.schedule_new(now);
    }

    /// Every hole a pipe declared goes to the pipe with room and the earliest arrival (the
    /// pipe that lost it on a tie; under APPS, always that pipe). The same pipe re-requests
    /// the same local unit, as single-path RCP; another pipe binds a new one (§4.1.4).
    fn schedule_holes(&mut self, now: Time) {
        for i in self.by_arrival() {
            if self.release_timed_out(now, i) {
                continue;
            }
            while let Some((ls, le)) = self.slots[i].pipe.next_lost() {
                let Some((gs, ge)) = self.slots[i].binding.global(ls) else {
                    // Cannot happen (every unit is bound); settle it so the pipe moves on.
                    self.slots[i].pipe.forget(now, ls);
                    continue;
                };
                if self.buf.has(gs, ge) || gs >= self.range_end {
                    // It arrived after all (through another pipe), or lies beyond the object a
                    // sender reported since: settle without a request.
                    self.slots[i].forget_unit(now, ls);
                    continue;
                }
                let target = self.hole_target(i, le - ls);
                let Some(t) = target else { break };
                if !self.take_tokens(now, t, ge - gs) {
                    return;
                }
                self.stats.bytes_rebound += ge - gs;
                if t == i {
                    let due = self.due(now, i);
                    self.slots[i].pipe.on_requested(now, ls, le);
                    self.slots[i].est.on_request(now, ls, due);
                    self.slots[i].pull(gs, ge);
                } else {
                    // The losing pipe forgets the unit (its loss was already answered by its
                    // controller); the range is bound afresh on the target pipe.
                    self.slots[i].forget_unit(now, ls);
                    self.stats.reassigned += 1;
                    self.bind(now, t, gs, ge);
                }
            }
        }
    }

    /// The holes of a pipe in timeout backoff while another pipe takes units (§4.1.4): the pipe
    /// keeps one unit in flight, its RTO probe (RCP's retransmission after a timeout,
    /// §3.3.5 (iii)), whose range is requested through another pipe as well so that in-order
    /// delivery does not wait for the probe; every other lost unit is forgotten by the pipe
    /// and goes to the reassignment queue (other pipes, earliest arrival first). Returns false
    /// when the rule does not apply (then the pipe's holes go the usual way).
    fn release_timed_out(&mut self, now: Time, i: usize) -> bool {
        if matches!(self.scheme, Scheme::Apps { .. })
            || !Self::timed_out(&self.slots[i])
            || !(0..self.slots.len()).any(|j| j != i && self.takes_units(j))
        {
            self.slots[i].pipe.set_rto_cap(None);
            return false;
        }
        // Nothing rides on the probe (its range is requested elsewhere too): it repeats at the
        // RTO without backoff, so the pipe is back in use within about one RTO of its path
        // recovering instead of after the doubled timeouts of a path carrying alone.
        let unbacked = Duration::from_millis(self.config.min_rto_ms)
            .max(self.slots[i].pipe.rtt().timeout_estimate());
        self.slots[i].pipe.set_rto_cap(Some(unbacked));
        while let Some((ls, le)) = self.slots[i].pipe.next_lost() {
            let Some((gs, ge)) = self.slots[i].binding.global(ls) else {
                self.slots[i].pipe.forget(now, ls);
                continue;
            };
            // A range another pipe still has outstanding (it was requested a second time,
            // `head.rs`) is not requested a third time.
            let elsewhere = self
                .slots
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.binding.local(gs).is_some());
            let missing = !self.buf.has(gs, ge) && gs < self.range_end && !elsewhere;
            let slot = &mut self.slots[i];
            if slot.pipe.in_flight() == 0 && slot.state == PipeState::Established {
                // The probe (it is not charged to a policy: its bytes are requested again
                // through another pipe, which is).
                slot.pipe.on_requested(now, ls, le);
                slot.est.on_request(now, ls, Time::MAX);
                slot.pull(gs, ge);
            } else {
                slot.forget_unit(now, ls);
                self.stats.reassigned += 1;
            }
            if missing {
                self.reassign.insert(gs, ge);
            }
        }
        true
    }

    /// Where a hole of slot `i` goes: the pipe with room that takes units and has the smallest
    /// RTT, `i` itself on a tie (or when it is the only one with room).
    /// Under head-of-line awareness, the pipe that brings it first (`head.rs`).
    fn hole_target(&self, i: usize, len: u64) -> Option<usize> {
        if matches!(self.scheme, Scheme::Apps { .. }) {
            let s = &self.slots[i];
            return (s.state == PipeState::Established && s.pipe.has_room(len)).then_some(i);
        }
        if self.hol_applies() {
            return self.earliest_arrival(i, len);
        }
        let mut best: Option<(Duration, usize)> = None;
        for (j, s) in self.slots.iter().enumerate() {
            // A secondary that must leave the tokens to a primary with room is no target: the
            // primary is (else the hole would wait for the secondary forever while the
            // primary takes new data, and in-order delivery would stop).
            if !self.takes_units(j) || !s.pipe.has_room(len) || self.secondary_waits(j, len) {
                continue;
            }
            let rtt = s.rtt_estimate().unwrap_or(Duration::MAX);
            let better = match best {
                None => true,
                Some((b, bj)) => rtt < b || (rtt == b && j == i && bj != i),
            };
            if better {
                best = Some((rtt, j));
            }
        }
        best.map(|(_, j)| j)
    }

    /// Ranges whose pipe is gone go to pipes with room, earliest arrival first.
    fn schedule_reassigned(&mut self, now: Time) {
        while let Some((s, e)) = self.reassign.nth_unit(0, self.mss) {
            if self.buf.has(s, e) {
                self.reassign.remove(s, e);
                continue;
            }
            // Under head-of-line awareness the lowest missing range goes first, whether it
            // waits for reassignment or was never requested (a gap the rank left below the
            // reassigned ranges would otherwise wait for all of them).
            let hol = self.hol_applies();
            if hol && self.pending.first().is_some_and(|p| p < s) {
                return;
            }
            let target = if hol {
                self.earliest_arrival(usize::MAX, e - s)
            } else {
                self.by_arrival().into_iter().find(|&j| {
                    self.takes_units(j)
                        && self.slots[j].pipe.has_room(e - s)
                        && !self.secondary_waits(j, e - s)
                })
            };
            let Some(t) = target else {
                return;
            };
            if !self.take_tokens(now, t, e - s) {
                return;
            }
            self.reassign.remove(s, e);
            self.stats.bytes_rebound += e - s;
            self.bind(now, t, s, e);
        }
    }

    /// New data: each usable pipe with room gets its rank's unit, fastest pipes first, until
    /// no pipe can take more.
    fn schedule_new(&mut self, now: Time) {
        loop {
            let mut progressed = false;
            for i in self.by_arrival() {
                if self.pending.is_empty() {
                    return;
                }
                if !self.takes_units(i) || !self.slots[i].pipe.has_room(self.mss) {
                    continue;
                }
                let Some((us, ue)) = self.choose_new(i) else {
                    continue;
                };
                if ue > self.slots[i].wire.snd_wnd
                    || !self.fits_buffer(i, us, ue)
                    || !self.within_budget(i)
                {
                    continue;
                }
                // A secondary visited before a primary with room leaves the tokens to it; the
                // primary's turn comes later in this round.
                if self.secondary_waits(i, ue - us) {
                    continue;
                }
                if !self.take_tokens(now, i, ue - us) {
                    return;
                }
                self.pending.remove(us, ue);
                self.stats.bytes_bound_new += ue - us;
                // A dummy sk_buff for the requested segment (§3.3.4). Holes and reassigned
                // ranges bound again keep the reservation they have (minus what arrived).
                self.reserved.reserve(us, ue);
                self.bind(now, i, us, ue);
                progressed = true;
            }
            if !progressed {
                return;
            }
        }
    }

    /// The unit a new request through slot `i` should carry.
    fn choose_new(&self, i: usize) -> Option<(u64, u64)> {
        match self.scheme {
            Scheme::Fcfs => self.pending.nth_unit(0, self.mss),
            Scheme::Rank => {
                // §4.3.1: "the assignment should be made based on the time the corresponding
                // data will arrive, not the time the request is sent".
                let me = Self::rate(&self.slots[i]);
                let skip = match me {
                    Some(me) => {
                        let others: Vec<PipeRate> = self
                            .slots
                            .iter()
                            .enumerate()
                            // A secondary that leaves the tokens to a primary with room
                            // (§4.4.3) will not fetch the bytes the skip would leave it.
                            .filter(|&(j, _)| {
                                j != i && self.takes_units(j) && !self.secondary_waits(j, self.mss)
                            })
                            .filter_map(|(j, s)| {
                                Self::rate(s).map(|r| PipeRate {
                                    cwnd: self.window_in_use(j),
                                    ..r
                                })
                            })
                            .collect();
                        skip_bytes(me, &others, self.mss)
                    }
                    None => 0,
                };
                self.pending.nth_unit(skip, self.mss)
            }
            Scheme::Apps { stripe } => {
                let n = self.apps_members().len().max(1) as u64;
                let k = self.apps_index(i)?;
                for (s, e) in self.pending.iter() {
                    // The first byte at or after s in one of connection k's stripes.
                    let rel = s - self.range_start;
                    let idx = rel / stripe;
                    let first = if idx % n == k {
                        s
                    } else {
                        let next = idx + (k + n - idx % n) % n;
                        self.range_start.saturating_add(next.saturating_mul(stripe))
                    };
                    if first < e {
                        let stripe_end = self.range_start
                            + ((first - self.range_start) / stripe + 1).saturating_mul(stripe);
                        let end = e.min(stripe_end).min(first.saturating_add(self.mss));
                        return Some((first, end));
                    }
                }
                None
            }
        }
    }
}

/// Bytes of connection `k`'s stripes (stripes `k, k + n, …` of `stripe` bytes from `base`)
/// below offset `x`.
fn stripe_bytes_below(x: u64, base: u64, stripe: u64, n: u64, k: u64) -> u64 {
    let rel = x.saturating_sub(base);
    let full = rel / stripe;
    let part = rel % stripe;
    // Whole stripes below: indices 0..full; those ≡ k (mod n).
    let count = if full > k { (full - k).div_ceil(n) } else { 0 };
    let partial = if full % n == k { part } else { 0 };
    count.saturating_mul(stripe).saturating_add(partial)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripe_bytes_count_only_own_stripes() {
        // Stripes of 10 from 0, two connections: k = 0 owns [0,10), [20,30) …
        assert_eq!(stripe_bytes_below(0, 0, 10, 2, 0), 0);
        assert_eq!(stripe_bytes_below(5, 0, 10, 2, 0), 5);
        assert_eq!(stripe_bytes_below(15, 0, 10, 2, 0), 10);
        assert_eq!(stripe_bytes_below(25, 0, 10, 2, 0), 15);
        assert_eq!(stripe_bytes_below(15, 0, 10, 2, 1), 5);
        assert_eq!(stripe_bytes_below(40, 0, 10, 2, 1), 20);
    }
}
