//! `roam reproduce ptcp`: pTCP (ptcp.txt §5), begun with the rate differential of §5.2.1: a
//! 500 kb/s link of 400 ms RTT beside a second link of 0.5–5 Mb/s and 100 ms RTT, 1 KB
//! packets, one pTCP flow striped over both (one pipe per link, NewReno on each), against the
//! ideal — the sum of what a TCP flow gets on each link alone. The paper: pTCP stays at 90 % of
//! the ideal or more at every ratio. Templates: `experiments/ptcp/rate_differential.toml` and
//! `single_path.toml`. The links are loss-free and deterministic, so one seed per point.
//!
//! And the blackout of §5.2.4 (`blackout.toml`): the 2 Mb/s WWAN link of 400 ms RTT drops
//! everything from 25 s to 50 s beside a 5 Mb/s WLAN link of 100 ms RTT; the paper: the WLAN
//! pipe keeps progressing after a minor stall (Fig. 9(b)), thanks to redundant striping.
//!
//! And per-pipe congestion control (§5.2.5, `per_pipe_cc.toml`): NewReno on the WLAN pipe,
//! TCP-ELN on the WWAN pipe whose wireless hop loses 0.1–1 % of the data packets; the paper:
//! pTCP within 10 % of the ideal (TCP alone on WLAN plus TCP-ELN alone on WWAN).

use roam_sim::result::RunResult;
use serde_json::json;

use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::runner::{run_jobs, Job};
use crate::template::Template;
use crate::{Ctx, Experiment, LabError, Report};

mod hard_paths;
mod links;
mod primary_blackout;
mod progression;
mod square_wave;
mod striping;

/// The registered experiment.
pub struct Ptcp;

/// The second link's rates (Mb/s), quick and full.
const RATES_QUICK: [f64; 3] = [0.5, 2.0, 5.0];
const RATES_FULL: [f64; 10] = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0];

impl Experiment for Ptcp {
    fn name(&self) -> &'static str {
        "ptcp"
    }

    fn title(&self) -> &'static str {
        "pTCP: striping one connection over TCP-v pipes (ptcp.txt §5)"
    }

    fn run(&self, ctx: &Ctx) -> Result<Report, LabError> {
        ctx.create_out_dir()?;
        let mut report = Report::for_run(self.title(), ctx);
        report.section(
            "Setup",
            &format!(
                "Mode: {}. The engine is `roam_proto::ptcp` (`docs/PTCP.md`): delayed binding, \
                 unbinding beyond a shrunk window, redundant striping after a timeout, one \
                 receive buffer; every flow opens by pTCP's handshake (§4.4: the first pipe's \
                 SYN, the others once its SYN-ACK is back, stateless SYN cookies at the \
                 receiver's endpoint) and closes each pipe by its own FIN.",
                if ctx.quick {
                    "quick (120 s runs, three ratios: a smoke test)"
                } else {
                    "full (the paper's 600 s runs, ten ratios)"
                }
            ),
        );
        rate_differential(ctx, &mut report)?;
        blackout(ctx, &mut report)?;
        per_pipe_cc(ctx, &mut report)?;
        links::run(ctx, &mut report)?;
        square_wave::run(ctx, &mut report)?;
        hard_paths::run(ctx, &mut report)?;
        primary_blackout::run(ctx, &mut report)?;
        report.section(
            "Not measured yet",
            "§5.2.1's lost window update (the unaware application's persist timer), Fig. \
             8(a)'s pTCP without dynamic reassignment, the baselines in the blackout (§5.2.4) \
             and with TCP-ELN (§5.2.5); of issue 31's beyond-the-paper cases, the shared trace \
             pairs beyond the hard-path cells.",
        );
        Ok(report)
    }
}

fn goodput_mbps(r: &RunResult) -> f64 {
    r.flows
        .iter()
        .find(|f| f.id == "f")
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6)
}

fn rate_differential(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let ptcp = Template::load(&ctx.experiment_dir("ptcp").join("rate_differential.toml"))?;
    let single = Template::load(&ctx.experiment_dir("ptcp").join("single_path.toml"))?;
    let striping = Template::load(&ctx.experiment_dir("ptcp").join("striping.toml"))?;
    let rates: &[f64] = ctx.pick(&RATES_QUICK, &RATES_FULL);
    let duration = ctx.pick("120s", "600s");
    let mut jobs = Vec::new();
    for &r in rates {
        let common = vec![
            ("link.wlan.rate", format!("\"{r}Mbps\"")),
            ("run.duration", format!("\"{duration}\"")),
        ];
        let label = format!("ptcp wlan={r}Mbps");
        jobs.push(Job {
            scenario: ptcp.build(&label, &common)?,
            label,
        });
        for link in ["wwan", "wlan"] {
            let mut params = common.clone();
            params.push(("flow.0.from_iface", format!("\"{link}\"")));
            params.push(("flow.0.to_iface", format!("\"{link}\"")));
            let label = format!("tcp {link} alone wlan={r}Mbps");
            jobs.push(Job {
                scenario: single.build(&label, &params)?,
                label,
            });
        }
        // The baselines (§5): the smart application's ratio is the links' rates.
        for mode in ["unaware", "smart"] {
            let mut params = common.clone();
            params.push(("flow.0.ptcp.striping", format!("\"{mode}\"")));
            params.push(("flow.0.ptcp.pipe.0.weight", "0.5".to_string()));
            params.push(("flow.0.ptcp.pipe.1.weight", r.to_string()));
            let label = format!("{mode} striping wlan={r}Mbps");
            jobs.push(Job {
                scenario: striping.build(&label, &params)?,
                label,
            });
        }
    }
    let runs = run_jobs(jobs, ctx.progress)?;
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut ev = Evidence::new();
    let mut fig = striping::RateFigure::default();
    for (&r, point) in rates.iter().zip(runs.chunks(5)) {
        let [p, wwan, wlan, unaware, smart] = point else {
            continue;
        };
        fig.push(
            r / 0.5,
            [
                goodput_mbps(wwan) + goodput_mbps(wlan),
                goodput_mbps(p),
                goodput_mbps(smart),
                goodput_mbps(unaware),
            ],
        );
        let (p, wwan, wlan) = (goodput_mbps(p), goodput_mbps(wwan), goodput_mbps(wlan));
        let ideal = wwan + wlan;
        let ratio = ev.num(&format!("pTCP at {r} Mb/s"), p) / ev.positive("ideal", ideal);
        ratios.push(ratio);
        rows.push(vec![
            Cell::num(r / 0.5, 0),
            Cell::num(wwan, 3),
            Cell::num(wlan, 3),
            Cell::num(ideal, 3),
            Cell::num(p, 3),
            Cell::num(ratio * 100.0, 1),
        ]);
    }
    report.section(
        "Rate differential (§5.2.1, Fig. 6(a))",
        &format!(
            "wwan: 500 kb/s, 200 ms one-way; wlan: the rate below, 50 ms one-way; 50-packet \
             queues; NewReno; {duration}. Goodput in Mb/s; the ideal is the sum of a TCP flow \
             on each link alone."
        ),
    );
    report.table(
        &[
            "rate ratio",
            "TCP wwan alone",
            "TCP wlan alone",
            "ideal",
            "pTCP",
            "pTCP / ideal (%)",
        ],
        &rows,
    );
    ev.some("ratios", ratios.len());
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    report.claim(Claim::judged(
        "rate-differential-90pct-of-ideal",
        "pTCP reaches ≥ 90 % of the ideal aggregate at every rate ratio (ptcp.txt §5.2.1)",
        json!({"ptcp_over_ideal": ratios, "worst": worst}),
        json!({"min_ratio": 0.9}),
        ev,
        ratios.iter().all(|r| *r >= 0.9),
    ));
    fig.report(ctx, report)?;
    progression::rate_differential(ctx, report)?;
    Ok(())
}

/// The blackout's start and end (s), and the stall the paper allows at its start ("after a
/// minor stall").
const BLACKOUT: (f64, f64) = (25.0, 50.0);
const ALLOWED_STALL_S: f64 = 5.0;

fn blackout(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let dir = ctx.experiment_dir("ptcp");
    let ptcp = Template::load(&dir.join("blackout.toml"))?;
    let single = Template::load(&dir.join("single_path.toml"))?;
    let wlan_alone = vec![
        ("link.wlan.rate", "\"5Mbps\"".to_string()),
        ("link.wwan.rate", "\"2Mbps\"".to_string()),
        ("run.duration", "\"75s\"".to_string()),
    ];
    let jobs = vec![
        Job {
            scenario: ptcp.build("ptcp blackout", &[] as &[(&str, String)])?,
            label: "ptcp blackout".into(),
        },
        Job {
            scenario: single.build("tcp wlan alone", &wlan_alone)?,
            label: "tcp wlan alone".into(),
        },
    ];
    let runs = run_jobs(jobs, ctx.progress)?;
    let (Some(p), Some(alone)) = (runs.first(), runs.get(1)) else {
        return Ok(());
    };
    let series = p.series.iter().find(|s| s.id == "f");
    // Bins (1 s) ending within the blackout, after the allowed stall.
    let during: Vec<f64> = series
        .map(|s| {
            s.time_s
                .iter()
                .zip(&s.throughput_bps)
                .filter(|(t, _)| **t > BLACKOUT.0 + ALLOWED_STALL_S && **t <= BLACKOUT.1)
                .map(|(_, b)| b / 1e6)
                .collect()
        })
        .unwrap_or_default();
    // The longest run of empty bins within the whole blackout.
    let mut stall = 0.0f64;
    let mut run = 0.0;
    if let Some(s) = series {
        for (t, b) in s.time_s.iter().zip(&s.throughput_bps) {
            if *t > BLACKOUT.0 && *t <= BLACKOUT.1 {
                run = if *b == 0.0 { run + 1.0 } else { 0.0 };
                stall = stall.max(run);
            }
        }
    }
    let mut ev = Evidence::new();
    ev.some("bins in the blackout", during.len());
    let mean = during.iter().sum::<f64>() / during.len().max(1) as f64;
    let reference = ev.positive("TCP alone on WLAN", goodput_mbps(alone));
    let ratio = ev.num("pTCP during the blackout", mean) / reference;
    report.section(
        "Blackout (§5.2.4, Fig. 9)",
        &format!(
            "`experiments/ptcp/blackout.toml`: the WWAN link (2 Mb/s, 400 ms RTT) drops \
             everything from {} s to {} s; the WLAN link is 5 Mb/s, 100 ms RTT. Goodput of the \
             pTCP flow in 1-s bins from {} s to {} s, against a TCP flow alone on the WLAN link \
             (75 s); the longest run of bins without delivery in the blackout.",
            BLACKOUT.0,
            BLACKOUT.1,
            BLACKOUT.0 + ALLOWED_STALL_S,
            BLACKOUT.1
        ),
    );
    report.table(
        &[
            "pTCP in the blackout (Mb/s)",
            "TCP alone on WLAN (Mb/s)",
            "ratio (%)",
            "longest stall (s)",
            "pTCP over 75 s (Mb/s)",
        ],
        &[vec![
            Cell::num(mean, 3),
            Cell::num(reference, 3),
            Cell::num(ratio * 100.0, 1),
            Cell::num(stall, 0),
            Cell::num(goodput_mbps(p), 3),
        ]],
    );
    report.claim(Claim::judged(
        "blackout-wlan-keeps-progressing",
        "During a WWAN blackout the pTCP flow keeps progressing over the WLAN pipe after a \
         stall of at most 5 s: ≥ 80 % of TCP alone on the WLAN link (ptcp.txt §5.2.4)",
        json!({"ptcp_mbps": mean, "wlan_alone_mbps": reference, "ratio": ratio, "longest_stall_s": stall}),
        json!({"wlan_progresses_after_minor_stall": true}),
        ev,
        ratio >= 0.8 && stall <= ALLOWED_STALL_S,
    ));
    progression::blackout(ctx, report)?;
    Ok(())
}

/// WWAN loss probabilities of §5.2.5, quick and full.
const LOSSES_QUICK: [f64; 2] = [0.001, 0.01];
const LOSSES_FULL: [f64; 4] = [0.001, 0.003, 0.005, 0.01];

fn per_pipe_cc(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let dir = ctx.experiment_dir("ptcp");
    let ptcp = Template::load(&dir.join("per_pipe_cc.toml"))?;
    let single = Template::load(&dir.join("single_path.toml"))?;
    let losses: &[f64] = ctx.pick(&LOSSES_QUICK, &LOSSES_FULL);
    let seeds: Vec<u64> = (1..=ctx.pick(1, 10)).collect();
    let duration = ctx.pick("120s", "600s");
    let mut jobs = Vec::new();
    for &p in losses {
        for &seed in &seeds {
            let common = vec![
                ("run.seed", seed.to_string()),
                ("run.duration", format!("\"{duration}\"")),
            ];
            let mut params = common.clone();
            params.push(("link.wwan.forward.loss", p.to_string()));
            let label = format!("ptcp loss={p} seed={seed}");
            jobs.push(Job {
                scenario: ptcp.build(&label, &params)?,
                label,
            });
            // The ideal: TCP-ELN alone on the lossy WWAN link, NewReno alone on WLAN.
            for link in ["wwan", "wlan"] {
                let mut params = common.clone();
                params.extend([
                    ("link.wwan.rate", "\"2Mbps\"".to_string()),
                    ("link.wlan.rate", "\"5Mbps\"".to_string()),
                    ("link.wwan.wireless", "true".to_string()),
                    ("link.wwan.forward.loss", p.to_string()),
                    ("flow.0.from_iface", format!("\"{link}\"")),
                    ("flow.0.to_iface", format!("\"{link}\"")),
                    ("flow.0.tcp.eln", (link == "wwan").to_string()),
                ]);
                let label = format!("tcp {link} alone loss={p} seed={seed}");
                jobs.push(Job {
                    scenario: single.build(&label, &params)?,
                    label,
                });
            }
        }
    }
    let runs = run_jobs(jobs, ctx.progress)?;
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut ev = Evidence::new();
    for (&p, point) in losses.iter().zip(runs.chunks(3 * seeds.len())) {
        let (mut ours, mut wwan, mut wlan) = (Vec::new(), Vec::new(), Vec::new());
        for run in point.chunks(3) {
            if let [a, b, c] = run {
                ours.push(goodput_mbps(a));
                wwan.push(goodput_mbps(b));
                wlan.push(goodput_mbps(c));
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let ideal = mean(&wwan) + mean(&wlan);
        let ratio = ev.num(&format!("pTCP at loss {p}"), mean(&ours))
            / ev.positive(&format!("ideal at loss {p}"), ideal);
        ratios.push(ratio);
        rows.push(vec![
            Cell::num(p * 100.0, 1),
            Cell::est_of(&wwan, 3),
            Cell::est_of(&wlan, 3),
            Cell::num(ideal, 3),
            Cell::est_of(&ours, 3),
            Cell::num(ratio * 100.0, 1),
        ]);
    }
    report.section(
        "Per-pipe congestion control (§5.2.5, Fig. 10)",
        &format!(
            "`experiments/ptcp/per_pipe_cc.toml`: WLAN 5 Mb/s, 100 ms RTT, NewReno; WWAN \
             2 Mb/s, 400 ms RTT, TCP-ELN (the receiver's host reports packets lost on the \
             wireless hop; the WWAN pipe's ACKs carry ELN and its sender does not halve for \
             them). {duration}, {} seed(s) per loss rate, mean ± 95 % CI (Mb/s); the ideal \
             is the sum of the two single-path means.",
            seeds.len()
        ),
    );
    report.table(
        &[
            "WWAN loss (%)",
            "TCP-ELN alone on WWAN",
            "TCP alone on WLAN",
            "ideal",
            "pTCP",
            "pTCP / ideal (%)",
        ],
        &rows,
    );
    ev.some("loss rates", ratios.len());
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    report.claim(Claim::judged(
        "per-pipe-cc-within-10pct-of-ideal",
        "With NewReno on the WLAN pipe and TCP-ELN on the lossy WWAN pipe, pTCP is within \
         10 % of the ideal at every loss rate (ptcp.txt §5.2.5)",
        json!({"ptcp_over_ideal": ratios, "worst": worst}),
        json!({"min_ratio": 0.9}),
        ev,
        ratios.iter().all(|r| *r >= 0.9),
    ));
    Ok(())
}
