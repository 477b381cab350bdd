//! Figure 3 (last-link-heuristics.txt §4.2): throughput of NewReno, Max-Cwnd tuning, Initial
//! Cwnd & SSThresh tuning and both, against the RTT, at PER 0.

use serde_json::json;

use super::mean;
use super::runs::{Plan, Runs};
use super::variants::VARIANTS;
use crate::chart::{self, Axes, Series};
use crate::claims::Evidence;
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
    let means: Vec<Vec<f64>> = fig3
        .iter()
        .map(|points| points.iter().map(|p| mean(&p.main)).collect())
        .collect();
    report.extend(claims(rtts, &means));
    Ok(())
}

/// The two Figure 3 claims on the mean throughput of each of [`VARIANTS`] (in their order)
/// at each RTT.
fn claims(rtts: &[u64], means: &[Vec<f64>]) -> [Claim; 2] {
    let mut ours = serde_json::Map::new();
    let (mut ev_ge, mut ev_best) = (Evidence::new(), Evidence::new());
    let (mut ge, mut best) = (true, true);
    ev_ge.some("RTTs", rtts.len().min(means.len()));
    ev_best.some("RTTs", rtts.len().min(means.len()));
    for (rtt, m) in rtts.iter().zip(means) {
        let at = |k: usize| m.get(k).copied().unwrap_or(f64::NAN);
        let name = |k: usize| format!("{} at RTT {rtt} ms", VARIANTS[k].label);
        let newreno = ev_ge.positive(&name(0), at(0));
        let [max_cwnd, initial, both] = [1, 2, 3].map(|k| ev_ge.num(&name(k), at(k)));
        ge &= both >= 0.95 * newreno && max_cwnd >= 0.95 * newreno && initial >= 0.95 * newreno;
        let [max_cwnd, initial, both] = [1, 2, 3].map(|k| ev_best.num(&name(k), at(k)));
        best &= both >= 0.98 * max_cwnd.max(initial);
        ours.insert(
            format!("rtt={rtt}"),
            json!({"newreno": at(0), "max_cwnd": at(1), "initial": at(2), "both": at(3),
                   "initial_burst": at(4), "both_burst": at(5)}),
        );
    }
    let paper = json!("Figure 3 (plot): combined ≈30 % above NewReno at RTT ≈200 ms; Max-Cwnd much better, Initial slightly better");
    [
        Claim::judged(
            "max-cwnd-initial-ge-newreno",
            "Figure 3: Max-Cwnd, Initial and both give at least NewReno's throughput at every RTT (within 5 %)",
            ours.clone().into(),
            paper.clone(),
            ev_ge,
            ge,
        ),
        Claim::judged(
            "combined-best",
            "Figure 3: Max-Cwnd + Initial is the best variant at every RTT (within 2 %)",
            ours.into(),
            paper,
            ev_best,
            best,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn each_claim_fails_when_a_throughput_it_reads_is_missing_zero_or_not_finite() {
        // One RTT: NewReno, Max-Cwnd, Initial, both (the burst variants are not read).
        let good = [100.0, 150.0, 110.0, 160.0];
        let make = |k: usize| {
            move |x: &[f64]| {
                let m = vec![x.iter().copied().chain([90.0, 95.0]).collect::<Vec<_>>()];
                claims(&[100], &m)[k].clone()
            }
        };
        fails_when_spoilt(&good, 0..4, &NOT_FINITE, make(0));
        fails_when_spoilt(&good, [0], &[0.0], make(0));
        fails_when_spoilt(&good, 1..4, &NOT_FINITE, make(1));
        for c in claims(&[], &[]) {
            assert_unmeasured(&c);
        }
    }
}
