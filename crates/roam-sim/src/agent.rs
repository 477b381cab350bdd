//! Agents: the transport endpoints and traffic sources that live on simulated hosts.
//!
//! An agent is bound to one host and one port. The simulator calls it when it starts, when a
//! datagram arrives for its port, and when its timer expires; the agent answers by sending
//! datagrams through [`NetCtx`]. Protocol agents wrap a sans-IO engine from `roam-proto` and
//! hand it the datagram bytes exactly as they crossed the simulated links.

use roam_proto::Time;

/// Index of a simulated host's network interface, local to that host (0, 1, … in the order
/// the scenario attaches links to the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IfaceIdx(pub u32);

/// A simulated interface address (one per host interface; routers' interfaces have none that
/// agents use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub u32);

/// An address plus a port: where a datagram goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SockAddr {
    /// Interface address.
    pub addr: Addr,
    /// Port on that host.
    pub port: u16,
}

/// Index of a flow in the run's flow table (scenario order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowIdx(pub usize);

/// A datagram as it travels through the simulated network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Sender's address and port.
    pub src: SockAddr,
    /// Destination address and port.
    pub dst: SockAddr,
    /// The datagram bytes (what a UDP socket would carry).
    pub payload: Vec<u8>,
    /// Flow this packet belongs to (for per-flow accounting on links), if any.
    pub flow: Option<FlowIdx>,
}

/// Counters an agent updates for its flow; the simulator turns them into a
/// [`crate::result::FlowResult`] at the end of the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowCounters {
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Time the receiving application got the last byte of a sized flow (and the connection
    /// closed), if it did.
    pub completed_at: Option<Time>,
    /// The first failure either end reported, and when.
    pub failure: Option<(Time, crate::result::FlowFailure)>,
    /// Data segments retransmitted.
    pub retransmitted_segments: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Loss-recovery episodes entered (see [`crate::result::FlowResult::recoveries`]).
    pub recoveries: u64,
    /// Losses excused as wireless (see [`crate::result::FlowResult::wireless_excused`]).
    pub wireless_excused: u64,
    /// Datagrams sent by this flow's endpoints (both directions).
    pub datagrams_sent: u64,
    /// Transport bytes (whole datagrams) sent by this flow's endpoints (both directions).
    pub transport_bytes_sent: u64,
    /// Delivered bytes that differ from what the sender wrote (must stay zero).
    pub integrity_errors: u64,
    /// Radio time of the receiver's interface, when metered (energy accounting).
    pub radio: Option<crate::energy::RadioMeter>,
    /// Delay and jitter of a media flow (RCP-ATL / rate AIMD), set by its receiver.
    pub media: Option<crate::result::MediaResult>,
    /// An R²CP flow's scheduling overhead, set by its receiver.
    pub multipath: Option<crate::result::MultipathResult>,
}

impl FlowCounters {
    /// Records that an end of the flow's connection failed at `at`, unless the flow already
    /// completed or failed.
    pub fn fail(&mut self, at: Time, why: crate::result::FlowFailure) {
        if self.completed_at.is_none() && self.failure.is_none() {
            self.failure = Some((at, why));
        }
    }
}

/// What an agent reports when the simulator samples the time series (once per bin).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentSample {
    /// Congestion window in bytes, if this agent has one.
    pub cwnd_bytes: Option<u64>,
    /// Highest cumulatively acknowledged sequence number, if this agent has one.
    pub seq: Option<u64>,
}

/// The services the simulator offers an agent while it runs.
pub trait NetCtx {
    /// Current virtual time.
    fn now(&self) -> Time;
    /// Sends `packet` out of local interface `iface`. Fails silently (counted as a drop) if the
    /// interface does not exist or is down, as a real `sendto` on a dead interface would.
    fn send(&mut self, iface: IfaceIdx, packet: Packet);
    /// An empty buffer to write an outgoing datagram into: one whose datagram the simulator
    /// has finished with (delivered or dropped) when it has one, so that a run in steady
    /// state does not allocate per packet.
    fn buffer(&mut self) -> Vec<u8>;
    /// Hands back a buffer from [`NetCtx::buffer`] that was not sent after all.
    fn give_back(&mut self, buf: Vec<u8>);
    /// The address of this host's interface `iface`, if it exists.
    fn local_addr(&self, iface: IfaceIdx) -> Option<Addr>;
    /// This run's counters for `flow`.
    fn counters(&mut self, flow: FlowIdx) -> &mut FlowCounters;
    /// Sends `payload` from local interface `iface`, port `port`, to `dst` as one of `flow`'s
    /// datagrams, counted in the flow's counters (datagrams and transport bytes sent). When the
    /// interface has no address the buffer is handed back ([`NetCtx::give_back`]), nothing is
    /// counted and this returns false. The same as [`NetCtx::local_addr`], then
    /// [`NetCtx::counters`], then [`NetCtx::send`], which is what it does unless the simulator
    /// does it in one step.
    fn send_counted(
        &mut self,
        flow: FlowIdx,
        (iface, port): (IfaceIdx, u16),
        dst: SockAddr,
        payload: Vec<u8>,
    ) -> bool {
        send_counted_by_parts(self, flow, (iface, port), dst, payload)
    }
    /// This agent's own random stream (seeded from the run seed and the agent's identity, so
    /// adding an agent does not perturb the others).
    fn rng(&mut self) -> &mut rand_chacha::ChaCha8Rng;
    /// What the simulator's link model says about the link on local interface `iface` (the
    /// host supplies this to engines as `roam_proto::linkinfo::LinkInfo`), if it exists.
    fn link_info(&self, iface: IfaceIdx) -> Option<roam_proto::linkinfo::LinkInfo>;
}

/// [`NetCtx::send_counted`] as [`NetCtx::local_addr`], [`NetCtx::counters`] and
/// [`NetCtx::send`].
pub(crate) fn send_counted_by_parts<C: NetCtx + ?Sized>(
    ctx: &mut C,
    flow: FlowIdx,
    (iface, port): (IfaceIdx, u16),
    dst: SockAddr,
    payload: Vec<u8>,
) -> bool {
    let Some(addr) = ctx.local_addr(iface) else {
        ctx.give_back(payload);
        return false;
    };
    let c = ctx.counters(flow);
    c.datagrams_sent += 1;
    c.transport_bytes_sent += payload.len() as u64;
    let src = SockAddr { addr, port };
    let flow = Some(flow);
    ctx.send(
        iface,
        Packet {
            src,
            dst,
            payload,
            flow,
        },
    );
    true
}

/// A transport endpoint or traffic source on a simulated host.
pub trait Agent {
    /// Called once, at the agent's start time.
    fn start(&mut self, ctx: &mut dyn NetCtx);
    /// A datagram for this agent's port arrived on local interface `iface`. The simulator
    /// reuses its buffer once the call returns.
    fn on_packet(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx);
    /// The agent's timer (as last reported by [`Agent::next_timer`]) expired. Spurious calls
    /// must be harmless.
    fn on_timer(&mut self, ctx: &mut dyn NetCtx);
    /// When the agent next wants [`Agent::on_timer`]; queried after every call into the agent.
    fn next_timer(&self) -> Option<Time>;
    /// A snapshot for the per-bin time series.
    fn sample(&self) -> AgentSample {
        AgentSample::default()
    }
    /// Something about the link on local interface `iface` changed (Gilbert–Elliott state,
    /// blackout start or end, a scheduled rate/delay/loss change, interface or link up/down);
    /// [`NetCtx::link_info`] has the new facts. Does nothing by default.
    fn on_link_change(&mut self, iface: IfaceIdx, ctx: &mut dyn NetCtx) {
        let _ = (iface, ctx);
    }
    /// A datagram for this agent arrived on local interface `iface` over a wireless hop but was
    /// corrupted (random or Gilbert–Elliott loss): the payload is unusable as data, but a real
    /// wireless driver still knows a frame for this flow was lost, and the transport header
    /// usually survives (TCP-HACK's observation) — the basis of ELN (rcp-r2cp.txt §3.4.2,
    /// ptcp.txt §5.2.5). Not called for blackouts, down interfaces or wired links. Does
    /// nothing by default.
    fn on_corrupted(&mut self, iface: IfaceIdx, packet: &Packet, ctx: &mut dyn NetCtx) {
        let _ = (iface, packet, ctx);
    }
}
