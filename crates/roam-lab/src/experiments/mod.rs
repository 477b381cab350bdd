//! The registered reproductions, one module each.

use crate::Experiment;

/// Every experiment, in the order `roam reproduce --list` shows them.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![]
}
