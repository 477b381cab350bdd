//! §3.4.4: power management on a two-state Markov channel (Figure 5(d)): an RCP receiver that
//! sleeps while the channel is bad against a TCP receiver that keeps receiving.

use serde_json::json;

use super::{flow, mean, param, run_all, seeds, template};
use crate::chart::{self, Axes, Series};
use crate::claims::Evidence;
use crate::report::Cell;
use crate::stats::Estimate;
use crate::{Claim, Ctx, LabError, Report};

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "wireless.toml")?;
    let bad_means: Vec<u64> = ctx.pick(vec![2, 8], vec![1, 2, 4, 6, 8, 10]);
    let secs: u64 = ctx.pick(100, 300);
    let seeds = seeds(ctx);
    let mut sets = Vec::new();
    for &b in &bad_means {
        for proto in ["tcp", "rcp"] {
            for &seed in &seeds {
                let gilbert = format!(
                    "{{ good = {{ mean = \"10s\", loss = 0.0001 }}, bad = {{ mean = \"{b}s\", loss = 0.1 }} }}"
                );
                let mut p = vec![
                    param("link.wl.forward.gilbert", gilbert),
                    param("flow.f.protocol", proto),
                    param("run.duration", format!("{secs}s")),
                    param("run.seed", seed.to_string()),
                ];
                if proto == "rcp" {
                    p.push(param("flow.f.rcp.sleep", "true"));
                } else {
                    p.push(param("flow.f.energy", "true"));
                }
                sets.push((format!("power bad={b}s {proto} seed={seed}"), p));
            }
        }
    }
    let results = run_all(ctx, &t, sets)?;
    let per = seeds.len();
    let mut rows = Vec::new();
    let mut pw = [Vec::new(), Vec::new()];
    let mut tp = [Vec::new(), Vec::new()];
    for (bi, &b) in bad_means.iter().enumerate() {
        let mut row = vec![Cell::num(b as f64, 0)];
        let mut watts = [0.0; 2];
        let mut mbps = [0.0; 2];
        for pi in 0..2 {
            let runs = &results[(bi * 2 + pi) * per..(bi * 2 + pi + 1) * per];
            let w: Vec<f64> = runs
                .iter()
                .filter_map(|r| flow(r, "f").and_then(|f| f.energy_j))
                .map(|j| j / secs as f64)
                .collect();
            let g: Vec<f64> = runs
                .iter()
                .filter_map(|r| flow(r, "f"))
                .map(|f| f.goodput_bps / 1e6)
                .collect();
            let sleep: Vec<f64> = runs
                .iter()
                .filter_map(|r| flow(r, "f").and_then(|f| f.sleep_s))
                .map(|s| s / secs as f64)
                .collect();
            let (ew, eg, es) = (
                Estimate::from_sample(&w),
                Estimate::from_sample(&g),
                Estimate::from_sample(&sleep),
            );
            watts[pi] = mean(&ew);
            mbps[pi] = mean(&eg);
            pw[pi].push((b as f64, mean(&ew)));
            tp[pi].push((b as f64, mean(&eg)));
            row.push(Cell::est(&ew, 3));
            row.push(Cell::est(&eg, 3));
            let asleep = 100.0 * mean(&es);
            row.push(Cell::shown(format!("{asleep:.0} %"), asleep));
        }
        row.push(Cell::num(watts[1] / watts[0], 2));
        row.push(Cell::num(mbps[1] / mbps[0], 2));
        rows.push(row);
    }
    report.section(
        "Power management (§3.4.4, Figure 5(d))",
        &format!(
            "The wireless hop's forward direction follows a two-state Markov channel (good: \
             0.01 % loss, mean 10 s; bad: 10 % loss, mean 1-10 s). The RCP receiver freezes and \
             sleeps when the channel turns bad, wakes every 100 ms for a 2 ms beacon, and resumes \
             (requesting exactly its holes) once a beacon shows a good channel; packets arriving \
             while it sleeps are lost. The TCP receiver keeps receiving. Energy of the mobile's \
             interface with 802.11b powers (transmit 1.65 W, receive 1.4 W, sleep 0.045 W; idle \
             1.15 W, our choice), as average power over the {secs} s run."
        ),
    );
    report.table(
        &[
            "bad-state mean (s)",
            "TCP power (W)",
            "TCP goodput (Mb/s)",
            "TCP asleep",
            "RCP power (W)",
            "RCP goodput (Mb/s)",
            "RCP asleep",
            "RCP/TCP power",
            "RCP/TCP goodput",
        ],
        &rows,
    );
    chart::lines(
        &ctx.out_dir.join("power.svg"),
        &Axes {
            title: "Average power of the mobile's interface",
            x: "mean duration of the bad state (s)",
            y: "W",
            log_x: false,
            y_from_zero: true,
        },
        &[
            Series::new("TCP", pw[0].clone()),
            Series::new("RCP (sleep)", pw[1].clone()),
        ],
    )?;
    chart::lines(
        &ctx.out_dir.join("power_goodput.svg"),
        &Axes {
            title: "Goodput on the Markov channel",
            x: "mean duration of the bad state (s)",
            y: "Mb/s",
            log_x: false,
            y_from_zero: true,
        },
        &[
            Series::new("TCP", tp[0].clone()),
            Series::new("RCP (sleep)", tp[1].clone()),
        ],
    )?;
    report.image("power", "power.svg");
    report.image("goodput", "power_goodput.svg");
    report.extend(claims(&bad_means, &pw, &tp));
    Ok(())
}

/// The two power claims, from the average power (W) and goodput (Mb/s) of TCP (index 0) and
/// RCP with sleep (index 1), as (bad-state mean s, value) per bad-state mean.
fn claims(
    bad_means: &[u64],
    watts: &[Vec<(f64, f64)>; 2],
    mbps: &[Vec<(f64, f64)>; 2],
) -> [Claim; 2] {
    let ratios = |ev: &mut Evidence, what: &str, v: &[Vec<(f64, f64)>; 2]| -> Vec<f64> {
        ev.some("bad-state durations", v[0].len().min(v[1].len()));
        v[0].iter()
            .zip(&v[1])
            .map(|(&(b, tcp), &(_, rcp))| {
                let at = |who: &str| format!("{who} {what} at a {b} s bad state");
                ev.num(&at("RCP"), rcp) / ev.positive(&at("TCP"), tcp)
            })
            .collect()
    };
    let mut ev = Evidence::new();
    let energy_ratio = ratios(&mut ev, "power", watts);
    let less_energy = Claim::judged(
        "power-rcp-less-energy",
        "RCP with sleep uses less energy than TCP at every bad-state duration",
        json!({"bad_mean_s": bad_means, "rcp_over_tcp_energy": energy_ratio}),
        json!("energy savings growing with the bad-state duration (Figure 5(d))"),
        ev,
        energy_ratio.iter().all(|r| *r < 1.0),
    );
    let mut ev = Evidence::new();
    let tput_ratio = ratios(&mut ev, "goodput", mbps);
    let not_lower = Claim::judged(
        "power-rcp-throughput-not-lower",
        "RCP's goodput with sleep is not lower than TCP's (within 5 %) at every bad-state duration",
        json!({"bad_mean_s": bad_means, "rcp_over_tcp_goodput": tput_ratio}),
        json!("RCP throughput no less than TCP's (Figure 5(d))"),
        ev,
        tput_ratio.iter().all(|r| *r >= 0.95),
    );
    [less_energy, not_lower]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::testing::{assert_unmeasured, fails_when_spoilt, NOT_FINITE};

    #[test]
    fn each_claim_fails_when_a_power_or_goodput_is_missing_zero_or_not_finite() {
        // TCP then RCP power, TCP then RCP goodput, one bad-state duration.
        let good = [1.2, 0.9, 1.0, 1.1];
        let make = |k: usize| {
            move |x: &[f64]| {
                let w = [vec![(2.0, x[0])], vec![(2.0, x[1])]];
                let g = [vec![(2.0, x[2])], vec![(2.0, x[3])]];
                claims(&[2], &w, &g)[k].clone()
            }
        };
        fails_when_spoilt(&good, [0, 1], &NOT_FINITE, make(0));
        fails_when_spoilt(&good, [0], &[0.0], make(0));
        fails_when_spoilt(&good, [2, 3], &NOT_FINITE, make(1));
        fails_when_spoilt(&good, [2], &[0.0], make(1));
        for c in claims(&[], &[vec![], vec![]], &[vec![], vec![]]) {
            assert_unmeasured(&c);
        }
    }
}
