//! The deterministic byte pattern bulk senders write and receivers verify, so every run checks
//! data integrity (each byte delivered once, in order, unchanged) at memcmp cost.

use std::sync::OnceLock;

use roam_proto::source::ByteSource;

use crate::agent::{FlowIdx, NetCtx};

/// Pattern period: a prime, so misplaced segments of any usual size are detected.
const PERIOD: usize = 65_521;

fn table() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // xorshift32 bytes; stored twice so any window of up to PERIOD bytes is contiguous.
        let mut x: u32 = 0x9e37_79b9;
        let mut v: Vec<u8> = (0..PERIOD)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x >> 24) as u8
            })
            .collect();
        v.extend_from_within(..);
        v
    })
}

/// Most bytes [`slice()`] returns at once.
pub const MAX_SLICE: usize = PERIOD;

/// The pattern bytes for stream offsets `offset..offset + len`, `len` at most [`MAX_SLICE`]
/// (longer requests are cut to it), without copying.
pub fn slice(offset: u64, len: usize) -> &'static [u8] {
    let start = (offset % PERIOD as u64) as usize;
    &table()[start..start + len.min(PERIOD)]
}

/// Appends `len` pattern bytes for stream offsets `offset..offset + len` to `out`.
pub fn fill(offset: u64, len: usize, out: &mut Vec<u8>) {
    let t = table();
    let mut off = offset;
    let mut left = len;
    while left > 0 {
        let start = (off % PERIOD as u64) as usize;
        let n = left.min(PERIOD);
        out.extend_from_slice(&t[start..start + n]);
        off += n as u64;
        left -= n;
    }
}

/// The pattern as a [`ByteSource`]: a sender's payload made on demand when it encodes a segment
/// (and again for a retransmission), so a bulk flow keeps no copy of its stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct PatternSource;

impl ByteSource for PatternSource {
    fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        fill(offset, len, out);
    }
}

/// Counts bytes of `data` (at stream offset `offset`) that differ from the pattern.
pub fn mismatches(offset: u64, data: &[u8]) -> u64 {
    let t = table();
    let mut off = offset;
    let mut bad = 0u64;
    for chunk in data.chunks(PERIOD) {
        let start = (off % PERIOD as u64) as usize;
        let expect = &t[start..start + chunk.len()];
        if chunk != expect {
            bad += chunk.iter().zip(expect).filter(|(a, b)| a != b).count() as u64;
        }
        off += chunk.len() as u64;
    }
    bad
}

/// The sink half of the receiver agents: takes every in-order byte a receiver has (`read`
/// appends them to `buf` and returns their stream offset and count; 0 when there are none),
/// checks them against the pattern and counts them for `flow`.
pub fn deliver_checked(
    ctx: &mut dyn NetCtx,
    flow: FlowIdx,
    buf: &mut Vec<u8>,
    mut read: impl FnMut(&mut Vec<u8>) -> (u64, usize),
) {
    loop {
        buf.clear();
        let (offset, n) = read(buf);
        if n == 0 {
            break;
        }
        let bad = mismatches(offset, buf);
        let c = ctx.counters(flow);
        c.bytes_delivered += n as u64;
        c.integrity_errors += bad;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_bytes_verify_and_shifted_bytes_do_not() {
        let mut v = Vec::new();
        fill(70_000, 150_000, &mut v);
        assert_eq!(mismatches(70_000, &v), 0);
        assert!(mismatches(70_001, &v) > 0);
        assert!(mismatches(70_000 + 1000, &v[..1000]) > 0);
    }

    #[test]
    fn slices_are_the_pattern_and_wrap_at_the_period() {
        let mut filled = Vec::new();
        fill(PERIOD as u64 - 10, 30, &mut filled);
        assert_eq!(slice(PERIOD as u64 - 10, 30), &filled[..]);
        assert_eq!(slice(7, 2 * PERIOD).len(), MAX_SLICE);
        assert_eq!(mismatches(123, slice(123, 5000)), 0);
    }
}
