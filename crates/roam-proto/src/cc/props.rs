//! Property test over every controller: on any sequence of events — deliveries of any size
//! (zero and absurd included), losses of either cause, timeouts, recovery ends, RTT samples
//! from zero to hours, link reports, windows set from outside — the window never reaches zero,
//! nothing overflows (overflow checks are on in the test profiles), and a pacing rate, where
//! there is one, stays positive and finite.

use std::time::Duration;

use proptest::prelude::*;

use super::{CcKind, Delivered, LossCause, LossEvent};
use crate::linkinfo::LinkInfo;
use crate::Time;

/// One event, with the time step before it.
#[derive(Debug, Clone)]
enum Ev {
    Delivered {
        bytes: u64,
        sacked: u64,
        in_flight: u64,
        in_recovery: bool,
        rtt: Option<u64>,
    },
    Loss {
        wireless: bool,
        in_flight: u64,
    },
    Timeout(u64),
    RecoveryEnd,
    Rtt(u64, u64),
    Link(u64, u64, bool),
    SetWindow(u64, Option<u64>),
}

/// A byte count: small, typical, or near the extremes.
fn bytes() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..3000,
        3 => 0u64..10_000_000,
        1 => Just(u64::MAX),
        1 => (u64::MAX / 4)..u64::MAX,
    ]
}

/// Microseconds of an RTT or a time step: zero, typical, or very long.
fn micros() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        6 => 1u64..2_000_000,
        1 => 2_000_000u64..100_000_000_000,
    ]
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        8 => (bytes(), bytes(), bytes(), any::<bool>(), proptest::option::of(micros())).prop_map(
            |(bytes, sacked, in_flight, in_recovery, rtt)| Ev::Delivered {
                bytes,
                sacked,
                in_flight,
                in_recovery,
                rtt
            }
        ),
        2 => (any::<bool>(), bytes()).prop_map(|(wireless, in_flight)| Ev::Loss { wireless, in_flight }),
        1 => bytes().prop_map(Ev::Timeout),
        1 => Just(Ev::RecoveryEnd),
        3 => (micros(), micros()).prop_map(|(a, b)| Ev::Rtt(a, b)),
        1 => (bytes(), micros(), any::<bool>()).prop_map(|(bw, d, w)| Ev::Link(bw, d, w)),
        1 => (bytes(), proptest::option::of(bytes())).prop_map(|(c, t)| Ev::SetWindow(c, t)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn no_controller_reaches_a_zero_window_or_overflows(
        // Every shared controller, then RCP-Rate (receiver only, `rcp::rate`).
        kind in 0..=CcKind::ALL.len(),
        mss in prop_oneof![Just(1u64), 500u64..1500, Just(65_535u64)],
        iw in 0u32..20,
        events in proptest::collection::vec((micros(), event()), 1..300),
    ) {
        let mut cc = match CcKind::ALL.get(kind) {
            Some(k) => k.build(mss, iw),
            None => crate::rcp::RcpCc::Rate.build(mss, iw),
        };
        let mut now = Time::ZERO;
        for (step, ev) in events {
            now = now.saturating_add(Duration::from_micros(step));
            match ev {
                Ev::Delivered { bytes, sacked, in_flight, in_recovery, rtt } => {
                    cc.on_delivered(&Delivered {
                        now,
                        bytes,
                        sacked_bytes: sacked,
                        in_flight,
                        in_recovery,
                        rtt: rtt.map(Duration::from_micros),
                    })
                }
                Ev::Loss { wireless, in_flight } => cc.on_loss(&LossEvent {
                    now,
                    cause: if wireless { LossCause::WirelessEln } else { LossCause::DupAcks },
                    in_flight,
                }),
                Ev::Timeout(in_flight) => cc.on_timeout(now, in_flight),
                Ev::RecoveryEnd => cc.on_recovery_end(now),
                Ev::Rtt(rtt, min) => {
                    cc.on_rtt_sample(now, Duration::from_micros(rtt), Duration::from_micros(min))
                }
                Ev::Link(bw, d, wireless) => {
                    let mut info = LinkInfo::wired(bw, Duration::from_micros(d));
                    info.wireless = wireless;
                    info.loss_prob = if wireless { 0.05 } else { 0.0 };
                    cc.on_local_link(now, &info);
                    cc.on_peer_link(now, &info);
                }
                Ev::SetWindow(cwnd, ssthresh) => cc.set_window(cwnd, ssthresh),
            }
            prop_assert!(cc.window() > 0, "{}: zero window after {:?}", cc.name(), cc);
            prop_assert!(cc.ssthresh() > 0, "{}: zero ssthresh", cc.name());
            if let Some(rate) = cc.pacing_rate() {
                prop_assert!(rate.is_finite() && rate > 0.0, "{}: pacing rate {rate}", cc.name());
            }
        }
    }
}
