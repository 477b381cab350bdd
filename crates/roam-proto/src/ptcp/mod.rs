//! pTCP (ptcp.txt): one connection striped over several TCP-v pipes by the sender, which binds
//! stream data to a pipe's sequence numbers only when the pipe's window has room.
//!
//! Built so far: the bindings table ([`Bindings`]: delayed binding, unbinding beyond a shrunk
//! window, redundant striping after a timeout). The pipes are the TCP-like engine's
//! [`crate::tcp::SenderPipe`]s under one [`crate::tcp::SendStream`]; the engine that composes
//! them, the handshake and the endpoint integration are to come (`docs/PTCP.md`).

mod bindings;

pub use bindings::{Bindings, Bound, PipeId};
