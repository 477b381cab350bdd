//! A symlink swapped in while the server opens a name never serves a file outside the root
//! (issue 28, item 6). One thread exchanges a regular file inside the root with a symlink to a
//! secret outside it (`renameat2(RENAME_EXCHANGE)`, as fast as it can); the store reads the
//! name meanwhile. Before, the name was checked (canonicalised) and then opened again by path,
//! and the secret came back; now every open resolves beneath the root in one step. Bounded:
//! 100 000 reads or 5 s.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roam_net::DirStore;
use rustix::fs::{RenameFlags, CWD};

#[test]
fn a_swapped_symlink_never_serves_a_file_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(dir.path().join("secret"), b"SECRET-OUTSIDE").unwrap();
    std::fs::write(root.join("a"), b"inside!").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret"), root.join("b")).unwrap();
    let store = DirStore::new(&root).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let (a, b, s) = (root.join("a"), root.join("b"), stop.clone());
    let swapper = std::thread::spawn(move || {
        let mut swaps = 0u64;
        while !s.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).unwrap();
            swaps += 1;
        }
        swaps
    });
    let started = roam_net::Clock::wall();
    let (mut served, mut leaked) = (0u32, 0u32);
    for _ in 0..100_000 {
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
        let mut out = Vec::new();
        store.read_blocking(b"a", 0, 14, &mut out);
        if out.starts_with(b"SECRET") {
            leaked += 1;
        } else if out.starts_with(b"inside!") {
            served += 1;
        }
        // The digest path opens the name too.
        if let Some(m) = store.meta(b"a") {
            if m.digest == *blake3::hash(b"SECRET-OUTSIDE").as_bytes() {
                leaked += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{swaps} swaps, {served} reads of the inside file, {leaked} leaks");
    assert!(swaps > 100, "the swapper barely ran");
    assert_eq!(leaked, 0, "a file outside the root was served");
}
