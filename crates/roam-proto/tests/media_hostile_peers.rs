//! RCP-ATL media under hostile peers (issue 16): a sink's host answers a source nobody
//! validated with no more bytes than it received and keeps no state for it; a sink belongs to
//! one connection, so a forged packet cannot take it over. Each test here failed against the
//! engine before the fix (the first commit of this series shows them against the old API).

use std::time::Duration;

use proptest::prelude::*;
use roam_proto::endpoint::{Acceptor, EndpointConnection, TokenKey, Unknown};
use roam_proto::linkinfo::LinkInfo;
use roam_proto::media::{MediaAcceptor, MediaConfig, MediaReceiver, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::{ConnId, MediaPacket, MediaReport, Token, TOKEN_LEN};

fn packet(conn: u64, seq: u64, payload: &[u8], token: Option<Token>) -> Vec<u8> {
    let mut out = Vec::new();
    MediaPacket {
        conn_id: ConnId(conn),
        seq,
        send_time_us: 0,
        rate_bps: 0,
        token,
        payload,
    }
    .encode(&mut out);
    out
}

fn key() -> TokenKey {
    TokenKey::new(*b"media-test-key!!")
}

/// The sink answers every packet with a report: a small packet with a forged source address
/// made it send more bytes to the victim than the attacker sent. Now a report larger than
/// the packet is not sent (the next one carries the counts).
#[test]
fn a_report_is_never_larger_than_the_packet_it_answers() {
    let mut rx = MediaReceiver::new(ConnId(9), true, None, Time::ZERO);
    rx.set_link_info(
        Time::ZERO,
        LinkInfo {
            wireless: true,
            ..Default::default()
        },
    );
    let mut buf = Vec::new();
    for payload in [0usize, 10, 30, 1000] {
        let p = packet(9, payload as u64, &vec![0; payload], None);
        rx.handle_datagram(Time::ZERO, &p).expect("decodes");
        while let Some(n) = rx.poll_transmit(Time::ZERO, &mut buf) {
            assert!(
                n <= p.len(),
                "{n}-byte report for a {}-byte packet",
                p.len()
            );
            buf.clear();
        }
    }
    assert_eq!(
        rx.stats().packets,
        4,
        "every packet counted, reported or not"
    );
}

/// The sink adopted the connection of the first packet it saw: one forged packet arriving
/// first locked the real flow out. Now a sink belongs to the connection its acceptor opened
/// it for, and the forged packet opens nothing (its source never echoes a token).
#[test]
fn a_forged_first_packet_cannot_lock_out_the_real_flow() {
    let mut acceptor = MediaAcceptor::new(MediaConfig::default());
    let mut out = Vec::new();
    let forged = packet(666, 0, &[0; 100], None);
    assert!(matches!(
        acceptor.on_unknown(Time::ZERO, &key(), "victim", &forged, &mut out),
        Unknown::Reply { .. }
    ));
    let mut rx = MediaReceiver::new(ConnId(9), false, None, Time::ZERO);
    rx.handle_datagram(Time::ZERO, &forged).expect("decodes");
    for seq in 0..10 {
        rx.handle_datagram(Time::ZERO, &packet(9, seq, &[0; 100], None))
            .expect("decodes");
    }
    assert_eq!(rx.stats().packets, 10);
}

/// The handshake end to end: the sink's host answers the source's first packets with
/// stateless reports carrying a token, the source echoes it, the sink opens on the echo, its
/// reports carry no token and the source stops echoing. Loss counts from the first packet the
/// sink accepted, so the handshake costs no loss.
#[test]
fn the_source_echoes_the_token_until_the_sink_accepts() {
    let cfg = MediaConfig::default();
    let mut tx = MediaSender::new(cfg, RateKind::Atl, ConnId(9));
    let mut acceptor = MediaAcceptor::new(cfg);
    let mut sink: Option<MediaReceiver> = None;
    let mut now = Time::ZERO;
    let mut buf = Vec::new();
    let mut stateless = 0;
    let mut echoed = 0;
    for _ in 0..2000 {
        now += Duration::from_millis(5);
        while let Some(n) = tx.poll_transmit(now, &mut buf) {
            let p = buf[buf.len() - n..].to_vec();
            buf.clear();
            if MediaPacket::decode(&p).expect("media").token.is_some() {
                echoed += 1;
            }
            match sink.as_mut() {
                Some(rx) => {
                    rx.handle_datagram(now, &p).expect("decodes");
                    while rx.poll_transmit(now, &mut buf).is_some() {
                        let r = MediaReport::decode(&buf).expect("report");
                        assert!(r.token.is_none());
                        tx.handle_datagram(now, &buf).expect("report");
                        buf.clear();
                    }
                }
                None => match acceptor.on_unknown(now, &key(), "source", &p, &mut buf) {
                    Unknown::Reply { len } => {
                        assert!(len <= p.len());
                        stateless += 1;
                        tx.handle_datagram(now, &buf[..len]).expect("report");
                        buf.clear();
                    }
                    Unknown::Accept(mut rx) => {
                        buf.clear();
                        while rx.poll_transmit(now, &mut buf).is_some() {
                            tx.handle_datagram(now, &buf).expect("report");
                            buf.clear();
                        }
                        sink = Some(rx);
                    }
                    other => panic!("{other:?}"),
                },
            }
        }
        tx.handle_timeout(now);
    }
    let rx = sink.expect("the sink opened");
    assert_eq!(stateless, 1, "one packet answered without state");
    assert_eq!(echoed, 1, "the token rode in one packet");
    assert!(!tx.echoing_token());
    assert_eq!(rx.stats().packets + 1, tx.stats().packets_sent);
    assert_eq!(tx.stats().decreases, 0, "the handshake cost no loss");
}

proptest! {
    /// Whatever arrives for no flow, the acceptor never answers with more bytes than it
    /// received, and opens a sink only for an echo of a token it issued to that address.
    #[test]
    fn stateless_answers_are_never_larger_than_their_cause(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        seq in any::<u64>(),
        payload in 0usize..200,
        token in proptest::option::of(any::<[u8; TOKEN_LEN]>().prop_map(Token)),
    ) {
        let mut acceptor = MediaAcceptor::new(MediaConfig::default());
        let mut out = Vec::new();
        for d in [bytes, packet(3, seq, &vec![1; payload], token)] {
            match acceptor.on_unknown(Time::ZERO, &key(), "a", &d, &mut out) {
                Unknown::Reply { len } | Unknown::Reset { len } => {
                    prop_assert!(len <= d.len());
                }
                Unknown::Accept(rx) => prop_assert!(false, "opened {:?}", rx.conn_id()),
                Unknown::Drop => {}
            }
        }
    }
}

/// A sink expires after its idle timeout, and the host may then forget it.
#[test]
fn an_idle_sink_expires() {
    let mut rx = MediaReceiver::new(ConnId(1), false, Some(Duration::from_secs(5)), Time::ZERO);
    rx.handle_datagram(Time::from_secs_f64(1.0), &packet(1, 0, &[0; 100], None))
        .expect("decodes");
    let mut buf = Vec::new();
    while rx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    assert_eq!(
        EndpointConnection::poll_timeout(&rx),
        Some(Time::from_secs_f64(6.0))
    );
    EndpointConnection::handle_timeout(&mut rx, Time::from_secs_f64(5.9));
    assert!(!rx.is_drained());
    EndpointConnection::handle_timeout(&mut rx, Time::from_secs_f64(6.0));
    assert!(rx.is_drained());
}
