//! The RCP sender: serves byte ranges of named objects as requested, keeping no congestion
//! state (rcp-r2cp.txt §3.2: "the sender simply maintains the send buffer with one pointer
//! (SND.NXT)").
//!
//! * cumulative REQs: send everything from SND.NXT up to SEG.REQ (§3.3.1);
//! * pull REQs: send exactly the pulled block; the last three pulled blocks served are kept in
//!   a cyclic buffer, and any block a REQ lists that is newer than all of them belongs to a
//!   lost pull REQ and is served too (§3.3.1);
//! * SEG.DEQ: bytes below the receiver's in-order point are purged from the send buffer
//!   (§3.3.5);
//! * SND.WND: the sender's reverse window, for data-limited sources or a configured limit,
//!   with explicit window updates and answers to the receiver's probes (§3.3.4).
//!
//! Any sender holding the object can serve any range: nothing here depends on what an
//! earlier sender did (server migration and mirrors, §2.2.2).
//!
//! **Expiry** (our addition; the paper is silent). A sender never retransmits, so it cannot
//! notice a receiver that has vanished. It therefore expires ([`TxState::Expired`]) when nothing
//! has arrived from the receiver for [`RcpConfig::idle_timeout_ms`], and, after answering a
//! FIN, once no repeated FIN has arrived for two maximum RTOs (so that a lost FIN+ACK can still
//! be answered, as TCP's TIME-WAIT does). The host then drops the connection and answers any
//! later request for it with a reset ([`reset_for`]), as it answers a SYN for an object it
//! does not hold. A receiver that slept for longer than the idle timeout reopens with a new SYN
//! for the range from its in-order point.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use roam_wire::{ConnId, Data, Flags, PullBlock, Request, RequestMode, UNKNOWN_LENGTH};

use super::RcpConfig;
use crate::Time;

/// Where a sender gets object bytes from (a directory, a map, a generated pattern).
pub trait ObjectStore: Send + Sync {
    /// Length of `name`, [`UNKNOWN_LENGTH`] for an unbounded source, or `None` if this store
    /// does not hold it.
    fn object_len(&self, name: &[u8]) -> Option<u64>;
    /// Appends `len` bytes of `name` starting at `offset` to `out` (the caller stays within
    /// the object).
    fn read(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>);
}

/// Sender state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxState {
    /// SYN+ACK sent, waiting for the receiver's ACK (its first request).
    SynReceived,
    /// Serving requests.
    Established,
    /// FIN answered (or reset by the receiver).
    Closed,
    /// Nothing heard for the idle timeout, or the linger after closing ended: the host may
    /// drop this connection (see the module docs).
    Expired,
}

/// Counters of a sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// DATA datagrams with payload sent.
    pub data_sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Pulled blocks served (re-requests).
    pub pulls_served: u64,
    /// Pulled blocks served because a later REQ revealed a lost pull REQ.
    pub lost_pulls_repaired: u64,
    /// Window updates sent (unsolicited or answering a probe).
    pub window_updates: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    SynAck,
    FinAck,
    WindowUpdate,
}

/// The sending end of an RCP connection. See the module docs.
pub struct RcpSender {
    conn_id: ConnId,
    store: Arc<dyn ObjectStore>,
    name: Vec<u8>,
    object_len: u64,
    mss: u64,
    sender_window: u64,
    state: TxState,
    /// SND.NXT: highest offset sent in cumulative mode.
    snd_nxt: u64,
    /// Highest cumulative request (SEG.REQ) seen.
    req_edge: u64,
    /// The receiver's in-order point (purge point).
    dequeued: u64,
    /// Bytes `kept_base ..` kept for re-requests.
    kept: VecDeque<u8>,
    kept_base: u64,
    /// Cyclic buffer of the last three pulled blocks served.
    cyclic: [Option<PullBlock>; 3],
    cyclic_next: usize,
    max_pull_served: u32,
    pulls: VecDeque<PullBlock>,
    control: VecDeque<Control>,
    /// Data the application made available (`None`: the whole object).
    available: Option<u64>,
    last_window_sent: u64,
    ts_recent: u32,
    /// When the last datagram of this connection arrived (the idle timer's base).
    last_heard: Time,
    idle_timeout: Option<Duration>,
    /// How long a closed sender keeps answering repeated FINs.
    close_linger: Duration,
    stats: SenderStats,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for RcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcpSender")
            .field("conn_id", &self.conn_id)
            .field("state", &self.state)
            .field("snd_nxt", &self.snd_nxt)
            .field("req_edge", &self.req_edge)
            .field("dequeued", &self.dequeued)
            .finish_non_exhaustive()
    }
}

/// Why a SYN was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// Not a decodable RCP SYN request.
    #[error("not an RCP SYN: {0}")]
    NotSyn(String),
    /// The store does not hold the named object.
    #[error("unknown object")]
    UnknownObject,
}

fn micros(now: Time) -> u32 {
    (now.as_micros() as u32).max(1)
}

impl RcpSender {
    /// Accepts a SYN request for an object in `store` (passive open) arriving at `now`. The
    /// SYN+ACK is sent on the next [`RcpSender::poll_transmit`].
    pub fn accept(
        config: &RcpConfig,
        store: Arc<dyn ObjectStore>,
        now: Time,
        bytes: &[u8],
    ) -> Result<RcpSender, AcceptError> {
        let r = Request::decode(bytes).map_err(|e| AcceptError::NotSyn(e.to_string()))?;
        if !r.flags.contains(Flags::SYN) {
            return Err(AcceptError::NotSyn("SYN flag missing".into()));
        }
        let object_len = store
            .object_len(r.object)
            .ok_or(AcceptError::UnknownObject)?;
        let start = r.req.min(object_len);
        // The SYN's `deq` carries the receiver's segment size.
        let mss = u64::from(r.deq).clamp(64, 65_000);
        let idle_timeout =
            (config.idle_timeout_ms > 0).then(|| Duration::from_millis(config.idle_timeout_ms));
        let two_max_rto = Duration::from_millis(config.max_rto_ms.saturating_mul(2));
        Ok(RcpSender {
            conn_id: r.conn_id,
            name: r.object.to_vec(),
            store,
            object_len,
            mss,
            sender_window: config.sender_window,
            state: TxState::SynReceived,
            snd_nxt: start,
            req_edge: start,
            dequeued: start,
            kept: VecDeque::new(),
            kept_base: start,
            cyclic: [None; 3],
            cyclic_next: 0,
            max_pull_served: 0,
            pulls: VecDeque::new(),
            control: VecDeque::from([Control::SynAck]),
            available: None,
            last_window_sent: 0,
            ts_recent: r.ts_val,
            last_heard: now,
            idle_timeout,
            close_linger: idle_timeout.map_or(two_max_rto, |t| t.min(two_max_rto)),
            stats: SenderStats::default(),
            scratch: Vec::new(),
        })
    }

    /// Connection id.
    pub fn conn_id(&self) -> ConnId {
        self.conn_id
    }

    /// State.
    pub fn state(&self) -> TxState {
        self.state
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// SND.NXT.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// The receiver's in-order point as last reported by SEG.DEQ.
    pub fn dequeued(&self) -> u64 {
        self.dequeued
    }

    /// Bytes held in the send buffer for possible re-requests.
    pub fn buffered_bytes(&self) -> usize {
        self.kept.len()
    }

    /// Limits what the receiver may request to `offset` (a data-limited application; `None`
    /// lifts the limit). Raising it sends a window update.
    pub fn set_available(&mut self, offset: Option<u64>) {
        self.available = offset;
        self.maybe_window_update();
    }

    /// SND.WND: the highest offset the receiver may request.
    pub fn window(&self) -> u64 {
        let mut w = self.object_len;
        if let Some(a) = self.available {
            w = w.min(a);
        }
        if self.sender_window > 0 {
            w = w.min(self.dequeued.saturating_add(self.sender_window));
        }
        w
    }

    fn maybe_window_update(&mut self) {
        // The receiver is (or may be) blocked at the window it last heard: tell it.
        if self.state == TxState::Established
            && self.window() > self.last_window_sent
            && self.req_edge >= self.last_window_sent
            && !self.control.contains(&Control::WindowUpdate)
        {
            self.control.push_back(Control::WindowUpdate);
        }
    }

    /// Handles one REQ. Malformed or foreign datagrams are ignored (returned as an error).
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), String> {
        let r = Request::decode(bytes).map_err(|e| e.to_string())?;
        if r.conn_id != self.conn_id {
            return Err("foreign connection id".into());
        }
        if self.state == TxState::Expired {
            return Err("connection expired".into());
        }
        self.last_heard = self.last_heard.max(now);
        if r.flags.contains(Flags::RST) {
            self.state = TxState::Closed;
            return Ok(());
        }
        if r.flags.contains(Flags::SYN) {
            if !self.control.contains(&Control::SynAck) {
                self.control.push_back(Control::SynAck);
            }
            return Ok(());
        }
        if r.flags.contains(Flags::FIN) {
            // Teardown as in TCP: answer FIN with FIN+ACK (again for a repeated FIN).
            self.state = TxState::Closed;
            self.pulls.clear();
            self.control.retain(|c| *c == Control::FinAck);
            if self.control.is_empty() {
                self.control.push_back(Control::FinAck);
            }
            return Ok(());
        }
        if self.state == TxState::Closed {
            return Ok(());
        }
        if self.state == TxState::SynReceived {
            if !r.flags.contains(Flags::ACK) {
                return Ok(());
            }
            self.state = TxState::Established;
        }
        self.ts_recent = r.ts_val;
        self.purge(r.dequeued());
        self.req_edge = self.req_edge.max(r.req.min(self.window()));
        self.serve_blocks(&r);
        if r.mode.contains(RequestMode::PROBE) && !self.control.contains(&Control::WindowUpdate) {
            self.control.push_back(Control::WindowUpdate);
        }
        self.maybe_window_update();
        Ok(())
    }

    /// §3.3.1: compares the REQ's blocks with the cyclic buffer; every block newer than all
    /// served ones is queued (the REQ's own pull, or one whose REQ was lost).
    fn serve_blocks(&mut self, r: &Request<'_>) {
        let own = r.mode.contains(RequestMode::PULL).then(|| r.blocks()[0].id);
        for b in r.blocks().iter().rev() {
            let known = self.cyclic.iter().flatten().any(|c| c == b);
            if known || b.id <= self.max_pull_served {
                continue;
            }
            if Some(b.id) != own {
                self.stats.lost_pulls_repaired += 1;
            }
            self.max_pull_served = b.id;
            self.cyclic[self.cyclic_next] = Some(*b);
            self.cyclic_next = (self.cyclic_next + 1) % self.cyclic.len();
            if b.end > self.dequeued {
                self.pulls.push_back(*b);
            }
        }
    }

    /// SEG.DEQ: the receiver holds everything below `upto`; drop it from the send buffer.
    fn purge(&mut self, upto: u64) {
        if upto <= self.dequeued {
            return;
        }
        self.dequeued = upto;
        let drop = upto
            .saturating_sub(self.kept_base)
            .min(self.kept.len() as u64);
        self.kept.drain(..drop as usize);
        self.kept_base = self.kept_base.saturating_add(drop);
        if self.kept.is_empty() {
            self.kept_base = self.kept_base.max(upto);
        }
    }

    /// Copies object bytes `[start, end)` into the scratch buffer, from the send buffer when it
    /// holds them, else from the store.
    fn load(&mut self, start: u64, end: u64) {
        self.scratch.clear();
        let kept_end = self.kept_base.saturating_add(self.kept.len() as u64);
        if start >= self.kept_base && end <= kept_end {
            let a = (start - self.kept_base) as usize;
            let b = (end - self.kept_base) as usize;
            self.scratch.extend(self.kept.range(a..b));
        } else {
            self.store
                .read(&self.name, start, (end - start) as usize, &mut self.scratch);
            if start == kept_end && start >= self.dequeued {
                self.kept.extend(self.scratch.iter().copied());
            } else if self.kept.is_empty() && start >= self.dequeued {
                self.kept_base = start;
                self.kept.extend(self.scratch.iter().copied());
            }
        }
    }

    /// When [`RcpSender::handle_timeout`] should next be called: the end of the idle timeout
    /// or of the linger after closing (`None` once expired, or with no idle timeout while
    /// open).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            TxState::Expired => None,
            TxState::Closed => Some(self.last_heard + self.close_linger),
            TxState::SynReceived | TxState::Established => {
                self.idle_timeout.map(|t| self.last_heard + t)
            }
        }
    }

    /// Expires the connection if its deadline has passed (early or repeated calls do nothing).
    pub fn handle_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.state = TxState::Expired;
            self.pulls.clear();
            self.control.clear();
        }
    }

    /// Whether the host may drop this connection (it has expired).
    pub fn is_expired(&self) -> bool {
        self.state == TxState::Expired
    }

    /// Writes the next DATA into `buf` (cleared first); returns its length, or `None`.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<usize> {
        let mut d = Data {
            conn_id: self.conn_id,
            flags: Flags::ACK,
            seq: self.snd_nxt,
            window: self.window(),
            object_len: None,
            ts_val: micros(now),
            ts_ecr: self.ts_recent,
            pull_id: 0,
            payload: &[],
        };
        if let Some(c) = self.control.pop_front() {
            d.object_len = Some(self.object_len);
            match c {
                Control::SynAck => d.flags = Flags::SYN | Flags::ACK,
                Control::FinAck => d.flags = Flags::FIN | Flags::ACK,
                Control::WindowUpdate => self.stats.window_updates += 1,
            }
            self.last_window_sent = self.last_window_sent.max(d.window);
            buf.clear();
            d.encode(buf);
            return Some(buf.len());
        }
        if self.state != TxState::Established {
            return None;
        }
        let limit = self.window().min(self.object_len);
        let (start, end, pull_id) = if let Some(b) = self.pulls.pop_front() {
            let start = b.start.max(self.dequeued);
            let end = b.end.min(limit).min(start.saturating_add(self.mss));
            if end < b.end && end > start {
                self.pulls.push_front(PullBlock { start: end, ..b });
            }
            if end <= start {
                return self.poll_transmit(now, buf);
            }
            self.stats.pulls_served += 1;
            if start <= self.snd_nxt && self.snd_nxt < end {
                self.snd_nxt = end;
            }
            (start, end, b.id)
        } else {
            let end = self
                .req_edge
                .min(limit)
                .min(self.snd_nxt.saturating_add(self.mss));
            if end <= self.snd_nxt {
                return None;
            }
            let start = self.snd_nxt;
            self.snd_nxt = end;
            (start, end, 0)
        };
        self.load(start, end);
        self.stats.data_sent += 1;
        self.stats.bytes_sent += end - start;
        self.last_window_sent = self.last_window_sent.max(d.window);
        d.seq = start;
        d.pull_id = pull_id;
        d.payload = &self.scratch;
        let mut out = std::mem::take(buf);
        out.clear();
        d.encode(&mut out);
        *buf = out;
        Some(buf.len())
    }
}

/// The reset a host sends for a request it cannot serve — one for a connection it does not
/// hold (expired, or never had), or a SYN for an object its store does not hold (so that the
/// receiver can turn to another mirror at once) — written into `buf`. `None` (nothing to send)
/// for a datagram that is not a decodable request, and for a reset (never answered, so two
/// hosts cannot trade resets). A host draws each reset it sends from a
/// [`super::ResetLimiter`].
pub fn reset_for(now: Time, request: &[u8], buf: &mut Vec<u8>) -> Option<usize> {
    let r = Request::decode(request).ok()?;
    if r.flags.contains(Flags::RST) {
        return None;
    }
    let d = Data {
        conn_id: r.conn_id,
        flags: Flags::RST,
        seq: 0,
        window: 0,
        object_len: None,
        ts_val: micros(now),
        ts_ecr: r.ts_val,
        pull_id: 0,
        payload: &[],
    };
    buf.clear();
    d.encode(buf);
    Some(buf.len())
}

/// The object length a store reports for an unbounded source.
pub const UNBOUNDED: u64 = UNKNOWN_LENGTH;
