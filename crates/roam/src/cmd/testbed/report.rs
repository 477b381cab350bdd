//! The test bed's outputs: the summary table beside the ideal, runs.csv, series.csv and
//! summary.json per case, and claims.json with the goals judged.

use std::path::Path;

use serde_json::json;

use super::modes::{Mode, RunOut};
use super::Case;
use crate::error::{CliError, Result};

/// The best verified single-path goodput of path `k`, in Mb/s.
fn best_single(runs: &[RunOut], k: usize) -> Option<f64> {
    runs.iter()
        .filter(|r| r.ok && r.mode.single_path() == Some(k))
        .map(|r| r.goodput_mbps)
        .reduce(f64::max)
}

/// The ideal: the best single-path runs of each path added. On a trace the paths' capacity
/// changes with time, and a run over the slower path alone lasts longer than the multipath
/// run it is compared with (the T-Mobile UMTS trace alone: minutes; both paths: seconds), so
/// adding whole-run goodputs mixed different stretches of the traces. For `trace` cases the
/// ideal is taken over roam's best multipath run's duration `T` instead: each single-path
/// run counts what it delivered within the first `T` seconds of its (freshly started) trace
/// ([`delivered_within`]), or its whole-run goodput if it finished within `T`.
pub fn ideal(case: &Case, runs: &[RunOut]) -> Option<f64> {
    let window = match case.kind.as_str() {
        "trace" => best_roam_multipath(runs).map(|r| r.seconds),
        _ => None,
    };
    let Some(t) = window.filter(|t| *t > 0.0) else {
        return Some(best_single(runs, 0)? + best_single(runs, 1)?);
    };
    let best_within = |k: usize| {
        runs.iter()
            .filter(|r| r.ok && r.mode.single_path() == Some(k))
            .map(|r| {
                if r.seconds <= t {
                    r.goodput_mbps
                } else {
                    delivered_within(r, case.size, t) * 8.0 / t / 1e6
                }
            })
            .reduce(f64::max)
    };
    Some(best_within(0)? + best_within(1)?)
}

/// Bytes of the object `run` delivered within its first `t` seconds: the wire's bytes in
/// those seconds (the last one pro rata), scaled by the run's payload over everything it put
/// on the wire (headers and retransmissions). The wire's seconds count from the emulation's
/// start, a little before the client's.
fn delivered_within(run: &RunOut, size: u64, t: f64) -> f64 {
    let per_second: Vec<u64> = (0..run.per_second.iter().map(Vec::len).max().unwrap_or(0))
        .map(|s| {
            run.per_second
                .iter()
                .map(|p| p.get(s).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    let wire: u64 = per_second.iter().sum();
    if wire == 0 {
        return 0.0;
    }
    let whole = t.floor() as usize;
    let within = per_second.iter().take(whole).sum::<u64>() as f64
        + per_second.get(whole).copied().unwrap_or(0) as f64 * t.fract();
    within * (size as f64 / wire as f64).min(1.0)
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
    let ideal = ideal(case, runs);
    println!(
        "{} ({} bytes, {}): ideal {}",
        case.name,
        case.size,
        case.kind,
        ideal.map_or("n/a".into(), |i| format!("{i:.3} Mb/s"))
    );
    println!(
        "  {:<14} {:>10} {:>9} {:>9} {:>10} {:>8}  note",
        "mode", "Mb/s", "seconds", "of ideal", "sim Mb/s", "emu/sim"
    );
    for r in runs {
        let share = match (r.ok, ideal) {
            (true, Some(i)) if i > 0.0 => format!("{:.1} %", 100.0 * r.goodput_mbps / i),
            _ => "-".into(),
        };
        let ratio = match (r.ok, r.sim_mbps) {
            (true, Some(g)) if g > 0.0 => format!("{:+.1} %", 100.0 * (r.goodput_mbps / g - 1.0)),
            _ => "-".into(),
        };
        let note = if r.sim_note.is_empty() {
            r.note.clone()
        } else {
            format!("{} (simulator: {})", r.note, r.sim_note)
        };
        println!(
            "  {:<14} {:>10} {:>9.1} {:>9} {:>10} {:>8}  {}",
            r.mode.name(),
            if r.ok {
                format!("{:.3}", r.goodput_mbps)
            } else {
                "-".into()
            },
            r.seconds,
            share,
            r.sim_mbps.map_or("-".into(), |g| format!("{g:.3}")),
            ratio,
            note.trim()
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
    let mut csv =
        String::from("case,mode,ok,seconds,goodput_mbps,sim_goodput_mbps,note,sim_note\n");
    let mut series = String::from("case,mode,second,path,bytes\n");
    let mut sim_series = String::from("case,mode,second,goodput_mbps\n");
    for r in runs {
        csv.push_str(&format!(
            "{},{},{},{:.6},{:.6},{},{:?},{:?}\n",
            case.name,
            r.mode.name(),
            r.ok,
            r.seconds,
            r.goodput_mbps,
            r.sim_mbps.map_or(String::new(), |g| format!("{g:.6}")),
            r.note,
            r.sim_note
        ));
        for (sec, g) in r.sim_per_second.iter().enumerate() {
            sim_series.push_str(&format!("{},{},{sec},{g:.6}\n", case.name, r.mode.name()));
        }
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
    write(&dir.join("sim_series.csv"), &sim_series)?;
    let summary = json!({
        "case": case.name,
        "file": case.file.display().to_string(),
        "bytes": case.size,
        "kind": case.kind,
        "ideal_mbps": ideal(case, runs),
        "runs": runs.iter().map(|r| json!({
            "mode": r.mode.name(),
            "ok": r.ok,
            "seconds": r.seconds,
            "goodput_mbps": r.goodput_mbps,
            "sim_goodput_mbps": r.sim_mbps,
            "sim_note": r.sim_note,
            "sim_goodput_per_second_mbps": r.sim_per_second,
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

/// A single-path case (issue 30, item 5: the lossy grid on the wire): roam's best
/// oracle-free configuration (`roam get`, with the facts it estimates itself, and `roam get
/// --cc rate`) reaches 90 % of kernel BBR's goodput on the same emulated path in the same run;
/// and each one's emulated goodput is the simulator's within 10 %.
fn single_path_claims(case: &Case, runs: &[RunOut]) -> Vec<serde_json::Value> {
    let n = case.name.as_str();
    let best = ["roam-a", "roam-rate-a"]
        .iter()
        .filter_map(|m| goodput(runs, m))
        .reduce(f64::max);
    let mut v = vec![claim(
        n,
        "roam's best single-path engine (roam get, --cc rate) >= 90 % of Linux TCP with BBR",
        best,
        goodput(runs, "tcp-bbr-a").map(|g| 0.9 * g),
    )];
    v.extend(
        runs.iter()
            .filter(|r| is_roam(r) && !r.note.starts_with("skipped"))
            .map(|r| sim_claim(n, r)),
    );
    v
}

/// Whether the run is one of roam's engines (simulated beside the emulator).
fn is_roam(r: &RunOut) -> bool {
    matches!(r.mode, Mode::Roam(_) | Mode::RoamRate(_)) || r.mode.roam_multipath()
}

/// Issue 29, item 5: the emulated goodput within ±10 % of the simulator's on the same links,
/// judged as `0.1 - |emu/sim - 1| >= 0`. A download that failed on the wire counts as 0 Mb/s
/// (so it fails the claim when the simulator completed); a simulation that did not complete
/// leaves the claim not judged, with the reason.
fn sim_claim(case: &str, r: &RunOut) -> serde_json::Value {
    let emu = if r.ok { r.goodput_mbps } else { 0.0 };
    let value = r.sim_mbps.map(|sim| 0.1 - (emu / sim - 1.0).abs());
    let mut c = claim(
        case,
        &format!(
            "{}: emulated goodput within 10 % of the simulator's (0.1 - |emu/sim - 1| >= 0)",
            r.mode.name()
        ),
        value,
        Some(0.0),
    );
    c["emulated_mbps"] = json!(emu);
    c["simulated_mbps"] = json!(r.sim_mbps);
    if !r.ok {
        c["note"] = json!(format!("the emulated download failed: {}", r.note));
    } else if r.sim_mbps.is_none() {
        c["note"] = json!(r.sim_note);
    }
    c
}

/// The goals of issue 29, items 5 and 6, for every case.
fn claims_of(case: &Case, runs: &[RunOut]) -> Vec<serde_json::Value> {
    let n = case.name.as_str();
    if case.paths == 1 {
        return single_path_claims(case, runs);
    }
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
            ideal(case, runs).map(|i| 0.95 * i),
        ));
    }
    for r in runs
        .iter()
        .filter(|r| is_roam(r) && !r.note.starts_with("skipped"))
    {
        v.push(sim_claim(n, r));
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

/// Writes claims.json: the claims of the cases just run, after those of other cases an
/// earlier run left in the same file (so cases run one at a time into one folder add up; a
/// case run again replaces its own claims). A file that is not a claims file is replaced.
pub fn write_claims(out: &Path, all: &[(&Case, Vec<RunOut>)]) -> Result<()> {
    let path = out.join("claims.json");
    let ran: Vec<&str> = all.iter().map(|(c, _)| c.name.as_str()).collect();
    let mut claims: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("claims").and_then(|c| c.as_array()).cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| {
            c.get("case")
                .and_then(|n| n.as_str())
                .is_some_and(|n| !ran.contains(&n))
        })
        .collect();
    claims.extend(all.iter().flat_map(|(c, r)| claims_of(c, r)));
    write(
        &path,
        &serde_json::to_string_pretty(&json!({ "claims": claims })).unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(dir: &Path, name: &str) -> Case {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!(
                "[testbed]\nname = \"{name}\"\nsize = \"1MB\"\n[[link]]\nname = \"a\"\n\
                 rate = \"8Mbps\"\n[[link]]\nname = \"b\"\nrate = \"2Mbps\"\n"
            ),
        )
        .unwrap();
        super::super::load_case(&file, false).unwrap()
    }

    fn run(mode: Mode, ok: bool, g: f64, sim: Option<f64>) -> RunOut {
        RunOut {
            mode,
            ok,
            seconds: 1.0,
            goodput_mbps: g,
            note: if ok {
                String::new()
            } else {
                "timed out".into()
            },
            per_second: Vec::new(),
            sim_mbps: sim,
            sim_per_second: Vec::new(),
            sim_note: String::new(),
        }
    }

    #[test]
    fn on_a_trace_the_ideal_counts_what_each_path_delivered_within_the_multipath_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = case(dir.path(), "t");
        c.size = 1_000_000;
        // Path A alone: 1 MB in 1 s (8 Mb/s). Path B alone: 10 s for 1 MB, fast at first
        // (500 kB in its first second, on the wire) then slow; whole-run goodput 0.8 Mb/s.
        let a = run(Mode::Tcp("cubic", 0), true, 8.0, None);
        let mut b = run(Mode::Tcp("cubic", 1), true, 0.8, None);
        b.seconds = 10.0;
        b.per_second = vec![
            vec![0; 10],
            vec![500_000; 1]
                .into_iter()
                .chain(vec![55_555; 9])
                .collect(),
        ];
        // roam over both: 2 s.
        let mut m = run(Mode::R2cpInterfaces, true, 4.0, None);
        m.seconds = 2.0;
        let runs = vec![a, b, m];
        c.kind = "static".into();
        assert_eq!(ideal(&c, &runs), Some(8.8), "whole runs added");
        c.kind = "trace".into();
        // B within the first 2 s: (500 000 + 55 555) of 999 995 wire bytes, scaled to the
        // payload: 555 558 bytes in 2 s = 2.22 Mb/s; A finished within 2 s: 8 Mb/s.
        let i = ideal(&c, &runs).unwrap();
        assert!(
            (i - (8.0 + 555_558.0 * 8.0 / 2.0 / 1e6)).abs() < 1e-3,
            "{i}"
        );
    }

    #[test]
    fn a_single_path_case_judges_roam_against_kernel_bbr_and_the_simulator() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = case(dir.path(), "one");
        c.paths = 1;
        let runs = vec![
            run(Mode::Tcp("bbr", 0), true, 1.8, None),
            run(Mode::Tcp("cubic", 0), true, 0.6, None),
            run(Mode::Roam(0), true, 1.7, Some(1.75)),
        ];
        let v = claims_of(&c, &runs);
        assert_eq!(v.len(), 2, "{v:?}");
        assert_eq!(v[0]["pass"], json!(true), "1.7 >= 0.9 * 1.8");
        assert_eq!(v[1]["pass"], json!(true), "within 10 % of the simulator");
        assert_eq!(ideal(&c, &runs), None);
        let slow = vec![
            run(Mode::Tcp("bbr", 0), true, 1.8, None),
            run(Mode::Roam(0), true, 1.5, None),
        ];
        assert_eq!(claims_of(&c, &slow)[0]["pass"], json!(false));
        assert_eq!(
            Mode::all(false, 1)
                .iter()
                .map(Mode::name)
                .collect::<Vec<_>>(),
            [
                "tcp-reno-a",
                "tcp-cubic-a",
                "tcp-bbr-a",
                "roam-a",
                "roam-rate-a"
            ]
        );
    }

    fn sim_verdicts(claims: &[serde_json::Value]) -> Vec<(String, serde_json::Value)> {
        claims
            .iter()
            .filter(|c| c.get("simulated_mbps").is_some())
            .map(|c| (c["goal"].as_str().unwrap().to_string(), c["pass"].clone()))
            .collect()
    }

    #[test]
    fn every_roam_mode_is_judged_against_the_simulator_and_a_failed_download_fails() {
        let dir = tempfile::tempdir().unwrap();
        let c = case(dir.path(), "x");
        let runs = vec![
            run(Mode::Tcp("cubic", 0), true, 7.0, None),
            run(Mode::Roam(0), true, 7.4, Some(7.0)), // +5.7 %
            run(Mode::Roam(1), false, 0.0, Some(1.8)), // failed on the wire
            run(Mode::R2cpInterfaces, true, 9.0, Some(7.6)), // +18 %
            run(Mode::R2cpMirrors, true, 9.0, None),  // the simulation did not end
        ];
        let v = sim_verdicts(&claims_of(&c, &runs));
        let pass: Vec<serde_json::Value> = v.iter().map(|(_, p)| p.clone()).collect();
        assert_eq!(
            pass,
            vec![json!(true), json!(false), json!(false), json!("not judged")],
            "{v:?}"
        );
        assert!(v[0].0.starts_with("roam-a:") && v[3].0.starts_with("r2cp-2mirror:"));
    }

    #[test]
    fn claims_of_cases_run_one_at_a_time_add_up_and_a_rerun_replaces_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (x, y) = (case(dir.path(), "x"), case(dir.path(), "y"));
        let runs = vec![run(Mode::Roam(0), true, 7.0, Some(7.0))];
        let read = || -> Vec<String> {
            let t = std::fs::read_to_string(dir.path().join("claims.json")).unwrap();
            let v: serde_json::Value = serde_json::from_str(&t).unwrap();
            v["claims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["case"].as_str().unwrap().to_string())
                .collect()
        };
        write_claims(dir.path(), &[(&x, runs.clone())]).unwrap();
        let one = read().len();
        write_claims(dir.path(), &[(&y, runs.clone())]).unwrap();
        write_claims(dir.path(), &[(&x, runs)]).unwrap();
        let cases = read();
        assert_eq!(cases.len(), 2 * one);
        assert_eq!(cases.iter().filter(|c| *c == "x").count(), one);
        std::fs::write(dir.path().join("claims.json"), "not json").unwrap();
        write_claims(dir.path(), &[(&y, Vec::new())]).unwrap();
        assert!(read().iter().all(|c| c == "y"));
    }
}
