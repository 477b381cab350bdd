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
    // Everything the tour shows happens: the handoff comes before the download ends.
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(scenario.events[0].at.as_secs_f64() < f.completion_s.unwrap());
}

/// The README's tour scenario.
fn tour() -> &'static str {
    let readme = include_str!("../../../README.md");
    let start = readme.find("```toml\nname = \"wifi-hop\"").expect("tour") + "```toml\n".len();
    &readme[start..start + readme[start..].find("```").expect("closing fence")]
}

/// The command lines of the README's `sh` blocks.
fn readme_commands() -> Vec<String> {
    let readme = include_str!("../../../README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh && !l.is_empty() => out.push(l.to_owned()),
            _ => {}
        }
    }
    out
}

/// Splits a command line into words, honouring double quotes; drops a trailing comment.
fn words(line: &str) -> Vec<String> {
    let line = line.split(" # ").next().unwrap_or(line);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_readme_command_runs() {
    let root = repo();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wifi-hop.toml");
    std::fs::write(&file, tour()).unwrap();
    let mut ran = 0;
    for line in readme_commands() {
        let mut args = words(&line);
        // `cargo run --release -- ARGS` is `roam ARGS`; cargo's own commands are CI's.
        let args: Vec<String> = match args.first().map(String::as_str) {
            Some("roam") => args.split_off(1),
            Some("cargo") if args.get(1).map(String::as_str) == Some("run") => {
                let at = args.iter().position(|a| a == "--").expect("cargo run -- …");
                args.split_off(at + 1)
            }
            Some("cargo") => continue,
            _ => panic!("README command of an unknown program: {line}"),
        };
        let mut args: Vec<String> = args
            .into_iter()
            .map(|a| match a.as_str() {
                "FILE" => file.display().to_string(),
                a if a.ends_with(".toml") => root.join(a).display().to_string(),
                _ => a,
            })
            .collect();
        // Keep the suite quick and the repository clean: one repeat and no ns-3 for bench (a
        // stand-in ns-3 is tested in cli.rs), reproductions into the temporary folder.
        match args[0].as_str() {
            "bench" => args.extend(["--repeat", "1", "--no-ns3"].map(String::from)),
            "reproduce" if !args.contains(&"--list".to_owned()) => args.extend([
                "--out".to_owned(),
                dir.path().join("results").display().to_string(),
            ]),
            _ => {}
        }
        args.push("-q".to_owned());
        if args[0] == "reproduce" && args.contains(&"--list".to_owned()) {
            args.pop();
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_roam"))
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("run roam");
        let err = String::from_utf8_lossy(&o.stderr);
        let no_png = err.contains("no font found") || err.contains("no PNG renderer");
        assert!(
            o.status.success() || (args.contains(&"--png".to_owned()) && no_png),
            "README command `{line}` failed: {err}"
        );
        assert!(!err.contains("warning:"), "`{line}`: {err}");
        ran += 1;
    }
    assert!(ran >= 10, "{ran} commands");
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
    // The test bed's cases are links files, not scenarios (tests/testbed.rs loads them).
    let files: Vec<_> = ["scenarios", "experiments"]
        .iter()
        .flat_map(|d| toml_files(&root.join(d)))
        .filter(|f| !f.starts_with(root.join("experiments/testbed")))
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

#[test]
fn the_png_size_the_readme_gives_is_the_size_of_every_plot() {
    use roam_lab::chart::{HEIGHT, WIDTH};
    let readme = include_str!("../../../README.md");
    let scale = roam_lab::raster::SCALE as u32;
    let size = format!("{} × {}", scale * WIDTH, scale * HEIGHT);
    assert!(readme.contains(&size), "README should give {size}");
    // roam sim's plots are drawn at the charts' size (see output/plot.rs's tests).
}
