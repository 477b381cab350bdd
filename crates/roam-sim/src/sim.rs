//! The event loop: links, nodes and agents driven by one event queue in virtual time.

use std::sync::Arc;
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use roam_proto::linkinfo::{ChannelState, LinkInfo};
use roam_proto::Time;

use crate::agent::{Addr, Agent, FlowCounters, FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};
use crate::event::{EventKind, EventQueue};
use crate::link::channel::{Offer, Queued};
use crate::link::impairment::DropCause;
use crate::link::LinkDir;
use crate::packets::Packets;
use crate::scenario::routing::{Routing, NO_ROUTE};
use crate::scenario::{EventAction, EventSpec};
use crate::trace::{PacketFate, TraceBuffer};

/// A node's interface at run time.
#[derive(Debug)]
pub(crate) struct IfaceRt {
    /// Link direction it transmits on.
    pub out: u32,
    /// Its address (hosts only).
    pub addr: Option<Addr>,
    /// False while down.
    pub up: bool,
    /// Times the interface came back up or its link changed profile (rate or delay).
    pub handoffs: u32,
}

/// A node at run time.
#[derive(Debug)]
pub(crate) struct NodeRt {
    pub is_router: bool,
    pub ifaces: Vec<IfaceRt>,
    /// Bound ports, sorted: (port, agent index).
    pub ports: Vec<(u16, u32)>,
}

impl NodeRt {
    /// The agent bound to `port`, if any.
    // Always inlined, with one bound port (the common case) looked at directly: the search
    // was a call per delivered datagram.
    #[inline(always)]
    fn agent_on(&self, port: u16) -> Option<u32> {
        match self.ports.as_slice() {
            [(p, agent)] => (*p == port).then_some(*agent),
            ports => {
                let at = ports.binary_search_by_key(&port, |&(p, _)| p).ok()?;
                ports.get(at).map(|&(_, agent)| agent)
            }
        }
    }
}

/// What became of a packet reaching the far end of a link direction.
#[derive(Debug)]
pub(crate) enum Arrival {
    /// Call agent `.0` with it: [`Call::Packet`], or [`Call::Corrupted`] if it arrived
    /// corrupted over a wireless hop into its destination host (the host knows the frame was
    /// lost on its link, which is what ELN reports).
    Agent(u32, Call),
    /// Forwarded by a router, dropped, or misrouted: nothing for an agent.
    None,
}

/// What becomes of a plain arrival ([`Net::plain_arrival`]).
enum Plain {
    /// A router sends it on over link direction `out`; it is `wire` bytes on the wire.
    Forward { out: u32, wire: u32 },
    /// The host hands it to `agent`, which receives it on interface `iface`.
    Deliver { agent: u32, iface: u32 },
}

/// What a direction's impairments did to an arriving packet.
enum Impaired {
    /// Nothing.
    Clean,
    /// Corrupted over a wireless hop into a host: the host hears of it.
    Corrupted,
    /// Lost, with this fate.
    Dropped(PacketFate),
}

/// Everything but the agents: what an agent's [`NetCtx`] may touch.
pub(crate) struct Net {
    pub now: Time,
    /// Pending events; lane `d` holds the slots of link direction `d`'s datagrams that arrive
    /// in order.
    pub events: EventQueue<u32>,
    pub dirs: Vec<LinkDir>,
    pub nodes: Vec<NodeRt>,
    pub routing: Arc<Routing>,
    /// The datagrams in the network (queued or on a wire): queues, lanes and events name them
    /// by slot.
    pub packets: Packets,
    departures: Vec<(Queued, Time)>,
    pub counters: Vec<FlowCounters>,
    scratch: FlowCounters,
    pub overhead: u32,
    /// Packets a router had no route for, or a host received for someone else.
    pub misrouted: u64,
    /// Payload buffers of datagrams that were delivered or dropped, for agents to reuse.
    spare_buffers: Vec<Vec<u8>>,
    /// Packet-trace records not yet handed to the observer (`None`: not tracing).
    pub(crate) trace: Option<TraceBuffer>,
    /// Tests only: every arrival and departure takes the checked path (no router's plain hop,
    /// no plain departure) and agents send through `NetCtx`'s separate calls.
    #[cfg(test)]
    pub(crate) checked_only: bool,
}

/// Records what happened to the datagram in slot `pkt` at `dir`, if the run is traced.
// Always inlined: a run that is not traced pays one test per call.
#[inline(always)]
fn note(
    trace: &mut Option<TraceBuffer>,
    packets: &Packets,
    now: Time,
    dir: u32,
    fate: PacketFate,
    pkt: u32,
) {
    if let Some(t) = trace.as_mut() {
        note_traced(t, packets, now, dir, fate, pkt);
    }
}

/// [`note`] in a traced run.
#[cold]
#[inline(never)]
fn note_traced(
    trace: &mut TraceBuffer,
    packets: &Packets,
    now: Time,
    dir: u32,
    fate: PacketFate,
    pkt: u32,
) {
    if let Some(p) = packets.get(pkt) {
        trace.note(now, dir, fate, p);
    }
}

/// Most spare payload buffers kept (beyond this, finished datagrams' buffers are freed).
const MAX_SPARE_BUFFERS: usize = 4096;

/// Capacity of a new payload buffer: a full TCP segment with its header and options.
const NEW_BUFFER_CAPACITY: usize = 1600;

impl Net {
    pub(crate) fn new(
        mut dirs: Vec<LinkDir>,
        nodes: Vec<NodeRt>,
        routing: Arc<Routing>,
        n_flows: usize,
        overhead: u32,
    ) -> Net {
        for d in &mut dirs {
            d.to_router = nodes.get(d.to_node as usize).is_some_and(|n| n.is_router);
        }
        Net {
            now: Time::ZERO,
            events: EventQueue::with_lanes(dirs.len()),
            dirs,
            nodes,
            routing,
            packets: Packets::default(),
            departures: Vec::new(),
            counters: vec![FlowCounters::default(); n_flows],
            scratch: FlowCounters::default(),
            overhead,
            misrouted: 0,
            spare_buffers: Vec::new(),
            trace: None,
            #[cfg(test)]
            checked_only: false,
        }
    }

    /// Keeps the payload buffer of a datagram that was delivered or dropped, for reuse.
    pub(crate) fn recycle(&mut self, pkt: Packet) {
        self.keep_spare(pkt.payload);
    }

    /// Frees slot `pkt` (if it holds a datagram), keeping the datagram's buffer for reuse.
    fn release(&mut self, pkt: u32) {
        if let Some(p) = self.packets.take(pkt) {
            self.recycle(p);
        }
    }

    fn keep_spare(&mut self, mut buf: Vec<u8>) {
        if self.spare_buffers.len() < MAX_SPARE_BUFFERS {
            buf.clear();
            self.spare_buffers.push(buf);
        }
    }

    /// An agent's datagram leaving by link direction `out`: into the network if its interface
    /// is `up`, else dropped and counted there.
    // Always inlined (into `NetCtx::send` and `send_counted`): called, it took the datagram
    // through memory once more on its way into its slot.
    #[inline(always)]
    fn send_on(&mut self, out: u32, up: bool, packet: Packet) {
        if up {
            let wire = self.wire_size(&packet);
            let pkt = self.packets.put(packet);
            self.enqueue_sized(out, pkt, wire);
        } else {
            self.dirs[out as usize].stats.impairment_drops += 1;
            self.recycle(packet);
        }
    }

    /// Puts the datagram in slot `pkt` into link direction `dir`'s queue (or straight onto the
    /// wire).
    pub(crate) fn enqueue(&mut self, dir: u32, pkt: u32) {
        if let Some(p) = self.packets.get(pkt) {
            self.enqueue_sized(dir, pkt, self.wire_size(p));
        }
    }

    /// A datagram's size on the wire: its payload and the run's header overhead.
    #[inline]
    fn wire_size(&self, p: &Packet) -> u32 {
        u32::try_from(p.payload.len() as u64 + u64::from(self.overhead)).unwrap_or(u32::MAX)
    }

    /// [`Net::enqueue`] of a datagram of `wire` bytes on the wire.
    // Always inlined, with `depart`: a packet that finds its link idle (most do) is put on the
    // wire and scheduled to arrive without a call.
    #[inline(always)]
    fn enqueue_sized(&mut self, dir: u32, pkt: u32, wire: u32) {
        let now = self.now;
        let d = &mut self.dirs[dir as usize];
        match d.chan.start_if_idle(now, wire) {
            Some(done) => {
                let arrive = d.departed(wire, done);
                self.schedule_departed(dir, pkt, done, arrive);
            }
            None => self.offer(dir, Queued { pkt, wire }),
        }
    }

    /// Offers `item` to the queue of `dir`, whose transmitter is busy: it waits, or is dropped
    /// at the tail.
    #[inline(never)]
    fn offer(&mut self, dir: u32, item: Queued) {
        let (now, pkt) = (self.now, item.pkt);
        let d = &mut self.dirs[dir as usize];
        match d.chan.offer(now, item) {
            Offer::Queued { wake } => {
                note(
                    &mut self.trace,
                    &self.packets,
                    now,
                    dir,
                    PacketFate::Queued,
                    pkt,
                );
                if let Some(t) = wake {
                    self.events.push_wake(t, dir);
                }
            }
            Offer::Dropped(item) => {
                d.stats.queue_drops += 1;
                let fate = PacketFate::QueueDrop;
                note(&mut self.trace, &self.packets, now, dir, fate, item.pkt);
                self.release(item.pkt);
            }
        }
    }

    /// The transmitter of `dir` may take the next packet (its wake-up was popped as
    /// [`Popped::TxReady`](crate::event::Popped::TxReady)): departs what it sends and
    /// schedules its next wake-up in the popped one's place.
    pub(crate) fn tx_ready(&mut self, dir: u32) {
        let next = self.wake(dir);
        self.events.end_wake(dir, next);
    }

    /// [`Net::tx_ready`] but for the wake-up's scheduling: returns when to wake the
    /// transmitter next, if ever.
    #[inline(always)]
    fn wake(&mut self, dir: u32) -> Option<Time> {
        let now = self.now;
        if let Some(woken) = self.dirs[dir as usize].chan.wake_rate(now) {
            if let Some((item, done)) = woken.departed {
                self.depart(dir, item, done);
            }
            return woken.next;
        }
        // A trace-driven transmitter may send several packets at one opportunity.
        let mut buf = std::mem::take(&mut self.departures);
        let next = self.dirs[dir as usize]
            .chan
            .wake(now, |item, done| buf.push((item, done)));
        for (item, done) in buf.drain(..) {
            self.depart(dir, item, done);
        }
        self.departures = buf;
        next
    }

    /// `item` is fully sent on `dir` at `done`: counts it and schedules its arrival (and that
    /// of a duplicate).
    #[inline(always)]
    fn depart(&mut self, dir: u32, item: Queued, done: Time) {
        let arrive = self.dirs[dir as usize].departed(item.wire, done);
        self.schedule_departed(dir, item.pkt, done, arrive);
    }

    /// [`Net::depart`] after the direction counted the datagram in slot `pkt`
    /// ([`LinkDir::departed`]): schedules its arrival at `arrive` if the direction departs
    /// plain, else lets the impairments decide.
    #[inline(always)]
    fn schedule_departed(&mut self, dir: u32, pkt: u32, done: Time, arrive: Option<Time>) {
        #[cfg(test)]
        let arrive = arrive.filter(|_| !self.checked_only);
        let Some(arrive) = arrive else {
            self.depart_impaired(dir, pkt, done);
            return;
        };
        let (now, fate) = (self.now, PacketFate::Sent);
        note(&mut self.trace, &self.packets, now, dir, fate, pkt);
        self.schedule_arrival(dir, arrive, pkt);
    }

    /// [`Net::depart`] (after the counters) of the datagram in slot `pkt` on a direction with
    /// jitter, reordering or duplication.
    #[inline(never)]
    fn depart_impaired(&mut self, dir: u32, pkt: u32, done: Time) {
        let (arrive, duplicate) = self.dirs[dir as usize].impaired_arrival(done);
        let (now, fate) = (self.now, PacketFate::Sent);
        note(&mut self.trace, &self.packets, now, dir, fate, pkt);
        if duplicate {
            let fate = PacketFate::Duplicated;
            note(&mut self.trace, &self.packets, now, dir, fate, pkt);
            if let Some(copy) = self.packets.get(pkt).cloned() {
                let copy = self.packets.put(copy);
                self.schedule_arrival(dir, arrive, copy);
            }
        }
        self.schedule_arrival(dir, arrive, pkt);
    }

    /// Schedules the arrival of the datagram in slot `pkt` at the far end of `dir` at `at`: in
    /// the direction's lane if it does not overtake a datagram before it, else on its own.
    #[inline(always)]
    fn schedule_arrival(&mut self, dir: u32, at: Time, pkt: u32) {
        if self.events.push_in_lane(dir, at, pkt).is_err() {
            self.packets.set_dir(pkt, dir);
            self.events.push(at, EventKind::Arrive(pkt));
        }
    }

    /// The datagram in slot `pkt`, whose arrival was scheduled on its own, reaches the far end
    /// of its link direction: see [`Net::arrive`].
    pub(crate) fn arrive_alone(&mut self, pkt: u32) -> Arrival {
        let dir = self.packets.dir(pkt);
        self.arrive(dir, pkt)
    }

    /// The datagram in slot `pkt` reaches the far end of link direction `dir`. Routers forward
    /// it; for a host, returns the agent to hand it to.
    // Always inlined (into the run loop): a router's plain hop makes no call.
    #[inline(always)]
    pub(crate) fn arrive(&mut self, dir: u32, pkt: u32) -> Arrival {
        match self.plain_arrival(dir, pkt) {
            Some(Plain::Forward { out, wire }) => {
                let fate = PacketFate::Forwarded;
                note(&mut self.trace, &self.packets, self.now, dir, fate, pkt);
                self.enqueue_sized(out, pkt, wire);
                Arrival::None
            }
            Some(Plain::Deliver { agent, iface }) => {
                let fate = PacketFate::Delivered;
                note(&mut self.trace, &self.packets, self.now, dir, fate, pkt);
                Arrival::Agent(agent, Call::Packet(IfaceIdx(iface), pkt))
            }
            None => self.arrive_checked(dir, pkt),
        }
    }

    /// A plain arrival: what becomes of the datagram in slot `pkt` reaching the far end of
    /// `dir` when nothing can drop it there ([`LinkDir::arrives_plain`]: the direction is
    /// plain and the receiving interface is up) and it has somewhere to go (a router has a route for it; a
    /// host owns its address and has an agent on its port). What [`Net::arrive_checked`]
    /// would decide, without its checks; `None` otherwise.
    #[inline(always)]
    fn plain_arrival(&self, dir: u32, pkt: u32) -> Option<Plain> {
        #[cfg(test)]
        if self.checked_only {
            return None;
        }
        let d = self.dirs.get(dir as usize)?;
        if !d.arrives_plain {
            return None;
        }
        let node = d.to_node as usize;
        let p = self.packets.get(pkt)?;
        let ai = self.routing.index_of(p.dst.addr)?;
        if d.to_router {
            let out = *self.routing.tables.get(node)?.get(ai as usize)?;
            return (out != NO_ROUTE).then(|| Plain::Forward {
                out,
                wire: self.wire_size(p),
            });
        }
        if self.routing.owners.get(ai as usize)?.0 as usize != node {
            return None;
        }
        let agent = self.nodes.get(node)?.agent_on(p.dst.port)?;
        Some(Plain::Deliver {
            agent,
            iface: d.to_iface,
        })
    }

    /// [`Net::arrive`] in general: impairments, then forwarding or delivery.
    #[inline(never)]
    fn arrive_checked(&mut self, dir: u32, pkt: u32) -> Arrival {
        let now = self.now;
        let d = &self.dirs[dir as usize];
        let node = d.to_node as usize;
        let iface = d.to_iface;
        let iface_up = self.nodes[node].ifaces[iface as usize].up;
        let corrupted = if iface_up && d.plain {
            false
        } else {
            match self.impair(dir, iface_up, pkt) {
                Impaired::Clean => false,
                Impaired::Corrupted => true,
                Impaired::Dropped(fate) => {
                    note(&mut self.trace, &self.packets, now, dir, fate, pkt);
                    self.release(pkt);
                    return Arrival::None;
                }
            }
        };
        let Some(dst) = self.packets.get(pkt).map(|p| p.dst) else {
            return Arrival::None;
        };
        let ai = self.routing.index_of(dst.addr);
        let n = &self.nodes[node];
        if n.is_router {
            let out = ai
                .and_then(|ai| self.routing.tables[node].get(ai as usize).copied())
                .unwrap_or(NO_ROUTE);
            if out == NO_ROUTE {
                self.misrouted += 1;
                let fate = PacketFate::Misrouted;
                note(&mut self.trace, &self.packets, now, dir, fate, pkt);
                self.release(pkt);
            } else {
                let fate = PacketFate::Forwarded;
                note(&mut self.trace, &self.packets, now, dir, fate, pkt);
                self.enqueue(out, pkt);
            }
            return Arrival::None;
        }
        let mine = ai.is_some_and(|ai| self.routing.owners[ai as usize].0 as usize == node);
        let agent = n.agent_on(dst.port);
        let fate = match agent {
            Some(_) if mine && corrupted => PacketFate::Corrupted,
            Some(_) if mine => PacketFate::Delivered,
            _ if corrupted => PacketFate::Lost,
            _ => PacketFate::Misrouted,
        };
        note(&mut self.trace, &self.packets, now, dir, fate, pkt);
        match agent {
            Some(a) if mine && corrupted => {
                Arrival::Agent(a, Call::Corrupted(IfaceIdx(iface), pkt))
            }
            Some(a) if mine => Arrival::Agent(a, Call::Packet(IfaceIdx(iface), pkt)),
            _ if corrupted => {
                self.release(pkt);
                Arrival::None
            }
            _ => {
                self.misrouted += 1;
                self.release(pkt);
                Arrival::None
            }
        }
    }

    /// What the impairments of `dir` (and the receiving interface, `iface_up`) do to the
    /// datagram in slot `pkt` arriving now: the full check that a plain direction
    /// ([`LinkDir::plain`]) skips.
    fn impair(&mut self, dir: u32, iface_up: bool, pkt: u32) -> Impaired {
        let now = self.now;
        let d = &mut self.dirs[dir as usize];
        let drop = if iface_up {
            d.imp.arrival_drop()
        } else {
            Some(DropCause::Outage)
        };
        let payload = self.packets.get(pkt).map_or(&[][..], |p| &p.payload);
        let mut listed = || {
            d.segment_drop
                .as_mut()
                .is_some_and(|s| s.should_drop(payload))
        };
        let drop = drop.or_else(|| listed().then_some(DropCause::Corruption));
        if drop != Some(DropCause::Outage) {
            if let Some(m) = d.meter.as_mut() {
                m.record(now, drop.is_some());
            }
        }
        let Some(cause) = drop else {
            return Impaired::Clean;
        };
        d.stats.impairment_drops += 1;
        if cause == DropCause::Outage {
            Impaired::Dropped(PacketFate::OutageDrop)
        } else if !d.wireless || self.nodes[d.to_node as usize].is_router {
            Impaired::Dropped(PacketFate::Lost)
        } else {
            Impaired::Corrupted
        }
    }

    /// Link facts for `node`'s interface `iface`: loss is the larger of the two directions'
    /// random loss (the model's long-run value, or measured over a sliding window when the link
    /// says `link_info = { window = … }`), PER, delay and bandwidth are those of the incoming direction, the
    /// channel is bad if either direction is in a blackout or a Gilbert–Elliott bad state.
    pub(crate) fn link_info(&self, node: u32, iface: IfaceIdx) -> Option<LinkInfo> {
        let i = self.nodes[node as usize].ifaces.get(iface.0 as usize)?;
        let out = &self.dirs[i.out as usize];
        let inc = &self.dirs[(i.out ^ 1) as usize];
        let per = inc.reported_loss();
        Some(LinkInfo {
            wireless: out.wireless,
            loss_prob: per.max(out.reported_loss()),
            per,
            one_way_delay: Duration::from_nanos(inc.delay_ns),
            bandwidth_bps: inc.chan.rate_bps(),
            channel: if inc.imp.channel_bad() || out.imp.channel_bad() {
                ChannelState::Bad
            } else {
                ChannelState::Good
            },
            up: i.up && inc.imp.up && out.imp.up,
            handoffs: i.handoffs,
        })
    }

    /// Counts a profile change on both ends of link direction pair `dir`.
    fn count_handoff(&mut self, dir: usize) {
        for d in [dir, dir ^ 1] {
            let (node, iface) = (self.dirs[d].to_node as usize, self.dirs[d].to_iface);
            if let Some(i) = self.nodes[node].ifaces.get_mut(iface as usize) {
                i.handoffs = i.handoffs.saturating_add(1);
            }
        }
    }

    /// Applies a scenario `[[event]]`.
    pub(crate) fn apply(&mut self, ev: &EventSpec) {
        match &ev.action {
            EventAction::Link {
                link,
                forward,
                reverse,
                change,
            } => {
                let dirs = [(*forward, 2 * link), (*reverse, 2 * link + 1)];
                for (on, dir) in dirs {
                    if !on {
                        continue;
                    }
                    let now = self.now;
                    self.dirs[dir].apply_change(now, change);
                }
                if change.rate.is_some() || change.delay.is_some() {
                    self.count_handoff(2 * link);
                }
            }
            EventAction::Iface { node, iface, up } => {
                if let Some(i) = self.nodes[*node].ifaces.get_mut(*iface as usize) {
                    if *up && !i.up {
                        i.handoffs = i.handoffs.saturating_add(1);
                    }
                    i.up = *up;
                    for d in &mut self.dirs {
                        if d.to_node as usize == *node && d.to_iface == *iface {
                            d.to_iface_up = *up;
                            d.refresh_plain();
                        }
                    }
                }
            }
        }
    }
}

/// An agent's view of the network while it is being called.
struct Ctx<'a> {
    net: &'a mut Net,
    node: u32,
    rng: &'a mut ChaCha8Rng,
}

impl NetCtx for Ctx<'_> {
    fn now(&self) -> Time {
        self.net.now
    }

    fn send(&mut self, iface: IfaceIdx, packet: Packet) {
        let Some(i) = self.net.nodes[self.node as usize]
            .ifaces
            .get(iface.0 as usize)
        else {
            self.net.recycle(packet);
            return;
        };
        let (out, up) = (i.out, i.up);
        self.net.send_on(out, up, packet);
    }

    /// [`NetCtx::send_counted`] in one step: one look at the interface, no further calls.
    fn send_counted(
        &mut self,
        flow: FlowIdx,
        (iface, port): (IfaceIdx, u16),
        dst: SockAddr,
        payload: Vec<u8>,
    ) -> bool {
        #[cfg(test)]
        if self.net.checked_only {
            return crate::agent::send_counted_by_parts(self, flow, (iface, port), dst, payload);
        }
        let net = &mut *self.net;
        let Some(i) = net.nodes[self.node as usize].ifaces.get(iface.0 as usize) else {
            net.keep_spare(payload);
            return false;
        };
        let Some(addr) = i.addr else {
            net.keep_spare(payload);
            return false;
        };
        let (out, up) = (i.out, i.up);
        let c = match net.counters.get_mut(flow.0) {
            Some(c) => c,
            None => &mut net.scratch,
        };
        c.datagrams_sent += 1;
        c.transport_bytes_sent += payload.len() as u64;
        let packet = Packet {
            src: SockAddr { addr, port },
            dst,
            payload,
            flow: Some(flow),
        };
        net.send_on(out, up, packet);
        true
    }

    fn buffer(&mut self) -> Vec<u8> {
        self.net
            .spare_buffers
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(NEW_BUFFER_CAPACITY))
    }

    fn give_back(&mut self, buf: Vec<u8>) {
        self.net.keep_spare(buf);
    }

    fn local_addr(&self, iface: IfaceIdx) -> Option<Addr> {
        self.net.nodes[self.node as usize]
            .ifaces
            .get(iface.0 as usize)
            .and_then(|i| i.addr)
    }

    fn counters(&mut self, flow: FlowIdx) -> &mut FlowCounters {
        if flow.0 < self.net.counters.len() {
            &mut self.net.counters[flow.0]
        } else {
            &mut self.net.scratch
        }
    }

    fn rng(&mut self) -> &mut ChaCha8Rng {
        self.rng
    }

    fn link_info(&self, iface: IfaceIdx) -> Option<LinkInfo> {
        self.net.link_info(self.node, iface)
    }
}

/// An agent and its bookkeeping.
pub(crate) struct AgentSlot {
    pub agent: Box<dyn Agent>,
    pub node: u32,
    pub rng: ChaCha8Rng,
    /// Earliest timer event queued for this agent.
    pub pending: Option<Time>,
    /// Flow index.
    pub flow: u32,
}

/// What to call on an agent.
#[derive(Debug)]
pub(crate) enum Call {
    Start,
    /// The datagram in this slot of [`Net::packets`] arrived.
    Packet(IfaceIdx, u32),
    Timer,
    LinkChange(IfaceIdx),
    /// The datagram in this slot of [`Net::packets`] arrived corrupted.
    Corrupted(IfaceIdx, u32),
}

/// Calls an agent, then queues a timer event if its deadline moved earlier than the one pending.
#[inline]
pub(crate) fn call_agent(net: &mut Net, slot: &mut AgentSlot, index: u32, call: Call) {
    let now = net.now;
    let timer_call = matches!(call, Call::Timer);
    {
        let mut ctx = Ctx {
            net: &mut *net,
            node: slot.node,
            rng: &mut slot.rng,
        };
        match call {
            Call::Start => slot.agent.start(&mut ctx),
            Call::Packet(iface, pkt) => {
                if let Some(pkt) = ctx.net.packets.take(pkt) {
                    slot.agent.on_packet(iface, &pkt, &mut ctx);
                    ctx.net.recycle(pkt);
                }
            }
            Call::Timer => slot.agent.on_timer(&mut ctx),
            Call::LinkChange(iface) => slot.agent.on_link_change(iface, &mut ctx),
            Call::Corrupted(iface, pkt) => {
                if let Some(pkt) = ctx.net.packets.take(pkt) {
                    slot.agent.on_corrupted(iface, &pkt, &mut ctx);
                    ctx.net.recycle(pkt);
                }
            }
        }
    }
    arm_timer(net, slot, index, now, timer_call);
}

/// Queues a timer event for the agent's current deadline if none as early is pending. A
/// deadline that is still due right after `on_timer` ran is moved 1 ns on, so that an agent
/// that does not advance its timer cannot stall virtual time.
pub(crate) fn arm_timer(
    net: &mut Net,
    slot: &mut AgentSlot,
    index: u32,
    now: Time,
    after_timer: bool,
) {
    let Some(t) = slot.agent.next_timer() else {
        return;
    };
    let t = if t <= now {
        if after_timer {
            now + Duration::from_nanos(1)
        } else {
            now
        }
    } else {
        t
    };
    if !matches!(slot.pending, Some(p) if p <= t) {
        slot.pending = Some(t);
        net.events.push(t, EventKind::AgentTimer(index));
    }
}
