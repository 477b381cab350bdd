//! Property tests of the pTCP header (ptcp.txt §4.2): valid pTCP segments round-trip exactly,
//! corrupted and arbitrary bytes never make the decoder panic, and whatever decodes re-encodes
//! to bytes that decode to the same value. The decoder is fuzzed too (`fuzz/`, target `ptcp`).

use proptest::prelude::*;
use proptest::sample::Index;
use roam_wire::{
    ConnId, Flags, Header, Options, PacketType, PtcpHandshake, PtcpHeader, PtcpSegment, SackBlock,
    Segment, MAX_PTCP_ADDRS, MAX_PTCP_ADDR_LEN, MAX_SACK_BLOCKS, PTCP_HEADER_LEN,
    SEGMENT_FIXED_LEN,
};

/// A pTCP segment that owns its payload, so strategies can produce it.
#[derive(Debug, Clone)]
struct Owned {
    ptcp: PtcpHeader,
    handshake: Option<(u8, u8, Vec<u8>)>,
    head: (ConnId, Flags, u64, u64, u32, u32, u32),
    options: Options,
    payload: Vec<u8>,
}

impl Owned {
    fn as_ptcp(&self) -> PtcpSegment<'_> {
        let (conn_id, flags, seq, ack, window, ts_val, ts_ecr) = self.head;
        PtcpSegment {
            ptcp: PtcpHeader {
                pipe: conn_id,
                syn: self.handshake.is_some(),
                ..self.ptcp
            },
            handshake: self
                .handshake
                .as_ref()
                .map(|(ntx, nrx, list)| PtcpHandshake {
                    ntx: *ntx,
                    nrx: *nrx,
                    list,
                }),
            segment: Segment {
                conn_id,
                flags,
                seq,
                ack,
                window,
                ts_val,
                ts_ecr,
                options: self.options,
                payload: &self.payload,
            },
        }
    }
}

fn options() -> impl Strategy<Value = Options> {
    (
        proptest::option::of(any::<u16>()),
        any::<bool>(),
        proptest::collection::vec((any::<u64>(), 1..u64::MAX / 2), 0..=MAX_SACK_BLOCKS),
    )
        .prop_map(|(mss, sack_permitted, blocks)| {
            let mut opts = Options {
                mss,
                sack_permitted,
                ..Options::default()
            };
            for (start, len) in blocks {
                let start = start / 2;
                assert!(opts.push_sack(SackBlock {
                    start,
                    end: start + len,
                }));
            }
            opts
        })
}

fn ptcp_segment() -> impl Strategy<Value = Owned> {
    (
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<bool>(),
        ),
        (any::<u64>(), 0..=Flags::ALL.0, any::<u64>(), any::<u64>()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        options(),
        proptest::collection::vec(any::<u8>(), 0..1500),
        proptest::option::of((
            any::<u8>(),
            any::<u8>(),
            proptest::collection::vec(
                proptest::collection::vec(any::<u8>(), 0..=MAX_PTCP_ADDR_LEN),
                0..=MAX_PTCP_ADDRS,
            ),
        )),
    )
        .prop_map(
            |(
                (src, dst, pseq, pack, fin),
                (conn, flags, seq, ack),
                (window, tv, te),
                options,
                payload,
                handshake,
            )| {
                let handshake = handshake.map(|(ntx, nrx, addrs)| {
                    let addrs: Vec<&[u8]> = addrs.iter().map(Vec::as_slice).collect();
                    let mut list = Vec::new();
                    PtcpHandshake::write_list(&addrs, &mut list).expect("within the bounds");
                    (ntx, nrx, list)
                });
                Owned {
                    handshake,
                    ptcp: PtcpHeader {
                        pipe: ConnId(conn),
                        syn: false,
                        src: ConnId(src),
                        dst: ConnId(dst),
                        // The stream range must not overflow (the decoder rejects it).
                        seq: pseq.min(u64::MAX - payload.len() as u64),
                        ack: pack,
                        fin,
                    },
                    head: (ConnId(conn), Flags(flags), seq, ack, window, tv, te),
                    options,
                    payload,
                }
            },
        )
}

/// Decodes `bytes` as a pTCP segment; what decodes re-encodes to at most as many bytes (unknown
/// options are dropped) that decode to the same value.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    prop_assert!(!roam_wire::Summary(bytes).to_string().is_empty());
    if let Ok((h, rest)) = PtcpHeader::decode(bytes) {
        prop_assert_eq!(rest.len() + PTCP_HEADER_LEN, bytes.len());
        let mut out = Vec::new();
        h.encode(&mut out);
        prop_assert_eq!(&out[..], &bytes[..PTCP_HEADER_LEN]);
    }
    if let Ok(p) = PtcpSegment::decode(bytes) {
        let header = Header::decode(bytes).expect("a pTCP segment has a header");
        prop_assert_eq!(header.packet_type, PacketType::Ptcp);
        prop_assert_eq!(header.conn_id, p.ptcp.pipe);
        prop_assert_eq!(header.conn_id, p.segment.conn_id);
        prop_assert_eq!(p.ptcp.syn, p.handshake.is_some());
        let mut out = Vec::new();
        p.encode(&mut out);
        prop_assert_eq!(out.len(), p.encoded_len());
        prop_assert!(out.len() <= bytes.len());
        prop_assert_eq!(PtcpSegment::decode(&out), Ok(p));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn valid_ptcp_segment_round_trips_exactly(owned in ptcp_segment()) {
        let p = owned.as_ptcp();
        let mut bytes = vec![0xee; 3];
        p.encode(&mut bytes);
        let bytes = &bytes[3..];
        prop_assert_eq!(bytes.len(), p.encoded_len());
        prop_assert_eq!(
            bytes.len(),
            PTCP_HEADER_LEN + p.handshake.map_or(0, |h| 4 + h.list.len()) + SEGMENT_FIXED_LEN
                + p.segment.options.encoded_len() + p.segment.payload.len()
        );
        prop_assert_eq!(PtcpSegment::decode(bytes), Ok(p));
        let (h, rest) = PtcpHeader::decode(bytes).expect("header decodes");
        prop_assert_eq!(h, p.ptcp);
        let ext = p.handshake.map_or(0, |h| 4 + h.list.len());
        prop_assert_eq!(Segment::decode(&rest[ext..]), Ok(p.segment));
        if let Some(hs) = p.handshake {
            let addrs: Vec<&[u8]> = hs.addresses().collect();
            prop_assert_eq!(addrs.len(), usize::from(hs.list[0]));
        }
        prop_assert_eq!(p.stream_end(), p.ptcp.seq + p.segment.payload.len() as u64);
        // A pTCP datagram is no plain segment, and the reverse.
        prop_assert!(Segment::decode(bytes).is_err());
        prop_assert!(PtcpSegment::decode(&rest[ext..]).is_err());
    }

    #[test]
    fn corrupted_ptcp_segments_never_panic(
        owned in ptcp_segment(),
        at in any::<Index>(),
        byte in any::<u8>(),
        cut in any::<Index>(),
    ) {
        let mut bytes = Vec::new();
        owned.as_ptcp().encode(&mut bytes);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        check(&bytes)?;
        bytes.truncate(cut.index(bytes.len() + 1));
        check(&bytes)?;
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_ptcp_decoder(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        check(&bytes)?;
        // With a valid common header of the pTCP type in front, the rest is arbitrary.
        let mut framed = vec![roam_wire::VERSION, PacketType::Ptcp as u8, 0, 0];
        framed.extend_from_slice(&bytes);
        check(&framed)?;
    }
}
