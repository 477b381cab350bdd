//! The test bed's charts, as `roam sweep` writes its own (SVG, PNG copies with `--png`):
//! per case `goodput.svg` (every run's per-second goodput over both paths), one
//! `runs/MODE.svg` per run (path A, path B, both, and the simulator's per-second goodput
//! beside them for roam's modes) and `summary.svg` (each mode's goodput as a bar, the
//! simulator's beside roam's, the ideal as a dashed line).

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use roam_lab::chart::{self, Axes, LegendEntry, Series};

use super::modes::RunOut;
use super::Case;
use crate::error::{CliError, Result};

/// The simulator's palette slot (reddish purple), apart from paths A and B (slots 0, 1).
const SIM_COLOUR: usize = 3;
const WIDTH: u32 = 1040;
const HEIGHT: u32 = 520;

fn plot_err(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Mb/s in each second from bytes per second; point k at the end of its second (the
/// simulator's convention for its bins).
fn mbps_points(bytes: impl Iterator<Item = u64>) -> Vec<(f64, f64)> {
    bytes
        .enumerate()
        .map(|(k, b)| ((k + 1) as f64, b as f64 * 8.0 / 1e6))
        .collect()
}

/// Bytes per second over both paths.
fn total(r: &RunOut) -> Vec<u64> {
    let n = r.per_second.iter().map(Vec::len).max().unwrap_or(0);
    (0..n)
        .map(|s| {
            r.per_second
                .iter()
                .map(|p| p.get(s).copied().unwrap_or(0))
                .sum()
        })
        .collect()
}

fn sim_points(r: &RunOut) -> Vec<(f64, f64)> {
    r.sim_per_second
        .iter()
        .enumerate()
        .map(|(k, g)| ((k + 1) as f64, *g))
        .collect()
}

fn axes(title: &str) -> Axes<'_> {
    Axes {
        title,
        x: "time since the emulation started (s)",
        y: "Mb/s in the second (wire: IP bytes to the mobile host)",
        log_x: false,
        y_from_zero: true,
    }
}

/// Writes every chart of one case into `dir`; returns the files written.
pub fn write_case(
    dir: &Path,
    case: &Case,
    runs: &[RunOut],
    ideal: Option<f64>,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let ran: Vec<&RunOut> = runs.iter().filter(|r| !r.per_second.is_empty()).collect();
    if !ran.is_empty() {
        let title = format!("{}: every run, both paths", case.name);
        let series: Vec<Series> = ran
            .iter()
            .map(|r| Series::new(r.mode.name(), mbps_points(total(r).into_iter())))
            .collect();
        let path = dir.join("goodput.svg");
        chart::lines(&path, &axes(&title), &series).map_err(|e| plot_err(&path, e))?;
        written.push(path);
    }
    for r in &ran {
        let title = format!("{}: {}", case.name, r.mode.name());
        let mut series: Vec<Series> = r
            .per_second
            .iter()
            .enumerate()
            .map(|(k, p)| {
                Series::new(
                    format!("path {}", (b'A' + k as u8) as char),
                    mbps_points(p.iter().copied()),
                )
            })
            .collect();
        series.push(Series::new("both paths", mbps_points(total(r).into_iter())).in_colour(6));
        if !r.sim_per_second.is_empty() {
            series.push(
                Series::new("simulator: goodput (same engine, links)", sim_points(r))
                    .in_colour(SIM_COLOUR)
                    .dashed(),
            );
        }
        let path = dir.join("runs").join(format!("{}.svg", r.mode.name()));
        std::fs::create_dir_all(dir.join("runs")).map_err(|e| CliError::write(dir, e))?;
        chart::lines(&path, &axes(&title), &series).map_err(|e| plot_err(&path, e))?;
        written.push(path);
    }
    let path = dir.join("summary.svg");
    bars(
        &path,
        &format!("{}: goodput of each mode", case.name),
        runs,
        ideal,
    )?;
    written.push(path);
    Ok(written)
}

/// The summary: a bar per mode (0 when it failed or was skipped), the simulator's bar beside
/// each simulated mode, the ideal as a dashed line across.
fn bars(path: &Path, title: &str, runs: &[RunOut], ideal: Option<f64>) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| plot_err(path, e);
    let names: Vec<String> = runs.iter().map(|r| r.mode.name()).collect();
    let ymax = runs
        .iter()
        .flat_map(|r| [r.goodput_mbps, r.sim_mbps.unwrap_or(0.0)])
        .chain(ideal)
        .fold(0.0, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let entries = [
        LegendEntry {
            label: "emulated (roam emu)",
            colour: chart::colour(0),
            dashed: false,
        },
        LegendEntry {
            label: "simulated (roam sim)",
            colour: chart::colour(SIM_COLOUR),
            dashed: false,
        },
        LegendEntry {
            label: "ideal (best single paths added)",
            colour: chart::colour(6),
            dashed: true,
        },
    ];
    let legend_w = chart::legend_width(entries.iter().map(|e| e.label));
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (plot, legend) = root.split_horizontally(WIDTH - legend_w);
    let n = runs.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(70)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..n - 0.5, 0.0..ymax)
        .map_err(|e| err(&e))?;
    let label = |v: &f64| {
        let k = v.round();
        if (v - k).abs() < 1e-6 && k >= 0.0 {
            names.get(k as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(runs.len().max(1))
        .x_label_formatter(&label)
        .y_label_formatter(&|v: &f64| chart::tick_label(*v))
        .y_desc("goodput (Mb/s)")
        .x_desc("mode")
        .label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 14))
        .disable_x_mesh()
        .bold_line_style(BLACK.mix(0.07))
        .light_line_style(BLACK.mix(0.025))
        .draw()
        .map_err(|e| err(&e))?;
    for (k, r) in runs.iter().enumerate() {
        let x = k as f64;
        let emu = if r.ok { r.goodput_mbps } else { 0.0 };
        let (left, right) = match r.sim_mbps {
            Some(_) => (x - 0.35, x),
            None => (x - 0.25, x + 0.25),
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(left, 0.0), (right, emu)],
                chart::colour(0).filled(),
            )))
            .map_err(|e| err(&e))?;
        if let Some(sim) = r.sim_mbps {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, 0.0), (x + 0.35, sim)],
                    chart::colour(SIM_COLOUR).filled(),
                )))
                .map_err(|e| err(&e))?;
        }
    }
    if let Some(i) = ideal {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(-0.5, i), (n - 0.5, i)],
                8,
                5,
                chart::colour(6).stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
    }
    chart::legend_column(&legend, &entries, false).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::testbed::modes::Mode;

    fn run(mode: Mode, ok: bool, g: f64, sim: Option<f64>) -> RunOut {
        RunOut {
            mode,
            ok,
            seconds: 10.0,
            goodput_mbps: g,
            note: String::new(),
            per_second: vec![vec![1_000_000, 900_000], vec![0, 250_000]],
            sim_mbps: sim,
            sim_per_second: sim.map_or(Vec::new(), |s| vec![s, s]),
            sim_note: String::new(),
        }
    }

    #[test]
    fn writes_the_overview_one_chart_per_run_and_the_bars() {
        let dir = tempfile::tempdir().unwrap();
        let case_file = dir.path().join("c.toml");
        std::fs::write(
            &case_file,
            "[testbed]\nname = \"c\"\nsize = \"1MB\"\n[[link]]\nname = \"a\"\nrate = \"8Mbps\"\n\
             [[link]]\nname = \"b\"\nrate = \"2Mbps\"\n",
        )
        .unwrap();
        let case = super::super::load_case(&case_file, false).unwrap();
        let runs = vec![
            run(Mode::Tcp("cubic", 0), true, 7.5, None),
            run(Mode::Roam(1), false, 0.0, Some(1.8)),
            run(Mode::R2cpMirrors, true, 9.0, Some(9.2)),
        ];
        let files = write_case(dir.path(), &case, &runs, Some(9.5)).unwrap();
        assert_eq!(files.len(), 5, "{files:?}");
        let bars = std::fs::read_to_string(dir.path().join("summary.svg")).unwrap();
        assert!(
            bars.contains("r2cp-2mirror") && bars.contains("ideal"),
            "{bars}"
        );
        let one = std::fs::read_to_string(dir.path().join("runs/r2cp-2mirror.svg")).unwrap();
        assert!(one.contains("simulator") && one.contains("path B"));
        let all = std::fs::read_to_string(dir.path().join("goodput.svg")).unwrap();
        assert!(all.contains("tcp-cubic-a"));
    }
}
