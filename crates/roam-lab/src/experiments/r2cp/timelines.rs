//! Handoff and server migration (rcp-r2cp.txt §2.2.1, §2.2.2, §4.2) as timelines: per-pipe and
//! aggregate goodput over time around the switch at 10 s. Make-before-break handoff (the new
//! pipe made before the old one drains), break-before-make handoff (the old interface dies, the
//! new one is usable 200 ms later), and migration to a second server (break-before-make: the
//! old server is no longer reachable).

use serde_json::json;

use super::observe::{in_order_rate, path_rate, reassemble, requested_again, Observer};
use super::{flow, param, path, run_traced, template, Params};
use super::{judge, text_table};
use crate::chart::{self, Axes, Series};
use crate::report::num;
use crate::{Ctx, LabError, Report};

/// The switch (s).
const SWITCH_S: f64 = 10.0;
/// The new interface becomes usable this long after the old one dies (break-before-make).
const GAP_S: f64 = 0.2;
/// Object size (bytes).
const SIZE: u64 = 10_000_000;
/// Base RTT of the new path: cell (29 ms) plus two 1 ms wired hops, both ways.
const NEW_RTT_S: f64 = 0.062;
/// Plot bins (s).
const BIN_S: f64 = 0.1;

struct Case {
    key: &'static str,
    title: &'static str,
    pipes: &'static str,
    old_iface_dies: bool,
}

const CASES: [Case; 3] = [
    Case {
        key: "handoff_mbb",
        title: "Make-before-break handoff",
        pipes: r#"[{iface = 0, server = "server1", stop = "10s", removal = "drain"}, {iface = 1, server = "server1", start = "9500ms"}]"#,
        old_iface_dies: false,
    },
    Case {
        key: "handoff_bbm",
        title: "Break-before-make handoff",
        pipes: r#"[{iface = 0, server = "server1"}, {iface = 1, server = "server1", start = "10200ms"}]"#,
        old_iface_dies: true,
    },
    Case {
        key: "migration",
        title: "Server migration (break-before-make)",
        pipes: r#"[{iface = 0, server = "server1"}, {iface = 1, server = "server2", start = "10200ms"}]"#,
        old_iface_dies: true,
    },
];

/// Longest time without an in-order advance within `[from, to]` (s).
fn longest_gap(advances: &[(f64, u64)], from: f64, to: f64) -> f64 {
    let mut last = from;
    let mut gap: f64 = 0.0;
    for &(t, _) in advances.iter().filter(|(t, _)| *t >= from && *t <= to) {
        gap = gap.max(t - last);
        last = t;
    }
    gap.max(to - last)
}

pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx)?;
    let mut sets = Vec::new();
    for c in &CASES {
        let mut p: Params = path("wifi", 4.0, 30.0);
        p.extend(path("cell", 4.0, 60.0));
        p.extend([
            param("flow.f.size", SIZE.to_string()),
            param("flow.f.r2cp.pipe", c.pipes),
            param("run.duration", "40s"),
        ]);
        if c.old_iface_dies {
            p.push(param(
                "event",
                format!("[{{at = \"{SWITCH_S}s\", node = \"mobile\", iface = 0, up = false}}]"),
            ));
        }
        sets.push((c.title.to_owned(), p));
    }
    let observer = Observer::new("f", &["wifi", "cell"]);
    let runs = run_traced(&t, sets, &observer)?;
    report.section(
        "Handoff and migration timelines (§2.2, §4.2)",
        &format!(
            "Path 1 (wifi): 4 Mb/s, 30 ms RTT; path 2 (cell): 4 Mb/s, 60 ms RTT (62 ms to \
             server1 through the core link). A {} MB object; the switch at {SWITCH_S} s. \
             Make-before-break: the new pipe is made at 9.5 s, the old one drains from 10 s. \
             Break-before-make: the old interface dies at 10 s and the new pipe is made {} ms \
             later. Migration: the same, the new pipe to server2. Gap = longest time without \
             in-order delivery in [9 s, 13 s]. Timelines: 100 ms bins.",
            SIZE / 1_000_000,
            GAP_S * 1000.0
        ),
    );
    let mut rows = Vec::new();
    let mut facts = Vec::new();
    for (c, (r, o)) in CASES.iter().zip(&runs) {
        let re = reassemble(&o.arrivals, 0, u64::MAX / 4);
        let gap = longest_gap(&re.in_order, SWITCH_S - 1.0, SWITCH_S + 3.0);
        let up = o
            .syn_acks
            .iter()
            .find(|(t, p)| *p == 1 && *t >= SWITCH_S - 1.0)
            .map_or(f64::NAN, |(t, _)| *t);
        let resumed = re
            .in_order
            .iter()
            .find(|(t, _)| *t >= up)
            .map_or(f64::NAN, |(t, _)| *t);
        let (already, twice) = requested_again(o);
        let f = flow(r, "f");
        let intact = f.is_some_and(|f| {
            f.integrity_errors == 0 && f.bytes_delivered == SIZE && f.completion_s.is_some()
        });
        rows.push(vec![
            c.title.to_owned(),
            if intact { "yes" } else { "no" }.to_owned(),
            f.and_then(|f| f.completion_s)
                .map_or("–".into(), |s| num(s, 2)),
            num(gap * 1000.0, 0),
            num(up, 3),
            num((resumed - up) * 1000.0, 1),
            re.duplicate_bytes.to_string(),
            already.to_string(),
            twice.to_string(),
        ]);
        facts.push((gap, up, resumed, intact, already, twice, re.duplicate_bytes));
        let until = 20.0;
        let shift = |v: Vec<f64>| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, x)| ((i as f64 + 1.0) * BIN_S, *x))
                .filter(|(t, _)| *t >= 5.0)
                .collect()
        };
        chart::lines(
            &ctx.out_dir.join(format!("{}.svg", c.key)),
            &Axes {
                title: c.title,
                x: "time (s)",
                y: "goodput (Mb/s, 100 ms bins)",
                log_x: false,
                y_from_zero: true,
            },
            &[
                Series::new(
                    "aggregate (in order)",
                    shift(in_order_rate(&re, 0, BIN_S, until)),
                ),
                Series::new(
                    "pipe on path 1 (wifi)",
                    shift(path_rate(&o.arrivals, Some(0), BIN_S, until)),
                ),
                Series::new(
                    "pipe on path 2 (cell)",
                    shift(path_rate(&o.arrivals, Some(1), BIN_S, until)),
                ),
            ],
        )?;
        report.image(c.title, &format!("{}.svg", c.key));
    }
    text_table(
        report,
        &[
            "case",
            "object intact",
            "completion (s)",
            "gap (ms)",
            "new pipe up (s)",
            "first in-order data after up (ms)",
            "duplicate bytes",
            "bytes requested after they arrived",
            "bytes requested more than once",
        ],
        &rows,
    );
    let (mbb, bbm, mig) = (facts[0], facts[1], facts[2]);
    report.claim(judge(
        "handoff-mbb-no-stall",
        "Make-before-break handoff: no stall (in-order delivery never pauses 100 ms or more \
         within 1 s before to 3 s after the switch) and the object arrives intact",
        json!({"longest_gap_ms": mbb.0 * 1000.0, "intact": mbb.3}),
        json!(
            "the mobile host can use both pipes without experiencing any connection stall (§2.2.1)"
        ),
        &[("longest gap", &[mbb.0])],
        mbb.0.is_finite() && mbb.0 < 0.1 && mbb.3,
    ));
    let wait = bbm.2 - bbm.1;
    report.claim(judge(
        "handoff-bbm-resumes-within-rtt",
        "Break-before-make handoff: in-order delivery resumes within one RTT of the new pipe \
         (62 ms, plus 10 ms of serialisation) after its handshake completes, and the object \
         arrives intact",
        json!({"new_pipe_up_s": bbm.1, "resume_after_up_ms": wait * 1000.0, "intact": bbm.3}),
        json!("the outstanding requests of the old pipe are reassigned to the new pipe (§4.1.4, §4.2)"),
        &[("resume after the new pipe is up", &[wait])],
        (0.0..=NEW_RTT_S + 0.010).contains(&wait) && bbm.3,
    ));
    report.claim(judge(
        "migration-intact-no-rerequest",
        "Migration to a second server mid-transfer: the object arrives intact and nothing \
         that had already arrived is requested again (only the holes are)",
        json!({"intact": mig.3, "bytes_requested_after_arrival": mig.4,
               "bytes_requested_more_than_once": mig.5, "duplicate_bytes": mig.6,
               "new_pipe_up_s": mig.1, "resume_after_up_ms": (mig.2 - mig.1) * 1000.0}),
        json!("the receiver can simply request every hole in the receive buffer from the new sender (§2.2.2)"),
        &[("new pipe up", &[mig.1])],
        mig.3 && mig.4 == 0 && mig.6 == 0 && mig.1.is_finite(),
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::longest_gap;

    #[test]
    fn gaps_include_the_window_edges() {
        assert!((longest_gap(&[(1.0, 1), (1.5, 2)], 0.0, 2.0) - 1.0).abs() < 1e-12);
        assert!((longest_gap(&[], 0.0, 2.0) - 2.0).abs() < 1e-12);
    }
}
