//! Agents that run on simulated hosts.

pub mod http;
pub mod media;
pub mod pattern;
pub mod r2cp;
pub mod rcp;
pub mod tcp;
mod tcp_host;
pub mod udp;

use crate::agent::{FlowIdx, IfaceIdx, NetCtx, Packet, SockAddr};

/// Sends `payload` from `iface`, `port` to `dst`, counted as one of `flow`'s datagrams; the
/// buffer goes back to the simulator when the interface has no address. True if it was sent.
pub(crate) fn send_counted(
    ctx: &mut dyn NetCtx,
    (flow, iface, port): (FlowIdx, IfaceIdx, u16),
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
    ctx.send(
        iface,
        Packet {
            src: SockAddr { addr, port },
            dst,
            payload,
            flow: Some(flow),
        },
    );
    true
}
