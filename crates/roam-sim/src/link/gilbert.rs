//! Two-state Gilbert–Elliott (on-off) channel: exponential sojourns in a good and a bad state,
//! independent per-packet loss with each state's probability (the VLINK model of
//! tcp-probing.txt).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

use crate::scenario::GilbertSpec;

/// The channel state process. State changes are simulator events.
#[derive(Debug)]
pub(crate) struct Gilbert {
    good_mean_ns: f64,
    bad_mean_ns: f64,
    good_loss: f64,
    bad_loss: f64,
    bad: bool,
    rng: ChaCha8Rng,
}

impl Gilbert {
    pub(crate) fn new(spec: &GilbertSpec, rng: ChaCha8Rng) -> Gilbert {
        Gilbert {
            good_mean_ns: spec.good.mean.as_nanos() as f64,
            bad_mean_ns: spec.bad.mean.as_nanos() as f64,
            good_loss: spec.good.loss,
            bad_loss: spec.bad.loss,
            bad: spec.start_bad,
            rng,
        }
    }

    /// Whether the channel is in the bad state.
    pub(crate) fn is_bad(&self) -> bool {
        self.bad
    }

    /// Long-run loss probability (stationary mix of the two states).
    pub(crate) fn mean_loss(&self) -> f64 {
        let total = self.good_mean_ns + self.bad_mean_ns;
        if total > 0.0 {
            (self.good_mean_ns * self.good_loss + self.bad_mean_ns * self.bad_loss) / total
        } else {
            0.0
        }
    }

    /// Loss probability in the current state.
    pub(crate) fn loss(&self) -> f64 {
        if self.bad {
            self.bad_loss
        } else {
            self.good_loss
        }
    }

    /// Draws how long the current state lasts (at least 1 ns).
    pub(crate) fn sojourn(&mut self) -> Duration {
        let mean = if self.bad {
            self.bad_mean_ns
        } else {
            self.good_mean_ns
        };
        let u: f64 = 1.0 - self.rng.gen::<f64>();
        let ns = (-mean * u.ln()).min(1e18);
        Duration::from_nanos((ns as u64).max(1))
    }

    /// Enters the other state and returns how long it lasts.
    pub(crate) fn flip(&mut self) -> Duration {
        self.bad = !self.bad;
        self.sojourn()
    }
}
