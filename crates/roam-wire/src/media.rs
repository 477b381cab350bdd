//! RCP-ATL datagrams (atl.txt §IV-B): unreliable media packets and the receiver's reports.
//!
//! ```text
//! Media (PacketType::Media), after the common header:
//!  12              20              28              36
//! +---------------+---------------+---------------+----------------
//! |   seq (u64)   | send time µs  | rate (bit/s)  | payload …
//! +---------------+---------------+---------------+----------------
//!
//! MediaReport (PacketType::MediaReport), after the common header:
//!  12            20            28            36     38            46       50    51
//! +-------------+-------------+-------------+------+-------------+--------+-----+------------+
//! | highest seq | received    | lost (cum.) | frac | echo time µs| hold µs| link| link fields|
//! +-------------+-------------+-------------+------+-------------+--------+-----+------------+
//! link = 0: nothing follows; link = 1: p_w ppm (u32), d_w µs (u32), handoff count (u16).
//! ```
//! Like RTCP receiver reports (RFC 3550 §6.4.1): packets received, cumulative loss, fraction lost
//! since the previous report, and a timestamp echo with the receiver's holding time for the RTT.
//! All integers big-endian. The only flag is TOKEN: an 18-byte address-validation token
//! ([`crate::Token`]) follows a media packet's fixed fields (before the payload) or a report's
//! last field. A sink answers a packet of an unknown connection with a report carrying a token,
//! keeping no state; the source echoes it in its packets until a report without one shows
//! that the sink has accepted the flow (`docs/HANDSHAKE-RCP.md`). Bytes after a report are
//! ignored.

use crate::header::{ConnId, Flags, Header, PacketType, HEADER_LEN};
use crate::options::LinkInfoReport;
use crate::reader::Reader;
use crate::token::{encode_header_with_token, take_token, token_len};
use crate::{DecodeError, Token};

/// Fixed bytes of a media packet before its payload (header included).
pub const MEDIA_FIXED_LEN: usize = HEADER_LEN + 24;
/// Bytes of a report without link facts (header included).
pub const MEDIA_REPORT_LEN: usize = HEADER_LEN + 39;
/// Bytes the optional link facts add to a report.
pub const MEDIA_REPORT_LINK_LEN: usize = 10;

const PPM_ONE: u32 = 1_000_000;

/// One media datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaPacket<'a> {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// Packet sequence number (per packet, not per byte; never reused).
    pub seq: u64,
    /// Sender's clock when the packet was sent, in microseconds (echoed for the RTT; used by
    /// the receiver for delay and jitter).
    pub send_time_us: u64,
    /// The sender's allowed rate S(t) when it sent the packet (informative).
    pub rate_bps: u64,
    /// The sink's address-validation token, echoed (sets the TOKEN flag on the wire).
    pub token: Option<Token>,
    /// Media bytes.
    pub payload: &'a [u8],
}

/// A receiver report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaReport {
    /// Connection identifier.
    pub conn_id: ConnId,
    /// Highest sequence number received.
    pub highest_seq: u64,
    /// Packets received so far.
    pub received: u64,
    /// Packets lost so far (expected − received, RFC 3550 §6.4.1 "cumulative number lost").
    pub lost: u64,
    /// Fraction lost since the previous report, in 1/65535 units.
    pub fraction_lost: u16,
    /// `send_time_us` of the packet that triggered this report.
    pub echo_time_us: u64,
    /// Microseconds between that packet's arrival and this report's departure.
    pub hold_us: u32,
    /// The receiver's wireless hop (atl.txt §IV-B: p_w, d_w and handoffs "forwarded to the
    /// source within RTP receiver reports"), when the receiver is the wireless end.
    pub link: Option<LinkInfoReport>,
    /// The sink's address-validation token, on a report sent without state (sets the TOKEN
    /// flag on the wire).
    pub token: Option<Token>,
}

fn check_header(bytes: &[u8], expected: PacketType) -> Result<Header, DecodeError> {
    let h = Header::decode_as(bytes, expected)?;
    let mut other = h.flags;
    other.remove(Flags::TOKEN);
    if other != Flags::default() {
        return Err(DecodeError::ReservedFlags(other.0));
    }
    Ok(h)
}

impl<'a> MediaPacket<'a> {
    /// Decodes a media datagram; never panics.
    pub fn decode(bytes: &'a [u8]) -> Result<MediaPacket<'a>, DecodeError> {
        let h = check_header(bytes, PacketType::Media)?;
        let mut r = Reader::at(bytes, HEADER_LEN);
        Ok(MediaPacket {
            conn_id: h.conn_id,
            seq: r.u64()?,
            send_time_us: r.u64()?,
            rate_bps: r.u64()?,
            token: take_token(h.flags, &mut r)?.1,
            payload: r.take_rest(),
        })
    }

    /// Bytes [`MediaPacket::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        MEDIA_FIXED_LEN + token_len(self.token.as_ref()) + self.payload.len()
    }

    /// Appends the encoded datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_header_with_token(
            PacketType::Media,
            self.conn_id,
            Flags::default(),
            self.token.as_ref(),
            out,
        );
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.send_time_us.to_be_bytes());
        out.extend_from_slice(&self.rate_bps.to_be_bytes());
        if let Some(t) = &self.token {
            out.extend_from_slice(&t.0);
        }
        out.extend_from_slice(self.payload);
    }
}

impl MediaReport {
    /// Decodes a receiver report; never panics.
    pub fn decode(bytes: &[u8]) -> Result<MediaReport, DecodeError> {
        let h = check_header(bytes, PacketType::MediaReport)?;
        let mut r = Reader::at(bytes, HEADER_LEN);
        let highest_seq = r.u64()?;
        let received = r.u64()?;
        let lost = r.u64()?;
        let fraction_lost = r.u16()?;
        let echo_time_us = r.u64()?;
        let hold_us = r.u32()?;
        let link = match r.u8()? {
            0 => None,
            1 => {
                let l = LinkInfoReport {
                    p_w_ppm: r.u32()?,
                    d_w_us: r.u32()?,
                    handoff_count: r.u16()?,
                };
                if l.p_w_ppm > PPM_ONE {
                    return Err(DecodeError::FieldOutOfRange {
                        field: "media_report.p_w_ppm",
                    });
                }
                Some(l)
            }
            _ => {
                return Err(DecodeError::FieldOutOfRange {
                    field: "media_report.link",
                })
            }
        };
        let token = take_token(h.flags, &mut r)?.1;
        Ok(MediaReport {
            conn_id: h.conn_id,
            highest_seq,
            received,
            lost,
            fraction_lost,
            echo_time_us,
            hold_us,
            link,
            token,
        })
    }

    /// Bytes [`MediaReport::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        MEDIA_REPORT_LEN
            + if self.link.is_some() {
                MEDIA_REPORT_LINK_LEN
            } else {
                0
            }
            + token_len(self.token.as_ref())
    }

    /// Appends the encoded report to `out`. A `p_w_ppm` above one million is written as one
    /// million, so that what is sent always decodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_header_with_token(
            PacketType::MediaReport,
            self.conn_id,
            Flags::default(),
            self.token.as_ref(),
            out,
        );
        out.extend_from_slice(&self.highest_seq.to_be_bytes());
        out.extend_from_slice(&self.received.to_be_bytes());
        out.extend_from_slice(&self.lost.to_be_bytes());
        out.extend_from_slice(&self.fraction_lost.to_be_bytes());
        out.extend_from_slice(&self.echo_time_us.to_be_bytes());
        out.extend_from_slice(&self.hold_us.to_be_bytes());
        match self.link {
            None => out.push(0),
            Some(l) => {
                out.push(1);
                out.extend_from_slice(&l.p_w_ppm.min(PPM_ONE).to_be_bytes());
                out.extend_from_slice(&l.d_w_us.to_be_bytes());
                out.extend_from_slice(&l.handoff_count.to_be_bytes());
            }
        }
        if let Some(t) = &self.token {
            out.extend_from_slice(&t.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TOKEN_LEN;

    fn report(link: bool) -> MediaReport {
        MediaReport {
            conn_id: ConnId(7),
            highest_seq: 99,
            received: 97,
            lost: 3,
            fraction_lost: 655,
            echo_time_us: 1_234_567,
            hold_us: 12,
            link: link.then_some(LinkInfoReport {
                p_w_ppm: 1000,
                d_w_us: 50_000,
                handoff_count: 2,
            }),
            token: None,
        }
    }

    #[test]
    fn media_packet_round_trips() {
        let p = MediaPacket {
            conn_id: ConnId(1),
            seq: 42,
            send_time_us: 5_000_000,
            rate_bps: 2_000_000,
            token: None,
            payload: b"frame",
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out.len(), p.encoded_len());
        assert_eq!(MediaPacket::decode(&out), Ok(p));
        assert!(MediaPacket::decode(&out[..MEDIA_FIXED_LEN - 1]).is_err());
    }

    /// `r` encodes to its announced length and decodes back to itself; one byte short, it
    /// does not decode.
    fn assert_report_round_trips(r: MediaReport) {
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out.len(), r.encoded_len());
        assert_eq!(MediaReport::decode(&out), Ok(r));
        assert!(MediaReport::decode(&out[..out.len() - 1]).is_err());
    }

    #[test]
    fn report_round_trips_with_and_without_link_facts() {
        for link in [false, true] {
            assert_report_round_trips(report(link));
        }
    }

    #[test]
    fn report_rejects_bad_link_marker_and_probability() {
        let mut out = Vec::new();
        report(true).encode(&mut out);
        let marker = MEDIA_REPORT_LEN - 1;
        let mut bad = out.clone();
        bad[marker] = 2;
        assert!(matches!(
            MediaReport::decode(&bad),
            Err(DecodeError::FieldOutOfRange { .. })
        ));
        let mut bad = out.clone();
        bad[marker + 1..marker + 5].copy_from_slice(&2_000_000u32.to_be_bytes());
        assert!(MediaReport::decode(&bad).is_err());
    }

    #[test]
    fn tokens_ride_on_packets_and_reports() {
        let p = MediaPacket {
            conn_id: ConnId(1),
            seq: 42,
            send_time_us: 5,
            rate_bps: 2,
            token: Some(Token([3; TOKEN_LEN])),
            payload: b"frame",
        };
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out.len(), p.encoded_len());
        assert_eq!(MediaPacket::decode(&out), Ok(p));
        for link in [false, true] {
            assert_report_round_trips(MediaReport {
                token: Some(Token([4; TOKEN_LEN])),
                ..report(link)
            });
        }
    }

    #[test]
    fn wrong_type_or_flags_are_rejected() {
        let mut out = Vec::new();
        report(false).encode(&mut out);
        assert!(matches!(
            MediaPacket::decode(&out),
            Err(DecodeError::WrongPacketType { .. })
        ));
        out[3] = 1;
        assert!(matches!(
            MediaReport::decode(&out),
            Err(DecodeError::ReservedFlags(_))
        ));
    }
}
