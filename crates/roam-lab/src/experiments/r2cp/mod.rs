//! Reproduction of R²CP (rcp-r2cp.txt §4.4.3, Figures 11(c)-(d) and 12): bandwidth aggregation
//! over two pipes to two servers under bandwidth and RTT mismatches and fluctuating background
//! traffic, policy-based aggregation, handoff and server-migration timelines; and, beyond the
//! paper, aggregation over real cellular capacity traces and a blackout of the primary path,
//! beside Linux MPTCP and aria2 (the project's reference figures (`anchors/README.md` beside the repository)). One module per setup under
//! `r2cp/`; the topology is `experiments/r2cp/two_paths.toml`.

mod beyond;
mod coupling;
mod fluctuation;
mod hard_paths;
mod mismatch;
mod observe;
mod policy;
mod timelines;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rayon::prelude::*;
use roam_sim::result::{FlowResult, RunResult};

use self::observe::Observer;
use crate::claims::Evidence;
use crate::report::{num, Cell};
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Claim, Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct R2cp;

impl Experiment for R2cp {
    fn name(&self) -> &'static str {
        "r2cp"
    }

    fn title(&self) -> &'static str {
        "R²CP: multi-pipe aggregation, handoff and migration (rcp-r2cp.txt §4.4, Figures 11-12)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        ctx.create_out_dir()?;
        let mut report = Report::for_run(self.title(), ctx);
        report.section(
            "Setup",
            &format!(
                "Mode: {}. A mobile host with two wireless interfaces, each leading to its own \
                 server (`experiments/r2cp/two_paths.toml`, \"a network topology similar to the \
                 testbed topology shown in figure 10\"): the wireless hops are the bottlenecks \
                 (drop-tail, 50 packets, ns-2's default), the wired hops 100 Mb/s, 1 ms. RTT = \
                 the path's base round trip (2 × (wireless delay + 1 ms)). Every pipe runs \
                 NewReno at the receiver, 1000-byte segments; the R²CP receive buffer is 256 KB \
                 (the paper does not give it; chosen above the aggregate bandwidth-delay \
                 product at the largest RTT, 8 Mb/s × 210 ms ≈ 210 KB, so that the buffer does \
                 not cap the ideal). Ideal = the sum of the goodputs of single-path RCP flows, \
                 one on each path alone, measured in the same setup (the paper's \"sum of \
                 bandwidths along the two pipes\"). Backlogged transfers, {} s runs. Runs \
                 without random elements are deterministic and run once; those with random \
                 background traffic run {} seeds (mean ± 95 % CI).",
                if ctx.quick {
                    "quick (shorter runs, fewer seeds and sweep points)"
                } else {
                    "full"
                },
                duration_s(ctx),
                seeds(ctx).len()
            ),
        );
        mismatch::bandwidth(ctx, &mut report)?;
        mismatch::rtt(ctx, &mut report)?;
        fluctuation::run(ctx, &mut report)?;
        policy::run(ctx, &mut report)?;
        timelines::run(ctx, &mut report)?;
        beyond::traces(ctx, &mut report)?;
        beyond::blackout(ctx, &mut report)?;
        hard_paths::run(ctx, &mut report)?;
        coupling::run(ctx, &mut report)?;
        differences(&mut report);
        Ok(report)
    }
}

/// Why a claim may come out differently here than in the paper.
fn explanation(id: &str) -> &'static str {
    match id {
        "rtt-r2cp-near-ideal" | "rtt-r2cp-s-falls-beyond-3" | "rtt-buffer-75-r2cp-lowest" => {
            "R²CP's flow control charges the receive buffer per requested segment (§3.3.4: \
             a \"dummy\" sk_buff for each segment requested; docs/R2CP.md), so the slow \
             pipe's units that rank binds far ahead cost only their own size. R²CP-s binds \
             the next unit, so its charge is the span from the read point; with our 256 KB \
             buffer (the paper gives none) that span suffices up to the largest mismatch \
             (8 Mb/s × 210 ms ≈ 210 KB): R²CP-s stays near the ideal and out-of-order data \
             hardly ever fill 75 % of the buffer. It falls only with a smaller buffer (the \
             buffer-size table: at 64 KB R²CP 3.74 Mb/s, R²CP-s 2.48). At 6-7× R²CP is a few \
             per cent below R²CP-s: no longer held below the path's 50-packet queue by the \
             buffer, the slow pipe's NewReno window overflows it, and bursts of requests \
             overflow its reverse queue (at 210 ms, 73 DATA and 122 REQ drops on the slow path in 120 s, against 30 and 23 for R²CP-s); each \
             halving costs a 210 ms pipe seconds of linear growth, so the slow path is 81 % \
             busy against 87 %."
        }
        "handoff-mbb-no-stall" => {
            "The object arrives intact and data keep arriving, but in-order delivery pauses \
             longer than 100 ms once around the switch: carrying everything alone, the new \
             pipe's slow start overflows its 50-packet queue; the unit at the head was \
             requested behind the far-ahead units rank had given that pipe, so no later \
             request's data arrives to reveal its loss before its queue drains, and the old \
             pipe, draining, is no second path to rescue it through (docs/R2CP.md, \"Head-of-line \
             awareness\", second round). The 100 ms bound is ours."
        }
        "bandwidth-r2cp-ideal" => {
            "At 4 + 1 Mb/s rank scheduling binds the slow pipe's units ahead by the fast \
             pipe's window; with the 50-packet queue on the fast path its window (and so the \
             skip) is large. Under our former span limit on the buffer such units often did \
             not fit and the slow pipe waited (97.1 % of the ideal); with §3.3.4's charge per \
             requested segment R²CP is at 99.1 %, R²CP-s at 99.3 %."
        }
        "fluctuation-r2cp-within-15pct" => {
            "The ideal is measured per seed with the same background traffic on each path \
             alone; §3.4.1's Pareto parameters (500 kb/s bursts, shape 1.5) with burst and \
             idle times 0.1φ s and 0.2φ s."
        }
        "policy-aggregate-steady" | "policy-pipe2-mirrors-pipe1" => {
            "The testbed's WLANs are modelled as 1 Mb/s wireless hops (30 ms RTT); the \
             background on pipe 1 is three Pareto on/off UDP sources (500 kb/s bursts, mean \
             burst 1 s, idle 2 s, shape 1.5). Per-pipe rates are measured from DATA arrivals \
             on each wireless hop (packet trace), steady state from 5 s. Two engine defects \
             stopped the connection under a binding policy: a refused secondary ended the \
             scheduling round, and (after a loss on the primary inflated its RTT) the \
             primary's rank skip left the next bytes to the faster secondary, which must \
             leave the tokens to the primary, so the primary bound units beyond the buffer \
             span and neither pipe requested anything (docs/R2CP.md)."
        }
        "trace-pairs-r2cp-ideal" | "trace-pairs-r2cp-above-best-single" => {
            "Beyond the paper. Each trace drives the downlink of one path (one-way delays: \
             LTE 20 ms, UMTS 40 ms, as in the MPTCP anchor), 200-packet queues, the engine's \
             default 4 MB receive buffer (Linux autotunes MPTCP's up to 6 MB)."
        }
        "blackout-secondary-carries" | "blackout-primary-back-within-1s" => {
            "Beyond the paper. A blackout drops everything on the primary path in both \
             directions but leaves the interface up, so the primary pipe learns of it only \
             by its retransmission timeout (1 s floor): the first dark second delivers \
             nothing in order. Then the holes its timeout declared go to the secondary \
             (§4.1.4: reassigned \"to another pipe that has space in its window\"); a pipe \
             in timeout backoff takes no units and only probes, one unit per un-backed-off \
             RTO, whose range the secondary fetches too, until it delivers again \
             (docs/R2CP.md). Before this rule the primary took its own holes back and lost \
             them again, and in-order delivery stopped for the whole blackout."
        }
        _ => "",
    }
}

/// The "Where ours differ and why" section, claim by claim.
fn differences(report: &mut Report) {
    let mut text = String::new();
    // An explanation shared by several claims is written once, under the first of them.
    let mut told: Vec<(&'static str, String)> = Vec::new();
    for c in &report.claims {
        let why = explanation(&c.id);
        let why = match told.iter().find(|(w, _)| !w.is_empty() && *w == why) {
            Some((_, first)) => format!("See `{first}` above."),
            None => {
                told.push((why, c.id.clone()));
                why.to_owned()
            }
        };
        text.push_str(&format!(
            "- **{}** ({}): {} Ours: `{}`; paper: `{}`. {}\n",
            c.id,
            if c.holds { "holds" } else { "does not hold" },
            c.claim,
            c.ours,
            c.paper,
            why
        ));
    }
    report.section("Where ours differ and why", &text);
}

/// The engine's default receive buffer (4 MB), used for the claims beyond the paper.
const BIG_BUFFER: &str = "4194304";

/// Seeds of runs with random background traffic.
fn seeds(ctx: &Ctx) -> Vec<u64> {
    (1..=ctx.pick(2, 10)).collect()
}

/// Length of the backlogged runs (s).
fn duration_s(ctx: &Ctx) -> u64 {
    ctx.pick(20, 120)
}

/// The two-path template.
fn template(ctx: &Ctx) -> Result<Template, LabError> {
    Template::load(&ctx.experiment_dir("r2cp").join("two_paths.toml"))
}

/// Dotted-key overrides of one run.
type Params = Vec<(String, String)>;

/// One override.
fn param(key: impl Into<String>, value: impl Into<String>) -> (String, String) {
    (key.into(), value.into())
}

/// Overrides that put a path's wireless hop at `mbps` and base RTT `rtt_ms` (wireless one-way
/// delay = RTT/2 − 1 ms of the wired hop).
fn path(link: &str, mbps: f64, rtt_ms: f64) -> Params {
    vec![
        param(format!("link.{link}.rate"), format!("{mbps}Mbps")),
        param(
            format!("link.{link}.delay"),
            format!("{}us", ((rtt_ms / 2.0 - 1.0) * 1000.0).round() as u64),
        ),
    ]
}

/// Overrides that replace the R²CP flow by a single-path RCP flow on path `k` (0: wifi to
/// server1, 1: cell to server2).
fn single(k: usize) -> Params {
    vec![
        param("flow.f.count", "0"),
        param("flow.single.count", "1"),
        param(
            "flow.single.from",
            if k == 0 { "server1" } else { "server2" },
        ),
        param("flow.single.to_iface", k.to_string()),
    ]
}

/// Builds one scenario.
fn build(t: &Template, label: &str, params: &Params) -> Result<roam_sim::Scenario, LabError> {
    let p: Vec<(&str, String)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    t.build(label, &p)
}

/// Builds and runs one job per (label, overrides), in order.
fn run_all(
    ctx: &Ctx,
    t: &Template,
    sets: Vec<(String, Params)>,
) -> Result<Vec<RunResult>, LabError> {
    let mut jobs = Vec::with_capacity(sets.len());
    for (label, params) in sets {
        jobs.push(Job {
            scenario: build(t, &label, &params)?,
            label,
        });
    }
    run_jobs(jobs, ctx.progress)
}

/// Like [`run_all`], each run traced by a fresh copy of `observer` (returned beside its
/// result), in parallel and in order.
fn run_traced(
    t: &Template,
    sets: Vec<(String, Params)>,
    observer: &Observer,
) -> Result<Vec<(RunResult, Observer)>, LabError> {
    let mut jobs = Vec::with_capacity(sets.len());
    for (label, params) in sets {
        jobs.push((build(t, &label, &params)?, label));
    }
    jobs.par_iter()
        .map(|(scenario, label)| {
            let mut o = observer.clone();
            catch_unwind(AssertUnwindSafe(|| {
                let r = roam_sim::run_traced(scenario, &mut |_| {}, &mut o);
                (r, o)
            }))
            .map_err(|p| LabError::Simulation {
                label: label.clone(),
                message: p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "panic".to_owned()),
            })
        })
        .collect()
}

/// The flow called `id`.
fn flow<'a>(r: &'a RunResult, id: &str) -> Option<&'a FlowResult> {
    r.flows.iter().find(|f| f.id == id)
}

/// Goodput of the measured flow of a run: the R²CP flow `f`, or the single-path flow.
fn main_goodput(r: &RunResult) -> f64 {
    flow(r, "f")
        .or_else(|| flow(r, "single"))
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6)
}

/// Mean of an estimate (NaN when empty).
fn mean(e: &Estimate) -> f64 {
    e.mean.unwrap_or(f64::NAN)
}

/// `mean ± ci` with `d` decimals.
fn show(e: &Estimate, d: usize) -> String {
    match e.ci95 {
        Some(c) => format!("{} ± {}", num(mean(e), d), num(c, d)),
        None => num(mean(e), d),
    }
}

/// A number a claim may rely on: finite and strictly positive.
fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// `part / whole`, NaN unless both are usable.
fn ratio(part: f64, whole: f64) -> f64 {
    if part.is_finite() && positive(whole) {
        part / whole
    } else {
        f64::NAN
    }
}

/// True when `xs` is non-empty and every value is finite and satisfies `ok`.
/// A claim judged by `rule` on the numbers `reads` names: each list must hold at least one
/// number and every number must be finite, or the claim fails whatever the rule says
/// (`claims::Evidence`).
fn judge(
    id: &str,
    claim: &str,
    ours: serde_json::Value,
    paper: serde_json::Value,
    reads: &[(&str, &[f64])],
    rule: bool,
) -> Claim {
    let mut evidence = Evidence::new();
    for (name, xs) in reads {
        evidence.all(name, xs);
    }
    Claim::judged(id, claim, ours, paper, evidence, rule)
}

/// Adds a table whose cells were formatted as text: a cell that reads as a number becomes a
/// numeric cell (one number per CSV cell, shown as written), anything else stays text.
fn text_table(report: &mut Report, header: &[&str], rows: &[Vec<String>]) {
    let cells: Vec<Vec<Cell>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|t| match t.trim().parse::<f64>() {
                    Ok(value) if value.is_finite() => Cell::Shown {
                        shown: t.clone(),
                        value,
                    },
                    _ => Cell::Text(t.clone()),
                })
                .collect()
        })
        .collect();
    report.table(header, &cells);
}

fn all_finite(xs: &[f64], ok: impl Fn(f64) -> bool) -> bool {
    !xs.is_empty() && xs.iter().all(|&x| x.is_finite() && ok(x))
}

/// Population mean and coefficient of variation (σ/μ); NaN when empty or the mean is 0.
fn mean_cov(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    (m, if m > 0.0 { var.sqrt() / m } else { f64::NAN })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_checks_refuse_missing_numbers() {
        assert!(ratio(1.0, 0.0).is_nan());
        assert!(ratio(f64::NAN, 2.0).is_nan());
        assert_eq!(ratio(1.0, 2.0), 0.5);
        assert!(!all_finite(&[], |_| true));
        assert!(!all_finite(&[1.0, f64::NAN], |_| true));
        assert!(all_finite(&[1.0, 2.0], |x| x > 0.5));
        assert_eq!(mean_cov(&[2.0, 2.0]), (2.0, 0.0));
        assert!(mean_cov(&[0.0, 0.0]).1.is_nan());
    }

    #[test]
    fn paths_set_rate_and_one_way_delay() {
        let p = path("cell", 4.0, 30.0);
        assert_eq!(p[0], param("link.cell.rate", "4Mbps"));
        assert_eq!(p[1], param("link.cell.delay", "14000us"));
    }
}
