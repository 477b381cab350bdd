//! The receiving end of a pTCP connection (ptcp.txt §4.1–4.2, §4.5): one receive stream (the
//! single receive buffer, reassembled by pSEQ) and one TCP-v receiver pipe per path, each
//! acknowledging its own sequence numbers ([`PipeRecord`], [`ReceiverPipe`]) and carrying pACK
//! and the pTCP window on every acknowledgement.
//!
//! A pipe acknowledges a segment only once the stream took all of its bytes (or already had
//! them): bytes dropped beyond the window, or refused by a full out-of-order queue, stay
//! unacknowledged on the pipe, so its sender sends them again.

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

/// One receiver pipe.
#[derive(Debug)]
struct RxPipe {
    path: u32,
    conn_id: ConnId,
    pipe: ReceiverPipe,
    record: PipeRecord,
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
        }
    }

    /// Adds an established pipe on path `path`, named `conn_id` on the wire; its first
    /// sequence number is 1.
    pub fn add_pipe(&mut self, path: u32, conn_id: ConnId) {
        self.pipes.push(RxPipe {
            path,
            conn_id,
            pipe: ReceiverPipe::new(PipeSeq(1), self.mss, self.delayed_ack, self.delayed_ack_ms),
            record: PipeRecord::new(PipeSeq(1)),
        });
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
        let len = seg.payload.len() as u64;
        // The decoders bound pSEQ + len; the pipe's sequence range must fit too.
        let Some(seq_end) = seg.seq.checked_add(len) else {
            self.pipes[k].pipe.force_ack();
            return;
        };
        self.last = Some(k);
        let p = &mut self.pipes[k];
        p.pipe
            .on_timestamp(PipeSeq(seg.seq), PipeSeq(seq_end), seg.ts_val);
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
        for p in &mut self.pipes {
            p.pipe.on_timeout(now);
        }
    }

    /// The earliest delayed-ACK deadline.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pipes.iter().filter_map(|p| p.pipe.deadline()).min()
    }

    /// Writes the next acknowledgement into `out` (cleared first), if a pipe owes one: its
    /// cumulative acknowledgement and SACK blocks, pACK, and the pTCP window (§4.2: "pTCP
    /// reuses and overrides the TCP window advertisement field").
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<u8>) -> Option<PtcpTransmit> {
        out.clear();
        let k = self.pipes.iter().position(|p| p.pipe.wants_ack())?;
        let next = self.stream.next();
        let window = self.stream.window() as u32;
        let p = &mut self.pipes[k];
        let ack = p.record.rcv_nxt();
        let mut options = Options::default();
        p.record.fill_sack(&mut options);
        let mut flags = Flags::ACK;
        if self.eln && p.pipe.eln_mark(ack, p.record.has_holes()) {
            flags.insert(Flags::ELN);
        }
        PtcpSegment {
            ptcp: PtcpHeader {
                src: self.local,
                dst: self.remote,
                seq: 0,
                ack: next.0,
                fin: false,
            },
            segment: Segment {
                conn_id: p.conn_id,
                flags,
                seq: 1,
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
