//! The engine's API used in any order never panics and never corrupts a stream: both ends
//! write, read, close, abort, see timers fire early or late, get link reports with any values
//! and corruption reports for any datagram, while the clock may even step backwards and the
//! "network" delivers, drops, duplicates and reorders datagrams at random. Whatever happens,
//! each end has read a prefix of what the other wrote. The server side opens through the
//! stateless handshake ([`TcpAcceptor`]), and the client's ISN is drawn anywhere up to
//! [`MAX_ISN`], its edges included, so streams run up to the top of the ISN range.

mod chaos;

use std::sync::Arc;

use chaos::{any_link, clock_step, wire_op, AnyLink, WireOp};
use proptest::prelude::*;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::tcp::{Connection, LastLinkConfig, RecoveryMode, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_proto::Time;
use roam_wire::ConnId;

#[derive(Debug, Clone)]
enum Op {
    /// The application on end `.0` (true: client) writes `.1` more bytes of its stream.
    Write(bool, usize),
    /// The application on end `.0` reads at most `.1` bytes.
    Read(bool, usize),
    Close(bool),
    Abort(bool),
    /// The clock moves by `.0` µs (negative: backwards).
    Clock(i64),
    /// Timers of end `.0` are handled now, due or not.
    Timeout(bool),
    /// The wire delivers, drops or duplicates a datagram.
    Wire(WireOp),
    /// End `.0` learns link facts with any values.
    LinkInfo(bool, AnyLink),
    /// End `.0` hears that datagram `.1` (modulo those in flight) was corrupted on its link.
    Corrupted(bool, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<bool>(), 0usize..5000).prop_map(|(c, n)| Op::Write(c, n)),
        6 => (any::<bool>(), 0usize..5000).prop_map(|(c, n)| Op::Read(c, n)),
        1 => any::<bool>().prop_map(Op::Close),
        // Rare (an abort ends the case's interest): one in twenty of these draws.
        1 => (any::<bool>(), 0u8..20).prop_map(|(c, k)| if k == 0 { Op::Abort(c) } else { Op::Timeout(c) }),
        6 => clock_step(3_000_000).prop_map(Op::Clock),
        3 => any::<bool>().prop_map(Op::Timeout),
        15 => wire_op().prop_map(Op::Wire),
        1 => (any::<bool>(), any_link()).prop_map(|(c, l)| Op::LinkInfo(c, l)),
        1 => (any::<bool>(), any::<usize>()).prop_map(|(c, i)| Op::Corrupted(c, i)),
    ]
}

/// The bytes end `client` writes: a simple pattern distinct for each direction.
fn stream_byte(client: bool, offset: usize) -> u8 {
    let x = offset as u64 ^ if client { 0x5a } else { 0xa5 };
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

struct End {
    conn: Option<Connection>,
    written: usize,
    read: Vec<u8>,
}

impl End {
    fn empty() -> End {
        End {
            conn: None,
            written: 0,
            read: Vec::new(),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_calls_keeps_both_streams_intact(
        ops in proptest::collection::vec(op(), 1..400),
        cc in proptest::sample::select(CcKind::ALL),
        sack in any::<bool>(),
        probing in any::<bool>(),
        eln in any::<bool>(),
        last_link in any::<bool>(),
        report_link_info in any::<bool>(),
        recv_segments in 1u64..40,
        isn in prop_oneof![Just(0u64), Just(MAX_ISN), MAX_ISN - 100_000..=MAX_ISN, 0..=MAX_ISN],
        key in any::<[u8; 16]>(),
    ) {
        let cfg = Arc::new(TcpConfig {
            sack,
            eln,
            report_link_info,
            recovery: if probing { RecoveryMode::Probing } else { RecoveryMode::Standard },
            last_link: LastLinkConfig { max_cwnd: last_link, initial: last_link, per: last_link, ..LastLinkConfig::default() },
            recv_buffer: recv_segments * 1000,
            send_buffer: 20_000,
            ..TcpConfig::default()
        });
        let mut now = Time::from_millis(5);
        let mut ends = [End::empty(), End::empty()]; // [client, server]
        ends[0].conn = Some(Connection::connect(cfg.clone(), cc, ConnId(7), isn, now).expect("valid"));
        let mut acceptor = TcpAcceptor::new(cfg.clone(), cc).expect("valid");
        let key = TokenKey::new(key);
        // In flight: (to the server?, bytes).
        let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
        let mut buf = Vec::new();
        for op in ops {
            match op {
                Op::Write(c, n) => {
                    let e = &mut ends[usize::from(!c)];
                    if let Some(conn) = e.conn.as_mut() {
                        let chunk: Vec<u8> = (e.written..e.written + n).map(|i| stream_byte(c, i)).collect();
                        e.written += conn.write(&chunk);
                    }
                }
                Op::Read(c, n) => {
                    let e = &mut ends[usize::from(!c)];
                    if let Some(conn) = e.conn.as_mut() {
                        conn.read(&mut e.read, n);
                    }
                }
                Op::Close(c) => {
                    if let Some(conn) = ends[usize::from(!c)].conn.as_mut() {
                        conn.close();
                    }
                }
                Op::Abort(c) => {
                    if let Some(conn) = ends[usize::from(!c)].conn.as_mut() {
                        conn.abort();
                    }
                }
                Op::Clock(d) => now = chaos::step(now, d),
                Op::Timeout(c) => {
                    if let Some(conn) = ends[usize::from(!c)].conn.as_mut() {
                        conn.handle_timeout(now);
                    }
                }
                Op::Wire(w) => {
                    if let Some((to_server, bytes)) = chaos::apply(&mut wire, w) {
                        let e = &mut ends[usize::from(to_server)];
                        match e.conn.as_mut() {
                            Some(conn) => {
                                let _ = conn.handle_datagram(now, &bytes);
                            }
                            None if to_server => {
                                match acceptor.on_unknown(now, &key, "client", &bytes, &mut buf) {
                                    Unknown::Accept(c) => e.conn = Some(c),
                                    Unknown::Reply { len } | Unknown::Reset { len } => {
                                        prop_assert!(len <= bytes.len(), "an answer larger than its cause");
                                        wire.push((false, buf[..len].to_vec()));
                                    }
                                    Unknown::Drop => {}
                                }
                            }
                            None => {}
                        }
                    }
                }
                Op::LinkInfo(c, link) => {
                    if let Some(conn) = ends[usize::from(!c)].conn.as_mut() {
                        conn.set_link_info(now, link.info());
                    }
                }
                Op::Corrupted(c, i) if !wire.is_empty() => {
                    let bytes = wire[i % wire.len()].1.clone();
                    if let Some(conn) = ends[usize::from(!c)].conn.as_mut() {
                        conn.handle_corrupted(now, &bytes);
                    }
                }
                _ => {}
            }
            for (k, e) in ends.iter_mut().enumerate() {
                if let Some(conn) = e.conn.as_mut() {
                    while let Some(t) = conn.poll_transmit(now, &mut buf) {
                        wire.push((k == 0, buf.clone()));
                        if !t.more {
                            // The engine's word that nothing can follow: the next call says so.
                            prop_assert!(conn.poll_transmit(now, &mut buf).is_none());
                            break;
                        }
                    }
                    while conn.poll_event().is_some() {}
                    let _ = conn.poll_timeout();
                }
            }
            // Each end has read a prefix of what the other wrote.
            for (reader, writer) in [(0usize, 1usize), (1, 0)] {
                let got = &ends[reader].read;
                prop_assert!(got.len() <= ends[writer].written, "read more than was written");
                let client_wrote = writer == 0;
                let bad = got.iter().enumerate().position(|(i, b)| *b != stream_byte(client_wrote, i));
                prop_assert_eq!(bad, None, "stream corrupted");
            }
        }
    }
}
