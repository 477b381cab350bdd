//! The test bed's kernel-stack endpoints: a TCP (or MPTCP) server that sends a checkable
//! pattern with a chosen congestion controller per socket, its client, and a minimal HTTP/1.1
//! file server with `Range` requests for aria2. Each server serves until its time limit; each
//! connection is its own thread.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use super::{arg, secs};

/// Byte `i` of the pattern the TCP server sends.
pub fn pattern(i: u64) -> u8 {
    (i.wrapping_mul(7) ^ (i >> 11)) as u8
}

fn listener(addr: SocketAddr, mptcp: bool, cc: Option<&str>) -> Result<TcpListener, String> {
    let proto = if mptcp {
        Protocol::MPTCP
    } else {
        Protocol::TCP
    };
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(proto))
        .map_err(|e| format!("socket ({}): {e}", if mptcp { "MPTCP" } else { "TCP" }))?;
    s.set_reuse_address(true).map_err(|e| e.to_string())?;
    if let Some(cc) = cc {
        // Inherited by the accepted sockets.
        s.set_tcp_congestion(cc.as_bytes())
            .map_err(|e| format!("congestion control {cc:?}: {e}"))?;
    }
    s.bind(&addr.into())
        .map_err(|e| format!("bind {addr}: {e}"))?;
    s.listen(16).map_err(|e| e.to_string())?;
    Ok(s.into())
}

/// Accepts for `limit`, handing each connection to `serve` on its own thread.
fn accept_loop(
    l: TcpListener,
    limit: Duration,
    serve: impl Fn(TcpStream) + Send + Clone + 'static,
) -> Result<(), String> {
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        match l.accept() {
            Ok((s, _)) => {
                let _ = s.set_nonblocking(false);
                let f = serve.clone();
                std::thread::spawn(move || f(s));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    Ok(())
}

/// `tcp-serve ADDR:PORT BYTES LIMIT_S CC [mptcp]`.
pub fn tcp_serve(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let bytes: u64 = arg(args, 3, "BYTES")?;
    let limit = secs(arg(args, 4, "LIMIT_S")?)?;
    let cc: String = arg(args, 5, "CC")?;
    let mptcp = args.get(6).is_some_and(|a| a == "mptcp");
    let l = listener(addr, mptcp, (cc != "default").then_some(cc.as_str()))?;
    accept_loop(l, limit, move |mut s| {
        let mut buf = vec![0u8; 1 << 16];
        let mut off = 0u64;
        while off < bytes {
            let n = (bytes - off).min(buf.len() as u64) as usize;
            for (k, b) in buf[..n].iter_mut().enumerate() {
                *b = pattern(off + k as u64);
            }
            if s.write_all(&buf[..n]).is_err() {
                return;
            }
            off += n as u64;
        }
    })
}

/// `tcp-get ADDR:PORT BYTES [mptcp]`: reads to the end, checks length and pattern.
pub fn tcp_get(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let bytes: u64 = arg(args, 3, "BYTES")?;
    let mptcp = args.get(4).is_some_and(|a| a == "mptcp");
    let proto = if mptcp {
        Protocol::MPTCP
    } else {
        Protocol::TCP
    };
    let t0 = Instant::now();
    let s = Socket::new(Domain::IPV4, Type::STREAM, Some(proto)).map_err(|e| e.to_string())?;
    s.connect_timeout(&addr.into(), Duration::from_secs(10))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let mut s: TcpStream = s.into();
    let mut buf = vec![0u8; 1 << 16];
    let mut off = 0u64;
    loop {
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        for (k, &b) in buf[..n].iter().enumerate() {
            if b != pattern(off + k as u64) {
                return Err(format!("byte {} differs", off + k as u64));
            }
        }
        off += n as u64;
        if off > bytes {
            return Err(format!("more than {bytes} bytes"));
        }
    }
    if off != bytes {
        return Err(format!("{off} of {bytes} bytes"));
    }
    println!("{off} {:.6}", t0.elapsed().as_secs_f64());
    Ok(())
}

/// `http-serve ADDR:PORT FILE LIMIT_S`: `GET /<anything>` answers with FILE, whole or the one
/// `Range: bytes=a-b` asked for (what aria2 sends); one request per connection.
pub fn http_serve(args: &[String]) -> Result<(), String> {
    let addr: SocketAddr = arg(args, 2, "ADDR:PORT")?;
    let file: PathBuf = arg(args, 3, "FILE")?;
    let limit = secs(arg(args, 4, "LIMIT_S")?)?;
    let data =
        std::sync::Arc::new(std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?);
    let l = listener(addr, false, None)?;
    accept_loop(l, limit, move |s| {
        let _ = answer(s, &data);
    })
}

fn answer(mut s: TcpStream, data: &[u8]) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut r = BufReader::new(s.try_clone()?);
    let mut range = None;
    let mut first = true;
    let mut head = false;
    for _ in 0..100 {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end();
        if first {
            head = line.starts_with("HEAD ");
            first = false;
        }
        if line.is_empty() {
            break;
        }
        if let Some(v) = line
            .to_ascii_lowercase()
            .strip_prefix("range: bytes=")
            .map(str::to_string)
        {
            range = parse_range(&v, data.len() as u64);
        }
    }
    let len = data.len() as u64;
    let (status, lo, hi) = match range {
        Some((a, b)) => ("206 Partial Content", a, b),
        None => ("200 OK", 0, len.saturating_sub(1)),
    };
    let body = if len == 0 {
        &data[..0]
    } else {
        &data[lo as usize..=hi as usize]
    };
    let mut hdr = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n",
        body.len()
    );
    if range.is_some() {
        hdr.push_str(&format!("Content-Range: bytes {lo}-{hi}/{len}\r\n"));
    }
    hdr.push_str("\r\n");
    s.write_all(hdr.as_bytes())?;
    if !head {
        s.write_all(body)?;
    }
    s.flush()
}

/// `a-b`, `a-` or `-n` within a body of `len` bytes.
fn parse_range(v: &str, len: u64) -> Option<(u64, u64)> {
    let (a, b) = v.split_once('-')?;
    let last = len.checked_sub(1)?;
    let (lo, hi) = match (a.trim().parse::<u64>().ok(), b.trim().parse::<u64>().ok()) {
        (Some(a), Some(b)) => (a, b.min(last)),
        (Some(a), None) => (a, last),
        (None, Some(n)) => (len.saturating_sub(n), last),
        (None, None) => return None,
    };
    (lo <= hi).then_some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_as_aria2_sends_them() {
        assert_eq!(parse_range("0-99", 1000), Some((0, 99)));
        assert_eq!(parse_range("500-", 1000), Some((500, 999)));
        assert_eq!(parse_range("-100", 1000), Some((900, 999)));
        assert_eq!(parse_range("900-5000", 1000), Some((900, 999)));
        assert_eq!(parse_range("5-4", 1000), None);
        assert_eq!(parse_range("x", 1000), None);
        assert_eq!(parse_range("0-1", 0), None);
    }
}
