//! One RCP receiver pipe: congestion control, RTT estimation and loss detection for the
//! requests sent over one path (rcp-r2cp.txt §3.3.3, §3.3.5).
//!
//! The pipe knows *requested units* (byte ranges of the object) and when their DATA arrives;
//! it does not hold data or decide what to request. A connection owns the reassembly buffer
//! and asks the pipe whether the window has room ([`ReceiverPipe::has_room`]), which lost units
//! to re-request ([`ReceiverPipe::next_lost`]), and reports every request
//! ([`ReceiverPipe::on_requested`]) and arrival ([`ReceiverPipe::on_arrival`]). R²CP will own
//! several pipes, one per (interface, server), and keep reliability per connection; nothing
//! here assumes there is only one.
//!
//! Rules implemented (after the RCP paper and its references [5,22]):
//! * the congestion window limits outstanding *requests*, and DATA arrivals drive the same
//!   controller a TCP sender uses (§3.3.3): in-order arrivals raise `on_delivered`, losses
//!   `on_loss`, the RTO `on_timeout`;
//! * **every** hole is detected by the same threshold: a unit is lost once `dup_thresh` units
//!   requested after it have arrived (§3.3.5 (i)). Request order, not sequence order, is
//!   counted, so a lost re-request is detected exactly like a first loss and never needs a
//!   timeout (§3.3.5 (ii));
//! * one window cut per window of data (RFC 6582's `recover` guard);
//! * **reordering** (ours; RCP assumes a path that keeps order, real ones do not always —
//!   Wi-Fi aggregation, cellular bearers, a user-space wire): a unit declared lost whose
//!   *original* request is then answered (it arrives before it was asked again, or its DATA
//!   echoes a request older than the re-request) was a spurious loss. The pipe then raises
//!   its threshold to the reordering it saw, as Linux raises `tp->reordering` (capped at
//!   [`MAX_REORDER_THRESH`]), undoes the window cut if that hole alone caused it (RFC 4015's
//!   response, Linux's undo), and from then on also declares a unit lost on time, as RACK
//!   does (RFC 8985 §6.2): once the base threshold of later units has arrived and it is a
//!   round trip plus a quarter of the base RTT old. On a path that never reorders, nothing
//!   of this ever runs, and the pipe is the paper's;
//! * a timeout marks everything outstanding lost but keeps the receive buffer (§3.3.5 (iii));
//! * with ELN, a hole the host reported as wireless corruption is re-requested without a
//!   congestion response, hole by hole (§3.4.2);
//! * [`ReceiverPipe::freeze`]/[`ReceiverPipe::thaw`] stop and resume the timers for power
//!   management (§3.4.4);
//! * with request pacing on (RCP-Rate, [`super::rate`]), requests leave at the controller's
//!   pacing rate: after a unit of `len` bytes the next may leave `len / rate` later, in
//!   bursts of BBR's send quantum (two units between 1.2 and 24 Mb/s, 1 ms worth above)
//!   ([`ReceiverPipe::has_room`] says no until then) and [`ReceiverPipe::poll_timeout`]
//!   reports that instant, so the host wakes the engine without knowing about pacing (the TCP
//!   sender's pacing deadline, `tcp/pacing.rs`, on the receiver's side). The pipe's clock is the
//!   latest instant it was given (a request, an arrival, a timer).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::cc::bbr::send_quantum;
use crate::cc::{CongestionController, Coupling, Delivered, LossCause, LossEvent};
use crate::linkinfo::LinkInfo;
use crate::rtt::RttEstimator;
use crate::Time;

/// One requested range awaiting its DATA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    end: u64,
    /// Request order (increases with every request, including re-requests).
    serial: u64,
    /// Units requested later than this one that have arrived since this request.
    later_arrivals: u32,
    /// Declared lost and not yet re-requested.
    lost: bool,
    /// The host reported this range corrupted on the wireless hop.
    corrupted: bool,
    /// Times this unit was re-requested.
    rerequests: u32,
    /// When it was last requested.
    requested_at: Time,
    /// Declared lost by later arrivals (not by a timeout), at this count of the pipe's
    /// arrivals: if its original request is answered after all, the loss was spurious.
    threshold_loss_at: Option<u64>,
}

/// The highest reordering threshold a pipe learns (units; Linux caps `tp->reordering` at
/// `tcp_max_reordering`, 300 segments; a receiver-driven pipe also has its timeout and,
/// under R²CP, other pipes, so a lower cap loses little).
pub const MAX_REORDER_THRESH: u32 = 64;

/// The widest reordering window, in quarters of the base RTT (RFC 8985 caps it at the SRTT,
/// which applies too).
pub const MAX_REO_MULT: u32 = 8;

/// The recovery episode in progress: what to restore if its loss turns out spurious.
#[derive(Debug, Clone, Copy)]
struct Episode {
    /// The hole that started it.
    hole: u64,
    /// Congestion holes declared in it.
    holes: u32,
    cwnd: u64,
    ssthresh: u64,
}

/// Counters of one pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipeStats {
    /// Units re-requested (the receiver-side "retransmissions").
    pub rerequests: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Holes treated as congestion losses.
    pub congestion_holes: u64,
    /// Holes treated as wireless (ELN) losses.
    pub wireless_holes: u64,
    /// Window reductions (recovery episodes entered).
    pub recoveries: u64,
    /// Units declared lost whose original request was answered after all (reordering).
    pub spurious_holes: u64,
    /// Window reductions undone because the one hole behind them was spurious.
    pub undone: u64,
}

/// What happened to the pipe's timers while it was frozen.
#[derive(Debug, Clone, Copy)]
struct Frozen {
    rto_left: Option<Duration>,
}

/// A receiver-side pipe. See the module docs.
#[derive(Debug)]
pub struct ReceiverPipe {
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    dup_thresh: u32,
    /// Later arrivals that declare a unit lost: `dup_thresh` until reordering is seen.
    reorder_thresh: u32,
    /// RACK's reordering window in quarters of the base RTT (RFC 8985 §6.2.4's
    /// `reo_wnd_mult`): one more after each spurious hole, at most [`MAX_REO_MULT`].
    reo_mult: u32,
    /// Arrivals of requested units so far.
    arrivals: u64,
    /// The recovery episode in progress.
    episode: Option<Episode>,
    eln: bool,
    max_window: u64,
    units: BTreeMap<u64, Unit>,
    /// The units not declared lost, by request serial (serial -> start): an arrival visits
    /// only the ones requested before it, not the whole window (§3.3.5 (i) below).
    live: BTreeMap<u64, u64>,
    lost: BTreeSet<u64>,
    next_serial: u64,
    /// Bytes of outstanding units not declared lost (the "pipe" of RFC 6675).
    in_flight: u64,
    highest_requested: u64,
    /// RFC 6582 `recover`: holes below it belong to an episode already answered.
    recover: Option<u64>,
    in_recovery: bool,
    rto_deadline: Option<Time>,
    /// Longest timer interval while set, whatever the backoff (see [`ReceiverPipe::set_rto_cap`]).
    rto_cap: Option<Duration>,
    frozen: Option<Frozen>,
    stats: PipeStats,
    /// Requests are paced at the controller's pacing rate (RCP-Rate).
    paced: bool,
    /// The latest instant the pipe was told (request, arrival, timer).
    clock: Time,
    /// With pacing, the earliest instant the next request may leave.
    next_request: Time,
    /// With pacing, how far ahead of the clock `next_request` may be while a request still
    /// leaves: the rest of a send quantum at the pacing rate.
    quantum_slack: Duration,
}

impl ReceiverPipe {
    /// A pipe running `cc`, starting at object offset `start`.
    pub fn new(
        cc: Box<dyn CongestionController>,
        rtt: RttEstimator,
        dup_thresh: u32,
        eln: bool,
        max_window: u64,
        start: u64,
    ) -> Self {
        ReceiverPipe {
            cc,
            rtt,
            dup_thresh: dup_thresh.max(1),
            reorder_thresh: dup_thresh.max(1),
            reo_mult: 1,
            arrivals: 0,
            episode: None,
            eln,
            max_window: if max_window == 0 {
                u64::MAX
            } else {
                max_window
            },
            units: BTreeMap::new(),
            live: BTreeMap::new(),
            lost: BTreeSet::new(),
            next_serial: 0,
            in_flight: 0,
            highest_requested: start,
            recover: None,
            in_recovery: false,
            rto_deadline: None,
            rto_cap: None,
            frozen: None,
            stats: PipeStats::default(),
            paced: false,
            clock: Time::ZERO,
            next_request: Time::ZERO,
            quantum_slack: Duration::ZERO,
        }
    }

    /// Turns request pacing on or off (off by default; `pipe_for` turns it on for RCP-Rate).
    /// With it on, arrivals are reported to the controller as each unit's own length, counted
    /// once (`rate.rs`, "Delivery counting").
    pub fn set_request_pacing(&mut self, on: bool) {
        self.paced = on;
    }

    /// True if requests are paced.
    pub fn paces_requests(&self) -> bool {
        self.paced
    }

    /// With pacing, the instant the next request may leave, if it is still ahead of the pipe's
    /// clock: its slot less the rest of a send quantum, so requests leave in bursts of one
    /// quantum (BBR draft §4.2.2, as the TCP sender's `tcp/pacing.rs`) and a host whose
    /// wake-ups are coarser than a unit's time still reaches the rate.
    fn pacing_wait(&self) -> Option<Time> {
        let may_leave = Time::from_nanos(
            self.next_request
                .as_nanos()
                .saturating_sub(self.quantum_slack.as_nanos() as u64),
        );
        (self.paced && may_leave > self.clock).then_some(may_leave)
    }

    /// Caps the interval of the timers armed from now on (`None`: the RTO with its backoff, as
    /// RFC 6298). R²CP sets it for a pipe in timeout backoff whose units other pipes carry: its
    /// only traffic is one probe per timeout, which then need not back off (docs/R2CP.md).
    /// The backoff count still grows, so the retry limit still ends a dead pipe.
    pub fn set_rto_cap(&mut self, cap: Option<Duration>) {
        self.rto_cap = cap;
    }

    /// The interval of a timer armed now.
    fn timer_interval(&self) -> Duration {
        let rto = self.rtt.rto();
        self.rto_cap.map_or(rto, |c| rto.min(c))
    }

    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.cc.window().min(self.max_window)
    }

    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The controller's name.
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    /// Outstanding bytes not declared lost.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Counters.
    pub fn stats(&self) -> PipeStats {
        self.stats
    }

    /// True while a window reduction is being recovered from.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// True while the controller's window is below its slow-start threshold.
    pub fn in_slow_start(&self) -> bool {
        self.cc.window() < self.cc.ssthresh()
    }

    /// Ends slow start where the window stands: the threshold becomes the window, so the
    /// controller goes on in congestion avoidance (a controller without a threshold ignores
    /// it).
    pub fn end_slow_start(&mut self) {
        let w = self.cc.window();
        if w < self.cc.ssthresh() {
            self.cc.set_window(w, Some(w));
        }
    }

    /// Couples the controller's increase with the other pipes of an R²CP connection (RFC 6356
    /// LIA, `cc::Coupling`), or uncouples it.
    pub fn set_coupling(&mut self, coupling: Option<Coupling>) {
        self.cc.set_coupling(coupling);
    }

    /// True if the window has room for `len` more requested bytes (always for the first).
    pub fn has_room(&self, len: u64) -> bool {
        self.frozen.is_none()
            && self.pacing_wait().is_none()
            && (self.in_flight == 0 || self.in_flight.saturating_add(len) <= self.cwnd())
    }

    /// The lowest unit declared lost and not yet re-requested.
    pub fn next_lost(&self) -> Option<(u64, u64)> {
        let start = *self.lost.iter().next()?;
        self.units.get(&start).map(|u| (start, u.end))
    }

    /// Every outstanding unit (`start`, `end`), in offset order: the holes the pipe waits for.
    pub fn outstanding(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.units.iter().map(|(&s, u)| (s, u.end))
    }

    /// True if `start` is an outstanding unit.
    pub fn is_outstanding(&self, start: u64) -> bool {
        self.units.contains_key(&start)
    }

    /// Number of units awaiting DATA.
    pub fn outstanding_units(&self) -> usize {
        self.units.len()
    }

    /// Highest offset ever requested through this pipe.
    pub fn highest_requested(&self) -> u64 {
        self.highest_requested
    }

    /// Records that `[start, end)` was just requested (a new unit, or a lost one re-requested).
    pub fn on_requested(&mut self, now: Time, start: u64, end: u64) {
        let serial = self.next_serial;
        self.next_serial += 1;
        let len = end.saturating_sub(start);
        self.clock = self.clock.max(now);
        if self.paced {
            self.pace(now, len);
        }
        match self.units.get_mut(&start) {
            Some(u) => {
                if u.lost {
                    self.lost.remove(&start);
                    self.in_flight += len;
                } else {
                    self.live.remove(&u.serial);
                }
                self.live.insert(serial, start);
                u.lost = false;
                u.serial = serial;
                u.later_arrivals = 0;
                u.corrupted = false;
                u.rerequests += 1;
                u.requested_at = now;
                self.stats.rerequests += 1;
            }
            None => {
                self.units.insert(
                    start,
                    Unit {
                        end,
                        serial,
                        later_arrivals: 0,
                        lost: false,
                        corrupted: false,
                        rerequests: 0,
                        requested_at: now,
                        threshold_loss_at: None,
                    },
                );
                self.live.insert(serial, start);
                self.in_flight += len;
            }
        }
        self.highest_requested = self.highest_requested.max(end);
        if self.rto_deadline.is_none() && self.frozen.is_none() {
            self.rto_deadline = Some(now + self.timer_interval());
        }
    }

    /// The host reports that a packet carrying `[start, ..)` was corrupted on the local
    /// wireless hop (per-hole ELN input, §3.4.2).
    pub fn note_corrupted(&mut self, start: u64) {
        if let Some(u) = self.units.get_mut(&start) {
            u.corrupted = true;
        }
    }

    /// Marks every outstanding unit that starts in `[from, to)` corrupted: the holes a loss
    /// estimator (`estimated_facts.rs`) judged wireless, as the host's reports would mark them.
    pub fn note_corrupted_in(&mut self, from: u64, to: u64) {
        if from >= to {
            return;
        }
        for u in self.units.range_mut(from..to).map(|(_, u)| u) {
            u.corrupted = true;
        }
    }

    /// DATA for the unit starting at `start` arrived. `rtt` is the sample it carries (from the
    /// echoed request timestamp). Returns false if no such unit was outstanding (a duplicate).
    pub fn on_arrival(&mut self, now: Time, start: u64, rtt: Option<Duration>) -> bool {
        self.settle(now, start, rtt, true)
    }

    /// Settles the unit at `start` without its DATA having come through this pipe (it arrived
    /// through another, or lies beyond the object, or the unit moves to another pipe): as an
    /// arrival for the units requested before it, but no evidence of reordering.
    pub fn forget(&mut self, now: Time, start: u64) -> bool {
        self.settle(now, start, None, false)
    }

    fn settle(&mut self, now: Time, start: u64, rtt: Option<Duration>, arrived: bool) -> bool {
        self.clock = self.clock.max(now);
        let cum_before = self.cumulative_point();
        let Some(unit) = self.units.remove(&start) else {
            return false;
        };
        let len = unit.end.saturating_sub(start);
        self.arrivals += 1;
        if unit.lost {
            self.lost.remove(&start);
        } else {
            self.live.remove(&unit.serial);
            self.in_flight = self.in_flight.saturating_sub(len);
        }
        if let Some(sample) = rtt {
            self.rtt.on_sample(sample);
            self.cc.on_rtt_sample(now, sample, self.rtt.min_rtt());
        }
        if let Some(at) = unit.threshold_loss_at.filter(|_| arrived) {
            if Self::answers_original(now, &unit, rtt) {
                self.on_spurious_hole(start, at);
            }
        }
        // §3.3.5 (i): every unit requested before this one gains one out-of-order arrival.
        // After reordering was seen, also on time (RACK, RFC 8985 §6.2: a round trip plus a
        // reordering window after its request; the window is a quarter of the base RTT, one
        // quarter more per spurious hole seen, at most the SRTT, §6.2.4).
        let timed = (self.reorder_thresh > self.dup_thresh).then(|| {
            let min_rtt = self.rtt.min_rtt();
            let srtt = self.rtt.srtt();
            let rtt_now = rtt.or(srtt).unwrap_or_else(|| self.rtt.srtt_or_initial());
            let reo_wnd = if min_rtt == Duration::MAX {
                Duration::ZERO
            } else {
                let wnd = (min_rtt / 4).saturating_mul(self.reo_mult);
                srtt.map_or(wnd, |s| wnd.min(s))
            };
            rtt_now.saturating_add(reo_wnd)
        });
        let mut newly_lost = Vec::new();
        for (&serial, &s) in self.live.range(..unit.serial) {
            let Some(u) = self.units.get_mut(&s) else {
                continue;
            };
            u.later_arrivals += 1;
            let late = timed.is_some_and(|wait| {
                u.later_arrivals >= self.dup_thresh && now.saturating_since(u.requested_at) >= wait
            });
            if u.later_arrivals >= self.reorder_thresh || late {
                u.lost = true;
                u.threshold_loss_at = Some(self.arrivals);
                newly_lost.push((s, u.end, u.corrupted, serial));
            }
        }
        for &(_, _, _, serial) in &newly_lost {
            self.live.remove(&serial);
        }
        // Holes are handled in offset order, as before the serial index existed.
        newly_lost.sort_unstable_by_key(|&(s, ..)| s);
        let newly_lost: Vec<(u64, u64, bool)> = newly_lost
            .into_iter()
            .map(|(s, e, c, _)| (s, e, c))
            .collect();
        for &(s, e, _) in &newly_lost {
            self.lost.insert(s);
            self.in_flight = self.in_flight.saturating_sub(e.saturating_sub(s));
        }
        for (s, _, corrupted) in newly_lost {
            self.on_hole(now, s, corrupted);
        }
        let cum_after = self.cumulative_point();
        let advanced = cum_after.saturating_sub(cum_before);
        let (bytes, sacked_bytes) = if self.paced {
            (len, 0)
        } else {
            (advanced, if advanced == 0 { len } else { 0 })
        };
        self.cc.on_delivered(&Delivered {
            now,
            bytes,
            sacked_bytes,
            in_flight: self.in_flight,
            in_recovery: self.in_recovery,
            rtt,
        });
        if self.in_recovery {
            if let Some(r) = self.recover {
                if self.units.range(..r).next().is_none() {
                    self.in_recovery = false;
                    self.cc.on_recovery_end(now);
                }
            }
        }
        if self.frozen.is_none() {
            self.rto_deadline = if self.units.is_empty() {
                None
            } else {
                Some(now + self.timer_interval())
            };
        }
        true
    }

    /// Whether the arrival of `unit` answers a request older than its latest one: it was never
    /// asked again, or its DATA echoes a timestamp from before the re-request (the echo has
    /// microsecond resolution: one microsecond of margin).
    fn answers_original(now: Time, unit: &Unit, rtt: Option<Duration>) -> bool {
        unit.lost
            || rtt.is_some_and(|r| {
                r > now
                    .saturating_since(unit.requested_at)
                    .saturating_add(Duration::from_micros(1))
            })
    }

    /// The unit at `start`, declared lost at arrival count `at`, was not lost: the path
    /// reorders by at least the arrivals counted since. The threshold learns it, and a window
    /// cut that this hole alone caused is undone.
    fn on_spurious_hole(&mut self, start: u64, at: u64) {
        self.stats.spurious_holes += 1;
        let seen = self
            .arrivals
            .saturating_sub(at)
            .saturating_add(u64::from(self.reorder_thresh));
        let learnt = u32::try_from(seen)
            .unwrap_or(u32::MAX)
            .min(MAX_REORDER_THRESH);
        self.reorder_thresh = self.reorder_thresh.max(learnt);
        self.reo_mult = (self.reo_mult + 1).min(MAX_REO_MULT);
        if let Some(ep) = self.episode.filter(|e| e.hole == start && e.holes == 1) {
            self.cc.set_window(ep.cwnd, Some(ep.ssthresh));
            self.episode = None;
            self.in_recovery = false;
            self.recover = None;
            self.stats.undone += 1;
        }
    }

    /// A newly declared hole: ELN holes are re-requested without a window cut; the first
    /// congestion hole of a window starts a recovery episode.
    fn on_hole(&mut self, now: Time, start: u64, corrupted: bool) {
        let cause = if self.eln && corrupted {
            self.stats.wireless_holes += 1;
            LossCause::WirelessEln
        } else {
            self.stats.congestion_holes += 1;
            LossCause::DupAcks
        };
        if cause == LossCause::DupAcks && self.recover.is_some_and(|r| start < r) {
            if let Some(ep) = self.episode.as_mut() {
                ep.holes += 1;
            }
            return; // Same window as an episode already answered (RFC 6582 §3.2 step 1).
        }
        if cause == LossCause::DupAcks {
            self.episode = Some(Episode {
                hole: start,
                holes: 1,
                cwnd: self.cc.window(),
                ssthresh: self.cc.ssthresh(),
            });
            self.recover = Some(self.highest_requested);
            self.in_recovery = true;
            self.stats.recoveries += 1;
        }
        self.cc.on_loss(&LossEvent {
            now,
            cause,
            in_flight: self.in_flight,
        });
    }

    /// The pipe's cumulative point: the lowest outstanding unit, or everything requested.
    fn cumulative_point(&self) -> u64 {
        self.units
            .keys()
            .next()
            .copied()
            .unwrap_or(self.highest_requested)
    }

    /// When the pipe's timer expires, if armed.
    pub fn poll_timeout(&self) -> Option<Time> {
        match (
            self.rto_deadline,
            self.pacing_wait().filter(|_| self.frozen.is_none()),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next request may leave `len / rate` after this one (or after the previous one's
    /// slot, if that is later), the wait capped at one timer interval.
    fn pace(&mut self, now: Time, len: u64) {
        let Some(rate) = self.cc.pacing_rate().filter(|r| r.is_finite() && *r > 0.0) else {
            return;
        };
        let cap = self.timer_interval();
        let time_of = |bytes: u64| {
            Duration::try_from_secs_f64(bytes as f64 / rate).map_or(cap, |g| g.min(cap))
        };
        self.next_request = self.next_request.max(now).saturating_add(time_of(len));
        self.quantum_slack = time_of(send_quantum(len, rate).saturating_sub(len));
    }

    /// Fires the RTO if it is due: every outstanding unit is declared lost (to be re-requested
    /// under a one-segment window); the receive buffer is kept (§3.3.5 (iii)). Returns true if
    /// it fired.
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        self.clock = self.clock.max(now);
        match self.rto_deadline {
            Some(t) if t <= now && self.frozen.is_none() => {}
            _ => return false,
        }
        self.rto_deadline = None;
        if self.units.is_empty() {
            return false;
        }
        let outstanding: u64 = self.units.iter().map(|(s, u)| u.end - s).sum();
        self.cc.on_timeout(now, outstanding);
        self.rtt.back_off();
        self.stats.timeouts += 1;
        self.mark_all_lost();
        self.recover = Some(self.highest_requested);
        self.in_recovery = false;
        true
    }

    /// Every outstanding unit lost, by a timeout or a sleep: an arrival answering an old
    /// request after this says nothing about reordering, and no window cut is undone.
    fn mark_all_lost(&mut self) {
        for (&s, u) in self.units.iter_mut() {
            u.lost = true;
            u.threshold_loss_at = None;
            self.lost.insert(s);
        }
        self.live.clear();
        self.in_flight = 0;
        self.episode = None;
    }

    /// Stops the pipe's timers and requests (the host sleeps, §3.4.4).
    pub fn freeze(&mut self, now: Time) {
        if self.frozen.is_some() {
            return;
        }
        self.frozen = Some(Frozen {
            rto_left: self.rto_deadline.map(|t| t.saturating_since(now)),
        });
        self.rto_deadline = None;
    }

    /// True while frozen.
    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some()
    }

    /// Resumes after [`ReceiverPipe::freeze`]: timers restart with the time they had left, and
    /// every outstanding unit (whatever was in transit while asleep was lost) becomes a hole to
    /// re-request, without a congestion response. Returns the holes.
    pub fn thaw(&mut self, now: Time) -> Vec<(u64, u64)> {
        let Some(f) = self.frozen.take() else {
            return Vec::new();
        };
        self.rto_deadline = f.rto_left.map(|d| now + d);
        self.mark_all_lost();
        self.units.iter().map(|(&s, u)| (s, u.end)).collect()
    }

    /// Passes local link facts to the controller.
    pub fn set_link_info(&mut self, now: Time, info: &LinkInfo) {
        self.cc.on_local_link(now, info);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcKind;

    fn pipe(eln: bool) -> ReceiverPipe {
        ReceiverPipe::new(
            CcKind::NewReno.build(1000, 10),
            RttEstimator::new(
                Duration::from_secs(1),
                Duration::from_secs(1),
                Duration::from_secs(60),
            ),
            3,
            eln,
            0,
            0,
        )
    }

    fn request(p: &mut ReceiverPipe, n: u64) {
        for i in 0..n {
            p.on_requested(Time::ZERO, i * 1000, (i + 1) * 1000);
        }
    }

    #[test]
    fn third_later_arrival_declares_every_hole_lost_and_cuts_once() {
        let mut p = pipe(false);
        request(&mut p, 10);
        // Units 0 and 2 are lost; 1, 3, 4, 5 arrive.
        for s in [1, 3, 4, 5] {
            assert!(p.on_arrival(Time::from_millis(100), s * 1000, None));
        }
        assert_eq!(p.next_lost(), Some((0, 1000)));
        assert_eq!(p.stats().congestion_holes, 2);
        assert_eq!(p.stats().recoveries, 1);
        assert!(p.in_recovery());
        assert_eq!(p.cwnd(), 3000); // (10 − 4 arrived − 2 lost) / 2 floored at 2 segments.
    }

    #[test]
    fn lost_rerequest_is_detected_by_later_arrivals_without_timeout() {
        let mut p = pipe(false);
        request(&mut p, 6);
        for s in [1, 2, 3] {
            p.on_arrival(Time::from_millis(100), s * 1000, None);
        }
        assert_eq!(p.next_lost(), Some((0, 1000)));
        p.on_requested(Time::from_millis(100), 0, 1000); // Re-request (will be lost again).
        for s in 6..9 {
            p.on_requested(Time::from_millis(100), s * 1000, (s + 1) * 1000);
        }
        for s in [4, 5, 6] {
            p.on_arrival(Time::from_millis(200), s * 1000, None);
        }
        assert_eq!(
            p.next_lost(),
            None,
            "arrivals requested before it don't count"
        );
        p.on_arrival(Time::from_millis(200), 7000, None);
        p.on_arrival(Time::from_millis(200), 8000, None);
        assert_eq!(p.next_lost(), Some((0, 1000)));
        assert_eq!(p.stats().timeouts, 0);
    }

    #[test]
    fn a_reordered_unit_is_a_spurious_loss_the_pipe_learns_and_undoes() {
        let mut p = pipe(false);
        request(&mut p, 12);
        let cwnd = p.cwnd();
        // Unit 0 arrives after 1, 2, 3: declared lost, window cut.
        for s in [1, 2, 3] {
            p.on_arrival(Time::from_millis(100), s * 1000, None);
        }
        assert_eq!(p.next_lost(), Some((0, 1000)));
        assert!(p.cwnd() < cwnd);
        // Its original request is answered before it was asked again: not lost.
        assert!(p.on_arrival(Time::from_millis(101), 0, None));
        assert_eq!(p.stats().spurious_holes, 1);
        assert_eq!(p.stats().undone, 1);
        assert!(p.cwnd() >= cwnd, "the cut that hole alone caused is undone");
        assert!(!p.in_recovery());
        // The same reordering again (4 arrives after 5, 6, 7) is no loss now.
        for s in [5, 6, 7] {
            p.on_arrival(Time::from_millis(102), s * 1000, None);
        }
        assert_eq!(p.next_lost(), None);
        assert_eq!(p.stats().congestion_holes, 1);
        // A real loss is still found: by count (8, 9, 10, 11 after it), or on time.
        p.on_arrival(Time::from_millis(103), 4000, None);
        for s in [9, 10] {
            p.on_arrival(Time::from_millis(104), s * 1000, None);
        }
        assert_eq!(
            p.next_lost(),
            None,
            "under the learnt threshold, not yet late"
        );
        p.on_arrival(Time::from_millis(2000), 11_000, None);
        assert_eq!(
            p.next_lost(),
            Some((8000, 9000)),
            "late by a round trip plus a quarter of the base RTT"
        );
    }

    #[test]
    fn the_answer_to_a_rerequest_is_not_taken_for_reordering() {
        let mut p = pipe(false);
        request(&mut p, 8);
        for s in [1, 2, 3] {
            p.on_arrival(Time::from_millis(100), s * 1000, None);
        }
        p.on_requested(Time::from_millis(100), 0, 1000);
        // The re-request's answer: its echo is younger than the re-request.
        assert!(p.on_arrival(Time::from_millis(150), 0, Some(Duration::from_millis(50))));
        assert_eq!(p.stats().spurious_holes, 0);
        assert_eq!(p.stats().undone, 0);
    }

    #[test]
    fn the_original_answered_after_a_rerequest_is_spurious() {
        let mut p = pipe(false);
        request(&mut p, 8);
        for s in [1, 2, 3] {
            p.on_arrival(Time::from_millis(100), s * 1000, None);
        }
        p.on_requested(Time::from_millis(100), 0, 1000);
        // Its echo is older than the re-request (the original request at t = 0).
        assert!(p.on_arrival(Time::from_millis(110), 0, Some(Duration::from_millis(110))));
        assert_eq!(p.stats().spurious_holes, 1);
    }

    #[test]
    fn eln_holes_keep_the_window() {
        let mut p = pipe(true);
        request(&mut p, 10);
        p.note_corrupted(0);
        for s in [1, 2, 3] {
            p.on_arrival(Time::from_millis(100), s * 1000, None);
        }
        assert_eq!(p.next_lost(), Some((0, 1000)));
        assert_eq!(p.stats().wireless_holes, 1);
        assert!(!p.in_recovery());
        assert!(p.cwnd() >= 10_000);
    }

    /// RCP-Rate's request pacing: before a rate sample BBR asks for 2/ln 2 · IW / RTT
    /// (10 kB / 0.1 s · 2.885 = 288.54 kB/s, 2.3 Mb/s: a send quantum of two units), so two
    /// 1000-byte requests leave at once and hold the third back 1000 / 288 539 s = 3.466 ms
    /// (its slot, two units' time, less the quantum's second unit), reported by
    /// `poll_timeout` and released by the timer.
    #[test]
    fn rate_pipe_paces_requests_through_its_timer() {
        let mut p = ReceiverPipe::new(
            super::super::RcpCc::Rate.build(1000, 10),
            RttEstimator::new(
                Duration::from_secs(1),
                Duration::from_millis(200),
                Duration::from_secs(60),
            ),
            3,
            false,
            0,
            0,
        );
        p.set_request_pacing(true);
        // No RTT yet: no rate, no pacing.
        p.on_requested(Time::ZERO, 0, 1000);
        assert!(p.has_room(1000));
        p.on_requested(Time::ZERO, 1000, 2000);
        let t = Time::from_millis(100);
        assert!(p.on_arrival(t, 0, Some(Duration::from_millis(100))));
        assert!(p.has_room(1000));
        p.on_requested(t, 2000, 3000);
        assert!(p.has_room(1000), "the quantum's second unit");
        p.on_requested(t, 3000, 4000);
        assert!(!p.has_room(1000), "paced");
        let due = p.poll_timeout().unwrap();
        let gap = due.saturating_since(t);
        assert!(
            gap.abs_diff(Duration::from_nanos(3_465_736)) < Duration::from_micros(1),
            "{gap:?}"
        );
        // Not yet at 3 ms; free at the reported instant, without firing the RTO.
        assert!(!p.handle_timeout(t + Duration::from_millis(3)));
        assert!(!p.has_room(1000));
        assert!(!p.handle_timeout(due));
        assert!(p.has_room(1000));
        // Two requests at once: the second's slot follows the first's.
        p.on_requested(due, 4000, 5000);
        p.on_requested(due, 5000, 6000);
        let gap2 = p.poll_timeout().unwrap().saturating_since(due);
        assert!(
            gap2.abs_diff(gap * 2) < Duration::from_micros(2),
            "{gap2:?}"
        );
        // A window-only pipe never reports a pacing instant.
        let mut q = pipe(false);
        q.on_requested(Time::ZERO, 0, 1000);
        q.on_arrival(t, 0, Some(Duration::from_millis(100)));
        q.on_requested(t, 1000, 2000);
        assert_eq!(q.poll_timeout(), Some(t + q.rtt().rto()));
    }

    #[test]
    fn thaw_returns_exactly_the_outstanding_holes_and_restores_the_timer() {
        let mut p = pipe(false);
        request(&mut p, 4);
        p.on_arrival(Time::from_millis(100), 1000, None);
        p.freeze(Time::from_millis(200));
        assert_eq!(p.poll_timeout(), None);
        assert!(!p.has_room(1000));
        let holes = p.thaw(Time::from_millis(5000));
        assert_eq!(holes, vec![(0, 1000), (2000, 3000), (3000, 4000)]);
        assert_eq!(p.next_lost(), Some((0, 1000)));
        assert_eq!(
            p.poll_timeout(),
            Some(Time::from_millis(5000) + Duration::from_millis(900))
        );
    }
}
