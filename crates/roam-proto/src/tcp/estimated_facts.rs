//! Wireless-loss facts estimated by the TCP receiver itself (`facts = "estimated"`, issue 30
//! item 2): what the oracle's [`LinkInfo`] and per-datagram corruption reports tell the engine
//! today, judged instead from what the receiving end sees. Each hole an arriving segment
//! reveals is judged by Spike ([`crate::loss_cause`], through the RCP receiver's
//! [`HoleJudge`]: the relative one-way time from the segment's RFC 7323 TSval) and, if judged
//! wireless, is marked corrupted exactly as the host's report would mark it, so TCP-ELN
//! (rcp-r2cp.txt §3.4.2) answers it; the share of packets lost in holes judged wireless is the
//! wireless loss probability `p_w` (atl.txt §IV-A) and the PER (last-link-heuristics.txt §3)
//! the receiver reports to the sender in place of the link model's.
//!
//! *Our choice:* what an OS does know about its interface (that it is wireless, its rate, its
//! delay, handoffs) still comes from the host's [`LinkInfo`] when it gives one; only the loss
//! facts are estimated. A link that reported nothing counts as wireless once a hole was judged
//! wireless. `p_w` is the share over the whole connection (ATL averages it further).

use crate::linkinfo::LinkInfo;
use crate::loss_cause::Scheme;
use crate::rcp::estimated_facts::HoleJudge;
use crate::Time;

/// The receiver's estimate of its link's loss facts.
#[derive(Debug, Clone)]
pub(crate) struct FactsEstimator {
    judge: HoleJudge,
    mss: u64,
    /// Data segments that arrived.
    arrived: u64,
    /// Packets missing in holes judged wireless.
    wireless_lost: u64,
}

impl FactsEstimator {
    /// An estimator for `mss`-byte segments, judging holes with Spike.
    pub(crate) fn new(mss: u64) -> Self {
        FactsEstimator {
            judge: HoleJudge::new(Scheme::Spike, mss),
            mss: mss.max(1),
            arrived: 0,
            wireless_lost: 0,
        }
    }

    /// A data segment `[seq, end)` arrived at `now` with TSval `ts_val`. Returns the hole
    /// `[from, to)` it revealed if judged wireless.
    pub(crate) fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        end: u64,
        ts_val: u32,
    ) -> Option<(u64, u64)> {
        self.arrived = self.arrived.saturating_add(1);
        let hole = self.judge.on_data(now, seq, end, ts_val)?;
        let missing = (hole.1 - hole.0).div_ceil(self.mss);
        self.wireless_lost = self.wireless_lost.saturating_add(missing);
        Some(hole)
    }

    /// The estimated wireless loss probability: packets lost in holes judged wireless over
    /// packets sent (arrived + those lost), 0 before any loss.
    pub(crate) fn loss_prob(&self) -> f64 {
        let total = self.arrived.saturating_add(self.wireless_lost);
        if total == 0 {
            return 0.0;
        }
        self.wireless_lost as f64 / total as f64
    }

    /// The facts the engine uses: the host's (or, without any, an up link of unknown rate and
    /// delay) with the loss probability and PER replaced by the estimate.
    pub(crate) fn overlay(&self, host: Option<LinkInfo>) -> LinkInfo {
        let mut li = host.unwrap_or(LinkInfo {
            up: true,
            ..LinkInfo::default()
        });
        li.wireless |= self.wireless_lost > 0;
        li.loss_prob = self.loss_prob();
        li.per = li.loss_prob;
        li.sanitized()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A steady one-way time: a two-packet hole is wireless; p_w counts the packets missing
    /// over those sent; the host's rate and delay stay, its loss facts do not.
    #[test]
    fn holes_at_a_steady_one_way_time_are_wireless_losses() {
        let mut e = FactsEstimator::new(1000);
        let at = |ms: u64| Time::from_millis(ms);
        // ROTT 50 ms, then a spike to 150 ms sets Spike's range.
        assert_eq!(e.on_data(at(100), 0, 1000, 50_000), None);
        assert_eq!(e.on_data(at(200), 1000, 2000, 150_000), None);
        assert_eq!(e.on_data(at(400), 2000, 3000, 250_000), None);
        assert_eq!(e.on_data(at(500), 3000, 4000, 450_000), None);
        assert_eq!(e.loss_prob(), 0.0);
        // Back at 50 ms with [4000, 6000) missing: wireless, 2 lost of 7 sent.
        assert_eq!(e.on_data(at(600), 6000, 7000, 550_000), Some((4000, 6000)));
        assert!((e.loss_prob() - 2.0 / 7.0).abs() < 1e-12);
        let host = LinkInfo {
            loss_prob: 0.5,
            per: 0.5,
            ..LinkInfo::wired(2_000_000, Duration::from_millis(50))
        };
        let li = e.overlay(Some(host));
        assert!(li.wireless);
        assert_eq!(li.bandwidth_bps, 2_000_000);
        assert_eq!(li.one_way_delay, Duration::from_millis(50));
        assert!((li.loss_prob - 2.0 / 7.0).abs() < 1e-12);
        assert_eq!(li.per, li.loss_prob);
        // A hole at the top of a spike (queue building) is congestion: not counted.
        assert_eq!(e.on_data(at(800), 9000, 10_000, 660_000), None);
        assert!((e.loss_prob() - 2.0 / 8.0).abs() < 1e-12);
    }

    /// `facts = "estimated"` needs a consumer of the facts.
    #[test]
    fn estimated_facts_need_eln_or_link_reports() {
        use crate::tcp::{Facts, TcpConfig, TcpConfigError};
        let mut cfg = TcpConfig {
            facts: Facts::Estimated,
            ..TcpConfig::default()
        };
        assert_eq!(cfg.validate(), Err(TcpConfigError::EstimatedFactsUnused));
        cfg.eln = true;
        assert!(cfg.validate().is_ok());
        cfg.eln = false;
        cfg.report_link_info = true;
        assert!(cfg.validate().is_ok());
    }

    /// Without host facts and without a wireless hole the link is not reported wireless.
    #[test]
    fn no_facts_and_no_wireless_hole_is_not_wireless() {
        let mut e = FactsEstimator::new(1000);
        e.on_data(Time::from_millis(10), 0, 1000, 0);
        let li = e.overlay(None);
        assert!(!li.wireless);
        assert!(li.up);
        assert_eq!(li.loss_prob, 0.0);
    }
}
