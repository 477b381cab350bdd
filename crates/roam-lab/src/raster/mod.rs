//! PNG copies of the SVG charts, for editors and journals that take bitmaps only.
//!
//! The charts are drawn once, as SVG (see [`crate::chart`]); a PNG is that SVG rendered by resvg
//! at [`SCALE`]× on white (2080 × 1040 pixels for a report chart, about 300 dpi at 7 inches
//! wide). Text needs a font: the SVGs ask for the generic family `sans-serif`, which is mapped to
//! the first installed of [`SANS_SERIF_FAMILIES`], else to any installed family. Without any
//! font the writer refuses to start ([`RasterError::NoFont`]) rather than produce plots without
//! labels.
//!
//! The renderer (resvg and its font and image crates) is the cargo feature `png`, on by default.
//! A library user can build without it (`default-features = false`); [`PngWriter`] then cannot
//! be created and says so ([`RasterError::NotBuilt`]).

use std::path::PathBuf;

#[cfg(feature = "png")]
mod render;
#[cfg(feature = "png")]
pub use render::PngWriter;

/// Pixels per SVG user unit in the PNG.
pub const SCALE: f32 = 2.0;

/// Families tried, in order, for the SVGs' generic `sans-serif`.
pub const SANS_SERIF_FAMILIES: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "Arial",
    "Helvetica",
    "FreeSans",
];

/// Why a PNG could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    /// This build has no PNG renderer (the cargo feature `png` was off).
    #[error(
        "this build of roam has no PNG renderer (cargo feature `png`, on by default); \
         rebuild with default features or leave out --png"
    )]
    NotBuilt,
    /// No font is installed, so the labels could not be drawn.
    #[error(
        "no font found in the system font folders, so PNG labels cannot be drawn \
         (install one, e.g. `apt-get install fonts-dejavu-core`, or leave out --png)"
    )]
    NoFont,
    /// The SVG could not be read or written as PNG.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The SVG is not one resvg can parse.
    #[error("{path}: not a valid SVG: {message}")]
    Svg {
        /// The file (or `<memory>`).
        path: PathBuf,
        /// Parser message.
        message: String,
    },
    /// The chart has no area, or is too large to allocate.
    #[error("{path}: cannot rasterize a {width} × {height} SVG at {SCALE}×")]
    Size {
        /// The file (or `<memory>`).
        path: PathBuf,
        /// SVG width in user units.
        width: f32,
        /// SVG height in user units.
        height: f32,
    },
    /// PNG encoding failed.
    #[error("{path}: cannot encode PNG: {message}")]
    Encode {
        /// The file (or `<memory>`).
        path: PathBuf,
        /// Encoder message.
        message: String,
    },
}

/// Without the `png` feature: a writer that cannot exist, so every caller of
/// [`PngWriter::with_system_fonts`] gets [`RasterError::NotBuilt`] before any work starts.
#[cfg(not(feature = "png"))]
#[derive(Debug)]
pub struct PngWriter {
    never: std::convert::Infallible,
}

#[cfg(not(feature = "png"))]
impl PngWriter {
    /// Always [`RasterError::NotBuilt`]: this build has no renderer.
    pub fn with_system_fonts() -> Result<Self, RasterError> {
        Err(RasterError::NotBuilt)
    }

    /// Unreachable: no writer exists without the `png` feature.
    pub fn write_beside(&self, _svg_path: &std::path::Path) -> Result<PathBuf, RasterError> {
        match self.never {}
    }
}

#[cfg(all(test, not(feature = "png")))]
mod tests {
    use super::*;

    #[test]
    fn without_the_png_feature_the_writer_says_how_to_get_one() {
        let err = PngWriter::with_system_fonts().unwrap_err();
        assert!(matches!(err, RasterError::NotBuilt));
        assert!(err.to_string().contains("feature `png`"), "{err}");
    }
}
