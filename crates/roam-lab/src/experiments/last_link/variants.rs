//! The configurations of the main connection, and the paper's Table 1.

/// One configuration of the main connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Variant {
    pub(super) label: &'static str,
    pub(super) max_cwnd: bool,
    pub(super) initial: bool,
    pub(super) per: bool,
    /// Initial tuning's window sent back to back instead of paced.
    pub(super) initial_burst: bool,
    /// TCP-ELN: the receiver marks holes its own link corrupted (exact differentiation).
    pub(super) eln: bool,
    /// The PER heuristic's PLR over the last this many transmissions (0 = the connection).
    pub(super) plr_window: u32,
}

/// Plain NewReno.
pub(super) const NEWRENO: Variant = Variant {
    label: "NewReno",
    max_cwnd: false,
    initial: false,
    per: false,
    initial_burst: false,
    eln: false,
    plr_window: 0,
};

/// Fig. 3 variants. The first four are the paper's (Initial tuning paces its window at the
/// reported bandwidth, our design); the last two send that window back to back, as ns-2 would,
/// and are reported beside them.
pub(super) const VARIANTS: [Variant; 6] = [
    NEWRENO,
    Variant {
        label: "Max-Cwnd",
        max_cwnd: true,
        ..NEWRENO
    },
    Variant {
        label: "Initial",
        initial: true,
        ..NEWRENO
    },
    Variant {
        label: "Max-Cwnd + Initial",
        max_cwnd: true,
        initial: true,
        ..NEWRENO
    },
    Variant {
        label: "Initial, burst",
        initial: true,
        initial_burst: true,
        ..NEWRENO
    },
    Variant {
        label: "Max-Cwnd + Initial, burst",
        max_cwnd: true,
        initial: true,
        initial_burst: true,
        ..NEWRENO
    },
];

/// Table 1's pair: NewReno and the PER heuristic.
pub(super) const TABLE1: [Variant; 2] = [
    NEWRENO,
    Variant {
        label: "PER heuristic",
        per: true,
        ..NEWRENO
    },
];

/// How many recent transmissions the "recent PLR" reference counts: at PER 0.8 % they hold
/// 24 wireless losses on average, enough to tell 0.8 % from twice that.
pub(super) const RECENT_PLR_WINDOW: u32 = 3000;

/// References, not in the paper, at the claims' PER: NewReno with TCP-ELN, which excuses
/// exactly the losses the access link corrupted (what a perfect loss differentiation would gain
/// in this setup), and the PER heuristic with "current PLR" read as the PLR of the last
/// [`RECENT_PLR_WINDOW`] transmissions instead of the whole connection's.
pub(super) const REFERENCES: [Variant; 2] = [
    Variant {
        label: "TCP-ELN",
        eln: true,
        ..NEWRENO
    },
    Variant {
        label: "PER heuristic, recent PLR",
        per: true,
        plr_window: RECENT_PLR_WINDOW,
        ..NEWRENO
    },
];

/// Extension, not in the paper: the main flow next to a plain NewReno download to the same
/// client through the same lossy access link (`neighbour0`), where its fairness can matter.
pub(super) const SHARED_ACCESS: [Variant; 4] = [TABLE1[0], TABLE1[1], REFERENCES[0], REFERENCES[1]];

/// Table 1 (PER heuristic): RTT, NewReno, HTCP, dummy flows next to NewReno, next to HTCP (kb/s).
pub(super) const PAPER_TABLE1: [(u64, f64, f64, f64, f64); 4] = [
    (100, 103.0, 334.9, 1370.2, 1362.7),
    (200, 46.7, 168.4, 968.2, 965.6),
    (300, 30.8, 108.2, 725.8, 703.0),
    (400, 26.5, 92.6, 609.6, 611.4),
];

/// The supplementary runs: PER and the main flow's window limit (ns-2's default `window_`).
pub(super) const SUPP_PER: f64 = 0.008;
pub(super) const SUPP_WINDOW: u32 = 20;
