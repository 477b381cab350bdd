//! A two-endpoint test fixture: a client and a server connection joined by a simple virtual
//! link (delay, rate, seeded loss/reordering/duplication), stepped in virtual time.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::tcp::{Connection, Event, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_proto::Time;
use roam_wire::ConnId;

/// The client's address as the server's acceptor sees it.
pub const CLIENT_ADDR: &str = "10.0.0.1:4000";

/// Impairments of one direction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Impair {
    pub loss: f64,
    pub reorder: f64,
    pub duplicate: f64,
    /// Drop everything in [start, end).
    pub blackout: Option<(f64, f64)>,
}

/// Decides per datagram (to_server, bytes) whether it survives.
pub type DropFilter = Box<dyn FnMut(bool, &[u8]) -> bool>;

pub struct Pair {
    pub now: Time,
    pub client: Connection,
    pub server: Option<Connection>,
    pub cfg: Arc<TcpConfig>,
    /// The server side of the handshake (stateless until the client's first segment).
    pub acceptor: TcpAcceptor,
    /// The server's address-validation secret.
    pub key: TokenKey,
    /// (arrival time, seq) → (to_server, bytes)
    in_flight: BTreeMap<(Time, u64), (bool, Vec<u8>)>,
    next_id: u64,
    pub delay: Duration,
    /// Serialisation time per byte (rate), per direction: next free time.
    pub bytes_per_sec: f64,
    busy_until: [Time; 2],
    pub fwd: Impair,
    pub rev: Impair,
    rng: ChaCha8Rng,
    pub received: Vec<u8>,
    pub server_events: Vec<Event>,
    pub client_events: Vec<Event>,
    pub datagrams: [u64; 2],
    /// Optional filter: return false to drop a datagram (to_server, bytes).
    pub drop_filter: Option<DropFilter>,
    /// When false the server application does not read (its window fills up).
    pub server_reads: bool,
    /// Most bytes the server application reads per step (a slow reader).
    pub read_budget: usize,
    /// Virtual seconds [start, end) during which the server application reads nothing.
    pub read_pause: Option<(f64, f64)>,
    /// Most bytes the client application writes per step (a slow writer); with a limit it
    /// writes again every millisecond while it has data left.
    pub write_budget: usize,
    /// The client application still has data to write (set by [`Pair::transfer_with`]).
    pub writer_waiting: bool,
}

impl Pair {
    pub fn new(cfg: TcpConfig, seed: u64) -> Pair {
        Pair::starting_at(cfg, seed, Time::ZERO)
    }

    /// A pair whose client opens the connection at `start` (virtual time before it is idle).
    pub fn starting_at(cfg: TcpConfig, seed: u64, start: Time) -> Pair {
        Pair::with_cc(cfg, CcKind::NewReno, seed, start)
    }

    /// A pair whose sender runs congestion controller `cc`.
    pub fn with_cc(cfg: TcpConfig, cc: CcKind, seed: u64, start: Time) -> Pair {
        let cfg = Arc::new(cfg);
        // The host's randomness: a separate stream, so the wire's draws stay as they were.
        let mut host = ChaCha8Rng::seed_from_u64(seed ^ 0x6b65_795f_6973_6e00);
        let isn = host.gen::<u64>() & MAX_ISN;
        let key = TokenKey::new(host.gen());
        let client = Connection::connect(cfg.clone(), cc, ConnId(seed | 1), isn, start)
            .expect("valid config");
        let acceptor = TcpAcceptor::new(cfg.clone(), CcKind::NewReno).expect("valid config");
        Pair {
            now: start,
            client,
            server: None,
            cfg,
            acceptor,
            key,
            in_flight: BTreeMap::new(),
            next_id: 0,
            delay: Duration::from_millis(20),
            bytes_per_sec: 1.25e6,
            busy_until: [start; 2],
            fwd: Impair::default(),
            rev: Impair::default(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            received: Vec::new(),
            server_events: Vec::new(),
            client_events: Vec::new(),
            datagrams: [0; 2],
            drop_filter: None,
            server_reads: true,
            read_budget: usize::MAX,
            read_pause: None,
            write_budget: usize::MAX,
            writer_waiting: false,
        }
    }

    fn enqueue(&mut self, to_server: bool, bytes: Vec<u8>) {
        let dir = usize::from(!to_server);
        self.datagrams[dir] += 1;
        if let Some(f) = self.drop_filter.as_mut() {
            if !f(to_server, &bytes) {
                return;
            }
        }
        let imp = if to_server { self.fwd } else { self.rev };
        let start = self.now.max(self.busy_until[dir]);
        let tx = Duration::from_secs_f64((bytes.len() + 28) as f64 / self.bytes_per_sec);
        let done = start + tx;
        self.busy_until[dir] = done;
        let t = self.now.as_secs_f64();
        if let Some((a, b)) = imp.blackout {
            if t >= a && t < b {
                return;
            }
        }
        if self.rng.gen_bool(imp.loss) {
            return;
        }
        let mut arrive = done + self.delay;
        if self.rng.gen_bool(imp.reorder) {
            arrive += Duration::from_millis(self.rng.gen_range(1..30));
        }
        if self.rng.gen_bool(imp.duplicate) {
            self.next_id += 1;
            self.in_flight.insert(
                (arrive + Duration::from_millis(3), self.next_id),
                (to_server, bytes.clone()),
            );
        }
        self.next_id += 1;
        self.in_flight
            .insert((arrive, self.next_id), (to_server, bytes));
    }

    fn flush(&mut self) {
        let mut buf = Vec::new();
        while self.client.poll_transmit(self.now, &mut buf).is_some() {
            self.enqueue(true, buf.clone());
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        if let Some(s) = self.server.as_mut() {
            let mut out = Vec::new();
            let t = self.now.as_secs_f64();
            let paused = self.read_pause.is_some_and(|(a, b)| t >= a && t < b);
            let mut budget = if self.server_reads && !paused {
                self.read_budget
            } else {
                0
            };
            while budget > 0 {
                let n = s.read(&mut self.received, budget);
                if n == 0 {
                    break;
                }
                budget -= n;
            }
            while let Some(e) = s.poll_event() {
                self.server_events.push(e);
            }
            // A sink closes its side once the sender has finished and it has read everything
            // (`Eof` says the FIN arrived; a slow reader may still have data to read).
            let eof = self.server_events.contains(&Event::Eof);
            if eof && s.receiver().readable() == 0 && !s.is_closed() {
                s.close();
            }
            while s.poll_transmit(self.now, &mut buf).is_some() {
                out.push(buf.clone());
            }
            for b in out {
                self.enqueue(false, b);
            }
        }
    }

    /// Advances to the next event; returns false when nothing is pending.
    pub fn step(&mut self) -> bool {
        self.flush();
        let next_pkt = self.in_flight.keys().next().map(|k| k.0);
        let mut next = next_pkt;
        for t in [
            self.client.poll_timeout(),
            self.server.as_ref().and_then(|s| s.poll_timeout()),
        ]
        .into_iter()
        .flatten()
        {
            next = Some(next.map_or(t, |n: Time| n.min(t)));
        }
        // A slow reader with data waiting reads again a millisecond later (or when its pause
        // ends), and a slow writer with data left writes again, as applications would, even if
        // the connections have nothing scheduled.
        let waiting = self
            .server
            .as_ref()
            .is_some_and(|s| s.receiver().readable() > 0);
        let read_at = (waiting && self.server_reads && self.read_budget < usize::MAX).then(|| {
            let at = self.now + Duration::from_millis(1);
            match self.read_pause {
                Some((a, b)) if (a..b).contains(&at.as_secs_f64()) => Time::from_secs_f64(b),
                _ => at,
            }
        });
        let write_at = (self.writer_waiting && self.write_budget < usize::MAX)
            .then(|| self.now + Duration::from_millis(1));
        let read_at = [read_at, write_at].into_iter().flatten().min();
        if let Some(at) = read_at {
            if next.is_none_or(|n| at < n) {
                self.now = self.now.max(at);
                self.flush();
                return true;
            }
        }
        let Some(t) = next else { return false };
        self.now = self.now.max(t);
        if next_pkt == Some(t) {
            let key = *self.in_flight.keys().next().unwrap();
            let (to_server, bytes) = self.in_flight.remove(&key).unwrap();
            if to_server {
                match self.server.as_mut() {
                    Some(s) => {
                        let _ = s.handle_datagram(self.now, &bytes);
                    }
                    None => {
                        let mut out = Vec::new();
                        match self.acceptor.on_unknown(
                            self.now,
                            &self.key,
                            CLIENT_ADDR,
                            &bytes,
                            &mut out,
                        ) {
                            Unknown::Accept(s) => self.server = Some(s),
                            Unknown::Reply { len } | Unknown::Reset { len } => {
                                out.truncate(len);
                                self.enqueue(false, out);
                            }
                            Unknown::Drop => {}
                        }
                    }
                }
            } else {
                let _ = self.client.handle_datagram(self.now, &bytes);
            }
        } else {
            self.client.handle_timeout(self.now);
            if let Some(s) = self.server.as_mut() {
                s.handle_timeout(self.now);
            }
        }
        self.flush();
        true
    }

    /// Runs until `until` (virtual seconds) or until nothing is pending.
    pub fn run_until(&mut self, until: f64) {
        let end = Time::from_secs_f64(until);
        while self.now < end && self.step() {}
    }

    /// Sends `data` from client to server and closes; returns when done or at `limit` s.
    pub fn transfer(&mut self, data: &[u8], limit: f64) {
        self.transfer_with(data, limit, |_| {});
    }

    /// As [`Pair::transfer`], calling `after_step` after every step (to feed the endpoints
    /// what a host would: link facts, corruption reports).
    pub fn transfer_with(
        &mut self,
        data: &[u8],
        limit: f64,
        mut after_step: impl FnMut(&mut Pair),
    ) {
        let mut off = 0;
        let end = Time::from_secs_f64(limit);
        let mut closed = false;
        while self.now < end {
            if off < data.len() {
                let end = off.saturating_add(self.write_budget).min(data.len());
                off += self.client.write(&data[off..end]);
                self.writer_waiting = off < data.len();
            } else if !closed {
                self.client.close();
                closed = true;
            }
            if !self.step() {
                break;
            }
            after_step(self);
            if closed
                && self.client.is_closed()
                && self.server.as_ref().is_some_and(|s| s.is_closed())
            {
                break;
            }
        }
    }
}

pub fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..len).map(|_| r.gen()).collect()
}

/// The server read exactly `d`: all of it, uncorrupted.
pub fn assert_received(p: &Pair, d: &[u8]) {
    assert!(
        p.received == d,
        "received {} of {} bytes (or corrupted)",
        p.received.len(),
        d.len()
    );
}
