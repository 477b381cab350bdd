//! `Header::decode` and `Header::peek_conn_id` on arbitrary bytes: never panic, agree on the
//! connection id, and a decoded header re-encodes to the same header.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::{Header, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let peeked = Header::peek_conn_id(data);
    let Ok(header) = Header::decode(data) else {
        return;
    };
    assert_eq!(peeked, Ok(header.conn_id));
    let mut out = Vec::new();
    header.encode(&mut out);
    assert_eq!(out.len(), HEADER_LEN);
    assert_eq!(&out[..], &data[..HEADER_LEN]);
    assert_eq!(Header::decode(&out), Ok(header));
});
