//! The TCP-like segment used by sender-driven engines.
//!
//! ```text
//! common header (12) | seq u64 | ack u64 | window u32 | ts_val u32 | ts_ecr u32 |
//! opts_len u8 | options (opts_len bytes) | payload (rest of datagram)
//! ```
//! Sequence numbers are 64-bit stream offsets (no wrap-around in any realistic transfer);
//! the SYN and FIN each occupy one sequence number, as in TCP.

use crate::{ConnId, DecodeError, Flags, Header, Options, PacketType, HEADER_LEN};

/// Bytes of a segment before its options: common header + fixed fields + options length byte.
pub const SEGMENT_FIXED_LEN: usize = crate::HEADER_LEN + 8 + 8 + 4 + 4 + 4 + 1;

/// Offsets of the fixed fields (the options length byte is the last of the fixed part).
const SEQ_AT: usize = HEADER_LEN;
const ACK_AT: usize = SEQ_AT + 8;
const WINDOW_AT: usize = ACK_AT + 8;
const TS_VAL_AT: usize = WINDOW_AT + 4;
const TS_ECR_AT: usize = TS_VAL_AT + 4;
const OPTS_LEN_AT: usize = TS_ECR_AT + 4;

/// The `N` bytes at offset `at` of the fixed part (`at + N` is at most its length at every
/// call site, so the copy always takes them).
#[inline]
fn field<const N: usize>(fixed: &[u8; SEGMENT_FIXED_LEN], at: usize) -> [u8; N] {
    let mut out = [0; N];
    if let Some(bytes) = fixed.get(at..at + N) {
        out.copy_from_slice(bytes);
    }
    out
}

/// The error for a datagram (with a valid header) shorter than the fixed part: the first
/// field that does not fit, as a field-by-field read reports it.
fn truncated_fixed_field(len: usize) -> DecodeError {
    let fields = [
        (SEQ_AT, 8),
        (ACK_AT, 8),
        (WINDOW_AT, 4),
        (TS_VAL_AT, 4),
        (TS_ECR_AT, 4),
        (OPTS_LEN_AT, 1),
    ];
    let (offset, needed) = fields
        .into_iter()
        .find(|&(at, n)| at + n > len)
        .unwrap_or((OPTS_LEN_AT, 1));
    DecodeError::Truncated {
        offset,
        needed,
        len,
    }
}

/// The fields of a segment before its options: a [`Segment`] without its (large) options
/// block and payload, for a sender that encodes segments without building one. Encoding it
/// with options (or none) and appending the payload gives exactly [`Segment::encode`]'s bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHead {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// SYN/ACK/FIN/RST/ELN.
    pub flags: Flags,
    /// Sequence number of the first payload byte (or of the SYN/FIN).
    pub seq: u64,
    /// Next sequence number expected by the sender of this segment (valid with ACK).
    pub ack: u64,
    /// Receive window in bytes, counted from `ack`.
    pub window: u32,
    /// Sender's timestamp (µs, wrapping; RFC 7323 TSval).
    pub ts_val: u32,
    /// Echo of the peer's most recent timestamp (RFC 7323 TSecr).
    pub ts_ecr: u32,
}

impl SegmentHead {
    /// Appends the fixed part and `options` to `out`; the payload, if any, is the caller's to
    /// append next.
    pub fn encode(&self, options: &Options, out: &mut Vec<u8>) {
        let opts_len = options.encoded_len();
        out.reserve(SEGMENT_FIXED_LEN + opts_len);
        self.put_fixed(out, opts_len);
        if opts_len > 0 {
            options.write(out);
        }
    }

    /// The segment of these fields with `options` and `payload` (what [`Segment::head`]
    /// undoes).
    pub fn with<'a>(self, options: Options, payload: &'a [u8]) -> Segment<'a> {
        Segment {
            conn_id: self.conn_id,
            flags: self.flags,
            seq: self.seq,
            ack: self.ack,
            window: self.window,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
            options,
            payload,
        }
    }

    /// As [`SegmentHead::encode`] with no options (an empty options area).
    pub fn encode_bare(&self, out: &mut Vec<u8>) {
        out.reserve(SEGMENT_FIXED_LEN);
        self.put_fixed(out, 0);
    }

    /// Appends the fixed part, whose last byte is the length of the options that follow.
    #[inline]
    fn put_fixed(&self, out: &mut Vec<u8>, opts_len: usize) {
        let header = Header {
            packet_type: PacketType::Segment,
            flags: self.flags,
            conn_id: self.conn_id,
        };
        // The fixed part is assembled in place and appended at once.
        let mut fixed = [0u8; SEGMENT_FIXED_LEN];
        fixed[..HEADER_LEN].copy_from_slice(&header.to_bytes());
        fixed[SEQ_AT..ACK_AT].copy_from_slice(&self.seq.to_be_bytes());
        fixed[ACK_AT..WINDOW_AT].copy_from_slice(&self.ack.to_be_bytes());
        fixed[WINDOW_AT..TS_VAL_AT].copy_from_slice(&self.window.to_be_bytes());
        fixed[TS_VAL_AT..TS_ECR_AT].copy_from_slice(&self.ts_val.to_be_bytes());
        fixed[TS_ECR_AT..OPTS_LEN_AT].copy_from_slice(&self.ts_ecr.to_be_bytes());
        // At most MAX_OPTIONS_LEN (< 256, checked by a test) with the defined options.
        fixed[OPTS_LEN_AT] = opts_len as u8;
        out.extend_from_slice(&fixed);
    }
}

/// A decoded (or to-be-encoded) segment borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// SYN/ACK/FIN/RST/ELN.
    pub flags: Flags,
    /// Sequence number of the first payload byte (or of the SYN/FIN).
    pub seq: u64,
    /// Next sequence number expected by the sender of this segment (valid with ACK).
    pub ack: u64,
    /// Receive window in bytes, counted from `ack`.
    pub window: u32,
    /// Sender's timestamp (µs, wrapping; RFC 7323 TSval).
    pub ts_val: u32,
    /// Echo of the peer's most recent timestamp (RFC 7323 TSecr).
    pub ts_ecr: u32,
    /// Options.
    pub options: Options,
    /// Payload bytes.
    pub payload: &'a [u8],
}

impl<'a> Segment<'a> {
    /// Decodes a whole datagram as a segment. Never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<Segment<'a>, DecodeError> {
        let header = Header::decode_as(bytes, PacketType::Segment)?;
        // The fixed fields are checked once and read at their constant offsets.
        let Some((fixed, rest)) = bytes.split_first_chunk::<SEGMENT_FIXED_LEN>() else {
            return Err(truncated_fixed_field(bytes.len()));
        };
        let opts_len = usize::from(fixed[SEGMENT_FIXED_LEN - 1]);
        let Some((options, payload)) = rest.split_at_checked(opts_len) else {
            return Err(DecodeError::OptionsOverrun {
                opts_len,
                remaining: rest.len(),
            });
        };
        // Most segments carry no options: their (large) block is then written straight into
        // the result, not built aside and copied.
        if options.is_empty() {
            return Ok(Self::assemble(&header, fixed, Options::NONE, payload));
        }
        let options = Options::decode(options)?;
        Ok(Self::assemble(&header, fixed, options, payload))
    }

    /// The segment of a checked header, fixed part, options and payload.
    #[inline(always)]
    fn assemble(
        header: &Header,
        fixed: &[u8; SEGMENT_FIXED_LEN],
        options: Options,
        payload: &'a [u8],
    ) -> Segment<'a> {
        Segment {
            conn_id: header.conn_id,
            flags: header.flags,
            seq: u64::from_be_bytes(field(fixed, SEQ_AT)),
            ack: u64::from_be_bytes(field(fixed, ACK_AT)),
            window: u32::from_be_bytes(field(fixed, WINDOW_AT)),
            ts_val: u32::from_be_bytes(field(fixed, TS_VAL_AT)),
            ts_ecr: u32::from_be_bytes(field(fixed, TS_ECR_AT)),
            options,
            payload,
        }
    }

    /// Length of the encoded datagram.
    pub fn encoded_len(&self) -> usize {
        SEGMENT_FIXED_LEN + self.options.encoded_len() + self.payload.len()
    }

    /// The fields before the options.
    pub fn head(&self) -> SegmentHead {
        SegmentHead {
            conn_id: self.conn_id,
            flags: self.flags,
            seq: self.seq,
            ack: self.ack,
            window: self.window,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
        }
    }

    /// Appends the encoded datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let opts_len = self.options.encoded_len();
        out.reserve(SEGMENT_FIXED_LEN + opts_len + self.payload.len());
        self.head().put_fixed(out, opts_len);
        if opts_len > 0 {
            self.options.write(out);
        }
        out.extend_from_slice(self.payload);
    }

    /// Sequence space consumed: payload length plus one for SYN and one for FIN.
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64
            + u64::from(self.flags.contains(Flags::SYN))
            + u64::from(self.flags.contains(Flags::FIN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        LastLinkReport, LinkInfoReport, ProbeKind, ProbeOption, SackBlock, MAX_SACK_BLOCKS, VERSION,
    };

    fn sample(payload: &[u8]) -> Segment<'_> {
        Segment {
            conn_id: ConnId(42),
            flags: Flags::ACK,
            seq: 1000,
            ack: 2000,
            window: 65535,
            ts_val: 1,
            ts_ecr: 2,
            options: Options::default(),
            payload,
        }
    }

    fn encoded(seg: &Segment<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        seg.encode(&mut out);
        out
    }

    #[test]
    fn segment_layout_matches_module_docs() {
        let mut seg = sample(b"hi");
        seg.options.sack_permitted = true;
        let bytes = encoded(&seg);
        let mut expected = vec![VERSION, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 42];
        expected.extend_from_slice(&1000u64.to_be_bytes());
        expected.extend_from_slice(&2000u64.to_be_bytes());
        expected.extend_from_slice(&65535u32.to_be_bytes());
        expected.extend_from_slice(&1u32.to_be_bytes());
        expected.extend_from_slice(&2u32.to_be_bytes());
        expected.extend_from_slice(&[2, 2, 2, b'h', b'i']);
        assert_eq!(bytes, expected);
        assert_eq!(bytes.len(), seg.encoded_len());
        assert_eq!(Segment::decode(&bytes), Ok(seg));
    }

    /// A head encoded with the segment's options (or bare, when it has none), followed by its
    /// payload, is the segment's encoding.
    #[test]
    fn head_with_options_and_payload_encodes_as_the_segment() {
        let mut with_options = sample(b"payload");
        with_options.flags = Flags::ACK | Flags::ELN;
        with_options.options.push_sack(SackBlock {
            start: 3000,
            end: 4000,
        });
        with_options.options.probe = Some(ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 9,
        });
        for seg in [sample(b""), sample(b"payload"), with_options] {
            let mut out = vec![0xaa];
            seg.head().encode(&seg.options, &mut out);
            out.extend_from_slice(seg.payload);
            assert_eq!(out[1..], encoded(&seg)[..]);
            if seg.options == Options::default() {
                let mut bare = vec![0xaa];
                seg.head().encode_bare(&mut bare);
                bare.extend_from_slice(seg.payload);
                assert_eq!(bare, out);
            }
        }
    }

    #[test]
    fn encode_appends_after_existing_bytes() {
        let seg = sample(b"data");
        let mut out = vec![0xaa];
        seg.encode(&mut out);
        assert_eq!(out[0], 0xaa);
        assert_eq!(Segment::decode(&out[1..]), Ok(seg));
    }

    #[test]
    fn segment_with_empty_payload_round_trips() {
        let seg = sample(&[]);
        let bytes = encoded(&seg);
        assert_eq!(bytes.len(), SEGMENT_FIXED_LEN);
        assert_eq!(Segment::decode(&bytes), Ok(seg));
    }

    #[test]
    fn segment_cut_inside_fixed_fields_is_truncated() {
        let bytes = encoded(&sample(&[]));
        // Cut inside `ack` (offset 20..28).
        assert_eq!(
            Segment::decode(&bytes[..25]),
            Err(DecodeError::Truncated {
                offset: 20,
                needed: 8,
                len: 25
            })
        );
        // Missing only the options length byte.
        assert_eq!(
            Segment::decode(&bytes[..SEGMENT_FIXED_LEN - 1]),
            Err(DecodeError::Truncated {
                offset: SEGMENT_FIXED_LEN - 1,
                needed: 1,
                len: SEGMENT_FIXED_LEN - 1
            })
        );
    }

    #[test]
    fn datagram_of_another_packet_type_is_the_wrong_type() {
        let mut bytes = encoded(&sample(&[]));
        bytes[1] = PacketType::Media as u8;
        assert_eq!(
            Segment::decode(&bytes),
            Err(DecodeError::WrongPacketType {
                expected: PacketType::Segment,
                found: PacketType::Media
            })
        );
    }

    #[test]
    fn options_length_past_the_end_overruns() {
        let mut bytes = encoded(&sample(b"abc"));
        bytes[SEGMENT_FIXED_LEN - 1] = 4;
        assert_eq!(
            Segment::decode(&bytes),
            Err(DecodeError::OptionsOverrun {
                opts_len: 4,
                remaining: 3
            })
        );
    }

    #[test]
    fn header_errors_surface_from_segment_decode() {
        let mut bytes = encoded(&sample(&[]));
        bytes[3] = 0x40;
        assert_eq!(
            Segment::decode(&bytes),
            Err(DecodeError::ReservedFlags(0x40))
        );
    }

    #[test]
    fn option_errors_surface_from_segment_decode() {
        let mut bytes = encoded(&sample(&[]));
        bytes[SEGMENT_FIXED_LEN - 1] = 2;
        bytes.extend_from_slice(&[1, 2]);
        assert_eq!(
            Segment::decode(&bytes),
            Err(DecodeError::MalformedOption { kind: 1, len: 2 })
        );
    }

    #[test]
    fn syn_with_every_option_and_four_sack_blocks_fits_the_options_byte() {
        let mut seg = sample(&[]);
        seg.flags = Flags::SYN | Flags::ACK;
        seg.options = Options {
            mss: Some(1460),
            sack_permitted: true,
            probe: Some(ProbeOption {
                kind: ProbeKind::Probe1,
                id: u32::MAX,
            }),
            last_link: Some(LastLinkReport {
                bandwidth_bps: u64::MAX,
                per_ppm: 1_000_000,
            }),
            link_info: Some(LinkInfoReport {
                p_w_ppm: 1_000_000,
                d_w_us: u32::MAX,
                handoff_count: u16::MAX,
            }),
            ..Options::default()
        };
        for i in 0..MAX_SACK_BLOCKS as u64 {
            assert!(seg.options.push_sack(SackBlock {
                start: u64::MAX - 10 * (i + 1),
                end: u64::MAX - 10 * i,
            }));
        }
        let opts_len = seg.options.encoded_len();
        assert!(opts_len < 255, "options take {opts_len} bytes");
        assert_eq!(opts_len, crate::MAX_OPTIONS_LEN);
        let bytes = encoded(&seg);
        assert_eq!(usize::from(bytes[SEGMENT_FIXED_LEN - 1]), opts_len);
        assert_eq!(Segment::decode(&bytes), Ok(seg));
    }

    /// The field-by-field decoder the fixed-offset one replaced: both give the same segment or
    /// the same error on every input.
    fn decode_field_by_field(bytes: &[u8]) -> Result<Segment<'_>, DecodeError> {
        use crate::reader::Reader;
        let header = Header::decode_as(bytes, PacketType::Segment)?;
        let mut r = Reader::at(bytes, HEADER_LEN);
        let seq = r.u64()?;
        let ack = r.u64()?;
        let window = r.u32()?;
        let ts_val = r.u32()?;
        let ts_ecr = r.u32()?;
        let opts_len = usize::from(r.u8()?);
        let remaining = r.remaining();
        let options = r.take(opts_len).map_err(|_| DecodeError::OptionsOverrun {
            opts_len,
            remaining,
        })?;
        Ok(Segment {
            conn_id: header.conn_id,
            flags: header.flags,
            seq,
            ack,
            window,
            ts_val,
            ts_ecr,
            options: Options::decode(options)?,
            payload: r.take_rest(),
        })
    }

    #[test]
    fn every_prefix_and_options_length_decodes_as_field_by_field() {
        let mut seg = sample(b"payload");
        seg.options.push_sack(SackBlock { start: 5, end: 9 });
        seg.options.probe = Some(ProbeOption {
            kind: ProbeKind::Pr1Ack,
            id: 3,
        });
        let bytes = encoded(&seg);
        for len in 0..=bytes.len() {
            let cut = &bytes[..len];
            assert_eq!(
                Segment::decode(cut),
                decode_field_by_field(cut),
                "len {len}"
            );
            if len < SEGMENT_FIXED_LEN {
                continue;
            }
            let mut wrong = cut.to_vec();
            for opts_len in 0..=u8::MAX {
                wrong[SEGMENT_FIXED_LEN - 1] = opts_len;
                assert_eq!(Segment::decode(&wrong), decode_field_by_field(&wrong));
            }
        }
    }

    #[test]
    fn syn_and_fin_each_take_one_sequence_number() {
        let mut seg = sample(b"abc");
        assert_eq!(seg.seq_len(), 3);
        seg.flags = Flags::SYN | Flags::FIN;
        assert_eq!(seg.seq_len(), 5);
    }
}
