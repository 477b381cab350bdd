//! The written outcome of a reproduction: `report.md` and `claims.json`.

use std::fmt::Write as _;
use std::path::Path;

use crate::{Claim, LabError};

/// A report under construction: markdown sections plus claims.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Title (first heading).
    pub title: String,
    /// Markdown body, appended section by section.
    pub body: String,
    /// The claims checked.
    pub claims: Vec<Claim>,
}

impl Report {
    /// An empty report titled `title`.
    pub fn new(title: &str) -> Self {
        Report {
            title: title.to_owned(),
            ..Report::default()
        }
    }

    /// Appends a `## heading` and paragraph text.
    pub fn section(&mut self, heading: &str, text: &str) {
        let _ = write!(self.body, "\n## {heading}\n\n{text}\n");
    }

    /// Appends a paragraph of text to the current section.
    pub fn paragraph(&mut self, text: &str) {
        let _ = write!(self.body, "\n{text}\n");
    }

    /// Appends a markdown table.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) {
        let _ = writeln!(self.body, "\n| {} |", header.join(" | "));
        let _ = writeln!(
            self.body,
            "|{}|",
            header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
        );
        for r in rows {
            let _ = writeln!(self.body, "| {} |", r.join(" | "));
        }
    }

    /// Embeds an image that sits next to `report.md`.
    pub fn image(&mut self, alt: &str, file: &str) {
        let _ = write!(self.body, "\n![{alt}]({file})\n");
    }

    /// Adds a claim.
    pub fn claim(&mut self, c: Claim) {
        self.claims.push(c);
    }

    /// Renders the whole markdown document (claims summarised at the top).
    pub fn markdown(&self) -> String {
        let mut s = format!("# {}\n", self.title);
        let held = self.claims.iter().filter(|c| c.holds).count();
        let _ = write!(
            s,
            "\n{held} of {} claims hold in this run.\n\n| id | claim | holds |\n|---|---|---|\n",
            self.claims.len()
        );
        for c in &self.claims {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} |",
                c.id,
                c.claim,
                if c.holds { "yes" } else { "**no**" }
            );
        }
        s.push_str(&self.body);
        s
    }

    /// Writes `report.md` and `claims.json` into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> Result<(), LabError> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| LabError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let md = dir.join("report.md");
        std::fs::write(&md, self.markdown()).map_err(io(&md))?;
        let cj = dir.join("claims.json");
        let json = serde_json::to_string_pretty(&self.claims).unwrap_or_else(|_| "[]".into());
        std::fs::write(&cj, json + "\n").map_err(io(&cj))?;
        Ok(())
    }
}

/// Formats `x` with `d` decimals.
pub fn num(x: f64, d: usize) -> String {
    if x.is_finite() {
        format!("{x:.d$}")
    } else {
        "–".to_owned()
    }
}
