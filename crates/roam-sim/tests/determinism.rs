//! Same scenario and seed ⇒ identical results; the seed matters where randomness does; random
//! streams are independent per link direction and agent.

mod common;

use common::{link, repo_path, two_hosts};
use roam_sim::{set_param, Scenario};

fn json(s: &Scenario) -> String {
    serde_json::to_string(&roam_sim::run(s)).unwrap()
}

fn lossy(seed: &str) -> Scenario {
    let path = repo_path("scenarios/validation/dumbbell-lossy.toml");
    let mut doc = roam_sim::scenario::load_document(&path).unwrap();
    set_param(&mut doc, "run.duration", "60s").unwrap();
    set_param(&mut doc, "run.seed", seed).unwrap();
    Scenario::from_value(doc, "lossy").unwrap()
}

#[test]
fn same_seed_gives_identical_json() {
    assert_eq!(json(&lossy("1")), json(&lossy("1")));
    let udp = two_hosts(
        "20s",
        r#"rate = "5Mbps"
queue = "30p""#,
        r#"[link.forward.gilbert]
good = { mean = "500ms", loss = 0.01 }
bad = { mean = "100ms", loss = 0.3 }
[link.forward.reorder]
probability = 0.05
delay = "4ms""#,
        r#"
[[flow]]
id = "p"
protocol = "pareto"
from = "a"
to = "b"
rate = "8Mbps"
"#,
    );
    let s = common::load(&udp);
    let first = roam_sim::run(&s);
    let second = roam_sim::run(&s);
    assert_eq!(first, second);
}

#[test]
fn different_seed_gives_different_losses() {
    let a = roam_sim::run(&lossy("1"));
    let b = roam_sim::run(&lossy("2"));
    assert_ne!(a.links[0].impairment_drops, b.links[0].impairment_drops);
    assert_ne!(a.flows[0].bytes_delivered, b.flows[0].bytes_delivered);
}

#[test]
fn adding_a_flow_elsewhere_does_not_change_a_links_loss_pattern() {
    let base = r#"
[run]
duration = "10s"
[[node]]
name = "h{i}"
count = 4
[[link]]
name = "one"
a = "h0"
b = "h1"
rate = "10Mbps"
[link.forward]
loss = 0.1
[[link]]
name = "two"
a = "h2"
b = "h3"
rate = "10Mbps"
[link.forward]
loss = 0.1
[[flow]]
id = "first"
protocol = "cbr"
from = "h0"
to = "h1"
rate = "1Mbps"
"#;
    let more = format!(
        r#"{base}
[[flow]]
id = "second"
protocol = "pareto"
from = "h2"
to = "h3"
rate = "2Mbps"
"#
    );
    let a = roam_sim::run(&common::load(base));
    let b = roam_sim::run(&common::load(&more));
    assert_eq!(link(&a, "one:fwd"), link(&b, "one:fwd"));
    assert_eq!(a.flows[0], b.flows[0]);
    assert!(link(&b, "two:fwd").impairment_drops > 0);
}

#[test]
fn series_have_one_bin_per_interval() {
    let r = roam_sim::run(&lossy("1"));
    assert_eq!(r.series.len(), 1);
    assert_eq!(r.series[0].time_s.len(), 60);
    assert_eq!(r.series[0].time_s[0], 1.0);
    assert!(r.series[0].cwnd_bytes.iter().any(Option::is_some));
}

#[test]
fn progress_is_reported_at_most_about_a_hundred_times() {
    let mut calls = Vec::new();
    roam_sim::run_with_progress(&lossy("1"), &mut |f| calls.push(f));
    assert!(calls.len() <= 102, "{}", calls.len());
    assert!(calls.len() >= 50, "{}", calls.len());
    assert_eq!(calls.last(), Some(&1.0));
    assert!(calls.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn example_scenarios_load_and_run() {
    let dir = repo_path("scenarios/examples");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let r = roam_sim::run(&s);
        assert!(
            r.flows.iter().all(|f| f.bytes_delivered > 0),
            "{}: {:?}",
            path.display(),
            r.flows
        );
        n += 1;
    }
    assert!(n >= 4);
}

#[test]
fn media_and_r2cp_runs_through_their_endpoints_are_deterministic() {
    // Both drive roam-proto's Endpoint (agents/{media,r2cp}.rs): its maps and heaps must not
    // bring an order of their own.
    for (file, duration) in [
        ("experiments/atl/media.toml", "20s"),
        ("experiments/r2cp/two_paths.toml", "10s"),
    ] {
        let path = repo_path(file);
        let mut doc = roam_sim::scenario::load_document(&path).unwrap();
        set_param(&mut doc, "run.duration", duration).unwrap();
        let s = Scenario::from_value(doc, file).unwrap();
        let (a, b) = (json(&s), json(&s));
        assert!(a.contains("\"bytes_delivered\""), "{file}");
        assert_eq!(a, b, "{file}");
    }
}
