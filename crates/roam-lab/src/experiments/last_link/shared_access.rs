//! Extension, not in the paper: the main flow next to a plain NewReno download to the same
//! client over the same lossy access link, where Table 1's fairness question can have a
//! non-trivial answer.

use super::mean;
use super::runs::{Plan, Runs};
use super::variants::SHARED_ACCESS;
use crate::report::{num, Cell, Col};
use crate::Report;

/// `x` (a fraction) as a signed percentage, e.g. "−3.4 %" (the percentage in the CSV).
fn signed_pct(x: f64) -> Cell {
    if !x.is_finite() {
        return Cell::shown("–", f64::NAN);
    }
    let sign = if x < 0.0 { "−" } else { "+" };
    Cell::shown(format!("{sign}{} %", num(100.0 * x.abs(), 1)), 100.0 * x)
}

/// Writes the extension's table: main / neighbour throughput per PER, RTT and main variant.
pub(super) fn report(plan: &Plan, runs: &Runs, report: &mut Report) {
    let (rtts, shared_pers, shared) = (&plan.rtts, &plan.shared_pers, &runs.shared);
    let mut rows = Vec::new();
    for (pi, p) in shared_pers.iter().enumerate() {
        for (ri, rtt) in rtts.iter().enumerate() {
            let pts = &shared[pi][ri];
            let base = mean(&pts[0].neighbour);
            let mut row = vec![
                Cell::text(format!("{}", 100.0 * p)),
                Cell::num(*rtt as f64, 0),
            ];
            for pt in pts {
                row.push(Cell::pair(mean(&pt.main), mean(&pt.neighbour), 0));
            }
            for pt in &pts[1..] {
                row.push(signed_pct(mean(&pt.neighbour) / base - 1.0));
            }
            rows.push(row);
        }
    }
    report.section(
        "Extension (not a claim): a NewReno neighbour on the same access link (kb/s)",
        "Table 1's fairness test cannot fail in Figure 2's topology: the dummy flows never \
         cross the 7 Mb/s access link, and the core is not congested. Here a second \
         download (plain NewReno, unlimited window) runs from the server to the same client \
         through the same lossy access link, next to the main flow as NewReno, with the PER \
         heuristic, with TCP-ELN, or with the PER heuristic counting PLR over its recent \
         transmissions. Cells: main / neighbour; the last three columns are the neighbour's \
         change against its throughput next to a NewReno main flow.",
    );
    let mut header = vec![Col::from("PER (%)"), Col::from("RTT (ms)")];
    header.extend(
        SHARED_ACCESS
            .iter()
            .map(|v| Col::pair(v.label, "main", "neighbour")),
    );
    header.extend(
        SHARED_ACCESS[1..]
            .iter()
            .map(|v| Col::from(format!("neighbour vs {}", v.label).as_str())),
    );
    report.table(&header, &rows);
}
