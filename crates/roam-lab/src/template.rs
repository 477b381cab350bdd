//! Scenario templates: a TOML file under `experiments/<name>/` plus parameter overrides.

use std::path::{Path, PathBuf};

use roam_sim::Scenario;

use crate::runner::Job;
use crate::LabError;

/// A loaded template document, ready to be specialised.
#[derive(Debug, Clone)]
pub struct Template {
    path: PathBuf,
    doc: toml::Value,
}

impl Template {
    /// Reads `path` as a TOML document.
    pub fn load(path: &Path) -> Result<Template, LabError> {
        let doc = roam_sim::scenario::load_document(path).map_err(|e| LabError::Template {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Template {
            path: path.to_owned(),
            doc,
        })
    }

    /// A job running [`Template::build`]'s scenario for `params`, named and labelled `label`.
    pub fn job<K: AsRef<str>>(
        &self,
        label: String,
        params: &[(K, String)],
    ) -> Result<Job, LabError> {
        Ok(Job {
            scenario: self.build(&label, params)?,
            label,
        })
    }

    /// A scenario with `params` (dotted key, value) applied, in order.
    pub fn build<K: AsRef<str>>(
        &self,
        name: &str,
        params: &[(K, String)],
    ) -> Result<Scenario, LabError> {
        let mut doc = self.doc.clone();
        for (key, value) in params {
            let key = key.as_ref();
            roam_sim::set_param(&mut doc, key, value).map_err(|e| LabError::Param {
                path: self.path.clone(),
                key: key.to_owned(),
                value: value.clone(),
                message: e.to_string(),
            })?;
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        Scenario::from_value_in(doc, name, Some(dir)).map_err(|e| LabError::Template {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }
}
