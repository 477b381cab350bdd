//! Part 4: the loss-cause classifiers of `roam_proto::loss_cause` (Biaz, Spike, ZigZag) against
//! the simulator's oracle. A NewReno download crosses a 2 Mb/s wireless last hop
//! (`experiments/controllers/classify.toml`); the packet trace gives every data segment's
//! send time, its arrival at the receiver and, for a lost one, where it was lost (corrupted or
//! lost on the wireless hop: wireless; dropped by a full queue: congestion). The receiver's
//! arrivals are fed to each classifier offline, exactly as a receiver would see them (arrival
//! time, one-way trip time, packets missing before), and each hole's verdict is compared with
//! the causes of its packets (a hole with any congestion drop counts as congestion).
//! Offline because no engine consults the classifiers yet.

use std::collections::HashMap;

use roam_proto::cc::LossCause;
use roam_proto::loss_cause::{Arrival, LossClassifier, Scheme};
use roam_proto::Time;
use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};

use super::template;
use crate::report::Cell;
use crate::{Ctx, LabError, Report};

/// The schemes compared.
const SCHEMES: [(Scheme, &str); 3] = [
    (Scheme::Biaz, "Biaz"),
    (Scheme::Spike, "Spike"),
    (Scheme::ZigZag, "ZigZag"),
];

/// The loss mixes: name and overrides.
fn cases() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let gilbert =
        "{ good = { mean = \"1s\", loss = 0.001 }, bad = { mean = \"100ms\", loss = 0.5 } }";
    vec![
        (
            "wireless, Bernoulli 1 %",
            vec![("link.wl.forward.loss", "0.01".to_owned())],
        ),
        (
            "wireless, Gilbert-Elliott",
            vec![("link.wl.forward.gilbert", gilbert.to_owned())],
        ),
        (
            "congestion only (drop-tail, 30 packets)",
            vec![
                ("link.wl.queue", "\"30p\"".to_owned()),
                ("flow.0.tcp.max_window_segments", "0".to_owned()),
            ],
        ),
        (
            "both: Bernoulli 1 % and drop-tail",
            vec![
                ("link.wl.forward.loss", "0.01".to_owned()),
                ("link.wl.queue", "\"30p\"".to_owned()),
                ("flow.0.tcp.max_window_segments", "0".to_owned()),
            ],
        ),
    ]
}

/// What happened to one data transmission.
#[derive(Debug, Clone, Copy)]
struct Transmission {
    sent: Time,
    cause: Option<LossCause>,
}

/// Collects the flow's data segments from the trace and classifies holes as arrivals come.
struct Observer {
    /// Latest transmission of each sequence number.
    segments: HashMap<u64, Transmission>,
    /// First-transmitted sequence numbers, in order, with their lengths.
    order: Vec<(u64, u64)>,
    next_expected: Option<u64>,
    classifiers: Vec<LossClassifier>,
    /// Per scheme: [true wireless judged wireless, wireless judged congestion, congestion
    /// judged wireless, congestion judged congestion, not judged].
    counts: Vec<[u64; 5]>,
}

/// `seq=` and `len=` of a data segment's summary (`seg [A] seq=… ack=… len=… …`).
fn seq_len(summary: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        summary
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(name))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let (seq, len) = (field("seq=")?, field("len=")?);
    (len > 0).then_some((seq, len))
}

impl Observer {
    fn new() -> Self {
        Observer {
            segments: HashMap::new(),
            order: Vec::new(),
            next_expected: None,
            classifiers: SCHEMES
                .iter()
                .map(|(s, _)| LossClassifier::new(*s))
                .collect(),
            counts: vec![[0; 5]; SCHEMES.len()],
        }
    }

    fn arrive(&mut self, now: Time, seq: u64, len: u64) {
        let Some(tx) = self.segments.get(&seq).copied() else {
            return;
        };
        let expected = *self.next_expected.get_or_insert(seq);
        // The first transmissions between the highest in-order point and this segment that
        // never arrived: the hole just before it.
        let mut missing = 0u32;
        let mut truth = LossCause::WirelessEln;
        if seq > expected {
            let from = self.order.partition_point(|(s, _)| *s < expected);
            for (s, _) in self.order[from..].iter().take_while(|(s, _)| *s < seq) {
                if let Some(c) = self.segments.get(s).and_then(|t| t.cause) {
                    missing += 1;
                    if c == LossCause::DupAcks {
                        truth = LossCause::DupAcks;
                    }
                }
            }
        }
        if seq >= expected {
            self.next_expected = Some(seq + len);
        }
        let arrival = Arrival {
            now,
            rott: now.saturating_since(tx.sent),
            missing,
        };
        for (k, c) in self.classifiers.iter_mut().enumerate() {
            let verdict = c.on_arrival(&arrival);
            if missing == 0 {
                continue;
            }
            let slot = match (truth, verdict) {
                (_, None) => 4,
                (LossCause::WirelessEln, Some(LossCause::WirelessEln)) => 0,
                (LossCause::WirelessEln, Some(LossCause::DupAcks)) => 1,
                (LossCause::DupAcks, Some(LossCause::WirelessEln)) => 2,
                (LossCause::DupAcks, Some(LossCause::DupAcks)) => 3,
            };
            self.counts[k][slot] += 1;
        }
    }
}

impl PacketObserver for Observer {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        let Some((seq, len)) = seq_len(r.summary) else {
            return;
        };
        match (r.link, r.fate) {
            ("wired:fwd", PacketFate::Sent) => {
                if !self.segments.contains_key(&seq) {
                    self.order.push((seq, len));
                }
                self.segments.insert(
                    seq,
                    Transmission {
                        sent: r.time,
                        cause: None,
                    },
                );
            }
            (_, PacketFate::QueueDrop) => {
                if let Some(t) = self.segments.get_mut(&seq) {
                    t.cause = Some(LossCause::DupAcks);
                }
            }
            ("wl:fwd", PacketFate::Lost | PacketFate::Corrupted) => {
                if let Some(t) = self.segments.get_mut(&seq) {
                    t.cause = Some(LossCause::WirelessEln);
                }
            }
            ("wl:fwd", PacketFate::Delivered) => self.arrive(r.time, seq, len),
            _ => {}
        }
    }

    fn wants(&self, flow: Option<&str>) -> bool {
        flow == Some("f")
    }
}

fn pct(part: u64, whole: u64) -> Cell {
    if whole == 0 {
        Cell::text("—")
    } else {
        Cell::num(100.0 * part as f64 / whole as f64, 1)
    }
}

/// Runs the four loss mixes and adds the misclassification table.
pub(super) fn run(ctx: &Ctx, report: &mut Report) -> Result<(), LabError> {
    let t = template(ctx, "classify.toml")?;
    let duration = ctx.pick("20s", "60s");
    let mut rows = Vec::new();
    for (name, mut params) in cases() {
        params.push(("run.duration", format!("\"{duration}\"")));
        let scenario = t.build(name, &params)?;
        let mut observer = Observer::new();
        roam_sim::run_traced(&scenario, &mut |_| {}, &mut observer);
        for (k, (_, scheme)) in SCHEMES.iter().enumerate() {
            let [ww, wc, cw, cc, unjudged] = observer.counts[k];
            rows.push(vec![
                Cell::text(name),
                Cell::text(*scheme),
                Cell::num((ww + wc) as f64, 0),
                Cell::num((cw + cc) as f64, 0),
                pct(wc, ww + wc),
                pct(cw, cw + cc),
                Cell::num(unjudged as f64, 0),
            ]);
        }
    }
    report.section(
        "Loss-cause classifiers against the oracle",
        &format!(
            "A NewReno download over the 2 Mb/s wireless hop (50 ms one-way), loss on data only, \
             {duration}, one seed. Wireless loss alone runs with a 40-segment window, which the \
             200-packet queue never overflows; the drop-tail cases let NewReno fill a \
             30-packet queue. Each hole the receiver sees (packets missing before an arrival) \
             is judged by each classifier (`roam_proto::loss_cause`) from what the receiver \
             knows and compared with the trace's causes. \"Not judged\": the classifier had no \
             history yet (the receiver would treat the loss as congestion). Offline: no engine \
             uses these verdicts yet, and there is no `facts = \"estimated\"` option."
        ),
    );
    report.table(
        &[
            "losses",
            "classifier",
            "wireless holes",
            "congestion holes",
            "wireless judged congestion (%)",
            "congestion judged wireless (%)",
            "not judged",
        ],
        &rows,
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_data_segment_summaries_only() {
        assert_eq!(
            seq_len("seg [A] seq=2066 ack=1019 len=1448 win=4194304"),
            Some((2066, 1448))
        );
        assert_eq!(seq_len("seg [A] seq=1019 ack=2066 len=0 win=4194304"), None);
        assert_eq!(seq_len("seg [S] seq=x len=3"), None);
    }
}
