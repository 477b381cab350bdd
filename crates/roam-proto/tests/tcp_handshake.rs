//! Issue 16, written against the engine before the fix: one SYN or one data segment near the
//! end of the sequence space panics a server, and handshakes prove nothing (a constant ISN,
//! any ACK completes a server's handshake, a SYN-ACK larger than the SYN that earned it).
//! These tests fail on that engine; they are ignored until the fix rewrites them.

mod support;

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::tcp::{Connection, State, TcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, Flags, Options, Segment};
use support::Pair;

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

#[test]
fn a_syn_at_the_end_of_the_sequence_space_does_not_panic_a_server() {
    let syn = bare(ConnId(9), Flags::SYN, u64::MAX, 0, &[]);
    let cfg = Arc::new(TcpConfig::default());
    let _ = Connection::accept(cfg, CcKind::NewReno, Time::ZERO, &syn);
}

#[test]
fn data_at_the_end_of_the_sequence_space_is_dropped_and_the_transfer_goes_on() {
    let mut pair = Pair::new(TcpConfig::default(), 5);
    let id = pair.client.conn_id();
    let payload = support::data(50_000, 5);
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
#[ignore = "issue 16: fails before the fix"]
fn an_ack_that_echoes_no_syn_ack_does_not_open_a_connection() {
    let cfg = Arc::new(TcpConfig::default());
    let mut client = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(4), Time::ZERO)
        .expect("valid config");
    let mut syn = Vec::new();
    client.poll_transmit(Time::ZERO, &mut syn).expect("a SYN");
    let now = Time::from_millis(10);
    let mut server = Connection::accept(cfg, CcKind::NewReno, now, &syn).expect("a SYN");
    // A blind attacker (spoofing the client) acknowledges a SYN-ACK it never saw.
    let forged = bare(ConnId(4), Flags::ACK, 1, 1, &[]);
    let _ = server.handle_datagram(now, &forged);
    assert_ne!(server.state(), State::Established);
}

#[test]
#[ignore = "issue 16: fails before the fix"]
fn two_connections_start_at_different_sequence_numbers() {
    let cfg = Arc::new(TcpConfig::default());
    let seq_of_syn = |id| {
        let mut c = Connection::connect(cfg.clone(), CcKind::NewReno, ConnId(id), Time::ZERO)
            .expect("valid config");
        let mut buf = Vec::new();
        c.poll_transmit(Time::ZERO, &mut buf).expect("a SYN");
        Segment::decode(&buf).expect("valid").seq
    };
    assert_ne!(seq_of_syn(1), seq_of_syn(2));
}

#[test]
#[ignore = "issue 16: fails before the fix"]
fn a_syn_ack_is_never_larger_than_the_syn() {
    // A SYN without options: the smallest a segment can be.
    let syn = bare(ConnId(5), Flags::SYN, 100, 0, &[]);
    let cfg = Arc::new(TcpConfig::default());
    let now = Time::ZERO;
    if let Ok(mut server) = Connection::accept(cfg, CcKind::NewReno, now, &syn) {
        let mut reply = Vec::new();
        if server.poll_transmit(now, &mut reply).is_some() {
            assert!(reply.len() <= syn.len(), "{} > {}", reply.len(), syn.len());
        }
    }
}
