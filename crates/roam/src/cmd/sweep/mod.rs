//! `roam sweep`: a scenario over a grid of parameter values × seeds, in parallel, aggregated
//! per grid point with 95 % confidence intervals.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rayon::prelude::*;
use roam_sim::result::{FlowResult, RunResult};
use serde::{Deserialize, Serialize};

use crate::cli::{Param, SweepArgs, SweepCommand};
use crate::cmd::{check_memory, default_out, note, print};
use crate::engine;
use crate::error::{CliError, Result};
use crate::output::{self, fmt_num, sweep_plot, table};
use crate::progress;

pub mod exact;
pub mod plan;
pub mod record;
pub mod shard;
mod tables;
use crate::timing::timed;
use plan::SweepSpec;
use record::{RunRecord, SweepOutcome};
use roam_lab::stats::Estimate;

/// One grid point: a value for every swept key, in `--param` order.
pub type Point = Vec<(String, String)>;

/// The cartesian product of the parameters' values; the first parameter varies slowest.
/// No parameters give one empty point.
pub fn expand_grid(params: &[Param]) -> Result<Vec<Point>> {
    let mut seen = BTreeSet::new();
    for p in params {
        if p.key == "run.seed" {
            return Err(CliError::Usage(
                "--param run.seed: seeds are swept with --seeds N (seeds 1..=N)".to_owned(),
            ));
        }
        if !seen.insert(p.key.as_str()) {
            return Err(CliError::Usage(format!(
                "--param {} given twice; list all its values in one --param",
                p.key
            )));
        }
    }
    let mut points: Vec<Point> = vec![Vec::new()];
    for p in params {
        points = points
            .into_iter()
            .flat_map(|point| {
                p.values.iter().map(move |v| {
                    let mut next = point.clone();
                    next.push((p.key.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    Ok(points)
}

/// The numbers a sweep keeps from one run (besides its flows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    /// Aggregate goodput of the non-cross-traffic flows (Mb/s): their bytes over one interval,
    /// first start to last end (`RunResult::aggregate`), not the sum of per-flow averages.
    #[serde(with = "exact")]
    pub aggregate_goodput_mbps: f64,
    /// Start of the aggregate's interval (s).
    #[serde(with = "exact")]
    pub aggregate_from_s: f64,
    /// End of the aggregate's interval (s).
    #[serde(with = "exact")]
    pub aggregate_to_s: f64,
    /// Jain's fairness index.
    #[serde(with = "exact")]
    pub jain_index: f64,
    /// Mean completion time of the flows that completed (s); `None` if none did.
    #[serde(with = "exact::opt")]
    pub completion_s: Option<f64>,
    /// Mean overhead of the non-cross-traffic flows (%); `None` without such flows.
    #[serde(with = "exact::opt")]
    pub overhead_pct: Option<f64>,
    /// Simulated seconds.
    #[serde(with = "exact")]
    pub sim_seconds: f64,
    /// Events processed.
    pub events: u64,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

impl RunMetrics {
    /// Extracts the sweep metrics from a run.
    pub fn from_result(r: &RunResult) -> Self {
        let main: Vec<_> = r.flows.iter().filter(|f| !f.cross).collect();
        let completions: Vec<f64> = main.iter().filter_map(|f| f.completion_s).collect();
        let overheads: Vec<f64> = main.iter().map(|f| f.overhead_pct).collect();
        RunMetrics {
            aggregate_goodput_mbps: r.aggregate.goodput_bps / 1e6,
            aggregate_from_s: r.aggregate.from_s,
            aggregate_to_s: r.aggregate.to_s,
            jain_index: r.jain_index,
            completion_s: mean(&completions),
            overhead_pct: mean(&overheads),
            sim_seconds: r.sim_seconds,
            events: r.events,
        }
    }
}

/// One flow of one run, as a sweep keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowRow {
    /// Flow id.
    pub id: String,
    /// Goodput (b/s).
    #[serde(with = "exact")]
    pub goodput_bps: f64,
    /// Completion time (s), if it completed.
    #[serde(with = "exact::opt")]
    pub completion_s: Option<f64>,
    /// Every serialised field of the flow's result as `flows.csv` writes it.
    pub cells: Vec<String>,
}

/// One run of the sweep: where in the grid, which seed, what came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    /// Index of the grid point.
    pub point: usize,
    /// Seed.
    pub seed: u64,
    /// Metrics.
    pub metrics: RunMetrics,
    /// The field names of [`FlowRow::cells`] (empty when the run has no flow).
    pub flow_fields: Vec<String>,
    /// Every flow, in scenario order.
    pub flows: Vec<FlowRow>,
}

impl RunRow {
    /// The row of run `r` at grid point `point` with `seed`.
    pub fn new(point: usize, seed: u64, r: &RunResult) -> std::io::Result<Self> {
        let (flow_fields, cells) = flow_cells(&r.flows)?;
        Ok(RunRow {
            point,
            seed,
            metrics: RunMetrics::from_result(r),
            flow_fields,
            flows: r
                .flows
                .iter()
                .zip(cells)
                .map(|(f, cells)| FlowRow {
                    id: f.id.clone(),
                    goodput_bps: f.goodput_bps,
                    completion_s: f.completion_s,
                    cells,
                })
                .collect(),
        })
    }
}

/// The flows' results as the CSV writer serialises them: the field names, and each flow's
/// cells.
fn flow_cells(flows: &[FlowResult]) -> std::io::Result<(Vec<String>, Vec<Vec<String>>)> {
    let other = |e: csv::Error| std::io::Error::other(e.to_string());
    let mut w = csv::Writer::from_writer(Vec::new());
    for f in flows {
        w.serialize(f).map_err(other)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if flows.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut reader = csv::Reader::from_reader(&bytes[..]);
    let fields = reader
        .headers()
        .map_err(other)?
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            r.map(|r| r.iter().map(str::to_owned).collect())
                .map_err(other)
        })
        .collect::<std::io::Result<_>>()?;
    Ok((fields, rows))
}

/// Aggregates of one grid point.
#[derive(Debug, Clone)]
pub struct PointSummary {
    /// Runs aggregated.
    pub runs: usize,
    /// Aggregate goodput (Mb/s).
    pub aggregate_goodput_mbps: Estimate,
    /// Jain's index.
    pub jain_index: Estimate,
    /// Completion time (s), over the runs in which some flow completed.
    pub completion_s: Estimate,
    /// Overhead (%).
    pub overhead_pct: Estimate,
}

/// One flow at one grid point, over the seeds.
#[derive(Debug, Clone)]
pub struct FlowSummary {
    /// Index of the grid point.
    pub point: usize,
    /// Flow id.
    pub id: String,
    /// Runs in which the flow exists.
    pub runs: usize,
    /// Goodput (Mb/s).
    pub goodput_mbps: Estimate,
    /// Runs in which the flow completed.
    pub completed: usize,
    /// Completion time (s), over the runs in which it completed.
    pub completion_s: Estimate,
}

/// Flow ids over all runs, in order of first appearance.
pub fn flow_ids(runs: &[RunRow]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for f in runs.iter().flat_map(|r| &r.flows) {
        if !ids.contains(&f.id) {
            ids.push(f.id.clone());
        }
    }
    ids
}

/// Aggregates the runs of each of `n_points` grid points.
pub fn aggregate(runs: &[RunRow], n_points: usize) -> Vec<PointSummary> {
    (0..n_points)
        .map(|p| {
            let rs: Vec<&RunMetrics> = runs
                .iter()
                .filter(|r| r.point == p)
                .map(|r| &r.metrics)
                .collect();
            let est = |f: &dyn Fn(&RunMetrics) -> Option<f64>| {
                Estimate::from_sample(&rs.iter().filter_map(|m| f(m)).collect::<Vec<_>>())
            };
            PointSummary {
                runs: rs.len(),
                aggregate_goodput_mbps: est(&|m| Some(m.aggregate_goodput_mbps)),
                jain_index: est(&|m| Some(m.jain_index)),
                completion_s: est(&|m| m.completion_s),
                overhead_pct: est(&|m| m.overhead_pct),
            }
        })
        .collect()
}

/// Every flow of `ids` at each of `n_points` grid points (point-major, then in `ids` order),
/// over the runs in which it exists.
pub fn flow_summaries(runs: &[RunRow], n_points: usize, ids: &[String]) -> Vec<FlowSummary> {
    let mut out = Vec::new();
    for p in 0..n_points {
        for id in ids {
            let fs: Vec<&FlowRow> = runs
                .iter()
                .filter(|r| r.point == p)
                .filter_map(|r| r.flows.iter().find(|f| &f.id == id))
                .collect();
            let done: Vec<f64> = fs.iter().filter_map(|f| f.completion_s).collect();
            out.push(FlowSummary {
                point: p,
                id: id.clone(),
                runs: fs.len(),
                goodput_mbps: Estimate::from_sample(
                    &fs.iter().map(|f| f.goodput_bps / 1e6).collect::<Vec<_>>(),
                ),
                completed: done.len(),
                completion_s: Estimate::from_sample(&done),
            });
        }
    }
    out
}

fn pm(e: &Estimate, decimals: usize) -> String {
    match (e.mean, e.ci95) {
        (Some(m), Some(ci)) => format!("{} ± {}", fmt_num(m, decimals), fmt_num(ci, decimals)),
        (Some(m), None) => fmt_num(m, decimals),
        _ => "-".to_owned(),
    }
}

/// The terminal summary: one row per grid point, mean ± 95 % CI half-width.
pub(crate) fn terminal_table(
    params: &[Param],
    points: &[Point],
    summaries: &[PointSummary],
) -> String {
    let mut header: Vec<String> = params.iter().map(|p| p.key.clone()).collect();
    header.extend(
        [
            "runs",
            "aggregate goodput (Mb/s)",
            "Jain",
            "completion (s)",
            "overhead (%)",
        ]
        .map(str::to_owned),
    );
    let rows: Vec<Vec<String>> = points
        .iter()
        .zip(summaries)
        .map(|(point, s)| {
            let mut row: Vec<String> = point.iter().map(|(_, v)| v.clone()).collect();
            row.push(s.runs.to_string());
            row.push(pm(&s.aggregate_goodput_mbps, 3));
            row.push(pm(&s.jain_index, 4));
            row.push(pm(&s.completion_s, 3));
            row.push(pm(&s.overhead_pct, 2));
            row
        })
        .collect();
    format!("{}\n", table::simple(&header, &rows, params.len()))
}

/// Every warning of the runs (one list per run) once, in order of first appearance, with the
/// number of runs that gave it when not all did.
pub fn distinct_warnings(results: &[Vec<String>]) -> Vec<String> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for w in results.iter().flatten() {
        match seen.iter_mut().find(|(s, _)| *s == w.as_str()) {
            Some((_, n)) => *n += 1,
            None => seen.push((w, 1)),
        }
    }
    seen.into_iter()
        .map(|(w, n)| {
            if n == results.len() {
                w.to_owned()
            } else {
                format!("{w} ({n} of {} runs)", results.len())
            }
        })
        .collect()
}

/// Runs `roam sweep` (and `roam sweep merge`).
pub fn run(args: &SweepArgs) -> Result<()> {
    if let Some(SweepCommand::Merge(m)) = &args.command {
        return shard::merge(m);
    }
    // clap requires both without a subcommand.
    let (Some(file), Some(seeds)) = (&args.file, args.seeds) else {
        return Err(CliError::Usage(
            "roam sweep FILE --seeds N [--param KEY=V1,V2,...]...".to_owned(),
        ));
    };
    plan::check_grid(&args.params, &args.set)?;
    if let Some(l) = args.labels.iter().find(|l| {
        !args
            .params
            .iter()
            .any(|p| p.key == l.key || p.values.contains(&l.key))
    }) {
        return Err(CliError::Usage(format!(
            "--label {}={}: {} is neither a swept parameter (--param) nor one of their values",
            l.key, l.value, l.key
        )));
    }

    // Validate every run's scenario before starting any: errors come early and in grid order.
    let doc = engine::load_doc(file)?;
    let spec = SweepSpec::new(&doc, file, &args.set, &args.params, seeds)?;
    let mut jobs = spec.scenarios()?;
    let name = jobs
        .first()
        .map_or_else(|| crate::cmd::stem(file), |(_, s)| s.name.clone());
    if let Some((i, n)) = args.shard {
        jobs.retain(|(job, _)| shard::in_shard(job.index, i, n));
    }
    let png = match args.shard {
        Some(_) => None,
        None => output::png_writer(args.png)?,
    };

    let threads = match args.jobs {
        Some(j) => usize::try_from(j).unwrap_or(1),
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    // Seeds do not change what a run needs: check one run per grid point.
    let parallel = threads.min(jobs.len()) as u64;
    for (_, scenario) in jobs.iter().filter(|(job, _)| job.seed == 1) {
        check_memory(scenario, parallel, args.max_memory)?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::External {
            program: "thread pool".to_owned(),
            message: e.to_string(),
        })?;
    let bar = progress::bar(jobs.len() as u64, "sweeping", args.quiet);
    let (records, wall): (Result<Vec<RunRecord>>, _) = timed(|| {
        pool.install(|| {
            // par_iter().map().collect() keeps input order whatever the scheduling.
            jobs.par_iter()
                .map(|(job, scenario)| {
                    let r = RunRecord::run(job, scenario);
                    bar.inc(1);
                    r
                })
                .collect()
        })
    });
    bar.finish_and_clear();
    if let Some((i, n)) = args.shard {
        let out_dir = args
            .out
            .clone()
            .unwrap_or_else(|| default_out("sweep-", &name));
        output::ensure_dir(&out_dir)?;
        let path = out_dir.join(shard::file_name(i, n));
        let header = shard::ShardHeader {
            format: shard::FORMAT.to_owned(),
            shard: i,
            of: n,
            spec,
            title: args.title.clone(),
            xlabel: args.xlabel.clone(),
            labels: args
                .labels
                .iter()
                .map(|l| (l.key.clone(), l.value.clone()))
                .collect(),
        };
        let records = records?;
        shard::write(&path, &header, &records)?;
        note(&format!(
            "shard {i}/{n}: {} of the sweep's runs on {threads} threads in {:.2} s; records in {} \
             (join the shards with roam sweep merge)",
            records.len(),
            wall.as_secs_f64(),
            path.display()
        ));
        return Ok(());
    }
    let outcome = SweepOutcome::assemble(&spec, records?)?;
    for w in &outcome.warnings {
        note(&format!("warning: {w}"));
    }
    let out_dir: PathBuf = args
        .out
        .clone()
        .unwrap_or_else(|| default_out("sweep-", &outcome.name));
    let labels = sweep_plot::PlotLabels {
        title: args.title.clone(),
        xlabel: args.xlabel.clone(),
        names: args
            .labels
            .iter()
            .map(|l| (l.key.clone(), l.value.clone()))
            .collect(),
    };
    let summaries = write_outputs(&out_dir, &outcome, &labels, png.as_ref())?;
    print(&terminal_table(&args.params, &outcome.points, &summaries))?;
    note(&format!(
        "{} runs ({} grid points × {} seeds) on {threads} threads in {:.2} s; files in {}",
        outcome.runs.len(),
        outcome.points.len(),
        seeds,
        wall.as_secs_f64(),
        out_dir.display()
    ));
    Ok(())
}

/// Writes a sweep's files into `out_dir`: the four CSV tables and the plots (with PNG copies
/// when there is a writer). Returns the grid points' summaries.
pub fn write_outputs(
    out_dir: &std::path::Path,
    outcome: &SweepOutcome,
    labels: &sweep_plot::PlotLabels,
    png: Option<&roam_lab::raster::PngWriter>,
) -> Result<Vec<PointSummary>> {
    output::ensure_dir(out_dir)?;
    let summaries = outcome.write_tables(out_dir)?;
    let plots = sweep_plot::write(
        out_dir,
        &outcome.name,
        labels,
        &outcome.params,
        &outcome.points,
        &summaries,
    )?;
    output::write_pngs(png, &plots)?;
    Ok(summaries)
}

#[cfg(test)]
mod tests {
    use roam_sim::result::FlowResult;

    use super::*;

    pub(super) fn param(key: &str, values: &[&str]) -> Param {
        Param {
            key: key.to_owned(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    pub(super) fn flow(
        id: &str,
        goodput_bps: f64,
        completion: Option<f64>,
        cross: bool,
    ) -> FlowResult {
        FlowResult {
            id: id.to_owned(),
            protocol: "tcp".to_owned(),
            cc: "newreno".to_owned(),
            cross,
            start_s: 0.0,
            goodput_bps,
            bytes_delivered: 0,
            completion_s: completion,
            failure: None,
            failed_s: None,
            retransmitted_segments: 0,
            timeouts: 0,
            recoveries: 0,
            wireless_excused: 0,
            integrity_errors: 0,
            datagrams_sent: 0,
            transport_bytes_sent: 0,
            overhead_pct: 4.0,
            energy_j: None,
            sleep_s: None,
            media: None,
            multipath: None,
        }
    }

    /// A run whose aggregate is 1 Mb/s less than the sum of its non-cross flows' goodputs (as
    /// when they end at different times).
    pub(super) fn result(flows: Vec<FlowResult>) -> RunResult {
        let sum: f64 = flows
            .iter()
            .filter(|f| !f.cross)
            .map(|f| f.goodput_bps)
            .sum();
        RunResult {
            aggregate: roam_sim::result::Aggregate {
                flows: flows.iter().filter(|f| !f.cross).count(),
                bytes_delivered: 0,
                from_s: 0.0,
                to_s: 10.0,
                goodput_bps: sum - 1e6,
            },
            scenario: "s".to_owned(),
            seed: 1,
            sim_seconds: 10.0,
            events: 100,
            link_packets: 10,
            jain_index: 0.9,
            flows,
            links: vec![],
            warnings: vec![],
            series: vec![],
        }
    }

    #[test]
    fn grid_is_cartesian_product_first_param_slowest() {
        let g = expand_grid(&[param("a", &["1", "2"]), param("b", &["x", "y", "z"])]).unwrap();
        assert_eq!(g.len(), 6);
        let flat: Vec<String> = g
            .iter()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            flat,
            ["a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"]
        );
    }

    #[test]
    fn no_params_is_one_point() {
        assert_eq!(expand_grid(&[]).unwrap(), vec![Vec::new()]);
    }

    #[test]
    fn grid_rejects_duplicates_and_seed() {
        let e = expand_grid(&[param("a", &["1"]), param("a", &["2"])]).unwrap_err();
        assert!(e.to_string().contains("given twice"));
        let e = expand_grid(&[param("run.seed", &["1"])]).unwrap_err();
        assert!(e.to_string().contains("--seeds"));
    }

    #[test]
    fn metrics_take_the_aggregate_and_leave_cross_traffic_out() {
        let m = RunMetrics::from_result(&result(vec![
            flow("a", 2e6, Some(3.0), false),
            flow("b", 4e6, None, false),
            flow("x", 1e6, Some(1.0), true),
        ]));
        assert_eq!(
            m.aggregate_goodput_mbps, 5.0,
            "the run's aggregate, not the sum of per-flow goodputs (6)"
        );
        assert_eq!(m.completion_s, Some(3.0));
        assert_eq!(m.overhead_pct, Some(4.0));
    }

    #[test]
    fn aggregation_over_seeds_per_point_and_per_flow() {
        let params = [param("loss", &["0", "0.01"])];
        let points = expand_grid(&params).unwrap();
        // result() makes the aggregate 1 Mb/s less than the flow's goodput.
        let mk = |point, seed, g: f64| {
            RunRow::new(point, seed, &result(vec![flow("a", g + 1e6, None, false)])).unwrap()
        };
        let runs = vec![mk(0, 1, 9e6), mk(0, 2, 11e6), mk(1, 1, 2e6)];
        let ids = flow_ids(&runs);
        assert_eq!(ids, ["a"]);
        let s = aggregate(&runs, points.len());
        assert_eq!(s[0].runs, 2);
        assert_eq!(s[0].aggregate_goodput_mbps.mean, Some(10.0));
        // s = sqrt(2), n = 2, t(1) = 12.7062 → 12.7062 · 1 = 12.7062
        assert!((s[0].aggregate_goodput_mbps.ci95.unwrap() - 12.706_204_736).abs() < 1e-6);
        assert_eq!(s[1].aggregate_goodput_mbps.ci95, None);
        assert_eq!(s[0].completion_s.mean, None);
        let f = flow_summaries(&runs, points.len(), &ids);
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].runs, f[0].goodput_mbps.mean), (2, Some(11.0)));
        assert_eq!((f[1].point, f[1].completed), (1, 0));
    }
}
