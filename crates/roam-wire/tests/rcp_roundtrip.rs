//! Property tests for the RCP formats (REQ and DATA): valid datagrams round-trip exactly, and
//! no input (arbitrary or a mutated valid datagram) makes a decoder panic.

use proptest::prelude::*;
use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, Token, MAX_OBJECT_NAME,
    MAX_REQUEST_BLOCKS, SYN_MIN_LEN, TOKEN_LEN,
};

#[derive(Debug, Clone)]
struct OwnedRequest {
    conn_id: ConnId,
    flags: Flags,
    mode: RequestMode,
    req: u64,
    deq: u32,
    ts_val: u32,
    ts_ecr: u32,
    blocks: Vec<PullBlock>,
    object: Vec<u8>,
    token: Option<Token>,
}

impl OwnedRequest {
    fn as_request(&self) -> Request<'_> {
        let mut blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        for (b, x) in blocks.iter_mut().zip(&self.blocks) {
            *b = *x;
        }
        Request {
            conn_id: self.conn_id,
            flags: self.flags,
            mode: self.mode,
            req: self.req,
            deq: self.deq,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
            nblocks: self.blocks.len() as u8,
            blocks,
            object: if self.flags.contains(Flags::SYN) || self.token.is_some() {
                &self.object
            } else {
                &[]
            },
            token: self.token,
        }
    }
}

fn block() -> impl Strategy<Value = PullBlock> {
    (any::<u32>(), 0u64..u64::MAX - 1, 1u64..1 << 20).prop_map(|(id, start, len)| PullBlock {
        id,
        start,
        end: start.saturating_add(len).max(start + 1),
    })
}

fn request() -> impl Strategy<Value = OwnedRequest> {
    (
        any::<u64>(),
        0u16..16,
        0u8..4,
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        proptest::collection::vec(block(), 1..=MAX_REQUEST_BLOCKS),
        proptest::collection::vec(any::<u8>(), 0..=MAX_OBJECT_NAME),
        token(),
    )
        .prop_map(
            |(id, flags, mode, req, deq, ts_val, ts_ecr, blocks, object, token)| OwnedRequest {
                conn_id: ConnId(id),
                flags: Flags(flags),
                mode: RequestMode(mode),
                req,
                deq,
                ts_val,
                ts_ecr,
                blocks,
                object,
                token,
            },
        )
}

fn token() -> impl Strategy<Value = Option<Token>> {
    proptest::option::of(any::<[u8; TOKEN_LEN]>().prop_map(Token))
}

proptest! {
    #[test]
    fn requests_round_trip_exactly(r in request()) {
        let req = r.as_request();
        let mut out = Vec::new();
        req.encode(&mut out);
        prop_assert_eq!(out.len(), req.encoded_len());
        prop_assert_eq!(Request::decode(&out), Ok(req));
        if req.flags.contains(Flags::SYN) {
            prop_assert!(out.len() >= SYN_MIN_LEN, "a SYN is never shorter than a SYN+ACK");
        }
    }

    #[test]
    fn data_round_trips_exactly(
        id in any::<u64>(), flags in 0u16..16, seq in 0u64..1 << 62, window in any::<u64>(),
        object_len in proptest::option::of(any::<u64>()), ts_val in any::<u32>(), ts_ecr in any::<u32>(),
        pull_id in any::<u32>(), payload in proptest::collection::vec(any::<u8>(), 0..1500),
        token in token(),
    ) {
        let d = Data { conn_id: ConnId(id), flags: Flags(flags), seq, window, object_len,
            ts_val, ts_ecr, pull_id, token, payload: &payload };
        let mut out = Vec::new();
        d.encode(&mut out);
        prop_assert_eq!(out.len(), d.encoded_len());
        prop_assert_eq!(Data::decode(&out), Ok(d));
    }

    #[test]
    fn arbitrary_bytes_never_panic_rcp_decoders(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert!(!roam_wire::Summary(&bytes).to_string().is_empty());
        let _ = Request::decode(&bytes);
        let _ = Data::decode(&bytes);
    }

    #[test]
    fn mutated_requests_never_panic(r in request(), at in any::<prop::sample::Index>(), v in any::<u8>(), cut in any::<prop::sample::Index>()) {
        let mut out = Vec::new();
        r.as_request().encode(&mut out);
        let i = at.index(out.len());
        out[i] = v;
        let _ = Request::decode(&out);
        out.truncate(cut.index(out.len() + 1));
        let _ = Request::decode(&out);
    }
}
