//! Wireless-loss facts estimated by the RCP receiver itself (issue 30, item 2): instead of the
//! link's per-hole corruption report (ELN's oracle input, rcp-r2cp.txt §3.4.2), each hole is
//! judged from what the receiver sees by a classifier of [`crate::loss_cause`] (Spike by
//! default: in `roam reproduce controllers` it misjudged the fewest wireless holes and no
//! congestion hole), and a hole judged wireless is marked corrupted in the pipe exactly as the
//! oracle's report would mark it.
//!
//! A hole is the gap between the highest offset received so far and an arriving DATA that
//! starts beyond it; its size in packets is the gap over the segment size, rounded up. The
//! relative one-way trip time is the arrival time minus the sender's timestamp (both in
//! microseconds modulo 2³²; the classifiers use only differences, so the clock offset cancels).

use std::time::Duration;

use crate::cc::LossCause;
use crate::loss_cause::{Arrival, LossClassifier, Scheme};
use crate::Time;

/// The receiver's hole judge. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct HoleJudge {
    classifier: LossClassifier,
    mss: u64,
    /// End of the highest data received.
    highest_end: Option<u64>,
}

impl HoleJudge {
    /// A judge using `scheme`, with `mss`-byte segments.
    pub(crate) fn new(scheme: Scheme, mss: u64) -> Self {
        HoleJudge {
            classifier: LossClassifier::new(scheme),
            mss: mss.max(1),
            highest_end: None,
        }
    }

    /// DATA for `[seq, end)` arrived at `now` with the sender's timestamp `ts_val`. Returns the
    /// hole it reveals, `[from, seq)`, if the classifier judged it wireless.
    pub(crate) fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        end: u64,
        ts_val: u32,
    ) -> Option<(u64, u64)> {
        let from = self.highest_end.unwrap_or(seq);
        let gap = seq.saturating_sub(from);
        let missing = u32::try_from(gap.div_ceil(self.mss)).unwrap_or(u32::MAX);
        let rott = Duration::from_micros(u64::from((now.as_micros() as u32).wrapping_sub(ts_val)));
        let verdict = self.classifier.on_arrival(&Arrival { now, rott, missing });
        self.highest_end = Some(self.highest_end.map_or(end, |h| h.max(end)));
        (missing > 0 && verdict == Some(LossCause::WirelessEln)).then_some((from, seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spike: holes at a steady one-way time are wireless; a hole at the top of a rising
    /// one-way time (a queue building) is congestion. In-order data reveals no hole.
    #[test]
    fn spike_judges_holes_from_the_one_way_time() {
        let mut j = HoleJudge::new(Scheme::Spike, 1000);
        let at = |ms: u64| Time::from_millis(ms);
        // ROTT 50 ms, then one spike to 150 ms sets the range [50, 150] ms.
        assert_eq!(j.on_data(at(100), 0, 1000, 50_000), None);
        assert_eq!(j.on_data(at(200), 1000, 2000, 150_000), None);
        assert_eq!(j.on_data(at(400), 2000, 3000, 250_000), None); // 150 ms
        assert_eq!(j.on_data(at(500), 3000, 4000, 450_000), None);
        // Back at 50 ms (out of the spike), two packets missing: wireless.
        assert_eq!(j.on_data(at(600), 6000, 7000, 550_000), Some((4000, 6000)));
        // At 140 ms (inside a spike): congestion, not reported.
        assert_eq!(j.on_data(at(800), 9000, 10_000, 660_000), None);
        // A late arrival below the highest offset reveals no hole.
        assert_eq!(j.on_data(at(900), 4000, 5000, 850_000), None);
    }
}
