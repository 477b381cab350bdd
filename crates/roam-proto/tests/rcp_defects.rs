//! Issue 16's RCP defects, each shown by a test against the engine as it was: these fail until
//! the fixes that follow them (and are then rewritten for the new API).

mod rcp_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rcp_support::MapStore;
use roam_proto::rcp::{
    reset_for, ObjectStore, RcpCc, RcpConfig, RcpReceiver, RcpSender, RecvBuffer,
};
use roam_proto::Time;
use roam_wire::{ConnId, Data, Flags, PullBlock, Request, RequestMode, MAX_REQUEST_BLOCKS};

fn syn(config: &RcpConfig) -> Vec<u8> {
    let mut rx = RcpReceiver::connect(
        Arc::new(config.clone()),
        RcpCc::default(),
        ConnId(5),
        b"obj",
        (0, u64::MAX),
        Time::ZERO,
    )
    .expect("valid config");
    let mut syn = Vec::new();
    rx.poll_transmit(Time::ZERO, &mut syn).expect("a SYN");
    syn
}

fn store(len: usize) -> Arc<MapStore> {
    let mut s = MapStore::default();
    s.0.insert(b"obj".to_vec(), vec![7; len]);
    Arc::new(s)
}

fn cumulative(req: u64, deq: u32) -> Vec<u8> {
    let mut out = Vec::new();
    Request {
        conn_id: ConnId(5),
        flags: Flags::ACK,
        mode: RequestMode::default(),
        req,
        deq,
        ts_val: 1,
        ts_ecr: 0,
        nblocks: 0,
        blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
        object: &[],
    }
    .encode(&mut out);
    out
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

/// "An RCP sender becomes established on any ACK and then serves pulls of any size": a SYN
/// from a forged address gets a SYN+ACK larger than itself, and an ACK from someone who never
/// saw that SYN+ACK gets data.
#[test]
fn an_unvalidated_peer_gets_nothing_larger_than_it_sent() {
    let config = RcpConfig::default();
    let syn = syn(&config);
    let mut tx = RcpSender::accept(&config, store(1 << 20), Time::ZERO, &syn).expect("accepted");
    let mut buf = Vec::new();
    let n = tx.poll_transmit(Time::ZERO, &mut buf).expect("SYN+ACK");
    assert!(
        n <= syn.len(),
        "SYN+ACK {n} bytes for a {}-byte SYN",
        syn.len()
    );
    // The attacker guesses the handshake's last step without having seen the SYN+ACK.
    tx.handle_datagram(Time::ZERO, &cumulative(1 << 20, 1 << 20))
        .expect("decodes");
    assert!(
        tx.poll_transmit(Time::ZERO, &mut buf).is_none(),
        "data sent before the peer proved its address"
    );
}

/// A receiver that never reports progress (SEG.DEQ stays at 0) pins every byte the sender
/// sent.
#[test]
fn a_receiver_that_never_dequeues_cannot_pin_the_object() {
    let config = RcpConfig::default();
    let syn = syn(&config);
    let mut tx = RcpSender::accept(&config, store(1 << 20), Time::ZERO, &syn).expect("accepted");
    let mut buf = Vec::new();
    while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    tx.handle_datagram(Time::ZERO, &cumulative(1 << 20, 1 << 20))
        .expect("decodes");
    while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    assert!(
        tx.buffered_bytes() <= 64 << 10,
        "sender holds {} bytes",
        tx.buffered_bytes()
    );
}

/// "ObjectStore::read is synchronous and called inside poll_transmit; a file-backed store
/// would block an async executor."
#[test]
fn the_sender_never_reads_its_store_inside_poll_transmit() {
    struct Watched {
        inner: Arc<MapStore>,
        in_poll: AtomicBool,
        read_in_poll: AtomicBool,
    }
    impl ObjectStore for Watched {
        fn object_len(&self, name: &[u8]) -> Option<u64> {
            self.inner.object_len(name)
        }
        fn read(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
            if self.in_poll.load(Ordering::Relaxed) {
                self.read_in_poll.store(true, Ordering::Relaxed);
            }
            self.inner.read(name, offset, len, out);
        }
    }
    let config = RcpConfig::default();
    let syn = syn(&config);
    let watched = Arc::new(Watched {
        inner: store(100_000),
        in_poll: AtomicBool::new(false),
        read_in_poll: AtomicBool::new(false),
    });
    let mut tx = RcpSender::accept(&config, watched.clone(), Time::ZERO, &syn).expect("accepted");
    tx.handle_datagram(Time::ZERO, &cumulative(50_000, 50_000))
        .expect("decodes");
    let mut buf = Vec::new();
    watched.in_poll.store(true, Ordering::Relaxed);
    while tx.poll_transmit(Time::ZERO, &mut buf).is_some() {}
    assert!(
        !watched.read_in_poll.load(Ordering::Relaxed),
        "the store was read inside poll_transmit"
    );
}

/// A reset answers a request naming no connection, from an address nobody validated: it
/// must never be larger than that request.
#[test]
fn a_reset_is_never_larger_than_the_request() {
    let req = cumulative(5000, 0);
    let mut buf = Vec::new();
    if let Some(n) = reset_for(Time::ZERO, &req, &mut buf) {
        assert!(
            n <= req.len(),
            "{n}-byte reset for a {}-byte request",
            req.len()
        );
    }
}

/// A hostile sender raising its window one byte at a time makes the receiver request one-byte
/// units, each costing far more memory than the byte it asks for.
#[test]
fn window_updates_of_one_byte_cannot_multiply_the_receivers_units() {
    let config = RcpConfig {
        recv_buffer: 4000,
        ..RcpConfig::default()
    };
    let mut rx = RcpReceiver::connect(
        Arc::new(config.clone()),
        RcpCc::default(),
        ConnId(5),
        b"obj",
        (0, u64::MAX),
        Time::ZERO,
    )
    .expect("valid config");
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

/// Pull blocks for bytes the object does not have are queued and then skipped one recursive
/// call at a time: enough of them overflow the stack (a process abort, not a test failure).
#[test]
fn pulls_past_the_object_do_not_overflow_the_stack() {
    let config = RcpConfig::default();
    let syn = syn(&config);
    let mut tx = RcpSender::accept(&config, store(1000), Time::ZERO, &syn).expect("accepted");
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
        let mut out = Vec::new();
        Request {
            conn_id: ConnId(5),
            flags: Flags::ACK,
            mode: RequestMode::PULL,
            req: 0,
            deq: 0,
            ts_val: 1,
            ts_ecr: 0,
            nblocks: 3,
            blocks,
            object: &[],
        }
        .encode(&mut out);
        let _ = tx.handle_datagram(Time::ZERO, &out);
    }
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || tx.poll_transmit(Time::ZERO, &mut buf).is_none())
        .expect("thread");
    assert!(t.join().expect("no panic"), "nothing to send");
}
