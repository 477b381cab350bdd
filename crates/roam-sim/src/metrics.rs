//! Per-bin time series and the end-of-run [`RunResult`].

use roam_proto::Time;

use crate::agent::{AgentSample, FlowCounters};
use crate::link::LinkDir;
use crate::result::{Aggregate, FlowResult, FlowSeries, LinkResult, RunResult};
use crate::scenario::{secs, Scenario};

/// Collects each flow's per-bin goodput and its sender's samples.
#[derive(Debug)]
pub(crate) struct Sampler {
    series: Vec<FlowSeries>,
    last_delivered: Vec<u64>,
    last_time: Time,
}

impl Sampler {
    pub(crate) fn new(s: &Scenario) -> Sampler {
        Sampler {
            series: s
                .flows
                .iter()
                .map(|f| FlowSeries {
                    id: f.id.clone(),
                    ..FlowSeries::default()
                })
                .collect(),
            last_delivered: vec![0; s.flows.len()],
            last_time: Time::ZERO,
        }
    }

    /// Closes the bin ending at `now`; `sample(i)` gives flow `i`'s sender sample. A flow that
    /// completed or failed before the bin began has no row in it: its series ends with the bin
    /// in which it ended, instead of repeating its last window to the end of the run.
    pub(crate) fn sample(
        &mut self,
        now: Time,
        counters: &[FlowCounters],
        mut sample: impl FnMut(usize) -> AgentSample,
    ) {
        let width = (now - self.last_time).as_secs_f64();
        let bin_start = self.last_time;
        self.last_time = now;
        for (i, s) in self.series.iter_mut().enumerate() {
            let ended = counters[i]
                .completed_at
                .or(counters[i].failure.map(|(t, _)| t));
            if ended.is_some_and(|t| t <= bin_start) {
                continue;
            }
            let delivered = counters[i].bytes_delivered;
            let bits = (delivered - self.last_delivered[i].min(delivered)) as f64 * 8.0;
            self.last_delivered[i] = delivered;
            let a = sample(i);
            s.time_s.push(now.as_secs_f64());
            s.throughput_bps
                .push(if width > 0.0 { bits / width } else { 0.0 });
            s.cwnd_bytes.push(a.cwnd_bytes);
            s.seq.push(a.seq);
        }
    }

    pub(crate) fn into_series(self) -> Vec<FlowSeries> {
        self.series
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²); not a number for no flows or all zeros (nothing was
/// shared, so nothing was shared fairly or unfairly).
pub(crate) fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

/// The aggregate of the non-cross-traffic flows: all their bytes over one interval, from the
/// first of them to start to the last of them to end (completion, failure or the run's end).
pub(crate) fn aggregate(s: &Scenario, counters: &[FlowCounters], end: Time) -> Aggregate {
    let mut flows = 0;
    let mut bytes: u64 = 0;
    let mut from: Option<Time> = None;
    let mut to: Option<Time> = None;
    for (f, c) in s.flows.iter().zip(counters).filter(|(f, _)| !f.cross) {
        let start = Time::ZERO + f.start;
        let until = c
            .completed_at
            .or(c.failure.map(|(t, _)| t))
            .unwrap_or(end)
            .min(end);
        flows += 1;
        bytes = bytes.saturating_add(c.bytes_delivered);
        from = Some(from.map_or(start, |x| x.min(start)));
        to = Some(to.map_or(until, |x| x.max(until)));
    }
    let (from, to) = (from.unwrap_or(Time::ZERO), to.unwrap_or(Time::ZERO));
    let secs = if to > from {
        (to - from).as_secs_f64()
    } else {
        0.0
    };
    Aggregate {
        flows,
        bytes_delivered: bytes,
        from_s: from.as_secs_f64(),
        to_s: to.as_secs_f64(),
        goodput_bps: if flows > 0 && secs > 0.0 {
            bytes as f64 * 8.0 / secs
        } else {
            f64::NAN
        },
    }
}

/// What the event loop hands over at the end.
pub(crate) struct RunTotals<'a> {
    pub end: Time,
    pub events: u64,
    pub counters: &'a [FlowCounters],
    pub dirs: &'a [LinkDir],
    pub series: Vec<FlowSeries>,
    /// The run ended early (every flow done) at `end`, before the scenario's duration.
    pub stopped_early: bool,
}

/// Builds the run's result.
pub(crate) fn build_result(s: &Scenario, t: RunTotals<'_>) -> RunResult {
    let end = t.end;
    let flows: Vec<FlowResult> = s
        .flows
        .iter()
        .zip(t.counters)
        .map(|(f, c)| {
            let start = Time::ZERO + f.start;
            let until = c.completed_at.unwrap_or(end);
            let secs = (until - start).as_secs_f64();
            let goodput_bps = if secs > 0.0 {
                c.bytes_delivered as f64 * 8.0 / secs
            } else {
                0.0
            };
            let overhead_pct = if c.bytes_delivered > 0 {
                100.0 * (c.transport_bytes_sent as f64 - c.bytes_delivered as f64)
                    / c.bytes_delivered as f64
            } else {
                0.0
            };
            FlowResult {
                id: f.id.clone(),
                protocol: f.kind.protocol().to_string(),
                cc: f.kind.cc().to_string(),
                cross: f.cross,
                start_s: f.start.as_secs_f64(),
                goodput_bps,
                bytes_delivered: c.bytes_delivered,
                completion_s: c.completed_at.map(|t| (t - start).as_secs_f64()),
                failure: c.failure.map(|(_, why)| why),
                failed_s: c.failure.map(|(t, _)| (t - start).as_secs_f64()),
                retransmitted_segments: c.retransmitted_segments,
                integrity_errors: c.integrity_errors,
                timeouts: c.timeouts,
                recoveries: c.recoveries,
                wireless_excused: c.wireless_excused,
                datagrams_sent: c.datagrams_sent,
                transport_bytes_sent: c.transport_bytes_sent,
                overhead_pct,
                energy_j: c.radio.as_ref().map(|m| m.report(end).joules),
                sleep_s: c.radio.as_ref().map(|m| m.report(end).sleep_s),
                media: c.media,
                multipath: c.multipath,
            }
        })
        .collect();
    let goodputs: Vec<f64> = flows
        .iter()
        .filter(|f| !f.cross)
        .map(|f| f.goodput_bps)
        .collect();
    let links: Vec<LinkResult> = t
        .dirs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let name = &s.links[i / 2].name;
            let cap = d.chan.capacity_bits(end);
            LinkResult {
                id: format!("{name}:{}", if i % 2 == 0 { "fwd" } else { "rev" }),
                packets_sent: d.stats.packets_sent,
                bytes_sent: d.stats.bytes_sent,
                queue_drops: d.stats.queue_drops,
                impairment_drops: d.stats.impairment_drops,
                utilization: if cap > 0.0 {
                    d.stats.bytes_sent as f64 * 8.0 / cap
                } else {
                    0.0
                },
            }
        })
        .collect();
    let mut warnings = s.warnings();
    if t.stopped_early {
        warnings.extend(
            s.events
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    let at = Time::ZERO + e.at;
                    at > end && e.at < s.run.duration
                })
                .map(|(i, e)| {
                    format!(
                "event[{i}] at {} never happened: the run stopped at {} when every flow was done \
                 (set run.stop_when_done = false to run to run.duration)",
                secs(e.at),
                secs(std::time::Duration::from_nanos(end.as_nanos())),
            )
                }),
        );
    }
    RunResult {
        scenario: s.name.clone(),
        seed: s.run.seed,
        sim_seconds: end.as_secs_f64(),
        events: t.events,
        link_packets: links.iter().map(|l| l.packets_sent).sum(),
        jain_index: jain(&goodputs),
        aggregate: aggregate(s, t.counters, end),
        flows,
        links,
        warnings,
        series: t.series,
    }
}

#[cfg(test)]
mod tests {
    use super::jain;
    use crate::Scenario;

    /// A TCP and an RCP download share an 11 Mb/s hop and end at different times.
    const TWO_DOWNLOADS: &str = r#"
[run]
duration = "60s"
[[node]]
name = "server"
[[node]]
name = "ap"
kind = "router"
[[node]]
name = "phone"
[[link]]
name = "wired"
a = "server"
b = "ap"
rate = "100Mbps"
delay = "10ms"
[[link]]
name = "wlan"
a = "ap"
b = "phone"
rate = "11Mbps"
delay = "2ms"
[[flow]]
id = "tcp"
protocol = "tcp"
from = "server"
to = "phone"
size = "20MB"
[[flow]]
id = "rcp"
protocol = "rcp"
from = "server"
to = "phone"
size = "8MB"
"#;

    #[test]
    fn the_aggregate_is_all_bytes_over_one_interval_and_fits_the_link() {
        let r = crate::run(&Scenario::from_toml_str(TWO_DOWNLOADS, "t").unwrap());
        let (tcp, rcp) = (&r.flows[0], &r.flows[1]);
        let (t_end, r_end) = (tcp.completion_s.unwrap(), rcp.completion_s.unwrap());
        assert!(
            r_end < 0.8 * t_end,
            "the RCP flow ends well before the TCP flow"
        );
        // Per-flow averages over different intervals add up to more than the link carries.
        assert!(tcp.goodput_bps + rcp.goodput_bps > 11e6);
        let a = r.aggregate;
        assert_eq!((a.flows, a.bytes_delivered), (2, 28_000_000));
        assert_eq!((a.from_s, a.to_s), (0.0, t_end));
        assert!((a.goodput_bps - 28e6 * 8.0 / t_end).abs() < 1e-6);
        assert!(a.goodput_bps < 11e6, "{}", a.goodput_bps);
    }

    #[test]
    fn a_series_ends_with_the_bin_in_which_its_flow_ended() {
        let r = crate::run(&Scenario::from_toml_str(TWO_DOWNLOADS, "t").unwrap());
        let (tcp, rcp) = (&r.series[0], &r.series[1]);
        let done = r.flows[1].completion_s.unwrap();
        let last = *rcp.time_s.last().unwrap();
        assert!(
            last >= done && last < done + 1.0,
            "RCP done at {done} s, its series runs to {last} s"
        );
        assert_eq!(rcp.time_s.len(), rcp.cwnd_bytes.len());
        assert_eq!(rcp.time_s.len(), rcp.throughput_bps.len());
        // The TCP flow runs on, to its own end (the run stops then).
        assert!(tcp.time_s.len() > rcp.time_s.len());
        assert_eq!(*tcp.time_s.last().unwrap(), r.sim_seconds);
    }

    #[test]
    fn no_flow_has_no_aggregate() {
        let text = TWO_DOWNLOADS.replace("[[flow]]", "[[flowx]]");
        let text = text.split("[[flowx]]").next().unwrap();
        let r = crate::run(&Scenario::from_toml_str(text, "t").unwrap());
        assert_eq!(r.aggregate.flows, 0);
        assert!(r.aggregate.goodput_bps.is_nan());
        assert!(r.jain_index.is_nan());
    }

    #[test]
    fn an_event_the_run_stopped_before_is_reported() {
        // A 50 kB download over 10 Mb/s is done in well under a second; the handoff at 5 s
        // never comes because the run stops when every flow is done.
        let text = r#"
[run]
duration = "20s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "l"
a = "a"
b = "b"
rate = "10Mbps"
delay = "5ms"
[[flow]]
id = "f"
protocol = "tcp"
from = "a"
to = "b"
size = "50kB"
[[event]]
at = "5s"
link = "l"
set = { rate = "1Mbps" }
"#;
        let s = Scenario::from_toml_str(text, "t").unwrap();
        assert!(s.warnings().is_empty(), "nothing is wrong before the run");
        let r = crate::run(&s);
        assert!(r.sim_seconds < 5.0);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(
            r.warnings[0].starts_with("event[0] at 5 s never happened: the run stopped at"),
            "{}",
            r.warnings[0]
        );
        let mut doc = crate::scenario::parse_document(text).unwrap();
        crate::set_param(&mut doc, "run.stop_when_done", "false").unwrap();
        let r = crate::run(&Scenario::from_value(doc, "t").unwrap());
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn jain_is_one_for_equal_shares_1_over_n_for_one_hog_and_undefined_for_nothing() {
        assert!(jain(&[]).is_nan(), "no flow: nothing to be fair about");
        assert!(
            jain(&[0.0, 0.0]).is_nan(),
            "nothing delivered: nothing shared"
        );
        assert_eq!(jain(&[3.0]), 1.0);
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
