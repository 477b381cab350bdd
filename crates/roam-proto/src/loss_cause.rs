//! Telling wireless from congestion losses from what an end host sees, without the link
//! model's oracle: the receiver-side classifiers compared by Cen, Cosman & Voelker, "End-to-end
//! Differentiation of Congestion and Wireless Losses", IEEE/ACM ToN 11(5), 2003 (cited "Cen
//! et al." below), each judging the hole just before an arriving packet:
//!
//! - [`Scheme::Biaz`] (Biaz & Vaidya 1999; Cen et al. §III-A): when the wireless last hop is the
//!   bottleneck, packets arrive spaced by its packet time `T_min`; a hole of `n` packets lost
//!   on that hop leaves a gap of about `(n + 1)·T_min` before the next arrival, while packets
//!   dropped at an upstream queue leave no such gap. Wireless if
//!   `(n + 1)·T_min ≤ T < (n + 2)·T_min`.
//! - [`Scheme::Spike`] (Tobe et al. 2000; Cen et al. §III-B): the relative one-way trip time
//!   (ROTT) is high while a queue builds; a loss inside such a "spike" is congestion. The
//!   spike starts above `ROTT_min + α·(ROTT_max − ROTT_min)` and ends below
//!   `ROTT_min + β·(ROTT_max − ROTT_min)`, `α = 1/2`, `β = 1/3`.
//! - [`Scheme::ZigZag`] (Cen et al. §III-C): against the ROTT's running mean and mean deviation
//!   (EWMA gain 1/32), a hole of `n` packets is wireless if the ROTT is below
//!   `mean − dev/2` (`n = 1`), `mean − dev` (`n = 2`), `mean` (`n = 3`), `mean − dev/2`
//!   (`n > 3`).
//!
//! The classifier is sans-IO: the caller passes the arrival time, the ROTT (receive time minus
//! the sender's timestamp; any constant clock offset cancels) and the number of packets missing
//! just before the packet. Verdicts feed the same [`crate::cc::LossCause`] the ELN bit does.

use std::time::Duration;

use crate::cc::LossCause;
use crate::Time;

/// Which classifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scheme {
    /// Inter-arrival times around the hole (Biaz & Vaidya).
    Biaz,
    /// ROTT spikes (Spike).
    Spike,
    /// ROTT against its mean and deviation, by the number of packets lost (ZigZag).
    #[default]
    ZigZag,
}

/// One arrival at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// When the packet arrived.
    pub now: Time,
    /// Its relative one-way trip time (arrival time minus the sender's timestamp, offset by
    /// any constant).
    pub rott: Duration,
    /// Packets missing just before it (0 when it arrived in order).
    pub missing: u32,
}

/// Spike's thresholds (Cen et al. §III-B).
const SPIKE_START: f64 = 0.5;
const SPIKE_END: f64 = 1.0 / 3.0;
/// ZigZag's EWMA gain (Cen et al. §III-C).
const ZIGZAG_GAIN: f64 = 1.0 / 32.0;

/// The state of one classifier.
#[derive(Debug, Clone)]
pub struct LossClassifier {
    scheme: Scheme,
    last_arrival: Option<Time>,
    /// Smallest inter-arrival time of two in-order packets (Biaz's `T_min`).
    min_gap: Option<Duration>,
    rott_min: Option<Duration>,
    rott_max: Option<Duration>,
    in_spike: bool,
    /// ZigZag's running mean and mean deviation of the ROTT, seconds.
    mean: Option<f64>,
    dev: f64,
}

impl LossClassifier {
    /// A classifier with no history.
    pub fn new(scheme: Scheme) -> Self {
        LossClassifier {
            scheme,
            last_arrival: None,
            min_gap: None,
            rott_min: None,
            rott_max: None,
            in_spike: false,
            mean: None,
            dev: 0.0,
        }
    }

    /// The scheme in use.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Takes one arrival; for a packet after a hole, the verdict on the hole (`None` for an
    /// in-order packet, and when the scheme has too little history to judge: the caller then
    /// treats the loss as congestion, the safe default).
    pub fn on_arrival(&mut self, a: &Arrival) -> Option<LossCause> {
        let gap = self.last_arrival.map(|t| a.now.saturating_since(t));
        self.update_spike(a.rott);
        let verdict = if a.missing == 0 {
            None
        } else {
            match self.scheme {
                Scheme::Biaz => self.biaz(gap, a.missing),
                Scheme::Spike => Some(self.spike()),
                Scheme::ZigZag => self.zigzag(a.rott, a.missing),
            }
        };
        if a.missing == 0 {
            if let Some(g) = gap.filter(|g| !g.is_zero()) {
                self.min_gap = Some(self.min_gap.map_or(g, |m| m.min(g)));
            }
        }
        self.update_mean(a.rott);
        self.last_arrival = Some(a.now.max(self.last_arrival.unwrap_or(Time::ZERO)));
        verdict
    }

    fn biaz(&self, gap: Option<Duration>, missing: u32) -> Option<LossCause> {
        let (gap, t_min) = (gap?, self.min_gap?);
        let n = u64::from(missing);
        let lo = t_min.as_nanos().saturating_mul(u128::from(n + 1));
        let hi = t_min.as_nanos().saturating_mul(u128::from(n + 2));
        let g = gap.as_nanos();
        Some(if lo <= g && g < hi {
            LossCause::WirelessEln
        } else {
            LossCause::DupAcks
        })
    }

    fn update_spike(&mut self, rott: Duration) {
        let min = *self.rott_min.get_or_insert(rott);
        let max = *self.rott_max.get_or_insert(rott);
        let (min, max) = (min.min(rott), max.max(rott));
        self.rott_min = Some(min);
        self.rott_max = Some(max);
        let span = (max - min).as_secs_f64();
        let above = (rott - min).as_secs_f64();
        if !self.in_spike && above > SPIKE_START * span {
            self.in_spike = true;
        } else if self.in_spike && above < SPIKE_END * span {
            self.in_spike = false;
        }
    }

    fn spike(&self) -> LossCause {
        if self.in_spike {
            LossCause::DupAcks
        } else {
            LossCause::WirelessEln
        }
    }

    fn zigzag(&self, rott: Duration, missing: u32) -> Option<LossCause> {
        let mean = self.mean?;
        let dev = self.dev;
        let limit = match missing {
            1 => mean - dev / 2.0,
            2 => mean - dev,
            3 => mean,
            _ => mean - dev / 2.0,
        };
        Some(if rott.as_secs_f64() < limit {
            LossCause::WirelessEln
        } else {
            LossCause::DupAcks
        })
    }

    fn update_mean(&mut self, rott: Duration) {
        let x = rott.as_secs_f64();
        match self.mean {
            None => self.mean = Some(x),
            Some(m) => {
                self.dev = (1.0 - ZIGZAG_GAIN) * self.dev + ZIGZAG_GAIN * (x - m).abs();
                self.mean = Some((1.0 - ZIGZAG_GAIN) * m + ZIGZAG_GAIN * x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64, rott_us: u64, missing: u32) -> Arrival {
        Arrival {
            now: Time::from_micros(us),
            rott: Duration::from_micros(rott_us),
            missing,
        }
    }

    /// Biaz: packets spaced 1 ms by the wireless bottleneck. A packet lost on that hop leaves
    /// a 2 ms gap (wireless); packets dropped upstream leave the spacing intact (congestion).
    #[test]
    fn biaz_reads_the_gap_around_the_hole() {
        let mut c = LossClassifier::new(Scheme::Biaz);
        for k in 0..10 {
            assert_eq!(c.on_arrival(&at(k * 1000, 50_000, 0)), None);
        }
        // One packet lost on the last hop: the next arrives 2 ms after the previous one.
        assert_eq!(
            c.on_arrival(&at(11_000, 50_000, 1)),
            Some(LossCause::WirelessEln)
        );
        // Two lost on the last hop: a 3 ms gap.
        assert_eq!(
            c.on_arrival(&at(14_000, 50_000, 2)),
            Some(LossCause::WirelessEln)
        );
        // Two dropped at an upstream queue: the bottleneck stayed busy, a 1 ms gap.
        assert_eq!(
            c.on_arrival(&at(15_000, 50_000, 2)),
            Some(LossCause::DupAcks)
        );
        // A long silence (a burst dropped upstream, then idle): too long to be the hole alone.
        assert_eq!(
            c.on_arrival(&at(40_000, 50_000, 1)),
            Some(LossCause::DupAcks)
        );
    }

    #[test]
    fn biaz_needs_a_spacing_first() {
        let mut c = LossClassifier::new(Scheme::Biaz);
        assert_eq!(c.on_arrival(&at(0, 50_000, 0)), None);
        assert_eq!(c.on_arrival(&at(2000, 50_000, 1)), None);
    }

    /// Spike: a queue builds (ROTT 50 → 150 ms): losses while the ROTT is high are
    /// congestion; once it is back below 50 + 100/3 ms, losses are wireless again.
    #[test]
    fn spike_follows_the_rott_spike() {
        let mut c = LossClassifier::new(Scheme::Spike);
        let mut t = 0;
        let mut arrive = |c: &mut LossClassifier, rott_ms: u64, missing: u32| {
            t += 1000;
            c.on_arrival(&at(t, rott_ms * 1000, missing))
        };
        for _ in 0..5 {
            arrive(&mut c, 50, 0);
        }
        // Before any spike, max = min: a loss at the base ROTT is wireless.
        assert_eq!(arrive(&mut c, 50, 1), Some(LossCause::WirelessEln));
        for r in (60..=150).step_by(10) {
            arrive(&mut c, r, 0);
        }
        assert_eq!(arrive(&mut c, 140, 1), Some(LossCause::DupAcks));
        // Draining: 90 ms is still above the end threshold (83.3 ms).
        assert_eq!(arrive(&mut c, 90, 1), Some(LossCause::DupAcks));
        assert_eq!(arrive(&mut c, 70, 1), Some(LossCause::WirelessEln));
        // A new rise above 100 ms (start threshold) is a spike again.
        assert_eq!(arrive(&mut c, 110, 2), Some(LossCause::DupAcks));
    }

    /// ZigZag: ROTT alternating 55/65 ms (mean 60, deviation 5): one loss at 50 ms is
    /// wireless (< 57.5), at 62 ms congestion; two losses need < 55, three < 60.
    #[test]
    fn zigzag_by_the_number_of_losses() {
        let mut c = LossClassifier::new(Scheme::ZigZag);
        for k in 0..2000u64 {
            let r = if k % 2 == 0 { 55_000 } else { 65_000 };
            c.on_arrival(&at(k * 1000, r, 0));
        }
        let probe = |c: &LossClassifier, rott_ms: u64, n: u32| {
            c.clone()
                .on_arrival(&at(3_000_000, rott_ms * 1000, n))
                .expect("judged")
        };
        assert_eq!(probe(&c, 50, 1), LossCause::WirelessEln);
        assert_eq!(probe(&c, 58, 1), LossCause::DupAcks);
        assert_eq!(probe(&c, 56, 2), LossCause::DupAcks);
        assert_eq!(probe(&c, 54, 2), LossCause::WirelessEln);
        assert_eq!(probe(&c, 59, 3), LossCause::WirelessEln);
        assert_eq!(probe(&c, 61, 3), LossCause::DupAcks);
        assert_eq!(probe(&c, 57, 5), LossCause::WirelessEln);
    }

    /// Same arrivals, same verdicts (no hidden state beyond the arrivals).
    #[test]
    fn deterministic() {
        let run = || {
            let mut c = LossClassifier::new(Scheme::ZigZag);
            (0..500u64)
                .map(|k| {
                    c.on_arrival(&at(
                        k * 700,
                        40_000 + (k * 7919) % 9000,
                        (k % 13 == 0) as u32,
                    ))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
