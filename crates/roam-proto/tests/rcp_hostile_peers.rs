//! RCP under hostile peers (issue 16): a sender host answers an address nobody validated with
//! no more bytes than it received and keeps no state for it; neither end's memory grows with
//! what a hostile peer sends; the sender never reads a blocking store inside `poll_transmit`.
//! Each test here failed against the engine before the fix (the first commit of this series
//! shows them against the old API).

mod rcp_support;

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use rcp_support::{open_pair, test_key, Fate, MapStore, Net};
use roam_proto::endpoint::{Acceptor, EndpointConnection, Unknown};
use roam_proto::rcp::{
    reset_for, ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpReceiver, RecvBuffer,
    MAX_QUEUED_PULLS,
};
use roam_proto::Time;
use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, Token, MAX_REQUEST_BLOCKS, SYN_MIN_LEN,
    TOKEN_LEN,
};

fn receiver(config: &Arc<RcpConfig>) -> RcpReceiver {
    RcpReceiver::connect(
        config.clone(),
        RcpCc::default(),
        ConnId(5),
        b"obj",
        (0, u64::MAX),
        Time::ZERO,
    )
    .expect("valid config")
}

fn syn(config: &Arc<RcpConfig>) -> Vec<u8> {
    let mut syn = Vec::new();
    receiver(config)
        .poll_transmit(Time::ZERO, &mut syn)
        .expect("a SYN");
    syn
}

fn store(len: usize) -> Arc<MapStore> {
    let mut s = MapStore::default();
    s.0.insert(b"obj".to_vec(), vec![7; len]);
    Arc::new(s)
}

/// A store that can never read without blocking (a file): the host reads for it.
struct FileLike(Arc<MapStore>);

impl ObjectStore for FileLike {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        self.0.object_len(name)
    }
    fn read_now(&self, _: &[u8], _: u64, _: usize, _: &mut Vec<u8>) -> bool {
        false
    }
}

fn request(flags: Flags, mode: RequestMode, req: u64, deq: u32, blocks: &[PullBlock]) -> Vec<u8> {
    let mut arr = [PullBlock::default(); MAX_REQUEST_BLOCKS];
    for (a, b) in arr.iter_mut().zip(blocks) {
        *a = *b;
    }
    let mut out = Vec::new();
    Request {
        conn_id: ConnId(5),
        flags,
        mode,
        req,
        deq,
        ts_val: 1,
        ts_ecr: 0,
        nblocks: blocks.len() as u8,
        blocks: arr,
        object: &[],
        token: None,
    }
    .encode(&mut out);
    out
}

fn cumulative(req: u64, deq: u32) -> Vec<u8> {
    request(Flags::ACK, RequestMode::default(), req, deq, &[])
}

/// "A hostile server can pin memory at an RCP receiver: the reassembly buffer keeps
/// overlapping segments without merging them."
#[test]
fn overlapping_segments_are_held_once() {
    let mut b = RecvBuffer::new(0);
    for seq in 1..2000u64 {
        b.insert(seq, &[1; 1000]);
        b.insert(seq, &[1; 1000]);
    }
    assert!(
        b.out_of_order_bytes() <= 2999,
        "held {} bytes of a 2998-byte span",
        b.out_of_order_bytes()
    );
}

/// The worst a sender can send a receiver that requested a full buffer: overlapping,
/// duplicated and one-byte segments all over it. The receiver holds at most its buffer, in at
/// most its piece limit, and still completes the transfer from an honest sender afterwards.
#[test]
fn a_sender_flooding_fragments_cannot_pin_more_than_the_receive_buffer() {
    let config = RcpConfig {
        recv_buffer: 64_000,
        initial_window: 64,
        ..RcpConfig::default()
    };
    let mut net = Net::new(
        config.clone(),
        RcpCc::default(),
        200_000,
        Duration::from_millis(5),
    );
    // Let the handshake complete and the first window of requests leave.
    net.data_filter = Box::new(|_, b| match Data::decode(b) {
        Ok(d) if !d.payload.is_empty() => Fate::Drop,
        _ => Fate::Deliver,
    });
    net.run_until(Time::from_millis(30));
    assert!(net.rx.request_edge() >= 60_000, "a full buffer requested");
    let bound = 2 * 64_000 / 1000 + 64;
    let flood = |seq: u64, len: usize, net: &mut Net| {
        let mut d = Vec::new();
        Data {
            conn_id: net.rx.conn_id(),
            flags: Flags::ACK,
            seq,
            window: u64::MAX,
            object_len: None,
            ts_val: 1,
            ts_ecr: 1,
            pull_id: 0,
            token: None,
            payload: &vec![0xEE; len],
        }
        .encode(&mut d);
        let _ = net.rx.handle_datagram(net.now, &d);
        let b = net.rx.recv_buffer();
        assert!(
            net.rx.buffered_bytes() <= 64_000,
            "{} held",
            net.rx.buffered_bytes()
        );
        assert!(
            b.out_of_order_pieces() <= bound,
            "{} pieces",
            b.out_of_order_pieces()
        );
    };
    for seq in (1..64_000).step_by(7) {
        flood(seq, 1000, &mut net);
        flood(seq, 1000, &mut net);
    }
    for seq in (1..64_000).step_by(2) {
        flood(seq, 1, &mut net);
    }
    for seq in (0..200_000u64).rev().step_by(3) {
        flood(seq, 3, &mut net);
    }
    assert!(net.rx.memory_bound() >= 64_000);
}

/// "An RCP sender becomes established on any ACK and then serves pulls of any size": now a SYN
/// gets a stateless SYN+ACK no larger than itself, and a request that does not echo a valid
/// token opens nothing.
#[test]
fn an_unvalidated_peer_gets_nothing_larger_than_it_sent() {
    let config = Arc::new(RcpConfig::default());
    let mut acceptor = RcpAcceptor::new(config.clone(), store(1 << 20));
    let key = test_key();
    let syn = syn(&config);
    assert!(syn.len() >= SYN_MIN_LEN, "receivers pad their SYNs");
    let mut out = Vec::new();
    let Unknown::Reply { len } = acceptor.on_unknown(Time::ZERO, &key, "a", &syn, &mut out) else {
        panic!("a SYN is answered");
    };
    assert!(
        len <= syn.len(),
        "SYN+ACK {len} bytes for a {}-byte SYN",
        syn.len()
    );
    let d = Data::decode(&out[..len]).expect("a SYN+ACK");
    assert!(d.flags.contains(Flags::SYN | Flags::ACK));
    let token = d.token.expect("a token");
    // An unpadded SYN (built by an attacker) is too small to answer.
    let bare = &syn[..syn.len() - 25];
    assert!(Request::decode(bare).is_ok());
    assert!(matches!(
        acceptor.on_unknown(Time::ZERO, &key, "a", bare, &mut out),
        Unknown::Drop
    ));
    // The attacker guesses the handshake's last step without having seen the SYN+ACK: no
    // token, a guessed one, or the real one from another address.
    let guesses = [
        cumulative(1 << 20, 1 << 20),
        echo(Token([0; TOKEN_LEN])),
        echo(token),
    ];
    for (i, g) in guesses.iter().enumerate() {
        let from = if i == 2 { "b" } else { "a" };
        match acceptor.on_unknown(Time::ZERO, &key, from, g, &mut out) {
            Unknown::Accept(_) => panic!("guess {i} opened a connection"),
            Unknown::Reply { len } | Unknown::Reset { len } => assert!(len <= g.len()),
            Unknown::Drop => {}
        }
    }
    // The real receiver's echo opens it, and only now does data flow.
    match acceptor.on_unknown(Time::ZERO, &key, "a", &echo(token), &mut out) {
        Unknown::Accept(mut tx) => {
            assert!(tx.poll_transmit(Time::ZERO, &mut out).is_some(), "data");
        }
        other => panic!("the echo was answered with {other:?}"),
    }
}

/// The receiver's first request, echoing `token`.
fn echo(token: Token) -> Vec<u8> {
    let mut out = Vec::new();
    Request {
        conn_id: ConnId(5),
        flags: Flags::ACK,
        mode: RequestMode::default(),
        req: 100_000,
        deq: 100_000,
        ts_val: 1,
        ts_ecr: 0,
        nblocks: 0,
        blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
        object: b"obj",
        token: Some(token),
    }
    .encode(&mut out);
    out
}

/// A token is good for two 64 s slots; an echo older than that is refused (and the receiver
/// learns by a reset, its echo being longer than one).
#[test]
fn a_stale_token_opens_nothing() {
    let config = Arc::new(RcpConfig::default());
    let mut acceptor = RcpAcceptor::new(config.clone(), store(1 << 20));
    let key = test_key();
    let mut out = Vec::new();
    let Unknown::Reply { len } =
        acceptor.on_unknown(Time::ZERO, &key, "a", &syn(&config), &mut out)
    else {
        panic!("a SYN is answered");
    };
    let token = Data::decode(&out[..len])
        .expect("SYN+ACK")
        .token
        .expect("token");
    let late = Time::from_secs_f64(129.0);
    assert!(matches!(
        acceptor.on_unknown(late, &key, "a", &echo(token), &mut out),
        Unknown::Reset { .. }
    ));
}

proptest! {
    /// Whatever arrives for no connection — garbage, mutated SYNs and echoes, requests with
    /// any fields — the acceptor never answers with more bytes than it received, and opens a
    /// connection only for an echo of a token it issued to that address.
    #[test]
    fn stateless_answers_are_never_larger_than_their_cause(
        mutations in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        which in 0u8..3,
        garbage in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let config = Arc::new(RcpConfig::default());
        let mut acceptor = RcpAcceptor::new(config.clone(), store(1 << 20));
        let key = test_key();
        let mut out = Vec::new();
        let syn = syn(&config);
        let token = match acceptor.on_unknown(Time::ZERO, &key, "a", &syn, &mut out) {
            Unknown::Reply { len } => Data::decode(&out[..len]).ok().and_then(|d| d.token),
            _ => None,
        };
        let mut d = match which {
            0 => syn,
            1 => echo(token.unwrap_or_default()),
            _ => garbage,
        };
        let pristine = d.clone();
        for (at, v) in &mutations {
            if !d.is_empty() {
                let i = at.index(d.len());
                d[i] = *v;
            }
        }
        d.truncate(cut.index(d.len() + 1).max(d.len().min(12)));
        match acceptor.on_unknown(Time::ZERO, &key, "a", &d, &mut out) {
            Unknown::Reply { len } | Unknown::Reset { len } => {
                prop_assert!(len <= d.len(), "{} bytes for {}", len, d.len());
                prop_assert_eq!(len, out.len());
            }
            Unknown::Accept(_) => prop_assert!(
                which == 1 && Request::decode(&d).ok().and_then(|r| r.token) == token
                    && Request::decode(&d).map(|r| r.object == b"obj").unwrap_or(false),
                "accepted {:?} (from {:?})", d, pristine
            ),
            Unknown::Drop => {}
        }
    }
}

/// A receiver that never reports progress (SEG.DEQ stays at 0) cannot make the sender hold
/// the object: a store reading through the host holds at most the read-ahead and a segment,
/// an in-memory one nothing.
#[test]
fn a_receiver_that_never_dequeues_cannot_pin_the_object() {
    let config = Arc::new(RcpConfig::default());
    for through_host in [false, true] {
        let inner = store(1 << 20);
        let s: Arc<dyn ObjectStore> = if through_host {
            Arc::new(FileLike(inner.clone()))
        } else {
            inner.clone()
        };
        let mut rx = receiver(&config);
        let mut tx = open_pair(&config, s, &mut rx, Time::ZERO);
        tx.handle_datagram(Time::ZERO, &cumulative(1 << 20, 1 << 20))
            .expect("decodes");
        let mut buf = Vec::new();
        let mut sent = 0;
        loop {
            while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {
                sent += 1;
            }
            let Some(r) = tx.poll_read() else { break };
            let mut bytes = Vec::new();
            inner.copy(b"obj", r.offset, r.len, &mut bytes);
            tx.supply(r.offset, &bytes);
            let held = tx.buffered_bytes() as u64;
            assert!(
                held <= config.read_ahead + 1000,
                "sender holds {held} bytes"
            );
        }
        assert_eq!(sent, (1 << 20) / 1000 + 1, "the whole object was served");
        assert!(tx.memory_bound() < 200_000);
        if !through_host {
            assert_eq!(tx.buffered_bytes(), 0);
        }
    }
}

/// "ObjectStore::read is synchronous and called inside poll_transmit": a store that cannot
/// read without blocking declines, the sender asks its host, sends nothing it does not hold,
/// and sends exactly what the host supplied once it arrives.
#[test]
fn a_blocking_store_is_read_by_the_host_not_inside_poll_transmit() {
    let config = Arc::new(RcpConfig {
        read_ahead: 4000,
        ..RcpConfig::default()
    });
    let inner = store(100_000);
    let mut rx = receiver(&config);
    let mut tx = open_pair(
        &config,
        Arc::new(FileLike(inner.clone())),
        &mut rx,
        Time::ZERO,
    );
    tx.handle_datagram(Time::ZERO, &cumulative(50_000, 50_000))
        .expect("decodes");
    let mut buf = Vec::new();
    assert!(
        tx.poll_transmit(Time::ZERO, &mut buf).is_none(),
        "nothing held yet"
    );
    let r = tx.poll_read().expect("a read");
    assert_eq!((r.offset, r.len), (0, 4000), "read ahead, capped");
    assert_eq!(tx.poll_read(), None, "one read ahead at a time");
    assert!(tx.poll_transmit(Time::ZERO, &mut buf).is_none());
    tx.supply(r.offset, &[9; 4000]);
    let mut offsets = Vec::new();
    while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {
        let d = Data::decode(&buf).expect("DATA");
        assert!(d.payload.iter().all(|b| *b == 9), "the host's bytes");
        offsets.push(d.seq);
    }
    assert_eq!(offsets, [0, 1000, 2000, 3000]);
    // A pull for bytes already sent is read again, as one segment.
    tx.handle_datagram(
        Time::ZERO,
        &request(
            Flags::ACK,
            RequestMode::PULL,
            50_000,
            50_000,
            &[PullBlock {
                id: 1,
                start: 1000,
                end: 2000,
            }],
        ),
    )
    .expect("decodes");
    let p = tx.poll_read().expect("the pulled segment");
    assert_eq!((p.offset, p.len), (1000, 1000));
    tx.supply(1000, &[5; 1000]);
    tx.poll_transmit(Time::ZERO, &mut buf).expect("the pull");
    let d = Data::decode(&buf).expect("DATA");
    assert_eq!((d.seq, d.pull_id, d.payload.len()), (1000, 1, 1000));
    // A host that cannot read aborts: the receiver is reset.
    tx.abort();
    tx.poll_transmit(Time::ZERO, &mut buf).expect("a reset");
    assert!(Data::decode(&buf).is_ok_and(|d| d.flags.contains(Flags::RST)));
    assert!(tx.is_expired() && tx.is_drained());
}

/// A reset answers a request naming no connection, from an address nobody validated: it
/// must never be larger than that request.
#[test]
fn a_reset_is_never_larger_than_the_request() {
    let mut buf = Vec::new();
    let plain = cumulative(5000, 0);
    assert_eq!(
        reset_for(Time::ZERO, &plain, &mut buf),
        None,
        "34 bytes: too short"
    );
    let block = PullBlock {
        id: 1,
        start: 0,
        end: 1000,
    };
    let pull = request(Flags::ACK, RequestMode::PULL, 5000, 0, &[block]);
    let n = reset_for(Time::ZERO, &pull, &mut buf).expect("a pull earns a reset");
    assert!(
        n <= pull.len(),
        "{n}-byte reset for a {}-byte request",
        pull.len()
    );
}

/// A hostile sender raising its window one byte at a time makes the receiver request one-byte
/// units, each costing far more memory than the byte it asks for: the receiver keeps at most
/// `2 × recv_buffer / mss + 64` units outstanding.
#[test]
fn window_updates_of_one_byte_cannot_multiply_the_receivers_units() {
    let config = Arc::new(RcpConfig {
        recv_buffer: 4000,
        ..RcpConfig::default()
    });
    let mut rx = receiver(&config);
    let mut buf = Vec::new();
    while rx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    for window in 1..3000u64 {
        let mut d = Vec::new();
        Data {
            conn_id: ConnId(5),
            flags: if window == 1 {
                Flags::SYN | Flags::ACK
            } else {
                Flags::ACK
            },
            seq: 0,
            window,
            object_len: Some(u64::MAX),
            ts_val: 1,
            ts_ecr: 1,
            pull_id: 0,
            token: None,
            payload: &[],
        }
        .encode(&mut d);
        let _ = rx.handle_datagram(Time::ZERO, &d);
        while rx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    }
    let bound = 2 * config.recv_buffer as usize / usize::from(config.mss) + 64;
    assert!(
        rx.pipe().outstanding_units() <= bound,
        "{} units outstanding",
        rx.pipe().outstanding_units()
    );
}

/// Pull blocks for bytes the object does not have used to be queued without limit and then
/// skipped one recursive call at a time, overflowing the stack. Now the queue is bounded and
/// skipped in a loop.
#[test]
fn pulls_past_the_object_neither_pile_up_nor_overflow_the_stack() {
    let config = Arc::new(RcpConfig::default());
    let mut rx = receiver(&config);
    let mut tx = open_pair(&config, store(1000), &mut rx, Time::ZERO);
    let mut buf = Vec::new();
    while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    let mut id = 0u32;
    for _ in 0..30_000 {
        let mut blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        for b in &mut blocks {
            id += 1;
            *b = PullBlock {
                id,
                start: 5000,
                end: 6000,
            };
        }
        blocks.reverse();
        let r = request(Flags::ACK, RequestMode::PULL, 0, 0, &blocks);
        let _ = tx.handle_datagram(Time::ZERO, &r);
    }
    assert!(tx.queued_pulls() <= MAX_QUEUED_PULLS);
    assert!(tx.stats().pulls_dropped > 0);
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || tx.poll_transmit(Time::ZERO, &mut buf).is_none())
        .expect("thread");
    assert!(t.join().expect("no panic"), "nothing to send");
}

/// The handshake through the harness: the sender host answers the SYN statelessly, the
/// receiver's requests echo the token until the first DATA, and the transfer completes.
#[test]
fn the_receiver_echoes_the_token_until_the_first_data_then_stops() {
    let mut net = Net::new(
        RcpConfig::default(),
        RcpCc::default(),
        50_000,
        Duration::from_millis(10),
    );
    net.run_until(Time::from_millis(200));
    assert_eq!(net.stateless, (1, 0), "one SYN+ACK, no reset");
    let tokens: Vec<bool> = net
        .sent_requests
        .iter()
        .filter_map(|(_, b)| Request::decode(b).ok())
        .filter(|r| !r.flags.contains(Flags::SYN))
        .map(|r| r.token.is_some())
        .collect();
    assert!(tokens[0], "the first request echoes the token");
    assert!(
        tokens.iter().skip(1).all(|t| !t),
        "none after DATA: {tokens:?}"
    );
    net.run_until(Time::from_secs_f64(10.0));
    assert!(net.done());
    assert_eq!(net.delivered, rcp_support::object_bytes(50_000));
}

/// Timer arithmetic saturates: RTOs at the top of their range (any value `validate` accepts)
/// back off without overflowing, for the SYN, persist probes and the pipe's RTO.
#[test]
fn timers_at_the_top_of_their_range_saturate() {
    let config = Arc::new(RcpConfig {
        initial_rto_ms: u64::MAX,
        min_rto_ms: u64::MAX / 2,
        max_rto_ms: u64::MAX,
        ..RcpConfig::default()
    });
    config.validate().expect("accepted");
    let mut rx = receiver(&config);
    let mut buf = Vec::new();
    let mut now = Time::ZERO;
    for _ in 0..10 {
        while rx.poll_transmit(now, &mut buf).is_some() {}
        now = rx.poll_timeout().unwrap_or(Time::MAX);
        rx.handle_timeout(now);
    }
    // Established, blocked by a zero window: persist probes back off too.
    let mut rx = receiver(&config);
    let tx = open_pair(&config, store(10), &mut rx, Time::ZERO);
    drop(tx);
    for _ in 0..10 {
        while rx.poll_transmit(now, &mut buf).is_some() {}
        now = rx.poll_timeout().unwrap_or(Time::MAX);
        rx.handle_timeout(now);
    }
}

proptest! {
    /// The reassembly buffer against a model, anywhere in the u64 offset space: segments of
    /// any length at any offset near a base (wrapping past the top of the range), with
    /// contents that disagree where they overlap. The first byte received for an offset is
    /// the one kept; what is read is exactly the model's contiguous prefix; out-of-order
    /// bytes never exceed the span they cover, nor pieces the limit.
    #[test]
    fn the_reassembly_buffer_keeps_the_first_byte_for_every_offset(
        base in prop_oneof![Just(0u64), Just(u64::MAX - 5000), any::<u64>()],
        segments in proptest::collection::vec((0u64..6000, 0usize..700, any::<u8>()), 1..80),
        max_pieces in 1usize..20,
    ) {
        let mut b = RecvBuffer::with_max_pieces(base, max_pieces);
        let mut model: std::collections::BTreeMap<u64, u8> = Default::default();
        let mut read = Vec::new();
        for (off, len, tag) in segments {
            let seq = base.saturating_add(off);
            let payload: Vec<u8> = (0..len).map(|i| tag.wrapping_add(i as u8)).collect();
            b.insert(seq, &payload);
            let room = usize::try_from(u64::MAX - seq).unwrap_or(usize::MAX).min(len);
            // The model: bytes the buffer took (first writer wins) are those it reports held.
            for (i, v) in payload.iter().enumerate().take(room) {
                let at = seq + i as u64;
                if b.has(at, at + 1) {
                    model.entry(at).or_insert(*v);
                }
            }
            prop_assert!(b.out_of_order_pieces() <= max_pieces);
            prop_assert!(b.out_of_order_bytes() as u64 <= 6700);
            b.read(&mut read, usize::MAX);
        }
        // What was read is the model's contiguous prefix from the base.
        let mut expect = Vec::new();
        let mut at = base;
        while let Some(v) = model.get(&at) {
            expect.push(*v);
            at += 1;
            if at == b.rcv_nxt() {
                break;
            }
        }
        prop_assert_eq!(b.rcv_nxt() - base, read.len() as u64);
        prop_assert_eq!(&read[..], &expect[..read.len().min(expect.len())]);
    }
}
