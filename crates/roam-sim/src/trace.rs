//! Packet traces (opt-in): what happened to every datagram at every link direction — queued,
//! dropped by a full queue, put on the wire, lost to an impairment, delivered corrupted,
//! delivered, forwarded — with a one-line summary of the datagram ([`roam_wire::Summary`]).
//! [`crate::run_traced`] hands each record to a [`PacketObserver`]; `roam sim --trace` writes
//! them as CSV. Observing never changes the run: a traced run's result is the untraced one's.

use roam_proto::Time;

use crate::agent::{FlowIdx, Packet, SockAddr};

/// What happened to a datagram at a link direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketFate {
    /// Waits in the direction's queue.
    Queued,
    /// Dropped: the queue was full.
    QueueDrop,
    /// Starts transmission on the wire (serialisation, then propagation).
    Sent,
    /// The link duplicated it (a second copy travels).
    Duplicated,
    /// Reached the far end while the link, the receiving interface or the window was out
    /// (blackout, link or interface down).
    OutageDrop,
    /// Lost to the direction's random or Gilbert–Elliott loss, or listed in `drop_segments`.
    Lost,
    /// Lost on a wireless hop into its destination host, which is told (ELN's input).
    Corrupted,
    /// Handed to the agent it was addressed to.
    Delivered,
    /// Passed on by a router.
    Forwarded,
    /// No route, or addressed to nobody on the host it reached.
    Misrouted,
}

impl PacketFate {
    /// The name written in traces.
    pub fn name(self) -> &'static str {
        match self {
            PacketFate::Queued => "queued",
            PacketFate::QueueDrop => "queue_drop",
            PacketFate::Sent => "sent",
            PacketFate::Duplicated => "duplicated",
            PacketFate::OutageDrop => "outage_drop",
            PacketFate::Lost => "lost",
            PacketFate::Corrupted => "corrupted",
            PacketFate::Delivered => "delivered",
            PacketFate::Forwarded => "forwarded",
            PacketFate::Misrouted => "misrouted",
        }
    }
}

/// One record of a packet trace.
#[derive(Debug, Clone, Copy)]
pub struct PacketRecord<'a> {
    /// When.
    pub time: Time,
    /// Link direction, as `name:fwd` or `name:rev`.
    pub link: &'a str,
    /// What happened.
    pub fate: PacketFate,
    /// The flow the datagram belongs to, if any.
    pub flow: Option<&'a str>,
    /// Datagram length in bytes (without IP/UDP headers).
    pub bytes: usize,
    /// One-line summary of the datagram.
    pub summary: &'a str,
    /// Sender's simulated address and port.
    pub src: SockAddr,
    /// Destination's simulated address and port.
    pub dst: SockAddr,
    /// The datagram bytes, if the observer asked for them ([`PacketObserver::wants_payload`]).
    pub payload: Option<&'a [u8]>,
}

/// Receives a traced run's packet records, in time order.
pub trait PacketObserver {
    /// Called once per record.
    fn observe(&mut self, record: &PacketRecord<'_>);

    /// Whether this observer wants the records of `flow` (`None`: datagrams that belong to no
    /// flow). Asked once per flow before the run starts; records it does not want are never
    /// built, which saves summarising every datagram when only a few flows are traced.
    fn wants(&self, flow: Option<&str>) -> bool {
        let _ = flow;
        true
    }

    /// Whether records carry a copy of the datagram bytes ([`PacketRecord::payload`]). Asked
    /// once before the run starts; `false` by default (a copy per record costs memory and time).
    fn wants_payload(&self) -> bool {
        false
    }
}

/// The records a traced run has collected and not yet handed over, and which to collect.
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    /// Records in the order they happened.
    pub records: Vec<PendingRecord>,
    /// Per flow index: whether its datagrams are recorded.
    keep_flow: Vec<bool>,
    /// Whether datagrams of no flow are recorded.
    keep_unflowed: bool,
    /// Whether records keep a copy of the datagram bytes.
    keep_payload: bool,
}

impl TraceBuffer {
    /// Collects what `observer` wants of a run with these flow ids.
    pub(crate) fn for_observer<'a>(
        observer: &dyn PacketObserver,
        flow_ids: impl IntoIterator<Item = &'a str>,
    ) -> TraceBuffer {
        TraceBuffer {
            records: Vec::new(),
            keep_flow: flow_ids
                .into_iter()
                .map(|id| observer.wants(Some(id)))
                .collect(),
            keep_unflowed: observer.wants(None),
            keep_payload: observer.wants_payload(),
        }
    }

    /// Whether `pkt`'s records are collected.
    fn wants(&self, pkt: &Packet) -> bool {
        match pkt.flow {
            Some(f) => self.keep_flow.get(f.0).copied().unwrap_or(true),
            None => self.keep_unflowed,
        }
    }

    /// The record of what happened to `pkt` at `dir` at `time`, if its flow is wanted.
    pub(crate) fn record(
        &self,
        time: Time,
        dir: u32,
        fate: PacketFate,
        pkt: &Packet,
    ) -> Option<PendingRecord> {
        self.wants(pkt)
            .then(|| PendingRecord::of(time, dir, fate, pkt, self.keep_payload))
    }

    /// Records what happened to `pkt` at `dir` at `time`, if its flow is wanted.
    pub(crate) fn note(&mut self, time: Time, dir: u32, fate: PacketFate, pkt: &Packet) {
        if let Some(r) = self.record(time, dir, fate, pkt) {
            self.records.push(r);
        }
    }
}

/// A record as the simulator keeps it until the run loop hands it to the observer.
#[derive(Debug)]
pub(crate) struct PendingRecord {
    pub time: Time,
    pub dir: u32,
    pub fate: PacketFate,
    pub flow: Option<FlowIdx>,
    pub bytes: usize,
    pub summary: String,
    pub src: SockAddr,
    pub dst: SockAddr,
    pub payload: Option<Vec<u8>>,
}

impl PendingRecord {
    /// What happened to `pkt` at `dir` at `time`, with the datagram summarised now (its buffer
    /// may be reused or out of reach by the time the record is handed over), and its bytes
    /// copied if `keep_payload`.
    pub(crate) fn of(
        time: Time,
        dir: u32,
        fate: PacketFate,
        pkt: &Packet,
        keep_payload: bool,
    ) -> PendingRecord {
        PendingRecord {
            time,
            dir,
            fate,
            flow: pkt.flow,
            bytes: pkt.payload.len(),
            summary: roam_wire::Summary(&pkt.payload).to_string(),
            src: pkt.src,
            dst: pkt.dst,
            payload: keep_payload.then(|| pkt.payload.clone()),
        }
    }
}
