//! Part 6: wireless-loss facts estimated by the receiver (`[flow.rcp] facts = "estimated"`,
//! issue 30 item 2) beside the oracle's. RCP with NewReno and per-hole ELN on the lossy 2 Mb/s
//! grid of part 2 (`lossy-rcp.toml`): no ELN, ELN fed by the link's corruption reports
//! (oracle), ELN fed by the receiver's own Spike judgement (estimated); and a congestion-only
//! path (no random loss, 30-packet queue), where an estimator that excused a drop would hide
//! congestion from the controller.

use serde_json::json;

use super::{run_all, template};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// One-way delays (ms) and loss probabilities of the grid (part 2's).
const DELAYS_MS: [u64; 2] = [50, 200];
const LOSSES: [f64; 3] = [0.001, 0.01, 0.05];
/// The configurations: label and `[flow.rcp]` overrides.
const FACTS: [(&str, Option<&str>); 3] = [
    ("no ELN", None),
    ("oracle", Some("oracle")),
    ("estimated", Some("estimated")),
];

fn params(
    d: u64,
    p: f64,
    facts: Option<&str>,
    seed: u64,
    duration: &str,
) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("link.wl.delay", format!("\"{d}ms\"")),
        ("link.wl.forward.loss", p.to_string()),
        ("link.wl.reverse.loss", p.to_string()),
        ("flow.0.cc", "\"newreno\"".to_owned()),
        ("run.seed", seed.to_string()),
        ("run.duration", format!("\"{duration}\"")),
    ];
    if let Some(f) = facts {
        v.push(("flow.0.rcp.eln", "true".to_owned()));
        v.push(("flow.0.rcp.facts", format!("\"{f}\"")));
    }
    v
}

/// Runs the grid and the congestion-only path; adds the tables and the claim.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "lossy-rcp.toml")?;
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let duration = ctx.pick("10s", "30s");
    let mut sets = Vec::new();
    for d in DELAYS_MS {
        for p in LOSSES {
            for (label, facts) in FACTS {
                for &seed in &seeds {
                    sets.push((
                        format!("facts delay={d}ms loss={p} {label} seed={seed}"),
                        params(d, p, facts, seed, duration),
                    ));
                }
            }
        }
    }
    // Congestion only: no random loss, a 30-packet queue.
    for (label, facts) in FACTS {
        let mut v = params(50, 0.0, facts, 1, duration);
        v.push(("link.wl.queue", "\"30p\"".to_owned()));
        sets.push((format!("facts congestion-only {label}"), v));
    }
    let runs = run_all(ctx, &t, sets)?;
    let (grid, congestion) = runs.split_at(runs.len() - FACTS.len());
    let mut per_point = grid.chunks(seeds.len());
    let mut rows = Vec::new();
    for d in DELAYS_MS {
        for p in LOSSES {
            let mut cells = vec![
                Cell::text(format!("{d}")),
                Cell::text(format!("{}", p * 100.0)),
            ];
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
    }
    report.section(
        "Estimated wireless-loss facts beside the oracle",
        &format!(
            "RCP NewReno on the lossy 2 Mb/s grid (`lossy-rcp.toml`), {duration}, {} seed(s) \
             per cell, mean ± 95 % CI (Mb/s): without ELN; with per-hole ELN fed by the link's \
             corruption reports (oracle); with ELN fed by the receiver's own judgement of each \
             hole (Spike on the one-way time, `[flow.rcp] facts = \"estimated\"`). The last \
             columns count the holes excused as wireless per run.",
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
    let mut ev = Evidence::new();
    let mut crows = Vec::new();
    let mut excused_estimated = f64::NAN;
    for ((label, _), r) in FACTS.iter().zip(congestion) {
        let f = r.flows.first();
        let excused = f.map_or(f64::NAN, |f| f.wireless_excused as f64);
        let recoveries = f.map_or(f64::NAN, |f| f.recoveries as f64);
        if *label == "estimated" {
            excused_estimated = ev.num("holes excused, estimated", excused);
            ev.num("recoveries, estimated", recoveries);
        }
        crows.push(vec![
            Cell::text(*label),
            Cell::num(f.map_or(f64::NAN, |f| f.goodput_bps / 1e6), 2),
            Cell::num(recoveries, 0),
            Cell::num(excused, 0),
        ]);
    }
    report.section(
        "Estimated facts on a congestion-only path",
        "The same path without random loss and with a 30-packet queue, 50 ms one-way: every \
         loss is a queue drop, so every excused hole is a misjudgement that hides congestion.",
    );
    report.table(
        &[
            "facts",
            "goodput (Mb/s)",
            "recovery episodes",
            "holes excused",
        ],
        &crows,
    );
    report.claim(Claim::judged(
        "estimated-facts-excuse-no-congestion-drop",
        "With facts estimated by the receiver, RCP excuses no hole as wireless on a path whose \
         only losses are queue drops",
        json!({"holes_excused": excused_estimated}),
        json!({"holes_excused": 0}),
        ev,
        excused_estimated == 0.0,
    ));
    Ok(())
}
