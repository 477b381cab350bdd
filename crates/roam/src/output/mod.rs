//! Everything the CLI writes: terminal tables, JSON, CSV files and SVG plots (with PNG copies
//! on request).

pub mod csv;
pub mod json;
pub mod pcap;
pub mod plot;
pub mod sweep_plot;
pub mod table;
pub mod trace;

use std::path::{Path, PathBuf};

use roam_lab::raster::PngWriter;

use crate::error::{CliError, Result};

/// The PNG writer when `--png` was given: built before any work starts, so that a machine
/// without fonts fails in a second, not after a long run.
pub fn png_writer(wanted: bool) -> Result<Option<PngWriter>> {
    Ok(if wanted {
        Some(PngWriter::with_system_fonts()?)
    } else {
        None
    })
}

/// Writes a PNG beside each SVG when there is a writer; stops at the first error.
pub fn write_pngs(writer: Option<&PngWriter>, svgs: &[PathBuf]) -> Result<()> {
    if let Some(w) = writer {
        for svg in svgs {
            w.write_beside(svg)?;
        }
    }
    Ok(())
}

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
