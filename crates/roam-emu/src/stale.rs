//! Namespaces an emulation that was killed left behind. An emulation removes what it made on
//! exit, on Ctrl-C, SIGTERM and SIGHUP; SIGKILL (or a crash) gives it no chance. Its TUN
//! devices vanish with its descriptors anyway, and the processes it ran inside die with it
//! ([`crate::sys::die_with_parent`]); what stays is the named namespace under `/run/netns`.
//!
//! So every namespace an emulation makes is claimed in `/run/roam-emu/NAME` (its maker's
//! process id and start time; `/run` is emptied at boot, as `/run/netns` is), and the next
//! emulation removes every claimed namespace whose maker is gone ([`remove_stale`]): no
//! process with that id runs, or the one that does started at another time (the id was
//! reused). A namespace roam did not make (joined ones, any other) is never touched, whatever
//! its name.

use std::path::Path;
use std::process::{Command, Stdio};

/// Where `ip netns` keeps its names.
const NETNS_DIR: &str = "/run/netns";
/// Where the claims are.
const CLAIMS_DIR: &str = "/run/roam-emu";
/// The sweep's lock file in [`CLAIMS_DIR`] (a leading dot: never a namespace name).
const LOCK: &str = ".sweep.lock";

/// A namespace name for this process: `rn<PID>-emu<SUFFIX>` (`rn<digits>-`, as the project's
/// leftover check expects).
pub fn owned_name(suffix: &str) -> String {
    format!("rn{}-emu{suffix}", std::process::id())
}

/// Process `pid`'s start time in clock ticks since boot (`/proc/PID/stat` field 22), if it
/// runs.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields follow the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// What a claim file holds: the maker's id and start time.
fn claim_text(pid: u32) -> Option<String> {
    Some(format!("{pid} {}\n", start_ticks(pid)?))
}

/// Whether the process a claim names still runs (same id, same start time).
fn maker_alive(claim: &str) -> bool {
    let mut f = claim.split_whitespace().map(str::parse::<u64>);
    match (f.next(), f.next()) {
        (Some(Ok(pid)), Some(Ok(ticks))) => u32::try_from(pid)
            .ok()
            .and_then(start_ticks)
            .is_some_and(|t| t == ticks),
        // Not a claim of ours: leave it alone.
        _ => true,
    }
}

/// Records that this process made namespace `name` (best effort: without the claim, a
/// SIGKILL leaves the namespace for good, as before).
pub fn claim(name: &str) {
    if let Some(text) = claim_text(std::process::id()) {
        let _ = std::fs::create_dir_all(CLAIMS_DIR);
        let _ = std::fs::write(Path::new(CLAIMS_DIR).join(name), text);
    }
}

/// Drops this process's claim on `name` (the namespace was deleted).
pub fn release(name: &str) {
    let _ = std::fs::remove_file(Path::new(CLAIMS_DIR).join(name));
}

/// Removes every claimed namespace whose maker is gone: kills what still runs inside it (a
/// server or client of the emulation that was killed), then deletes it. Returns the names
/// removed. Best effort: a namespace that cannot be removed keeps its claim (the next run
/// tries again), and an emulation that needs that name still gets a clear error.
pub fn remove_stale() -> Vec<String> {
    // One sweep at a time on this machine: two emulations starting together would otherwise
    // both kill and delete the same namespace, one of them failing half-way. The lock goes
    // with the file when this returns (or the process dies).
    let _lock = std::fs::create_dir_all(CLAIMS_DIR)
        .and_then(|()| std::fs::File::create(Path::new(CLAIMS_DIR).join(LOCK)))
        .and_then(|f| f.lock().map(|()| f));
    let Ok(dir) = std::fs::read_dir(CLAIMS_DIR) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if crate::netns::check_name(&name).is_err() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if maker_alive(&text) {
            continue;
        }
        if Path::new(NETNS_DIR).join(&name).exists() {
            kill_inside(&name);
            let ok = Command::new("ip")
                .args(["netns", "del", &name])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                continue;
            }
            removed.push(name.clone());
        }
        release(&name);
    }
    removed.sort();
    removed
}

/// SIGKILL to every process in namespace `name` (`ip netns pids`).
fn kill_inside(name: &str) {
    let Ok(out) = Command::new("ip")
        .args(["netns", "pids", name])
        .stderr(Stdio::null())
        .output()
    else {
        return;
    };
    for pid in String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .filter(|&p| p > 1 && p != std::process::id())
    {
        crate::sys::kill(pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_its_maker_by_id_and_start_time() {
        let me = std::process::id();
        let mine = claim_text(me).unwrap();
        assert!(maker_alive(&mine), "{mine}");
        let parent = std::os::unix::process::parent_id();
        assert!(maker_alive(&claim_text(parent).unwrap()));
        // The same id started at another time is another process (the id was reused).
        let ticks = start_ticks(me).unwrap();
        assert!(!maker_alive(&format!("{me} {}", ticks + 1)));
        // No such process.
        assert!(!maker_alive(&format!("{} 5", u32::MAX - 1)));
        // Not a claim: never removed.
        assert!(maker_alive("hello"));
        assert!(maker_alive(""));
    }

    #[test]
    fn owned_names_are_valid_namespace_names_with_the_process_id() {
        let n = owned_name("3s");
        assert_eq!(n, format!("rn{}-emu3s", std::process::id()));
        assert!(crate::netns::check_name(&n).is_ok());
    }
}
