//! Scenario files are untrusted input: `Scenario::from_toml_str` on arbitrary text never panics
//! (it accepts or returns a typed error naming the entry and field). Small valid scenarios are
//! also run for a few simulated seconds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use roam_sim::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = Scenario::from_toml_str(text, "fuzz") else {
        return;
    };
    let small = scenario.flows.len() <= 8 && scenario.links.len() <= 16;
    if small && scenario.run.duration.as_secs_f64() <= 2.0 {
        let _ = roam_sim::run(&scenario);
    }
});
