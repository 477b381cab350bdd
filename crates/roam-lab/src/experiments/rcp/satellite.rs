//! §3.4.3: RCP-STP vs RCP-NewReno (and TCP) over a 1.5 Mb/s satellite link with reverse bulk
//! TCP and HTTP-like background traffic (Figure 5(c)).

use serde_json::json;

use super::{flow, mean, param, run_all, seeds, template};
use crate::chart::{self, Axes, Series};
use crate::claims::Evidence;
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Claim, Ctx, LabError, Report};

const VARIANTS: [(&str, &str, &str); 3] = [
    ("TCP (NewReno, SACK)", "tcp", "newreno"),
    ("RCP-NewReno", "rcp", "newreno"),
    ("RCP-STP", "rcp", "stp"),
];

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "satellite.toml")?;
    let delays: Vec<u64> = ctx.pick(vec![50, 250], vec![50, 100, 150, 200, 250]);
    let duration = ctx.pick("60s", "300s");
    let seeds = seeds(ctx);
    let mut sets = Vec::new();
    for &d in &delays {
        for (name, proto, cc) in VARIANTS {
            for &seed in &seeds {
                sets.push((
                    format!("satellite delay={d}ms {name} seed={seed}"),
                    vec![
                        param("link.sat.delay", format!("{d}ms")),
                        param("flow.f.protocol", proto),
                        param("flow.f.cc", cc),
                        param("run.duration", duration),
                        param("run.seed", seed.to_string()),
                    ],
                ));
            }
        }
    }
    let results = run_all(ctx, &t, sets)?;
    let per = seeds.len();
    let mut rows = Vec::new();
    // RCP-NewReno's and RCP-STP's mean goodput at each delay.
    let mut goodput = Vec::new();
    // Share of the satellite link's forward capacity in use (all traffic) while RCP-NewReno or
    // RCP-STP runs: the headroom either leaves.
    let mut newreno_util = Vec::new();
    let mut stp_util = Vec::new();
    let mut series: Vec<Series> = VARIANTS
        .iter()
        .map(|v| Series::new(v.0, Vec::new()))
        .collect();
    for (di, &d) in delays.iter().enumerate() {
        let mut row = vec![Cell::num(d as f64, 0)];
        let mut means = Vec::new();
        for (vi, s) in series.iter_mut().enumerate() {
            let start = (di * VARIANTS.len() + vi) * per;
            let g: Vec<f64> = results[start..start + per]
                .iter()
                .filter_map(|r| flow(r, "f"))
                .map(|f| f.goodput_bps / 1e6)
                .collect();
            let e = Estimate::from_sample(&g);
            s.push_estimate(d as f64, &e);
            row.push(Cell::est(&e, 3));
            means.push(mean(&e));
        }
        let ratio = means[2] / means[1];
        goodput.push([means[1], means[2]]);
        row.push(Cell::num(ratio, 2));
        // Forward-link utilization with RCP-NewReno (variant 1) and RCP-STP (variant 2).
        for (vi, utils) in [(1, &mut newreno_util), (2, &mut stp_util)] {
            let start = (di * VARIANTS.len() + vi) * per;
            let util: Vec<f64> = results[start..start + per]
                .iter()
                .filter_map(|r| r.links.iter().find(|l| l.id == "sat:fwd"))
                .map(|l| l.utilization)
                .collect();
            let util = mean(&Estimate::from_sample(&util));
            utils.push(util);
            row.push(Cell::num(util * 100.0, 0));
        }
        rows.push(row);
    }
    report.section(
        "Satellite: RCP-STP (§3.4.3, Figure 5(c))",
        &format!(
            "S0 → D0 across a 1.5 Mb/s satellite link (queue 50 packets) with two backlogged TCP \
             flows in the reverse direction (the paper says \"backlogged TCP flows\" without a \
             number) and four HTTP-like sources each way (Pareto response \
             sizes, mean 12 KB, shape 1.2; exponential think times, mean 1 s); {duration} runs, \
             goodput of the measured transfer in Mb/s. RCP-NewReno and RCP-STP receivers talk to \
             the same, unmodified RCP sender. RCP-STP is our design (docs/RCP.md): initial \
             window 4, window growth compensated for the long RTT."
        ),
    );
    report.table(
        &[
            "one-way delay (ms)",
            VARIANTS[0].0,
            VARIANTS[1].0,
            VARIANTS[2].0,
            "STP / NewReno",
            "forward link busy with RCP-NewReno (%)",
            "with RCP-STP (%)",
        ],
        &rows,
    );
    chart::lines(
        &ctx.out_dir.join("satellite.svg"),
        &Axes {
            title: "Goodput over the satellite link",
            x: "one-way propagation delay (ms)",
            y: "goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &series,
    )?;
    report.image("satellite", "satellite.svg");
    report.claim(claim(&delays, &goodput, &newreno_util, &stp_util));
    Ok(())
}

/// The satellite claim, from RCP-NewReno's and RCP-STP's mean goodput (Mb/s) at each delay
/// (the forward link's utilization with each is reported beside it).
fn claim(delays: &[u64], goodput: &[[f64; 2]], newreno_util: &[f64], stp_util: &[f64]) -> Claim {
    let mut ev = Evidence::new();
    ev.some("delays", goodput.len());
    let ratios: Vec<f64> = delays
        .iter()
        .zip(goodput)
        .map(|(d, [newreno, stp])| {
            ev.num(&format!("RCP-STP at {d} ms"), *stp)
                / ev.positive(&format!("RCP-NewReno at {d} ms"), *newreno)
        })
        .collect();
    Claim::judged(
        "satellite-stp-well-above-newreno",
        "RCP-STP gets well above RCP-NewReno (at least 20 % more) at every delay",
        json!({"delay_ms": delays, "stp_over_newreno": ratios,
               "forward_utilization_with_newreno": newreno_util,
               "forward_utilization_with_stp": stp_util}),
        json!("RCP-STP much better than RCP-NewReno and TCP (Figure 5(c))"),
        ev,
        ratios.iter().all(|r| *r >= 1.2),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn the_claim_fails_when_a_goodput_is_missing_zero_or_not_finite() {
        let good = [0.8, 1.0, 0.6, 0.9];
        let make = |x: &[f64]| claim(&[50, 250], &[[x[0], x[1]], [x[2], x[3]]], &[], &[]);
        fails_when_spoilt(&good, 0..4, &NOT_FINITE, make);
        fails_when_spoilt(&good, [0, 2], &[0.0], make);
        assert_unmeasured(&claim(&[], &[], &[], &[]));
    }
}
