//! `Request::decode` on arbitrary bytes: never panics, and a decoded request re-encodes to a
//! datagram that decodes to the same request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::Request;

fuzz_target!(|data: &[u8]| {
    let Ok(req) = Request::decode(data) else {
        return;
    };
    let mut out = Vec::new();
    req.encode(&mut out);
    assert_eq!(out.len(), req.encoded_len());
    assert_eq!(Request::decode(&out), Ok(req));
});
