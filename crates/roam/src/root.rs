//! Finding the repository root (the folder holding `experiments/` and `scenarios/`), so that
//! `roam reproduce` and `roam bench` work from any folder inside a clone, and from a `roam`
//! built inside one (`target/release/roam`), not only from the root itself.

use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};

/// Whether `dir` is a roam repository root: it holds `experiments/` and `scenarios/`.
pub fn is_root(dir: &Path) -> bool {
    dir.join("experiments").is_dir() && dir.join("scenarios").is_dir()
}

/// The first of `start` and its ancestors that is a repository root.
pub fn find_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| is_root(d))
        .map(Path::to_path_buf)
}

/// The repository root: `explicit` (`--root`) if given, which must be one; else the current
/// folder or one of its parents; else a parent of the running executable (a `roam` built in a
/// clone's `target/`).
pub fn find(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return if is_root(dir) {
            Ok(dir.to_owned())
        } else {
            Err(CliError::Usage(format!(
                "--root {}: not a roam repository (it has no experiments/ and scenarios/ folders)",
                dir.display()
            )))
        };
    }
    let cwd = std::env::current_dir().ok();
    let exe = std::env::current_exe().ok();
    cwd.as_deref()
        .and_then(find_from)
        .or_else(|| exe.as_deref().and_then(find_from))
        .ok_or_else(|| {
            CliError::Usage(
                "cannot find the roam repository (a folder with experiments/ and scenarios/) \
                 in the current folder or its parents; run from inside a clone or give \
                 --root DIR"
                    .to_owned(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_found_from_any_folder_below_it() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .unwrap();
        assert_eq!(find_from(&repo), Some(repo.clone()));
        assert_eq!(find_from(&repo.join("crates/roam/src")), Some(repo.clone()));
        assert_eq!(find(Some(&repo)).unwrap(), repo);
    }

    #[test]
    fn a_folder_outside_any_clone_is_refused_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_from(dir.path()), None);
        let err = find(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.contains("--root") && err.contains("not a roam repository"),
            "{err}"
        );
    }
}
