//! Figs. 6–8 (atl.txt §V-B1): throughput against the wireless loss rate p_w for three
//! wireless delays d_w.

use serde_json::json;

use super::scenarios::{duration_s, pw_dw_grid, seeds, single, template, TCP_PROTOCOLS};
use super::{mbps, mean, plot, run_grouped};
use crate::chart::{Axes, Series};
use crate::claims::Evidence;
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Claim, Ctx, LabError, Report};

/// Figs. 6–8: throughput vs p_w for three d_w.
pub(super) fn throughput(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "wireless-source.toml")?;
    let (pws, dws) = pw_dw_grid(ctx);
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &dw in dws {
        for &pw in pws {
            for (name, cc) in TCP_PROTOCOLS {
                for seed in 1..=seeds {
                    let label = format!("tput dw={dw}ms pw={pw} {name} seed={seed}");
                    jobs.push(single(&t, label, cc, pw, dw, duration_s(ctx), seed)?);
                }
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    // tput[dw][pw][proto] = samples (Mb/s)
    let mut tput: Vec<Vec<Vec<Vec<f64>>>> = Vec::new();
    for _ in dws {
        let mut rows = Vec::new();
        for _ in pws {
            let mut cells = Vec::new();
            for _ in TCP_PROTOCOLS {
                let g = it
                    .next()
                    .map(|g| g.iter().map(mbps).collect::<Vec<f64>>())
                    .unwrap_or_default();
                cells.push(g);
            }
            rows.push(cells);
        }
        tput.push(rows);
    }
    let mut text = String::from(
        "atl.txt Figs. 6–8. Paper: TCP-ATL ≈ the others at low p_w and far above them at high \
         p_w (at p_w = 5·10⁻²: +234 % over Westwood at d_w = 10 ms, +468 % at 50 ms; up to 7.6× \
         at 150 ms).",
    );
    let mut points = Vec::new();
    for (di, &dw) in dws.iter().enumerate() {
        let rows: Vec<Vec<Cell>> = pws
            .iter()
            .enumerate()
            .map(|(pi, pw)| {
                let mut r = vec![Cell::text(format!("{pw:e}"))];
                r.extend(tput[di][pi].iter().map(|s| Cell::est_of(s, 3)));
                let (a, w) = (mean(&tput[di][pi][0]), mean(&tput[di][pi][2]));
                let gain = 100.0 * (a / w - 1.0);
                r.push(Cell::shown(format!("{gain:+.0} %"), gain));
                r
            })
            .collect();
        report.section(
            &format!("Throughput vs p_w, d_w = {dw} ms (β = {})", beta_label(dw)),
            if di == 0 { &text } else { "" },
        );
        text.clear();
        report.table(
            &[
                "p_w",
                "TCP-ATL (Mb/s)",
                "NewReno (Mb/s)",
                "Westwood+ (Mb/s)",
                "ATL vs Westwood+",
            ],
            &rows,
        );
        let file = format!("throughput-dw{dw}.svg");
        let series = TCP_PROTOCOLS
            .iter()
            .enumerate()
            .map(|(k, (name, _))| {
                let points = pws
                    .iter()
                    .enumerate()
                    .map(|(pi, &pw)| (pw, Estimate::from_sample(&tput[di][pi][k])));
                Series::of_estimates(*name, points)
            })
            .collect();
        let title = format!("Throughput vs p_w, d_w = {dw} ms");
        plot(
            ctx,
            &file,
            &Axes {
                title: &title,
                x: "p_w",
                y: "goodput (Mb/s)",
                log_x: true,
                y_from_zero: true,
            },
            series,
        )?;
        report.image(&title, &file);
        for (pi, &pw) in pws.iter().enumerate() {
            let [atl, newreno, westwood] = [0, 1, 2].map(|k| mean(&tput[di][pi][k]));
            points.push(Point {
                dw,
                pw,
                atl,
                newreno,
                westwood,
            });
        }
    }
    report.extend(claims(&points));
    Ok(())
}

/// The mean throughputs (Mb/s) at one (d_w, p_w).
#[derive(Debug, Clone, Copy)]
struct Point {
    dw: u32,
    pw: f64,
    atl: f64,
    newreno: f64,
    westwood: f64,
}

/// The three throughput claims: above both at p_w ≥ 10⁻², equal to each within 5 % at
/// p_w ≤ 10⁻⁵.
fn claims(points: &[Point]) -> [Claim; 3] {
    let (mut high, mut low_nr, mut low_ww) = (Vec::new(), Vec::new(), Vec::new());
    let mut gains = serde_json::Map::new();
    let (mut ev_high, mut ev_nr, mut ev_ww) = (Evidence::new(), Evidence::new(), Evidence::new());
    let (mut high_ok, mut nr_ok, mut ww_ok) = (true, true, true);
    for p in points {
        let (dw, pw, a, n, w) = (p.dw, p.pw, p.atl, p.newreno, p.westwood);
        let at = |who: &str| format!("{who} at d_w = {dw} ms, p_w = {pw}");
        if pw >= 1e-2 {
            let (a, n, w) = (
                ev_high.num(&at("TCP-ATL"), a),
                ev_high.num(&at("NewReno"), n),
                ev_high.num(&at("Westwood+"), w),
            );
            high_ok &= a > n && a > w;
            high.push(
                json!({"d_w_ms": dw, "p_w": pw, "atl": a, "newreno": n, "westwood": w,
                "holds": a > n && a > w}),
            );
        }
        if pw <= 1e-5 {
            let n_diff =
                (ev_nr.num(&at("TCP-ATL"), a) - n).abs() / ev_nr.positive(&at("NewReno"), n);
            let w_diff =
                (ev_ww.num(&at("TCP-ATL"), a) - w).abs() / ev_ww.positive(&at("Westwood+"), w);
            nr_ok &= n_diff <= 0.05;
            ww_ok &= w_diff <= 0.05;
            low_nr.push(json!({"d_w_ms": dw, "p_w": pw, "atl": a, "newreno": n,
                "rel_diff": n_diff}));
            low_ww.push(json!({"d_w_ms": dw, "p_w": pw, "atl": a, "westwood": w,
                "rel_diff": w_diff}));
        }
        if (pw - 5e-2).abs() < 1e-12 {
            gains.insert(format!("d_w={dw}ms"), json!(100.0 * (a / w - 1.0)));
        }
    }
    ev_high.some("points at p_w ≥ 10⁻²", high.len());
    ev_nr.some("points at p_w ≤ 10⁻⁵", low_nr.len());
    ev_ww.some("points at p_w ≤ 10⁻⁵", low_ww.len());
    [
        Claim::judged(
            "tput-high-pw",
            "At high wireless loss (p_w ≥ 10⁻²) TCP-ATL's throughput is above NewReno's and \
             Westwood+'s, for every d_w",
            json!({"points": high, "atl_gain_over_westwood_pct_at_pw_5e-2": gains}),
            json!({"atl_gain_over_westwood_pct_at_pw_5e-2": {"d_w=10ms": 234, "d_w=50ms": 468,
                "d_w=150ms": "up to 7.6x"}}),
            ev_high,
            high_ok,
        ),
        Claim::judged(
            "tput-low-pw-newreno",
            "As p_w → 0 (p_w ≤ 10⁻⁵) TCP-ATL and NewReno are equal within 5 %, for every d_w",
            json!(low_nr),
            json!("TCP-ATL ≈ the other protocols at low p_w (Figs. 6–8)"),
            ev_nr,
            nr_ok,
        ),
        Claim::judged(
            "tput-low-pw-westwood",
            "As p_w → 0 (p_w ≤ 10⁻⁵) TCP-ATL and Westwood+ are equal within 5 %, for every d_w",
            json!(low_ww),
            json!("TCP-ATL ≈ TCP-Westwood at low p_w (Figs. 6–8)"),
            ev_ww,
            ww_ok,
        ),
    ]
}

fn beta_label(dw: u32) -> &'static str {
    match dw {
        0 => "0.5",
        1..=49 => "0.75",
        50..=149 => "0.80",
        _ => "0.85",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    /// One low and one high p_w at d_w = 10 ms: inputs ATL, NewReno, Westwood+ at each.
    fn points(x: &[f64]) -> Vec<Point> {
        [(1e-5, 0), (5e-2, 3)]
            .iter()
            .map(|&(pw, k)| Point {
                dw: 10,
                pw,
                atl: x[k],
                newreno: x[k + 1],
                westwood: x[k + 2],
            })
            .collect()
    }

    #[test]
    fn each_claim_fails_when_a_throughput_it_reads_is_missing_zero_or_not_finite() {
        let good = [1.80, 1.80, 1.79, 1.2, 0.5, 0.6];
        let claim = |k: usize| move |x: &[f64]| claims(&points(x))[k].clone();
        fails_when_spoilt(&good, 3..6, &NOT_FINITE, claim(0));
        fails_when_spoilt(&good, [0, 1], &NOT_FINITE, claim(1));
        fails_when_spoilt(&good, [1], &[0.0], claim(1));
        fails_when_spoilt(&good, [0, 2], &NOT_FINITE, claim(2));
        fails_when_spoilt(&good, [2], &[0.0], claim(2));
        for c in claims(&[]) {
            assert_unmeasured(&c);
        }
    }
}
