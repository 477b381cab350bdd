//! Rank assignment and flow control on a two-pipe example with known RTTs (rcp-r2cp.txt
//! §4.3.1, Fig. 8; §3.3.4), driven by hand: the sender host's stateless SYN+ACKs arrive when
//! the test says, so each pipe's RTT is exactly its handshake's and no data moves the windows.

mod r2cp_support;

use std::sync::Arc;

use r2cp_support::{drain, spec, Store};
use roam_proto::endpoint::{Acceptor, PathId, TokenKey, Unknown};
use roam_proto::r2cp::{R2cpReceiver, Scheme};
use roam_proto::rcp::{RcpAcceptor, RcpConfig};
use roam_proto::Time;
use roam_wire::Request;

const MSS: u64 = 1000;

/// Global ranges pulled, lowest first.
type Ranges = Vec<(u64, u64)>;

/// The distinct global ranges pulled through `path` (a pull rides in several REQs, §3.3.1),
/// lowest first.
fn pulls(reqs: &[(PathId, Vec<u8>)], path: PathId) -> Ranges {
    let mut out: Ranges = reqs
        .iter()
        .filter(|(p, _)| *p == path)
        .flat_map(|(_, req)| {
            let r = Request::decode(req).unwrap();
            r.blocks()
                .iter()
                .map(|b| (b.start, b.end))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Pipe 0 (RTT 20 ms) and pipe 1 (RTT 80 ms), both with the initial window of two segments:
/// the requests each pipe sends once its SYN+ACK is in, and the receiver.
fn two_pipes(scheme: Scheme, recv_buffer: u64) -> (Ranges, Ranges, R2cpReceiver) {
    let config = Arc::new(RcpConfig {
        mss: MSS as u16,
        initial_window: 2,
        recv_buffer,
        ..RcpConfig::default()
    });
    let mut rx = R2cpReceiver::new(config.clone(), scheme, b"obj", (0, u64::MAX)).unwrap();
    let mut host = RcpAcceptor::new(config, Arc::new(Store(1_000_000)));
    let key = TokenKey::new(*b"r2cp-rank-test-k");
    rx.add_pipe(Time::ZERO, spec(0x40, 0)).unwrap();
    rx.add_pipe(Time::ZERO, spec(0x40, 1)).unwrap();
    let syns = drain(&mut rx, Time::ZERO);
    assert_eq!(syns.len(), 2);
    let mut fast = Vec::new();
    let mut slow = Vec::new();
    for (ms, (path, syn)) in [(20, &syns[0]), (80, &syns[1])] {
        let now = Time::from_millis(ms);
        let mut reply = Vec::new();
        let Unknown::Reply { len } = host.on_unknown(now, &key, path, syn, &mut reply) else {
            panic!("a SYN+ACK on {path:?}");
        };
        rx.handle_datagram(now, &reply[..len]).unwrap();
        let reqs = drain(&mut rx, now);
        fast.extend(pulls(&reqs, PathId(0)));
        slow.extend(pulls(&reqs, PathId(1)));
    }
    (fast, slow, rx)
}

/// Fig. 8 with numbers: the fast pipe (RTT 20 ms, 2 segments a round trip) issues
/// 2000 B × (80 − 20) / 20 = 6 segments' worth of requests whose data arrives before a request
/// sent now through the slow pipe, so the slow pipe's requests take the 7th and 8th unbound
/// segments; the fast pipe's rank is 1. FCFS gives the slow pipe the next unbound segments.
#[test]
fn the_slow_pipe_is_bound_past_what_the_fast_pipe_fetches_first() {
    let (fast, slow, _) = two_pipes(Scheme::Rank, 1 << 20);
    assert_eq!(
        fast,
        vec![(0, 1000), (1000, 2000)],
        "rank 1 for the fast pipe"
    );
    assert_eq!(
        slow,
        vec![(8000, 9000), (9000, 10_000)],
        "skip 6 segments of pending [2000, …)"
    );
    let (fast, slow, _) = two_pipes(Scheme::Fcfs, 1 << 20);
    assert_eq!(fast, vec![(0, 1000), (1000, 2000)]);
    assert_eq!(
        slow,
        vec![(2000, 3000), (3000, 4000)],
        "R²CP-s: next unbound"
    );
}

/// §3.3.4 charges the buffer per requested segment: with a 6-segment buffer the slow pipe's
/// rank-7 unit ends at 9000, beyond read point + buffer (where the former span rule refused
/// it and the slow pipe waited), but only 2 + 2 segments are requested: it is admitted.
#[test]
fn the_buffer_is_charged_per_requested_segment_not_by_span() {
    let (fast, slow, rx) = two_pipes(Scheme::Rank, 6 * MSS);
    assert_eq!(fast, vec![(0, 1000), (1000, 2000)]);
    assert_eq!(slow, vec![(8000, 9000), (9000, 10_000)]);
    assert!(10_000 > rx.read_point() + 6 * MSS, "beyond the span");
    assert_eq!(rx.charged(), 4 * MSS, "four requested segments reserved");
    // A 3-segment buffer: the fast pipe's two units leave room for one more; the slow pipe
    // takes its rank-7 unit and then waits rather than take a lower, later-arriving one.
    let (fast, slow, rx) = two_pipes(Scheme::Rank, 3 * MSS);
    assert_eq!(fast, vec![(0, 1000), (1000, 2000)]);
    assert_eq!(slow, vec![(8000, 9000)]);
    assert_eq!(rx.charged(), 3 * MSS);
}
