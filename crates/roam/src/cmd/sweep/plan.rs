//! What a sweep runs, as data: the scenario document, the fixed overrides, the grid and the
//! seeds ([`SweepSpec`]), and its list of runs ([`Job`]s: grid point × seed, in grid order then
//! seed order). The CLI's sweep, its shards and the Python package (locally or as Dask tasks)
//! all run the jobs of one spec, so they give the same tables.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{expand_grid, Point};
use crate::cli::{Override, Param};
use crate::cmd::{seed_override, with_overrides};
use crate::engine::{self, Scenario};
use crate::error::{CliError, Result};

/// A sweep: everything needed to run any of its jobs anywhere (it travels to Dask workers and
/// into shard files as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    /// The scenario document as TOML text, before any override.
    pub scenario: String,
    /// Where the scenario came from: errors name it, its stem is the scenario's name when the
    /// document sets none, and relative paths in it (traces) resolve against its folder.
    pub origin: PathBuf,
    /// Fixed overrides (`--set`), in order.
    pub set: Vec<(String, String)>,
    /// Swept parameters (`--param`): key and values, in order; the first varies slowest.
    pub params: Vec<(String, Vec<String>)>,
    /// Seeds 1..=`seeds` at every grid point.
    pub seeds: u64,
}

/// Most seeds per grid point (as `--seeds` takes).
pub const MAX_SEEDS: u64 = 100_000;

/// Most runs in one sweep (grid points × seeds).
pub const MAX_RUNS: u64 = 100_000_000;

/// One run of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Position in the sweep's run list (grid order, then seed order).
    pub index: usize,
    /// Index of the grid point.
    pub point: usize,
    /// Seed.
    pub seed: u64,
}

/// Checks the grid and the fixed overrides together: no parameter twice, seeds only through
/// `--seeds`, no key both fixed and swept. Returns the grid's points.
pub fn check_grid(params: &[Param], set: &[Override]) -> Result<Vec<Point>> {
    let points = expand_grid(params)?;
    if set.iter().any(|o| o.key == "run.seed") {
        return Err(CliError::Usage(
            "--set run.seed: seeds are swept with --seeds N (seeds 1..=N)".to_owned(),
        ));
    }
    if let Some(o) = set.iter().find(|o| params.iter().any(|p| p.key == o.key)) {
        return Err(CliError::Usage(format!(
            "{} is both --set and --param; give it once",
            o.key
        )));
    }
    Ok(points)
}

impl SweepSpec {
    /// The spec of a sweep of document `doc` (loaded from `origin`).
    pub fn new(
        doc: &toml::Value,
        origin: &Path,
        set: &[Override],
        params: &[Param],
        seeds: u64,
    ) -> Result<Self> {
        check_grid(params, set)?;
        let scenario = toml::to_string(doc).map_err(|e| CliError::Toml {
            path: origin.to_owned(),
            message: e.to_string(),
        })?;
        let spec = SweepSpec {
            scenario,
            origin: origin.to_owned(),
            set: set
                .iter()
                .map(|o| (o.key.clone(), o.value.clone()))
                .collect(),
            params: params
                .iter()
                .map(|p| (p.key.clone(), p.values.clone()))
                .collect(),
            seeds,
        };
        spec.check_size()?;
        Ok(spec)
    }

    /// Reads a spec (JSON, as `serde_json` writes a spec) from `from`, a file or a Dask task:
    /// untrusted, so its size is checked before any list is made from it.
    pub fn from_json(text: &str, from: &str) -> Result<Self> {
        let spec: SweepSpec = serde_json::from_str(text)
            .map_err(|e| CliError::Usage(format!("{from}: not a sweep spec: {e}")))?;
        spec.check_size()?;
        Ok(spec)
    }

    /// Seeds in 1..=[`MAX_SEEDS`] (as `--seeds` takes them) and at most [`MAX_RUNS`] runs.
    pub fn check_size(&self) -> Result<()> {
        if !(1..=MAX_SEEDS).contains(&self.seeds) {
            return Err(CliError::Usage(format!(
                "seeds: {} is not in 1..={MAX_SEEDS}",
                self.seeds
            )));
        }
        let points = self
            .params
            .iter()
            .fold(1u64, |n, (_, values)| n.saturating_mul(values.len() as u64));
        if points.saturating_mul(self.seeds) > MAX_RUNS {
            return Err(CliError::Usage(format!(
                "{points} grid points × {} seeds: more than {MAX_RUNS} runs",
                self.seeds
            )));
        }
        Ok(())
    }

    /// The swept parameters as the CLI's type.
    pub fn cli_params(&self) -> Vec<Param> {
        self.params
            .iter()
            .map(|(key, values)| Param {
                key: key.clone(),
                values: values.clone(),
            })
            .collect()
    }

    /// The grid's points.
    pub fn points(&self) -> Result<Vec<Point>> {
        expand_grid(&self.cli_params())
    }

    /// The scenario document.
    pub fn doc(&self) -> Result<toml::Value> {
        let table: toml::Table = toml::from_str(&self.scenario).map_err(|e| CliError::Toml {
            path: self.origin.clone(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        Ok(toml::Value::Table(table))
    }

    /// Every run, in grid order then seed order.
    pub fn jobs(&self) -> Result<Vec<Job>> {
        let points = self.points()?;
        let mut jobs = Vec::new();
        for point in 0..points.len() {
            for seed in 1..=self.seeds {
                jobs.push(Job {
                    index: jobs.len(),
                    point,
                    seed,
                });
            }
        }
        Ok(jobs)
    }

    /// The validated scenario of `job`: `doc` with the fixed overrides, the job's grid point
    /// and its seed applied.
    pub fn scenario(&self, doc: &toml::Value, points: &[Point], job: &Job) -> Result<Scenario> {
        let mut overrides: Vec<Override> = self
            .set
            .iter()
            .map(|(key, value)| Override {
                key: key.clone(),
                value: value.clone(),
            })
            .collect();
        if let Some(point) = points.get(job.point) {
            overrides.extend(point.iter().map(|(k, v)| Override {
                key: k.clone(),
                value: v.clone(),
            }));
        }
        overrides.push(seed_override(job.seed));
        let mut d = doc.clone();
        engine::apply_overrides(&mut d, &self.origin, &overrides)?;
        engine::build(d, &self.origin).map_err(|e| with_overrides(e, &overrides))
    }

    /// Every job with its validated scenario (errors come before any run starts, in grid
    /// order).
    pub fn scenarios(&self) -> Result<Vec<(Job, Scenario)>> {
        let doc = self.doc()?;
        let points = self.points()?;
        self.jobs()?
            .into_iter()
            .map(|job| Ok((job, self.scenario(&doc, &points, &job)?)))
            .collect()
    }
}
