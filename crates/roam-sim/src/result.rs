//! What one simulation run produces: serialisable, deterministic (no wall-clock values).

use serde::Serialize;

/// The outcome of one run. Serialised as the `roam sim --format json` object.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunResult {
    /// Scenario name (from the file's `name`, or its file stem).
    pub scenario: String,
    /// Seed of the run's RNG.
    pub seed: u64,
    /// Simulated seconds run.
    pub sim_seconds: f64,
    /// Discrete events processed.
    pub events: u64,
    /// Packets put on links (each hop counts once) — the "simulated packets" of `roam bench`.
    pub link_packets: u64,
    /// Jain's fairness index over the goodputs of the non-cross-traffic flows
    /// ((Σx)² / (n·Σx²); 1 for one flow that delivered something). Not a number (`null` in
    /// JSON) when there is no such flow or none of them delivered a byte: there is nothing to
    /// be fair about.
    pub jain_index: f64,
    /// The non-cross-traffic flows together: their bytes over one common interval.
    pub aggregate: Aggregate,
    /// Per-flow results, in scenario order.
    pub flows: Vec<FlowResult>,
    /// Per-link-direction counters, in scenario order.
    pub links: Vec<LinkResult>,
    /// What in the scenario or the run could not produce a result (a flow starting after the
    /// end, an event the run never reached because it stopped when every flow was done), in
    /// words; empty when nothing.
    pub warnings: Vec<String>,
    /// Per-bin time series (written as CSV, not part of the JSON object).
    #[serde(skip)]
    pub series: Vec<FlowSeries>,
}

/// The non-cross-traffic flows of a run taken together.
///
/// Per-flow goodputs are averages over different intervals (each flow's own start to its own
/// end), so their sum can exceed the capacity the flows shared: a flow that finished early is
/// counted at its rate while it ran. The aggregate instead divides all their bytes by one
/// interval, from the first of them to start to the last of them to end.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Aggregate {
    /// Non-cross-traffic flows counted.
    pub flows: usize,
    /// Application bytes they delivered in order, in total.
    pub bytes_delivered: u64,
    /// Start of the interval (s): the earliest start among them.
    pub from_s: f64,
    /// End of the interval (s): the latest end among them, where a flow ends when it
    /// completes or fails, or with the run if it is still running.
    pub to_s: f64,
    /// `bytes_delivered · 8 / (to_s − from_s)` in bits/s; not a number (`null` in JSON) when
    /// there is no such flow or the interval is empty (every flow starts after the run).
    pub goodput_bps: f64,
}

/// Results of one flow.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowResult {
    /// Flow id from the scenario.
    pub id: String,
    /// Protocol name (e.g. `tcp`, `cbr`, `pareto`).
    pub protocol: String,
    /// Congestion controller name, or empty for uncontrolled traffic.
    pub cc: String,
    /// True for cross traffic (excluded from Jain's index).
    pub cross: bool,
    /// Start time (s).
    pub start_s: f64,
    /// Application bytes delivered in order to the receiving application, divided by the time
    /// from the flow's start to its completion (or to the end of the run), in bits/s.
    pub goodput_bps: f64,
    /// Application bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Seconds from the flow's start until the receiver had all bytes of a sized flow and the
    /// connection was closed; `null` for unsized flows or unfinished ones.
    pub completion_s: Option<f64>,
    /// Why the connection ended without completing, if it did (`null` otherwise: completed,
    /// still running at the end of the run, or a flow without a connection).
    pub failure: Option<FlowFailure>,
    /// Seconds from the flow's start until that failure.
    pub failed_s: Option<f64>,
    /// Data segments sent more than once.
    pub retransmitted_segments: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Loss-recovery episodes entered on a detected loss (TCP: by duplicate ACKs, SACK or an
    /// ELN mark, whether the window was cut or not; RCP: congestion holes that cut the window).
    /// Timeouts are counted in `timeouts`.
    pub recoveries: u64,
    /// Losses answered without a window cut because they were judged wireless (TCP: recovery
    /// episodes and timeouts excused by an ELN mark or the last-link PER heuristic — an excused
    /// episode may still take its cut later, at a partial ACK, when PLR has passed PER; RCP:
    /// holes excused by ELN).
    pub wireless_excused: u64,
    /// Delivered bytes that differed from what the sender wrote (always 0 unless a bug).
    pub integrity_errors: u64,
    /// Datagrams sent by both ends' transport layers.
    pub datagrams_sent: u64,
    /// Bytes sent by both ends' transport layers (whole datagrams, without IP/UDP headers).
    pub transport_bytes_sent: u64,
    /// tcp-probing.txt §4.3: `100 · (Total − Original) / Original` where Total is every byte
    /// both transport layers transmitted and Original the bytes delivered to the application.
    /// Zero when nothing was delivered.
    pub overhead_pct: f64,
    /// Energy (J) used by the receiver's interface, when metered (`energy` /
    /// `[flow.rcp] sleep`; see `crate::energy`).
    pub energy_j: Option<f64>,
    /// Seconds the metered interface slept.
    pub sleep_s: Option<f64>,
    /// Media flows only: per-packet delay and jitter measured at the receiver. Not serialised
    /// (the CLI's flat CSV rows need one shape for every flow); read it from the struct.
    #[serde(skip)]
    pub media: Option<MediaResult>,
    /// R²CP flows only: what the multipath receiver spent beyond one request per byte. Not
    /// serialised (one CSV shape for every flow); read it from the struct.
    #[serde(skip)]
    pub multipath: Option<MultipathResult>,
}

/// The overhead of an R²CP receiver's scheduling (docs/R2CP.md, "Head-of-line awareness").
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Default)]
pub struct MultipathResult {
    /// Bytes requested a second time while their first request was still outstanding
    /// (blocking holes rescued through a faster pipe, units of a silent pipe).
    pub bytes_redundant: u64,
    /// Bytes requested again after their request was lost or their pipe gone.
    pub bytes_rebound: u64,
    /// Holes moved from the pipe that lost them to another pipe.
    pub reassigned: u64,
    /// Times a pipe was taken for dead after a silence.
    pub silences: u64,
}

/// Why a flow's connection ended before it completed.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowFailure {
    /// The handshake got no answer within its retries (the engines' `max_syn_retries`).
    HandshakeTimedOut,
    /// An established connection reached its retransmission limit (`max_retries`).
    GaveUp,
    /// The peer reset the connection.
    Reset,
}

impl FlowFailure {
    /// A short human-readable description.
    pub fn describe(self) -> &'static str {
        match self {
            FlowFailure::HandshakeTimedOut => "handshake timed out",
            FlowFailure::GaveUp => "gave up",
            FlowFailure::Reset => "reset",
        }
    }
}

/// Delay and jitter of a media flow's packets, measured at the receiver (atl.txt §V-B3).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct MediaResult {
    /// Media packets sent by the source.
    pub packets_sent: u64,
    /// Media packets received.
    pub packets_received: u64,
    /// Mean one-way delay (s).
    pub mean_delay_s: f64,
    /// Mean per-packet jitter |d_i − d_{i−1}| over consecutive received packets (s).
    pub mean_jitter_s: f64,
    /// Largest per-packet jitter (s).
    pub max_jitter_s: f64,
    /// RFC 3550 interarrival jitter estimate at the end of the run (s).
    pub rfc3550_jitter_s: f64,
}

/// Counters of one link direction.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkResult {
    /// Link name from the scenario, with `:fwd` or `:rev`.
    pub id: String,
    /// Packets that finished transmission onto the link.
    pub packets_sent: u64,
    /// Bytes (on-wire size) that finished transmission.
    pub bytes_sent: u64,
    /// Packets dropped at the queue tail.
    pub queue_drops: u64,
    /// Packets dropped by impairments (random loss, Gilbert–Elliott, blackout).
    pub impairment_drops: u64,
    /// Bytes sent / (rate · duration); for trace-driven links relative to the trace's capacity.
    pub utilization: f64,
}

/// Per-bin time series of one flow.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlowSeries {
    /// Flow id.
    pub id: String,
    /// End of each bin (s).
    pub time_s: Vec<f64>,
    /// Goodput in the bin (bits/s).
    pub throughput_bps: Vec<f64>,
    /// Sender's congestion window at the end of the bin (bytes), if the protocol has one.
    pub cwnd_bytes: Vec<Option<u64>>,
    /// Highest cumulatively acknowledged sequence number at the end of the bin (bytes).
    pub seq: Vec<Option<u64>>,
}
