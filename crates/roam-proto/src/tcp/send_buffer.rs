//! The sender's byte queue: application data from the first unacknowledged byte onwards,
//! either copied in by the application or pulled from a [`ByteSource`] when a segment is
//! encoded (then only sequence numbers are kept: memory follows the window, not the buffer).

use std::collections::VecDeque;

use crate::source::ByteSource;

/// Where the unacknowledged bytes are.
#[derive(Debug)]
enum Backing {
    /// Copies of what the application wrote (`data[0]` has sequence number `base`).
    Copied(VecDeque<u8>),
    /// Bytes `base .. end` are available from the source, at stream offset `seq - origin`.
    Source {
        source: Box<dyn ByteSource>,
        origin: u64,
    },
}

/// Bytes written by the application and not yet acknowledged, addressed by sequence number.
#[derive(Debug)]
pub struct SendBuffer {
    /// Sequence number of the first unacknowledged byte.
    base: u64,
    /// One past the sequence number of the last byte held (`base` plus the copies' length
    /// when copying): read on every poll of the sender, so kept rather than derived.
    end: u64,
    backing: Backing,
    capacity: usize,
}

impl SendBuffer {
    /// An empty buffer whose first byte will have sequence number `base`.
    pub fn new(base: u64, capacity: usize) -> Self {
        SendBuffer {
            base,
            end: base,
            backing: Backing::Copied(VecDeque::new()),
            capacity,
        }
    }

    /// Takes the stream's bytes from `source` from now on, its offset 0 being sequence number
    /// `origin` (the first data byte). Refused (returns false) once bytes were written.
    pub fn set_source(&mut self, source: Box<dyn ByteSource>, origin: u64) -> bool {
        if self.len() > 0 || self.base != origin {
            return false;
        }
        self.backing = Backing::Source { source, origin };
        true
    }

    /// Bytes held (unacknowledged), copied or not.
    fn len(&self) -> u64 {
        debug_assert!(match &self.backing {
            Backing::Copied(data) => data.len() as u64 == self.end - self.base,
            Backing::Source { .. } => true,
        });
        self.end - self.base
    }

    /// Appends as much of `bytes` as fits; returns how many were taken (none with a source:
    /// use [`SendBuffer::push`]).
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        let free = self.free();
        let Backing::Copied(data) = &mut self.backing else {
            return 0;
        };
        let n = bytes.len().min(free);
        let needed = data.len() + n;
        if needed > data.capacity() {
            // Grow geometrically, but never past the configured capacity: left to itself the
            // ring would double past it (a 4 MiB buffer filled in 65 521-byte writes took 8 MiB).
            let target = needed.max(2 * data.capacity()).min(self.capacity);
            data.reserve_exact(target - data.len());
        }
        data.extend(&bytes[..n]);
        self.end += n as u64;
        n
    }

    /// Makes up to `n` more bytes of the source available (as many as fit); returns how many
    /// (none without a source).
    pub fn push(&mut self, n: u64) -> u64 {
        let free = self.free() as u64;
        match &mut self.backing {
            Backing::Source { .. } => {
                let taken = n.min(free);
                self.end += taken;
                taken
            }
            Backing::Copied(_) => 0,
        }
    }

    /// The most bytes it accepts unacknowledged.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of memory it holds at most: the capacity when copying, nothing with a source.
    pub fn memory_bound(&self) -> usize {
        match self.backing {
            Backing::Copied(_) => self.capacity,
            Backing::Source { .. } => 0,
        }
    }

    /// Free space.
    pub fn free(&self) -> usize {
        (self.capacity as u64).saturating_sub(self.len()) as usize
    }

    /// One past the sequence number of the last byte written.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Drops everything below `seq` (acknowledged).
    pub fn ack_to(&mut self, seq: u64) {
        if seq > self.base {
            let n = (seq - self.base).min(self.len());
            if let Backing::Copied(data) = &mut self.backing {
                data.drain(..n as usize);
            }
            self.base += n;
        }
    }

    /// Appends the bytes `[seq, seq + len)` to `out`; returns how many were available.
    pub fn copy_range(&self, seq: u64, len: usize, out: &mut Vec<u8>) -> usize {
        if seq < self.base {
            return 0;
        }
        let start = seq - self.base;
        let held = self.len();
        if start >= held {
            return 0;
        }
        let n = (len as u64).min(held - start) as usize;
        match &self.backing {
            Backing::Source { source, origin, .. } => {
                let before = out.len();
                source.read(seq - origin, n, out);
                // A source that returns fewer or more bytes than asked would corrupt the
                // segment's framing: keep exactly `n` (zeros stand in for missing bytes, which
                // the receiver's integrity check then reports).
                out.resize(before + n, 0);
                n
            }
            Backing::Copied(data) => {
                let start = start as usize;
                let end = start + n;
                let (a, b) = data.as_slices();
                if end <= a.len() {
                    out.extend_from_slice(&a[start..end]);
                } else if start >= a.len() {
                    out.extend_from_slice(&b[start - a.len()..end - a.len()]);
                } else {
                    out.extend_from_slice(&a[start..]);
                    out.extend_from_slice(&b[..end - a.len()]);
                }
                n
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_across_the_ring_boundary() {
        let mut b = SendBuffer::new(1, 8);
        assert_eq!(b.write(&[1, 2, 3, 4, 5, 6]), 6);
        b.ack_to(5);
        assert_eq!(b.write(&[7, 8, 9, 10, 11, 12]), 6);
        let mut out = Vec::new();
        assert_eq!(b.copy_range(5, 8, &mut out), 8);
        assert_eq!(out, vec![5, 6, 7, 8, 9, 10, 11, 12]);
        assert_eq!(b.write(&[0]), 0);
    }

    #[test]
    fn the_ring_never_grows_past_the_configured_capacity() {
        let capacity = 4 << 20;
        let mut b = SendBuffer::new(1, capacity);
        let chunk = vec![7u8; 65_521];
        while b.write(&chunk) == chunk.len() {}
        assert_eq!(b.free(), 0);
        assert!(
            matches!(&b.backing, Backing::Copied(d) if d.capacity() < capacity + 65_521),
            "{:?}",
            b.backing
        );
    }

    #[derive(Debug)]
    struct Counting;
    impl ByteSource for Counting {
        fn read(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
            out.extend((offset..offset + len as u64).map(|i| i as u8));
        }
    }

    #[test]
    fn a_source_is_read_at_stream_offsets_and_holds_no_bytes() {
        let mut b = SendBuffer::new(101, 8);
        assert!(b.set_source(Box::new(Counting), 101));
        assert_eq!(b.write(&[1, 2, 3]), 0);
        assert_eq!(b.push(6), 6);
        assert_eq!(b.push(6), 2, "capacity bounds what is outstanding");
        assert_eq!(b.end(), 109);
        let mut out = Vec::new();
        assert_eq!(b.copy_range(103, 4, &mut out), 4);
        assert_eq!(out, vec![2, 3, 4, 5]);
        b.ack_to(105);
        assert_eq!(b.free(), 4);
        out.clear();
        // Retransmissions read the same range again; nothing below the ack is available.
        assert_eq!(b.copy_range(103, 4, &mut out), 0);
        assert_eq!(b.copy_range(105, 100, &mut out), 4);
        assert_eq!(out, vec![4, 5, 6, 7]);
        assert_eq!(b.memory_bound(), 0);
    }

    #[test]
    fn a_source_cannot_replace_written_bytes() {
        let mut b = SendBuffer::new(1, 8);
        assert_eq!(b.write(&[1]), 1);
        assert!(!b.set_source(Box::new(Counting), 1));
        assert_eq!(b.push(3), 0);
    }
}
