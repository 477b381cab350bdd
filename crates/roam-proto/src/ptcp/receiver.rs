//! The receiving end of a pTCP connection (ptcp.txt §4.1–4.2, §4.5): one receive stream (the
//! single receive buffer, reassembled by pSEQ) and one TCP-v receiver pipe per path, each
//! acknowledging its own sequence numbers ([`PipeRecord`], [`ReceiverPipe`]) and carrying pACK
//! and the pTCP window on every acknowledgement.
//!
//! A pipe acknowledges a segment only once the stream took all of its bytes (or already had
//! them): bytes dropped beyond the window, or refused by a full out-of-order queue, stay
//! unacknowledged on the pipe, so its sender sends them again.
//!
//! Connection management (§4.4): a server's connection is made by the acceptor
//! (`ptcp::PtcpAcceptor`) from the first pipe's completing segment ([`PtcpReceiver::accept`]);
//! the other pipes join it ([`PtcpReceiver::join`], through the endpoint), up to the server's
//! pipe limit (nRx). A pipe closes when the client's FIN on it arrives in order: the server
//! acknowledges it with its own FIN (the passive close, CLOSE-WAIT and LAST-ACK in one, as the
//! server has nothing to send), repeated on a backed-off timer until acknowledged.

use std::time::Duration;

use roam_wire::{ConnId, Flags, Options, PtcpHeader, PtcpSegment, Segment};

use super::record::PipeRecord;
use super::sender::ts_of;
use crate::seqspace::{PipeSeq, StreamOffset};
use crate::tcp::{ReceiveStream, ReceiverPipe, TcpConfig};
use crate::Time;

use super::sender::PtcpTransmit;

/// Counters of a pTCP receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PtcpReceiverStats {
    /// Data segments taken in.
    pub segments: u64,
    /// Payload bytes that were already held (redundant stripes, unbound copies, spurious
    /// retransmissions).
    pub duplicate_bytes: u64,
    /// Segments not acknowledged on their pipe because the stream could not take them whole.
    pub not_taken: u64,
}

/// Longest wait between two of our FINs on a closing pipe.
const MAX_FIN_INTERVAL: Duration = Duration::from_secs(60);

/// A server pipe's place in the TCP-v state machine (ptcp.txt §4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RxPhase {
    /// Receives data.
    Established,
    /// The client's FIN arrived in order; our FIN (sent `tries` times) waits for its ACK; the
    /// next one is due at `deadline` (`None`: now).
    LastAck { tries: u32, deadline: Option<Time> },
    /// Closed.
    Closed,
}

/// One receiver pipe.
#[derive(Debug)]
struct RxPipe {
    path: u32,
    conn_id: ConnId,
    pipe: ReceiverPipe,
    record: PipeRecord,
    /// Our sequence number: our ISN + 1 (our FIN takes it when the pipe closes).
    seq: u64,
    /// The client's FIN: its sequence number, once seen.
    peer_fin: Option<PipeSeq>,
    phase: RxPhase,
}

/// The receiving end of a pTCP connection.
#[derive(Debug)]
pub struct PtcpReceiver {
    local: ConnId,
    remote: ConnId,
    mss: u64,
    delayed_ack: bool,
    delayed_ack_ms: u64,
    /// TCP-ELN: mark acknowledgements whose hole was lost on the local wireless hop.
    eln: bool,
    stream: ReceiveStream,
    pipes: Vec<RxPipe>,
    /// The pipe of the latest arrival (a window update goes there).
    last: Option<usize>,
    stats: PtcpReceiverStats,
    /// The receive buffer's size.
    stream_capacity: u64,
    /// Most pipes (nRx, the server's per-connection limit, §4.3 footnote 3).
    max_pipes: usize,
    /// The configured retransmission timeouts (our FIN's timer) and the retry limit.
    initial_rto: Duration,
    max_retries: u32,
}

impl PtcpReceiver {
    /// The receiver of connection `local` from the peer's `remote`, its buffer
    /// `cfg.recv_buffer` bytes, acknowledging as `cfg` says (delayed ACKs). No pipe yet.
    pub fn new(cfg: &TcpConfig, local: ConnId, remote: ConnId) -> Self {
        let mss = u64::from(cfg.mss);
        PtcpReceiver {
            local,
            remote,
            mss,
            delayed_ack: cfg.delayed_ack,
            delayed_ack_ms: cfg.delayed_ack_ms,
            eln: cfg.eln,
            stream: ReceiveStream::new(StreamOffset(0), cfg.recv_buffer, mss),
            pipes: Vec::new(),
            last: None,
            stats: PtcpReceiverStats::default(),
            stream_capacity: cfg.recv_buffer,
            max_pipes: usize::MAX,
            initial_rto: Duration::from_millis(cfg.initial_rto_ms),
            max_retries: cfg.max_retries,
        }
    }

    /// A server's connection (ptcp.txt §4.4, passive open), made when the first pipe's
    /// handshake completes: `local` is the server's aggregate identifier, `remote` the
    /// client's; at most `max_pipes` pipes (nRx). The first pipe, on path 0, is `pipe`, whose
    /// client started at `client_isn` and we at `server_isn` (the cookie).
    pub fn accept(
        cfg: &TcpConfig,
        (local, remote): (ConnId, ConnId),
        max_pipes: usize,
        pipe: ConnId,
        (client_isn, server_isn): (u64, u64),
    ) -> Self {
        let mut r = PtcpReceiver::new(cfg, local, remote);
        r.max_pipes = max_pipes.max(1);
        r.push_pipe(0, pipe, client_isn, server_isn);
        r
    }

    /// Adds an established pipe on path `path`, named `conn_id` on the wire; its first
    /// sequence number is 1.
    pub fn add_pipe(&mut self, path: u32, conn_id: ConnId) {
        self.push_pipe(path, conn_id, 0, 0);
    }

    fn push_pipe(&mut self, path: u32, conn_id: ConnId, client_isn: u64, server_isn: u64) {
        let first = PipeSeq(client_isn + 1);
        self.pipes.push(RxPipe {
            path,
            conn_id,
            pipe: ReceiverPipe::new(first, self.mss, self.delayed_ack, self.delayed_ack_ms),
            record: PipeRecord::new(first),
            seq: server_isn + 1,
            peer_fin: None,
            phase: RxPhase::Established,
        });
    }

    /// A pipe joins the connection (ptcp.txt §4.4: "When the server receives the SYN messages
    /// from each of the remaining nIF − 1 TCP-v pipes, it creates the corresponding TCP-v
    /// TCBs"): `datagram` completed its handshake (the acceptor checked the cookie it echoes)
    /// and names this connection. It becomes a pipe on the next path and is processed;
    /// returns the path, or `None` when the pipe limit is reached or the datagram does not
    /// belong here (other identifiers, a pipe already held, no acknowledgement).
    pub fn join(&mut self, now: Time, datagram: &[u8]) -> Option<u32> {
        let d = PtcpSegment::decode(datagram).ok()?;
        let seg = &d.segment;
        if d.ptcp.dst != self.local
            || d.ptcp.src != self.remote
            || self.pipes.len() >= self.max_pipes
            || self.pipes.iter().any(|p| p.conn_id == seg.conn_id)
            || !seg.flags.contains(Flags::ACK)
            || seg.flags.contains(Flags::SYN)
        {
            return None;
        }
        let client_isn = seg.seq.checked_sub(1)?;
        let server_isn = seg.ack.checked_sub(1)?;
        if client_isn > crate::tcp::MAX_ISN || server_isn > crate::tcp::MAX_ISN {
            return None;
        }
        let path = self.pipes.iter().map(|p| p.path + 1).max().unwrap_or(0);
        self.push_pipe(path, seg.conn_id, client_isn, server_isn);
        self.handle_datagram(now, datagram);
        Some(path)
    }

    /// The pipes: (path, its connection id), in the order they opened.
    pub fn pipe_ids(&self) -> impl Iterator<Item = (u32, ConnId)> + '_ {
        self.pipes.iter().map(|p| (p.path, p.conn_id))
    }

    /// The aggregate identifiers: (ours, the peer's).
    pub fn ids(&self) -> (ConnId, ConnId) {
        (self.local, self.remote)
    }

    /// Bytes of memory held at most: the receive buffer with its out-of-order pieces, and per
    /// pipe (up to the pipe limit, or those held when there is none) its record of at most
    /// [`super::MAX_RANGES`] ranges and its ELN ranges.
    pub fn memory_bound(&self) -> usize {
        let buffer = self.stream_capacity as usize;
        let pieces = (buffer / (self.mss as usize).max(1) + 2) * 192;
        let pipes = self.max_pipes.min(self.pipes.len().max(256));
        buffer + pieces + 17 * 1024 + pipes * (super::MAX_RANGES * 32 + 1024 * 64 + 512)
    }

    /// True once every pipe is closed (ptcp.txt Figure 3: CLOSED) and the end of the stream
    /// arrived.
    pub fn is_closed(&self) -> bool {
        self.stream.fin_received()
            && !self.pipes.is_empty()
            && self.pipes.iter().all(|p| p.phase == RxPhase::Closed)
    }

    /// pACK: the next stream offset expected (the end of the stream counts one).
    pub fn next(&self) -> StreamOffset {
        self.stream.next()
    }

    /// True once the end of the stream was received in order.
    pub fn fin_received(&self) -> bool {
        self.stream.fin_received()
    }

    /// In-order bytes the application has read.
    pub fn bytes_delivered(&self) -> u64 {
        self.stream.bytes_delivered()
    }

    /// Bytes held: in order and unread, and out of order.
    pub fn buffered(&self) -> usize {
        self.stream.buffered()
    }

    /// The window advertised now.
    pub fn window(&self) -> u64 {
        self.stream.window()
    }

    /// Counters.
    pub fn stats(&self) -> PtcpReceiverStats {
        self.stats
    }

    /// Handles one datagram. Anything that is not a pTCP segment of this connection on one of
    /// its pipes is ignored. Never panics.
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) {
        let Ok(d) = PtcpSegment::decode(bytes) else {
            return;
        };
        if d.ptcp.dst != self.local || d.ptcp.src != self.remote {
            return;
        }
        let seg = &d.segment;
        let Some(k) = self.pipes.iter().position(|p| p.conn_id == seg.conn_id) else {
            return;
        };
        if seg.flags.contains(Flags::SYN) {
            // A SYN for a pipe held (a late copy): the handshake is over.
            return;
        }
        let len = seg.payload.len() as u64;
        {
            let p = &mut self.pipes[k];
            match p.phase {
                RxPhase::Closed => {
                    // The client repeats its FIN: our ACK was lost; answer it again.
                    if seg.flags.contains(Flags::FIN) {
                        p.pipe.force_ack();
                    }
                    return;
                }
                RxPhase::LastAck { .. } => {
                    if seg.flags.contains(Flags::ACK) && seg.ack == p.seq + 1 {
                        // Our FIN is acknowledged: the pipe is closed (§4.4, closed()).
                        p.phase = RxPhase::Closed;
                        return;
                    }
                }
                RxPhase::Established => {}
            }
        }
        // The decoders bound pSEQ + len; the pipe's sequence range must fit too.
        let Some(seq_end) = seg.seq.checked_add(len) else {
            self.pipes[k].pipe.force_ack();
            return;
        };
        self.last = Some(k);
        let p = &mut self.pipes[k];
        p.pipe
            .on_timestamp(PipeSeq(seg.seq), PipeSeq(seq_end), seg.ts_val);
        if seg.flags.contains(Flags::FIN) && seq_end < u64::MAX {
            // The pipe's FIN takes the sequence number after its payload (§4.4: "each pipe
            // closes using TCP's regular closing handshake").
            p.peer_fin.get_or_insert(PipeSeq(seq_end));
            if len == 0 {
                p.record.on_arrival(PipeSeq(seq_end), PipeSeq(seq_end + 1));
                p.pipe.force_ack();
                Self::check_fin(p);
                return;
            }
        }
        let offset = StreamOffset(d.ptcp.seq);
        if d.ptcp.fin {
            // pFIN: the stream ends after this payload (§4.4; roam-wire's pTCP header).
            let end = offset.plus(len);
            if let Some(got) = self.stream.on_data(end, &[], true) {
                if got.fin_now {
                    p.pipe.force_ack();
                }
            }
        }
        if seg.payload.is_empty() {
            // A bare pFIN or a window probe: answered at once with pACK and the window.
            p.pipe.force_ack();
            return;
        }
        self.stats.segments += 1;
        let held_before = self.stream.buffered() as u64 + self.stream.bytes_delivered();
        let refused_before = self.stream.refused_pieces();
        let taken = self.stream.on_data(offset, seg.payload, false);
        let refused = self.stream.refused_pieces() != refused_before;
        if taken.is_some_and(|t| t.fin_now) {
            p.pipe.force_ack();
        }
        let whole = taken.is_some_and(|t| t.usable == len) && !refused;
        if !whole {
            // Dropped beyond the window or refused: the pipe does not acknowledge it, and
            // answers with the window at once.
            self.stats.not_taken += 1;
            p.pipe.force_ack();
            return;
        }
        let grown = (self.stream.buffered() as u64 + self.stream.bytes_delivered())
            .saturating_sub(held_before);
        self.stats.duplicate_bytes += len.saturating_sub(grown);
        match p.record.on_arrival(PipeSeq(seg.seq), PipeSeq(seq_end)) {
            Some(arrival) => {
                let holes = p.record.has_holes();
                p.pipe.on_arrival(now, arrival, len, holes);
            }
            None => p.pipe.force_ack(),
        }
        Self::check_fin(p);
    }

    /// A pipe whose FIN is now acknowledged in order closes from our side too: our FIN is due.
    fn check_fin(p: &mut RxPipe) {
        if p.phase == RxPhase::Established && p.peer_fin.is_some_and(|f| p.record.rcv_nxt() > f) {
            p.phase = RxPhase::LastAck {
                tries: 0,
                deadline: None,
            };
            p.pipe.force_ack();
        }
    }

    /// The host reports that `bytes` arrived corrupted on the local wireless hop (TCP-ELN,
    /// ptcp.txt §5.2.5: the WWAN pipe runs TCP-ELN): the pipe that carried it remembers the
    /// range, and its ACKs carry the ELN mark while that hole is the pipe's acknowledgement
    /// point. Anything that is not a data segment of one of this connection's pipes is ignored.
    pub fn note_corrupted(&mut self, bytes: &[u8]) {
        let Ok(d) = PtcpSegment::decode(bytes) else {
            return;
        };
        if d.ptcp.dst != self.local || d.ptcp.src != self.remote {
            return;
        }
        let seg = &d.segment;
        if let Some(p) = self.pipes.iter_mut().find(|p| p.conn_id == seg.conn_id) {
            let rcv_nxt = p.record.rcv_nxt();
            p.pipe
                .note_corrupted(PipeSeq(seg.seq), seg.payload.len() as u64, rcv_nxt);
        }
    }

    /// Moves up to `max` readable bytes into `out`; a window grown by enough is announced on
    /// the pipe of the latest arrival.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let (n, update) = self
            .stream
            .read_with(max, |bytes| out.extend_from_slice(bytes));
        if update {
            if let Some(p) = self.last.and_then(|k| self.pipes.get_mut(k)) {
                p.pipe.force_ack();
            }
        }
        n
    }

    /// Handles expired delayed-ACK timers.
    pub fn handle_timeout(&mut self, now: Time) {
        let max_retries = self.max_retries;
        for p in &mut self.pipes {
            p.pipe.on_timeout(now);
            if let RxPhase::LastAck {
                tries,
                deadline: Some(d),
            } = p.phase
            {
                if d <= now {
                    p.phase = if tries > max_retries {
                        // The client is gone: the pipe closes without its ACK.
                        RxPhase::Closed
                    } else {
                        RxPhase::LastAck {
                            tries,
                            deadline: None,
                        }
                    };
                }
            }
        }
    }

    /// The earliest deadline: delayed ACKs, our FIN's timer.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pipes
            .iter()
            .filter(|p| p.phase != RxPhase::Closed)
            .filter_map(|p| match p.phase {
                RxPhase::LastAck { deadline, .. } => deadline,
                _ => p.pipe.deadline(),
            })
            .min()
    }

    /// Writes the next acknowledgement into `out` (cleared first), if a pipe owes one: its
    /// cumulative acknowledgement and SACK blocks, pACK, and the pTCP window (§4.2: "pTCP
    /// reuses and overrides the TCP window advertisement field").
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<u8>) -> Option<PtcpTransmit> {
        out.clear();
        let k = self.pipes.iter().position(|p| {
            p.pipe.wants_ack() || matches!(p.phase, RxPhase::LastAck { deadline: None, .. })
        })?;
        let next = self.stream.next();
        let window = self.stream.window() as u32;
        let initial_rto = self.initial_rto;
        let p = &mut self.pipes[k];
        let mut fin = false;
        if let RxPhase::LastAck { tries, deadline } = p.phase {
            // Every segment of a closing pipe carries our FIN (it has nothing else to send).
            fin = true;
            if deadline.is_none() {
                let wait = initial_rto
                    .saturating_mul(1 << tries.min(16))
                    .min(MAX_FIN_INTERVAL);
                p.phase = RxPhase::LastAck {
                    tries: tries + 1,
                    deadline: Some(now + wait),
                };
            }
        }
        let ack = p.record.rcv_nxt();
        let mut options = Options::default();
        p.record.fill_sack(&mut options);
        let mut flags = Flags::ACK;
        if self.eln && p.pipe.eln_mark(ack, p.record.has_holes()) {
            flags.insert(Flags::ELN);
        }
        if fin {
            flags.insert(Flags::FIN);
        }
        PtcpSegment {
            ptcp: PtcpHeader {
                pipe: p.conn_id,
                src: self.local,
                dst: self.remote,
                seq: 0,
                ack: next.0,
                fin: false,
                syn: false,
            },
            handshake: None,
            segment: Segment {
                conn_id: p.conn_id,
                flags,
                seq: p.seq,
                ack: ack.0,
                window,
                ts_val: ts_of(now),
                ts_ecr: p.pipe.ts_recent(),
                options,
                payload: &[],
            },
        }
        .encode(out);
        p.pipe.on_ack_sent(ack);
        self.stream.on_window_sent(next, window);
        Some(PtcpTransmit {
            path: p.path,
            len: out.len(),
        })
    }
}
