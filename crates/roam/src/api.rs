//! The entry points of roam's Python package (`crates/roam-py`), and of any Rust program that
//! wants what the CLI computes without its terminal output: each runs through the same code as
//! `roam sim`, `roam sweep` and `roam reproduce`, and returns the same tables (CSV text,
//! byte-identical to the files the CLI writes) and the same error messages.
//!
//! A sweep is split so that any executor can run it: [`sweep_spec`] validates it and returns
//! its spec (JSON text), [`sweep_run_job`] runs one of its [`sweep_jobs`] runs and returns a
//! run record (one line of JSON, numbers exact), [`sweep_assemble`] turns the records into the
//! tables. [`sweep_local`] does all three on a thread pool.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::cli::{Override, Param};
use crate::cmd::sweep::plan::SweepSpec;
use crate::cmd::sweep::record::{RunRecord, SweepOutcome};
use crate::cmd::{seed_override, with_overrides};
use crate::engine;
use crate::error::{CliError, Result};
use crate::output::{csv, json};

/// Where a scenario comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A TOML file.
    File(PathBuf),
    /// TOML text; `origin` names it in errors, its stem is the scenario's name when the text
    /// sets none, and relative paths in it resolve against its folder.
    Toml {
        /// The text.
        text: String,
        /// Its stand-in path.
        origin: PathBuf,
    },
    /// An already parsed document (a Python dict), with a stand-in path as for
    /// [`Source::Toml`].
    Doc {
        /// The document.
        doc: toml::Value,
        /// Its stand-in path.
        origin: PathBuf,
    },
}

impl Source {
    /// The document and the path that names it.
    pub fn load(self) -> Result<(toml::Value, PathBuf)> {
        match self {
            Source::File(path) => Ok((engine::load_doc(&path)?, path)),
            Source::Toml { text, origin } => {
                let table: toml::Table = toml::from_str(&text).map_err(|e| CliError::Toml {
                    path: origin.clone(),
                    message: e.to_string().trim_end().to_owned(),
                })?;
                Ok((toml::Value::Table(table), origin))
            }
            Source::Doc { doc, origin } => {
                if doc.is_table() {
                    Ok((doc, origin))
                } else {
                    Err(CliError::Toml {
                        path: origin,
                        message: "a scenario is a table (a dict) at its top".to_owned(),
                    })
                }
            }
        }
    }
}

fn overrides(pairs: &[(String, String)]) -> Vec<Override> {
    pairs
        .iter()
        .map(|(key, value)| Override {
            key: key.clone(),
            value: value.clone(),
        })
        .collect()
}

fn csv_text(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result<String> {
    let mut bytes = Vec::new();
    f(&mut bytes).map_err(|e| CliError::External {
        program: "CSV writer".to_owned(),
        message: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| CliError::External {
        program: "CSV writer".to_owned(),
        message: e.to_string(),
    })
}

/// What `roam sim` writes, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct SimTables {
    /// `result.json` (also `roam sim --format json`'s output).
    pub result_json: String,
    /// `flows.csv`.
    pub flows_csv: String,
    /// `series.csv`.
    pub series_csv: String,
    /// `links.csv`.
    pub links_csv: String,
    /// The run's warnings.
    pub warnings: Vec<String>,
}

/// Runs one scenario as `roam sim FILE --set KEY=VALUE… [--seed N]` does (overrides in order,
/// then the seed) and returns its files' contents.
pub fn sim(source: Source, set: &[(String, String)], seed: Option<u64>) -> Result<SimTables> {
    let mut overrides = overrides(set);
    if let Some(seed) = seed {
        overrides.push(seed_override(seed));
    }
    let (mut doc, origin) = source.load()?;
    engine::apply_overrides(&mut doc, &origin, &overrides)?;
    let scenario = engine::build(doc, &origin).map_err(|e| with_overrides(e, &overrides))?;
    let r = engine::run(&scenario)?;
    Ok(SimTables {
        result_json: json::to_json(&r),
        flows_csv: csv_text(|w| csv::write_flows(w, &r.scenario, r.seed, &r.flows))?,
        series_csv: csv_text(|w| csv::write_series(w, &r.series))?,
        links_csv: csv_text(|w| csv::write_links(w, &r.links))?,
        warnings: r.warnings,
    })
}

/// Validates a sweep (every run's scenario is built, as `roam sweep` does before it starts)
/// and returns its spec as JSON text: `set` are the fixed overrides, `grid` the swept keys and
/// their values (the first varies slowest), seeds 1..=`seeds` at every point.
pub fn sweep_spec(
    source: Source,
    set: &[(String, String)],
    grid: &[(String, Vec<String>)],
    seeds: u64,
) -> Result<String> {
    let (doc, origin) = source.load()?;
    let params: Vec<Param> = grid
        .iter()
        .map(|(key, values)| Param {
            key: key.clone(),
            values: values.clone(),
        })
        .collect();
    let spec = SweepSpec::new(&doc, &origin, &overrides(set), &params, seeds)?;
    spec.scenarios()?;
    Ok(spec_json(&spec))
}

fn spec_json(spec: &SweepSpec) -> String {
    // Strings and integers only: serialisation cannot fail.
    serde_json::to_string(spec).unwrap_or_default()
}

fn parse_spec(text: &str) -> Result<SweepSpec> {
    SweepSpec::from_json(text, "spec")
}

/// The number of runs of a sweep (grid points × seeds).
pub fn sweep_jobs(spec: &str) -> Result<usize> {
    Ok(parse_spec(spec)?.jobs()?.len())
}

/// Runs job `index` of a sweep and returns its run record (one line of JSON).
pub fn sweep_run_job(spec: &str, index: usize) -> Result<String> {
    let spec = parse_spec(spec)?;
    let jobs = spec.jobs()?;
    let job = jobs
        .get(index)
        .ok_or_else(|| CliError::Usage(format!("job {index} of a sweep of {} runs", jobs.len())))?;
    let scenario = spec.scenario(&spec.doc()?, &spec.points()?, job)?;
    Ok(RunRecord::run(job, &scenario)?.to_line())
}

/// A sweep's tables, as `roam sweep` writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTables {
    /// `(file name, CSV text)`: `sweep.csv`, `sweep_flows.csv`, `runs.csv`, `flows.csv`.
    pub files: Vec<(String, String)>,
    /// The runs' warnings, each once.
    pub warnings: Vec<String>,
}

fn tables(outcome: &SweepOutcome) -> Result<SweepTables> {
    let (files, _) = outcome.tables()?;
    Ok(SweepTables {
        files: files
            .into_iter()
            .map(|(name, bytes)| {
                (
                    name.to_owned(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                )
            })
            .collect(),
        warnings: outcome.warnings.clone(),
    })
}

/// The tables of a sweep from the run records of all its jobs (in any order).
pub fn sweep_assemble(spec: &str, records: &[String]) -> Result<SweepTables> {
    let spec = parse_spec(spec)?;
    let records = records
        .iter()
        .enumerate()
        .map(|(i, line)| RunRecord::from_line(line, &format!("record {i}")))
        .collect::<Result<Vec<_>>>()?;
    tables(&SweepOutcome::assemble(&spec, records)?)
}

/// Runs every job of a sweep on `threads` threads (default: all cores) and returns its tables.
pub fn sweep_local(spec: &str, threads: Option<usize>) -> Result<SweepTables> {
    let spec = parse_spec(spec)?;
    let jobs = spec.scenarios()?;
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| CliError::External {
            program: "thread pool".to_owned(),
            message: e.to_string(),
        })?;
    let records: Vec<RunRecord> = pool.install(|| {
        jobs.par_iter()
            .map(|(job, scenario)| RunRecord::run(job, scenario))
            .collect::<Result<_>>()
    })?;
    tables(&SweepOutcome::assemble(&spec, records)?)
}

/// A reproduction's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Reproduction {
    /// Where its files are (`report.md`, `claims.json`, `tables/`, plots).
    pub out_dir: PathBuf,
    /// `claims.json`.
    pub claims_json: String,
    /// The one-line verdict `roam reproduce` prints.
    pub verdict: String,
}

/// The experiments `roam reproduce` knows: name and title.
pub fn experiments() -> Vec<(String, String)> {
    roam_lab::registry()
        .iter()
        .map(|e| (e.name().to_owned(), e.title().to_owned()))
        .collect()
}

/// Runs `roam reproduce NAME [--quick] [--root DIR] [--out DIR]` (without progress bar or
/// PNGs) and returns where its files are and its claims.
pub fn reproduce(
    name: &str,
    quick: bool,
    root: Option<&Path>,
    out: Option<PathBuf>,
) -> Result<Reproduction> {
    let exp = roam_lab::find(name).ok_or_else(|| CliError::UnknownExperiment {
        name: name.to_owned(),
        known: experiments()
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    let root = crate::root::find(root)?;
    let out_dir = out.unwrap_or_else(|| root.join("results").join(exp.name()));
    let ctx = roam_lab::Ctx {
        quick,
        repo_root: root,
        out_dir: out_dir.clone(),
        progress: false,
    };
    let report = exp.run(&ctx)?;
    report.write(&out_dir)?;
    let path = out_dir.join("claims.json");
    let claims_json =
        std::fs::read_to_string(&path).map_err(|source| CliError::ReadFile { path, source })?;
    Ok(Reproduction {
        out_dir,
        claims_json,
        verdict: report.verdict_line(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = r#"
name = "tiny"
[run]
duration = "2s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
id = "f"
protocol = "tcp"
from = "a"
to = "b"
size = "200KiB"
"#;

    fn text() -> Source {
        Source::Toml {
            text: TINY.to_owned(),
            origin: PathBuf::from("<string>"),
        }
    }

    #[test]
    fn sim_gives_the_cli_tables() {
        let t = sim(
            text(),
            &[("link.l.forward.loss".into(), "0.01".into())],
            Some(3),
        )
        .unwrap();
        assert!(
            t.flows_csv.starts_with("scenario,seed,id,"),
            "{}",
            t.flows_csv
        );
        assert!(t.flows_csv.contains("\ntiny,3,f,tcp,"), "{}", t.flows_csv);
        assert!(t.series_csv.starts_with("flow,time_s,"));
        assert!(t.links_csv.starts_with("id,packets_sent,"));
        assert!(t.result_json.contains("\"seed\": 3"));
    }

    #[test]
    fn errors_carry_the_cli_messages() {
        let e = sim(text(), &[("link.l.rate".into(), "fast".into())], None).unwrap_err();
        assert!(e.to_string().starts_with("<string>: "), "{e}");
        let bad = Source::Toml {
            text: "name = ".to_owned(),
            origin: PathBuf::from("<string>"),
        };
        assert!(sim(bad, &[], None)
            .unwrap_err()
            .to_string()
            .contains("invalid TOML"));
        let e = sweep_spec(text(), &[("run.seed".into(), "2".into())], &[], 1).unwrap_err();
        assert!(e.to_string().contains("--seeds"), "{e}");
    }

    #[test]
    fn jobs_run_anywhere_give_the_local_tables() {
        let grid = [(
            "link.l.forward.loss".to_owned(),
            vec!["0".to_owned(), "0.02".to_owned()],
        )];
        let spec = sweep_spec(text(), &[], &grid, 2).unwrap();
        assert_eq!(sweep_jobs(&spec).unwrap(), 4);
        let local = sweep_local(&spec, Some(2)).unwrap();
        // Records in reverse order, as a distributed executor may return them.
        let records: Vec<String> = (0..4)
            .rev()
            .map(|i| sweep_run_job(&spec, i).unwrap())
            .collect();
        assert_eq!(sweep_assemble(&spec, &records).unwrap(), local);
        let names: Vec<&str> = local.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["sweep.csv", "sweep_flows.csv", "runs.csv", "flows.csv"]
        );
        let e = sweep_assemble(&spec, &records[..3]).unwrap_err();
        assert!(e.to_string().contains("1 of 4 runs missing"), "{e}");
        let twice = [records.clone(), records[..1].to_vec()].concat();
        assert!(sweep_assemble(&spec, &twice).is_err());
    }
}
