//! Reproduction of ATL (atl.txt §V): TCP-ATL against NewReno and Westwood+ over a lossy, slow
//! wireless hop (Figs. 6–8), while roaming between WLAN, 3G and satellite (Tables II–III),
//! through blackouts (Fig. 9), fairness (Figs. 10–11), and RCP-ATL against a plain rate AIMD
//! (1, ½) in the role of RAP: goodput (Figs. 12–14) and jitter (Fig. 17).

mod scenarios;

use roam_sim::result::RunResult;
use serde_json::json;

use self::scenarios::*;
use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::runner::{run_jobs, Job};
use crate::stats::Estimate;
use crate::{Claim, Ctx, Experiment, LabError, Report};

/// The registered experiment.
pub struct Atl;

fn mean(v: &[f64]) -> f64 {
    Estimate::from_sample(v).mean.unwrap_or(f64::NAN)
}

fn show(v: &[f64], d: usize) -> String {
    let e = Estimate::from_sample(v);
    match (e.mean, e.ci95) {
        (Some(m), Some(c)) => format!("{} ± {}", num(m, d), num(c, d)),
        (Some(m), None) => num(m, d),
        _ => "–".to_owned(),
    }
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
        let mut report = Report::new(self.title());
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

/// Figs. 6–8: throughput vs p_w for three d_w.
fn throughput(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "wireless-source.toml")?;
    let (pws, dws): (&[f64], &[u32]) = if ctx.quick {
        (&PWS_QUICK, &DWS_QUICK)
    } else {
        (&PWS_FULL, &DWS_FULL)
    };
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &dw in dws {
        for &pw in pws {
            for (name, cc) in TCP_PROTOCOLS {
                for seed in 1..=seeds {
                    let label = format!("tput dw={dw}ms pw={pw} {name} seed={seed}");
                    jobs.push(single(&t, label, cc, pw, dw, duration_s(ctx), seed)?);
                }
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    // tput[dw][pw][proto] = samples (Mb/s)
    let mut tput: Vec<Vec<Vec<Vec<f64>>>> = Vec::new();
    for _ in dws {
        let mut rows = Vec::new();
        for _ in pws {
            let mut cells = Vec::new();
            for _ in TCP_PROTOCOLS {
                let g = it
                    .next()
                    .map(|g| g.iter().map(mbps).collect::<Vec<f64>>())
                    .unwrap_or_default();
                cells.push(g);
            }
            rows.push(cells);
        }
        tput.push(rows);
    }
    let mut text = String::from(
        "atl.txt Figs. 6–8. Paper: TCP-ATL ≈ the others at low p_w and far above them at high \
         p_w (at p_w = 5·10⁻²: +234 % over Westwood at d_w = 10 ms, +468 % at 50 ms; up to 7.6× \
         at 150 ms).",
    );
    let mut high = Vec::new();
    let mut low_nr = Vec::new();
    let mut low_ww = Vec::new();
    let mut gains = serde_json::Map::new();
    for (di, &dw) in dws.iter().enumerate() {
        let rows: Vec<Vec<String>> = pws
            .iter()
            .enumerate()
            .map(|(pi, pw)| {
                let mut r = vec![format!("{pw:e}")];
                r.extend(tput[di][pi].iter().map(|s| show(s, 3)));
                let (a, w) = (mean(&tput[di][pi][0]), mean(&tput[di][pi][2]));
                r.push(format!("{:+.0} %", 100.0 * (a / w - 1.0)));
                r
            })
            .collect();
        report.section(
            &format!("Throughput vs p_w, d_w = {dw} ms (β = {})", beta_label(dw)),
            if di == 0 { &text } else { "" },
        );
        text.clear();
        report.table(
            &[
                "p_w",
                "TCP-ATL (Mb/s)",
                "NewReno (Mb/s)",
                "Westwood+ (Mb/s)",
                "ATL vs Westwood+",
            ],
            &rows,
        );
        let file = format!("throughput-dw{dw}.svg");
        let series = TCP_PROTOCOLS
            .iter()
            .enumerate()
            .map(|(k, (name, _))| Series {
                label: (*name).to_owned(),
                points: pws
                    .iter()
                    .enumerate()
                    .map(|(pi, &pw)| (pw, mean(&tput[di][pi][k])))
                    .collect(),
            })
            .collect();
        let title = format!("Throughput vs p_w, d_w = {dw} ms");
        plot(
            ctx,
            &file,
            &Axes {
                title: &title,
                x: "p_w",
                y: "goodput (Mb/s)",
                log_x: true,
            },
            series,
        )?;
        report.image(&title, &file);
        for (pi, &pw) in pws.iter().enumerate() {
            let [a, n, w] = [0, 1, 2].map(|k| mean(&tput[di][pi][k]));
            if pw >= 1e-2 {
                high.push(
                    json!({"d_w_ms": dw, "p_w": pw, "atl": a, "newreno": n, "westwood": w,
                    "holds": a > n && a > w}),
                );
            }
            if pw <= 1e-5 {
                low_nr.push(json!({"d_w_ms": dw, "p_w": pw, "atl": a, "newreno": n,
                    "rel_diff": (a - n).abs() / n}));
                low_ww.push(json!({"d_w_ms": dw, "p_w": pw, "atl": a, "westwood": w,
                    "rel_diff": (a - w).abs() / w}));
            }
            if (pw - 5e-2).abs() < 1e-12 {
                gains.insert(format!("d_w={dw}ms"), json!(100.0 * (a / w - 1.0)));
            }
        }
    }
    let all = |v: &[serde_json::Value], f: &dyn Fn(&serde_json::Value) -> bool| {
        !v.is_empty() && v.iter().all(f)
    };
    let within5 = |x: &serde_json::Value| x["rel_diff"].as_f64().is_some_and(|d| d <= 0.05);
    report.claim(Claim::new(
        "tput-high-pw",
        "At high wireless loss (p_w ≥ 10⁻²) TCP-ATL's throughput is above NewReno's and \
         Westwood+'s, for every d_w",
        json!({"points": high, "atl_gain_over_westwood_pct_at_pw_5e-2": gains}),
        json!({"atl_gain_over_westwood_pct_at_pw_5e-2": {"d_w=10ms": 234, "d_w=50ms": 468,
            "d_w=150ms": "up to 7.6x"}}),
        all(&high, &|x| x["holds"].as_bool() == Some(true)),
    ));
    report.claim(Claim::new(
        "tput-low-pw-newreno",
        "As p_w → 0 (p_w ≤ 10⁻⁵) TCP-ATL and NewReno are equal within 5 %, for every d_w",
        json!(low_nr),
        json!("TCP-ATL ≈ the other protocols at low p_w (Figs. 6–8)"),
        all(&low_nr, &within5),
    ));
    report.claim(Claim::new(
        "tput-low-pw-westwood",
        "As p_w → 0 (p_w ≤ 10⁻⁵) TCP-ATL and Westwood+ are equal within 5 %, for every d_w",
        json!(low_ww),
        json!("TCP-ATL ≈ TCP-Westwood at low p_w (Figs. 6–8)"),
        all(&low_ww, &within5),
    ));
    Ok(())
}

fn beta_label(dw: u32) -> &'static str {
    match dw {
        0 => "0.5",
        1..=49 => "0.75",
        50..=149 => "0.80",
        _ => "0.85",
    }
}

/// Tables II and III.
fn roaming_tables(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let scale = duration_s(ctx) / 600.0;
    let seeds = seeds(ctx);
    let cases = [
        ("source", "wireless-source.toml", "forward", "Table II"),
        ("receiver", "wireless-receiver.toml", "reverse", "Table III"),
    ];
    for (case, file, dir, table) in cases {
        let t = template(ctx, file)?;
        let mut jobs = Vec::new();
        for (k, ((t1, t2), nets, _, _)) in ROAMING.iter().enumerate() {
            for seed in 1..=seeds {
                let label = format!("roaming {case} exp={} seed={seed}", k + 1);
                let times = (f64::from(*t1) * scale, f64::from(*t2) * scale);
                jobs.push(roaming(&t, label, nets, times, dir, duration_s(ctx), seed)?);
            }
        }
        let groups = run_grouped(ctx, jobs, seeds as usize)?;
        let mut rows = Vec::new();
        let mut ours = Vec::new();
        let mut paper = Vec::new();
        for (k, (((t1, t2), nets, ps, pr), g)) in ROAMING.iter().zip(&groups).enumerate() {
            let v: Vec<f64> = g.iter().map(mbps).collect();
            let p = if case == "source" { *ps } else { *pr };
            ours.push(mean(&v));
            paper.push(p);
            rows.push(vec![
                (k + 1).to_string(),
                format!("({t1}, {t2})"),
                format!("({}, {}, {})", nets[0].name, nets[1].name, nets[2].name),
                show(&v, 4),
                num(p, 4),
            ]);
        }
        report.section(
            &format!("Roaming, wireless {case} ({table})"),
            "WLAN (d_w = 10 ms, p_w = 10⁻⁵), 3G (50 ms, 10⁻⁴) and satellite (150 ms, 10⁻³), \
             switched at t1 and t2 (each switch is a handoff: the link's delay and loss change). \
             TCP-ATL only, as in the paper.",
        );
        report.table(
            &[
                "Exp.",
                "(t1, t2) s",
                "(N1, N2, N3)",
                "ours (Mb/s)",
                "paper (Mb/s)",
            ],
            &rows,
        );
        let (lo, hi) = ours
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        let spread = (hi - lo) / hi;
        report.claim(Claim::new(
            &format!("roaming-{case}"),
            &format!(
                "Wireless {case} roaming across WLAN/3G/satellite: TCP-ATL's throughput is within \
                 10 % across all six orders ({table})"
            ),
            json!({"throughput_mbps": ours, "spread": spread}),
            json!({"throughput_mbps": paper, "spread": 0.027}),
            spread.is_finite() && spread <= 0.10,
        ));
    }
    Ok(())
}

/// Fig. 9.
fn blackouts(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "wireless-source.toml")?;
    let durations: &[f64] = if ctx.quick {
        &BLACKOUTS_QUICK
    } else {
        &BLACKOUTS_FULL
    };
    let at = duration_s(ctx) / 2.0;
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &b in durations {
        for (name, cc) in BLACKOUT_PROTOCOLS {
            for seed in 1..=seeds {
                let label = format!("blackout {b}s {name} seed={seed}");
                jobs.push(blackout(&t, label, cc, (at, b), duration_s(ctx), seed)?);
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    let mut rows = Vec::new();
    let mut points = Vec::new();
    let mut ok = true;
    for &b in durations {
        let cells: Vec<Vec<f64>> = BLACKOUT_PROTOCOLS
            .iter()
            .map(|_| {
                it.next()
                    .map(|g| g.iter().map(mbps).collect::<Vec<f64>>())
                    .unwrap_or_default()
            })
            .collect();
        let (a, w) = (mean(&cells[0]), mean(&cells[2]));
        ok &= a >= w;
        points.push(json!({"blackout_s": b, "atl": a, "westwood": w,
            "gain_pct": 100.0 * (a / w - 1.0)}));
        let mut r = vec![num(b, 2)];
        r.extend(cells.iter().map(|c| show(c, 3)));
        r.push(format!("{:+.1} %", 100.0 * (a / w - 1.0)));
        rows.push(r);
    }
    report.section(
        "Blackouts (Fig. 9)",
        &format!(
            "d_w = 50 ms, p_w = 10⁻³, one blackout on both directions of the wireless link at \
             t = {at} s. Paper: TCP-ATL above TCP-Westwood for every duration, +89 % for a 1 s \
             blackout."
        ),
    );
    report.table(
        &[
            "blackout (s)",
            "TCP-ATL (Mb/s)",
            "NewReno (Mb/s)",
            "Westwood+ (Mb/s)",
            "ATL vs Westwood+",
        ],
        &rows,
    );
    report.claim(Claim::new(
        "blackout",
        "Through a blackout of 10 ms to 10 s, TCP-ATL's throughput is at least Westwood+'s",
        json!(points),
        json!({"gain_pct_at_1s": 89}),
        ok,
    ));
    Ok(())
}

/// Wired access delays (ms) of the Φ sensitivity table.
const ACCESS_DELAYS_MS: [u64; 5] = [2, 5, 10, 15, 20];

/// The access links of the fairness templates that carry phase-breaking jitter.
const INTRA_JITTER_LINKS: &[&str] = &["wl{i}"];
const WIRED_JITTER_LINKS: &[&str] = &["wl{i}", "wd{i}"];

/// The five-plus-five variants run at the template's 1 ms wired access delay, in this order.
const WIRED_VARIANTS: [(&str, Reference, bool); 5] = [
    ("five ATL + five SACK: Φ", Reference::None, false),
    (
        "reference: NewReno on the wireless hosts instead of TCP-ATL: Φ",
        Reference::NewReno,
        false,
    ),
    (
        "reference: NewReno on the wireless hosts, no wireless loss: Φ",
        Reference::NewRenoNoLoss,
        false,
    ),
    (
        "deterministic (no jitter): five ATL + five SACK: Φ",
        Reference::None,
        true,
    ),
    (
        "deterministic (no jitter): NewReno on the wireless hosts: Φ",
        Reference::NewReno,
        true,
    ),
];

/// Φ: bytes received by the wireless group's sinks / bytes received by the wired group's.
fn phi_of(r: &RunResult) -> f64 {
    let sum = |p: &str| -> f64 {
        r.flows
            .iter()
            .filter(|f| f.id.starts_with(p))
            .map(|f| f.bytes_delivered as f64)
            .sum()
    };
    sum("a") / sum("s")
}

/// Figs. 10 and 11.
fn fairness_runs(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let seeds = seeds(ctx);
    let intra = template(ctx, "fairness-intra.toml")?;
    let wired = template(ctx, "fairness-wired.toml")?;
    let d = duration_s(ctx);
    let setup = |reference, wired_access_delay_ms, deterministic: bool, links| FairnessSetup {
        reference,
        wired_access_delay_ms,
        without_jitter: if deterministic { links } else { &[] },
    };
    let mut jobs = Vec::new();
    for deterministic in [false, true] {
        for seed in 1..=seeds {
            let label = format!("fair-intra deterministic={deterministic} seed={seed}");
            let s = setup(Reference::None, None, deterministic, INTRA_JITTER_LINKS);
            jobs.push(fairness(&intra, label, s, d, seed)?);
        }
    }
    for (name, r, deterministic) in WIRED_VARIANTS {
        for seed in 1..=seeds {
            let label = format!("fair-wired {name} seed={seed}");
            let s = setup(r, None, deterministic, WIRED_JITTER_LINKS);
            jobs.push(fairness(&wired, label, s, d, seed)?);
        }
    }
    // Sensitivity to the wired hosts' access delay, which the paper does not give.
    for &ms in &ACCESS_DELAYS_MS {
        for deterministic in [true, false] {
            for r in [Reference::None, Reference::NewReno] {
                for seed in 1..=seeds {
                    let label = format!(
                        "fair-wired {r:?} wired-access={ms}ms deterministic={deterministic} seed={seed}"
                    );
                    let s = setup(r, Some(ms), deterministic, WIRED_JITTER_LINKS);
                    jobs.push(fairness(&wired, label, s, d, seed)?);
                }
            }
        }
    }
    let results = run_jobs(jobs, ctx.progress)?;
    let n = seeds as usize;
    let mut groups = results.chunks(n);
    let mut next = || groups.next().unwrap_or(&[]);
    let (intra_r, intra_det_r) = (next(), next());
    let wired_phi: Vec<Vec<f64>> = WIRED_VARIANTS
        .iter()
        .map(|_| next().iter().map(phi_of).collect())
        .collect();
    let jain_of = |rs: &[RunResult]| -> Vec<f64> { rs.iter().map(|r| r.jain_index).collect() };
    let (jain, jain_det) = (jain_of(intra_r), jain_of(intra_det_r));
    let per_flow = intra_r
        .first()
        .map(|r| {
            r.flows
                .iter()
                .map(|f| num(f.bytes_delivered as f64 / 1e6, 1))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let mut sweep_rows = Vec::new();
    let mut sweep_json = Vec::new();
    for &ms in &ACCESS_DELAYS_MS {
        let mut cells = vec![ms.to_string()];
        let mut phis = Vec::new();
        for _ in 0..4 {
            let v: Vec<f64> = next().iter().map(phi_of).collect();
            cells.push(show(&v, 3));
            phis.push(mean(&v));
        }
        sweep_rows.push(cells);
        sweep_json.push(json!({
            "wired_access_delay_ms": ms,
            "deterministic": {"phi_atl": phis[0], "phi_newreno": phis[1]},
            "with_jitter": {"phi_atl": phis[2], "phi_newreno": phis[3]},
        }));
    }
    report.section(
        "Fairness (Figs. 10–11)",
        "Six TCP-ATL flows (each behind its own 2 Mb/s wireless hop, d_w = 10 ms, p_w = 10⁻³) on a \
         6 Mb/s bottleneck; five TCP-ATL + five wired TCP-SACK flows on a 4 Mb/s bottleneck. \
         Φ = bytes received by the TCP-ATL sinks / bytes received by the wired TCP sinks. \
         Every source's access link adds an in-order uniform random delay of up to about one \
         bottleneck packet time (2 ms; 1.4 ms in the six-flow run) to break drop-tail phase \
         effects, as Floyd & Jacobson recommend for deterministic simulations; the \
         deterministic rows leave it out.",
    );
    let mut rows = vec![
        vec![
            "six TCP-ATL: Jain's index".into(),
            show(&jain, 4),
            "≈ 1 (equal data per sink, Fig. 10)".into(),
        ],
        vec![
            "deterministic (no jitter): six TCP-ATL: Jain's index".into(),
            show(&jain_det, 4),
            "–".into(),
        ],
        vec![
            "six TCP-ATL: MB per sink (seed 1)".into(),
            per_flow,
            "equal".into(),
        ],
    ];
    for ((name, _, _), v) in WIRED_VARIANTS.iter().zip(&wired_phi) {
        let paper = if name.starts_with("five") {
            "≈ 1, slightly above (Fig. 11)"
        } else {
            "–"
        };
        rows.push(vec![(*name).to_owned(), show(v, 3), paper.to_owned()]);
    }
    report.table(&["scenario", "ours", "paper"], &rows);
    report.paragraph(
        "Sensitivity of Φ to the wired hosts' access delay (not given in the paper; 1 ms \
         above). Without jitter, Φ jumps between a lock-out of one group and a lock-out of the \
         other as this delay changes by a few milliseconds, for either controller: drop-tail \
         phase effects in a deterministic simulation set the split. With the jitter Φ varies \
         smoothly.",
    );
    report.table(
        &[
            "wired access delay (ms)",
            "Φ, TCP-ATL, deterministic",
            "Φ, NewReno, deterministic",
            "Φ, TCP-ATL, with jitter",
            "Φ, NewReno, with jitter",
        ],
        &sweep_rows,
    );
    let j = mean(&jain);
    report.claim(Claim::new(
        "fairness-intra",
        "Six TCP-ATL flows sharing a 6 Mb/s bottleneck get fair shares (Jain's index ≥ 0.95)",
        json!({"jain": j, "jain_deterministic": mean(&jain_det)}),
        json!("all sinks receive almost the same amount of data (Fig. 10)"),
        j >= 0.95,
    ));
    let phi = mean(&wired_phi[0]);
    report.claim(Claim::new(
        "fairness-wired",
        "Five TCP-ATL and five wired TCP-SACK flows on 4 Mb/s: the ratio Φ of bytes received is \
         between 0.8 and 1.25 (phase effects broken by access-link jitter)",
        json!({
            "phi": phi,
            "phi_with_newreno_on_the_wireless_hosts": mean(&wired_phi[1]),
            "phi_with_newreno_and_no_wireless_loss": mean(&wired_phi[2]),
            "phi_deterministic": mean(&wired_phi[3]),
            "phi_deterministic_with_newreno": mean(&wired_phi[4]),
            "by_wired_access_delay": sweep_json,
        }),
        json!({"phi": "≈ 1, slightly above 1"}),
        (0.8..=1.25).contains(&phi),
    ));
    Ok(())
}

/// Figs. 12–14 and 17.
fn media(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "media.toml")?;
    let (pws, dws): (&[f64], &[u32]) = if ctx.quick {
        (&PWS_QUICK, &DWS_QUICK)
    } else {
        (&PWS_FULL, &DWS_FULL)
    };
    // Fig. 17's point (d_w = 10 ms, p_w = 10⁻⁴) is always included.
    let mut pws = pws.to_vec();
    if !pws.contains(&1e-4) {
        pws.push(1e-4);
        pws.sort_by(f64::total_cmp);
    }
    let seeds = seeds(ctx);
    let mut jobs = Vec::new();
    for &dw in dws {
        for &pw in &pws {
            for (name, cc) in MEDIA_PROTOCOLS {
                for seed in 1..=seeds {
                    let label = format!("media dw={dw}ms pw={pw} {name} seed={seed}");
                    jobs.push(single(&t, label, cc, pw, dw, duration_s(ctx), seed)?);
                }
            }
        }
    }
    let groups = run_grouped(ctx, jobs, seeds as usize)?;
    let mut it = groups.iter();
    let jitter_ms = |r: &RunResult| {
        r.flows
            .first()
            .and_then(|f| f.media)
            .map_or(f64::NAN, |m| m.mean_jitter_s * 1e3)
    };
    let mut goodput_claim = Vec::new();
    let mut goodput_ok = true;
    let mut jitter_points = Vec::new();
    let mut fig17 = None;
    let mut integrity = 0u64;
    report.section(
        "RCP-ATL goodput and jitter (Figs. 12–14, 17)",
        "Media flows over the same topology: RCP-ATL against the plain rate AIMD (1, ½) in the \
         role of RAP. Paper: RCP-ATL keeps its goodput for p_w < 10⁻² (slight degradation above) \
         and is unaffected by d_w; its packets see much lower jitter than RAP's (Fig. 17, \
         d_w = 10 ms, p_w = 10⁻⁴). Jitter = mean |d_i − d_{i−1}| of consecutive received \
         packets' one-way delays.",
    );
    for &dw in dws {
        let mut rows = Vec::new();
        let mut series = vec![Vec::new(), Vec::new()];
        let mut at_low = f64::NAN;
        for &pw in &pws {
            let cells: Vec<&Vec<RunResult>> =
                MEDIA_PROTOCOLS.iter().filter_map(|_| it.next()).collect();
            let g: Vec<Vec<f64>> = cells.iter().map(|c| c.iter().map(mbps).collect()).collect();
            let j: Vec<Vec<f64>> = cells
                .iter()
                .map(|c| c.iter().map(jitter_ms).collect())
                .collect();
            integrity += cells
                .iter()
                .flat_map(|c| c.iter())
                .flat_map(|r| r.flows.iter())
                .map(|f| f.integrity_errors)
                .sum::<u64>();
            let (ga, gr) = (mean(&g[0]), mean(&g[1]));
            let (ja, jr) = (mean(&j[0]), mean(&j[1]));
            series[0].push((pw, ga));
            series[1].push((pw, gr));
            if at_low.is_nan() {
                at_low = ga;
            }
            if pw <= 1e-2 {
                let kept = ga / at_low;
                goodput_ok &= kept >= 0.9;
                goodput_claim.push(json!({"d_w_ms": dw, "p_w": pw, "rcp_atl": ga,
                    "fraction_of_lowest_p_w": kept, "aimd": gr}));
            }
            jitter_points.push(json!({"d_w_ms": dw, "p_w": pw, "rcp_atl_ms": ja, "aimd_ms": jr}));
            if dw == 10 && (pw - 1e-4).abs() < 1e-12 {
                fig17 = Some((ja, jr));
            }
            rows.push(vec![
                format!("{pw:e}"),
                show(&g[0], 3),
                show(&g[1], 3),
                show(&j[0], 3),
                show(&j[1], 3),
            ]);
        }
        report.section(&format!("Media, d_w = {dw} ms"), "");
        report.table(
            &[
                "p_w",
                "RCP-ATL goodput (Mb/s)",
                "AIMD goodput (Mb/s)",
                "RCP-ATL jitter (ms)",
                "AIMD jitter (ms)",
            ],
            &rows,
        );
        let file = format!("media-goodput-dw{dw}.svg");
        let title = format!("Media goodput vs p_w, d_w = {dw} ms");
        plot(
            ctx,
            &file,
            &Axes {
                title: &title,
                x: "p_w",
                y: "goodput (Mb/s)",
                log_x: true,
            },
            MEDIA_PROTOCOLS
                .iter()
                .zip(series)
                .map(|((name, _), points)| Series {
                    label: (*name).to_owned(),
                    points,
                })
                .collect(),
        )?;
        report.image(&title, &file);
    }
    report.section(
        "Media integrity",
        &format!("Payload bytes that differed from what the sources sent: {integrity}."),
    );
    report.claim(Claim::new(
        "rcp-goodput",
        "RCP-ATL keeps its goodput for p_w ≤ 10⁻² (at least 90 % of its goodput at the lowest \
         p_w), for every d_w",
        json!(goodput_claim),
        json!("goodput maintained for p_w < 10⁻², unaffected by d_w (Figs. 12–14)"),
        goodput_ok && !goodput_claim.is_empty(),
    ));
    let (ja, jr) = fig17.unwrap_or((f64::NAN, f64::NAN));
    report.claim(Claim::new(
        "rcp-jitter",
        "RCP-ATL's packets see lower jitter than the plain rate AIMD (RAP) at d_w = 10 ms, \
         p_w = 10⁻⁴",
        json!({"rcp_atl_ms": ja, "aimd_ms": jr, "all_points": jitter_points}),
        json!("RAP's packets experience much higher jitter than RCP-ATL's (Fig. 17)"),
        ja < jr,
    ));
    Ok(())
}
