//! The registered reproductions, one module each.

pub mod atl;
pub mod controllers;
pub mod last_link;
pub mod probing;
pub mod ptcp;
pub mod r2cp;
pub mod rcp;

use crate::Experiment;

/// Every experiment, in the order `roam reproduce --list` shows them.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &probing::Probing,
        &last_link::LastLink,
        &atl::Atl,
        &rcp::Rcp,
        &r2cp::R2cp,
        &ptcp::Ptcp,
        &controllers::Controllers,
    ]
}
