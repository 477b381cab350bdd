//! SVG line plots of a run's time series: throughput, congestion window, sequence progression.
//!
//! Drawn with plotters' SVG backend only (no font crates): text becomes SVG `<text>` elements
//! rendered by the viewer, and plotters' built-in size estimate is used for layout.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use roam_lab::chart::{self, LegendEntry};
use roam_sim::result::FlowSeries;

use crate::error::{CliError, Result};

/// Flows above which the legend is left out (it would cover the plot).
const MAX_LEGEND_ENTRIES: usize = 10;
/// Plot size in pixels.
const SIZE: (u32, u32) = (1100, 540);

/// One flow's line, split into segments where the value is missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend label (flow id).
    pub label: String,
    /// Contiguous runs of points.
    pub segments: Vec<Vec<(f64, f64)>>,
}

impl Line {
    /// Builds a line from x values and optional y values; `None` breaks the line.
    pub fn from_options(label: &str, xs: &[f64], ys: impl Iterator<Item = Option<f64>>) -> Self {
        let mut segments = Vec::new();
        let mut cur = Vec::new();
        for (x, y) in xs.iter().zip(ys) {
            match y {
                Some(y) if y.is_finite() && x.is_finite() => cur.push((*x, y)),
                _ => {
                    if !cur.is_empty() {
                        segments.push(std::mem::take(&mut cur));
                    }
                }
            }
        }
        if !cur.is_empty() {
            segments.push(cur);
        }
        Line {
            label: label.to_owned(),
            segments,
        }
    }

    fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

/// Per-flow throughput in Mb/s over time.
pub fn throughput_lines(series: &[FlowSeries]) -> Vec<Line> {
    series
        .iter()
        .map(|s| {
            let ys = s.throughput_bps.iter().map(|v| Some(v / 1e6));
            Line::from_options(&s.id, &s.time_s, ys)
        })
        .collect()
}

/// Per-flow congestion window in kB over time (flows without a window are left out).
pub fn cwnd_lines(series: &[FlowSeries]) -> Vec<Line> {
    series
        .iter()
        .map(|s| {
            let ys = s.cwnd_bytes.iter().map(|v| v.map(|b| b as f64 / 1e3));
            Line::from_options(&s.id, &s.time_s, ys)
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Per-flow acknowledged sequence number in MB over time.
pub fn seq_lines(series: &[FlowSeries]) -> Vec<Line> {
    series
        .iter()
        .map(|s| {
            let ys = s.seq.iter().map(|v| v.map(|b| b as f64 / 1e6));
            Line::from_options(&s.id, &s.time_s, ys)
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Writes `throughput.svg`, `cwnd.svg` and `seq.svg` into `dir` and returns their paths.
pub fn write_all(dir: &Path, title: &str, series: &[FlowSeries]) -> Result<Vec<PathBuf>> {
    let plots = [
        (
            "throughput.svg",
            "throughput (Mb/s)",
            throughput_lines(series),
        ),
        ("cwnd.svg", "congestion window (kB)", cwnd_lines(series)),
        ("seq.svg", "acknowledged sequence (MB)", seq_lines(series)),
    ];
    let mut written = Vec::with_capacity(plots.len());
    for (file, y_desc, lines) in plots {
        let path = dir.join(file);
        line_plot(&path, title, y_desc, &lines)?;
        written.push(path);
    }
    Ok(written)
}

fn bounds(lines: &[Line]) -> (f64, f64) {
    let mut xmax: f64 = 0.0;
    let mut ymax: f64 = 0.0;
    for (x, y) in lines.iter().flat_map(|l| l.segments.iter().flatten()) {
        xmax = xmax.max(*x);
        ymax = ymax.max(*y);
    }
    let xmax = if xmax > 0.0 { xmax } else { 1.0 };
    let ymax = if ymax > 0.0 { ymax * 1.05 } else { 1.0 };
    (xmax, ymax)
}

/// Draws one SVG plot: time (s) on x, `y_desc` on y, one line per entry of `lines`, a legend
/// when there are at most ten lines.
pub fn line_plot(path: &Path, title: &str, y_desc: &str, lines: &[Line]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| CliError::Plot {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let (xmax, ymax) = bounds(lines);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let with_legend = !lines.is_empty() && lines.len() <= MAX_LEGEND_ENTRIES;
    let entries: Vec<LegendEntry<'_>> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| LegendEntry {
            label: &l.label,
            colour: chart::colour(i),
            dashed: false,
        })
        .collect();
    // The legend gets its own column right of the plot, so it never hides a line.
    let (plot, legend) = root.split_horizontally(if with_legend {
        SIZE.0 - chart::legend_width(entries.iter().map(|e| e.label))
    } else {
        SIZE.0
    });
    let fmt = |v: &f64| chart::tick_label(*v);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .x_label_formatter(&fmt)
        .y_label_formatter(&fmt)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;

    for (i, line) in lines.iter().enumerate() {
        let color = chart::colour(i);
        for seg in &line.segments {
            chart
                .draw_series(LineSeries::new(seg.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?;
        }
    }
    if with_legend {
        chart::legend_column(&legend, &entries, false).map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(id: &str) -> FlowSeries {
        FlowSeries {
            id: id.to_owned(),
            time_s: vec![0.5, 1.0, 1.5, 2.0],
            throughput_bps: vec![1e6, 2e6, 3e6, 2e6],
            cwnd_bytes: vec![Some(1000), None, Some(3000), Some(4000)],
            seq: vec![Some(0), Some(1000), Some(2000), Some(3000)],
        }
    }

    #[test]
    fn none_breaks_lines_into_segments() {
        let l = &cwnd_lines(&[series("a")])[0];
        assert_eq!(
            l.segments,
            vec![vec![(0.5, 1.0)], vec![(1.5, 3.0), (2.0, 4.0)]]
        );
    }

    #[test]
    fn flows_without_window_are_left_out_of_cwnd_plot() {
        let mut udp = series("udp");
        udp.cwnd_bytes = vec![None; 4];
        assert_eq!(cwnd_lines(&[series("a"), udp]).len(), 1);
    }

    #[test]
    fn plots_are_svg_with_title_axes_and_legend() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), "my-scenario", &[series("a"), series("b")]).unwrap();
        for f in ["throughput.svg", "cwnd.svg", "seq.svg"] {
            let svg = std::fs::read_to_string(dir.path().join(f)).unwrap();
            assert!(svg.starts_with("<svg"), "{f}");
            assert!(svg.contains("my-scenario"), "{f}: title");
            assert!(svg.contains("time (s)"), "{f}: x label");
            assert!(svg.contains(">\nb\n</text>"), "{f}: legend");
        }
    }

    #[test]
    fn empty_series_still_draw_axes() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), "empty", &[]).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("throughput.svg")).unwrap();
        assert!(svg.contains("throughput (Mb/s)"));
    }

    #[test]
    fn many_flows_have_no_legend() {
        let dir = tempfile::tempdir().unwrap();
        let many: Vec<FlowSeries> = (0..11).map(|i| series(&format!("flow{i}"))).collect();
        let path = dir.path().join("t.svg");
        line_plot(&path, "t", "y", &throughput_lines(&many)).unwrap();
        let svg = std::fs::read_to_string(path).unwrap();
        assert!(svg.contains("time (s)"));
        assert!(!svg.contains(">\nflow10\n</text>"));
    }
}
