//! RCP-Rate: a rate-based congestion controller that runs only at RCP receivers and R²CP
//! pipes (issue 30, item 3; `cc = "rate"`).
//!
//! A receiver sees what a BBR sender has to infer from acknowledgements: the delivery rate
//! (the data arriving) and the round trip from a request to the data it asked for (the
//! timestamp echo). RCP-Rate keeps BBR v1's path model and state machine ([`crate::cc::Bbr`]:
//! Cardwell et al., ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00
//! §4.1–4.3) on those receiver-side measurements, and the receiver pipe paces its *requests*
//! at `pacing_gain · BtlBw` (`ReceiverPipe`: one unit per departure, the next one due after
//! `len / rate`, the instant reported through the pipe's `poll_timeout`). Paced requests make
//! the unmodified RCP sender send at the same pace, so the bottleneck queue holds little.
//!
//! Two choices differ from the sender-side BBR, both ours:
//! * **Loss is not a congestion signal** (neither a hole nor an ELN-marked one): BBR v1's
//!   packet conservation (draft §4.2.3.5) costs a round of rate at every hole on a path with
//!   random loss, and the model already bounds the queue. A retransmission timeout still
//!   drops the window to one unit until a round has been delivered (draft §4.2.3.5).
//! * **Delivery counting.** The pipe reports each arriving unit's own length as delivered
//!   (not the advance of its cumulative point, which in R²CP spans other pipes' units), so the
//!   rate samples count every byte once.
//! * **One send quantum of quantization allowance, not three.** The draft's `BBRInflight`
//!   (§4.2.3.2) adds three send quanta to every bound (the window, Drain's exit, the gain
//!   cycle's 5/4 and 3/4 bounds) for batching at the end hosts: Linux's
//!   `bbr_quantization_budget` names one quantum in the sender's qdisc, one in its
//!   segmentation offload and one in the receiver's receive offload or delayed-ACK engine.
//!   RCP-Rate runs where the data arrives and sees every unit as it arrives (no delayed ACK or
//!   receive offload between the data and the controller), and roam's RCP sender sends each
//!   requested unit when the request arrives; the one batching left is the request burst of
//!   one send quantum (`ReceiverPipe`'s request pacing). So it allows one quantum
//!   ([`RATE_QUANTA`]). On a path whose BDP is below three quanta the draft's allowance is a
//!   standing queue: on the 0.2 Mb/s, 80 ms cell path of `roam reproduce controllers` (a BDP
//!   of about 2–3 kB, a quantum of one 1448-byte unit) three quanta kept the p95 queueing
//!   delay at 197 ms (R²CP) and 220 ms (alone); one quantum gives 129 and 131 ms
//!   (docs/CONTROLLERS.md).

use std::time::Duration;

use crate::cc::bbr::State;
use crate::cc::{Bbr, CongestionController, Delivered, LossEvent};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// Send quanta RCP-Rate's `BBRInflight` allows (module docs; the draft's sender-side BBR
/// allows [`crate::cc::bbr::QUANTA`]).
pub const RATE_QUANTA: u64 = 1;

/// The RCP-Rate controller. See the module docs.
#[derive(Debug, Clone)]
pub struct RateRx {
    bbr: Bbr,
}

impl RateRx {
    /// A controller for `mss`-byte units with an initial window of `initial_window_segments`.
    pub fn new(mss: u64, initial_window_segments: u32) -> Self {
        RateRx {
            bbr: Bbr::with_quanta(mss, initial_window_segments, RATE_QUANTA),
        }
    }

    /// The BBR state the model is in.
    pub fn state(&self) -> State {
        self.bbr.state()
    }

    /// The underlying BBR machine (path model, gains).
    pub fn bbr(&self) -> &Bbr {
        &self.bbr
    }
}

impl CongestionController for RateRx {
    fn name(&self) -> &'static str {
        "rate"
    }

    fn window(&self) -> u64 {
        self.bbr.window()
    }

    fn ssthresh(&self) -> u64 {
        self.bbr.ssthresh()
    }

    fn on_delivered(&mut self, ev: &Delivered) {
        self.bbr.on_delivered(ev);
    }

    fn on_loss(&mut self, _ev: &LossEvent) {
        // Not a congestion signal (module docs).
    }

    fn on_timeout(&mut self, now: Time, in_flight: u64) {
        self.bbr.on_timeout(now, in_flight);
    }

    fn on_recovery_end(&mut self, now: Time) {
        self.bbr.on_recovery_end(now);
    }

    fn on_rtt_sample(&mut self, now: Time, rtt: Duration, min_rtt: Duration) {
        self.bbr.on_rtt_sample(now, rtt, min_rtt);
    }

    fn on_local_link(&mut self, now: Time, info: &LinkInfo) {
        self.bbr.on_local_link(now, info);
    }

    fn on_peer_link(&mut self, now: Time, info: &LinkInfo) {
        self.bbr.on_peer_link(now, info);
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.bbr.set_window(cwnd, ssthresh);
    }

    fn pacing_rate(&self) -> Option<f64> {
        self.bbr.pacing_rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::bbr::HIGH_GAIN;
    use crate::cc::LossCause;

    /// One 1000-byte arrival per millisecond (1 MB/s) with a 100 ms request-to-data RTT.
    fn drive(cc: &mut RateRx, from: u64, to: u64, in_flight: u64) {
        for ms in from..to {
            let now = Time::from_millis(ms);
            let rtt = Duration::from_millis(100);
            cc.on_rtt_sample(now, rtt, rtt);
            cc.on_delivered(&Delivered {
                now,
                bytes: 1000,
                sacked_bytes: 0,
                in_flight,
                in_recovery: false,
                rtt: Some(rtt),
            });
        }
    }

    /// Startup → Drain → ProbeBW on a 1 MB/s, 100 ms path, with the request pacing rate each
    /// state asks for: 2/ln 2 · IW / RTT before a rate sample (10 kB / 0.1 s · 2.885 =
    /// 288.5 kB/s), 1 MB/s / 2.885 = 346.6 kB/s in Drain, 1 MB/s cruising; and the window.
    #[test]
    fn state_machine_and_request_pacing_rates() {
        let mut cc = RateRx::new(1000, 10);
        assert_eq!(cc.pacing_rate(), None);
        cc.on_rtt_sample(Time::ZERO, Duration::from_millis(100), Duration::ZERO);
        let first = cc.pacing_rate().unwrap();
        assert!((first - 288_539.0).abs() < 1.0, "{first}");
        drive(&mut cc, 0, 1000, 200_000);
        assert_eq!(cc.state(), State::Drain);
        let drain = cc.pacing_rate().unwrap();
        assert!((drain - 1e6 / HIGH_GAIN).abs() < 1e3, "{drain}");
        drive(&mut cc, 1000, 1001, 100_000);
        assert_eq!(cc.state(), State::ProbeBw(2));
        assert!((cc.pacing_rate().unwrap() - 1e6).abs() < 1e3);
        // The window allows one send quantum (two units at 8 Mb/s), not the draft's three:
        // 2 · 100 kB + 2 kB.
        drive(&mut cc, 1001, 1100, 100_000);
        let w = cc.window() as f64;
        assert!((w - 202_000.0).abs() < 300.0, "{w}");
    }

    /// Holes (congestion or wireless) leave window and rate alone; a timeout drops the window
    /// to one unit, restored once a round has been delivered.
    #[test]
    fn loss_keeps_the_rate_and_a_timeout_restores_after_a_round() {
        let mut cc = RateRx::new(1000, 10);
        drive(&mut cc, 0, 1100, 100_000);
        let (w, r) = (cc.window(), cc.pacing_rate().unwrap());
        for cause in [LossCause::DupAcks, LossCause::WirelessEln] {
            cc.on_loss(&LossEvent {
                now: Time::from_millis(1100),
                cause,
                in_flight: 10_000,
            });
        }
        assert_eq!((cc.window(), cc.pacing_rate().unwrap()), (w, r));
        cc.on_timeout(Time::from_millis(1100), 100_000);
        assert_eq!(cc.window(), 1000);
        // 100 kB were in flight at the last round start: a round later the window is back.
        drive(&mut cc, 1100, 1300, 100_000);
        assert!(cc.window() >= w, "{} < {w}", cc.window());
    }
}
