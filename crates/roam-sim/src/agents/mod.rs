//! Agents that run on simulated hosts.

pub(crate) mod flow;
mod host;
pub mod http;
pub mod media;
pub mod pattern;
pub mod ptcp;
pub mod ptcp_striping;
pub mod r2cp;
pub mod rcp;
pub mod tcp;
mod tcp_host;
pub mod udp;

use crate::agent::{FlowIdx, IfaceIdx, NetCtx, SockAddr};

/// Sends `payload` from `iface`, `port` to `dst`, counted as one of `flow`'s datagrams; the
/// buffer goes back to the simulator when the interface has no address. True if it was sent.
/// ([`NetCtx::send_counted`].)
pub(crate) fn send_counted(
    ctx: &mut dyn NetCtx,
    (flow, iface, port): (FlowIdx, IfaceIdx, u16),
    dst: SockAddr,
    payload: Vec<u8>,
) -> bool {
    ctx.send_counted(flow, (iface, port), dst, payload)
}
