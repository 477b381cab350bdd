//! Part 7: wireless-loss facts estimated by the TCP receiver (`[flow.tcp] facts =
//! "estimated"`, issue 30 item 2) beside the oracle's, on the lossy 2 Mb/s grid of part 2
//! (`lossy.toml`): TCP NewReno without ELN, with TCP-ELN fed by the link's corruption reports
//! (oracle) or by the receiver's own Spike judgement (estimated), and TCP-ATL with the
//! receiver's link reports carrying the link model's loss probability (oracle) or the
//! receiver's estimate (estimated); and the congestion-only path, where an excused hole would
//! hide congestion.

use super::grid::{self, Column};
use super::{run_all, template};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// A configuration: column label, controller, `[flow.tcp]` overrides.
type Config = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);
/// The configurations.
const CONFIGS: [Config; 5] = [
    ("NewReno", "newreno", &[]),
    (
        "NewReno ELN, oracle",
        "newreno",
        &[
            ("flow.0.tcp.eln", "true"),
            ("flow.0.tcp.facts", "\"oracle\""),
        ],
    ),
    (
        "NewReno ELN, estimated",
        "newreno",
        &[
            ("flow.0.tcp.eln", "true"),
            ("flow.0.tcp.facts", "\"estimated\""),
        ],
    ),
    (
        "ATL, oracle",
        "atl",
        &[
            ("flow.0.tcp.report_link_info", "true"),
            ("flow.0.tcp.facts", "\"oracle\""),
        ],
    ),
    (
        "ATL, estimated",
        "atl",
        &[
            ("flow.0.tcp.report_link_info", "true"),
            ("flow.0.tcp.facts", "\"estimated\""),
        ],
    ),
];

/// The grid column of configuration `CONFIGS[k]`.
fn column(k: usize) -> Column {
    let (label, cc, extra) = CONFIGS[k];
    Column {
        tag: label.to_owned(),
        cc,
        extra: extra.iter().map(|&(k, v)| (k, v.to_owned())).collect(),
    }
}

/// The configurations run on the congestion-only path: NewReno with ELN, both sources (the
/// estimated one last).
const CONGESTION_ONLY: [usize; 2] = [1, 2];

/// Runs the grid and the congestion-only path; adds the tables and the claim.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "lossy.toml")?;
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let duration = ctx.pick("10s", "30s");
    let columns: Vec<Column> = (0..CONFIGS.len()).map(column).collect();
    let mut sets = grid::sets("tcp facts", &columns, &seeds, duration);
    sets.extend(CONGESTION_ONLY.map(|k| grid::congestion_only("tcp facts", &columns[k], duration)));
    let runs = run_all(ctx, &t, sets)?;
    let (grid, congestion) = runs.split_at(runs.len() - CONGESTION_ONLY.len());
    let mut per_point = grid.chunks(seeds.len());
    let mut rows = Vec::new();
    for (_, d, _, p) in grid::cells() {
        let mut cells = grid::row_head(d, p);
        for _ in CONFIGS {
            let point = per_point.next().unwrap_or(&[]);
            let goodput: Vec<f64> = point
                .iter()
                .filter_map(|r| r.flows.first())
                .map(|f| f.goodput_bps / 1e6)
                .collect();
            cells.push(Cell::est(&Estimate::from_sample(&goodput), 2));
        }
        rows.push(cells);
    }
    report.section(
        "Estimated facts for TCP beside the oracle",
        &format!(
            "TCP on the lossy 2 Mb/s grid (`lossy.toml`), {duration}, {} seed(s) per cell, \
             mean ± 95 % CI (Mb/s): NewReno without ELN; NewReno with TCP-ELN fed by the \
             link's corruption reports (oracle) or by the receiver's own judgement of each hole \
             (Spike on the one-way time from the TSval, `[flow.tcp] facts = \"estimated\"`); \
             TCP-ATL with the receiver's link reports carrying the link model's loss \
             probability (oracle) or the receiver's estimate (packets lost in holes judged \
             wireless over packets sent).",
            seeds.len()
        ),
    );
    let mut header = vec!["one-way delay (ms)", "loss (%)"];
    header.extend(CONFIGS.iter().map(|(l, _, _)| *l));
    report.table(&header, &rows);
    grid::congestion_only_claim(
        report,
        (
            "TCP estimated facts on a congestion-only path",
            "configuration",
        ),
        &CONGESTION_ONLY.map(|k| CONFIGS[k].0),
        congestion,
        (
            "estimated-facts-tcp-excuse-no-congestion-drop",
            "With facts estimated by the TCP receiver, TCP-ELN excuses no hole as wireless on \
             a path whose only losses are queue drops",
        ),
    );
    Ok(())
}
