//! ptcp.txt §5.2.3, Fig. 8(a)'s setup: a square-wave CBR flow of 1.5 Mb/s (on for half of each
//! period t) on the 2 Mb/s, 400 ms WWAN link beside the 5 Mb/s, 100 ms WLAN link, so the WWAN
//! link's available bandwidth swings between 0.5 and 2 Mb/s. pTCP against smart and unaware
//! striping and the ideal (TCP alone on each link, with the same CBR). Template:
//! `experiments/ptcp/square_wave.toml`.
//!
//! The paper's Fig. 8(a) compares pTCP with and without dynamic reassignment at t = 200 s; our
//! engine has no switch to turn reassignment off, so this compares with the baselines, as
//! issue 31 asks ("pTCP above smart striping").

use serde_json::json;

use super::links::tcp_alone;
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::runner::run_jobs;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

/// The smart application's weights: the links' average available rates (§5: "a striping
/// ratio based on the average bandwidths"): WWAN (2 + 0.5) / 2, WLAN 5 Mb/s.
const SMART_WEIGHTS: [f64; 2] = [1.25, 5.0];

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = Template::load(&ctx.experiment_dir("ptcp").join("square_wave.toml"))?;
    let periods: Vec<u32> = ctx.pick(vec![20, 60], vec![20, 100, 200]);
    let seconds: u32 = ctx.pick(120, 600);
    let mut jobs = Vec::new();
    for &period in &periods {
        let half = period / 2;
        let common = vec![
            ("run.duration".to_string(), format!("\"{seconds}s\"")),
            (
                "flow.cbr_{i}.count".into(),
                seconds.div_ceil(period).to_string(),
            ),
            ("flow.cbr_{i}.start".into(), format!("\"{half}s\"")),
            ("flow.cbr_{i}.start_step".into(), format!("\"{period}s\"")),
            ("flow.cbr_{i}.duration".into(), format!("\"{half}s\"")),
        ];
        for v in ["ptcp", "smart", "unaware"] {
            let mut p = common.clone();
            p.push(("flow.f.ptcp.striping".into(), format!("\"{v}\"")));
            p.push((
                "flow.f.ptcp.pipe.0.weight".into(),
                SMART_WEIGHTS[0].to_string(),
            ));
            p.push((
                "flow.f.ptcp.pipe.1.weight".into(),
                SMART_WEIGHTS[1].to_string(),
            ));
            jobs.push(t.job(format!("square wave t={period} {v}"), &p)?);
        }
        for link in ["wwan", "wlan"] {
            let mut p = common.clone();
            p.push(("flow.f".into(), tcp_alone(link)));
            jobs.push(t.job(format!("square wave t={period} tcp {link} alone"), &p)?);
        }
    }
    let runs = run_jobs(jobs, ctx.progress)?;
    let mut rows = Vec::new();
    let (mut over_smart, mut over_ideal) = (Vec::new(), Vec::new());
    for (&period, r) in periods.iter().zip(runs.chunks(5)) {
        let [p, s, u, a, b] = r else {
            continue;
        };
        let g = super::goodput_mbps;
        let ideal = g(a) + g(b);
        over_smart.push(g(p) / g(s));
        over_ideal.push(g(p) / ideal);
        rows.push(vec![
            Cell::num(f64::from(period), 0),
            Cell::num(g(a), 3),
            Cell::num(g(b), 3),
            Cell::num(ideal, 3),
            Cell::num(g(p), 3),
            Cell::num(g(s), 3),
            Cell::num(g(u), 3),
            Cell::num(100.0 * g(p) / ideal, 1),
        ]);
    }
    report.section(
        "Rate fluctuation, square wave (§5.2.3, Fig. 8(a)'s setup)",
        &format!(
            "`experiments/ptcp/square_wave.toml`: WLAN 5 Mb/s, 100 ms RTT; WWAN 2 Mb/s, 400 ms \
             RTT with a 1.5 Mb/s CBR flow on during the second half of every period t; \
             NewReno; {seconds} s; one run each (no randomness). Smart striping's weights are \
             the average available rates (1.25 : 5). Goodput in Mb/s. The paper's Fig. 8(a) \
             shows pTCP with and without dynamic reassignment; roam's engine cannot turn it \
             off, so the comparison is with the baselines."
        ),
    );
    report.table(
        &[
            "period t (s)",
            "TCP alone on WWAN",
            "TCP alone on WLAN",
            "ideal",
            "pTCP",
            "smart",
            "unaware",
            "pTCP / ideal (%)",
        ],
        &rows,
    );
    let mut ev = Evidence::new();
    ev.all("pTCP / smart", &over_smart);
    ev.some("periods", over_smart.len());
    report.claim(Claim::judged(
        "fluctuation-square-wave-ptcp-above-smart",
        "Under a square-wave 1.5 Mb/s CBR load on the WWAN link, pTCP delivers more than smart \
         striping at every period (ptcp.txt §5.2.3)",
        json!({"periods_s": periods, "ptcp_over_smart": over_smart, "ptcp_over_ideal": over_ideal}),
        json!(
            "with dynamic reassignment pTCP is able to perform well under bandwidth fluctuations"
        ),
        ev,
        over_smart.iter().all(|r| *r > 1.0),
    ));
    Ok(())
}
