//! Everything the CLI writes: terminal tables, JSON, CSV files and SVG plots.

pub mod csv;
pub mod json;
pub mod plot;
pub mod sweep_plot;
pub mod table;
pub mod trace;

use std::path::Path;

use crate::error::{CliError, Result};

/// Creates `dir` (and its parents) if needed.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::write(dir, e))
}

/// Formats a finite number with `decimals` digits; non-finite numbers as `-`.
pub fn fmt_num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "-".to_owned()
    }
}
