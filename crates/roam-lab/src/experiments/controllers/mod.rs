//! `roam reproduce controllers`: the controllers users compare against every day (CUBIC, BBR)
//! validated as NewReno was, and what oracle-free control reaches on lossy wireless paths.
//! Four parts, one module each: the loss-free ns-3 dumbbells (`validation.rs`), the lossy
//! 2 Mb/s grid against Linux (`lossy.rs`), sharing a bottleneck with CUBIC
//! (`friendliness.rs`), the loss-cause classifiers against the simulator's oracle
//! (`classify.rs`), the rate-based receiver controller RCP-Rate (`rate.rs`) and wireless-loss
//! facts estimated by the RCP receiver and by an R²CP pipe (`facts.rs`) and the TCP receiver
//! (`facts_tcp.rs`) beside the oracle's. Reference figures are those of `shared/anchors/README.md`, restated in
//! each module with their source; templates are in `experiments/controllers/`.

mod classify;
mod facts;
mod facts_tcp;
mod friendliness;
mod grid;
mod lossy;
mod rate;
mod validation;

use roam_sim::result::RunResult;

use crate::runner::run_jobs;
use crate::template::Template;
use crate::{Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct Controllers;

/// The controllers every part compares, by scenario name.
const CONTROLLERS: [&str; 3] = ["newreno", "cubic", "bbr"];

impl Experiment for Controllers {
    fn name(&self) -> &'static str {
        "controllers"
    }

    fn title(&self) -> &'static str {
        "Controllers: CUBIC and BBR validated against ns-3 and Linux; oracle-free control on lossy paths"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        ctx.create_out_dir()?;
        let mut report = Report::for_run(self.title(), ctx);
        report.section(
            "Setup",
            &format!(
                "Mode: {}. CUBIC is RFC 9438 with HyStart++ (RFC 9406); BBR is version 1 \
                 (Cardwell et al. 2016, draft-cardwell-iccrg-bbr-congestion-control-00), paced \
                 by the sender through its timer deadline; see `docs/CONTROLLERS.md`. Every \
                 controller here is oracle-free: none reads the link model's loss facts. \
                 Reference figures: `shared/anchors/README.md` (ns-3 3.37, and Linux over an \
                 emulated path).",
                if ctx.quick {
                    "quick (shorter runs, fewer seeds: a smoke test, not comparable with the \
                     references)"
                } else {
                    "full (the references' durations)"
                }
            ),
        );
        validation::run(ctx, &mut report)?;
        lossy::run(ctx, &mut report)?;
        friendliness::run(ctx, &mut report)?;
        classify::run(ctx, &mut report)?;
        rate::run(ctx, &mut report)?;
        facts::run(ctx, &mut report)?;
        facts_tcp::run(ctx, &mut report)?;
        report.section(
            "Not measured here",
            "Estimated facts exist for RCP receivers and R²CP pipes (per-hole ELN) and TCP \
             receivers (ELN and the link reports ATL and the last-link heuristics read); the \
             wireless delay and the channel state are not estimated. R²CP is measured over one \
             pipe here; `roam get` over several paths still takes the link's facts for R²CP. \
             The test bed's lossy cases beside Linux are not part of this reproduction.",
        );
        Ok(report)
    }
}

/// A template from `experiments/controllers/`.
fn template(ctx: &Ctx, file: &str) -> Result<Template, LabError> {
    Template::load(&ctx.experiment_dir("controllers").join(file))
}

/// Runs one job per (label, overrides), in order.
fn run_all(
    ctx: &Ctx,
    t: &Template,
    sets: Vec<(String, Vec<(&'static str, String)>)>,
) -> Result<Vec<RunResult>, LabError> {
    let mut jobs = Vec::with_capacity(sets.len());
    for (label, params) in sets {
        jobs.push(t.job(label, &params)?);
    }
    run_jobs(jobs, ctx.progress)
}

/// Total goodput of a run, Mb/s.
fn total_mbps(r: &RunResult) -> f64 {
    r.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e6
}

/// Goodput of the flow called `id`, Mb/s (NaN when missing).
fn flow_mbps(r: &RunResult, id: &str) -> f64 {
    r.flows
        .iter()
        .find(|f| f.id == id)
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6)
}

/// `|ours / reference − 1| ≤ tolerance`.
fn within(ours: f64, reference: f64, tolerance: f64) -> bool {
    (ours / reference - 1.0).abs() <= tolerance
}
