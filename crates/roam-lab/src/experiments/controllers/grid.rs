//! The lossy 2 Mb/s grid of part 2 (`lossy.toml`, `lossy-rcp.toml`), which parts 5, 6 and 7
//! run again with other columns: one-way delays × loss probabilities on the wireless hop, a
//! few seeds per cell; and the congestion-only path (no random loss, a 30-packet queue) on
//! which parts 6 and 7 check that estimated facts excuse no queue drop.

use roam_sim::result::RunResult;
use serde_json::json;

use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::Report;

/// One-way delays (ms) of the grid's wireless hop.
pub(super) const DELAYS_MS: [u64; 2] = [50, 200];
/// Loss probabilities of the grid's wireless hop (data and acknowledgements alike).
pub(super) const LOSSES: [f64; 3] = [0.001, 0.01, 0.05];

/// Template overrides of one run.
pub(super) type Params = Vec<(&'static str, String)>;
/// One run: its label and overrides.
pub(super) type Set = (String, Params);

/// One column of a grid table: how its runs are labelled, the controller they run and any
/// further overrides (appended after the path's).
pub(super) struct Column {
    /// Names the column in the runs' labels.
    pub tag: String,
    /// The controller (`flow.0.cc`).
    pub cc: &'static str,
    /// Further overrides.
    pub extra: Params,
}

impl Column {
    /// A column that differs only by its controller, tagged `cc=<cc>`.
    pub fn cc(cc: &'static str) -> Column {
        Column {
            tag: format!("cc={cc}"),
            cc,
            extra: Vec::new(),
        }
    }

    /// The overrides of one run of this column on the path `d` ms one way, loss `p`.
    fn params(&self, d: u64, p: f64, seed: u64, duration: &str) -> Params {
        let mut v = vec![
            ("link.wl.delay", format!("\"{d}ms\"")),
            ("link.wl.forward.loss", p.to_string()),
            ("link.wl.reverse.loss", p.to_string()),
            ("flow.0.cc", format!("\"{}\"", self.cc)),
            ("run.seed", seed.to_string()),
            ("run.duration", format!("\"{duration}\"")),
        ];
        v.extend(self.extra.iter().cloned());
        v
    }
}

/// One run per (delay, loss, column, seed), in that order, labelled
/// `<name> delay=<d>ms loss=<p> <tag> seed=<seed>`: results come back in chunks of
/// `seeds.len()`, one a column, cell by cell as [`cells`] walks them.
pub(super) fn sets(name: &str, columns: &[Column], seeds: &[u64], duration: &str) -> Vec<Set> {
    let mut sets = Vec::new();
    for d in DELAYS_MS {
        for p in LOSSES {
            for c in columns {
                for &seed in seeds {
                    sets.push((
                        format!("{name} delay={d}ms loss={p} {} seed={seed}", c.tag),
                        c.params(d, p, seed, duration),
                    ));
                }
            }
        }
    }
    sets
}

/// The grid's cells in the order [`sets`] runs them: (delay index, delay, loss index, loss).
pub(super) fn cells() -> impl Iterator<Item = (usize, u64, usize, f64)> {
    DELAYS_MS.into_iter().enumerate().flat_map(|(di, d)| {
        LOSSES
            .into_iter()
            .enumerate()
            .map(move |(pi, p)| (di, d, pi, p))
    })
}

/// The first two cells of a cell's table row: delay (ms) and loss (%).
pub(super) fn row_head(d: u64, p: f64) -> Vec<Cell> {
    vec![
        Cell::text(format!("{d}")),
        Cell::text(format!("{}", p * 100.0)),
    ]
}

/// A cell named in evidence: `<d> ms, <p> %`.
pub(super) fn cell_label(d: u64, p: f64) -> String {
    format!("{d} ms, {} %", p * 100.0)
}

/// One run of `column` on the congestion-only path (50 ms one way, no random loss, a
/// 30-packet queue, seed 1), labelled `<name> congestion-only <tag>`.
pub(super) fn congestion_only(name: &str, column: &Column, duration: &str) -> Set {
    let mut v = column.params(50, 0.0, 1, duration);
    v.push(("link.wl.queue", "\"30p\"".to_owned()));
    (format!("{name} congestion-only {}", column.tag), v)
}

/// Adds the congestion-only runs' section (`title`) and table, a row a run (named by
/// `labels`, under `first_header`), and the claim `id` (`statement`) that the last run — the
/// estimated facts' — excused no hole as wireless: every loss on that path is a queue drop,
/// so an excused hole would hide congestion from the controller.
pub(super) fn congestion_only_claim(
    report: &mut Report,
    (title, first_header): (&str, &str),
    labels: &[&str],
    runs: &[RunResult],
    (id, statement): (&str, &str),
) {
    let mut ev = Evidence::new();
    let mut rows = Vec::new();
    let mut excused_estimated = f64::NAN;
    for (k, (label, r)) in labels.iter().zip(runs).enumerate() {
        let f = r.flows.first();
        let excused = f.map_or(f64::NAN, |f| f.wireless_excused as f64);
        let recoveries = f.map_or(f64::NAN, |f| f.recoveries as f64);
        if k + 1 == labels.len() {
            excused_estimated = ev.num("holes excused, estimated", excused);
            ev.num("recoveries, estimated", recoveries);
        }
        rows.push(vec![
            Cell::text(*label),
            Cell::num(f.map_or(f64::NAN, |f| f.goodput_bps / 1e6), 2),
            Cell::num(recoveries, 0),
            Cell::num(excused, 0),
        ]);
    }
    report.section(
        title,
        "The same path without random loss and with a 30-packet queue, 50 ms one-way: every \
         loss is a queue drop, so every excused hole is a misjudgement that hides congestion.",
    );
    report.table(
        &[
            first_header,
            "goodput (Mb/s)",
            "recovery episodes",
            "holes excused",
        ],
        &rows,
    );
    report.claim(Claim::judged(
        id,
        statement,
        json!({"holes_excused": excused_estimated}),
        json!({"holes_excused": 0}),
        ev,
        excused_estimated == 0.0,
    ));
}
