//! The Wireshark dissector (`tools/wireshark/roam.lua`) decodes simulated captures as the
//! simulator itself does: for scenarios with TCP-like segments and their options (SACK, probes),
//! RCP REQ/DATA (pulls, tokens, object names and lengths), RCP-ATL media packets and reports,
//! and pTCP datagrams, tshark's Info column (the dissector's summary) equals the `summary` of
//! the matching row of `roam sim --trace`, packet by packet, and single fields (`roam.seg.seq`,
//! `roam.type`) agree. Skipped, saying so, where `tshark` is not installed (Debian: `tshark`).

use std::path::{Path, PathBuf};
use std::process::Command;

const ROAM: &str = env!("CARGO_BIN_EXE_roam");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// tshark's fields of every packet of `capture`, with the roam dissector loaded.
fn tshark(capture: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let script = repo().join("tools/wireshark/roam.lua");
    let mut cmd = Command::new("tshark");
    cmd.arg("-X")
        .arg(format!("lua_script:{}", script.display()))
        .arg("-r")
        .arg(capture)
        .args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let o = cmd.output().expect("run tshark");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "tshark failed: {err}");
    assert!(
        !err.contains("Lua: Error"),
        "the dissector failed to load: {err}"
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

/// Runs `scenario` with `--trace` and `--pcap`; returns the trace's (event, summary) rows that
/// the capture holds (queued, delivered and forwarded are not captured) and the capture.
fn simulate(dir: &Path, scenario: &str, set: &[&str]) -> (Vec<String>, PathBuf) {
    let trace = dir.join("trace.csv");
    let capture = dir.join("capture.pcapng");
    let mut cmd = Command::new(ROAM);
    cmd.arg("sim").arg(repo().join(scenario));
    for s in set {
        cmd.args(["--set", s]);
    }
    let o = cmd
        .arg("--trace")
        .arg(&trace)
        .arg("--pcap")
        .arg(&capture)
        .arg("--out")
        .arg(dir.join("out"))
        .arg("-q")
        .output()
        .expect("run roam");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut reader = csv::Reader::from_path(&trace).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (event, summary) = (col("event"), col("summary"));
    let rows = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| !matches!(&r[event], "queued" | "delivered" | "forwarded"))
        .map(|r| r[summary].to_owned())
        .collect();
    (rows, capture)
}

/// The number after `key=` in a summary.
fn number(summary: &str, key: &str) -> Option<String> {
    summary
        .split(' ')
        .find_map(|w| w.strip_prefix(key))
        .map(str::to_owned)
}

#[test]
fn the_dissector_reads_captures_as_the_simulator_wrote_them() {
    if !tshark_available() {
        eprintln!(
            "SKIPPED: tshark is not installed (Debian package tshark): the dissector is untested"
        );
        return;
    }
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "scenarios/examples/mixed-transports.toml",
            &["run.duration=6s", "link.hop.forward.loss=0.02"],
            &[
                "seg ",
                "req ",
                "data ",
                "sack=",
                "probe=PROBE1",
                "PUL",
                "blocks=",
                "object=",
                "objlen=",
                "pull=#",
                "token",
            ],
        ),
        (
            "experiments/atl/media.toml",
            &["run.duration=2s"],
            &["media ", "media-report "],
        ),
        (
            "experiments/ptcp/blackout.toml",
            &["run.duration=2s"],
            &["ptcp ", "pseq="],
        ),
    ];
    for (scenario, set, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (summaries, capture) = simulate(dir.path(), scenario, set);
        let packets = tshark(&capture, &["_ws.col.Info", "roam.type", "roam.seg.seq"]);
        assert_eq!(packets.len(), summaries.len(), "{scenario}: packets");
        for (i, (p, s)) in packets.iter().zip(&summaries).enumerate() {
            assert_eq!(&p[0], s, "{scenario}: packet {}", i + 1);
            let kind = s.split(' ').next().unwrap();
            let t = match kind {
                "seg" => "0x01",
                "req" => "0x02",
                "data" => "0x03",
                "media" => "0x04",
                "media-report" => "0x05",
                "ptcp" => "0x06",
                other => panic!("{scenario}: packet {}: {other}", i + 1),
            };
            assert_eq!(p[1], t, "{scenario}: packet {} type", i + 1);
            if kind == "seg" {
                assert_eq!(
                    Some(p[2].clone()),
                    number(s, "seq="),
                    "{scenario}: packet {}",
                    i + 1
                );
            }
        }
        for e in expected {
            assert!(
                summaries.iter().any(|s| s.contains(e)),
                "{scenario}: no packet shows {e:?}: the test no longer covers it"
            );
        }
    }
}
