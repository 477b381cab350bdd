//! SVG charts for reports: lines of (x, y) points with optional 95 % confidence bars, an
//! optional logarithmic x axis, and a legend column beside the plot.
//!
//! Colours come from a colour-blind-safe palette (Okabe & Ito, "Color Universal Design", 2008)
//! without its yellow, which is unreadable on white. Series that belong together (ours and the
//! paper's value of the same protocol; two variants at one RTT) share a colour and differ by a
//! dashed line.

use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::stats::Estimate;
use crate::LabError;

/// One named line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend label. Series with the same label, colour and dash share one legend row.
    pub label: String,
    /// Points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Half-width of each point's 95 % confidence interval (same order as `points`; empty, or
    /// a non-finite or zero entry, draws no bar).
    pub errors: Vec<f64>,
    /// Palette slot (see [`colour`]); `None` uses the series' position in the chart.
    pub colour: Option<usize>,
    /// Drawn dashed (the paper's numbers beside ours, or a second variant in the same colour).
    pub dashed: bool,
}

impl Series {
    /// A solid line in the colour of its position.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            ..Series::default()
        }
    }

    /// A line of sample means at the given x, each with its 95 % confidence bar.
    pub fn of_estimates(
        label: impl Into<String>,
        points: impl IntoIterator<Item = (f64, Estimate)>,
    ) -> Self {
        let mut s = Series::new(label, Vec::new());
        for (x, e) in points {
            s.push_estimate(x, &e);
        }
        s
    }

    /// Appends the mean of `e` at `x` with its 95 % confidence bar (an empty sample is a
    /// gap: its point is not drawn).
    pub fn push_estimate(&mut self, x: f64, e: &Estimate) {
        self.errors.resize(self.points.len(), f64::NAN);
        self.points.push((x, e.mean.unwrap_or(f64::NAN)));
        self.errors.push(e.ci95.unwrap_or(f64::NAN));
    }

    /// Adds 95 % confidence half-widths, one per point.
    pub fn with_errors(mut self, errors: Vec<f64>) -> Self {
        self.errors = errors;
        self
    }

    /// Uses palette slot `slot` instead of the series' position.
    pub fn in_colour(mut self, slot: usize) -> Self {
        self.colour = Some(slot);
        self
    }

    /// Draws the line dashed.
    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
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
    /// The y axis starts at 0 (quantities such as throughput); otherwise it spans the data
    /// (a sequence number around an event).
    pub y_from_zero: bool,
}

/// Okabe–Ito colours without yellow, then a mid grey.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0x99, 0x99, 0x99), // grey
];

/// Colour of palette slot `slot` (cycling). Shared by the report charts and `roam sim`'s run
/// plots so that both look alike.
pub fn colour(slot: usize) -> RGBColor {
    PALETTE[slot % PALETTE.len()]
}

/// Axis tick text: at most six significant digits, no trailing zeros ("50", "0.3", "1.25"),
/// so that floating-point steps such as 0.30000000000000004 print as the number they are.
pub fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v == 0.0 {
        return "0".to_owned();
    }
    let digits = 5 - v.abs().log10().floor() as i32;
    let decimals = digits.clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

/// Charts with a line of more points than this (time series) get no point markers: they
/// would merge into a thick band.
const MAX_MARKED_POINTS: usize = 40;
/// Width of a chart in SVG pixels.
pub const WIDTH: u32 = 1040;
/// Height of a chart in SVG pixels.
pub const HEIGHT: u32 = 520;
/// Where the legend's first row sits, and the distance between rows, in pixels.
const LEGEND_TOP: i32 = 60;
const LEGEND_ROW: i32 = 22;
/// Legend text size (px) and the width budget per character used to size the column.
const LEGEND_FONT: u32 = 13;
const LEGEND_CHAR_WIDTH: u32 = 7;

/// One legend row: label, colour and line style.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegendEntry<'a> {
    /// Text.
    pub label: &'a str,
    /// Line colour.
    pub colour: RGBColor,
    /// Dashed sample line.
    pub dashed: bool,
}

/// Width (px) of a legend column that fits `labels` without clipping.
pub fn legend_width<'a>(labels: impl IntoIterator<Item = &'a str>) -> u32 {
    let longest = labels
        .into_iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    (48 + LEGEND_CHAR_WIDTH * longest as u32).clamp(120, 360)
}

/// Draws a legend into `area`, a column beside a plot: one row per entry, with a sample of the
/// line (dashed when the line is) and its point marker when `markers`. Shared by the report
/// charts and `roam sim`'s run plots.
pub fn legend_column<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry<'_>],
    markers: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for (i, e) in entries.iter().enumerate() {
        let style = e.colour.stroke_width(2);
        let y = LEGEND_TOP + i as i32 * LEGEND_ROW;
        if e.dashed {
            for x in [6, 16, 26] {
                area.draw(&PathElement::new(vec![(x, y), (x + 6, y)], style))?;
            }
        } else {
            area.draw(&PathElement::new(vec![(6, y), (32, y)], style))?;
        }
        if markers {
            area.draw(&Circle::new((19, y), 3, e.colour.filled()))?;
        }
        area.draw(&Text::new(
            e.label.to_owned(),
            (40, y - 7),
            ("sans-serif", LEGEND_FONT).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

/// The legend rows of `series`: one per distinct (label, colour, dash), in first-seen order.
fn legend_entries(series: &[Series]) -> Vec<LegendEntry<'_>> {
    let mut entries: Vec<LegendEntry<'_>> = Vec::new();
    for (i, s) in series.iter().enumerate() {
        let e = LegendEntry {
            label: &s.label,
            colour: colour(s.colour.unwrap_or(i)),
            dashed: s.dashed,
        };
        if !entries.contains(&e) {
            entries.push(e);
        }
    }
    entries
}

/// Draws `series` into an SVG file at `path`.
pub fn lines(path: &Path, axes: &Axes<'_>, series: &[Series]) -> Result<(), LabError> {
    draw_lines(path, axes, series, None)
}

/// Draws `series` against named categories: a point at x = k belongs to `categories[k]`, and
/// the x axis shows the names, with a tick and a grid line at each and nothing between them
/// (the axis is linear whatever `axes.log_x` says). Points are marked and not joined: there is
/// nothing between two categories to interpolate.
pub fn categories(
    path: &Path,
    axes: &Axes<'_>,
    categories: &[String],
    series: &[Series],
) -> Result<(), LabError> {
    let axes = Axes {
        log_x: false,
        ..axes.clone()
    };
    draw_lines(path, &axes, series, Some(categories))
}

/// A linear x axis whose only key points are the categories 0, 1, …, n − 1: one tick, label
/// and grid line per category and no light grid lines. (plotters' `with_key_points` on an f64
/// range loses the range's label formatting, which the mesh needs.)
struct CategoryAxis {
    linear: RangedCoordf64,
    count: usize,
}

impl Ranged for CategoryAxis {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            (0..self.count).map(|k| k as f64).collect()
        }
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.linear.axis_pixel_range(limit)
    }
}

/// Colour weight of the grid lines at labelled ticks, and of those between them.
const GRID_BOLD: f64 = 0.07;
const GRID_LIGHT: f64 = 0.025;

/// The x range shown for data spanning `xmin..xmax`: 4 % more on each side (in decades on a
/// log axis), so that no point or bar sits on the y axis or the frame.
fn padded(xmin: f64, xmax: f64, log: bool) -> (f64, f64) {
    if log {
        let f = (xmax / xmin).powf(0.04);
        (xmin / f, xmax * f)
    } else {
        let pad = (xmax - xmin) * 0.04;
        (xmin - pad, xmax + pad)
    }
}

/// Each series' dodge slot: its fraction of a spread, centred on 0 (see [`dodge`]), among the
/// series that are dodged: all of them against categories, else those with confidence bars
/// when at least two of them have a point at the same x. Others get 0.
fn dodged_series(series: &[Series], categories: bool) -> Vec<f64> {
    let with_bars: Vec<usize> = (0..series.len())
        .filter(|&i| {
            categories || (0..series[i].points.len()).any(|k| half_width(&series[i], k).is_some())
        })
        .collect();
    let shares_x = with_bars.iter().enumerate().any(|(a, &i)| {
        with_bars[a + 1..].iter().any(|&j| {
            series[i].points.iter().any(|p| {
                series[j]
                    .points
                    .iter()
                    .any(|q| q.0 == p.0 && p.0.is_finite())
            })
        })
    });
    let mut out = vec![0.0; series.len()];
    if categories || shares_x {
        for (slot, &i) in with_bars.iter().enumerate() {
            out[i] = dodge(slot, with_bars.len());
        }
    }
    out
}

/// `x` moved by `slot` (a dodge offset, in units of the space between two categories): on a
/// numeric axis the unit is a twentieth of the shown range (in decades on a log axis), so the
/// widest spread is 2 % of the plot each side.
fn shifted(x: f64, slot: f64, xmin: f64, xmax: f64, log: bool) -> f64 {
    if slot == 0.0 {
        x
    } else if log {
        x * (xmax / xmin).powf(slot / 20.0)
    } else {
        x + slot * (xmax - xmin) / 20.0
    }
}

/// Horizontal offset of series `i` of `n` drawn side by side: the series spread evenly over at
/// most 0.4 of a unit (the space between two categories), centred on 0.
fn dodge(i: usize, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let step = (0.4 / (n - 1) as f64).min(0.12);
    (i as f64 - (n - 1) as f64 / 2.0) * step
}

/// The name of category `v` when `v` is (within rounding) the index of one, else nothing.
fn category_label(categories: &[String], v: f64) -> String {
    let k = v.round();
    if !v.is_finite() || (v - k).abs() > 1e-6 || k < 0.0 {
        return String::new();
    }
    categories.get(k as usize).cloned().unwrap_or_default()
}

fn draw_lines(
    path: &Path,
    axes: &Axes<'_>,
    series: &[Series],
    categories: Option<&[String]>,
) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Plot {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let usable = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite() && (!axes.log_x || p.0 > 0.0);
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(usable)
    };
    let xmin = pts().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = pts().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    // The y range covers the confidence bars too.
    let spans = || {
        series.iter().flat_map(|s| {
            s.points
                .iter()
                .enumerate()
                .filter(|(_, p)| usable(p))
                .map(|(k, p)| {
                    let e = half_width(s, k).unwrap_or(0.0);
                    (p.1 - e, p.1 + e)
                })
        })
    };
    let ymax = spans().map(|s| s.1).fold(0.0, f64::max);
    let ymin = if axes.y_from_zero {
        0.0
    } else {
        spans().map(|s| s.0).fold(f64::INFINITY, f64::min)
    };
    let (xmin, xmax) = if let Some(c) = categories {
        (-0.5, c.len().max(1) as f64 - 0.5)
    } else if xmin.is_finite() && xmax > xmin {
        padded(xmin, xmax, axes.log_x)
    } else if xmin.is_finite() && xmin == xmax {
        // One x value: centre it.
        if axes.log_x {
            (xmin / 2.0, xmin * 2.0)
        } else {
            (
                xmin - 0.5 * xmin.abs().max(1.0),
                xmax + 0.5 * xmax.abs().max(1.0),
            )
        }
    } else {
        (if axes.log_x { 1e-6 } else { 0.0 }, 1.0)
    };
    // Series with confidence bars that share an x stand side by side (ggplot's dodge), so that
    // equal values and overlapping bars stay visible; against categories every series does.
    let dodged = dodged_series(series, categories.is_some());
    let (ymin, ymax) = if !ymin.is_finite() || ymin >= ymax {
        (0.0, if ymax > 0.0 { ymax * 1.08 } else { 1.0 })
    } else if axes.y_from_zero {
        (0.0, ymax * 1.08)
    } else {
        let pad = (ymax - ymin) * 0.05;
        (ymin - pad, ymax + pad)
    };
    let entries = legend_entries(series);
    let legend_w = legend_width(entries.iter().map(|e| e.label));
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // The legend gets its own column right of the plot, so it never hides a line.
    let (plot, legend) = root.split_horizontally(WIDTH - legend_w);
    let mut b = ChartBuilder::on(&plot);
    b.caption(axes.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64);
    let fmt = |v: &f64| tick_label(*v);
    let x_fmt = |v: &f64| match categories {
        Some(c) => category_label(c, *v),
        None => tick_label(*v),
    };
    let markers =
        categories.is_some() || series.iter().all(|s| s.points.len() <= MAX_MARKED_POINTS);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(axes.x)
                .y_desc(axes.y)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&fmt)
                .label_style(("sans-serif", 12))
                .axis_desc_style(("sans-serif", 14))
                .bold_line_style(BLACK.mix(GRID_BOLD))
                .light_line_style(BLACK.mix(GRID_LIGHT))
                .draw()
                .map_err(|e| err(&e))?;
            for (i, s) in series.iter().enumerate() {
                let c = colour(s.colour.unwrap_or(i));
                let style = c.stroke_width(2);
                let bar = c.stroke_width(1);
                let shift = |x: f64| match categories {
                    // One unit is the space between two names.
                    Some(_) => x + dodged[i],
                    None => shifted(x, dodged[i], xmin, xmax, axes.log_x),
                };
                let data: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(usable)
                    .map(|p| (shift(p.0), p.1))
                    .collect();
                // Against categories: markers and bars only, no lines.
                if categories.is_none() && s.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(data.clone(), 8, 5, style))
                        .map_err(|e| err(&e))?;
                } else if categories.is_none() {
                    chart
                        .draw_series(LineSeries::new(data.clone(), style))
                        .map_err(|e| err(&e))?;
                }
                if markers {
                    chart
                        .draw_series(data.into_iter().map(|p| Circle::new(p, 3, c.filled())))
                        .map_err(|e| err(&e))?;
                }
                let bars = s.points.iter().enumerate().filter_map(|(k, p)| {
                    let e = half_width(s, k)?;
                    usable(p).then(|| {
                        let low = if axes.y_from_zero {
                            (p.1 - e).max(0.0)
                        } else {
                            p.1 - e
                        };
                        ErrorBar::new_vertical(shift(p.0), low, p.1, p.1 + e, bar, 6)
                    })
                });
                chart.draw_series(bars).map_err(|e| err(&e))?;
            }
        }};
    }
    if let Some(c) = categories {
        // Ticks and grid lines at the categories only (none between two names).
        let x = CategoryAxis {
            linear: (xmin..xmax).into(),
            count: c.len(),
        };
        draw!(b.build_cartesian_2d(x, ymin..ymax).map_err(|e| err(&e))?);
    } else if axes.log_x {
        draw!(b
            .build_cartesian_2d((xmin..xmax).log_scale(), ymin..ymax)
            .map_err(|e| err(&e))?);
    } else {
        draw!(b
            .build_cartesian_2d(xmin..xmax, ymin..ymax)
            .map_err(|e| err(&e))?);
    }
    legend_column(&legend, &entries, markers).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// The usable confidence half-width of point `k` of `s`.
fn half_width(s: &Series, k: usize) -> Option<f64> {
    s.errors
        .get(k)
        .copied()
        .filter(|e| e.is_finite() && *e > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_beside_categories_are_spread_around_the_name() {
        assert_eq!(dodge(0, 1), 0.0);
        let three: Vec<f64> = (0..3).map(|i| dodge(i, 3)).collect();
        assert_eq!(three, vec![-0.12, 0.0, 0.12]);
        let many: Vec<f64> = (0..9).map(|i| dodge(i, 9)).collect();
        assert!((many[0] + 0.2).abs() < 1e-12 && (many[8] - 0.2).abs() < 1e-12);
    }

    #[test]
    fn bars_at_the_same_x_are_dodged_and_lines_without_bars_are_not() {
        let ours = |label: &str| {
            Series::new(label, vec![(0.0, 1.0), (1.0, 2.0)]).with_errors(vec![0.5, 0.5])
        };
        let paper = Series::new("paper", vec![(0.0, 1.0), (1.0, 2.0)]);
        let d = dodged_series(&[ours("a"), ours("b"), paper.clone()], false);
        assert_eq!(d, vec![-0.06, 0.06, 0.0]);
        // No shared x: nothing moves.
        let apart = Series::new("c", vec![(5.0, 1.0)]).with_errors(vec![0.5]);
        assert_eq!(dodged_series(&[ours("a"), apart], false), vec![0.0, 0.0]);
        // Against categories every series is spread.
        assert_eq!(
            dodged_series(&[paper.clone(), paper], true),
            vec![-0.06, 0.06]
        );
        // On a numeric axis the spread is a fraction of the shown range.
        assert!((shifted(1.0, 0.2, 0.0, 10.0, false) - 1.1).abs() < 1e-12);
        assert!((shifted(1.0, 0.2, 0.1, 1000.0, true) - 10f64.powf(0.04)).abs() < 1e-12);
    }

    #[test]
    fn the_x_range_leaves_room_around_the_first_and_last_point() {
        let (lo, hi) = padded(0.0, 40.0, false);
        assert!((lo + 1.6).abs() < 1e-12 && (hi - 41.6).abs() < 1e-12);
        let (lo, hi) = padded(1e-4, 1e-2, true);
        assert!(lo < 1e-4 && hi > 1e-2);
        assert!(((hi / 1e-2).log10() - 0.08).abs() < 1e-12);
    }

    #[test]
    fn category_ticks_are_named_only_at_whole_positions() {
        let c = ["standard".to_owned(), "probing".to_owned()];
        assert_eq!(category_label(&c, 0.0), "standard");
        assert_eq!(category_label(&c, 1.000_000_000_1), "probing");
        for off in [0.5, -1.0, 2.0, -0.5, f64::NAN] {
            assert_eq!(category_label(&c, off), "", "{off}");
        }
    }

    #[test]
    fn tick_labels_are_short_numbers() {
        assert_eq!(tick_label(0.30000000000000004), "0.3");
        assert_eq!(tick_label(0.7000000000000001), "0.7");
        assert_eq!(tick_label(50.0), "50");
        assert_eq!(tick_label(1.25), "1.25");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(-2.5), "-2.5");
        assert_eq!(tick_label(1234567.0), "1234567");
        assert_eq!(tick_label(0.00012), "0.00012");
        assert_eq!(tick_label(f64::NAN), "");
    }

    #[test]
    fn legend_merges_rows_with_the_same_label_and_look() {
        let s = [
            Series::new("TCP", vec![]).in_colour(0),
            Series::new("RCP", vec![]).in_colour(1),
            Series::new("TCP", vec![]).in_colour(0),
            Series::new("TCP", vec![]).in_colour(0).dashed(),
        ];
        let labels: Vec<(&str, bool)> = legend_entries(&s)
            .iter()
            .map(|e| (e.label, e.dashed))
            .collect();
        assert_eq!(labels, [("TCP", false), ("RCP", false), ("TCP", true)]);
    }

    #[test]
    fn chart_has_labels_bars_and_dashes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.svg");
        let series = [
            Series::new("ours", vec![(0.1, 10.0), (0.3, 20.0)]).with_errors(vec![2.0, f64::NAN]),
            Series::new("paper", vec![(0.1, 12.0), (0.3, 18.0)])
                .in_colour(0)
                .dashed(),
        ];
        let axes = Axes {
            title: "t",
            x: "PER (%)",
            y: "time (s)",
            log_x: true,
            y_from_zero: true,
        };
        lines(&path, &axes, &series).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("PER (%)") && svg.contains(">\npaper\n</text>"));
        assert!(!svg.contains("0000000"), "tick labels are rounded");
        // Both series are drawn in the first palette colour.
        assert!(!svg.contains("#D55E00"));
        assert!(svg.contains("#0072B2"));
    }
}
