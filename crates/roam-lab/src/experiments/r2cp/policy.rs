//! §4.4.3, Figure 11(d): policy-based aggregation. A token bucket at 720 kb/s; the secondary
//! pipe (RCP-2) may use only the tokens the primary (RCP-1) leaves; background traffic makes
//! RCP-1 fluctuate, and the aggregate should stay steady while RCP-2 mirrors RCP-1.

use serde_json::json;

use super::observe::{path_rate, Observer};
use super::{all_finite, mean, mean_cov, param, path, run_traced, seeds, show, template};
use super::{judge, text_table};
use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// The target rate (kb/s).
const TARGET_KBPS: f64 = 720.0;
/// Bins before this are the start-up, left out of the statistics (s).
const WARMUP_S: usize = 5;

/// Pearson correlation of two equally long samples (NaN when either is constant).
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n < 2 {
        return f64::NAN;
    }
    let (ma, mb) = (
        a[..n].iter().sum::<f64>() / n as f64,
        b[..n].iter().sum::<f64>() / n as f64,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (x, y) = (a[i] - ma, b[i] - mb);
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    if saa > 0.0 && sbb > 0.0 {
        sab / (saa * sbb).sqrt()
    } else {
        f64::NAN
    }
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let seeds = seeds(ctx);
    let secs: usize = ctx.pick(30, 120);
    let mut sets = Vec::new();
    for &seed in &seeds {
        let mut p = path("wifi", 1.0, 30.0);
        p.extend(path("cell", 1.0, 30.0));
        p.extend([
            param("flow.f.r2cp.policy_rate", format!("{TARGET_KBPS}kbps")),
            param("flow.f.r2cp.pipe.1.role", "secondary"),
            param("flow.bg1_{i}.count", "3"),
            param("flow.bg1_{i}.on_time", "1s"),
            param("flow.bg1_{i}.off_time", "2s"),
            param("run.duration", format!("{secs}s")),
            param("run.seed", seed.to_string()),
        ]);
        sets.push((format!("policy seed={seed}"), p));
    }
    let observer = Observer::new("f", &["wifi", "cell"]);
    let runs = run_traced(&t, sets, &observer)?;
    let (mut covs, mut corrs, mut means) = (Vec::new(), Vec::new(), Vec::new());
    let mut rows = Vec::new();
    for (seed, (r, o)) in seeds.iter().zip(&runs) {
        let agg: Vec<f64> = r
            .series
            .iter()
            .find(|s| s.id == "f")
            .map(|s| s.throughput_bps.iter().map(|b| b / 1e6).collect())
            .unwrap_or_default();
        let p1 = path_rate(&o.arrivals, Some(0), 1.0, secs as f64);
        let p2 = path_rate(&o.arrivals, Some(1), 1.0, secs as f64);
        let steady = |v: &[f64]| v.get(WARMUP_S..).unwrap_or(&[]).to_vec();
        let (m, cov) = mean_cov(&steady(&agg));
        let (m1, cov1) = mean_cov(&steady(&p1));
        let corr = correlation(&steady(&p1), &steady(&p2));
        covs.push(cov);
        corrs.push(corr);
        means.push(m * 1000.0);
        rows.push(vec![
            seed.to_string(),
            num(m * 1000.0, 0),
            num(cov, 3),
            num(m1 * 1000.0, 0),
            num(cov1, 3),
            num(corr, 2),
        ]);
    }
    report.section(
        "Policy-based aggregation (§4.4.3, Figure 11(d))",
        &format!(
            "Target {TARGET_KBPS} kb/s (token bucket, depth 4 segments); pipe 1 primary, pipe \
             2 secondary (only the tokens pipe 1 leaves). Both wireless hops 1 Mb/s, 30 ms RTT \
             (the testbed's WLANs; the paper gives no rates); three Pareto on/off UDP sources \
             contend with pipe 1 (500 kb/s bursts, mean burst 1 s, idle 2 s, shape 1.5). \
             {secs} s runs, statistics of 1 s bins after the first {WARMUP_S} s. Per-pipe rates \
             are DATA payload arrivals on each wireless hop (packet trace)."
        ),
    );
    text_table(
        report,
        &[
            "seed",
            "aggregate (kb/s)",
            "aggregate CoV",
            "pipe 1 (kb/s)",
            "pipe 1 CoV",
            "corr(pipe 1, pipe 2)",
        ],
        &rows,
    );
    if let Some((r, o)) = runs.first() {
        let agg: Vec<(f64, f64)> = r
            .series
            .iter()
            .find(|s| s.id == "f")
            .map(|s| {
                s.time_s
                    .iter()
                    .zip(&s.throughput_bps)
                    .map(|(t, b)| (*t, b / 1e3))
                    .collect()
            })
            .unwrap_or_default();
        let bins = |k| {
            path_rate(&o.arrivals, Some(k), 1.0, secs as f64)
                .iter()
                .enumerate()
                .map(|(i, x)| (i as f64 + 1.0, x * 1000.0))
                .collect::<Vec<_>>()
        };
        chart::lines(
            &ctx.out_dir.join("policy.svg"),
            &Axes {
                title: "Policy-based aggregation at 720 kb/s (seed 1, 1 s bins)",
                x: "time (s)",
                y: "throughput (kb/s)",
                log_x: false,
                y_from_zero: true,
            },
            &[
                Series::new("aggregate (in order)", agg),
                Series::new("pipe 1 (primary)", bins(0)),
                Series::new("pipe 2 (secondary)", bins(1)),
            ],
        )?;
        report.image("policy-based aggregation", "policy.svg");
    }
    let (ec, er, em) = (
        Estimate::from_sample(&covs),
        Estimate::from_sample(&corrs),
        Estimate::from_sample(&means),
    );
    report.claim(judge(
        "policy-aggregate-steady",
        "With a 720 kb/s target and background on pipe 1, the aggregate is steady: the CoV of \
         its 1 s bins is below 0.1 (every seed) and its mean within 5 % of the target",
        json!({"cov_per_seed": covs, "cov_mean": show(&ec, 3), "aggregate_kbps_mean": mean(&em)}),
        json!("the aggregate throughput is relatively constant despite the fluctuations in RCP-1 (Figure 11(d))"),
        &[("CoV per seed", &covs[..]), ("mean per seed", &means[..])],
        all_finite(&covs, |c| c < 0.1)
            && all_finite(&means, |m| (m / TARGET_KBPS - 1.0).abs() <= 0.05),
    ));
    report.claim(judge(
        "policy-pipe2-mirrors-pipe1",
        "Pipe 2 mirrors pipe 1: the correlation of their 1 s rates is at most -0.7 in every seed",
        json!({"correlation_per_seed": corrs, "correlation_mean": show(&er, 2)}),
        json!("the amount of data transferred using the RCP-2 pipe mirrors that of the RCP-1 pipe (Figure 11(d))"),
        &[("correlation per seed", &corrs[..])],
        all_finite(&corrs, |c| c <= -0.7),
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::correlation;

    #[test]
    fn correlation_of_mirrors_is_minus_one() {
        let c = correlation(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]);
        assert!((c + 1.0).abs() < 1e-12);
        assert!(correlation(&[1.0, 1.0], &[1.0, 2.0]).is_nan());
    }
}
