//! The endpoint's accept policy and counters: caps on connections per peer and overall, the
//! memory bound, idle expiry and the reset budget (see `docs/ENDPOINT.md`).

use std::time::Duration;

use crate::rcp::ResetLimiter;

/// Limits of one endpoint. The defaults suit a server on an open network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// Connections held at most (accepted and inserted together); accepting beyond it is
    /// refused.
    pub max_connections: usize,
    /// Accepted connections per peer host at most (per peer address unless the host groups
    /// addresses: [`Endpoint::set_host_of`](super::Endpoint::set_host_of)); well below
    /// `max_connections`, so that one host cannot lock the others out.
    pub max_per_peer: usize,
    /// Sum of the connections' [`memory_bound`](super::EndpointConnection::memory_bound) at
    /// most, in bytes; a connection that would exceed it is refused.
    pub max_memory: usize,
    /// A connection that receives nothing for this long is expired (removed); `None` leaves
    /// idleness to the engines.
    pub idle_timeout: Option<Duration>,
    /// Resets sent a second at most (a token bucket, [`ResetLimiter`]); 0 means no limit.
    pub resets_per_second: u32,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            max_connections: 4096,
            max_per_peer: 64,
            max_memory: 1 << 30,
            idle_timeout: Some(Duration::from_secs(60)),
            resets_per_second: ResetLimiter::DEFAULT_PER_SECOND,
        }
    }
}

/// Why the endpoint did not take a connection the acceptor offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// [`EndpointConfig::max_connections`] reached.
    Overall,
    /// [`EndpointConfig::max_per_peer`] reached for this peer host.
    PerPeer,
    /// [`EndpointConfig::max_memory`] would be exceeded.
    Memory,
    /// One of its connection ids is already held by another connection.
    ConnIdInUse,
}

/// What the endpoint did with the datagrams and connections it saw. Every datagram that is
/// not delivered to a connection is counted in exactly one of the `dropped_*` or reply
/// counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams delivered to a connection.
    pub delivered: u64,
    /// Datagrams too short to carry a connection id.
    pub dropped_malformed: u64,
    /// Datagrams for a known connection id from an address (or to a local address) that is
    /// not one of that connection's paths.
    pub dropped_wrong_source: u64,
    /// Datagrams for no connection that the acceptor dropped.
    pub dropped_unknown: u64,
    /// Handshake replies the acceptor wrote that were larger than the datagram that caused
    /// them (never sent: no amplification).
    pub dropped_oversized_reply: u64,
    /// Stateless handshake replies sent.
    pub replies: u64,
    /// Resets sent.
    pub resets_sent: u64,
    /// Resets the budget suppressed.
    pub resets_suppressed: u64,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections refused because of [`Refusal::Overall`].
    pub refused_overall: u64,
    /// Connections refused because of [`Refusal::PerPeer`].
    pub refused_per_peer: u64,
    /// Connections refused because of [`Refusal::Memory`].
    pub refused_memory: u64,
    /// Connections refused because of [`Refusal::ConnIdInUse`].
    pub refused_conn_id: u64,
    /// Connections removed because they drained.
    pub drained: u64,
    /// Connections removed because they were idle for [`EndpointConfig::idle_timeout`].
    pub expired: u64,
    /// Silent connections a new connection of the same host displaced at the host's share
    /// (removed with [`RemoveReason::Expired`](super::RemoveReason::Expired)).
    pub evicted: u64,
    /// Datagrams a connection wrote for a path the host has not mapped (not sent).
    pub unroutable: u64,
    /// Pipes joined to a connection held ([`crate::endpoint::Acceptor::join_target`]).
    pub joined: u64,
}

impl EndpointStats {
    /// Counts one refusal.
    pub(super) fn refuse(&mut self, why: Refusal) {
        let n = match why {
            Refusal::Overall => &mut self.refused_overall,
            Refusal::PerPeer => &mut self.refused_per_peer,
            Refusal::Memory => &mut self.refused_memory,
            Refusal::ConnIdInUse => &mut self.refused_conn_id,
        };
        *n += 1;
    }
}
