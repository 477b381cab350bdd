//! Errors of the reproduction harness.

use std::path::PathBuf;

/// Why a reproduction could not run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A scenario template could not be read or parsed.
    #[error("{path}: {message}")]
    Template {
        /// The template file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A parameter override was rejected.
    #[error("{path}: cannot set {key} = {value}: {message}")]
    Param {
        /// The template file.
        path: PathBuf,
        /// Dotted key.
        key: String,
        /// Value.
        value: String,
        /// Why.
        message: String,
    },
    /// Writing results failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// File or folder.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Drawing a plot failed.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// Cause.
        message: String,
    },
    /// The simulator panicked on a scenario (a bug, reported instead of aborting the batch).
    #[error("simulation {label} failed: {message}")]
    Simulation {
        /// Which run.
        label: String,
        /// Panic message.
        message: String,
    },
}
