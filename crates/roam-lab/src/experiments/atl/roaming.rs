//! Tables II and III (atl.txt §V-B1): a source or receiver roaming between WLAN, 3G and
//! satellite.

use serde_json::json;

use super::scenarios::{duration_s, roaming, seeds, template, ROAMING};
use super::{mbps, mean, run_grouped};
use crate::claims::Evidence;
use crate::report::Cell;
use crate::{Claim, Ctx, LabError, Report};

/// Tables II and III.
pub(super) fn roaming_tables(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let scale = duration_s(ctx) / 600.0;
    let seeds = seeds(ctx);
    let cases = [
        ("source", "wireless-source.toml", "forward", "Table II"),
        ("receiver", "wireless-receiver.toml", "reverse", "Table III"),
    ];
    for (case, file, dir, table) in cases {
        let t = template(ctx, file)?;
        let mut jobs = Vec::new();
        for (k, ((t1, t2), nets, _, _)) in ROAMING.iter().enumerate() {
            for seed in 1..=seeds {
                let label = format!("roaming {case} exp={} seed={seed}", k + 1);
                let times = (f64::from(*t1) * scale, f64::from(*t2) * scale);
                jobs.push(roaming(&t, label, nets, times, dir, duration_s(ctx), seed)?);
            }
        }
        let groups = run_grouped(ctx, jobs, seeds as usize)?;
        let mut rows = Vec::new();
        let mut ours = Vec::new();
        let mut paper = Vec::new();
        for (k, (((t1, t2), nets, ps, pr), g)) in ROAMING.iter().zip(&groups).enumerate() {
            let v: Vec<f64> = g.iter().map(mbps).collect();
            let p = if case == "source" { *ps } else { *pr };
            ours.push(mean(&v));
            paper.push(p);
            rows.push(vec![
                Cell::text((k + 1).to_string()),
                Cell::text(format!("({t1}, {t2})")),
                Cell::text(format!(
                    "({}, {}, {})",
                    nets[0].name, nets[1].name, nets[2].name
                )),
                Cell::est_of(&v, 4),
                Cell::num(p, 4),
            ]);
        }
        report.section(
            &format!("Roaming, wireless {case} ({table})"),
            "WLAN (d_w = 10 ms, p_w = 10⁻⁵), 3G (50 ms, 10⁻⁴) and satellite (150 ms, 10⁻³), \
             switched at t1 and t2 (each switch is a handoff: the link's delay and loss change). \
             TCP-ATL only, as in the paper.",
        );
        report.table(
            &[
                "Exp.",
                "(t1, t2) s",
                "(N1, N2, N3)",
                "ours (Mb/s)",
                "paper (Mb/s)",
            ],
            &rows,
        );
        report.claim(claim(case, table, &ours, &paper));
    }
    Ok(())
}

/// The roaming claim of one case: the spread (max − min) / max of TCP-ATL's throughput over
/// the six orders is at most 10 %.
fn claim(case: &str, table: &str, ours: &[f64], paper: &[f64]) -> Claim {
    let mut ev = Evidence::new();
    let ours_checked = ev.all("throughput over the six orders", ours);
    let (lo, hi) = ours_checked
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let hi = ev.positive("the highest throughput", hi);
    let spread = (hi - lo) / hi;
    Claim::judged(
        &format!("roaming-{case}"),
        &format!(
            "Wireless {case} roaming across WLAN/3G/satellite: TCP-ATL's throughput is within \
             10 % across all six orders ({table})"
        ),
        json!({"throughput_mbps": ours, "spread": spread}),
        json!({"throughput_mbps": paper, "spread": 0.027}),
        ev,
        spread <= 0.10,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn the_claim_fails_when_a_throughput_is_missing_or_not_finite_or_all_are_zero() {
        let good = [1.8, 1.79, 1.81, 1.8, 1.78, 1.8];
        fails_when_spoilt(&good, 0..6, &NOT_FINITE, |x| claim("source", "T", x, &[]));
        // min() and max() skip a NaN: one measured order would make the spread 0.
        assert_unmeasured(&claim("source", "T", &[1.8, f64::NAN], &[]));
        assert_unmeasured(&claim("source", "T", &[0.0; 6], &[]));
        assert_unmeasured(&claim("source", "T", &[], &[]));
    }
}
