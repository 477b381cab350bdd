//! Object bytes an RCP sender asked its host for (issue 16: object reads that cannot block the
//! host).
//!
//! A store that holds its objects in memory (or generates them) answers
//! [`super::ObjectStore::read_now`] at once, and the sender copies each segment straight into
//! its datagram. A store that would block (a file) answers `false`; from then on the sender
//! asks its host for the bytes it needs ([`super::RcpSender::poll_read`]), the host reads them
//! in its own time and hands them over ([`super::RcpSender::supply`]), and the sender sends only
//! what it holds. This module holds those bytes:
//! * **ahead**: object bytes from SND.NXT on for cumulative requests, read ahead at most
//!   `cap` bytes past SND.NXT, one host read outstanding at a time;
//! * **pull**: the bytes of the pulled segment to send next (one segment), one read at a time.
//!
//! Bytes are dropped once sent (a re-request reads them again), so a sender holds at most
//! `cap` + one segment of object bytes, whatever its receiver asks for.

use std::collections::VecDeque;

/// A range of object bytes the sender needs: the host reads them and calls
/// [`super::RcpSender::supply`] with `offset` and the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRequest {
    /// First object offset.
    pub offset: u64,
    /// Bytes wanted.
    pub len: usize,
}

/// See the module docs.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostReads {
    /// The store needs the host's reads (it declined a `read_now`).
    active: bool,
    ahead: VecDeque<u8>,
    ahead_base: u64,
    /// Issued and not yet supplied: `[start, end)`.
    ahead_read: Option<(u64, u64)>,
    pull: Option<(u64, Vec<u8>)>,
    pull_read: Option<(u64, u64)>,
}

impl HostReads {
    /// True once the store has declined to read without blocking.
    pub fn active(&self) -> bool {
        self.active
    }

    /// The store declined a read: the host reads from now on.
    pub fn activate(&mut self) {
        self.active = true;
    }

    /// Object bytes held.
    pub fn held(&self) -> usize {
        self.ahead.len() + self.pull.as_ref().map_or(0, |(_, v)| v.len())
    }

    fn ahead_end(&self) -> u64 {
        self.ahead_base.saturating_add(self.ahead.len() as u64)
    }

    /// Copies `[start, end)` into `out` if held; a pulled segment's bytes are then dropped.
    pub fn take(&mut self, start: u64, end: u64, out: &mut Vec<u8>) -> bool {
        if start >= self.ahead_base && end <= self.ahead_end() {
            let a = usize::try_from(start - self.ahead_base).unwrap_or(usize::MAX);
            let b = usize::try_from(end - self.ahead_base).unwrap_or(usize::MAX);
            out.extend(self.ahead.range(a..b));
            return true;
        }
        if let Some((s, v)) = &self.pull {
            let held_end = s.saturating_add(v.len() as u64);
            if start >= *s && end <= held_end {
                let a = usize::try_from(start - s).unwrap_or(usize::MAX);
                let b = usize::try_from(end - s).unwrap_or(usize::MAX);
                out.extend_from_slice(&v[a..b]);
                self.pull = None;
                return true;
            }
        }
        false
    }

    /// Forgets ahead bytes below `snd_nxt` (sent, or skipped by a pull).
    pub fn trim(&mut self, snd_nxt: u64) {
        if snd_nxt <= self.ahead_base {
            return;
        }
        let drop = snd_nxt - self.ahead_base;
        if drop >= self.ahead.len() as u64 {
            self.ahead.clear();
        } else {
            self.ahead.drain(..drop as usize);
        }
        self.ahead_base = snd_nxt;
    }

    /// The read for a pulled segment `[start, end)` the sender wants to send next, unless it
    /// is held or a pull read is outstanding.
    pub fn want_pull(&mut self, start: u64, end: u64) -> Option<ReadRequest> {
        let held = self
            .pull
            .as_ref()
            .is_some_and(|(s, v)| start >= *s && end <= s.saturating_add(v.len() as u64));
        let in_ahead = start >= self.ahead_base && end <= self.ahead_end();
        if held || in_ahead || self.pull_read.is_some() {
            return None;
        }
        self.pull_read = Some((start, end));
        Some(ReadRequest {
            offset: start,
            len: usize::try_from(end - start).unwrap_or(usize::MAX),
        })
    }

    /// The next read ahead for cumulative data: `[max(held end, snd_nxt), min(need_end,
    /// snd_nxt + cap))`, unless one is outstanding.
    pub fn want_ahead(&mut self, snd_nxt: u64, need_end: u64, cap: u64) -> Option<ReadRequest> {
        self.trim(snd_nxt);
        if self.ahead_read.is_some() {
            return None;
        }
        if self.ahead.is_empty() {
            self.ahead_base = snd_nxt;
        }
        let from = self.ahead_end();
        let to = need_end.min(snd_nxt.saturating_add(cap));
        if from >= to {
            return None;
        }
        self.ahead_read = Some((from, to));
        Some(ReadRequest {
            offset: from,
            len: usize::try_from(to - from).unwrap_or(usize::MAX),
        })
    }

    /// The host supplies bytes from `offset` for an outstanding read; bytes past the read, or
    /// for no outstanding read, are ignored. A short supply leaves the rest to be asked again.
    pub fn supply(&mut self, offset: u64, bytes: &[u8], snd_nxt: u64) {
        if let Some((s, e)) = self.pull_read.filter(|(s, _)| *s == offset) {
            let n = bytes
                .len()
                .min(usize::try_from(e - s).unwrap_or(usize::MAX));
            self.pull = Some((offset, bytes[..n].to_vec()));
            self.pull_read = None;
            return;
        }
        if let Some((s, e)) = self.ahead_read.filter(|(s, _)| *s == offset) {
            self.ahead_read = None;
            let n = bytes
                .len()
                .min(usize::try_from(e - s).unwrap_or(usize::MAX));
            if self.ahead.is_empty() {
                self.ahead_base = offset;
            }
            if self.ahead_end() == offset {
                self.ahead.extend(&bytes[..n]);
            }
            self.trim(snd_nxt);
        }
    }

    /// Drops every byte held and every outstanding read (the connection ended).
    pub fn clear(&mut self) {
        let active = self.active;
        *self = HostReads::default();
        self.active = active;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ahead_within_the_cap_and_trims_what_was_sent() {
        let mut r = HostReads::default();
        let req = r.want_ahead(1000, 100_000, 4000).expect("a read");
        assert_eq!((req.offset, req.len), (1000, 4000));
        assert_eq!(r.want_ahead(1000, 100_000, 4000), None, "one at a time");
        r.supply(1000, &[7; 4000], 1000);
        assert_eq!(r.held(), 4000);
        let mut out = Vec::new();
        assert!(r.take(1000, 2000, &mut out));
        assert_eq!(out.len(), 1000);
        r.trim(2000);
        assert_eq!(r.held(), 3000);
        let next = r.want_ahead(2000, 100_000, 4000).expect("more");
        assert_eq!((next.offset, next.len), (5000, 1000));
        // Unsolicited bytes change nothing.
        r.supply(9000, &[1; 10], 2000);
        assert_eq!(r.held(), 3000);
    }

    #[test]
    fn a_short_supply_is_asked_again_and_a_jump_drops_stale_bytes() {
        let mut r = HostReads::default();
        r.want_ahead(0, 10_000, 8000);
        r.supply(0, &[1; 3000], 0);
        let again = r.want_ahead(0, 10_000, 8000).expect("the rest");
        assert_eq!((again.offset, again.len), (3000, 5000));
        r.trim(20_000);
        assert_eq!(r.held(), 0);
        r.supply(3000, &[1; 5000], 20_000);
        assert_eq!(r.held(), 0, "all below SND.NXT by now");
    }

    #[test]
    fn one_pulled_segment_is_held_and_dropped_once_sent() {
        let mut r = HostReads::default();
        let p = r.want_pull(500, 1500).expect("a read");
        assert_eq!((p.offset, p.len), (500, 1000));
        assert_eq!(r.want_pull(500, 1500), None);
        r.supply(500, &[2; 2000], 0);
        assert_eq!(r.held(), 1000, "no more than asked");
        let mut out = Vec::new();
        assert!(!r.take(400, 1500, &mut out));
        assert!(r.take(500, 1500, &mut out));
        assert_eq!(r.held(), 0);
    }
}
