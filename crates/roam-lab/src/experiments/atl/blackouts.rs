//! Fig. 9 (atl.txt §V-B1): throughput through blackouts of 10 ms to 10 s.

use serde_json::json;

use super::scenarios::{
    blackout, duration_s, seeds, template, BLACKOUTS_FULL, BLACKOUTS_QUICK, BLACKOUT_PROTOCOLS,
};
use super::{mbps, mean, run_grouped};
use crate::claims::Evidence;
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
        points.push((b, a, w));
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
    report.claim(blackout_claim(&points));
    Ok(())
}

/// The claim on (blackout duration s, TCP-ATL Mb/s, Westwood+ Mb/s) per duration.
fn blackout_claim(points: &[(f64, f64, f64)]) -> Claim {
    let mut ev = Evidence::new();
    ev.some("blackout durations", points.len());
    let mut holds = true;
    for &(b, a, w) in points {
        let a = ev.num(&format!("TCP-ATL at {b} s"), a);
        let w = ev.positive(&format!("Westwood+ at {b} s"), w);
        holds &= a >= w;
    }
    let ours: Vec<_> = points
        .iter()
        .map(|&(b, a, w)| {
            json!({"blackout_s": b, "atl": a, "westwood": w, "gain_pct": 100.0 * (a / w - 1.0)})
        })
        .collect();
    Claim::judged(
        "blackout",
        "Through a blackout of 10 ms to 10 s, TCP-ATL's throughput is at least Westwood+'s",
        json!(ours),
        json!({"gain_pct_at_1s": 89}),
        ev,
        holds,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn the_claim_fails_when_a_throughput_is_missing_zero_or_not_finite() {
        let make = |x: &[f64]| blackout_claim(&[(0.01, x[0], x[1]), (1.0, x[2], x[3])]);
        let good = [1.8, 1.6, 1.7, 1.5];
        fails_when_spoilt(&good, 0..4, &NOT_FINITE, make);
        // A Westwood+ of zero is no baseline (ATL ≥ 0 holds for anything).
        fails_when_spoilt(&good, [1, 3], &[0.0], make);
        assert_unmeasured(&blackout_claim(&[]));
    }
}
