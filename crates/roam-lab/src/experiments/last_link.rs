//! Reproduction of the last-link heuristics (last-link-heuristics.txt §4, Figure 3 and
//! Table 1): a server sends bulk data to a client behind a 7 Mb/s access link, next to seven
//! cross connections in the 45 Mb/s core; NewReno against Max-Cwnd, Initial Cwnd & SSThresh,
//! both, and the PER heuristic.

use serde_json::json;

use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Claim, Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct LastLink;

/// A variant: label and (max_cwnd, initial, per).
type Variant = (&'static str, bool, bool, bool);

/// Fig. 3 variants.
const VARIANTS: [Variant; 4] = [
    ("NewReno", false, false, false),
    ("Max-Cwnd", true, false, false),
    ("Initial", false, true, false),
    ("Max-Cwnd + Initial", true, true, false),
];

/// Table 1 (PER heuristic): RTT, NewReno, HTCP, dummy flows next to NewReno, next to HTCP (kb/s).
const PAPER_TABLE1: [(u64, f64, f64, f64, f64); 4] = [
    (100, 103.0, 334.9, 1370.2, 1362.7),
    (200, 46.7, 168.4, 968.2, 965.6),
    (300, 30.8, 108.2, 725.8, 703.0),
    (400, 26.5, 92.6, 609.6, 611.4),
];

/// Deterministic start times for the cross flows (uniform in [0, span) seconds).
fn starts(seed: u64, n: usize, span: f64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * span
        })
        .collect()
}

const CROSS_IDS: [&str; 7] = ["ftp0", "ftp1", "ftp2", "ftp3", "ftp4", "telnet0", "telnet1"];

fn mean(e: &Estimate) -> f64 {
    e.mean.unwrap_or(f64::NAN)
}

struct Point {
    main: Estimate,
    dummy: Estimate,
    /// The main connection's PLR = retransmitted / transmitted segments.
    plr: Estimate,
}

impl Experiment for LastLink {
    fn name(&self) -> &'static str {
        "last-link"
    }

    fn title(&self) -> &'static str {
        "Last-link heuristics: Max-Cwnd, Initial Cwnd & SSThresh, PER (last-link-heuristics.txt Fig. 3, Table 1)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        let template = Template::load(&ctx.experiment_dir("last-link").join("access.toml"))?;
        std::fs::create_dir_all(&ctx.out_dir).map_err(|source| LabError::Io {
            path: ctx.out_dir.clone(),
            source,
        })?;
        let rtts: Vec<u64> = ctx.pick(vec![100, 300], vec![100, 200, 300, 400]);
        let seeds: u64 = ctx.pick(1, 3);
        let duration: u64 = ctx.pick(60, 1000);
        let span = if ctx.quick { 5.0 } else { 50.0 };
        // Fig. 5's PER range; the claims use 0.8 % (the last entry).
        let pers: Vec<f64> = ctx.pick(vec![0.008], vec![0.0008, 0.002, 0.004, 0.008]);
        // Runs: Fig. 3 (variants at PER 0), then NewReno and the PER heuristic at each PER.
        let table1: [Variant; 2] = [
            ("NewReno", false, false, false),
            ("PER heuristic", false, false, true),
        ];
        let mut jobs = Vec::new();
        let mut sets: Vec<(&[Variant], f64)> = vec![(&VARIANTS[..], 0.0)];
        for &p in &pers {
            sets.push((&table1[..], p));
        }
        for (set, loss) in sets {
            for &rtt in &rtts {
                for &(label, max_cwnd, initial, per_h) in set {
                    for seed in 1..=seeds {
                        // RTT = 2 × (1 + core + 1 + ... ) ms: access 1 ms, server link 1 ms.
                        let core = (rtt / 2).saturating_sub(2);
                        let mut params = vec![
                            ("link.core.delay", format!("{core}ms")),
                            ("link.access.forward.loss", loss.to_string()),
                            ("flow.main.tcp.last_link.max_cwnd", max_cwnd.to_string()),
                            ("flow.main.tcp.last_link.initial", initial.to_string()),
                            ("flow.main.tcp.last_link.per", per_h.to_string()),
                            ("run.seed", seed.to_string()),
                            ("run.duration", format!("{duration}s")),
                        ];
                        let st = starts(seed, CROSS_IDS.len(), span);
                        let keys: Vec<String> = CROSS_IDS
                            .iter()
                            .map(|id| format!("flow.{id}.start"))
                            .collect();
                        let mut owned = Vec::new();
                        for (k, s) in keys.iter().zip(st) {
                            owned.push((k.as_str(), format!("{s:.3}s")));
                        }
                        params.extend(owned);
                        let name = format!("rtt={rtt} loss={loss} {label} seed={seed}");
                        jobs.push(Job {
                            scenario: template.build(&name, &params)?,
                            label: name,
                        });
                    }
                }
            }
        }
        let results = run_jobs(jobs, ctx.progress)?;
        let mut it = results.iter();
        let mut collect = |n: usize| -> Vec<Vec<Point>> {
            rtts.iter()
                .map(|_| {
                    (0..n)
                        .map(|_| {
                            let (mut m, mut d, mut plr) = (Vec::new(), Vec::new(), Vec::new());
                            for _ in 0..seeds {
                                if let Some(r) = it.next() {
                                    if let Some(f) = r.flows.iter().find(|f| !f.cross) {
                                        let retx = f.retransmitted_segments as f64;
                                        let sent = f.bytes_delivered as f64 / 1000.0 + retx;
                                        plr.push(if sent > 0.0 { retx / sent } else { 0.0 });
                                    }
                                    m.push(
                                        r.flows
                                            .iter()
                                            .filter(|f| !f.cross)
                                            .map(|f| f.goodput_bps)
                                            .sum::<f64>()
                                            / 1e3,
                                    );
                                    let bulk: Vec<f64> = r
                                        .flows
                                        .iter()
                                        .filter(|f| f.cross && f.protocol == "tcp")
                                        .map(|f| f.goodput_bps / 1e3)
                                        .collect();
                                    d.push(bulk.iter().sum::<f64>() / bulk.len().max(1) as f64);
                                }
                            }
                            Point {
                                main: Estimate::from_sample(&m),
                                dummy: Estimate::from_sample(&d),
                                plr: Estimate::from_sample(&plr),
                            }
                        })
                        .collect()
                })
                .collect()
        };
        let fig3 = collect(VARIANTS.len());
        let by_per: Vec<Vec<Vec<Point>>> = pers.iter().map(|_| collect(2)).collect();
        let Some(t1) = by_per.last() else {
            return Err(LabError::Simulation {
                label: "last-link".into(),
                message: "no PER runs".into(),
            });
        };

        let mut report = Report::new(self.title());
        report.section(
            "Setup",
            &format!(
                "Figure 2's topology: client —7 Mb/s, 1 ms— ISP1 —45 Mb/s— ISP2 —100 Mb/s— server; \
                 seven dummy hosts per ISP on 100 Mb/s links; five bulk NewReno cross flows (window \
                 20 segments, ns-2's default) and two interactive flows (16 kb/s streams of 100-byte \
                 packets standing in for Telnet), all starting uniformly at random in 0–{span} s. \
                 The main flow is NewReno without SACK, 1 KB segments, unlimited window; its \
                 receiver reports the access link's bandwidth and PER in the last-link option. \
                 The core's delay sets the RTT. {seeds} seed(s), {duration} s runs{}.",
                if ctx.quick { " (quick mode; the paper runs 1000 s)" } else { "" }
            ),
        );
        // Fig. 3 table.
        let mut rows = Vec::new();
        for (ri, rtt) in rtts.iter().enumerate() {
            let mut row = vec![rtt.to_string()];
            for point in &fig3[ri] {
                row.push(num(mean(&point.main), 0));
            }
            rows.push(row);
        }
        report.section(
            "Figure 3: throughput of the main connection (kb/s), PER 0",
            "The paper gives Figure 3 only as a plot: Max-Cwnd much better than NewReno, \
             Initial a little better, the combination best (≈30 % above NewReno at RTT ≈200 ms).",
        );
        let mut header = vec!["RTT (ms)"];
        header.extend(VARIANTS.iter().map(|v| v.0));
        report.table(&header, &rows);
        let series: Vec<Series> = VARIANTS
            .iter()
            .enumerate()
            .map(|(v, (label, ..))| Series {
                label: (*label).to_owned(),
                points: rtts
                    .iter()
                    .enumerate()
                    .map(|(ri, rtt)| (*rtt as f64, mean(&fig3[ri][v].main)))
                    .collect(),
            })
            .collect();
        chart::lines(
            &ctx.out_dir.join("fig3-throughput.svg"),
            &Axes {
                title: "Throughput of TCP and HTCP (Fig. 3)",
                x: "RTT (ms)",
                y: "throughput (kb/s)",
                log_x: false,
            },
            &series,
        )?;
        report.image("Figure 3", "fig3-throughput.svg");
        // Table 1.
        let mut rows = Vec::new();
        for (ri, rtt) in rtts.iter().enumerate() {
            let paper = PAPER_TABLE1.iter().find(|p| p.0 == *rtt);
            rows.push(vec![
                rtt.to_string(),
                num(mean(&t1[ri][0].main), 1),
                num(mean(&t1[ri][1].main), 1),
                num(mean(&t1[ri][0].dummy), 1),
                num(mean(&t1[ri][1].dummy), 1),
                format!(
                    "{} / {}",
                    num(100.0 * mean(&t1[ri][0].plr), 2),
                    num(100.0 * mean(&t1[ri][1].plr), 2)
                ),
                paper.map_or("–".into(), |p| {
                    format!("{} / {} / {} / {}", p.1, p.2, p.3, p.4)
                }),
            ]);
        }
        report.section(
            "Table 1: PER heuristic at PER 0.8 % (kb/s)",
            "Ours at PER 0.8 %; the paper's Table 1 row (TCP / HTCP / dummy next to TCP / dummy \
             next to HTCP) summarises its runs over PER 0.08–0.8 %.",
        );
        report.table(
            &[
                "RTT (ms)",
                "NewReno",
                "PER heuristic",
                "bulk cross flow next to NewReno",
                "next to PER heuristic",
                "PLR % N / H",
                "paper",
            ],
            &rows,
        );
        if pers.len() > 1 {
            let mut series = Vec::new();
            for (ri, rtt) in rtts.iter().enumerate() {
                for (k, name) in ["NewReno", "PER heuristic"].iter().enumerate() {
                    series.push(Series {
                        label: format!("{name}, RTT {rtt} ms"),
                        points: pers
                            .iter()
                            .zip(&by_per)
                            .map(|(p, runs)| (100.0 * p, mean(&runs[ri][k].main)))
                            .collect(),
                    });
                }
            }
            chart::lines(
                &ctx.out_dir.join("fig5-per.svg"),
                &Axes {
                    title: "Throughput under different PER and RTT (Fig. 5)",
                    x: "PER (%)",
                    y: "throughput (kb/s)",
                    log_x: true,
                },
                &series,
            )?;
            report.image("Figure 5", "fig5-per.svg");
        }
        // Claims.
        let mut ours = serde_json::Map::new();
        let (mut ge, mut best) = (true, true);
        for (ri, rtt) in rtts.iter().enumerate() {
            let m: Vec<f64> = (0..VARIANTS.len())
                .map(|v| mean(&fig3[ri][v].main))
                .collect();
            ge &= m[3] >= 0.95 * m[0] && m[1] >= 0.95 * m[0] && m[2] >= 0.95 * m[0];
            best &= m[3] >= 0.98 * m[1].max(m[2]);
            ours.insert(
                format!("rtt={rtt}"),
                json!({"newreno": m[0], "max_cwnd": m[1], "initial": m[2], "both": m[3]}),
            );
        }
        let fig3_paper = json!("Figure 3 (plot): combined ≈30 % above NewReno at RTT ≈200 ms; Max-Cwnd much better, Initial slightly better");
        report.claim(Claim::new(
            "max-cwnd-initial-ge-newreno",
            "Figure 3: Max-Cwnd, Initial and both give at least NewReno's throughput at every RTT (within 5 %)",
            ours.clone().into(),
            fig3_paper.clone(),
            ge,
        ));
        report.claim(Claim::new(
            "combined-best",
            "Figure 3: Max-Cwnd + Initial is the best variant at every RTT (within 2 %)",
            ours.into(),
            fig3_paper,
            best,
        ));
        let mut ours = serde_json::Map::new();
        let mut paper = serde_json::Map::new();
        let (mut ratio_ok, mut fair) = (true, true);
        for (ri, rtt) in rtts.iter().enumerate() {
            let (n, h) = (mean(&t1[ri][0].main), mean(&t1[ri][1].main));
            let (dn, dh) = (mean(&t1[ri][0].dummy), mean(&t1[ri][1].dummy));
            ratio_ok &= h >= 2.5 * n;
            fair &= (dh - dn).abs() <= 0.05 * dn;
            ours.insert(
                format!("rtt={rtt}"),
                json!({"newreno": n, "per_heuristic": h, "ratio": h / n, "cross_next_to_newreno": dn, "cross_next_to_per": dh}),
            );
            if let Some(p) = PAPER_TABLE1.iter().find(|p| p.0 == *rtt) {
                paper.insert(
                    format!("rtt={rtt}"),
                    json!({"newreno": p.1, "per_heuristic": p.2, "ratio": p.2 / p.1, "cross_next_to_newreno": p.3, "cross_next_to_per": p.4}),
                );
            }
        }
        report.claim(Claim::new(
            "per-heuristic-2.5x",
            "Table 1: at PER 0.8 % the PER heuristic's throughput is at least 2.5× NewReno's at every RTT",
            ours.clone().into(),
            paper.clone().into(),
            ratio_ok,
        ));
        report.claim(Claim::new(
            "per-heuristic-cross-fair",
            "Table 1: the bulk cross flows' throughput next to the PER heuristic is within ±5 % of their throughput next to NewReno",
            ours.into(),
            paper.into(),
            fair,
        ));
        report.section(
            "Where ours differ and why",
            "**Absolute numbers.** The paper's main connection reaches only ≈100 kb/s at RTT \
             100 ms over a 7 Mb/s access link and its dummy flows ≈1.4 Mb/s; neither is \
             explained by the setup it describes (ns-2 defaults such as a 20-segment window or \
             50-packet queues are likely but not stated). We give the cross flows ns-2's \
             default window of 20 segments (which reproduces the dummy flows' order of \
             magnitude, 1.6 Mb/s at 100 ms) and the main flow an unlimited window so that the \
             window heuristics can matter; queues are 100 packets. Telnet sources are \
             constant low-rate streams.\n\n\
             **Max-Cwnd** uses the connection's minimum RTT (docs/DECISIONS.md): with the \
             smoothed RTT the cap follows the window up through the queue it causes and never \
             binds. **Initial tuning** sends a burst of BW·RTT segments at 100 Mb/s; whenever \
             that exceeds the 100-packet queues (RTT ≥ 200 ms) it loses many segments at once, \
             which NewReno without SACK repairs one per RTT, so Initial alone is at most a \
             little better than NewReno (as the paper says) and Max-Cwnd + Initial can fall \
             below Max-Cwnd alone, the opposite of Fig. 3's ordering.\n\n\
             **PER heuristic.** It excuses a loss only while PLR = retransmitted / sent \
             segments ≤ PER. Not cutting the window lets it grow until the access queue \
             overflows, and NewReno's timeouts retransmit whole windows (go-back-N, counted in \
             N_retr): the column \"PLR % N / H\" shows PLR above the 0.8 % PER almost all the \
             time, so the heuristic rarely fires and gains a few percent, not the paper's \
             3–4×. The cross flows are window-limited and the 45 Mb/s core is not congested, \
             so their throughput is the same next to either variant (the fairness claim holds, \
             but it is not a strong test here). Claims are computed from our numbers as \
             measured.",
        );
        Ok(report)
    }
}
