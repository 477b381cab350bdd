//! The CLI's only door into the simulator: load a scenario file as TOML, apply overrides,
//! validate it into a scenario, run it. Errors are turned into [`CliError`]s that name the file.

use std::path::Path;

use roam_sim::result::RunResult;

use crate::cli::Override;
use crate::error::{CliError, Result};

/// A validated scenario, ready to run.
pub use sim_api::Scenario;

/// Reads a scenario file as a TOML document (before validation, so overrides can be applied).
pub fn load_doc(path: &Path) -> Result<toml::Value> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| CliError::Toml {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    Ok(toml::Value::Table(table))
}

/// Applies `key=value` overrides in order (later ones win).
pub fn apply_overrides(doc: &mut toml::Value, path: &Path, overrides: &[Override]) -> Result<()> {
    for o in overrides {
        sim_api::set_param(doc, &o.key, &o.value).map_err(|e| CliError::Override {
            path: path.to_owned(),
            key: o.key.clone(),
            value: o.value.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Validates a (possibly overridden) document into a scenario. The file's stem is the name used
/// when the scenario does not set one; relative paths in it (traces) resolve against the file's
/// directory.
pub fn build(doc: toml::Value, path: &Path) -> Result<Scenario> {
    sim_api::from_value(doc, path).map_err(|e| CliError::Scenario {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Runs a scenario to the end.
pub fn run(scenario: &Scenario) -> RunResult {
    sim_api::run(scenario)
}

/// Runs a scenario, calling `progress` with the completed fraction (0..=1) now and then.
pub fn run_with_progress(scenario: &Scenario, progress: &mut dyn FnMut(f64)) -> RunResult {
    sim_api::run_with_progress(scenario, progress)
}

/// Placeholder until roam-sim's scenario API lands (`Scenario::from_value`, `set_param`, `run`).
/// Every entry point reports that the simulator is not available.
mod sim_api {
    use std::path::Path;

    use roam_sim::result::RunResult;

    /// Stand-in for `roam_sim::Scenario`.
    #[derive(Debug, Clone)]
    pub struct Scenario(());

    /// Stand-in for `roam_sim::ScenarioError`.
    #[derive(Debug)]
    pub struct Unavailable;

    impl std::fmt::Display for Unavailable {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the simulator's scenario loader is not available in this build")
        }
    }

    pub fn set_param(_doc: &mut toml::Value, _key: &str, _value: &str) -> Result<(), Unavailable> {
        Err(Unavailable)
    }

    pub fn from_value(_doc: toml::Value, _path: &Path) -> Result<Scenario, Unavailable> {
        Err(Unavailable)
    }

    pub fn run(_s: &Scenario) -> RunResult {
        unreachable_run()
    }

    pub fn run_with_progress(_s: &Scenario, _p: &mut dyn FnMut(f64)) -> RunResult {
        unreachable_run()
    }

    fn unreachable_run() -> RunResult {
        RunResult {
            scenario: String::new(),
            seed: 0,
            sim_seconds: 0.0,
            events: 0,
            link_packets: 0,
            jain_index: 1.0,
            flows: Vec::new(),
            links: Vec::new(),
            series: Vec::new(),
        }
    }
}
