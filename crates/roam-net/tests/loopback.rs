//! The runtime over loopback: files arrive intact over RCP and TCP, a fetch survives the loss
//! of its server, and hostile datagrams at a server corrupt nothing. Every loop is bounded by
//! a timeout far above what it needs; nothing asserts on speed.

mod support;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use roam_net::{fetch, fetch_tcp, Driver, FetchPlan, LocalSpec, NetConn, Server};
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{EndpointConfig, EndpointEvent, NoAcceptor, PathAddrs, PathId};
use roam_proto::tcp;
use roam_wire::ConnId;
use support::{
    abort_at, assert_accounted, bounded, dir_with, loopback, pattern, rcp_syn, serve, serve_until,
    tcp_syn,
};

#[tokio::test(flavor = "current_thread")]
async fn a_multi_megabyte_file_arrives_intact_over_rcp() {
    let (dir, data) = dir_with("big.bin", 6 << 20, 1);
    let (addr, task) = serve(dir.path());
    let out = dir.path().join("copy.bin");
    let plan = FetchPlan::new("big.bin", vec![addr], vec![loopback()]);
    let report = bounded(fetch(&plan, &out, |_| {})).await.unwrap();
    assert_eq!(report.bytes, data.len() as u64);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(!dir.path().join("copy.bin.roam-part").exists());
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_missing_object_fails_cleanly_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, task) = serve(dir.path());
    let out = dir.path().join("none");
    let mut plan = FetchPlan::new("absent/passwd", vec![addr], vec![loopback()]);
    plan.stall = Duration::from_millis(500);
    plan.max_attempts = 2;
    let e = bounded(fetch(&plan, &out, |_| {})).await.unwrap_err();
    assert!(e.to_string().contains("cannot fetch"), "{e}");
    assert!(!out.exists());
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_fetch_continues_from_the_second_server_when_the_first_dies() {
    let (dir, data) = dir_with("f", 8 << 20, 2);
    let (a, task_a) = serve(dir.path());
    let (b, task_b) = serve(dir.path());
    let (got, watcher) = abort_at(2 << 20, task_a);
    let out = dir.path().join("copy");
    let mut plan = FetchPlan::new("f", vec![a, b], vec![loopback()]);
    plan.stall = Duration::from_millis(800);
    let report = bounded(fetch(&plan, &out, |p| {
        got.store(p.bytes, Ordering::Relaxed)
    }))
    .await
    .unwrap();
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    // Two servers: an R²CP fetch with a pipe to each; the second delivered.
    assert!(
        report.per_path.iter().any(|p| p.1 == b && p.2 > 0),
        "{report:?}"
    );
    assert_accounted(&report, data.len());
    watcher.abort();
    task_b.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn garbage_truncated_and_replayed_datagrams_corrupt_nothing() {
    let (dir, data) = dir_with("f", 3 << 20, 3);
    let (addr, task) = serve(dir.path());
    // A hostile sender: random bytes, truncated and replayed copies of valid requests
    // (RCP requests for the same object with made-up connection ids).
    let hostile = tokio::spawn(async move {
        let sock = tokio::net::UdpSocket::bind(loopback()).await.unwrap();
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let syn = rcp_syn(42);
        for i in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 1500) as usize;
            let mut d: Vec<u8> = (0..len).map(|j| (x >> (j % 56)) as u8).collect();
            match i % 4 {
                0 => {}
                1 => d = syn[..(x as usize % syn.len())].to_vec(),
                2 => d = syn.clone(),
                _ => {
                    d.truncate(12);
                    if d.len() == 12 {
                        d[0] = roam_wire::VERSION;
                    }
                }
            }
            let _ = sock.send_to(&d, addr).await;
            if i % 64 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    });
    let out = dir.path().join("copy");
    let plan = FetchPlan::new("f", vec![addr], vec![loopback()]);
    let report = bounded(fetch(&plan, &out, |_| {})).await.unwrap();
    assert_eq!(report.bytes, data.len() as u64);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    let _ = hostile.await;
    assert!(!task.is_finished(), "the server survived");
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_multi_megabyte_stream_arrives_intact_over_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(5 << 20, 4);
    let mut server = Server::with_config(
        dir.path(),
        &[LocalSpec::addr(loopback())],
        EndpointConfig::default(),
        CcKind::NewReno,
    )
    .unwrap();
    let addr = server.local_addr(0).unwrap();
    // The server application: read every accepted TCP stream to its end.
    let receiving = tokio::spawn(async move {
        let mut got = Vec::new();
        let mut conn = None;
        loop {
            server.step().await;
            let ep = server.driver().endpoint();
            while let Some(ev) = ep.poll_event() {
                match ev {
                    EndpointEvent::Accepted(h) => conn = Some(h),
                    EndpointEvent::Removed {
                        conn: NetConn::Tcp(mut c),
                        ..
                    } => {
                        c.read(&mut got, usize::MAX);
                        return got;
                    }
                    EndpointEvent::Removed { .. } => {}
                }
            }
            if let Some(NetConn::Tcp(c)) = conn.and_then(|h| ep.connection_mut(h)) {
                c.read(&mut got, usize::MAX);
                let mut eof = false;
                while let Some(ev) = c.poll_event() {
                    eof |= ev == tcp::Event::Eof;
                }
                if eof {
                    c.close();
                    return got;
                }
            }
        }
    });
    let mut client: Driver<NoAcceptor<NetConn>> = Driver::bind(
        &[LocalSpec::addr(loopback())],
        EndpointConfig::default(),
        NoAcceptor::default(),
    )
    .unwrap();
    let now = client.now();
    let c = tcp::Connection::connect(
        Arc::new(roam_net::engines::tcp_config()),
        CcKind::NewReno,
        ConnId(roam_net::random_u64().unwrap()),
        roam_net::random_u64().unwrap() % tcp::MAX_ISN,
        now,
    )
    .unwrap();
    let path = PathAddrs {
        path: PathId::PRIMARY,
        local: 0,
        remote: addr,
    };
    let h = client
        .endpoint()
        .insert(now, NetConn::Tcp(Box::new(c)), &[path])
        .unwrap();
    let sending = async {
        let mut written = 0;
        let mut closed = false;
        loop {
            client.step(Duration::from_millis(20)).await;
            let Some(NetConn::Tcp(c)) = client.endpoint().connection_mut(h) else {
                return;
            };
            written += c.write(&data[written..]);
            if written == data.len() && !closed {
                c.close();
                closed = true;
            }
        }
    };
    let got = bounded(async {
        tokio::select! {
            got = receiving => got.unwrap(),
            _ = sending => panic!("the client connection went away first"),
        }
    })
    .await;
    assert_eq!(got.len(), data.len());
    assert!(got == data, "content differs");
}

/// A spoofer's view: SYNs from an address that never echoes the token. Every reply is no
/// larger than the SYN that caused it, and the server keeps no connection.
#[tokio::test(flavor = "current_thread")]
async fn handshake_replies_never_amplify_and_keep_no_state() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), pattern(1 << 20, 5)).unwrap();
    let mut server = Server::bind(dir.path(), &[LocalSpec::addr(loopback())]).unwrap();
    let addr = server.local_addr(0).unwrap();
    let spoofer = tokio::spawn(async move {
        let sock = tokio::net::UdpSocket::bind(loopback()).await.unwrap();
        let mut sent = Vec::new();
        for i in 0..200u64 {
            let syn = if i % 2 == 0 {
                rcp_syn(1000 + i)
            } else {
                tcp_syn(1000 + i, i)
            };
            sock.send_to(&syn, addr).await.unwrap();
            sent.push(syn.len());
        }
        // Replies: (conn id, length), read until quiet.
        let mut replies = Vec::new();
        let mut buf = vec![0u8; 65_535];
        while let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(500), sock.recv(&mut buf)).await
        {
            let id = roam_wire::Header::peek_conn_id(&buf[..n]).unwrap();
            replies.push((id.0, n));
        }
        (sent, replies)
    });
    let (sent, replies) = serve_until(&mut server, spoofer).await;
    assert!(!replies.is_empty(), "the server answers handshakes");
    for (id, len) in &replies {
        let i = usize::try_from(id - 1000).unwrap();
        assert!(
            *len <= sent[i],
            "reply of {len} bytes to a SYN of {}",
            sent[i]
        );
    }
    assert_eq!(
        server.driver().endpoint().len(),
        0,
        "no state before the echo"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_multi_megabyte_file_arrives_intact_over_tcp_get() {
    let (dir, data) = dir_with("big.bin", 7 << 20, 5);
    let (addr, task) = serve(dir.path());
    let out = dir.path().join("copy.bin");
    let plan = FetchPlan::new("big.bin", vec![addr], vec![loopback()]);
    let mut calls = 0u32;
    let report = bounded(fetch_tcp(&plan, &out, |_| calls += 1))
        .await
        .unwrap();
    assert_eq!(report.bytes, data.len() as u64);
    assert_eq!(
        report.per_path,
        vec![(report.per_path[0].0, addr, data.len() as u64)]
    );
    assert_eq!(*blake3::hash(&data).as_bytes(), report.digest);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert!(!dir.path().join("copy.bin.roam-part").exists());
    assert!(calls > 0, "no progress reported");
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_tcp_get_of_a_missing_object_fails_at_once_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, task) = serve(dir.path());
    let out = dir.path().join("none");
    let plan = FetchPlan::new("absent/passwd", vec![addr], vec![loopback()]);
    let e = bounded(fetch_tcp(&plan, &out, |_| {})).await.unwrap_err();
    assert!(e.to_string().contains("no such object"), "{e}");
    assert!(!out.exists());
    assert!(!dir.path().join("none.roam-part").exists());
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn a_tcp_get_continues_from_the_next_server_when_the_first_lacks_the_object() {
    let (empty, full) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let data = pattern(1 << 20, 6);
    std::fs::write(full.path().join("f"), &data).unwrap();
    let (a, ta) = serve(empty.path());
    let (b, tb) = serve(full.path());
    let out = full.path().join("copy");
    let plan = FetchPlan::new("f", vec![a, b], vec![loopback()]);
    let report = bounded(fetch_tcp(&plan, &out, |_| {})).await.unwrap();
    assert_eq!(report.switches, 1);
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    ta.abort();
    tb.abort();
}

/// A GSO send of SYNs and garbage of one size arrives at the server coalesced (GRO, where the
/// kernel has it): the driver splits it at its stride, answers each SYN on its own and drops
/// each garbage segment on its own.
#[tokio::test(flavor = "current_thread")]
async fn a_coalesced_receive_is_split_and_each_segment_judged_alone() {
    use quinn_udp::{Transmit, UdpSockRef, UdpSocketState};

    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::bind(dir.path(), &[LocalSpec::addr(loopback())]).unwrap();
    let addr = server.local_addr(0).unwrap();
    const SYNS: u64 = 8;
    let spoofer = tokio::spawn(async move {
        let sock = tokio::net::UdpSocket::bind(loopback()).await.unwrap();
        let state = UdpSocketState::new(UdpSockRef::from(&sock)).unwrap();
        let mut segments: Vec<Vec<u8>> = Vec::new();
        for i in 0..SYNS {
            let syn = tcp_syn(5000 + i, i);
            let len = syn.len();
            segments.push(syn);
            // Garbage of the same length between the SYNs: a wrong version, then noise.
            let mut junk = vec![0xA5u8; len];
            junk[0] = 0xFF;
            segments.push(junk);
        }
        let len = segments[0].len();
        assert!(segments.iter().all(|s| s.len() == len), "SYNs of one size");
        // The last segment may be shorter: a truncated SYN.
        let mut short = segments[0].clone();
        short.truncate(len / 2);
        segments.push(short);
        let total = segments.len();
        let gso = state.max_gso_segments() >= total;
        if gso {
            let contents = segments.concat();
            let t = Transmit {
                destination: addr,
                ecn: None,
                contents: &contents,
                segment_size: Some(len),
                src_ip: None,
            };
            sock.writable().await.unwrap();
            sock.try_io(tokio::io::Interest::WRITABLE, || {
                state.try_send(UdpSockRef::from(&sock), &t)
            })
            .unwrap();
        } else {
            for s in &segments {
                sock.send_to(s, addr).await.unwrap();
            }
        }
        // The server's replies may arrive coalesced too (this socket has GRO on): split them.
        let mut replies = Vec::new();
        let mut buf = vec![0u8; 65_535];
        let mut meta = [quinn_udp::RecvMeta::default()];
        while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(500), async {
            loop {
                sock.readable().await?;
                let mut bufs = [std::io::IoSliceMut::new(&mut buf)];
                match sock.try_io(tokio::io::Interest::READABLE, || {
                    state.recv(UdpSockRef::from(&sock), &mut bufs, &mut meta)
                }) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    r => break r,
                }
            }
        })
        .await
        {
            assert_eq!(n, 1);
            let stride = if meta[0].stride == 0 {
                meta[0].len
            } else {
                meta[0].stride
            };
            for reply in buf[..meta[0].len].chunks(stride) {
                replies.push(roam_wire::Header::peek_conn_id(reply).unwrap().0);
            }
        }
        (total, gso, replies)
    });
    let (total, gso, mut replies) = serve_until(&mut server, spoofer).await;
    replies.sort_unstable();
    assert_eq!(
        replies,
        (5000..5000 + SYNS).collect::<Vec<_>>(),
        "one reply per SYN, none to garbage"
    );
    let stats = server.driver().stats();
    assert_eq!(stats.received, total as u64, "every segment counted once");
    if gso {
        assert!(
            stats.coalesced >= 1 && stats.recv_calls < total as u64,
            "loopback delivers a GSO send coalesced to a GRO socket: {stats:?}"
        );
    }
    assert_eq!(
        server.driver().endpoint().len(),
        0,
        "no state before the echo"
    );
}
