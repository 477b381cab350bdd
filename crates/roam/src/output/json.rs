//! The JSON form of a run: one object, deterministic for a scenario and seed.

use std::path::Path;

use roam_sim::result::RunResult;

use crate::error::{CliError, Result};

/// Serialises a run as pretty-printed JSON with a trailing newline.
///
/// The object holds only simulated quantities (no wall time), so the same scenario and seed
/// always give the same bytes.
pub fn to_json(result: &RunResult) -> String {
    // RunResult holds only strings, numbers, options and vectors: serialisation cannot fail
    // (non-finite floats become `null`).
    let mut s = serde_json::to_string_pretty(result).unwrap_or_else(|_| "{}".to_owned());
    s.push('\n');
    s
}

/// Writes [`to_json`] to `path`.
pub fn write_result(path: &Path, result: &RunResult) -> Result<()> {
    std::fs::write(path, to_json(result)).map_err(|e| CliError::write(path, e))
}
