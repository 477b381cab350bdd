//! Serving a directory: object names map to regular files under the root, never outside it
//! (no `..`, no absolute names, no symlink that leads out), and every object `NAME` has a
//! synthesised companion `.roam-meta/NAME` holding its length and BLAKE3 digest, so a client
//! can verify what several mirrors send (format: `docs/RUNTIME.md`).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use roam_proto::rcp::ObjectStore;

use crate::NetError;

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
}

impl ObjectMeta {
    /// The metadata object's bytes: `roam-meta 1\nlen <decimal>\nblake3 <64 hex>\n`.
    pub fn encode(&self) -> Vec<u8> {
        format!(
            "roam-meta 1\nlen {}\nblake3 {}\n",
            self.len,
            blake3::Hash::from(self.digest).to_hex()
        )
        .into_bytes()
    }

    /// Parses [`ObjectMeta::encode`]'s output.
    pub fn decode(bytes: &[u8]) -> Result<ObjectMeta, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
        let mut lines = text.lines();
        if lines.next() != Some("roam-meta 1") {
            return Err("unknown metadata version".into());
        }
        let len = lines
            .next()
            .and_then(|l| l.strip_prefix("len "))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or("missing or bad length")?;
        let digest = lines
            .next()
            .and_then(|l| l.strip_prefix("blake3 "))
            .and_then(|h| blake3::Hash::from_hex(h).ok())
            .ok_or("missing or bad digest")?;
        Ok(ObjectMeta {
            len,
            digest: *digest.as_bytes(),
        })
    }
}

/// Longest object name a client may ask for: its metadata object's name
/// (`.roam-meta/NAME`) must fit an RCP SYN's name field ([`roam_wire::MAX_OBJECT_NAME`]).
pub const MAX_NAME: usize = roam_wire::MAX_OBJECT_NAME - META_PREFIX.len();

/// Why `name` cannot be asked for, if it cannot: the rules a server applies (a relative
/// path of normal components, UTF-8, no NUL or backslash, no reserved `.roam-` prefix) and
/// the length that fits on the wire. A client checks before sending, so that no name is cut
/// short and served as another.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!(
            "the name is {} bytes long; at most {MAX_NAME} fit a request",
            name.len()
        ));
    }
    if name.starts_with(".roam-") {
        return Err("names starting with .roam- are reserved".into());
    }
    if safe_relative(name.as_bytes()).is_none() {
        return Err(
            "not a relative path of plain components (no .., no leading . or /, no \\)".into(),
        );
    }
    Ok(())
}

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

#[derive(Debug)]
struct Cached {
    file: Arc<File>,
    len: u64,
    modified: Option<SystemTime>,
    meta: Option<ObjectMeta>,
}

/// A directory served as objects. Reads are positioned reads on cached open files.
#[derive(Debug)]
pub struct DirStore {
    root: PathBuf,
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

/// Files kept open at most (the cache is cleared when it grows past this).
const OPEN_FILES: usize = 256;

impl DirStore {
    /// Serves the files under `root`.
    pub fn new(root: &Path) -> Result<DirStore, NetError> {
        let err = |reason: String| NetError::ServeDir {
            path: root.display().to_string(),
            reason,
        };
        let root = root.canonicalize().map_err(|e| err(e.to_string()))?;
        if !root.is_dir() {
            return Err(err("not a directory".into()));
        }
        Ok(DirStore {
            root,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The file `name` names, if it is a regular file inside the root.
    pub fn resolve(&self, name: &[u8]) -> Option<PathBuf> {
        let rel = safe_relative(name)?;
        let full = self.root.join(rel).canonicalize().ok()?;
        (full.starts_with(&self.root) && full.is_file()).then_some(full)
    }

    /// Runs `f` on the cached entry of `path`, opening it if needed (reopened when the file
    /// changed length or modification time).
    fn with_entry<T>(&self, path: &Path, f: impl FnOnce(&mut Cached) -> T) -> Option<T> {
        let md = std::fs::metadata(path).ok()?;
        let modified = md.modified().ok();
        let mut cache = self.cache.lock().ok()?;
        let stale = cache
            .get(path)
            .is_none_or(|c| c.len != md.len() || c.modified != modified);
        if stale {
            if cache.len() >= OPEN_FILES {
                cache.clear();
            }
            let file = File::open(path).ok()?;
            cache.insert(
                path.to_path_buf(),
                Cached {
                    file: Arc::new(file),
                    len: md.len(),
                    modified,
                    meta: None,
                },
            );
        }
        cache.get_mut(path).map(f)
    }

    /// Length and digest of the object `name` (computed once per file version).
    pub fn meta(&self, name: &[u8]) -> Option<ObjectMeta> {
        let path = self.resolve(name)?;
        let (file, len, known) = self.with_entry(&path, |c| (c.file.clone(), c.len, c.meta))?;
        if let Some(m) = known {
            return Some(m);
        }
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
        let m = ObjectMeta {
            len,
            digest: *hasher.finalize().as_bytes(),
        };
        self.with_entry(&path, |c| c.meta = Some(m));
        Some(m)
    }
}

impl DirStore {
    /// Appends bytes `offset .. offset + len` of `name` (file, metadata or generated object)
    /// to `out`, reading the disk and hashing as needed: call it off the driver's task. A file
    /// that shrank meanwhile is padded with zeros (the client's digest check catches it).
    pub fn read_blocking(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        if perf_len(name).is_some() {
            crate::pattern::extend(out, offset, len);
        } else if let Some(obj) = name.strip_prefix(META_PREFIX.as_bytes()) {
            if let Some(m) = self.meta(obj) {
                copy_range(&m.encode(), offset, len, out);
            }
        } else if let Some(path) = self.resolve(name) {
            if let Some(file) = self.with_entry(&path, |c| c.file.clone()) {
                out.resize(start + len, 0);
                let mut done = 0;
                while done < len {
                    match file.read_at(&mut out[start + done..], offset + done as u64) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => done += n,
                    }
                }
                out.truncate(start + done);
            }
        }
        out.resize(start + len, 0);
    }

    /// The digest of `name` if it is already known (no disk access beyond a `stat`).
    fn cached_meta(&self, name: &[u8]) -> Option<ObjectMeta> {
        let path = self.resolve(name)?;
        self.with_entry(&path, |c| c.meta).flatten()
    }
}

fn copy_range(bytes: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
    let from = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let to = from.saturating_add(len).min(bytes.len());
    out.extend_from_slice(&bytes[from..to]);
}

/// The engines ask without blocking: lengths come from a `stat` (the metadata object's length
/// does not depend on the digest), generated objects and known metadata are answered at once,
/// and file bytes (and digests not yet computed) are read by the host ([`DirStore::read_blocking`]
/// on a blocking thread, supplied to the sender when done: see `Server`).
impl ObjectStore for DirStore {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        if name.starts_with(PERF_PREFIX.as_bytes()) {
            return perf_len(name);
        }
        if let Some(obj) = name.strip_prefix(META_PREFIX.as_bytes()) {
            let path = self.resolve(obj)?;
            let len = self.with_entry(&path, |c| c.len)?;
            let m = ObjectMeta {
                len,
                digest: [0; 32],
            };
            return Some(m.encode().len() as u64);
        }
        let path = self.resolve(name)?;
        self.with_entry(&path, |c| c.len)
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
        std::os::unix::fs::symlink(root.join("sub/a.bin"), root.join("inside")).unwrap();
        let s = DirStore::new(&root).unwrap();
        assert_eq!(s.object_len(b"sub/a.bin"), Some(5));
        assert_eq!(s.object_len(b"inside"), Some(5), "a symlink inside is fine");
        for bad in [
            &b"../secret"[..],
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
        s.read_blocking(b".roam-meta/f", 0, n as usize, &mut out);
        let m = ObjectMeta::decode(&out).unwrap();
        assert_eq!(m.len, 3);
        assert_eq!(m.digest, *blake3::hash(b"abc").as_bytes());
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
        assert!(ObjectMeta::decode(b"roam-meta 1\nlen x\n").is_err());
        assert_eq!(s.object_len(b".roam-meta/../f"), None);
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
    }
}
