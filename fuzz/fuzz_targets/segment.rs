//! `Segment::decode` on arbitrary datagrams: never panics, and whatever decodes re-encodes to
//! exactly `encoded_len()` bytes that decode to the same segment.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::{Header, Segment};

fuzz_target!(|data: &[u8]| {
    let Ok(seg) = Segment::decode(data) else {
        return;
    };
    assert_eq!(Header::peek_conn_id(data), Ok(seg.conn_id));
    let mut out = Vec::new();
    seg.encode(&mut out);
    assert_eq!(out.len(), seg.encoded_len());
    // Unknown options are skipped on decode, so the re-encoding is never longer.
    assert!(out.len() <= data.len());
    assert_eq!(Segment::decode(&out), Ok(seg));
});
