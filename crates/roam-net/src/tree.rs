//! The object's BLAKE3 tree cut at *groups*: aligned runs of 2^k bytes (k ≥ 16), each a
//! whole subtree of the BLAKE3 tree (BLAKE3 paper §2.1: the left subtree of a node holds the
//! largest power of two of chunks below its total, so a power-of-two group aligned to its size
//! is always one subtree; the same rule then shapes the tree above the groups). A server
//! serves the groups' chaining values as `.roam-tree/NAME`; a client checks that list against
//! the root digest once (merging it up to the root), then verifies each group of the object
//! as it arrives against its chaining value (issue 28, item 9: verified streaming). An object
//! of one group has no list: the root digest is its only check.
//!
//! The computations use `blake3`'s own tree primitives (`blake3::hazmat`); the tests compare
//! every root with `blake3::hash` of the same bytes, as that module asks.

use blake3::hazmat::{merge_subtrees_non_root, merge_subtrees_root, HasherExt, Mode};

/// A chaining value (an interior hash of the tree).
pub(crate) type Cv = [u8; 32];

/// Smallest group (64 KiB): a re-fetch after a failed group costs at most this much.
const MIN_GROUP_LOG2: u8 = 16;

/// Groups per object at most: the list is at most 32 KiB, fetched like the metadata.
pub(crate) const MAX_GROUPS: u64 = 1024;

/// log2 of the group size for an object of `len` bytes: 64 KiB, doubled until at most
/// [`MAX_GROUPS`] groups cover it.
pub(crate) fn group_log2(len: u64) -> u8 {
    let mut k = MIN_GROUP_LOG2;
    while k < roam_wire::MAX_GROUP_LOG2 && len.div_ceil(1u64 << k) > MAX_GROUPS {
        k += 1;
    }
    k
}

/// Groups of an object of `len` bytes (at least one).
pub(crate) fn groups(len: u64, log2: u8) -> u64 {
    len.div_ceil(1u64 << log2).max(1)
}

/// Bytes `start .. end` of group `index`.
pub(crate) fn group_range(len: u64, log2: u8, index: u64) -> (u64, u64) {
    let start = index.saturating_mul(1u64 << log2).min(len);
    (start, start.saturating_add(1u64 << log2).min(len))
}

/// The chaining value of group `index` holding `data` (its whole range; an object of at
/// least two groups, so `data` is never empty).
pub(crate) fn group_cv(log2: u8, index: u64, data: &[u8]) -> Option<Cv> {
    if data.is_empty() || data.len() as u64 > 1u64 << log2 {
        return None;
    }
    let mut h = blake3::Hasher::new();
    h.set_input_offset(index << log2);
    h.update(data);
    Some(h.finalize_non_root())
}

/// The root digest of the tree whose groups have the chaining values `cvs` (two or more).
pub(crate) fn root(cvs: &[Cv]) -> Option<[u8; 32]> {
    if cvs.len() < 2 {
        return None;
    }
    let split = left_groups(cvs.len());
    let (l, r) = (merge(&cvs[..split]), merge(&cvs[split..]));
    Some(*merge_subtrees_root(&l, &r, Mode::Hash).as_bytes())
}

/// The non-root chaining value over `cvs` (one or more).
fn merge(cvs: &[Cv]) -> Cv {
    if cvs.len() == 1 {
        return cvs[0];
    }
    let split = left_groups(cvs.len());
    merge_subtrees_non_root(&merge(&cvs[..split]), &merge(&cvs[split..]), Mode::Hash)
}

/// Groups in the left subtree of `n` (≥ 2): the largest power of two below `n`.
fn left_groups(n: usize) -> usize {
    1usize << (usize::BITS - 1 - (n - 1).leading_zeros())
}

/// Hashes an object streamed in order: its root digest and, with two or more groups, every
/// group's chaining value.
pub(crate) struct TreeHasher {
    log2: u8,
    len: u64,
    /// The root hash over the whole object while it fits one group.
    whole: blake3::Hasher,
    group: blake3::Hasher,
    in_group: u64,
    index: u64,
    cvs: Vec<Cv>,
}

impl TreeHasher {
    /// For an object of `len` bytes.
    pub(crate) fn new(len: u64) -> TreeHasher {
        TreeHasher {
            log2: group_log2(len),
            len,
            whole: blake3::Hasher::new(),
            group: blake3::Hasher::new(),
            in_group: 0,
            index: 0,
            cvs: Vec::new(),
        }
    }

    /// The group size's log2.
    pub(crate) fn log2(&self) -> u8 {
        self.log2
    }

    /// The next bytes of the object.
    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        let size = 1u64 << self.log2;
        let single = groups(self.len, self.log2) == 1;
        while !bytes.is_empty() {
            let room = usize::try_from(size - self.in_group).unwrap_or(usize::MAX);
            let n = room.min(bytes.len());
            if single {
                self.whole.update(&bytes[..n]);
            } else {
                self.group.update(&bytes[..n]);
            }
            self.in_group += n as u64;
            bytes = &bytes[n..];
            if self.in_group == size && !single {
                self.close_group();
            }
        }
    }

    fn close_group(&mut self) {
        self.cvs.push(self.group.finalize_non_root());
        self.index += 1;
        self.in_group = 0;
        self.group = blake3::Hasher::new();
        self.group.set_input_offset(self.index << self.log2);
    }

    /// The root digest and the groups' chaining values (empty for a one-group object).
    pub(crate) fn finish(mut self) -> ([u8; 32], Vec<Cv>) {
        if groups(self.len, self.log2) == 1 {
            return (*self.whole.finalize().as_bytes(), Vec::new());
        }
        if self.in_group > 0 {
            self.close_group();
        }
        let root = root(&self.cvs).unwrap_or([0; 32]);
        (root, self.cvs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn roots_match_blake3_and_every_group_verifies() {
        let g = 1usize << MIN_GROUP_LOG2;
        for len in [
            0,
            1,
            1024,
            g - 1,
            g,
            g + 1,
            2 * g,
            3 * g + 5,
            4 * g,
            5 * g + 1023,
            7 * g + 1,
        ] {
            let bytes = data(len);
            let mut t = TreeHasher::new(len as u64);
            for piece in bytes.chunks(1000) {
                t.update(piece);
            }
            let log2 = t.log2();
            let (digest, cvs) = t.finish();
            assert_eq!(digest, *blake3::hash(&bytes).as_bytes(), "len {len}");
            let n = groups(len as u64, log2);
            if n == 1 {
                assert!(cvs.is_empty());
                continue;
            }
            assert_eq!(cvs.len() as u64, n);
            assert_eq!(root(&cvs), Some(digest));
            for i in 0..n {
                let (a, b) = group_range(len as u64, log2, i);
                let cv = group_cv(log2, i, &bytes[a as usize..b as usize]);
                assert_eq!(cv, Some(cvs[i as usize]), "len {len} group {i}");
            }
            // A changed byte fails its group only.
            let mut bad = bytes.clone();
            bad[3] ^= 1;
            assert_ne!(group_cv(log2, 0, &bad[..g]), Some(cvs[0]));
            assert_eq!(group_cv(log2, 1, &bad[g..(2 * g).min(len)]), Some(cvs[1]));
            let mut wrong = cvs.clone();
            wrong[0][0] ^= 1;
            assert_ne!(root(&wrong), Some(digest), "a changed list fails the root");
        }
    }

    #[test]
    fn groups_grow_so_the_list_stays_small() {
        assert_eq!(group_log2(0), 16);
        assert_eq!(group_log2(1024 << 16), 16);
        assert_eq!(group_log2((1024 << 16) + 1), 17);
        let eight_gb = 8u64 << 30;
        assert!(groups(eight_gb, group_log2(eight_gb)) <= MAX_GROUPS);
        assert_eq!(group_log2(u64::MAX), roam_wire::MAX_GROUP_LOG2);
        assert_eq!(left_groups(2), 1);
        assert_eq!(left_groups(5), 4);
        assert_eq!(left_groups(8), 4);
    }
}
