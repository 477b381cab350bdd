//! Segment options: a TLV area between the fixed segment fields and the payload.
//!
//! Each option is `kind (u8) | len (u8, total length incl. these two bytes) | value`.
//! Unknown kinds are skipped on decode (forward compatibility); each known kind may appear at
//! most once. Later protocols add their options here (probe segments, last-link report, link
//! info, RCP requests, pTCP header).

use crate::reader::Reader;
use crate::DecodeError;

/// At most this many SACK blocks are carried (as in TCP with timestamps: RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Bytes of kind and length in front of every option value.
const TLV_HEADER_LEN: usize = 2;
/// Total length of the MSS option.
const MSS_LEN: usize = TLV_HEADER_LEN + 2;
/// Total length of the SACK-permitted option.
const SACK_PERMITTED_LEN: usize = TLV_HEADER_LEN;
/// Bytes of one SACK block.
const SACK_BLOCK_LEN: usize = 8 + 8;
/// Total length of the probe option.
const PROBE_LEN: usize = TLV_HEADER_LEN + 1 + 4;
/// Total length of the last-link report.
const LAST_LINK_LEN: usize = TLV_HEADER_LEN + 8 + 4;
/// Total length of the link-info report.
const LINK_INFO_LEN: usize = TLV_HEADER_LEN + 4 + 4 + 2;
/// One million parts per million: the largest legal probability.
const PPM_ONE: u32 = 1_000_000;

/// The longest options area the defined options can produce: every option present and
/// [`MAX_SACK_BLOCKS`] SACK blocks. Useful for sizing the payload budget of a datagram.
pub const MAX_OPTIONS_LEN: usize = MSS_LEN
    + SACK_PERMITTED_LEN
    + TLV_HEADER_LEN
    + MAX_SACK_BLOCKS * SACK_BLOCK_LEN
    + PROBE_LEN
    + LAST_LINK_LEN
    + LINK_INFO_LEN;

/// Option kinds on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OptionKind {
    /// Maximum segment size the sender of a SYN will accept (u16).
    Mss = 1,
    /// SACK permitted (SYN only, no value).
    SackPermitted = 2,
    /// SACK blocks: n × (start u64, end u64).
    Sack = 3,
    /// TCP-Probing probe segment (tcp-probing.txt §3.1): probe kind (u8) + id (u32).
    Probe = 4,
    /// Last-link report (last-link-heuristics.txt): bandwidth (u64 b/s) + PER (u32 ppm).
    LastLink = 5,
    /// Link-info report (atl.txt §IV-A): p_w (u32 ppm), d_w (u32 µs), handoff counter (u16).
    LinkInfo = 6,
}

impl OptionKind {
    /// The known kind named by `b`, if any.
    fn from_u8(b: u8) -> Option<Self> {
        match b {
            1 => Some(Self::Mss),
            2 => Some(Self::SackPermitted),
            3 => Some(Self::Sack),
            4 => Some(Self::Probe),
            5 => Some(Self::LastLink),
            6 => Some(Self::LinkInfo),
            _ => None,
        }
    }

    /// Whether an option of this kind may have total length `len` (kind and length bytes
    /// included).
    fn len_is_valid(self, len: usize) -> bool {
        match self {
            Self::Mss => len == MSS_LEN,
            Self::SackPermitted => len == SACK_PERMITTED_LEN,
            Self::Sack => {
                let blocks = len.saturating_sub(TLV_HEADER_LEN) / SACK_BLOCK_LEN;
                (1..=MAX_SACK_BLOCKS).contains(&blocks)
                    && len == TLV_HEADER_LEN + blocks * SACK_BLOCK_LEN
            }
            Self::Probe => len == PROBE_LEN,
            Self::LastLink => len == LAST_LINK_LEN,
            Self::LinkInfo => len == LINK_INFO_LEN,
        }
    }
}

/// One SACK block: the half-open byte range `[start, end)` received out of order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SackBlock {
    /// First byte received.
    pub start: u64,
    /// One past the last byte received.
    pub end: u64,
}

/// Which of the four probe segments (tcp-probing.txt §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ProbeKind {
    /// First probe, sender → receiver.
    Probe1 = 1,
    /// Acknowledgement of PROBE1.
    Pr1Ack = 2,
    /// Second probe.
    Probe2 = 3,
    /// Acknowledgement of PROBE2.
    Pr2Ack = 4,
}

impl ProbeKind {
    /// The probe kind named by `b`, if any.
    fn from_u8(b: u8) -> Option<Self> {
        match b {
            1 => Some(Self::Probe1),
            2 => Some(Self::Pr1Ack),
            3 => Some(Self::Probe2),
            4 => Some(Self::Pr2Ack),
            _ => None,
        }
    }
}

/// A probe option: the kind of probe segment and the id of the exchange it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProbeOption {
    /// Which probe segment.
    pub kind: ProbeKind,
    /// Identifies one full PROBE1/PR1_ACK/PROBE2/PR2_ACK exchange.
    pub id: u32,
}

/// The receiver's report of its last link (last-link-heuristics.txt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LastLinkReport {
    /// Last-link bandwidth in bits per second.
    pub bandwidth_bps: u64,
    /// Packet error rate in parts per million (0..=1_000_000).
    pub per_ppm: u32,
}

/// A wireless end's report of its local link (atl.txt §IV-A, forwarded inside ACKs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkInfoReport {
    /// Wireless loss probability p_w in parts per million (0..=1_000_000).
    pub p_w_ppm: u32,
    /// Wireless one-way delay d_w in microseconds.
    pub d_w_us: u32,
    /// Incremented on every handoff; a change tells the peer to recompute.
    pub handoff_count: u16,
}

/// The decoded options of one segment. Fixed-size: decoding allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Maximum segment size (SYN only).
    pub mss: Option<u16>,
    /// SACK permitted (SYN only).
    pub sack_permitted: bool,
    /// SACK blocks; only the first `sack_len` entries are meaningful.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// Number of valid entries in `sack` (0..=MAX_SACK_BLOCKS).
    pub sack_len: u8,
    /// Probe segment option.
    pub probe: Option<ProbeOption>,
    /// Last-link report.
    pub last_link: Option<LastLinkReport>,
    /// Link-info report.
    pub link_info: Option<LinkInfoReport>,
}

impl Options {
    /// No option (what [`Options::default`] gives), as a constant.
    pub const NONE: Options = Options {
        mss: None,
        sack_permitted: false,
        sack: [SackBlock { start: 0, end: 0 }; MAX_SACK_BLOCKS],
        sack_len: 0,
        probe: None,
        last_link: None,
        link_info: None,
    };

    /// The valid SACK blocks.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..usize::from(self.sack_len).min(MAX_SACK_BLOCKS)]
    }

    /// Appends a SACK block; returns false (and changes nothing) when already full.
    pub fn push_sack(&mut self, block: SackBlock) -> bool {
        let n = usize::from(self.sack_len);
        if n >= MAX_SACK_BLOCKS {
            return false;
        }
        self.sack[n] = block;
        self.sack_len += 1;
        true
    }

    /// Encoded length in bytes (at most [`MAX_OPTIONS_LEN`]).
    pub fn encoded_len(&self) -> usize {
        let sack = match self.sack_blocks().len() {
            0 => 0,
            n => TLV_HEADER_LEN + n * SACK_BLOCK_LEN,
        };
        usize::from(self.mss.is_some()) * MSS_LEN
            + usize::from(self.sack_permitted) * SACK_PERMITTED_LEN
            + sack
            + usize::from(self.probe.is_some()) * PROBE_LEN
            + usize::from(self.last_link.is_some()) * LAST_LINK_LEN
            + usize::from(self.link_info.is_some()) * LINK_INFO_LEN
    }

    /// Appends the encoded options to `out`, in the order of [`OptionKind`], present ones only.
    ///
    /// The encoder writes what it is given: SACK blocks with `start >= end` or reports with
    /// probabilities above one are written as-is and rejected by [`Options::decode`].
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        self.write(out);
    }

    /// Appends the encoded options without reserving (the caller has reserved).
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        if let Some(mss) = self.mss {
            put_tlv_header(out, OptionKind::Mss, MSS_LEN);
            out.extend_from_slice(&mss.to_be_bytes());
        }
        if self.sack_permitted {
            put_tlv_header(out, OptionKind::SackPermitted, SACK_PERMITTED_LEN);
        }
        let blocks = self.sack_blocks();
        if !blocks.is_empty() {
            let len = TLV_HEADER_LEN + blocks.len() * SACK_BLOCK_LEN;
            put_tlv_header(out, OptionKind::Sack, len);
            for block in blocks {
                out.extend_from_slice(&block.start.to_be_bytes());
                out.extend_from_slice(&block.end.to_be_bytes());
            }
        }
        if let Some(probe) = self.probe {
            put_tlv_header(out, OptionKind::Probe, PROBE_LEN);
            out.push(probe.kind as u8);
            out.extend_from_slice(&probe.id.to_be_bytes());
        }
        if let Some(report) = self.last_link {
            put_tlv_header(out, OptionKind::LastLink, LAST_LINK_LEN);
            out.extend_from_slice(&report.bandwidth_bps.to_be_bytes());
            out.extend_from_slice(&report.per_ppm.to_be_bytes());
        }
        if let Some(report) = self.link_info {
            put_tlv_header(out, OptionKind::LinkInfo, LINK_INFO_LEN);
            out.extend_from_slice(&report.p_w_ppm.to_be_bytes());
            out.extend_from_slice(&report.d_w_us.to_be_bytes());
            out.extend_from_slice(&report.handoff_count.to_be_bytes());
        }
    }

    /// Decodes an options area (exactly `bytes`).
    ///
    /// Unknown kinds are skipped. A length byte below two, one that overruns the area, or one
    /// that is wrong for a known kind is a [`DecodeError::MalformedOption`]; a kind byte with no
    /// length byte after it is reported with `len: 0`.
    pub fn decode(bytes: &[u8]) -> Result<Options, crate::DecodeError> {
        let mut opts = Options::default();
        // Bit `k` set: known kind `k` already seen.
        let mut seen: u8 = 0;
        let mut r = Reader::new(bytes);
        while r.remaining() > 0 {
            let kind = r.u8()?;
            let len = r
                .u8()
                .map_err(|_| DecodeError::MalformedOption { kind, len: 0 })?;
            let malformed = DecodeError::MalformedOption { kind, len };
            let value_len = usize::from(len)
                .checked_sub(TLV_HEADER_LEN)
                .ok_or(malformed)?;
            let value = r.take(value_len).map_err(|_| malformed)?;
            let Some(known) = OptionKind::from_u8(kind) else {
                continue; // Forward compatibility: skip kinds this version does not know.
            };
            let bit = 1u8 << (known as u8);
            if seen & bit != 0 {
                return Err(DecodeError::DuplicateOption(kind));
            }
            seen |= bit;
            if !known.len_is_valid(usize::from(len)) {
                return Err(malformed);
            }
            opts.decode_value(known, len, value)?;
        }
        Ok(opts)
    }

    /// Decodes the value of one known option whose total length `len` has been checked.
    fn decode_value(&mut self, kind: OptionKind, len: u8, value: &[u8]) -> Result<(), DecodeError> {
        let mut r = Reader::new(value);
        match kind {
            OptionKind::Mss => self.mss = Some(r.u16()?),
            OptionKind::SackPermitted => self.sack_permitted = true,
            OptionKind::Sack => {
                while r.remaining() > 0 {
                    let block = SackBlock {
                        start: r.u64()?,
                        end: r.u64()?,
                    };
                    if block.start >= block.end {
                        return Err(DecodeError::InvalidSackBlock {
                            start: block.start,
                            end: block.end,
                        });
                    }
                    if !self.push_sack(block) {
                        // Excluded by the length check; refuse rather than drop blocks.
                        return Err(DecodeError::MalformedOption {
                            kind: kind as u8,
                            len,
                        });
                    }
                }
            }
            OptionKind::Probe => {
                let probe_kind =
                    ProbeKind::from_u8(r.u8()?).ok_or(DecodeError::FieldOutOfRange {
                        field: "probe.kind",
                    })?;
                self.probe = Some(ProbeOption {
                    kind: probe_kind,
                    id: r.u32()?,
                });
            }
            OptionKind::LastLink => {
                let report = LastLinkReport {
                    bandwidth_bps: r.u64()?,
                    per_ppm: r.u32()?,
                };
                if report.per_ppm > PPM_ONE {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "last_link.per_ppm",
                    });
                }
                self.last_link = Some(report);
            }
            OptionKind::LinkInfo => {
                let report = LinkInfoReport {
                    p_w_ppm: r.u32()?,
                    d_w_us: r.u32()?,
                    handoff_count: r.u16()?,
                };
                if report.p_w_ppm > PPM_ONE {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "link_info.p_w_ppm",
                    });
                }
                self.link_info = Some(report);
            }
        }
        Ok(())
    }
}

/// Writes an option's kind and total length bytes. Every defined option is far shorter than
/// 256 bytes (see `MAX_OPTIONS_LEN`), so the length always fits its byte.
fn put_tlv_header(out: &mut Vec<u8>, kind: OptionKind, len: usize) {
    out.push(kind as u8);
    out.push(len as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Options {
        let mut opts = Options {
            mss: Some(1460),
            sack_permitted: true,
            probe: Some(ProbeOption {
                kind: ProbeKind::Pr2Ack,
                id: 7,
            }),
            last_link: Some(LastLinkReport {
                bandwidth_bps: 11_000_000,
                per_ppm: PPM_ONE,
            }),
            link_info: Some(LinkInfoReport {
                p_w_ppm: 20_000,
                d_w_us: 40_000,
                handoff_count: 3,
            }),
            ..Options::default()
        };
        for i in 0..MAX_SACK_BLOCKS as u64 {
            assert!(opts.push_sack(SackBlock {
                start: 100 * i,
                end: 100 * i + 50,
            }));
        }
        opts
    }

    fn encoded(opts: &Options) -> Vec<u8> {
        let mut out = Vec::new();
        opts.encode(&mut out);
        out
    }

    fn malformed(kind: u8, len: u8) -> Result<Options, DecodeError> {
        Err(DecodeError::MalformedOption { kind, len })
    }

    #[test]
    fn none_is_the_default() {
        assert_eq!(Options::NONE, Options::default());
        assert_eq!(Options::NONE.encoded_len(), 0);
    }

    #[test]
    fn empty_area_decodes_to_no_options() {
        assert_eq!(Options::decode(&[]), Ok(Options::default()));
        assert_eq!(Options::default().encoded_len(), 0);
        assert!(encoded(&Options::default()).is_empty());
    }

    #[test]
    fn all_options_round_trip_in_enum_order() {
        let opts = full();
        let bytes = encoded(&opts);
        assert_eq!(bytes.len(), opts.encoded_len());
        assert_eq!(bytes.len(), MAX_OPTIONS_LEN);
        assert_eq!(Options::decode(&bytes), Ok(opts));

        let mut kinds = Vec::new();
        let mut rest = &bytes[..];
        while let [kind, len, ..] = *rest {
            kinds.push(kind);
            rest = &rest[usize::from(len)..];
        }
        assert_eq!(kinds, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn mss_layout_is_kind_len_big_endian_value() {
        let opts = Options {
            mss: Some(0x0102),
            ..Options::default()
        };
        assert_eq!(encoded(&opts), [1, 4, 0x01, 0x02]);
    }

    #[test]
    fn largest_options_area_fits_the_length_byte() {
        assert!(MAX_OPTIONS_LEN <= usize::from(u8::MAX));
        assert_eq!(full().encoded_len(), MAX_OPTIONS_LEN);
    }

    #[test]
    fn unknown_kinds_are_skipped() {
        let bytes = [0, 2, 200, 5, 9, 9, 9, 1, 4, 0x05, 0xb4, 200, 3, 0];
        let expected = Options {
            mss: Some(1460),
            ..Options::default()
        };
        assert_eq!(Options::decode(&bytes), Ok(expected));
    }

    #[test]
    fn option_length_below_two_is_malformed() {
        assert_eq!(Options::decode(&[200, 1]), malformed(200, 1));
        assert_eq!(Options::decode(&[1, 0, 0, 0]), malformed(1, 0));
    }

    #[test]
    fn option_overrunning_the_area_is_malformed() {
        assert_eq!(Options::decode(&[1, 4, 0x05]), malformed(1, 4));
        assert_eq!(Options::decode(&[200, 9, 0, 0]), malformed(200, 9));
    }

    #[test]
    fn kind_byte_without_length_byte_is_malformed() {
        assert_eq!(Options::decode(&[2, 2, 1]), malformed(1, 0));
    }

    #[test]
    fn known_kind_with_wrong_length_is_malformed() {
        assert_eq!(Options::decode(&[1, 3, 0]), malformed(1, 3));
        assert_eq!(Options::decode(&[2, 3, 0]), malformed(2, 3));
        assert_eq!(Options::decode(&[4, 6, 1, 0, 0, 0]), malformed(4, 6));
        assert_eq!(Options::decode(&[5, 2]), malformed(5, 2));
        assert_eq!(
            Options::decode(&[6, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            malformed(6, 13)
        );
    }

    #[test]
    fn sack_without_blocks_is_malformed() {
        assert_eq!(Options::decode(&[3, 2]), malformed(3, 2));
    }

    #[test]
    fn sack_with_partial_block_is_malformed() {
        let mut bytes = vec![3, 2 + 8];
        bytes.extend_from_slice(&[0; 8]);
        assert_eq!(Options::decode(&bytes), malformed(3, 10));
    }

    #[test]
    fn sack_with_more_than_max_blocks_is_malformed() {
        let n = MAX_SACK_BLOCKS + 1;
        let len = (2 + n * SACK_BLOCK_LEN) as u8;
        let mut bytes = vec![3, len];
        for i in 0..n as u64 {
            bytes.extend_from_slice(&(2 * i).to_be_bytes());
            bytes.extend_from_slice(&(2 * i + 1).to_be_bytes());
        }
        assert_eq!(Options::decode(&bytes), malformed(3, len));
    }

    #[test]
    fn known_option_appearing_twice_is_a_duplicate() {
        assert_eq!(
            Options::decode(&[2, 2, 1, 4, 0, 1, 2, 2]),
            Err(DecodeError::DuplicateOption(2))
        );
    }

    #[test]
    fn unknown_option_may_repeat() {
        assert_eq!(Options::decode(&[99, 2, 99, 3, 0]), Ok(Options::default()));
    }

    #[test]
    fn sack_block_with_start_after_end_is_rejected() {
        let mut bytes = vec![3, 18];
        bytes.extend_from_slice(&10u64.to_be_bytes());
        bytes.extend_from_slice(&5u64.to_be_bytes());
        assert_eq!(
            Options::decode(&bytes),
            Err(DecodeError::InvalidSackBlock { start: 10, end: 5 })
        );
    }

    #[test]
    fn empty_sack_block_is_rejected() {
        let mut bytes = vec![3, 18];
        bytes.extend_from_slice(&5u64.to_be_bytes());
        bytes.extend_from_slice(&5u64.to_be_bytes());
        assert_eq!(
            Options::decode(&bytes),
            Err(DecodeError::InvalidSackBlock { start: 5, end: 5 })
        );
    }

    #[test]
    fn probe_kind_outside_one_to_four_is_out_of_range() {
        for bad in [0u8, 5, 255] {
            assert_eq!(
                Options::decode(&[4, 7, bad, 0, 0, 0, 1]),
                Err(DecodeError::FieldOutOfRange {
                    field: "probe.kind"
                })
            );
        }
    }

    #[test]
    fn last_link_error_rate_above_one_is_out_of_range() {
        let mut opts = full();
        opts.last_link = Some(LastLinkReport {
            bandwidth_bps: 1,
            per_ppm: PPM_ONE + 1,
        });
        assert_eq!(
            Options::decode(&encoded(&opts)),
            Err(DecodeError::FieldOutOfRange {
                field: "last_link.per_ppm"
            })
        );
    }

    #[test]
    fn link_info_loss_probability_above_one_is_out_of_range() {
        let mut opts = full();
        opts.link_info = Some(LinkInfoReport {
            p_w_ppm: u32::MAX,
            d_w_us: 0,
            handoff_count: 0,
        });
        assert_eq!(
            Options::decode(&encoded(&opts)),
            Err(DecodeError::FieldOutOfRange {
                field: "link_info.p_w_ppm"
            })
        );
    }

    #[test]
    fn probabilities_of_exactly_one_are_accepted() {
        let mut opts = full();
        opts.link_info = Some(LinkInfoReport {
            p_w_ppm: PPM_ONE,
            d_w_us: u32::MAX,
            handoff_count: u16::MAX,
        });
        assert_eq!(Options::decode(&encoded(&opts)), Ok(opts));
    }

    #[test]
    fn push_sack_refuses_a_fifth_block() {
        let mut opts = full();
        let before = opts;
        assert!(!opts.push_sack(SackBlock { start: 1, end: 2 }));
        assert_eq!(opts, before);
    }
}
