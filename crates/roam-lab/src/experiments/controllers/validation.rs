//! Part 1: CUBIC and BBR on the loss-free ns-3 dumbbells (`shared/anchors/README.md`, "ns-3
//! 3.37 with Cubic and BBR on the validation dumbbell", 120 s), one flow and twenty, judged
//! like the NewReno validation (`crates/roam-sim/tests/validation.rs`): total goodput within
//! ±10 % of ns-3, Jain ≥ 0.95 with twenty flows.
//!
//! The anchor's ns-3 program leaves ns-3's default root queue disc on the bottleneck, which
//! ns-3 3.37 installs at address assignment: FqCoDel, in front of the 100-packet drop-tail
//! device queue. The table also shows the same program with that queue disc removed
//! (`bench/ns3/ns3-dumbbell.cc --qdisc=none`, measured 2026-11-27): the drop-tail bottleneck
//! the scenario describes and roam simulates.

use serde_json::json;

use super::{run_all, template, total_mbps, within, CONTROLLERS};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::{Ctx, LabError, Report};

/// One reference: total goodput (Mb/s) and Jain's index.
#[derive(Debug, Clone, Copy)]
struct Ns3 {
    mbps: f64,
    jain: f64,
}

/// ns-3 as the anchors README gives it (default queue disc), 120 s: `[single, shared]` per
/// controller of [`CONTROLLERS`].
const ANCHOR: [[Ns3; 2]; 3] = [
    [
        Ns3 {
            mbps: 9.47,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.47,
            jain: 0.9999,
        },
    ],
    [
        Ns3 {
            mbps: 9.47,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.47,
            jain: 1.0,
        },
    ],
    [
        Ns3 {
            mbps: 9.24,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.45,
            jain: 0.9998,
        },
    ],
];

/// The same ns-3 program with `--qdisc=none` (drop-tail only), 120 s, measured 2026-11-27.
const DROP_TAIL: [[Ns3; 2]; 3] = [
    [
        Ns3 {
            mbps: 9.4652,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.4751,
            jain: 0.9971,
        },
    ],
    [
        Ns3 {
            mbps: 9.4652,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.4751,
            jain: 0.9804,
        },
    ],
    [
        Ns3 {
            mbps: 9.2443,
            jain: 1.0,
        },
        Ns3 {
            mbps: 9.2723,
            jain: 0.3450,
        },
    ],
];

const CASES: [(&str, &str); 2] = [
    ("single", "dumbbell-single.toml"),
    ("shared", "dumbbell-shared.toml"),
];

/// Runs the six cases and adds the table and the claims.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let duration = ctx.pick("20s", "120s");
    let mut rows = Vec::new();
    let mut claims = Vec::new();
    for (case_index, (case, file)) in CASES.iter().enumerate() {
        let t = template(ctx, file)?;
        let sets = CONTROLLERS
            .iter()
            .map(|cc| {
                (
                    format!("{case} cc={cc}"),
                    vec![
                        ("flow.0.cc", format!("\"{cc}\"")),
                        ("run.duration", format!("\"{duration}\"")),
                    ],
                )
            })
            .collect();
        let runs = run_all(ctx, &t, sets)?;
        for (k, (cc, r)) in CONTROLLERS.iter().zip(&runs).enumerate() {
            let (ours, jain) = (total_mbps(r), r.jain_index);
            let (anchor, drop_tail) = (ANCHOR[k][case_index], DROP_TAIL[k][case_index]);
            rows.push(vec![
                Cell::text(*case),
                Cell::text(*cc),
                Cell::num(ours, 3),
                Cell::num(anchor.mbps, 2),
                Cell::num(drop_tail.mbps, 3),
                Cell::num(jain, 4),
                Cell::num(anchor.jain, 4),
                Cell::num(drop_tail.jain, 4),
            ]);
            if *cc == "newreno" {
                // NewReno's validation lives in roam-sim's tests; its row is for comparison.
                continue;
            }
            let mut ev = Evidence::new();
            let g = ev.num("goodput", ours);
            claims.push(Claim::judged(
                &format!("ns3-{case}-{cc}-goodput"),
                &format!(
                    "{cc} on the loss-free dumbbell ({case}): total goodput within ±10 % of \
                     ns-3 3.37's"
                ),
                json!({"mbps": ours}),
                json!({"mbps": anchor.mbps, "drop_tail_only_mbps": drop_tail.mbps}),
                ev,
                within(g, anchor.mbps, 0.10),
            ));
            if *case == "shared" {
                let mut ev = Evidence::new();
                let j = ev.num("Jain", jain);
                claims.push(Claim::judged(
                    &format!("ns3-shared-{cc}-fair"),
                    &format!("{cc}, twenty flows: Jain's index ≥ 0.95, as ns-3's (≥ 0.9998)"),
                    json!({"jain": jain}),
                    json!({"jain": anchor.jain, "drop_tail_only_jain": drop_tail.jain}),
                    ev,
                    j >= 0.95,
                ));
            }
        }
    }
    report.section(
        "Loss-free dumbbell against ns-3",
        &format!(
            "10 Mb/s, 20 ms bottleneck with a 100-packet drop-tail queue, 1000-byte segments, \
             SACK, IW 1, {duration} (ns-3: 120 s). \"ns-3\" is the anchor (ns-3's default \
             FqCoDel queue disc in front of the drop-tail queue, as the anchor program runs); \
             \"ns-3 drop-tail\" the same program with `--qdisc=none`, the bottleneck roam \
             simulates. With FqCoDel every flow gets its own queue, so ns-3's BBR shares \
             perfectly; on the plain drop-tail queue ns-3's own BBR v1 reaches Jain 0.345, and \
             its CUBIC 0.98."
        ),
    );
    report.table(
        &[
            "case",
            "cc",
            "ours (Mb/s)",
            "ns-3",
            "ns-3 drop-tail",
            "ours Jain",
            "ns-3 Jain",
            "ns-3 drop-tail Jain",
        ],
        &rows,
    );
    report.extend(claims);
    Ok(())
}
