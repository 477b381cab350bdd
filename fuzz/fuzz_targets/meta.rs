//! `MetaMessage::decode` (the `.roam-meta/NAME` object) on arbitrary bytes: never panics, and
//! a decoded message re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_wire::MetaMessage;

fuzz_target!(|data: &[u8]| {
    let Ok(m) = MetaMessage::decode(data) else {
        return;
    };
    assert_eq!(&m.encode()[..], data);
    assert_eq!(MetaMessage::decode(&m.encode()), Ok(m));
});
