//! Beyond the paper: R²CP on the paths a phone really has — a fast path (static 2-20 Mb/s, or
//! an LTE capacity trace) beside a slow one (0.1-4 Mb/s, or the UMTS driving trace) with
//! drop-tail queues of 20, 200 and 1000 packets, RTTs from 20 to 800 ms and random loss of
//! 0, 1 and 5 % on the slow path. RFC 6356's first goal is the bar: at least as well as a
//! single-path flow on the best path, in every cell (`docs/R2CP.md`, "Head-of-line
//! awareness"). The ideal is the sum of single-path RCP flows on each path alone, measured in
//! the same setup.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use super::{judge, main_goodput, param, path, ratio, run_all, single, template, text_table};
use super::{Params, BIG_BUFFER};
use crate::heatmap::{heat_map, HeatMap};
use crate::report::num;
use crate::{Ctx, LabError, Report};

/// One path of a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A static rate (Mb/s).
    Static(f64),
    /// A Mahimahi capacity trace of `traces/` (its downlink).
    Trace(&'static str),
}

/// One path: its capacity, base RTT, drop-tail queue and random loss (both directions).
#[derive(Debug, Clone, Copy, PartialEq)]
struct PathSpec {
    kind: Kind,
    rtt_ms: f64,
    queue: u32,
    loss: f64,
}

impl PathSpec {
    fn label(&self) -> String {
        let what = match self.kind {
            Kind::Static(mbps) => format!("{} Mb/s", num(mbps, 1)),
            Kind::Trace(t) => t.trim_end_matches("-short").to_owned(),
        };
        let loss = if self.loss > 0.0 {
            format!(", {} % loss", num(self.loss * 100.0, 0))
        } else {
            String::new()
        };
        format!("{what} {} ms {}p{loss}", num(self.rtt_ms, 0), self.queue)
    }

    /// Overrides putting this path on `link` ("wifi" or "cell").
    fn params(&self, ctx: &Ctx, link: &str) -> Params {
        let mut p = match self.kind {
            Kind::Static(mbps) => path(link, mbps, self.rtt_ms),
            Kind::Trace(name) => {
                let mut p = path(link, 10.0, self.rtt_ms);
                let file = ctx.repo_root.join("traces").join(format!("{name}.down"));
                let file = std::fs::canonicalize(&file).unwrap_or(file);
                p.push(param(
                    format!("link.{link}.forward.trace"),
                    file.to_string_lossy().into_owned(),
                ));
                p
            }
        };
        p.push(param(
            format!("link.{link}.queue"),
            format!("{}p", self.queue),
        ));
        if self.loss > 0.0 {
            for dir in ["forward", "reverse"] {
                p.push(param(
                    format!("link.{link}.{dir}.loss"),
                    self.loss.to_string(),
                ));
            }
        }
        p
    }

    fn random(&self) -> bool {
        self.loss > 0.0
    }
}

/// One cell: a fast path (on the wifi hop) and a slow one (on the cell hop), and its group.
#[derive(Debug, Clone, Copy)]
struct Cell {
    group: &'static str,
    fast: PathSpec,
    slow: PathSpec,
}

const fn stat(mbps: f64, rtt_ms: f64, queue: u32) -> PathSpec {
    PathSpec {
        kind: Kind::Static(mbps),
        rtt_ms,
        queue,
        loss: 0.0,
    }
}

const fn trace(name: &'static str, rtt_ms: f64, queue: u32) -> PathSpec {
    PathSpec {
        kind: Kind::Trace(name),
        rtt_ms,
        queue,
        loss: 0.0,
    }
}

/// The cells of the sweep (quick mode: a few of each kind).
fn cells(quick: bool) -> Vec<Cell> {
    // LTE one-way 20 ms and UMTS 40 ms, as in the MPTCP anchor.
    let fasts: Vec<PathSpec> = if quick {
        vec![stat(8.0, 30.0, 200), trace("Verizon-LTE-short", 40.0, 200)]
    } else {
        vec![
            stat(2.0, 30.0, 200),
            stat(8.0, 30.0, 200),
            stat(20.0, 30.0, 200),
            trace("Verizon-LTE-short", 40.0, 200),
            trace("TMobile-LTE-short", 40.0, 200),
        ]
    };
    let slows: Vec<(f64, bool)> = if quick {
        vec![(0.2, false), (0.0, true)]
    } else {
        vec![
            (0.1, false),
            (0.5, false),
            (2.0, false),
            (4.0, false),
            (0.0, true),
        ]
    };
    let queues: &[u32] = if quick { &[20, 1000] } else { &[20, 200, 1000] };
    let mut out = Vec::new();
    for &fast in &fasts {
        for &(mbps, umts) in &slows {
            for &queue in queues {
                let slow = if umts {
                    trace("TMobile-UMTS-driving", 80.0, queue)
                } else {
                    stat(mbps, 80.0, queue)
                };
                out.push(Cell {
                    group: "rate × queue",
                    fast,
                    slow,
                });
            }
        }
    }
    // RTTs from 20 to 800 ms on either path.
    let rtts: &[(f64, f64)] = if quick {
        &[(20.0, 800.0)]
    } else {
        &[
            (20.0, 20.0),
            (20.0, 200.0),
            (20.0, 800.0),
            (100.0, 20.0),
            (100.0, 200.0),
            (100.0, 800.0),
        ]
    };
    for &(f, s) in rtts {
        for &queue in if quick { &[1000][..] } else { &[20, 1000][..] } {
            out.push(Cell {
                group: "RTT",
                fast: stat(8.0, f, 200),
                slow: stat(2.0, s, queue),
            });
        }
    }
    // A deep or shallow queue on the fast path.
    if !quick {
        for fast in [
            stat(8.0, 30.0, 20),
            stat(8.0, 30.0, 1000),
            trace("Verizon-LTE-short", 40.0, 20),
            trace("Verizon-LTE-short", 40.0, 1000),
        ] {
            out.push(Cell {
                group: "fast queue",
                fast,
                slow: stat(0.5, 80.0, 1000),
            });
        }
    }
    // Random loss on the slow path (both directions).
    let losses: &[f64] = if quick { &[0.05] } else { &[0.01, 0.05] };
    let lossy_fasts = if quick {
        vec![stat(8.0, 30.0, 200)]
    } else {
        vec![stat(8.0, 30.0, 200), trace("Verizon-LTE-short", 40.0, 200)]
    };
    for fast in lossy_fasts {
        for mbps in if quick { &[2.0][..] } else { &[0.5, 2.0][..] } {
            for &loss in losses {
                out.push(Cell {
                    group: "loss",
                    fast,
                    slow: PathSpec {
                        loss,
                        ..stat(*mbps, 200.0, 200)
                    },
                });
            }
        }
    }
    out
}

/// Seeds of the cells with random loss.
fn seeds(ctx: &Ctx) -> Vec<u64> {
    (1..=ctx.pick(1, 3)).collect()
}

/// The numbers of one cell (means over its seeds).
#[derive(Debug, Clone, Copy)]
struct Outcome {
    r2cp: f64,
    fast: f64,
    slow: f64,
    /// R²CP's redundant requests (bytes requested again while the first request was out),
    /// as a share of the bytes it delivered.
    redundant: f64,
}

impl Outcome {
    fn best(&self) -> f64 {
        self.fast.max(self.slow)
    }
    fn ideal(&self) -> f64 {
        self.fast + self.slow
    }
    fn over_best(&self) -> f64 {
        ratio(self.r2cp, self.best())
    }
    fn of_ideal(&self) -> f64 {
        ratio(self.r2cp, self.ideal())
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.retain(|x| x.is_finite());
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    // The sweep's wall time, for the report (the issue asks for it); no protocol sees it.
    #[allow(clippy::disallowed_methods)]
    let started = Instant::now();
    let t = template(ctx)?;
    let secs: u64 = ctx.pick(20, 60);
    let cells = cells(ctx.quick);
    let seeds = seeds(ctx);
    let common = |extra: Params| {
        let mut p = vec![
            param("flow.f.rcp.recv_buffer", BIG_BUFFER),
            param("flow.single.rcp.recv_buffer", BIG_BUFFER),
            param("run.duration", format!("{secs}s")),
        ];
        p.extend(extra);
        p
    };
    // Every distinct run once: R²CP per cell and seed, each path alone per seed.
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut sets: Vec<(String, Params)> = Vec::new();
    let mut add = |label: String, params: Params| -> usize {
        *index.entry(label.clone()).or_insert_with(|| {
            sets.push((label, params));
            sets.len() - 1
        })
    };
    let mut jobs: Vec<(Vec<usize>, Vec<usize>, Vec<usize>)> = Vec::new();
    for c in &cells {
        let cell_seeds: &[u64] = if c.slow.random() || c.fast.random() {
            &seeds
        } else {
            &seeds[..1]
        };
        let (mut r, mut f, mut s) = (Vec::new(), Vec::new(), Vec::new());
        for &seed in cell_seeds {
            let seeded = |mut p: Params| {
                p.push(param("run.seed", seed.to_string()));
                p
            };
            let mut both = c.fast.params(ctx, "wifi");
            both.extend(c.slow.params(ctx, "cell"));
            r.push(add(
                format!(
                    "hard {} + {} seed {seed} R²CP",
                    c.fast.label(),
                    c.slow.label()
                ),
                common(seeded(both)),
            ));
            let mut fast = c.fast.params(ctx, "wifi");
            fast.extend(single(0));
            f.push(add(
                format!("hard {} seed {seed} alone", c.fast.label()),
                common(seeded(fast)),
            ));
            let mut slow = c.slow.params(ctx, "cell");
            slow.extend(single(1));
            s.push(add(
                format!("hard slow {} seed {seed} alone", c.slow.label()),
                common(seeded(slow)),
            ));
        }
        jobs.push((r, f, s));
    }
    let results = run_all(ctx, &t, sets)?;
    let goodput = |ids: &[usize]| {
        mean(
            &ids.iter()
                .map(|&i| main_goodput(&results[i]))
                .collect::<Vec<_>>(),
        )
    };
    let redundant = |ids: &[usize]| {
        let (mut extra, mut delivered) = (0u64, 0u64);
        for r in ids
            .iter()
            .filter_map(|&i| results[i].flows.iter().find(|f| f.id == "f"))
        {
            extra += r.multipath.map_or(0, |m| m.bytes_redundant);
            delivered += r.bytes_delivered;
        }
        ratio(extra as f64, delivered as f64)
    };
    let outcomes: Vec<Outcome> = jobs
        .iter()
        .map(|(r, f, s)| Outcome {
            r2cp: goodput(r),
            fast: goodput(f),
            slow: goodput(s),
            redundant: redundant(r),
        })
        .collect();
    let wall = started.elapsed().as_secs_f64();

    let rows: Vec<Vec<String>> = cells
        .iter()
        .zip(&outcomes)
        .map(|(c, o)| {
            vec![
                c.group.to_owned(),
                c.fast.label(),
                c.slow.label(),
                num(o.fast, 3),
                num(o.slow, 3),
                num(o.ideal(), 3),
                num(o.r2cp, 3),
                num(o.over_best(), 3),
                num(o.of_ideal(), 3),
                num(100.0 * o.redundant, 2),
            ]
        })
        .collect();
    report.section(
        "Beyond the paper: hard paths (deep queues, slow and lossy second paths, traces)",
        &format!(
            "{} cells, {secs} s backlogged runs, 4 MB receive buffer, NewReno in every pipe; the \
             fast path on the first interface (to server 1), the slow path on the second (to \
             server 2). Traces: the downlink of `traces/<name>.down` replayed from t = 0, LTE \
             40 ms and UMTS 80 ms base RTT (uplinks 10 Mb/s). Random loss hits both \
             directions of the slow path; those cells are the mean of {} seeds. Goodput in \
             Mb/s; best = the better single-path RCP flow, ideal = both added; redundant = \
             bytes R²CP requested a second time while the first request was out (rescued \
             blocking holes, a silent pipe's units), in % of the bytes it delivered: the \
             overhead of head-of-line awareness. The sweep took \
             {} s of wall time on this machine ({} runs).",
            cells.len(),
            seeds.len(),
            num(wall, 1),
            results.len()
        ),
    );
    text_table(
        report,
        &[
            "group",
            "fast path",
            "slow path",
            "fast alone",
            "slow alone",
            "ideal",
            "R²CP",
            "R²CP / best single",
            "R²CP / ideal",
            "redundant %",
        ],
        &rows,
    );
    draw_maps(ctx, report, &cells, &outcomes)?;

    let over_best: Vec<f64> = outcomes.iter().map(Outcome::over_best).collect();
    let of_ideal: Vec<f64> = outcomes.iter().map(Outcome::of_ideal).collect();
    let useful: Vec<f64> = outcomes
        .iter()
        .filter(|o| o.slow >= 0.1 * o.fast)
        .map(Outcome::of_ideal)
        .collect();
    let all = |v: &[f64], lo: f64| !v.is_empty() && v.iter().all(|x| x.is_finite() && *x >= lo);
    let worst = over_best.iter().copied().fold(f64::INFINITY, f64::min);
    report.claim(judge(
        "hard-paths-never-below-best-single",
        "On every hard-path cell R²CP reaches at least 0.98× the best single path (RFC 6356's \
         first goal), and at least 1.0× in the median cell",
        json!({"worst": worst, "median": median(over_best.clone()), "cells": over_best.len()}),
        json!({"not_in_paper": true, "before_head_of_line_awareness": "0.46 at 8 + 0.2 Mb/s with a 1000-packet queue"}),
        &[("R²CP over the best single path", &over_best[..])],
        all(&over_best, 0.98) && median(over_best.clone()) >= 1.0,
    ));
    report.claim(judge(
        "hard-paths-near-ideal",
        "R²CP reaches at least 95 % of the ideal in the median hard-path cell, and at least \
         90 % wherever the slow path alone reaches at least 10 % of the fast one",
        json!({"median_of_ideal": median(of_ideal.clone()), "worst_where_slow_useful":
               useful.iter().copied().fold(f64::INFINITY, f64::min), "useful_cells": useful.len()}),
        json!({"not_in_paper": true}),
        &[("R²CP of the ideal", &of_ideal[..])],
        median(of_ideal.clone()) >= 0.95 && all(&useful, 0.90),
    ));
    Ok(())
}

/// The heat maps of the rate × queue group: R²CP over the best single path, and of the ideal.
fn draw_maps(
    ctx: &Ctx,
    report: &mut Report,
    cells: &[Cell],
    outcomes: &[Outcome],
) -> Result<(), LabError> {
    let mut rows: Vec<String> = Vec::new();
    let mut cols: Vec<String> = Vec::new();
    for c in cells.iter().filter(|c| c.group == "rate × queue") {
        let (r, k) = (c.fast.label(), c.slow.label());
        if !rows.contains(&r) {
            rows.push(r);
        }
        if !cols.contains(&k) {
            cols.push(k);
        }
    }
    let grid = |f: fn(&Outcome) -> f64| {
        let mut g = vec![vec![f64::NAN; cols.len()]; rows.len()];
        for (c, o) in cells.iter().zip(outcomes) {
            if c.group != "rate × queue" {
                continue;
            }
            let r = rows.iter().position(|x| *x == c.fast.label());
            let k = cols.iter().position(|x| *x == c.slow.label());
            if let (Some(r), Some(k)) = (r, k) {
                g[r][k] = f(o);
            }
        }
        g
    };
    for (file, title, values) in [
        (
            "hard-paths-over-best.svg",
            "R²CP / best single path (rows: fast path; columns: slow path)",
            grid(Outcome::over_best),
        ),
        (
            "hard-paths-of-ideal.svg",
            "R²CP / ideal (rows: fast path; columns: slow path)",
            grid(Outcome::of_ideal),
        ),
    ] {
        heat_map(
            &ctx.out_dir.join(file),
            &HeatMap {
                title,
                rows: &rows,
                columns: &cols,
                values: &values,
                centre: 1.0,
                span: 0.25,
                decimals: 2,
            },
        )?;
        report.image(title, file);
    }
    Ok(())
}
