//! Quick mode of the `atl` reproduction writes report.md, claims.json with every claim id, and
//! the plots; media payloads arrive intact.

use std::path::PathBuf;

use roam_lab::Ctx;

#[test]
fn quick_atl_reproduction_writes_report_claims_and_plots() {
    let repo_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out_dir = std::env::temp_dir().join(format!("roam-lab-test-atl-{}", std::process::id()));
    let ctx = Ctx {
        quick: true,
        repo_root,
        out_dir: out_dir.clone(),
        progress: false,
    };
    let exp = roam_lab::find("atl").expect("registered");
    let report = exp.run(&ctx).expect("runs");
    report.write(&out_dir).expect("writes");
    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(md.contains("Where our numbers differ from the paper's"));
    assert!(md.contains("Payload bytes that differed from what the sources sent: 0."));
    assert!(out_dir.join("throughput-dw10.svg").exists());
    assert!(out_dir.join("media-goodput-dw150.svg").exists());
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
        "tput-high-pw",
        "tput-low-pw-newreno",
        "tput-low-pw-westwood",
        "roaming-source",
        "roaming-receiver",
        "blackout",
        "fairness-intra",
        "fairness-wired",
        "rcp-goodput",
        "rcp-jitter",
    ] {
        assert!(ids.contains(&want), "missing claim {want}: {ids:?}");
    }
    for c in claims.as_array().expect("array") {
        assert!(c["holds"].is_boolean() && !c["ours"].is_null() && !c["paper"].is_null());
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}
