//! Reproduction of RCP (rcp-r2cp.txt §3.4, Figures 4 and 5): TCP-friendliness on the dumbbell,
//! robustness to reverse-path loss, loss recovery over a lossy wireless hop (with and without
//! ELN, and the seven-loss example), RCP-STP over a satellite link, and power management on a
//! Markov channel. Each setup lives in its own module under `rcp/`; templates are in
//! `experiments/rcp/`.

mod friendliness;
mod power;
mod recovery;
mod satellite;

use roam_sim::result::{FlowResult, RunResult};

use crate::claims::Verdict;
use crate::runner::run_jobs;
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct Rcp;

impl Experiment for Rcp {
    fn name(&self) -> &'static str {
        "rcp"
    }

    fn title(&self) -> &'static str {
        "RCP: receiver-centric transport vs TCP (rcp-r2cp.txt §3.4, Figures 4-5)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        ctx.create_out_dir()?;
        let mut report = Report::for_run(self.title(), ctx);
        report.section(
            "Setup",
            &format!(
                "Mode: {}. Topology of Figure 3 (`experiments/rcp/dumbbell.toml`, \
                 `wireless.toml`), the satellite setup of §3.4.3 (`satellite.toml`). \
                 Every number is the mean over seeds with its 95 % confidence interval. RCP runs \
                 the same NewReno controller as TCP, at the receiver; its DATA header is as long \
                 as TCP's data segment header (41 bytes), see `docs/RCP.md`.",
                if ctx.quick {
                    "quick (fewer seeds, shorter runs, fewer sweep points)"
                } else {
                    "full (the paper's setup: 10 seeds, 300 s runs)"
                }
            ),
        );
        friendliness::run(ctx, &mut report)?;
        recovery::run(ctx, &mut report)?;
        satellite::run(ctx, &mut report)?;
        power::run(ctx, &mut report)?;
        differences(&mut report);
        Ok(report)
    }
}

/// Why a claim may come out differently here than in the paper (shown when it does not hold,
/// and for context when it does).
fn explanation(id: &str) -> &'static str {
    match id {
        "friendliness-mean-flat" | "friendliness-cov-flat" | "friendliness-tcp-not-hurt" => {
            "RCP runs TCP's NewReno rules at the receiver and its DATA segments are exactly as \
             long as TCP's, so at the drop-tail bottleneck the two behave alike. With 7 bytes \
             more per DATA segment (our first layout) a deterministic phase effect gave RCP \
             1.6x TCP's share (see docs/RCP.md); the remaining differences are per-seed \
             start-phase noise."
        }
        "staggered-early-intertwined" | "staggered-late-similar" => {
            "The late TCP group is not stopped at 150 s (our TCP flows have no stop time), so \
             the late groups are compared over 100-200 s, when both are active. The paper's \
             figure is one run; we judge the mean over seeds with its 95 % CI. Single seeds \
             can fall outside 0.8-1.25 when one group of five TCP flows has an unlucky run of \
             timeouts (in our last full run, seed 8's late TCP group made 4.4 MB against \
             5.4-6.0 MB in the other seeds, while its RCP group was typical)."
        }
        "reverse-rcp-tracks-tcp" => {
            "Reverse-path drops hit ACKs and cumulative REQs alike; a lost pull REQ is repaired \
             from the three blocks of the next REQ. Our TCP times out on a lost \
             retransmission while RCP detects it by the same threshold, which favours RCP as \
             reverse drops grow."
        }
        "recovery-rcp-ge-tcp-sack" => {
            "Our TCP-SACK is RFC 6675 without the paper's modification against timeouts on lost \
             retransmissions; RCP detects every hole, including lost re-requests, with the \
             out-of-order threshold and times out less. Window growth is not a difference: both \
             engines follow RFC 6582 and do not grow the window on the acknowledgement (or \
             arrival) that ends a recovery episode (docs/RCP.md, \"Window growth on the \
             arrival that ends recovery\"). What separates them at high loss is how they \
             detect and repair losses."
        }
        "recovery-rcp-eln-ge-tcp-eln" | "recovery-rcp-eln-2x-at-5pct" => {
            "TCP-ELN is the paper's: a single ELN bit on cumulative ACKs and NewReno recovery \
             without SACK, so it repairs one hole per RTT (§3.4.2). The paper names coupling \
             SACK with ELN as a different design; we show it as `with_sack` for comparison. It \
             repairs all holes in one recovery episode and so degrades much less than the \
             paper's TCP-ELN (1.46x instead of 3.1x at 5 % in our last full run)."
        }
        "seven-loss-rcp-eln-about-one-rtt" | "seven-loss-tcp-eln-rtt-per-loss" => {
            "TCP-ELN (the paper's, without SACK) needs about an RTT per loss as the paper \
             describes. With SACK (`with_sack`, not in the paper) all seven holes are SACKed at \
             once and repaired in about one RTT, like RCP-ELN. Both runs use a 40-segment \
             window so that no queue drop interferes."
        }
        "satellite-stp-well-above-newreno" => {
            "STP's algorithm is not specified in our copy of the paper; RCP-STP here is our own \
             design (docs/RCP.md). Periodic status requests made things worse at our drop-tail \
             queues and are off; the gain comes from the larger initial window and the \
             RTT-compensated window growth, and is smallest at 50 ms where the RTT is short: \
             there RCP-NewReno already keeps the forward link about four-fifths busy (all \
             traffic counted; see `forward_utilization_with_newreno`), and 20 % more goodput \
             would take it to about 93 %, with HTTP and the reverse flows' ACKs sharing its \
             50-packet queue. We did not tune RCP-STP to pass this threshold, which is our own \
             reading of \"much better\"; the paper gives Figure 5(c) only as a plot. A \
             backoff that drains only the forward queue, measured from one-way delays (tried \
             and not adopted, docs/RCP.md), gives 1.17 at 50 ms. A likely reason \
             for the smaller gap: much of what STP adds to TCP (receiver-driven selective \
             re-requests, feedback that tolerates reverse-path loss) RCP-NewReno already has, \
             so only the congestion-control part of STP is left to make a difference."
        }
        "power-rcp-less-energy" | "power-rcp-throughput-not-lower" => {
            "Energy is counted per interface state; the idle power (1.15 W) is our assumption \
             (the paper gives transmit/receive/sleep only). Only the forward direction of the \
             wireless hop follows the Markov channel."
        }
        _ => "",
    }
}

/// The "Where ours differ and why" section, claim by claim.
fn differences(report: &mut Report) {
    let mut text = String::new();
    for c in &report.claims {
        text.push_str(&format!(
            "- **{}** ({}): {} Ours: `{}`; paper: `{}`. {}\n",
            c.id,
            match c.verdict {
                Verdict::Holds => "holds",
                Verdict::Fails => "does not hold",
                Verdict::NotJudged => "not judged",
            },
            c.claim,
            c.ours,
            c.paper,
            explanation(&c.id)
        ));
    }
    report.section("Where ours differ and why", &text);
}

/// Seeds of every sweep point.
fn seeds(ctx: &Ctx) -> Vec<u64> {
    (1..=ctx.pick(2, 10)).collect()
}

/// A template from `experiments/rcp/`.
fn template(ctx: &Ctx, file: &str) -> Result<Template, LabError> {
    Template::load(&ctx.experiment_dir("rcp").join(file))
}

/// Dotted-key overrides of one run.
type Params = Vec<(String, String)>;

/// One override.
fn param(key: impl Into<String>, value: impl Into<String>) -> (String, String) {
    (key.into(), value.into())
}

/// Builds and runs one job per (label, overrides), in order.
fn run_all(
    ctx: &Ctx,
    t: &Template,
    sets: Vec<(String, Params)>,
) -> Result<Vec<RunResult>, LabError> {
    let mut jobs = Vec::with_capacity(sets.len());
    for (label, params) in sets {
        let params: Vec<(&str, String)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        jobs.push(t.job(label, &params)?);
    }
    run_jobs(jobs, ctx.progress)
}

/// The flow called `id`.
fn flow<'a>(r: &'a RunResult, id: &str) -> Option<&'a FlowResult> {
    r.flows.iter().find(|f| f.id == id)
}

fn mean(e: &Estimate) -> f64 {
    e.mean.unwrap_or(f64::NAN)
}

/// Population mean and coefficient of variation (σ/μ) of `xs`.
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
    fn explanations_describe_the_engines_as_they_are() {
        // acd9c51 made the TCP sender keep the window on the ACK that ends recovery (RFC 6582),
        // as the RCP pipe does; the report must not explain a difference by the old behaviour.
        let text = explanation("recovery-rcp-ge-tcp-sack");
        assert!(!text.contains("counts the acknowledgement that ends a recovery episode"));
        assert!(text.contains("both engines follow RFC 6582"));
        for id in [
            "recovery-rcp-ge-tcp-sack",
            "satellite-stp-well-above-newreno",
        ] {
            assert!(!explanation(id).is_empty(), "{id}");
        }
    }

    #[test]
    fn cov_of_equal_values_is_zero() {
        assert_eq!(mean_cov(&[2.0, 2.0]), (2.0, 0.0));
    }
}
