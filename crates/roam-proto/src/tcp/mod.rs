//! The TCP-like reliable byte-stream engine: handshake and teardown, ordered delivery,
//! receive-window flow control, RFC 6298 timers, SACK (RFC 2018/6675) or NewReno (RFC 6582)
//! recovery, optional delayed ACKs, pluggable congestion control.
//!
//! The engine is sans-IO. The host drives a [`Connection`] like this:
//! 1. feed every datagram for the connection to [`Connection::handle_datagram`];
//! 2. call [`Connection::poll_transmit`] until it returns `None`, sending each datagram;
//! 3. arm a timer for [`Connection::poll_timeout`] and call [`Connection::handle_timeout`]
//!    when it fires (spurious calls are harmless);
//! 4. drain [`Connection::poll_event`]; read and write application data at any time.
//!
//! After steps 1, 3 or any application call, repeat 2–4.

mod acceptor;
mod config;
mod connection;
mod cookie;
mod endpoint;
mod estimated_facts;
mod initial_pacing;
mod last_link;
mod loss_rate;
mod pacing;
mod probing;
mod reassembly;
mod receiver;
mod scoreboard;
mod send_buffer;
mod sender;
mod sorted;

pub use acceptor::{AcceptorStats, TcpAcceptor};
pub use config::{Facts, RecoveryMode, TcpConfig, TcpConfigError};
pub use connection::{ConnStats, Connection, Event, OpenError, State, Transmit, MAX_ISN};
pub use last_link::{LastLinkConfig, LastLinkRtt, LastLinkTuning};
pub use loss_rate::RecentLossRate;
pub use probing::{ProbeCycle, ProbeDecision, ProbeHistory, ProbeTrigger, ProbingConfig};
pub use reassembly::Arrival;
pub use receiver::{ReceiveStream, Receiver, ReceiverPipe, StreamArrival};
pub use scoreboard::{Scoreboard, SentSegment};
pub use sender::{
    IdentityBinding, PipeAck, PipeAckInput, SendStream, Sender, SenderPipe, SenderStats,
    StreamOffer, TxSegment,
};
