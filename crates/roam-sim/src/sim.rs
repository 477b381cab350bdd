//! The event loop: links, nodes and agents driven by one event queue in virtual time.

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use roam_proto::linkinfo::{ChannelState, LinkInfo};
use roam_proto::Time;

use crate::agent::{Addr, Agent, FlowCounters, FlowIdx, IfaceIdx, NetCtx, Packet};
use crate::event::{EventKind, EventQueue};
use crate::link::channel::{Offer, Queued};
use crate::link::impairment::DropCause;
use crate::link::LinkDir;
use crate::scenario::{EventAction, EventSpec};
use crate::trace::{PacketFate, TraceBuffer};
use crate::world::{Routing, NO_ROUTE};

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
    /// Pending events; lane `d` holds link direction `d`'s packets that arrive in order.
    pub events: EventQueue<Packet>,
    pub dirs: Vec<LinkDir>,
    pub nodes: Vec<NodeRt>,
    pub routing: Routing,
    /// Packets on the wire that overtook another (their direction's lane refused them):
    /// (link direction, packet), by the slot an `Arrive` event names.
    inflight: Vec<Option<(u32, Packet)>>,
    free: Vec<u32>,
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
}

/// Records what happened to `pkt` at `dir`, if the run is traced.
fn note(trace: &mut Option<TraceBuffer>, now: Time, dir: u32, fate: PacketFate, pkt: &Packet) {
    if let Some(t) = trace.as_mut() {
        t.note(now, dir, fate, pkt);
    }
}

/// Most spare payload buffers kept (beyond this, finished datagrams' buffers are freed).
const MAX_SPARE_BUFFERS: usize = 4096;

/// Capacity of a new payload buffer: a full TCP segment with its header and options.
const NEW_BUFFER_CAPACITY: usize = 1600;

impl Net {
    pub(crate) fn new(
        dirs: Vec<LinkDir>,
        nodes: Vec<NodeRt>,
        routing: Routing,
        n_flows: usize,
        overhead: u32,
    ) -> Net {
        Net {
            now: Time::ZERO,
            events: EventQueue::with_lanes(dirs.len()),
            dirs,
            nodes,
            routing,
            inflight: Vec::new(),
            free: Vec::new(),
            departures: Vec::new(),
            counters: vec![FlowCounters::default(); n_flows],
            scratch: FlowCounters::default(),
            overhead,
            misrouted: 0,
            spare_buffers: Vec::new(),
            trace: None,
        }
    }

    /// Keeps the payload buffer of a datagram that was delivered or dropped, for reuse.
    pub(crate) fn recycle(&mut self, pkt: Packet) {
        self.keep_spare(pkt.payload);
    }

    fn keep_spare(&mut self, mut buf: Vec<u8>) {
        if self.spare_buffers.len() < MAX_SPARE_BUFFERS {
            buf.clear();
            self.spare_buffers.push(buf);
        }
    }

    /// Puts `pkt` into link direction `dir`'s queue (or straight onto the wire).
    pub(crate) fn enqueue(&mut self, dir: u32, pkt: Packet) {
        let wire =
            u32::try_from(pkt.payload.len() as u64 + u64::from(self.overhead)).unwrap_or(u32::MAX);
        let now = self.now;
        let d = &mut self.dirs[dir as usize];
        if let Some(done) = d.chan.start_if_idle(now, wire) {
            self.depart(dir, Queued { pkt, wire }, done);
            return;
        }
        // A queued packet is out of reach once offered: summarise it first when tracing.
        let queued = self
            .trace
            .as_ref()
            .and_then(|t| t.record(now, dir, PacketFate::Queued, &pkt));
        let offer = d.chan.offer(now, Queued { pkt, wire });
        if let (Offer::Queued { .. }, Some(t), Some(r)) = (&offer, self.trace.as_mut(), queued) {
            t.records.push(r);
        }
        match offer {
            Offer::Queued { wake: Some(t) } => self.events.push(t, EventKind::TxReady(dir)),
            Offer::Queued { wake: None } => {}
            Offer::Dropped(item) => {
                d.stats.queue_drops += 1;
                note(&mut self.trace, now, dir, PacketFate::QueueDrop, &item.pkt);
                self.recycle(item.pkt);
            }
        }
    }

    /// The transmitter of `dir` may take the next packet.
    pub(crate) fn tx_ready(&mut self, dir: u32) {
        let now = self.now;
        if let Some(woken) = self.dirs[dir as usize].chan.wake_rate(now) {
            if let Some((item, done)) = woken.departed {
                self.depart(dir, item, done);
            }
            if let Some(t) = woken.next {
                self.events.push(t, EventKind::TxReady(dir));
            }
            return;
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
        if let Some(t) = next {
            self.events.push(t, EventKind::TxReady(dir));
        }
    }

    #[inline]
    fn depart(&mut self, dir: u32, item: Queued, done: Time) {
        let d = &mut self.dirs[dir as usize];
        d.stats.packets_sent += 1;
        d.stats.bytes_sent += u64::from(item.wire);
        let dep = d.imp.on_depart();
        // Jitter delays a packet but keeps it behind the one before it (a FIFO link); the
        // reorder impairment's hold-back is added on top and may let later packets pass.
        let mut in_order = done + Duration::from_nanos(d.delay_ns.saturating_add(dep.jitter));
        if d.imp.jitter > 0 {
            in_order = in_order.max(d.last_arrival);
            d.last_arrival = in_order;
        }
        let arrive = in_order + Duration::from_nanos(dep.reorder);
        note(&mut self.trace, self.now, dir, PacketFate::Sent, &item.pkt);
        if dep.duplicate {
            note(
                &mut self.trace,
                self.now,
                dir,
                PacketFate::Duplicated,
                &item.pkt,
            );
            self.schedule_arrival(dir, arrive, item.pkt.clone());
        }
        self.schedule_arrival(dir, arrive, item.pkt);
    }

    /// Schedules `pkt`'s arrival at the far end of `dir` at `at`: in the direction's lane if it
    /// does not overtake a packet before it, else on its own.
    #[inline]
    fn schedule_arrival(&mut self, dir: u32, at: Time, pkt: Packet) {
        if let Err(pkt) = self.events.push_in_lane(dir, at, pkt) {
            let slot = self.store(dir, pkt);
            self.events.push(at, EventKind::Arrive(slot));
        }
    }

    fn store(&mut self, dir: u32, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.inflight[i as usize] = Some((dir, pkt));
                i
            }
            None => {
                self.inflight.push(Some((dir, pkt)));
                (self.inflight.len() - 1) as u32
            }
        }
    }

    /// The packet in in-flight `slot` reaches the far end of its link direction: see
    /// [`Net::arrive`].
    pub(crate) fn arrive_slot(&mut self, slot: u32) -> Arrival {
        let Some((dir, pkt)) = self.inflight.get_mut(slot as usize).and_then(Option::take) else {
            return Arrival::None;
        };
        self.free.push(slot);
        self.arrive(dir, pkt)
    }

    /// `pkt` reaches the far end of link direction `dir`. Routers forward it; for a host,
    /// returns the agent to hand it to.
    pub(crate) fn arrive(&mut self, dir: u32, pkt: Packet) -> Arrival {
        let now = self.now;
        let d = &self.dirs[dir as usize];
        let node = d.to_node as usize;
        let iface = d.to_iface;
        let iface_up = self.nodes[node].ifaces[iface as usize].up;
        let corrupted = if iface_up && d.plain {
            false
        } else {
            match self.impair(dir, iface_up, &pkt) {
                Impaired::Clean => false,
                Impaired::Corrupted => true,
                Impaired::Dropped(fate) => {
                    note(&mut self.trace, now, dir, fate, &pkt);
                    self.recycle(pkt);
                    return Arrival::None;
                }
            }
        };
        let ai = self.routing.index_of(pkt.dst.addr);
        let n = &self.nodes[node];
        if n.is_router {
            let out = ai
                .and_then(|ai| self.routing.tables[node].get(ai as usize).copied())
                .unwrap_or(NO_ROUTE);
            if out == NO_ROUTE {
                self.misrouted += 1;
                note(&mut self.trace, now, dir, PacketFate::Misrouted, &pkt);
                self.recycle(pkt);
            } else {
                note(&mut self.trace, now, dir, PacketFate::Forwarded, &pkt);
                self.enqueue(out, pkt);
            }
            return Arrival::None;
        }
        let mine = ai.is_some_and(|ai| self.routing.owners[ai as usize].0 as usize == node);
        let agent = n
            .ports
            .binary_search_by_key(&pkt.dst.port, |&(p, _)| p)
            .ok()
            .map(|i| n.ports[i].1);
        let fate = match agent {
            Some(_) if mine && corrupted => PacketFate::Corrupted,
            Some(_) if mine => PacketFate::Delivered,
            _ if corrupted => PacketFate::Lost,
            _ => PacketFate::Misrouted,
        };
        note(&mut self.trace, now, dir, fate, &pkt);
        match agent {
            Some(a) if mine && corrupted => {
                Arrival::Agent(a, Call::Corrupted(IfaceIdx(iface), pkt))
            }
            Some(a) if mine => Arrival::Agent(a, Call::Packet(IfaceIdx(iface), pkt)),
            _ if corrupted => {
                self.recycle(pkt);
                Arrival::None
            }
            _ => {
                self.misrouted += 1;
                self.recycle(pkt);
                Arrival::None
            }
        }
    }

    /// What the impairments of `dir` (and the receiving interface, `iface_up`) do to `pkt`
    /// arriving now: the full check that a plain direction ([`LinkDir::plain`]) skips.
    fn impair(&mut self, dir: u32, iface_up: bool, pkt: &Packet) -> Impaired {
        let now = self.now;
        let d = &mut self.dirs[dir as usize];
        let drop = if iface_up {
            d.imp.arrival_drop()
        } else {
            Some(DropCause::Outage)
        };
        let mut listed = || {
            d.segment_drop
                .as_mut()
                .is_some_and(|s| s.should_drop(&pkt.payload))
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
                    let d = &mut self.dirs[dir];
                    if let Some(rate) = change.rate {
                        d.chan.set_rate(now, rate);
                    }
                    if let Some(delay) = change.delay {
                        d.delay_ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
                    }
                    if let Some(loss) = change.loss {
                        d.imp.loss = loss;
                    }
                    if let Some(up) = change.up {
                        d.imp.up = up;
                    }
                    d.refresh_plain();
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
        let out = i.out;
        if i.up {
            self.net.enqueue(out, packet);
        } else {
            self.net.dirs[out as usize].stats.impairment_drops += 1;
            self.net.recycle(packet);
        }
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
    Packet(IfaceIdx, Packet),
    Timer,
    LinkChange(IfaceIdx),
    Corrupted(IfaceIdx, Packet),
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
                slot.agent.on_packet(iface, &pkt, &mut ctx);
                ctx.net.recycle(pkt);
            }
            Call::Timer => slot.agent.on_timer(&mut ctx),
            Call::LinkChange(iface) => slot.agent.on_link_change(iface, &mut ctx),
            Call::Corrupted(iface, pkt) => {
                slot.agent.on_corrupted(iface, &pkt, &mut ctx);
                ctx.net.recycle(pkt);
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
