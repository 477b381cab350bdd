//! Part 6: wireless-loss facts estimated by the receiver (`[flow.rcp] facts = "estimated"`,
//! issue 30 item 2) beside the oracle's. RCP with NewReno and per-hole ELN on the lossy 2 Mb/s
//! grid of part 2 (`lossy-rcp.toml`): no ELN, ELN fed by the link's corruption reports
//! (oracle), ELN fed by the receiver's own Spike judgement (estimated); and a congestion-only
//! path (no random loss, 30-packet queue), where an estimator that excused a drop would hide
//! congestion from the controller. The same runs again with an R²CP download over one pipe on
//! the same path (`lossy-r2cp.toml`): an R²CP pipe judges the holes of its own local sequence
//! space (`[[flow.r2cp.pipe]] facts`, by default `[flow.rcp] facts`).

use super::grid::{self, Column};
use super::{run_all, template};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// The configurations: label and `[flow.rcp] facts` (none: no ELN).
const FACTS: [(&str, Option<&str>); 3] = [
    ("no ELN", None),
    ("oracle", Some("oracle")),
    ("estimated", Some("estimated")),
];

/// RCP NewReno with the facts of `FACTS` entry `(label, facts)`.
fn column((label, facts): (&str, Option<&str>)) -> Column {
    let extra = facts.map_or_else(Vec::new, |f| {
        vec![
            ("flow.0.rcp.eln", "true".to_owned()),
            ("flow.0.rcp.facts", format!("\"{f}\"")),
        ]
    });
    Column {
        tag: label.to_owned(),
        cc: "newreno",
        extra,
    }
}

/// One protocol's runs: its template, the label of its runs, its section titles and claim.
struct Protocol {
    template: &'static str,
    label: &'static str,
    section: &'static str,
    text: &'static str,
    congestion_title: &'static str,
    claim: (&'static str, &'static str),
}

/// RCP, then R²CP over one pipe.
const PROTOCOLS: [Protocol; 2] = [
    Protocol {
        template: "lossy-rcp.toml",
        label: "facts",
        section: "Estimated wireless-loss facts beside the oracle",
        text: "RCP NewReno on the lossy 2 Mb/s grid (`lossy-rcp.toml`)",
        congestion_title: "Estimated facts on a congestion-only path",
        claim: (
            "estimated-facts-excuse-no-congestion-drop",
            "With facts estimated by the receiver, RCP excuses no hole as wireless on a path \
             whose only losses are queue drops",
        ),
    },
    Protocol {
        template: "lossy-r2cp.toml",
        label: "facts-r2cp",
        section: "Estimated facts for an R²CP pipe beside the oracle",
        text: "R²CP NewReno over one pipe on the same grid (`lossy-r2cp.toml`; the pipe judges \
               the holes of its own local sequence space)",
        congestion_title: "Estimated facts for an R²CP pipe on a congestion-only path",
        claim: (
            "estimated-facts-r2cp-excuse-no-congestion-drop",
            "With facts estimated by the pipe, an R²CP pipe excuses no hole as wireless on a \
             path whose only losses are queue drops",
        ),
    },
];

/// Runs the grid and the congestion-only path for RCP and for R²CP; adds the tables and the
/// claims.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    for p in &PROTOCOLS {
        run_protocol(ctx, report, p)?;
    }
    Ok(())
}

fn run_protocol(ctx: &Ctx, report: &mut Report, proto: &Protocol) -> Result<(), LabError> {
    let t = template(ctx, proto.template)?;
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let duration = ctx.pick("10s", "30s");
    let columns = FACTS.map(column);
    let mut sets = grid::sets(proto.label, &columns, &seeds, duration);
    sets.extend(
        columns
            .iter()
            .map(|c| grid::congestion_only(proto.label, c, duration)),
    );
    let runs = run_all(ctx, &t, sets)?;
    let (grid, congestion) = runs.split_at(runs.len() - FACTS.len());
    let mut per_point = grid.chunks(seeds.len());
    let mut rows = Vec::new();
    for (_, d, _, p) in grid::cells() {
        let mut cells = grid::row_head(d, p);
        let mut excused = Vec::new();
        for _ in FACTS {
            let point = per_point.next().unwrap_or(&[]);
            let f: Vec<_> = point.iter().filter_map(|r| r.flows.first()).collect();
            let goodput: Vec<f64> = f.iter().map(|f| f.goodput_bps / 1e6).collect();
            cells.push(Cell::est(&Estimate::from_sample(&goodput), 2));
            excused.push(
                f.iter()
                    .map(|f| f.wireless_excused as f64)
                    .collect::<Vec<_>>(),
            );
        }
        cells.push(Cell::est_of(&excused[1], 0));
        cells.push(Cell::est_of(&excused[2], 0));
        rows.push(cells);
    }
    report.section(
        proto.section,
        &format!(
            "{}, {duration}, {} seed(s) per cell, mean ± 95 % CI (Mb/s): without ELN; with per-hole ELN fed by the link's \
             corruption reports (oracle); with ELN fed by the receiver's own judgement of each \
             hole (Spike on the one-way time, `[flow.rcp] facts = \"estimated\"`). The last \
             columns count the holes excused as wireless per run.",
            proto.text,
            seeds.len()
        ),
    );
    report.table(
        &[
            "one-way delay (ms)",
            "loss (%)",
            "no ELN",
            "ELN, oracle",
            "ELN, estimated",
            "holes excused, oracle",
            "holes excused, estimated",
        ],
        &rows,
    );
    grid::congestion_only_claim(
        report,
        (proto.congestion_title, "facts"),
        &FACTS.map(|(label, _)| label),
        congestion,
        proto.claim,
    );
    Ok(())
}
