//! Head-of-line awareness in the R²CP receiver (ours; the decisions are `r2cp/hol.rs`, the
//! measurements `r2cp/estimate.rs`, the design `docs/R2CP.md`, "Head-of-line awareness"): what
//! each pipe's path looks like now, the delay budget that keeps a slow pipe from holding the
//! buffer's head, the blocking hole requested once more through a faster pipe, and silent
//! pipes taken for dead before their retransmission timeout.

use std::time::Duration;

use super::R2cpReceiver;
use crate::r2cp::hol::{self, PathView};
use crate::r2cp::slot::Slot;
use crate::r2cp::Scheme;
use crate::Time;

/// The most units requested once more in one scheduling round.
const MAX_RESCUE: u64 = 256;

/// RTT samples in a row above the base RTT that end a joining pipe's slow start (Linux
/// HyStart's `HYSTART_MIN_SAMPLES`).
const QUEUE_SAMPLES: u32 = 8;

/// The window (in units) below which slow start is never ended on delay (Linux HyStart's
/// `HYSTART_LOW_WINDOW`).
const LOW_WINDOW: u64 = 16;

impl R2cpReceiver {
    /// What the scheduler knows of slot `i`'s path.
    pub(super) fn view(&self, i: usize) -> PathView {
        Self::view_of(&self.slots[i], &self.config)
    }

    fn view_of(s: &Slot, config: &crate::rcp::RcpConfig) -> PathView {
        let rtt = s.pipe.rtt();
        let srtt = s
            .rtt_estimate()
            .unwrap_or(Duration::from_millis(config.initial_rto_ms));
        let min_rtt = if rtt.min_rtt() == Duration::MAX {
            srtt
        } else {
            rtt.min_rtt()
        };
        PathView {
            srtt,
            min_rtt,
            rttvar4: rtt.timeout_estimate().saturating_sub(srtt),
            rate: s.est.rate(),
            outstanding: s.pipe.in_flight(),
        }
    }

    /// When a request sent now through slot `i` is expected to bring its data.
    pub(super) fn due(&self, now: Time, i: usize) -> Time {
        now.saturating_add(self.view(i).arrival_delay())
    }

    /// Whether head-of-line awareness applies: rank scheduling (R²CP-s and APPS are the
    /// paper's baselines and stay as published) with at least two usable pipes (one of them
    /// may be silent or timed out: it may come back at any moment), and no token policy (a
    /// policy's tokens are the user's budget: redundant requests would spend it — measured,
    /// the 720 kb/s aggregate of Fig. 11(d) fell to about 590 kb/s — and the policy already
    /// decides which pipe carries what, §4.4.3).
    pub(super) fn hol_applies(&self) -> bool {
        self.scheme == Scheme::Rank
            && self.policy.is_none()
            && self
                .slots
                .iter()
                .filter(|s| Self::usable(s))
                .nth(1)
                .is_some()
    }

    /// Slot `i`'s delay budget of the moment (`hol::delay_budget`), if it applies: half the
    /// receive buffer at the summed peak delivery rates of the *other* usable pipes (what they
    /// bring while a unit of `i` is on its way lands in the buffer above it; a fast path that
    /// slowed for a while, or fell silent, may come back within what a slow pipe has queued).
    fn budget(&self, i: usize) -> Option<Duration> {
        if !self.hol_applies() {
            return None;
        }
        let others: u64 = (0..self.slots.len())
            .filter(|&j| j != i && Self::usable(&self.slots[j]))
            .filter_map(|j| self.slots[j].est.peak_rate())
            .fold(0u64, u64::saturating_add);
        (others > 0).then(|| hol::delay_budget(self.config.recv_buffer, others))
    }

    /// The window slot `i` will fill, for the rank of the other pipes' requests
    /// (`docs/R2CP.md`, "Scheduling by rank"): its congestion window, or less where the delay
    /// budget holds it below that — about the budget's worth at its measured rate, plus the
    /// unit admitted while under it (`hol::budget_window`). A pipe the budget keeps at one
    /// unit fetches one unit per round trip, however large its window has grown: ranking as
    /// if it fetched a window per round trip would leave it the lowest units in a long run
    /// and hold the buffer's head (measured over real sockets, an 8 Mb/s path with a queue of
    /// its own beside a 0.2 Mb/s one: 5.5 Mb/s for 7.7 at best).
    pub(super) fn window_in_use(&self, i: usize) -> u64 {
        let cwnd = self.slots[i].pipe.cwnd();
        let Some(budget) = self.budget(i) else {
            return cwnd;
        };
        let v = self.view(i);
        v.rate.filter(|&r| r > 0).map_or(cwnd, |rate| {
            cwnd.min(hol::budget_window(&v, budget, rate, self.mss))
        })
    }

    /// Ends the slow start of a pipe that joined a running connection on a standing queue
    /// (ours, with the delay test of Linux's HyStart, Ha and Rhee, Computer Networks 2011):
    /// [`QUEUE_SAMPLES`] RTT samples in a row above the pipe's base RTT by an eighth of it
    /// (4-16 ms), with the window at [`LOW_WINDOW`] units or more. A pipe made while the
    /// connection is delivering (make-before-break, a new interface, a pipe reopened after a
    /// failure) takes over data the application is waiting for: a slow-start overshoot loses
    /// a run of units at once, their re-requests wait behind the full queue, and every byte
    /// above them waits in the buffer — a pipe made on a 4 Mb/s, 62 ms path while the old one
    /// drained overshot its 50-packet queue and in-order delivery stopped for 177 ms. Pipes
    /// that open with the connection keep the paper's slow start: the same test there ended
    /// slow start long before long paths were full (a 2 Mb/s, 800 ms pipe then grows one
    /// segment per 800 ms; 9.12 -> 8.06 Mb/s beside an 8 Mb/s one). RFC 9406's HyStart++
    /// compares each round with the one before and misses a queue that grows while the rank
    /// scheduler holds the pipe below its window.
    pub(super) fn exit_slow_start_on_delay(slot: &mut Slot, rtt: Option<Duration>, mss: u64) {
        let base = slot.pipe.rtt().min_rtt();
        let (Some(rtt), true) = (rtt, slot.joined) else {
            return;
        };
        if !slot.pipe.in_slow_start() || base == Duration::MAX {
            slot.queue_samples = 0;
            return;
        }
        let thresh = (base / 8).clamp(Duration::from_millis(4), Duration::from_millis(16));
        if rtt > base + thresh {
            slot.queue_samples += 1;
        } else {
            slot.queue_samples = 0;
        }
        if slot.queue_samples >= QUEUE_SAMPLES && slot.pipe.cwnd() >= LOW_WINDOW.saturating_mul(mss)
        {
            slot.pipe.end_slow_start();
            slot.queue_samples = 0;
        }
    }

    /// Whether slot `i` may take a new unit within its delay budget.
    pub(super) fn within_budget(&self, i: usize) -> bool {
        self.budget(i).is_none_or(|b| hol::admits(&self.view(i), b))
    }

    /// When the unit of slot `i` at local `local` is expected: when it was due, later if the
    /// pipe now needs longer to deliver what was requested before it (at its current rate),
    /// later still if it is overdue (by d: no sooner than d from now), never if the pipe is
    /// silent.
    fn expected(&self, now: Time, i: usize, local: u64) -> Time {
        let s = &self.slots[i];
        if s.silent {
            return Time::MAX;
        }
        let Some(due) = s.est.due(local) else {
            return Time::MAX;
        };
        if due < now {
            return now.saturating_add(now.saturating_since(due));
        }
        let ahead = s
            .pipe
            .outstanding()
            .next()
            .map_or(0, |(first, _)| local.saturating_sub(first));
        let queued = s
            .est
            .rate()
            .map_or(Duration::ZERO, |rate| hol::drain_time(ahead, rate));
        due.max(now.saturating_add(queued))
    }

    /// The blocking holes: the unit at RCV.NXT, and the units above it that a faster pipe could
    /// bring before it arrives, each outstanding on a pipe that would bring it later than
    /// another pipe with room, are requested once more through the pipe that brings them
    /// first (`hol::hole_rescue`); each range at most once while both requests are out
    /// (`rescued`). Nothing happens while the head is on time.
    pub(super) fn rescue_head(&mut self, now: Time) {
        if !self.hol_applies() {
            return;
        }
        let head = self.buf.rcv_nxt();
        self.rescued.remove(0, head);
        if head >= self.range_end {
            return;
        }
        // How far the blocking reaches: what the fastest other pipe could bring before the
        // head's data arrives (at most MAX_RESCUE units a round).
        let Some((_, i, local)) = self.next_held(head).filter(|&(g, ..)| g == head) else {
            return;
        };
        let head_due = self.expected(now, i, local);
        let reach = (0..self.slots.len())
            .filter(|&j| j != i && self.takes_units(j))
            .filter_map(|j| self.slots[j].est.rate())
            .max()
            .map_or(0, |rate| {
                hol::bytes_in(head_due.saturating_since(now), rate)
            });
        let horizon = head.saturating_add(reach.min(MAX_RESCUE * self.mss).max(1));
        let block_at = self.buffer_full_at(now);
        let mut offset = head;
        while let Some((gs, i, local)) = self.next_held(offset).filter(|&(g, ..)| g < horizon) {
            if self.buf.has(gs, gs + 1) {
                offset = gs + 1;
                continue;
            }
            let Some((_, ge)) = self.slots[i].binding.global(local) else {
                break;
            };
            offset = ge;
            let holders = self
                .slots
                .iter()
                .filter(|s| s.binding.local(gs).is_some())
                .count();
            // Once per range while its second request is outstanding; again only if that one
            // was lost (or moved) and one pipe alone still brings it.
            if self.rescued.contains(gs, gs + 1) && holders > 1 {
                continue;
            }
            let due = self.expected(now, i, local);
            // A hole that arrives before the buffer would fill costs nothing: the pipes keep
            // taking new data meanwhile (measured: rescuing every late hole between two LTE
            // traces of similar rate cost 7 % of the ideal in duplicates).
            if due <= block_at {
                continue;
            }
            let len = ge - gs;
            // The pipes that could bring it (not already holding it), without collecting them:
            // this runs every scheduling round.
            let can = |j: usize| {
                self.slots[j].binding.local(gs).is_none()
                    && self.takes_units(j)
                    && self.slots[j].pipe.has_room(len)
                    && !self.secondary_waits(j, len)
            };
            if !(0..self.slots.len()).any(can) {
                break;
            }
            let candidates = (0..self.slots.len())
                .filter(|&j| can(j))
                .map(|j| (j, self.view(j)));
            let Some(t) = hol::hole_rescue(now, due, candidates) else {
                continue;
            };
            if !self.take_tokens(now, t, len) {
                return;
            }
            self.rescued.insert(gs, ge);
            self.stats.bytes_redundant += len;
            self.bind(now, t, gs, ge);
        }
    }

    /// When the receive buffer would be full if no hole were filled: its free space taken at
    /// the summed delivery rates of the pipes taking units (now if it is full, or nothing is
    /// measured yet). From then on a missing unit stops every pipe.
    fn buffer_full_at(&self, now: Time) -> Time {
        let rate = (0..self.slots.len())
            .filter(|&j| self.takes_units(j))
            .filter_map(|j| self.slots[j].est.rate())
            .fold(0u64, u64::saturating_add);
        if rate == 0 {
            return now;
        }
        let room = self
            .config
            .recv_buffer
            .saturating_sub(self.charge().charged());
        now.saturating_add(hol::drain_time(room, rate))
    }

    /// The outstanding unit (on any pipe) with the lowest global start at or after `offset`:
    /// (global start, slot, local start).
    fn next_held(&self, offset: u64) -> Option<(u64, usize, u64)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.binding.next_at_or_after(offset).map(|(g, l)| (g, i, l)))
            .min_by_key(|&(g, i, _)| (g, i))
    }

    /// Where a hole of slot `i` (or a reassigned range: `i` out of range) goes under
    /// head-of-line awareness: to the pipe whose data would arrive first — taking units, within
    /// its delay budget, and counting, for a pipe without room in its window, the wait for its
    /// next arrival to make room (`hol::PathView::room_wait`). `None` when that pipe has no
    /// room now: the hole waits for it rather than go to a pipe that would bring it later (the
    /// pipe that lost it wins ties).
    pub(super) fn earliest_arrival(&self, i: usize, len: u64) -> Option<usize> {
        let mut best: Option<(Duration, bool, usize)> = None;
        for j in 0..self.slots.len() {
            if !self.takes_units(j) || self.secondary_waits(j, len) || !self.within_budget(j) {
                continue;
            }
            let v = self.view(j);
            let room = self.slots[j].pipe.has_room(len);
            let arrival = v.arrival_delay()
                + if room {
                    Duration::ZERO
                } else {
                    v.room_wait(self.mss)
                };
            let better = match best {
                None => true,
                Some((b, _, bj)) => arrival < b || (arrival == b && j == i && bj != i),
            };
            if better {
                best = Some((arrival, room, j));
            }
        }
        best.filter(|&(_, room, _)| room).map(|(_, _, j)| j)
    }

    /// Marks pipes silent for longer than their silence limit (`hol::PathView::silence_limit`)
    /// while they have units outstanding: they take no units until they deliver again, and
    /// what they have outstanding and still missing is requested through the other pipes
    /// (once per range; the silent pipe keeps its binding, so whichever copy arrives first
    /// fills the hole).
    pub(super) fn detect_silence(&mut self, now: Time) {
        if !self.hol_applies() {
            return;
        }
        for i in 0..self.slots.len() {
            if self.slots[i].silent || self.slots[i].binding.is_empty() {
                continue;
            }
            let Some(at) = self.silent_at(i) else {
                continue;
            };
            if now < at {
                continue;
            }
            self.slots[i].silent = true;
            self.stats.silences += 1;
            let units: Vec<(u64, u64)> = self.slots[i].binding.globals().collect();
            for (s, e) in units {
                if !self.buf.has(s, e) && s < self.range_end && !self.rescued.contains(s, e) {
                    self.rescued.insert(s, e);
                    self.reassign.insert(s, e);
                    self.stats.bytes_redundant += e - s;
                }
            }
        }
    }

    /// When slot `i` becomes silent if nothing arrives before: its last sign of life plus its
    /// silence limit (`None` without a measured rate or without outstanding units).
    pub(super) fn silent_at(&self, i: usize) -> Option<Time> {
        let s = &self.slots[i];
        if s.silent || s.binding.is_empty() || !self.hol_applies() {
            return None;
        }
        let limit = self.view(i).silence_limit(self.mss)?;
        Some(s.est.last_heard()?.saturating_add(limit))
    }
}
