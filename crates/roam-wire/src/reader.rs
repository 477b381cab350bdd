//! A bounds-checked cursor over untrusted bytes.
//!
//! Every read either returns the requested bytes or a [`DecodeError::Truncated`] naming the
//! field's offset; no read can panic. Decoders are written as a sequence of `?`-reads so that
//! no index arithmetic on untrusted lengths appears outside this file.

use crate::DecodeError;

/// A forward-only cursor over a datagram (or part of one).
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    /// Invariant: `pos <= buf.len()`.
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A cursor at `pos` (clamped to the end of `buf`), so that reported offsets are relative to
    /// the whole datagram.
    pub(crate) fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader {
            buf,
            pos: pos.min(buf.len()),
        }
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    fn truncated(&self, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            offset: self.pos,
            needed,
            len: self.buf.len(),
        }
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        match self.rest().get(..n) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.truncated(n)),
        }
    }

    /// Everything not yet read (possibly empty); the cursor moves to the end.
    pub(crate) fn take_rest(&mut self) -> &'a [u8] {
        let rest = self.rest();
        self.pos = self.buf.len();
        rest
    }

    /// The next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.rest().first_chunk::<N>() {
            Some(bytes) => {
                self.pos += N;
                Ok(*bytes)
            }
            None => Err(self.truncated(N)),
        }
    }

    /// A `u8`.
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        self.array::<1>().map(|[b]| b)
    }

    /// A big-endian `u16`.
    pub(crate) fn u16(&mut self) -> Result<u16, DecodeError> {
        self.array().map(u16::from_be_bytes)
    }

    /// A big-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    /// A big-endian `u64`.
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_be_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_fields_in_order() {
        let bytes = [1, 0x02, 0x03, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 5, 9];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16(), Ok(0x0203));
        assert_eq!(r.u32(), Ok(4));
        assert_eq!(r.u64(), Ok(5));
        assert_eq!(r.remaining(), 1);
        assert_eq!(r.take_rest(), &[9]);
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn short_read_reports_field_offset_and_does_not_advance() {
        let bytes = [0u8; 5];
        let mut r = Reader::at(&bytes, 2);
        let err = DecodeError::Truncated {
            offset: 2,
            needed: 4,
            len: 5,
        };
        assert_eq!(r.u32(), Err(err));
        assert_eq!(r.take(4), Err(err));
        assert_eq!(r.remaining(), 3);
    }

    #[test]
    fn cursor_past_the_end_is_clamped() {
        let bytes = [0u8; 3];
        let mut r = Reader::at(&bytes, 10);
        assert_eq!(r.remaining(), 0);
        assert!(r.take_rest().is_empty());
        assert!(r.u8().is_err());
    }
}
