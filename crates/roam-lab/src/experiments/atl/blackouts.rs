//! Fig. 9 (atl.txt §V-B1): throughput through blackouts of 10 ms to 10 s.

use serde_json::json;

use super::scenarios::{
    blackout, duration_s, seeds, template, BLACKOUTS_FULL, BLACKOUTS_QUICK, BLACKOUT_PROTOCOLS,
};
use super::{mbps, mean, run_grouped};
use crate::report::Cell;
use crate::{Claim, Ctx, LabError, Report};

/// Fig. 9.
pub(super) fn blackouts(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "wireless-source.toml")?;
    let durations: &[f64] = if ctx.quick {
        &BLACKOUTS_QUICK
    } else {
        &BLACKOUTS_FULL
    };
    let at = duration_s(ctx) / 2.0;
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &b in durations {
        for (name, cc) in BLACKOUT_PROTOCOLS {
            for seed in 1..=seeds {
                let label = format!("blackout {b}s {name} seed={seed}");
                jobs.push(blackout(&t, label, cc, (at, b), duration_s(ctx), seed)?);
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    let mut rows = Vec::new();
    let mut points = Vec::new();
    let mut ok = true;
    for &b in durations {
        let cells: Vec<Vec<f64>> = BLACKOUT_PROTOCOLS
            .iter()
            .map(|_| {
                it.next()
                    .map(|g| g.iter().map(mbps).collect::<Vec<f64>>())
                    .unwrap_or_default()
            })
            .collect();
        let (a, w) = (mean(&cells[0]), mean(&cells[2]));
        ok &= a >= w;
        points.push(json!({"blackout_s": b, "atl": a, "westwood": w,
            "gain_pct": 100.0 * (a / w - 1.0)}));
        let mut r = vec![Cell::num(b, 2)];
        r.extend(cells.iter().map(|c| Cell::est_of(c, 3)));
        let gain = 100.0 * (a / w - 1.0);
        r.push(Cell::shown(format!("{gain:+.1} %"), gain));
        rows.push(r);
    }
    report.section(
        "Blackouts (Fig. 9)",
        &format!(
            "d_w = 50 ms, p_w = 10⁻³, one blackout on both directions of the wireless link at \
             t = {at} s. Paper: TCP-ATL above TCP-Westwood for every duration, +89 % for a 1 s \
             blackout."
        ),
    );
    report.table(
        &[
            "blackout (s)",
            "TCP-ATL (Mb/s)",
            "NewReno (Mb/s)",
            "Westwood+ (Mb/s)",
            "ATL vs Westwood+",
        ],
        &rows,
    );
    report.claim(Claim::new(
        "blackout",
        "Through a blackout of 10 ms to 10 s, TCP-ATL's throughput is at least Westwood+'s",
        json!(points),
        json!({"gain_pct_at_1s": 89}),
        ok,
    ));
    Ok(())
}
