//! Figure 3 (last-link-heuristics.txt §4.2): throughput of NewReno, Max-Cwnd tuning, Initial
//! Cwnd & SSThresh tuning and both, against the RTT, at PER 0.

use serde_json::json;

use super::mean;
use super::runs::{Plan, Runs};
use super::variants::VARIANTS;
use crate::chart::{self, Axes, Series};
use crate::report::Cell;
use crate::{Claim, Ctx, LabError, Report};

/// Writes the Figure 3 table and plot, and judges its two claims.
pub(super) fn report(
    ctx: &Ctx,
    plan: &Plan,
    runs: &Runs,
    report: &mut Report,
) -> Result<(), LabError> {
    let (rtts, fig3) = (&plan.rtts, &runs.fig3);
    let mut rows = Vec::new();
    for (ri, rtt) in rtts.iter().enumerate() {
        let mut row = vec![Cell::num(*rtt as f64, 0)];
        for point in &fig3[ri] {
            row.push(Cell::num(mean(&point.main), 0));
        }
        rows.push(row);
    }
    report.section(
        "Figure 3: throughput of the main connection (kb/s), PER 0",
        "The paper gives Figure 3 only as a plot: Max-Cwnd much better than NewReno, \
         Initial a little better, the combination best (≈30 % above NewReno at RTT ≈200 ms).",
    );
    let mut header = vec!["RTT (ms)"];
    header.extend(VARIANTS.iter().map(|v| v.label));
    report.table(&header, &rows);
    let series: Vec<Series> = VARIANTS
        .iter()
        .enumerate()
        .map(|(v, variant)| {
            let points = rtts
                .iter()
                .enumerate()
                .map(|(ri, rtt)| (*rtt as f64, fig3[ri][v].main));
            let s = Series::of_estimates(variant.label, points);
            // A burst variant is dashed, in the colour of its paced counterpart.
            let paced = VARIANTS.iter().position(|p| {
                !p.initial_burst && (p.max_cwnd, p.initial) == (variant.max_cwnd, variant.initial)
            });
            match paced {
                Some(p) if variant.initial_burst => s.in_colour(p).dashed(),
                _ => s,
            }
        })
        .collect();
    chart::lines(
        &ctx.out_dir.join("fig3-throughput.svg"),
        &Axes {
            title: "Throughput of TCP and HTCP (Fig. 3)",
            x: "RTT (ms)",
            y: "throughput (kb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &series,
    )?;
    report.image("Figure 3", "fig3-throughput.svg");
    let mut ours = serde_json::Map::new();
    let (mut ge, mut best) = (true, true);
    for (ri, rtt) in rtts.iter().enumerate() {
        let m: Vec<f64> = (0..VARIANTS.len())
            .map(|v| mean(&fig3[ri][v].main))
            .collect();
        ge &= m[3] >= 0.95 * m[0] && m[1] >= 0.95 * m[0] && m[2] >= 0.95 * m[0];
        best &= m[3] >= 0.98 * m[1].max(m[2]);
        ours.insert(
            format!("rtt={rtt}"),
            json!({"newreno": m[0], "max_cwnd": m[1], "initial": m[2], "both": m[3],
                   "initial_burst": m[4], "both_burst": m[5]}),
        );
    }
    let fig3_paper = json!("Figure 3 (plot): combined ≈30 % above NewReno at RTT ≈200 ms; Max-Cwnd much better, Initial slightly better");
    report.claim(Claim::new(
        "max-cwnd-initial-ge-newreno",
        "Figure 3: Max-Cwnd, Initial and both give at least NewReno's throughput at every RTT (within 5 %)",
        ours.clone().into(),
        fig3_paper.clone(),
        ge,
    ));
    report.claim(Claim::new(
        "combined-best",
        "Figure 3: Max-Cwnd + Initial is the best variant at every RTT (within 2 %)",
        ours.into(),
        fig3_paper,
        best,
    ));
    Ok(())
}
