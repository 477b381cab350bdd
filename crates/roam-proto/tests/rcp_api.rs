//! The RCP engines' API used in any order never panics and never corrupts the object: the
//! receiver's application reads, the host freezes and thaws the connection, timers are handled
//! early or late, link facts arrive with any values and corruption reports name any offset; the
//! sender's application changes what it makes available; the clock may step backwards; the
//! network delivers, drops, duplicates and reorders datagrams at random. Whatever happens, the
//! receiver has read a prefix of the object (of the range it asked for).

mod rcp_support;

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use rcp_support::{object_bytes, MapStore};
use roam_proto::cc::CcKind;
use roam_proto::linkinfo::{ChannelState, LinkInfo};
use roam_proto::rcp::{RcpCc, RcpConfig, RcpReceiver, RcpSender};
use roam_proto::Time;
use roam_wire::ConnId;

#[derive(Debug, Clone)]
enum Op {
    /// The receiver's application reads at most `.0` bytes.
    Read(usize),
    Freeze,
    Thaw,
    /// The clock moves by `.0` µs (negative: backwards).
    Clock(i64),
    /// Timers of the receiver (true) or sender are handled now, due or not.
    Timeout(bool),
    /// Datagram `.0` (modulo those in flight) is delivered, dropped or duplicated.
    Deliver(usize),
    Drop(usize),
    Duplicate(usize),
    /// The receiver learns link facts with any values.
    LinkInfo(f64, f64, u64, u64, bool, bool),
    /// The receiver's host reports the unit at this offset corrupted.
    Corrupted(u64),
    /// The sender's application makes the object available up to this offset (or all).
    Available(Option<u64>),
}

fn op(len: u64) -> impl Strategy<Value = Op> {
    let f = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        -1.0..2.0f64,
        0.0..0.1f64
    ];
    prop_oneof![
        6 => (0usize..5000).prop_map(Op::Read),
        1 => Just(Op::Freeze),
        1 => Just(Op::Thaw),
        6 => prop_oneof![9 => 0i64..3_000_000, 1 => -50_000i64..0].prop_map(Op::Clock),
        3 => any::<bool>().prop_map(Op::Timeout),
        12 => any::<usize>().prop_map(Op::Deliver),
        2 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Duplicate),
        1 => (f.clone(), f, any::<u64>(), 0u64..10_000_000, any::<bool>(), any::<bool>())
            .prop_map(|(p, per, bw, d, w, up)| Op::LinkInfo(p, per, bw, d, w, up)),
        1 => prop_oneof![0..len + 2, any::<u64>()].prop_map(Op::Corrupted),
        1 => proptest::option::of(0..len + 2).prop_map(Op::Available),
    ]
}

fn case() -> impl Strategy<Value = (u64, (u64, u64), Vec<Op>)> {
    (1u64..60_000).prop_flat_map(|len| {
        let range = (0..len).prop_flat_map(move |a| (Just(a), a + 1..len + 100));
        (Just(len), range, proptest::collection::vec(op(len), 1..400))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_calls_delivers_a_prefix_of_the_object(
        (len, range, ops) in case(),
        cc in prop_oneof![
            proptest::sample::select(CcKind::ALL).prop_map(RcpCc::Shared),
            Just(RcpCc::Stp),
        ],
        eln in any::<bool>(),
        recv_segments in 2u64..40,
        sender_window in prop_oneof![Just(0u64), 1u64..40_000],
        status_interval_ms in prop_oneof![Just(0u64), 1u64..300],
    ) {
        let config = Arc::new(RcpConfig {
            eln,
            recv_buffer: recv_segments * 1000,
            sender_window,
            status_interval_ms,
            ..RcpConfig::default()
        });
        let object = object_bytes(len as usize);
        let mut store = MapStore::default();
        store.0.insert(b"obj".to_vec(), object.clone());
        let store: Arc<MapStore> = Arc::new(store);
        let mut now = Time::from_millis(5);
        let mut rx = RcpReceiver::connect(config.clone(), cc, ConnId(9), b"obj", range, now)
            .expect("valid config");
        let mut tx: Option<RcpSender> = None;
        let mut available = None;
        let mut read = Vec::new();
        // In flight: (to the sender?, bytes).
        let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
        let mut buf = Vec::new();
        for op in ops {
            match op {
                Op::Read(n) => {
                    rx.read(&mut read, n);
                }
                Op::Freeze => rx.freeze(now),
                Op::Thaw => {
                    rx.thaw(now);
                }
                Op::Clock(d) => {
                    now = if d >= 0 {
                        now + Duration::from_micros(d as u64)
                    } else {
                        Time::from_nanos(now.as_nanos().saturating_sub(d.unsigned_abs() * 1000))
                    };
                }
                Op::Timeout(true) => rx.handle_timeout(now),
                Op::Timeout(false) => {
                    // The sender has no timers; asking must be harmless.
                    let _ = tx.as_ref().and_then(RcpSender::poll_timeout);
                }
                Op::Deliver(i) | Op::Drop(i) | Op::Duplicate(i) if !wire.is_empty() => {
                    let i = i % wire.len();
                    match op {
                        Op::Deliver(_) => {
                            let (to_sender, bytes) = wire.remove(i);
                            if !to_sender {
                                let _ = rx.handle_datagram(now, &bytes);
                            } else if let Some(s) = tx.as_mut() {
                                let _ = s.handle_datagram(now, &bytes);
                            } else if let Ok(mut s) = RcpSender::accept(&config, store.clone(), &bytes) {
                                s.set_available(available);
                                tx = Some(s);
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
                Op::LinkInfo(p, per, bw, d, wireless, up) => {
                    let info = LinkInfo {
                        wireless,
                        loss_prob: p,
                        per,
                        one_way_delay: Duration::from_micros(d),
                        bandwidth_bps: bw,
                        channel: if up { ChannelState::Good } else { ChannelState::Bad },
                        up,
                        handoffs: 0,
                    };
                    rx.set_link_info(now, &info);
                }
                Op::Corrupted(offset) => rx.note_corrupted(offset),
                Op::Available(a) => {
                    available = a;
                    if let Some(s) = tx.as_mut() {
                        s.set_available(a);
                    }
                }
                _ => {}
            }
            while rx.poll_transmit(now, &mut buf).is_some() {
                wire.push((true, buf.clone()));
            }
            while rx.poll_event().is_some() {}
            let _ = rx.poll_timeout();
            if let Some(s) = tx.as_mut() {
                while s.poll_transmit(now, &mut buf).is_some() {
                    wire.push((false, buf.clone()));
                }
            }
            // The receiver has read a prefix of the range it asked for.
            let start = range.0 as usize;
            let end = (range.1.min(len)) as usize;
            prop_assert!(read.len() <= end - start, "read past the range");
            prop_assert!(read[..] == object[start..start + read.len()], "object corrupted");
        }
    }
}
