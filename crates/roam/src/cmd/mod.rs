//! The subcommands, and the small pieces they share.

pub mod bench;
pub mod emu;
pub mod get;
mod net;
pub mod perf;
pub mod reproduce;
pub mod serve;
pub mod sim;
pub mod sweep;
pub mod testbed;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::cli::Override;
use crate::engine::{self, Scenario};
use crate::error::{CliError, Result};
pub use net::{link_table, runtime};

/// How a command reports on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human-readable table (summary on stdout, timing on stderr).
    Table,
    /// Exactly one JSON object on stdout (deterministic for a scenario and seed).
    Json,
}

/// Loads `file`, applies `overrides` in order and validates the result.
pub fn prepare(file: &Path, overrides: &[Override]) -> Result<Scenario> {
    let mut doc = engine::load_doc(file)?;
    engine::apply_overrides(&mut doc, file, overrides)?;
    engine::build(doc, file).map_err(|e| with_overrides(e, overrides))
}

/// Refuses a scenario whose estimated memory, times `parallel` runs at once, exceeds
/// `max_memory` (or, without it, what the machine, its cgroup and `ulimit -v` allow).
pub fn check_memory(scenario: &Scenario, parallel: u64, max_memory: Option<u64>) -> Result<()> {
    let (limit, why) = match max_memory {
        Some(m) => (m, "--max-memory".to_string()),
        None => match roam_sim::memory::available_memory() {
            Some(found) => found,
            None => return Ok(()),
        },
    };
    let per_run = limit / parallel.max(1);
    let why = if parallel > 1 {
        format!("{why}, shared by {parallel} parallel runs")
    } else {
        why
    };
    roam_sim::memory::check(scenario, per_run, &why)?;
    Ok(())
}

/// Adds the overrides to a validation error's message: the field it names may come from them.
pub fn with_overrides(e: CliError, overrides: &[Override]) -> CliError {
    match e {
        CliError::Scenario { path, message } if !overrides.is_empty() => {
            let list: Vec<String> = overrides
                .iter()
                .map(|o| format!("{}={}", o.key, o.value))
                .collect();
            CliError::Scenario {
                path,
                message: format!("{message} (with overrides {})", list.join(" ")),
            }
        }
        other => other,
    }
}

/// The override that sets the run's seed.
pub fn seed_override(seed: u64) -> Override {
    Override {
        key: "run.seed".to_owned(),
        value: seed.to_string(),
    }
}

/// `out/<prefix><name>/` with `name` reduced to characters that are safe in a folder name.
pub fn default_out(prefix: &str, name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.is_empty() || safe.chars().all(|c| c == '.') {
        "scenario".to_owned()
    } else {
        safe
    };
    Path::new("out").join(format!("{prefix}{safe}"))
}

/// The file stem of a scenario path (its name when the file does not set one).
pub fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".to_owned())
}

/// Writes `text` to stdout, reporting a failure (such as a closed pipe) instead of panicking.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CliError::Stdout)
}

/// Writes a line to stderr; failures to write diagnostics are ignored.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_out_sanitises_names() {
        assert_eq!(
            default_out("", "dumbbell-single"),
            Path::new("out/dumbbell-single")
        );
        assert_eq!(default_out("sweep-", "a b/c"), Path::new("out/sweep-a_b_c"));
        assert_eq!(default_out("", ".."), Path::new("out/scenario"));
    }
}
