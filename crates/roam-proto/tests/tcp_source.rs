//! Payload pulled from a byte source when a segment is encoded: the stream arrives intact
//! under loss, reordering and duplication (retransmissions read the same range again), the
//! transfer is the same datagram for datagram as one whose bytes were copied in, and the
//! sender holds no payload.

mod support;

use std::sync::Arc;

use proptest::prelude::*;
use roam_proto::source::VecSource;
use roam_proto::tcp::TcpConfig;
use support::{data, Impair, Pair};

/// Pushes `data` through `pair`'s client from a source instead of writing it, then closes.
fn transfer_from_source(pair: &mut Pair, data: &[u8], limit: f64) {
    assert!(pair.client.set_source(Box::new(VecSource(Arc::from(data)))));
    let mut pushed = 0u64;
    let mut closed = false;
    let end = roam_proto::Time::from_secs_f64(limit);
    // The same loop as `Pair::transfer`: a writer with bytes left tries again a millisecond
    // later, and the close comes on the round after the last byte went in.
    while pair.now < end {
        if pushed < data.len() as u64 {
            pushed += pair.client.push(data.len() as u64 - pushed);
            pair.writer_waiting = pushed < data.len() as u64;
        } else if !closed {
            pair.client.close();
            closed = true;
        }
        if !pair.step() {
            break;
        }
        if closed && pair.client.is_closed() && pair.server.as_ref().is_some_and(|s| s.is_closed())
        {
            break;
        }
    }
}

fn impaired(seed: u64, loss: f64) -> Pair {
    let cfg = TcpConfig {
        send_buffer: 64 << 10,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, seed);
    let imp = Impair {
        loss,
        reorder: 0.05,
        duplicate: 0.02,
        blackout: None,
    };
    p.fwd = imp;
    p.rev = imp;
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_source_stream_arrives_intact_and_like_a_copied_one(seed in any::<u64>(), loss in 0.0f64..0.1) {
        let payload = data(300_000, seed);
        let mut copied = impaired(seed, loss);
        copied.transfer(&payload, 600.0);
        let mut sourced = impaired(seed, loss);
        transfer_from_source(&mut sourced, &payload, 600.0);
        prop_assert_eq!(sourced.received.len(), payload.len());
        prop_assert!(sourced.received == payload, "bytes differ");
        // Same bytes on the wire at the same times: the same run.
        prop_assert_eq!(sourced.datagrams, copied.datagrams);
        prop_assert_eq!(sourced.now, copied.now);
    }
}

#[test]
fn a_sender_with_a_source_holds_no_payload() {
    let cfg = TcpConfig {
        send_buffer: 4 << 20,
        ..TcpConfig::default()
    };
    let mut copied = Pair::new(cfg.clone(), 1);
    let mut sourced = Pair::new(cfg, 1);
    assert!(sourced
        .client
        .set_source(Box::new(VecSource(Arc::from(vec![0u8; 1 << 20])))));
    assert_eq!(sourced.client.push(1 << 20), 1 << 20);
    assert_eq!(
        sourced.client.write(b"ignored"),
        0,
        "write is for copied bytes"
    );
    copied.client.write(&vec![0u8; 1 << 20]);
    let held = |p: &Pair| roam_proto::endpoint::EndpointConnection::memory_bound(&p.client);
    // The bound drops by exactly the send buffer: what remains is the receive buffer and the
    // scoreboard's records.
    assert_eq!(held(&copied) - held(&sourced), 4 << 20);
}
