//! ptcp.txt §5.2.2 (number of links, Fig. 7) and §5.2.3 (rate fluctuation on the same
//! topology, Fig. 8(b)): pTCP, smart and unaware striping over 2–10 links against the ideal
//! (the sum of a TCP flow alone on each link). Template: `experiments/ptcp/links.toml`.
//!
//! The paper: "we fix the bandwidth of the first link to 500Kbps, the bandwidth of the second
//! link to 5Mbps, and the bandwidths of the remaining links to values between 500Kbps and
//! 5Mbps randomly chosen", averaged over 10 scenarios. It does not give the links' delays; we
//! take the first link as §5.2.1's (400 ms RTT) and the others as its WLAN type (i): "links
//! with bandwidths ranging from 500Kbps to 5Mbps and a round-trip time of 100ms". For §5.2.3:
//! "the bandwidth of each link now randomly fluctuates (every 1 second) between 20% and 100%
//! of the normal value" — here the link's forward rate, redrawn uniformly each second.

use serde_json::json;

use crate::chart::{self, Axes, Series};
use crate::claims::{Claim, Evidence};
use crate::draws;
use crate::report::Cell;
use crate::runner::run_jobs;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

/// Streams of the lab's own draws (`draws::uniform`).
const STREAM_RATES: u64 = 0x7074_6370_0522;
const STREAM_FLUCTUATION: u64 = 0x7074_6370_0523;

/// One link: rate (Mb/s) and one-way delay (ms).
#[derive(Debug, Clone, Copy)]
struct Link {
    mbps: f64,
    delay_ms: u32,
}

/// The link set of scenario `draw` with `n` links (§5.2.2). A prefix of the draws, so the
/// set with n + 1 links adds one link to the set with n.
fn link_set(n: usize, draw: u64) -> Vec<Link> {
    let u = draws::uniform(draw, STREAM_RATES, n.saturating_sub(2));
    let mut v = vec![
        Link {
            mbps: 0.5,
            delay_ms: 200,
        },
        Link {
            mbps: 5.0,
            delay_ms: 50,
        },
    ];
    v.extend(u.iter().map(|x| Link {
        mbps: ((0.5 + 4.5 * x) * 100.0).round() / 100.0,
        delay_ms: 50,
    }));
    v.truncate(n);
    v
}

fn kbps(mbps: f64) -> String {
    format!("\"{}kbps\"", (mbps * 1000.0).round())
}

fn links_param(set: &[Link]) -> String {
    let items: Vec<String> = set
        .iter()
        .enumerate()
        .map(|(k, l)| {
            format!(
                "{{name = \"l{}\", a = \"server\", b = \"mobile\", rate = {}, delay = \"{}ms\", queue = \"50p\"}}",
                k + 1,
                kbps(l.mbps),
                l.delay_ms
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn pipes_param(set: &[Link]) -> String {
    let items: Vec<String> = set
        .iter()
        .enumerate()
        .map(|(k, l)| {
            format!(
                "{{from_iface = \"l{0}\", to_iface = \"l{0}\", weight = {1}}}",
                k + 1,
                l.mbps
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// A TCP flow alone on link `k` (for the ideal), in place of the template's flow.
pub(super) fn tcp_alone(link: &str) -> String {
    format!(
        "{{id = \"f\", protocol = \"tcp\", from = \"server\", to = \"mobile\", from_iface = \
         \"{link}\", to_iface = \"{link}\", cc = \"newreno\", tcp = {{mss = 1000}}}}"
    )
}

/// §5.2.3's fluctuation: every link's forward rate redrawn each second in 20–100 % of its
/// capacity (the same draws for every variant of a scenario).
fn fluctuation_events(set: &[Link], draw: u64, seconds: u32) -> String {
    let mut items = Vec::new();
    for (k, l) in set.iter().enumerate() {
        let u = draws::uniform(
            draw.wrapping_mul(64).wrapping_add(k as u64),
            STREAM_FLUCTUATION,
            seconds as usize,
        );
        for (t, x) in u.iter().enumerate() {
            items.push(format!(
                "{{at = \"{t}s\", link = \"l{}\", direction = \"forward\", set = {{rate = {}}}}}",
                k + 1,
                kbps(l.mbps * (0.2 + 0.8 * x))
            ));
        }
    }
    format!("[{}]", items.join(", "))
}

/// The variants of one scenario, in job order: pTCP, smart, unaware, then TCP alone on each
/// link.
const VARIANTS: [&str; 3] = ["ptcp", "smart", "unaware"];

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn goodput(r: &roam_sim::result::RunResult) -> f64 {
    super::goodput_mbps(r)
}

/// Per link count: the mean over the draws of [ideal, pTCP, smart, unaware] (Mb/s).
fn sweep(
    ctx: &Ctx,
    t: &Template,
    counts: &[usize],
    draws: &[u64],
    fluctuate: bool,
) -> Result<Vec<[f64; 4]>, LabError> {
    let seconds: u32 = ctx.pick(120, 600);
    let mut jobs = Vec::new();
    for &n in counts {
        for &d in draws {
            let set = link_set(n, d);
            let mut common = vec![
                ("link".to_string(), links_param(&set)),
                ("run.duration".to_string(), format!("\"{seconds}s\"")),
            ];
            if fluctuate {
                common.push(("event".into(), fluctuation_events(&set, d, seconds)));
            }
            for v in VARIANTS {
                let mut p = common.clone();
                p.push(("flow.0.ptcp.pipe".into(), pipes_param(&set)));
                p.push(("flow.0.ptcp.striping".into(), format!("\"{v}\"")));
                jobs.push(t.job(format!("{v} n={n} draw={d} fluct={fluctuate}"), &p)?);
            }
            for k in 1..=n {
                let mut p = common.clone();
                p.push(("flow.0".into(), tcp_alone(&format!("l{k}"))));
                jobs.push(t.job(format!("tcp l{k} n={n} draw={d} fluct={fluctuate}"), &p)?);
            }
        }
    }
    let runs = run_jobs(jobs, ctx.progress)?;
    let mut out = Vec::new();
    let mut at = 0;
    for &n in counts {
        let mut per: [Vec<f64>; 4] = Default::default();
        for _ in draws {
            let Some(r) = runs.get(at..at + 3 + n) else {
                break;
            };
            at += 3 + n;
            per[0].push(r[3..].iter().map(goodput).sum());
            for k in 0..3 {
                per[k + 1].push(goodput(&r[k]));
            }
        }
        out.push([mean(&per[0]), mean(&per[1]), mean(&per[2]), mean(&per[3])]);
    }
    Ok(out)
}

fn table_and_plot(
    ctx: &Ctx,
    report: &mut Report,
    counts: &[usize],
    m: &[[f64; 4]],
    (title, file): (&str, &str),
) -> Result<(), LabError> {
    let rows: Vec<Vec<Cell>> = counts
        .iter()
        .zip(m)
        .map(|(n, [i, p, s, u])| {
            vec![
                Cell::num(*n as f64, 0),
                Cell::num(*i, 3),
                Cell::num(*p, 3),
                Cell::num(*s, 3),
                Cell::num(*u, 3),
                Cell::num(100.0 * p / i, 1),
                Cell::num(100.0 * s / i, 1),
                Cell::num(100.0 * u / i, 1),
            ]
        })
        .collect();
    report.table(
        &[
            "links",
            "ideal",
            "pTCP",
            "smart",
            "unaware",
            "pTCP / ideal (%)",
            "smart / ideal (%)",
            "unaware / ideal (%)",
        ],
        &rows,
    );
    let names = ["ideal", "pTCP", "smart striping", "unaware striping"];
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let s = Series::new(
                *name,
                counts
                    .iter()
                    .zip(m)
                    .map(|(n, v)| (*n as f64, v[k]))
                    .collect(),
            )
            .in_colour(k);
            if k == 0 {
                s.dashed()
            } else {
                s
            }
        })
        .collect();
    chart::lines(
        &ctx.out_dir.join(file),
        &Axes {
            title,
            x: "number of links",
            y: "aggregate goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &series,
    )?;
    report.image(title, file);
    Ok(())
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = Template::load(&ctx.experiment_dir("ptcp").join("links.toml"))?;
    let counts: Vec<usize> = ctx.pick(vec![2, 4], vec![2, 4, 6, 8, 10]);
    let draws: Vec<u64> = (1..=ctx.pick(1, 10)).collect();
    let seconds: u32 = ctx.pick(120, 600);
    let steady = sweep(ctx, &t, &counts, &draws, false)?;
    report.section(
        "Number of links (§5.2.2, Fig. 7)",
        &format!(
            "`experiments/ptcp/links.toml`: link 1 500 kb/s, 400 ms RTT; link 2 5 Mb/s; links \
             3 and on drawn uniformly in 0.5–5 Mb/s; links 2 and on 100 ms RTT (the paper \
             gives no delays: §5's WLAN type); 50-packet queues; NewReno; {seconds} s; mean \
             over {} drawn link set(s) per count (Mb/s). The smart application's weights are \
             the links' rates. The ideal is the sum of a TCP flow alone on each link. Counts \
             {counts:?} (the paper: every count from 2 to 10; fewer here to bound the run \
             time).",
            draws.len()
        ),
    );
    table_and_plot(
        ctx,
        report,
        &counts,
        &steady,
        ("Number of links (ptcp.txt Fig. 7)", "links.svg"),
    )?;
    let ptcp: Vec<f64> = steady.iter().map(|v| v[1] / v[0]).collect();
    let unaware: Vec<f64> = steady.iter().map(|v| v[3] / v[0]).collect();
    let mut ev = Evidence::new();
    ev.all("pTCP / ideal", &ptcp);
    ev.some("link counts", ptcp.len());
    report.claim(Claim::judged(
        "links-ptcp-85pct-of-ideal",
        "pTCP reaches ≥ 85 % of the ideal with every number of links (ptcp.txt §5.2.2: \
         \"the performance of pTCP scales well with increasing number of links\")",
        json!({"links": counts, "ptcp_over_ideal": ptcp}),
        json!({"min_ratio": 0.85}),
        ev,
        ptcp.iter().all(|r| *r >= 0.85),
    ));
    let mut ev = Evidence::new();
    ev.all("unaware / ideal", &unaware);
    ev.some("link counts", unaware.len());
    let (first, last) = (
        unaware.first().copied().unwrap_or(f64::NAN),
        unaware.last().copied().unwrap_or(f64::NAN),
    );
    report.claim(Claim::judged(
        "links-unaware-does-not-scale",
        "Unaware striping does not scale: its share of the ideal with the most links is \
         below its share with two, and below half of the ideal (ptcp.txt §5.2.2)",
        json!({"links": counts, "unaware_over_ideal": unaware}),
        json!("the performance of the unaware application does not [scale] (Fig. 7)"),
        ev,
        unaware.len() >= 2 && last < first && last < 0.5,
    ));

    let fluct = sweep(ctx, &t, &counts, &draws, true)?;
    report.section(
        "Rate fluctuation over many links (§5.2.3, Fig. 8(b))",
        &format!(
            "The same link sets, with every link's forward rate redrawn each second uniformly \
             in 20–100 % of its capacity (the same draws for pTCP, both baselines and the \
             single-path flows of the ideal); smart striping keeps the capacities' ratio (the \
             average rates are 60 % of them). {seconds} s; mean over {} link set(s).",
            draws.len()
        ),
    );
    table_and_plot(
        ctx,
        report,
        &counts,
        &fluct,
        (
            "Fluctuating links (ptcp.txt Fig. 8(b))",
            "links_fluctuating.svg",
        ),
    )?;
    let margins: Vec<f64> = fluct.iter().map(|v| v[1] / v[2]).collect();
    let of_ideal: Vec<f64> = fluct.iter().map(|v| v[1] / v[0]).collect();
    let mut ev = Evidence::new();
    ev.all("pTCP / smart", &margins);
    ev.all("pTCP / ideal", &of_ideal);
    ev.some("link counts", margins.len());
    report.claim(Claim::judged(
        "fluctuation-links-ptcp-above-smart",
        "With every link's rate fluctuating each second, pTCP stays above smart striping \
         with every number of links and follows the ideal (≥ 85 %) (ptcp.txt §5.2.3)",
        json!({"links": counts, "ptcp_over_smart": margins, "ptcp_over_ideal": of_ideal}),
        json!(
            "the performance of pTCP still closely follows that of the ideal performance; \
               not the case for the smart and unaware applications (Fig. 8(b))"
        ),
        ev,
        margins.iter().all(|r| *r > 1.0) && of_ideal.iter().all(|r| *r >= 0.85),
    ));
    Ok(())
}
