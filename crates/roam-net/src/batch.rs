//! Batched socket I/O through `quinn-udp`: a receive call fills up to
//! [`quinn_udp::BATCH_SIZE`] buffers (`recvmmsg` on Linux), each of which may hold several
//! datagrams the kernel coalesced (GRO); a send hands the kernel a run of equal-sized
//! datagrams to one peer in one buffer, which it splits again (GSO). Where the platform has
//! neither, `quinn-udp` receives one datagram per call and [`SendRun`] holds one datagram.
//!
//! Every datagram stays hostile input: a coalesced buffer is split at its stride and each
//! segment is handed to the endpoint on its own ([`segments`]).

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;

use quinn_udp::{RecvMeta, Transmit, UdpSockRef, UdpSocketState, BATCH_SIZE};
use tokio::io::Interest;
use tokio::net::UdpSocket;

use crate::socket::MAX_DATAGRAM;

/// Bytes of one receive buffer: a coalesced receive is one IP datagram's worth at most.
const SLOT: usize = MAX_DATAGRAM;

/// Largest run handed to one GSO send: the payload of one IPv4 datagram (65 535 bytes less
/// the IPv4 and UDP headers).
const MAX_RUN_BYTES: usize = 65_507;

/// The datagrams of a buffer the kernel may have coalesced: `stride` bytes each (the last may
/// be shorter). A stride of 0 means one datagram.
pub fn segments(bytes: &[u8], stride: usize) -> std::slice::Chunks<'_, u8> {
    let size = if stride == 0 { bytes.len() } else { stride };
    bytes.chunks(size.max(1))
}

/// Buffers for one batched receive call, reused for every call.
pub struct RecvBatch {
    storage: Vec<u8>,
    meta: Vec<RecvMeta>,
    filled: usize,
}

impl RecvBatch {
    /// Buffers for [`BATCH_SIZE`] receives of up to 64 KiB each.
    pub fn new() -> Self {
        RecvBatch {
            storage: vec![0u8; SLOT * BATCH_SIZE],
            meta: vec![RecvMeta::default(); BATCH_SIZE],
            filled: 0,
        }
    }

    /// One receive call on `socket` if it is readable: returns the number of buffers filled,
    /// or `WouldBlock` (then tokio waits for readiness again).
    pub fn recv(&mut self, state: &UdpSocketState, socket: &UdpSocket) -> io::Result<usize> {
        self.filled = 0;
        let mut bufs: Vec<IoSliceMut<'_>> =
            self.storage.chunks_mut(SLOT).map(IoSliceMut::new).collect();
        let meta = &mut self.meta;
        let n = socket.try_io(Interest::READABLE, || {
            state.recv(UdpSockRef::from(socket), &mut bufs, meta)
        })?;
        self.filled = n.min(BATCH_SIZE);
        Ok(self.filled)
    }

    /// Buffers filled by the last call.
    pub fn filled(&self) -> usize {
        self.filled
    }

    /// Buffer `i` of the last call: its sender, its bytes and its stride.
    pub fn buffer(&self, i: usize) -> Option<(SocketAddr, &[u8], usize)> {
        if i >= self.filled {
            return None;
        }
        let m = self.meta.get(i)?;
        let slot = self.storage.chunks(SLOT).nth(i)?;
        Some((m.addr, &slot[..m.len.min(slot.len())], m.stride))
    }
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch::new()
    }
}

/// Datagrams from one socket to one peer, all of one size but the last (which may be
/// shorter), sent with one system call.
#[derive(Debug, Default)]
pub struct SendRun {
    local: usize,
    remote: Option<SocketAddr>,
    bytes: Vec<u8>,
    segment: usize,
    count: usize,
    /// A shorter datagram ended the run.
    closed: bool,
}

impl SendRun {
    /// True if the run holds no datagram.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Datagrams held.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The socket the run leaves from.
    pub fn local(&self) -> usize {
        self.local
    }

    /// Appends `datagram` if it can share the run's send (same socket and peer, no larger than
    /// the first, fewer than `max_segments` held, within one IP datagram); an empty run takes
    /// any datagram. Returns false if the run must be sent first.
    pub fn push(
        &mut self,
        local: usize,
        remote: SocketAddr,
        datagram: &[u8],
        max_segments: usize,
    ) -> bool {
        if self.count == 0 {
            self.local = local;
            self.remote = Some(remote);
            self.segment = datagram.len();
            self.bytes.clear();
            self.bytes.extend_from_slice(datagram);
            self.count = 1;
            self.closed = false;
            return true;
        }
        let fits = !self.closed
            && local == self.local
            && self.remote == Some(remote)
            && self.count < max_segments
            && !datagram.is_empty()
            && datagram.len() <= self.segment
            && self.bytes.len() + datagram.len() <= MAX_RUN_BYTES;
        if !fits {
            return false;
        }
        self.closed = datagram.len() < self.segment;
        self.bytes.extend_from_slice(datagram);
        self.count += 1;
        true
    }

    /// The run as one transmit (a GSO send when it holds several datagrams).
    pub fn transmit(&self) -> Option<Transmit<'_>> {
        Some(Transmit {
            destination: self.remote?,
            ecn: None,
            contents: &self.bytes,
            segment_size: (self.count > 1).then_some(self.segment),
            src_ip: None,
        })
    }

    /// Empties the run.
    pub fn clear(&mut self) {
        self.count = 0;
        self.remote = None;
        self.bytes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coalesced_buffer_splits_at_its_stride() {
        let b: Vec<u8> = (0..10).collect();
        let s: Vec<&[u8]> = segments(&b, 4).collect();
        assert_eq!(s, vec![&b[0..4], &b[4..8], &b[8..10]]);
        assert_eq!(segments(&b, 0).count(), 1);
        assert_eq!(segments(&b, 10).count(), 1);
        assert_eq!(segments(&b, 64).count(), 1);
        assert_eq!(segments(&[], 0).count(), 0);
        assert_eq!(segments(&b, 1).count(), 10);
    }

    #[test]
    fn a_run_holds_equal_datagrams_to_one_peer() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let mut r = SendRun::default();
        assert!(r.push(0, a, &[1; 100], 3));
        assert!(r.push(0, a, &[2; 100], 3));
        assert!(!r.push(0, b, &[3; 100], 3), "another peer");
        assert!(!r.push(1, a, &[3; 100], 3), "another socket");
        assert!(!r.push(0, a, &[3; 101], 3), "larger than the first");
        assert!(r.push(0, a, &[3; 60], 3), "a shorter last one");
        assert!(!r.push(0, a, &[4; 60], 5), "nothing after a shorter one");
        let t = r.transmit().unwrap();
        assert_eq!((t.contents.len(), t.segment_size), (260, Some(100)));
        r.clear();
        assert!(r.is_empty());
        assert!(r.push(0, a, &[1; 100], 1));
        assert!(!r.push(0, a, &[1; 100], 1), "no GSO: one datagram per send");
        assert_eq!(r.transmit().unwrap().segment_size, None);
        r.clear();
        assert!(r.push(0, a, &[0; 40_000], 64));
        assert!(!r.push(0, a, &[0; 40_000], 64), "beyond one IP datagram");
    }
}
