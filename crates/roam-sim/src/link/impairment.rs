//! Per-direction impairments: applied when a packet reaches the far end (it has used the
//! airtime), except reordering and duplication, which are decided when it leaves the
//! transmitter.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::gilbert::Gilbert;

/// Why an arriving packet was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DropCause {
    /// The direction is down or in a blackout: nothing reached the receiver.
    Outage,
    /// Random loss (Bernoulli or Gilbert–Elliott): the frame arrived corrupted, so a wireless
    /// receiver knows it lost something (what ELN reports).
    Corruption,
}

/// What the impairments decide for a packet leaving the transmitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Departure {
    /// Extra delay (ns) that may let later packets overtake this one (`reorder`).
    pub reorder: u64,
    /// Extra delay (ns) that must not reorder (`jitter`).
    pub jitter: u64,
    /// Deliver a second copy.
    pub duplicate: bool,
}

/// Loss, blackout, up/down, reordering, jitter and duplication state of one link direction.
#[derive(Debug)]
pub(crate) struct Impairments {
    /// Bernoulli loss probability.
    pub loss: f64,
    /// Gilbert–Elliott process, if any.
    pub gilbert: Option<Gilbert>,
    /// Blackout windows currently open (overlapping windows nest).
    pub blackout_depth: u32,
    /// False while the direction is down.
    pub up: bool,
    /// Probability of holding a packet back, and by how many nanoseconds.
    pub reorder: Option<(f64, u64)>,
    /// Probability of delivering a packet twice.
    pub duplicate: f64,
    /// Upper bound (ns) of the order-preserving uniform extra delay (`jitter`).
    pub jitter: u64,
    // Boxed: a generator is about 300 bytes and most directions never draw, so the fields
    // read for every packet stay on a few cache lines (docs/SCALE.md).
    loss_rng: Box<ChaCha8Rng>,
    depart_rng: Box<ChaCha8Rng>,
}

impl Impairments {
    pub(crate) fn new(loss_rng: ChaCha8Rng, depart_rng: ChaCha8Rng) -> Impairments {
        Impairments {
            loss: 0.0,
            gilbert: None,
            blackout_depth: 0,
            up: true,
            reorder: None,
            duplicate: 0.0,
            jitter: 0,
            loss_rng: Box::new(loss_rng),
            depart_rng: Box::new(depart_rng),
        }
    }

    /// Whether a packet arriving now is lost, and why. Draws random numbers only for non-zero
    /// probabilities, so a lossless direction consumes none.
    #[inline]
    pub(crate) fn arrival_drop(&mut self) -> Option<DropCause> {
        if !self.up || self.blackout_depth > 0 {
            return Some(DropCause::Outage);
        }
        if let Some(g) = &self.gilbert {
            let p = g.loss();
            if p > 0.0 && self.loss_rng.gen::<f64>() < p {
                return Some(DropCause::Corruption);
            }
        }
        (self.loss > 0.0 && self.loss_rng.gen::<f64>() < self.loss).then_some(DropCause::Corruption)
    }

    /// Whether an arriving packet may be lost at random (Bernoulli or Gilbert–Elliott): when
    /// not, [`Impairments::arrival_drop`] draws nothing and only outages drop.
    pub(crate) fn random_loss(&self) -> bool {
        self.loss > 0.0 || self.gilbert.is_some()
    }

    /// Long-run loss probability of the random-loss processes (Bernoulli and Gilbert–Elliott).
    pub(crate) fn mean_loss(&self) -> f64 {
        let ge = self.gilbert.as_ref().map_or(0.0, Gilbert::mean_loss);
        1.0 - (1.0 - self.loss) * (1.0 - ge)
    }

    /// Whether the channel is currently bad: in a blackout or Gilbert–Elliott's bad state.
    pub(crate) fn channel_bad(&self) -> bool {
        self.blackout_depth > 0 || self.gilbert.as_ref().is_some_and(Gilbert::is_bad)
    }

    /// Whether [`Impairments::on_depart`] decides nothing for every packet (no delay, no copy)
    /// and draws nothing: no jitter, reordering or duplication with a positive probability.
    #[inline]
    pub(crate) fn departs_plain(&self) -> bool {
        self.jitter == 0
            && !self.reorder.is_some_and(|(p, _)| p > 0.0)
            && (self.duplicate.is_nan() || self.duplicate <= 0.0)
    }

    /// For a departing packet: extra delay (ns) that may reorder it, the order-preserving
    /// jitter (ns; the caller keeps it behind the previous packet), and whether to send a
    /// duplicate. Draws random numbers only for the impairments that are configured.
    #[inline]
    pub(crate) fn on_depart(&mut self) -> Departure {
        let jitter = if self.jitter > 0 {
            self.depart_rng.gen_range(0..=self.jitter)
        } else {
            0
        };
        let mut extra = 0;
        if let Some((p, d)) = self.reorder {
            if p > 0.0 && self.depart_rng.gen::<f64>() < p {
                extra = d;
            }
        }
        let duplicate = self.duplicate > 0.0 && self.depart_rng.gen::<f64>() < self.duplicate;
        Departure {
            reorder: extra,
            jitter,
            duplicate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream_rng;

    /// A direction departs plain exactly when `on_depart` can decide nothing: it then decides
    /// nothing (and draws nothing, so later draws are the same as if it had not been called).
    #[test]
    fn departs_plain_only_without_jitter_reordering_or_duplication() {
        let new = || Impairments::new(stream_rng(1, "loss"), stream_rng(1, "depart"));
        let nothing = Departure {
            reorder: 0,
            jitter: 0,
            duplicate: false,
        };
        let mut plain = new();
        plain.reorder = Some((0.0, 5_000));
        assert!(plain.departs_plain());
        assert_eq!(plain.on_depart(), nothing);
        let mut fresh = new();
        let next = |i: &mut Impairments| i.depart_rng.gen::<u64>();
        assert_eq!(next(&mut plain), next(&mut fresh), "no draw was made");
        let mut jitter = new();
        jitter.jitter = 1;
        let mut reorder = new();
        reorder.reorder = Some((0.1, 5_000));
        let mut duplicate = new();
        duplicate.duplicate = 0.01;
        for imp in [jitter, reorder, duplicate] {
            assert!(!imp.departs_plain());
        }
    }
}
