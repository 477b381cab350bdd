//! Peak resident memory (Linux `VmHWM`) of this process and of a child, for `roam bench`.
//!
//! This process runs one scenario after another, so its high-water mark is reset before each
//! (writing `5` to `/proc/self/clear_refs`); a child's is read from `/proc/<pid>/status` while
//! it runs (the mark only grows, so the last reading before it exits is its peak up to then).
//! Where `/proc` cannot be read (not Linux), nothing is reported.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Forgets this process's high-water mark, so the next [`own_peak`] covers what runs after.
pub fn reset_own() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// This process's peak resident memory in bytes since the last [`reset_own`].
pub fn own_peak() -> Option<u64> {
    peak_of("self")
}

fn peak_of(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    vm_hwm(&status)
}

/// The `VmHWM` line of a `/proc/<pid>/status` text, in bytes.
fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line["VmHWM:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Runs `cmd` to completion like [`Command::output`], also returning its peak resident memory
/// (polled every 5 ms).
pub fn output_with_peak(cmd: &mut Command) -> std::io::Result<(Output, Option<u64>)> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let pid = child.id().to_string();
    // Drain both pipes on their own threads so a chatty child never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut peak = None;
    let status = loop {
        if let Some(p) = peak_of(&pid) {
            peak = Some(peak.map_or(p, |q: u64| q.max(p)));
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    Ok((output, peak))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_high_water_mark() {
        assert_eq!(
            vm_hwm("Name:\tx\nVmPeak:\t 9 kB\nVmHWM:\t    1234 kB\n"),
            Some(1234 * 1024)
        );
        assert_eq!(vm_hwm("Name:\tx\n"), None);
    }

    #[test]
    fn a_child_reports_its_output_and_a_peak_on_linux() {
        let (out, peak) = output_with_peak(Command::new("sh").args(["-c", "echo hi"])).unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
        if std::path::Path::new("/proc/self/status").exists() {
            assert!(own_peak().is_some_and(|p| p > 0));
            // A short-lived child may exit before the first reading; a reading is positive.
            assert!(peak.is_none_or(|p| p > 0));
        }
    }
}
