//! Quick mode of the `rcp` reproduction writes report.md and claims.json with every claim id.

use std::path::PathBuf;

use roam_lab::Ctx;

#[test]
fn quick_rcp_reproduction_writes_report_and_claims() {
    let repo_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out_dir = std::env::temp_dir().join(format!("roam-lab-test-rcp-{}", std::process::id()));
    let ctx = Ctx {
        quick: true,
        repo_root,
        out_dir: out_dir.clone(),
        progress: false,
    };
    let exp = roam_lab::find("rcp").expect("registered");
    let report = exp.run(&ctx).expect("runs");
    report.write(&out_dir).expect("writes");
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(md.contains("Where ours differ"));
    assert!(out_dir.join("seven_losses.svg").exists());
    let claims: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("claims.json")).expect("claims"),
    )
    .expect("json");
    let ids: Vec<&str> = claims
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["id"].as_str().expect("id"))
        .collect();
    for want in [
        "friendliness-mean-flat",
        "friendliness-cov-flat",
        "friendliness-tcp-not-hurt",
        "staggered-early-intertwined",
        "staggered-late-similar",
        "reverse-rcp-tracks-tcp",
        "recovery-rcp-ge-tcp-sack",
        "recovery-rcp-eln-ge-tcp-eln",
        "recovery-rcp-eln-2x-at-5pct",
        "seven-loss-rcp-eln-about-one-rtt",
        "seven-loss-tcp-eln-rtt-per-loss",
        "satellite-stp-well-above-newreno",
        "power-rcp-less-energy",
        "power-rcp-throughput-not-lower",
    ] {
        assert!(ids.contains(&want), "missing claim {want}: {ids:?}");
    }
    for c in claims.as_array().expect("array") {
        assert!(c["holds"].is_boolean() && !c["ours"].is_null());
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}
