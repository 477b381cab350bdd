//! The network-namespace test bed (`scripts/netns.sh`): `roam serve` in two server namespaces,
//! `roam get` in a mobile-host namespace with two interfaces. With two vias or two servers
//! `roam get` runs R²CP: an interface taken down and a server killed mid-transfer cost no
//! restart, and two interfaces (two mirrors) shaped to 8 and 4 Mb/s deliver faster than the
//! faster one's rate. Root only: elsewhere each test
//! says why it skipped and passes. Every namespace is removed by a guard, also on failure.
//! Waits are bounded by counts and generous limits; nothing asserts on speed.

use std::process::Output;
use std::time::Duration;

mod common;
use common::netns::{output_within, wait_for_size, Bed};
use common::pattern;

/// Sets up a bed with a served file of `len` bytes.
fn bed_with_file(tag: u32, rate: &str, len: usize) -> Option<(Bed, Vec<u8>)> {
    let data = pattern(len);
    Some((Bed::up(tag, rate)?.with_file(&data), data))
}

/// Waits (bounded: 2 min) for `roam get`; it must succeed; returns its output.
fn finish(child: std::process::Child) -> Output {
    let out = output_within(child, Duration::from_secs(120), "roam get");
    assert!(
        out.status.success(),
        "roam get failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

fn switches(out: &Output) -> u64 {
    json(out)["switches"].as_u64().unwrap()
}

/// Bytes the pipes of `roam get`'s summary delivered whose via (or server) starts with
/// `prefix`.
fn delivered(out: &Output, key: &str, prefix: &str) -> u64 {
    json(out)["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p[key].as_str().unwrap().starts_with(prefix))
        .map(|p| p["bytes"].as_u64().unwrap())
        .sum()
}

/// The rates of the R²CP aggregation tests: the faster link is tbf-shaped to `FAST_MBIT`,
/// the slower to half that. Aggregate goodput must beat the faster link's *rate* (not a
/// timed single-path run, which a loaded machine would make noisy) by 20 %: the goodput over
/// the faster link alone is below its rate, so this holds only if both links carried data.
const FAST_MBIT: f64 = 8.0;

/// Goodput (Mb/s) reported by `roam get`, printed for the record.
fn goodput(out: &Output, what: &str) -> f64 {
    let g = json(out)["goodput_mbps"].as_f64().unwrap();
    eprintln!(
        "{what}: {g:.2} Mb/s; {}",
        String::from_utf8_lossy(&out.stdout)
    );
    g
}

/// Test bed `tag` (100 Mbit/s links), both servers up: a 4 MB file arrives intact over each
/// interface from the server behind it, `roam get` run with `extra(via)` arguments.
fn assert_intact_over_each_interface(tag: u32, extra: impl Fn(&str) -> Vec<String>) {
    let Some((mut bed, data)) = bed_with_file(tag, "100mbit", 4 << 20) else {
        return;
    };
    bed.serve(1);
    bed.serve(2);
    std::thread::sleep(Duration::from_millis(300));
    for (via, server) in [
        ("10.77.1.2", "10.77.3.2:7000"),
        ("10.77.2.2", "10.77.4.2:7000"),
    ] {
        let out = bed.dir.path().join(format!("o-{via}"));
        let extra = extra(via);
        let mut args = vec!["f", "--server", server, "--via", via];
        args.extend(extra.iter().map(String::as_str));
        finish(bed.get(&args, &out));
        assert!(std::fs::read(&out).unwrap() == data, "via {via}");
    }
}

#[test]
fn a_file_arrives_intact_over_each_interface() {
    assert_intact_over_each_interface(1, |_| Vec::new());
}

#[test]
fn taking_the_interface_in_use_down_does_not_stop_the_transfer() {
    let Some((mut bed, data)) = bed_with_file(2, "20mbit", 12 << 20) else {
        return;
    };
    bed.serve(1);
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.dir.path().join("o");
    let args = [
        "f",
        "--server",
        "10.77.3.2:7000",
        "--via",
        "10.77.1.2",
        "--via",
        "10.77.2.2",
        "--stall",
        "1",
    ];
    let child = bed.get(&args, &out);
    wait_for_size(&bed.dir.path().join("o.roam-part"), 2 << 20);
    let (m, dev) = (bed.ns("m"), format!("{}a", bed.prefix));
    bed.ip(&["-n", &m, "link", "set", &dev, "down"]);
    let res = finish(child);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    // Two vias: R²CP; the pipe on the dead interface was removed, the other carried on.
    assert!(switches(&res) >= 1);
    assert!(delivered(&res, "via", "10.77.2.2") > 0);
}

/// Test bed `id`: a 12 MB `get` from the first of two servers (plus `extra` arguments) over
/// one 20 Mbit/s interface; the first server is killed once 2 MB have arrived; the file must
/// arrive intact from the second.
fn assert_a_get_survives_its_server_being_killed(id: u32, extra: &[&str]) {
    let Some((mut bed, data)) = bed_with_file(id, "20mbit", 12 << 20) else {
        return;
    };
    let first = bed.serve(1);
    bed.serve(2);
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.dir.path().join("o");
    let args = [
        "f",
        "--server",
        "10.77.3.2:7000",
        "--server",
        "10.77.4.2:7000",
        "--via",
        "10.77.1.2",
        "--stall",
        "1",
    ];
    let child = bed.get(&[&args[..], extra].concat(), &out);
    wait_for_size(&bed.dir.path().join("o.roam-part"), 2 << 20);
    bed.children[first].0.kill().unwrap();
    let res = finish(child);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(switches(&res) >= 1);
}

#[test]
fn killing_the_server_in_use_does_not_stop_the_transfer() {
    assert_a_get_survives_its_server_being_killed(3, &[]);
}

#[test]
fn a_file_arrives_intact_over_tcp_on_each_interface_with_link_facts() {
    assert_intact_over_each_interface(4, |via| {
        let link = format!("{via}:pw=0.01,dw=20ms,bw=100Mbps");
        ["--protocol", "tcp", "--link", &link]
            .map(str::to_owned)
            .to_vec()
    });
}

#[test]
fn killing_the_server_in_use_restarts_a_tcp_get_on_the_next_server() {
    assert_a_get_survives_its_server_being_killed(5, &["--protocol", "tcp"]);
}

/// Test bed `tag`: the links `fast` and `slow` shaped to [`FAST_MBIT`] and half that, the
/// servers `servers` up; a 6 MB `roam get ARGS` must arrive intact, every path named by
/// `key` (`via` or `server`) and one of `prefixes` must have carried data, and the aggregate
/// goodput must beat 1.2 × the faster link's rate.
fn assert_aggregated(
    tag: u32,
    (fast, slow): (&str, &str),
    servers: &[u8],
    args: &[&str],
    (key, prefixes): (&str, [&str; 2]),
) {
    let Some((mut bed, data)) = bed_with_file(tag, "", 6 << 20) else {
        return;
    };
    bed.shape(fast, &format!("{FAST_MBIT}mbit"));
    bed.shape(slow, &format!("{}mbit", FAST_MBIT / 2.0));
    for &s in servers {
        bed.serve(s);
    }
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.dir.path().join("o");
    let res = finish(bed.get(&[&["f"], args].concat(), &out));
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    let both = goodput(&res, &format!("two {key}s"));
    for prefix in prefixes {
        assert!(
            delivered(&res, key, prefix) > 0,
            "nothing via {key} {prefix}"
        );
    }
    assert!(
        both > 1.2 * FAST_MBIT,
        "aggregate {both:.2} Mb/s is not above 1.2 × the faster {key}'s {FAST_MBIT} Mb/s"
    );
}

#[test]
fn a_file_over_two_interfaces_arrives_intact_and_faster_than_over_the_faster_one() {
    // The mobile host's two links are the bottlenecks.
    assert_aggregated(
        6,
        ("a", "b"),
        &[1],
        &[
            "--server",
            "10.77.3.2:7000",
            "--via",
            "10.77.1.2",
            "--via",
            "10.77.2.2",
        ],
        ("via", ["10.77.1.2", "10.77.2.2"]),
    );
}

#[test]
fn two_mirrors_are_aggregated() {
    // The servers' own links are the bottlenecks: 8 and 4 Mb/s.
    assert_aggregated(
        7,
        ("s1", "s2"),
        &[1, 2],
        &[
            "--server",
            "10.77.3.2:7000",
            "--server",
            "10.77.4.2:7000",
            "--via",
            "10.77.1.2",
        ],
        ("server", ["10.77.3.2", "10.77.4.2"]),
    );
}

/// A slow interface behind a deep queue (0.2 Mb/s, a tbf queue of 750 kB: 30 s of the link)
/// beside an 8 Mb/s one: R²CP over both must not fall below the fast interface alone
/// (issue 27: a loss-based pipe would fill the queue with 30 s of data and every unit ranked
/// onto it would block the buffer; head-of-line awareness keeps its queue short). The one
/// timed comparison of this file: each way is run twice, alternating, and the better run of
/// each counts, so a moment of load on a shared machine does not decide it.
#[test]
fn a_deep_queued_slow_interface_does_not_slow_the_transfer_down() {
    let len = 6 << 20;
    let Some((mut bed, data)) = bed_with_file(8, "", len) else {
        return;
    };
    bed.shape("a", &format!("{FAST_MBIT}mbit"));
    bed.shape_with_queue("b", "200kbit", "750kb");
    bed.serve(1);
    std::thread::sleep(Duration::from_millis(300));
    let args = ["f", "--server", "10.77.3.2:7000", "--via", "10.77.1.2"];
    let (mut alone, mut both) = (0.0f64, 0.0f64);
    for round in 0..2 {
        let out = bed.dir.path().join(format!("alone{round}"));
        let res = finish(bed.get(&args, &out));
        assert!(std::fs::read(&out).unwrap() == data, "content differs");
        alone = alone.max(goodput(&res, "fast interface alone"));
        let out = bed.dir.path().join(format!("both{round}"));
        let res = finish(bed.get(&[&args[..], &["--via", "10.77.2.2"]].concat(), &out));
        assert!(std::fs::read(&out).unwrap() == data, "content differs");
        both = both.max(goodput(&res, "both interfaces"));
    }
    assert!(
        both >= 0.95 * alone,
        "R²CP over both {both:.2} Mb/s is below 0.95 × the fast interface alone {alone:.2} Mb/s"
    );
}
