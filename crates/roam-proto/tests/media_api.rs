//! The media engines' API used in any order never panics: timers handled early or late, link
//! facts with any values on either end, a clock that may step backwards, and a network that
//! delivers, drops, duplicates and reorders the engines' own packets and reports; the sink is
//! opened by its host's acceptor once the source echoes its token, expires when idle and is
//! opened again. The source's rate stays a finite number within its configured bounds.

mod chaos;
mod media_support;

use std::time::Duration;

use chaos::{any_link, clock_step, wire_op, AnyLink, WireOp};
use media_support::SinkHost;
use proptest::prelude::*;
use roam_proto::media::{MediaConfig, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::ConnId;

#[derive(Debug, Clone)]
enum Op {
    /// The clock moves by `.0` µs (negative: backwards).
    Clock(i64),
    /// The source's (true) or sink's timers are handled now, due or not.
    Timeout(bool),
    /// The wire delivers, drops or duplicates a datagram.
    Wire(WireOp),
    /// The source (true) or receiver learns link facts with any values.
    LinkInfo(bool, AnyLink),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => clock_step(300_000).prop_map(Op::Clock),
        3 => any::<bool>().prop_map(Op::Timeout),
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
        idle_ms in prop_oneof![Just(None), (1u64..2000).prop_map(Some)],
    ) {
        let cfg = MediaConfig {
            packet_size,
            min_rate_bps,
            max_rate_bps,
            initial_rate_bps,
            report_link_info,
            idle_timeout: idle_ms.map(Duration::from_millis),
            ..MediaConfig::default()
        };
        let kind = if atl { RateKind::Atl } else { RateKind::Aimd };
        let mut tx = MediaSender::new(cfg, kind, ConnId(3));
        let mut rx = SinkHost::new(cfg);
        let mut answers = Vec::new();
        let mut now = Time::from_millis(5);
        // In flight: (to the receiver?, bytes).
        let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
        let mut buf = Vec::new();
        for op in ops {
            match op {
                Op::Clock(d) => now = chaos::step(now, d),
                Op::Timeout(true) => tx.handle_timeout(now),
                Op::Timeout(false) => {
                    // Early or late: the host drops a sink that expired.
                    if let Some(s) = rx.sink.as_mut() {
                        s.handle_timeout(now);
                    }
                    if rx.sink.as_ref().is_some_and(|s| s.is_expired()) {
                        rx.sink = None;
                    }
                }
                Op::Wire(w) => {
                    if let Some((to_rx, bytes)) = chaos::apply(&mut wire, w) {
                        if to_rx {
                            rx.handle(now, &bytes, &mut answers);
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
            rx.poll(now, &mut answers);
            wire.extend(answers.drain(..).map(|a| (false, a)));
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
