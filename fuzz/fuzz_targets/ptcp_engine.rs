//! Coverage-guided search through the pTCP engine's states (ptcp.txt §3–4): the input is a
//! script of API calls on both ends of one pTCP connection striped over one to three pipes,
//! each with its own congestion controller (writes, reads, the end of the stream, timers,
//! clock steps, corruption reports for TCP-ELN), of what each pipe's wire does with each
//! datagram (deliver in any order, drop, duplicate; a pipe black-holed), of honest runs that
//! carry the transfer forward (so that every state is reached: pipes just set up,
//! mid-transfer with windows shrinking and data unbound, redundant stripes, the pFIN and the
//! probes after it), and of what an attacker does at any moment: inject arbitrary bytes,
//! forge pTCP datagrams with any header values (pSRC, pDST, pSEQ, pACK, pFIN) around any pipe
//! segment (any connection id, flags, sequence and acknowledgement numbers, window, SACK
//! blocks, payload), change a datagram in flight, replay one delivered before.
//!
//! Half the runs (a bit of the first byte) open the connection by pTCP's handshake (§4.4):
//! the sender connects, the receiving host answers through a `PtcpAcceptor` (stateless SYN
//! cookies; the first pipe's completing segment makes the connection, the others join it,
//! each path its own peer address), and pipes close by their FIN exchanges; the other half
//! start with pipes established. Injected and changed datagrams then reach every state of the
//! handshake and the teardown too.
//!
//! Nothing may panic; the receiver never holds more than its buffer; no handshake reply is
//! larger than the datagram that earned it; and as long as the attacker has not touched a
//! datagram naming the connection, the receiver has read a prefix of what the sender wrote,
//! and no more than it wrote.
#![no_main]

mod common;

use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::ptcp::{PtcpAcceptor, PtcpReceiver, PtcpSender};
use roam_proto::tcp::{RecoveryMode, TcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, Flags, Options, PtcpHeader, PtcpSegment, SackBlock, Segment};

/// The aggregate connection's identifiers: the sender's and the receiver's (pSRC/pDST).
const SENDER: ConnId = ConnId(0x5e);
const RECEIVER: ConnId = ConnId(0x7e);
/// Pipe `k`'s connection id.
const PIPE_BASE: u64 = 100;
/// Genuine datagrams remembered for replays.
const HISTORY: usize = 64;
/// Rounds of one honest run at most.
const PUMP_ROUNDS: u32 = 64;

/// The stream's bytes.
fn stream_byte(offset: usize) -> u8 {
    ((offset as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

/// A datagram on the wire: to the receiver?, its pipe's path, its bytes.
type InFlight = (bool, u32, Vec<u8>);

/// The receiving host: its connection once there is one, and (with the handshake) the
/// acceptor that answers datagrams naming no pipe held; the peer address of path `k` is `k`.
struct Server {
    conn: PtcpReceiver,
    opened: bool,
    acceptor: Option<(PtcpAcceptor, TokenKey)>,
}

impl Server {
    /// Handles a datagram that arrived on `path`; a handshake reply goes into `replies`.
    fn handle(&mut self, now: Time, path: u32, bytes: &[u8], replies: &mut Vec<InFlight>) {
        let Some((acceptor, key)) = self.acceptor.as_mut() else {
            self.conn.handle_datagram(now, bytes);
            return;
        };
        let held = roam_wire::Header::peek_conn_id(bytes)
            .is_ok_and(|id| self.opened && self.conn.pipe_ids().any(|(_, p)| p == id));
        if held {
            self.conn.handle_datagram(now, bytes);
            return;
        }
        if let Some(conn) = acceptor.join_target(now, key, &path, bytes) {
            if self.opened && conn == self.conn.ids().0 {
                let _ = self.conn.join(now, bytes);
                return;
            }
        }
        let mut out = Vec::new();
        match acceptor.on_unknown(now, key, &path, bytes, &mut out) {
            Unknown::Reply { len } | Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "a reply of {len} to {} bytes", bytes.len());
                replies.push((false, path, out[..len].to_vec()));
            }
            Unknown::Accept(c) => {
                if !self.opened {
                    self.conn = c;
                    self.opened = true;
                }
            }
            Unknown::Drop => {}
        }
    }
}

struct World {
    tx: PtcpSender,
    rx: Server,
    pipes: u32,
    /// Paths that drop everything.
    black: [bool; 3],
    written: usize,
    read: Vec<u8>,
    checked: usize,
    wire: Vec<InFlight>,
    history: Vec<InFlight>,
    /// The attacker delivered a datagram it made or changed that names the connection.
    tainted: bool,
    buf: Vec<u8>,
}

impl World {
    fn deliver(&mut self, now: Time, to_receiver: bool, path: u32, bytes: &[u8]) {
        if to_receiver {
            let mut replies = Vec::new();
            self.rx.handle(now, path % self.pipes, bytes, &mut replies);
            self.wire.extend(replies);
        } else {
            self.tx.handle_datagram(now, bytes);
        }
    }

    /// Sends what both ends have to send onto the wire (a black-holed path drops it).
    fn flush(&mut self, now: Time) {
        while let Some(t) = self.tx.poll_transmit(now, &mut self.buf) {
            assert!(t.path < self.pipes, "a datagram on path {}", t.path);
            if !self.black[t.path as usize] {
                self.wire.push((true, t.path, self.buf[..t.len].to_vec()));
            }
        }
        while let Some(t) = self.rx.conn.poll_transmit(now, &mut self.buf) {
            assert!(t.path < self.pipes, "an ACK on path {}", t.path);
            if !self.black[t.path as usize] {
                self.wire.push((false, t.path, self.buf[..t.len].to_vec()));
            }
        }
        cap_in_flight(&mut self.wire);
    }

    fn remember(&mut self, d: InFlight) {
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history.push(d);
    }

    /// The numbers an attacker would aim at: the pipes' first sequence number, pACK at both
    /// ends, the first stream offset never bound.
    fn bases(&self) -> [u64; 4] {
        [
            1,
            self.tx.acked().0,
            self.rx.conn.next().0,
            self.tx.bindings().next_new().0,
        ]
    }
}

/// Does `bytes` name the connection (so that delivering it may corrupt the stream)? Any
/// pTCP datagram on one of its pipes, or naming either end.
fn names_conn(bytes: &[u8]) -> bool {
    PtcpSegment::decode(bytes).is_ok_and(|d| {
        [d.ptcp.src, d.ptcp.dst]
            .iter()
            .any(|id| *id == SENDER || *id == RECEIVER || id.0 >> 63 == 1)
            || (PIPE_BASE..PIPE_BASE + 3).contains(&d.ptcp.pipe.0)
    })
}

/// A pTCP datagram with every field read from the script, usually addressed to one end of the
/// connection on one of its pipes, with its numbers near the connection's.
fn forge(
    s: &mut Script<'_>,
    to_receiver: bool,
    (pipes, receiver): (u32, ConnId),
    bases: &[u64],
) -> Vec<u8> {
    let (src, dst) = match s.byte() % 4 {
        0 => (ConnId(s.u64()), ConnId(s.u64())),
        1 => (receiver, SENDER),
        _ if to_receiver => (SENDER, receiver),
        _ => (receiver, SENDER),
    };
    let conn_id = if s.byte() & 3 == 0 {
        ConnId(s.u64())
    } else {
        ConnId(PIPE_BASE + u64::from(s.byte()) % u64::from(pipes))
    };
    let ptcp = PtcpHeader {
        pipe: conn_id,
        src,
        dst,
        seq: s.number(bases),
        ack: s.number(bases),
        fin: s.byte() & 1 == 1,
        syn: false,
    };
    // The handshake extension, sometimes (any counts, a few addresses).
    let mut list = Vec::new();
    let ext = s.byte() % 4 == 0;
    if ext {
        let n = usize::from(s.byte()) % 4;
        let addrs: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; usize::from(s.byte()) % 33]).collect();
        let refs: Vec<&[u8]> = addrs.iter().map(Vec::as_slice).collect();
        let _ = roam_wire::PtcpHandshake::write_list(&refs, &mut list);
    }
    let handshake = ext.then_some(roam_wire::PtcpHandshake {
        ntx: s.byte(),
        nrx: s.byte(),
        list: &list,
    });
    let flags = Flags(s.u16() & Flags::ALL.0);
    let (seq, ack) = (s.number(bases), s.number(bases));
    let window = match s.byte() % 4 {
        0 => 0,
        1 => u32::MAX,
        _ => s.u32(),
    };
    let (ts_val, ts_ecr) = (s.u32(), s.u32());
    let mut options = Options::default();
    for _ in 0..s.byte() % 5 {
        let (a, b) = (s.number(bases), s.number(bases));
        if a != b {
            options.push_sack(SackBlock {
                start: a.min(b),
                end: a.max(b),
            });
        }
    }
    let len = usize::from(s.u16()) % 3000;
    let payload: Vec<u8> = (0..len).map(|i| stream_byte(i ^ 0x33)).collect();
    let mut out = Vec::new();
    PtcpSegment {
        ptcp,
        handshake,
        segment: Segment {
            conn_id,
            flags,
            seq,
            ack,
            window,
            ts_val,
            ts_ecr,
            options,
            payload: &payload,
        },
    }
    .encode(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    let flags = s.byte();
    let mss = 100 + u16::from(s.byte()) * 5;
    let cfg = TcpConfig {
        sack: flags & 1 != 0,
        delayed_ack: flags & 2 != 0,
        eln: flags & 4 != 0,
        recovery: if flags & 8 != 0 {
            RecoveryMode::Probing
        } else {
            RecoveryMode::Standard
        },
        limited_transmit: flags & 16 != 0,
        initial_window: 1 + u32::from(flags >> 5),
        mss,
        recv_buffer: u64::from(mss) * (1 + u64::from(s.byte() % 64)),
        send_buffer: u64::from(mss) * (1 + u64::from(s.byte() % 64)),
        ..TcpConfig::default()
    };
    let pipes = 1 + u32::from(s.byte() % 3);
    let handshake = s.byte() & 1 == 1;
    let mut tx = if handshake {
        PtcpSender::connect(&cfg, SENDER, &[b"a", b"b"]).expect("two short addresses fit")
    } else {
        PtcpSender::new(&cfg, SENDER, RECEIVER)
    };
    let mut rx = Server {
        conn: PtcpReceiver::new(&cfg, RECEIVER, SENDER),
        opened: !handshake,
        acceptor: handshake.then(|| {
            let max_pipes = 1 + s.byte() % 3;
            let addrs = (0..s.byte() % 17).map(|i| vec![i; 32]).collect();
            (
                PtcpAcceptor::new(cfg.clone(), max_pipes, addrs),
                TokenKey::new([7; 16]),
            )
        }),
    };
    for k in 0..pipes {
        let cc = CcKind::ALL[usize::from(s.byte()) % CcKind::ALL.len()];
        let id = ConnId(PIPE_BASE + u64::from(k));
        if handshake {
            let isn = s.u64() >> 2;
            tx.open_pipe(Time::from_millis(1), k, id, cc, isn)
                .expect("an ISN below 2^62");
        } else {
            tx.add_pipe(k, id, cc);
            rx.conn.add_pipe(k, id);
        }
    }
    let mut w = World {
        tx,
        rx,
        pipes,
        black: [false; 3],
        written: 0,
        read: Vec::new(),
        checked: 0,
        wire: Vec::new(),
        history: Vec::new(),
        tainted: false,
        buf: Vec::new(),
    };
    let mut now = Time::from_millis(1);
    while !s.done() {
        let op = s.byte();
        let to_receiver = op & 1 == 1;
        match (op >> 1) % 16 {
            0 => {
                let n = usize::from(s.u16());
                let chunk: Vec<u8> = (w.written..w.written + n).map(stream_byte).collect();
                w.written += w.tx.write(&chunk);
            }
            1 => {
                let n = usize::from(s.u16());
                w.rx.conn.read(&mut w.read, n);
            }
            2 => w.tx.close(),
            3 => now = now + Duration::from_micros(u64::from(s.u16()) * 100),
            4 => {
                let back = Duration::from_micros(u64::from(s.u16()));
                now = Time::from_nanos(now.as_nanos().saturating_sub(back.as_nanos() as u64));
            }
            5 => {
                // Jump to an end's deadline (or handle its timers early).
                let deadline = if to_receiver {
                    w.rx.conn.poll_timeout()
                } else {
                    w.tx.poll_timeout()
                };
                if let Some(t) = deadline.filter(|_| s.byte() & 1 == 0) {
                    now = now.max(t);
                }
                if to_receiver {
                    w.rx.conn.handle_timeout(now);
                } else {
                    w.tx.handle_timeout(now);
                }
            }
            6..=8 if !w.wire.is_empty() => {
                let i = usize::from(s.u16()) % w.wire.len();
                match (op >> 1) % 16 {
                    6 => {
                        let d = w.wire.remove(i);
                        w.deliver(now, d.0, d.1, &d.2);
                        w.remember(d);
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
            9 if !w.wire.is_empty() => {
                // The receiver's host reports a datagram corrupted on its wireless hop
                // (TCP-ELN): the datagram is lost, the report names its range.
                let i = usize::from(s.u16()) % w.wire.len();
                let (_, _, bytes) = w.wire.remove(i);
                w.rx.conn.note_corrupted(&bytes);
            }
            10 => {
                // Arbitrary bytes to either end.
                let len = usize::from(s.byte());
                let bytes = s.take(len).to_vec();
                w.tainted |= names_conn(&bytes);
                let path = u32::from(s.byte());
                w.deliver(now, to_receiver, path, &bytes);
            }
            11 => {
                let bases = w.bases();
                let receiver = w.rx.conn.ids().0;
                let bytes = forge(&mut s, to_receiver, (w.pipes, receiver), &bases);
                w.tainted |= names_conn(&bytes);
                let path = u32::from(s.byte());
                w.deliver(now, to_receiver, path, &bytes);
            }
            12 if !w.wire.is_empty() => {
                // Change a datagram in flight: set bytes, cut or extend it.
                let i = usize::from(s.u16()) % w.wire.len();
                let mut bytes = w.wire[i].2.clone();
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
                w.wire[i].2 = bytes;
            }
            13 if !w.history.is_empty() => {
                // A replay of a genuine datagram.
                let i = usize::from(s.u16()) % w.history.len();
                let (to_receiver, path, bytes) = w.history[i].clone();
                w.deliver(now, to_receiver, path, &bytes);
            }
            14 => {
                // A path goes dark, or comes back.
                let k = usize::from(s.byte()) % w.pipes as usize;
                w.black[k] = !w.black[k];
            }
            15 => {
                // An honest run: deliver what is in flight in order, read everything, advance
                // to the next timer; the transfer moves on (to its end, if the stream is
                // closed and the paths work).
                let rounds = 1 + u32::from(s.byte()) % PUMP_ROUNDS;
                let step = Duration::from_millis(1 + u64::from(s.byte()));
                for _ in 0..rounds {
                    let wire = std::mem::take(&mut w.wire);
                    for d in wire {
                        w.deliver(now, d.0, d.1, &d.2);
                    }
                    w.rx.conn.read(&mut w.read, usize::MAX);
                    now = now + step;
                    let next = [w.tx.poll_timeout(), w.rx.conn.poll_timeout()]
                        .into_iter()
                        .flatten()
                        .min();
                    if next.is_some_and(|t| t <= now) {
                        w.tx.handle_timeout(now);
                        w.rx.conn.handle_timeout(now);
                    }
                    w.flush(now);
                    if w.wire.is_empty() && next.is_none() {
                        break;
                    }
                }
            }
            _ => {}
        }
        w.flush(now);
        assert!(
            w.rx.conn.buffered() as u64 <= cfg.recv_buffer,
            "receive buffer overrun: {} of {}",
            w.rx.conn.buffered(),
            cfg.recv_buffer
        );
        let _ = (w.tx.is_complete(), w.tx.failed(), w.rx.conn.fin_received());
        let _ = (w.tx.is_closed(), w.rx.conn.is_closed(), w.tx.is_established());
        if w.tainted {
            continue;
        }
        assert!(w.read.len() <= w.written, "read more than was written");
        for (i, b) in w.read.iter().enumerate().skip(w.checked) {
            assert_eq!(*b, stream_byte(i), "stream corrupted at {i}");
        }
        w.checked = w.read.len();
    }
});
