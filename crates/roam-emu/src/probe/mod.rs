//! The small UDP, TCP and HTTP probe the emulator's tests, benchmark and test bed run inside
//! namespaces (no iperf or web server needed): the `roam-emu-probe` binary and the hidden
//! `roam emu-probe` command.
//!
//! ```text
//! roam-emu-probe udp-recv ADDR:PORT LIMIT_S QUIET_S   # prints "ready", then one line per datagram:
//!                                                     # seq sent_ns recv_ns bytes
//! roam-emu-probe udp-send ADDR:PORT RATE_BPS SIZE COUNT
//! roam-emu-probe tcp-sink ADDR:PORT LIMIT_S           # prints "ready", then "bytes seconds"
//! roam-emu-probe tcp-send ADDR:PORT BYTES
//! roam-emu-probe tcp-serve ADDR:PORT BYTES LIMIT_S CC [mptcp]   # prints "ready"; sends BYTES of
//!                                                     # the pattern to each client, CC per socket
//! roam-emu-probe tcp-get ADDR:PORT BYTES [mptcp]      # reads and checks the pattern; "bytes seconds"
//! roam-emu-probe http-serve ADDR:PORT FILE LIMIT_S    # prints "ready"; GET with Range, HTTP/1.1
//! ```
//!
//! Times are the realtime clock in nanoseconds, the same in every namespace of the machine.
//! Every loop is bounded by a count or a time limit.

// A probe is a host, not an engine: it reads the real clocks.
#![allow(clippy::disallowed_methods)]

mod serve;

use std::io::{BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

pub(crate) fn arg<T: std::str::FromStr>(
    args: &[String],
    i: usize,
    what: &str,
) -> Result<T, String> {
    args.get(i)
        .ok_or_else(|| format!("missing {what}"))?
        .parse()
        .map_err(|_| format!("bad {what}: {:?}", args[i]))
}

pub(crate) fn secs(s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|_| format!("bad duration {s}"))
}

fn udp_recv(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let limit = secs(arg(args, 3, "LIMIT_S")?)?;
    let quiet = secs(arg(args, 4, "QUIET_S")?)?;
    let sock = UdpSocket::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .map_err(|e| e.to_string())?;
    let out = std::io::stdout();
    let mut out = BufWriter::new(out.lock());
    writeln!(out, "ready").map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut last: Option<Instant> = None;
    let mut buf = vec![0u8; 65_536];
    while t0.elapsed() < limit && last.is_none_or(|l| l.elapsed() < quiet) {
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(_) => continue,
        };
        let recv = now_ns();
        last = Some(Instant::now());
        if n < 16 {
            continue;
        }
        let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
        let sent = u64::from_be_bytes(buf[8..16].try_into().unwrap_or_default());
        writeln!(out, "{seq} {sent} {recv} {n}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

fn udp_send(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let rate: f64 = arg(args, 3, "RATE_BPS")?;
    let size: usize = arg(args, 4, "SIZE")?;
    let count: u64 = arg(args, 5, "COUNT")?;
    if !(16..=65_000).contains(&size) || rate.is_nan() || rate <= 0.0 {
        return Err("SIZE must be 16..=65000 and RATE_BPS positive".into());
    }
    let sock = UdpSocket::bind("0.0.0.0:0").map_err(|e| e.to_string())?;
    let gap = secs(size as f64 * 8.0 / rate)?;
    let mut buf = vec![0u8; size];
    let t0 = Instant::now();
    for seq in 0..count {
        let due = t0 + gap.mul_f64(seq as f64);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        buf[..8].copy_from_slice(&seq.to_be_bytes());
        buf[8..16].copy_from_slice(&now_ns().to_be_bytes());
        // A full socket buffer is a drop before the link, which the receiver sees as loss.
        let _ = sock.send_to(&buf, addr);
    }
    Ok(())
}

fn tcp_sink(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let limit = secs(arg(args, 3, "LIMIT_S")?)?;
    let l = TcpListener::bind(addr).map_err(|e| format!("bind {addr}: {e}"))?;
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut total = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    while t0.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    println!("{total} {:.6}", t0.elapsed().as_secs_f64());
    Ok(())
}

fn tcp_send(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let bytes: u64 = arg(args, 3, "BYTES")?;
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let buf = vec![0x5au8; 1 << 16];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        s.write_all(&buf[..n]).map_err(|e| e.to_string())?;
        left -= n as u64;
    }
    Ok(())
}

/// Runs the probe with `args` as its command line (`args[0]` the program); errors are for the
/// caller to print.
pub fn main(args: &[String]) -> Result<(), String> {
    match args.get(1).map(String::as_str) {
        Some("udp-recv") => udp_recv(args),
        Some("udp-send") => udp_send(args),
        Some("tcp-sink") => tcp_sink(args),
        Some("tcp-send") => tcp_send(args),
        Some("tcp-serve") => serve::tcp_serve(args),
        Some("tcp-get") => serve::tcp_get(args),
        Some("http-serve") => serve::http_serve(args),
        _ => Err("usage: roam-emu-probe udp-recv|udp-send|tcp-sink|tcp-send ARGS (see the source's header)".into()),
    }
}
