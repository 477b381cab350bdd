//! `roam sweep --shard I/N` and `roam sweep merge DIR...`: a sweep split over the tasks of a
//! batch scheduler (a SLURM job array), joined afterwards into the very files one `roam sweep`
//! writes.
//!
//! Shard I of N runs every N-th job of the sweep's list (grid point × seed, in grid order then
//! seed order), from job I−1 on: the partition is fixed by the list, and neighbouring grid
//! points (which often cost alike) spread over the shards. A shard writes
//! `shard-I-of-N.jsonl`: one header line (the sweep's spec, the plot labels, I and N), then one
//! run record per line. Merging checks that the files are the N shards of one sweep, each once,
//! and that every job is there exactly once, then writes the tables and plots from the records
//! with the same code as a single sweep (the numbers travel as exact text: byte-identical).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::SweepSpec;
use super::record::{RunRecord, SweepOutcome};
use super::{terminal_table, write_outputs};
use crate::cli::SweepMergeArgs;
use crate::cmd::{default_out, note, print};
use crate::error::{CliError, Result};
use crate::output::{self, sweep_plot::PlotLabels};

/// What a shard file's first line says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// Always [`FORMAT`].
    pub format: String,
    /// This shard (1-based).
    pub shard: u64,
    /// The number of shards.
    pub of: u64,
    /// The sweep.
    pub spec: SweepSpec,
    /// `--title`.
    pub title: Option<String>,
    /// `--xlabel`.
    pub xlabel: Option<String>,
    /// `--label KEY=TEXT`, in order.
    pub labels: Vec<(String, String)>,
}

/// Most shards of one sweep.
pub const MAX_SHARDS: u64 = 1_000_000;

/// The format tag (and version) of shard files.
pub const FORMAT: &str = "roam-sweep-shard/1";

/// Whether job `index` belongs to shard `shard` of `of`.
pub fn in_shard(index: usize, shard: u64, of: u64) -> bool {
    index as u64 % of == shard - 1
}

/// The file name of shard `shard` of `of`.
pub fn file_name(shard: u64, of: u64) -> String {
    format!("shard-{shard}-of-{of}.jsonl")
}

impl ShardHeader {
    /// The plot labels it carries.
    pub fn plot_labels(&self) -> PlotLabels {
        PlotLabels {
            title: self.title.clone(),
            xlabel: self.xlabel.clone(),
            names: self.labels.clone(),
        }
    }
}

/// Writes a shard's file: the header, then the records (in job order).
pub fn write(path: &Path, header: &ShardHeader, records: &[RunRecord]) -> Result<()> {
    // Strings, integers and numbers as strings only: serialisation cannot fail.
    let mut text = serde_json::to_string(header).unwrap_or_default();
    text.push('\n');
    for r in records {
        text.push_str(&r.to_line());
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| CliError::write(path, e))
}

/// Reads a shard file.
fn read(path: &Path) -> Result<(ShardHeader, Vec<RunRecord>)> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let header: ShardHeader = serde_json::from_str(first)
        .ok()
        .filter(|h: &ShardHeader| h.format == FORMAT)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{}: not a shard file of roam sweep --shard ({FORMAT})",
                path.display()
            ))
        })?;
    if !(1..=header.of).contains(&header.shard) || header.of > MAX_SHARDS {
        return Err(CliError::Usage(format!(
            "{}: shard {}/{} (need 1 ≤ I ≤ N ≤ {MAX_SHARDS})",
            path.display(),
            header.shard,
            header.of
        )));
    }
    header.spec.check_size()?;
    let records = lines
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| RunRecord::from_line(l, &format!("{}:{}", path.display(), i + 2)))
        .collect::<Result<Vec<_>>>()?;
    Ok((header, records))
}

/// The shard files in `dirs` (`shard-*-of-*.jsonl`), in name order per folder.
fn shard_files(dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|source| CliError::ReadFile {
            path: dir.clone(),
            source,
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("shard-") && n.contains("-of-") && n.ends_with(".jsonl")
                })
            })
            .collect();
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// Runs `roam sweep merge`.
pub fn merge(args: &SweepMergeArgs) -> Result<()> {
    let files = shard_files(&args.dirs)?;
    let Some(first) = files.first() else {
        return Err(CliError::Usage(format!(
            "no shard-I-of-N.jsonl file in {}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let (header, mut records) = read(first)?;
    let mut seen: Vec<Option<PathBuf>> = vec![None; usize::try_from(header.of).unwrap_or(0)];
    let mut mark = |h: &ShardHeader, path: &Path| -> Result<()> {
        let slot = h
            .shard
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| seen.get_mut(i))
            .ok_or_else(|| {
                CliError::Usage(format!("{}: shard {}/{}", path.display(), h.shard, h.of))
            })?;
        if let Some(other) = slot.replace(path.to_owned()) {
            return Err(CliError::Usage(format!(
                "shard {}/{} given twice: {} and {}",
                h.shard,
                h.of,
                other.display(),
                path.display()
            )));
        }
        Ok(())
    };
    mark(&header, first)?;
    for path in &files[1..] {
        let (h, r) = read(path)?;
        let same = ShardHeader {
            shard: header.shard,
            ..h.clone()
        };
        if same != header {
            return Err(CliError::Usage(format!(
                "{} is a shard of another sweep than {} (scenario, overrides, grid, seeds, \
                 labels or shard count differ)",
                path.display(),
                first.display()
            )));
        }
        mark(&h, path)?;
        records.extend(r);
    }
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(i, _)| format!("{}/{}", i + 1, header.of))
        .collect();
    if !missing.is_empty() {
        return Err(CliError::Usage(format!(
            "missing shard(s) {} ({} of {} found)",
            missing.join(", "),
            header.of as usize - missing.len(),
            header.of
        )));
    }
    let png = output::png_writer(args.png)?;
    let outcome = SweepOutcome::assemble(&header.spec, records)?;
    for w in &outcome.warnings {
        note(&format!("warning: {w}"));
    }
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| default_out("sweep-", &outcome.name));
    let summaries = write_outputs(&out_dir, &outcome, &header.plot_labels(), png.as_ref())?;
    print(&terminal_table(
        &outcome.params,
        &outcome.points,
        &summaries,
    ))?;
    note(&format!(
        "{} runs ({} grid points × {} seeds) from {} shards; files in {}",
        outcome.runs.len(),
        outcome.points.len(),
        header.spec.seeds,
        header.of,
        out_dir.display()
    ));
    Ok(())
}
