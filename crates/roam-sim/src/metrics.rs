//! Per-bin time series and the end-of-run [`RunResult`].

use roam_proto::Time;

use crate::agent::{AgentSample, FlowCounters};
use crate::link::LinkDir;
use crate::result::{FlowResult, FlowSeries, LinkResult, RunResult};
use crate::scenario::Scenario;

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

    /// Closes the bin ending at `now`; `sample(i)` gives flow `i`'s sender sample.
    pub(crate) fn sample(
        &mut self,
        now: Time,
        counters: &[FlowCounters],
        mut sample: impl FnMut(usize) -> AgentSample,
    ) {
        let width = (now - self.last_time).as_secs_f64();
        self.last_time = now;
        for (i, s) in self.series.iter_mut().enumerate() {
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

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for no flows or all zeros.
pub(crate) fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

/// What the event loop hands over at the end.
pub(crate) struct RunTotals<'a> {
    pub end: Time,
    pub events: u64,
    pub counters: &'a [FlowCounters],
    pub dirs: &'a [LinkDir],
    pub series: Vec<FlowSeries>,
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
    RunResult {
        scenario: s.name.clone(),
        seed: s.run.seed,
        sim_seconds: end.as_secs_f64(),
        events: t.events,
        link_packets: links.iter().map(|l| l.packets_sent).sum(),
        jain_index: jain(&goodputs),
        flows,
        links,
        series: t.series,
    }
}

#[cfg(test)]
mod tests {
    use super::jain;

    #[test]
    fn jain_is_one_for_equal_shares_and_1_over_n_for_one_hog() {
        assert_eq!(jain(&[]), 1.0);
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
