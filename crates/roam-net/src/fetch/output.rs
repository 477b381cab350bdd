//! The output of a download: the part file, hashed as it is written, renamed to the final
//! name once verified.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use super::Sink;
use crate::store::ObjectMeta;
use crate::NetError;

/// A download's part file, hashed as it is written.
pub(crate) struct FileSink {
    file: File,
    path: PathBuf,
    hasher: blake3::Hasher,
}

impl FileSink {
    /// Creates (truncates) the part file.
    pub(crate) fn create(part: &Path) -> Result<FileSink, NetError> {
        let file = File::create(part).map_err(|source| NetError::File {
            path: part.display().to_string(),
            source,
        })?;
        Ok(FileSink {
            file,
            path: part.to_path_buf(),
            hasher: blake3::Hasher::new(),
        })
    }

    /// Ends a download of `name` whose transfer returned `result` (bytes received): syncs
    /// the part file and renames it to `out` if length and digest match `meta`; otherwise
    /// removes it and returns why.
    pub(crate) fn finish(
        self,
        name: &str,
        result: Result<u64, NetError>,
        meta: &ObjectMeta,
        out: &Path,
    ) -> Result<(), NetError> {
        let part = self.path.clone();
        let finish = result.and_then(|got| {
            self.file.sync_all().map_err(|source| NetError::File {
                path: part.display().to_string(),
                source,
            })?;
            if got != meta.len {
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
            std::fs::rename(&part, out).map_err(|source| NetError::File {
                path: out.display().to_string(),
                source,
            })
        });
        if finish.is_err() {
            let _ = std::fs::remove_file(&part);
        }
        finish
    }
}

impl Sink for FileSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        self.hasher.update(bytes);
        self.file.write_all(bytes).map_err(|source| NetError::File {
            path: self.path.display().to_string(),
            source,
        })
    }

    fn restart(&mut self) -> Result<(), NetError> {
        self.hasher = blake3::Hasher::new();
        self.file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .map_err(|source| NetError::File {
                path: self.path.display().to_string(),
                source,
            })
    }
}

/// `FILE.roam-part` beside `FILE`.
pub(crate) fn part_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".roam-part");
    out.with_file_name(name)
}
