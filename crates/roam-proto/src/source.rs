//! Where a sender's payload comes from, when the application does not copy it in.
//!
//! A sender-driven engine normally keeps a copy of every byte the application wrote until it
//! is acknowledged, so a bulk flow costs its whole send buffer in memory. With a
//! [`ByteSource`] the engine keeps only sequence numbers and asks the source for the bytes of
//! a range when it encodes a segment — and again for a retransmission — so memory follows the
//! window, not the buffer. The simulator's integrity pattern is one (bytes made on demand); a
//! file read with positioned reads or a memory map is another (a zero-copy file sender in the
//! runtime); pTCP's delayed binding will be a third (a pipe asks for data only when its window
//! has room, ptcp.txt §3).

use std::fmt;
use std::sync::Arc;

/// Bytes of one stream, addressed by offset from its first byte.
pub trait ByteSource: fmt::Debug + Send + Sync {
    /// Appends the stream bytes `offset .. offset + len` to `out`. The engine asks only for
    /// bytes the application made available (see the engine's `push`), and may ask for the same
    /// range more than once (retransmissions): the bytes must be the same every time.
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>);
}

impl<T: ByteSource + ?Sized> ByteSource for Arc<T> {
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        (**self).read(offset, len, out)
    }
}

/// An in-memory stream: the bytes of a vector (tests, small objects).
#[derive(Debug, Clone)]
pub struct VecSource(pub Arc<[u8]>);

impl ByteSource for VecSource {
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.0.len());
        let end = start.saturating_add(len).min(self.0.len());
        out.extend_from_slice(&self.0[start..end]);
    }
}
