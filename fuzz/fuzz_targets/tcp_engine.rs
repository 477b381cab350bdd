//! Coverage-guided search through the TCP engine's states: the input is a script of API calls
//! on both ends of a connection (writes, reads, closes, aborts, timers, clock steps, link
//! facts), of what the wire does with each datagram (deliver in any order, drop, duplicate),
//! and of what an attacker does at any moment, before the handshake as after it: inject
//! arbitrary bytes, forge segments with any header values and any connection id (spoofing the
//! client's address or from its own), mutate a datagram in flight, replay one delivered
//! before. The server is a stateless [`TcpAcceptor`] until a segment echoes its SYN cookie.
//!
//! Nothing may panic; the acceptor never answers with more bytes than it got and never opens a
//! connection for the attacker's own address; neither end's receive buffers pass their bounds;
//! and as long as the attacker has not touched a datagram naming the connection, each end has
//! read a prefix of what the other wrote.
#![no_main]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::tcp::{
    Connection, LastLinkConfig, RecoveryMode, TcpAcceptor, TcpConfig, MAX_ISN,
};
use roam_proto::Time;
use roam_wire::{
    ConnId, Flags, LastLinkReport, LinkInfoReport, Options, ProbeKind, ProbeOption, SackBlock,
    Segment,
};

/// The real client's address, and the attacker's own.
const CLIENT: &str = "client";
const ATTACKER: &str = "attacker";
/// The connection's id.
const CONN: ConnId = ConnId(3);
/// Genuine datagrams remembered for replays.
const HISTORY: usize = 64;

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

/// A datagram on the wire: to the server?, its bytes, the address it claims to come from
/// (the attacker never sees what is sent to its own address, so it cannot complete a
/// handshake there).
type InFlight = (bool, Vec<u8>, &'static str);

/// Both ends, the server's acceptor and what the attacker has done.
struct World {
    ends: [End; 2],
    acceptor: TcpAcceptor,
    key: TokenKey,
    wire: Vec<InFlight>,
    history: Vec<InFlight>,
    /// The attacker delivered a datagram it made or changed that names the connection.
    tainted: bool,
    /// The server's ISN, once seen on the wire (a SYN-ACK's sequence number).
    cookie: u64,
}

impl World {
    /// Hands `bytes` from `from` to one end; the server's acceptor answers for a server that
    /// holds no connection yet.
    fn deliver(&mut self, now: Time, to_server: bool, bytes: &[u8], from: &'static str) {
        let e = &mut self.ends[usize::from(to_server)];
        if let Some(c) = e.conn.as_mut() {
            let _ = c.handle_datagram(now, bytes);
            return;
        }
        if !to_server {
            return;
        }
        let mut out = Vec::new();
        match self.acceptor.on_unknown(now, &self.key, from, bytes, &mut out) {
            Unknown::Accept(c) => {
                assert_eq!(from, CLIENT, "a connection opened for the attacker's address");
                e.conn = Some(c);
            }
            Unknown::Reply { len } | Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "answered {len} bytes to {}", bytes.len());
                assert_eq!(len, out.len());
                if from == CLIENT {
                    if let Ok(seg) = Segment::decode(&out) {
                        if seg.flags.contains(Flags::SYN) && seg.conn_id == CONN {
                            self.cookie = seg.seq;
                        }
                    }
                    self.wire.push((false, out, CLIENT));
                }
            }
            Unknown::Drop => {}
        }
    }

    /// The numbers an attacker would aim at.
    fn bases(&self) -> [u64; 4] {
        let isn = |e: &End| e.conn.as_ref().map_or(0, Connection::initial_seq);
        let nxt = |e: &End| e.conn.as_ref().map_or(0, |c| c.sender().snd_nxt());
        [
            isn(&self.ends[0]),
            self.cookie,
            nxt(&self.ends[0]),
            nxt(&self.ends[1]),
        ]
    }
}

/// A segment with every field read from the script, aimed at the connection's numbers.
fn forge(s: &mut Script<'_>, bases: &[u64]) -> Vec<u8> {
    let conn_id = if s.byte() & 1 == 0 {
        CONN
    } else {
        ConnId(s.u64())
    };
    let flags = Flags(s.u16() & Flags::ALL.0);
    let seq = s.number(bases);
    let ack = s.number(bases);
    let window = match s.byte() % 4 {
        0 => 0,
        1 => u32::MAX,
        _ => s.u32(),
    };
    let (ts_val, ts_ecr) = (s.u32(), s.u32());
    let which = s.byte();
    let mut options = Options {
        mss: (which & 1 != 0).then(|| s.u16()),
        sack_permitted: which & 2 != 0,
        probe: (which & 4 != 0).then(|| ProbeOption {
            kind: match s.byte() % 4 {
                0 => ProbeKind::Probe1,
                1 => ProbeKind::Pr1Ack,
                2 => ProbeKind::Probe2,
                _ => ProbeKind::Pr2Ack,
            },
            id: u32::from(s.byte() % 8),
        }),
        last_link: (which & 8 != 0).then(|| LastLinkReport {
            bandwidth_bps: s.u64(),
            per_ppm: s.u32() % 1_000_001,
        }),
        link_info: (which & 16 != 0).then(|| LinkInfoReport {
            p_w_ppm: s.u32() % 1_000_001,
            d_w_us: s.u32(),
            handoff_count: s.u16(),
        }),
        ..Options::default()
    };
    for _ in 0..(which >> 5) % 5 {
        let (a, b) = (s.number(bases), s.number(bases));
        if a != b {
            options.push_sack(SackBlock {
                start: a.min(b),
                end: a.max(b),
            });
        }
    }
    let len = usize::from(s.u16()) % 3000;
    let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
    let mut out = Vec::new();
    Segment {
        conn_id,
        flags,
        seq,
        ack,
        window,
        ts_val,
        ts_ecr,
        options,
        payload: &payload,
    }
    .encode(&mut out);
    out
}

/// Does `bytes` name the connection (so that delivering a forged copy may corrupt it)?
fn names_conn(bytes: &[u8]) -> bool {
    Segment::decode(bytes).is_ok_and(|s| s.conn_id == CONN)
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
    // The client's ISN: anywhere up to 2^62, often at the top of that range.
    let isn = match s.byte() % 4 {
        0 => MAX_ISN - u64::from(s.u16()),
        _ => s.u64() & MAX_ISN,
    };
    let key = TokenKey::new(s.u64().to_le_bytes().repeat(2).try_into().unwrap_or([0; 16]));
    let Ok(acceptor) = TcpAcceptor::new(cfg.clone(), cc) else {
        return;
    };
    let mut now = Time::from_millis(1);
    let mut w = World {
        ends: [
            End {
                conn: Connection::connect(cfg.clone(), cc, CONN, isn, now).ok(),
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
        ],
        acceptor,
        key,
        wire: Vec::new(),
        history: Vec::new(),
        tainted: false,
        cookie: 0,
    };
    let mut buf = Vec::new();
    while !s.done() {
        let op = s.byte();
        let side = usize::from(op & 1); // 0: client, 1: server
        match (op >> 1) % 16 {
            0 => {
                let n = usize::from(s.u16());
                let e = &mut w.ends[side];
                if let Some(c) = e.conn.as_mut() {
                    let chunk: Vec<u8> = (e.written..e.written + n)
                        .map(|i| stream_byte(side == 0, i))
                        .collect();
                    e.written += c.write(&chunk);
                }
            }
            1 => {
                let n = usize::from(s.u16());
                let e = &mut w.ends[side];
                if let Some(c) = e.conn.as_mut() {
                    c.read(&mut e.read, n);
                }
            }
            2 => {
                if let Some(c) = w.ends[side].conn.as_mut() {
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
                if let Some(c) = w.ends[side].conn.as_mut() {
                    // Jump to the deadline (or handle timers early).
                    if let Some(t) = c.poll_timeout().filter(|_| s.byte() & 1 == 0) {
                        now = now.max(t);
                    }
                    c.handle_timeout(now);
                }
            }
            6..=8 if !w.wire.is_empty() => {
                let i = usize::from(s.u16()) % w.wire.len();
                match (op >> 1) % 16 {
                    6 => {
                        let (to_server, bytes, from) = w.wire.remove(i);
                        w.deliver(now, to_server, &bytes, from);
                        if w.history.len() == HISTORY {
                            w.history.remove(0);
                        }
                        w.history.push((to_server, bytes, from));
                    }
                    7 => {
                        w.wire.remove(i);
                    }
                    _ => {
                        let copy = w.wire[i].clone();
                        w.wire.push(copy);
                    }
                }
            }
            9 => {
                if let Some(c) = w.ends[side].conn.as_mut() {
                    let info = s.link_info();
                    c.set_link_info(now, info);
                }
            }
            10 if !w.wire.is_empty() => {
                let i = usize::from(s.u16()) % w.wire.len();
                let bytes = w.wire[i].1.clone();
                if let Some(c) = w.ends[side].conn.as_mut() {
                    c.handle_corrupted(now, &bytes);
                }
            }
            11 => {
                // Arbitrary bytes, to either end, spoofing the client or not.
                let len = usize::from(s.byte());
                let bytes = s.take(len).to_vec();
                let from = if s.byte() & 1 == 0 { CLIENT } else { ATTACKER };
                w.tainted |= names_conn(&bytes);
                w.deliver(now, side == 1, &bytes, from);
            }
            12 => {
                // A forged segment, aimed at the connection's own numbers.
                let bases = w.bases();
                let bytes = forge(&mut s, &bases);
                let from = if s.byte() & 1 == 0 { CLIENT } else { ATTACKER };
                w.tainted |= names_conn(&bytes);
                w.deliver(now, side == 1, &bytes, from);
            }
            13 if !w.wire.is_empty() => {
                // Change a datagram in flight: set bytes, cut or extend it.
                let i = usize::from(s.u16()) % w.wire.len();
                let mut bytes = w.wire[i].1.clone();
                for _ in 0..1 + s.byte() % 8 {
                    let at = usize::from(s.u16());
                    let v = s.byte();
                    match v % 8 {
                        0 => bytes.truncate(at % (bytes.len() + 1)),
                        1 => bytes.extend_from_slice(s.take(usize::from(v >> 3))),
                        _ if !bytes.is_empty() => {
                            let n = bytes.len();
                            bytes[at % n] = s.byte();
                        }
                        _ => {}
                    }
                }
                w.tainted |= names_conn(&bytes);
                w.wire[i].1 = bytes;
            }
            14 if !w.history.is_empty() => {
                // A replay of a genuine datagram, from where it came or from the attacker.
                let i = usize::from(s.u16()) % w.history.len();
                let (to_server, bytes, from) = w.history[i].clone();
                let from = if s.byte() & 1 == 0 { from } else { ATTACKER };
                w.deliver(now, to_server, &bytes, from);
            }
            _ => {}
        }
        for (k, e) in w.ends.iter_mut().enumerate() {
            if let Some(c) = e.conn.as_mut() {
                while c.poll_transmit(now, &mut buf).is_some() {
                    w.wire.push((k == 0, buf.clone(), CLIENT));
                }
                while c.poll_event().is_some() {}
                let r = c.receiver();
                assert!(r.buffered() as u64 <= cfg.recv_buffer, "receive buffer overrun");
                let (pieces, max) = r.out_of_order_pieces();
                assert!(pieces <= max, "{pieces} out-of-order pieces, at most {max}");
            }
        }
        cap_in_flight(&mut w.wire);
        if w.tainted {
            continue;
        }
        for (reader, writer) in [(0usize, 1usize), (1, 0)] {
            let written = w.ends[writer].written;
            let e = &mut w.ends[reader];
            assert!(e.read.len() <= written, "read more than was written");
            for (i, b) in e.read.iter().enumerate().skip(e.checked) {
                assert_eq!(*b, stream_byte(writer == 0, i), "stream corrupted at {i}");
            }
            e.checked = e.read.len();
        }
    }
});
