//! SVG heat maps for reports: one coloured cell per (row, column) with its value written in
//! it, on a diverging scale centred on a reference value (e.g. 1.0 for "R²CP over the best
//! single path"): below it red, above it blue, white at it; cells without a value are grey.
//! Colours from ColorBrewer's RdBu (Brewer, colorbrewer2.org), colour-blind safe.

use std::path::Path;

use plotters::prelude::*;

use crate::LabError;

/// What to draw.
#[derive(Debug, Clone)]
pub struct HeatMap<'a> {
    /// Caption.
    pub title: &'a str,
    /// Row labels, top to bottom.
    pub rows: &'a [String],
    /// Column labels, left to right.
    pub columns: &'a [String],
    /// `values[r][c]`; NaN for a cell without a value.
    pub values: &'a [Vec<f64>],
    /// The value shown white (the scale's centre).
    pub centre: f64,
    /// How far from the centre the colours saturate.
    pub span: f64,
    /// Decimals of the value written in each cell.
    pub decimals: usize,
}

/// The colour of `v` on the diverging scale.
fn cell_colour(v: f64, centre: f64, span: f64) -> RGBColor {
    if !v.is_finite() {
        return RGBColor(200, 200, 200);
    }
    let t = ((v - centre) / span.max(f64::MIN_POSITIVE)).clamp(-1.0, 1.0);
    // RdBu ends: red (178, 24, 43) below, blue (33, 102, 172) above.
    let (end, t) = if t < 0.0 {
        ((178.0, 24.0, 43.0), -t)
    } else {
        ((33.0, 102.0, 172.0), t)
    };
    let mix = |e: f64| (255.0 + (e - 255.0) * t).round() as u8;
    RGBColor(mix(end.0), mix(end.1), mix(end.2))
}

/// Draws `map` as an SVG file at `path`.
pub fn heat_map(path: &Path, map: &HeatMap<'_>) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Plot {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let (nr, nc) = (map.rows.len().max(1), map.columns.len().max(1));
    let label_w = 12
        * map
            .rows
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(4) as u32
        + 20;
    let (cell_w, cell_h) = (92u32, 26u32);
    let width = label_w + cell_w * nc as u32 + 20;
    let head = 60
        + 8 * map
            .columns
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(4) as u32;
    let height = head + cell_h * nr as u32 + 20;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    root.draw(&Text::new(
        map.title.to_owned(),
        (10, 10),
        ("sans-serif", 18).into_font(),
    ))
    .map_err(|e| err(&e))?;
    for (c, label) in map.columns.iter().enumerate() {
        let x = (label_w + cell_w * c as u32 + cell_w / 2) as i32;
        let style = ("sans-serif", 12)
            .into_font()
            .transform(FontTransform::Rotate270)
            .into_text_style(&root);
        root.draw(&Text::new(label.clone(), (x, head as i32 - 6), style))
            .map_err(|e| err(&e))?;
    }
    for (r, label) in map.rows.iter().enumerate() {
        let y = (head + cell_h * r as u32) as i32;
        root.draw(&Text::new(
            label.clone(),
            (8, y + 7),
            ("sans-serif", 12).into_font(),
        ))
        .map_err(|e| err(&e))?;
        for c in 0..map.columns.len() {
            let v = map
                .values
                .get(r)
                .and_then(|row| row.get(c))
                .copied()
                .unwrap_or(f64::NAN);
            let x = (label_w + cell_w * c as u32) as i32;
            let rect = [(x, y), (x + cell_w as i32 - 2, y + cell_h as i32 - 2)];
            root.draw(&Rectangle::new(
                rect,
                cell_colour(v, map.centre, map.span).filled(),
            ))
            .map_err(|e| err(&e))?;
            let text = if v.is_finite() {
                format!("{v:.*}", map.decimals)
            } else {
                "–".to_owned()
            };
            root.draw(&Text::new(
                text,
                (x + 8, y + 7),
                ("sans-serif", 12).into_font(),
            ))
            .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_white_at_the_centre_and_saturates_at_the_span() {
        assert_eq!(cell_colour(1.0, 1.0, 0.2), RGBColor(255, 255, 255));
        assert_eq!(cell_colour(0.5, 1.0, 0.2), RGBColor(178, 24, 43));
        assert_eq!(cell_colour(2.0, 1.0, 0.2), RGBColor(33, 102, 172));
        assert_eq!(cell_colour(f64::NAN, 1.0, 0.2), RGBColor(200, 200, 200));
    }

    #[test]
    fn a_map_is_written_with_every_value() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.svg");
        let rows = vec!["8 Mb/s".to_owned(), "LTE".to_owned()];
        let columns = vec!["0.2 Mb/s".to_owned()];
        heat_map(
            &path,
            &HeatMap {
                title: "R²CP / best single",
                rows: &rows,
                columns: &columns,
                values: &[vec![1.025], vec![f64::NAN]],
                centre: 1.0,
                span: 0.2,
                decimals: 2,
            },
        )
        .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("1.02") || svg.contains("1.03"), "{svg}");
        assert!(svg.contains("LTE"));
    }
}
