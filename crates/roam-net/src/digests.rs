//! The served files' digests and BLAKE3 group trees (`tree.rs`): computed once per file
//! *version*, shared by concurrent requests, kept for many files in bounded memory, and
//! never waited for longer than a caller asks (issue 28, item 5).
//!
//! A version is the opened file's identity (device, inode) with its length, modification and
//! status-change times, read by `fstat` on the descriptor that is then hashed, so a renamed,
//! replaced or rewritten file is a new version, never a stale digest. The first request for a
//! version starts one hashing thread (at most [`MAX_HASHING`] at once); every request —
//! that one included — waits at most its own timeout and otherwise learns how far the hash
//! has got ([`Status::Hashing`]), which the server tells the client (`.roam-meta/NAME` of kind
//! "hashing") so that it waits instead of timing out. At most [`MAX_DIGESTS`] versions are
//! kept (about 100 bytes each; the oldest goes first), and group trees (up to 32 KiB each)
//! for at most [`TREE_BUDGET`] bytes: a tree asked for after it was dropped is computed again.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::tree::{Cv, TreeHasher};

/// Versions whose digest is kept at most.
pub(crate) const MAX_DIGESTS: usize = 65_536;

/// Bytes of group trees kept at most.
pub(crate) const TREE_BUDGET: usize = 64 << 20;

/// Files hashed at once at most; a request past it is told "hashing, 0 bytes so far" and
/// asks again later.
pub(crate) const MAX_HASHING: usize = 4;

/// One version of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Version {
    dev: u64,
    ino: u64,
    /// Its length in bytes.
    pub(crate) len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Version {
    /// The version of the open file `f`.
    pub(crate) fn of(f: &File) -> Option<Version> {
        let m = f.metadata().ok()?;
        Some(Version {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// A finished hash.
#[derive(Debug, Clone)]
pub(crate) struct Hashed {
    /// BLAKE3 of the file.
    pub(crate) digest: [u8; 32],
    /// log2 of the tree's group size.
    pub(crate) log2: u8,
    /// The groups' chaining values (empty for a one-group file); `None` once dropped.
    pub(crate) tree: Option<Arc<Vec<Cv>>>,
}

/// Where a version's hash stands.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    /// Known.
    Ready(Hashed),
    /// Being computed: bytes hashed so far.
    Hashing(u64),
    /// The file could not be read whole.
    Failed,
}

#[derive(Debug)]
enum State {
    Running,
    Done(Option<Hashed>),
}

#[derive(Debug)]
struct Slot {
    state: Mutex<State>,
    done: Condvar,
    hashed: AtomicU64,
}

/// The cache.
#[derive(Debug, Default)]
pub(crate) struct Digests {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    slots: HashMap<Version, Arc<Slot>>,
    order: VecDeque<Version>,
    /// Versions holding a tree, oldest first, and the trees' bytes.
    trees: VecDeque<Version>,
    tree_bytes: usize,
    running: usize,
}

impl Inner {
    /// Records a finished hash's tree against the budget, dropping the oldest trees past it.
    fn account_tree(&mut self, version: Version, bytes: usize) {
        self.trees.push_back(version);
        self.tree_bytes += bytes;
        while self.tree_bytes > TREE_BUDGET {
            let Some(old) = self.trees.pop_front() else {
                break;
            };
            if let Some(slot) = self.slots.get(&old) {
                if let Ok(mut st) = slot.state.lock() {
                    if let State::Done(Some(h)) = &mut *st {
                        if let Some(t) = h.tree.take() {
                            self.tree_bytes = self.tree_bytes.saturating_sub(t.len() * 32);
                        }
                    }
                }
            }
        }
    }
}

impl Digests {
    /// The digest and group size of `version` if known now (never blocks on a computation).
    pub(crate) fn known(&self, version: &Version) -> Option<([u8; 32], u8)> {
        let slot = self.inner.lock().ok()?.slots.get(version)?.clone();
        let st = slot.state.lock().ok()?;
        match &*st {
            State::Done(Some(h)) => Some((h.digest, h.log2)),
            _ => None,
        }
    }

    /// Where the hash of `file` at `version` stands, waiting at most `wait` for it: starts
    /// the computation if nobody has (or, with `need_tree`, if its tree was dropped).
    pub(crate) fn status(
        &self,
        file: &Arc<File>,
        version: &Version,
        wait: Duration,
        need_tree: bool,
    ) -> Status {
        let Some(slot) = self.slot(file, version, need_tree) else {
            return Status::Hashing(0);
        };
        let Ok(st) = slot.state.lock() else {
            return Status::Failed;
        };
        let Ok((st, _)) = slot
            .done
            .wait_timeout_while(st, wait, |s| matches!(s, State::Running))
        else {
            return Status::Failed;
        };
        match &*st {
            State::Done(Some(h)) => Status::Ready(h.clone()),
            State::Done(None) => Status::Failed,
            State::Running => Status::Hashing(slot.hashed.load(Ordering::Relaxed)),
        }
    }

    /// The slot of `version`, started now if needed; `None` when too many hashes run.
    fn slot(&self, file: &Arc<File>, version: &Version, need_tree: bool) -> Option<Arc<Slot>> {
        let mut inner = self.inner.lock().ok()?;
        if let Some(s) = inner.slots.get(version) {
            let dropped = need_tree
                && s.state
                    .lock()
                    .is_ok_and(|st| matches!(&*st, State::Done(Some(h)) if h.tree.is_none()));
            if !dropped {
                return Some(s.clone());
            }
            inner.slots.remove(version);
            inner.order.retain(|v| v != version);
        }
        if inner.running >= MAX_HASHING {
            return None;
        }
        while inner.order.len() >= MAX_DIGESTS {
            if let Some(old) = inner.order.pop_front() {
                inner.slots.remove(&old);
            }
        }
        let slot = Arc::new(Slot {
            state: Mutex::new(State::Running),
            done: Condvar::new(),
            hashed: AtomicU64::new(0),
        });
        inner.slots.insert(*version, slot.clone());
        inner.order.push_back(*version);
        inner.running += 1;
        let (file, shared, job, version) =
            (file.clone(), self.inner.clone(), slot.clone(), *version);
        let spawned = std::thread::Builder::new()
            .name("roam-hash".into())
            .spawn(move || {
                let result = hash(&file, version.len, &job.hashed);
                let tree_bytes = result
                    .as_ref()
                    .map_or(0, |h| h.tree.as_ref().map_or(0, |t| t.len() * 32));
                if let Ok(mut st) = job.state.lock() {
                    *st = State::Done(result);
                }
                job.done.notify_all();
                if let Ok(mut inner) = shared.lock() {
                    inner.running -= 1;
                    if tree_bytes > 0 && inner.slots.contains_key(&version) {
                        inner.account_tree(version, tree_bytes);
                    }
                }
            });
        if spawned.is_err() {
            inner.running -= 1;
            inner.slots.remove(&version);
            return None;
        }
        Some(slot)
    }

    /// Versions held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().map(|i| i.slots.len()).unwrap_or(0)
    }
}

/// BLAKE3 and group tree of the first `len` bytes of `file`, counting progress in `hashed`;
/// `None` if it cannot be read whole.
fn hash(file: &File, len: u64, hashed: &AtomicU64) -> Option<Hashed> {
    let mut hasher = TreeHasher::new(len);
    let log2 = hasher.log2();
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        let want = usize::try_from((len - off).min(buf.len() as u64)).ok()?;
        let n = file.read_at(&mut buf[..want], off).ok()?;
        if n == 0 {
            return None;
        }
        hasher.update(&buf[..n]);
        off += n as u64;
        hashed.store(off, Ordering::Relaxed);
    }
    let (digest, tree) = hasher.finish();
    Some(Hashed {
        digest,
        log2,
        tree: Some(Arc::new(tree)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn one_computation_per_version_shared_by_concurrent_callers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 3 << 20]).unwrap();
        let d = Arc::new(Digests::default());
        let f = Arc::new(File::open(&p).unwrap());
        let v = Version::of(&f).unwrap();
        assert_eq!(d.known(&v), None);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (d, f) = (d.clone(), f.clone());
                std::thread::spawn(move || d.status(&f, &v, LONG, false))
            })
            .collect();
        let want = *blake3::hash(&vec![7u8; 3 << 20]).as_bytes();
        for t in threads {
            let Status::Ready(h) = t.join().unwrap() else {
                panic!("not ready");
            };
            assert_eq!(h.digest, want);
            assert_eq!(h.tree.map(|t| t.len()), Some(48), "3 MiB in 64 KiB groups");
        }
        assert_eq!(d.len(), 1, "one version, one slot");
        assert_eq!(d.known(&v), Some((want, 16)));
        // Rewritten: a new version (ctime changes even if mtime were kept).
        std::fs::write(&p, b"other").unwrap();
        let f2 = Arc::new(File::open(&p).unwrap());
        let v2 = Version::of(&f2).unwrap();
        assert_ne!(v, v2);
        assert_eq!(d.known(&v2), None);
        let Status::Ready(h) = d.status(&f2, &v2, LONG, false) else {
            panic!("not ready");
        };
        assert_eq!(h.digest, *blake3::hash(b"other").as_bytes());
    }

    #[test]
    fn a_caller_that_cannot_wait_learns_how_far_the_hash_has_got() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![1u8; 64 << 20]).unwrap();
        let d = Digests::default();
        let f = Arc::new(File::open(&p).unwrap());
        let v = Version::of(&f).unwrap();
        assert!(matches!(
            d.status(&f, &v, Duration::ZERO, false),
            Status::Hashing(_)
        ));
        // The computation goes on without callers; a later one with time finds it done.
        let Status::Ready(h) = d.status(&f, &v, LONG, false) else {
            panic!("not ready");
        };
        assert_eq!(h.digest, *blake3::hash(&vec![1u8; 64 << 20]).as_bytes());
    }

    /// Issue 28, item 5: more than 256 files (the old open-file cache, which forgot digests
    /// with it) keep their digests: cycling through them hashes none again.
    #[test]
    fn digests_outlive_the_open_file_cache() {
        let dir = tempfile::tempdir().unwrap();
        let d = Digests::default();
        let versions: Vec<(Arc<File>, Version)> = (0..300u32)
            .map(|i| {
                let p = dir.path().join(format!("f{i}"));
                std::fs::write(&p, i.to_le_bytes()).unwrap();
                let f = Arc::new(File::open(&p).unwrap());
                let v = Version::of(&f).unwrap();
                // At most MAX_HASHING run at once: a hash just finished may not have left
                // the count yet, so ask again (bounded).
                let ready = (0..2000).any(|_| {
                    let r = matches!(d.status(&f, &v, LONG, false), Status::Ready(_));
                    if !r {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    r
                });
                assert!(ready, "file {i} never hashed");
                (f, v)
            })
            .collect();
        assert_eq!(d.len(), 300);
        for (i, (_, v)) in versions.iter().enumerate() {
            let want = *blake3::hash(&(i as u32).to_le_bytes()).as_bytes();
            assert_eq!(d.known(v).map(|k| k.0), Some(want), "file {i} forgotten");
        }
    }
}
