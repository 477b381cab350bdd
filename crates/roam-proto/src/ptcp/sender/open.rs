//! Connection management of the sending client (ptcp.txt §4.4; docs/PTCP.md, "Connection
//! management"): the active open, the first pipe's SYN with the handshake extension, the
//! SYN-ACKs that establish pipes and open the others (at most nRx), the handshake's ACK.

use std::time::Duration;

use roam_wire::{ConnId, Flags, Options, PtcpHandshake, PtcpHeader, PtcpSegment, Segment};

use super::{
    ts_of, ClientHandshake, Phase, PtcpSender, PtcpTransmit, TxPipe, MAX_RTT_SAMPLE, SYN_PAD,
};
use crate::cc::CcKind;
use crate::ptcp::PipeId;
use crate::seqspace::PipeSeq;
use crate::tcp::{SenderPipe, TcpConfig, MAX_ISN};
use crate::Time;

impl PtcpSender {
    /// A client connection `local` (ptcp.txt §4.4, active open) that announces `addrs` (its
    /// interfaces' addresses, encoded by the host: ipTx) in its first SYN. Pipes are added with
    /// [`PtcpSender::open_pipe`]; the first one opened sends the SYN, the others wait for its
    /// SYN-ACK. `None` if `addrs` does not fit the extension (more than
    /// [`roam_wire::MAX_PTCP_ADDRS`] or a too long one).
    pub fn connect(cfg: &TcpConfig, local: ConnId, addrs: &[&[u8]]) -> Option<Self> {
        let mut list = Vec::new();
        PtcpHandshake::write_list(addrs, &mut list)?;
        let mut s = PtcpSender::new(cfg, local, ConnId(0));
        s.handshake = Some(ClientHandshake { list, server: None });
        Some(s)
    }

    /// Adds a pipe of a connecting client on path `path`, named `conn_id` on the wire, with
    /// controller `cc` and initial sequence number `isn` (the host draws it; at most
    /// [`crate::tcp::MAX_ISN`], else `None`). The first pipe sends its SYN at once; the others
    /// once the first is established.
    pub fn open_pipe(
        &mut self,
        now: Time,
        path: u32,
        conn_id: ConnId,
        cc: CcKind,
        isn: u64,
    ) -> Option<PipeId> {
        if isn > MAX_ISN || self.handshake.is_none() {
            return None;
        }
        let first = self.pipes.is_empty();
        let id = self.bindings.add_pipe();
        let pipe = SenderPipe::new(&self.cfg, cc, self.mss, self.cfg.sack, PipeSeq(isn + 1));
        let phase = if first || self.remote != ConnId(0) {
            Phase::SynSent {
                tries: 0,
                deadline: now,
            }
        } else {
            Phase::Idle
        };
        self.pipes.push(TxPipe {
            id,
            path,
            conn_id,
            pipe,
            cc,
            isn,
            peer_next: 0,
            phase,
            ack_due: false,
            ts_recent: 0,
            dead: false,
        });
        Some(id)
    }

    /// The server's answer to the handshake, once its first SYN-ACK arrived: nRx (the pipes
    /// it agreed to receive on) and its addresses (ipRx, as the host encoded them).
    pub fn server_addresses(&self) -> Option<(u8, Vec<&[u8]>)> {
        let (nrx, list) = self.handshake.as_ref()?.server.as_ref()?;
        let h = PtcpHandshake {
            ntx: 0,
            nrx: *nrx,
            list,
        };
        Some((*nrx, h.addresses().collect()))
    }

    /// True once a pipe is established (ptcp.txt Figure 3: ESTABLISHED(k) for k ≥ 1): the
    /// connection carries data.
    pub fn is_established(&self) -> bool {
        self.pipes
            .iter()
            .any(|p| !p.dead && matches!(p.phase, Phase::Established | Phase::Closing))
    }

    /// The pipes established now (k of ESTABLISHED(k)).
    pub fn established_pipes(&self) -> usize {
        self.pipes
            .iter()
            .filter(|p| !p.dead && p.phase == Phase::Established)
            .count()
    }

    /// True once every pipe is closed (ptcp.txt Figure 3: CLOSED) after the stream was
    /// acknowledged, or every pipe failed.
    pub fn is_closed(&self) -> bool {
        !self.pipes.is_empty()
            && self.pipes.iter().all(TxPipe::closed)
            && (self.is_complete() || self.failed())
    }

    /// A SYN-ACK on pipe `k` (ptcp.txt §4.4): the pipe is established. The first one names the
    /// server's aggregate identifier, nRx and its addresses; the other pipes open then, at
    /// most nRx in all.
    pub(super) fn on_syn_ack(&mut self, now: Time, k: usize, d: &PtcpSegment<'_>) {
        let seg = &d.segment;
        let first = self.remote == ConnId(0);
        let p = &mut self.pipes[k];
        if !seg.flags.contains(Flags::ACK) || seg.seq > MAX_ISN || seg.ack != p.isn + 1 {
            return;
        }
        if !matches!(p.phase, Phase::SynSent { .. }) {
            // A repeated SYN-ACK (the server keeps no state: it answered a repeated SYN):
            // our handshake ACK may have been lost, send it again.
            if p.phase == Phase::Established && seg.seq + 1 == p.peer_next {
                p.ack_due = true;
            }
            return;
        }
        if first {
            let (Some(h), false) = (d.handshake, d.ptcp.src == ConnId(0)) else {
                return;
            };
            self.remote = d.ptcp.src;
            if let Some(hs) = self.handshake.as_mut() {
                hs.server = Some((h.nrx, h.list.to_vec()));
            }
        } else if d.ptcp.src != self.remote {
            // The answer to this pipe's SYN sent as a first one, after another pipe's
            // SYN-ACK made the connection: it opens again as a join, at once.
            if d.handshake.is_some() {
                self.pipes[k].phase = Phase::SynSent {
                    tries: 0,
                    deadline: now,
                };
            }
            return;
        }
        let p = &mut self.pipes[k];
        p.peer_next = seg.seq + 1;
        p.phase = Phase::Established;
        p.ack_due = true;
        p.ts_recent = seg.ts_val;
        if let Some(mss) = seg.options.mss {
            // The server's cookie carries the smaller MSS of the two.
            let mss = u64::from(mss).clamp(64, self.mss);
            if mss < p.pipe.mss() {
                p.pipe.negotiate(&self.cfg, p.cc, mss, self.cfg.sack);
            }
        }
        let rtt = Duration::from_micros(u64::from(ts_of(now).wrapping_sub(seg.ts_ecr)));
        if rtt < MAX_RTT_SAMPLE {
            p.pipe.on_handshake_rtt(rtt);
        }
        if first {
            // §4.4: "When the client pTCP receives the SYN + ACK, it creates the remaining
            // nIF − 1 TCP-v TCBs and issues open() calls to each of them", as many as the
            // server agreed to (nRx; at least this one).
            let nrx = self
                .handshake
                .as_ref()
                .and_then(|h| h.server.as_ref())
                .map_or(1, |(n, _)| usize::from(*n).max(1));
            let mut opened = self
                .pipes
                .iter()
                .filter(|q| {
                    !q.dead && matches!(q.phase, Phase::SynSent { .. } | Phase::Established)
                })
                .count();
            for q in &mut self.pipes {
                if q.phase == Phase::Idle {
                    q.phase = if opened < nrx {
                        opened += 1;
                        Phase::SynSent {
                            tries: 0,
                            deadline: now,
                        }
                    } else {
                        Phase::Closed
                    };
                }
            }
        }
    }

    /// The SYN of pipe `k` (ptcp.txt §4.4): its ISN, our MSS and SACK-permitted; a SYN sent
    /// before the server is known also carries the handshake extension (nTx, our addresses)
    /// and is padded to [`SYN_PAD`] bytes so that the server may answer with its own
    /// addresses.
    pub(super) fn encode_syn(&mut self, now: Time, k: usize, out: &mut Vec<u8>) -> PtcpTransmit {
        let p = &self.pipes[k];
        let first = self.remote == ConnId(0);
        let n = self.pipes.len().min(usize::from(u8::MAX)) as u8;
        let list = self.handshake.as_ref().map_or(&[][..], |h| &h.list[..]);
        let options = Options {
            mss: Some(self.cfg.mss),
            sack_permitted: self.cfg.sack,
            ..Options::default()
        };
        let mut d = PtcpSegment {
            ptcp: PtcpHeader {
                pipe: p.conn_id,
                src: self.local,
                dst: self.remote,
                ..PtcpHeader::default()
            },
            handshake: first.then_some(PtcpHandshake {
                ntx: n,
                nrx: n,
                list,
            }),
            segment: Segment {
                conn_id: p.conn_id,
                flags: Flags::SYN,
                seq: p.isn,
                ack: 0,
                window: self.cfg.recv_buffer.min(u64::from(u32::MAX)) as u32,
                ts_val: ts_of(now),
                ts_ecr: 0,
                options,
                payload: &[],
            },
        };
        let pad = if first {
            SYN_PAD.saturating_sub(d.encoded_len())
        } else {
            0
        };
        let padding = vec![0; pad];
        d.segment.payload = &padding;
        d.encode(out);
        PtcpTransmit {
            path: p.path,
            len: out.len(),
        }
    }

    /// A pure ACK on pipe `k`: the handshake's last segment, or the ACK of the peer's FIN.
    pub(super) fn encode_ack(&mut self, now: Time, k: usize, out: &mut Vec<u8>) -> PtcpTransmit {
        self.pipes[k].ack_due = false;
        self.payload.clear();
        let seq = self.pipes[k].pipe.snd_nxt().0;
        let offset = self.acked.min(self.stream.end());
        self.encode(now, out, k, seq, offset, false, false);
        PtcpTransmit {
            path: self.pipes[k].path,
            len: out.len(),
        }
    }
}
