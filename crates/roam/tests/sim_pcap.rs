//! `roam sim --pcap`: the capture read back with pcap-file agrees with the simulator's own CSV
//! packet trace of the same run (packets, bytes, order, drops), and capturing changes no result.

use std::process::{Command, Output};

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::{Block, PcapNgReader};

/// Two hosts and a router; a lossy wireless hop, so the capture has drops; 1 simulated s.
const SCENARIO: &str = r#"
name = "pcap"

[run]
duration = "1s"
seed = 3

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
queue = 20

[link.forward]
loss = 0.02

[[flow]]
id = "bulk"
protocol = "tcp"
from = "server"
to = "mobile"
"#;

/// Trace events that become capture packets (the `--pcap` documentation's list).
const CAPTURED: [&str; 7] = [
    "sent",
    "duplicated",
    "queue_drop",
    "lost",
    "outage_drop",
    "corrupted",
    "misrouted",
];

fn roam(dir: &std::path::Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_roam"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run roam");
    assert!(
        o.status.success(),
        "roam failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// One packet of the capture: interface name, time (ns), IPv4 packet, comments.
struct Captured {
    link: String,
    nanos: u128,
    data: Vec<u8>,
    comments: Vec<String>,
}

fn read_capture(path: &std::path::Path) -> Vec<Captured> {
    let file = std::fs::File::open(path).expect("capture written");
    let mut r = PcapNgReader::new(file).expect("a pcapng file");
    let mut names = Vec::new();
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        match block.expect("a valid block") {
            Block::InterfaceDescription(i) => {
                let name = i.options.iter().find_map(|o| match o {
                    pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption::IfName(n) => Some(n.to_string()),
                    _ => None,
                });
                names.push(name.expect("interfaces are named"));
            }
            Block::EnhancedPacket(p) => out.push(Captured {
                link: names[p.interface_id as usize].clone(),
                nanos: p.timestamp.as_nanos(),
                data: p.data.to_vec(),
                comments: p
                    .options
                    .iter()
                    .filter_map(|o| match o {
                        EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                        _ => None,
                    })
                    .collect(),
            }),
            _ => {}
        }
    }
    out
}

#[test]
fn the_capture_of_a_link_matches_the_packet_trace_and_changes_no_result() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("s.toml"), SCENARIO).expect("write scenario");
    let plain = roam(
        dir.path(),
        &["sim", "s.toml", "-q", "--format", "json", "--out", "a"],
    );
    let captured = roam(
        dir.path(),
        &[
            "sim",
            "s.toml",
            "-q",
            "--format",
            "json",
            "--out",
            "b",
            "--trace",
            "t.csv",
            "--pcap",
            "c.pcapng",
            "--pcap-link",
            "wireless",
        ],
    );
    assert_eq!(
        plain.stdout, captured.stdout,
        "capturing changed the result"
    );

    let mut trace = csv::Reader::from_path(dir.path().join("t.csv")).expect("trace");
    let rows: Vec<csv::StringRecord> = trace
        .records()
        .map(|r| r.expect("row"))
        .filter(|r| r[1].starts_with("wireless:") && CAPTURED.contains(&&r[2]))
        .collect();
    let packets = read_capture(&dir.path().join("c.pcapng"));
    assert!(rows.len() > 100, "a busy link: {} rows", rows.len());
    assert_eq!(packets.len(), rows.len(), "one packet per trace row");

    let mut drops = 0;
    for (p, row) in packets.iter().zip(&rows) {
        assert_eq!(p.link, &row[1]);
        let secs: f64 = row[0].parse().expect("time");
        assert!(
            (p.nanos as f64 / 1e9 - secs).abs() < 1e-9,
            "time of {row:?}"
        );
        // IPv4 with UDP, the datagram after 28 bytes of headers.
        assert_eq!(p.data[0], 0x45);
        assert_eq!(p.data[9], 17);
        assert_eq!(&p.data[12..14], &[10, 0]);
        let payload = &p.data[28..];
        assert_eq!(payload.len().to_string(), &row[4], "length of {row:?}");
        assert_eq!(roam_wire::Summary(payload).to_string(), &row[5]);
        let dropped = row[2] != *"sent" && row[2] != *"duplicated";
        if dropped {
            drops += 1;
            assert_eq!(p.comments, vec![format!("roam: dropped ({})", &row[2])]);
        } else if row[2] == *"sent" {
            assert!(p.comments.is_empty());
        }
    }
    assert!(drops > 0, "the lossy hop dropped something");
    assert!(
        packets.windows(2).all(|w| w[0].nanos <= w[1].nanos),
        "timestamps are monotonic"
    );
    assert!(packets.iter().any(|p| p.link == "wireless:fwd"));
    assert!(packets.iter().any(|p| p.link == "wireless:rev"));
}

#[test]
fn an_unknown_capture_link_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("s.toml"), SCENARIO).expect("write scenario");
    let o = Command::new(env!("CARGO_BIN_EXE_roam"))
        .args([
            "sim",
            "s.toml",
            "-q",
            "--pcap",
            "c.pcapng",
            "--pcap-link",
            "nope",
        ])
        .current_dir(dir.path())
        .output()
        .expect("run roam");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--pcap-link nope") && err.contains("no link with that name"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// tshark (Debian's package) reads the capture as IPv4/UDP with good checksums, the interface
/// names and drop comments the trace has. Skipped when tshark is not installed.
#[test]
fn tshark_decodes_the_capture() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("skipped: tshark is not installed (apt-get install tshark)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("s.toml"), SCENARIO).expect("write scenario");
    roam(
        dir.path(),
        &[
            "sim", "s.toml", "-q", "--out", "o", "--trace", "t.csv", "--pcap", "c.pcapng",
        ],
    );
    let o = Command::new("tshark")
        .args([
            "-r",
            "c.pcapng",
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-e",
            "frame.interface_name",
            "-e",
            "ip.checksum.status",
            "-e",
            "udp.checksum.status",
            "-e",
            "udp.length",
            "-e",
            "frame.comment",
        ])
        .current_dir(dir.path())
        .output()
        .expect("run tshark");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).expect("utf-8");
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split('|').collect()).collect();

    let mut trace = csv::Reader::from_path(dir.path().join("t.csv")).expect("trace");
    let rows: Vec<csv::StringRecord> = trace
        .records()
        .map(|r| r.expect("row"))
        .filter(|r| CAPTURED.contains(&&r[2]))
        .collect();
    assert_eq!(lines.len(), rows.len(), "one decoded packet per trace row");
    for (f, row) in lines.iter().zip(&rows) {
        assert_eq!(f[0], &row[1], "interface of {row:?}");
        // Checksum status 1: good.
        assert_eq!((f[1], f[2]), ("1", "1"), "checksums of {row:?}");
        let udp_len: usize = f[3].parse().expect("udp.length");
        assert_eq!((udp_len - 8).to_string(), &row[4]);
        let dropped = !["sent", "duplicated"].contains(&&row[2]);
        if dropped {
            assert_eq!(f[4], format!("roam: dropped ({})", &row[2]));
        }
    }
}
