//! `PtcpHeader::decode` and `PtcpSegment::decode` (with the pSYN handshake extension) on
//! arbitrary bytes: never panic; a decoded
//! header re-encodes to the same bytes, and a decoded pTCP segment re-encodes to at most as many
//! bytes (unknown options of its pipe segment are dropped) that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::{PtcpHeader, PtcpSegment, PTCP_HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok((header, rest)) = PtcpHeader::decode(data) {
        assert_eq!(rest.len() + PTCP_HEADER_LEN, data.len());
        let mut out = Vec::new();
        header.encode(&mut out);
        assert_eq!(&out[..], &data[..PTCP_HEADER_LEN]);
    }
    let Ok(p) = PtcpSegment::decode(data) else {
        return;
    };
    let mut out = Vec::new();
    p.encode(&mut out);
    assert_eq!(out.len(), p.encoded_len());
    assert!(out.len() <= data.len());
    assert_eq!(PtcpSegment::decode(&out), Ok(p));
    assert_eq!(p.ptcp.pipe, p.segment.conn_id);
    if let Some(h) = p.handshake {
        assert!(p.ptcp.syn);
        assert!(h.addresses().count() <= roam_wire::MAX_PTCP_ADDRS);
    }
});
