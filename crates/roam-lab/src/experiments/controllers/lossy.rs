//! Part 2: one lossy 2 Mb/s wireless path (200-packet queue, random loss on data and
//! acknowledgements, one-way delay 50 or 200 ms, 30 s) against Linux Reno, CUBIC and BBR on
//! the same emulated path (`shared/anchors/README.md`, "Linux TCP on one lossy wireless path").
//! Issue 30's bar: roam's best oracle-free configuration reaches ≥ 90 % of Linux BBR in every
//! cell.

use serde_json::json;

use super::grid::{self, Column};
use super::{flow_mbps, run_all, template, CONTROLLERS};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// Linux goodput (Mb/s): `[delay][loss]` → `[Reno, Cubic, BBR]`.
const LINUX: [[[f64; 3]; 3]; 2] = [
    [[1.93, 1.93, 1.88], [1.10, 1.37, 1.88], [0.54, 0.57, 1.85]],
    [[1.38, 1.88, 1.79], [0.52, 1.31, 1.75], [0.15, 0.22, 1.68]],
];

/// Runs the grid and adds the table and the claims.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "lossy.toml")?;
    let seeds: Vec<u64> = (1..=ctx.pick(2, 5)).collect();
    let duration = ctx.pick("10s", "30s");
    let columns = CONTROLLERS.map(Column::cc);
    let sets = grid::sets("lossy", &columns, &seeds, duration);
    let runs = run_all(ctx, &t, sets)?;
    let mut per_point = runs.chunks(seeds.len());
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut cubic_vs_reno = Vec::new();
    let mut ev_best = Evidence::new();
    let mut ev_cubic = Evidence::new();
    for (di, d, pi, p) in grid::cells() {
        let mut means = [f64::NAN; 3];
        let mut timeouts = Vec::new();
        let mut cells = grid::row_head(d, p);
        for mean in &mut means {
            let point = per_point.next().unwrap_or(&[]);
            let values: Vec<f64> = point.iter().map(|r| flow_mbps(r, "f")).collect();
            let e = Estimate::from_sample(&values);
            *mean = e.mean.unwrap_or(f64::NAN);
            cells.push(Cell::est(&e, 2));
            // BBR's point is the last: its timeouts are the column after the references.
            timeouts = point
                .iter()
                .map(|r| r.flows.first().map_or(f64::NAN, |f| f.timeouts as f64))
                .collect();
        }
        let linux = LINUX[di][pi];
        let best = means.iter().copied().fold(f64::NAN, f64::max);
        let label = grid::cell_label(d, p);
        let ratio = ev_best.num(&format!("best at {label}"), best) / linux[2];
        ratios.push(ratio);
        if p >= 0.01 {
            let c = ev_cubic.num(&format!("cubic at {label}"), means[1]);
            let r = ev_cubic.num(&format!("newreno at {label}"), means[0]);
            cubic_vs_reno.push((c, r));
        }
        cells.extend(linux.iter().map(|x| Cell::num(*x, 2)));
        cells.push(Cell::num(ratio * 100.0, 0));
        cells.push(Cell::est_of(&timeouts, 1));
        rows.push(cells);
    }
    report.section(
        "Lossy 2 Mb/s path against Linux",
        &format!(
            "2 Mb/s, 200-packet drop-tail queue, random loss on data and acknowledgements, \
             1448-byte segments, SACK; {duration} bulk download, {} seed(s) per cell, mean ± \
             95 % CI (Mb/s). Linux: one 30 s run per cell on an emulated path (anchors). The \
             column \"best / Linux BBR\" is roam's best controller in the cell against Linux \
             BBR; the last counts BBR's retransmission timeouts per run. Each costs BBR one \
             segment of window and the whole flight sent again. Our reading, not checked \
             loss by loss: most are lost retransmissions, which RFC 6675 recovery cannot \
             detect before the timer fires, where Linux detects them with RACK-TLP \
             (RFC 8985), which roam's TCP engine does not implement.",
            seeds.len()
        ),
    );
    report.table(
        &[
            "one-way delay (ms)",
            "loss (%)",
            "NewReno",
            "CUBIC",
            "BBR",
            "Linux Reno",
            "Linux CUBIC",
            "Linux BBR",
            "best / Linux BBR (%)",
            "BBR timeouts",
        ],
        &rows,
    );
    ev_best.some("cells", ratios.len());
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    report.claim(Claim::judged(
        "lossy-best-oracle-free-90pct-of-linux-bbr",
        "On every cell of the lossy 2 Mb/s grid, roam's best oracle-free controller reaches \
         ≥ 90 % of Linux BBR",
        json!({"best_over_linux_bbr": ratios, "worst": worst}),
        json!({"linux_bbr_mbps": LINUX.iter().flatten().map(|c| c[2]).collect::<Vec<_>>()}),
        ev_best,
        ratios.iter().all(|r| *r >= 0.9),
    ));
    ev_cubic.some("cells with loss ≥ 1 %", cubic_vs_reno.len());
    report.claim(Claim::judged(
        "lossy-cubic-at-least-newreno",
        "With 1 % and 5 % loss CUBIC keeps at least NewReno's goodput, as on Linux (where \
         ns-3 3.37's CUBIC falls below its NewReno)",
        json!({"cubic_newreno_mbps": cubic_vs_reno}),
        json!({"linux_cubic_reno_mbps": LINUX.iter().flat_map(|d| d[1..].iter().map(|c| (c[1], c[0]))).collect::<Vec<_>>()}),
        ev_cubic,
        cubic_vs_reno.iter().all(|(c, r)| c >= r),
    ));
    Ok(())
}
