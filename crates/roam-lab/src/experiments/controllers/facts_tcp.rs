//! Part 7: wireless-loss facts estimated by the TCP receiver (`[flow.tcp] facts =
//! "estimated"`, issue 30 item 2) beside the oracle's, on the lossy 2 Mb/s grid of part 2
//! (`lossy.toml`): TCP NewReno without ELN, with TCP-ELN fed by the link's corruption reports
//! (oracle) or by the receiver's own Spike judgement (estimated), and TCP-ATL with the
//! receiver's link reports carrying the link model's loss probability (oracle) or the
//! receiver's estimate (estimated); and the congestion-only path, where an excused hole would
//! hide congestion.

use serde_json::json;

use super::{run_all, template};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Ctx, LabError, Report};

/// One-way delays (ms) and loss probabilities of the grid (part 2's).
const DELAYS_MS: [u64; 2] = [50, 200];
const LOSSES: [f64; 3] = [0.001, 0.01, 0.05];
/// A configuration: column label, controller, `[flow.tcp]` overrides.
type Config = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);
/// The configurations.
const CONFIGS: [Config; 5] = [
    ("NewReno", "newreno", &[]),
    (
        "NewReno ELN, oracle",
        "newreno",
        &[
            ("flow.0.tcp.eln", "true"),
            ("flow.0.tcp.facts", "\"oracle\""),
        ],
    ),
    (
        "NewReno ELN, estimated",
        "newreno",
        &[
            ("flow.0.tcp.eln", "true"),
            ("flow.0.tcp.facts", "\"estimated\""),
        ],
    ),
    (
        "ATL, oracle",
        "atl",
        &[
            ("flow.0.tcp.report_link_info", "true"),
            ("flow.0.tcp.facts", "\"oracle\""),
        ],
    ),
    (
        "ATL, estimated",
        "atl",
        &[
            ("flow.0.tcp.report_link_info", "true"),
            ("flow.0.tcp.facts", "\"estimated\""),
        ],
    ),
];

fn params(d: u64, p: f64, config: usize, seed: u64, duration: &str) -> Vec<(&'static str, String)> {
    let (_, cc, extra) = CONFIGS[config];
    let mut v = vec![
        ("link.wl.delay", format!("\"{d}ms\"")),
        ("link.wl.forward.loss", p.to_string()),
        ("link.wl.reverse.loss", p.to_string()),
        ("flow.0.cc", format!("\"{cc}\"")),
        ("run.seed", seed.to_string()),
        ("run.duration", format!("\"{duration}\"")),
    ];
    v.extend(extra.iter().map(|&(k, val)| (k, val.to_owned())));
    v
}

/// Runs the grid and the congestion-only path; adds the tables and the claim.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "lossy.toml")?;
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let duration = ctx.pick("10s", "30s");
    let mut sets = Vec::new();
    for d in DELAYS_MS {
        for p in LOSSES {
            for (k, (label, _, _)) in CONFIGS.iter().enumerate() {
                for &seed in &seeds {
                    sets.push((
                        format!("tcp facts delay={d}ms loss={p} {label} seed={seed}"),
                        params(d, p, k, seed, duration),
                    ));
                }
            }
        }
    }
    // Congestion only: no random loss, a 30-packet queue; NewReno with ELN, both sources.
    for k in [1, 2] {
        let mut v = params(50, 0.0, k, 1, duration);
        v.push(("link.wl.queue", "\"30p\"".to_owned()));
        sets.push((format!("tcp facts congestion-only {}", CONFIGS[k].0), v));
    }
    let runs = run_all(ctx, &t, sets)?;
    let (grid, congestion) = runs.split_at(runs.len() - 2);
    let mut per_point = grid.chunks(seeds.len());
    let mut rows = Vec::new();
    for d in DELAYS_MS {
        for p in LOSSES {
            let mut cells = vec![
                Cell::text(format!("{d}")),
                Cell::text(format!("{}", p * 100.0)),
            ];
            for _ in CONFIGS {
                let point = per_point.next().unwrap_or(&[]);
                let goodput: Vec<f64> = point
                    .iter()
                    .filter_map(|r| r.flows.first())
                    .map(|f| f.goodput_bps / 1e6)
                    .collect();
                cells.push(Cell::est(&Estimate::from_sample(&goodput), 2));
            }
            rows.push(cells);
        }
    }
    report.section(
        "Estimated facts for TCP beside the oracle",
        &format!(
            "TCP on the lossy 2 Mb/s grid (`lossy.toml`), {duration}, {} seed(s) per cell, \
             mean ± 95 % CI (Mb/s): NewReno without ELN; NewReno with TCP-ELN fed by the \
             link's corruption reports (oracle) or by the receiver's own judgement of each hole \
             (Spike on the one-way time from the TSval, `[flow.tcp] facts = \"estimated\"`); \
             TCP-ATL with the receiver's link reports carrying the link model's loss \
             probability (oracle) or the receiver's estimate (packets lost in holes judged \
             wireless over packets sent).",
            seeds.len()
        ),
    );
    let mut header = vec!["one-way delay (ms)", "loss (%)"];
    header.extend(CONFIGS.iter().map(|(l, _, _)| *l));
    report.table(&header, &rows);
    let mut ev = Evidence::new();
    let mut crows = Vec::new();
    let mut excused_estimated = f64::NAN;
    for (k, r) in [1usize, 2].into_iter().zip(congestion) {
        let f = r.flows.first();
        let excused = f.map_or(f64::NAN, |f| f.wireless_excused as f64);
        let recoveries = f.map_or(f64::NAN, |f| f.recoveries as f64);
        if k == 2 {
            excused_estimated = ev.num("holes excused, estimated", excused);
            ev.num("recoveries, estimated", recoveries);
        }
        crows.push(vec![
            Cell::text(CONFIGS[k].0),
            Cell::num(f.map_or(f64::NAN, |f| f.goodput_bps / 1e6), 2),
            Cell::num(recoveries, 0),
            Cell::num(excused, 0),
        ]);
    }
    report.section(
        "TCP estimated facts on a congestion-only path",
        "The same path without random loss and with a 30-packet queue, 50 ms one-way: every \
         loss is a queue drop, so every excused hole is a misjudgement that hides congestion.",
    );
    report.table(
        &[
            "configuration",
            "goodput (Mb/s)",
            "recovery episodes",
            "holes excused",
        ],
        &crows,
    );
    report.claim(Claim::judged(
        "estimated-facts-tcp-excuse-no-congestion-drop",
        "With facts estimated by the TCP receiver, TCP-ELN excuses no hole as wireless on a \
         path whose only losses are queue drops",
        json!({"holes_excused": excused_estimated}),
        json!({"holes_excused": 0}),
        ev,
        excused_estimated == 0.0,
    ));
    Ok(())
}
