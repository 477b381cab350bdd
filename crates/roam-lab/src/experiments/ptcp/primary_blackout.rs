//! Beyond the paper (issue 31 item 8): the 10 s blackout of `roam reproduce r2cp` (an 8 Mb/s,
//! 30 ms RTT primary dark in both directions from 11 s to 21 s beside a 2 Mb/s, 210 ms
//! secondary; 200-packet queues, 4 MB receive buffer, 40 s backlogged) with pTCP, one pipe per
//! path. The bar, R²CP's: no second of the blackout without in-order delivery, and the
//! primary carrying data again within 1 s of its return.

use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};
use serde_json::json;

use super::hard_paths::variant;
use crate::chart::{self, Axes, Series};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::runner::run_jobs;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

const AT_S: f64 = 11.0;
const DARK_S: f64 = 10.0;
const SECS: f64 = 40.0;
/// Datagrams larger than this are data segments (a pTCP ACK is about 100 bytes).
const DATA_BYTES: usize = 200;

/// Data datagrams of the pTCP flow delivered over each path's forward link: (time s, path).
#[derive(Debug, Default, Clone)]
struct Arrivals {
    at: Vec<(f64, usize)>,
}

impl PacketObserver for Arrivals {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        if r.fate != PacketFate::Delivered || r.bytes <= DATA_BYTES {
            return;
        }
        let path = match r.link {
            "wifi:fwd" => 0,
            "cell:fwd" => 1,
            _ => return,
        };
        self.at.push((r.time.as_secs_f64(), path));
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        flow == Some("single")
    }
}

fn params(v: &str) -> Vec<(String, String)> {
    let mut p: Vec<(String, String)> = vec![
        ("link.wifi.queue".into(), "\"200p\"".into()),
        ("link.cell.queue".into(), "\"200p\"".into()),
        ("link.wifi.rate".into(), "\"8Mbps\"".into()),
        ("link.wifi.delay".into(), "\"14ms\"".into()),
        ("link.cell.rate".into(), "\"2Mbps\"".into()),
        ("link.cell.delay".into(), "\"104ms\"".into()),
        ("run.duration".into(), format!("\"{SECS}s\"")),
        ("run.sample_interval".into(), "\"1s\"".into()),
    ];
    if v == "ptcp" {
        let dark = format!(
            "[{{at = \"{}ms\", duration = \"{}ms\"}}]",
            AT_S * 1000.0,
            DARK_S * 1000.0
        );
        p.push(("link.wifi.forward.blackouts".into(), dark.clone()));
        p.push(("link.wifi.reverse.blackouts".into(), dark));
    }
    p.extend(variant(v));
    p
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = Template::load(&ctx.experiment_dir("r2cp").join("two_paths.toml"))?;
    let traced = t.build("primary blackout pTCP", &params("ptcp"))?;
    let mut seen = Arrivals::default();
    let r = roam_sim::run_traced(&traced, &mut |_| {}, &mut seen);
    let alone = run_jobs(
        vec![t.job("secondary alone".into(), &params("tcp1"))?],
        false,
    )?;
    let secondary = alone
        .first()
        .and_then(|a| a.flows.iter().find(|f| f.id == "single"))
        .map_or(f64::NAN, |f| f.goodput_bps / 1e6);
    let per_s: Vec<f64> = r
        .series
        .iter()
        .find(|s| s.id == "single")
        .map(|s| s.throughput_bps.iter().map(|b| b / 1e6).collect())
        .unwrap_or_default();
    let (from, to) = (AT_S as usize, (AT_S + DARK_S) as usize);
    let dark: Vec<f64> = per_s.get(from..to).unwrap_or(&[]).to_vec();
    let dark_mean = dark.iter().sum::<f64>() / dark.len().max(1) as f64;
    let back = seen
        .at
        .iter()
        .find(|(t, p)| *p == 0 && *t >= AT_S + DARK_S)
        .map_or(f64::NAN, |(t, _)| t - (AT_S + DARK_S));
    report.section(
        "Beyond the paper: a blackout of the primary path (issue 31 item 8)",
        &format!(
            "R²CP's setup (`roam reproduce r2cp`, on its template): primary (wifi) 8 Mb/s, \
             30 ms RTT, dark in both directions from {AT_S} s for {DARK_S} s; secondary (cell) \
             2 Mb/s, 210 ms RTT; 200-packet queues; {SECS} s backlogged; pTCP with one \
             NewReno pipe per path. In-order goodput per second (Mb/s) from 0 s: `{}`. TCP \
             alone on the secondary: {} Mb/s.",
            per_s
                .iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" "),
            crate::report::num(secondary, 2)
        ),
    );
    report.table(
        &[
            "dark seconds without in-order delivery",
            "mean in-order goodput while dark (Mb/s)",
            "TCP alone on the secondary (Mb/s)",
            "primary carries data again after (s)",
        ],
        &[vec![
            Cell::num(dark.iter().filter(|x| **x <= 0.0).count() as f64, 0),
            Cell::num(dark_mean, 2),
            Cell::num(secondary, 2),
            Cell::num(back, 2),
        ]],
    );
    let bins = |k: usize| {
        let mut b = vec![0.0; (SECS * 2.0) as usize];
        for (t, p) in &seen.at {
            if *p == k {
                if let Some(x) = b.get_mut((t * 2.0) as usize) {
                    // Datagrams per 500 ms as Mb/s of ~1 KB segments.
                    *x += 8000.0 * 2.0 / 1e6;
                }
            }
        }
        b.iter()
            .enumerate()
            .map(|(i, x)| ((i as f64 + 1.0) * 0.5, *x))
            .collect::<Vec<_>>()
    };
    let agg: Vec<(f64, f64)> = per_s
        .iter()
        .enumerate()
        .map(|(i, x)| (i as f64 + 1.0, *x))
        .collect();
    chart::lines(
        &ctx.out_dir.join("primary_blackout.svg"),
        &Axes {
            title: "pTCP, blackout of the primary path 11-21 s",
            x: "time (s)",
            y: "goodput (Mb/s)",
            log_x: false,
            y_from_zero: true,
        },
        &[
            Series::new("in order (1 s)", agg),
            Series::new("primary data segments (500 ms)", bins(0)),
            Series::new("secondary data segments (500 ms)", bins(1)),
        ],
    )?;
    report.image("primary blackout", "primary_blackout.svg");
    let mut ev = Evidence::new();
    ev.all("in-order goodput per dark second", &dark);
    ev.some("dark seconds", dark.len());
    report.claim(Claim::judged(
        "primary-blackout-ptcp-no-dark-second",
        "During a 10 s blackout of an 8 Mb/s primary beside a 2 Mb/s, 210 ms secondary, pTCP \
         delivers in order in every second (issue 31 item 8, R²CP's bar)",
        json!({"per_second_mbps_while_dark": dark, "secondary_alone_mbps": secondary}),
        json!({"not_in_paper": true}),
        ev,
        dark.len() == DARK_S as usize && dark.iter().all(|x| *x > 0.0),
    ));
    let mut ev = Evidence::new();
    ev.num("primary back after", back);
    report.claim(Claim::judged(
        "primary-blackout-ptcp-primary-back-within-1s",
        "After the blackout pTCP's primary pipe carries data again within 1 s",
        json!({"primary_back_after_s": back}),
        json!({"not_in_paper": true}),
        ev,
        back.is_finite() && back <= 1.0,
    ));
    Ok(())
}
