//! Coverage-guided search through the RCP engines' states: the input is a script of API calls
//! (reads, freezes, thaws, timers, clock steps, link facts, corruption reports, changes to what
//! the sender has available, the host completing the sender's reads late, short or in any
//! order), of what the wire does with each datagram (deliver in any order, drop, duplicate),
//! and of hostile datagrams injected at any moment — before the handshake too — to either end:
//! arbitrary bytes, earlier datagrams replayed with bytes changed, and well-formed REQs and
//! DATA with any header values, connection ids, tokens and fields over the whole u64 range,
//! from the receiver's address or another. The sender's host answers what names no connection
//! through its `RcpAcceptor`.
//!
//! Nothing may panic; no stateless answer is larger than the datagram it answers; each end
//! holds no more than its stated bounds; and while nothing forged reached the receiver, it has
//! read a prefix of the range it asked for.
//!
//! The script's first byte chooses the receiver: single-path RCP (top bit clear), or an R²CP
//! receiver with several pipes (top bit set; `rcp_engine/r2cp.rs`).
#![no_main]

mod common;
#[path = "rcp_engine/r2cp.rs"]
mod r2cp;

use std::sync::Arc;
use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{token_slot, Acceptor, TokenKey, Unknown};
use roam_proto::rcp::{
    ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpReceiver, RcpSender, ResetLimiter,
};
use roam_proto::Time;
use roam_wire::{ConnId, Data, Flags, PullBlock, Request, RequestMode, Token, TOKEN_LEN};

fn object_byte(offset: u64) -> u8 {
    (offset.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8
}

/// One generated object, "obj", of a given length; read in memory, or only through the host.
struct Generated {
    len: u64,
    host: bool,
}

impl ObjectStore for Generated {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        (name == b"obj").then_some(self.len)
    }
    fn read_now(&self, _name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        if self.host {
            return false;
        }
        out.extend((offset..offset + len as u64).map(object_byte));
        true
    }
}

/// The receiver's address, and another one (an attacker's).
const RECEIVER: &str = "receiver";
const ELSEWHERE: &str = "elsewhere";

/// A number from the script: small, near the object, or anywhere in the u64 range.
fn number(s: &mut Script<'_>) -> u64 {
    match s.byte() % 4 {
        0 => u64::from(s.byte()),
        1 => u64::from(s.u16()) * 4,
        2 => u64::MAX - u64::from(s.u16()),
        _ => u64::from_le_bytes(std::array::from_fn(|_| s.byte())),
    }
}

fn token(s: &mut Script<'_>) -> Option<Token> {
    (s.byte() & 1 == 0).then(|| Token(std::array::from_fn::<u8, TOKEN_LEN, _>(|_| s.byte())))
}

/// A well-formed REQ or DATA with every field from the script.
fn forge(s: &mut Script<'_>, to_sender: bool, conn: ConnId) -> Vec<u8> {
    let conn_id = if s.byte() & 3 == 0 {
        ConnId(number(s))
    } else {
        conn
    };
    let flags = Flags(u16::from(s.byte()) & Flags::ALL.0);
    let mut out = Vec::new();
    if to_sender {
        let nblocks = s.byte() % 4;
        let mut blocks = [PullBlock::default(); 3];
        for b in blocks.iter_mut().take(usize::from(nblocks)) {
            let (a, z) = (number(s), number(s));
            *b = PullBlock {
                id: u32::from(s.u16()),
                start: a.min(z),
                end: a.max(z).max(a.min(z).saturating_add(1)),
            };
        }
        let mut mode = RequestMode(s.byte() & RequestMode::ALL.0);
        if nblocks == 0 {
            mode = RequestMode(mode.0 & !RequestMode::PULL.0);
        }
        let name: &[u8] = if s.byte() & 1 == 0 { b"obj" } else { b"x" };
        Request {
            conn_id,
            flags,
            mode,
            req: number(s),
            deq: u32::from(s.u16()) | (u32::from(s.u16()) << 16),
            ts_val: u32::from(s.u16()),
            ts_ecr: u32::from(s.u16()),
            nblocks,
            blocks,
            object: name,
            token: token(s),
        }
        .encode(&mut out);
    } else {
        let payload = vec![0xA5; usize::from(s.byte()) * 8];
        let seq = number(s).min(u64::MAX - payload.len() as u64);
        Data {
            conn_id,
            flags,
            seq,
            window: number(s),
            object_len: (s.byte() & 1 == 0).then(|| number(s)),
            ts_val: u32::from(s.u16()),
            ts_ecr: u32::from(s.u16()),
            pull_id: u32::from(s.u16()),
            token: token(s),
            payload: &payload,
        }
        .encode(&mut out);
    }
    out
}

/// An independent check of an RCP token: its ten field bytes and the object name under the MAC
/// over `from`, `conn`, the slot of `now` or the one before.
fn mac_binds(key: &TokenKey, from: &str, conn: ConnId, name: &[u8], now: Time, t: &Token) -> bool {
    let (fields, mac) = t.0.split_at(TOKEN_LEN - 8);
    let mut input = b"roam-rcp-v1".to_vec();
    input.extend_from_slice(fields);
    input.extend_from_slice(name);
    let slot = token_slot(now);
    [Some(slot), slot.checked_sub(1)]
        .into_iter()
        .flatten()
        .any(|s| key.mac(from, conn, s, &input).to_be_bytes() == mac)
}

/// The sender's host: the sender once opened, else its acceptor; the reads it has in
/// progress for the sender; what the sender's application makes available.
struct Host {
    acceptor: RcpAcceptor,
    key: TokenKey,
    resets: ResetLimiter,
    tx: Option<RcpSender>,
    reads: Vec<(u64, usize)>,
    available: Option<u64>,
    /// Tokens the acceptor issued, by the address it answered.
    issued: Vec<(&'static str, Token)>,
}

impl Host {
    /// A datagram for the sender's host from `from`: to the sender it names, or the acceptor
    /// (whose answers go on the wire).
    fn deliver(
        &mut self,
        bytes: &[u8],
        from: &'static str,
        now: Time,
        wire: &mut Vec<(bool, Vec<u8>)>,
    ) {
        let ours = self
            .tx
            .as_ref()
            .is_some_and(|t| roam_wire::Header::peek_conn_id(bytes) == Ok(t.conn_id()));
        if ours {
            if let Some(t) = self.tx.as_mut() {
                let _ = t.handle_datagram(now, bytes);
            }
            return;
        }
        let mut out = Vec::new();
        match self
            .acceptor
            .on_unknown(now, &self.key, from, bytes, &mut out)
        {
            Unknown::Drop => {}
            Unknown::Reply { len } => {
                assert!(len <= bytes.len(), "stateless reply larger than its cause");
                if let Some(t) = Data::decode(&out[..len]).ok().and_then(|d| d.token) {
                    self.issued.push((from, t));
                    if self.issued.len() > 4096 {
                        self.issued.remove(0);
                    }
                }
                wire.push((false, out[..len].to_vec()));
            }
            Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "reset larger than its cause");
                if self.resets.allow(now) {
                    wire.push((false, out[..len].to_vec()));
                }
            }
            Unknown::Accept(mut t) => {
                // Only a token issued to this very address opens a sender — or one the fuzzer
                // derived from the acceptor's own MAC comparisons (libFuzzer traces them; a
                // real attacker sees nothing of them), which must still be a MAC over this
                // address, connection and object.
                let r = Request::decode(bytes).ok();
                let bound = r.is_some_and(|r| {
                    r.token.is_some_and(|e| {
                        self.issued.contains(&(from, e))
                            || mac_binds(&self.key, from, r.conn_id, r.object, now, &e)
                    })
                });
                assert!(bound, "accepted a token that is no MAC over {from}");
                t.set_available(self.available);
                self.reads.clear();
                self.tx = Some(t);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    if s.byte() & 0x80 != 0 {
        r2cp::run(&mut s);
        return;
    }
    let flags = s.byte();
    let cc = match s.byte() % 4 {
        3 => RcpCc::Stp,
        k => RcpCc::Shared(CcKind::ALL[usize::from(k) % CcKind::ALL.len()]),
    };
    let mss = 100 + u16::from(s.byte()) * 5;
    let config = Arc::new(RcpConfig {
        mss,
        eln: flags & 1 != 0,
        recv_buffer: u64::from(mss) * (2 + u64::from(s.byte() % 40)),
        sender_window: if flags & 2 != 0 {
            u64::from(mss) * (1 + u64::from(s.byte() % 40))
        } else {
            0
        },
        status_interval_ms: if flags & 4 != 0 {
            1 + u64::from(s.byte())
        } else {
            0
        },
        idle_timeout_ms: if flags & 8 != 0 {
            u64::from(s.byte()) * 20
        } else {
            RcpConfig::default().idle_timeout_ms
        },
        read_ahead: u64::from(s.u16()),
        ..RcpConfig::default()
    });
    let len = 1 + u64::from(s.u16()) * 4;
    let start = u64::from(s.u16()) % len;
    let end = start + 1 + u64::from(s.u16()) * 4;
    let host_reads = flags & 32 != 0;
    let store: Arc<dyn ObjectStore> = Arc::new(Generated {
        len,
        host: host_reads,
    });
    let key = TokenKey::new([s.byte(); 16]);
    let mut now = Time::from_millis(1);
    let Ok(mut rx) = RcpReceiver::connect(config.clone(), cc, ConnId(5), b"obj", (start, end), now)
    else {
        return;
    };
    let conn = rx.conn_id();
    let mut host = Host {
        acceptor: RcpAcceptor::new(config.clone(), store),
        key,
        // The host's reset budget: a few a second when flag bit 4 is set, else the default.
        resets: ResetLimiter::new(if flags & 16 != 0 {
            u32::from(flags >> 6)
        } else {
            ResetLimiter::DEFAULT_PER_SECOND
        }),
        tx: None,
        reads: Vec::new(),
        available: None,
        issued: Vec::new(),
    };
    let mut read = Vec::new();
    let mut checked = 0;
    let mut forged_rx = false;
    // In flight: (to the sender?, bytes). Everything ever sent, for replays.
    let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut seen: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    while !s.done() {
        let op = s.byte();
        match op % 16 {
            0 => {
                rx.read(&mut read, usize::from(s.u16()));
            }
            1 => rx.freeze(now),
            2 => {
                rx.thaw(now);
            }
            3 => now = now + Duration::from_micros(u64::from(s.u16()) * 100),
            4 => {
                let back = u64::from(s.u16()) * 1000;
                now = Time::from_nanos(now.as_nanos().saturating_sub(back));
            }
            5 => {
                // Jump to the deadline (or handle timers early).
                if let Some(t) = rx.poll_timeout().filter(|_| op & 16 == 0) {
                    now = now.max(t);
                }
                rx.handle_timeout(now);
                // The sender's idle timer; the host drops a sender that expired.
                if let Some(t) = host.tx.as_mut() {
                    t.handle_timeout(now);
                }
                if host.tx.as_ref().is_some_and(RcpSender::is_expired) {
                    host.tx = None;
                    host.reads.clear();
                }
            }
            6..=8 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                match op % 16 {
                    6 => {
                        let (to_sender, bytes) = wire.remove(i);
                        if !to_sender {
                            let _ = rx.handle_datagram(now, &bytes);
                        } else {
                            host.deliver(&bytes, RECEIVER, now, &mut wire);
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
                let info = s.link_info();
                rx.set_link_info(now, &info);
            }
            10 => rx.note_corrupted(number(&mut s)),
            11 => {
                host.available = (s.byte() & 1 == 0).then(|| u64::from(s.u16()) * 4);
                if let Some(t) = host.tx.as_mut() {
                    t.set_available(host.available);
                }
            }
            12 if !host.reads.is_empty() => {
                // The host completes a read, possibly short, possibly at a wrong offset.
                let i = usize::from(s.byte()) % host.reads.len();
                let (offset, n) = host.reads.remove(i);
                let n = if s.byte() & 3 == 0 { n / 2 } else { n };
                let offset = if s.byte() & 7 == 0 {
                    offset + 1
                } else {
                    offset
                };
                let bytes: Vec<u8> = (offset..offset + n as u64).map(object_byte).collect();
                if let Some(t) = host.tx.as_mut() {
                    t.supply(offset, &bytes);
                }
            }
            13 => {
                // Arbitrary bytes.
                let to_sender = s.byte() & 1 == 0;
                let n = usize::from(s.byte() % 96);
                let bytes: Vec<u8> = (0..n).map(|_| s.byte()).collect();
                if to_sender {
                    host.deliver(&bytes, ELSEWHERE, now, &mut wire);
                } else {
                    forged_rx = true;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            14 if !seen.is_empty() => {
                // An earlier datagram replayed, with bytes changed, from either address.
                let (to_sender, mut bytes) = seen[usize::from(s.u16()) % seen.len()].clone();
                for _ in 0..s.byte() % 4 {
                    if !bytes.is_empty() {
                        let i = usize::from(s.u16()) % bytes.len();
                        bytes[i] = s.byte();
                    }
                }
                if to_sender {
                    let from = if s.byte() & 1 == 0 {
                        RECEIVER
                    } else {
                        ELSEWHERE
                    };
                    host.deliver(&bytes, from, now, &mut wire);
                } else {
                    forged_rx = true;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            15 => {
                let to_sender = s.byte() & 1 == 0;
                let bytes = forge(&mut s, to_sender, conn);
                if to_sender {
                    let from = if s.byte() & 1 == 0 {
                        RECEIVER
                    } else {
                        ELSEWHERE
                    };
                    host.deliver(&bytes, from, now, &mut wire);
                } else {
                    forged_rx = true;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            _ => {}
        }
        let before = wire.len();
        while rx.poll_transmit(now, &mut buf).is_some() {
            wire.push((true, buf.clone()));
        }
        while rx.poll_event().is_some() {}
        if let Some(t) = host.tx.as_mut() {
            while t.poll_transmit(now, &mut buf).is_some() {
                wire.push((false, buf.clone()));
            }
            while let Some(r) = t.poll_read() {
                host.reads.push((r.offset, r.len));
            }
            host.reads.truncate(64);
            let seg = u64::from(u16::MAX.min(65_000));
            assert!(t.buffered_bytes() as u64 <= config.read_ahead.max(seg) + seg);
        }
        seen.extend(wire[before.min(wire.len())..].iter().cloned());
        if seen.len() > 256 {
            seen.drain(..seen.len() - 256);
        }
        cap_in_flight(&mut wire);
        assert!(rx.buffered_bytes() as u64 <= config.recv_buffer);
        let b = rx.recv_buffer();
        assert!(b.out_of_order_pieces() <= b.max_pieces());
        if !forged_rx {
            assert!(
                read.len() as u64 <= end.min(len) - start,
                "read past the range"
            );
            for (i, b) in read.iter().enumerate().skip(checked) {
                assert_eq!(*b, object_byte(start + i as u64), "object corrupted at {i}");
            }
            checked = read.len();
        }
    }
});
