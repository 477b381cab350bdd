//! Reproduction of ATL (atl.txt §V): TCP-ATL against NewReno and Westwood+ over a lossy, slow
//! wireless hop (Figs. 6–8), while roaming between WLAN, 3G and satellite (Tables II–III),
//! through blackouts (Fig. 9), fairness (Figs. 10–11), and RCP-ATL against a plain rate AIMD
//! (1, ½) in the role of RAP: goodput (Figs. 12–14) and jitter (Fig. 17).

mod blackouts;
mod fairness;
mod media;
mod roaming;
mod scenarios;
mod throughput;

use roam_sim::result::RunResult;

use self::blackouts::blackouts;
use self::fairness::fairness_runs;
use self::media::media;
use self::roaming::roaming_tables;
use self::scenarios::{duration_s, seeds};
use self::throughput::throughput;
use crate::chart::{self, Axes, Series};
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::{Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct Atl;

fn mean(v: &[f64]) -> f64 {
    Estimate::from_sample(v).mean.unwrap_or(f64::NAN)
}

fn mbps(r: &RunResult) -> f64 {
    r.flows.first().map_or(f64::NAN, |f| f.goodput_bps / 1e6)
}

/// Runs `jobs` and groups the results in chunks of `per` (the seeds of one point).
fn run_grouped(ctx: &Ctx, jobs: Vec<Job>, per: usize) -> Result<Vec<Vec<RunResult>>, LabError> {
    let results = run_jobs(jobs, ctx.progress)?;
    Ok(results.chunks(per.max(1)).map(<[_]>::to_vec).collect())
}

fn plot(ctx: &Ctx, file: &str, axes: &Axes<'_>, series: Vec<Series>) -> Result<(), LabError> {
    chart::lines(&ctx.out_dir.join(file), axes, &series)
}

impl Experiment for Atl {
    fn name(&self) -> &'static str {
        "atl"
    }

    fn title(&self) -> &'static str {
        "ATL: TCP-ATL and RCP-ATL with adaptive AIMD over heterogeneous wireless links (atl.txt §V)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        ctx.create_out_dir()?;
        let mut report = Report::for_run(self.title(), ctx);
        report.section(
            "Setup",
            &format!(
                "As atl.txt §V-A1: a wireless host behind a 2 Mb/s access link (one-way delay d_w, \
                 Bernoulli loss p_w on data), a 2 Mb/s wired bottleneck with 10 ms delay, a wired \
                 host; 1 KB packets, one ACK per packet, SACK on, drop-tail queues of 50 packets \
                 (ns-2's default). {} s per run, {} seed(s) per point, mean ± 95 % CI. \
                 Throughput is the receiver's goodput (application bytes), so 1.85 Mb/s is the most \
                 a 2 Mb/s link carries with our 36 + 28 header bytes per 1000-byte packet.{}",
                duration_s(ctx),
                seeds(ctx),
                if ctx.quick {
                    " **Quick mode**: fewer points and 60 s runs with the schedule compressed \
                     tenfold; the verdicts below are not the paper's setup."
                } else {
                    ""
                }
            ),
        );
        throughput(ctx, &mut report)?;
        roaming_tables(ctx, &mut report)?;
        blackouts(ctx, &mut report)?;
        fairness_runs(ctx, &mut report)?;
        media(ctx, &mut report)?;
        report.section(
            "Where our numbers differ from the paper's, and why",
            DIFFERENCES,
        );
        Ok(report)
    }
}

const DIFFERENCES: &str = "\
* **Absolute throughput.** The paper reports sender-side throughput (≈ 1.9 Mb/s including \
headers); we report receiver goodput, whose ceiling is 1.85 Mb/s on a 2 Mb/s link. Ratios \
between protocols are comparable, absolute numbers are about 3 % lower by construction.\n\
* **Baselines.** The paper compares with Snoop, WTCP and TCP-Peach+ (one per environment) and \
TCP-Westwood; we compare with our NewReno+SACK and Westwood+ (the issue's baselines). Westwood+ \
(2004) filters its bandwidth estimate better than the 2001 Westwood of the paper, so our \
Westwood+ degrades less at high p_w than the paper's Fig. 6–8 curve and the improvement factors \
(234 % / 468 % / 7.6×) are not expected to match in size, only in direction.\n\
* **Link facts after the handshake.** Our TCP engine rebuilds its congestion controller when \
the handshake completes, which drops the p_w/d_w the host supplied at start. A no-op event on \
the wireless link at t = 1 s re-delivers them (for every protocol alike). Without it TCP-ATL \
behaves exactly as NewReno for a wireless source until the first handoff.\n\
* **β after slow start and timeouts.** We apply the paper's β (0.75–0.85) to the AIMD decrease \
only; the loss that ends slow start and retransmission timeouts keep TCP's ½. With β = 0.85 \
there, the first slow-start overshoot left the queue full, retransmissions were dropped again \
and the connection fell into a cycle of timeouts (–30 % at p_w → 0, d_w ≥ 50 ms).\n\
* **Measuring p.** The controller sees deliveries and loss signals, not sends: p counts the \
data that repairs each recovery episode as lost (see docs/ATL.md). p and p_c are floored at \
the measurement resolution 1/(packets in τ); α is capped at 1000 and never grows the window \
faster than slow start.\n\
* **Blackouts.** p_w during a blackout is the time average of the link's instantaneous loss over \
τ (1 while the channel is down), as a MAC's sliding-window count would see it.\n\
* **RCP-ATL.** The paper gives RCP-ATL's goodput only against RCS (satellite) and jitter against \
RAP at one point; our baseline for both is the same engine with (α, β) fixed at (1, ½), i.e. \
RAP's increase of one packet per RTT per RTT and halving on loss. Both start with slow start \
(doubling per RTT until the first loss), which RAP does not specify.\n\
* **Fairness to wired TCP (Φ).** Without randomness in packet timing, the deterministic \
drop-tail bottleneck locks one group out: at the template's 1 ms wired access delay the five \
wireless flows get a quarter of the wired flows' bytes (Φ ≈ 0.25), with TCP-ATL and with \
NewReno alike, and with no wireless loss too, and a few milliseconds more or less of wired \
access delay (which the paper does not give) swing Φ from 0.2 to above 6 (the sensitivity \
table). These are Floyd & Jacobson's phase effects, not a property of either controller. We \
therefore give every source's access link an in-order random delay of up to about one \
bottleneck packet time, their remedy, and judge the claim with it; the deterministic numbers \
stay in the table and in claims.json. With the jitter Φ is 0.88–1.04 for TCP-ATL across all \
access delays we tried. TCP-ATL's Φ is slightly *below* NewReno's here, where the paper has it \
slightly above 1: with p_w = 10⁻³ against a measured p of a few percent, p_c ≈ p and R_c = R − \
20 ms, so eq. 9 asks only for about R/R_c more than TCP, and with β = 0.75 that means α < 1 \
(eqs. 5–9 give α ≈ 0.6–0.8 for p = 1–5 % and R = 0.1–0.2 s, the RTTs behind a 50-packet \
queue); at windows of 3–4 segments, where timeouts dominate, the slower increase costs a little \
more than the model predicts.\n\
* **Blackout size.** One blackout costs a 600 s run little: the loss is the blackout itself \
plus a few RTOs, the same for every protocol, so the ATL/Westwood+ gap in our Fig. 9 table is \
the gap TCP-ATL already has at p_w = 10⁻³, d_w = 50 ms; the paper's +89 % at 1 s is not \
reproduced in size (its Westwood loses far more around the blackout than our Westwood+).\n\
* **Jitter at larger d_w.** At d_w = 10 ms (Fig. 17's point) RCP-ATL's packets see less jitter \
than the rate AIMD's, as in the paper. At 50 and 150 ms the rate AIMD (1, ½) fills the path so \
little (see its goodput) that the bottleneck queue stays empty and its packets see almost no \
delay variation; RCP-ATL keeps the queue busy and sees sub-millisecond jitter. The paper shows \
only the 10 ms case.";
