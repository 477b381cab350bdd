//! Serving a directory: object names map to regular files under the root, never outside it
//! (no `..`, no absolute names, no symlink that leads out: every open is resolved beneath the
//! root in one step, `beneath.rs`), and every object `NAME` has a
//! synthesised companion `.roam-meta/NAME` holding its length and BLAKE3 digest, so a client
//! can verify what several mirrors send (format: `docs/RUNTIME.md`).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use roam_proto::rcp::ObjectStore;

use crate::beneath::{open_beneath_checked, open_root, Unservable};
use crate::digests::{Digests, Status, Version};
use crate::tree;
use crate::NetError;
use roam_wire::{MetaMessage, Unavailable, META_LEN};

/// The reserved prefix of metadata objects.
pub const META_PREFIX: &str = ".roam-meta/";

/// The reserved prefix of generated objects for `roam perf`: `.roam-perf/N` is `N` bytes
/// (at most [`MAX_PERF_OBJECT`]) of [`perf_byte`], read from no disk.
pub const PERF_PREFIX: &str = ".roam-perf/";

/// Largest generated object (1 TiB).
pub const MAX_PERF_OBJECT: u64 = 1 << 40;

/// Byte `i` of every generated object.
pub fn perf_byte(i: u64) -> u8 {
    (i % 251) as u8
}

/// The length a generated object's name asks for.
fn perf_len(name: &[u8]) -> Option<u64> {
    let n = std::str::from_utf8(name.strip_prefix(PERF_PREFIX.as_bytes())?).ok()?;
    n.parse::<u64>().ok().filter(|n| *n <= MAX_PERF_OBJECT)
}

/// Length and digest of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectMeta {
    /// Bytes.
    pub len: u64,
    /// BLAKE3 of the bytes.
    pub digest: [u8; 32],
    /// log2 of the size of the groups its tree (`.roam-tree/NAME`) is cut at.
    pub group_log2: u8,
}

/// The reserved prefix of tree objects: `.roam-tree/NAME` is the chaining values of `NAME`'s
/// groups (`tree.rs`), 32 bytes each, empty for an object of one group.
pub const TREE_PREFIX: &str = ".roam-tree/";

/// How long a metadata request waits for a digest being computed before the server answers
/// "hashing" (the client asks again): well below any client's stall timeout.
pub const META_WAIT: Duration = Duration::from_millis(250);

/// How long a tree request waits for its tree (asked for after the metadata said ready, so
/// only a tree dropped from the cache is computed again here).
const TREE_WAIT: Duration = Duration::from_secs(30);

/// Longest object name a client may ask for: its metadata object's name
/// (`.roam-meta/NAME`) must fit an RCP SYN's name field ([`roam_wire::MAX_OBJECT_NAME`]).
pub const MAX_NAME: usize = roam_wire::MAX_OBJECT_NAME - META_PREFIX.len();

/// Why `name` cannot be asked for, if it cannot: the rules a server applies (a relative
/// path of normal components, UTF-8, no NUL or backslash, no reserved `.roam-` prefix) and
/// the length that fits on the wire. A client checks before sending, so that no name is cut
/// short and served as another.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong(name.len()));
    }
    if name.starts_with(".roam-") {
        return Err(NameError::Reserved);
    }
    if safe_relative(name.as_bytes()).is_none() {
        return Err(NameError::NotPlain);
    }
    Ok(())
}

/// Why an object name cannot be asked for ([`check_name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("the name is empty")]
    Empty,
    /// The name (this many bytes) does not fit a request.
    #[error("the name is {0} bytes long; at most {MAX_NAME} fit a request")]
    TooLong(usize),
    /// The name starts with the reserved `.roam-` prefix.
    #[error("names starting with .roam- are reserved")]
    Reserved,
    /// The name is not a relative path of plain components (or not UTF-8, or holds a NUL).
    #[error("not a relative path of plain components (no .., no leading . or /, no \\)")]
    NotPlain,
}

/// Why a directory cannot be served ([`crate::NetError::ServeDir`]).
#[derive(Debug, thiserror::Error)]
pub enum ServeDirError {
    /// It cannot be resolved or opened.
    #[error("{0}")]
    Io(std::io::Error),
    /// It is not a directory.
    #[error("not a directory")]
    NotADirectory,
}

/// Parses a BLAKE3 digest written as 64 hexadecimal digits (as `b3sum` prints it).
pub fn parse_digest(hex: &str) -> Result<[u8; 32], DigestError> {
    blake3::Hash::from_hex(hex.trim())
        .map(|h| *h.as_bytes())
        .map_err(|_| DigestError(hex.to_string()))
}

/// A text that is not a BLAKE3 digest ([`parse_digest`]); holds the text as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a BLAKE3 digest (64 hexadecimal digits)")]
pub struct DigestError(pub String);

/// The relative path `name` names, if it is one a server serves.
fn safe_relative(name: &[u8]) -> Option<PathBuf> {
    let name = std::str::from_utf8(name).ok()?;
    if name.is_empty() || name.contains('\0') || name.contains('\\') {
        return None;
    }
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(part) => out.push(part),
            // `.`, `..`, a root or a prefix: refused, not normalised.
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// A served file opened beneath the root ([`DirStore::open`]), with the version its reads
/// and digest belong to.
#[derive(Debug, Clone)]
pub struct Opened {
    file: Arc<File>,
    version: Version,
}

impl Opened {
    /// Its length in bytes (when opened).
    pub fn len(&self) -> u64 {
        self.version.len
    }

    /// True if it is empty.
    pub fn is_empty(&self) -> bool {
        self.version.len == 0
    }

    /// Appends bytes `offset .. offset + len` to `out` (zeros where the file has shrunk since:
    /// the client's digest check catches it).
    pub fn read_into(&self, offset: u64, len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + len, 0);
        let mut done = 0;
        while done < len {
            match self
                .file
                .read_at(&mut out[start + done..], offset + done as u64)
            {
                Ok(0) | Err(_) => break,
                Ok(n) => done += n,
            }
        }
        out[start + done..].fill(0);
    }
}

/// A directory served as objects. Every file is opened beneath the root in one step
/// (`beneath.rs`: `openat2(RESOLVE_BENEATH)`); digests are cached per file version
/// (`digests.rs`).
#[derive(Debug)]
pub struct DirStore {
    root: PathBuf,
    dir: OwnedFd,
    digests: Digests,
}

impl DirStore {
    /// Serves the files under `root`.
    pub fn new(root: &Path) -> Result<DirStore, NetError> {
        let err = |reason: ServeDirError| NetError::ServeDir {
            path: root.display().to_string(),
            reason,
        };
        let canonical = root.canonicalize().map_err(|e| err(ServeDirError::Io(e)))?;
        if !canonical.is_dir() {
            return Err(err(ServeDirError::NotADirectory));
        }
        let dir = open_root(&canonical).map_err(|e| err(ServeDirError::Io(e)))?;
        Ok(DirStore {
            root: canonical,
            dir,
            digests: Digests::default(),
        })
    }

    /// The served directory (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens the file `name` names, if it is a regular file beneath the root, resolved in one
    /// step (no check-then-open gap).
    pub fn open(&self, name: &[u8]) -> Option<Opened> {
        self.open_checked(name).ok()
    }

    /// As [`DirStore::open`], saying why not: a name that exists but cannot be served
    /// (unreadable, not a regular file) is told apart from a missing one.
    fn open_checked(&self, name: &[u8]) -> Result<Opened, Unservable> {
        let rel = safe_relative(name).ok_or(Unservable::Missing)?;
        let file = open_beneath_checked(&self.dir, &rel)?;
        let version = Version::of(&file).ok_or(Unservable::Unreadable)?;
        Ok(Opened {
            file: Arc::new(file),
            version,
        })
    }

    /// The metadata's answer for a name that exists but cannot be served.
    fn unavailable(&self, name: &[u8]) -> Option<MetaMessage> {
        match self.open_checked(name) {
            Err(Unservable::Unreadable) => Some(MetaMessage::Unavailable(Unavailable::Unreadable)),
            Err(Unservable::NotRegular) => Some(MetaMessage::Unavailable(Unavailable::NotRegular)),
            _ => None,
        }
    }

    /// The metadata message of the object `name`: ready (length, digest, group size) if the
    /// digest is known or becomes known within `wait`, else how far the computation (started
    /// now if nobody has, shared by every request) has got. Call it off the driver's task.
    pub fn meta_message(&self, name: &[u8], wait: Duration) -> Option<MetaMessage> {
        let Some(o) = self.open(name) else {
            return self.unavailable(name);
        };
        Some(
            match self.digests.status(&o.file, &o.version, wait, false) {
                Status::Ready(h) => MetaMessage::Ready {
                    len: o.len(),
                    digest: h.digest,
                    group_log2: h.log2,
                },
                Status::Hashing(hashed) => MetaMessage::Hashing {
                    len: o.len(),
                    hashed: hashed.min(o.len()),
                },
                Status::Failed => return None,
            },
        )
    }

    /// Length and digest of the object `name`, waiting as long as the computation takes
    /// (computed once per file version and shared). Call it off the driver's task.
    pub fn meta(&self, name: &[u8]) -> Option<ObjectMeta> {
        loop {
            match self.meta_message(name, Duration::from_secs(1))? {
                MetaMessage::Ready {
                    len,
                    digest,
                    group_log2,
                } => {
                    return Some(ObjectMeta {
                        len,
                        digest,
                        group_log2,
                    })
                }
                MetaMessage::Hashing { .. } => std::thread::sleep(Duration::from_millis(50)),
                MetaMessage::Unavailable(_) => return None,
            }
        }
    }

    /// The tree object of `name`: its groups' chaining values (empty for one group).
    fn tree_bytes(&self, name: &[u8]) -> Option<Vec<u8>> {
        let o = self.open(name)?;
        match self.digests.status(&o.file, &o.version, TREE_WAIT, true) {
            Status::Ready(h) => Some(h.tree?.concat()),
            _ => None,
        }
    }

    /// The bytes of a synthesised object (`.roam-meta/NAME`, `.roam-tree/NAME`), computed
    /// (or waited for) now; `None` for any other name or a file that cannot be read. Call it
    /// off the driver's task.
    pub fn synthesised(&self, name: &[u8]) -> Option<Vec<u8>> {
        if let Some(obj) = name.strip_prefix(META_PREFIX.as_bytes()) {
            return Some(self.meta_message(obj, META_WAIT)?.encode().to_vec());
        }
        if let Some(obj) = name.strip_prefix(TREE_PREFIX.as_bytes()) {
            return self.tree_bytes(obj);
        }
        None
    }

    /// Appends bytes `offset .. offset + len` of `name` (file, metadata, tree or generated
    /// object) to `out`, reading the disk and hashing as needed: call it off the driver's
    /// task. A file that shrank meanwhile is padded with zeros (the client's checks catch it).
    pub fn read_blocking(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        if perf_len(name).is_some() {
            crate::pattern::extend(out, offset, len);
        } else if name.starts_with(b".roam-") {
            if let Some(bytes) = self.synthesised(name) {
                copy_range(&bytes, offset, len, out);
            }
        } else if let Some(o) = self.open(name) {
            o.read_into(offset, len, out);
        }
        out.resize(start + len, 0);
    }

    /// The metadata of `name` if its digest is already known (an open and an `fstat`, no read).
    fn cached_meta(&self, name: &[u8]) -> Option<MetaMessage> {
        let o = self.open(name)?;
        let (digest, group_log2) = self.digests.known(&o.version)?;
        Some(MetaMessage::Ready {
            len: o.len(),
            digest,
            group_log2,
        })
    }
}

fn copy_range(bytes: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
    let from = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let to = from.saturating_add(len).min(bytes.len());
    out.extend_from_slice(&bytes[from..to]);
}

/// The engines ask without blocking: lengths come from an open and an `fstat` (the metadata object's length
/// does not depend on the digest), generated objects and known metadata are answered at once,
/// and file bytes (and digests not yet computed) are read by the host ([`DirStore::read_blocking`]
/// on a blocking thread, supplied to the sender when done: see `Server`).
impl ObjectStore for DirStore {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        if name.starts_with(PERF_PREFIX.as_bytes()) {
            return perf_len(name);
        }
        if let Some(obj) = name.strip_prefix(META_PREFIX.as_bytes()) {
            // A name that exists but cannot be served has metadata too: saying why.
            if self.open(obj).is_none() {
                self.unavailable(obj)?;
            }
            return Some(META_LEN as u64);
        }
        if let Some(obj) = name.strip_prefix(TREE_PREFIX.as_bytes()) {
            let len = self.open(obj)?.len();
            let n = tree::groups(len, tree::group_log2(len));
            return Some(if n < 2 { 0 } else { n * 32 });
        }
        Some(self.open(name)?.len())
    }

    fn read_now(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        if perf_len(name).is_some() {
            crate::pattern::extend(out, offset, len);
            return true;
        }
        if let Some(obj) = name.strip_prefix(META_PREFIX.as_bytes()) {
            if let Some(m) = self.cached_meta(obj) {
                let start = out.len();
                copy_range(&m.encode(), offset, len, out);
                out.resize(start + len, 0);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_leave_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.bin"), b"hello").unwrap();
        std::fs::write(dir.path().join("secret"), b"no").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/a.bin", root.join("inside")).unwrap();
        std::os::unix::fs::symlink(root.join("sub/a.bin"), root.join("absolute")).unwrap();
        std::os::unix::fs::symlink("../sub/a.bin", root.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("../secret", root.join("sub/out")).unwrap();
        let s = DirStore::new(&root).unwrap();
        assert_eq!(s.object_len(b"sub/a.bin"), Some(5));
        assert_eq!(s.object_len(b"inside"), Some(5), "a symlink inside is fine");
        assert_eq!(s.object_len(b"sub/up"), Some(5), "up and back in is fine");
        for bad in [
            &b"absolute"[..],
            b"sub/out",
            b"../secret",
            b"sub/../../secret",
            b"/etc/passwd",
            b"link",
            b"sub",
            b"",
            b"./sub/a.bin",
            b"sub/a.bin\0",
            b"\xff",
        ] {
            assert_eq!(
                s.object_len(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn clients_refuse_names_that_do_not_fit_or_would_be_refused() {
        assert!(check_name("sub/a.bin").is_ok());
        assert!(check_name(&"y".repeat(MAX_NAME)).is_ok());
        let long = format!("long/{}/../../etc/passwd-NOT-A-FILE", "y".repeat(250));
        for bad in [
            "",
            &"y".repeat(MAX_NAME + 1),
            &long,
            "../x",
            "/etc/passwd",
            "a\\b",
            "a\0b",
            ".roam-meta/x",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn metadata_carries_length_and_digest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"abc").unwrap();
        let s = DirStore::new(dir.path()).unwrap();
        let n = s.object_len(b".roam-meta/f").unwrap();
        let mut out = Vec::new();
        assert!(
            !s.read_now(b".roam-meta/f", 0, n as usize, &mut out),
            "not hashed yet"
        );
        assert_eq!(n, META_LEN as u64);
        s.read_blocking(b".roam-meta/f", 0, n as usize, &mut out);
        assert_eq!(
            MetaMessage::decode(&out),
            Ok(MetaMessage::Ready {
                len: 3,
                digest: *blake3::hash(b"abc").as_bytes(),
                group_log2: 16
            })
        );
        let mut again = Vec::new();
        assert!(
            s.read_now(b".roam-meta/f", 0, n as usize, &mut again),
            "cached"
        );
        assert_eq!(again, out);
        assert!(
            !s.read_now(b"f", 0, 3, &mut again),
            "file bytes are the host's to read"
        );
        assert_eq!(s.object_len(b".roam-meta/../f"), None);
        assert_eq!(s.object_len(b".roam-tree/f"), Some(0), "one group: no list");
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert_eq!(s.object_len(b".roam-meta/d"), Some(META_LEN as u64));
        assert_eq!(
            s.meta_message(b"d", META_WAIT),
            Some(MetaMessage::Unavailable(Unavailable::NotRegular))
        );
        assert_eq!(s.object_len(b".roam-meta/absent"), None, "missing: reset");
    }

    #[test]
    fn the_tree_object_lists_every_group_and_merges_to_the_digest() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..(3u32 << 16) + 7).map(|i| (i % 249) as u8).collect();
        std::fs::write(dir.path().join("f"), &data).unwrap();
        let s = DirStore::new(dir.path()).unwrap();
        assert_eq!(s.object_len(b".roam-tree/f"), Some(4 * 32));
        let mut out = Vec::new();
        s.read_blocking(b".roam-tree/f", 0, 128, &mut out);
        let cvs: Vec<[u8; 32]> = out.chunks(32).map(|c| c.try_into().unwrap()).collect();
        assert_eq!(tree::root(&cvs), Some(*blake3::hash(&data).as_bytes()));
        assert_eq!(
            s.meta(b"f").map(|m| m.digest),
            Some(*blake3::hash(&data).as_bytes())
        );
    }

    #[test]
    fn generated_objects_have_their_length_and_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let s = DirStore::new(dir.path()).unwrap();
        assert_eq!(s.object_len(b".roam-perf/1000"), Some(1000));
        assert_eq!(s.object_len(b".roam-perf/x"), None);
        assert_eq!(s.object_len(b".roam-perf/1099511627777"), None);
        let mut out = Vec::new();
        assert!(s.read_now(b".roam-perf/1000", 250, 3, &mut out));
        assert_eq!(out, [250, 0, 1]);
    }

    #[test]
    fn a_missing_directory_is_a_clear_error() {
        let e = DirStore::new(Path::new("/nonexistent/roam")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/roam"));
        assert!(matches!(
            e,
            NetError::ServeDir {
                reason: ServeDirError::Io(_),
                ..
            }
        ));
        let file = tempfile::NamedTempFile::new().unwrap();
        let e = DirStore::new(file.path()).unwrap_err();
        assert!(e.to_string().ends_with(": not a directory"), "{e}");
    }

    /// The refusals a library user matches on keep the words the CLI always printed.
    #[test]
    fn name_and_digest_errors_are_typed_and_keep_their_words() {
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert_eq!(check_name(".roam-x"), Err(NameError::Reserved));
        assert_eq!(check_name("../x"), Err(NameError::NotPlain));
        let long = "y".repeat(MAX_NAME + 1);
        assert_eq!(check_name(&long), Err(NameError::TooLong(MAX_NAME + 1)));
        assert_eq!(
            NameError::TooLong(300).to_string(),
            format!("the name is 300 bytes long; at most {MAX_NAME} fit a request")
        );
        assert_eq!(
            NameError::NotPlain.to_string(),
            "not a relative path of plain components (no .., no leading . or /, no \\)"
        );
        let e = NetError::Name {
            name: "..".into(),
            reason: NameError::NotPlain,
        };
        assert!(
            e.to_string().starts_with("\"..\": not a relative path"),
            "{e}"
        );
        assert_eq!(parse_digest("xyz"), Err(DigestError("xyz".into())));
        assert_eq!(
            DigestError("xyz".into()).to_string(),
            "\"xyz\" is not a BLAKE3 digest (64 hexadecimal digits)"
        );
        let hex = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262";
        assert_eq!(parse_digest(hex).map(|d| d[0]), Ok(0xaf));
    }
}
