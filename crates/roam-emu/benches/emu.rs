//! The emulator's accuracy and speed (issue 29, item 2) — a benchmark, not a test: it
//! measures and prints, and judges each figure against its goal without failing.
//!
//! ```text
//! cargo bench --profile ci -p roam-emu --bench emu            # full: 60 s of trace
//! cargo bench --profile ci -p roam-emu --bench emu -- --quick  # 10 s of trace, shorter runs
//! ```
//!
//! Root only (namespaces, TUN). Four measurements between two namespaces made here:
//! 1. a Mahimahi trace saturated with 1500-byte packets: datagrams delivered against the
//!    trace's delivery opportunities over the same time (goal: within 1 %);
//! 2. the one-way delay added by a 20 ms link at 100 Mb/s carrying 50 Mb/s (goal: median and
//!    99th percentile within 1 ms of 20 ms plus the 80 µs serialisation);
//! 3. Bernoulli loss at 1 % and 10 % (goal: inside the binomial 95 % interval);
//! 4. forwarding speed with no impairment: one kernel TCP flow (1500-byte MTU) through a link
//!    of unbounded rate (goal: at least 1 Gb/s).

#![allow(clippy::disallowed_methods)] // A benchmark is a host: it reads the real clock.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use roam_emu::{Layout, Running, Selection, Side};

const PROBE: &str = env!("CARGO_BIN_EXE_roam-emu-probe");

struct Pair {
    inner: String,
    outer: String,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let base = format!("rn{}{tag}", std::process::id() % 100_000);
        let p = Pair {
            inner: format!("{base}-in"),
            outer: format!("{base}-out"),
        };
        for ns in [&p.inner, &p.outer] {
            run_ok(Command::new("ip").args(["netns", "add", ns]));
            run_ok(Command::new("ip").args(["-n", ns, "link", "set", "lo", "up"]));
        }
        p
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for ns in [&self.inner, &self.outer] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

fn run_ok(c: &mut Command) {
    let st = c.status().expect("run");
    assert!(st.success(), "{c:?} failed");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Emulates `links` between two fresh namespaces and runs `f(inner, outer)`; returns its
/// result and the wire's counters.
fn with_links<T>(tag: &str, links: &str, f: impl FnOnce(&Pair) -> T) -> (T, roam_emu::WireReport) {
    let dir = std::env::temp_dir().join(format!("roam-emu-bench-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("links.toml");
    std::fs::write(&file, links).unwrap();
    let paths = roam_emu::load(&file, &Selection::default()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let pair = Pair::new(tag);
    let layout = Layout {
        inner: Side::Join(pair.inner.clone()),
        outer: Side::Join(pair.outer.clone()),
        subnet: 98,
        prefix: roam_emu::unique_prefix(),
    };
    let running = Running::start(paths, &layout, Some(Duration::from_secs(600))).unwrap();
    let out = f(&pair);
    (out, running.finish().unwrap())
}

/// UDP from inner to outer: (seq, sent_ns, recv_ns) of what arrived.
fn udp(p: &Pair, rate: u64, size: usize, count: u64) -> Vec<(u64, u64, u64)> {
    let mut recv = Command::new("ip")
        .args([
            "netns",
            "exec",
            &p.outer,
            PROBE,
            "udp-recv",
            "10.98.1.2:9000",
            "300",
            "2",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(recv.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let reader = std::thread::spawn(move || lines.map(|l| l.unwrap()).collect::<Vec<_>>());
    run_ok(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &p.inner,
                PROBE,
                "udp-send",
                "10.98.1.2:9000",
            ])
            .args([rate.to_string(), size.to_string(), count.to_string()]),
    );
    let got = reader
        .join()
        .unwrap()
        .iter()
        .map(|l| {
            let v: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2])
        })
        .collect();
    let _ = recv.wait();
    got
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "meets the goal"
    } else {
        "MISSES the goal"
    }
}

fn trace_accuracy(secs: u64) {
    let trace = repo().join("traces/Verizon-LTE-short.down");
    let text = std::fs::read_to_string(&trace).unwrap();
    let tr = roam_sim::link::trace::Trace::parse(&text).unwrap();
    let links = format!(
        "[[link]]\nname = \"t\"\nqueue = \"1000p\"\n[link.forward]\ntrace = {:?}\n[link.reverse]\nrate = \"10Mbps\"\n",
        trace.display().to_string()
    );
    // Above the trace's peak, so that the queue never runs dry: every opportunity is used.
    let rate = tr.peak_rate_bps() * 3 / 2;
    let count = rate * secs / (1500 * 8);
    let (got, report) = with_links("tr", &links, |p| udp(p, rate, 1472, count));
    // The window: from the first delivery to the last, against the opportunities in it.
    let per_sec = &report.paths[0][0].per_second;
    let n = got.len() as u64;
    let first = got.iter().map(|g| g.2).min().unwrap_or(0);
    let last = got.iter().map(|g| g.2).max().unwrap_or(0);
    let span = Duration::from_nanos(last - first);
    // The wire's own clock: seconds 1..secs-1 are fully saturated (second 0 holds the start).
    let full = (1..(secs as usize).saturating_sub(1)).filter(|&s| s < per_sec.len());
    let (mut bytes, mut opps) = (0u64, 0u64);
    for s in full {
        bytes += per_sec[s];
        // Opportunities in [s, s + 1) seconds.
        let before = |x: usize| roam_proto::Time::from_nanos(1_000_000_000 * x as u64 - 1);
        opps += tr.opportunities_until(before(s + 1)) - tr.opportunities_until(before(s));
    }
    let delivered = bytes / 1500;
    let err = delivered as f64 / opps as f64 - 1.0;
    println!(
        "trace: {n} datagrams over {:.1} s; in the saturated seconds {delivered} delivered vs \
         {opps} opportunities: {:+.3} % — {}",
        span.as_secs_f64(),
        100.0 * err,
        verdict(err.abs() <= 0.01)
    );
}

fn delay_accuracy(count: u64) {
    let links =
        "[[link]]\nname = \"d\"\nrate = \"100Mbps\"\ndelay = \"20ms\"\nqueue = \"10000p\"\n";
    let (got, report) = with_links("dl", links, |p| udp(p, 50_000_000, 972, count));
    let up = &report.paths[0][0];
    let late = |q| {
        up.lateness_quantile(q)
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    let mut d: Vec<f64> = got
        .iter()
        .map(|g| (g.2 as f64 - g.1 as f64) / 1e6)
        .collect();
    d.sort_by(f64::total_cmp);
    let pct = |p: f64| d[((d.len() - 1) as f64 * p).round() as usize];
    let ideal = 20.0 + 1000.0 * 8.0 / 100e6 * 1e3;
    let (p50, p99) = (pct(0.5), pct(0.99));
    println!(
        "delay: {} of {count} datagrams at 50 Mb/s over 100 Mb/s + 20 ms: median {p50:.3} ms, \
         p99 {p99:.3} ms (configured {ideal:.3} ms; with the model's own queueing of the \
         probe's bursts); the wire wrote deliveries after the model's arrival time by \
         median {:.2} ms, p99 {:.2} ms — {}",
        d.len(),
        late(0.5),
        late(0.99),
        verdict((p50 - ideal).abs() <= 1.0 && (p99 - ideal).abs() <= 1.0)
    );
}

fn loss_accuracy(count: u64) {
    for p in [0.01, 0.1] {
        let links = format!(
            "[[link]]\nname = \"l\"\nrate = \"1Gbps\"\nqueue = \"100000p\"\n[link.forward]\nloss = {p}\n"
        );
        let (got, report) = with_links("ls", &links, |pr| udp(pr, 20_000_000, 500, count));
        let sent = report.paths[0][0].model.packets_sent.min(count) as f64;
        let lost = count as f64 - got.len() as f64;
        let sd = (sent * p * (1.0 - p)).sqrt();
        let (lo, hi) = (sent * p - 1.96 * sd, sent * p + 1.96 * sd);
        println!(
            "loss {p}: {lost} of {count} lost ({:.3} %), binomial 95 % interval [{lo:.0}, {hi:.0}] — {}",
            100.0 * lost / count as f64,
            verdict(lost >= lo && lost <= hi)
        );
    }
}

fn speed(secs: u64) {
    let links = "[[link]]\nname = \"s\"\nrate = \"1000Gbps\"\nqueue = \"100000p\"\n";
    let (line, report) = with_links("sp", links, |p| {
        let mut sink = Command::new("ip")
            .args([
                "netns",
                "exec",
                &p.outer,
                PROBE,
                "tcp-sink",
                "10.98.1.2:9001",
            ])
            .arg((secs + 5).to_string())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(sink.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "ready");
        // Far more than a link of 10 Gb/s could carry in `secs`: the sink's limit ends it.
        let mut send = Command::new("ip")
            .args([
                "netns",
                "exec",
                &p.inner,
                PROBE,
                "tcp-send",
                "10.98.1.2:9001",
            ])
            .arg((secs * 1_250_000_000).to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let line = lines.next().and_then(Result::ok).unwrap_or_default();
        let _ = send.kill();
        let _ = send.wait();
        let _ = sink.wait();
        line
    });
    let v: Vec<f64> = line.split(' ').filter_map(|x| x.parse().ok()).collect();
    let (bytes, t) = (
        v.first().copied().unwrap_or(0.0),
        v.get(1).copied().unwrap_or(1.0),
    );
    let gbps = bytes * 8.0 / t / 1e9;
    let up = &report.paths[0][0];
    let pkts = up.written as f64 / report.elapsed.as_secs_f64();
    println!(
        "speed: one TCP flow through an unimpaired link: {gbps:.2} Gb/s of payload, {:.0} \
         packets/s forwarded one way (mean {:.0} bytes) — {}",
        pkts,
        up.bytes_written as f64 / up.written.max(1) as f64,
        verdict(gbps >= 1.0)
    );
}

fn main() {
    if let Err(e) = roam_emu::check_allowed() {
        println!("skipped: {e}");
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let (trace_s, delay_n, loss_n, speed_s) = if quick {
        (10, 20_000, 20_000, 5)
    } else {
        (60, 100_000, 100_000, 20)
    };
    trace_accuracy(trace_s);
    delay_accuracy(delay_n);
    loss_accuracy(loss_n);
    speed(speed_s);
}
