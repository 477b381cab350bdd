//! `MediaPacket::decode` and `MediaReport::decode` on arbitrary datagrams: never panic, and
//! whatever decodes re-encodes to `encoded_len()` bytes that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::{MediaPacket, MediaReport};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = MediaPacket::decode(data) {
        let mut out = Vec::new();
        p.encode(&mut out);
        assert_eq!(out.len(), p.encoded_len());
        assert_eq!(out.as_slice(), data);
        assert_eq!(MediaPacket::decode(&out), Ok(p));
    }
    if let Ok(r) = MediaReport::decode(data) {
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(out.len(), r.encoded_len());
        // Trailing bytes after a report are ignored, so the re-encoding is never longer.
        assert!(out.len() <= data.len());
        assert_eq!(MediaReport::decode(&out), Ok(r));
    }
});
