//! A small deterministic network for R²CP engine tests: one receiver, several servers (each
//! an RCP sender host), one path per pipe with its own delay, rate, loss and up/down state.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roam_proto::endpoint::{Acceptor, PathId, TokenKey, Unknown};
use roam_proto::r2cp::{PipeId, PipeRole, PipeSpec, R2cpEvent, R2cpReceiver, Removal, Scheme};
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpSender};
use roam_proto::Time;
use roam_wire::{ConnId, Request};

/// The object's bytes (a pattern no shift reproduces).
pub fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ (i >> 7) as u8
}

/// The object of `len` bytes.
pub fn object_bytes(len: u64) -> Vec<u8> {
    (0..len).map(byte_at).collect()
}

/// A store holding one object, `obj`, of the given length ([`byte_at`] bytes).
pub struct Store(pub u64);
impl ObjectStore for Store {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        (name == b"obj").then_some(self.0)
    }
    fn read_now(&self, _: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        out.extend((offset..offset + len as u64).map(byte_at));
        true
    }
}

/// Pipe `i` on path `i` with connection id `conn_base + i`, primary, default controller.
pub fn spec(conn_base: u64, i: u32) -> PipeSpec {
    PipeSpec {
        id: PipeId(i),
        conn_id: ConnId(conn_base + u64::from(i)),
        path: PathId(i),
        role: PipeRole::Primary,
        cc: RcpCc::default(),
    }
}

/// Every datagram `rx` has to send now, with its path.
pub fn drain(rx: &mut R2cpReceiver, now: Time) -> Vec<(PathId, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some((path, len)) = rx.poll_transmit(now, &mut buf) {
        out.push((path, buf[..len].to_vec()));
    }
    out
}

/// One path (pipe) of the test network.
#[derive(Debug, Clone, Copy)]
pub struct PathSpec {
    /// Server index.
    pub server: usize,
    /// One-way delay each direction.
    pub delay: Duration,
    /// Data-direction rate (bytes/s).
    pub rate: f64,
    /// Loss probability of data and of requests.
    pub loss: f64,
    /// Token-bucket depth (bytes; 0: none), as Linux's tbf `burst`: the data direction is
    /// shaped to `rate` by a bucket of this many bytes, full at first, so a burst of up to
    /// `burst` bytes (after a pause, what accumulated) leaves at once instead of at `rate`.
    pub burst: u64,
    /// Drop-tail queue of the data direction (bytes waiting for the link; 0: unbounded).
    pub queue: u64,
}

struct Path {
    spec: PathSpec,
    up: bool,
    busy_until: Time,
    /// Tokens in the bucket (bytes) at `busy_until` (with `spec.burst > 0`).
    tokens: f64,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Dir {
    ToServer,
    ToClient,
}

/// A datagram in flight: arrival time, tie-break serial, path, direction, bytes.
type Queued = (Time, u64, usize, Dir, Vec<u8>);

/// The network.
pub struct Net {
    pub rx: R2cpReceiver,
    pub now: Time,
    paths: Vec<Path>,
    servers: Vec<HashMap<ConnId, RcpSender>>,
    server_alive: Vec<bool>,
    /// Every server host's stateless handshake (servers share the store and the key).
    acceptor: RcpAcceptor,
    key: TokenKey,
    queue: BinaryHeap<Reverse<Queued>>,
    seq: u64,
    rng: ChaCha8Rng,
    pub received: Vec<u8>,
    pub events: Vec<(Time, R2cpEvent)>,
    /// Every pulled block each server served or saw (server, start, end).
    pub pulls: Vec<(usize, u64, u64)>,
    /// Per path: payload bytes delivered to the receiver (for timelines).
    pub delivered: Vec<Vec<(Time, u64)>>,
    pub len: u64,
    /// Pipes opened by [`Net::reopen_pipe`].
    reopened: u32,
    /// Every pipe opened, with its path.
    pipe_paths: Vec<(PipeId, usize)>,
}

impl Net {
    /// A network serving an object of `len` bytes from `servers` servers.
    pub fn new(config: RcpConfig, scheme: Scheme, len: u64, servers: usize, seed: u64) -> Net {
        let config = Arc::new(config);
        let rx = R2cpReceiver::new(config.clone(), scheme, b"obj", (0, u64::MAX)).unwrap();
        Net {
            rx,
            now: Time::ZERO,
            paths: Vec::new(),
            servers: (0..servers).map(|_| HashMap::new()).collect(),
            server_alive: vec![true; servers],
            acceptor: RcpAcceptor::new(config, Arc::new(Store(len))),
            key: TokenKey::new(*b"r2cp-test-key-16"),
            queue: BinaryHeap::new(),
            seq: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            received: Vec::new(),
            events: Vec::new(),
            pulls: Vec::new(),
            delivered: Vec::new(),
            len,
            reopened: 0,
            pipe_paths: Vec::new(),
        }
    }

    /// Adds a path and a pipe over it; returns its index (= PipeId = PathId).
    pub fn add_pipe(&mut self, spec: PathSpec, role: PipeRole) -> usize {
        let i = self.paths.len();
        self.paths.push(Path {
            spec,
            up: true,
            busy_until: self.now,
            tokens: spec.burst as f64,
        });
        self.delivered.push(Vec::new());
        self.pipe_paths.push((PipeId(i as u32), i));
        self.rx
            .add_pipe(
                self.now,
                PipeSpec {
                    id: PipeId(i as u32),
                    conn_id: ConnId(0x1000 + i as u64),
                    path: PathId(i as u32),
                    role,
                    cc: RcpCc::default(),
                },
            )
            .unwrap();
        i
    }

    /// Opens a new pipe over path `i` (whose pipe failed), as a host does after a pipe it
    /// still has a route for fails; returns the new pipe's id. Ids and conn ids of reopened
    /// pipes count from 1000 and 0x2000.
    #[allow(dead_code)] // Not every test binary that includes this module reopens pipes.
    pub fn reopen_pipe(&mut self, i: usize, role: PipeRole) -> PipeId {
        self.reopened += 1;
        let id = PipeId(1000 + self.reopened);
        self.pipe_paths.push((id, i));
        self.rx
            .add_pipe(
                self.now,
                PipeSpec {
                    id,
                    conn_id: ConnId(0x2000 + u64::from(self.reopened)),
                    path: PathId(i as u32),
                    role,
                    cc: RcpCc::default(),
                },
            )
            .unwrap();
        id
    }

    /// The path pipe `id` runs over (also once it has failed).
    #[allow(dead_code)] // Not every test binary that includes this module reopens pipes.
    pub fn path_of(&self, id: PipeId) -> Option<usize> {
        self.pipe_paths
            .iter()
            .find(|(p, _)| *p == id)
            .map(|(_, path)| *path)
    }

    /// Takes the path down (nothing passes) and, if `break_pipe`, deletes the pipe.
    pub fn path_down(&mut self, i: usize, removal: Option<Removal>) {
        self.paths[i].up = false;
        if let Some(r) = removal {
            self.rx.remove_pipe(self.now, PipeId(i as u32), r);
        }
    }

    /// Brings the path back up (after [`Net::path_down`] without removal: a blackout).
    pub fn path_up(&mut self, i: usize) {
        self.paths[i].up = true;
    }

    /// The server vanishes (drops everything, answers nothing).
    pub fn kill_server(&mut self, s: usize) {
        self.server_alive[s] = false;
    }

    fn push(&mut self, at: Time, path: usize, dir: Dir, bytes: Vec<u8>) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, path, dir, bytes)));
    }

    fn flush_receiver(&mut self) {
        // The application reads first: reading frees buffer space for new requests.
        self.rx.read(&mut self.received, usize::MAX);
        let mut buf = Vec::new();
        while let Some((path, _)) = self.rx.poll_transmit(self.now, &mut buf) {
            let i = path.0 as usize;
            let p = &self.paths[i];
            if !p.up || self.rng.gen::<f64>() < p.spec.loss {
                continue;
            }
            let at = self.now + p.spec.delay;
            self.push(at, i, Dir::ToServer, buf.clone());
        }
        while let Some(ev) = self.rx.poll_event() {
            self.events.push((self.now, ev));
        }
    }

    fn flush_server(&mut self, path: usize, conn: ConnId) {
        let s = self.paths[path].spec.server;
        let mut buf = Vec::new();
        loop {
            let Some(tx) = self.servers[s].get_mut(&conn) else {
                return;
            };
            let Some(_) = tx.poll_transmit(self.now, &mut buf) else {
                return;
            };
            self.send_down(path, &buf);
        }
    }

    /// Sends `buf` from the server down `path` (serialised at its rate, lost at its rate).
    fn send_down(&mut self, path: usize, buf: &[u8]) {
        let p = &mut self.paths[path];
        let backlog = p.busy_until.saturating_since(self.now).as_secs_f64() * p.spec.rate;
        if p.spec.queue > 0 && backlog + buf.len() as f64 > p.spec.queue as f64 {
            return;
        }
        let start = p.busy_until.max(self.now);
        if p.spec.burst == 0 {
            let ser = Duration::from_secs_f64(buf.len() as f64 / p.spec.rate);
            p.busy_until = start + ser;
        } else {
            // tbf: the datagram leaves once the bucket (refilled at `rate`, at most `burst`
            // bytes) holds its length.
            let idle = start.saturating_since(p.busy_until).as_secs_f64();
            let tokens = (p.tokens + idle * p.spec.rate).min(p.spec.burst as f64);
            let need = buf.len() as f64;
            let wait = ((need - tokens) / p.spec.rate).max(0.0);
            p.tokens = (tokens - need).max(0.0);
            p.busy_until = start + Duration::from_secs_f64(wait);
        }
        if !p.up || self.rng.gen::<f64>() < p.spec.loss {
            return;
        }
        let at = p.busy_until + p.spec.delay;
        self.push(at, path, Dir::ToClient, buf.to_vec());
    }

    fn at_server(&mut self, path: usize, bytes: &[u8]) {
        let s = self.paths[path].spec.server;
        if !self.server_alive[s] || !self.paths[path].up {
            return;
        }
        let Ok(r) = Request::decode(bytes) else {
            return;
        };
        let conn = r.conn_id;
        for b in r.blocks() {
            self.pulls.push((s, b.start, b.end));
        }
        if let Some(tx) = self.servers[s].get_mut(&conn) {
            let _ = tx.handle_datagram(self.now, bytes);
        } else {
            // The server's host: a stateless SYN+ACK with a token, a reset, or the connection
            // for a request echoing a valid token (the path index stands for the address).
            let mut buf = Vec::new();
            match self
                .acceptor
                .on_unknown(self.now, &self.key, &path, bytes, &mut buf)
            {
                Unknown::Accept(tx) => {
                    self.servers[s].insert(conn, tx);
                }
                Unknown::Reply { len } => {
                    buf.truncate(len);
                    self.send_down(path, &buf);
                    return;
                }
                Unknown::Reset { len } => {
                    buf.truncate(len);
                    let at = self.now + self.paths[path].spec.delay;
                    self.push(at, path, Dir::ToClient, buf);
                    return;
                }
                Unknown::Drop => return,
            }
        }
        self.flush_server(path, conn);
    }

    /// Runs until `until` or completion; calls `at` hooks first.
    pub fn run_until(&mut self, until: Time) {
        self.flush_receiver();
        loop {
            let next_pkt = self.queue.peek().map(|Reverse((t, ..))| *t);
            let next_timer = self.rx.poll_timeout();
            let next = match (next_pkt, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if next > until {
                self.now = until;
                break;
            }
            self.now = self.now.max(next);
            if next_pkt == Some(next) {
                let Reverse((_, _, path, dir, bytes)) = self.queue.pop().unwrap();
                match dir {
                    Dir::ToServer => self.at_server(path, &bytes),
                    Dir::ToClient => {
                        if self.paths[path].up && self.server_alive[self.paths[path].spec.server] {
                            let before = self
                                .rx
                                .pipes()
                                .find(|p| p.path.0 as usize == path)
                                .map(|p| p.bytes_received);
                            let _ = self.rx.handle_datagram(self.now, &bytes);
                            let after = self
                                .rx
                                .pipes()
                                .find(|p| p.path.0 as usize == path)
                                .map(|p| p.bytes_received);
                            if let (Some(b), Some(a)) = (before, after) {
                                if a > b {
                                    self.delivered[path].push((self.now, a - b));
                                }
                            }
                        }
                    }
                }
            } else {
                self.rx.handle_timeout(self.now);
            }
            self.flush_receiver();
            if self.rx.is_closed() {
                break;
            }
        }
    }

    /// True if the object arrived whole: every byte once, in order, unchanged.
    pub fn intact(&self) -> bool {
        self.received.len() as u64 == self.len
            && self
                .received
                .iter()
                .enumerate()
                .all(|(i, &b)| b == byte_at(i as u64))
    }
}
