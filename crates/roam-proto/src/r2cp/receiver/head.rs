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
    /// may be silent or timed out: it may come back at any moment).
    pub(super) fn hol_applies(&self) -> bool {
        self.scheme == Scheme::Rank
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

    /// Whether slot `i` may take a new unit within its delay budget.
    pub(super) fn within_budget(&self, i: usize) -> bool {
        self.budget(i).is_none_or(|b| hol::admits(&self.view(i), b))
    }

    /// The blocking hole: the unit at RCV.NXT, outstanding on a pipe that would bring it later
    /// than another pipe with room, is requested once more through the pipe that brings it
    /// first (`hol::hole_rescue`); each range at most once (`rescued`).
    pub(super) fn rescue_head(&mut self, now: Time) {
        if !self.hol_applies() {
            return;
        }
        let head = self.buf.rcv_nxt();
        self.rescued.remove(0, head);
        if head >= self.range_end {
            return;
        }
        let mut holders = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.binding.local(head).map(|l| (i, l)));
        let Some((i, local)) = holders.next() else {
            return;
        };
        // Once per range while its second request is outstanding; again only if that one was
        // lost (or moved) and the first pipe is the only one still bringing it.
        if self.rescued.contains(head, head + 1) && holders.next().is_some() {
            return;
        }
        let Some((gs, ge)) = self.slots[i].binding.global(local) else {
            return;
        };
        let due = match self.slots[i].est.due(local) {
            _ if self.slots[i].silent => Time::MAX,
            // Overdue by d: expected no sooner than d from now (the longer a unit is late, the
            // later it is expected).
            Some(due) if due < now => now.saturating_add(now.saturating_since(due)),
            Some(due) => due,
            None => Time::MAX,
        };
        let len = ge - gs;
        let candidates: Vec<(usize, PathView)> = (0..self.slots.len())
            .filter(|&j| {
                j != i
                    && self.takes_units(j)
                    && self.slots[j].pipe.has_room(len)
                    && !self.secondary_waits(j, len)
            })
            .map(|j| (j, self.view(j)))
            .collect();
        let Some(t) = hol::hole_rescue(now, due, candidates) else {
            return;
        };
        if !self.take_tokens(now, t, len) {
            return;
        }
        self.rescued.insert(gs, ge);
        self.stats.bytes_redundant += len;
        self.bind(now, t, gs, ge);
    }

    /// Where a hole of slot `i` (or a reassigned range: `i` out of range) goes under
    /// head-of-line awareness: to the pipe whose data would arrive first — taking units, within
    /// its delay budget, and counting, for a pipe without room in its window, the wait for its
    /// next arrival to make room (`hol::PathView::room_wait`). `None` when that pipe has no room now: the hole waits for it
    /// rather than go to a pipe that would bring it later (the pipe that lost it wins ties).
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
