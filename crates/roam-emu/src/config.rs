//! The link file: the simulator's scenario format, so one `[[link]]` is simulated or emulated
//! at will. A full scenario works as it is (its flows are ignored); a file with only
//! `[[link]]` entries (and `[[event]]`s) works too: `[run]`, the nodes and each link's `a`
//! and `b` are filled in (`a` is the inner side, the command's).

use std::path::Path;

use roam_sim::link::emulation::DirModel;
use roam_sim::Scenario;
use toml::Value;

use crate::error::{EmuError, Result};

/// One emulated path: a link's name and its two directions, `up` from the inner side (the
/// command's, or the first joined namespace) to the outer side and `down` back.
#[derive(Debug)]
pub struct PathModel {
    /// The link's name.
    pub name: String,
    /// Inner → outer.
    pub up: DirModel,
    /// Outer → inner.
    pub down: DirModel,
}

/// Which links to emulate and how.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Link names in path order; empty: every link, in file order.
    pub links: Vec<String>,
    /// The node on the inner side; `None`: each link's `a`.
    pub inner: Option<String>,
    /// Overrides the file's `run.seed` (the random loss streams).
    pub seed: Option<u64>,
}

/// Reads `path` and builds one [`PathModel`] per selected link.
pub fn load(path: &Path, sel: &Selection) -> Result<Vec<PathModel>> {
    let text = std::fs::read_to_string(path).map_err(|source| EmuError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| EmuError::Links {
        path: path.to_path_buf(),
        message: format!("invalid TOML: {}", e.to_string().trim_end()),
    })?;
    from_table(doc, path, sel)
}

/// [`load`] of a document already read from `path` (relative traces are resolved against
/// its folder).
pub fn from_table(mut doc: toml::Table, path: &Path, sel: &Selection) -> Result<Vec<PathModel>> {
    let bad = |message: String| EmuError::Links {
        path: path.to_path_buf(),
        message,
    };
    complete(&mut doc);
    if let Some(seed) = sel.seed {
        if let Some(Value::Table(run)) = doc.get_mut("run") {
            run.insert("seed".into(), Value::Integer(seed as i64 & i64::MAX));
        }
    }
    let hint = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let scenario = Scenario::from_value_in(Value::Table(doc), &hint, path.parent())
        .map_err(|e| bad(e.to_string()))?;
    paths(&scenario, sel).map_err(bad)
}

/// The selected links of `scenario` as paths.
pub fn paths(scenario: &Scenario, sel: &Selection) -> std::result::Result<Vec<PathModel>, String> {
    let names: Vec<String> = if sel.links.is_empty() {
        scenario.links.iter().map(|l| l.name.clone()).collect()
    } else {
        sel.links.clone()
    };
    if names.is_empty() {
        return Err("no [[link]] to emulate".into());
    }
    let inner = match &sel.inner {
        Some(n) => Some(
            scenario
                .node_index(n)
                .ok_or_else(|| format!("--inner: no node called {n:?}"))?,
        ),
        None => None,
    };
    let mut out = Vec::new();
    for name in names {
        let li = scenario
            .link_index(&name)
            .ok_or_else(|| format!("no link called {name:?}"))?;
        let l = &scenario.links[li];
        let [fwd, rev] = DirModel::for_link(scenario, &name).map_err(|e| e.to_string())?;
        let a_inside = match inner {
            None => true,
            Some(n) if n == l.a => true,
            Some(n) if n == l.b => false,
            Some(_) => {
                return Err(format!(
                    "link {name:?} does not join the inner node {:?}",
                    sel.inner.as_deref().unwrap_or_default()
                ))
            }
        };
        let (up, down) = if a_inside { (fwd, rev) } else { (rev, fwd) };
        out.push(PathModel { name, up, down });
    }
    Ok(out)
}

/// Fills in what a links-only file leaves out: `[run]`, each link's `a` and `b`, the nodes.
fn complete(doc: &mut toml::Table) {
    doc.entry("run").or_insert_with(|| {
        let mut run = toml::Table::new();
        run.insert("duration".into(), Value::String("1000000s".into()));
        Value::Table(run)
    });
    if doc.contains_key("node") {
        return;
    }
    let mut names: Vec<String> = Vec::new();
    if let Some(Value::Array(links)) = doc.get_mut("link") {
        for l in links.iter_mut() {
            let Value::Table(t) = l else { continue };
            for (key, default) in [("a", "inner"), ("b", "outer")] {
                let v = t
                    .entry(key)
                    .or_insert_with(|| Value::String(default.into()));
                if let Value::String(s) = v {
                    if !names.contains(s) {
                        names.push(s.clone());
                    }
                }
            }
        }
    }
    let nodes = names
        .into_iter()
        .map(|n| {
            let mut t = toml::Table::new();
            t.insert("name".into(), Value::String(n));
            Value::Table(t)
        })
        .collect();
    doc.insert("node".into(), Value::Array(nodes));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempdir::Dir, std::path::PathBuf) {
        let d = tempdir::Dir::new();
        let p = d.0.join("links.toml");
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    /// A throw-away folder (no dev-dependency for one test helper).
    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let p =
                    std::env::temp_dir().join(format!("roam-emu-cfg-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_links_only_file_is_completed() {
        let (_d, p) = write(
            "[[link]]\nname = \"wifi\"\nrate = \"8Mbps\"\ndelay = \"15ms\"\n\
             [[link]]\nname = \"lte\"\nrate = \"2Mbps\"\ndelay = \"100ms\"\n",
        );
        let paths = load(&p, &Selection::default()).unwrap();
        let names: Vec<&str> = paths.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["wifi", "lte"]);
        assert_eq!(paths[1].down.delay(), std::time::Duration::from_millis(100));
    }

    #[test]
    fn a_scenario_link_is_taken_from_its_inner_node() {
        let (_d, p) = write(
            "[run]\nduration = \"1s\"\n[[node]]\nname = \"gw\"\n[[node]]\nname = \"m\"\n\
             [[link]]\nname = \"w\"\na = \"gw\"\nb = \"m\"\nrate = \"1Mbps\"\n\
             [link.forward]\ndelay = \"7ms\"\n",
        );
        let sel = Selection {
            inner: Some("m".into()),
            ..Selection::default()
        };
        let paths = load(&p, &sel).unwrap();
        // Forward (gw → m) is the inner side's downlink.
        assert_eq!(paths[0].down.delay(), std::time::Duration::from_millis(7));
        assert_eq!(paths[0].up.delay(), std::time::Duration::ZERO);
        let sel = Selection {
            links: vec!["x".into()],
            ..Selection::default()
        };
        let e = load(&p, &sel).unwrap_err().to_string();
        assert!(e.contains("no link called \"x\""), "{e}");
    }

    #[test]
    fn bad_files_are_refused_with_the_field() {
        let (_d, p) = write("[[link]]\nname = \"w\"\nrate = \"fast\"\n");
        let e = load(&p, &Selection::default()).unwrap_err().to_string();
        assert!(e.contains("rate"), "{e}");
        let (_d, p) = write("[[link]\n");
        assert!(load(&p, &Selection::default()).is_err());
    }
}
