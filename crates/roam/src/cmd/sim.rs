//! `roam sim`: run one scenario, print a table or one JSON object, write files and plots.

use std::path::{Path, PathBuf};

use roam_sim::result::RunResult;

use crate::cli::{Format, SimArgs};
use crate::cmd::{check_memory, default_out, note, prepare, print, seed_override};
use crate::engine;
use crate::error::{CliError, Result};
use crate::output::pcap::PcapTrace;
use crate::output::trace::{Both, CsvTrace};
use crate::output::{self, csv, json, plot, table};
use crate::progress;
use crate::timing::timed;

/// Steps of the progress bar (the simulator reports fractions of the run).
const BAR_STEPS: u64 = 1000;

/// Runs `roam sim`.
pub fn run(args: &SimArgs) -> Result<()> {
    let mut overrides = args.set.clone();
    if let Some(seed) = args.seed {
        overrides.push(seed_override(seed));
    }
    let scenario = prepare(&args.file, &overrides)?;
    check_memory(&scenario, 1, args.max_memory)?;
    let png = output::png_writer(args.png)?;

    let mut trace = match &args.trace {
        Some(path) => {
            let unknown = args
                .trace_flow
                .iter()
                .find(|id| !scenario.flows.iter().any(|f| &f.id == *id));
            if let Some(id) = unknown {
                return Err(CliError::Usage(format!(
                    "--trace-flow {id}: the scenario has no flow with that id"
                )));
            }
            let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
            Some((
                path,
                CsvTrace::new(std::io::BufWriter::new(file), args.trace_flow.clone()),
            ))
        }
        None => None,
    };

    let mut pcap = match &args.pcap {
        Some(path) => {
            if let Some(link) = &args.pcap_link {
                let name = link
                    .strip_suffix(":fwd")
                    .or_else(|| link.strip_suffix(":rev"))
                    .unwrap_or(link);
                if !scenario.links.iter().any(|l| l.name == name) {
                    return Err(CliError::Usage(format!(
                        "--pcap-link {link}: the scenario has no link with that name"
                    )));
                }
            }
            let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
            let t = PcapTrace::new(std::io::BufWriter::new(file), args.pcap_link.clone())
                .map_err(|e| CliError::write(path, e))?;
            Some((path, t))
        }
        None => None,
    };

    let bar = progress::bar(BAR_STEPS, "simulating", args.quiet);
    let mut both;
    let observer: Option<&mut dyn roam_sim::trace::PacketObserver> =
        match (trace.as_mut(), pcap.as_mut()) {
            (Some((_, t)), Some((_, p))) => {
                both = Both(t, p);
                Some(&mut both)
            }
            (Some((_, t)), None) => Some(t),
            (None, Some((_, p))) => Some(p),
            (None, None) => None,
        };
    let (result, wall) = timed(|| {
        engine::run_with_progress(
            &scenario,
            &mut |fraction| {
                bar.set_position((fraction.clamp(0.0, 1.0) * BAR_STEPS as f64) as u64);
            },
            observer,
        )
    });
    bar.finish_and_clear();
    let result = result?;
    for w in &result.warnings {
        note(&format!("warning: {w}"));
    }
    if let Some((path, t)) = trace {
        let rows = t.finish().map_err(|e| CliError::write(path, e))?;
        note(&format!("packet trace: {rows} rows in {}", path.display()));
    }
    if let Some((path, p)) = pcap {
        let packets = p.finish().map_err(|e| CliError::write(path, e))?;
        note(&format!("capture: {packets} packets in {}", path.display()));
    }

    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_out("", &result.scenario));
    let plots = write_files(&out_dir, &result)?;
    output::write_pngs(png.as_ref(), &plots)?;

    match args.format {
        Format::Json => print(&json::to_json(&result))?,
        Format::Table => {
            print(&format!(
                "{}\n{}\n{}\n",
                table::flows(&result),
                table::aggregate_note(&result),
                table::run_footer(&result)
            ))?;
            let secs = wall.as_secs_f64();
            let rate = if secs > 0.0 {
                format!(", {:.0} events/s", result.events as f64 / secs)
            } else {
                String::new()
            };
            note(&format!(
                "wall time {secs:.3} s{rate}; files in {}",
                out_dir.display()
            ));
        }
    }
    Ok(())
}

/// Writes `result.json`, `series.csv`, `flows.csv`, `links.csv` and the three SVG plots;
/// returns the plots' paths.
pub fn write_files(dir: &Path, result: &RunResult) -> Result<Vec<PathBuf>> {
    output::ensure_dir(dir)?;
    json::write_result(&dir.join("result.json"), result)?;
    csv::to_file(&dir.join("series.csv"), |w| {
        csv::write_series(w, &result.series)
    })?;
    csv::to_file(&dir.join("flows.csv"), |w| {
        csv::write_flows(w, &result.scenario, result.seed, &result.flows)
    })?;
    csv::to_file(&dir.join("links.csv"), |w| {
        csv::write_links(w, &result.links)
    })?;
    plot::write_all(dir, result)
}
