//! Beyond the paper (issue 31 item 8): pTCP on R²CP's hard paths — the cells of
//! `roam reproduce r2cp`'s hard-path sweep (`roam-lab/src/experiments/r2cp/hard_paths.rs`):
//! a fast path (static 2–20 Mb/s, or an LTE capacity trace) beside a slow one (0.1–4 Mb/s, or
//! the UMTS driving trace) with drop-tail queues of 20, 200 and 1000 packets, RTTs from 20 to
//! 800 ms and random loss of 1 and 5 % on the slow path — on the same template
//! (`experiments/r2cp/two_paths.toml`), with R²CP's own figure beside pTCP's.
//!
//! pTCP is point to point: both pipes run from server1 to the mobile host's two interfaces
//! (the cell pipe through the template's 100 Mb/s, 1 ms core link: 1 ms more each way than
//! R²CP's pipe to server2). Its bar is TCP (NewReno, the same engine as its pipes) alone on
//! each path; R²CP's is RCP alone on each path, as in the r2cp report. Every flow has a 4 MB
//! receive buffer.

use serde_json::json;

use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::runner::run_jobs;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

/// One path: a static rate (Mb/s) or a trace, base RTT (ms), queue (packets), random loss.
#[derive(Debug, Clone, Copy)]
struct PathSpec {
    mbps: f64,
    trace: Option<&'static str>,
    rtt_ms: f64,
    queue: u32,
    loss: f64,
}

const fn stat(mbps: f64, rtt_ms: f64, queue: u32) -> PathSpec {
    PathSpec {
        mbps,
        trace: None,
        rtt_ms,
        queue,
        loss: 0.0,
    }
}

const fn trace(name: &'static str, rtt_ms: f64, queue: u32) -> PathSpec {
    PathSpec {
        mbps: 10.0,
        trace: Some(name),
        rtt_ms,
        queue,
        loss: 0.0,
    }
}

impl PathSpec {
    fn label(&self) -> String {
        let what = match self.trace {
            Some(t) => t.trim_end_matches("-short").to_owned(),
            None => format!("{} Mb/s", self.mbps),
        };
        let loss = if self.loss > 0.0 {
            format!(", {} % loss", self.loss * 100.0)
        } else {
            String::new()
        };
        format!("{what} {} ms {}p{loss}", self.rtt_ms, self.queue)
    }

    /// Overrides putting this path on `link` (as the r2cp report's `path`: the wireless
    /// hop's one-way delay is RTT/2 − 1 ms of the wired hop).
    fn params(&self, ctx: &Ctx, link: &str) -> Vec<(String, String)> {
        let mut p = vec![
            (format!("link.{link}.rate"), format!("{}Mbps", self.mbps)),
            (
                format!("link.{link}.delay"),
                format!("{}us", ((self.rtt_ms / 2.0 - 1.0) * 1000.0).round() as u64),
            ),
            (format!("link.{link}.queue"), format!("{}p", self.queue)),
        ];
        if let Some(name) = self.trace {
            let file = ctx.repo_root.join("traces").join(format!("{name}.down"));
            let file = std::fs::canonicalize(&file).unwrap_or(file);
            p.push((
                format!("link.{link}.forward.trace"),
                file.to_string_lossy().into_owned(),
            ));
        }
        if self.loss > 0.0 {
            for dir in ["forward", "reverse"] {
                p.push((format!("link.{link}.{dir}.loss"), self.loss.to_string()));
            }
        }
        p
    }
}

/// The r2cp report's cells (its `cells`), in its order.
fn cells(quick: bool) -> Vec<(&'static str, PathSpec, PathSpec)> {
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
                out.push(("rate × queue", fast, slow));
            }
        }
    }
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
            out.push(("RTT", stat(8.0, f, 200), stat(2.0, s, queue)));
        }
    }
    if !quick {
        for fast in [
            stat(8.0, 30.0, 20),
            stat(8.0, 30.0, 1000),
            trace("Verizon-LTE-short", 40.0, 20),
            trace("Verizon-LTE-short", 40.0, 1000),
        ] {
            out.push(("fast queue", fast, stat(0.5, 80.0, 1000)));
        }
    }
    let losses: &[f64] = if quick { &[0.05] } else { &[0.01, 0.05] };
    let lossy_fasts = if quick {
        vec![stat(8.0, 30.0, 200)]
    } else {
        vec![stat(8.0, 30.0, 200), trace("Verizon-LTE-short", 40.0, 200)]
    };
    for fast in lossy_fasts {
        for mbps in if quick { &[2.0][..] } else { &[0.5, 2.0][..] } {
            for &loss in losses {
                let slow = PathSpec {
                    loss,
                    ..stat(*mbps, 200.0, 200)
                };
                out.push(("loss", fast, slow));
            }
        }
    }
    out
}

/// The flows of one run, replacing the template's `f` (R²CP) and `single` entries.
pub(super) fn variant(v: &str) -> Vec<(String, String)> {
    let buf = "recv_buffer = 4194304";
    let single = |flow: String| {
        vec![
            ("flow.f.count".to_string(), "0".to_string()),
            ("flow.single".to_string(), flow),
        ]
    };
    match v {
        "ptcp" => single(format!(
            "{{id = \"single\", protocol = \"ptcp\", from = \"server1\", to = \"mobile\", \
             cc = \"newreno\", tcp = {{{buf}}}, ptcp = {{pipe = [{{to_iface = 0}}, \
             {{to_iface = 1}}]}}}}"
        )),
        "tcp0" | "tcp1" => {
            let k = if v == "tcp0" { 0 } else { 1 };
            single(format!(
                "{{id = \"single\", protocol = \"tcp\", from = \"server{}\", to = \"mobile\", \
                 to_iface = {k}, cc = \"newreno\", tcp = {{{buf}}}}}",
                k + 1
            ))
        }
        "rcp0" | "rcp1" => {
            let k = if v == "rcp0" { 0 } else { 1 };
            vec![
                ("flow.f.count".into(), "0".into()),
                ("flow.single.count".into(), "1".into()),
                ("flow.single.from".into(), format!("server{}", k + 1)),
                ("flow.single.to_iface".into(), k.to_string()),
                ("flow.single.rcp.recv_buffer".into(), "4194304".into()),
            ]
        }
        _ => vec![("flow.f.rcp.recv_buffer".into(), "4194304".into())],
    }
}

/// Job order per cell and seed.
const VARIANTS: [&str; 6] = ["ptcp", "tcp0", "tcp1", "r2cp", "rcp0", "rcp1"];

fn goodput(r: &roam_sim::result::RunResult) -> f64 {
    r.flows
        .iter()
        .find(|f| f.id == "f" || f.id == "single")
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6)
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
    let t = Template::load(&ctx.experiment_dir("r2cp").join("two_paths.toml"))?;
    let secs: u64 = ctx.pick(20, 60);
    let cells = cells(ctx.quick);
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let mut jobs = Vec::new();
    let mut per_cell = Vec::new();
    for (_, fast, slow) in &cells {
        let cell_seeds = if slow.loss > 0.0 {
            &seeds[..]
        } else {
            &seeds[..1]
        };
        per_cell.push(cell_seeds.len());
        for &seed in cell_seeds {
            for v in VARIANTS {
                let mut p = fast.params(ctx, "wifi");
                p.extend(slow.params(ctx, "cell"));
                p.push(("run.duration".into(), format!("\"{secs}s\"")));
                p.push(("run.seed".into(), seed.to_string()));
                p.extend(variant(v));
                jobs.push(t.job(
                    format!("hard {} + {} seed {seed} {v}", fast.label(), slow.label()),
                    &p,
                )?);
            }
        }
    }
    let runs = run_jobs(jobs, ctx.progress)?;
    let mut at = 0;
    let mut rows = Vec::new();
    let (mut p_best, mut p_ideal, mut r_best, mut r_ideal) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((group, fast, slow), n) in cells.iter().zip(per_cell) {
        let mut m = [0.0f64; 6];
        for _ in 0..n {
            for (k, slot) in m.iter_mut().enumerate() {
                *slot += runs.get(at + k).map_or(f64::NAN, goodput) / n as f64;
            }
            at += VARIANTS.len();
        }
        let [ptcp, tcp0, tcp1, r2cp, rcp0, rcp1] = m;
        let (pb, pi) = (ptcp / tcp0.max(tcp1), ptcp / (tcp0 + tcp1));
        let (rb, ri) = (r2cp / rcp0.max(rcp1), r2cp / (rcp0 + rcp1));
        p_best.push(pb);
        p_ideal.push(pi);
        r_best.push(rb);
        r_ideal.push(ri);
        rows.push(vec![
            Cell::text(*group),
            Cell::text(fast.label()),
            Cell::text(slow.label()),
            Cell::num(tcp0, 3),
            Cell::num(tcp1, 3),
            Cell::num(ptcp, 3),
            Cell::num(pb, 3),
            Cell::num(pi, 3),
            Cell::num(r2cp, 3),
            Cell::num(rb, 3),
            Cell::num(ri, 3),
        ]);
    }
    report.section(
        "Beyond the paper: R²CP's hard paths (issue 31 item 8)",
        &format!(
            "The cells of `roam reproduce r2cp`'s hard-path sweep on its template \
             (`experiments/r2cp/two_paths.toml`), {secs} s backlogged runs; cells with random \
             loss are the mean of {} seed(s). pTCP: one pipe per interface of the mobile host, \
             both from server1, NewReno; its bar is TCP alone on each path. R²CP and its bar \
             (RCP alone on each path) are rerun here in the same cells. Goodput in Mb/s; \
             best = the better single path, ideal = both added.",
            seeds.len()
        ),
    );
    report.table(
        &[
            "group",
            "fast path",
            "slow path",
            "TCP fast alone",
            "TCP slow alone",
            "pTCP",
            "pTCP / best TCP",
            "pTCP / ideal",
            "R²CP",
            "R²CP / best RCP",
            "R²CP / ideal",
        ],
        &rows,
    );
    let worst = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut ev = Evidence::new();
    ev.all("pTCP over the best single TCP", &p_best);
    ev.some("cells", p_best.len());
    report.claim(Claim::judged(
        "hard-paths-ptcp-never-below-best-single",
        "On every hard-path cell pTCP reaches at least 0.98× TCP alone on the better path \
         (issue 31 item 8, R²CP's bar)",
        json!({"worst": worst(&p_best), "median": median(p_best.clone()),
               "r2cp_worst": worst(&r_best), "r2cp_median": median(r_best.clone())}),
        json!({"not_in_paper": true}),
        ev,
        p_best.iter().all(|x| *x >= 0.98),
    ));
    let mut ev = Evidence::new();
    ev.all("pTCP of the ideal", &p_ideal);
    ev.some("cells", p_ideal.len());
    let med = median(p_ideal.clone());
    report.claim(Claim::judged(
        "hard-paths-ptcp-near-ideal",
        "pTCP reaches at least 95 % of the ideal (TCP alone on each path, added) in the median \
         hard-path cell (issue 31 item 8)",
        json!({"median_of_ideal": med, "r2cp_median_of_ideal": median(r_ideal.clone())}),
        json!({"not_in_paper": true}),
        ev,
        med >= 0.95,
    ));
    Ok(())
}
