//! The resvg renderer behind [`PngWriter`] (cargo feature `png`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{fontdb, Options, Tree};

use super::{RasterError, SANS_SERIF_FAMILIES, SCALE};

/// Largest PNG side in pixels (a guard against absurd SVG sizes, far above any chart of ours).
const MAX_SIDE: f32 = 16_384.0;

/// Renders SVG charts to PNG with a fixed font set; create once, use for every chart of a run.
pub struct PngWriter {
    options: Options<'static>,
    family: String,
}

impl std::fmt::Debug for PngWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PngWriter")
            .field("sans_serif", &self.family)
            .field("faces", &self.options.fontdb.len())
            .finish()
    }
}

impl PngWriter {
    /// Loads the fonts installed on this machine (the usual system font folders and those
    /// fontconfig's configuration names).
    pub fn with_system_fonts() -> Result<Self, RasterError> {
        let mut fonts = fontdb::Database::new();
        fonts.load_system_fonts();
        Self::with_fonts(fonts)
    }

    /// Uses exactly `fonts`; fails with [`RasterError::NoFont`] if it holds no face.
    pub fn with_fonts(mut fonts: fontdb::Database) -> Result<Self, RasterError> {
        let family = sans_serif_family(&fonts).ok_or(RasterError::NoFont)?;
        fonts.set_sans_serif_family(family.clone());
        let options = Options {
            fontdb: Arc::new(fonts),
            ..Options::default()
        };
        Ok(PngWriter { options, family })
    }

    /// The installed family that stands in for `sans-serif`.
    pub fn sans_serif_family(&self) -> &str {
        &self.family
    }

    /// Renders SVG text to PNG bytes.
    pub fn render(&self, svg: &[u8]) -> Result<Vec<u8>, RasterError> {
        self.render_named(svg, Path::new("<memory>"))
    }

    /// Writes `<name>.png` beside `<name>.svg` and returns its path.
    pub fn write_beside(&self, svg_path: &Path) -> Result<PathBuf, RasterError> {
        let svg = std::fs::read(svg_path).map_err(|source| RasterError::Io {
            path: svg_path.to_owned(),
            source,
        })?;
        let png = self.render_named(&svg, svg_path)?;
        let png_path = svg_path.with_extension("png");
        std::fs::write(&png_path, png).map_err(|source| RasterError::Io {
            path: png_path.clone(),
            source,
        })?;
        Ok(png_path)
    }

    fn render_named(&self, svg: &[u8], path: &Path) -> Result<Vec<u8>, RasterError> {
        let tree = Tree::from_data(svg, &self.options).map_err(|e| RasterError::Svg {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let size = tree.size();
        let (width, height) = (size.width() * SCALE, size.height() * SCALE);
        let size_error = || RasterError::Size {
            path: path.to_owned(),
            width: size.width(),
            height: size.height(),
        };
        if !(1.0..=MAX_SIDE).contains(&width.ceil()) || !(1.0..=MAX_SIDE).contains(&height.ceil()) {
            return Err(size_error());
        }
        // In range 1..=16384 after the check above, so the casts are exact.
        let mut pixmap =
            Pixmap::new(width.ceil() as u32, height.ceil() as u32).ok_or_else(size_error)?;
        pixmap.fill(Color::WHITE);
        resvg::render(
            &tree,
            Transform::from_scale(SCALE, SCALE),
            &mut pixmap.as_mut(),
        );
        pixmap.encode_png().map_err(|e| RasterError::Encode {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }
}

/// The first of [`SANS_SERIF_FAMILIES`] that `fonts` holds, else the alphabetically first
/// family it holds (deterministic whatever order the folders were scanned in).
fn sans_serif_family(fonts: &fontdb::Database) -> Option<String> {
    let installed: std::collections::BTreeSet<&str> = fonts
        .faces()
        .flat_map(|face| face.families.iter().map(|(name, _)| name.as_str()))
        .collect();
    SANS_SERIF_FAMILIES
        .iter()
        .find(|f| installed.contains(**f))
        .copied()
        .or_else(|| installed.first().copied())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{self, Axes, Series};

    /// The system's fonts, or `None` (and a note on stderr) where none are installed.
    fn system_writer() -> Option<PngWriter> {
        match PngWriter::with_system_fonts() {
            Ok(w) => Some(w),
            Err(RasterError::NoFont) => {
                eprintln!("skipped: no system font installed (apt-get install fonts-dejavu-core)");
                None
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// Width and height from a PNG's IHDR chunk.
    fn png_size(png: &[u8]) -> (u32, u32) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&png[12..16], b"IHDR");
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        (be(&png[16..20]), be(&png[20..24]))
    }

    #[test]
    fn without_fonts_the_writer_refuses_to_start() {
        let err = PngWriter::with_fonts(fontdb::Database::new()).unwrap_err();
        assert!(matches!(err, RasterError::NoFont));
        assert!(err.to_string().contains("fonts-dejavu-core"));
    }

    #[test]
    fn a_chart_becomes_a_png_at_twice_its_size_beside_the_svg() {
        let Some(writer) = system_writer() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("c.svg");
        let axes = Axes {
            title: "t",
            x: "x",
            y: "y",
            log_x: false,
            y_from_zero: true,
        };
        let series = [Series::new("a", vec![(0.0, 1.0), (1.0, 2.0)])];
        chart::lines(&svg, &axes, &series).unwrap();
        let png_path = writer.write_beside(&svg).unwrap();
        assert_eq!(png_path, dir.path().join("c.png"));
        let png = std::fs::read(&png_path).unwrap();
        assert_eq!(png_size(&png), (2 * chart::WIDTH, 2 * chart::HEIGHT));
        // Same SVG, same fonts: same bytes.
        let again = writer.render(&std::fs::read(&svg).unwrap()).unwrap();
        assert_eq!(png, again);
    }

    #[test]
    fn labels_are_drawn_when_a_font_is_found() {
        let Some(writer) = system_writer() else {
            return;
        };
        // A white page with one line of text: some pixels must not be white.
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40">
            <text x="10" y="30" font-family="sans-serif" font-size="20">goodput</text></svg>"#;
        let png = writer.render(svg).unwrap();
        let pixmap = Pixmap::decode_png(&png).unwrap();
        let inked = pixmap
            .pixels()
            .iter()
            .filter(|p| p.red() < 128 && p.alpha() == 255)
            .count();
        assert!(inked > 50, "{inked} dark pixels: text not drawn");
    }

    #[test]
    fn bad_svg_is_an_error_not_a_panic() {
        let Some(writer) = system_writer() else {
            return;
        };
        for bad in [
            &b""[..],
            b"not xml",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"10\"/>",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1e9\" height=\"10\"/>",
            b"<svg",
        ] {
            assert!(
                writer.render(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let missing = writer.write_beside(Path::new("/nonexistent/x.svg"));
        assert!(matches!(missing, Err(RasterError::Io { .. })));
    }

    #[test]
    fn a_preferred_family_wins_else_any_installed_family_stands_in() {
        const MONO: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
        const SANS: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
        if !Path::new(MONO).exists() || !Path::new(SANS).exists() {
            eprintln!("skipped: DejaVu fonts not installed (apt-get install fonts-dejavu-core)");
            return;
        }
        let mut fonts = fontdb::Database::new();
        fonts.load_font_file(MONO).unwrap();
        let writer = PngWriter::with_fonts(fonts.clone()).unwrap();
        assert_eq!(writer.sans_serif_family(), "DejaVu Sans Mono");
        fonts.load_font_file(SANS).unwrap();
        let writer = PngWriter::with_fonts(fonts).unwrap();
        assert_eq!(writer.sans_serif_family(), "DejaVu Sans");
    }
}
