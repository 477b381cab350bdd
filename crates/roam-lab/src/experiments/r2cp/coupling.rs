//! Beyond the paper: do no harm at a shared bottleneck (RFC 6356's second goal). Two mirrors
//! reached through one 10 Mb/s bottleneck beside a single-path RCP and a TCP-like NewReno
//! download (`experiments/r2cp/shared_bottleneck.toml`), R²CP with and without the coupled
//! increase (RFC 6356 LIA, `cc::Coupling`); and the coupled increase on the disjoint hard
//! paths, where it must still do at least as well as the best single path.

use serde_json::json;

use super::{judge, main_goodput, param, path, ratio, run_all, single, template, text_table};
use super::{Params, BIG_BUFFER};
use crate::report::num;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

/// The shared bottleneck's rate (Mb/s) and the flows sharing it.
const BOTTLENECK_MBPS: f64 = 10.0;
const FLOWS: f64 = 3.0;

fn goodput_of(r: &roam_sim::result::RunResult, id: &str) -> f64 {
    r.flows
        .iter()
        .find(|f| f.id == id)
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6)
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let shared = Template::load(&ctx.experiment_dir("r2cp").join("shared_bottleneck.toml"))?;
    let secs: u64 = ctx.pick(20, 60);
    let sets: Vec<(String, Params)> = [false, true]
        .iter()
        .map(|&c| {
            (
                format!("shared bottleneck coupled={c}"),
                vec![
                    param("flow.f.r2cp.coupled", c.to_string()),
                    param("run.duration", format!("{secs}s")),
                ],
            )
        })
        .collect();
    let shared_runs = run_all(ctx, &shared, sets)?;
    let fair = BOTTLENECK_MBPS / FLOWS;
    let mut rows = Vec::new();
    let mut share = [f64::NAN; 2];
    for (k, r) in shared_runs.iter().enumerate() {
        let (f, rcp, tcp) = (
            goodput_of(r, "f"),
            goodput_of(r, "rcp"),
            goodput_of(r, "tcp"),
        );
        share[k] = ratio(f, fair);
        rows.push(vec![
            if k == 0 {
                "independent"
            } else {
                "coupled (LIA)"
            }
            .to_owned(),
            num(f, 3),
            num(rcp, 3),
            num(tcp, 3),
            num(share[k], 2),
        ]);
    }

    // The coupled increase on disjoint paths (the hard-path family's hardest static cells).
    let t = template(ctx)?;
    let cells: [(f64, f64, f64, f64, u32); 3] = [
        (8.0, 30.0, 0.2, 80.0, 1000),
        (8.0, 30.0, 2.0, 210.0, 1000),
        (8.0, 30.0, 4.0, 80.0, 20),
    ];
    let mut sets = Vec::new();
    for &(fm, fr, sm, sr, q) in &cells {
        let mut base = vec![
            param("flow.f.rcp.recv_buffer", BIG_BUFFER),
            param("flow.single.rcp.recv_buffer", BIG_BUFFER),
            param("run.duration", format!("{secs}s")),
            param("link.wifi.queue", "200p"),
            param("link.cell.queue", format!("{q}p")),
        ];
        base.extend(path("wifi", fm, fr));
        base.extend(path("cell", sm, sr));
        let label = format!("{fm}/{fr} + {sm}/{sr} {q}p");
        for (what, extra) in [
            ("independent", vec![param("flow.f.r2cp.coupled", "false")]),
            ("coupled", vec![param("flow.f.r2cp.coupled", "true")]),
            ("fast alone", single(0)),
            ("slow alone", single(1)),
        ] {
            let mut p = base.clone();
            p.extend(extra);
            sets.push((format!("disjoint {label} {what}"), p));
        }
    }
    let disjoint = run_all(ctx, &t, sets)?;
    let mut coupled_over_best = Vec::new();
    for (i, &(fm, fr, sm, sr, q)) in cells.iter().enumerate() {
        let g: Vec<f64> = disjoint[i * 4..i * 4 + 4]
            .iter()
            .map(main_goodput)
            .collect();
        let best = g[2].max(g[3]);
        coupled_over_best.push(ratio(g[1], best));
        rows.push(vec![
            format!("disjoint {fm} Mb/s {fr} ms + {sm} Mb/s {sr} ms {q}p: independent / coupled / best single"),
            num(g[0], 3),
            num(g[1], 3),
            num(best, 3),
            num(ratio(g[1], best), 2),
        ]);
    }
    report.section(
        "Beyond the paper: a shared bottleneck (coupled increase)",
        &format!(
            "Two mirrors reached through one {BOTTLENECK_MBPS} Mb/s bottleneck (20 ms, 100 \
             packets; `experiments/r2cp/shared_bottleneck.toml`) beside a single-path RCP and a \
             TCP-like NewReno download, {secs} s: the fair share is {} Mb/s. With independent \
             pipes (the paper's per-pipe control, §4.1.3) R²CP counts as two flows; with \
             RFC 6356's coupled increase (LIA) as one. Below, the coupled increase on \
             disjoint paths (R²CP / the best single path). Scenarios default to independent \
             pipes (the paper's R²CP; every reproduction above), and so does `roam get` \
             (`--coupled` couples): on disjoint paths coupling keeps R²CP at or above the \
             best single path but leaves a slow, long second path nearly unused (over real \
             sockets, 8 + 2 Mb/s at 30/210 ms: 7.64 Mb/s coupled against 9.07 for Linux \
             MPTCP, which has no coupled controller; docs/R2CP.md, \"Coupling\").",
            num(fair, 2)
        ),
    );
    text_table(
        report,
        &[
            "R²CP",
            "R²CP (Mb/s)",
            "RCP (Mb/s) / coupled",
            "TCP (Mb/s) / best single",
            "R²CP / fair share (or / best single)",
        ],
        &rows,
    );
    report.claim(judge(
        "shared-bottleneck-coupled-fair",
        "At a bottleneck its two pipes share with a single-path RCP and a TCP-like flow, \
         coupled R²CP takes at most 1.3× one flow's fair share (RFC 6356's second goal)",
        json!({"coupled_over_fair": share[1], "independent_over_fair": share[0]}),
        json!({"not_in_paper": true}),
        &[("coupled R²CP over the fair share", &share[1..])],
        share[1].is_finite() && share[1] <= 1.3,
    ));
    report.claim(judge(
        "disjoint-coupled-not-below-best-single",
        "On disjoint hard paths coupled R²CP still reaches at least 0.98× the best single path",
        json!({"coupled_over_best": coupled_over_best}),
        json!({"not_in_paper": true}),
        &[(
            "coupled R²CP over the best single path",
            &coupled_over_best[..],
        )],
        !coupled_over_best.is_empty()
            && coupled_over_best
                .iter()
                .all(|x| x.is_finite() && *x >= 0.98),
    ));
    Ok(())
}
