//! The media engines' API used in any order never panics: timers handled early or late, link
//! facts with any values on either end, a clock that may step backwards, and a network that
//! delivers, drops, duplicates and reorders the engines' own packets and reports. The source's
//! rate stays a finite number within its configured bounds.

mod chaos;

use chaos::{any_link, clock_step, wire_op, AnyLink, WireOp};
use proptest::prelude::*;
use roam_proto::media::{MediaConfig, MediaReceiver, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::ConnId;

#[derive(Debug, Clone)]
enum Op {
    /// The clock moves by `.0` µs (negative: backwards).
    Clock(i64),
    /// The source's timers are handled now, due or not.
    Timeout,
    /// The wire delivers, drops or duplicates a datagram.
    Wire(WireOp),
    /// The source (true) or receiver learns link facts with any values.
    LinkInfo(bool, AnyLink),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => clock_step(300_000).prop_map(Op::Clock),
        3 => Just(Op::Timeout),
        15 => wire_op().prop_map(Op::Wire),
        1 => (any::<bool>(), any_link()).prop_map(|(s, l)| Op::LinkInfo(s, l)),
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
                Op::Clock(d) => now = chaos::step(now, d),
                Op::Timeout => tx.handle_timeout(now),
                Op::Wire(w) => {
                    if let Some((to_rx, bytes)) = chaos::apply(&mut wire, w) {
                        if to_rx {
                            let _ = rx.handle_datagram(now, &bytes);
                        } else {
                            let _ = tx.handle_datagram(now, &bytes);
                        }
                    }
                }
                Op::LinkInfo(source, link) => {
                    if source {
                        tx.set_link_info(now, link.info());
                    } else {
                        rx.set_link_info(now, link.info());
                    }
                }
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
