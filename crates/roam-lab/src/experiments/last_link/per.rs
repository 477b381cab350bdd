//! Table 1 and Figure 5 (last-link-heuristics.txt §4.3): NewReno against the PER heuristic
//! over PER 0.08–0.8 %, with a supplementary window-limited run set and the TCP-ELN reference.

use serde_json::json;

use super::mean;
use super::runs::{Plan, Point, Runs};
use super::variants::{PAPER_TABLE1, RECENT_PLR_WINDOW, SUPP_PER};
use crate::chart::{self, Axes, Series};
use crate::claims::Evidence;
use crate::report::{Cell, Col};
use crate::{Claim, Ctx, LabError, Report};

/// Column headers of [`heuristic_cells`], after `first`.
fn heuristic_columns(first: &[&str]) -> Vec<Col> {
    let mut cols: Vec<Col> = first.iter().map(|c| Col::from(*c)).collect();
    cols.extend([
        Col::from("NewReno"),
        Col::from("PER heuristic"),
        Col::from("ratio"),
        Col::pair("PLR %", "N", "H"),
        Col::from("losses excused % H"),
    ]);
    cols
}

/// Table cells for a NewReno / PER-heuristic pair of points: both throughputs, their ratio,
/// both PLRs in percent, and the share of the heuristic's detected losses it excused.
fn heuristic_cells(pair: &[Point]) -> [Cell; 5] {
    let (n, h) = (&pair[0], &pair[1]);
    [
        Cell::num(mean(&n.main), 1),
        Cell::num(mean(&h.main), 1),
        Cell::num(mean(&h.main) / mean(&n.main), 2),
        Cell::pair(100.0 * mean(&n.plr), 100.0 * mean(&h.plr), 2),
        Cell::num(100.0 * mean(&h.excused), 1),
    ]
}

/// Writes Table 1, the per-PER table behind Figure 5 (and its plot), the supplementary and
/// reference tables, and judges the two Table 1 claims.
pub(super) fn report(
    ctx: &Ctx,
    plan: &Plan,
    runs: &Runs,
    report: &mut Report,
) -> Result<(), LabError> {
    let (rtts, pers) = (&plan.rtts, &plan.pers);
    let (by_per, supp, refs) = (&runs.by_per, &runs.supp, &runs.references);
    if by_per.is_empty() {
        return Err(LabError::Simulation {
            label: "last-link".into(),
            message: "no PER runs".into(),
        });
    }
    // Table 1's rows have no PER: they average the Fig. 5 runs over the PER values
    // ("In above experiments, we also calculate average throughput", §4.3). Per RTT and
    // variant k (0 NewReno, 1 PER heuristic): main flow and bulk cross flow, averaged over
    // the PER values we run.
    let avg_over_per = |ri: usize, k: usize, dummy: bool| -> f64 {
        let v: Vec<f64> = by_per
            .iter()
            .map(|runs| {
                let p = &runs[ri][k];
                mean(if dummy { &p.dummy } else { &p.main })
            })
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let per_list = pers
        .iter()
        .map(|p| format!("{}", 100.0 * p))
        .collect::<Vec<_>>()
        .join(", ");
    // Table 1: averages over PER.
    let mut rows = Vec::new();
    for (ri, rtt) in rtts.iter().enumerate() {
        let paper = PAPER_TABLE1.iter().find(|p| p.0 == *rtt);
        let (n, h) = (avg_over_per(ri, 0, false), avg_over_per(ri, 1, false));
        rows.push(vec![
            Cell::num(*rtt as f64, 0),
            Cell::num(n, 1),
            Cell::num(h, 1),
            Cell::num(h / n, 2),
            Cell::num(avg_over_per(ri, 0, true), 1),
            Cell::num(avg_over_per(ri, 1, true), 1),
            paper.map_or(Cell::text("–"), |p| Cell::parts(&[p.1, p.2, p.3, p.4])),
        ]);
    }
    report.section(
        "Table 1: PER heuristic, averaged over PER (kb/s)",
        &format!(
            "Each row averages the runs at PER {per_list} % (the paper's Table 1 averages its \
             Fig. 5 runs over PER 0.08–0.8 %; the PER values it used are not given). Paper \
             column: TCP / HTCP / dummy next to TCP / dummy next to HTCP, no unit printed."
        ),
    );
    report.table(
        &[
            Col::from("RTT (ms)"),
            Col::from("NewReno"),
            Col::from("PER heuristic"),
            Col::from("ratio"),
            Col::from("bulk cross flow next to NewReno"),
            Col::from("next to PER heuristic"),
            Col::parts(
                "paper",
                &["TCP", "HTCP", "dummy next to TCP", "dummy next to HTCP"],
            ),
        ],
        &rows,
    );
    // Per PER (the data behind Fig. 5).
    let mut rows = Vec::new();
    for (pi, p) in pers.iter().enumerate() {
        for (ri, rtt) in rtts.iter().enumerate() {
            let mut row = vec![
                Cell::text(format!("{}", 100.0 * p)),
                Cell::num(*rtt as f64, 0),
            ];
            row.extend(heuristic_cells(&by_per[pi][ri]));
            rows.push(row);
        }
    }
    report.section(
        "Per PER (kb/s)",
        "PLR = retransmitted / (delivered + retransmitted) segments of the main flow over \
         the whole run, NewReno / PER heuristic. Losses excused: the share of the \
         heuristic's detected losses (recovery episodes and timeouts) it answered without a \
         window cut.",
    );
    report.table(&heuristic_columns(&["PER (%)", "RTT (ms)"]), &rows);
    if pers.len() > 1 {
        let mut series = Vec::new();
        for (ri, rtt) in rtts.iter().enumerate() {
            // One colour per RTT; the heuristic dashed beside NewReno.
            for (k, name) in ["NewReno", "PER heuristic"].iter().enumerate() {
                let points = pers
                    .iter()
                    .zip(by_per)
                    .map(|(p, runs)| (100.0 * p, runs[ri][k].main));
                let s = Series::of_estimates(format!("{name}, RTT {rtt} ms"), points);
                series.push(if k == 1 {
                    s.in_colour(ri).dashed()
                } else {
                    s.in_colour(ri)
                });
            }
        }
        chart::lines(
            &ctx.out_dir.join("fig5-per.svg"),
            &Axes {
                title: "Throughput under different PER and RTT (Fig. 5)",
                x: "PER (%)",
                y: "throughput (kb/s)",
                log_x: true,
                y_from_zero: true,
            },
            &series,
        )?;
        report.image("Figure 5", "fig5-per.svg");
    }
    // Supplementary.
    let mut rows = Vec::new();
    for (ri, rtt) in rtts.iter().enumerate() {
        let mut row = vec![Cell::num(*rtt as f64, 0)];
        row.extend(heuristic_cells(&supp[ri]));
        rows.push(row);
    }
    report.section(
        "Supplementary (not a claim): main flow window limited to 20 segments, PER 0.8 % (kb/s)",
        "A hypothesis test outside the paper's setup as we read it: with ns-2's default \
         window of 20 segments the main flow cannot overshoot the 7 Mb/s link in slow \
         start, so every loss is a wireless one and PLR tracks the PER itself.",
    );
    report.table(&heuristic_columns(&["RTT (ms)"]), &rows);
    // Reference: exact differentiation.
    let at_08 = pers
        .iter()
        .position(|p| (*p - SUPP_PER).abs() < 1e-12)
        .unwrap_or(pers.len() - 1);
    let mut rows = Vec::new();
    for (ri, rtt) in rtts.iter().enumerate() {
        let (n, h) = (
            mean(&by_per[at_08][ri][0].main),
            mean(&by_per[at_08][ri][1].main),
        );
        let (e, r) = (mean(&refs[ri][0].main), mean(&refs[ri][1].main));
        rows.push(vec![
            Cell::num(*rtt as f64, 0),
            Cell::num(n, 1),
            Cell::num(h, 1),
            Cell::num(r, 1),
            Cell::num(e, 1),
            Cell::num(h / n, 2),
            Cell::num(r / n, 2),
            Cell::num(e / n, 2),
            Cell::pair(
                100.0 * mean(&by_per[at_08][ri][1].excused),
                100.0 * mean(&refs[ri][1].excused),
                1,
            ),
        ]);
    }
    report.section(
        "References (not claims): another reading of PLR, and exact loss differentiation, PER 0.8 % (kb/s)",
        &format!(
            "The PER heuristic as run above counts PLR = N_retr / N_tx over the whole \
             connection (§3.3: \"the number of segments retransmitted on this connection\"), \
             so the losses of the first slow start weigh on it for the rest of the run. \
             \"Recent PLR\" reads §3.3's \"current Packet Loss Rate\" as the PLR of the last \
             {RECENT_PLR_WINDOW} transmissions (`last_link.plr_window`). TCP-ELN (not in this \
             paper; rcp-r2cp.txt §3.4.2) lets the receiver mark each hole its own link \
             corrupted, so the sender excuses exactly the wireless losses and cuts for every \
             congestion loss: what a perfect differentiation gains in this setup. The last \
             column is the share of detected losses (recovery episodes and timeouts) each \
             PER-heuristic variant answered without a window cut."
        ),
    );
    report.table(
        &[
            Col::from("RTT (ms)"),
            Col::from("NewReno"),
            Col::from("PER heuristic"),
            Col::from("PER heuristic, recent PLR"),
            Col::from("TCP-ELN"),
            Col::from("PER heuristic / NewReno"),
            Col::from("recent PLR / NewReno"),
            Col::from("TCP-ELN / NewReno"),
            Col::pair("losses excused %,", "PER heuristic", "recent PLR"),
        ],
        &rows,
    );
    let mut ours = serde_json::Map::new();
    let mut paper = serde_json::Map::new();
    // The claims are judged at PER 0.8 %, as the issue states them; the averages over the
    // PER values run (how the paper's Table 1 was made, §4.3) are reported beside them.
    let mut measured = Vec::new();
    for (ri, rtt) in rtts.iter().enumerate() {
        let pt = &by_per[at_08][ri];
        let (n, h) = (mean(&pt[0].main), mean(&pt[1].main));
        let (dn, dh) = (mean(&pt[0].dummy), mean(&pt[1].dummy));
        measured.push((*rtt, [n, h, dn, dh]));
        let (an, ah) = (avg_over_per(ri, 0, false), avg_over_per(ri, 1, false));
        let (adn, adh) = (avg_over_per(ri, 0, true), avg_over_per(ri, 1, true));
        ours.insert(
            format!("rtt={rtt}"),
            json!({
                "per_pct": 100.0 * pers[at_08],
                "newreno": n, "per_heuristic": h, "ratio": h / n,
                "cross_next_to_newreno": dn, "cross_next_to_per": dh,
                "average_over_per": {"per_values_pct": per_list, "newreno": an, "per_heuristic": ah,
                    "ratio": ah / an, "cross_next_to_newreno": adn, "cross_next_to_per": adh},
                "tcp_eln_reference": mean(&refs[ri][0].main),
                "per_heuristic_recent_plr_reference": {
                    "plr_window_segments": RECENT_PLR_WINDOW,
                    "throughput": mean(&refs[ri][1].main),
                    "ratio": mean(&refs[ri][1].main) / n,
                    "losses_excused_share": mean(&refs[ri][1].excused),
                },
                "per_heuristic_losses_excused_share": mean(&pt[1].excused),
            }),
        );
        if let Some(p) = PAPER_TABLE1.iter().find(|p| p.0 == *rtt) {
            paper.insert(
                format!("rtt={rtt}"),
                json!({"newreno": p.1, "per_heuristic": p.2, "ratio": p.2 / p.1, "cross_next_to_newreno": p.3, "cross_next_to_per": p.4}),
            );
        }
    }
    report.extend(claims(&measured, ours.into(), paper.into()));
    Ok(())
}

/// The two Table 1 claims at PER 0.8 %, on (RTT, [NewReno, PER heuristic, bulk cross flow next
/// to NewReno, next to the PER heuristic]) per RTT (kb/s).
fn claims(
    measured: &[(u64, [f64; 4])],
    ours: serde_json::Value,
    paper: serde_json::Value,
) -> [Claim; 2] {
    let (mut ev_ratio, mut ev_fair) = (Evidence::new(), Evidence::new());
    let (mut ratio_ok, mut fair) = (true, true);
    ev_ratio.some("RTTs", measured.len());
    ev_fair.some("RTTs", measured.len());
    for &(rtt, [n, h, dn, dh]) in measured {
        let at = |what: &str| format!("{what} at RTT {rtt} ms");
        let n = ev_ratio.positive(&at("NewReno"), n);
        let h = ev_ratio.num(&at("PER heuristic"), h);
        ratio_ok &= h >= 2.5 * n;
        let dn = ev_fair.positive(&at("cross flow next to NewReno"), dn);
        let dh = ev_fair.num(&at("cross flow next to the PER heuristic"), dh);
        fair &= (dh - dn).abs() <= 0.05 * dn;
    }
    [
        Claim::judged(
            "per-heuristic-2.5x",
            "Table 1: at PER 0.8 % the PER heuristic's throughput is at least 2.5× NewReno's at every RTT (the average over the PER values run is reported too)",
            ours.clone(),
            paper.clone(),
            ev_ratio,
            ratio_ok,
        ),
        Claim::judged(
            "per-heuristic-cross-fair",
            "Table 1: at PER 0.8 % the bulk cross flows' throughput next to the PER heuristic is within ±5 % of their throughput next to NewReno (the average over the PER values run is reported too)",
            ours,
            paper,
            ev_fair,
            fair,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn each_claim_fails_when_a_throughput_it_reads_is_missing_zero_or_not_finite() {
        let good = [100.0, 300.0, 1500.0, 1510.0];
        let make = |k: usize| {
            move |x: &[f64]| {
                claims(&[(100, [x[0], x[1], x[2], x[3]])], json!({}), json!({}))[k].clone()
            }
        };
        fails_when_spoilt(&good, [0, 1], &NOT_FINITE, make(0));
        fails_when_spoilt(&good, [0], &[0.0], make(0));
        // A cross flow that got nothing next to NewReno is no baseline for "within ±5 %".
        fails_when_spoilt(&good, [2, 3], &NOT_FINITE, make(1));
        fails_when_spoilt(&good, [2], &[0.0], make(1));
        for c in claims(&[], json!({}), json!({})) {
            assert_unmeasured(&c);
        }
    }
}
