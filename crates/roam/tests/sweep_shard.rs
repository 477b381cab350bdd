//! `roam sweep --shard I/N` + `roam sweep merge`: the merged files are byte for byte the ones a
//! single `roam sweep` writes (tables and plots), whatever the number of shards; a missing, a
//! repeated or a foreign shard is refused with a message.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::ROAM;

fn roam(dir: &Path, args: &[&str]) -> Output {
    Command::new(ROAM)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run roam")
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn scenario() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/examples/mixed-transports.toml")
        .display()
        .to_string()
}

/// Every file of `dir`, by name, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

// Short runs; one flow small enough to complete (so there is a completion plot too).
const SWEEP: [&str; 12] = [
    "--set",
    "run.duration=4s",
    "--set",
    "flow.stp.size=100KB",
    "--param",
    "link.hop.forward.loss=0,0.01,0.03",
    "--param",
    "flow.tcp.cc=newreno,westwood",
    "--seeds",
    "3",
    "--title",
    "Sharded",
];

fn sweep(dir: &Path, extra: &[&str]) -> Output {
    let file = scenario();
    let mut args = vec!["sweep", file.as_str()];
    args.extend(SWEEP);
    args.extend(extra);
    args.push("-q");
    roam(dir, &args)
}

#[test]
fn merged_shards_are_byte_identical_to_one_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&sweep(dir, &["--out", "whole"]));
    let whole = files(&dir.join("whole"));
    assert_eq!(
        whole.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "completion.svg",
            "flows.csv",
            "goodput.svg",
            "runs.csv",
            "sweep.csv",
            "sweep_flows.csv"
        ]
    );
    // 18 runs over 1, 4 and 25 shards (more shards than runs: some are empty); the shards of
    // one sweep written to two folders, merged from both.
    for n in [1u32, 4, 25] {
        let parts = [format!("p{n}a"), format!("p{n}b")];
        for p in &parts {
            std::fs::create_dir_all(dir.join(p)).unwrap();
        }
        for i in 1..=n {
            let shard = format!("{i}/{n}");
            let out = &parts[(i % 2) as usize];
            ok(&sweep(dir, &["--shard", &shard, "--out", out]));
        }
        let merged = format!("merged{n}");
        ok(&roam(
            dir,
            &["sweep", "merge", &parts[0], &parts[1], "--out", &merged],
        ));
        assert_eq!(files(&dir.join(&merged)), whole, "{n} shards");
    }
}

#[test]
fn merge_refuses_missing_repeated_and_foreign_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&sweep(dir, &["--shard", "1/3", "--out", "a"]));
    ok(&sweep(dir, &["--shard", "3/3", "--out", "a"]));
    let o = roam(dir, &["sweep", "merge", "a", "--out", "m"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("missing shard(s) 2/3 (2 of 3 found)"), "{err}");

    std::fs::create_dir(dir.join("b")).unwrap();
    std::fs::copy(
        dir.join("a/shard-1-of-3.jsonl"),
        dir.join("b/shard-1-of-3.jsonl"),
    )
    .unwrap();
    let o = roam(dir, &["sweep", "merge", "a", "b"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shard 1/3 given twice"), "{err}");

    // Another seed count: another sweep.
    let file = scenario();
    let mut args = vec!["sweep", file.as_str()];
    args.extend(&SWEEP[..8]);
    args.extend(["--seeds", "2", "--shard", "2/3", "--out", "c", "-q"]);
    ok(&roam(dir, &args));
    let o = roam(dir, &["sweep", "merge", "a", "c"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("a shard of another sweep"), "{err}");

    // Crafted headers are refused, not trusted: shard 0, and a seed count no list can hold.
    let good = std::fs::read_to_string(dir.join("a/shard-1-of-3.jsonl")).unwrap();
    for (from, to, says) in [
        ("\"shard\":1,", "\"shard\":0,", "shard 0/3"),
        (
            "\"seeds\":3}",
            "\"seeds\":1000000000000}",
            "seeds: 1000000000000",
        ),
    ] {
        assert!(good.contains(from), "{from} in {good}");
        let d = dir.join("crafted");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("shard-1-of-3.jsonl"), good.replacen(from, to, 1)).unwrap();
        let o = roam(dir, &["sweep", "merge", "crafted"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }

    std::fs::write(dir.join("c/shard-9-of-9.jsonl"), "{}\n").unwrap();
    let o = roam(dir, &["sweep", "merge", "c"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a shard file"), "{err}");
    let o = roam(dir, &["sweep", "merge", "nowhere"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read nowhere"));
    for bad in ["0/3", "4/3", "x", "1/0"] {
        let o = sweep(dir, &["--shard", bad]);
        assert!(!o.status.success(), "--shard {bad}");
    }
}
