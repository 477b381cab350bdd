//! §4.4.3, Figure 12(d): ten Pareto on/off flows on each pipe, burst 0.1φ s and idle 0.2φ s
//! (φ, the fluctuation index, from 1 to 50), the rest as in §3.4.1.

use serde_json::json;

use super::{
    all_finite, duration_s, main_goodput, mean, param, path, ratio, run_all, seeds, show, single,
    template, Params,
};
use super::{judge, text_table};
use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// Background flows per pipe.
const FLOWS: usize = 10;

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let phis: Vec<f64> = ctx.pick(
        vec![1.0, 10.0, 50.0],
        vec![1.0, 5.0, 10.0, 20.0, 30.0, 50.0],
    );
    let seeds = seeds(ctx);
    let variants: [(&str, Params); 3] = [
        ("R²CP", vec![param("flow.f.r2cp.scheme", "r2cp")]),
        ("single path 1", single(0)),
        ("single path 2", single(1)),
    ];
    let mut sets = Vec::new();
    for &phi in &phis {
        for (name, v) in &variants {
            for &seed in &seeds {
                let mut p = path("wifi", 4.0, 30.0);
                p.extend(path("cell", 4.0, 30.0));
                p.extend(v.iter().cloned());
                for bg in ["bg1_{i}", "bg2_{i}"] {
                    p.push(param(format!("flow.{bg}.count"), FLOWS.to_string()));
                    p.push(param(
                        format!("flow.{bg}.on_time"),
                        format!("{}ms", (100.0 * phi).round()),
                    ));
                    p.push(param(
                        format!("flow.{bg}.off_time"),
                        format!("{}ms", (200.0 * phi).round()),
                    ));
                }
                p.push(param("run.duration", format!("{}s", duration_s(ctx))));
                p.push(param("run.seed", seed.to_string()));
                sets.push((format!("fluctuation φ={phi} {name} seed={seed}"), p));
            }
        }
    }
    let results = run_all(ctx, &t, sets)?;
    let per = seeds.len();
    let mut rows = Vec::new();
    let mut fractions = Vec::new();
    let mut ideal_s = Series::new("ideal", Vec::new());
    let mut r2cp_s = Series::new("R²CP", Vec::new());
    for (i, &phi) in phis.iter().enumerate() {
        let at = |v: usize| &results[(i * 3 + v) * per..(i * 3 + v + 1) * per];
        let r2cp: Vec<f64> = at(0).iter().map(main_goodput).collect();
        let ideal: Vec<f64> = at(1)
            .iter()
            .zip(at(2))
            .map(|(a, b)| main_goodput(a) + main_goodput(b))
            .collect();
        let (er, ei) = (Estimate::from_sample(&r2cp), Estimate::from_sample(&ideal));
        let f = ratio(mean(&er), mean(&ei));
        fractions.push(f);
        ideal_s.push_estimate(phi, &ei);
        r2cp_s.push_estimate(phi, &er);
        rows.push(vec![
            num(phi, 0),
            show(&ei, 3),
            show(&er, 3),
            num(100.0 * f, 1),
        ]);
    }
    report.section(
        "Fluctuating bandwidth (§4.4.3, Figure 12(d))",
        &format!(
            "Both paths 4 Mb/s, 30 ms RTT; {FLOWS} Pareto on/off UDP flows on each wireless \
             hop (500 kb/s bursts, shape 1.5, as in §3.4.1; mean burst 0.1φ s, mean idle \
             0.2φ s), {} seeds, {} s runs. Ideal = the two single-path RCP goodputs with the \
             same background, per seed. The paper: R²CP closely tracks the ideal.",
            per,
            duration_s(ctx)
        ),
    );
    text_table(
        report,
        &[
            "fluctuation index φ",
            "ideal (Mb/s)",
            "R²CP (Mb/s)",
            "R²CP / ideal (%)",
        ],
        &rows,
    );
    chart::lines(
        &ctx.out_dir.join("fluctuation.svg"),
        &Axes {
            title: "Aggregate goodput under on/off background",
            x: "fluctuation index φ",
            y: "goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &[ideal_s, r2cp_s],
    )?;
    report.image("fluctuation", "fluctuation.svg");
    report.claim(judge(
        "fluctuation-r2cp-within-15pct",
        "With 10 Pareto on/off flows per pipe, R²CP is within 15 % of the ideal at every \
         fluctuation index from 1 to 50",
        json!({"phi": phis, "r2cp_of_ideal": fractions}),
        json!("despite such fluctuations R²CP closely tracks the ideal (Figure 12(d))"),
        &[("R²CP of ideal", &fractions[..])],
        all_finite(&fractions, |x| x >= 0.85),
    ));
    Ok(())
}
