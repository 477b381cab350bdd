//! End-to-end tests of the `roam` binary on a tiny scenario written to a temporary folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Two hosts and a router; one sized TCP flow that completes and one bulk flow; 2 simulated s.
const TINY: &str = r#"
name = "tiny"

[run]
duration = "2s"
seed = 1
sample_interval = "100ms"

[[node]]
name = "server"

[[node]]
name = "router"
kind = "router"

[[node]]
name = "mobile"

[[link]]
name = "access"
a = "server"
b = "router"
rate = "100Mbps"
delay = "1ms"

[[link]]
name = "wireless"
a = "router"
b = "mobile"
rate = "5Mbps"
delay = "20ms"
queue = 50

[link.forward]
loss = 0.01

[[flow]]
id = "sized"
protocol = "tcp"
from = "server"
to = "mobile"
size = "100kB"

[[flow]]
id = "bulk"
protocol = "tcp"
from = "server"
to = "mobile"
start = "0.1s"
"#;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("tiny.toml"), TINY).expect("write scenario");
        Fixture { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Runs `roam` with `args` in the fixture's folder.
    fn roam(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_roam"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("run roam")
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_ok(o: &Output) {
    assert!(o.status.success(), "roam failed: {}", stderr(o));
}

fn assert_fails_with(o: &Output, needles: &[&str]) {
    assert!(
        !o.status.success(),
        "expected failure, stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = stderr(o);
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "panic: {err}");
}

fn assert_files(dir: &Path, names: &[&str]) {
    for n in names {
        let p = dir.join(n);
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{} missing or empty", p.display());
    }
}

#[test]
fn sim_json_is_one_deterministic_object_with_the_required_keys() {
    let fx = Fixture::new();
    let a = fx.roam(&[
        "sim",
        "tiny.toml",
        "--format",
        "json",
        "--out",
        "a",
        "--quiet",
    ]);
    let b = fx.roam(&["sim", "tiny.toml", "--format", "json", "--out", "b"]);
    assert_ok(&a);
    assert_ok(&b);
    assert_eq!(
        a.stdout, b.stdout,
        "same scenario and seed must give identical JSON"
    );

    let v: serde_json::Value = serde_json::from_slice(&a.stdout).expect("stdout is one JSON value");
    assert!(v.is_object());
    for key in ["jain_index", "sim_seconds", "events"] {
        assert!(v.get(key).is_some_and(|x| x.is_number()), "missing {key}");
    }
    for key in ["flows", "bytes_delivered", "from_s", "to_s", "goodput_bps"] {
        assert!(
            v["aggregate"][key].is_number(),
            "aggregate lacks {key}: {v}"
        );
    }
    let flows = v["flows"].as_array().expect("flows array");
    assert_eq!(flows.len(), 2);
    for f in flows {
        for key in [
            "id",
            "goodput_bps",
            "bytes_delivered",
            "completion_s",
            "retransmitted_segments",
            "overhead_pct",
        ] {
            assert!(f.get(key).is_some(), "flow lacks {key}: {f}");
        }
    }
    assert_eq!(flows[0]["id"], "sized");

    for out in ["a", "b"] {
        assert_files(
            &fx.path(out),
            &[
                "result.json",
                "series.csv",
                "flows.csv",
                "links.csv",
                "throughput.svg",
                "cwnd.svg",
                "seq.svg",
            ],
        );
    }
    let saved = std::fs::read(fx.path("a/result.json")).unwrap();
    assert_eq!(saved, a.stdout, "result.json is the printed object");
    let series = std::fs::read_to_string(fx.path("a/series.csv")).unwrap();
    assert!(series.starts_with("flow,time_s,throughput_bps,cwnd_bytes,seq\n"));
    // The sized flow's rows stop with the 100 ms bin in which it completed.
    let done = flows[0]["completion_s"]
        .as_f64()
        .expect("the sized flow completes");
    let last: f64 = series
        .lines()
        .filter(|l| l.starts_with("sized,"))
        .filter_map(|l| l.split(',').nth(1)?.parse().ok())
        .fold(0.0, f64::max);
    assert!(
        done <= last && last < done + 0.1 + 1e-9,
        "done {done}, last row {last}"
    );
}

#[test]
fn seed_changes_the_run_and_is_reported() {
    let fx = Fixture::new();
    let o = fx.roam(&[
        "sim",
        "tiny.toml",
        "--format",
        "json",
        "--seed",
        "7",
        "--out",
        "s7",
    ]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["seed"], 7);
}

#[test]
fn sim_table_goes_to_default_folder() {
    let fx = Fixture::new();
    let o = fx.roam(&["sim", "tiny.toml", "--set", "link.wireless.forward.loss=0"]);
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("goodput (Mb/s)") && out.contains("sized"),
        "{out}"
    );
    assert!(stderr(&o).contains("wall time"));
    assert_files(
        &fx.path("out/tiny"),
        &["result.json", "flows.csv", "throughput.svg"],
    );
}

#[test]
fn sim_writes_a_packet_trace_for_the_flows_asked_for() {
    let fx = Fixture::new();
    let o = fx.roam(&[
        "sim",
        "tiny.toml",
        "-q",
        "--trace",
        "trace.csv",
        "--trace-flow",
        "sized",
    ]);
    assert_ok(&o);
    assert!(stderr(&o).contains("packet trace:"), "{}", stderr(&o));
    let text = std::fs::read_to_string(fx.path("trace.csv")).expect("trace written");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time_s,link,event,flow,bytes,summary"));
    let rows: Vec<&str> = lines.collect();
    assert!(
        rows[0].starts_with("0.000000000,access:fwd,sent,sized,"),
        "{}",
        rows[0]
    );
    assert!(rows[0].contains("seg [S]"), "{}", rows[0]);
    assert!(
        rows.iter().all(|r| r.contains(",sized,")),
        "only the flow asked for"
    );
    assert!(rows.iter().any(|r| r.contains(",wireless:fwd,delivered,")));

    let o = fx.roam(&[
        "sim",
        "tiny.toml",
        "-q",
        "--trace",
        "t.csv",
        "--trace-flow",
        "nope",
    ]);
    assert_fails_with(&o, &["--trace-flow nope", "no flow with that id"]);
    let o = fx.roam(&["sim", "tiny.toml", "--trace-flow", "sized"]);
    assert_fails_with(&o, &["--trace"]);
}

#[test]
fn sweep_writes_deterministic_csv_files() {
    let fx = Fixture::new();
    let args = |out: &'static str| {
        vec![
            "sweep",
            "tiny.toml",
            "--param",
            "link.wireless.forward.loss=0,0.02",
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--out",
            out,
            "--quiet",
        ]
    };
    let a = fx.roam(&args("sa"));
    assert_ok(&a);
    let b = fx.roam(&args("sb"));
    assert_ok(&b);
    let sweep = std::fs::read_to_string(fx.path("sa/sweep.csv")).unwrap();
    let lines: Vec<&str> = sweep.lines().collect();
    assert_eq!(lines.len(), 3, "{sweep}");
    assert!(lines[0].starts_with(
        "link.wireless.forward.loss,runs,aggregate_goodput_mbps_mean,aggregate_goodput_mbps_ci95"
    ));
    assert!(lines[1].starts_with("0,2,"));
    assert!(lines[2].starts_with("0.02,2,"));
    let runs = std::fs::read_to_string(fx.path("sa/runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 5);
    // Long tables: one row per run × flow, and per grid point × flow, with the parameter.
    let flows = std::fs::read_to_string(fx.path("sa/flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 4 * 2, "{flows}");
    assert!(flows.starts_with("link.wireless.forward.loss,scenario,seed,id,protocol,"));
    assert!(flows
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("0,tiny,1,sized,tcp,"));
    let per_flow = std::fs::read_to_string(fx.path("sa/sweep_flows.csv")).unwrap();
    assert_eq!(per_flow.lines().count(), 1 + 2 * 2, "{per_flow}");
    for f in ["flows.csv", "sweep_flows.csv"] {
        assert_eq!(
            std::fs::read(fx.path("sa").join(f)).unwrap(),
            std::fs::read(fx.path("sb").join(f)).unwrap(),
            "{f} is deterministic"
        );
    }
    assert_eq!(
        runs,
        std::fs::read_to_string(fx.path("sb/runs.csv")).unwrap()
    );
    assert_eq!(
        sweep,
        std::fs::read_to_string(fx.path("sb/sweep.csv")).unwrap()
    );
    // The swept loss is numeric, so it is the x axis of the goodput plot.
    let svg = std::fs::read_to_string(fx.path("sa/goodput.svg")).unwrap();
    assert!(svg.contains("wireless forward loss") && svg.contains("aggregate goodput"));
}

#[test]
fn sweep_plots_take_the_users_title_and_names() {
    let fx = Fixture::new();
    let o = fx.roam(&[
        "sweep",
        "tiny.toml",
        "--param",
        "flow.bulk.cc=newreno,westwood",
        "--param",
        "link.wireless.forward.loss=0,0.02",
        "--seeds",
        "1",
        "--title",
        "Bulk flow on a lossy hop",
        "--xlabel",
        "packet error rate",
        "--label",
        "westwood=Westwood+",
        "--label",
        "flow.bulk.cc=controller",
        "-q",
        "--out",
        "w",
    ]);
    assert_ok(&o);
    let svg = std::fs::read_to_string(fx.path("w/goodput.svg")).unwrap();
    for text in [
        "Bulk flow on a lossy hop",
        "packet error rate",
        "controller = Westwood+",
        "controller = newreno",
    ] {
        assert!(svg.contains(text), "{text} missing");
    }
    assert!(!svg.contains("flow.bulk.cc"), "no raw keys");
    let o = fx.roam(&[
        "sweep",
        "tiny.toml",
        "--param",
        "flow.bulk.cc=newreno",
        "--seeds",
        "1",
        "--label",
        "vegas=Vegas",
        "-q",
    ]);
    assert_fails_with(&o, &["--label vegas=Vegas", "neither a swept parameter"]);
}

/// Every `<name>.svg` in `names` has a PNG twin; returns false (after printing why) when the
/// command refused because the machine has no font, which is the one allowed failure (or, in a
/// build without the `png` feature, because it has no renderer: then it must refuse).
fn pngs_beside(o: &Output, dir: &Path, names: &[&str]) -> bool {
    if !cfg!(feature = "png") {
        assert_fails_with(o, &["no PNG renderer", "feature `png`"]);
        return false;
    }
    if !o.status.success() {
        assert_fails_with(o, &["no font found", "fonts-dejavu-core"]);
        eprintln!("skipped: no system font installed, and roam said so");
        return false;
    }
    for n in names {
        let png = std::fs::read(dir.join(n).with_extension("png")).unwrap_or_default();
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{n}: no PNG beside it"
        );
    }
    true
}

#[test]
fn png_copies_of_the_plots_on_request() {
    let fx = Fixture::new();
    let sim = fx.roam(&["sim", "tiny.toml", "-q", "--png", "--out", "s"]);
    if pngs_beside(
        &sim,
        &fx.path("s"),
        &["throughput.svg", "cwnd.svg", "seq.svg"],
    ) {
        let sweep = fx.roam(&[
            "sweep",
            "tiny.toml",
            "--param",
            "link.wireless.forward.loss=0,0.02",
            "--seeds",
            "1",
            "--png",
            "--out",
            "w",
            "-q",
        ]);
        assert!(pngs_beside(&sweep, &fx.path("w"), &["goodput.svg"]));
    }
    // Without --png, none.
    assert_ok(&fx.roam(&["sim", "tiny.toml", "-q", "--out", "n"]));
    assert!(!fx.path("n/throughput.png").exists());
}

#[test]
fn reproduce_writes_report_claims_and_png_copies_of_its_plots() {
    let fx = Fixture::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = repo.to_str().expect("utf-8 path");
    let o = fx.roam(&[
        "reproduce",
        "probing",
        "--quick",
        "--png",
        "--root",
        root,
        "--out",
        "p",
        "-q",
    ]);
    let report = std::fs::read_to_string(fx.path("p/report.md")).unwrap_or_default();
    let svgs: Vec<&str> = report
        .lines()
        .filter_map(|l| l.strip_prefix("![")?.split_once("](")?.1.strip_suffix(')'))
        .collect();
    if pngs_beside(&o, &fx.path("p"), &svgs) {
        assert!(
            svgs.len() >= 5,
            "one completion-time plot per table: {svgs:?}"
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("claims hold"), "{out}");
        assert!(fx.path("p/claims.json").exists());
    }
}

#[test]
fn bad_arguments_fail_with_helpful_messages() {
    let fx = Fixture::new();
    assert_fails_with(&fx.roam(&["sim", "missing.toml"]), &["missing.toml"]);
    assert_fails_with(
        &fx.roam(&["sim", "tiny.toml", "--set", "run.seed"]),
        &["KEY=VALUE"],
    );
    assert_fails_with(
        &fx.roam(&["sim", "tiny.toml", "--set", "run.bogus=1"]),
        &["tiny.toml", "bogus"],
    );
    assert_fails_with(
        &fx.roam(&["sim", "tiny.toml", "--set", "link.nowhere.forward.loss=0.1"]),
        &["tiny.toml", "nowhere"],
    );
    assert_fails_with(
        &fx.roam(&[
            "sim",
            "tiny.toml",
            "--set",
            "link.wireless.forward.loss=1.5",
        ]),
        &["tiny.toml", "loss"],
    );
    assert_fails_with(&fx.roam(&["sim", "tiny.toml", "--format", "xml"]), &["xml"]);
    assert_fails_with(
        &fx.roam(&["sweep", "tiny.toml", "--param", "loss", "--seeds", "2"]),
        &["KEY=V1,V2"],
    );
    assert_fails_with(
        &fx.roam(&["sweep", "tiny.toml", "--param", "a=1,,2", "--seeds", "2"]),
        &["empty value"],
    );
    assert_fails_with(
        &fx.roam(&[
            "sweep",
            "tiny.toml",
            "--param",
            "run.duration=1s",
            "--seeds",
            "0",
        ]),
        &["--seeds"],
    );
    assert_fails_with(
        &fx.roam(&["bench", "--scenario", "tiny.toml", "--ns3", "no-such-ns3"]),
        &["no-such-ns3"],
    );

    std::fs::write(fx.path("broken.toml"), "[run]\nduration = \n").unwrap();
    assert_fails_with(
        &fx.roam(&["sim", "broken.toml"]),
        &["broken.toml", "line 2"],
    );
}

#[test]
fn inputs_that_cannot_produce_anything_are_warned_about() {
    let fx = Fixture::new();
    // The bulk flow starts after the run; the sized one is a no-show too: nothing is measured.
    let o = fx.roam(&[
        "sim",
        "tiny.toml",
        "-q",
        "--format",
        "json",
        "--set",
        "flow.bulk.start=5s",
        "--set",
        "flow.sized.start=3s",
        "--out",
        "late",
    ]);
    assert_ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains(
            "warning: flow \"bulk\" starts at 5 s, when the run (run.duration = 2 s) is over"
        ),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(2), "{v}");
    assert!(
        v["jain_index"].is_null(),
        "no Jain's index over flows that sent nothing: {v}"
    );
    // The same warning once per sweep, not once per run.
    let o = fx.roam(&[
        "sweep",
        "tiny.toml",
        "--param",
        "link.wireless.forward.loss=0,0.01",
        "--seeds",
        "2",
        "--set",
        "flow.bulk.start=5s",
        "-q",
        "--out",
        "w",
    ]);
    assert_ok(&o);
    assert_eq!(stderr(&o).matches("warning: flow \"bulk\"").count(), 1);
}

#[test]
fn scenario_errors_suggest_the_key_meant_in_one_wording() {
    let fx = Fixture::new();
    std::fs::write(
        fx.path("typo.toml"),
        TINY.replacen("protocol = \"tcp\"", "protocl = \"tcp\"", 1),
    )
    .unwrap();
    assert_fails_with(
        &fx.roam(&["sim", "typo.toml"]),
        &["flow \"sized\": protocol: missing (found `protocl`: did you mean `protocol`?)"],
    );
    assert_fails_with(
        &fx.roam(&["sim", "tiny.toml", "--set", "flow.sized.tcp.sak=true"]),
        &["tcp.sak: unknown field; did you mean `sack`? (expected one of:"],
    );
    let o = fx.roam(&["sim", "tiny.toml", "--set", "flow.sized.tcp.mss=70000"]);
    assert_fails_with(
        &o,
        &["tcp.mss: expected an integer in 0..=65535, got 70000"],
    );
    assert!(!stderr(&o).contains("u16"), "{}", stderr(&o));
}

/// The repository's validation dumbbell with 1 % loss (300 simulated s, a fraction of a second).
fn lossy_dumbbell() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validation/dumbbell-lossy.toml")
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

#[test]
fn bench_gives_a_speed_up_only_against_ns3_run_in_the_same_session() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    // A stand-in for the ns-3 program: it prints its line and what it was asked to run.
    let fake = fx.path("fake-ns3");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"$@\" > args.txt\necho 'ns3 flows=1 time=300 loss=0.01 total_goodput_mbps=1.8340 jain=1.0000 wall_s=4.400'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let scenario = lossy_dumbbell();
    let o = fx.roam(&[
        "bench",
        "--scenario",
        &scenario,
        "--repeat",
        "1",
        "--ns3",
        fake.to_str().unwrap(),
        "-q",
    ]);
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("1.834") && out.contains('×'), "{out}");
    assert!(out.contains("in this session on this machine"), "{out}");
    let args = std::fs::read_to_string(fx.path("args.txt")).unwrap();
    assert_eq!(
        args.trim(),
        "--flows=1 --time=300 --loss=0.01 --bw=10000000bps --delay=20000us --queue=100"
    );
    // Without ns-3: roam's figures, no ratio, and why.
    let o = fx.roam(&[
        "bench",
        "--scenario",
        &scenario,
        "--repeat",
        "1",
        "--no-ns3",
    ]);
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('×'), "{out}");
    assert!(
        out.contains("dumbbell-lossy: no ns-3 run, so no speed-up: --no-ns3"),
        "{out}"
    );
}

#[test]
fn bench_and_reproduce_find_the_repository_from_another_folder() {
    // The fixture's folder is outside the repository: the defaults are found from the roam
    // executable's clone.
    let fx = Fixture::new();
    let o = fx.roam(&["bench", "--repeat", "1", "--no-ns3", "-q"]);
    assert_ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("dumbbell-single") && out.contains("dumbbell-shared"),
        "{out}"
    );
    let o = fx.roam(&["reproduce", "probing", "--quick", "--out", "p", "-q"]);
    assert_ok(&o);
    assert!(fx.path("p/claims.json").exists());
    let o = fx.roam(&["reproduce", "probing", "--quick", "--root", ".", "-q"]);
    assert_fails_with(&o, &["--root .", "not a roam repository"]);
}
