//! §4.4.3, Figure 12(a)-(c): two pipes to two servers with a bandwidth mismatch (4 Mb/s +
//! 1-6 Mb/s) and with an RTT mismatch (30 ms + 30-210 ms); the share of arrivals that find
//! the receive buffer at least 75 % full, per scheme.

use serde_json::json;

use super::observe::{reassemble, Observer};
use super::{
    all_finite, duration_s, main_goodput, param, path, ratio, run_all, run_traced, single,
    template, Params,
};
use super::{judge, text_table};
use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::{Ctx, LabError, Report};

/// The schemes compared (`flow.f.r2cp.scheme`).
pub(super) const SCHEMES: [(&str, &str); 3] =
    [("R²CP", "r2cp"), ("R²CP-s", "r2cp-s"), ("APPS", "apps")];

/// Receive buffer of the §4.4.3 runs (bytes; the template's).
const BUFFER: u64 = 262_144;

/// The five runs of one sweep point: the three schemes, then single-path RCP on each path.
fn point(ctx: &Ctx, label: &str, paths: &Params) -> Vec<(String, Params)> {
    let mut base = paths.clone();
    base.push(param("run.duration", format!("{}s", duration_s(ctx))));
    let mut sets = Vec::new();
    for (name, scheme) in SCHEMES {
        let mut p = base.clone();
        p.push(param("flow.f.r2cp.scheme", scheme));
        sets.push((format!("{label} {name}"), p));
    }
    for k in 0..2 {
        let mut p = base.clone();
        p.extend(single(k));
        sets.push((format!("{label} single path {}", k + 1), p));
    }
    sets
}

/// Goodputs (Mb/s) of one point: schemes in [`SCHEMES`] order, then the ideal.
fn goodputs(results: &[roam_sim::result::RunResult]) -> ([f64; 3], f64) {
    let g: Vec<f64> = results.iter().map(main_goodput).collect();
    ([g[0], g[1], g[2]], g[3] + g[4])
}

pub(super) fn bandwidth(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let rates: Vec<f64> = ctx.pick(vec![1.0, 3.0, 6.0], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let mut sets = Vec::new();
    for &r in &rates {
        let mut paths = path("wifi", 4.0, 30.0);
        paths.extend(path("cell", r, 30.0));
        sets.extend(point(ctx, &format!("bandwidth 4+{r} Mb/s"), &paths));
    }
    let results = run_all(ctx, &t, sets)?;
    let mut rows = Vec::new();
    let mut series: Vec<Series> = ["ideal", "R²CP", "R²CP-s", "APPS"]
        .iter()
        .map(|n| Series::new(*n, Vec::new()))
        .collect();
    let mut fractions: [Vec<f64>; 3] = Default::default();
    for (i, &r) in rates.iter().enumerate() {
        let (g, ideal) = goodputs(&results[i * 5..i * 5 + 5]);
        series[0].points.push((r, ideal));
        let mut row = vec![num(r, 0), num(ideal, 3)];
        for (k, &x) in g.iter().enumerate() {
            series[k + 1].points.push((r, x));
            fractions[k].push(ratio(x, ideal));
            row.push(format!(
                "{} ({} %)",
                num(x, 3),
                num(100.0 * ratio(x, ideal), 1)
            ));
        }
        rows.push(row);
    }
    report.section(
        "Bandwidth mismatch (§4.4.3, Figure 12(a))",
        &format!(
            "Path 1: 4 Mb/s; path 2: 1-6 Mb/s; both 30 ms RTT (the paper gives the rates \
             only; 30 ms is Figure 12(b)'s path 1). Goodput in Mb/s over {} s, and the share \
             of the ideal. The paper: R²CP and R²CP-s achieve the ideal irrespective of the \
             mismatch; application striping (APPS) does not.",
            duration_s(ctx)
        ),
    );
    text_table(
        report,
        &["path 2 (Mb/s)", "ideal", "R²CP", "R²CP-s", "APPS"],
        &rows,
    );
    chart::lines(
        &ctx.out_dir.join("bandwidth_mismatch.svg"),
        &Axes {
            title: "Aggregate goodput, bandwidth mismatch",
            x: "bandwidth of path 2 (Mb/s; path 1: 4 Mb/s)",
            y: "goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &series,
    )?;
    report.image("bandwidth mismatch", "bandwidth_mismatch.svg");
    let [r2cp, fcfs, apps] = fractions;
    report.claim(judge(
        "bandwidth-r2cp-ideal",
        "With 4 Mb/s + 1-6 Mb/s, R²CP and R²CP-s reach at least 95 % of the ideal at every point",
        json!({"path2_mbps": rates, "r2cp_of_ideal": r2cp, "r2cp_s_of_ideal": fcfs}),
        json!("R²CP and R²CP-s achieve the ideal irrespective of the mismatch (Figure 12(a))"),
        &[("R²CP of ideal", &r2cp[..]), ("R²CP-s of ideal", &fcfs[..])],
        all_finite(&r2cp, |x| x >= 0.95) && all_finite(&fcfs, |x| x >= 0.95),
    ));
    let mismatched: Vec<f64> = rates
        .iter()
        .zip(&apps)
        .filter(|(r, _)| (**r - 4.0).abs() > 1e-9)
        .map(|(_, a)| *a)
        .collect();
    report.claim(judge(
        "bandwidth-apps-below",
        "APPS stays below 95 % of the ideal wherever the two bandwidths differ",
        json!({"path2_mbps": rates, "apps_of_ideal": apps}),
        json!("application striping fails to achieve the desired performance (Figure 12(a))"),
        &[("APPS of ideal where rates differ", &mismatched[..])],
        all_finite(&mismatched, |x| x < 0.95),
    ));
    Ok(())
}

pub(super) fn rtt(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let rtts: Vec<f64> = ctx.pick(
        vec![30.0, 90.0, 150.0, 210.0],
        vec![30.0, 60.0, 90.0, 120.0, 150.0, 180.0, 210.0],
    );
    let mut sets = Vec::new();
    for &rtt in &rtts {
        let mut paths = path("wifi", 4.0, 30.0);
        paths.extend(path("cell", 4.0, rtt));
        sets.extend(point(ctx, &format!("rtt 30+{rtt} ms"), &paths));
    }
    let observer = Observer::new("f", &["wifi", "cell"]);
    let traced = run_traced(&t, sets, &observer)?;
    let mut rows = Vec::new();
    let mut rows75 = Vec::new();
    let mut series: Vec<Series> = ["ideal", "R²CP", "R²CP-s", "APPS"]
        .iter()
        .map(|n| Series::new(*n, Vec::new()))
        .collect();
    let mut s75: Vec<Series> = SCHEMES
        .iter()
        .map(|(n, _)| Series::new(*n, Vec::new()))
        .collect();
    let mut fractions: [Vec<f64>; 3] = Default::default();
    let mut shares: [Vec<f64>; 3] = Default::default();
    for (i, &rtt) in rtts.iter().enumerate() {
        let chunk = &traced[i * 5..i * 5 + 5];
        let results: Vec<_> = chunk.iter().map(|(r, _)| r.clone()).collect();
        let (g, ideal) = goodputs(&results);
        series[0].points.push((rtt / 30.0, ideal));
        let mut row = vec![num(rtt, 0), num(rtt / 30.0, 0), num(ideal, 3)];
        let mut row75 = vec![num(rtt, 0)];
        for (k, &x) in g.iter().enumerate() {
            series[k + 1].points.push((rtt / 30.0, x));
            fractions[k].push(ratio(x, ideal));
            row.push(format!(
                "{} ({} %)",
                num(x, 3),
                num(100.0 * ratio(x, ideal), 1)
            ));
            let re = reassemble(&chunk[k].1.arrivals, 0, BUFFER);
            let share = if re.arrivals > 0 {
                100.0 * re.arrivals_75 as f64 / re.arrivals as f64
            } else {
                f64::NAN
            };
            shares[k].push(share);
            s75[k].points.push((rtt / 30.0, share));
            row75.push(num(share, 1));
        }
        rows.push(row);
        rows75.push(row75);
    }
    report.section(
        "RTT mismatch (§4.4.3, Figure 12(b))",
        &format!(
            "Both paths 4 Mb/s (the paper gives the RTTs only); path 1: 30 ms RTT, path 2: \
             30-210 ms. Goodput in Mb/s over {} s and the share of the ideal. The paper: R²CP \
             closely tracks the ideal; R²CP-s fails to scale once the RTT ratio exceeds 3.",
            duration_s(ctx)
        ),
    );
    text_table(
        report,
        &[
            "path 2 RTT (ms)",
            "RTT ratio",
            "ideal",
            "R²CP",
            "R²CP-s",
            "APPS",
        ],
        &rows,
    );
    chart::lines(
        &ctx.out_dir.join("rtt_mismatch.svg"),
        &Axes {
            title: "Aggregate goodput, RTT mismatch",
            x: "RTT ratio (path 2 / path 1, path 1: 30 ms)",
            y: "goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &series,
    )?;
    report.image("RTT mismatch", "rtt_mismatch.svg");
    report.section(
        "Arrivals that find the buffer 75 % full (§4.4.3, Figure 12(c))",
        "Share (%) of DATA arrivals carrying new bytes that found at least 75 % of the 256 KB \
         receive buffer held (out-of-order data: the application reads in-order data at once), \
         rebuilt from the packet trace of the runs above. The paper: APPS high throughout, \
         R²CP-s growing with the mismatch, R²CP low.",
    );
    text_table(
        report,
        &["path 2 RTT (ms)", "R²CP", "R²CP-s", "APPS"],
        &rows75,
    );
    chart::lines(
        &ctx.out_dir.join("buffer_75.svg"),
        &Axes {
            title: "Arrivals finding the buffer ≥ 75 % full",
            x: "RTT ratio (path 2 / path 1)",
            y: "arrivals (%)",
            log_x: false,
            y_from_zero: true,
        },
        &s75,
    )?;
    report.image("buffer 75 % full", "buffer_75.svg");
    let ratios: Vec<f64> = rtts.iter().map(|r| r / 30.0).collect();
    let [r2cp, fcfs, _] = &fractions;
    report.claim(judge(
        "rtt-r2cp-near-ideal",
        "With 30 ms + 30-210 ms RTTs, R²CP reaches at least 90 % of the ideal at every point",
        json!({"rtt_ratio": ratios, "r2cp_of_ideal": r2cp}),
        json!("R²CP closely tracks the ideal (Figure 12(b))"),
        &[("R²CP of ideal", &r2cp[..])],
        all_finite(r2cp, |x| x >= 0.90),
    ));
    let beyond3: Vec<f64> = ratios
        .iter()
        .zip(fcfs)
        .filter(|(r, _)| **r > 3.0 + 1e-9)
        .map(|(_, f)| *f)
        .collect();
    report.claim(judge(
        "rtt-r2cp-s-falls-beyond-3",
        "R²CP-s falls clearly below the ideal (under 85 %) at every RTT ratio above 3",
        json!({"rtt_ratio": ratios, "r2cp_s_of_ideal": fcfs}),
        json!("R²CP-s fails to scale when the RTT mismatch increases beyond 3 (Figure 12(b))"),
        &[("R²CP-s of ideal beyond ratio 3", &beyond3[..])],
        all_finite(&beyond3, |x| x < 0.85),
    ));
    let last = |v: &Vec<f64>| v.last().copied().unwrap_or(f64::NAN);
    let (a, b, c) = (last(&shares[0]), last(&shares[1]), last(&shares[2]));
    report.claim(judge(
        "rtt-buffer-75-r2cp-lowest",
        "At the largest RTT mismatch fewer arrivals find the buffer 75 % full with R²CP than \
         with R²CP-s, and fewer with R²CP-s than with APPS",
        json!({"rtt_ratio": ratios, "r2cp_pct": shares[0], "r2cp_s_pct": shares[1], "apps_pct": shares[2]}),
        json!("APPS high; R²CP-s builds up with the mismatch; R²CP stays low (Figure 12(c))"),
        &[("shares at the largest mismatch", &[a, b, c])],
        a.is_finite() && b.is_finite() && c.is_finite() && a < b && b < c,
    ));
    buffer_sizes(ctx, report)
}

/// The buffer sizes behind Figure 12(b): R²CP and R²CP-s at the largest RTT mismatch.
fn buffer_sizes(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let kbs: Vec<u64> = ctx.pick(vec![128, 1024], vec![64, 128, 256, 512, 1024, 4096]);
    let mut sets = Vec::new();
    for &kb in &kbs {
        for (name, scheme) in &SCHEMES[..2] {
            let mut p = path("wifi", 4.0, 30.0);
            p.extend(path("cell", 4.0, 210.0));
            p.push(param("run.duration", format!("{}s", duration_s(ctx))));
            p.push(param("flow.f.r2cp.scheme", *scheme));
            p.push(param("flow.f.rcp.recv_buffer", (kb * 1024).to_string()));
            sets.push((format!("buffer {kb} KB {name}"), p));
        }
    }
    let results = run_all(ctx, &t, sets)?;
    let rows: Vec<Vec<String>> = kbs
        .iter()
        .enumerate()
        .map(|(i, kb)| {
            vec![
                kb.to_string(),
                num(main_goodput(&results[2 * i]), 3),
                num(main_goodput(&results[2 * i + 1]), 3),
            ]
        })
        .collect();
    report.section(
        "Receive buffer at the largest RTT mismatch (not in the paper)",
        "Goodput (Mb/s) at 30 ms + 210 ms, both paths 4 Mb/s, by receive-buffer size: what the \
         Figure 12(b) claims depend on.",
    );
    text_table(report, &["receive buffer (KB)", "R²CP", "R²CP-s"], &rows);
    Ok(())
}
