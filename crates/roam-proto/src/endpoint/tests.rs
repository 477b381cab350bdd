//! The endpoint's rules, each against a mock engine (sans-IO, virtual time).

use std::cell::Cell;
use std::collections::VecDeque;
use std::hash::Hash;
use std::rc::Rc;
use std::time::Duration;

use roam_wire::{ConnId, Flags, Header, PacketType};

use super::*;

/// A mock connection: records what it receives, sends what the test queues.
#[derive(Debug, Default)]
struct Mock {
    ids: Vec<(ConnId, PathId)>,
    received: Vec<(PathId, Vec<u8>)>,
    outbox: VecDeque<(PathId, Vec<u8>)>,
    timeout: Option<Time>,
    fired: usize,
    drained: bool,
    /// Reported by `is_finished` (set by the test).
    finished: bool,
    /// Drain after receiving a datagram with FIN.
    memory: usize,
    /// Counts `poll_transmit` calls (shared with the test).
    polls: Rc<Cell<usize>>,
    /// Says so when its last queued datagram leaves (`Outgoing::more`).
    hints_last: bool,
}

impl Mock {
    fn new(id: u64) -> Self {
        Mock {
            ids: vec![(ConnId(id), PathId::PRIMARY)],
            memory: 1000,
            ..Mock::default()
        }
    }
}

impl EndpointConnection for Mock {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.extend_from_slice(&self.ids);
    }
    fn handle_datagram(&mut self, _now: Time, path: PathId, datagram: &[u8]) {
        if Header::decode(datagram).is_ok_and(|h| h.flags.contains(Flags::FIN)) {
            self.drained = true;
        }
        self.received.push((path, datagram.to_vec()));
    }
    fn poll_transmit(&mut self, _now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.polls.set(self.polls.get() + 1);
        let (path, bytes) = self.outbox.pop_front()?;
        buf.clear();
        buf.extend_from_slice(&bytes);
        Some(Outgoing {
            path,
            len: bytes.len(),
            more: !(self.hints_last && self.outbox.is_empty()),
        })
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timeout
    }
    fn handle_timeout(&mut self, now: Time) {
        if self.timeout.is_some_and(|t| t <= now) {
            self.timeout = None;
            self.fired += 1;
        }
    }
    fn is_drained(&self) -> bool {
        self.drained
    }
    fn is_finished(&self) -> bool {
        self.finished
    }
    fn memory_bound(&self) -> usize {
        self.memory
    }
}

/// The mock protocol's server side: a bare SYN gets a same-size reply; SYN+ACK (the echo)
/// opens a connection; RST earns a reset; anything else is dropped.
#[derive(Default)]
struct MockAcceptor {
    memory: usize,
    /// Write replies this many bytes longer than the request (amplification attempt).
    inflate: usize,
}

fn header(flags: Flags, id: u64) -> Vec<u8> {
    let mut v = Vec::new();
    Header {
        packet_type: PacketType::Segment,
        flags,
        conn_id: ConnId(id),
    }
    .encode(&mut v);
    v
}

impl Acceptor for MockAcceptor {
    type Connection = Mock;
    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        _now: Time,
        _key: &TokenKey,
        _peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<Mock> {
        out.clear();
        let Ok(h) = Header::decode(datagram) else {
            return Unknown::Drop;
        };
        if h.flags == Flags::SYN {
            out.extend_from_slice(&header(Flags::SYN | Flags::ACK, h.conn_id.0));
            out.resize(out.len() + self.inflate, 0);
            Unknown::Reply { len: out.len() }
        } else if h.flags == Flags::SYN | Flags::ACK {
            let mut m = Mock::new(h.conn_id.0);
            if self.memory > 0 {
                m.memory = self.memory;
            }
            m.received.push((PathId::PRIMARY, datagram.to_vec()));
            Unknown::Accept(m)
        } else if h.flags == Flags::RST {
            out.extend_from_slice(&header(Flags::RST, h.conn_id.0));
            Unknown::Reset { len: out.len() }
        } else {
            Unknown::Drop
        }
    }
    fn refuse(&mut self, _now: Time, datagram: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        let id = Header::peek_conn_id(datagram).ok()?;
        out.extend_from_slice(&header(Flags::RST, id.0));
        Some(out.len())
    }
}

type Ep = Endpoint<u32, u8, MockAcceptor>;

fn endpoint(config: EndpointConfig) -> Ep {
    Endpoint::new(config, TokenKey::new([7; 16]), MockAcceptor::default())
}

fn open(config: EndpointConfig) -> Ep {
    endpoint(EndpointConfig {
        idle_timeout: None,
        ..config
    })
}

fn primary(local: u8, remote: u32) -> [PathAddrs<u8, u32>; 1] {
    [PathAddrs {
        path: PathId::PRIMARY,
        local,
        remote,
    }]
}

const T0: Time = Time::ZERO;

#[test]
fn datagrams_reach_their_connection_and_unknown_ids_go_to_the_acceptor() {
    let mut ep = open(EndpointConfig::default());
    let h = ep.insert(T0, Mock::new(5), &primary(1, 100)).unwrap();
    let mut out = Vec::new();
    let d = header(Flags::ACK, 5);
    assert_eq!(
        ep.handle(T0, 1, 100, &d, &mut out),
        Some(DatagramEvent::Delivered(h))
    );
    assert_eq!(ep.connection(h).unwrap().received.len(), 1);
    assert_eq!(
        ep.handle(T0, 1, 100, &header(Flags::ACK, 6), &mut out),
        None
    );
    assert_eq!(ep.stats().dropped_unknown, 1);
    assert_eq!(ep.handle(T0, 1, 100, &d[..11], &mut out), None);
    assert_eq!(ep.stats().dropped_malformed, 1);
    assert_eq!(ep.stats().delivered, 1);
}

#[test]
fn a_removed_connection_no_longer_receives_and_its_id_can_be_reused() {
    let mut ep = open(EndpointConfig::default());
    let mut out = Vec::new();
    let d = header(Flags::ACK, 5);
    let old = ep.insert(T0, Mock::new(5), &primary(1, 100)).unwrap();
    // Twice: the second lookup is answered by the last-hit cache.
    for _ in 0..2 {
        assert_eq!(
            ep.handle(T0, 1, 100, &d, &mut out),
            Some(DatagramEvent::Delivered(old))
        );
    }
    assert!(ep.remove(old).is_some());
    assert_eq!(ep.handle(T0, 1, 100, &d, &mut out), None);
    assert_eq!(ep.stats().dropped_unknown, 1);
    let new = ep.insert(T0, Mock::new(5), &primary(1, 100)).unwrap();
    assert_ne!(new, old);
    assert_eq!(
        ep.handle(T0, 1, 100, &d, &mut out),
        Some(DatagramEvent::Delivered(new))
    );
    assert_eq!(ep.connection(new).unwrap().received.len(), 1);
}

#[test]
fn a_known_id_from_a_wrong_address_is_dropped_and_counted() {
    let mut ep = open(EndpointConfig::default());
    let h = ep.insert(T0, Mock::new(5), &primary(1, 100)).unwrap();
    let mut out = Vec::new();
    let d = header(Flags::FIN, 5);
    assert_eq!(ep.handle(T0, 1, 101, &d, &mut out), None, "other peer");
    assert_eq!(ep.handle(T0, 2, 100, &d, &mut out), None, "other local");
    assert_eq!(ep.stats().dropped_wrong_source, 2);
    assert!(ep.connection(h).unwrap().received.is_empty());
    assert!(out.is_empty(), "no reply to a spoofer");
}

#[test]
fn handshake_replies_are_stateless_and_never_larger_than_the_request() {
    let mut ep = open(EndpointConfig::default());
    let mut out = Vec::new();
    let syn = header(Flags::SYN, 9);
    assert_eq!(
        ep.handle(T0, 1, 100, &syn, &mut out),
        Some(DatagramEvent::Respond {
            local: 1,
            remote: 100,
            len: 12
        })
    );
    assert!(ep.is_empty(), "no state kept before the echo");
    ep.acceptor_mut().inflate = 1;
    assert_eq!(ep.handle(T0, 1, 100, &syn, &mut out), None);
    assert_eq!(ep.stats().dropped_oversized_reply, 1);
    assert_eq!(ep.stats().replies, 1);
}

#[test]
fn an_echo_opens_a_connection_and_reports_it() {
    let mut ep = open(EndpointConfig::default());
    let mut out = Vec::new();
    let Some(DatagramEvent::Accepted(h)) =
        ep.handle(T0, 3, 100, &header(Flags::SYN | Flags::ACK, 9), &mut out)
    else {
        panic!("not accepted");
    };
    assert!(matches!(ep.poll_event(), Some(EndpointEvent::Accepted(x)) if x == h));
    assert_eq!(
        ep.path(h, PathId::PRIMARY),
        Some(PathAddrs {
            path: PathId::PRIMARY,
            local: 3,
            remote: 100
        })
    );
    // Later datagrams of that id reach it.
    assert_eq!(
        ep.handle(T0, 3, 100, &header(Flags::ACK, 9), &mut out),
        Some(DatagramEvent::Delivered(h))
    );
}

fn accept(ep: &mut Ep, peer: u32, id: u64) -> Option<DatagramEvent<u8, u32>> {
    let mut out = Vec::new();
    ep.handle(T0, 1, peer, &header(Flags::SYN | Flags::ACK, id), &mut out)
}

#[test]
fn the_per_host_cap_counts_every_address_of_one_host() {
    // Addresses 100..199 are one host (as a UDP host's ports of one IP are).
    let mut ep = open(EndpointConfig {
        max_per_peer: 2,
        ..EndpointConfig::default()
    });
    ep.set_host_of(|a| a / 100 * 100);
    let first = accept(&mut ep, 100, 1);
    assert!(matches!(
        accept(&mut ep, 150, 2),
        Some(DatagramEvent::Accepted(_))
    ));
    assert!(
        matches!(accept(&mut ep, 199, 3), Some(DatagramEvent::Respond { .. })),
        "a third address of the same host is refused"
    );
    assert_eq!(ep.stats().refused_per_peer, 1);
    assert!(matches!(
        accept(&mut ep, 200, 4),
        Some(DatagramEvent::Accepted(_))
    ));
    let Some(DatagramEvent::Accepted(h)) = first else {
        unreachable!()
    };
    ep.remove(h).unwrap();
    assert!(matches!(
        accept(&mut ep, 199, 5),
        Some(DatagramEvent::Accepted(_))
    ));
    assert_eq!(ep.per_peer.get(&100), Some(&2));
}

#[test]
fn a_host_at_its_share_displaces_its_own_finished_connection_first_never_another_hosts() {
    let mut ep = open(EndpointConfig {
        max_per_peer: 2,
        ..EndpointConfig::default()
    });
    let mut out = Vec::new();
    let at = |t: Time, ep: &mut Ep, peer: u32, id: u64, out: &mut Vec<u8>| match ep.handle(
        t,
        1,
        peer,
        &header(Flags::SYN | Flags::ACK, id),
        out,
    ) {
        Some(DatagramEvent::Accepted(h)) => Some(h),
        Some(DatagramEvent::Respond { .. }) => None,
        other => panic!("unexpected {other:?}"),
    };
    let first = at(T0, &mut ep, 100, 1, &mut out).expect("accepted");
    let other_host = at(T0, &mut ep, 200, 2, &mut out).expect("accepted");
    let third = at(T0, &mut ep, 100, 3, &mut out).expect("accepted");
    // Host 100 holds 2 (ids 1 and 3), both open. Silent for seconds, as a live transfer is
    // while its sender's RTO backs off: a third is refused, neither is displaced.
    let backoff = T0.saturating_add(Duration::from_secs(5));
    assert_eq!(at(backoff, &mut ep, 100, 4, &mut out), None);
    assert_eq!(ep.stats().evicted, 0);
    // Id 3 finishes (lingers in TIME-WAIT): a new one of host 100 takes its slot at once,
    // though id 1 has been as quiet.
    ep.connection_mut(third).unwrap().finished = true;
    let fifth = at(backoff, &mut ep, 100, 5, &mut out).expect("displaces the finished one");
    assert_eq!(ep.stats().evicted, 1);
    assert!(ep.connection_mut(third).is_none());
    assert!(ep.connection_mut(first).is_some());
    // An open connection silent for QUIET_BEFORE_DISPLACING_OPEN was abandoned: id 1 (quiet
    // since T0) goes, id 5 (heard at `backoff`) stays.
    let abandoned = T0.saturating_add(host::QUIET_BEFORE_DISPLACING_OPEN);
    assert!(at(abandoned, &mut ep, 100, 6, &mut out).is_some());
    assert_eq!(ep.stats().evicted, 2);
    assert!(ep.connection_mut(first).is_none());
    assert!(ep.connection_mut(fifth).is_some());
    assert!(
        ep.connection_mut(other_host).is_some(),
        "host 200's connection is untouched"
    );
    assert_eq!(ep.len(), 3);
    assert_eq!(ep.per_peer.get(&100), Some(&2));
    assert_eq!(ep.per_peer.get(&200), Some(&1));
}

#[test]
fn the_per_peer_cap_refuses_with_a_reset_and_frees_on_removal() {
    let mut ep = open(EndpointConfig {
        max_per_peer: 2,
        ..EndpointConfig::default()
    });
    let a = accept(&mut ep, 100, 1);
    assert!(matches!(a, Some(DatagramEvent::Accepted(_))));
    assert!(matches!(
        accept(&mut ep, 100, 2),
        Some(DatagramEvent::Accepted(_))
    ));
    assert!(
        matches!(
            accept(&mut ep, 100, 3),
            Some(DatagramEvent::Respond { len: 12, .. })
        ),
        "a reset"
    );
    assert_eq!(ep.stats().refused_per_peer, 1);
    assert!(matches!(
        accept(&mut ep, 101, 3),
        Some(DatagramEvent::Accepted(_))
    ));
    let Some(DatagramEvent::Accepted(h)) = a else {
        unreachable!()
    };
    ep.remove(h).unwrap();
    assert!(matches!(
        accept(&mut ep, 100, 4),
        Some(DatagramEvent::Accepted(_))
    ));
}

#[test]
fn the_overall_cap_and_the_memory_bound_refuse_new_connections() {
    let mut ep = open(EndpointConfig {
        max_connections: 3,
        ..EndpointConfig::default()
    });
    for id in 0..3 {
        accept(&mut ep, 100 + id as u32, id).unwrap();
    }
    assert!(!matches!(
        accept(&mut ep, 200, 10),
        Some(DatagramEvent::Accepted(_))
    ));
    assert_eq!((ep.len(), ep.stats().refused_overall), (3, 1));

    let mut ep = open(EndpointConfig {
        max_memory: 2500,
        ..EndpointConfig::default()
    });
    accept(&mut ep, 100, 1).unwrap();
    accept(&mut ep, 101, 2).unwrap();
    assert!(!matches!(
        accept(&mut ep, 102, 3),
        Some(DatagramEvent::Accepted(_))
    ));
    assert_eq!((ep.memory(), ep.stats().refused_memory), (2000, 1));
}

#[test]
fn resets_are_drawn_from_the_budget() {
    let mut ep = open(EndpointConfig {
        resets_per_second: 3,
        ..EndpointConfig::default()
    });
    let mut out = Vec::new();
    let rst = header(Flags::RST, 1);
    let sent = (0..10)
        .filter(|_| ep.handle(T0, 1, 100, &rst, &mut out).is_some())
        .count();
    assert_eq!(sent, 3);
    assert_eq!(ep.stats().resets_suppressed, 7);
    let later = Time::from_millis(1000);
    let sent = (0..10)
        .filter(|_| ep.handle(later, 1, 100, &rst, &mut out).is_some())
        .count();
    assert_eq!(sent, 3, "the budget refills at its rate");
}

#[test]
fn idle_connections_expire_and_busy_ones_stay() {
    let mut ep = endpoint(EndpointConfig {
        idle_timeout: Some(Duration::from_secs(10)),
        ..EndpointConfig::default()
    });
    let idle = ep.insert(T0, Mock::new(1), &primary(1, 100)).unwrap();
    let busy = ep.insert(T0, Mock::new(2), &primary(1, 100)).unwrap();
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(10_000)));
    let mut out = Vec::new();
    let t = Time::from_millis(9_000);
    ep.handle(t, 1, 100, &header(Flags::ACK, 2), &mut out);
    ep.handle_timeout(Time::from_millis(10_000));
    assert!(ep.connection(idle).is_none());
    assert!(ep.connection(busy).is_some());
    assert!(matches!(
        ep.poll_event(),
        Some(EndpointEvent::Removed { handle, reason: RemoveReason::Expired, .. }) if handle == idle
    ));
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(19_000)));
    assert_eq!(ep.stats().expired, 1);
}

#[test]
fn drained_connections_are_removed_and_returned() {
    let mut ep = open(EndpointConfig::default());
    let h = ep.insert(T0, Mock::new(1), &primary(1, 100)).unwrap();
    let mut out = Vec::new();
    ep.handle(T0, 1, 100, &header(Flags::FIN, 1), &mut out);
    assert!(ep.connection(h).is_none());
    let Some(EndpointEvent::Removed {
        reason: RemoveReason::Drained,
        conn,
        ..
    }) = ep.poll_event()
    else {
        panic!("no removal event");
    };
    assert_eq!(conn.received.len(), 1);
    assert_eq!(ep.memory(), 0);
    // Its id is free again (for the acceptor).
    assert_eq!(
        ep.handle(T0, 1, 100, &header(Flags::ACK, 1), &mut out),
        None
    );
    assert_eq!(ep.stats().dropped_unknown, 1);
}

#[test]
fn a_connection_the_application_drained_takes_no_datagram() {
    let mut ep = open(EndpointConfig::default());
    let a = ep.insert(T0, Mock::new(1), &primary(1, 100)).unwrap();
    let b = ep.insert(T0, Mock::new(2), &primary(1, 100)).unwrap();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    // The application touches `a` without draining it; a poll looks and keeps it.
    ep.connection_mut(a).unwrap().timeout = Some(Time::from_millis(5));
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    assert!(ep.connection(a).is_some());
    // Then drains it (the poll above must not have stopped the endpoint from looking again),
    // and a datagram for it arrives before any deadline is read.
    ep.connection_mut(a).unwrap().drained = true;
    assert_eq!(
        ep.handle(T0, 1, 100, &header(Flags::ACK, 1), &mut out),
        None
    );
    assert!(ep.connection(a).is_none());
    assert_eq!(ep.stats().drained, 1);
    assert_eq!(ep.stats().dropped_unknown, 1);
    assert!(matches!(
        ep.poll_event(),
        Some(EndpointEvent::Removed { handle, reason: RemoveReason::Drained, .. }) if handle == a
    ));
    // The other connection is untouched and still takes its datagrams.
    assert_eq!(
        ep.handle(T0, 1, 100, &header(Flags::ACK, 2), &mut out),
        Some(DatagramEvent::Delivered(b))
    );
    // Drained by the application, then asked to send: removed before it is asked.
    ep.connection_mut(b).unwrap().drained = true;
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    assert!(ep.is_empty());
    assert_eq!(ep.stats().drained, 2);
}

#[test]
fn timers_fire_in_order_and_only_when_due() {
    let mut ep = open(EndpointConfig::default());
    let mut hs = Vec::new();
    for (id, ms) in [(1, 30), (2, 10), (3, 20)] {
        let mut m = Mock::new(id);
        m.timeout = Some(Time::from_millis(ms));
        hs.push(ep.insert(T0, m, &primary(1, 100)).unwrap());
    }
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(10)));
    ep.handle_timeout(Time::from_millis(20));
    let fired: Vec<usize> = hs
        .iter()
        .map(|h| ep.connection(*h).unwrap().fired)
        .collect();
    assert_eq!(fired, [0, 1, 1]);
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(30)));
    // A deadline moved through connection_mut is re-read.
    ep.connection_mut(hs[0]).unwrap().timeout = Some(Time::from_millis(25));
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(25)));
    // Many reschedules keep the heap bounded.
    for i in 0..10_000 {
        ep.connection_mut(hs[0]).unwrap().timeout = Some(Time::from_millis(100 + i));
    }
    assert!(ep.timers.len() <= 64 + 4 * ep.len());
    assert_eq!(ep.poll_timeout(), Some(Time::from_millis(10_099)));
}

#[test]
fn poll_transmit_asks_only_connections_that_may_send_and_round_robins() {
    let mut ep = open(EndpointConfig::default());
    let polls = Rc::new(Cell::new(0));
    let mut hs = Vec::new();
    for id in 0..5000 {
        let mut m = Mock::new(id);
        m.polls = polls.clone();
        hs.push(ep.insert(T0, m, &primary(1, 100)).unwrap());
    }
    let mut buf = Vec::new();
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    polls.set(0);
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    assert_eq!(polls.get(), 0, "nobody was touched");
    for h in [hs[10], hs[20]] {
        let c = ep.connection_mut(h).unwrap();
        c.outbox.push_back((PathId::PRIMARY, vec![1]));
        c.outbox.push_back((PathId::PRIMARY, vec![2]));
    }
    let order: Vec<(Handle, u8)> = std::iter::from_fn(|| {
        ep.poll_transmit(T0, &mut buf)
            .map(|t| (t.handle, buf[..t.len][0]))
    })
    .collect();
    assert_eq!(order, [(hs[10], 1), (hs[20], 1), (hs[10], 2), (hs[20], 2)]);
    assert!(polls.get() <= 6, "{} polls", polls.get());
}

#[test]
fn a_connection_that_says_it_sent_its_last_is_not_asked_again_until_it_changes() {
    let mut ep = open(EndpointConfig::default());
    let polls = Rc::new(Cell::new(0));
    let mut m = Mock::new(1);
    m.polls = polls.clone();
    m.hints_last = true;
    let h = ep.insert(T0, m, &primary(1, 100)).unwrap();
    let mut buf = Vec::new();
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    let c = ep.connection_mut(h).unwrap();
    c.outbox.push_back((PathId::PRIMARY, vec![1]));
    c.outbox.push_back((PathId::PRIMARY, vec![2]));
    polls.set(0);
    let sent: Vec<u8> =
        std::iter::from_fn(|| ep.poll_transmit(T0, &mut buf).map(|t| buf[..t.len][0])).collect();
    assert_eq!(sent, [1, 2]);
    assert_eq!(
        polls.get(),
        2,
        "no third call after the one that said it was the last"
    );
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    assert_eq!(polls.get(), 2, "still not asked");
    // A datagram in makes it a candidate again.
    let mut out = Vec::new();
    ep.handle(T0, 1, 100, &header(Flags::ACK, 1), &mut out);
    assert!(ep.poll_transmit(T0, &mut buf).is_none());
    assert_eq!(polls.get(), 3, "asked after the datagram");
}

#[test]
fn multipath_paths_and_conn_ids_come_and_go_at_run_time() {
    let mut ep = open(EndpointConfig::default());
    let h = ep.insert(T0, Mock::new(1), &primary(1, 100)).unwrap();
    // A second pipe: the engine gains a conn id on path 1, the host maps it.
    ep.connection_mut(h)
        .unwrap()
        .ids
        .push((ConnId(2), PathId(1)));
    let mut out = Vec::new();
    assert_eq!(
        ep.handle(T0, 2, 200, &header(Flags::ACK, 2), &mut out),
        None
    );
    ep.add_path(h, PathId(1), 2, 200).unwrap();
    assert_eq!(
        ep.handle(T0, 2, 200, &header(Flags::ACK, 2), &mut out),
        Some(DatagramEvent::Delivered(h))
    );
    assert_eq!(ep.connection(h).unwrap().received[0].0, PathId(1));
    ep.connection_mut(h)
        .unwrap()
        .outbox
        .push_back((PathId(1), vec![9]));
    let t = ep.poll_transmit(T0, &mut buf()).unwrap();
    assert_eq!((t.path, t.local, t.remote), (PathId(1), 2, 200));
    ep.remove_path(h, PathId(1)).unwrap();
    assert_eq!(
        ep.handle(T0, 2, 200, &header(Flags::ACK, 2), &mut out),
        None
    );
    ep.connection_mut(h)
        .unwrap()
        .outbox
        .push_back((PathId(1), vec![9]));
    assert!(ep.poll_transmit(T0, &mut buf()).is_none());
    assert_eq!(ep.stats().unroutable, 1);
}

fn buf() -> Vec<u8> {
    Vec::new()
}

#[test]
fn inserts_refuse_ids_in_use_and_unmapped_paths_and_handles_are_not_reused() {
    let mut ep = open(EndpointConfig::default());
    let h = ep.insert(T0, Mock::new(1), &primary(1, 100)).unwrap();
    assert_eq!(
        ep.insert(T0, Mock::new(1), &primary(1, 100)),
        Err(InsertError::ConnIdInUse(ConnId(1)))
    );
    assert_eq!(
        ep.insert(T0, Mock::new(2), &[]),
        Err(InsertError::UnmappedPath(PathId::PRIMARY))
    );
    ep.remove(h).unwrap();
    let h2 = ep.insert(T0, Mock::new(3), &primary(1, 100)).unwrap();
    assert_eq!(h.index(), h2.index());
    assert!(ep.connection(h).is_none(), "the old handle is stale");
    // An accepted connection whose id a held one uses is refused.
    assert!(!matches!(
        accept(&mut ep, 100, 3),
        Some(DatagramEvent::Accepted(_))
    ));
    assert_eq!(
        ep.stats().refused_conn_id,
        0,
        "delivered to the holder instead"
    );
}

#[test]
fn a_hostile_flood_keeps_state_and_memory_bounded() {
    let mut ep = endpoint(EndpointConfig {
        max_connections: 100,
        max_per_peer: 3,
        max_memory: 50_000,
        resets_per_second: 10,
        ..EndpointConfig::default()
    });
    let mut out = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut responses = 0;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let peer = (x % 5000) as u32;
        let flags =
            [Flags::SYN, Flags::SYN | Flags::ACK, Flags::RST, Flags::ACK][(x >> 20) as usize % 4];
        let mut d = header(flags, x >> 32);
        d.truncate(12 - (x >> 40) as usize % 2);
        let now = Time::from_micros(i * 10);
        if let Some(DatagramEvent::Respond { len, .. }) = ep.handle(now, 1, peer, &d, &mut out) {
            assert!(len <= d.len());
            responses += 1;
        }
        assert!(ep.len() <= 100);
        assert!(ep.memory() <= 50_000);
        ep.handle_timeout(now);
    }
    assert!(ep.per_peer.len() <= 100);
    assert!(responses > 0);
    // Resets: at most the burst plus the rate over the 2 s of virtual time.
    assert!(ep.stats().resets_sent <= 10 + 20 + 1, "{:?}", ep.stats());
}
