//! pTCP (ptcp.txt): one connection striped over several TCP-v pipes by the sender, which binds
//! stream data to a pipe's sequence numbers only when the pipe's window has room.
//!
//! Built so far: the bindings table ([`Bindings`]: delayed binding, unbinding beyond a shrunk
//! window, redundant striping after a timeout); the sending end ([`PtcpSender`]: the TCP-like
//! engine's [`crate::tcp::SenderPipe`]s, one per path with its own controller, under one
//! [`crate::tcp::SendStream`]) and the receiving end ([`PtcpReceiver`]: one
//! [`crate::tcp::ReceiveStream`], per pipe a [`crate::tcp::ReceiverPipe`] and a
//! [`PipeRecord`]), sans-IO; connection management (§4.4: the pipes' SYN/FIN carrying the
//! pTCP handshake, stateless SYN cookies) and endpoint integration ([`PtcpAcceptor`], and
//! both ends as [`crate::endpoint::EndpointConnection`]s). Design notes: `docs/PTCP.md`.

mod acceptor;
mod bindings;
mod cookie;
mod receiver;
mod record;
mod sender;

pub use acceptor::{PtcpAcceptor, PtcpAcceptorStats};
pub use bindings::{Bindings, Bound, PipeId};
pub use receiver::{PtcpReceiver, PtcpReceiverStats};
pub use record::{PipeRecord, MAX_RANGES};
pub use sender::{PtcpSender, PtcpSenderStats, PtcpTransmit, SYN_PAD};
