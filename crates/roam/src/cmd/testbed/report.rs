//! The test bed's outputs: the summary table beside the ideal, runs.csv, series.csv and
//! summary.json per case, and claims.json with the goals judged.

use std::path::Path;

use serde_json::json;

use super::modes::RunOut;
use super::Case;
use crate::error::{CliError, Result};

/// The best verified single-path goodput of path `k`, in Mb/s.
fn best_single(runs: &[RunOut], k: usize) -> Option<f64> {
    runs.iter()
        .filter(|r| r.ok && r.mode.single_path() == Some(k))
        .map(|r| r.goodput_mbps)
        .reduce(f64::max)
}

/// The ideal: the best single-path runs of each path added.
fn ideal(runs: &[RunOut]) -> Option<f64> {
    Some(best_single(runs, 0)? + best_single(runs, 1)?)
}

fn goodput(runs: &[RunOut], name: &str) -> Option<f64> {
    runs.iter()
        .find(|r| r.ok && r.mode.name() == name)
        .map(|r| r.goodput_mbps)
}

/// roam's best multipath run.
fn best_roam_multipath(runs: &[RunOut]) -> Option<&RunOut> {
    runs.iter()
        .filter(|r| r.ok && r.mode.roam_multipath())
        .max_by(|a, b| a.goodput_mbps.total_cmp(&b.goodput_mbps))
}

/// Prints the summary table.
pub fn print_case(case: &Case, runs: &[RunOut]) {
    let ideal = ideal(runs);
    println!(
        "{} ({} bytes, {}): ideal {}",
        case.name,
        case.size,
        case.kind,
        ideal.map_or("n/a".into(), |i| format!("{i:.3} Mb/s"))
    );
    println!(
        "  {:<14} {:>10} {:>9} {:>9} {:>10}  note",
        "mode", "Mb/s", "seconds", "of ideal", "sim Mb/s"
    );
    for r in runs {
        let share = match (r.ok, ideal) {
            (true, Some(i)) if i > 0.0 => format!("{:.1} %", 100.0 * r.goodput_mbps / i),
            _ => "-".into(),
        };
        println!(
            "  {:<14} {:>10} {:>9.1} {:>9} {:>10}  {}",
            r.mode.name(),
            if r.ok {
                format!("{:.3}", r.goodput_mbps)
            } else {
                "-".into()
            },
            r.seconds,
            share,
            r.sim_mbps.map_or("-".into(), |g| format!("{g:.3}")),
            r.note
        );
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).map_err(|e| CliError::write(p, e))?;
    }
    std::fs::write(path, text).map_err(|e| CliError::write(path, e))
}

/// Writes runs.csv, series.csv and summary.json of one case.
pub fn write_case(out: &Path, case: &Case, runs: &[RunOut]) -> Result<()> {
    let dir = out.join(&case.name);
    let mut csv = String::from("case,mode,ok,seconds,goodput_mbps,sim_goodput_mbps,note\n");
    let mut series = String::from("case,mode,second,path,bytes\n");
    for r in runs {
        csv.push_str(&format!(
            "{},{},{},{:.6},{:.6},{},{:?}\n",
            case.name,
            r.mode.name(),
            r.ok,
            r.seconds,
            r.goodput_mbps,
            r.sim_mbps.map_or(String::new(), |g| format!("{g:.6}")),
            r.note
        ));
        for (k, bins) in r.per_second.iter().enumerate() {
            for (sec, b) in bins.iter().enumerate() {
                series.push_str(&format!(
                    "{},{},{sec},{},{b}\n",
                    case.name,
                    r.mode.name(),
                    (b'a' + k as u8) as char
                ));
            }
        }
    }
    write(&dir.join("runs.csv"), &csv)?;
    write(&dir.join("series.csv"), &series)?;
    let summary = json!({
        "case": case.name,
        "file": case.file.display().to_string(),
        "bytes": case.size,
        "kind": case.kind,
        "ideal_mbps": ideal(runs),
        "runs": runs.iter().map(|r| json!({
            "mode": r.mode.name(),
            "ok": r.ok,
            "seconds": r.seconds,
            "goodput_mbps": r.goodput_mbps,
            "sim_goodput_mbps": r.sim_mbps,
            "note": r.note,
            "bytes_per_second": r.per_second,
        })).collect::<Vec<_>>(),
    });
    write(
        &dir.join("summary.json"),
        &serde_json::to_string_pretty(&summary).unwrap_or_default(),
    )
}

/// One goal: `value` ≥ `target` (both Mb/s or shares), or not judged when either is missing.
fn claim(case: &str, goal: &str, value: Option<f64>, target: Option<f64>) -> serde_json::Value {
    let pass = match (value, target) {
        (Some(v), Some(t)) => json!(v >= t),
        _ => json!("not judged"),
    };
    json!({ "case": case, "goal": goal, "value": value, "target": target, "pass": pass })
}

/// The goals of issue 29, item 6, for every case.
fn claims_of(case: &Case, runs: &[RunOut]) -> Vec<serde_json::Value> {
    let n = case.name.as_str();
    let best = best_roam_multipath(runs);
    let b = best.map(|r| r.goodput_mbps);
    let mut v = vec![
        claim(
            n,
            "roam's best multipath >= Linux MPTCP",
            b,
            goodput(runs, "mptcp"),
        ),
        claim(
            n,
            "roam's best multipath >= aria2 from two mirrors",
            b,
            goodput(runs, "aria2"),
        ),
        claim(
            n,
            "roam's best multipath >= the best single path",
            b,
            best_single(runs, 0)
                .into_iter()
                .chain(best_single(runs, 1))
                .reduce(f64::max),
        ),
    ];
    if case.kind != "blackout" {
        v.push(claim(
            n,
            "roam's best multipath >= 95 % of the ideal",
            b,
            ideal(runs).map(|i| 0.95 * i),
        ));
    }
    for r in runs.iter().filter(|r| r.ok) {
        if let Some(sim) = r.sim_mbps {
            // |emulated / simulated - 1| <= 10 %, as 0.1 - |ratio - 1| >= 0.
            v.push(claim(
                n,
                &format!("{}: emulated goodput within 10 % of the simulator's (0.1 - |emu/sim - 1| >= 0)", r.mode.name()),
                Some(0.1 - (r.goodput_mbps / sim - 1.0).abs()),
                Some(0.0),
            ));
        }
    }
    if let (Some((_, end)), Some(r)) = (case.blackout, best) {
        // Every whole second of the run delivered something, over either path.
        let secs = r.seconds.floor() as usize;
        let empty = (0..secs)
            .filter(|&s| {
                r.per_second
                    .iter()
                    .map(|p| p.get(s).copied().unwrap_or(0))
                    .sum::<u64>()
                    == 0
            })
            .count();
        v.push(claim(
            n,
            "no second without delivery (count of empty seconds <= 0)",
            Some(-(empty as f64)),
            Some(0.0),
        ));
        // Path A back in use: the first second from the blackout's end with delivery on A.
        let a = r.per_second.first().cloned().unwrap_or_default();
        let back = (end.ceil() as usize..a.len()).find(|&s| a[s] > 0);
        let delay = back.map(|s| s as f64 - end);
        v.push(claim(
            n,
            "primary back in use <= 1 s after it returns (1 - delay >= 0)",
            delay.map(|d| 1.0 - d),
            Some(0.0),
        ));
    }
    v
}

/// Writes claims.json over every case run.
pub fn write_claims(out: &Path, all: &[(&Case, Vec<RunOut>)]) -> Result<()> {
    let claims: Vec<_> = all.iter().flat_map(|(c, r)| claims_of(c, r)).collect();
    write(
        &out.join("claims.json"),
        &serde_json::to_string_pretty(&json!({ "claims": claims })).unwrap_or_default(),
    )
}
