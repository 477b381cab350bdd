//! Byte streams (`roam_net::stream`) over loopback: integrity both ways, many small writes,
//! half-close, a connect to nothing, two streams on one listener. Every test is bounded by a
//! timeout far above what it needs; nothing asserts on speed.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use roam_net::stream::{Listener, Stream, StreamConfig};
use roam_net::{LocalSpec, NetError};
use support::{bounded, pattern};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn listen() -> (Listener, SocketAddr) {
    let local = LocalSpec::addr("127.0.0.1:0".parse().unwrap());
    let listener = Listener::bind(&[local], StreamConfig::default()).unwrap();
    let addr = listener.local_addr(0).unwrap();
    (listener, addr)
}

/// Writes `data` and closes, while reading everything the peer sends; returns that.
async fn exchange(s: Stream, data: Vec<u8>) -> (Vec<u8>, Stream) {
    let (mut rd, mut wr) = tokio::io::split(s);
    let writer = async move {
        wr.write_all(&data).await.unwrap();
        wr.shutdown().await.unwrap();
        wr
    };
    let reader = async move {
        let mut got = Vec::new();
        rd.read_to_end(&mut got).await.unwrap();
        (got, rd)
    };
    let (wr, (got, rd)) = tokio::join!(writer, reader);
    (got, rd.unsplit(wr))
}

#[tokio::test]
async fn megabytes_arrive_intact_both_ways_at_once() {
    bounded(async {
        let (mut listener, addr) = listen();
        let up = pattern(3 << 20, 1);
        let down = pattern(2 << 20, 2);
        let (up2, down2) = (up.clone(), down.clone());
        let server = tokio::spawn(async move {
            let s = listener.accept().await.unwrap();
            let (got, s) = exchange(s, down2).await;
            assert!(got == up2, "client → server bytes differ");
            s.stats()
        });
        let s = Stream::connect(addr, StreamConfig::default())
            .await
            .unwrap();
        assert_eq!(s.peer_addr(), addr);
        let (got, s) = exchange(s, up.clone()).await;
        assert!(got == down, "server → client bytes differ");
        let server_stats = server.await.unwrap();
        let stats = s.stats();
        assert_eq!(stats.bytes_written, up.len() as u64);
        assert_eq!(stats.bytes_read, down.len() as u64);
        assert_eq!(stats.bytes_received, down.len() as u64);
        assert_eq!(server_stats.bytes_written, down.len() as u64);
        assert_eq!(server_stats.bytes_received, up.len() as u64);
        assert!(stats.srtt.is_some() && stats.cwnd > 0 && stats.datagrams_sent > 0);
        // The client's bytes were all acknowledged: the server read them to the FIN.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while s.stats().bytes_acked < up.len() as u64 {
            assert!(tokio::time::Instant::now() < deadline, "{:?}", s.stats());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn many_small_writes_arrive_in_order() {
    bounded(async {
        let (mut listener, addr) = listen();
        let data = pattern(400_000, 3);
        let expected = data.clone();
        let server = tokio::spawn(async move {
            let mut s = listener.accept().await.unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).await.unwrap();
            got
        });
        let mut s = Stream::connect(addr, StreamConfig::default())
            .await
            .unwrap();
        // 1..=37-byte writes: ~20 000 of them.
        let mut at = 0;
        let mut size = 1;
        while at < data.len() {
            let end = (at + size).min(data.len());
            s.write_all(&data[at..end]).await.unwrap();
            at = end;
            size = size % 37 + 1;
        }
        s.shutdown().await.unwrap();
        let got = server.await.unwrap();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected, "the bytes differ");
    })
    .await;
}

#[tokio::test]
async fn a_peer_close_reads_as_end_of_stream_and_the_other_direction_stays_open() {
    bounded(async {
        let (mut listener, addr) = listen();
        let data = pattern(300_000, 4);
        let expected = data.clone();
        let server = tokio::spawn(async move {
            let mut s = listener.accept().await.unwrap();
            s.write_all(b"bye").await.unwrap();
            s.shutdown().await.unwrap();
            // Writing after the shutdown is refused.
            assert!(s.write_all(b"more").await.is_err());
            let mut got = Vec::new();
            s.read_to_end(&mut got).await.unwrap();
            got
        });
        let mut s = Stream::connect(addr, StreamConfig::default())
            .await
            .unwrap();
        let mut first = Vec::new();
        s.read_to_end(&mut first).await.unwrap();
        assert_eq!(first, b"bye");
        let mut buf = [0u8; 16];
        assert_eq!(s.read(&mut buf).await.unwrap(), 0, "end of stream again");
        // Half-closed: this direction still carries bytes.
        s.write_all(&data).await.unwrap();
        s.shutdown().await.unwrap();
        assert!(server.await.unwrap() == expected);
    })
    .await;
}

#[tokio::test]
async fn connecting_to_nothing_fails_in_bounded_time() {
    // A port nothing listens on: bound, then released.
    let addr = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = StreamConfig {
        connect_timeout: Duration::from_secs(1),
        ..StreamConfig::default()
    };
    let started = tokio::time::Instant::now();
    let result = bounded(Stream::connect(addr, config)).await;
    let Err(NetError::Io(e)) = result else {
        panic!("expected an I/O error, got {result:?}");
    };
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
    assert!(e.to_string().contains(&addr.to_string()), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5), "{e}");
}

#[tokio::test]
async fn one_listener_serves_two_streams_at_once() {
    bounded(async {
        let (mut listener, addr) = listen();
        // An echo server: each accepted stream is served by its own task.
        let server = tokio::spawn(async move {
            let mut tasks = Vec::new();
            for _ in 0..2 {
                let s = listener.accept().await.unwrap();
                tasks.push(tokio::spawn(async move {
                    let (mut rd, mut wr) = tokio::io::split(s);
                    tokio::io::copy(&mut rd, &mut wr).await.unwrap();
                    wr.shutdown().await.unwrap();
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
        let clients = (0..2u32).map(|i| {
            tokio::spawn(async move {
                let data = pattern(1 << 20, 10 + i);
                let s = Stream::connect(addr, StreamConfig::default())
                    .await
                    .unwrap();
                let local = s.local_addr();
                let (got, _) = exchange(s, data.clone()).await;
                assert!(got == data, "stream {i}: the echo differs");
                local
            })
        });
        let mut locals = Vec::new();
        for c in clients.collect::<Vec<_>>() {
            locals.push(c.await.unwrap());
        }
        assert_ne!(locals[0], locals[1], "two distinct client sockets");
        server.await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_connection_beyond_the_backlog_is_reset_and_reads_fail_cleanly() {
    bounded(async {
        let local = LocalSpec::addr("127.0.0.1:0".parse().unwrap());
        let config = StreamConfig {
            backlog: 1,
            ..StreamConfig::default()
        };
        let mut listener = Listener::bind(&[local], config).unwrap();
        let addr = listener.local_addr(0).unwrap();
        // Nobody accepts: the first completed handshake fills the backlog, the second is
        // reset (which one is first is the server's arrival order).
        let mut a = Stream::connect(addr, StreamConfig::default()).await.unwrap();
        let mut b = Stream::connect(addr, StreamConfig::default()).await.unwrap();
        let wait = Duration::from_secs(3);
        let (mut ba, mut bb) = ([0u8; 8], [0u8; 8]);
        let (ra, rb) = tokio::join!(
            tokio::time::timeout(wait, a.read(&mut ba)),
            tokio::time::timeout(wait, b.read(&mut bb))
        );
        let reset = |r: &Result<std::io::Result<usize>, _>| {
            matches!(r, Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionReset)
        };
        assert!(
            reset(&ra) ^ reset(&rb),
            "exactly one stream is reset: {ra:?} {rb:?}"
        );
        // The reset one refuses writes with the same error; the other is accepted and works.
        let (mut lost, mut kept) = if reset(&ra) { (a, b) } else { (b, a) };
        let e = lost.write_all(b"x").await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset);
        let mut s = listener.accept().await.unwrap();
        assert_eq!(Some(s.peer_addr()), kept.local_addr().map(|l| {
            SocketAddr::new("127.0.0.1".parse().unwrap(), l.port())
        }));
        kept.write_all(b"hello").await.unwrap();
        kept.shutdown().await.unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, b"hello");
    })
    .await;
}

#[tokio::test]
async fn a_silent_peer_ends_the_stream_with_timed_out_after_the_idle_timeout() {
    bounded(async {
        let (mut listener, addr) = listen();
        let mut config = StreamConfig::default();
        config.endpoint.idle_timeout = Some(Duration::from_millis(500));
        let mut s = Stream::connect(addr, config).await.unwrap();
        // The server accepts and then says nothing.
        let held = listener.accept().await.unwrap();
        let started = tokio::time::Instant::now();
        let mut buf = [0u8; 8];
        let e = s.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        assert!(started.elapsed() < Duration::from_secs(10), "{e}");
        assert_eq!(
            s.write_all(b"x").await.unwrap_err().kind(),
            std::io::ErrorKind::TimedOut
        );
        drop(held);
    })
    .await;
}
