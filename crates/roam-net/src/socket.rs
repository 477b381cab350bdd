//! UDP sockets: one per local address in use, optionally bound to its device, with large
//! kernel buffers. The driver reads them itself, in batches ([`crate::batch`]).

use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::UdpSocket;

use crate::NetError;

/// Kernel buffer size asked for (the kernel may cap it at `net.core.*mem_max`).
const SOCKET_BUFFER: usize = 8 << 20;

/// Largest datagram (and largest GRO-coalesced receive) read.
pub const MAX_DATAGRAM: usize = 65_535;

/// One local address the runtime sends from and receives on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSpec {
    /// Address to bind (port 0: any free port).
    pub addr: SocketAddr,
    /// Interface to bind the socket to (`SO_BINDTODEVICE`, Linux, needs `CAP_NET_RAW`).
    pub device: Option<String>,
}

impl LocalSpec {
    /// A local address without a device.
    pub fn addr(addr: SocketAddr) -> Self {
        LocalSpec { addr, device: None }
    }
}

/// Binds a non-blocking UDP socket to `spec`.
pub fn bind(spec: &LocalSpec) -> Result<UdpSocket, NetError> {
    let addr = spec.addr;
    let bind_err = |source| NetError::Bind { addr, source };
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(bind_err)?;
    // Best effort: a smaller buffer only costs throughput.
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER);
    if let Some(device) = &spec.device {
        bind_device(&sock, device).map_err(|source| NetError::Device {
            addr,
            device: device.clone(),
            source,
        })?;
    }
    sock.set_nonblocking(true).map_err(bind_err)?;
    sock.bind(&addr.into()).map_err(bind_err)?;
    UdpSocket::from_std(sock.into()).map_err(bind_err)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn bind_device(sock: &Socket, device: &str) -> std::io::Result<()> {
    sock.bind_device(Some(device.as_bytes()))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn bind_device(_sock: &Socket, _device: &str) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "binding to a device needs Linux",
    ))
}
