//! Untrusted input never panics, past the decoder too: during a transfer, well-formed RCP
//! datagrams with the connection's own id but hostile fields are handed to both ends — to the
//! sender, requests with any flags and modes, request edges and in-order points anywhere, pull
//! blocks for bytes the object does not have; to the receiver, DATA with any flags, offsets,
//! windows, object lengths, pull ids and payloads. Both engines must keep running (forged
//! in-window data may corrupt the object: RCP, like TCP, does not authenticate its peer).

mod rcp_support;

use std::time::Duration;

use proptest::prelude::*;
use rcp_support::Net;
use roam_proto::rcp::{RcpCc, RcpConfig};
use roam_proto::Time;
use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, MAX_REQUEST_BLOCKS, UNKNOWN_LENGTH,
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

/// A forged datagram and when it is delivered.
#[derive(Debug, Clone)]
enum Forged {
    /// A request to the sender.
    Request {
        at_ms: u64,
        flags: u16,
        mode: u8,
        req: u64,
        deq: u32,
        ts: (u32, u32),
        blocks: Vec<(u32, u64, u64)>,
    },
    /// Data to the receiver.
    Data {
        at_ms: u64,
        flags: u16,
        seq: u64,
        window: u64,
        object_len: Option<u64>,
        ts: (u32, u32),
        pull_id: u32,
        payload_len: usize,
    },
}

fn forged() -> impl Strategy<Value = Forged> {
    let request = (
        (0u64..3000, flags(), 0..=RequestMode::ALL.0),
        (offset(), any::<u32>(), any::<u32>(), any::<u32>()),
        proptest::collection::vec((0u32..64, offset(), offset()), 0..=MAX_REQUEST_BLOCKS),
    )
        .prop_map(
            |((at_ms, flags, mode), (req, deq, ts_val, ts_ecr), blocks)| Forged::Request {
                at_ms,
                flags,
                mode,
                req,
                deq,
                ts: (ts_val, ts_ecr),
                blocks,
            },
        );
    let data = (
        (0u64..3000, flags(), offset(), offset()),
        proptest::option::of(prop_oneof![offset(), Just(UNKNOWN_LENGTH)]),
        (any::<u32>(), any::<u32>(), 0u32..64, 0usize..1400),
    )
        .prop_map(
            |((at_ms, flags, seq, window), object_len, (ts_val, ts_ecr, pull_id, payload_len))| {
                Forged::Data {
                    at_ms,
                    flags,
                    seq,
                    window,
                    object_len,
                    ts: (ts_val, ts_ecr),
                    pull_id,
                    payload_len,
                }
            },
        );
    prop_oneof![request, data]
}

impl Forged {
    fn at(&self) -> Time {
        let (Forged::Request { at_ms, .. } | Forged::Data { at_ms, .. }) = self;
        Time::from_millis(*at_ms)
    }

    /// Hands the datagram to its end of `net`.
    fn deliver(&self, net: &mut Net, conn_id: ConnId) {
        let mut out = Vec::new();
        match self {
            Forged::Request {
                flags,
                mode,
                req,
                deq,
                ts,
                blocks,
                ..
            } => {
                let mut request = Request {
                    conn_id,
                    flags: Flags(*flags),
                    mode: RequestMode(*mode),
                    req: *req,
                    deq: *deq,
                    ts_val: ts.0,
                    ts_ecr: ts.1,
                    nblocks: 0,
                    blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
                    object: &[],
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
                if let Some(tx) = net.tx.as_mut() {
                    let _ = tx.handle_datagram(net.now, &out);
                }
            }
            Forged::Data {
                flags,
                seq,
                window,
                object_len,
                ts,
                pull_id,
                payload_len,
                ..
            } => {
                let payload = vec![0x5A; *payload_len];
                Data {
                    conn_id,
                    flags: Flags(*flags),
                    seq: *seq,
                    window: *window,
                    object_len: *object_len,
                    ts_val: ts.0,
                    ts_ecr: ts.1,
                    pull_id: *pull_id,
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
        mut forged in proptest::collection::vec(forged(), 1..40),
    ) {
        let config = RcpConfig {
            eln,
            status_interval_ms,
            ..RcpConfig::default()
        };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = Net::new(config, cc, OBJECT_LEN, Duration::from_millis(20));
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
