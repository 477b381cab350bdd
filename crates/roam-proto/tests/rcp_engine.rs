//! Scenario tests of the RCP engine in virtual time: handshake and transfer, lost REQs in both
//! modes, SEG.DEQ purging, persist mode, freeze/thaw, byte ranges served by any sender.

mod rcp_support;

use std::time::Duration;

use rcp_support::{drop_every, object_bytes, Fate, Net};
use roam_proto::rcp::{reset_for, RcpCc, RcpConfig, RcpEvent, RxState, TxState};
use roam_proto::Time;
use roam_wire::{Data, Flags, Request, RequestMode};

const DELAY: Duration = Duration::from_millis(20);

fn secs(s: u64) -> Time {
    Time::from_millis(s * 1000)
}

fn is_cumulative(b: &[u8]) -> bool {
    Request::decode(b).is_ok_and(|r| r.flags == Flags::ACK && r.mode == RequestMode::default())
}

fn is_pull(b: &[u8]) -> bool {
    Request::decode(b).is_ok_and(|r| r.mode.contains(RequestMode::PULL))
}

fn data_seq(b: &[u8]) -> Option<u64> {
    Data::decode(b)
        .ok()
        .filter(|d| !d.payload.is_empty())
        .map(|d| d.seq)
}

/// A DATA filter dropping the first DATA at each of `seqs` (their re-requests go through).
fn drop_first_copies(seqs: &[u64]) -> rcp_support::Filter {
    let lost = seqs.to_vec();
    let mut seen = Vec::new();
    Box::new(move |_, b| match data_seq(b) {
        Some(s) if lost.contains(&s) && !seen.contains(&s) => {
            seen.push(s);
            Fate::Drop
        }
        _ => Fate::Deliver,
    })
}

#[test]
fn clean_transfer_delivers_the_object_and_tears_down() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 300_000, DELAY);
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(300_000));
    assert!(net.done());
    assert_eq!(net.rx.state(), RxState::Closed);
    assert_eq!(net.tx.as_ref().map(|t| t.state()), Some(TxState::Closed));
    assert_eq!(net.rx.pipe().stats().timeouts, 0);
    assert!(matches!(
        net.events[0],
        RcpEvent::Connected {
            object_len: Some(300_000)
        }
    ));
}

/// §3 "objects, not streams": a sender that has never seen this receiver serves exactly the
/// byte range asked for, from the middle of the object, through losses in both directions.
#[test]
fn a_fresh_sender_serves_any_range_of_the_object() {
    let (start, end) = (123_456u64, 301_000u64);
    let mut net = Net::with_range(
        RcpConfig::default(),
        RcpCc::default(),
        400_000,
        DELAY,
        (start, end),
    );
    net.data_filter = drop_every(37);
    net.req_filter = drop_every(23);
    net.run_until(secs(60));
    let object = object_bytes(400_000);
    assert_eq!(net.delivered.len() as u64, end - start);
    assert!(net.delivered == object[start as usize..end as usize]);
    assert!(net.done());
}

/// Server migration at the object level: the first sender vanishes mid-transfer; a second
/// sender with its own copy of the object (a mirror) serves the rest to a new connection that
/// asks for the remaining range, and the two parts are the object.
#[test]
fn a_mirror_serves_the_rest_of_an_abandoned_transfer() {
    let len = 250_000usize;
    let mut first = Net::new(RcpConfig::default(), RcpCc::default(), len, DELAY);
    first.run_until(Time::from_millis(200));
    let got = first.delivered.len();
    assert!(
        got > 0 && got < len,
        "first sender delivered {got} of {len} bytes"
    );
    // The first sender disappears: nothing more from it.
    let mut rest = Net::with_range(
        RcpConfig::default(),
        RcpCc::default(),
        len,
        DELAY,
        (got as u64, roam_wire::UNKNOWN_LENGTH),
    );
    rest.run_until(secs(60));
    assert!(rest.done());
    let mut whole = first.delivered.clone();
    whole.extend_from_slice(&rest.delivered);
    assert!(whole == object_bytes(len));
}

#[test]
fn lost_cumulative_request_is_covered_by_the_next_one() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 200_000, DELAY);
    let mut n = 0;
    net.req_filter = Box::new(move |_, b| {
        if is_cumulative(b) {
            n += 1;
            if n == 10 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(200_000));
    assert_eq!(net.rx.pipe().stats().timeouts, 0);
    assert_eq!(net.rx.pipe().stats().rerequests, 0);
}

#[test]
fn lost_pull_request_is_repaired_by_the_senders_cyclic_buffer() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 300_000, DELAY);
    let mut dropped_data = false;
    net.data_filter = Box::new(move |_, b| {
        if data_seq(b) == Some(50_000) && !dropped_data {
            dropped_data = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    let mut dropped_pull = false;
    net.req_filter = Box::new(move |_, b| {
        if is_pull(b) && !dropped_pull {
            dropped_pull = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(300_000));
    let tx = net.tx.as_ref().unwrap().stats();
    assert_eq!(
        tx.lost_pulls_repaired, 1,
        "repaired from a later REQ's blocks"
    );
    assert_eq!(net.rx.pipe().stats().timeouts, 0);
    assert_eq!(
        net.rx.stats().pulls_sent,
        1,
        "the receiver did not have to pull again"
    );
}

#[test]
fn every_request_carries_the_three_most_recent_pulls() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 400_000, DELAY);
    net.data_filter = drop_first_copies(&[100_000, 104_000, 108_000, 112_000]);
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(400_000));
    let last_pull = net
        .sent_requests
        .iter()
        .filter_map(|(_, b)| Request::decode(b).ok())
        .rfind(|r| r.mode.contains(RequestMode::PULL))
        .unwrap();
    let starts: Vec<u64> = last_pull.blocks().iter().map(|b| b.start).collect();
    assert_eq!(starts, vec![112_000, 108_000, 104_000]);
    // A pull rides in its own REQ and the next three, then REQs shrink back.
    let rides = net
        .sent_requests
        .iter()
        .filter_map(|(_, b)| Request::decode(b).ok())
        .filter(|r| r.blocks().iter().any(|b| b.start == 112_000))
        .count();
    assert_eq!(rides, 4);
    let last = Request::decode(&net.sent_requests.last().unwrap().1).unwrap();
    assert_eq!(last.nblocks, 0);
}

#[test]
fn sender_purges_its_buffer_on_seg_deq() {
    let config = RcpConfig {
        max_window_segments: 20,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::default(), 1_000_000, DELAY);
    net.run_until(Time::from_millis(400));
    let tx = net.tx.as_ref().unwrap();
    assert!(tx.snd_nxt() > 50_000);
    assert!(tx.dequeued() > 0, "SEG.DEQ reported the in-order point");
    assert!(
        tx.dequeued() + tx.buffered_bytes() as u64 <= tx.snd_nxt(),
        "nothing below the in-order point is kept"
    );
    assert!(tx.snd_nxt() > 100_000);
    assert!(tx.buffered_bytes() <= 21_000, "at most a window is kept");
}

#[test]
fn persist_mode_recovers_from_a_lost_window_update() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 100_000, DELAY);
    // A data-limited source: only 10 kB are available at first.
    net.sender_available = Some(10_000);
    net.run_until(secs(3));
    assert_eq!(net.rx.rcv_nxt(), 10_000);
    assert!(net.rx.in_persist(), "blocked by the sender's window");
    // More data becomes available; the unsolicited window update is lost.
    let mut dropped = false;
    net.data_filter = Box::new(move |_, b| {
        let update = Data::decode(b).is_ok_and(|d| d.payload.is_empty() && d.flags == Flags::ACK);
        if update && !dropped {
            dropped = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    net.tx.as_mut().unwrap().set_available(None);
    net.run_until(secs(60));
    assert_eq!(net.delivered, object_bytes(100_000));
    assert!(net.rx.stats().probes_sent >= 1);
    assert!(net.done());
}

#[test]
fn thaw_requests_exactly_the_holes() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 2_000_000, DELAY);
    net.run_until(Time::from_millis(300));
    net.rx.freeze(net.now);
    let frozen_at = net.now;
    let outstanding: Vec<(u64, u64)> = net.rx.pipe().outstanding().collect();
    assert!(!outstanding.is_empty());
    assert_eq!(net.rx.poll_timeout(), None, "timers frozen");
    net.run_until(frozen_at + Duration::from_secs(2)); // Everything in transit is lost.
    assert!(net.rx.pipe().outstanding().eq(outstanding.iter().copied()));
    let before = net.sent_requests.len();
    let holes = net.rx.thaw(net.now);
    assert_eq!(holes, outstanding);
    net.flush();
    let pulled: Vec<(u64, u64)> = net.sent_requests[before..]
        .iter()
        .filter_map(|(_, b)| Request::decode(b).ok())
        .filter(|r| r.mode.contains(RequestMode::PULL))
        .map(|r| (r.blocks()[0].start, r.blocks()[0].end))
        .collect();
    assert_eq!(pulled, holes, "exactly the holes, in order");
    net.run_until(secs(60));
    assert_eq!(net.delivered, object_bytes(2_000_000));
    assert_eq!(net.rx.pipe().stats().timeouts, 0);
}

#[test]
fn rcp_stp_receiver_talks_to_the_same_sender() {
    let config = RcpConfig {
        status_interval_ms: 50,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::Stp, 300_000, DELAY);
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(300_000));
    assert_eq!(net.rx.pipe().cc_name(), "stp");
    assert!(net.events.contains(&RcpEvent::Closed));
    let data = net.rx.stats().data_received;
    assert!(
        net.rx.stats().requests_sent * 3 < data,
        "status requests, not per segment"
    );
}

mod hostile_input {
    use std::sync::Arc;

    use proptest::prelude::*;
    use roam_proto::rcp::{RcpCc, RcpConfig, RcpReceiver};
    use roam_proto::Time;
    use roam_wire::{ConnId, Data, Flags, PullBlock, Request, RequestMode, UNKNOWN_LENGTH};

    use super::rcp_support::{open_pair, MapStore};

    fn block() -> impl Strategy<Value = PullBlock> {
        (any::<u32>(), any::<u64>(), any::<u64>()).prop_map(|(id, a, b)| PullBlock {
            id,
            start: a.min(b),
            end: a.max(b).max(a.min(b).saturating_add(1)),
        })
    }

    proptest! {
        /// Arbitrary well-formed REQs and DATA for the right connection never panic either
        /// end, whatever offsets, windows and pull blocks they carry.
        #[test]
        fn hostile_requests_and_data_never_panic(
            reqs in proptest::collection::vec(
                (any::<u16>(), 0u8..4, any::<u64>(), any::<u32>(), proptest::collection::vec(block(), 1..=3)),
                1..20),
            datas in proptest::collection::vec(
                (any::<u16>(), any::<u64>(), any::<u64>(), any::<u32>(), 0usize..1200),
                1..20),
        ) {
            let mut store = MapStore::default();
            store.0.insert(b"o".to_vec(), vec![7; 5000]);
            let config = Arc::new(RcpConfig::default());
            let mut rx = RcpReceiver::connect(
                config.clone(), RcpCc::default(), ConnId(5), b"o", (0, UNKNOWN_LENGTH), Time::ZERO,
            ).unwrap();
            let mut tx = open_pair(&config, Arc::new(store), &mut rx, Time::ZERO);
            let mut now = Time::ZERO;
            let mut buf = Vec::new();
            for (flags, mode, req, deq, blocks) in reqs {
                let mut arr = [PullBlock::default(); 3];
                for (a, b) in arr.iter_mut().zip(&blocks) {
                    *a = *b;
                }
                let r = Request {
                    conn_id: ConnId(5), flags: Flags(flags & 0x1f), mode: RequestMode(mode), req, deq,
                    ts_val: 1, ts_ecr: 0, nblocks: blocks.len() as u8, blocks: arr, object: b"",
                    token: None,
                };
                let mut bytes = Vec::new();
                r.encode(&mut bytes);
                now += std::time::Duration::from_millis(3);
                let _ = tx.handle_datagram(now, &bytes);
                let mut n = 0;
                while tx.poll_transmit(now, &mut buf).is_some() && n < 50 {
                    let _ = rx.handle_datagram(now, &buf);
                    n += 1;
                }
            }
            for (flags, seq, window, pull_id, len) in datas {
                let payload = vec![1u8; len];
                let d = Data {
                    conn_id: ConnId(5), flags: Flags(flags & 0x1f), seq: seq.min(u64::MAX - 2000), window,
                    object_len: Some(window), ts_val: 3, ts_ecr: 1, pull_id, token: None,
                    payload: &payload,
                };
                let mut bytes = Vec::new();
                d.encode(&mut bytes);
                now += std::time::Duration::from_millis(3);
                let _ = rx.handle_datagram(now, &bytes);
                rx.handle_timeout(now + std::time::Duration::from_secs(100));
                let mut n = 0;
                while rx.poll_transmit(now, &mut buf).is_some() && n < 100 {
                    n += 1;
                }
                let mut out = Vec::new();
                rx.read(&mut out, 1 << 20);
            }
        }
    }
}

#[test]
fn a_receiver_whose_sender_vanishes_gives_up_at_its_retry_limit() {
    let config = RcpConfig {
        max_retries: 3,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::default(), 1_000_000, DELAY);
    let gone = Time::from_millis(100);
    net.req_filter = Box::new(move |now, _| {
        if now > gone {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    net.run_until(Time::from_secs_f64(600.0));
    assert!(net.events.contains(&RcpEvent::TimedOut), "{:?}", net.events);
    assert!(!net.events.contains(&RcpEvent::Eof));
    // Timeouts back off from 1 s: 1 + 2 + 4 + 8 s after the last arrival, then silence.
    let last = net.sent_requests.last().map(|(t, _)| *t).expect("requests");
    assert!(
        last < Time::from_secs_f64(30.0),
        "still requesting at {last:?}"
    );
    assert_eq!(net.rx.state(), RxState::Closed);
}

/// Sender expiry (our addition, docs/RCP.md): a sender that hears nothing for the idle timeout
/// expires; the host answers the receiver's requests with a reset — the first one at least as
/// long as a reset (a pull, after the receiver's next timeout: plain requests are shorter, and
/// a host never answers an unvalidated address with more than it sent) — which ends it long
/// before its retry limit.
#[test]
fn a_silent_receiver_lets_the_sender_expire_and_a_later_request_is_reset() {
    let config = RcpConfig {
        idle_timeout_ms: 5_000,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::default(), 1_000_000, DELAY);
    net.run_until(Time::from_millis(300));
    let (heard, request) = net.sent_requests.last().cloned().expect("requests");
    let tx = net.tx.as_mut().expect("sender");
    assert_eq!(tx.state(), TxState::Established);
    // The deadline follows the last arrival (sent at `heard`, one delay before it arrived).
    let deadline = tx.poll_timeout().expect("idle timer");
    assert_eq!(deadline, heard + DELAY + Duration::from_secs(5));
    tx.handle_timeout(Time::from_nanos(deadline.as_nanos() - 1));
    assert_eq!(
        tx.state(),
        TxState::Established,
        "early call changes nothing"
    );
    tx.handle_timeout(deadline);
    assert!(tx.is_expired());
    assert_eq!(tx.poll_timeout(), None);
    let mut buf = Vec::new();
    assert!(tx.poll_transmit(deadline, &mut buf).is_none());
    assert!(tx.handle_datagram(deadline, &request).is_err());

    // The host drops it; the receiver's requests now reach the acceptor.
    net.tx = None;
    net.now = deadline;
    net.run_until(deadline + Duration::from_secs(30));
    assert_eq!(net.rx.state(), RxState::Closed);
    assert!(net.events.contains(&RcpEvent::Reset), "{:?}", net.events);
    assert!(net.stateless.1 >= 1, "a reset was sent");
    assert!(
        net.rx.pipe().rtt().backoff_count() <= 2,
        "long before the retry limit"
    );
}

/// After answering a FIN the sender lingers for two maximum RTOs, answering a repeated FIN
/// (its FIN+ACK may have been lost), then expires.
#[test]
fn a_closed_sender_answers_repeated_fins_for_two_max_rtos_then_expires() {
    let config = RcpConfig {
        max_rto_ms: 10_000,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::default(), 50_000, DELAY);
    net.run_until(secs(30));
    assert!(net.done());
    let (_, fin) = net.sent_requests.last().cloned().expect("requests");
    assert!(Request::decode(&fin).is_ok_and(|r| r.flags.contains(Flags::FIN)));
    let tx = net.tx.as_mut().expect("sender");
    assert_eq!(tx.state(), TxState::Closed);
    let first = tx.poll_timeout().expect("linger");
    let late = Time::from_nanos(first.as_nanos() - 1_000_000_000);
    tx.handle_datagram(late, &fin).expect("still answered");
    let mut buf = Vec::new();
    tx.poll_transmit(late, &mut buf).expect("FIN+ACK again");
    assert!(Data::decode(&buf).is_ok_and(|d| d.flags.contains(Flags::FIN | Flags::ACK)));
    let second = tx.poll_timeout().expect("linger restarted");
    assert_eq!(second, late + Duration::from_secs(20));
    tx.handle_timeout(first);
    assert_eq!(tx.state(), TxState::Closed);
    tx.handle_timeout(second);
    assert!(tx.is_expired());
}

#[test]
fn without_an_idle_timeout_an_open_sender_has_no_timer() {
    let config = RcpConfig {
        idle_timeout_ms: 0,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, RcpCc::default(), 1_000_000, DELAY);
    net.run_until(Time::from_millis(300));
    let tx = net.tx.as_mut().expect("sender");
    assert_eq!(tx.poll_timeout(), None);
    tx.handle_timeout(Time::from_secs_f64(1e6));
    assert_eq!(tx.state(), TxState::Established);
}

#[test]
fn requests_and_syns_are_answered_with_a_reset_but_resets_are_not() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 1_000, DELAY);
    net.flush();
    let (_, syn) = net.sent_requests[0].clone();
    let mut buf = Vec::new();
    // A SYN the host cannot serve (unknown object) is reset too, and the receiver learns at
    // once.
    let n = reset_for(Time::ZERO, &syn, &mut buf).expect("reset for a SYN");
    assert!(Data::decode(&buf[..n]).is_ok_and(|d| d.flags == Flags::RST));
    net.rx
        .handle_datagram(Time::ZERO, &buf[..n])
        .expect("its connection");
    assert_eq!(net.rx.state(), RxState::Closed);
    assert!(reset_for(Time::ZERO, b"", &mut buf).is_none());
    assert!(reset_for(Time::ZERO, &[0xff; 40], &mut buf).is_none());
    // A plain request is shorter than a reset: no answer to an unvalidated address.
    let req = Request::decode(&syn).expect("request");
    let mut plain = Vec::new();
    Request {
        flags: Flags::ACK,
        ..req
    }
    .encode(&mut plain);
    assert!(plain.len() < n);
    assert!(reset_for(Time::ZERO, &plain, &mut buf).is_none());
    // A pull request is not: the reset names its connection and echoes its timestamp.
    let mut pull = Vec::new();
    let mut blocks = req.blocks;
    blocks[0] = roam_wire::PullBlock {
        id: 1,
        start: 0,
        end: 1000,
    };
    Request {
        flags: Flags::ACK,
        mode: RequestMode::PULL,
        nblocks: 1,
        blocks,
        ..req
    }
    .encode(&mut pull);
    let n = reset_for(Time::from_millis(9), &pull, &mut buf).expect("reset");
    assert!(n <= pull.len());
    let d = Data::decode(&buf[..n]).expect("a DATA datagram");
    assert_eq!(d.conn_id, req.conn_id);
    assert_eq!(d.flags, Flags::RST);
    assert_eq!(d.ts_ecr, req.ts_val);
    // A reset is never answered (two hosts cannot trade resets).
    let mut rst_req = Vec::new();
    Request {
        flags: Flags::RST,
        ..req
    }
    .encode(&mut rst_req);
    assert!(reset_for(Time::ZERO, &rst_req, &mut buf).is_none());
}

/// The endpoint's view of a transfer (`EndpointConnection`): one connection id on the primary
/// path each; the receiver is drained once closed with everything read and every event taken,
/// the sender once it expired; memory bounds follow the configuration.
#[test]
fn both_ends_serve_the_endpoint_contract() {
    use roam_proto::endpoint::{EndpointConnection, PathId};
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 20_000, DELAY);
    let mut ids = Vec::new();
    net.rx.conn_ids(&mut ids);
    assert_eq!(ids, [(net.rx.conn_id(), PathId::PRIMARY)]);
    assert!(!net.rx.is_drained());
    assert!(net.rx.memory_bound() >= 2 * RcpConfig::default().recv_buffer as usize);
    net.run_until(secs(10));
    assert!(net.done());
    assert!(net.rx.is_drained(), "closed, read and polled");
    let tx = net.tx.as_mut().expect("sender");
    ids.clear();
    tx.conn_ids(&mut ids);
    assert_eq!(ids, [(tx.conn_id(), PathId::PRIMARY)]);
    assert!(!tx.is_drained(), "lingering after the FIN");
    let linger = EndpointConnection::poll_timeout(tx).expect("linger");
    EndpointConnection::handle_timeout(tx, linger);
    assert!(tx.is_drained());
    assert!(tx.memory_bound() < 200_000);
}

/// A path that reorders but never loses (every 20th DATA held back 5 ms, behind the ones sent
/// after it): the pipe takes the first late arrivals for losses, learns that they were not
/// (spurious holes), undoes those cuts and raises its threshold, so reordering alone does not
/// keep its window down.
#[test]
fn reordering_alone_does_not_keep_the_window_down() {
    let len = 2_000_000;
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), len, DELAY);
    let mut n = 0u32;
    net.data_filter = Box::new(move |_, _| {
        n += 1;
        if n.is_multiple_of(20) {
            Fate::Delay(Duration::from_millis(5))
        } else {
            Fate::Deliver
        }
    });
    net.run_until(secs(60));
    assert!(net.delivered == object_bytes(len));
    let s = net.rx.pipe().stats();
    assert!(s.spurious_holes > 0, "{s:?}");
    assert_eq!(s.timeouts, 0, "{s:?}");
    assert!(
        s.recoveries - s.undone <= 1,
        "every cut but at most one undone: {s:?}"
    );
}

/// REQs that arrive out of order (ours; `rcp/served_pulls.rs`): the REQs carrying the first of
/// four pulls (its own and the next three) are held back until a later REQ, listing only the
/// pulls after it, has overtaken them. §3.3.1's rule (serve what is newer than every pull
/// served) would never serve the first pull; the sender serves every pull it is sent, once.
#[test]
fn a_pull_whose_requests_are_overtaken_is_still_served() {
    let mut net = Net::new(RcpConfig::default(), RcpCc::default(), 400_000, DELAY);
    net.data_filter = drop_first_copies(&[100_000, 104_000, 108_000, 112_000]);
    net.req_filter = Box::new(|_, b| {
        let first_pull =
            Request::decode(b).is_ok_and(|r| r.blocks().iter().any(|blk| blk.start == 100_000));
        if first_pull {
            Fate::Delay(Duration::from_millis(5))
        } else {
            Fate::Deliver
        }
    });
    net.run_until(secs(30));
    assert_eq!(net.delivered, object_bytes(400_000));
    let tx = net.tx.as_ref().unwrap().stats();
    assert_eq!(
        tx.pulls_served,
        net.rx.stats().pulls_sent,
        "every pull served"
    );
}
