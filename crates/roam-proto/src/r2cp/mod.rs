//! R²CP, Radial RCP (rcp-r2cp.txt §4): the multi-state extension of RCP at the receiver. One
//! connection — one receive buffer, one reliability state — requests one object through
//! several RCP receiver pipes, one per (local interface, server) pair, created and deleted at
//! run time; each pipe runs its own congestion control in its own local sequence space
//! ([`crate::rcp::ReceiverPipe`], the same code single-path RCP runs), and the engine binds
//! global ranges to pipe requests by rank (the arrival-time order of Fig. 8), reassigns the
//! holes a pipe detects to pipes with window space, and enforces an optional token-bucket
//! policy. Senders are unchanged RCP senders. Design: `docs/R2CP.md`.

mod binding;
mod estimate;
mod flow;
mod hol;
mod policy;
mod ranges;
mod rank;
mod receiver;
pub mod reopen;
mod slot;

pub use binding::Binding;
pub use hol::{admits, delay_budget, hole_rescue, PathView, MAX_DELAY_BUDGET};
pub use policy::{TokenBucket, TokenPolicy};
pub use ranges::RangeSet;
pub use rank::{skip_bytes, PipeRate};
pub use receiver::{PipeInfo, R2cpReceiver, R2cpStats};
pub use slot::PipeState;

use roam_wire::ConnId;

use crate::endpoint::PathId;
use crate::rcp::RcpCc;

/// A pipe's name within its connection (chosen by the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PipeId(pub u32);

/// A pipe's role under a [`TokenPolicy`] (§4.4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PipeRole {
    /// Takes tokens whenever its window has room.
    #[default]
    Primary,
    /// Takes only the tokens the primary pipes leave.
    Secondary,
}

/// How the engine assigns data to requests (§4.4.3's three approaches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// R²CP: by rank, the estimated arrival order (§4.3.1).
    #[default]
    Rank,
    /// R²CP-s: first come, first served (the next unbound data to each request).
    Fcfs,
    /// APPS: application striping over independent RCP connections (stripes dealt round
    /// robin, a receive buffer per connection, losses repaired only where they happened).
    Apps {
        /// Stripe size (bytes).
        stripe: u64,
    },
}

impl Scheme {
    /// Name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Rank => "r2cp",
            Scheme::Fcfs => "r2cp-s",
            Scheme::Apps { .. } => "apps",
        }
    }
}

/// How a host asks for a pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipeSpec {
    /// Its name.
    pub id: PipeId,
    /// The RCP connection id its datagrams carry (unique per pipe).
    pub conn_id: ConnId,
    /// The host's path (local address, server address) its datagrams leave by.
    pub path: PathId,
    /// Role under a policy.
    pub role: PipeRole,
    /// Its congestion controller.
    pub cc: RcpCc,
}

/// How a pipe is deleted (§2.2.1, §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Make-before-break: no new requests; deleted once its outstanding requests are answered.
    Drain,
    /// Break-before-make: deleted now; everything it had outstanding is reassigned.
    Break,
}

/// What an R²CP receiver tells its application and host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum R2cpEvent {
    /// The first pipe completed its handshake; its sender reported the object's length.
    Connected {
        /// Object length (if bounded).
        object_len: Option<u64>,
    },
    /// A pipe completed its handshake.
    PipeUp(PipeId),
    /// A pipe failed (no handshake answer, reset by its sender, or its sender stopped
    /// answering); what it had outstanding was reassigned.
    PipeFailed(PipeId),
    /// A pipe was deleted (drained, broken, or torn down at the end).
    PipeClosed(PipeId),
    /// Every byte of the requested range arrived.
    Eof,
    /// Every pipe is closed after [`R2cpEvent::Eof`].
    Closed,
}

/// Errors of the host-facing API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum R2cpError {
    /// The configuration is unusable.
    #[error("config: {0}")]
    Config(#[from] crate::rcp::RcpConfigError),
    /// The range ends before it starts.
    #[error("range: end before start")]
    Range,
    /// A pipe with this id or connection id exists already.
    #[error("pipe {0:?}: id or connection id already in use")]
    DuplicatePipe(PipeId),
    /// The datagram could not be decoded as a DATA.
    #[error("datagram: {0}")]
    Datagram(#[from] roam_wire::DecodeError),
    /// The datagram is a DATA for none of this connection's pipes.
    #[error("datagram: foreign connection id")]
    ForeignConnection,
}
