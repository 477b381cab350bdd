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

/// The repository root.
fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Every `*.toml` under `dir`, recursively, in name order.
fn toml_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(toml_files(&p));
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
    out
}

/// Every `trace = "…"` value in a TOML document.
fn trace_paths(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                match (k.as_str(), v) {
                    ("trace", toml::Value::String(s)) => out.push(s.clone()),
                    _ => trace_paths(v, out),
                }
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| trace_paths(v, out)),
        _ => {}
    }
}

#[test]
fn every_shipped_scenario_loads_and_reads_only_files_inside_the_repository() {
    let root = repo();
    let files: Vec<_> = ["scenarios", "experiments"]
        .iter()
        .flat_map(|d| toml_files(&root.join(d)))
        .collect();
    assert!(files.len() >= 15, "{files:?}");
    let mut traces = 0;
    for f in &files {
        roam_sim::Scenario::load(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let doc: toml::Value = toml::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let mut paths = Vec::new();
        trace_paths(&doc, &mut paths);
        for p in paths {
            let resolved = f.parent().unwrap().join(&p).canonicalize().unwrap();
            assert!(
                resolved.starts_with(&root),
                "{}: trace {p} is outside the repository",
                f.display()
            );
            traces += 1;
        }
    }
    assert!(traces >= 2, "the LTE example reads two traces");
}
