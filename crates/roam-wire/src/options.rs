//! Segment options: a TLV area between the fixed segment fields and the payload.
//!
//! Each option is `kind (u8) | len (u8, total length incl. these two bytes) | value`.
//! Unknown kinds are skipped on decode (forward compatibility); each known kind may appear at
//! most once. Later protocols add their options here (probe segments, last-link report, link
//! info, RCP requests, pTCP header).

/// At most this many SACK blocks are carried (as in TCP with timestamps: RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;

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
    /// The valid SACK blocks.
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

    /// Encoded length in bytes.
    pub fn encoded_len(&self) -> usize {
        todo!("helper: implement")
    }

    /// Appends the encoded options to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        todo!("helper: implement")
    }

    /// Decodes an options area (exactly `bytes`).
    pub fn decode(bytes: &[u8]) -> Result<Options, crate::DecodeError> {
        todo!("helper: implement")
    }
}
