//! The media engines' API used in any order never panics: timers handled early or late, link
//! facts with any values on either end, a clock that may step backwards, and a network that
//! delivers, drops, duplicates and reorders the engines' own packets and reports. The source's
//! rate stays a finite number within its configured bounds.

use std::time::Duration;

use proptest::prelude::*;
use roam_proto::linkinfo::{ChannelState, LinkInfo};
use roam_proto::media::{MediaConfig, MediaReceiver, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::ConnId;

#[derive(Debug, Clone)]
enum Op {
    /// The clock moves by `.0` µs (negative: backwards).
    Clock(i64),
    /// The source's timers are handled now, due or not.
    Timeout,
    /// Datagram `.0` (modulo those in flight) is delivered, dropped or duplicated.
    Deliver(usize),
    Drop(usize),
    Duplicate(usize),
    /// The source (true) or receiver learns link facts with any values.
    LinkInfo(bool, f64, u64, u64, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let f = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        -1.0..2.0f64,
        0.0..0.1f64
    ];
    prop_oneof![
        6 => prop_oneof![9 => 0i64..300_000, 1 => -50_000i64..0].prop_map(Op::Clock),
        3 => Just(Op::Timeout),
        12 => any::<usize>().prop_map(Op::Deliver),
        2 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Duplicate),
        1 => (any::<bool>(), f, any::<u64>(), 0u64..10_000_000, any::<bool>())
            .prop_map(|(s, p, bw, d, up)| Op::LinkInfo(s, p, bw, d, up)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_calls_keeps_the_media_engines_sane(
        ops in proptest::collection::vec(op(), 1..400),
        atl in any::<bool>(),
        report_link_info in any::<bool>(),
        packet_size in 1u32..1400,
        (min_rate_bps, max_rate_bps) in (1u64..1_000_000).prop_flat_map(|lo| (Just(lo), lo..100_000_000)),
        initial_rate_bps in 1u64..100_000_000,
    ) {
        let cfg = MediaConfig {
            packet_size,
            min_rate_bps,
            max_rate_bps,
            initial_rate_bps,
            report_link_info,
            ..MediaConfig::default()
        };
        let kind = if atl { RateKind::Atl } else { RateKind::Aimd };
        let mut tx = MediaSender::new(cfg, kind, ConnId(3));
        let mut rx = MediaReceiver::new(report_link_info);
        let mut now = Time::from_millis(5);
        // In flight: (to the receiver?, bytes).
        let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
        let mut buf = Vec::new();
        for op in ops {
            match op {
                Op::Clock(d) => {
                    now = if d >= 0 {
                        now + Duration::from_micros(d as u64)
                    } else {
                        Time::from_nanos(now.as_nanos().saturating_sub(d.unsigned_abs() * 1000))
                    };
                }
                Op::Timeout => tx.handle_timeout(now),
                Op::Deliver(i) | Op::Drop(i) | Op::Duplicate(i) if !wire.is_empty() => {
                    let i = i % wire.len();
                    match op {
                        Op::Deliver(_) => {
                            let (to_rx, bytes) = wire.remove(i);
                            if to_rx {
                                let _ = rx.handle_datagram(now, &bytes);
                            } else {
                                let _ = tx.handle_datagram(now, &bytes);
                            }
                        }
                        Op::Drop(_) => {
                            wire.remove(i);
                        }
                        _ => {
                            let copy = wire[i].clone();
                            wire.push(copy);
                        }
                    }
                }
                Op::LinkInfo(source, p, bw, d, up) => {
                    let info = LinkInfo {
                        wireless: true,
                        loss_prob: p,
                        per: p,
                        one_way_delay: Duration::from_micros(d),
                        bandwidth_bps: bw,
                        channel: if up { ChannelState::Good } else { ChannelState::Bad },
                        up,
                        handoffs: 0,
                    };
                    if source {
                        tx.set_link_info(now, info);
                    } else {
                        rx.set_link_info(now, info);
                    }
                }
                _ => {}
            }
            // The source sends what its rate allows now (bounded, so a huge rate cannot make
            // the test loop forever).
            for _ in 0..64 {
                if tx.poll_transmit(now, &mut buf).is_none() {
                    break;
                }
                wire.push((true, buf.clone()));
            }
            while rx.poll_transmit(now, &mut buf).is_some() {
                wire.push((false, buf.clone()));
            }
            while tx.poll_event().is_some() {}
            let _ = tx.poll_timeout();
            let rate = tx.rate_bps();
            prop_assert!(rate.is_finite(), "rate {rate}");
            prop_assert!(
                rate >= min_rate_bps as f64 * 0.999 && rate <= max_rate_bps as f64 * 1.001,
                "rate {rate} outside [{min_rate_bps}, {max_rate_bps}]"
            );
        }
    }
}
