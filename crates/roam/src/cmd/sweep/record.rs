//! One run's outcome as a line of JSON ([`RunRecord`]), and a whole sweep put together from
//! the records of its runs ([`SweepOutcome`]), whichever machine ran them: the CLI's thread
//! pool, shards of a SLURM job array, or Dask workers. Numbers travel exactly
//! ([`super::exact`]), so the tables are byte-identical whatever ran the jobs.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::plan::{Job, SweepSpec};
use super::{aggregate, distinct_warnings, flow_ids, flow_summaries, tables, Point, RunRow};
use crate::engine::{self, Scenario};
use crate::error::{CliError, Result};

/// CSV files by name, as bytes.
pub type Files = Vec<(&'static str, Vec<u8>)>;

/// What a sweep keeps of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The job's index in the sweep's run list.
    pub job: usize,
    /// The scenario's name.
    pub scenario: String,
    /// The run's warnings.
    pub warnings: Vec<String>,
    /// The run's metrics and flows.
    pub row: RunRow,
}

impl RunRecord {
    /// Runs `job`'s scenario.
    pub fn run(job: &Job, scenario: &Scenario) -> Result<Self> {
        let r = engine::run(scenario)?;
        let row = RunRow::new(job.point, job.seed, &r).map_err(|e| CliError::External {
            program: "flows table".to_owned(),
            message: e.to_string(),
        })?;
        Ok(RunRecord {
            job: job.index,
            scenario: r.scenario,
            warnings: r.warnings,
            row,
        })
    }

    /// One line of JSON (no newline).
    pub fn to_line(&self) -> String {
        // Strings, integers and numbers as strings only: serialisation cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a line written by [`RunRecord::to_line`]; `from` names its origin in errors.
    pub fn from_line(line: &str, from: &str) -> Result<Self> {
        serde_json::from_str(line)
            .map_err(|e| CliError::Usage(format!("{from}: not a run record: {e}")))
    }
}

/// A whole sweep's runs, in job order.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// The scenario's name (of the first run).
    pub name: String,
    /// The swept parameters.
    pub params: Vec<crate::cli::Param>,
    /// The grid's points.
    pub points: Vec<Point>,
    /// Every run, in job order.
    pub runs: Vec<RunRow>,
    /// The runs' warnings, each once.
    pub warnings: Vec<String>,
}

impl SweepOutcome {
    /// Puts the records of every job of `spec` in order; a missing, repeated or foreign job is
    /// an error.
    pub fn assemble(spec: &SweepSpec, records: Vec<RunRecord>) -> Result<Self> {
        let jobs = spec.jobs()?;
        let mut slots: Vec<Option<RunRecord>> = vec![None; jobs.len()];
        for r in records {
            let Some(job) = jobs.get(r.job) else {
                return Err(CliError::Usage(format!(
                    "run record of job {} in a sweep of {} runs",
                    r.job,
                    jobs.len()
                )));
            };
            if (r.row.point, r.row.seed) != (job.point, job.seed) {
                return Err(CliError::Usage(format!(
                    "run record of job {} is for grid point {} seed {}, not point {} seed {}",
                    r.job, r.row.point, r.row.seed, job.point, job.seed
                )));
            }
            if slots[r.job].replace(r).is_some() {
                return Err(CliError::Usage(format!("job {} recorded twice", job.index)));
            }
        }
        let missing: Vec<String> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_none())
            .map(|(i, _)| i.to_string())
            .collect();
        if !missing.is_empty() {
            let shown = missing
                .iter()
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            return Err(CliError::Usage(format!(
                "{} of {} runs missing (jobs {shown}{})",
                missing.len(),
                jobs.len(),
                if missing.len() > 20 { ", …" } else { "" }
            )));
        }
        let records: Vec<RunRecord> = slots.into_iter().flatten().collect();
        let warnings: Vec<Vec<String>> = records.iter().map(|r| r.warnings.clone()).collect();
        let name = records
            .first()
            .map_or_else(|| crate::cmd::stem(&spec.origin), |r| r.scenario.clone());
        Ok(SweepOutcome {
            name,
            params: spec.cli_params(),
            points: spec.points()?,
            runs: records.into_iter().map(|r| r.row).collect(),
            warnings: distinct_warnings(&warnings),
        })
    }

    /// The four CSV tables (`sweep.csv`, `sweep_flows.csv`, `runs.csv`, `flows.csv`) as bytes,
    /// and the grid points' summaries (for the plots).
    pub fn tables(&self) -> Result<(Files, Vec<super::PointSummary>)> {
        let ids = flow_ids(&self.runs);
        let summaries = aggregate(&self.runs, self.points.len());
        let flows = flow_summaries(&self.runs, self.points.len(), &ids);
        let files = tables::render_all(
            &self.name,
            &self.params,
            &self.points,
            &summaries,
            &flows,
            &self.runs,
        )
        .map_err(|e| CliError::External {
            program: "sweep tables".to_owned(),
            message: e.to_string(),
        })?;
        Ok((files, summaries))
    }

    /// Writes the four CSV tables into `dir`; returns the summaries (for the plots).
    pub fn write_tables(&self, dir: &Path) -> Result<Vec<super::PointSummary>> {
        let (files, summaries) = self.tables()?;
        for (file, bytes) in files {
            let path = dir.join(file);
            std::fs::write(&path, bytes).map_err(|e| CliError::write(path, e))?;
        }
        Ok(summaries)
    }
}
