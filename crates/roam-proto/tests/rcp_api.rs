//! The RCP engines' API used in any order never panics and never corrupts the object: the
//! receiver's application reads, the host freezes and thaws the connection, timers are handled
//! early or late, link facts arrive with any values and corruption reports name any offset; the
//! sender's application changes what it makes available; the clock may step backwards; the
//! network delivers, drops, duplicates and reorders datagrams at random; the sender's store
//! may read through the host, which completes its reads in any order and at any time.
//! Whatever happens, the receiver has read a prefix of the object (of the range it asked for),
//! and no stateless answer of the sender's host is larger than the datagram it answers.

mod chaos;
mod rcp_support;

use std::sync::Arc;

use chaos::{any_link, clock_step, wire_op, AnyLink, WireOp};
use proptest::prelude::*;
use rcp_support::{object_bytes, test_key, MapStore, RECEIVER_ADDR};
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, Unknown};
use roam_proto::rcp::{
    ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpReceiver, RcpSender, ResetLimiter,
};
use roam_proto::Time;
use roam_wire::ConnId;

/// The objects, read in memory or (`host`) only through the host.
struct Store {
    map: MapStore,
    host: bool,
}

impl ObjectStore for Store {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        self.map.object_len(name)
    }
    fn read_now(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        !self.host && self.map.read_now(name, offset, len, out)
    }
}

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
    /// The sender's host completes one of its reads in progress (chosen modulo their
    /// number), supplying at most `.1` bytes of it.
    Supply(usize, usize),
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
        4 => (any::<usize>(), prop_oneof![Just(usize::MAX), 0usize..3000])
            .prop_map(|(i, n)| Op::Supply(i, n)),
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
            Just(RcpCc::Rate),
        ],
        eln in any::<bool>(),
        recv_segments in 2u64..40,
        sender_window in prop_oneof![Just(0u64), 1u64..40_000],
        status_interval_ms in prop_oneof![Just(0u64), 1u64..300],
        idle_timeout_ms in prop_oneof![Just(900_000u64), Just(0), 1u64..5_000],
        resets_per_second in prop_oneof![Just(200u32), Just(0), 1u32..5],
        host_reads in any::<bool>(),
        read_ahead in prop_oneof![Just(65_536u64), 0u64..5000],
    ) {
        let config = Arc::new(RcpConfig {
            eln,
            recv_buffer: recv_segments * 1000,
            sender_window,
            status_interval_ms,
            idle_timeout_ms,
            read_ahead,
            ..RcpConfig::default()
        });
        let object = object_bytes(len as usize);
        let mut map = MapStore::default();
        map.0.insert(b"obj".to_vec(), object.clone());
        let store = Arc::new(Store { map, host: host_reads });
        let mut acceptor = RcpAcceptor::new(config.clone(), store.clone());
        let key = test_key();
        // The host's reads in progress: (offset, bytes).
        let mut reads: Vec<(u64, Vec<u8>)> = Vec::new();
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
                        reads.clear();
                    }
                }
                Op::Wire(w) => {
                    if let Some((to_sender, bytes)) = chaos::apply(&mut wire, w) {
                        if !to_sender {
                            let _ = rx.handle_datagram(now, &bytes);
                        } else if let Some(s) = tx.as_mut() {
                            let _ = s.handle_datagram(now, &bytes);
                        } else {
                            // No connection here (never opened, or expired): the acceptor.
                            match acceptor.on_unknown(now, &key, RECEIVER_ADDR, &bytes, &mut buf) {
                                Unknown::Drop => {}
                                Unknown::Reply { len } => {
                                    prop_assert!(len <= bytes.len(), "reply larger than cause");
                                    wire.push((false, buf[..len].to_vec()));
                                }
                                Unknown::Reset { len } => {
                                    prop_assert!(len <= bytes.len(), "reset larger than cause");
                                    if resets.allow(now) {
                                        wire.push((false, buf[..len].to_vec()));
                                    }
                                }
                                Unknown::Accept(mut s) => {
                                    s.set_available(available);
                                    reads.clear();
                                    tx = Some(s);
                                }
                            }
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
                Op::Supply(i, n) => {
                    if !reads.is_empty() {
                        let (offset, mut bytes) = reads.remove(i % reads.len());
                        bytes.truncate(n);
                        if let Some(s) = tx.as_mut() {
                            s.supply(offset, &bytes);
                        }
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
                while let Some(r) = s.poll_read() {
                    let mut bytes = Vec::new();
                    store.map.copy(s.object_name(), r.offset, r.len, &mut bytes);
                    reads.push((r.offset, bytes));
                }
                prop_assert!(
                    s.buffered_bytes() as u64 <= read_ahead.max(1000) + 1000,
                    "the sender holds {} bytes", s.buffered_bytes()
                );
            }
            // The receiver has read a prefix of the range it asked for.
            let start = range.0 as usize;
            let end = (range.1.min(len)) as usize;
            prop_assert!(read.len() <= end - start, "read past the range");
            prop_assert!(read[..] == object[start..start + read.len()], "object corrupted");
        }
    }
}
