//! Wall-clock measurement for the CLI host (progress, `roam bench`).

use std::time::Duration;

/// Runs `f` and returns its result with the wall time it took.
#[allow(clippy::disallowed_methods)] // wall time is measured by the CLI host, not by protocol code
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = std::time::Instant::now();
    let value = f();
    (value, start.elapsed())
}
