//! The scenario shown in README.md stays valid: it loads, runs, and its download completes intact.

#[test]
fn readme_tour_scenario_runs() {
    let readme = include_str!("../../../README.md");
    let start = readme
        .find("```toml\nname = \"wifi-hop\"")
        .expect("README has the tour scenario")
        + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("closing fence");
    let scenario = roam_sim::Scenario::from_toml_str(&readme[start..end], "readme")
        .unwrap_or_else(|e| panic!("README scenario does not load: {e}"));
    let r = roam_sim::run(&scenario);
    let f = &r.flows[0];
    assert_eq!(f.bytes_delivered, 5 * 1024 * 1024);
    assert_eq!(f.integrity_errors, 0);
    assert!(f.completion_s.is_some());
}
