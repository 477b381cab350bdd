//! Simple SVG charts for reports: lines of (x, y) points, optional logarithmic x axis.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::LabError;

/// One named line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// Axis labels and scale of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes<'a> {
    /// Chart title.
    pub title: &'a str,
    /// X axis label with unit.
    pub x: &'a str,
    /// Y axis label with unit.
    pub y: &'a str,
    /// Logarithmic x axis (all x must be > 0).
    pub log_x: bool,
}

/// Size of a chart in pixels, and of the legend column at its right.
const WIDTH: u32 = 1040;
const HEIGHT: u32 = 520;
const LEGEND_WIDTH: u32 = 250;
/// Where the legend's first row sits, and the distance between rows, in pixels.
const LEGEND_TOP: i32 = 60;
const LEGEND_ROW: i32 = 22;

/// Draws a legend into `area`, a column beside a plot: one row per label, with a sample of the
/// line (and its point marker when `markers`) in the colour line `i` of the plot was drawn in
/// (`Palette99::pick(i)`). Shared by the report charts and `roam sim`'s run plots.
pub fn legend_column<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[&str],
    markers: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for (i, label) in labels.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let y = LEGEND_TOP + i as i32 * LEGEND_ROW;
        area.draw(&PathElement::new(
            vec![(6, y), (28, y)],
            color.stroke_width(2),
        ))?;
        if markers {
            area.draw(&Circle::new((17, y), 3, color.filled()))?;
        }
        area.draw(&Text::new(
            (*label).to_owned(),
            (34, y - 7),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

/// Draws `series` into an SVG file at `path`.
pub fn lines(path: &Path, axes: &Axes<'_>, series: &[Series]) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Plot {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let pts = || series.iter().flat_map(|s| s.points.iter().copied());
    let finite = |v: f64| v.is_finite();
    let xmin = pts()
        .map(|p| p.0)
        .filter(|&x| finite(x) && (!axes.log_x || x > 0.0))
        .fold(f64::INFINITY, f64::min);
    let xmax = pts()
        .map(|p| p.0)
        .filter(|&x| finite(x))
        .fold(f64::NEG_INFINITY, f64::max);
    let ymax = pts()
        .map(|p| p.1)
        .filter(|&y| finite(y))
        .fold(0.0, f64::max);
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else {
        (if axes.log_x { 1e-6 } else { 0.0 }, 1.0)
    };
    let ymax = if ymax > 0.0 { ymax * 1.08 } else { 1.0 };
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // The legend gets its own column right of the plot, so it never hides a line.
    let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    let mut b = ChartBuilder::on(&plot);
    b.caption(axes.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64);
    let style = |p: &(f64, f64)| finite(p.0) && finite(p.1) && (!axes.log_x || p.0 > 0.0);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(axes.x)
                .y_desc(axes.y)
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(|e| err(&e))?;
            for (i, s) in series.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                let data: Vec<(f64, f64)> = s.points.iter().copied().filter(style).collect();
                chart
                    .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| err(&e))?;
            }
        }};
    }
    if axes.log_x {
        draw!(b
            .build_cartesian_2d((xmin..xmax).log_scale(), 0f64..ymax)
            .map_err(|e| err(&e))?);
    } else {
        draw!(b
            .build_cartesian_2d(xmin..xmax, 0f64..ymax)
            .map_err(|e| err(&e))?);
    }
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    legend_column(&legend, &labels, true).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
