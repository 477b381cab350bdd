//! `Data::decode` on arbitrary bytes: never panics, and a decoded datagram re-encodes to the
//! same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::Data;

fuzz_target!(|data: &[u8]| {
    let Ok(d) = Data::decode(data) else {
        return;
    };
    let mut out = Vec::new();
    d.encode(&mut out);
    assert_eq!(&out[..], data);
    assert_eq!(Data::decode(&out), Ok(d));
});
