//! The CLI's only door into the simulator: load a scenario file as TOML, apply overrides,
//! validate it into a scenario, run it. Errors are turned into [`CliError`]s that name the file.

use std::panic::AssertUnwindSafe;
use std::path::Path;

use roam_sim::result::RunResult;
use roam_sim::trace::PacketObserver;

use crate::cli::Override;
use crate::error::{CliError, Result};

/// A validated scenario, ready to run.
pub use roam_sim::Scenario;

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
        roam_sim::set_param(doc, &o.key, &o.value).map_err(|e| CliError::Override {
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
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Scenario::from_value_in(doc, &stem, path.parent()).map_err(|e| CliError::Scenario {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Runs a scenario to the end.
///
/// A panic inside the simulator (a bug, never the user's fault) is caught and reported as an
/// error naming the scenario and seed, so that a sweep ends cleanly instead of aborting.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    run_with_progress(scenario, &mut |_| {}, None)
}

/// Like [`run`], calling `progress` with the fraction of simulated time done (0..=1), and
/// handing every packet record to `observer` when there is one.
pub fn run_with_progress(
    scenario: &Scenario,
    progress: &mut dyn FnMut(f64),
    observer: Option<&mut dyn PacketObserver>,
) -> Result<RunResult> {
    std::panic::catch_unwind(AssertUnwindSafe(|| match observer {
        Some(o) => roam_sim::run_traced(scenario, progress, o),
        None => roam_sim::run_with_progress(scenario, progress),
    }))
    .map_err(|_| CliError::SimulatorBug {
        scenario: scenario.name.clone(),
        seed: scenario.run.seed,
    })
}
