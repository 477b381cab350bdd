//! The RCP engines' API used in any order never panics and never corrupts the object: the
//! receiver's application reads, the host freezes and thaws the connection, timers are handled
//! early or late, link facts arrive with any values and corruption reports name any offset; the
//! sender's application changes what it makes available; the clock may step backwards; the
//! network delivers, drops, duplicates and reorders datagrams at random. Whatever happens, the
//! receiver has read a prefix of the object (of the range it asked for).

mod chaos;
mod rcp_support;

use std::sync::Arc;

use chaos::{any_link, clock_step, wire_op, AnyLink, WireOp};
use proptest::prelude::*;
use rcp_support::{object_bytes, MapStore};
use roam_proto::cc::CcKind;
use roam_proto::rcp::{reset_for, RcpCc, RcpConfig, RcpReceiver, RcpSender, ResetLimiter};
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
    /// The wire delivers, drops or duplicates a datagram.
    Wire(WireOp),
    /// The receiver learns link facts with any values.
    LinkInfo(AnyLink),
    /// The receiver's host reports the unit at this offset corrupted.
    Corrupted(u64),
    /// The sender's application makes the object available up to this offset (or all).
    Available(Option<u64>),
}

fn op(len: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..5000).prop_map(Op::Read),
        1 => Just(Op::Freeze),
        1 => Just(Op::Thaw),
        6 => clock_step(3_000_000).prop_map(Op::Clock),
        3 => any::<bool>().prop_map(Op::Timeout),
        15 => wire_op().prop_map(Op::Wire),
        1 => any_link().prop_map(Op::LinkInfo),
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
        idle_timeout_ms in prop_oneof![Just(900_000u64), Just(0), 1u64..5_000],
        resets_per_second in prop_oneof![Just(200u32), Just(0), 1u32..5],
    ) {
        let config = Arc::new(RcpConfig {
            eln,
            recv_buffer: recv_segments * 1000,
            sender_window,
            status_interval_ms,
            idle_timeout_ms,
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
        let mut resets = ResetLimiter::new(resets_per_second);
        for op in ops {
            match op {
                Op::Read(n) => {
                    rx.read(&mut read, n);
                }
                Op::Freeze => rx.freeze(now),
                Op::Thaw => {
                    rx.thaw(now);
                }
                Op::Clock(d) => now = chaos::step(now, d),
                Op::Timeout(true) => rx.handle_timeout(now),
                Op::Timeout(false) => {
                    // Early or late: the host drops a sender that expired.
                    if let Some(s) = tx.as_mut() {
                        s.handle_timeout(now);
                    }
                    if tx.as_ref().is_some_and(RcpSender::is_expired) {
                        tx = None;
                    }
                }
                Op::Wire(w) => {
                    if let Some((to_sender, bytes)) = chaos::apply(&mut wire, w) {
                        if !to_sender {
                            let _ = rx.handle_datagram(now, &bytes);
                        } else if let Some(s) = tx.as_mut() {
                            let _ = s.handle_datagram(now, &bytes);
                        } else if let Ok(mut s) =
                            RcpSender::accept(&config, store.clone(), now, &bytes)
                        {
                            s.set_available(available);
                            tx = Some(s);
                        } else if reset_for(now, &bytes, &mut buf).is_some() && resets.allow(now) {
                            // No connection here (it expired): the host answers with a reset,
                            // within its budget.
                            wire.push((false, buf.clone()));
                        }
                    }
                }
                Op::LinkInfo(link) => rx.set_link_info(now, &link.info()),
                Op::Corrupted(offset) => rx.note_corrupted(offset),
                Op::Available(a) => {
                    available = a;
                    if let Some(s) = tx.as_mut() {
                        s.set_available(a);
                    }
                }
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
