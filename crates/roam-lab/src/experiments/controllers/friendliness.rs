//! Part 3: sharing a clean 8 Mb/s, 30 ms RTT bottleneck with one CUBIC flow, queue 200 or 30
//! packets, 30 s (`shared/anchors/README.md`: Linux BBR against CUBIC got 1.86 vs 5.88 Mb/s with
//! 200 packets, 6.37 vs 1.31 with 30). Issue 30's bar: the ratio of goodputs stays within
//! 0.8–1.25 for roam's oracle-free controller of the lossy paths.

use serde_json::json;

use super::{flow_mbps, run_all, template, CONTROLLERS};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// Bottleneck queues (packets) and Linux's BBR / CUBIC ratio at each.
const QUEUES: [(u32, f64); 2] = [(200, 1.86 / 5.88), (30, 6.37 / 1.31)];

/// Runs every controller beside CUBIC at both queue sizes; adds the table and the claim.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "friendliness.toml")?;
    // No random loss and fixed start times: every seed gives the same run, so one is enough.
    let seeds: Vec<u64> = vec![1];
    let duration = ctx.pick("10s", "30s");
    let mut sets = Vec::new();
    for (q, _) in QUEUES {
        for cc in CONTROLLERS {
            for &seed in &seeds {
                sets.push((
                    format!("friendliness queue={q} cc={cc} seed={seed}"),
                    vec![
                        ("link.bottleneck.queue", format!("\"{q}p\"")),
                        ("flow.1.cc", format!("\"{cc}\"")),
                        ("run.seed", seed.to_string()),
                        ("run.duration", format!("\"{duration}\"")),
                    ],
                ));
            }
        }
    }
    let runs = run_all(ctx, &t, sets)?;
    let mut per_point = runs.chunks(seeds.len());
    let mut rows = Vec::new();
    let mut bbr_ratios = Vec::new();
    let mut ev = Evidence::new();
    for (q, linux) in QUEUES {
        for cc in CONTROLLERS {
            let point = per_point.next().unwrap_or(&[]);
            let other: Vec<f64> = point.iter().map(|r| flow_mbps(r, "other")).collect();
            let cubic: Vec<f64> = point.iter().map(|r| flow_mbps(r, "cubic")).collect();
            let ratios: Vec<f64> = other.iter().zip(&cubic).map(|(o, c)| o / c).collect();
            let e = Estimate::from_sample(&ratios);
            if cc == "bbr" {
                bbr_ratios.push(ev.mean(&format!("BBR/CUBIC at {q} packets"), &e));
            }
            rows.push(vec![
                Cell::text(format!("{q}")),
                Cell::text(cc),
                Cell::est_of(&other, 2),
                Cell::est_of(&cubic, 2),
                Cell::est(&e, 2),
                Cell::text(if cc == "bbr" {
                    format!("{linux:.2}")
                } else {
                    "—".to_owned()
                }),
            ]);
        }
    }
    report.section(
        "Sharing with CUBIC",
        &format!(
            "8 Mb/s, 14 ms one-way bottleneck (30 ms RTT with the access links), no random loss; \
             one CUBIC flow and one flow of the controller named, both from 0 s, {duration}. \
             Nothing in the run is random, so one run per row (Linux: one 30 s run, anchors). \
             BBR v1's window is `2 · BtlBw · RTprop`: beside CUBIC's standing queue its \
             delivery rate, and so its estimate, shrinks round after round; Linux's BBR keeps \
             a third of CUBIC's rate with 200 packets, ours much less: ours stays in Drain \
             until ProbeRTT at 10 s, since in-flight cannot fall to one BDP while CUBIC's \
             queue holds the RTT (docs/CONTROLLERS.md). With 30 packets BBR takes the larger share, as on Linux, but less of \
             it."
        ),
    );
    report.table(
        &[
            "queue (packets)",
            "cc",
            "its goodput (Mb/s)",
            "CUBIC's (Mb/s)",
            "ratio",
            "Linux BBR / CUBIC",
        ],
        &rows,
    );
    ev.some("queue sizes", bbr_ratios.len());
    report.claim(Claim::judged(
        "friendliness-lossy-path-controller-within-0.8-1.25",
        "The oracle-free controller that holds up on lossy paths (BBR here) and one CUBIC flow \
         share a clean bottleneck within a goodput ratio of 0.8–1.25, with 200 and with 30 \
         packets of queue",
        json!({"bbr_over_cubic": bbr_ratios}),
        json!({"linux_bbr_over_cubic": QUEUES.iter().map(|(_, r)| *r).collect::<Vec<_>>()}),
        ev,
        bbr_ratios.iter().all(|r| (0.8..=1.25).contains(r)),
    ));
    Ok(())
}
