//! Mahimahi trace files are untrusted input: `Trace::parse` on arbitrary text never panics, and a
//! parsed trace answers its queries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_proto::Time;
use roam_sim::link::trace::Trace;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(trace) = Trace::parse(text) else {
        return;
    };
    assert!(trace.period_ms() > 0);
    let _ = trace.mean_rate_bps();
    let _ = trace.opportunities_until(Time::from_millis(123_456));
});
