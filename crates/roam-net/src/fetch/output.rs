//! The output of a download (`-o FILE`), made so that neither a careless user nor another
//! local user can turn it into a corrupted or clobbered file:
//!
//! - A regular file or nothing at `FILE`: the bytes go to a part file `FILE.roam-part` in the
//!   same directory, created exclusively and never through a symlink (`O_CREAT | O_EXCL |
//!   O_NOFOLLOW`, open(2)) and held under an exclusive `flock(2)` for the whole download, so a
//!   second download to the same `FILE` stops at once with a clear message instead of writing
//!   into the first one's file. A part file left by a killed download (not locked) is removed
//!   and created anew; one that is a symlink or not a regular file is refused, never followed.
//!   Once the transfer ends the part file is synced and read back: its length and BLAKE3 digest
//!   *as stored* must match the object's metadata. Only then is it renamed to `FILE`, and only
//!   onto a regular file or nothing (`renameat2(RENAME_NOREPLACE)` when nothing is there).
//! - A character device or a FIFO at `FILE` (`/dev/null`, a named pipe, a terminal; also
//!   through a symlink such as `/dev/stdout`): the bytes are streamed into it as they arrive,
//!   hashed as written, and the node is never replaced. A failed download cannot be taken back
//!   from such an output; the exit status says it failed.
//! - Anything else at `FILE` (a directory, a symlink to a regular file, a block device, a
//!   socket) and a `FILE` that names no file (`/`, `out/`, `..`) is refused before anything is
//!   fetched.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags, RenameFlags, CWD};

use super::Sink;
use crate::store::ObjectMeta;
use crate::NetError;

/// Where a download's bytes go.
pub(crate) enum Output {
    /// A part file, renamed to the output once verified as stored.
    Part(PartFile),
    /// A character device or FIFO, written as the bytes arrive.
    Stream(Box<StreamOut>),
}

/// A locked part file beside the output.
pub(crate) struct PartFile {
    file: File,
    part: PathBuf,
    out: PathBuf,
    /// A part file left by an earlier download, kept to continue from (`--continue`).
    resumed: bool,
}

/// A device or FIFO written in place.
pub(crate) struct StreamOut {
    file: File,
    out: PathBuf,
    hasher: blake3::Hasher,
    written: u64,
}

/// Why `path` cannot be the output.
fn refused(path: &Path, reason: impl Into<String>) -> NetError {
    NetError::Output {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn file_error(path: &Path, source: std::io::Error) -> NetError {
    NetError::File {
        path: path.display().to_string(),
        source,
    }
}

/// What kind of node `md` describes, for messages.
fn kind(md: &std::fs::Metadata) -> &'static str {
    let t = md.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO"
    } else {
        "a regular file"
    }
}

/// True for the nodes a download streams into.
fn streamable(md: &std::fs::Metadata) -> bool {
    let t = md.file_type();
    t.is_char_device() || t.is_fifo()
}

impl Output {
    /// Decides where the bytes of a download to `out` go and prepares it (the part file is
    /// created and locked now, before anything is fetched).
    pub(crate) fn open(out: &Path, resume: bool) -> Result<Output, NetError> {
        let ends_in_slash = out.as_os_str().as_encoded_bytes().ends_with(b"/");
        let Some(file_name) = out.file_name().filter(|_| !ends_in_slash) else {
            return Err(refused(out, "names a directory, not a file"));
        };
        match std::fs::symlink_metadata(out) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(file_error(out, e)),
            Ok(md) if md.is_file() => {}
            Ok(md) if streamable(&md) => {
                return StreamOut::open(out).map(|s| Output::Stream(Box::new(s)))
            }
            Ok(md) if md.file_type().is_symlink() => {
                // A symlink to a device or FIFO (`/dev/stdout`) is written through; any other
                // is neither followed nor replaced.
                if std::fs::metadata(out).is_ok_and(|t| streamable(&t)) {
                    return StreamOut::open(out).map(|s| Output::Stream(Box::new(s)));
                }
                return Err(refused(
                    out,
                    "is a symlink: not replaced and not written through (give its target)",
                ));
            }
            Ok(md) => return Err(refused(out, format!("is {}: not replaced", kind(&md)))),
        }
        let mut name = file_name.to_os_string();
        name.push(".roam-part");
        let part = out.with_file_name(name);
        PartFile::create(&part, out, resume).map(Output::Part)
    }

    /// Ends a download of `name` whose transfer returned `result` (bytes received): verifies
    /// the output against `meta` (a part file as stored, then renamed to the output); on any
    /// failure removes the part file and returns why.
    pub(crate) fn finish(
        self,
        name: &str,
        result: Result<u64, NetError>,
        meta: &ObjectMeta,
    ) -> Result<(), NetError> {
        match self {
            Output::Part(p) => p.finish(name, result, meta),
            Output::Stream(s) => s.finish(name, result, meta),
        }
    }
}

impl Output {
    /// Where the object's bytes continue from: the length of a part file kept by `--continue`
    /// if it is not longer than the object (its bytes are checked with the rest at the end,
    /// as stored), else 0 (a longer one is emptied).
    pub(crate) fn resume_from(&mut self, meta: &ObjectMeta) -> Result<u64, NetError> {
        let Output::Part(p) = self else {
            return Ok(0);
        };
        if !p.resumed {
            return Ok(0);
        }
        let len = p.file.metadata().map_err(|e| file_error(&p.part, e))?.len();
        let from = if len <= meta.len { len } else { 0 };
        p.file
            .set_len(from)
            .and_then(|()| p.file.seek(SeekFrom::Start(from)))
            .map_err(|e| file_error(&p.part, e))?;
        Ok(from)
    }

    /// Takes back everything written from byte `to` on (a group that failed verification): a
    /// part file is cut there; a stream cannot take bytes back.
    pub(crate) fn rewind_to(&mut self, to: u64) -> Result<(), NetError> {
        match self {
            Output::Part(p) => p
                .file
                .set_len(to)
                .and_then(|()| p.file.seek(SeekFrom::Start(to)))
                .map(|_| ())
                .map_err(|e| file_error(&p.part, e)),
            Output::Stream(s) if s.written == to => Ok(()),
            Output::Stream(s) => Err(refused(
                &s.out,
                "bytes that failed verification were already written here",
            )),
        }
    }

    /// The bytes `start .. end` as stored in the part file (a group that failed, to compare
    /// with a verified copy); `None` for a stream.
    pub(crate) fn stored(&self, start: u64, end: u64) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let Output::Part(p) = self else {
            return None;
        };
        let mut buf = vec![0; usize::try_from(end.checked_sub(start)?).ok()?];
        p.file.read_exact_at(&mut buf, start).ok()?;
        Some(buf)
    }

    /// The part file kept by `--continue`, to verify its groups before they are trusted.
    pub(crate) fn kept(&self) -> Option<&File> {
        match self {
            Output::Part(p) if p.resumed => Some(&p.file),
            _ => None,
        }
    }

    /// Gives the output up before anything was written to it (the metadata could not be
    /// fetched): the part file is removed.
    pub(crate) fn abandon(self) {
        if let Output::Part(p) = self {
            let _ = std::fs::remove_file(&p.part);
        }
    }
}

impl Sink for Output {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        match self {
            Output::Part(p) => p.file.write_all(bytes).map_err(|e| file_error(&p.part, e)),
            Output::Stream(s) => {
                s.hasher.update(bytes);
                s.written += bytes.len() as u64;
                s.file.write_all(bytes).map_err(|e| file_error(&s.out, e))
            }
        }
    }

    fn rewindable(&self) -> bool {
        matches!(self, Output::Part(_))
    }

    fn restart(&mut self) -> Result<(), NetError> {
        match self {
            Output::Part(p) => p
                .file
                .set_len(0)
                .and_then(|()| p.file.rewind())
                .map_err(|e| file_error(&p.part, e)),
            // What went into a device or FIFO cannot be taken back.
            Output::Stream(s) if s.written == 0 => Ok(()),
            Output::Stream(s) => Err(refused(
                &s.out,
                "the transfer must start again, but its first bytes were already written here",
            )),
        }
    }
}

/// Whether two metadata describe the same file (device and inode).
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Attempts at creating the part file when others race for it.
const CREATE_TRIES: usize = 3;

impl PartFile {
    /// Creates `part` exclusively and locks it; a stale one (not locked, a regular file) is
    /// removed first, or with `resume` kept (if it is ours) to continue from.
    fn create(part: &Path, out: &Path, resume: bool) -> Result<PartFile, NetError> {
        let busy = || {
            refused(
                out,
                format!(
                    "another download to this file is running ({} is locked)",
                    part.display()
                ),
            )
        };
        for _ in 0..CREATE_TRIES {
            let flags =
                OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::open(part, flags, Mode::from(0o666)) {
                Ok(fd) => {
                    let file = File::from(fd);
                    if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
                        // Another download took it between our create and our lock.
                        return Err(busy());
                    }
                    // Between our create and our lock another download may have locked it,
                    // taken it for a stale part file and removed it (then our lock is on a
                    // file no name leads to, and the name may already be that download's
                    // own part file): locked, it must still be the file the name names.
                    let ours = file.metadata().map_err(|e| file_error(part, e))?;
                    let named =
                        std::fs::symlink_metadata(part).is_ok_and(|now| same_file(&now, &ours));
                    if !named {
                        continue;
                    }
                    return Ok(PartFile {
                        file,
                        part: part.to_path_buf(),
                        out: out.to_path_buf(),
                        resumed: false,
                    });
                }
                Err(e) if e == rustix::io::Errno::EXIST => {}
                Err(e) => return Err(file_error(part, e.into())),
            }
            // It exists: refused unless it is a regular file nobody holds.
            let md = match std::fs::symlink_metadata(part) {
                Ok(md) => md,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(file_error(part, e)),
            };
            if !md.is_file() {
                return Err(refused(
                    part,
                    format!("is {}: not followed or replaced (remove it)", kind(&md)),
                ));
            }
            let access = if resume { OFlags::RDWR } else { OFlags::RDONLY };
            let flags = access | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let stale = match rustix::fs::open(part, flags, Mode::empty()) {
                Ok(fd) => File::from(fd),
                Err(e) if e == rustix::io::Errno::NOENT => continue,
                Err(e) => return Err(file_error(part, e.into())),
            };
            if rustix::fs::flock(&stale, FlockOperation::NonBlockingLockExclusive).is_err() {
                return Err(busy());
            }
            // Locked: remove it if the name still names it (else someone replaced it: retry).
            let held = stale.metadata().map_err(|e| file_error(part, e))?;
            let still = std::fs::symlink_metadata(part).is_ok_and(|now| same_file(&now, &held));
            if still && resume {
                // Only our own: a file another user planted could be changed after the rename.
                if held.uid() != rustix::process::geteuid().as_raw() {
                    return Err(refused(
                        part,
                        "belongs to another user: not continued from (remove it)",
                    ));
                }
                return Ok(PartFile {
                    file: stale,
                    part: part.to_path_buf(),
                    out: out.to_path_buf(),
                    resumed: true,
                });
            }
            if still {
                match std::fs::remove_file(part) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(file_error(part, e)),
                }
            }
        }
        Err(busy())
    }

    fn finish(
        mut self,
        name: &str,
        result: Result<u64, NetError>,
        meta: &ObjectMeta,
    ) -> Result<(), NetError> {
        let done = result.and_then(|got| {
            if got != meta.len {
                return Err(NetError::Integrity {
                    name: name.to_string(),
                    reason: format!("received {got} bytes, the object has {}", meta.len),
                });
            }
            self.file
                .sync_all()
                .map_err(|e| file_error(&self.part, e))?;
            self.verify_stored(name, meta)?;
            self.rename()
        });
        if done.is_err() {
            // Still locked: nobody else can have taken the name over.
            let _ = std::fs::remove_file(&self.part);
        }
        done
    }

    /// Reads the part file back: its length and digest as stored must be the object's.
    fn verify_stored(&mut self, name: &str, meta: &ObjectMeta) -> Result<(), NetError> {
        let bad = |reason: String| NetError::Integrity {
            name: name.to_string(),
            reason,
        };
        let len = self
            .file
            .metadata()
            .map_err(|e| file_error(&self.part, e))?
            .len();
        if len != meta.len {
            return Err(bad(format!(
                "{} holds {len} bytes, the object has {}",
                self.part.display(),
                meta.len
            )));
        }
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 1 << 16];
        self.file
            .seek(SeekFrom::Start(0))
            .map_err(|e| file_error(&self.part, e))?;
        loop {
            let n = self
                .file
                .read(&mut buf)
                .map_err(|e| file_error(&self.part, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        if *hasher.finalize().as_bytes() != meta.digest {
            return Err(bad("BLAKE3 digest mismatch (as stored)".into()));
        }
        Ok(())
    }

    /// Renames the part file to the output: only onto a regular file or nothing.
    fn rename(&self) -> Result<(), NetError> {
        match std::fs::symlink_metadata(&self.out) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Nothing there: a node that appears meanwhile makes this fail, not vanish.
                rustix::fs::renameat_with(CWD, &self.part, CWD, &self.out, RenameFlags::NOREPLACE)
                    .map_err(|e| {
                        if e == rustix::io::Errno::EXIST {
                            refused(&self.out, "appeared during the download: not replaced")
                        } else {
                            file_error(&self.out, e.into())
                        }
                    })
            }
            Err(e) => Err(file_error(&self.out, e)),
            Ok(md) if md.is_file() => {
                std::fs::rename(&self.part, &self.out).map_err(|e| file_error(&self.out, e))
            }
            Ok(md) => Err(refused(
                &self.out,
                format!("became {} during the download: not replaced", kind(&md)),
            )),
        }
    }
}

impl StreamOut {
    fn open(out: &Path) -> Result<StreamOut, NetError> {
        // No O_CREAT, no O_TRUNC: the node is written, never made or replaced.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(out)
            .map_err(|e| file_error(out, e))?;
        let md = file.metadata().map_err(|e| file_error(out, e))?;
        if !streamable(&md) {
            return Err(refused(out, format!("is {}: not replaced", kind(&md))));
        }
        Ok(StreamOut {
            file,
            out: out.to_path_buf(),
            hasher: blake3::Hasher::new(),
            written: 0,
        })
    }

    fn finish(
        mut self,
        name: &str,
        result: Result<u64, NetError>,
        meta: &ObjectMeta,
    ) -> Result<(), NetError> {
        let got = result?;
        self.file.flush().map_err(|e| file_error(&self.out, e))?;
        if got != meta.len || self.written != meta.len {
            return Err(NetError::Integrity {
                name: name.to_string(),
                reason: format!("received {got} bytes, the object has {}", meta.len),
            });
        }
        if *self.hasher.finalize().as_bytes() != meta.digest {
            return Err(NetError::Integrity {
                name: name.to_string(),
                reason: "BLAKE3 digest mismatch".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_of(bytes: &[u8]) -> ObjectMeta {
        ObjectMeta {
            len: bytes.len() as u64,
            digest: *blake3::hash(bytes).as_bytes(),
            group_log2: 16,
        }
    }

    #[test]
    fn the_part_file_is_verified_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x");
        let mut o = Output::open(&out, false).unwrap();
        o.put(b"hello world").unwrap();
        // Something else writes into the part file after the bytes were received.
        let part = dir.path().join("x.roam-part");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&part)
            .and_then(|mut f| f.write_all(b"J"))
            .unwrap();
        let e = o.finish("x", Ok(11), &meta_of(b"hello world")).unwrap_err();
        assert!(e.to_string().contains("as stored"), "{e}");
        assert!(!out.exists() && !part.exists());
    }

    #[test]
    fn a_second_open_of_one_output_is_refused_while_the_first_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x");
        let first = Output::open(&out, false).unwrap();
        let e = Output::open(&out, false).err().expect("refused");
        assert!(e.to_string().contains("another download"), "{e}");
        first.abandon();
        let mut again = Output::open(&out, false).unwrap();
        again.put(b"ok").unwrap();
        again.finish("x", Ok(2), &meta_of(b"ok")).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"ok");
    }

    #[test]
    fn names_that_are_not_files_are_refused() {
        for bad in ["/", "..", "some/dir/", "."] {
            assert!(Output::open(Path::new(bad), false).is_err(), "{bad}");
        }
    }
}
