//! Bad scenario files give errors that name the entry and field, and never panic.

mod common;

use proptest::prelude::*;
use roam_sim::{set_param, Scenario};

const BASE: &str = r#"
name = "base"
[run]
duration = "2s"
seed = 3
[[node]]
name = "h{i}"
count = 2
[[node]]
name = "r"
kind = "router"
[[link]]
name = "l{i}"
count = 2
a = "h{i}"
b = "r"
rate = "10Mbps"
delay = "5ms"
queue = "50p"
[link.forward]
loss = 0.01
gilbert = { good = { mean = "1s", loss = 0.0 }, bad = { mean = "100ms", loss = 0.5 } }
blackouts = [{ at = "1s", duration = "200ms" }]
reorder = { probability = 0.01, delay = "3ms" }
duplicate = 0.01
[[flow]]
id = "f"
protocol = "tcp"
cc = "newreno"
from = "h0"
to = "h1"
size = "100KB"
[flow.tcp]
sack = true
[[flow]]
id = "c"
protocol = "cbr"
from = "h1"
to = "h0"
rate = "1Mbps"
packet_size = 500
cross = true
[[event]]
at = "1s"
link = "l0"
set = { rate = "5Mbps", loss = 0.02 }
"#;

fn err(text: &str) -> String {
    match Scenario::from_toml_str(text, "t") {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn with(key: &str, value: &str) -> String {
    let mut doc = roam_sim::scenario::parse_document(BASE).unwrap();
    set_param(&mut doc, key, value).unwrap();
    match Scenario::from_value(doc, "t") {
        Ok(_) => panic!("expected an error after {key} = {value}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn base_scenario_loads_and_runs() {
    let s = Scenario::from_toml_str(BASE, "t").unwrap();
    assert_eq!(s.nodes.len(), 3);
    assert_eq!(s.links.len(), 2);
    let r = roam_sim::run(&s);
    assert_eq!(r.flows.len(), 2);
}

#[test]
fn out_of_range_probability_names_link_and_field() {
    assert_eq!(
        with("link.l{i}.forward.loss", "1.5"),
        r#"link "l0": forward.loss: expected a probability in [0,1], got 1.5"#
    );
}

#[test]
fn misspelt_field_is_rejected() {
    let e = with("link.0.forward.lose", "0.1");
    assert!(
        e.starts_with(r#"link "l0": forward.lose: unknown field"#),
        "{e}"
    );
    let e = with("run.sede", "1");
    assert!(e.starts_with("run.sede: unknown field"), "{e}");
    let e = with("flow.f.tcp.sak", "true");
    assert!(e.starts_with(r#"flow "f": tcp.sak: unknown field"#), "{e}");
}

#[test]
fn misspellings_name_the_key_meant_in_one_wording() {
    // Our tables and the engines' serde-read option tables word an unknown key alike.
    assert!(with("run.sede", "1")
        .starts_with("run.sede: unknown field; did you mean `seed`? (expected one of: duration,"));
    let e = with("flow.f.tcp.sak", "true");
    assert!(
        e.starts_with(
            r#"flow "f": tcp.sak: unknown field; did you mean `sack`? (expected one of: "#
        ),
        "{e}"
    );
    assert!(
        !e.contains("`mss`"),
        "known keys are listed as in our tables: {e}"
    );
    // A required key spelt wrong is reported missing, with the spelling found.
    let e = err(&BASE.replacen("protocol = \"tcp\"", "protocl = \"tcp\"", 1));
    assert_eq!(
        e,
        r#"flow "f": protocol: missing (found `protocl`: did you mean `protocol`?)"#
    );
    let e = with("flow.f.to", "hh1");
    assert!(
        e.ends_with(r#"no node named "hh1"; did you mean "h1"?"#),
        "{e}"
    );
    let e = with("event.0.link", "l00");
    assert!(
        e.ends_with(r#"no link named "l00"; did you mean "l0"?"#),
        "{e}"
    );
}

#[test]
fn engine_option_errors_name_no_rust_types() {
    for (value, want) in [
        ("-3", "expected an integer in 0..=65535, got -3"),
        ("70000", "expected an integer in 0..=65535, got 70000"),
        ("\"big\"", "expected an integer in 0..=65535, got \"big\""),
    ] {
        assert_eq!(
            with("flow.f.tcp.mss", value),
            format!(r#"flow "f": tcp.mss: {want}"#)
        );
    }
    let e = with("flow.f.tcp.recovery", "\"fast\"");
    assert_eq!(
        e,
        r#"flow "f": tcp.recovery: expected "standard" or "probing", got "fast""#
    );
    for key in [
        "flow.f.tcp.dup_thresh",
        "flow.f.tcp.sack",
        "flow.f.tcp.initial_rto_ms",
    ] {
        let e = with(key, "\"x\"");
        for rust in ["u8", "u16", "u32", "u64", "f64", "usize", "invalid type"] {
            assert!(!e.contains(rust), "{key}: {e}");
        }
    }
}

#[test]
fn bad_units_and_types_name_the_field() {
    let e = with("link.0.rate", "10 Mbs");
    assert!(e.starts_with(r#"link "l0": rate: expected a rate"#), "{e}");
    let e = with("link.0.delay", "5 parsecs");
    assert!(e.starts_with(r#"link "l0": delay: expected a time"#), "{e}");
    let e = with("flow.f.size", "lots");
    assert!(e.starts_with(r#"flow "f": size: expected a size"#), "{e}");
    let e = with("flow.c.cross", "\"yes\"");
    assert!(
        e.starts_with(r#"flow "c": cross: expected true or false"#),
        "{e}"
    );
    let e = with("flow.f.tcp.sack", "\"yes\"");
    assert!(e.starts_with(r#"flow "f": tcp.sack:"#), "{e}");
    let e = with("flow.f.tcp.mss", "10");
    assert!(
        e.starts_with(r#"flow "f": tcp.mss: must be at least"#),
        "{e}"
    );
    let e = with("link.0.forward.gilbert.bad.mean", "0");
    assert!(
        e.starts_with(r#"link "l0": forward.gilbert.bad.mean:"#),
        "{e}"
    );
}

#[test]
fn unknown_names_are_reported() {
    let e = with("flow.f.from", "nowhere");
    assert_eq!(e, r#"flow "f": from: no node named "nowhere""#);
    let e = with("flow.f.cc", "vegas");
    assert!(
        e.starts_with(r#"flow "f": cc: unknown congestion control "vegas""#),
        "{e}"
    );
    let e = with("flow.f.protocol", "sctp");
    assert!(e.starts_with(r#"flow "f": protocol: expected"#), "{e}");
    for protocol in ["tcp", "http", "rcp", "cbr", "pareto", "media", "atl"] {
        assert!(
            e.contains(&format!("{protocol:?}")),
            "{protocol} not listed: {e}"
        );
    }
    let e = with("event.0.link", "l9");
    assert_eq!(e, r#"event[0]: link: no link named "l9""#);
    let e = with("flow.f.to", "r");
    assert!(e.contains("is a router"), "{e}");
}

#[test]
fn structural_problems_are_reported() {
    assert!(err("").starts_with("run: missing"));
    assert!(err("[run\n").starts_with("TOML syntax error"));
    let e = with("node.0.count", "1000000000");
    assert!(e.starts_with("node[0]: count: expected an integer"), "{e}");
    let e = with("node.1.name", "h0");
    assert!(e.contains("used twice"), "{e}");
    let e = with("flow.c.rate", "0");
    assert!(
        e.starts_with(r#"flow "c": rate: expected a rate between"#),
        "{e}"
    );
    let e = with("event.0.node", "h0");
    assert_eq!(e, "event[0]: give exactly one of `link` or `node`");
}

#[test]
fn disconnected_hosts_have_no_route() {
    let text = r#"
[run]
duration = "1s"
[[node]]
name = "a"
[[node]]
name = "b"
[[node]]
name = "c"
[[link]]
name = "ab"
a = "a"
b = "b"
rate = "1Mbps"
[[link]]
name = "bc"
a = "b"
b = "c"
rate = "1Mbps"
[[flow]]
id = "x"
protocol = "cbr"
from = "a"
to = "c"
rate = "1kbps"
"#;
    assert_eq!(err(text), r#"flow "x": no route from "a" to "c""#);
}

/// Pieces that make scenario text interestingly wrong.
const TOKENS: &[&str] = &[
    "",
    "0",
    "-1",
    "1.5",
    "1e400",
    "nan",
    "\"\"",
    "\"x\"",
    "\"10Mbps\"",
    "\"1e400Mbps\"",
    "\"-5s\"",
    "\"99999999999999999999B\"",
    "[",
    "]",
    "{",
    "}",
    "=",
    "\n",
    "[[flow]]\n",
    "[[link]]\n",
    "count = 100001\n",
    "count = -1\n",
    "{i}",
    "\"{i}\"",
    "true",
    "[1, 2]",
    "{ a = 1 }",
    "1979-05-27",
    "\"\\u00e9\"",
    "\"µs\"",
    "\"5MiB\"",
];

fn mutate(base: &str, cuts: &[(usize, usize, usize)]) -> String {
    let mut s = base.as_bytes().to_vec();
    for &(pos, len, tok) in cuts {
        let pos = pos % (s.len() + 1);
        let end = (pos + len % 16).min(s.len());
        s.splice(pos..end, TOKENS[tok % TOKENS.len()].bytes());
    }
    String::from_utf8_lossy(&s).into_owned()
}

const KEYS: &[&str] = &[
    "run.duration",
    "run.seed",
    "run.sample_interval",
    "run.header_overhead",
    "node.0.count",
    "node.0.kind",
    "node.1.name",
    "link.0.rate",
    "link.0.queue",
    "link.0.a",
    "link.0.count",
    "link.0.forward.loss",
    "link.0.forward.gilbert.good.mean",
    "link.0.forward.blackouts",
    "link.0.forward.trace",
    "link.0.reverse.reorder",
    "link.0.forward.duplicate",
    "flow.0.size",
    "flow.0.start_step",
    "flow.0.tcp.mss",
    "flow.0.tcp",
    "flow.1.rate",
    "flow.1.packet_size",
    "flow.1.protocol",
    "flow.0.from_iface",
    "flow.0.to_iface",
    "event.0.at",
    "event.0.set",
    "event.0.direction",
    "event.0.node",
    "route",
    "flow.1.shape",
    "flow.1.on_time",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let _ = Scenario::from_toml_str(&text, "p");
    }

    #[test]
    fn mutated_scenarios_never_panic(cuts in prop::collection::vec((0usize..4000, 0usize..64, 0usize..64), 1..4)) {
        let text = mutate(BASE, &cuts);
        let _ = Scenario::from_toml_str(&text, "p");
    }

    #[test]
    fn overridden_scenarios_never_panic(sets in prop::collection::vec((0usize..64, 0usize..64), 1..4)) {
        let mut doc = roam_sim::scenario::parse_document(BASE).unwrap();
        for (k, v) in sets {
            let _ = set_param(&mut doc, KEYS[k % KEYS.len()], TOKENS[v % TOKENS.len()]);
        }
        if let Ok(s) = Scenario::from_value(doc, "p") {
            if s.run.duration.as_secs_f64() <= 3.0 {
                let _ = roam_sim::run(&s);
            }
        }
    }
}
