//! End-to-end behaviour of the TCP engine between two endpoints in virtual time.

mod support;

use roam_proto::tcp::{Event, State, TcpConfig};
use support::{data, Impair, Pair};

#[test]
fn clean_path_delivers_everything_and_closes_both_ends() {
    let mut p = Pair::new(TcpConfig::default(), 1);
    let d = data(300_000, 1);
    p.transfer(&d, 60.0);
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
    assert!(p.server_events.contains(&Event::Eof));
    assert_eq!(p.client.state(), State::Closed);
    assert_eq!(p.client.stats().sender.retransmitted_segments, 0);
}

#[test]
fn lossy_path_with_sack_delivers_everything() {
    let mut p = Pair::new(TcpConfig::default(), 2);
    p.fwd.loss = 0.05;
    p.rev.loss = 0.05;
    let d = data(200_000, 2);
    p.transfer(&d, 600.0);
    assert_eq!(p.received.len(), d.len());
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
    assert!(p.client.stats().sender.retransmitted_segments > 0);
}

#[test]
fn lossy_path_with_newreno_delivers_everything() {
    let cfg = TcpConfig {
        sack: false,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, 3);
    p.fwd.loss = 0.03;
    p.rev.loss = 0.03;
    let d = data(200_000, 3);
    p.transfer(&d, 600.0);
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
    assert!(!p.client.sack_enabled());
}

#[test]
fn reordering_duplication_and_blackout_preserve_the_stream() {
    let cfg = TcpConfig {
        delayed_ack: true,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, 4);
    p.fwd = Impair {
        loss: 0.02,
        reorder: 0.1,
        duplicate: 0.05,
        blackout: Some((1.0, 4.0)),
    };
    p.rev = Impair {
        loss: 0.02,
        reorder: 0.1,
        duplicate: 0.05,
        blackout: Some((1.5, 3.0)),
    };
    let d = data(400_000, 4);
    p.transfer(&d, 600.0);
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
}

#[test]
fn lost_syn_is_retransmitted() {
    let mut p = Pair::new(TcpConfig::default(), 5);
    let mut first = true;
    p.drop_filter = Some(Box::new(move |to_server, _| {
        if to_server && first {
            first = false;
            return false;
        }
        true
    }));
    let d = data(10_000, 5);
    p.transfer(&d, 30.0);
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
    assert!(
        p.now.as_secs_f64() > 1.0,
        "the SYN waited for the 1 s initial RTO"
    );
}
