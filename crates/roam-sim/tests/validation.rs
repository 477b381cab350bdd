//! Validation of the TCP model against the ns-3 3.37 dumbbell anchors
//! (shared/anchors/README.md): 10 Mb/s / 20 ms bottleneck, 100-packet drop-tail, NewReno + SACK,
//! 1000-byte segments, IW 1, no delayed ACK, 300 s. Tolerances from the foundation issue: total
//! goodput within ±10 % of ns-3 in every case, Jain ≥ 0.95 with 20 flows, and the lossy cases
//! also within ±35 % of the Mathis et al. estimate MSS/RTT·√(3/2)/√p (RTT ≈ 44 ms).

use std::path::PathBuf;

use roam_sim::Scenario;

fn scenario(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validation")
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Mean total goodput (Mb/s) and mean Jain index over `seeds`; every flow's bytes verified.
fn measure(name: &str, seeds: &[u64]) -> (f64, f64) {
    let mut goodput = 0.0;
    let mut jain = 0.0;
    for &seed in seeds {
        let mut s = scenario(name);
        s.run.seed = seed;
        let r = roam_sim::run(&s);
        for f in &r.flows {
            assert_eq!(
                f.integrity_errors, 0,
                "{name} seed {seed}: flow {} corrupted",
                f.id
            );
        }
        goodput += r.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e6;
        jain += r.jain_index;
    }
    let n = seeds.len() as f64;
    (goodput / n, jain / n)
}

fn within(ours: f64, reference: f64, tolerance: f64) -> bool {
    (ours - reference).abs() <= tolerance * reference
}

fn mathis_mbps(loss: f64) -> f64 {
    let mss_bits = 1000.0 * 8.0;
    mss_bits / 0.044 * (1.5f64).sqrt() / loss.sqrt() / 1e6
}

#[test]
fn single_flow_matches_ns3_within_10_percent() {
    let (g, _) = measure("dumbbell-single", &[1]);
    assert!(within(g, 9.479, 0.10), "ours {g:.3} Mb/s, ns-3 9.479");
}

#[test]
fn twenty_shared_flows_match_ns3_and_share_fairly() {
    let (g, jain) = measure("dumbbell-shared", &[1]);
    assert!(within(g, 9.483, 0.10), "ours {g:.3} Mb/s, ns-3 9.483");
    assert!(jain >= 0.95, "Jain {jain:.4}");
}

#[test]
fn one_percent_loss_matches_ns3_and_mathis() {
    let (g, _) = measure("dumbbell-lossy", &[1, 2, 3]);
    assert!(within(g, 1.834, 0.10), "ours {g:.3} Mb/s, ns-3 1.834");
    let m = mathis_mbps(0.01);
    assert!(within(g, m, 0.35), "ours {g:.3} Mb/s, Mathis {m:.3}");
}

#[test]
fn light_loss_matches_ns3_and_mathis() {
    let (g, _) = measure("dumbbell-light-loss", &[1, 2, 3]);
    assert!(within(g, 6.684, 0.10), "ours {g:.3} Mb/s, ns-3 6.684");
    let m = mathis_mbps(0.001);
    assert!(within(g, m, 0.35), "ours {g:.3} Mb/s, Mathis {m:.3}");
}
