//! Opening a served file beneath the served directory in one step, so that no check-then-open
//! gap exists (issue 28, item 6: a symlink swapped between a canonicalising check and the open
//! could serve a file outside the root).
//!
//! `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (Linux 5.6) resolves the name
//! relative to the root's descriptor and fails if any step — `..`, an absolute symlink, a
//! symlink leading out, a `/proc` magic link — would leave it; symlinks that stay beneath are
//! followed. Where the kernel lacks `openat2` (`ENOSYS`, or `EPERM` from a seccomp filter)
//! the name is walked one component at a time with `openat(O_NOFOLLOW)`, so no symlink at all
//! is followed. The file is opened `O_NONBLOCK` (a FIFO in the tree never blocks the server)
//! and kept only if `fstat` says it is a regular file.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Opens the served directory `root` as the base of every later open.
pub(crate) fn open_root(root: &Path) -> std::io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::open(root, flags, Mode::empty())?)
}

/// Flags of the final open: read only, never a controlling terminal, never blocking.
fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK
}

/// Why a name beneath the root cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unservable {
    /// Nothing by that name beneath the root (or a name that would leave it).
    Missing,
    /// It exists but the server may not read it (`EACCES`).
    Unreadable,
    /// It exists but is not a regular file (a directory, a FIFO, a device).
    NotRegular,
}

/// Opens the regular file `rel` (a relative path of normal components) beneath `root`, or
/// says why it cannot be served.
pub(crate) fn open_beneath_checked(root: &OwnedFd, rel: &Path) -> Result<File, Unservable> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let fd = match rustix::fs::openat2(root, rel, file_flags(), Mode::empty(), resolve) {
        Ok(fd) => fd,
        Err(Errno::NOSYS) | Err(Errno::PERM) => walk_no_symlinks(root, rel)?,
        Err(Errno::ACCESS) => return Err(Unservable::Unreadable),
        Err(_) => return Err(Unservable::Missing),
    };
    let file = File::from(fd);
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(file),
        Ok(_) => Err(Unservable::NotRegular),
        Err(_) => Err(Unservable::Unreadable),
    }
}

/// The fallback: one `openat(O_NOFOLLOW)` per component, directories opened `O_PATH`.
fn walk_no_symlinks(root: &OwnedFd, rel: &Path) -> Result<OwnedFd, Unservable> {
    let parts: Vec<_> = rel.components().collect();
    let (last, dirs) = parts.split_last().ok_or(Unservable::Missing)?;
    let mut dir: Option<OwnedFd> = None;
    for part in dirs {
        let Component::Normal(name) = part else {
            return Err(Unservable::Missing);
        };
        let base = dir.as_ref().unwrap_or(root);
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = Some(rustix::fs::openat(base, *name, flags, Mode::empty()).map_err(why)?);
    }
    let Component::Normal(name) = last else {
        return Err(Unservable::Missing);
    };
    let base = dir.as_ref().unwrap_or(root);
    rustix::fs::openat(base, *name, file_flags() | OFlags::NOFOLLOW, Mode::empty()).map_err(why)
}

/// An `openat` error as a reason.
fn why(e: Errno) -> Unservable {
    if e == Errno::ACCESS {
        Unservable::Unreadable
    } else {
        Unservable::Missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_walk_follows_no_symlink() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a"), b"x").unwrap();
        std::os::unix::fs::symlink("sub", dir.path().join("via")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("sub/b")).unwrap();
        let root = open_root(dir.path()).unwrap();
        assert!(walk_no_symlinks(&root, Path::new("sub/a")).is_ok());
        assert!(walk_no_symlinks(&root, Path::new("via/a")).is_err());
        assert!(walk_no_symlinks(&root, Path::new("sub/b")).is_err());
        assert!(
            open_beneath_checked(&root, Path::new("sub/b")).is_ok(),
            "beneath: followed"
        );
        assert!(
            open_beneath_checked(&root, Path::new("sub")).map(|_| ())
                == Err(Unservable::NotRegular),
            "not a regular file"
        );
    }
}
