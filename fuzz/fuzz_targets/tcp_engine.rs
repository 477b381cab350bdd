//! Coverage-guided search through the TCP engine's states: the input is a script of API calls
//! on both ends of a connection (writes, reads, closes, aborts, timers, clock steps, link
//! facts) and of what the wire does with each datagram (deliver in any order, drop,
//! duplicate). Nothing may panic, and each end must have read a prefix of what the other wrote.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::cc::CcKind;
use roam_proto::tcp::{Connection, LastLinkConfig, RecoveryMode, TcpConfig};
use roam_proto::Time;
use roam_wire::ConnId;

/// The bytes end `client` writes: a pattern distinct for each direction.
fn stream_byte(client: bool, offset: usize) -> u8 {
    let x = offset as u64 ^ if client { 0x5a } else { 0xa5 };
    (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

struct End {
    conn: Option<Connection>,
    written: usize,
    read: Vec<u8>,
    /// Read bytes already checked against the writer's stream.
    checked: usize,
}

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    let flags = s.byte();
    let cc = CcKind::ALL[usize::from(s.byte()) % CcKind::ALL.len()];
    let cfg = TcpConfig {
        sack: flags & 1 != 0,
        delayed_ack: flags & 2 != 0,
        eln: flags & 4 != 0,
        recovery: if flags & 8 != 0 {
            RecoveryMode::Probing
        } else {
            RecoveryMode::Standard
        },
        last_link: LastLinkConfig {
            max_cwnd: flags & 16 != 0,
            initial: flags & 32 != 0,
            per: flags & 64 != 0,
            ..LastLinkConfig::default()
        },
        report_link_info: flags & 128 != 0,
        mss: 100 + u16::from(s.byte()) * 5,
        ..TcpConfig::default()
    };
    let buffer_byte = s.byte();
    let cfg = Arc::new(TcpConfig {
        recv_buffer: u64::from(cfg.mss) * (1 + u64::from(buffer_byte % 40)),
        send_buffer: u64::from(cfg.mss) * (1 + u64::from(s.byte() % 40)),
        // The same byte's high bit turns on RFC 3042 Limited Transmit, and its next bit has
        // the PER heuristic count only the last 20 transmissions.
        limited_transmit: buffer_byte >= 128,
        last_link: LastLinkConfig {
            plr_window: u32::from(buffer_byte & 64 != 0) * 20,
            ..cfg.last_link
        },
        ..cfg
    });
    let mut now = Time::from_millis(1);
    let mut ends = [
        End {
            conn: Connection::connect(cfg.clone(), cc, ConnId(3), now).ok(),
            written: 0,
            read: Vec::new(),
            checked: 0,
        },
        End {
            conn: None,
            written: 0,
            read: Vec::new(),
            checked: 0,
        },
    ];
    let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    while !s.done() {
        let op = s.byte();
        let side = usize::from(op & 1); // 0: client, 1: server
        match (op >> 1) % 12 {
            0 => {
                let n = usize::from(s.u16());
                let e = &mut ends[side];
                if let Some(c) = e.conn.as_mut() {
                    let chunk: Vec<u8> = (e.written..e.written + n)
                        .map(|i| stream_byte(side == 0, i))
                        .collect();
                    e.written += c.write(&chunk);
                }
            }
            1 => {
                let n = usize::from(s.u16());
                let e = &mut ends[side];
                if let Some(c) = e.conn.as_mut() {
                    c.read(&mut e.read, n);
                }
            }
            2 => {
                if let Some(c) = ends[side].conn.as_mut() {
                    if s.byte() == 0 {
                        c.abort();
                    } else {
                        c.close();
                    }
                }
            }
            3 => now = now + Duration::from_micros(u64::from(s.u16()) * 100),
            4 => {
                let back = Duration::from_micros(u64::from(s.u16()));
                now = Time::from_nanos(now.as_nanos().saturating_sub(back.as_nanos() as u64));
            }
            5 => {
                if let Some(c) = ends[side].conn.as_mut() {
                    // Jump to the deadline (or handle timers early).
                    if let Some(t) = c.poll_timeout().filter(|_| s.byte() & 1 == 0) {
                        now = now.max(t);
                    }
                    c.handle_timeout(now);
                }
            }
            6..=8 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                match (op >> 1) % 12 {
                    6 => {
                        let (to_server, bytes) = wire.remove(i);
                        let e = &mut ends[usize::from(to_server)];
                        match e.conn.as_mut() {
                            Some(c) => {
                                let _ = c.handle_datagram(now, &bytes);
                            }
                            None if to_server => {
                                e.conn = Connection::accept(cfg.clone(), cc, now, &bytes).ok();
                            }
                            None => {}
                        }
                    }
                    7 => {
                        wire.remove(i);
                    }
                    _ => {
                        let copy = wire[i].clone();
                        wire.push(copy);
                    }
                }
            }
            9 => {
                if let Some(c) = ends[side].conn.as_mut() {
                    let info = s.link_info();
                    c.set_link_info(now, info);
                }
            }
            10 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                let bytes = wire[i].1.clone();
                if let Some(c) = ends[side].conn.as_mut() {
                    c.handle_corrupted(now, &bytes);
                }
            }
            _ => {}
        }
        for (k, e) in ends.iter_mut().enumerate() {
            if let Some(c) = e.conn.as_mut() {
                while c.poll_transmit(now, &mut buf).is_some() {
                    wire.push((k == 0, buf.clone()));
                }
                while c.poll_event().is_some() {}
            }
        }
        cap_in_flight(&mut wire);
        for (reader, writer) in [(0usize, 1usize), (1, 0)] {
            let written = ends[writer].written;
            let e = &mut ends[reader];
            assert!(e.read.len() <= written, "read more than was written");
            for (i, b) in e.read.iter().enumerate().skip(e.checked) {
                assert_eq!(*b, stream_byte(writer == 0, i), "stream corrupted at {i}");
            }
            e.checked = e.read.len();
        }
    }
});
