//! The CSV files of a sweep, each a tidy table (one observation per row, one variable per
//! column) for pandas and R:
//!
//! - `sweep.csv`: one row per grid point: the parameters, `runs`, and `<metric>_mean` /
//!   `<metric>_ci95` of the run-level metrics;
//! - `sweep_flows.csv`: one row per grid point × flow: the parameters, `flow`, and the flow's
//!   goodput and completion time over the seeds;
//! - `runs.csv`: one row per run: the parameters, `seed`, and the run-level metrics;
//! - `flows.csv`: one row per run × flow: the parameters, `scenario`, `seed`, and every field of
//!   the flow's result (as `roam sim`'s `flows.csv`).

use roam_lab::stats::Estimate;

use super::{FlowSummary, Point, PointSummary, RunRow};
use crate::cli::Param;
use crate::output::csv;

fn cell(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The run-level metrics of `sweep.csv` (without `_mean`/`_ci95`), in column order.
const POINT_METRICS: [&str; 4] = [
    "aggregate_goodput_mbps",
    "jain_index",
    "completion_s",
    "overhead_pct",
];

/// The parameter columns: the `--param` keys.
fn param_header(params: &[Param]) -> Vec<String> {
    params.iter().map(|p| p.key.clone()).collect()
}

/// The parameter cells of grid point `point`.
fn param_cells(points: &[Point], point: usize) -> Vec<String> {
    points
        .get(point)
        .map(|p| p.iter().map(|(_, v)| v.clone()).collect())
        .unwrap_or_default()
}

fn push_estimate(row: &mut Vec<String>, e: &Estimate) {
    row.push(cell(e.mean));
    row.push(cell(e.ci95));
}

/// Header and rows of `sweep.csv` (CI blank when a point has fewer than two values).
pub fn sweep_table(
    params: &[Param],
    points: &[Point],
    summaries: &[PointSummary],
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = param_header(params);
    header.push("runs".to_owned());
    for m in POINT_METRICS {
        header.push(format!("{m}_mean"));
        header.push(format!("{m}_ci95"));
    }
    let rows = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut row = param_cells(points, i);
            row.push(s.runs.to_string());
            for e in [
                &s.aggregate_goodput_mbps,
                &s.jain_index,
                &s.completion_s,
                &s.overhead_pct,
            ] {
                push_estimate(&mut row, e);
            }
            row
        })
        .collect();
    (header, rows)
}

/// Header and rows of `sweep_flows.csv`.
pub fn flow_summary_table(
    params: &[Param],
    points: &[Point],
    flows: &[FlowSummary],
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = param_header(params);
    header.extend(
        [
            "flow",
            "runs",
            "goodput_mbps_mean",
            "goodput_mbps_ci95",
            "completed",
            "completion_s_mean",
            "completion_s_ci95",
        ]
        .map(str::to_owned),
    );
    let rows = flows
        .iter()
        .map(|f| {
            let mut row = param_cells(points, f.point);
            row.push(f.id.clone());
            row.push(f.runs.to_string());
            push_estimate(&mut row, &f.goodput_mbps);
            row.push(f.completed.to_string());
            push_estimate(&mut row, &f.completion_s);
            row
        })
        .collect();
    (header, rows)
}

/// Header and rows of `runs.csv`: one row per run, in grid order then seed order.
pub fn runs_table(
    params: &[Param],
    points: &[Point],
    runs: &[RunRow],
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = param_header(params);
    header.extend(
        [
            "seed",
            "aggregate_goodput_mbps",
            "aggregate_from_s",
            "aggregate_to_s",
            "jain_index",
            "completion_s",
            "overhead_pct",
            "sim_seconds",
            "events",
        ]
        .map(str::to_owned),
    );
    let rows = runs
        .iter()
        .map(|r| {
            let m = &r.metrics;
            let mut row = param_cells(points, r.point);
            row.push(r.seed.to_string());
            for x in [
                m.aggregate_goodput_mbps,
                m.aggregate_from_s,
                m.aggregate_to_s,
                m.jain_index,
            ] {
                row.push(cell(Some(x).filter(|x| x.is_finite())));
            }
            row.push(cell(m.completion_s));
            row.push(cell(m.overhead_pct));
            row.push(m.sim_seconds.to_string());
            row.push(m.events.to_string());
            row
        })
        .collect();
    (header, rows)
}

/// `flows.csv`: the parameters, scenario and seed of each run before each of its flows' cells
/// (as `roam sim`'s `flows.csv`; the header names the fields of the first run that has flows).
fn flows_table(
    scenario: &str,
    params: &[Param],
    points: &[Point],
    runs: &[RunRow],
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = param_header(params);
    header.extend(["scenario".to_owned(), "seed".to_owned()]);
    if let Some(r) = runs.iter().find(|r| !r.flows.is_empty()) {
        header.extend(r.flow_fields.iter().cloned());
    }
    let rows = runs
        .iter()
        .flat_map(|r| {
            let mut keys = param_cells(points, r.point);
            keys.push(scenario.to_owned());
            keys.push(r.seed.to_string());
            r.flows.iter().map(move |f| {
                let mut row = keys.clone();
                row.extend(f.cells.iter().cloned());
                row
            })
        })
        .collect();
    (header, rows)
}

/// The four CSV files, by name, as bytes.
pub fn render_all(
    scenario: &str,
    params: &[Param],
    points: &[Point],
    summaries: &[PointSummary],
    flows: &[FlowSummary],
    runs: &[RunRow],
) -> std::io::Result<Vec<(&'static str, Vec<u8>)>> {
    let tables = [
        ("sweep.csv", sweep_table(params, points, summaries)),
        ("sweep_flows.csv", flow_summary_table(params, points, flows)),
        ("runs.csv", runs_table(params, points, runs)),
        ("flows.csv", flows_table(scenario, params, points, runs)),
    ];
    let mut out = Vec::new();
    for (file, (header, rows)) in tables {
        let mut bytes = Vec::new();
        csv::write_table(&mut bytes, &header, &rows)?;
        out.push((file, bytes));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{flow, param, result};
    use super::super::{aggregate, expand_grid, flow_ids, flow_summaries};
    use super::*;

    #[test]
    fn every_table_is_long_with_one_value_per_cell() {
        let params = [param("loss", &["0", "0.01"])];
        let points = expand_grid(&params).unwrap();
        let mk = |point, seed, g| {
            let flows = vec![flow("a", g, Some(3.0), false), flow("x", 1e6, None, true)];
            RunRow::new(point, seed, &result(flows)).unwrap()
        };
        let runs = vec![mk(0, 1, 9e6), mk(0, 2, 11e6), mk(1, 1, 2e6)];
        let ids = flow_ids(&runs);
        let summaries = aggregate(&runs, points.len());
        let per_flow = flow_summaries(&runs, points.len(), &ids);

        let (h, rows) = sweep_table(&params, &points, &summaries);
        assert_eq!(
            h[..4],
            [
                "loss",
                "runs",
                "aggregate_goodput_mbps_mean",
                "aggregate_goodput_mbps_ci95"
            ]
        );
        assert!(
            h.iter().all(|c| !c.contains("goodput_mbps_a")),
            "no flow spread over columns: {h:?}"
        );
        assert_eq!(rows[1][..4], ["0.01", "1", "1", ""], "one run: no CI");

        let (h, rows) = flow_summary_table(&params, &points, &per_flow);
        assert_eq!(h[..4], ["loss", "flow", "runs", "goodput_mbps_mean"]);
        let cells: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r[..4].iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            cells,
            [
                ["0", "a", "2", "10"],
                ["0", "x", "2", "1"],
                ["0.01", "a", "1", "2"],
                ["0.01", "x", "1", "1"]
            ]
        );

        let (h, rows) = runs_table(&params, &points, &runs);
        assert_eq!(h[..3], ["loss", "seed", "aggregate_goodput_mbps"]);
        assert_eq!(rows[2][..3], ["0.01", "1", "1"]);
        for (h, rows) in [
            sweep_table(&params, &points, &summaries),
            flow_summary_table(&params, &points, &per_flow),
            runs_table(&params, &points, &runs),
        ] {
            assert!(rows.iter().all(|r| r.len() == h.len()));
            assert!(rows.iter().flatten().all(|c| !c.contains('±')));
        }

        let (h, rows) = flows_table("s", &params, &points, &runs);
        let mut bytes = Vec::new();
        csv::write_table(&mut bytes, &h, &rows).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 3 * 2, "one row per run × flow: {text}");
        assert!(
            lines[0].starts_with("loss,scenario,seed,id,protocol,"),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("0,s,1,a,tcp,"), "{}", lines[1]);
        assert!(lines[6].starts_with("0.01,s,1,x,tcp,"), "{}", lines[6]);
    }
}
