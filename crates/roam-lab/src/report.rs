//! The written outcome of a reproduction: `report.md`, `claims.json`, and every table of the
//! report as a CSV file under `tables/` (for pandas and spreadsheets).

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
    /// Every table of the body, in order, as written to `tables/`.
    pub tables: Vec<DataTable>,
    /// Every image the body embeds, in order (file names next to `report.md`).
    pub images: Vec<String>,
    /// Heading of the section being written (names its tables' files).
    heading: String,
}

/// One table of a report, kept for its CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTable {
    /// File name under `tables/`: position in the report and the section heading, e.g.
    /// `03-figure-3-throughput-of-the-main-connection-kb-s-per-0.csv`.
    pub file: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Cells, as printed in the markdown table.
    pub rows: Vec<Vec<String>>,
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
        heading.clone_into(&mut self.heading);
    }

    /// Appends a paragraph of text to the current section.
    pub fn paragraph(&mut self, text: &str) {
        let _ = write!(self.body, "\n{text}\n");
    }

    /// Appends a markdown table, with a link to the same table as CSV.
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
        let file = format!("{:02}-{}.csv", self.tables.len() + 1, slug(&self.heading));
        let _ = writeln!(self.body, "\nData: [`tables/{file}`](tables/{file})");
        self.tables.push(DataTable {
            file,
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: rows.to_vec(),
        });
    }

    /// Embeds an image that sits next to `report.md`.
    pub fn image(&mut self, alt: &str, file: &str) {
        let _ = write!(self.body, "\n![{alt}]({file})\n");
        self.images.push(file.to_owned());
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

    /// Writes `report.md`, `claims.json` and `tables/*.csv` into `dir` (created if needed).
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
        let tables = dir.join("tables");
        std::fs::create_dir_all(&tables).map_err(io(&tables))?;
        for t in &self.tables {
            let path = tables.join(&t.file);
            std::fs::write(&path, t.csv()).map_err(io(&path))?;
        }
        Ok(())
    }
}

impl DataTable {
    /// The table as CSV (RFC 4180 quoting), header first.
    pub fn csv(&self) -> Vec<u8> {
        // Flexible: a row shorter or longer than the header is written as it is. Writing into
        // a Vec cannot fail otherwise.
        let mut w = csv::WriterBuilder::new()
            .flexible(true)
            .from_writer(Vec::new());
        let _ = w.write_record(&self.header);
        for r in &self.rows {
            let _ = w.write_record(r);
        }
        w.into_inner().unwrap_or_default()
    }
}

/// A file-name-safe form of `heading`: lowercase ASCII letters, digits and dots, runs of
/// anything else turned into one `-`, at most 60 characters.
fn slug(heading: &str) -> String {
    let mut out = String::new();
    for c in heading.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(60).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("table");
    }
    out
}

/// Formats `x` with `d` decimals.
pub fn num(x: f64, d: usize) -> String {
    if x.is_finite() {
        format!("{x:.d$}")
    } else {
        "–".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_named_by_position_and_section_and_quoted_as_csv() {
        let mut r = Report::new("t");
        r.section("Figure 3: throughput (kb/s), PER 0", "text");
        r.table(
            &["RTT (ms)", "a, b"],
            &[vec!["100".into(), "1 / \"2\"".into()]],
        );
        r.section("Figure 3: throughput (kb/s), PER 0", "again");
        r.table(&["x"], &[vec!["1".into(), "extra".into()]]);
        assert_eq!(r.tables[0].file, "01-figure-3-throughput-kb-s-per-0.csv");
        assert_eq!(r.tables[1].file, "02-figure-3-throughput-kb-s-per-0.csv");
        assert_eq!(
            String::from_utf8(r.tables[0].csv()).unwrap(),
            "RTT (ms),\"a, b\"\n100,\"1 / \"\"2\"\"\"\n"
        );
        assert_eq!(
            String::from_utf8(r.tables[1].csv()).unwrap(),
            "x\n1,extra\n"
        );
        assert!(r
            .markdown()
            .contains("Data: [`tables/01-figure-3-throughput-kb-s-per-0.csv`]"));
    }

    #[test]
    fn images_are_embedded_and_listed_in_order() {
        let mut r = Report::new("t");
        r.image("first", "a.svg");
        r.image("second", "b.svg");
        assert_eq!(r.images, ["a.svg", "b.svg"]);
        assert!(r.markdown().contains("![first](a.svg)"));
    }

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(
            slug("Table 1: PER heuristic at PER 0.8 %"),
            "table-1-per-heuristic-at-per-0.8"
        );
        assert_eq!(slug("—"), "table");
        assert!(slug(&"x ".repeat(100)).len() <= 60);
        assert!(!slug(&"ab ".repeat(40)).ends_with('-'));
    }

    #[test]
    fn write_puts_every_table_under_tables() {
        let dir = std::env::temp_dir().join(format!("roam-report-{}", std::process::id()));
        let mut r = Report::new("t");
        r.section("S", "x");
        r.table(&["a"], &[vec!["1".into()]]);
        r.write(&dir).unwrap();
        let csv = std::fs::read_to_string(dir.join("tables/01-s.csv")).unwrap();
        assert_eq!(csv, "a\n1\n");
        assert!(dir.join("report.md").exists() && dir.join("claims.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
