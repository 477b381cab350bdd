//! The engines' clock: a monotonic clock read by the runtime, never inside an engine.

use std::time::{Duration, Instant};

use roam_proto::Time;

/// Monotonic time since the runtime started, as the engines' [`Time`].
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock that reads zero now.
    pub fn new() -> Self {
        Clock {
            start: Self::wall(),
        }
    }

    /// The monotonic clock itself. `clippy.toml` bans `Instant::now` so that no engine reads
    /// time; the runtime is the host, and this is the one place it reads it.
    #[allow(clippy::disallowed_methods)]
    pub fn wall() -> Instant {
        Instant::now()
    }

    /// The engines' time now.
    pub fn now(&self) -> Time {
        Time::from_nanos(u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// The instant an engine deadline falls on.
    pub fn instant(&self, t: Time) -> Instant {
        self.start + Duration::from_nanos(t.as_nanos())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}
