//! One link direction driven by a host other than the simulator's event loop: the real-time
//! link emulator (`roam-emu`) hands it datagrams as they arrive from a TUN device and asks it
//! what to deliver when. It is the simulator's own direction (`LinkDir`: the drop-tail
//! queue and transmitter of `channel.rs`, a Mahimahi trace's `TraceCursor`, the impairments
//! of `impairment.rs` and `gilbert.rs`, and the rules `LinkDir::apply_change`,
//! `LinkDir::blackout` and `LinkDir::impaired_arrival` the simulator calls too), with the
//! small event schedule the simulator would keep for it: transmitter wake-ups, arrivals,
//! blackouts, Gilbert–Elliott flips and the link's `[[event]]` changes. One link model, two
//! hosts.
//!
//! Times are [`Time`]s from the emulation's start (traces replay from zero). Every internal
//! event is processed at its own scheduled time, not at the (later) time the host got round to
//! it, so a late host delays deliveries but does not change the link's capacity.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use roam_proto::Time;

use super::channel::{Offer, Queued};
use super::impairment::DropCause;
use super::meter::LinkInfoMode;
pub use super::DirStats;
use super::LinkDir;
use crate::scenario::{DirSpec, EventAction, LinkChange, Scenario};

/// What became of a datagram handed to [`DirModel::send`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It reaches the far end now: write it out.
    Delivered,
    /// The drop-tail queue was full.
    QueueDrop,
    /// The direction was down or in a blackout when it arrived.
    Outage,
    /// Random loss (Bernoulli or Gilbert–Elliott).
    Lost,
}

/// A datagram's fate, by the host's id for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The id the host gave [`DirModel::send`].
    pub id: u32,
    /// What became of it.
    pub fate: Fate,
    /// This is a duplicate (`duplicate`): the original's own outcome still follows, so the
    /// host keeps the bytes.
    pub copy: bool,
    /// When the model decided it (for a delivery: when it reaches the far end).
    pub at: Time,
}

/// Why a direction cannot be emulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulationError {
    /// `drop_segments` picks roam data segments by their decoded sequence numbers: a
    /// simulator-only test aid.
    #[error("link {0:?}: `drop_segments` is a simulator-only test aid and is not emulated")]
    SegmentDrops(String),
    /// An `[[event]]` that takes a node's interface down or up: only link events are
    /// emulated.
    #[error("event at {0:?}: interface events are not emulated; use a link event with `up = false` or a blackout")]
    IfaceEvent(Duration),
    /// No link of that name.
    #[error("no link called {0:?}")]
    NoLink(String),
}

/// A timed change of one direction.
#[derive(Debug, Clone)]
enum Change {
    Blackout(bool),
    Set(LinkChange),
}

/// One link direction with its event schedule (see the module's documentation).
#[derive(Debug)]
pub struct DirModel {
    dir: LinkDir,
    /// Timed changes, sorted by time (ties in the order the simulator schedules them), and
    /// the next one to apply.
    changes: Vec<(Time, Change)>,
    next_change: usize,
    /// The next Gilbert–Elliott flip, if the direction has that process.
    flip_at: Option<Time>,
    /// The transmitter's next wake-up.
    wake_at: Option<Time>,
    /// Datagrams on their way: (arrival, order, id, is a duplicate).
    arrivals: BinaryHeap<Reverse<(Time, u64, u32, bool)>>,
    order: u64,
    /// Outcomes not yet taken by the host.
    out: Vec<Outcome>,
    departed: Vec<(Queued, Time)>,
}

impl DirModel {
    /// The direction `spec` with the timed `changes` of its `[[event]]`s; `seed` and `stream`
    /// (the simulator's `link:NAME:fwd` / `link:NAME:rev`) name its random streams, so its
    /// draws are the simulator's for the same scenario.
    pub fn new(
        spec: &DirSpec,
        changes: &[(Duration, LinkChange)],
        seed: u64,
        stream: &str,
    ) -> Result<DirModel, EmulationError> {
        if spec.drop_segments.is_some() {
            return Err(EmulationError::SegmentDrops(stream.to_string()));
        }
        let mut dir = LinkDir::new(spec, 0, 0, seed, stream, false, LinkInfoMode::Exact);
        let flip_at = dir.imp.gilbert.as_mut().map(|g| Time::ZERO + g.sojourn());
        let mut timed = Vec::new();
        for b in &spec.blackouts {
            if b.duration.is_zero() {
                continue;
            }
            timed.push((Time::ZERO + b.at, Change::Blackout(true)));
            timed.push((Time::ZERO + b.at + b.duration, Change::Blackout(false)));
        }
        for (at, c) in changes {
            timed.push((Time::ZERO + *at, Change::Set(c.clone())));
        }
        // Stable: equal times keep the order above (the simulator's scheduling order).
        timed.sort_by_key(|(t, _)| *t);
        Ok(DirModel {
            dir,
            changes: timed,
            next_change: 0,
            flip_at,
            wake_at: None,
            arrivals: BinaryHeap::new(),
            order: 0,
            out: Vec::new(),
            departed: Vec::new(),
        })
    }

    /// Both directions of link `name` of `scenario` (forward a → b, reverse b → a) with the
    /// link's `[[event]]`s, seeded with the scenario's seed.
    pub fn for_link(scenario: &Scenario, name: &str) -> Result<[DirModel; 2], EmulationError> {
        let li = scenario
            .link_index(name)
            .ok_or_else(|| EmulationError::NoLink(name.to_string()))?;
        let l = &scenario.links[li];
        let (mut fwd, mut rev) = (Vec::new(), Vec::new());
        for e in &scenario.events {
            match &e.action {
                EventAction::Link {
                    link,
                    forward,
                    reverse,
                    change,
                } if *link == li => {
                    if *forward {
                        fwd.push((e.at, change.clone()));
                    }
                    if *reverse {
                        rev.push((e.at, change.clone()));
                    }
                }
                EventAction::Iface { node, .. } if *node == l.a || *node == l.b => {
                    return Err(EmulationError::IfaceEvent(e.at));
                }
                _ => {}
            }
        }
        let seed = scenario.run.seed;
        Ok([
            DirModel::new(&l.forward, &fwd, seed, &format!("link:{}:fwd", l.name))?,
            DirModel::new(&l.reverse, &rev, seed, &format!("link:{}:rev", l.name))?,
        ])
    }

    /// The earliest time at which the model has something to do ([`DirModel::advance`]).
    pub fn next_deadline(&self) -> Option<Time> {
        let change = self.changes.get(self.next_change).map(|(t, _)| *t);
        let arrival = self.arrivals.peek().map(|Reverse((t, ..))| *t);
        [change, self.flip_at, self.wake_at, arrival]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs every internal event due at or before `now`, each at its own time; the datagrams
    /// that arrive or are lost meanwhile are left in [`DirModel::outcomes`].
    pub fn advance(&mut self, now: Time) {
        while let Some(t) = self.next_deadline().filter(|&t| t <= now) {
            // Ties: changes first (the simulator schedules them before any packet), then the
            // Gilbert flip, the transmitter, arrivals.
            if self
                .changes
                .get(self.next_change)
                .is_some_and(|(c, _)| *c == t)
            {
                let (_, change) = &self.changes[self.next_change];
                match change {
                    Change::Blackout(on) => self.dir.blackout(*on),
                    Change::Set(c) => self.dir.apply_change(t, c),
                }
                self.next_change += 1;
            } else if self.flip_at == Some(t) {
                self.flip_at = self.dir.imp.gilbert.as_mut().map(|g| t + g.flip());
            } else if self.wake_at == Some(t) {
                self.wake(t);
            } else if let Some(Reverse((_, _, id, copy))) = self.arrivals.pop() {
                self.arrive(t, id, copy);
            }
        }
    }

    /// A datagram of `wire` bytes (the whole IP packet) enters the direction at `now`; `id`
    /// is the host's name for it. [`DirModel::advance`]s to `now` first.
    pub fn send(&mut self, now: Time, id: u32, wire: u32) {
        self.advance(now);
        match self.dir.chan.start_if_idle(now, wire) {
            Some(done) => self.depart(id, wire, done),
            None => match self.dir.chan.offer(now, Queued { pkt: id, wire }) {
                Offer::Queued { wake } => {
                    if let Some(t) = wake {
                        self.wake_at = Some(t);
                    }
                }
                Offer::Dropped(item) => {
                    self.dir.stats.queue_drops += 1;
                    self.out.push(Outcome {
                        id: item.pkt,
                        fate: Fate::QueueDrop,
                        copy: false,
                        at: now,
                    });
                }
            },
        }
    }

    /// The outcomes decided so far, oldest first; the host takes them all.
    pub fn outcomes(&mut self) -> std::vec::Drain<'_, Outcome> {
        self.out.drain(..)
    }

    /// The direction's counters: datagrams and bytes put on the wire, queue and impairment
    /// drops.
    pub fn stats(&self) -> DirStats {
        self.dir.stats
    }

    /// The one-way propagation delay now.
    pub fn delay(&self) -> Duration {
        Duration::from_nanos(self.dir.delay_ns)
    }

    fn wake(&mut self, t: Time) {
        let mut buf = std::mem::take(&mut self.departed);
        self.wake_at = self.dir.chan.wake(t, |item, done| buf.push((item, done)));
        for (item, done) in buf.drain(..) {
            self.depart(item.pkt, item.wire, done);
        }
        self.departed = buf;
    }

    fn depart(&mut self, id: u32, wire: u32, done: Time) {
        match self.dir.departed(wire, done) {
            Some(arrive) => self.push_arrival(arrive, id, false),
            None => {
                let (arrive, duplicate) = self.dir.impaired_arrival(done);
                if duplicate {
                    self.push_arrival(arrive, id, true);
                }
                self.push_arrival(arrive, id, false);
            }
        }
    }

    fn push_arrival(&mut self, at: Time, id: u32, copy: bool) {
        self.order += 1;
        self.arrivals.push(Reverse((at, self.order, id, copy)));
    }

    fn arrive(&mut self, at: Time, id: u32, copy: bool) {
        let fate = if self.dir.arrives_plain {
            Fate::Delivered
        } else {
            match self.dir.imp.arrival_drop() {
                None => Fate::Delivered,
                Some(cause) => {
                    self.dir.stats.impairment_drops += 1;
                    match cause {
                        DropCause::Outage => Fate::Outage,
                        DropCause::Corruption => Fate::Lost,
                    }
                }
            }
        };
        self.out.push(Outcome { id, fate, copy, at });
    }
}

#[cfg(test)]
#[path = "emulation_tests.rs"]
mod tests;
