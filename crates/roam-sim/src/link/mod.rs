//! Point-to-point links. Each direction is a `channel::Channel` (drop-tail queue and
//! transmitter), a propagation delay, and `impairment::Impairments` applied on arrival.

pub(crate) mod channel;
pub mod emulation;
pub(crate) mod gilbert;
pub(crate) mod impairment;
pub mod meter;
pub mod segment_drop;
pub mod trace;

use std::sync::Arc;

use roam_proto::Time;

use crate::rng::stream_rng;
use crate::scenario::{Capacity, DirSpec, LinkChange};
use channel::Channel;
use gilbert::Gilbert;
use impairment::Impairments;
use meter::{LinkInfoMode, LossMeter};
use trace::TraceCursor;

/// Counters of one link direction.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirStats {
    /// Datagrams put on the wire.
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Datagrams the drop-tail queue refused.
    pub queue_drops: u64,
    /// Datagrams lost on arrival (outage or random loss).
    pub impairment_drops: u64,
}

/// One direction of a link at run time.
#[derive(Debug)]
pub(crate) struct LinkDir {
    /// Receiving node.
    pub to_node: u32,
    /// Receiving node's interface.
    pub to_iface: u32,
    /// Whether the receiving node is a router (set by the simulator when it builds the network).
    pub to_router: bool,
    /// Propagation delay in nanoseconds.
    pub delay_ns: u64,
    /// Queue and transmitter.
    pub chan: Channel,
    /// Impairments.
    pub imp: Impairments,
    /// Counters.
    pub stats: DirStats,
    /// Whether the link is a wireless hop (reported in link info).
    pub wireless: bool,
    /// Sliding-window corruption count, when the link's info is measured rather than exact.
    pub meter: Option<LossMeter>,
    /// Deterministic drops of chosen data segments (`drop_segments`).
    pub segment_drop: Option<segment_drop::SegmentDrop>,
    /// Latest in-order arrival time scheduled so far: jittered packets never arrive before it.
    pub last_arrival: Time,
    /// Nothing can drop, corrupt or meter an arriving packet: the direction is up, outside
    /// any blackout, without random or Gilbert–Elliott loss, segment drops or a loss meter.
    /// Kept by [`LinkDir::refresh_plain`] after every change to those.
    pub plain: bool,
    /// [`Impairments::departs_plain`], computed once: jitter, reordering and duplication do
    /// not change during a run.
    pub departs_plain: bool,
    /// Whether the receiving node's interface is up (a copy kept by the simulator).
    pub to_iface_up: bool,
    /// [`LinkDir::plain`] and the receiving interface is up: nothing on the way in can drop
    /// an arriving packet (kept by [`LinkDir::refresh_plain`]).
    pub arrives_plain: bool,
}

impl LinkDir {
    /// Builds a direction; `stream` (e.g. `link:bottleneck:fwd`) names its random streams.
    pub(crate) fn new(
        spec: &DirSpec,
        to_node: u32,
        to_iface: u32,
        seed: u64,
        stream: &str,
        wireless: bool,
        info_mode: LinkInfoMode,
    ) -> LinkDir {
        let chan = match &spec.capacity {
            Capacity::Rate(r) => Channel::with_rate(*r, spec.queue),
            Capacity::Trace(t) => Channel::with_trace(TraceCursor::new(Arc::clone(t)), spec.queue),
        };
        let mut imp = Impairments::new(
            stream_rng(seed, &format!("{stream}:loss")),
            stream_rng(seed, &format!("{stream}:depart")),
        );
        imp.loss = spec.loss;
        imp.duplicate = spec.duplicate;
        imp.jitter = u64::try_from(spec.jitter.as_nanos()).unwrap_or(u64::MAX);
        imp.reorder = spec.reorder.map(|r| {
            (
                r.probability,
                u64::try_from(r.delay.as_nanos()).unwrap_or(u64::MAX),
            )
        });
        imp.gilbert = spec
            .gilbert
            .as_ref()
            .map(|g| Gilbert::new(g, stream_rng(seed, &format!("{stream}:gilbert"))));
        let departs_plain = imp.departs_plain();
        let mut dir = LinkDir {
            to_node,
            to_iface,
            to_router: false,
            delay_ns: u64::try_from(spec.delay.as_nanos()).unwrap_or(u64::MAX),
            chan,
            imp,
            stats: DirStats::default(),
            wireless,
            meter: match info_mode {
                LinkInfoMode::Exact => None,
                LinkInfoMode::Measured { window } => Some(LossMeter::new(window)),
            },
            segment_drop: spec
                .drop_segments
                .as_ref()
                .map(segment_drop::SegmentDrop::new),
            last_arrival: Time::ZERO,
            plain: false,
            departs_plain,
            to_iface_up: true,
            arrives_plain: false,
        };
        dir.refresh_plain();
        dir
    }

    /// Recomputes [`LinkDir::plain`] and [`LinkDir::arrives_plain`]; to be called after any
    /// change to the direction's impairments (loss, up/down, blackouts) or to
    /// [`LinkDir::to_iface_up`].
    pub(crate) fn refresh_plain(&mut self) {
        let i = &self.imp;
        self.plain = i.up
            && i.blackout_depth == 0
            && !i.random_loss()
            && self.segment_drop.is_none()
            && self.meter.is_none();
        self.arrives_plain = self.plain && self.to_iface_up;
    }

    /// Counts a datagram of `wire` bytes fully sent at `done`; returns when it arrives if the
    /// direction departs plain (what the impairments would decide when they decide nothing),
    /// `None` if the impairments must decide.
    #[inline(always)]
    pub(crate) fn departed(&mut self, wire: u32, done: Time) -> Option<Time> {
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(wire);
        self.departs_plain
            .then(|| Time::from_nanos(done.as_nanos().saturating_add(self.delay_ns)))
    }

    /// Applies a scenario `[[event]]`'s new values to this direction at `now` (the
    /// simulator's and the emulator's one rule for rate, delay, loss and up/down changes).
    pub(crate) fn apply_change(&mut self, now: Time, change: &LinkChange) {
        if let Some(rate) = change.rate {
            self.chan.set_rate(now, rate);
        }
        if let Some(delay) = change.delay {
            self.delay_ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        }
        if let Some(loss) = change.loss {
            self.imp.loss = loss;
        }
        if let Some(up) = change.up {
            self.imp.up = up;
        }
        self.refresh_plain();
    }

    /// A blackout window opens (`on`) or closes; overlapping windows nest.
    pub(crate) fn blackout(&mut self, on: bool) {
        self.imp.blackout_depth = if on {
            self.imp.blackout_depth.saturating_add(1)
        } else {
            self.imp.blackout_depth.saturating_sub(1)
        };
        self.refresh_plain();
    }

    /// When a datagram fully sent at `done` on a direction with jitter, reordering or
    /// duplication arrives, and whether a copy arrives with it: the impairments' departure
    /// draws. Jitter delays a packet but keeps it behind the one before it (a FIFO link); the
    /// reorder impairment's hold-back is added on top and may let later packets pass.
    pub(crate) fn impaired_arrival(&mut self, done: Time) -> (Time, bool) {
        let dep = self.imp.on_depart();
        let mut in_order =
            done + std::time::Duration::from_nanos(self.delay_ns.saturating_add(dep.jitter));
        if self.imp.jitter > 0 {
            in_order = in_order.max(self.last_arrival);
            self.last_arrival = in_order;
        }
        let arrive = in_order + std::time::Duration::from_nanos(dep.reorder);
        (arrive, dep.duplicate)
    }

    /// The loss rate reported in link info: measured over the window, or the model's exact
    /// long-run value.
    pub(crate) fn reported_loss(&self) -> f64 {
        match &self.meter {
            Some(m) => m.loss_rate(),
            None => self.imp.mean_loss(),
        }
    }
}
