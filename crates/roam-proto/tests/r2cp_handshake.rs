//! R²CP pipes do the RCP receiver's half of the token handshake (docs/HANDSHAKE-RCP.md): an
//! unchanged RCP sender host answers a pipe's SYN statelessly with a token and opens only for
//! a request that echoes it; the pipe echoes it (with the object name) until its first DATA.

mod r2cp_support;

use std::sync::Arc;

use r2cp_support::{drain, spec, Store};
use roam_proto::endpoint::{Acceptor, PathId, TokenKey, Unknown};
use roam_proto::r2cp::{R2cpReceiver, Scheme};
use roam_proto::rcp::{RcpAcceptor, RcpConfig, RcpSender};
use roam_proto::Time;
use roam_wire::{Flags, Request};

#[test]
fn each_pipe_echoes_its_senders_token_until_its_first_data() {
    let config = Arc::new(RcpConfig::default());
    let mut rx = R2cpReceiver::new(config.clone(), Scheme::Rank, b"obj", (0, u64::MAX)).unwrap();
    let mut acceptor = RcpAcceptor::new(config, Arc::new(Store(100_000)));
    let key = TokenKey::new(*b"r2cp-handshake-k");
    let now = Time::ZERO;
    rx.add_pipe(now, spec(0x77, 0)).unwrap();
    rx.add_pipe(now, spec(0x77, 1)).unwrap();

    // SYNs: the host answers each without state, with a token.
    let syns = drain(&mut rx, now);
    assert_eq!(syns.len(), 2);
    for (path, syn) in &syns {
        let mut reply = Vec::new();
        let Unknown::Reply { len } = acceptor.on_unknown(now, &key, path, syn, &mut reply) else {
            panic!("a SYN+ACK for the SYN on {path:?}");
        };
        assert!(len <= syn.len(), "the SYN+ACK is no larger than the SYN");
        rx.handle_datagram(now, &reply[..len]).unwrap();
    }

    // The requests after the SYN+ACK echo the token and name the object; the host opens a
    // sender for each pipe only through them.
    let mut senders: Vec<(PathId, RcpSender)> = Vec::new();
    for (path, req) in drain(&mut rx, now) {
        let r = Request::decode(&req).unwrap();
        assert!(r.flags.contains(Flags::ACK) && !r.flags.contains(Flags::SYN));
        assert!(r.token.is_some(), "a request before DATA echoes the token");
        assert_eq!(r.object, b"obj");
        if senders.iter().any(|(p, _)| *p == path) {
            continue;
        }
        let mut out = Vec::new();
        match acceptor.on_unknown(now, &key, &path, &req, &mut out) {
            Unknown::Accept(mut tx) => {
                let _ = tx.handle_datagram(now, &req);
                senders.push((path, tx));
            }
            _ => panic!("the echo opens the sender on {path:?}"),
        }
    }
    assert_eq!(senders.len(), 2, "both pipes opened their sender");

    // A token echoed from another path's SYN+ACK does not verify.
    let forged = drain_after_syn_ack_on_other_path();
    assert!(!matches!(
        acceptor.on_unknown(now, &key, &PathId(9), &forged, &mut Vec::new()),
        Unknown::Accept(_)
    ));

    // Once DATA arrives through a pipe, its requests stop echoing.
    let mut buf = Vec::new();
    for (_, tx) in &mut senders {
        while let Some(len) = tx.poll_transmit(now, &mut buf) {
            rx.handle_datagram(now, &buf[..len]).unwrap();
        }
    }
    let later = Time::from_millis(10);
    for (path, req) in drain(&mut rx, later) {
        let r = Request::decode(&req).unwrap();
        assert!(r.token.is_none(), "no token after DATA on {path:?}");
        assert!(r.object.is_empty());
    }
}

/// A request echoing a token issued to path 0, to be presented from path 9.
fn drain_after_syn_ack_on_other_path() -> Vec<u8> {
    let config = Arc::new(RcpConfig::default());
    let mut rx = R2cpReceiver::new(config.clone(), Scheme::Rank, b"obj", (0, u64::MAX)).unwrap();
    let mut acceptor = RcpAcceptor::new(config, Arc::new(Store(100_000)));
    let key = TokenKey::new(*b"r2cp-handshake-k");
    rx.add_pipe(Time::ZERO, spec(0x77, 0)).unwrap();
    let (path, syn) = drain(&mut rx, Time::ZERO).remove(0);
    let mut reply = Vec::new();
    let Unknown::Reply { len } = acceptor.on_unknown(Time::ZERO, &key, &path, &syn, &mut reply)
    else {
        panic!("a SYN+ACK");
    };
    rx.handle_datagram(Time::ZERO, &reply[..len]).unwrap();
    drain(&mut rx, Time::ZERO).remove(0).1
}
