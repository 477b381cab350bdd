//! Congestion controllers: one trait, used by sender-side engines (TCP, pTCP pipes) and by
//! receiver-side engines (RCP pipes) alike.
//!
//! Controllers are driven by *events*, not by parsing acknowledgements: "bytes delivered",
//! "loss detected (with its cause)", "retransmission timeout", "RTT sample". A sender raises
//! them from ACKs; an RCP receiver raises the same events from DATA arrivals. Every hook has a
//! no-op default so a controller implements only what it reacts to.

pub mod atl;
pub mod bbr;
pub mod cubic;
mod hystart;
mod hystart_classic;
mod new_reno;
#[cfg(test)]
mod props;
mod reno_window;
mod westwood;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

pub use atl::TcpAtl;
pub use bbr::Bbr;
pub use cubic::Cubic;
pub use new_reno::NewReno;
pub use westwood::Westwood;

use crate::linkinfo::LinkInfo;
use crate::Time;

/// Newly delivered data (cumulatively acknowledged or selectively acknowledged).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delivered {
    /// When the delivery was learned.
    pub now: Time,
    /// Bytes newly delivered in order by this event (cumulative acknowledgement / in-order
    /// arrival). Window growth counts these (RFC 5681).
    pub bytes: u64,
    /// Bytes newly delivered out of order (SACKed / arrived beyond a hole).
    pub sacked_bytes: u64,
    /// Bytes in flight after the event.
    pub in_flight: u64,
    /// True while the engine is in loss recovery (window growth is suspended).
    pub in_recovery: bool,
    /// RTT sample carried by the event, if any.
    pub rtt: Option<Duration>,
}

/// Why a loss was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossCause {
    /// Duplicate acknowledgements / SACK scoreboard (RFC 5681, RFC 6675): fast retransmit.
    DupAcks,
    /// The receiver marked the hole as lost on its wireless hop (ELN): not congestion.
    WirelessEln,
}

/// A congestion signal: at most one per window of data (the engine filters repeats inside
/// one recovery episode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossEvent {
    /// When the loss was detected.
    pub now: Time,
    /// Why.
    pub cause: LossCause,
    /// FlightSize when the loss was detected (RFC 5681 eq. 4).
    pub in_flight: u64,
}

/// The coupled increase of RFC 6356 (LIA) for one pipe of a multipath connection: in
/// congestion avoidance the window grows by `min(alpha · acked · MSS / total_window,
/// acked · MSS / cwnd)` instead of `acked · MSS / cwnd` (§3), so the connection as a whole
/// takes about what one flow would at a bottleneck its pipes share (its second goal), while
/// the pipes with the best paths take most (its third).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coupling {
    /// RFC 6356 §3's `alpha`: `total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²`.
    pub alpha: f64,
    /// The sum of the connection's pipe windows (bytes).
    pub total_window: u64,
}

impl Coupling {
    /// RFC 6356 §3's `alpha` and total over pipes given as (window bytes, smoothed RTT);
    /// `None` without a pipe of positive window and RTT.
    pub fn lia(pipes: impl IntoIterator<Item = (u64, Duration)>) -> Option<Coupling> {
        let (mut total, mut best, mut sum) = (0u64, 0.0f64, 0.0f64);
        for (cwnd, rtt) in pipes {
            let rtt = rtt.as_secs_f64();
            if cwnd == 0 || rtt <= 0.0 {
                continue;
            }
            total = total.saturating_add(cwnd);
            let w = cwnd as f64;
            best = best.max(w / (rtt * rtt));
            sum += w / rtt;
        }
        (total > 0 && sum > 0.0).then(|| Coupling {
            alpha: total as f64 * best / (sum * sum),
            total_window: total,
        })
    }

    /// Bytes to acknowledge, in congestion avoidance, for one MSS of growth of a pipe whose
    /// window is `cwnd`: `max(cwnd, total / alpha)` (the smaller of the two increases).
    pub fn bytes_per_segment(&self, cwnd: u64) -> u64 {
        let coupled = if self.alpha > 0.0 && self.alpha.is_finite() {
            (self.total_window as f64 / self.alpha).min(u64::MAX as f64) as u64
        } else {
            u64::MAX
        };
        cwnd.max(coupled).max(1)
    }
}

/// A pluggable congestion controller (one instance per pipe).
pub trait CongestionController: fmt::Debug + Send {
    /// Short name (`newreno`, …).
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` when not yet set).
    fn ssthresh(&self) -> u64;
    /// Data was delivered.
    fn on_delivered(&mut self, _ev: &Delivered) {}
    /// True if [`CongestionController::on_delivered`] changes nothing when it reports no
    /// bytes (neither acknowledged nor SACKed) outside recovery and without an RTT sample:
    /// a sender may then skip the call for an acknowledgement that moves nothing (the
    /// receiving end of a one-way transfer gets one with every data segment). Controllers
    /// that keep time or rates (Westwood+, TCP-ATL) keep the default.
    fn ignores_empty_deliveries(&self) -> bool {
        false
    }
    /// A loss was detected (entering recovery).
    fn on_loss(&mut self, _ev: &LossEvent) {}
    /// The retransmission timer expired with `in_flight` bytes outstanding.
    fn on_timeout(&mut self, _now: Time, _in_flight: u64) {}
    /// A loss-recovery episode ended (everything outstanding at its start was delivered).
    fn on_recovery_end(&mut self, _now: Time) {}
    /// An RTT sample was taken; `min_rtt` is the smallest seen on this pipe.
    fn on_rtt_sample(&mut self, _now: Time, _rtt: Duration, _min_rtt: Duration) {}
    /// The host updated what it knows about the local link this pipe uses.
    fn on_local_link(&mut self, _now: Time, _info: &LinkInfo) {}
    /// The peer reported its link (link-info / last-link options inside ACKs or requests).
    fn on_peer_link(&mut self, _now: Time, _info: &LinkInfo) {}
    /// A mechanism outside the controller sets the window (and, if given, ssthresh) directly:
    /// TCP-Probing's Gentle Recovery (tcp-probing.txt §3.2: window changed, ssthresh kept) and
    /// the last-link Initial Cwnd & SSThresh Tuning (last-link-heuristics.txt §3.2).
    /// Controllers that cannot honour it keep their state (the default).
    fn set_window(&mut self, _cwnd: u64, _ssthresh: Option<u64>) {}
    /// Couples the window increase with the other pipes of a multipath connection (RFC 6356
    /// LIA), or uncouples it (`None`). Controllers without a coupled form ignore it (the
    /// default); NewReno implements it.
    fn set_coupling(&mut self, _coupling: Option<Coupling>) {}
    /// The rate (bytes per second) at which a sender should space its segments, for
    /// rate-based controllers (BBR); `None` (the default) for ACK-clocked ones, which a sender
    /// does not pace.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
}

/// Which controller a pipe runs. The factory for per-pipe controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CcKind {
    /// TCP NewReno (RFC 5681 + RFC 6582 window rules).
    #[default]
    NewReno,
    /// TCP Westwood+ (bandwidth estimate from the ACK rate; ssthresh = BWE × RTTmin on loss).
    Westwood,
    /// TCP-ATL (atl.txt §III-B/§IV-A): AIMD(α, β) adapted to the wireless hop's p_w and d_w.
    Atl,
    /// CUBIC (RFC 9438) with HyStart++ (RFC 9406).
    Cubic,
    /// CUBIC (RFC 9438) leaving slow start by the original HyStart, as Linux's CUBIC does by
    /// default (`cc/hystart_classic.rs`).
    CubicHyStart,
    /// BBR version 1 (Cardwell et al. 2016), paced.
    Bbr,
    /// BBR version 1 with the ACK-aggregation allowance (`extra_acked`) Linux's BBR added in
    /// 2019 (`cc/bbr/aggregation.rs`).
    BbrAggr,
}

impl CcKind {
    /// Every selectable controller, by name.
    pub const ALL: &'static [CcKind] = &[
        CcKind::NewReno,
        CcKind::Westwood,
        CcKind::Atl,
        CcKind::Cubic,
        CcKind::CubicHyStart,
        CcKind::Bbr,
        CcKind::BbrAggr,
    ];

    /// The name used in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CcKind::NewReno => "newreno",
            CcKind::Westwood => "westwood",
            CcKind::Atl => "atl",
            CcKind::Cubic => "cubic",
            CcKind::CubicHyStart => "cubic-hystart",
            CcKind::Bbr => "bbr",
            CcKind::BbrAggr => "bbr-aggr",
        }
    }

    /// Builds a fresh controller for one pipe.
    pub fn build(self, mss: u64, initial_window_segments: u32) -> Box<dyn CongestionController> {
        match self {
            CcKind::NewReno => Box::new(NewReno::new(mss, initial_window_segments)),
            CcKind::Westwood => Box::new(Westwood::new(mss, initial_window_segments)),
            CcKind::Atl => Box::new(TcpAtl::new(mss, initial_window_segments)),
            CcKind::Cubic => Box::new(Cubic::new(mss, initial_window_segments)),
            CcKind::CubicHyStart => Box::new(Cubic::with_exit(
                mss,
                initial_window_segments,
                cubic::SlowStartExit::HyStart,
            )),
            CcKind::Bbr => Box::new(Bbr::new(mss, initial_window_segments)),
            CcKind::BbrAggr => Box::new(Bbr::with_ack_aggregation(mss, initial_window_segments)),
        }
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown congestion-controller name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown congestion control {name:?} (known: {known})")]
pub struct UnknownCc {
    /// What was asked for.
    pub name: String,
    /// The known names, comma-separated.
    pub known: String,
}

impl FromStr for CcKind {
    type Err = UnknownCc;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        CcKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == wanted || (wanted == "reno" && *k == CcKind::NewReno))
            .ok_or_else(|| UnknownCc {
                name: s.to_string(),
                known: CcKind::ALL
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}
