//! Terminal tables (comfy-table).

use comfy_table::{presets, CellAlignment, Table};
use roam_sim::result::{FlowResult, RunResult};

use super::fmt_num;

/// A table with `header` and the given rows; the first `left` columns are left-aligned (labels),
/// the others right-aligned (numbers).
pub fn simple(header: &[String], rows: &[Vec<String>], left: usize) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_header(header);
    for r in rows {
        t.add_row(r);
    }
    for i in left.max(1)..header.len() {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The per-flow summary of one run: id, protocol, cc, goodput, delivered, completion,
/// retransmissions, overhead.
pub fn flows(result: &RunResult) -> Table {
    let header: Vec<String> = [
        "flow",
        "protocol",
        "cc",
        "goodput (Mb/s)",
        "delivered (MB)",
        "completion (s)",
        "retransmitted",
        "overhead (%)",
    ]
    .map(str::to_owned)
    .to_vec();
    let rows: Vec<Vec<String>> = result
        .flows
        .iter()
        .map(|f| {
            let id = if f.cross {
                format!("{} (cross)", f.id)
            } else {
                f.id.clone()
            };
            vec![
                id,
                f.protocol.clone(),
                if f.cc.is_empty() {
                    "-".to_owned()
                } else {
                    f.cc.clone()
                },
                fmt_num(f.goodput_bps / 1e6, 3),
                fmt_num(f.bytes_delivered as f64 / 1e6, 3),
                completion_cell(f),
                f.retransmitted_segments.to_string(),
                fmt_num(f.overhead_pct, 2),
            ]
        })
        .collect();
    let mut rows = rows;
    let a = &result.aggregate;
    if a.flows > 0 {
        rows.push(vec![
            "aggregate".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
            fmt_num(a.goodput_bps / 1e6, 3),
            fmt_num(a.bytes_delivered as f64 / 1e6, 3),
            "-".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
        ]);
    }
    simple(&header, &rows, 3)
}

/// What the aggregate row means: which flows, over which interval.
pub fn aggregate_note(result: &RunResult) -> String {
    let a = &result.aggregate;
    if a.flows == 0 {
        return "aggregate: no flow other than cross traffic".to_owned();
    }
    format!(
        "aggregate = bytes of the {} flow{} (cross traffic left out) / one interval, {} s to {} s \
         (first start to last end); per-flow goodputs are each over the flow's own interval and \
         do not add up to it",
        a.flows,
        if a.flows == 1 { "" } else { "s" },
        fmt_num(a.from_s, 3),
        fmt_num(a.to_s, 3),
    )
}

/// The completion time, why the flow failed and when, or `-` if it is still running.
fn completion_cell(f: &FlowResult) -> String {
    match (f.completion_s, f.failure, f.failed_s) {
        (Some(c), _, _) => fmt_num(c, 3),
        (None, Some(why), Some(at)) => format!("{} at {}", why.describe(), fmt_num(at, 3)),
        _ => "-".to_owned(),
    }
}

/// One line under the flow table: Jain's index, simulated seconds and events.
pub fn run_footer(result: &RunResult) -> String {
    format!(
        "{}: seed {}, Jain's index {}, {} simulated s, {} events",
        result.scenario,
        result.seed,
        fmt_num(result.jain_index, 4),
        fmt_num(result.sim_seconds, 3),
        result.events
    )
}

#[cfg(test)]
mod tests {
    use roam_sim::result::{Aggregate, FlowFailure};

    use super::*;

    #[test]
    fn flow_table_shows_units_and_missing_completion() {
        let r = RunResult {
            scenario: "s".to_owned(),
            seed: 1,
            sim_seconds: 10.0,
            events: 123,
            link_packets: 50,
            jain_index: 1.0,
            aggregate: Aggregate {
                flows: 1,
                bytes_delivered: 355_000_000,
                from_s: 0.0,
                to_s: 299.6,
                goodput_bps: 9_479_000.0,
            },
            flows: vec![FlowResult {
                id: "a".to_owned(),
                protocol: "tcp".to_owned(),
                cc: "newreno".to_owned(),
                cross: false,
                start_s: 0.0,
                goodput_bps: 9_479_000.0,
                bytes_delivered: 355_000_000,
                completion_s: None,
                failure: None,
                failed_s: None,
                retransmitted_segments: 7,
                timeouts: 0,
                recoveries: 0,
                wireless_excused: 0,
                integrity_errors: 0,
                datagrams_sent: 1,
                transport_bytes_sent: 1,
                overhead_pct: 3.5,
                energy_j: None,
                sleep_s: None,
                media: None,
                multipath: None,
            }],
            links: vec![],
            warnings: vec![],
            series: vec![],
        };
        let s = flows(&r).to_string();
        assert!(s.contains("goodput (Mb/s)"));
        assert!(s.contains("9.479"));
        assert!(s.contains("355.000"));
        assert!(s.contains(" - "));
        assert!(s.contains("aggregate"), "{s}");
        assert_eq!(
            aggregate_note(&r),
            "aggregate = bytes of the 1 flow (cross traffic left out) / one interval, 0.000 s to \
             299.600 s (first start to last end); per-flow goodputs are each over the flow's own \
             interval and do not add up to it"
        );
        assert_eq!(
            run_footer(&r),
            "s: seed 1, Jain's index 1.0000, 10.000 simulated s, 123 events"
        );
    }

    #[test]
    fn completion_cell_says_why_a_flow_failed_and_when() {
        let mut f = FlowResult {
            id: "a".to_owned(),
            protocol: "tcp".to_owned(),
            cc: "newreno".to_owned(),
            cross: false,
            start_s: 0.0,
            goodput_bps: 0.0,
            bytes_delivered: 0,
            completion_s: None,
            failure: Some(FlowFailure::HandshakeTimedOut),
            failed_s: Some(127.0),
            retransmitted_segments: 0,
            timeouts: 0,
            recoveries: 0,
            wireless_excused: 0,
            integrity_errors: 0,
            datagrams_sent: 7,
            transport_bytes_sent: 315,
            overhead_pct: 0.0,
            energy_j: None,
            sleep_s: None,
            media: None,
            multipath: None,
        };
        assert_eq!(completion_cell(&f), "handshake timed out at 127.000");
        f.failure = None;
        f.failed_s = None;
        assert_eq!(completion_cell(&f), "-");
        f.completion_s = Some(2.5);
        assert_eq!(completion_cell(&f), "2.500");
    }
}
