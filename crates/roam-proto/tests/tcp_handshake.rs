//! Issue 16: the TCP-like handshake on a hostile network. One SYN or one data segment near the
//! end of the sequence space used to panic a server (overflow checks are on in release), and
//! handshakes proved nothing (a constant ISN, any ACK completed a server's handshake, a SYN-ACK
//! larger than the SYN). Now the client's ISN is the host's random draw, the server answers a
//! SYN statelessly with a SYN cookie no larger than the SYN, and only a segment echoing the
//! cookie from the address it was issued to opens a connection (docs/HANDSHAKE.md).

mod support;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, EndpointConnection, PathId, TokenKey, Unknown, TOKEN_SLOT};
use roam_proto::tcp::{
    Connection, Event, OpenError, RecoveryMode, State, TcpAcceptor, TcpConfig, MAX_ISN,
};
use roam_proto::Time;
use roam_wire::{ConnId, Flags, Options, Segment, SEGMENT_FIXED_LEN};
use support::{data, Pair, CLIENT_ADDR};

fn encode(seg: &Segment<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    seg.encode(&mut out);
    out
}

fn bare(conn_id: ConnId, flags: Flags, seq: u64, ack: u64, payload: &[u8]) -> Vec<u8> {
    encode(&Segment {
        conn_id,
        flags,
        seq,
        ack,
        window: 65_535,
        ts_val: 1,
        ts_ecr: 0,
        options: Options::default(),
        payload,
    })
}

fn key() -> TokenKey {
    TokenKey::new(*b"handshake tests!")
}

fn acceptor(cfg: &Arc<TcpConfig>) -> TcpAcceptor {
    TcpAcceptor::new(cfg.clone(), CcKind::NewReno).expect("valid config")
}

/// A client's SYN (the first datagram it sends).
fn syn_of(client: &mut Connection, now: Time) -> Vec<u8> {
    let mut syn = Vec::new();
    client.poll_transmit(now, &mut syn).expect("a SYN");
    syn
}

/// What the acceptor answers `datagram` from `peer` with, as (kind, bytes).
fn answer(
    a: &mut TcpAcceptor,
    now: Time,
    peer: &str,
    datagram: &[u8],
) -> (Unknown<Connection>, Vec<u8>) {
    let mut out = Vec::new();
    let u = a.on_unknown(now, &key(), peer, datagram, &mut out);
    if let Unknown::Reply { len } | Unknown::Reset { len } = u {
        assert_eq!(len, out.len());
        assert!(len <= datagram.len(), "{len} > {}", datagram.len());
    }
    (u, out)
}

#[test]
fn a_syn_at_the_end_of_the_sequence_space_does_not_panic_a_server() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let syn_options = Options {
        mss: Some(1000),
        sack_permitted: true,
        ..Options::default()
    };
    for seq in [u64::MAX, u64::MAX - 1, MAX_ISN + 1, MAX_ISN, 0] {
        let syn = encode(&Segment {
            conn_id: ConnId(9),
            flags: Flags::SYN,
            seq,
            ack: 0,
            window: 0,
            ts_val: 0,
            ts_ecr: 0,
            options: syn_options,
            payload: &[],
        });
        let (u, _) = answer(&mut a, Time::ZERO, CLIENT_ADDR, &syn);
        if seq > MAX_ISN {
            assert!(matches!(u, Unknown::Drop), "ISN {seq}: {u:?}");
        } else {
            assert!(matches!(u, Unknown::Reply { .. }), "ISN {seq}: {u:?}");
        }
    }
    assert_eq!(a.stats().syns_dropped, 3);
}

#[test]
fn a_syn_ack_at_the_end_of_the_sequence_space_is_ignored_by_a_client() {
    let cfg = Arc::new(TcpConfig::default());
    let mut client =
        Connection::connect(cfg, CcKind::NewReno, ConnId(4), 77, Time::ZERO).expect("valid");
    let _ = syn_of(&mut client, Time::ZERO);
    for seq in [u64::MAX, MAX_ISN + 1] {
        let syn_ack = bare(ConnId(4), Flags::SYN | Flags::ACK, seq, 78, &[]);
        client.handle_datagram(Time::ZERO, &syn_ack).expect("valid");
        assert_eq!(client.state(), State::SynSent);
    }
}

#[test]
fn data_at_the_end_of_the_sequence_space_is_dropped_and_the_transfer_goes_on() {
    let mut pair = Pair::new(TcpConfig::default(), 5);
    let id = pair.client.conn_id();
    let payload = data(50_000, 5);
    let mut steps = 0;
    pair.transfer_with(&payload, 60.0, |pair| {
        steps += 1;
        if steps != 20 {
            return;
        }
        let now = pair.now;
        let server = pair.server.as_mut().expect("handshake done");
        for (seq, len, flags) in [
            (u64::MAX - 10, 100, Flags::ACK),
            (u64::MAX, 0, Flags::ACK | Flags::FIN),
            (u64::MAX - 99, 100, Flags::ACK | Flags::FIN),
            (u64::MAX - 99, 100, Flags::ACK),
        ] {
            let seg = bare(id, flags, seq, 1, &vec![7; len]);
            let _ = server.handle_datagram(now, &seg);
        }
    });
    assert!(steps >= 20);
    assert_eq!(pair.received, payload);
}

#[test]
fn the_client_isn_is_the_hosts_and_must_be_below_2_to_the_62() {
    let cfg = Arc::new(TcpConfig::default());
    for isn in [0, 1, 12_345, MAX_ISN] {
        let mut c = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(1), isn, Time::ZERO)
            .expect("valid");
        let syn = syn_of(&mut c, Time::ZERO);
        assert_eq!(Segment::decode(&syn).expect("valid").seq, isn);
        assert_eq!(c.initial_seq(), isn);
    }
    for isn in [MAX_ISN + 1, u64::MAX] {
        let e = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(1), isn, Time::ZERO);
        assert_eq!(e.err(), Some(OpenError::IsnOutOfRange(isn)));
    }
}

#[test]
fn the_server_isn_is_a_cookie_that_differs_by_peer_connection_and_client_isn() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let mut server_isn = |peer: &str, id: u64, isn: u64| {
        let mut c = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(id), isn, Time::ZERO)
            .expect("valid");
        let syn = syn_of(&mut c, Time::ZERO);
        let (u, reply) = answer(&mut a, Time::ZERO, peer, &syn);
        assert!(matches!(u, Unknown::Reply { .. }));
        let seg = Segment::decode(&reply).expect("valid");
        assert_eq!(seg.flags, Flags::SYN | Flags::ACK);
        assert_eq!(seg.ack, isn + 1);
        assert!(seg.seq <= MAX_ISN);
        seg.seq
    };
    let base = server_isn("a", 1, 100);
    assert_eq!(
        base,
        server_isn("a", 1, 100),
        "stateless: the same SYN, the same answer"
    );
    assert_ne!(base, server_isn("b", 1, 100));
    assert_ne!(base, server_isn("a", 2, 100));
    assert_ne!(base, server_isn("a", 1, 101));
}

#[test]
fn a_syn_ack_is_never_larger_than_the_syn() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    // Every combination of the options a SYN may carry, and a little payload.
    for mss in [None, Some(100), Some(9000)] {
        for sack_permitted in [false, true] {
            for payload in [&[][..], &[1, 2]] {
                let syn = encode(&Segment {
                    conn_id: ConnId(5),
                    flags: Flags::SYN,
                    seq: 100,
                    ack: 0,
                    window: 1000,
                    ts_val: 3,
                    ts_ecr: 0,
                    options: Options {
                        mss,
                        sack_permitted,
                        ..Options::default()
                    },
                    payload,
                });
                // `answer` checks every reply's size against the SYN's.
                let (u, reply) = answer(&mut a, Time::ZERO, CLIENT_ADDR, &syn);
                match u {
                    Unknown::Reply { .. } => {
                        let seg = Segment::decode(&reply).expect("valid");
                        assert_eq!(seg.options.sack_permitted, sack_permitted);
                        assert_eq!(seg.ts_ecr, 3, "echoes the SYN's timestamp");
                    }
                    // Without the MSS option a SYN is 4 bytes short of its answer.
                    Unknown::Drop => assert!(mss.is_none()),
                    other => panic!("{other:?}"),
                }
            }
        }
    }
    // A bare SYN is too small to answer (an answer carries the MSS option).
    let (u, _) = answer(
        &mut a,
        Time::ZERO,
        CLIENT_ADDR,
        &bare(ConnId(5), Flags::SYN, 1, 0, &[]),
    );
    assert!(matches!(u, Unknown::Drop));
    // Our own clients' SYNs are answered with exactly their size.
    for sack in [false, true] {
        let cfg = Arc::new(TcpConfig {
            sack,
            ..TcpConfig::default()
        });
        let mut c = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(2), 5, Time::ZERO)
            .expect("valid");
        let syn = syn_of(&mut c, Time::ZERO);
        let (_, reply) = answer(&mut acceptor(&cfg), Time::ZERO, CLIENT_ADDR, &syn);
        assert_eq!(reply.len(), syn.len());
    }
}

/// The client's SYN and the server's SYN-ACK, the server's reply delivered to the client;
/// returns the client (established, not yet having sent its ACK) and the SYN-ACK.
fn half_handshake(cfg: &Arc<TcpConfig>, a: &mut TcpAcceptor, now: Time) -> (Connection, Vec<u8>) {
    let mut client =
        Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(4), 1000, now).expect("valid");
    let syn = syn_of(&mut client, now);
    let (u, syn_ack) = answer(a, now, CLIENT_ADDR, &syn);
    assert!(matches!(u, Unknown::Reply { .. }));
    client.handle_datagram(now, &syn_ack).expect("valid");
    assert_eq!(client.state(), State::Established);
    (client, syn_ack)
}

#[test]
fn an_ack_that_echoes_no_syn_ack_does_not_open_a_connection() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let now = Time::from_secs_f64(10.0);
    let (mut client, syn_ack) = half_handshake(&cfg, &mut a, now);
    let cookie = Segment::decode(&syn_ack).expect("valid").seq;
    // A blind attacker spoofing the client guesses acknowledgement numbers (the cookie + 1
    // would be right).
    for ack in [
        0,
        1,
        2,
        3,
        cookie,
        cookie + 2,
        (cookie + 1) ^ 1 << 20,
        u64::MAX,
    ] {
        let forged = bare(ConnId(4), Flags::ACK, 1001, ack, &[]);
        let (u, _) = answer(&mut a, now, CLIENT_ADDR, &forged);
        assert!(!matches!(u, Unknown::Accept(_)), "ack {ack}");
    }
    // The real ACK, from another address or on another connection id, or too late.
    let mut ack = Vec::new();
    client
        .poll_transmit(now, &mut ack)
        .expect("the handshake ACK");
    let (u, _) = answer(&mut a, now, "10.9.9.9:1", &ack);
    assert!(!matches!(u, Unknown::Accept(_)));
    let mut other_id = Segment::decode(&ack).expect("valid");
    other_id.conn_id = ConnId(5);
    let (u, _) = answer(&mut a, now, CLIENT_ADDR, &encode(&other_id));
    assert!(!matches!(u, Unknown::Accept(_)));
    let (u, _) = answer(&mut a, now + TOKEN_SLOT * 2, CLIENT_ADDR, &ack);
    assert!(!matches!(u, Unknown::Accept(_)));
    // In time, from the right address: a connection.
    let (u, _) = answer(&mut a, now + Duration::from_millis(5), CLIENT_ADDR, &ack);
    let Unknown::Accept(mut server) = u else {
        panic!("{u:?}")
    };
    assert_eq!(server.state(), State::Established);
    assert_eq!(server.initial_seq(), cookie);
    assert_eq!(server.poll_event(), Some(Event::Connected));
    assert_eq!(a.stats().accepted, 1);
}

#[test]
fn a_later_segment_of_a_handshake_in_progress_is_dropped_and_anything_else_reset() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let now = Time::ZERO;
    let (_client, syn_ack) = half_handshake(&cfg, &mut a, now);
    let cookie = Segment::decode(&syn_ack).expect("valid").seq;
    // The client's second data segment, its first one lost.
    let later = bare(ConnId(4), Flags::ACK, 1001 + 1000, cookie + 1, &[1; 1000]);
    let (u, _) = answer(&mut a, now, CLIENT_ADDR, &later);
    assert!(matches!(u, Unknown::Drop), "{u:?}");
    assert_eq!(a.stats().early_segments, 1);
    // A segment for a connection this server never had (or forgot): a reset, RFC 793 style.
    let stray = bare(ConnId(8), Flags::ACK, 50, 12_345, &[1; 10]);
    let (u, rst) = answer(&mut a, now, CLIENT_ADDR, &stray);
    assert!(matches!(u, Unknown::Reset { .. }), "{u:?}");
    let rst = Segment::decode(&rst).expect("valid");
    assert_eq!(rst.flags, Flags::RST);
    assert_eq!(rst.seq, 12_345);
    assert_eq!(rst.conn_id, ConnId(8));
    // Never an answer to a reset, a stray SYN-ACK, a segment without ACK or garbage.
    for quiet in [
        bare(ConnId(8), Flags::RST, 50, 12_345, &[]),
        bare(ConnId(8), Flags::RST | Flags::ACK, 50, 12_345, &[]),
        bare(ConnId(8), Flags::SYN | Flags::ACK, 50, 12_345, &[]),
        bare(ConnId(8), Flags::FIN, 50, 0, &[]),
        bare(ConnId(8), Flags(0), 50, 0, &[1; 100]),
        vec![0xff; 64],
        Vec::new(),
    ] {
        let (u, _) = answer(&mut a, now, CLIENT_ADDR, &quiet);
        assert!(matches!(u, Unknown::Drop), "{u:?}");
    }
}

#[test]
fn a_reset_from_a_server_that_forgot_the_connection_closes_the_client() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let now = Time::ZERO;
    let (mut client, _) = half_handshake(&cfg, &mut a, now);
    client.write(&[1; 10]);
    let mut seg = Vec::new();
    client.poll_transmit(now, &mut seg).expect("data");
    // Another server (another key) never issued that cookie.
    let mut out = Vec::new();
    let u = a.on_unknown(now, &TokenKey::new([3; 16]), CLIENT_ADDR, &seg, &mut out);
    let Unknown::Reset { len } = u else {
        panic!("{u:?}")
    };
    client.handle_datagram(now, &out[..len]).expect("valid");
    assert!(client.is_closed());
    assert!(std::iter::from_fn(|| client.poll_event()).any(|e| e == Event::Reset));
}

#[test]
fn the_handshake_survives_a_lost_syn_ack_and_a_lost_first_data_segment() {
    // With TCP-Probing a timeout sends probes, not the data: the first probe (at ISN + 1 while
    // the client has not heard from the server) opens the connection and is answered.
    for (lost, recovery) in [
        (false, RecoveryMode::Standard),
        (true, RecoveryMode::Standard),
        (true, RecoveryMode::Probing),
    ] {
        let cfg = TcpConfig {
            recovery,
            ..TcpConfig::default()
        };
        let mut pair = Pair::new(cfg, 11);
        // Datagram 0 to the client is the SYN-ACK; datagram 1 to the server the first data
        // segment (the client wrote before the handshake completed, so it sends no pure ACK).
        let mut n = [0u32; 2];
        pair.drop_filter = Some(Box::new(move |to_server, _| {
            let k = usize::from(to_server);
            n[k] += 1;
            let first = n[k] == 1 + u32::from(to_server);
            !(first && (to_server == lost))
        }));
        let payload = data(30_000, 11);
        pair.transfer(&payload, 60.0);
        assert_eq!(
            pair.received,
            payload,
            "lost {}",
            if lost { "data" } else { "SYN-ACK" }
        );
        assert_eq!(pair.acceptor.stats().accepted, 1);
        assert_eq!(pair.acceptor.stats().resets, 0);
        // Either loss costs one initial RTO (1 s): the client's SYN or data retransmission.
        assert!(pair.now > Time::from_secs_f64(1.0));
        if recovery == RecoveryMode::Probing {
            let st = pair.client.sender().stats();
            assert_eq!((st.probe_cycles, st.timeouts), (1, 1), "{st:?}");
        }
    }
}

#[test]
fn later_segments_arriving_first_are_dropped_and_the_retransmission_completes() {
    let cfg = TcpConfig {
        initial_window: 4,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 12);
    let mut to_server = 0;
    pair.drop_filter = Some(Box::new(move |server, bytes| {
        if !server {
            return true;
        }
        to_server += 1;
        // The SYN is 1; the first data segment 2.
        !(to_server == 2 && Segment::decode(bytes).is_ok_and(|s| !s.payload.is_empty()))
    }));
    let payload = data(40_000, 12);
    pair.transfer(&payload, 60.0);
    assert_eq!(pair.received, payload);
    let s = pair.acceptor.stats();
    assert_eq!((s.accepted, s.resets), (1, 0));
    assert!(s.early_segments >= 3, "{s:?}");
}

#[test]
fn both_ends_take_an_rtt_sample_from_the_handshake() {
    let mut pair = Pair::new(TcpConfig::default(), 13);
    pair.transfer(&data(5_000, 13), 10.0);
    // Propagation 2 × 20 ms plus serialisation of a few small datagrams at 1.25 MB/s.
    let server = pair.server.as_ref().expect("accepted");
    for (who, srtt) in [
        ("client", pair.client.sender().rtt().srtt()),
        ("server", server.sender().rtt().srtt()),
    ] {
        let srtt = srtt.unwrap_or_else(|| panic!("{who}: no sample"));
        assert!(
            srtt >= Duration::from_millis(40) && srtt < Duration::from_millis(60),
            "{who}: {srtt:?}"
        );
    }
}

/// A client with nothing to send and a server that writes first: the client's handshake ACK
/// is lost, so it repeats it until the server answers.
#[test]
fn a_lost_handshake_ack_is_repeated_until_the_server_answers() {
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let mut now = Time::ZERO;
    let mut client =
        Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(6), 4242, now).expect("valid");
    let mut server: Option<Connection> = None;
    // (arrival, to the server?, bytes) on a 10 ms wire; the first two datagrams to the server
    // after the SYN (the handshake ACK and its first repetition) are lost.
    let mut wire: VecDeque<(Time, bool, Vec<u8>)> = VecDeque::new();
    let mut to_server = 0;
    let mut accepted_by = None;
    let mut received = Vec::new();
    let mut buf = Vec::new();
    let reply = b"hello from the server";
    while now < Time::from_secs_f64(30.0) && received.len() < reply.len() {
        while client.poll_transmit(now, &mut buf).is_some() {
            to_server += 1;
            if !(2..=3).contains(&to_server) {
                wire.push_back((now + Duration::from_millis(10), true, buf.clone()));
            }
        }
        if let Some(s) = server.as_mut() {
            while s.poll_transmit(now, &mut buf).is_some() {
                wire.push_back((now + Duration::from_millis(10), false, buf.clone()));
            }
        }
        client.read(&mut received, usize::MAX);
        let deadline = [
            client.poll_timeout(),
            server.as_ref().and_then(|s| s.poll_timeout()),
        ]
        .into_iter()
        .flatten()
        .min();
        match (wire.front().map(|w| w.0), deadline) {
            (Some(at), d) if d.is_none_or(|d| at <= d) => {
                let (at, to_srv, bytes) = wire.pop_front().expect("non-empty");
                now = at;
                match (to_srv, server.as_mut()) {
                    (true, Some(s)) => s.handle_datagram(now, &bytes).expect("valid"),
                    (true, None) => {
                        let mut out = Vec::new();
                        match a.on_unknown(now, &key(), CLIENT_ADDR, &bytes, &mut out) {
                            Unknown::Accept(mut s) => {
                                accepted_by = Some(to_server);
                                assert_eq!(s.write(reply), reply.len());
                                server = Some(s);
                            }
                            Unknown::Reply { len } => wire.push_back((
                                now + Duration::from_millis(10),
                                false,
                                out[..len].to_vec(),
                            )),
                            other => panic!("{other:?}"),
                        }
                    }
                    (false, _) => client.handle_datagram(now, &bytes).expect("valid"),
                }
            }
            (_, Some(d)) => {
                now = now.max(d);
                client.handle_timeout(now);
                if let Some(s) = server.as_mut() {
                    s.handle_timeout(now);
                }
            }
            _ => break,
        }
    }
    assert_eq!(received, reply);
    assert_eq!(accepted_by, Some(4), "SYN, two lost ACKs, the third ACK");
    // The first repetition after about one RTO (1 s), the second after two more.
    assert!(
        now > Time::from_secs_f64(3.0) && now < Time::from_secs_f64(4.0),
        "{now:?}"
    );
}

#[test]
fn a_client_whose_handshake_ack_never_arrives_gives_up() {
    let cfg = Arc::new(TcpConfig {
        max_syn_retries: 2,
        ..TcpConfig::default()
    });
    let mut a = acceptor(&cfg);
    let (mut client, _) = half_handshake(&cfg, &mut a, Time::ZERO);
    let mut buf = Vec::new();
    let mut acks = 0;
    while let Some(t) = client.poll_timeout() {
        while client.poll_transmit(t, &mut buf).is_some() {
            acks += 1;
        }
        client.handle_timeout(t);
    }
    while client.poll_transmit(Time::MAX, &mut buf).is_some() {
        acks += 1;
    }
    assert_eq!(acks, 3, "the ACK and two repetitions");
    assert!(client.is_closed());
    assert!(std::iter::from_fn(|| client.poll_event()).any(|e| e == Event::TimedOut));
}

#[test]
fn a_connection_meets_the_endpoint_contract() {
    let mut pair = Pair::new(TcpConfig::default(), 14);
    let payload = data(20_000, 14);
    pair.transfer(&payload, 60.0);
    assert_eq!(pair.received, payload);
    let server = pair.server.as_mut().expect("accepted");
    let mut ids = Vec::new();
    EndpointConnection::conn_ids(server, &mut ids);
    assert_eq!(ids, vec![(pair.client.conn_id(), PathId::PRIMARY)]);
    let cfg = TcpConfig::default();
    let bound = EndpointConnection::memory_bound(server);
    assert!(bound as u64 > cfg.recv_buffer + cfg.send_buffer, "{bound}");
    // docs/HANDSHAKE.md, "Memory": about 9.1 MiB with the defaults.
    let mib = bound as f64 / f64::from(1 << 20);
    assert!((8.95..9.2).contains(&mib), "{mib} MiB");
    // Both ended cleanly; drained once their events are taken.
    for c in [&mut pair.client, server] {
        assert!(c.is_closed());
        while c.poll_event().is_some() {}
        assert!(EndpointConnection::is_drained(c));
    }
    // A segment of garbage is the only input that yields no output through the trait too.
    let mut buf = Vec::new();
    let c = &mut pair.client;
    EndpointConnection::handle_datagram(c, pair.now, PathId::PRIMARY, &[1, 2, 3]);
    assert!(EndpointConnection::poll_transmit(c, pair.now, &mut buf).is_none());
    assert_eq!(c.stats().malformed_received, 1);
}

#[test]
fn a_server_first_segment_of_any_size_gets_no_reply_larger_than_itself() {
    // Headers only: what the acceptor writes for SYNs and resets is fixed-size, and every
    // decodable segment is at least this long.
    let cfg = Arc::new(TcpConfig::default());
    let mut a = acceptor(&cfg);
    let stray = bare(ConnId(1), Flags::ACK, 1, 1, &[]);
    assert_eq!(stray.len(), SEGMENT_FIXED_LEN);
    let (u, rst) = answer(&mut a, Time::ZERO, CLIENT_ADDR, &stray);
    assert!(matches!(u, Unknown::Reset { .. }));
    assert_eq!(rst.len(), SEGMENT_FIXED_LEN);
}

/// Handshake timers back off without overflowing, whatever the configured timeouts.
#[test]
fn absurd_timer_settings_back_off_without_overflow() {
    let cfg = Arc::new(TcpConfig {
        initial_rto_ms: u64::MAX,
        min_rto_ms: u64::MAX / 2,
        max_rto_ms: u64::MAX,
        // Ten doublings of u64::MAX ms pass Duration's range.
        max_syn_retries: 12,
        ..TcpConfig::default()
    });
    let mut a = acceptor(&cfg);
    let (mut unconfirmed, _) = half_handshake(&cfg, &mut a, Time::ZERO);
    let mut syn_sent =
        Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(1), 1, Time::ZERO).expect("ok");
    let mut buf = Vec::new();
    for c in [&mut unconfirmed, &mut syn_sent] {
        for _ in 0..20 {
            while c.poll_transmit(Time::MAX, &mut buf).is_some() {}
            match c.poll_timeout() {
                Some(t) => c.handle_timeout(t),
                None => break,
            }
        }
    }
}
