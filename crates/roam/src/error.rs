//! The CLI's error type: every failure the user can cause, with a message that says what to fix.

use std::path::PathBuf;

/// Everything that can make a `roam` command fail.
///
/// Each variant's message names the file, argument or key involved, so that `main` can print
/// it as-is and exit non-zero.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A reproduction failed.
    #[error("{0}")]
    Lab(#[from] roam_lab::LabError),
    /// No experiment has that name.
    #[error("unknown experiment {name:?} (known: {known})")]
    UnknownExperiment {
        /// What was asked for.
        name: String,
        /// The known names.
        known: String,
    },
    /// A scenario (or other input) file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A scenario file is not valid TOML.
    #[error("{}: invalid TOML: {message}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The scenario is valid TOML but not a valid scenario (unknown or malformed field).
    #[error("{}: {message}", path.display())]
    Scenario {
        /// The file.
        path: PathBuf,
        /// The simulator's message (names the field).
        message: String,
    },
    /// A `--set key=value` / `--param key=...` / `--seed` override was rejected by the scenario.
    #[error("{}: override `{key}={value}`: {message}", path.display())]
    Override {
        /// The scenario file the override was applied to.
        path: PathBuf,
        /// Dotted key.
        key: String,
        /// Value as given on the command line.
        value: String,
        /// The simulator's message.
        message: String,
    },
    /// The scenario is estimated to need more memory than is available.
    #[error("{0}")]
    Memory(#[from] roam_sim::memory::MemoryError),
    /// A command-line argument is malformed in a way clap cannot check by itself.
    #[error("{0}")]
    Usage(String),
    /// An output file or directory could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteFile {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A PNG copy of a plot could not be made (no font, or an unreadable SVG).
    #[error("{0}")]
    Png(#[from] roam_lab::raster::RasterError),
    /// A plot could not be drawn.
    #[error("cannot draw {}: {message}", path.display())]
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// The drawing backend's message.
        message: String,
    },
    /// An external program (the ns-3 reference binary) failed.
    #[error("{program}: {message}")]
    External {
        /// The program that was run.
        program: String,
        /// What went wrong.
        message: String,
    },
    /// The simulator panicked (a bug in roam, reported instead of aborting).
    #[error(
        "the simulator failed on scenario {scenario:?} with seed {seed} (a bug in roam; \
         please report it with the scenario file and seed)"
    )]
    SimulatorBug {
        /// Scenario name.
        scenario: String,
        /// Seed of the failed run.
        seed: u64,
    },
    /// Writing to the terminal (stdout) failed, e.g. a closed pipe.
    #[error("cannot write to stdout: {0}")]
    Stdout(std::io::Error),
    /// The network runtime failed (`serve`, `get`, `perf`).
    #[error("{0}")]
    Net(#[from] roam_net::NetError),
    /// The link emulator failed (`emu`, `testbed`).
    #[error("{0}")]
    Emu(String),
}

impl CliError {
    /// Wraps an I/O error on an output path.
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CliError::WriteFile {
            path: path.into(),
            source,
        }
    }
}

/// Result alias for the CLI.
pub type Result<T, E = CliError> = std::result::Result<T, E>;
