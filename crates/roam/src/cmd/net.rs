//! What the runtime's commands (`serve`, `get`, `perf`) share: the tokio runtime they run
//! on and the link facts of `--link` / `--links`.

use std::path::Path;

use crate::error::{CliError, Result};

/// The link facts of `--links FILE` (if given) and then the `--link` entries, which replace
/// the file's for the same address; a missing file or a malformed entry is a usage error.
pub fn link_table(file: Option<&Path>, entries: &[String]) -> Result<roam_net::LinkTable> {
    let mut t = roam_net::LinkTable::new();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::Usage(format!("--links {}: cannot read: {e}", path.display()))
        })?;
        t.parse_file(&text)
            .map_err(|why| CliError::Usage(format!("--links {}: {why}", path.display())))?;
    }
    for e in entries {
        t.parse_entry(e)
            .map_err(|why| CliError::Usage(format!("--link: {why}")))?;
    }
    Ok(t)
}

/// A single-threaded tokio runtime (the driver is one task; the readers are light).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Net(roam_net::NetError::Io(e)))
}
