//! Reproduction of TCP-Probing (tcp-probing.txt §4–5, Tables A1–A5): a 5 MB transfer over the
//! VLINK on/off error channel (drops on data and ACKs), PER 0–40 %, propagation 0/50/100 ms,
//! NewReno (the paper's Reno baseline; SACK off, like the X-kernel Reno) against Probing.

use serde_json::json;

use crate::chart::{self, Axes, Series};
use crate::report::{num, Cell, Col};
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Claim, Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct Probing;

/// PER values of the tables (%).
const PERS: [f64; 6] = [0.0, 1.0, 8.0, 16.0, 25.0, 40.0];

/// One appendix table: template, propagation delay, the paper's numbers
/// (Reno time, Probing time, Reno overhead, Probing overhead per PER).
struct Table {
    id: &'static str,
    template: &'static str,
    delay: &'static str,
    paper_time: [[f64; 6]; 2],
    paper_overhead: [[f64; 6]; 2],
}

#[allow(clippy::approx_constant)] // 3.14 is Table A5's overhead, not π.
const TABLES: [Table; 5] = [
    Table {
        id: "A1",
        template: "vlink.toml",
        delay: "0ms",
        paper_time: [
            [30.0, 38.0, 41.6, 49.9, 63.1, 60.1],
            [28.6, 36.3, 37.7, 41.5, 47.2, 53.7],
        ],
        paper_overhead: [
            [2.84, 3.65, 3.87, 3.87, 3.90, 4.21],
            [2.78, 3.61, 3.67, 3.87, 3.89, 4.19],
        ],
    },
    Table {
        id: "A2",
        template: "vlink.toml",
        delay: "50ms",
        paper_time: [
            [44.6, 62.6, 62.4, 88.8, 87.3, 121.2],
            [44.6, 58.0, 60.8, 64.6, 74.3, 92.2],
        ],
        paper_overhead: [
            [2.54, 3.35, 4.21, 4.99, 4.42, 5.20],
            [2.56, 3.26, 4.21, 4.37, 4.14, 5.01],
        ],
    },
    Table {
        id: "A3",
        template: "vlink.toml",
        delay: "100ms",
        paper_time: [
            [75.4, 103.2, 136.3, 281.1, 363.4, 859.1],
            [75.6, 96.7, 102.7, 138.5, 192.8, 233.8],
        ],
        paper_overhead: [
            [2.47, 3.83, 5.94, 7.52, 8.35, 8.96],
            [2.42, 3.62, 5.36, 6.44, 6.63, 6.65],
        ],
    },
    Table {
        id: "A4",
        template: "vlink-cross.toml",
        delay: "0ms",
        paper_time: [
            [34.3, 44.2, 45.6, 55.4, 68.0, 73.0],
            [33.8, 43.6, 45.1, 50.2, 57.8, 59.5],
        ],
        paper_overhead: [
            [2.70, 3.57, 4.12, 4.01, 4.26, 4.54],
            [2.60, 3.62, 4.06, 4.00, 4.12, 4.42],
        ],
    },
    Table {
        id: "A5",
        template: "vlink-cross.toml",
        delay: "50ms",
        paper_time: [
            [45.1, 63.1, 68.8, 101.9, 104.6, 136.3],
            [45.1, 62.1, 65.4, 77.8, 78.5, 105.0],
        ],
        paper_overhead: [
            [2.51, 3.18, 4.83, 5.56, 4.84, 5.22],
            [2.50, 3.14, 4.30, 4.83, 4.30, 5.28],
        ],
    },
];

const PROTOCOLS: [(&str, &str); 2] = [("NewReno", "standard"), ("Probing", "probing")];

/// One measured cell of a table: completion time and overhead estimates.
#[derive(Debug, Clone, Copy)]
struct Measured {
    time: Estimate,
    overhead: Estimate,
    unfinished: usize,
}

fn mean(e: &Estimate) -> f64 {
    e.mean.unwrap_or(f64::NAN)
}

fn ci(e: &Estimate) -> f64 {
    e.ci95.unwrap_or(0.0)
}

impl Experiment for Probing {
    fn name(&self) -> &'static str {
        "probing"
    }

    fn title(&self) -> &'static str {
        "TCP-Probing vs NewReno over the VLINK on/off error channel (tcp-probing.txt Tables A1-A5)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        let dir = ctx.experiment_dir("probing");
        ctx.create_out_dir()?;
        let seeds: u64 = ctx.pick(2, 10);
        let size = ctx.pick("1MiB", "5MiB");
        let mut jobs = Vec::new();
        let mut templates = Vec::new();
        for t in &TABLES {
            templates.push(Template::load(&dir.join(t.template))?);
        }
        for (ti, t) in TABLES.iter().enumerate() {
            for per in PERS {
                for (pname, mode) in PROTOCOLS {
                    for seed in 1..=seeds {
                        let p = (per / 100.0).to_string();
                        let params = [
                            ("link.vlink.forward.gilbert.bad.loss", p.clone()),
                            ("link.vlink.reverse.gilbert.bad.loss", p),
                            ("link.vlink.delay", t.delay.to_owned()),
                            ("flow.0.tcp.recovery", mode.to_owned()),
                            ("flow.0.size", size.to_owned()),
                            ("run.seed", seed.to_string()),
                        ];
                        let label = format!("{} per={per} {pname} seed={seed}", t.id);
                        jobs.push(Job {
                            scenario: templates[ti].build(&label, &params)?,
                            label,
                        });
                    }
                }
            }
        }
        let results = run_jobs(jobs, ctx.progress)?;
        // cells[table][per][protocol]
        let mut cells = Vec::new();
        let mut it = results.iter();
        for _ in &TABLES {
            let mut per_rows = Vec::new();
            for _ in PERS {
                let mut protos = Vec::new();
                for _ in PROTOCOLS {
                    let (mut times, mut ovh, mut unfinished) = (Vec::new(), Vec::new(), 0);
                    for _ in 0..seeds {
                        let Some(r) = it.next() else { continue };
                        let Some(f) = r.flows.iter().find(|f| !f.cross) else {
                            continue;
                        };
                        match f.completion_s {
                            Some(c) => times.push(c),
                            None => {
                                unfinished += 1;
                                times.push(r.sim_seconds);
                            }
                        }
                        ovh.push(f.overhead_pct);
                    }
                    protos.push(Measured {
                        time: Estimate::from_sample(&times),
                        overhead: Estimate::from_sample(&ovh),
                        unfinished,
                    });
                }
                per_rows.push(protos);
            }
            cells.push(per_rows);
        }
        let mut report = Report::new(self.title());
        report.section(
            "Setup",
            &format!(
                "Two directly connected hosts, 1.5 Mb/s link (calibrated so that a 5 MB transfer \
                 at PER 0 takes ≈30 s as in Table A1; the paper does not give its rate), one-way \
                 propagation 0/50/100 ms, drop-tail queue of 100 packets. VLINK = a two-state \
                 Gilbert–Elliott channel per direction (data dropped at the receiver, ACKs at the \
                 sender, independent chains), equal mean sojourns of 1 s, drop rate 0 in one state \
                 and PER in the other. 1 KB segments, max window 64 segments, initial RTO 1 s. \
                 Baseline: NewReno with SACK off (the paper grafts Probing onto X-kernel Reno, \
                 which has no SACK; both variants here run without SACK). Tables A4–A5 add an \
                 on/off cross source (Pareto on/off UDP, 0.75 Mb/s while on) instead of the \
                 paper's TCP-based on/off application. {} seeds per cell, transfer size {size}{}. \
                 Times of unfinished runs are censored at the run length.",
                seeds,
                if ctx.quick { " (quick mode)" } else { "" }
            ),
        );
        let mut series_files = Vec::new();
        for (ti, t) in TABLES.iter().enumerate() {
            let mut rows = Vec::new();
            for (pi, per) in PERS.iter().enumerate() {
                let c = &cells[ti][pi];
                rows.push(vec![
                    Cell::num(*per, 0),
                    Cell::est(&c[0].time, 1),
                    Cell::est(&c[1].time, 1),
                    Cell::pair(t.paper_time[0][pi], t.paper_time[1][pi], 1),
                    Cell::est(&c[0].overhead, 2),
                    Cell::est(&c[1].overhead, 2),
                    Cell::pair(t.paper_overhead[0][pi], t.paper_overhead[1][pi], 2),
                    Cell::pair(c[0].unfinished as f64, c[1].unfinished as f64, 0),
                ]);
            }
            report.section(
                &format!("Table {} (propagation {}{})", t.id, t.delay, if t.template.contains("cross") { ", on/off cross traffic" } else { "" }),
                "Task completion time (s) and overhead (%), ours (mean ± 95 % CI) beside the paper's (Reno / Probing).",
            );
            report.table(
                &[
                    Col::from("PER %"),
                    Col::from("NewReno time"),
                    Col::from("Probing time"),
                    Col::pair("paper time", "R", "P"),
                    Col::from("NewReno overhead"),
                    Col::from("Probing overhead"),
                    Col::pair("paper overhead", "R", "P"),
                    Col::pair("unfinished", "N", "P"),
                ],
                &rows,
            );
            let file = format!("time-{}.svg", t.id.to_lowercase());
            let series: Vec<Series> = PROTOCOLS
                .iter()
                .enumerate()
                .map(|(k, (pname, _))| {
                    let points = PERS
                        .iter()
                        .enumerate()
                        .map(|(pi, per)| (*per, cells[ti][pi][k].time));
                    Series::of_estimates(format!("{pname} (ours)"), points).in_colour(k)
                })
                // The paper's numbers dashed, in the colour of our protocol they compare with.
                .chain(["Reno", "Probing"].iter().enumerate().map(|(k, pname)| {
                    let points = PERS
                        .iter()
                        .enumerate()
                        .map(|(pi, per)| (*per, t.paper_time[k][pi]))
                        .collect();
                    Series::new(format!("{pname} (paper)"), points)
                        .in_colour(k)
                        .dashed()
                }))
                .collect();
            let title = format!("Task completion time, Table {}", t.id);
            chart::lines(
                &ctx.out_dir.join(&file),
                &Axes {
                    title: &title,
                    x: "PER (%)",
                    y: "completion time (s)",
                    log_x: false,
                    y_from_zero: true,
                },
                &series,
            )?;
            report.image(&title, &file);
            series_files.push(file);
        }
        add_claims(&mut report, &cells);
        let mut slower = Vec::new();
        for (ti, t) in TABLES.iter().enumerate() {
            for (pi, per) in PERS.iter().enumerate() {
                let (n, p) = (mean(&cells[ti][pi][0].time), mean(&cells[ti][pi][1].time));
                if p > n * 1.001 {
                    slower.push(format!(
                        "{} PER {per} %: {} s vs {} s",
                        t.id,
                        num(p, 1),
                        num(n, 1)
                    ));
                }
            }
        }
        report.section(
            "Where ours differ and why",
            &format!(
                "**Absolute times.** The paper does not give VLINK's mean sojourn times or its \
                 link rate, and its PER-0 times grow from 30 s to 75 s between 0 and 100 ms of \
                 propagation although a 64-segment window covers a 1.5 Mb/s × 200 ms pipe; we \
                 calibrated the rate on Table A1's PER-0 time only and chose 1 s sojourns, so \
                 our PER-0 times hardly depend on the delay and our high-PER times (where \
                 minutes-long transfers are dominated by RTO backoff of the baseline) can exceed \
                 the paper's. Compare the two protocols within a table. **Overhead** counts a \
                 40-byte header on every data segment and ACK (≈8 % at PER 0 against the \
                 paper's ≈2.8 %), so compare overheads between protocols, not with the paper. \
                 **Baseline.** NewReno (RFC 6582) is a stronger baseline than the paper's Reno, \
                 which suffers timeouts on multiple losses per window; this narrows Probing's \
                 advantage at low PER.\n\n\
                 **Where Probing is slower than NewReno on average:** {}. At low PER a probe \
                 cycle pauses data for two round trips where NewReno's fast recovery keeps \
                 sending; with the standing queue of this setup the first probe waits behind \
                 queued data, so its RTT exceeds acprtt and the §3.2 rules often choose \
                 Reno-style halving anyway. Claims are computed from these numbers as measured.",
                if slower.is_empty() {
                    "nowhere".to_owned()
                } else {
                    slower.join("; ")
                }
            ),
        );
        Ok(report)
    }
}

/// Probing's time is at most NewReno's "within noise": the difference is below the sum of the
/// two 95 % half-widths (or 5 % of NewReno's time, whichever is larger).
fn not_worse(n: &Estimate, p: &Estimate) -> bool {
    let slack = (ci(n) + ci(p)).max(0.05 * mean(n));
    mean(p) <= mean(n) + slack
}

fn add_claims(report: &mut Report, cells: &[Vec<Vec<Measured>>]) {
    let time_pair = |ti: usize, pi: usize| {
        json!({
            "newreno": mean(&cells[ti][pi][0].time),
            "probing": mean(&cells[ti][pi][1].time),
        })
    };
    let high: Vec<usize> = PERS
        .iter()
        .enumerate()
        .filter(|(_, p)| **p >= 16.0)
        .map(|(i, _)| i)
        .collect();
    // 1. Time not worse at every PER, tables A1–A3.
    for (ti, tables, id) in [
        (0..3, "A1–A3", "probing-time-not-worse"),
        (3..5, "A4–A5", "probing-time-not-worse-with-cross-traffic"),
    ]
    .map(|(r, n, id)| (r, n, id))
    {
        let mut ours = serde_json::Map::new();
        let mut paper = serde_json::Map::new();
        let mut holds = true;
        for t in ti {
            for (pi, per) in PERS.iter().enumerate() {
                let c = &cells[t][pi];
                holds &= not_worse(&c[0].time, &c[1].time);
                ours.insert(format!("{} per={per}", TABLES[t].id), time_pair(t, pi));
                paper.insert(
                    format!("{} per={per}", TABLES[t].id),
                    json!({"reno": TABLES[t].paper_time[0][pi], "probing": TABLES[t].paper_time[1][pi]}),
                );
            }
        }
        report.claim(Claim::new(
            id,
            &format!(
                "Tables {tables}: Probing's task completion time is no worse than NewReno's at every PER (within noise: the larger of the 95 % CIs' sum and 5 %)"
            ),
            ours.into(),
            paper.into(),
            holds,
        ));
    }
    // 2. Clearly lower at PER >= 16 %, tables A1–A3: at least 10 % lower in every such cell.
    let mut ours = serde_json::Map::new();
    let mut paper = serde_json::Map::new();
    let mut holds = true;
    for t in 0..3 {
        for &pi in &high {
            let c = &cells[t][pi];
            holds &= mean(&c[1].time) <= 0.9 * mean(&c[0].time);
            ours.insert(
                format!("{} per={}", TABLES[t].id, PERS[pi]),
                time_pair(t, pi),
            );
            paper.insert(
                format!("{} per={}", TABLES[t].id, PERS[pi]),
                json!({"reno": TABLES[t].paper_time[0][pi], "probing": TABLES[t].paper_time[1][pi]}),
            );
        }
    }
    report.claim(Claim::new(
        "probing-time-lower-at-high-per",
        "Tables A1–A3: at PER ≥ 16 % Probing's task completion time is clearly (≥ 10 %) lower than NewReno's",
        ours.into(),
        paper.into(),
        holds,
    ));
    // 3. Overhead not higher at high PER.
    let mut ours = serde_json::Map::new();
    let mut paper = serde_json::Map::new();
    let mut holds = true;
    for t in 0..3 {
        for &pi in &high {
            let c = &cells[t][pi];
            let slack = ci(&c[0].overhead) + ci(&c[1].overhead);
            holds &= mean(&c[1].overhead) <= mean(&c[0].overhead) + slack;
            ours.insert(
                format!("{} per={}", TABLES[t].id, PERS[pi]),
                json!({"newreno": mean(&c[0].overhead), "probing": mean(&c[1].overhead)}),
            );
            paper.insert(
                format!("{} per={}", TABLES[t].id, PERS[pi]),
                json!({"reno": TABLES[t].paper_overhead[0][pi], "probing": TABLES[t].paper_overhead[1][pi]}),
            );
        }
    }
    report.claim(Claim::new(
        "probing-overhead-not-higher-at-high-per",
        "Tables A1–A3: at PER ≥ 16 % Probing's overhead is no higher than NewReno's (within the CIs)",
        ours.into(),
        paper.into(),
        holds,
    ));
}
