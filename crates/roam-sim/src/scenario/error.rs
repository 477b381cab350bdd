//! Errors from loading and editing scenario files.

use std::path::PathBuf;

/// Why a scenario could not be loaded or a parameter not set. The message names the entry and
/// field, e.g. `link "bottleneck": forward.loss: expected a probability in [0,1], got 1.5`.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The scenario (or a trace file it names) could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The text is not valid TOML.
    #[error("TOML syntax error: {0}")]
    Syntax(String),
    /// The TOML is well formed but describes an invalid scenario.
    #[error("{0}")]
    Invalid(String),
    /// A `key=value` override could not be applied.
    #[error("cannot set {key}: {msg}")]
    Param {
        /// The dotted key.
        key: String,
        /// Why.
        msg: String,
    },
}
