//! The RCP sender: serves byte ranges of named objects as requested, keeping no congestion
//! state (rcp-r2cp.txt §3.2: "the sender simply maintains the send buffer with one pointer
//! (SND.NXT)").
//!
//! * cumulative REQs: send everything from SND.NXT up to SEG.REQ (§3.3.1);
//! * pull REQs: send exactly the pulled block; any block a REQ lists that was not served yet
//!   belongs to a lost pull REQ and is served too (§3.3.1 keeps the last three served in a
//!   cyclic buffer and serves blocks newer than all of them; we remember the last 128 ids, so
//!   a REQ overtaken by later ones is still served: `served_pulls.rs`);
//! * SEG.DEQ: the receiver's in-order point; nothing below it is sent again (§3.3.5);
//! * SND.WND: the sender's reverse window, for data-limited sources or a configured limit,
//!   with explicit window updates and answers to the receiver's probes (§3.3.4).
//!
//! Any sender holding the object can serve any range: nothing here depends on what an
//! earlier sender did (server migration and mirrors, §2.2.2).
//!
//! **Opening** (issue 16; `docs/HANDSHAKE-RCP.md`). A sender exists only once its receiver has
//! proved its address: the host's [`super::RcpAcceptor`] answers a SYN without keeping state
//! (a SYN+ACK with a token, never larger than the SYN) and creates the sender for the first
//! request that echoes a valid token. So the sender starts established.
//!
//! **Object bytes** come from an [`ObjectStore`] without blocking the host: a store that holds
//! them in memory answers [`ObjectStore::read_now`]; one that would block (a file) declines,
//! and the host serves [`RcpSender::poll_read`] / [`RcpSender::supply`] in its own time
//! (`host_reads.rs`). Memory per sender is bounded by [`RcpSender::memory_bound`]: bytes are
//! dropped once sent (a re-request reads them again), at most
//! [`RcpConfig::read_ahead`] bytes are read ahead, and at most [`MAX_QUEUED_PULLS`] pulled
//! blocks wait.
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

use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, DATA_FIXED_LEN, MAX_OBJECT_NAME,
    UNKNOWN_LENGTH,
};

use super::host_reads::{HostReads, ReadRequest};
use super::served_pulls::ServedPulls;
use super::{RcpConfig, RcpError};
use crate::Time;

/// Where a sender gets object bytes from (a map in memory, a generated pattern, files).
pub trait ObjectStore: Send + Sync {
    /// Length of `name`, [`UNKNOWN_LENGTH`] for an unbounded source, or `None` if this store
    /// does not hold it. Must answer without blocking (from an index in memory): the host's
    /// acceptor asks it for every SYN.
    fn object_len(&self, name: &[u8]) -> Option<u64>;

    /// Appends bytes `offset .. offset + len` of `name` to `out` and returns true, if the store
    /// can do so without blocking (it holds them in memory, or generates them). Otherwise it
    /// appends nothing and returns false, and the sender asks its host for the bytes instead
    /// ([`RcpSender::poll_read`]). The sender stays within the object; a store that appends
    /// fewer bytes than asked makes the sender reset the connection.
    fn read_now(&self, name: &[u8], offset: u64, len: usize, out: &mut Vec<u8>) -> bool;

    /// How far `name` may be requested now, for an object still being produced (`None`: all
    /// of it, the default). A sender starts with this limit (its SYN+ACK advertises it); the
    /// application raises it with [`RcpSender::set_available`]. Must answer without blocking.
    fn available(&self, _name: &[u8]) -> Option<u64> {
        None
    }
}

/// Most pulled blocks a sender keeps queued; further pulls are ignored until the queue
/// drains (the receiver pulls them again after its loss detection).
pub const MAX_QUEUED_PULLS: usize = 1024;

/// Sender state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxState {
    /// Serving requests.
    Established,
    /// FIN answered, reset by the receiver, or aborted by the host.
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
    /// Pulled blocks ignored because [`MAX_QUEUED_PULLS`] were waiting.
    pub pulls_dropped: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    /// A late copy of the SYN: answered as the old handshake did (without a token).
    SynAck,
    FinAck,
    WindowUpdate,
    /// The host aborted the connection.
    Reset,
}

/// The next segment to send.
#[derive(Debug, Clone, Copy)]
struct Head {
    start: u64,
    end: u64,
    pull_id: u32,
    /// From the front of the pull queue (else cumulative).
    pull: bool,
}

/// What a sender is opened with: the fields of the receiver's SYN, as its token brought them
/// back, and the object's length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opening<'a> {
    pub conn_id: ConnId,
    pub name: &'a [u8],
    pub object_len: u64,
    /// The store's limit for an object still being produced.
    pub available: Option<u64>,
    pub start: u64,
    pub mss: u16,
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
    /// The pull ids served (§3.3.1's cyclic buffer, tolerant of reordered REQs).
    served: ServedPulls,
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
    reads: HostReads,
    read_ahead: u64,
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

pub(crate) fn micros(now: Time) -> u32 {
    (now.as_micros() as u32).max(1)
}

/// The segment size a receiver's SYN asks for (its `deq` field), within what a datagram
/// holds.
pub(crate) fn syn_mss(deq: u32) -> u16 {
    deq.clamp(64, 65_000) as u16
}

/// SND.WND of a sender opened at `start`: the object, what the store has available, and the
/// configured reverse window.
pub(crate) fn initial_window(
    config: &RcpConfig,
    object_len: u64,
    available: Option<u64>,
    start: u64,
) -> u64 {
    let w = object_len.min(available.unwrap_or(u64::MAX));
    if config.sender_window > 0 {
        w.min(start.saturating_add(config.sender_window))
    } else {
        w
    }
}

impl RcpSender {
    /// A sender for a receiver that proved its address (see [`super::RcpAcceptor`]), opened
    /// at `now`.
    pub(crate) fn open(
        config: &RcpConfig,
        store: Arc<dyn ObjectStore>,
        now: Time,
        o: Opening<'_>,
    ) -> RcpSender {
        let start = o.start.min(o.object_len);
        let idle_timeout =
            (config.idle_timeout_ms > 0).then(|| Duration::from_millis(config.idle_timeout_ms));
        let two_max_rto = Duration::from_millis(config.max_rto_ms.saturating_mul(2));
        RcpSender {
            conn_id: o.conn_id,
            name: o.name[..o.name.len().min(MAX_OBJECT_NAME)].to_vec(),
            store,
            object_len: o.object_len,
            mss: u64::from(o.mss.max(1)),
            sender_window: config.sender_window,
            state: TxState::Established,
            snd_nxt: start,
            req_edge: start,
            dequeued: start,
            served: ServedPulls::default(),
            pulls: VecDeque::new(),
            control: VecDeque::new(),
            available: o.available,
            // The SYN+ACK advertised this window.
            last_window_sent: initial_window(config, o.object_len, o.available, start),
            ts_recent: 0,
            last_heard: now,
            idle_timeout,
            close_linger: idle_timeout.map_or(two_max_rto, |t| t.min(two_max_rto)),
            stats: SenderStats::default(),
            scratch: Vec::new(),
            reads: HostReads::default(),
            read_ahead: config.read_ahead,
        }
    }

    /// Connection id.
    pub fn conn_id(&self) -> ConnId {
        self.conn_id
    }

    /// The object this connection serves.
    pub fn object_name(&self) -> &[u8] {
        &self.name
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

    /// Object bytes held (read ahead through the host, or a pulled segment waiting).
    pub fn buffered_bytes(&self) -> usize {
        self.reads.held()
    }

    /// Pulled blocks waiting to be served.
    pub fn queued_pulls(&self) -> usize {
        self.pulls.len()
    }

    /// Bytes of memory this sender holds at most: read-ahead and one pulled segment of object
    /// bytes, the segment being encoded, the queued pulls, the name and the fixed state.
    pub fn memory_bound(&self) -> usize {
        let seg = usize::try_from(self.mss).unwrap_or(usize::MAX);
        let ahead = usize::try_from(self.read_ahead.max(self.mss)).unwrap_or(usize::MAX);
        ahead
            .saturating_add(seg.saturating_mul(2))
            .saturating_add(DATA_FIXED_LEN)
            .saturating_add(MAX_QUEUED_PULLS * std::mem::size_of::<PullBlock>())
            .saturating_add(MAX_OBJECT_NAME)
            .saturating_add(std::mem::size_of::<RcpSender>())
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

    /// The host gives up on this connection (its object cannot be read, or the application
    /// aborts): a reset is sent and the connection then expires.
    pub fn abort(&mut self) {
        if self.state == TxState::Expired {
            return;
        }
        self.close();
        self.control.clear();
        self.control.push_back(Control::Reset);
    }

    fn close(&mut self) {
        self.state = TxState::Closed;
        self.pulls.clear();
        self.reads.clear();
    }

    /// Handles one REQ. Malformed or foreign datagrams are ignored (returned as an error).
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), RcpError> {
        let r = Request::decode(bytes)?;
        if r.conn_id != self.conn_id {
            return Err(RcpError::ForeignConnection);
        }
        if self.state == TxState::Expired {
            return Err(RcpError::Expired);
        }
        self.last_heard = self.last_heard.max(now);
        if r.flags.contains(Flags::RST) {
            self.close();
            self.control.clear();
            return Ok(());
        }
        if r.flags.contains(Flags::SYN) {
            // A late copy of the SYN (the acceptor answered the first ones): answer it with a
            // SYN+ACK without a token, which the established receiver takes as a sign that
            // its ACK was lost. This sender's peer has proved its address, so the reply goes
            // nowhere new.
            if self.state == TxState::Established && !self.control.contains(&Control::SynAck) {
                self.control.push_back(Control::SynAck);
            }
            return Ok(());
        }
        if r.flags.contains(Flags::FIN) {
            // Teardown as in TCP: answer FIN with FIN+ACK (again for a repeated FIN).
            self.close();
            self.control.retain(|c| *c == Control::FinAck);
            if self.control.is_empty() {
                self.control.push_back(Control::FinAck);
            }
            return Ok(());
        }
        if self.state == TxState::Closed || !r.flags.contains(Flags::ACK) {
            return Ok(());
        }
        self.ts_recent = r.ts_val;
        self.dequeued = self.dequeued.max(r.dequeued());
        self.req_edge = self.req_edge.max(r.req.min(self.window()));
        self.serve_blocks(&r);
        if r.mode.contains(RequestMode::PROBE) && !self.control.contains(&Control::WindowUpdate) {
            self.control.push_back(Control::WindowUpdate);
        }
        self.maybe_window_update();
        Ok(())
    }

    /// §3.3.1: every block the REQ lists that was not served yet is queued (the REQ's own
    /// pull, or one whose REQ was lost — or overtaken by later REQs: `served_pulls.rs`).
    fn serve_blocks(&mut self, r: &Request<'_>) {
        let own = r.mode.contains(RequestMode::PULL).then(|| r.blocks()[0].id);
        for b in r.blocks().iter().rev() {
            if !self.served.take(b.id) {
                continue;
            }
            if Some(b.id) != own {
                self.stats.lost_pulls_repaired += 1;
            }
            if b.end > self.dequeued {
                if self.pulls.len() < MAX_QUEUED_PULLS {
                    self.pulls.push_back(*b);
                } else {
                    self.stats.pulls_dropped += 1;
                }
            }
        }
    }

    /// The next segment to send, if any: the front pull (pulls wholly below the receiver's
    /// in-order point or outside the window are dropped), else new cumulative data.
    fn next_head(&mut self) -> Option<Head> {
        let limit = self.window().min(self.object_len);
        while let Some(b) = self.pulls.front().copied() {
            let start = b.start.max(self.dequeued);
            let end = b.end.min(limit).min(start.saturating_add(self.mss));
            if end > start {
                return Some(Head {
                    start,
                    end,
                    pull_id: b.id,
                    pull: true,
                });
            }
            self.pulls.pop_front();
        }
        let end = self
            .req_edge
            .min(limit)
            .min(self.snd_nxt.saturating_add(self.mss));
        (end > self.snd_nxt).then_some(Head {
            start: self.snd_nxt,
            end,
            pull_id: 0,
            pull: false,
        })
    }

    /// The segment `h` was sent: advance the pull queue or SND.NXT.
    fn commit(&mut self, h: Head) {
        if h.pull {
            if let Some(b) = self.pulls.pop_front() {
                if h.end < b.end {
                    self.pulls.push_front(PullBlock { start: h.end, ..b });
                }
            }
            self.stats.pulls_served += 1;
            // A pull that covers SND.NXT advances it (its cumulative REQ may have been lost).
            if h.start <= self.snd_nxt && self.snd_nxt < h.end {
                self.snd_nxt = h.end;
            }
        } else {
            self.snd_nxt = h.end;
        }
        self.reads.trim(self.snd_nxt);
        self.stats.data_sent += 1;
        self.stats.bytes_sent += h.end - h.start;
    }

    /// Puts the bytes of `h` into the scratch buffer: held ones, or the store's if it can read
    /// without blocking. False if the host must read them first.
    fn load(&mut self, h: Head) -> bool {
        self.scratch.clear();
        if self.reads.take(h.start, h.end, &mut self.scratch) {
            return true;
        }
        let len = usize::try_from(h.end - h.start).unwrap_or(usize::MAX);
        if self
            .store
            .read_now(&self.name, h.start, len, &mut self.scratch)
        {
            return true;
        }
        self.scratch.clear();
        self.reads.activate();
        false
    }

    /// The next range of object bytes this sender needs the host to read (only for a store
    /// that declined [`ObjectStore::read_now`]): the pulled segment it will send next, then
    /// cumulative data read ahead up to [`RcpConfig::read_ahead`] bytes past SND.NXT. Each
    /// range is asked once; answer with [`RcpSender::supply`] (or [`RcpSender::abort`] if it
    /// cannot be read), then call [`RcpSender::poll_transmit`] again.
    pub fn poll_read(&mut self) -> Option<ReadRequest> {
        if !self.reads.active() || self.state != TxState::Established {
            return None;
        }
        let head = self.next_head()?;
        if head.pull {
            if let Some(r) = self.reads.want_pull(head.start, head.end) {
                return Some(r);
            }
        }
        let need_end = self.req_edge.min(self.window()).min(self.object_len);
        let cap = self.read_ahead.max(self.mss);
        self.reads.want_ahead(self.snd_nxt, need_end, cap)
    }

    /// The host read `bytes` of this connection's object from `offset`, answering a
    /// [`RcpSender::poll_read`]. Bytes nobody asked for are ignored; fewer bytes than asked
    /// leave the rest to be asked again.
    pub fn supply(&mut self, offset: u64, bytes: &[u8]) {
        if self.state == TxState::Established {
            self.reads.supply(offset, bytes, self.snd_nxt);
        }
    }

    /// When [`RcpSender::handle_timeout`] should next be called: the end of the idle timeout
    /// or of the linger after closing (`None` once expired, or with no idle timeout while
    /// open).
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            TxState::Expired => None,
            TxState::Closed => Some(self.last_heard + self.close_linger),
            TxState::Established => self.idle_timeout.map(|t| self.last_heard + t),
        }
    }

    /// Expires the connection if its deadline has passed (early or repeated calls do nothing).
    pub fn handle_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.expire();
        }
    }

    fn expire(&mut self) {
        self.state = TxState::Expired;
        self.pulls.clear();
        self.control.clear();
        self.reads.clear();
        self.scratch = Vec::new();
    }

    /// Whether the host may drop this connection (it has expired).
    pub fn is_expired(&self) -> bool {
        self.state == TxState::Expired
    }

    /// Writes the next DATA into `buf` (cleared first); returns its length, or `None` (nothing
    /// to send, or the bytes to send next are still being read by the host).
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
            token: None,
            payload: &[],
        };
        if let Some(c) = self.control.pop_front() {
            match c {
                Control::SynAck => {
                    d.flags = Flags::SYN | Flags::ACK;
                    d.object_len = Some(self.object_len);
                }
                Control::FinAck => {
                    d.flags = Flags::FIN | Flags::ACK;
                    d.object_len = Some(self.object_len);
                }
                Control::WindowUpdate => {
                    d.object_len = Some(self.object_len);
                    self.stats.window_updates += 1;
                }
                Control::Reset => {
                    d.flags = Flags::RST;
                    d.window = 0;
                    self.expire();
                }
            }
            self.last_window_sent = self.last_window_sent.max(d.window);
            buf.clear();
            d.encode(buf);
            return Some(buf.len());
        }
        if self.state != TxState::Established {
            return None;
        }
        let head = self.next_head()?;
        if !self.load(head) {
            return None;
        }
        if self.scratch.len() != usize::try_from(head.end - head.start).unwrap_or(usize::MAX) {
            // The store broke its contract (the object is shorter than it said): reset rather
            // than send wrong bytes.
            self.abort();
            return self.poll_transmit(now, buf);
        }
        self.commit(head);
        self.last_window_sent = self.last_window_sent.max(d.window);
        d.seq = head.start;
        d.pull_id = head.pull_id;
        d.payload = &self.scratch;
        buf.clear();
        d.encode(buf);
        Some(buf.len())
    }
}

/// The reset a host sends for a request it cannot serve — one for a connection it does not
/// hold (expired, or never had, or a token that does not verify), or a SYN for an object its
/// store does not hold (so that the receiver can turn to another mirror at once) — written
/// into `buf`. `None` (nothing to send) for a datagram that is not a decodable request, for a
/// reset (never answered, so two hosts cannot trade resets), and for a request shorter than
/// the reset: a host never sends an unvalidated address more bytes than it received (a
/// receiver's plain requests are shorter than a reset; its SYNs, pulls and token echoes are
/// not). A host draws each reset it sends from a [`super::ResetLimiter`].
pub fn reset_for(now: Time, request: &[u8], buf: &mut Vec<u8>) -> Option<usize> {
    let r = Request::decode(request).ok()?;
    if r.flags.contains(Flags::RST) || request.len() < DATA_FIXED_LEN {
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
        token: None,
        payload: &[],
    };
    buf.clear();
    d.encode(buf);
    Some(buf.len())
}

/// The object length a store reports for an unbounded source.
pub const UNBOUNDED: u64 = UNKNOWN_LENGTH;
