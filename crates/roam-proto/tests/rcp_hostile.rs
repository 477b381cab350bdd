//! Untrusted input never panics, past the decoder too: at any moment of a transfer, from
//! before the handshake to after the teardown, RCP datagrams with hostile fields are handed to
//! both ends — to the sender's host (its acceptor before the connection exists, the sender
//! after), requests with any flags and modes, request edges and in-order points anywhere,
//! pull blocks for bytes the object does not have, tokens and object names of any value; to
//! the receiver, DATA with any flags, offsets, windows, object lengths, pull ids, tokens and
//! payloads — mostly with the connection's own id, sometimes any id; also arbitrary bytes, and
//! earlier datagrams of the transfer replayed with mutations. Both engines must keep running
//! (forged in-window data may corrupt the object: RCP, like TCP, does not authenticate its
//! peer), and the sender's host never answers with more than it received.

mod rcp_support;

use std::time::Duration;

use proptest::prelude::*;
use rcp_support::Net;
use roam_proto::rcp::{RcpCc, RcpConfig};
use roam_proto::Time;
use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, Token, MAX_REQUEST_BLOCKS, TOKEN_LEN,
    UNKNOWN_LENGTH,
};

/// The object's length in these runs.
const OBJECT_LEN: usize = 150_000;

/// An object offset: mostly near the object, sometimes anywhere.
fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..200_000, 1 => any::<u64>()]
}

/// Any flags; a reset only now and then, so that most runs go on under fire.
fn flags() -> impl Strategy<Value = u16> {
    prop_oneof![
        9 => (0..=Flags::ALL.0).prop_map(|f| f & !Flags::RST.0),
        1 => 0..=Flags::ALL.0,
    ]
}

/// Mostly the connection's own id, sometimes any.
fn conn_id() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![9 => Just(None), 1 => any::<u64>().prop_map(Some)]
}

fn token() -> impl Strategy<Value = Option<Token>> {
    proptest::option::of(any::<[u8; TOKEN_LEN]>().prop_map(Token))
}

/// A forged datagram and when it is delivered.
#[derive(Debug, Clone)]
enum Forged {
    /// A request to the sender's host.
    Request {
        at_ms: u64,
        conn: Option<u64>,
        flags: u16,
        mode: u8,
        req: u64,
        deq: u32,
        ts: (u32, u32),
        blocks: Vec<(u32, u64, u64)>,
        token: Option<Token>,
        object: Vec<u8>,
    },
    /// Data to the receiver.
    Data {
        at_ms: u64,
        conn: Option<u64>,
        flags: u16,
        seq: u64,
        window: u64,
        object_len: Option<u64>,
        ts: (u32, u32),
        pull_id: u32,
        token: Option<Token>,
        payload_len: usize,
    },
    /// Arbitrary bytes to either end.
    Raw {
        at_ms: u64,
        to_sender: bool,
        bytes: Vec<u8>,
    },
    /// An earlier datagram of the transfer (chosen modulo their number), with bytes changed.
    Replay {
        at_ms: u64,
        to_sender: bool,
        pick: prop::sample::Index,
        mutations: Vec<(prop::sample::Index, u8)>,
    },
}

fn forged() -> impl Strategy<Value = Forged> {
    let request = (
        (0u64..3000, conn_id(), flags(), 0..=RequestMode::ALL.0),
        (offset(), any::<u32>(), any::<u32>(), any::<u32>()),
        proptest::collection::vec((0u32..64, offset(), offset()), 0..=MAX_REQUEST_BLOCKS),
        (
            token(),
            prop_oneof![
                Just(b"obj".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..8)
            ],
        ),
    )
        .prop_map(
            |((at_ms, conn, flags, mode), (req, deq, ts_val, ts_ecr), blocks, (token, object))| {
                Forged::Request {
                    at_ms,
                    conn,
                    flags,
                    mode,
                    req,
                    deq,
                    ts: (ts_val, ts_ecr),
                    blocks,
                    token,
                    object,
                }
            },
        );
    let data = (
        (0u64..3000, conn_id(), flags(), offset(), offset()),
        proptest::option::of(prop_oneof![offset(), Just(UNKNOWN_LENGTH)]),
        (any::<u32>(), any::<u32>(), 0u32..64, 0usize..1400),
        token(),
    )
        .prop_map(
            |(
                (at_ms, conn, flags, seq, window),
                object_len,
                (ts_val, ts_ecr, pull_id, payload_len),
                token,
            )| {
                Forged::Data {
                    at_ms,
                    conn,
                    flags,
                    seq,
                    window,
                    object_len,
                    ts: (ts_val, ts_ecr),
                    pull_id,
                    token,
                    payload_len,
                }
            },
        );
    let raw = (
        0u64..3000,
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..120),
    )
        .prop_map(|(at_ms, to_sender, bytes)| Forged::Raw {
            at_ms,
            to_sender,
            bytes,
        });
    let replay = (
        0u64..3000,
        any::<bool>(),
        any::<prop::sample::Index>(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    )
        .prop_map(|(at_ms, to_sender, pick, mutations)| Forged::Replay {
            at_ms,
            to_sender,
            pick,
            mutations,
        });
    prop_oneof![4 => request, 4 => data, 1 => raw, 3 => replay]
}

impl Forged {
    fn at(&self) -> Time {
        let (Forged::Request { at_ms, .. }
        | Forged::Data { at_ms, .. }
        | Forged::Raw { at_ms, .. }
        | Forged::Replay { at_ms, .. }) = self;
        Time::from_millis(*at_ms)
    }

    /// Hands the datagram to its end of `net`.
    fn deliver(&self, net: &mut Net, conn_id: ConnId) {
        let mut out = Vec::new();
        match self {
            Forged::Raw {
                to_sender, bytes, ..
            } => {
                if *to_sender {
                    net.deliver_to_sender_host(bytes);
                } else {
                    let _ = net.rx.handle_datagram(net.now, bytes);
                }
            }
            Forged::Replay {
                to_sender,
                pick,
                mutations,
                ..
            } => {
                let seen = if *to_sender {
                    &net.sent_requests
                } else {
                    &net.sent_data
                };
                if seen.is_empty() {
                    return;
                }
                let mut bytes = seen[pick.index(seen.len())].1.clone();
                for (at, v) in mutations {
                    if !bytes.is_empty() {
                        let i = at.index(bytes.len());
                        bytes[i] = *v;
                    }
                }
                if *to_sender {
                    net.deliver_to_sender_host(&bytes);
                } else {
                    let _ = net.rx.handle_datagram(net.now, &bytes);
                }
            }
            Forged::Request {
                conn,
                flags,
                mode,
                req,
                deq,
                ts,
                blocks,
                token,
                object,
                ..
            } => {
                let mut request = Request {
                    conn_id: conn.map_or(conn_id, ConnId),
                    flags: Flags(*flags),
                    mode: RequestMode(*mode),
                    req: *req,
                    deq: *deq,
                    ts_val: ts.0,
                    ts_ecr: ts.1,
                    nblocks: 0,
                    blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
                    object,
                    token: *token,
                };
                for &(id, a, b) in blocks.iter().filter(|(_, a, b)| a != b) {
                    let slot = usize::from(request.nblocks);
                    request.blocks[slot] = PullBlock {
                        id,
                        start: a.min(b),
                        end: a.max(b),
                    };
                    request.nblocks += 1;
                }
                request.encode(&mut out);
                net.deliver_to_sender_host(&out);
            }
            Forged::Data {
                conn,
                flags,
                seq,
                window,
                object_len,
                ts,
                pull_id,
                token,
                payload_len,
                ..
            } => {
                let payload = vec![0x5A; *payload_len];
                Data {
                    conn_id: conn.map_or(conn_id, ConnId),
                    flags: Flags(*flags),
                    seq: *seq,
                    window: *window,
                    object_len: *object_len,
                    ts_val: ts.0,
                    ts_ecr: ts.1,
                    pull_id: *pull_id,
                    token: *token,
                    payload: &payload,
                }
                .encode(&mut out);
                let _ = net.rx.handle_datagram(net.now, &out);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn forged_datagrams_never_make_an_engine_panic(
        stp in any::<bool>(),
        eln in any::<bool>(),
        status_interval_ms in prop_oneof![Just(0u64), 1u64..100],
        host_reads in any::<bool>(),
        mut forged in proptest::collection::vec(forged(), 1..40),
    ) {
        let config = RcpConfig {
            eln,
            status_interval_ms,
            ..RcpConfig::default()
        };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = Net::new(config, cc, OBJECT_LEN, Duration::from_millis(20));
        if host_reads {
            net = net.with_host_reads(Duration::from_millis(3));
        }
        let conn_id = net.rx.conn_id();
        forged.sort_by_key(Forged::at);
        for f in &forged {
            net.run_until(f.at());
            f.deliver(&mut net, conn_id);
        }
        net.run_until(Time::from_secs_f64(600.0));
        // Both ends still answer the host's calls.
        let _ = net.rx.poll_timeout();
        let _ = net.rx.stats();
    }
}
