//! `Summary` (the one-line datagram description used by packet traces) on arbitrary bytes:
//! never panics and always says something.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::Summary;

fuzz_target!(|data: &[u8]| {
    assert!(!Summary(data).to_string().is_empty());
});
