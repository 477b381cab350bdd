//! Reproductions of the papers' experiments.
//!
//! Each experiment (one module under [`experiments`]) loads scenario templates from
//! `experiments/<name>/` in the repository, sweeps their parameters over seeds in parallel with
//! [`runner::run_jobs`], aggregates with [`stats`], and writes `results/<name>/report.md` (our
//! table beside the paper's, plots, every table also as CSV) and `results/<name>/claims.json`
//! (one entry per claim, its verdict computed from the measured numbers through
//! [`claims::Evidence`]: a claim fails when a number it needs is missing or not finite, and is
//! not judged on too few seeds) through [`report::Report`]. A quick mode (fewer seeds, shorter
//! runs; a smoke test, and the report says so) keeps the tests fast; the full mode follows the
//! paper's setup.

pub mod chart;
pub mod claims;
pub mod draws;
pub mod error;
pub mod experiments;
pub mod heatmap;
pub mod raster;
pub mod report;
pub mod runner;
pub mod stats;
pub mod template;

use std::path::PathBuf;

pub use claims::Claim;
pub use error::LabError;
pub use report::Report;

/// Where and how an experiment runs.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Fewer seeds and shorter runs (for tests and quick looks): a smoke test, not a
    /// reproduction.
    pub quick: bool,
    /// Repository root (holds `experiments/`).
    pub repo_root: PathBuf,
    /// Output folder for this experiment (`results/<name>` by default).
    pub out_dir: PathBuf,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

impl Ctx {
    /// The folder of this experiment's scenario templates.
    pub fn experiment_dir(&self, name: &str) -> PathBuf {
        self.repo_root.join("experiments").join(name)
    }

    /// Creates [`Ctx::out_dir`] (plots are written into it while the experiment runs).
    pub fn create_out_dir(&self) -> Result<(), LabError> {
        std::fs::create_dir_all(&self.out_dir).map_err(|source| LabError::Io {
            path: self.out_dir.clone(),
            source,
        })
    }

    /// `quick` or `full` value.
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        if self.quick {
            quick
        } else {
            full
        }
    }
}

/// One reproduction.
pub trait Experiment: Sync {
    /// Short name used on the command line and as the results folder (`probing`, `atl`, …).
    fn name(&self) -> &'static str;
    /// One line describing what is reproduced.
    fn title(&self) -> &'static str;
    /// Runs everything and returns the report (not yet written).
    fn run(&self, ctx: &Ctx) -> Result<Report, LabError>;
}

/// Every registered experiment.
pub fn registry() -> Vec<&'static dyn Experiment> {
    experiments::all()
}

/// Finds an experiment by name.
pub fn find(name: &str) -> Option<&'static dyn Experiment> {
    registry().into_iter().find(|e| e.name() == name)
}
