//! RCP, the Reception Control Protocol (rcp-r2cp.txt §3): a receiver-centric TCP clone.
//!
//! The receiver ([`RcpReceiver`]) drives everything: it opens the connection naming an object
//! and a byte range, requests data (REQ) in cumulative or pull mode, runs congestion control
//! on DATA arrivals with the same controllers a TCP sender uses ([`crate::cc::CcKind`]) or the
//! receiver-only RCP-STP ([`stp::Stp`]), detects and re-requests every hole, and controls
//! the flow by reserving buffer per request. Its congestion state lives in one
//! [`ReceiverPipe`], the unit R²CP instantiates per (interface, server); its wire state
//! (handshake, token echo, timers, recent pulls) is the same code every R²CP pipe keeps
//! (`request_wire.rs`; `docs/R2CP.md`, "RCP as the one-pipe case").
//!
//! The sender ([`RcpSender`]) serves byte ranges of named objects from an [`ObjectStore`] and
//! keeps no congestion state. A host opens senders through an [`RcpAcceptor`], which answers
//! SYNs without keeping state and opens a sender only for a receiver that echoed its
//! address-validation token (`docs/HANDSHAKE-RCP.md`); both engines implement
//! [`crate::endpoint::EndpointConnection`].
//!
//! Both are sans-IO, driven like the TCP engine (`handle_datagram`, `poll_transmit`,
//! `poll_timeout`, `handle_timeout`, `poll_event`). Design choices: `docs/RCP.md`.

mod acceptor;
mod config;
mod endpoint;
mod error;
pub(crate) mod estimated_facts;
mod host_reads;
mod pipe;
pub mod rate;
mod reassembly;
mod receiver;
mod request_wire;
mod reset_limit;
mod sender;
mod served_pulls;
pub mod stp;
mod token;

use std::fmt;
use std::str::FromStr;

pub use acceptor::RcpAcceptor;
pub use config::RcpConfig;
pub use error::{RcpConfigError, RcpError};
pub use host_reads::ReadRequest;
pub use pipe::{PipeStats, ReceiverPipe};
pub use reassembly::{RecvBuffer, DEFAULT_MAX_PIECES, PIECE_OVERHEAD};
pub use receiver::{RcpReceiver, ReceiverStats, RxState};
pub(crate) use request_wire::{
    echo_rtt, pipe_for, Arrival, ControlDue, ControlTimer, Phase, RequestWire,
};
pub use reset_limit::ResetLimiter;
pub use sender::{
    reset_for, ObjectStore, RcpSender, SenderStats, TxState, MAX_QUEUED_PULLS, UNBOUNDED,
};

use crate::cc::{CcKind, CongestionController};

/// What an RCP receiver tells its application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RcpEvent {
    /// The handshake completed; the sender reported the object's length (if bounded).
    Connected {
        /// Object length.
        object_len: Option<u64>,
    },
    /// Every byte of the requested range has arrived (read them, then the connection closes).
    Eof,
    /// The teardown completed.
    Closed,
    /// The sender reset the connection.
    Reset,
    /// The handshake failed (no answer to the SYN).
    Failed,
    /// The sender stopped answering: `max_retries` consecutive request timeouts passed with
    /// nothing arriving, and the connection gave up.
    TimedOut,
}

/// The congestion controller an RCP receiver pipe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RcpCc {
    /// One of the shared controllers (the same code TCP senders run).
    Shared(CcKind),
    /// RCP-STP (receiver only; satellite paths).
    Stp,
    /// RCP-Rate (receiver only): BBR's model at the receiver, requests paced ([`rate`]).
    Rate,
}

impl Default for RcpCc {
    fn default() -> Self {
        RcpCc::Shared(CcKind::default())
    }
}

impl RcpCc {
    /// Name used in scenario files (`newreno`, …, `stp`).
    pub fn name(self) -> &'static str {
        match self {
            RcpCc::Shared(k) => k.name(),
            RcpCc::Stp => "stp",
            RcpCc::Rate => "rate",
        }
    }

    /// Builds the controller for one pipe.
    pub fn build(self, mss: u64, initial_window: u32) -> Box<dyn CongestionController> {
        match self {
            RcpCc::Shared(k) => k.build(mss, initial_window),
            RcpCc::Stp => Box::new(stp::Stp::new(mss, initial_window)),
            RcpCc::Rate => Box::new(rate::RateRx::new(mss, initial_window)),
        }
    }

    /// True if the pipe paces its requests at the controller's pacing rate (only RCP-Rate:
    /// the shared controllers run window-only at a receiver, as before it existed).
    pub fn paces_requests(self) -> bool {
        self == RcpCc::Rate
    }
}

impl fmt::Display for RcpCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RcpCc {
    type Err = crate::cc::UnknownCc;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("stp") {
            return Ok(RcpCc::Stp);
        }
        if s.trim().eq_ignore_ascii_case("rate") {
            return Ok(RcpCc::Rate);
        }
        s.parse::<CcKind>().map(RcpCc::Shared).map_err(|mut e| {
            e.known.push_str(", stp, rate");
            e
        })
    }
}
