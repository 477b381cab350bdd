//! The written outcome of a reproduction: `report.md`, `claims.json`, and every table of the
//! report as a CSV file under `tables/` (for pandas and spreadsheets).

use std::fmt::Write as _;
use std::path::Path;

use crate::claims::Verdict;
use crate::stats::Estimate;
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
    /// Quick mode (fewer seeds, shorter runs, smaller transfers): the report says at its top
    /// that its numbers are a smoke test.
    pub quick: bool,
    /// Heading of the section being written (names its tables' files).
    heading: String,
}

/// The banner at the top of a quick-mode report.
pub const QUICK_BANNER: &str =
    "> **Quick mode: a smoke test, not a reproduction.** These runs use fewer \
seeds, shorter runs, fewer sweep points and smaller transfers than the paper (for example 1 MiB \
where the paper moves 5 MB), so their numbers are not comparable with the paper's, which the \
tables still show beside them. A claim whose tolerance is a confidence interval over fewer than \
5 seeds is not judged. Run without `--quick` for the reproduction.";

/// One table of a report, kept for its CSV file: one value per cell (a mean and its CI
/// half-width, or the paper's two numbers, in columns of their own), numbers at full
/// precision, missing or non-finite numbers as empty cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTable {
    /// File name under `tables/`: position in the report and the section heading, e.g.
    /// `03-figure-3-throughput-of-the-main-connection-kb-s-per-0.csv`.
    pub file: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
}

/// One column of a report table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Col {
    /// The markdown header.
    pub name: String,
    /// CSV names of the values of a [`Cell::Parts`] column (e.g. the paper's Reno and
    /// Probing times); `None` for other columns.
    pub parts: Option<Vec<String>>,
}

impl Col {
    /// A column of `a / b / …` values: markdown header `"{name} {a} / {b} / …"`, CSV columns
    /// `"{name} {a}"`, `"{name} {b}"`, ….
    pub fn parts(name: &str, parts: &[&str]) -> Col {
        Col {
            name: format!("{name} {}", parts.join(" / ")),
            parts: Some(parts.iter().map(|p| format!("{name} {p}")).collect()),
        }
    }

    /// A column of `a / b` pairs ([`Col::parts`] with two).
    pub fn pair(name: &str, a: &str, b: &str) -> Col {
        Col::parts(name, &[a, b])
    }
}

impl From<&str> for Col {
    fn from(name: &str) -> Col {
        Col {
            name: name.to_owned(),
            parts: None,
        }
    }
}

impl From<&String> for Col {
    fn from(name: &String) -> Col {
        Col::from(name.as_str())
    }
}

/// One cell of a report table: what the markdown shows, and the value(s) the CSV holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text: a label, or a value that names a row (kept as written in the CSV too).
    Text(String),
    /// A number shown with `decimals` digits (`–` when not finite).
    Num {
        /// The value.
        value: f64,
        /// Digits after the point in the markdown.
        decimals: usize,
    },
    /// A number shown as `shown` (a signed percentage, say), held as `value` in the CSV.
    Shown {
        /// The markdown text.
        shown: String,
        /// The CSV value.
        value: f64,
    },
    /// A mean over seeds with the half-width of its 95 % confidence interval: `m ± c` in the
    /// markdown (just `m` without an interval), two CSV columns (`… mean`, `… ci95`).
    Est {
        /// The mean (not a number when nothing was measured).
        mean: f64,
        /// The half-width, when there are two values or more.
        ci95: Option<f64>,
        /// Digits after the point.
        decimals: usize,
    },
    /// Several numbers shown `a / b / …`, one CSV column each (named by [`Col::parts`]).
    Parts {
        /// The values.
        values: Vec<f64>,
        /// Digits after the point; `None` prints each as short as it reads exactly (`103`,
        /// `334.9`).
        decimals: Option<usize>,
    },
}

impl Cell {
    /// A text cell.
    pub fn text(t: impl Into<String>) -> Cell {
        Cell::Text(t.into())
    }

    /// A number with `decimals` digits.
    pub fn num(value: f64, decimals: usize) -> Cell {
        Cell::Num { value, decimals }
    }

    /// A mean and its 95 % CI half-width, from an estimate.
    pub fn est(e: &Estimate, decimals: usize) -> Cell {
        Cell::Est {
            mean: e.mean.unwrap_or(f64::NAN),
            ci95: e.ci95,
            decimals,
        }
    }

    /// The estimate of `values` (non-finite ones left out), as [`Cell::est`].
    pub fn est_of(values: &[f64], decimals: usize) -> Cell {
        Cell::est(&Estimate::from_sample(values), decimals)
    }

    /// Two numbers `a / b`.
    pub fn pair(a: f64, b: f64, decimals: usize) -> Cell {
        Cell::Parts {
            values: vec![a, b],
            decimals: Some(decimals),
        }
    }

    /// Numbers `a / b / …`, each printed as short as it reads exactly.
    pub fn parts(values: &[f64]) -> Cell {
        Cell::Parts {
            values: values.to_vec(),
            decimals: None,
        }
    }

    /// A number shown as `shown`.
    pub fn shown(shown: impl Into<String>, value: f64) -> Cell {
        Cell::Shown {
            shown: shown.into(),
            value,
        }
    }

    /// The markdown text.
    pub fn markdown(&self) -> String {
        match self {
            Cell::Text(t) => t.clone(),
            Cell::Num { value, decimals } => num(*value, *decimals),
            Cell::Shown { shown, .. } => shown.clone(),
            Cell::Est {
                mean,
                ci95,
                decimals,
            } => match ci95 {
                Some(c) => format!("{} ± {}", num(*mean, *decimals), num(*c, *decimals)),
                None => num(*mean, *decimals),
            },
            Cell::Parts { values, decimals } => values
                .iter()
                .map(|v| match decimals {
                    Some(d) => num(*v, *d),
                    None if v.is_finite() => v.to_string(),
                    None => num(*v, 0),
                })
                .collect::<Vec<_>>()
                .join(" / "),
        }
    }

    /// How many CSV columns the cell takes.
    fn width(&self) -> usize {
        match self {
            Cell::Est { .. } => 2,
            Cell::Parts { values, .. } => values.len(),
            _ => 1,
        }
    }

    /// The CSV values, `width` of them.
    fn csv(&self, width: usize) -> Vec<String> {
        let n = |x: f64| {
            if x.is_finite() {
                x.to_string()
            } else {
                String::new()
            }
        };
        let mut v = match self {
            Cell::Text(t) => vec![t.clone()],
            Cell::Num { value, .. } | Cell::Shown { value, .. } => vec![n(*value)],
            Cell::Est { mean, ci95, .. } => vec![n(*mean), ci95.map(n).unwrap_or_default()],
            Cell::Parts { values, .. } => values.iter().map(|v| n(*v)).collect(),
        };
        v.resize(width, String::new());
        v
    }
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

    /// Appends a markdown table, with a link to the same table as CSV (see [`DataTable`]).
    pub fn table<C: Into<Col> + Clone>(&mut self, header: &[C], rows: &[Vec<Cell>]) {
        let cols: Vec<Col> = header.iter().cloned().map(Into::into).collect();
        let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        let _ = writeln!(self.body, "\n| {} |", names.join(" | "));
        let _ = writeln!(
            self.body,
            "|{}|",
            cols.iter().map(|_| "---").collect::<Vec<_>>().join("|")
        );
        for r in rows {
            let cells: Vec<String> = r.iter().map(Cell::markdown).collect();
            let _ = writeln!(self.body, "| {} |", cells.join(" | "));
        }
        let file = format!("{:02}-{}.csv", self.tables.len() + 1, slug(&self.heading));
        let _ = writeln!(self.body, "\nData: [`tables/{file}`](tables/{file})");
        self.tables.push(DataTable::of(file, &cols, rows));
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

    /// An empty report titled `title` for a run in `ctx`'s mode.
    pub fn for_run(title: &str, ctx: &crate::Ctx) -> Self {
        Report {
            quick: ctx.quick,
            ..Report::new(title)
        }
    }

    /// `N of M claims hold in this run`, with the failing and unjudged ones counted.
    pub fn verdict_line(&self) -> String {
        let count = |v: Verdict| self.claims.iter().filter(|c| c.verdict == v).count();
        let (held, failed, unjudged) = (
            count(Verdict::Holds),
            count(Verdict::Fails),
            count(Verdict::NotJudged),
        );
        let mut s = format!("{held} of {} claims hold", self.claims.len());
        let mut rest = Vec::new();
        if failed > 0 {
            rest.push(format!("{failed} fail"));
        }
        if unjudged > 0 {
            rest.push(format!("{unjudged} not judged"));
        }
        if !rest.is_empty() {
            s.push_str(&format!(" ({})", rest.join(", ")));
        }
        s
    }

    /// Renders the whole markdown document (claims summarised at the top).
    pub fn markdown(&self) -> String {
        let mut s = format!("# {}\n", self.title);
        if self.quick {
            let _ = writeln!(s, "\n{QUICK_BANNER}");
        }
        let _ = write!(
            s,
            "\n{} in this run.\n\n| id | claim | verdict |\n|---|---|---|\n",
            self.verdict_line()
        );
        for c in &self.claims {
            let verdict = match c.verdict {
                Verdict::Holds => "holds".to_owned(),
                Verdict::Fails => "**fails**".to_owned(),
                Verdict::NotJudged => "not judged".to_owned(),
            };
            let verdict = match &c.note {
                Some(n) => format!("{verdict} ({n})"),
                None => verdict,
            };
            let _ = writeln!(s, "| `{}` | {} | {} |", c.id, c.claim, verdict);
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

/// Adds claims in order, as [`Report::claim`] does one.
impl Extend<Claim> for Report {
    fn extend<I: IntoIterator<Item = Claim>>(&mut self, claims: I) {
        self.claims.extend(claims);
    }
}

impl DataTable {
    /// The CSV form of a report table: a column that holds an estimate or a pair anywhere is
    /// split in two.
    fn of(file: String, cols: &[Col], rows: &[Vec<Cell>]) -> DataTable {
        let widths: Vec<usize> = (0..cols.len())
            .map(|k| {
                rows.iter()
                    .filter_map(|r| r.get(k))
                    .map(Cell::width)
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let mut header = Vec::new();
        for (c, &w) in cols.iter().zip(&widths) {
            match (w, &c.parts) {
                (_, Some(parts)) if parts.len() == w => header.extend(parts.iter().cloned()),
                (1, _) => header.push(c.name.clone()),
                (2, None) => {
                    header.push(format!("{} mean", c.name));
                    header.push(format!("{} ci95", c.name));
                }
                _ => header.extend((1..=w).map(|k| format!("{} {k}", c.name))),
            }
        }
        let rows = rows
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .flat_map(|(k, cell)| cell.csv(widths.get(k).copied().unwrap_or(1)))
                    .collect()
            })
            .collect();
        DataTable { file, header, rows }
    }

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
            &[vec![Cell::text("100"), Cell::text("\"2\"")]],
        );
        r.section("Figure 3: throughput (kb/s), PER 0", "again");
        r.table(&["x"], &[vec![Cell::num(1.0, 0), Cell::text("extra")]]);
        assert_eq!(r.tables[0].file, "01-figure-3-throughput-kb-s-per-0.csv");
        assert_eq!(r.tables[1].file, "02-figure-3-throughput-kb-s-per-0.csv");
        assert_eq!(
            String::from_utf8(r.tables[0].csv()).unwrap(),
            "RTT (ms),\"a, b\"\n100,\"\"\"2\"\"\"\n"
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
    fn estimates_and_pairs_show_together_and_load_as_separate_numbers() {
        let mut r = Report::new("t");
        r.section("Table A1", "");
        let e = Estimate::from_sample(&[8.0, 9.0]);
        r.table(
            &[
                Col::from("PER %"),
                Col::from("NewReno time"),
                Col::pair("paper time", "Reno", "Probing"),
                Col::from("gain"),
            ],
            &[
                vec![
                    Cell::num(8.0, 0),
                    Cell::est(&e, 1),
                    Cell::pair(41.6, 37.7, 1),
                    Cell::shown("+3 %", 0.0312),
                ],
                vec![
                    Cell::num(16.0, 0),
                    Cell::est_of(&[2.0], 1),
                    Cell::pair(49.9, f64::NAN, 1),
                    Cell::shown("–", f64::NAN),
                ],
            ],
        );
        let md = r.markdown();
        assert!(md.contains("| PER % | NewReno time | paper time Reno / Probing | gain |"));
        assert!(
            md.contains("| 8 | 8.5 ± 6.4 | 41.6 / 37.7 | +3 % |"),
            "{md}"
        );
        assert!(md.contains("| 16 | 2.0 | 49.9 / – | – |"), "{md}");
        assert_eq!(
            String::from_utf8(r.tables[0].csv()).unwrap(),
            "PER %,NewReno time mean,NewReno time ci95,paper time Reno,paper time Probing,gain\n\
             8,8.5,6.353102368,41.6,37.7,0.0312\n\
             16,2,,49.9,,\n"
        );
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
        r.table(&["a"], &[vec![Cell::text("1")]]);
        r.write(&dir).unwrap();
        let csv = std::fs::read_to_string(dir.join("tables/01-s.csv")).unwrap();
        assert_eq!(csv, "a\n1\n");
        assert!(dir.join("report.md").exists() && dir.join("claims.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
