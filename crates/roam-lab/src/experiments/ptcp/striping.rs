//! The application striping baselines of ptcp.txt §2 and §5 beside pTCP: the "unaware"
//! application (one TCP connection per link, each send buffer filled in turn) and the "smart"
//! one (records by a fixed ratio of the links' bandwidths), both resequencing at the
//! receiver (`roam-sim/src/agents/ptcp_striping.rs`). Here: their rows and claims in the rate
//! differential (§5.2.1, Fig. 6(a)).

use serde_json::json;

use crate::chart::{self, Axes, Series};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::{Ctx, LabError, Report};

/// The rate differential's four curves: per rate ratio, the ideal, pTCP, smart and unaware
/// striping (Mb/s).
#[derive(Debug, Default)]
pub(super) struct RateFigure {
    points: Vec<(f64, [f64; 4])>,
}

/// The unaware application "exhibits a non-increasing aggregate throughput beyond a ratio of
/// 2" (§5.2.1). Our reading, fixed before the runs: from the first ratio ≥ 2 to the largest,
/// it gains less than a quarter of what the ideal gains.
const UNAWARE_MAX_GAIN_SHARE: f64 = 0.25;

impl RateFigure {
    /// Adds one ratio's goodputs: `[ideal, pTCP, smart, unaware]`.
    pub(super) fn push(&mut self, ratio: f64, mbps: [f64; 4]) {
        self.points.push((ratio, mbps));
    }

    /// The table, the plot and the baselines' claims.
    pub(super) fn report(&self, ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
        report.section(
            "Rate differential: the striping baselines (§5.2.1, Fig. 6(a))",
            "The same links and runs as above. *Unaware*: one TCP connection per link, the \
             application writes 990-byte records (10-byte header: offset and length) to one \
             socket until its send buffer is full, then to the next (§2); *smart*: records by \
             a smooth weighted round robin of the links' rates, waiting for the chosen socket \
             when it is full (§5). Both receivers deliver in-sequence records, resequence the \
             others in a buffer as large as a socket's receive buffer and, when it is full, \
             take a socket's next record only if it is the next in sequence (§2's peek mode). \
             Every socket, like pTCP and the single-path flows, has the TCP defaults (4 MB \
             buffers; the paper gives no sizes). Goodput in Mb/s.",
        );
        let rows: Vec<Vec<Cell>> = self
            .points
            .iter()
            .map(|(x, [ideal, p, smart, unaware])| {
                vec![
                    Cell::num(*x, 0),
                    Cell::num(*ideal, 3),
                    Cell::num(*p, 3),
                    Cell::num(*smart, 3),
                    Cell::num(*unaware, 3),
                    Cell::num(100.0 * smart / ideal, 1),
                    Cell::num(100.0 * unaware / ideal, 1),
                ]
            })
            .collect();
        report.table(
            &[
                "rate ratio",
                "ideal",
                "pTCP",
                "smart striping",
                "unaware striping",
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
                let s = Series::new(*name, self.points.iter().map(|(x, v)| (*x, v[k])).collect())
                    .in_colour(k);
                if k == 0 {
                    s.dashed()
                } else {
                    s
                }
            })
            .collect();
        chart::lines(
            &ctx.out_dir.join("rate_differential.svg"),
            &Axes {
                title: "Rate differential (ptcp.txt Fig. 6(a))",
                x: "bandwidth ratio (second link / 500 kb/s)",
                y: "aggregate goodput (Mb/s)",
                log_x: false,
                y_from_zero: true,
            },
            &series,
        )?;
        report.image("rate differential", "rate_differential.svg");

        let mut ev = Evidence::new();
        let smart: Vec<f64> = self.points.iter().map(|(_, v)| v[2] / v[0]).collect();
        ev.all("smart / ideal", &smart);
        ev.some("ratios", smart.len());
        let worst = smart.iter().copied().fold(f64::INFINITY, f64::min);
        report.claim(Claim::judged(
            "rate-differential-smart-near-ideal",
            "Smart striping (a fixed ratio of the links' rates) stays near the ideal, ≥ 90 % \
             at every rate ratio (ptcp.txt §5.2.1: \"pTCP and the smart application achieve \
             near ideal performance\")",
            json!({"smart_over_ideal": smart, "worst": worst}),
            json!({"min_ratio": 0.9}),
            ev,
            smart.iter().all(|r| *r >= 0.9),
        ));

        let mut ev = Evidence::new();
        let base = self.points.iter().find(|(x, _)| *x >= 2.0);
        let top = self.points.last();
        let (share, measured) = match (base, top) {
            (Some((xb, b)), Some((xt, t))) if xt > xb => {
                let gain_u = ev.num("unaware at the largest ratio", t[3])
                    - ev.num("unaware at the first ratio ≥ 2", b[3]);
                let gain_i = ev.positive("the ideal's gain", t[0] - b[0]);
                (
                    gain_u / gain_i,
                    json!({"from_ratio": xb, "to_ratio": xt,
                    "unaware_mbps": [b[3], t[3]], "ideal_mbps": [b[0], t[0]],
                    "unaware_gain_share": gain_u / gain_i}),
                )
            }
            _ => {
                ev.some("two ratios ≥ 2", 0);
                (f64::NAN, json!({"unaware_gain_share": "not measured"}))
            }
        };
        report.claim(Claim::judged(
            "rate-differential-unaware-flat-beyond-2",
            "Unaware striping stops growing beyond a rate ratio of about 2: from there to the \
             largest ratio it gains less than a quarter of what the ideal gains (ptcp.txt \
             §5.2.1: \"a non-increasing aggregate throughput beyond a ratio of 2\")",
            measured,
            json!({"max_gain_share": UNAWARE_MAX_GAIN_SHARE}),
            ev,
            share < UNAWARE_MAX_GAIN_SHARE,
        ));
        Ok(())
    }
}
