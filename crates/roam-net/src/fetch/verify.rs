//! Verified streaming (issue 28, item 9): each group of the object is checked as it arrives
//! against its chaining value in the object's BLAKE3 tree (`tree.rs`), itself checked once
//! against the root digest. A group that fails stops the transfer with
//! [`NetError::Corrupt`]; the pipeline (`mod.rs`) then finds who sent the bad bytes
//! ([`blame`]: by delivery — the engines tell the sink which server delivered which bytes —,
//! with probing as the tie-breaker for a group that came from several servers), drops them,
//! and continues from the group's first byte.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use blake3::hazmat::HasherExt;

use super::{rcp, Engine, FetchPlan, Progress, Sink};
use crate::store::{ObjectMeta, TREE_PREFIX};
use crate::tree::{self, Cv};
use crate::NetError;

/// The object's verified tree.
#[derive(Debug, Clone)]
pub(super) struct Tree {
    pub(super) log2: u8,
    pub(super) len: u64,
    /// The groups' chaining values; empty for an object of one group (checked whole only).
    pub(super) cvs: Vec<Cv>,
}

impl Tree {
    /// The tree of an object of one group (nothing to check per group).
    pub(super) fn whole(meta: &ObjectMeta) -> Tree {
        Tree {
            log2: meta.group_log2,
            len: meta.len,
            cvs: Vec::new(),
        }
    }

    /// Checks `bytes` (a `.roam-tree/NAME` object) against `meta`'s digest.
    pub(super) fn check(meta: &ObjectMeta, bytes: &[u8]) -> Result<Tree, String> {
        let n = tree::groups(meta.len, meta.group_log2);
        if n < 2 {
            return Ok(Tree::whole(meta));
        }
        if bytes.len() as u64 != n * 32 {
            return Err(format!(
                "the tree has {} bytes, not {} for {n} groups",
                bytes.len(),
                n * 32
            ));
        }
        let cvs: Vec<Cv> = bytes
            .chunks_exact(32)
            .map(|c| {
                let mut cv = [0u8; 32];
                cv.copy_from_slice(c);
                cv
            })
            .collect();
        if tree::root(&cvs) != Some(meta.digest) {
            return Err("the tree does not merge to the object's digest".into());
        }
        Ok(Tree {
            log2: meta.group_log2,
            len: meta.len,
            cvs,
        })
    }

    /// True if the object is checked group by group.
    pub(super) fn per_group(&self) -> bool {
        !self.cvs.is_empty()
    }

    /// The first byte of the group holding byte `at`.
    pub(super) fn group_start(&self, at: u64) -> u64 {
        if self.per_group() {
            (at >> self.log2) << self.log2
        } else {
            at
        }
    }

    /// Checks group `index` whose bytes are `data`.
    pub(super) fn verify(&self, index: u64, data: &[u8]) -> bool {
        let cv = usize::try_from(index).ok().and_then(|i| self.cvs.get(i));
        cv.is_some() && tree::group_cv(self.log2, index, data).as_ref() == cv
    }
}

/// Largest group held back in memory until verified, for an output that cannot take bytes
/// back (a FIFO, a device): objects up to 16 GiB (1024 groups of at most 16 MiB).
const HOLD_MAX: u64 = 16 << 20;

/// A sink that checks every group as it completes before passing on what follows it. Into an
/// output that cannot take bytes back, each group is held until it verifies (groups up to
/// [`HOLD_MAX`]), so bytes that fail are never written there.
pub(super) struct Verify<'a, S> {
    inner: &'a mut S,
    tree: &'a Tree,
    name: &'a str,
    /// The next byte's offset in the object.
    pos: u64,
    group: blake3::Hasher,
    /// The current group's bytes, held until verified (`None`: written through).
    held: Option<Vec<u8>>,
    /// Per group not yet verified: which server delivered which bytes (`Sink::supplied`).
    origins: BTreeMap<u64, Vec<Origin>>,
    /// The bytes of the group that failed, when they were held back.
    failed: Option<Vec<u8>>,
}

/// Bytes `.0 .. .1` of the object, delivered by server `.2`.
pub(super) type Origin = (u64, u64, SocketAddr);

impl<'a, S: Sink> Verify<'a, S> {
    /// Passes bytes from `from` (the first byte of a group) on to `inner`.
    pub(super) fn new(inner: &'a mut S, tree: &'a Tree, name: &'a str, from: u64) -> Self {
        let hold = tree.per_group() && !inner.rewindable() && (1u64 << tree.log2) <= HOLD_MAX;
        Verify {
            inner,
            tree,
            name,
            pos: from,
            group: group_hasher(tree, from),
            held: hold.then(Vec::new),
            origins: BTreeMap::new(),
            failed: None,
        }
    }

    /// Who delivered which bytes of group `index` (empty if no engine said).
    pub(super) fn origins(&self, index: u64) -> &[Origin] {
        self.origins.get(&index).map_or(&[], Vec::as_slice)
    }

    /// The bytes of the group that failed, if they were held back rather than written.
    pub(super) fn take_failed(&mut self) -> Option<Vec<u8>> {
        self.failed.take()
    }
}

/// A hasher for the group starting at `at`.
fn group_hasher(tree: &Tree, at: u64) -> blake3::Hasher {
    let mut h = blake3::Hasher::new();
    if tree.per_group() {
        h.set_input_offset(tree.group_start(at));
    }
    h
}

impl<S: Sink> Sink for Verify<'_, S> {
    fn put(&mut self, mut bytes: &[u8]) -> Result<(), NetError> {
        if !self.tree.per_group() {
            return self.inner.put(bytes);
        }
        while !bytes.is_empty() {
            let index = self.pos >> self.tree.log2;
            let (start, end) = tree::group_range(self.tree.len, self.tree.log2, index);
            if end <= self.pos {
                // Past the object's end: not ours to check (engines cut at the length).
                return self.inner.put(bytes);
            }
            let n = usize::try_from(end - self.pos)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            self.group.update(&bytes[..n]);
            match self.held.as_mut() {
                Some(held) => held.extend_from_slice(&bytes[..n]),
                None => self.inner.put(&bytes[..n])?,
            }
            self.pos += n as u64;
            bytes = &bytes[n..];
            if self.pos == end {
                let cv = usize::try_from(index)
                    .ok()
                    .and_then(|i| self.tree.cvs.get(i));
                if cv != Some(&self.group.finalize_non_root()) {
                    self.failed = self.held.as_mut().map(std::mem::take);
                    return Err(NetError::Corrupt {
                        name: self.name.to_string(),
                        group: index,
                        start,
                        end,
                    });
                }
                if let Some(held) = self.held.as_mut() {
                    self.inner.put(held)?;
                    held.clear();
                }
                while self
                    .origins
                    .first_key_value()
                    .is_some_and(|(g, _)| *g <= index)
                {
                    self.origins.pop_first();
                }
                self.group = group_hasher(self.tree, end);
            }
        }
        Ok(())
    }

    fn restart(&mut self) -> Result<(), NetError> {
        self.inner.restart()?;
        self.pos = 0;
        if let Some(held) = self.held.as_mut() {
            held.clear();
        }
        self.origins.clear();
        self.group = group_hasher(self.tree, 0);
        Ok(())
    }

    fn supplied(&mut self, start: u64, end: u64, server: SocketAddr) {
        if !self.tree.per_group() || end <= start {
            return;
        }
        let first = start.max(self.tree.group_start(self.pos)) >> self.tree.log2;
        let last = (end - 1) >> self.tree.log2;
        for index in first..=last {
            let (gs, ge) = tree::group_range(self.tree.len, self.tree.log2, index);
            let (s, e) = (start.max(gs), end.min(ge));
            if s >= e {
                continue;
            }
            let list = self.origins.entry(index).or_default();
            match list.last_mut() {
                // Contiguous bytes from the same server: one entry.
                Some(o) if o.2 == server && o.1 == s => o.1 = e,
                _ => list.push((s, e, server)),
            }
        }
    }
}

/// What one server's copy of a group is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Probe {
    /// It verifies (its bytes).
    Good(Vec<u8>),
    /// It fails verification.
    Bad,
    /// The server did not deliver it.
    NoAnswer,
}

/// A plan for asking `server` alone, giving up sooner than a download would (a server that
/// does not answer is left for the next, not waited for): two tries per local address, and
/// four stalls without a byte once connected.
pub(super) fn one_server(plan: &FetchPlan, server: SocketAddr) -> FetchPlan {
    let mut p = plan.clone();
    p.servers = vec![server];
    p.max_attempts = 2 * p.vias.len().max(1);
    p.give_up_after = p.stall.saturating_mul(4);
    p
}

/// Asks `server` for group `index` alone over single-path RCP and checks it.
pub(super) async fn probe(plan: &FetchPlan, server: SocketAddr, tree: &Tree, index: u64) -> Probe {
    let mut one = one_server(plan, server);
    one.vias.truncate(1);
    one.max_attempts = 2;
    let Ok(mut s) = rcp::Session::new(&one, |_: &Progress| {}, None) else {
        return Probe::NoAnswer;
    };
    let (start, end) = tree::group_range(tree.len, tree.log2, index);
    let mut bytes = Vec::new();
    let mut check = Verify::new(&mut bytes, tree, &plan.name, start);
    match s.receive(&plan.name, start, end, &mut check).await {
        Ok(got) if got == end => Probe::Good(bytes),
        Err(NetError::Corrupt { .. }) => Probe::Bad,
        _ => Probe::NoAnswer,
    }
}

/// The servers to blame for group `index` failing verification, each with why: by delivery
/// first — bytes that came from one server alone are that server's —, else (bytes from
/// several servers, or none said where they came from) every candidate is asked for the group
/// alone ([`probe`]): a server whose copy fails is blamed, and where the stored bytes that
/// failed are at hand (`stored`) and some server's copy verifies, each server that delivered
/// bytes differing from the verified copy is blamed — so a mirror that lies only in the
/// transfer and answers probes honestly is caught too.
pub(super) async fn blame(
    plan: &FetchPlan,
    tree: &Tree,
    index: u64,
    origins: &[Origin],
    stored: Option<&[u8]>,
) -> Vec<(SocketAddr, String)> {
    let (start, end) = tree::group_range(tree.len, tree.log2, index);
    let mut suppliers: Vec<SocketAddr> = Vec::new();
    for o in origins {
        if !suppliers.contains(&o.2) {
            suppliers.push(o.2);
        }
    }
    if let [only] = suppliers[..] {
        return vec![(
            only,
            format!("bytes {start}..{end} it delivered fail verification"),
        )];
    }
    let candidates = if suppliers.is_empty() {
        plan.servers.clone()
    } else {
        suppliers
    };
    let mut bad = Vec::new();
    let mut good = None;
    for s in candidates {
        match probe(plan, s, tree, index).await {
            Probe::Bad => bad.push((
                s,
                format!("bytes {start}..{end} fail verification (its own copy, asked for alone)"),
            )),
            Probe::Good(bytes) => {
                good.get_or_insert(bytes);
            }
            Probe::NoAnswer => {}
        }
    }
    if let (true, Some(good), Some(stored)) = (bad.is_empty(), good, stored) {
        for &(s, e, server) in origins {
            let at = |x: u64| usize::try_from(x - start).unwrap_or(usize::MAX);
            let (a, b) = (at(s), at(e));
            let differs = stored.get(a..b) != good.get(a..b);
            if differs && !bad.iter().any(|(x, _)| *x == server) {
                bad.push((
                    server,
                    format!(
                        "bytes {s}..{e} it delivered fail verification (they differ from the \
                         verified copy)"
                    ),
                ));
            }
        }
    }
    bad
}

/// Fetches and checks the object's tree from `server`.
pub(super) async fn fetch_tree<G: FnMut(&Progress)>(
    plan: &FetchPlan,
    engine: &mut Engine<'_, G>,
    meta: &ObjectMeta,
) -> Result<Tree, String> {
    let n = tree::groups(meta.len, meta.group_log2);
    if n < 2 {
        return Ok(Tree::whole(meta));
    }
    let mut bytes = Vec::new();
    let name = format!("{TREE_PREFIX}{}", plan.name);
    engine
        .receive(&name, 0, n * 32, &mut bytes)
        .await
        .map_err(|e| e.to_string())?;
    Tree::check(meta, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(len: usize) -> (Vec<u8>, ObjectMeta, Tree) {
        let data: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        let mut t = tree::TreeHasher::new(len as u64);
        t.update(&data);
        let log2 = t.log2();
        let (digest, cvs) = t.finish();
        let meta = ObjectMeta {
            len: len as u64,
            digest,
            group_log2: log2,
        };
        let list: Vec<u8> = cvs.concat();
        let tree = Tree::check(&meta, &list).unwrap();
        (data, meta, tree)
    }

    /// A sink that cannot take bytes back, as a FIFO.
    struct Fifo(Vec<u8>);

    impl Sink for Fifo {
        fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
            self.0.extend_from_slice(bytes);
            Ok(())
        }

        fn restart(&mut self) -> Result<(), NetError> {
            Ok(())
        }

        fn rewindable(&self) -> bool {
            false
        }
    }

    #[test]
    fn an_output_that_cannot_take_bytes_back_never_gets_a_bad_group() {
        let (data, _, tree) = object((3 << 16) + 100);
        let mut bad = data.clone();
        bad[(1 << 16) + 7] ^= 1;
        let mut fifo = Fifo(Vec::new());
        let mut v = Verify::new(&mut fifo, &tree, "f", 0);
        let e = bad.chunks(1000).find_map(|c| v.put(c).err());
        assert!(
            matches!(e, Some(NetError::Corrupt { group: 1, .. })),
            "{e:?}"
        );
        assert_eq!(fifo.0, data[..1 << 16], "only the verified first group");
        // Continued from the failed group with good bytes: the whole object, once.
        let mut v = Verify::new(&mut fifo, &tree, "f", 1 << 16);
        v.put(&data[1 << 16..]).unwrap();
        assert!(fifo.0 == data);
    }

    #[test]
    fn good_bytes_pass_in_any_pieces_and_a_bad_group_is_named() {
        let (data, meta, tree) = object((3 << 16) + 100);
        assert!(tree.per_group());
        for piece in [1, 999, 1 << 16, 70_000] {
            let mut out = Vec::new();
            let mut v = Verify::new(&mut out, &tree, "f", 0);
            for c in data.chunks(piece) {
                v.put(c).unwrap();
            }
            assert_eq!(out, data);
        }
        let mut bad = data.clone();
        bad[(2 << 16) + 5] ^= 0xff;
        let mut out = Vec::new();
        let mut v = Verify::new(&mut out, &tree, "f", 0);
        let e = bad.chunks(4000).find_map(|c| v.put(c).err()).unwrap();
        let NetError::Corrupt {
            group, start, end, ..
        } = e
        else {
            panic!("{e}");
        };
        assert_eq!((group, start, end), (2, 2 << 16, 3 << 16));
        assert!(
            out.len() as u64 <= end,
            "nothing after the bad group is passed on"
        );
        // From a group boundary (a resumed or re-fetched range).
        let mut out = Vec::new();
        let mut v = Verify::new(&mut out, &tree, "f", 1 << 16);
        v.put(&data[1 << 16..]).unwrap();
        assert!(tree.verify(3, &data[3 << 16..]));
        assert!(!tree.verify(2, &bad[2 << 16..3 << 16]));
        assert!(Tree::check(&meta, &[0; 4 * 32]).is_err(), "a forged tree");
        assert!(Tree::check(&meta, &[0; 32]).is_err(), "a short tree");
    }
}
