//! Random handoffs and interface outages of the mobile's wireless link `wl` (the host is called
//! `mobile`), as `[[event]]` entries for the property tests.

use proptest::prelude::*;

/// One thing that happens to the mobile's wireless link.
#[derive(Debug, Clone)]
pub enum Change {
    /// The link now behaves like another network: new rate (kb/s), one-way delay (ms) and loss.
    Handoff {
        at_ms: u32,
        rate_kbps: u32,
        delay_ms: u32,
        loss: f64,
    },
    /// The mobile's interface is down for `down_ms`, then up again.
    Outage { at_ms: u32, down_ms: u32 },
}

/// A handoff or an outage within the first 10 s: a handoff brings a rate of 0.1–8 Mb/s, a
/// one-way delay of 1–600 ms and a loss of up to 10 % in both directions; an outage lasts up
/// to 5 s.
pub fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (500u32..10_000, 100u32..8_000, 1u32..600, 0.0..0.1f64).prop_map(
            |(at_ms, rate_kbps, delay_ms, loss)| Change::Handoff {
                at_ms,
                rate_kbps,
                delay_ms,
                loss
            }
        ),
        (500u32..10_000, 1u32..5_000)
            .prop_map(|(at_ms, down_ms)| Change::Outage { at_ms, down_ms }),
    ]
}

/// The `[[event]]` entries for `changes`.
pub fn events(changes: &[Change]) -> String {
    let mut text = String::new();
    for c in changes {
        match *c {
            Change::Handoff {
                at_ms,
                rate_kbps,
                delay_ms,
                loss,
            } => {
                text += &format!(
                    "[[event]]\nat = \"{at_ms}ms\"\nlink = \"wl\"\n\
                 set = {{ rate = \"{rate_kbps}kbps\", delay = \"{delay_ms}ms\", loss = {loss} }}\n"
                )
            }
            Change::Outage { at_ms, down_ms } => {
                let up_ms = at_ms + down_ms;
                text += &format!(
                    "[[event]]\nat = \"{at_ms}ms\"\nnode = \"mobile\"\niface = \"wl\"\nup = false\n\
                     [[event]]\nat = \"{up_ms}ms\"\nnode = \"mobile\"\niface = \"wl\"\nup = true\n"
                );
            }
        }
    }
    text
}
