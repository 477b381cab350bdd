//! The generated objects' byte pattern ([`perf_byte`](crate::store::perf_byte): byte `i` is
//! `i % 251`), written and checked a slice at a time. `roam perf` moves gigabytes of it; one
//! division per byte cost more CPU than the transport itself (`docs/RUNTIME.md`, "Where the
//! CPU goes").

/// The pattern's period.
const PERIOD: usize = 251;

/// Whole periods in [`TABLE`]: one copy covers a 64 KiB datagram.
const PERIODS: usize = 262;

/// `PERIODS` periods of the pattern, starting at byte 0.
static TABLE: [u8; PERIOD * PERIODS] = table();

const fn table() -> [u8; PERIOD * PERIODS] {
    let mut t = [0u8; PERIOD * PERIODS];
    let mut i = 0;
    while i < t.len() {
        t[i] = (i % PERIOD) as u8;
        i += 1;
    }
    t
}

/// Calls `f` with consecutive pieces of the pattern covering `[offset, offset + len)`.
fn pieces(offset: u64, len: usize, mut f: impl FnMut(&[u8])) {
    // u64 % 251 < 251: the cast is lossless.
    let mut start = (offset % PERIOD as u64) as usize;
    let mut left = len;
    while left > 0 {
        let n = left.min(TABLE.len() - start);
        f(&TABLE[start..start + n]);
        left -= n;
        // The table holds whole periods, so the next piece starts at the same phase.
        start = (start + n) % PERIOD;
    }
}

/// Appends the pattern's bytes `[offset, offset + len)` to `out`.
pub fn extend(out: &mut Vec<u8>, offset: u64, len: usize) {
    out.reserve(len);
    pieces(offset, len, |p| out.extend_from_slice(p));
}

/// Overwrites `out` with the pattern's bytes starting at `offset`.
pub fn fill(out: &mut [u8], offset: u64) {
    let mut at = 0;
    pieces(offset, out.len(), |p| {
        out[at..at + p.len()].copy_from_slice(p);
        at += p.len();
    });
}

/// How many of `bytes` differ from the pattern's bytes starting at `offset`.
pub fn mismatches(bytes: &[u8], offset: u64) -> u64 {
    let mut at = 0;
    let mut wrong = 0u64;
    pieces(offset, bytes.len(), |p| {
        let got = &bytes[at..at + p.len()];
        if got != p {
            wrong += got.iter().zip(p).filter(|(a, b)| a != b).count() as u64;
        }
        at += p.len();
    });
    wrong
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::perf_byte;

    fn slow(offset: u64, len: usize) -> Vec<u8> {
        (offset..offset + len as u64).map(perf_byte).collect()
    }

    #[test]
    fn slices_agree_with_the_byte_definition() {
        for &(offset, len) in &[
            (0, 0),
            (0, 1),
            (250, 3),
            (1 << 40, 1400),
            (7, TABLE.len() + 1000),
            (u64::MAX - 70_000, 65_000),
        ] {
            let want = slow(offset, len);
            let mut v = vec![9u8; 2];
            extend(&mut v, offset, len);
            assert_eq!(&v[2..], &want[..], "extend {offset} {len}");
            let mut f = vec![0u8; len];
            fill(&mut f, offset);
            assert_eq!(f, want, "fill {offset} {len}");
            assert_eq!(mismatches(&want, offset), 0);
        }
    }

    #[test]
    fn mismatches_counts_each_wrong_byte() {
        let mut b = slow(1234, 100_000);
        b[0] ^= 1;
        b[70_000] ^= 0xff;
        b[99_999] = b[99_999].wrapping_add(1);
        assert_eq!(mismatches(&b, 1234), 3);
        // Shifted by one, every byte differs.
        assert_eq!(mismatches(&slow(0, 1000), 1), 1000);
    }
}
