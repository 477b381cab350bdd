//! The R²CP receiver's half of the `rcp_engine` target (rcp-r2cp.txt §4): one `R2cpReceiver`
//! (any scheme, any buffer, an optional token policy) with pipes to up to three sender hosts,
//! pipes added and removed (drained or broken) at any moment and in any state, hosts that
//! vanish and return, and the wire delivering, dropping and duplicating in any order; plus
//! hostile datagrams at the receiver and the hosts: arbitrary bytes, earlier datagrams
//! replayed with bytes changed, and well-formed DATA and REQs with any fields for any pipe's
//! connection id.
//!
//! Nothing may panic; the receive buffer is never charged (held + requested and awaited,
//! §3.3.4) more than its size plus one segment; and while nothing forged reached the receiver,
//! it has read a prefix of the object, unchanged.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, PathId, TokenKey, Unknown};
use roam_proto::r2cp::{PipeId, PipeRole, PipeSpec, R2cpReceiver, Removal, Scheme, TokenPolicy};
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpSender};
use roam_proto::Time;
use roam_wire::ConnId;

use super::common::{cap_in_flight, Script};
use super::{forge, number, object_byte, Generated};

/// Sender hosts; each pipe leads to host `path % HOSTS`.
const HOSTS: usize = 3;
/// Pipes alive at once at most.
const MAX_PIPES: usize = 6;

/// One sender host: its acceptor and one unchanged RCP sender per pipe it accepted.
struct Host {
    acceptor: RcpAcceptor,
    key: TokenKey,
    /// The senders, each with the path its pipe's SYN came from.
    senders: HashMap<ConnId, (RcpSender, u32)>,
    alive: bool,
}

impl Host {
    /// A datagram from path `from`; answers go on the wire towards that path.
    fn deliver(
        &mut self,
        bytes: &[u8],
        from: u32,
        now: Time,
        wire: &mut Vec<(bool, u32, Vec<u8>)>,
    ) {
        if !self.alive {
            return;
        }
        let conn = roam_wire::Header::peek_conn_id(bytes).ok();
        if let Some((tx, _)) = conn.and_then(|c| self.senders.get_mut(&c)) {
            let _ = tx.handle_datagram(now, bytes);
            return;
        }
        let mut out = Vec::new();
        match self
            .acceptor
            .on_unknown(now, &self.key, &from, bytes, &mut out)
        {
            Unknown::Drop => {}
            Unknown::Reply { len } | Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "stateless answer larger than its cause");
                wire.push((false, from, out[..len].to_vec()));
            }
            Unknown::Accept(tx) => {
                if self.senders.len() < 2 * MAX_PIPES {
                    self.senders.insert(tx.conn_id(), (tx, from));
                }
            }
        }
    }
}

/// Runs the rest of the script against an R²CP receiver.
pub fn run(s: &mut Script<'_>) {
    let flags = s.byte();
    let mss = 100 + u16::from(s.byte()) * 5;
    let config = Arc::new(RcpConfig {
        mss,
        eln: flags & 1 != 0,
        recv_buffer: u64::from(mss) * (2 + u64::from(s.byte() % 40)),
        max_retries: 1 + u32::from(s.byte() % 6),
        max_syn_retries: 1 + u32::from(s.byte() % 4),
        ..RcpConfig::default()
    });
    let scheme = match (flags >> 1) % 3 {
        0 => Scheme::Rank,
        1 => Scheme::Fcfs,
        _ => Scheme::Apps {
            stripe: u64::from(s.u16()),
        },
    };
    let len = 1 + u64::from(s.u16()) * 4;
    let start = u64::from(s.u16()) % len;
    let end = if flags & 8 != 0 {
        u64::MAX
    } else {
        start + 1 + u64::from(s.u16()) * 4
    };
    let Ok(mut rx) = R2cpReceiver::new(config.clone(), scheme, b"obj", (start, end)) else {
        return;
    };
    let store: Arc<dyn ObjectStore> = Arc::new(Generated { len, host: false });
    let mut hosts: Vec<Host> = (0..HOSTS)
        .map(|h| Host {
            acceptor: RcpAcceptor::new(config.clone(), store.clone()),
            key: TokenKey::new([h as u8; 16]),
            senders: HashMap::new(),
            alive: true,
        })
        .collect();
    let mut now = Time::from_millis(1);
    // Pipe ids handed out so far; every pipe also has its own path (its id) and connection id.
    let mut next_pipe = 0u32;
    let mut read = Vec::new();
    let mut checked = 0;
    let mut forged_rx = false;
    // In flight: (to a host?, path, bytes). Everything recently sent, for replays.
    let mut wire: Vec<(bool, u32, Vec<u8>)> = Vec::new();
    let mut seen: Vec<(bool, u32, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    let slack = config.recv_buffer + u64::from(mss);
    while !s.done() {
        let op = s.byte();
        let ids: Vec<PipeId> = rx.pipes().map(|p| p.id).collect();
        let pick = |s: &mut Script<'_>| -> PipeId {
            if ids.is_empty() || s.byte() & 7 == 0 {
                PipeId(u32::from(s.byte()))
            } else {
                ids[usize::from(s.byte()) % ids.len()]
            }
        };
        match op % 16 {
            0 => {
                rx.read(&mut read, usize::from(s.u16()));
            }
            1 if ids.len() < MAX_PIPES => {
                let cc = match s.byte() % 4 {
                    3 => RcpCc::Stp,
                    k => RcpCc::Shared(CcKind::ALL[usize::from(k) % CcKind::ALL.len()]),
                };
                let id = next_pipe;
                next_pipe += 1;
                // Now and then a duplicate id or connection id (refused).
                let (id, conn) = if s.byte() & 15 == 0 && id > 0 {
                    (id - 1, ConnId(0x100 + u64::from(id)))
                } else {
                    (id, ConnId(0x100 + u64::from(id)))
                };
                let _ = rx.add_pipe(
                    now,
                    PipeSpec {
                        id: PipeId(id),
                        conn_id: conn,
                        path: PathId(id),
                        role: if s.byte() & 1 == 0 {
                            PipeRole::Primary
                        } else {
                            PipeRole::Secondary
                        },
                        cc,
                    },
                );
            }
            2 => {
                let how = if s.byte() & 1 == 0 {
                    Removal::Drain
                } else {
                    Removal::Break
                };
                let id = pick(s);
                rx.remove_pipe(now, id, how);
            }
            3 => now = now + Duration::from_micros(u64::from(s.u16()) * 100),
            4 => {
                let back = u64::from(s.u16()) * 1000;
                now = Time::from_nanos(now.as_nanos().saturating_sub(back));
            }
            5 => {
                if let Some(t) = rx.poll_timeout().filter(|_| op & 16 == 0) {
                    now = now.max(t);
                }
                rx.handle_timeout(now);
                for h in &mut hosts {
                    for (tx, _) in h.senders.values_mut() {
                        tx.handle_timeout(now);
                    }
                    h.senders.retain(|_, (t, _)| !t.is_expired());
                }
            }
            6..=8 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                match op % 16 {
                    6 => {
                        let (to_host, path, bytes) = wire.remove(i);
                        if to_host {
                            hosts[path as usize % HOSTS].deliver(&bytes, path, now, &mut wire);
                        } else if hosts[path as usize % HOSTS].alive {
                            let _ = rx.handle_datagram(now, &bytes);
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
                let id = pick(s);
                let info = s.link_info();
                rx.set_link_info(now, id, &info);
            }
            10 => {
                let id = pick(s);
                rx.note_corrupted(id, number(s));
            }
            11 => {
                let policy = (s.byte() & 1 == 0).then(|| TokenPolicy {
                    rate_bps: f64::from(s.u16()) * 100.0,
                    depth_bytes: u64::from(s.u16()),
                });
                rx.set_policy(now, policy);
            }
            12 => {
                // A host vanishes, or comes back (its senders forgotten).
                let h = usize::from(s.byte()) % HOSTS;
                hosts[h].alive = !hosts[h].alive;
                hosts[h].senders.clear();
            }
            13 => {
                // Arbitrary bytes, to the receiver or a host.
                let to_host = s.byte() & 1 == 0;
                let path = u32::from(s.byte() % 8);
                let n = usize::from(s.byte() % 96);
                let bytes: Vec<u8> = (0..n).map(|_| s.byte()).collect();
                if to_host {
                    hosts[path as usize % HOSTS].deliver(&bytes, path, now, &mut wire);
                } else {
                    forged_rx = true;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            14 if !seen.is_empty() => {
                // An earlier datagram replayed, with bytes changed, maybe from another path.
                let (to_host, path, mut bytes) = seen[usize::from(s.u16()) % seen.len()].clone();
                let mut changed = false;
                for _ in 0..s.byte() % 4 {
                    if !bytes.is_empty() {
                        let i = usize::from(s.u16()) % bytes.len();
                        bytes[i] = s.byte();
                        changed = true;
                    }
                }
                let path = if s.byte() & 3 == 0 {
                    u32::from(s.byte() % 8)
                } else {
                    path
                };
                if to_host {
                    hosts[path as usize % HOSTS].deliver(&bytes, path, now, &mut wire);
                } else {
                    // An unchanged replay is what a duplicating wire does: not a forgery.
                    forged_rx |= changed;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            15 => {
                // A well-formed DATA or REQ for one of the pipes' connection ids (or any).
                let to_host = s.byte() & 1 == 0;
                let id = pick(s);
                let bytes = forge(s, to_host, ConnId(0x100 + u64::from(id.0)));
                if to_host {
                    let path = id.0 % 8;
                    hosts[path as usize % HOSTS].deliver(&bytes, path, now, &mut wire);
                } else {
                    forged_rx = true;
                    let _ = rx.handle_datagram(now, &bytes);
                }
            }
            _ => {}
        }
        let before = wire.len();
        while let Some((path, _)) = rx.poll_transmit(now, &mut buf) {
            wire.push((true, path.0, buf.clone()));
        }
        while rx.poll_event().is_some() {}
        for host in &mut hosts {
            for (tx, path) in host.senders.values_mut() {
                while tx.poll_transmit(now, &mut buf).is_some() {
                    wire.push((false, *path, buf.clone()));
                }
            }
        }
        seen.extend(wire[before.min(wire.len())..].iter().cloned());
        if seen.len() > 256 {
            seen.drain(..seen.len() - 256);
        }
        cap_in_flight(&mut wire);
        assert!(
            rx.buffered() as u64 <= rx.charged(),
            "held bytes outside the charge"
        );
        assert!(
            rx.charged() <= slack,
            "buffer charged {} of {} (§3.3.4)",
            rx.charged(),
            config.recv_buffer
        );
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
}
