//! Claims: one checkable statement of a paper, our number, the paper's, and whether it holds.

use serde::Serialize;

/// One entry of `claims.json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Claim {
    /// Stable identifier (`a1-probing-not-slower`, …).
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// What we measured (numbers, or an object of numbers).
    pub ours: serde_json::Value,
    /// What the paper reports.
    pub paper: serde_json::Value,
    /// Computed from `ours` by the experiment's rule, never set by hand.
    pub holds: bool,
}

impl Claim {
    /// A claim whose verdict is `holds`.
    pub fn new(
        id: &str,
        claim: &str,
        ours: serde_json::Value,
        paper: serde_json::Value,
        holds: bool,
    ) -> Self {
        Claim {
            id: id.to_owned(),
            claim: claim.to_owned(),
            ours,
            paper,
            holds,
        }
    }
}
