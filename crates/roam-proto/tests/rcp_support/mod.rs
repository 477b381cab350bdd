//! A two-endpoint virtual-time network for RCP engine tests: one receiver, one sender host
//! (an [`RcpAcceptor`] answering the handshake without state, then the sender), a fixed
//! one-way delay, and per-direction filters that drop (or duplicate, or delay) datagrams.
//! With `read_delay` set, the sender's store declines to read without blocking and the host
//! serves the sender's read requests after that delay (a file read by a runtime).

#![allow(dead_code)] // Each test binary uses part of the harness.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
use roam_proto::rcp::{
    ObjectStore, RcpAcceptor, RcpCc, RcpConfig, RcpEvent, RcpReceiver, RcpSender, ResetLimiter,
};
use roam_proto::Time;
use roam_wire::{ConnId, UNKNOWN_LENGTH};

/// Objects held in memory.
#[derive(Debug, Default)]
pub struct MapStore(pub BTreeMap<Vec<u8>, Vec<u8>>);

impl MapStore {
    /// Appends bytes `offset .. offset + len` of `name` (clipped to the object).
    pub fn copy(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) {
        if let Some(v) = self.0.get(name) {
            let a = usize::try_from(offset).unwrap_or(usize::MAX).min(v.len());
            let b = a.saturating_add(len).min(v.len());
            out.extend_from_slice(&v[a..b]);
        }
    }
}

impl ObjectStore for MapStore {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        self.0.get(name).map(|v| v.len() as u64)
    }
    fn read_now(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        self.copy(name, offset, len, out);
        true
    }
}

/// The harness's store: the objects, what the sender's application has made available, and
/// whether reads go through the host.
#[derive(Debug, Default)]
pub struct HostStore {
    pub map: MapStore,
    /// `u64::MAX`: everything.
    available: AtomicU64,
    deferred: AtomicBool,
}

impl HostStore {
    fn set_available(&self, a: Option<u64>) {
        self.available
            .store(a.unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

impl ObjectStore for HostStore {
    fn object_len(&self, name: &[u8]) -> Option<u64> {
        self.map.object_len(name)
    }
    fn read_now(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool {
        !self.deferred.load(Ordering::Relaxed) && self.map.read_now(name, offset, len, out)
    }
    fn available(&self, _name: &[u8]) -> Option<u64> {
        Some(self.available.load(Ordering::Relaxed)).filter(|&a| a != u64::MAX)
    }
}

/// The receiver's address as the sender's host sees it.
pub const RECEIVER_ADDR: &str = "10.0.0.2:4000";

/// The sender host's token key in these tests.
pub fn test_key() -> TokenKey {
    TokenKey::new(*b"rcp-test-key-16b")
}

/// Deterministic object contents.
pub fn object_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// What a filter decides for one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Deliver after the link delay.
    Deliver,
    /// Drop.
    Drop,
    /// Deliver twice.
    Duplicate,
    /// Deliver after the link delay plus this much.
    Delay(Duration),
}

/// A filter sees (now, datagram) and decides its fate.
pub type Filter = Box<dyn FnMut(Time, &[u8]) -> Fate>;

/// A filter that drops every `n`-th datagram it sees and delivers the rest.
pub fn drop_every(n: u32) -> Filter {
    let mut seen = 0u32;
    Box::new(move |_, _| {
        seen += 1;
        if seen.is_multiple_of(n) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    })
}

/// The network and both ends.
pub struct Net {
    pub now: Time,
    pub delay: Duration,
    pub rx: RcpReceiver,
    pub tx: Option<RcpSender>,
    pub store: Arc<HostStore>,
    pub acceptor: RcpAcceptor,
    pub key: TokenKey,
    pub resets: ResetLimiter,
    pub config: Arc<RcpConfig>,
    /// Datagrams the sender's host answered without a connection: (stateless replies,
    /// resets).
    pub stateless: (u64, u64),
    /// Sender reads go through the host, answered after this delay.
    pub read_delay: Option<Duration>,
    /// Host reads in progress: (due, seq) → (offset, bytes).
    reads: BTreeMap<(Time, u64), (u64, Vec<u8>)>,
    /// Requests in flight to the sender: (arrival, seq, bytes).
    to_tx: BTreeMap<(Time, u64), Vec<u8>>,
    /// Data in flight to the receiver.
    to_rx: BTreeMap<(Time, u64), Vec<u8>>,
    seq: u64,
    pub req_filter: Filter,
    pub data_filter: Filter,
    pub delivered: Vec<u8>,
    pub events: Vec<RcpEvent>,
    /// Every request the receiver sent, with its send time.
    pub sent_requests: Vec<(Time, Vec<u8>)>,
    /// Every datagram the sender's host sent (replies, resets, DATA), with its send time.
    pub sent_data: Vec<(Time, Vec<u8>)>,
    /// Called when the sender is idle, for data-limited tests.
    pub deliver_to_frozen: bool,
    /// Data the sender's application makes available when it accepts (`None`: all).
    pub sender_available: Option<u64>,
    /// Most bytes the receiver's application reads per flush (a slow reader); with a limit it
    /// reads again every millisecond while data waits.
    pub read_budget: usize,
    /// A slow producer at the sender: bytes of the object it makes available per millisecond
    /// from `sender_available` on (window updates tell the receiver; `None`: all at once).
    pub produce_per_ms: Option<u64>,
    /// Length of the object.
    len: u64,
    /// Times at which the receiver's host freezes the connection (sleep) and thaws it, in
    /// order: (freeze at, thaw at).
    pub sleeps: Vec<(Time, Time)>,
}

impl Net {
    /// A receiver asking for the whole object `obj` of `len` bytes over a link of `delay`.
    pub fn new(config: RcpConfig, cc: RcpCc, len: usize, delay: Duration) -> Net {
        Net::with_range(config, cc, len, delay, (0, UNKNOWN_LENGTH))
    }

    /// A receiver asking for bytes `range.0 .. range.1` of the object `obj` of `len` bytes.
    pub fn with_range(
        config: RcpConfig,
        cc: RcpCc,
        len: usize,
        delay: Duration,
        range: (u64, u64),
    ) -> Net {
        let mut store = HostStore::default();
        store.map.0.insert(b"obj".to_vec(), object_bytes(len));
        store.set_available(None);
        let store = Arc::new(store);
        let config = Arc::new(config);
        let rx = RcpReceiver::connect(config.clone(), cc, ConnId(77), b"obj", range, Time::ZERO)
            .expect("valid config");
        Net {
            now: Time::ZERO,
            delay,
            rx,
            tx: None,
            acceptor: RcpAcceptor::new(config.clone(), store.clone()),
            store,
            key: test_key(),
            resets: ResetLimiter::new(config.resets_per_second),
            stateless: (0, 0),
            read_delay: None,
            reads: BTreeMap::new(),
            config,
            to_tx: BTreeMap::new(),
            to_rx: BTreeMap::new(),
            seq: 0,
            req_filter: Box::new(|_, _| Fate::Deliver),
            data_filter: Box::new(|_, _| Fate::Deliver),
            delivered: Vec::new(),
            events: Vec::new(),
            sent_requests: Vec::new(),
            sent_data: Vec::new(),
            deliver_to_frozen: false,
            sender_available: None,
            read_budget: usize::MAX,
            produce_per_ms: None,
            len: len as u64,
            sleeps: Vec::new(),
        }
    }

    /// Hands `bytes` to the sender's host now: to the sender if there is one, else to the
    /// acceptor (whose answers go on the wire).
    pub fn deliver_to_sender_host(&mut self, bytes: &[u8]) {
        match self.tx.as_mut() {
            Some(tx) => {
                let _ = tx.handle_datagram(self.now, bytes);
            }
            None => self.unknown(bytes),
        }
        self.flush();
    }

    fn push(&mut self, to_sender: bool, bytes: Vec<u8>) {
        if !to_sender {
            self.sent_data.push((self.now, bytes.clone()));
        }
        let fate = if to_sender {
            (self.req_filter)(self.now, &bytes)
        } else {
            (self.data_filter)(self.now, &bytes)
        };
        let at = self.now + self.delay;
        let copies: Vec<Time> = match fate {
            Fate::Deliver => vec![at],
            Fate::Drop => vec![],
            Fate::Duplicate => vec![at, at + Duration::from_micros(1)],
            Fate::Delay(d) => vec![at + d],
        };
        for t in copies {
            self.seq += 1;
            let q = if to_sender {
                &mut self.to_tx
            } else {
                &mut self.to_rx
            };
            q.insert((t, self.seq), bytes.clone());
        }
    }

    /// Sends everything both ends have ready and lets the receiver's application read.
    pub fn flush(&mut self) {
        loop {
            let mut progressed = false;
            let mut buf = Vec::new();
            while self.rx.poll_transmit(self.now, &mut buf).is_some() {
                self.sent_requests.push((self.now, buf.clone()));
                let b = std::mem::take(&mut buf);
                self.push(true, b);
                progressed = true;
            }
            if let Some(tx) = self.tx.as_mut() {
                let mut out = Vec::new();
                while tx.poll_transmit(self.now, &mut buf).is_some() {
                    out.push(std::mem::take(&mut buf));
                }
                // Reads the sender needs: the host starts them now; they complete later.
                let delay = self.read_delay.unwrap_or_default();
                while let Some(r) = tx.poll_read() {
                    let mut bytes = Vec::new();
                    self.store
                        .map
                        .copy(tx.object_name(), r.offset, r.len, &mut bytes);
                    self.seq += 1;
                    self.reads
                        .insert((self.now + delay, self.seq), (r.offset, bytes));
                }
                for b in out {
                    self.push(false, b);
                    progressed = true;
                }
            }
            // Reading frees buffer space the receiver may now request into.
            if self.rx.read(&mut self.delivered, self.read_budget) > 0 {
                progressed = true;
            }
            while let Some(ev) = self.rx.poll_event() {
                self.events.push(ev);
            }
            if !progressed {
                break;
            }
        }
    }

    /// Runs until `until` or until nothing is pending.
    pub fn run_until(&mut self, until: Time) {
        self.flush();
        loop {
            let next_tx = self.to_tx.keys().next().map(|k| k.0);
            let next_rx = self.to_rx.keys().next().map(|k| k.0);
            let timer = self.rx.poll_timeout();
            let waiting = self.rx.rcv_nxt() > self.rx.read_point();
            let read_at = (waiting && self.read_budget < usize::MAX)
                .then(|| self.now + Duration::from_millis(1));
            let producing = self.produce_per_ms.is_some()
                && self.sender_available.is_some_and(|a| a < self.len);
            let produce_at =
                (producing && self.tx.is_some()).then(|| self.now + Duration::from_millis(1));
            let sleep_at = self
                .sleeps
                .first()
                .map(|&(f, t)| if self.rx.is_frozen() { t } else { f });
            let host_read = self.reads.keys().next().map(|k| k.0);
            let Some(next) = [
                next_tx, next_rx, timer, read_at, produce_at, sleep_at, host_read,
            ]
            .into_iter()
            .flatten()
            .min() else {
                break;
            };
            if next > until {
                self.now = until;
                break;
            }
            self.now = self.now.max(next);
            if next_tx == Some(next) {
                let Some((_, bytes)) = self.to_tx.pop_first() else {
                    break;
                };
                self.deliver_to_sender_host(&bytes);
            } else if next_rx == Some(next) {
                let Some((_, bytes)) = self.to_rx.pop_first() else {
                    break;
                };
                if !self.rx.is_frozen() || self.deliver_to_frozen {
                    let _ = self.rx.handle_datagram(self.now, &bytes);
                }
            } else if sleep_at == Some(next) {
                if self.rx.is_frozen() {
                    self.rx.thaw(self.now);
                    self.sleeps.remove(0);
                } else {
                    self.rx.freeze(self.now);
                }
            } else if host_read == Some(next) {
                if let Some((_, (offset, bytes))) = self.reads.pop_first() {
                    if let Some(tx) = self.tx.as_mut() {
                        tx.supply(offset, &bytes);
                    }
                }
            } else if timer == Some(next) {
                self.rx.handle_timeout(self.now);
            }
            if produce_at == Some(next) {
                let more = self.produce_per_ms.unwrap_or(0);
                let available = self.sender_available.map(|a| (a + more).min(self.len));
                self.sender_available = available;
                self.store.set_available(available);
                if let Some(tx) = self.tx.as_mut() {
                    tx.set_available(available);
                }
            }
            self.flush();
        }
    }

    /// The sender's host handles a request for no connection it holds (the acceptor).
    fn unknown(&mut self, bytes: &[u8]) {
        self.store.set_available(self.sender_available);
        self.store
            .deferred
            .store(self.read_delay.is_some(), Ordering::Relaxed);
        let mut out = Vec::new();
        match self
            .acceptor
            .on_unknown(self.now, &self.key, RECEIVER_ADDR, bytes, &mut out)
        {
            Unknown::Drop => {}
            Unknown::Reply { len } => {
                assert!(
                    len <= bytes.len(),
                    "a stateless reply larger than its cause"
                );
                self.stateless.0 += 1;
                out.truncate(len);
                self.push(false, out);
            }
            Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "a reset larger than its cause");
                if self.resets.allow(self.now) {
                    self.stateless.1 += 1;
                    out.truncate(len);
                    self.push(false, out);
                }
            }
            Unknown::Accept(tx) => self.tx = Some(tx),
        }
    }

    /// Makes the sender's store decline to read without blocking (a file): the host reads
    /// after `delay`.
    pub fn with_host_reads(mut self, delay: Duration) -> Self {
        self.read_delay = Some(delay);
        self.store.deferred.store(true, Ordering::Relaxed);
        self
    }

    /// True once the receiver has every byte and the teardown completed.
    pub fn done(&self) -> bool {
        self.events.contains(&RcpEvent::Closed)
    }
}

/// Runs the handshake between `rx` (just connected) and a sender host serving `store`, with
/// no network in between: SYN, the stateless SYN+ACK with its token, and the first request
/// echoing it, which opens the sender. Panics if any step fails.
pub fn open_pair(
    config: &Arc<RcpConfig>,
    store: Arc<dyn ObjectStore>,
    rx: &mut RcpReceiver,
    now: Time,
) -> RcpSender {
    let mut acceptor = RcpAcceptor::new(config.clone(), store);
    let key = test_key();
    let mut syn = Vec::new();
    rx.poll_transmit(now, &mut syn).expect("a SYN");
    let mut reply = Vec::new();
    match acceptor.on_unknown(now, &key, RECEIVER_ADDR, &syn, &mut reply) {
        Unknown::Reply { len } => reply.truncate(len),
        other => panic!("SYN answered with {other:?}"),
    }
    rx.handle_datagram(now, &reply).expect("the SYN+ACK");
    let mut req = Vec::new();
    rx.poll_transmit(now, &mut req).expect("the first request");
    match acceptor.on_unknown(now, &key, RECEIVER_ADDR, &req, &mut reply) {
        Unknown::Accept(tx) => tx,
        other => panic!("token echo answered with {other:?}"),
    }
}
