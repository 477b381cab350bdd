//! `roam sim --pcap`: the datagrams crossing simulated links as a pcapng capture that Wireshark
//! and tshark read, one interface per link direction (`name:fwd`, `name:rev`).
//!
//! Each datagram is wrapped in real IPv4 (RFC 791 §3.1) and UDP (RFC 768) headers with valid
//! checksums, so dissectors see ordinary UDP. Addresses: the simulator numbers host interfaces
//! 1, 2, 3, … in scenario order (hosts in node order, then each host's interfaces in order);
//! interface `k` is `10.0.0.0 + k` (the first is `10.0.0.1`). Ports are the simulator's own
//! (each flow's sender and receiver ports). Timestamps are simulated time since the run began, in
//! nanoseconds (`if_tsresol` = 9).
//!
//! What is written, per link direction: every datagram put on the wire (`sent`) and every copy
//! the link duplicated (`duplicated`, commented so), and every drop — `queue_drop`, `lost`,
//! `outage_drop`, `corrupted`, `misrouted` — as a packet whose comment (`opt_comment`) says
//! `roam: dropped (<event>)`. A lost datagram thus appears twice: when sent, and when lost at the
//! far end. `queued`, `delivered` and `forwarded` records add nothing a capture shows and are
//! left out. The packets are the `--trace` rows of those events, in the same order.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;
use roam_sim::agent::{Addr, SockAddr};
use roam_sim::trace::{PacketFate, PacketObserver, PacketRecord};

/// Length of the IPv4 header written (no options).
const IPV4_HEADER: usize = 20;
/// Length of the UDP header.
const UDP_HEADER: usize = 8;
/// Largest UDP payload one IPv4 packet carries; longer datagrams are cut (comment says so).
const MAX_PAYLOAD: usize = u16::MAX as usize - IPV4_HEADER - UDP_HEADER;

/// Whether a record of this fate becomes a packet of the capture, and its comment.
pub fn captured(fate: PacketFate) -> Option<Option<String>> {
    match fate {
        PacketFate::Sent => Some(None),
        PacketFate::Duplicated => Some(Some("roam: duplicated".to_owned())),
        PacketFate::QueueDrop
        | PacketFate::Lost
        | PacketFate::OutageDrop
        | PacketFate::Corrupted
        | PacketFate::Misrouted => Some(Some(format!("roam: dropped ({})", fate.name()))),
        PacketFate::Queued | PacketFate::Delivered | PacketFate::Forwarded => None,
    }
}

/// The IPv4 address of a simulated interface address: `10.0.0.0 + k` (low 24 bits of `k`).
pub fn ipv4(addr: Addr) -> [u8; 4] {
    (10u32 << 24 | (addr.0 & 0x00ff_ffff)).to_be_bytes()
}

/// Writes a pcapng capture of what crosses links. Write errors are kept (the simulator cannot be
/// interrupted) and reported by [`PcapTrace::finish`].
pub struct PcapTrace<W: Write> {
    out: PcapNgWriter<W>,
    /// Keep only these links (by name, or `name:fwd` / `name:rev`); all when `None`.
    link: Option<String>,
    /// Interface id of each link direction seen so far.
    interfaces: HashMap<String, u32>,
    /// IPv4 identification field: counts the packets written.
    ip_id: u16,
    packets: u64,
    error: Option<pcap_file::PcapError>,
}

impl<W: Write> PcapTrace<W> {
    /// A capture writing to `w`, of link `link` only (both directions, or one as `name:fwd`)
    /// or of every link.
    pub fn new(w: W, link: Option<String>) -> std::io::Result<PcapTrace<W>> {
        let out = PcapNgWriter::new(w).map_err(std::io::Error::other)?;
        Ok(PcapTrace {
            out,
            link,
            interfaces: HashMap::new(),
            ip_id: 0,
            packets: 0,
            error: None,
        })
    }

    /// Flushes; returns the number of packets written, or the first write error.
    pub fn finish(mut self) -> std::io::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        self.out.get_mut().flush()?;
        Ok(self.packets)
    }

    /// Whether `dir` (`name:fwd` or `name:rev`) is captured.
    fn keeps(&self, dir: &str) -> bool {
        match &self.link {
            None => true,
            Some(l) => dir == l || dir.rsplit_once(':').is_some_and(|(name, _)| name == l),
        }
    }

    /// The interface id of `dir`, describing it first if new.
    fn interface(&mut self, dir: &str) -> Result<u32, pcap_file::PcapError> {
        if let Some(&id) = self.interfaces.get(dir) {
            return Ok(id);
        }
        let id = self.interfaces.len() as u32;
        self.out.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::RAW,
            snaplen: 0,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Borrowed(dir)),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        })?;
        self.interfaces.insert(dir.to_owned(), id);
        Ok(id)
    }

    fn write(
        &mut self,
        r: &PacketRecord<'_>,
        comment: Option<String>,
    ) -> Result<(), pcap_file::PcapError> {
        let interface_id = self.interface(r.link)?;
        let payload = r.payload.unwrap_or(&[]);
        let mut comments: Vec<String> = comment.into_iter().collect();
        if r.payload.is_none() {
            comments.push("roam: payload not recorded".to_owned());
        }
        let kept = payload.len().min(MAX_PAYLOAD);
        if kept < payload.len() {
            comments.push(format!("roam: datagram of {} bytes cut", payload.len()));
        }
        let data = ip_udp(r.src, r.dst, self.ip_id, &payload[..kept]);
        self.ip_id = self.ip_id.wrapping_add(1);
        let block = EnhancedPacketBlock {
            interface_id,
            timestamp: Duration::from_nanos(r.time.as_nanos()),
            original_len: data.len() as u32,
            data: Cow::Owned(data),
            options: comments
                .into_iter()
                .map(|c| EnhancedPacketOption::Comment(Cow::Owned(c)))
                .collect(),
        };
        self.out.write_pcapng_block(block)?;
        self.packets += 1;
        Ok(())
    }
}

impl<W: Write> PacketObserver for PcapTrace<W> {
    fn observe(&mut self, r: &PacketRecord<'_>) {
        if self.error.is_some() || !self.keeps(r.link) {
            return;
        }
        let Some(comment) = captured(r.fate) else {
            return;
        };
        if let Err(e) = self.write(r, comment) {
            self.error = Some(e);
        }
    }

    fn wants_payload(&self) -> bool {
        true
    }
}

/// `payload` (at most [`MAX_PAYLOAD`] bytes) in UDP in IPv4, checksums filled in.
fn ip_udp(src: SockAddr, dst: SockAddr, id: u16, payload: &[u8]) -> Vec<u8> {
    let udp_len = (UDP_HEADER + payload.len()) as u16;
    let total = IPV4_HEADER as u16 + udp_len;
    let (s, d) = (ipv4(src.addr), ipv4(dst.addr));
    let mut p = Vec::with_capacity(total as usize);
    // RFC 791 §3.1: version 4, IHL 5; TOS 0; total length; identification; DF, offset 0;
    // TTL 64; protocol 17 (UDP); header checksum; source; destination.
    p.extend_from_slice(&[0x45, 0]);
    p.extend_from_slice(&total.to_be_bytes());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x40, 0, 64, 17, 0, 0]);
    p.extend_from_slice(&s);
    p.extend_from_slice(&d);
    let ip_sum = checksum(&[&p[..IPV4_HEADER]]);
    p[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    // RFC 768: ports, length, checksum over the pseudo-header, header and data.
    p.extend_from_slice(&src.port.to_be_bytes());
    p.extend_from_slice(&dst.port.to_be_bytes());
    p.extend_from_slice(&udp_len.to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    let mut pseudo = [0u8; 12];
    pseudo[..4].copy_from_slice(&s);
    pseudo[4..8].copy_from_slice(&d);
    pseudo[9] = 17;
    pseudo[10..].copy_from_slice(&udp_len.to_be_bytes());
    let mut udp_sum = checksum(&[&pseudo, &p[IPV4_HEADER..]]);
    // RFC 768: a computed zero is sent as all ones (zero means "no checksum").
    if udp_sum == 0 {
        udp_sum = 0xffff;
    }
    p[IPV4_HEADER + 6..IPV4_HEADER + 8].copy_from_slice(&udp_sum.to_be_bytes());
    p
}

/// The Internet checksum (RFC 1071) of the concatenated parts (each but the last of even
/// length).
fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    for part in parts {
        for pair in part.chunks(2) {
            let word = u16::from_be_bytes([pair[0], pair.get(1).copied().unwrap_or(0)]);
            sum += u32::from(word);
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(a: u32, port: u16) -> SockAddr {
        SockAddr {
            addr: Addr(a),
            port,
        }
    }

    #[test]
    fn headers_carry_addresses_ports_and_valid_checksums() {
        let p = ip_udp(sock(1, 5000), sock(258, 80), 7, b"hello");
        assert_eq!(p.len(), 20 + 8 + 5);
        assert_eq!(&p[12..16], &[10, 0, 0, 1]);
        assert_eq!(&p[16..20], &[10, 0, 1, 2]);
        assert_eq!(u16::from_be_bytes([p[20], p[21]]), 5000);
        assert_eq!(u16::from_be_bytes([p[22], p[23]]), 80);
        assert_eq!(&p[28..], b"hello");
        // A header with its checksum sums to zero (RFC 1071 §1).
        assert_eq!(checksum(&[&p[..20]]), 0);
        let mut pseudo = [0u8; 12];
        pseudo[..4].copy_from_slice(&p[12..16]);
        pseudo[4..8].copy_from_slice(&p[16..20]);
        pseudo[9] = 17;
        pseudo[10..].copy_from_slice(&13u16.to_be_bytes());
        // Odd-length data last, as the UDP checksum pads it.
        assert_eq!(checksum(&[&pseudo, &p[20..]]), 0);
    }

    #[test]
    fn a_link_filter_keeps_both_directions_or_one() {
        let t = PcapTrace::new(Vec::new(), Some("l".to_owned())).unwrap();
        assert!(t.keeps("l:fwd") && t.keeps("l:rev") && !t.keeps("m:fwd"));
        let t = PcapTrace::new(Vec::new(), Some("l:rev".to_owned())).unwrap();
        assert!(!t.keeps("l:fwd") && t.keeps("l:rev"));
    }
}
