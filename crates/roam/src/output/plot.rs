//! SVG line plots of a run's time series: throughput, congestion window, sequence progression.
//!
//! Drawn with plotters' SVG backend only (no font crates): text becomes SVG `<text>` elements
//! rendered by the viewer, and plotters' built-in size estimate is used for layout.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use roam_lab::chart::{self, LegendEntry};
use roam_sim::result::{FlowResult, FlowSeries, RunResult};

use crate::error::{CliError, Result};

/// Plot size in pixels: the report charts' size, so that every PNG is 2080 × 1040.
const SIZE: (u32, u32) = (chart::WIDTH, chart::HEIGHT);

/// One flow's line, split into segments where the value is missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend label (flow id).
    pub label: String,
    /// Contiguous runs of points.
    pub segments: Vec<Vec<(f64, f64)>>,
    /// The aggregate of several flows: drawn in black, wider, behind the flows.
    pub aggregate: bool,
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
            aggregate: false,
        }
    }

    fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

/// The flows a run's plots show: all of them when there are at most [`MAX_FLOW_LINES`];
/// otherwise three chosen ones, so that every line keeps its own colour and legend row.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Indices into the run's series, each with its legend label.
    pub shown: Vec<(usize, String)>,
    /// How many flows the run has.
    pub total: usize,
}

/// Flows above which the plots show a choice of them (and the aggregate throughput).
pub const MAX_FLOW_LINES: usize = 6;

impl Selection {
    /// Every flow up to [`MAX_FLOW_LINES`]; beyond, the non-cross flows with the highest,
    /// median and lowest goodput (the run's `flows`, in the order of `series`).
    pub fn of(series: &[FlowSeries], flows: &[FlowResult]) -> Self {
        let total = series.len();
        if total <= MAX_FLOW_LINES {
            let shown = series
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.id.clone()))
                .collect();
            return Selection { shown, total };
        }
        let mut ranked: Vec<usize> = (0..total)
            .filter(|&i| flows.get(i).is_some_and(|f| !f.cross))
            .collect();
        let goodput = |i: usize| flows.get(i).map_or(0.0, |f| f.goodput_bps);
        ranked.sort_by(|&a, &b| goodput(b).total_cmp(&goodput(a)).then(a.cmp(&b)));
        let mut shown: Vec<(usize, String)> = Vec::new();
        if let (Some(&hi), Some(&lo)) = (ranked.first(), ranked.last()) {
            let mid = ranked[ranked.len() / 2];
            for (i, what) in [(hi, "highest"), (mid, "median"), (lo, "lowest")] {
                if !shown.iter().any(|(j, _)| *j == i) {
                    shown.push((i, format!("{} ({what} goodput)", series[i].id)));
                }
            }
        }
        Selection { shown, total }
    }

    /// Whether some flows are left out.
    pub fn is_partial(&self) -> bool {
        self.shown.len() < self.total
    }
}

/// The aggregate throughput (Mb/s) of the non-cross flows, bin by bin: the sum of their
/// per-bin goodputs (every flow's series starts at the run's first bin and stops when the flow
/// ends, so bin `k` is entry `k` of every series that reaches it).
pub fn aggregate_line(series: &[FlowSeries], flows: &[FlowResult]) -> Option<Line> {
    let main: Vec<&FlowSeries> = series
        .iter()
        .enumerate()
        .filter(|(i, _)| flows.get(*i).is_some_and(|f| !f.cross))
        .map(|(_, s)| s)
        .collect();
    if main.len() < 2 {
        return None;
    }
    let longest = main.iter().max_by_key(|s| s.time_s.len())?;
    let ys = (0..longest.time_s.len()).map(|k| {
        Some(
            main.iter()
                .filter_map(|s| s.throughput_bps.get(k))
                .sum::<f64>()
                / 1e6,
        )
    });
    let mut line = Line::from_options(
        &format!("aggregate of {} flows", main.len()),
        &longest.time_s,
        ys,
    );
    line.aggregate = true;
    Some(line)
}

/// Throughput in Mb/s over time of the selected flows.
pub fn throughput_lines(series: &[FlowSeries], sel: &Selection) -> Vec<Line> {
    sel.shown
        .iter()
        .map(|(i, label)| {
            let s = &series[*i];
            let ys = s.throughput_bps.iter().map(|v| Some(v / 1e6));
            Line::from_options(label, &s.time_s, ys)
        })
        .collect()
}

/// Congestion window in kB over time of the selected flows that have one.
pub fn cwnd_lines(series: &[FlowSeries], sel: &Selection) -> Vec<Line> {
    sel.shown
        .iter()
        .map(|(i, label)| {
            let s = &series[*i];
            let ys = s.cwnd_bytes.iter().map(|v| v.map(|b| b as f64 / 1e3));
            Line::from_options(label, &s.time_s, ys)
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Acknowledged sequence number in MB over time of the selected flows that have one.
pub fn seq_lines(series: &[FlowSeries], sel: &Selection) -> Vec<Line> {
    sel.shown
        .iter()
        .map(|(i, label)| {
            let s = &series[*i];
            let ys = s.seq.iter().map(|v| v.map(|b| b as f64 / 1e6));
            Line::from_options(label, &s.time_s, ys)
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// Writes `throughput.svg` (with the aggregate when there are several flows), `cwnd.svg` and
/// `seq.svg` of a run into `dir` and returns their paths. With more than [`MAX_FLOW_LINES`]
/// flows each plot shows three of them and says so in its title.
pub fn write_all(dir: &Path, result: &RunResult) -> Result<Vec<PathBuf>> {
    let (series, flows) = (&result.series, &result.flows);
    let sel = Selection::of(series, flows);
    let title = if sel.is_partial() {
        format!(
            "{}: {} of {} flows shown",
            result.scenario,
            sel.shown.len(),
            sel.total
        )
    } else {
        result.scenario.clone()
    };
    let mut throughput = throughput_lines(series, &sel);
    if let Some(a) = aggregate_line(series, flows) {
        throughput.insert(0, a);
    }
    let plots = [
        ("throughput.svg", "throughput (Mb/s)", throughput),
        (
            "cwnd.svg",
            "congestion window (kB)",
            cwnd_lines(series, &sel),
        ),
        (
            "seq.svg",
            "acknowledged sequence (MB)",
            seq_lines(series, &sel),
        ),
    ];
    let mut written = Vec::with_capacity(plots.len());
    for (file, y_desc, lines) in plots {
        let path = dir.join(file);
        line_plot(&path, &title, y_desc, &lines)?;
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

/// The colour of each line: black for the aggregate, palette slots in order for the flows.
fn colours(lines: &[Line]) -> Vec<RGBColor> {
    let mut slot = 0;
    lines
        .iter()
        .map(|l| {
            if l.aggregate {
                BLACK
            } else {
                slot += 1;
                chart::colour(slot - 1)
            }
        })
        .collect()
}

/// Draws one SVG plot: time (s) on x, `y_desc` on y, one line per entry of `lines` (at most
/// [`MAX_FLOW_LINES`] flows and an aggregate, see [`Selection`]), each with a legend row.
pub fn line_plot(path: &Path, title: &str, y_desc: &str, lines: &[Line]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| CliError::Plot {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let (xmax, ymax) = bounds(lines);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let with_legend = !lines.is_empty();
    let colours = colours(lines);
    let entries: Vec<LegendEntry<'_>> = lines
        .iter()
        .zip(&colours)
        .map(|(l, c)| LegendEntry {
            label: &l.label,
            colour: *c,
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
        .bold_line_style(BLACK.mix(0.07))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|e| err(&e))?;

    for (line, colour) in lines.iter().zip(&colours) {
        let width = if line.aggregate { 3 } else { 2 };
        for seg in &line.segments {
            chart
                .draw_series(LineSeries::new(
                    seg.iter().copied(),
                    colour.stroke_width(width),
                ))
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
    use roam_sim::result::Aggregate;

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

    fn flow(id: &str, goodput_bps: f64) -> FlowResult {
        FlowResult {
            id: id.to_owned(),
            protocol: "tcp".to_owned(),
            cc: "newreno".to_owned(),
            cross: false,
            start_s: 0.0,
            goodput_bps,
            bytes_delivered: 0,
            completion_s: None,
            failure: None,
            failed_s: None,
            retransmitted_segments: 0,
            timeouts: 0,
            recoveries: 0,
            wireless_excused: 0,
            integrity_errors: 0,
            datagrams_sent: 0,
            transport_bytes_sent: 0,
            overhead_pct: 0.0,
            energy_j: None,
            sleep_s: None,
            media: None,
            multipath: None,
        }
    }

    /// A run of `n` flows, flow `i` with goodput `i` Mb/s.
    fn run(n: usize) -> RunResult {
        RunResult {
            scenario: "my-scenario".to_owned(),
            seed: 1,
            sim_seconds: 2.0,
            events: 1,
            link_packets: 1,
            jain_index: 1.0,
            aggregate: Aggregate {
                flows: n,
                bytes_delivered: 0,
                from_s: 0.0,
                to_s: 2.0,
                goodput_bps: 1.0,
            },
            flows: (0..n)
                .map(|i| flow(&format!("f{i}"), i as f64 * 1e6))
                .collect(),
            links: vec![],
            warnings: vec![],
            series: (0..n).map(|i| series(&format!("f{i}"))).collect(),
        }
    }

    fn all(series: &[FlowSeries]) -> Selection {
        Selection::of(series, &[])
    }

    #[test]
    fn none_breaks_lines_into_segments() {
        let s = [series("a")];
        let l = &cwnd_lines(&s, &all(&s))[0];
        assert_eq!(
            l.segments,
            vec![vec![(0.5, 1.0)], vec![(1.5, 3.0), (2.0, 4.0)]]
        );
    }

    #[test]
    fn flows_without_window_are_left_out_of_cwnd_plot() {
        let mut udp = series("udp");
        udp.cwnd_bytes = vec![None; 4];
        let s = [series("a"), udp];
        assert_eq!(cwnd_lines(&s, &all(&s)).len(), 1);
    }

    #[test]
    fn plots_are_svg_of_the_charts_size_with_title_axes_and_legend() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &run(2)).unwrap();
        for f in ["throughput.svg", "cwnd.svg", "seq.svg"] {
            let svg = std::fs::read_to_string(dir.path().join(f)).unwrap();
            assert!(
                svg.starts_with(&format!(
                    "<svg width=\"{}\" height=\"{}\"",
                    chart::WIDTH,
                    chart::HEIGHT
                )),
                "{f}: {}",
                &svg[..60]
            );
            assert!(svg.contains("my-scenario"), "{f}: title");
            assert!(svg.contains("time (s)"), "{f}: x label");
            assert!(svg.contains(">\nf1\n</text>"), "{f}: legend");
        }
        let svg = std::fs::read_to_string(dir.path().join("throughput.svg")).unwrap();
        assert!(svg.contains("aggregate of 2 flows"));
    }

    #[test]
    fn empty_series_still_draw_axes() {
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &run(0)).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("throughput.svg")).unwrap();
        assert!(svg.contains("throughput (Mb/s)"));
    }

    #[test]
    fn many_flows_show_the_aggregate_and_three_named_flows() {
        let r = run(20);
        let sel = Selection::of(&r.series, &r.flows);
        let labels: Vec<&str> = sel.shown.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "f19 (highest goodput)",
                "f9 (median goodput)",
                "f0 (lowest goodput)"
            ]
        );
        let agg = aggregate_line(&r.series, &r.flows).unwrap();
        assert_eq!(agg.segments[0][0], (0.5, 20.0), "20 flows × 1 Mb/s");
        let dir = tempfile::tempdir().unwrap();
        write_all(dir.path(), &r).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("throughput.svg")).unwrap();
        assert!(svg.contains("3 of 20 flows shown"));
        assert!(svg.contains("aggregate of 20 flows"));
        assert!(svg.contains("f9 (median goodput)"));
        assert!(!svg.contains(">\nf10\n</text>"));
        // Six or fewer: every flow, each with its own colour.
        assert_eq!(Selection::of(&run(6).series, &run(6).flows).shown.len(), 6);
    }
}
