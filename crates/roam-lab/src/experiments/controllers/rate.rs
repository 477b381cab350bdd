//! Part 5: RCP-Rate (`cc = "rate"`), the rate-based receiver controller (issue 30, item 3):
//! BBR's model at the receiver, requests paced at the estimated bottleneck rate
//! (`roam_proto::rcp::rate`).
//!
//! (a) On the lossy 2 Mb/s grid of part 2 (`lossy-rcp.toml`: the same path, an RCP download), against RCP
//! with NewReno and with window-only BBR at the receiver, and Linux BBR.
//! (b) On the deep-queued hard path of the multipath work (`experiments/r2cp/two_paths.toml`
//! with the cell path at 0.2 Mb/s, 39 ms one-way, a 1000-packet queue): the cell link's
//! queueing delay, from the packet trace (each data packet's wait between entering the queue
//! and starting on the wire), against the path's base RTT. Issue 30's bar: under 2× the base
//! RTT for the rate-based controller.

use std::collections::{BTreeMap, VecDeque};

use roam_proto::Time;
use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};
use serde_json::json;

use super::grid::{self, Column};
use super::{flow_mbps, run_all, template};
use crate::claims::{Claim, Evidence};
use crate::report::Cell;
use crate::stats::Estimate;
use crate::template::Template;
use crate::{Ctx, LabError, Report};

/// Linux BBR on the same path (`shared/anchors/README.md`), `[delay][loss]`, Mb/s.
const LINUX_BBR: [[f64; 3]; 2] = [[1.88, 1.88, 1.85], [1.79, 1.75, 1.68]];
/// RCP controllers compared on the grid.
const RCP_CCS: [&str; 3] = ["newreno", "bbr", "rate"];

/// The deep-queued cell path: rate, one-way delay, queue.
const CELL_RATE: &str = "0.2Mbps";
const CELL_DELAY_MS: u64 = 39;
const CELL_QUEUE: &str = "1000p";
/// (multipath, controller) of each deep-queue run: R²CP over both paths, then single-path RCP
/// over the cell path alone.
const CASES: [(bool, &str); 8] = [
    (true, "newreno"),
    (true, "cubic"),
    (true, "bbr"),
    (true, "rate"),
    (false, "newreno"),
    (false, "cubic"),
    (false, "bbr"),
    (false, "rate"),
];
/// Base RTT of the cell path: 2 × (39 ms wireless + 1 ms wired), propagation only.
const CELL_BASE_RTT_MS: f64 = 80.0;

/// Runs both parts and adds their tables and claims.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    lossy(ctx, report)?;
    deep_queue(ctx, report)
}

fn lossy(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "lossy-rcp.toml")?;
    let seeds: Vec<u64> = (1..=ctx.pick(1, 3)).collect();
    let duration = ctx.pick("10s", "30s");
    let columns = RCP_CCS.map(Column::cc);
    let sets = grid::sets("rcp-lossy", &columns, &seeds, duration);
    let runs = run_all(ctx, &t, sets)?;
    let mut per_point = runs.chunks(seeds.len());
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut ev = Evidence::new();
    for (di, d, pi, p) in grid::cells() {
        let mut cells = grid::row_head(d, p);
        let mut rate = f64::NAN;
        for cc in RCP_CCS {
            let point = per_point.next().unwrap_or(&[]);
            let values: Vec<f64> = point.iter().map(|r| flow_mbps(r, "f")).collect();
            let e = Estimate::from_sample(&values);
            if cc == "rate" {
                rate = e.mean.unwrap_or(f64::NAN);
            }
            cells.push(Cell::est(&e, 2));
        }
        let linux = LINUX_BBR[di][pi];
        let label = grid::cell_label(d, p);
        let ratio = ev.num(&format!("RCP-Rate at {label}"), rate) / linux;
        ratios.push(ratio);
        cells.push(Cell::num(linux, 2));
        cells.push(Cell::num(ratio * 100.0, 0));
        rows.push(cells);
    }
    report.section(
        "RCP-Rate on the lossy 2 Mb/s path",
        &format!(
            "Part 2's path and grid with an RCP download instead of TCP: the controller runs at \
             the receiver. `bbr` is BBR v1 at the receiver, window only (requests not paced); \
             `rate` is RCP-Rate: the same model, holes not treated as congestion, each arrival \
             counted once, one send quantum of quantization allowance instead of the draft's \
             three, requests paced at `pacing_gain · BtlBw` through the pipe's timer \
             (`docs/CONTROLLERS.md`). {duration}, {} seed(s) per cell, mean ± 95 % CI (Mb/s).",
            seeds.len()
        ),
    );
    report.table(
        &[
            "one-way delay (ms)",
            "loss (%)",
            "RCP NewReno",
            "RCP BBR (window only)",
            "RCP-Rate",
            "Linux BBR",
            "RCP-Rate / Linux BBR (%)",
        ],
        &rows,
    );
    ev.some("cells", ratios.len());
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    report.claim(Claim::judged(
        "rate-rcp-lossy-90pct-of-linux-bbr",
        "RCP with the rate-based receiver controller (oracle-free) reaches ≥ 90 % of Linux BBR \
         in every cell of the lossy 2 Mb/s grid",
        json!({"rate_over_linux_bbr": ratios, "worst": worst}),
        json!({"linux_bbr_mbps": LINUX_BBR}),
        ev,
        ratios.iter().all(|r| *r >= 0.9),
    ));
    Ok(())
}

/// Waits in the cell link's forward queue, from the packet trace.
#[derive(Default)]
struct QueueWaits {
    /// When each packet still queued entered the queue (FIFO).
    queued: VecDeque<Time>,
    /// Every data packet's wait, seconds (0 for one that found the transmitter idle).
    waits: Vec<f64>,
}

impl PacketObserver for QueueWaits {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        if r.link != "cell:fwd" {
            return;
        }
        match r.fate {
            PacketFate::Queued => self.queued.push_back(r.time),
            // The queue is FIFO and the transmitter is busy while it holds anything, so a
            // departure takes the head if there is one; otherwise the packet never waited.
            PacketFate::Sent => {
                let wait = self
                    .queued
                    .pop_front()
                    .map_or(0.0, |q| r.time.saturating_since(q).as_secs_f64());
                self.waits.push(wait);
            }
            _ => {}
        }
    }
}

/// `q`-quantile of `v` (sorted in place), NaN when empty.
fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i.min(v.len() - 1)]
}

fn deep_queue(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = Template::load(&ctx.experiment_dir("r2cp").join("two_paths.toml"))?;
    let duration = ctx.pick("20s", "60s");
    let mut rows = Vec::new();
    let mut ev = Evidence::new();
    // The larger of the two p95s (R²CP, single path): both must be under the bar.
    let mut rate_p95 = f64::NEG_INFINITY;
    let mut by_cc = BTreeMap::new();
    for (multipath, cc) in CASES {
        let mut params = vec![
            ("link.cell.rate", format!("\"{CELL_RATE}\"")),
            ("link.cell.delay", format!("\"{CELL_DELAY_MS}ms\"")),
            ("link.cell.queue", format!("\"{CELL_QUEUE}\"")),
            ("flow.f.cc", format!("\"{cc}\"")),
            ("run.duration", format!("\"{duration}\"")),
        ];
        if !multipath {
            // Single-path RCP from server2 over the cell interface alone.
            params.extend([
                ("flow.f.count", "0".to_owned()),
                ("flow.single.count", "1".to_owned()),
                ("flow.single.from", "\"server2\"".to_owned()),
                ("flow.single.to_iface", "1".to_owned()),
                ("flow.single.cc", format!("\"{cc}\"")),
            ]);
        }
        let flow = if multipath { "f" } else { "single" };
        let scheme = if multipath { "R²CP" } else { "RCP, cell only" };
        let scenario = t.build(&format!("deep-queue {scheme} cc={cc}"), &params)?;
        let mut obs = QueueWaits::default();
        let result = roam_sim::run_traced(&scenario, &mut |_| {}, &mut obs);
        let mut waits = obs.waits;
        let mean = waits.iter().sum::<f64>() / waits.len().max(1) as f64 * 1e3;
        let p95 = quantile(&mut waits, 0.95) * 1e3;
        let max = waits.last().copied().unwrap_or(f64::NAN) * 1e3;
        if cc == "rate" {
            let p = ev.num(&format!("RCP-Rate p95 queueing delay, {scheme} (ms)"), p95);
            rate_p95 = rate_p95.max(p);
            ev.num(
                &format!("RCP-Rate mean queueing delay, {scheme} (ms)"),
                mean,
            );
        }
        by_cc.insert(format!("{scheme} {cc}"), (mean, p95, max));
        rows.push(vec![
            Cell::text(scheme),
            Cell::text(cc),
            Cell::num(flow_mbps(&result, flow), 2),
            Cell::num(mean, 0),
            Cell::num(p95, 0),
            Cell::num(max, 0),
            Cell::num(p95 / CELL_BASE_RTT_MS, 2),
        ]);
    }
    report.section(
        "Deep-queued slow path (R²CP)",
        &format!(
            "`experiments/r2cp/two_paths.toml` (R²CP over a 4 Mb/s, 15 ms Wi-Fi path and a cell \
             path), the cell hop at {CELL_RATE}, {CELL_DELAY_MS} ms one-way, a {CELL_QUEUE} \
             drop-tail queue; every pipe runs the controller named (R²CP), or single-path RCP \
             from server2 over the cell interface alone; {duration}, one run each \
             (deterministic). Queueing delay: each data packet's wait in the cell hop's queue \
             (packet trace), in ms; base RTT of the cell path {CELL_BASE_RTT_MS} ms \
             (propagation). A loss-based controller fills the deep queue; the bar is a p95 \
             below 2× the base RTT."
        ),
    );
    report.table(
        &[
            "transfer",
            "cc (every pipe)",
            "goodput (Mb/s)",
            "mean wait (ms)",
            "p95 wait (ms)",
            "max wait (ms)",
            "p95 / base RTT",
        ],
        &rows,
    );
    report.claim(Claim::judged(
        "rate-deep-queue-under-2x-base-rtt",
        "On the deep-queued slow path of the multipath work, the rate-based receiver \
         controller keeps the slow path's queueing delay (95th percentile) under 2× its base \
         RTT, in R²CP and in single-path RCP over that path",
        json!({"p95_ms": rate_p95, "base_rtt_ms": CELL_BASE_RTT_MS, "by_cc_mean_p95_max_ms": by_cc}),
        json!({"bar_ms": 2.0 * CELL_BASE_RTT_MS}),
        ev,
        rate_p95 < 2.0 * CELL_BASE_RTT_MS,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u64, fate: PacketFate) -> PacketRecord<'static> {
        PacketRecord {
            time: Time::from_millis(t),
            link: "cell:fwd",
            fate,
            flow: Some("f"),
            bytes: 1000,
            summary: "",
            src: roam_sim::agent::SockAddr {
                addr: roam_sim::agent::Addr(1),
                port: 1,
            },
            dst: roam_sim::agent::SockAddr {
                addr: roam_sim::agent::Addr(1),
                port: 1,
            },
            payload: None,
        }
    }

    /// Idle transmitter: no wait; queued packets wait until they start, in FIFO order.
    #[test]
    fn waits_from_queued_to_sent() {
        let mut o = QueueWaits::default();
        for r in [
            rec(0, PacketFate::Sent),
            rec(1, PacketFate::Queued),
            rec(2, PacketFate::Queued),
            rec(40, PacketFate::Sent),
            rec(80, PacketFate::Sent),
            rec(200, PacketFate::Sent),
        ] {
            o.observe(&r);
        }
        let ms: Vec<f64> = o.waits.iter().map(|w| (w * 1e3).round()).collect();
        assert_eq!(ms, vec![0.0, 39.0, 78.0, 0.0]);
        let mut v = vec![3.0, 1.0, 2.0];
        assert_eq!(quantile(&mut v, 0.5), 2.0);
    }
}
