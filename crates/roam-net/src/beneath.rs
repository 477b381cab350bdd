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

/// Opens the regular file `rel` (a relative path of normal components) beneath `root`.
pub(crate) fn open_beneath(root: &OwnedFd, rel: &Path) -> Option<File> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let fd = match rustix::fs::openat2(root, rel, file_flags(), Mode::empty(), resolve) {
        Ok(fd) => fd,
        Err(Errno::NOSYS) | Err(Errno::PERM) => walk_no_symlinks(root, rel)?,
        Err(_) => return None,
    };
    let file = File::from(fd);
    file.metadata().ok()?.is_file().then_some(file)
}

/// The fallback: one `openat(O_NOFOLLOW)` per component, directories opened `O_PATH`.
fn walk_no_symlinks(root: &OwnedFd, rel: &Path) -> Option<OwnedFd> {
    let parts: Vec<_> = rel.components().collect();
    let (last, dirs) = parts.split_last()?;
    let mut dir: Option<OwnedFd> = None;
    for part in dirs {
        let Component::Normal(name) = part else {
            return None;
        };
        let base = dir.as_ref().unwrap_or(root);
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        dir = Some(rustix::fs::openat(base, *name, flags, Mode::empty()).ok()?);
    }
    let Component::Normal(name) = last else {
        return None;
    };
    let base = dir.as_ref().unwrap_or(root);
    rustix::fs::openat(base, *name, file_flags() | OFlags::NOFOLLOW, Mode::empty()).ok()
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
        assert!(walk_no_symlinks(&root, Path::new("sub/a")).is_some());
        assert!(walk_no_symlinks(&root, Path::new("via/a")).is_none());
        assert!(walk_no_symlinks(&root, Path::new("sub/b")).is_none());
        assert!(
            open_beneath(&root, Path::new("sub/b")).is_some(),
            "beneath: followed"
        );
        assert!(
            open_beneath(&root, Path::new("sub")).is_none(),
            "not a regular file"
        );
    }
}
