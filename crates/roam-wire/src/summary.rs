//! One-line, human-readable summaries of datagrams, as tcpdump prints packets: for packet
//! traces and debugging. Never panics: bytes that do not decode say so.
//!
//! ```
//! use roam_wire::{ConnId, Flags, Options, Segment, Summary};
//!
//! let mut bytes = Vec::new();
//! Segment {
//!     conn_id: ConnId(7),
//!     flags: Flags::ACK,
//!     seq: 1001,
//!     ack: 1,
//!     window: 65535,
//!     ts_val: 0,
//!     ts_ecr: 0,
//!     options: Options::default(),
//!     payload: &[0; 1000],
//! }
//! .encode(&mut bytes);
//! assert_eq!(Summary(&bytes).to_string(), "seg [A] seq=1001 ack=1 len=1000 win=65535");
//! ```

use std::fmt::{self, Display, Formatter};

use crate::{
    Data, Flags, Header, MediaPacket, MediaReport, PacketType, ProbeKind, PtcpSegment, Request,
    RequestMode, Segment, UNKNOWN_LENGTH,
};

/// Displays a datagram in one line (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct Summary<'a>(pub &'a [u8]);

impl Display for Summary<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        let Ok(header) = Header::decode(bytes) else {
            return write!(f, "raw len={}", bytes.len());
        };
        let result = match header.packet_type {
            PacketType::Segment => Segment::decode(bytes).map(|s| segment(f, &s)),
            PacketType::Request => Request::decode(bytes).map(|r| request(f, &r)),
            PacketType::Data => Data::decode(bytes).map(|d| data(f, &d)),
            PacketType::Ptcp => PtcpSegment::decode(bytes).map(|p| {
                write!(
                    f,
                    "ptcp {}>{} pseq={} pack={} ",
                    p.ptcp.src.0, p.ptcp.dst.0, p.ptcp.seq, p.ptcp.ack
                )
                .and_then(|()| segment(f, &p.segment))
            }),
            PacketType::Media => MediaPacket::decode(bytes).map(|m| {
                write!(
                    f,
                    "media seq={} len={} rate={}{}",
                    m.seq,
                    m.payload.len(),
                    m.rate_bps,
                    if m.token.is_some() { " token" } else { "" }
                )
            }),
            PacketType::MediaReport => MediaReport::decode(bytes).map(|r| {
                write!(
                    f,
                    "media-report highest={} received={} lost={}{}",
                    r.highest_seq,
                    r.received,
                    r.lost,
                    if r.token.is_some() { " token" } else { "" }
                )
            }),
        };
        result.unwrap_or_else(|e| write!(f, "{:?} (malformed: {e})", header.packet_type))
    }
}

/// `[S.]`-style flags, as tcpdump writes them (`.` for ACK, `E` for ELN, `-` for none).
fn flags(f: &mut Formatter<'_>, flags: Flags) -> fmt::Result {
    let names = [
        (Flags::SYN, 'S'),
        (Flags::FIN, 'F'),
        (Flags::RST, 'R'),
        (Flags::ELN, 'E'),
        (Flags::ACK, 'A'),
    ];
    f.write_str("[")?;
    let mut any = false;
    for (flag, c) in names {
        if flags.contains(flag) {
            write!(f, "{c}")?;
            any = true;
        }
    }
    if !any {
        f.write_str("-")?;
    }
    f.write_str("]")
}

fn segment(f: &mut Formatter<'_>, s: &Segment<'_>) -> fmt::Result {
    f.write_str("seg ")?;
    flags(f, s.flags)?;
    write!(
        f,
        " seq={} ack={} len={} win={}",
        s.seq,
        s.ack,
        s.payload.len(),
        s.window
    )?;
    let o = &s.options;
    if let Some(mss) = o.mss {
        write!(f, " mss={mss}")?;
    }
    if o.sack_permitted {
        f.write_str(" sackok")?;
    }
    for (i, b) in o.sack_blocks().iter().enumerate() {
        let sep = if i == 0 { " sack=" } else { "," };
        write!(f, "{sep}{}-{}", b.start, b.end)?;
    }
    if let Some(p) = o.probe {
        let kind = match p.kind {
            ProbeKind::Probe1 => "PROBE1",
            ProbeKind::Pr1Ack => "PR1_ACK",
            ProbeKind::Probe2 => "PROBE2",
            ProbeKind::Pr2Ack => "PR2_ACK",
        };
        write!(f, " probe={kind}#{}", p.id)?;
    }
    if let Some(l) = o.last_link {
        write!(f, " lastlink={}bps/{}ppm", l.bandwidth_bps, l.per_ppm)?;
    }
    if let Some(l) = o.link_info {
        write!(
            f,
            " linkinfo=pw{}ppm/dw{}us/h{}",
            l.p_w_ppm, l.d_w_us, l.handoff_count
        )?;
    }
    Ok(())
}

fn request(f: &mut Formatter<'_>, r: &Request<'_>) -> fmt::Result {
    f.write_str("req ")?;
    flags(f, r.flags)?;
    write!(f, " req={} deq={}", r.req, r.deq)?;
    if r.mode.contains(RequestMode::PULL) {
        f.write_str(" PUL")?;
    }
    if r.mode.contains(RequestMode::PROBE) {
        f.write_str(" PROBE")?;
    }
    for (i, b) in r.blocks().iter().enumerate() {
        let sep = if i == 0 { " blocks=" } else { "," };
        write!(f, "{sep}#{}:{}-{}", b.id, b.start, b.end)?;
    }
    if !r.object.is_empty() {
        write!(f, " object={}", String::from_utf8_lossy(r.object))?;
    }
    if r.token.is_some() {
        f.write_str(" token")?;
    }
    Ok(())
}

fn data(f: &mut Formatter<'_>, d: &Data<'_>) -> fmt::Result {
    f.write_str("data ")?;
    flags(f, d.flags)?;
    write!(f, " seq={} len={} wnd={}", d.seq, d.payload.len(), d.window)?;
    match d.object_len {
        Some(UNKNOWN_LENGTH) => f.write_str(" objlen=unbounded")?,
        Some(len) => write!(f, " objlen={len}")?,
        None => {}
    }
    if d.pull_id != 0 {
        write!(f, " pull=#{}", d.pull_id)?;
    }
    if d.token.is_some() {
        f.write_str(" token")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConnId, Options, ProbeOption, PullBlock, SackBlock, MAX_REQUEST_BLOCKS};

    #[test]
    fn a_sack_segment_with_a_probe_shows_its_options() {
        let mut opts = Options {
            probe: Some(ProbeOption {
                kind: ProbeKind::Pr1Ack,
                id: 4,
            }),
            ..Options::default()
        };
        opts.push_sack(SackBlock {
            start: 3001,
            end: 5001,
        });
        opts.push_sack(SackBlock {
            start: 7001,
            end: 8001,
        });
        let mut bytes = Vec::new();
        Segment {
            conn_id: ConnId(1),
            flags: Flags::ACK | Flags::ELN,
            seq: 1,
            ack: 2001,
            window: 1000,
            ts_val: 0,
            ts_ecr: 0,
            options: opts,
            payload: &[],
        }
        .encode(&mut bytes);
        assert_eq!(
            Summary(&bytes).to_string(),
            "seg [EA] seq=1 ack=2001 len=0 win=1000 sack=3001-5001,7001-8001 probe=PR1_ACK#4"
        );
    }

    #[test]
    fn an_rcp_pull_request_and_its_data() {
        let mut blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        blocks[0] = PullBlock {
            id: 9,
            start: 4000,
            end: 5000,
        };
        let mut bytes = Vec::new();
        Request {
            conn_id: ConnId(2),
            flags: Flags::ACK,
            mode: RequestMode::PULL,
            req: 20_000,
            deq: 0,
            ts_val: 1,
            ts_ecr: 1,
            nblocks: 1,
            blocks,
            object: &[],
            token: None,
        }
        .encode(&mut bytes);
        assert_eq!(
            Summary(&bytes).to_string(),
            "req [A] req=20000 deq=0 PUL blocks=#9:4000-5000"
        );
        bytes.clear();
        Data {
            conn_id: ConnId(2),
            flags: Flags::default(),
            seq: 4000,
            window: 90_000,
            object_len: None,
            ts_val: 1,
            ts_ecr: 1,
            pull_id: 9,
            token: None,
            payload: &[0; 1000],
        }
        .encode(&mut bytes);
        assert_eq!(
            Summary(&bytes).to_string(),
            "data [-] seq=4000 len=1000 wnd=90000 pull=#9"
        );
    }

    #[test]
    fn bytes_that_are_not_a_roam_datagram_say_so() {
        assert_eq!(Summary(&[0xff; 12]).to_string(), "raw len=12");
        assert_eq!(Summary(&[]).to_string(), "raw len=0");
    }
}
