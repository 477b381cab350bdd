//! The `roam` command-line tool as a library: the binary (`src/main.rs`) parses the arguments
//! and calls [`cmd`]; the Python package (`crates/roam-py`) calls [`api`], which runs scenarios
//! and sweeps through the same code and returns the same tables the CLI writes.
//!
//! Only [`api`] is meant for other crates; the other modules are public so that the binary can
//! reach them, and are hidden from the documentation.

#![deny(unsafe_code)]
// The argument structs' doc comments are clap's `--help` text, where `<NAME>` is the usual
// placeholder notation, not HTML.
#![allow(rustdoc::invalid_html_tags)]

pub mod api;
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod cmd;
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod ns3;
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod peak_memory;
#[doc(hidden)]
pub mod progress;
#[doc(hidden)]
pub mod root;
#[doc(hidden)]
pub mod timing;

pub use error::CliError;
