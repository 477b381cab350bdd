//! The served files' digests: computed once per file *version*, shared by concurrent
//! requests, kept for many files in bounded memory (issue 28, item 5).
//!
//! A version is the opened file's identity (device, inode) with its length, modification and
//! status-change times, read by `fstat` on the descriptor that is then hashed, so a renamed,
//! replaced or rewritten file is a new version, never a stale digest. Requests for one version
//! share one [`OnceLock`]: the first computes (on the blocking pool, never on the driver's
//! task), the others wait for its result instead of starting another full read. At most
//! [`MAX_DIGESTS`] versions are kept (about 100 bytes each); the oldest goes first.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::{Arc, Mutex, OnceLock};

/// Versions whose digest is kept at most.
pub(crate) const MAX_DIGESTS: usize = 65_536;

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

/// A digest being computed or known (`None`: the file could not be read whole).
type Slot = Arc<OnceLock<Option<[u8; 32]>>>;

/// The cache.
#[derive(Debug, Default)]
pub(crate) struct Digests {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    slots: HashMap<Version, Slot>,
    order: VecDeque<Version>,
}

impl Digests {
    /// The digest of `file` at `version` if known now (never blocks on a computation).
    pub(crate) fn known(&self, version: &Version) -> Option<[u8; 32]> {
        let inner = self.inner.lock().ok()?;
        inner.slots.get(version)?.get().copied().flatten()
    }

    /// The digest of `file` at `version`: computed here if nobody has, else waits for the
    /// computation under way or takes the known one. Call it off the driver's task.
    pub(crate) fn get(&self, file: &File, version: &Version) -> Option<[u8; 32]> {
        let slot = {
            let mut inner = self.inner.lock().ok()?;
            match inner.slots.get(version) {
                Some(s) => s.clone(),
                None => {
                    while inner.order.len() >= MAX_DIGESTS {
                        if let Some(old) = inner.order.pop_front() {
                            inner.slots.remove(&old);
                        }
                    }
                    let s = Slot::default();
                    inner.slots.insert(*version, s.clone());
                    inner.order.push_back(*version);
                    s
                }
            }
        };
        *slot.get_or_init(|| hash(file, version.len))
    }

    /// Versions held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().map(|i| i.slots.len()).unwrap_or(0)
    }
}

/// BLAKE3 of the first `len` bytes of `file`; `None` if it cannot be read whole.
fn hash(file: &File, len: u64) -> Option<[u8; 32]> {
    let mut hasher = blake3::Hasher::new();
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
    }
    Some(*hasher.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

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
                std::thread::spawn(move || d.get(&f, &v))
            })
            .collect();
        let want = *blake3::hash(&vec![7u8; 3 << 20]).as_bytes();
        for t in threads {
            assert_eq!(t.join().unwrap(), Some(want));
        }
        assert_eq!(d.len(), 1, "one version, one slot");
        assert_eq!(d.known(&v), Some(want));
        // Rewritten: a new version (ctime changes even if mtime were kept).
        std::fs::write(&p, b"other").unwrap();
        let f2 = File::open(&p).unwrap();
        let v2 = Version::of(&f2).unwrap();
        assert_ne!(v, v2);
        assert_eq!(d.known(&v2), None);
        assert_eq!(d.get(&f2, &v2), Some(*blake3::hash(b"other").as_bytes()));
    }
}
