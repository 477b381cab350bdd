//! Figs. 12–14 and 17 (atl.txt §V-B3): RCP-ATL against a rate AIMD (1, ½) in RAP's role.

use roam_sim::result::RunResult;
use serde_json::json;

use super::scenarios::{duration_s, pw_dw_grid, seeds, single, template, MEDIA_PROTOCOLS};
use super::{mbps, mean, plot, run_grouped};
use crate::chart::{Axes, Series};
use crate::claims::Evidence;
use crate::report::Cell;
use crate::{Claim, Ctx, LabError, Report};

/// Figs. 12–14 and 17.
pub(super) fn media(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "media.toml")?;
    let (pws, dws) = pw_dw_grid(ctx);
    // Fig. 17's point (d_w = 10 ms, p_w = 10⁻⁴) is always included.
    let mut pws = pws.to_vec();
    if !pws.contains(&1e-4) {
        pws.push(1e-4);
        pws.sort_by(f64::total_cmp);
    }
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &dw in dws {
        for &pw in &pws {
            for (name, cc) in MEDIA_PROTOCOLS {
                for seed in 1..=seeds {
                    let label = format!("media dw={dw}ms pw={pw} {name} seed={seed}");
                    jobs.push(single(&t, label, cc, pw, dw, duration_s(ctx), seed)?);
                }
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    let jitter_ms = |r: &RunResult| {
        r.flows
            .first()
            .and_then(|f| f.media)
            .map_or(f64::NAN, |m| m.mean_jitter_s * 1e3)
    };
    let mut points = Vec::new();
    let mut integrity = 0u64;
    report.section(
        "RCP-ATL goodput and jitter (Figs. 12–14, 17)",
        "Media flows over the same topology: RCP-ATL against the plain rate AIMD (1, ½) in the \
         role of RAP. Paper: RCP-ATL keeps its goodput for p_w < 10⁻² (slight degradation above) \
         and is unaffected by d_w; its packets see much lower jitter than RAP's (Fig. 17, \
         d_w = 10 ms, p_w = 10⁻⁴). Jitter = mean |d_i − d_{i−1}| of consecutive received \
         packets' one-way delays.",
    );
    for &dw in dws {
        let mut rows = Vec::new();
        let mut series = vec![Vec::new(), Vec::new()];
        for &pw in &pws {
            let cells: Vec<&Vec<RunResult>> =
                MEDIA_PROTOCOLS.iter().filter_map(|_| it.next()).collect();
            let g: Vec<Vec<f64>> = cells.iter().map(|c| c.iter().map(mbps).collect()).collect();
            let j: Vec<Vec<f64>> = cells
                .iter()
                .map(|c| c.iter().map(jitter_ms).collect())
                .collect();
            integrity += cells
                .iter()
                .flat_map(|c| c.iter())
                .flat_map(|r| r.flows.iter())
                .map(|f| f.integrity_errors)
                .sum::<u64>();
            let (ga, gr) = (mean(&g[0]), mean(&g[1]));
            let (ja, jr) = (mean(&j[0]), mean(&j[1]));
            series[0].push((pw, ga));
            series[1].push((pw, gr));
            points.push(Point {
                dw,
                pw,
                goodput: [ga, gr],
                jitter_ms: [ja, jr],
            });
            rows.push(vec![
                Cell::text(format!("{pw:e}")),
                Cell::est_of(&g[0], 3),
                Cell::est_of(&g[1], 3),
                Cell::est_of(&j[0], 3),
                Cell::est_of(&j[1], 3),
            ]);
        }
        report.section(&format!("Media, d_w = {dw} ms"), "");
        report.table(
            &[
                "p_w",
                "RCP-ATL goodput (Mb/s)",
                "AIMD goodput (Mb/s)",
                "RCP-ATL jitter (ms)",
                "AIMD jitter (ms)",
            ],
            &rows,
        );
        let file = format!("media-goodput-dw{dw}.svg");
        let title = format!("Media goodput vs p_w, d_w = {dw} ms");
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
            MEDIA_PROTOCOLS
                .iter()
                .zip(series)
                .map(|((name, _), points)| Series::new(*name, points))
                .collect(),
        )?;
        report.image(&title, &file);
    }
    report.section(
        "Media integrity",
        &format!("Payload bytes that differed from what the sources sent: {integrity}."),
    );
    report.extend(claims(&points));
    Ok(())
}

/// RCP-ATL's and the rate AIMD's mean goodput (Mb/s) and jitter (ms) at one (d_w, p_w).
#[derive(Debug, Clone, Copy)]
struct Point {
    dw: u32,
    pw: f64,
    goodput: [f64; 2],
    jitter_ms: [f64; 2],
}

/// The goodput claim (every p_w ≤ 10⁻² keeps 90 % of the goodput at the first, lowest p_w of
/// its d_w) and the jitter claim (Fig. 17's point), on points in d_w-major, p_w-ascending order.
fn claims(points: &[Point]) -> [Claim; 2] {
    let mut ev = Evidence::new();
    let mut ok = true;
    let mut goodput = Vec::new();
    let mut lowest: Option<(u32, f64)> = None;
    for p in points {
        let base = match lowest {
            Some((dw, g)) if dw == p.dw => g,
            _ => {
                let g = ev.positive(
                    &format!("RCP-ATL goodput at d_w = {} ms, lowest p_w", p.dw),
                    p.goodput[0],
                );
                lowest = Some((p.dw, g));
                g
            }
        };
        if p.pw <= 1e-2 {
            let ga = ev.num(
                &format!("RCP-ATL goodput at d_w = {} ms, p_w = {}", p.dw, p.pw),
                p.goodput[0],
            );
            let kept = ga / base;
            ok &= kept >= 0.9;
            goodput.push(json!({"d_w_ms": p.dw, "p_w": p.pw, "rcp_atl": ga,
                "fraction_of_lowest_p_w": kept, "aimd": p.goodput[1]}));
        }
    }
    ev.some("points at p_w ≤ 10⁻²", goodput.len());
    let goodput = Claim::judged(
        "rcp-goodput",
        "RCP-ATL keeps its goodput for p_w ≤ 10⁻² (at least 90 % of its goodput at the lowest \
         p_w), for every d_w",
        json!(goodput),
        json!("goodput maintained for p_w < 10⁻², unaffected by d_w (Figs. 12–14)"),
        ev,
        ok,
    );
    let fig17 = points
        .iter()
        .find(|p| p.dw == 10 && (p.pw - 1e-4).abs() < 1e-12)
        .map_or([f64::NAN; 2], |p| p.jitter_ms);
    let mut ev = Evidence::new();
    let (ja, jr) = (
        ev.num("RCP-ATL jitter at d_w = 10 ms, p_w = 10⁻⁴", fig17[0]),
        ev.num("rate AIMD jitter at d_w = 10 ms, p_w = 10⁻⁴", fig17[1]),
    );
    let all: Vec<_> = points
        .iter()
        .map(|p| {
            json!({"d_w_ms": p.dw, "p_w": p.pw, "rcp_atl_ms": p.jitter_ms[0],
            "aimd_ms": p.jitter_ms[1]})
        })
        .collect();
    let jitter = Claim::judged(
        "rcp-jitter",
        "RCP-ATL's packets see lower jitter than the plain rate AIMD (RAP) at d_w = 10 ms, \
         p_w = 10⁻⁴",
        json!({"rcp_atl_ms": ja, "aimd_ms": jr, "all_points": all}),
        json!("RAP's packets experience much higher jitter than RCP-ATL's (Fig. 17)"),
        ev,
        ja < jr,
    );
    [goodput, jitter]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    /// d_w = 10 ms at p_w 10⁻⁵ and 10⁻⁴: RCP-ATL goodput, then RCP-ATL and AIMD jitter at 10⁻⁴.
    fn points(x: &[f64]) -> Vec<Point> {
        vec![
            Point {
                dw: 10,
                pw: 1e-5,
                goodput: [x[0], 1.0],
                jitter_ms: [0.1, 0.5],
            },
            Point {
                dw: 10,
                pw: 1e-4,
                goodput: [x[1], 1.0],
                jitter_ms: [x[2], x[3]],
            },
        ]
    }

    #[test]
    fn each_claim_fails_when_a_number_it_reads_is_missing_zero_or_not_finite() {
        let good = [1.8, 1.79, 0.1, 0.6];
        fails_when_spoilt(&good, [0, 1], &NOT_FINITE, |x| {
            claims(&points(x))[0].clone()
        });
        fails_when_spoilt(&good, [0], &[0.0], |x| claims(&points(x))[0].clone());
        fails_when_spoilt(&good, [2, 3], &NOT_FINITE, |x| {
            claims(&points(x))[1].clone()
        });
        for c in claims(&[]) {
            assert_unmeasured(&c);
        }
    }
}
