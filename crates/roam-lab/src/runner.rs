//! Runs many scenarios on all cores, deterministically ordered, with one progress bar.

use std::panic::{catch_unwind, AssertUnwindSafe};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use roam_sim::result::RunResult;
use roam_sim::Scenario;

use crate::LabError;

/// One simulation to run.
#[derive(Debug, Clone)]
pub struct Job {
    /// Label for progress and errors (e.g. `per=16 delay=50ms proto=probing seed=3`).
    pub label: String,
    /// The scenario, fully specialised (seed included).
    pub scenario: Scenario,
}

/// Runs every job in parallel; results come back in job order, whatever the scheduling.
/// A panic inside the simulator is reported as [`LabError::Simulation`] for that run.
pub fn run_jobs(jobs: Vec<Job>, progress: bool) -> Result<Vec<RunResult>, LabError> {
    let bar = if progress {
        let b = ProgressBar::new(jobs.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} runs")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let out: Vec<Result<RunResult, LabError>> = jobs
        .par_iter()
        .map(|job| {
            let r = catch_unwind(AssertUnwindSafe(|| roam_sim::run(&job.scenario)));
            bar.inc(1);
            r.map_err(|p| LabError::Simulation {
                label: job.label.clone(),
                message: p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "panic".to_owned()),
            })
        })
        .collect();
    bar.finish_and_clear();
    out.into_iter().collect()
}
