//! Property tests: valid segments round-trip exactly, and no input makes a decoder panic.
//!
//! The same decoders are fuzzed with cargo-fuzz (`fuzz/`); these properties keep the contract
//! checked on every `cargo test`.

use proptest::prelude::*;
use proptest::sample::Index;
use roam_wire::{
    ConnId, Flags, Header, LastLinkReport, LinkInfoReport, Options, PacketType, ProbeKind,
    ProbeOption, SackBlock, Segment, MAX_OPTIONS_LEN, MAX_SACK_BLOCKS, SEGMENT_FIXED_LEN,
};

/// A segment that owns its payload, so strategies can produce it.
#[derive(Debug, Clone)]
struct OwnedSegment {
    conn_id: ConnId,
    flags: Flags,
    seq: u64,
    ack: u64,
    window: u32,
    ts_val: u32,
    ts_ecr: u32,
    options: Options,
    payload: Vec<u8>,
}

impl OwnedSegment {
    fn as_segment(&self) -> Segment<'_> {
        Segment {
            conn_id: self.conn_id,
            flags: self.flags,
            seq: self.seq,
            ack: self.ack,
            window: self.window,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
            options: self.options,
            payload: &self.payload,
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.as_segment().encode(&mut out);
        out
    }
}

fn sack_block() -> impl Strategy<Value = SackBlock> {
    (any::<u64>(), any::<u64>()).prop_filter_map("empty block", |(a, b)| {
        (a != b).then(|| SackBlock {
            start: a.min(b),
            end: a.max(b),
        })
    })
}

fn probe() -> impl Strategy<Value = ProbeOption> {
    let kind = prop_oneof![
        Just(ProbeKind::Probe1),
        Just(ProbeKind::Pr1Ack),
        Just(ProbeKind::Probe2),
        Just(ProbeKind::Pr2Ack),
    ];
    (kind, any::<u32>()).prop_map(|(kind, id)| ProbeOption { kind, id })
}

fn last_link() -> impl Strategy<Value = LastLinkReport> {
    (any::<u64>(), 0u32..=1_000_000).prop_map(|(bandwidth_bps, per_ppm)| LastLinkReport {
        bandwidth_bps,
        per_ppm,
    })
}

fn link_info() -> impl Strategy<Value = LinkInfoReport> {
    (0u32..=1_000_000, any::<u32>(), any::<u16>()).prop_map(|(p_w_ppm, d_w_us, handoff_count)| {
        LinkInfoReport {
            p_w_ppm,
            d_w_us,
            handoff_count,
        }
    })
}

/// Every combination of valid options; unused SACK slots stay at their default, as decoding
/// leaves them.
fn options() -> impl Strategy<Value = Options> {
    (
        proptest::option::of(any::<u16>()),
        any::<bool>(),
        proptest::collection::vec(sack_block(), 0..=MAX_SACK_BLOCKS),
        proptest::option::of(probe()),
        proptest::option::of(last_link()),
        proptest::option::of(link_info()),
    )
        .prop_map(
            |(mss, sack_permitted, blocks, probe, last_link, link_info)| {
                let mut opts = Options {
                    mss,
                    sack_permitted,
                    probe,
                    last_link,
                    link_info,
                    ..Options::default()
                };
                for block in blocks {
                    assert!(opts.push_sack(block));
                }
                opts
            },
        )
}

fn segment() -> impl Strategy<Value = OwnedSegment> {
    (
        (any::<u64>(), 0..=Flags::ALL.0, any::<u64>(), any::<u64>()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        options(),
        proptest::collection::vec(any::<u8>(), 0..1500),
    )
        .prop_map(
            |((conn_id, flags, seq, ack), (window, ts_val, ts_ecr), options, payload)| {
                OwnedSegment {
                    conn_id: ConnId(conn_id),
                    flags: Flags(flags),
                    seq,
                    ack,
                    window,
                    ts_val,
                    ts_ecr,
                    options,
                    payload,
                }
            },
        )
}

/// A small corruption of a valid encoding.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    SetByte(Index, u8),
    Truncate(Index),
    Extend(Vec<u8>),
}

impl Mutation {
    fn apply(&self, bytes: &mut Vec<u8>) {
        match self {
            Mutation::FlipBit(i, bit) if !bytes.is_empty() => {
                let i = i.index(bytes.len());
                bytes[i] ^= 1 << (bit % 8);
            }
            Mutation::SetByte(i, b) if !bytes.is_empty() => {
                let i = i.index(bytes.len());
                bytes[i] = *b;
            }
            Mutation::Truncate(i) => {
                let at = i.index(bytes.len() + 1);
                bytes.truncate(at);
            }
            Mutation::Extend(more) => bytes.extend_from_slice(more),
            _ => {}
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, bit)| Mutation::FlipBit(i, bit)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        any::<Index>().prop_map(Mutation::Truncate),
        proptest::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Extend),
    ]
}

/// Runs every decoder on `bytes`; whatever decodes must re-encode to something that decodes to
/// the same value.
fn check_decoders(bytes: &[u8]) -> Result<(), TestCaseError> {
    // The one-line summary decodes too: it must not panic either.
    prop_assert!(!roam_wire::Summary(bytes).to_string().is_empty());
    let header = Header::decode(bytes);
    let peeked = Header::peek_conn_id(bytes);
    if let Ok(h) = header {
        prop_assert_eq!(peeked, Ok(h.conn_id));
        let mut out = Vec::new();
        h.encode(&mut out);
        prop_assert_eq!(Header::decode(&out), Ok(h));
    }
    if let Ok(opts) = Options::decode(bytes) {
        let mut out = Vec::new();
        opts.encode(&mut out);
        prop_assert_eq!(out.len(), opts.encoded_len());
        prop_assert_eq!(Options::decode(&out), Ok(opts));
    }
    if let Ok(seg) = Segment::decode(bytes) {
        prop_assert_eq!(header.map(|h| h.packet_type), Ok(PacketType::Segment));
        let mut out = Vec::new();
        seg.encode(&mut out);
        prop_assert_eq!(out.len(), seg.encoded_len());
        // Unknown options are dropped, so the re-encoding is never longer.
        prop_assert!(out.len() <= bytes.len());
        prop_assert_eq!(Segment::decode(&out), Ok(seg));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn valid_segment_round_trips_exactly(owned in segment()) {
        let seg = owned.as_segment();
        let mut bytes = vec![0xee; 3];
        seg.encode(&mut bytes);
        let bytes = &bytes[3..];
        prop_assert_eq!(bytes.len(), seg.encoded_len());
        prop_assert_eq!(
            bytes.len(),
            SEGMENT_FIXED_LEN + seg.options.encoded_len() + seg.payload.len()
        );
        prop_assert!(seg.options.encoded_len() <= MAX_OPTIONS_LEN);
        prop_assert_eq!(Segment::decode(bytes), Ok(seg));
        prop_assert_eq!(Header::peek_conn_id(bytes), Ok(seg.conn_id));
        let header = Header { packet_type: PacketType::Segment, flags: seg.flags, conn_id: seg.conn_id };
        prop_assert_eq!(Header::decode(bytes), Ok(header));
    }

    #[test]
    fn valid_options_round_trip_exactly(opts in options()) {
        let mut bytes = Vec::new();
        opts.encode(&mut bytes);
        prop_assert_eq!(bytes.len(), opts.encoded_len());
        prop_assert_eq!(Options::decode(&bytes), Ok(opts));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        check_decoders(&bytes)?;
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_header_never_panic(
        owned in segment(),
        tail in proptest::collection::vec(any::<u8>(), 0..2000),
    ) {
        // Random bytes alone rarely get past the version and type checks; keep the header.
        let mut bytes = owned.encode();
        bytes.truncate(roam_wire::HEADER_LEN);
        bytes.extend_from_slice(&tail);
        check_decoders(&bytes)?;
    }

    #[test]
    fn mutated_valid_segments_never_panic(
        owned in segment(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = owned.encode();
        for m in &mutations {
            m.apply(&mut bytes);
        }
        check_decoders(&bytes)?;
    }

    #[test]
    fn mutated_valid_options_never_panic(
        opts in options(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let mut bytes = Vec::new();
        opts.encode(&mut bytes);
        for m in &mutations {
            m.apply(&mut bytes);
        }
        check_decoders(&bytes)?;
    }
}
