//! `Options::decode` on arbitrary option areas: never panics, and decoded options re-encode to
//! exactly `encoded_len()` bytes that decode to the same options.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::{Options, MAX_OPTIONS_LEN};

fuzz_target!(|data: &[u8]| {
    let Ok(opts) = Options::decode(data) else {
        return;
    };
    let mut out = Vec::new();
    opts.encode(&mut out);
    assert_eq!(out.len(), opts.encoded_len());
    assert!(out.len() <= MAX_OPTIONS_LEN);
    assert_eq!(Options::decode(&out), Ok(opts));
});
