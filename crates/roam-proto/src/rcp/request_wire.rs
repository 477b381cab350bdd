//! The request loop's per-connection wire state, one code for the single-path RCP receiver
//! and every R²CP pipe (an R²CP pipe is an RCP receiver connection to an unchanged RCP sender,
//! rcp-r2cp.txt §4.2): the token handshake and its retransmission, the timestamp echo, the
//! sender's window, the pull ids and the recent-pull list every REQ carries, and the REQ
//! header. What the two engines decide to request (cumulative edge or pulls of bound global
//! ranges) stays theirs: `docs/R2CP.md`, "RCP as the one-pipe case".

use std::collections::VecDeque;
use std::time::Duration;

use roam_wire::{
    ConnId, Data, Flags, PullBlock, Request, RequestMode, Token, MAX_REQUEST_BLOCKS, UNKNOWN_LENGTH,
};

use super::{RcpCc, RcpConfig, ReceiverPipe};
use crate::rtt::RttEstimator;
use crate::Time;

/// A receiver pipe as `config` asks for: its controller, RTT estimator (initial, minimum and
/// maximum RTO), duplicate threshold, ELN and window cap, with local offsets from `start`.
/// The RCP receiver builds one; R²CP one per (interface, server) pair (§4.2).
pub(crate) fn pipe_for(config: &RcpConfig, cc: RcpCc, start: u64) -> ReceiverPipe {
    let mss = u64::from(config.mss);
    let rtt = RttEstimator::new(
        Duration::from_millis(config.initial_rto_ms),
        Duration::from_millis(config.min_rto_ms),
        Duration::from_millis(config.max_rto_ms),
    );
    let mut pipe = ReceiverPipe::new(
        cc.build(mss, config.initial_window),
        rtt,
        config.dup_thresh,
        config.eln,
        u64::from(config.max_window_segments) * mss,
        start,
    );
    pipe.set_request_pacing(cc.paces_requests());
    pipe
}

/// REQs a pulled block rides in (its own and the next three, §3.3.1).
const PULL_RIDES: u8 = 4;

/// Our timestamp for a REQ's `ts_val`: microseconds, never 0 (0 means "no echo").
pub(crate) fn ts_val(now: Time) -> u32 {
    (now.as_micros() as u32).max(1)
}

/// The round trip a DATA's timestamp echo measures, if it carries one and it is plausible
/// (under two minutes; a wrapped or forged echo gives none).
pub(crate) fn echo_rtt(now: Time, ts_ecr: u32) -> Option<Duration> {
    (ts_ecr != 0)
        .then(|| Duration::from_micros(u64::from((now.as_micros() as u32).wrapping_sub(ts_ecr))))
        .filter(|r| *r < Duration::from_secs(120))
}

/// The receiver's half of the token handshake (docs/HANDSHAKE-RCP.md): the sender's SYN+ACK
/// carries an address-validation token and the sender keeps no state until a request echoes
/// it, so every request after the SYN brings back the token and the object name until the
/// first datagram that is not a SYN+ACK shows the sender has opened the connection.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TokenEcho(Option<Token>);

impl TokenEcho {
    /// The SYN+ACK answering our SYN arrived, with `token`.
    pub fn on_syn_ack(&mut self, token: Option<Token>) {
        self.0 = token;
    }

    /// A datagram other than a SYN+ACK arrived: only an open sender sends one, so the token
    /// has done its work.
    pub fn on_accepted(&mut self) {
        self.0 = None;
    }

    /// Adds the token and the object name to a request after the SYN, while the sender has not
    /// opened the connection yet.
    pub fn apply<'a>(&self, req: &mut Request<'a>, object: &'a [u8]) {
        if let Some(t) = self.0 {
            req.token = Some(t);
            req.object = object;
        }
    }
}

/// A retransmitted control exchange (SYN or FIN, §3.3.2).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ControlTimer {
    /// When it fires.
    pub at: Option<Time>,
    /// Retransmissions so far.
    pub tries: u32,
}

/// What a due control timer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ControlDue {
    /// Not due (or not armed).
    No,
    /// Retransmit the SYN or FIN; the timer is re-armed with backoff.
    Resend,
    /// More than the allowed retransmissions: give up.
    GiveUp,
}

impl ControlTimer {
    /// Armed to fire `after` from `now`, no retransmission yet.
    pub fn armed(now: Time, after: Duration) -> ControlTimer {
        ControlTimer {
            at: Some(now + after),
            tries: 0,
        }
    }

    /// Runs the timer at `now`: when due, counts a retransmission and re-arms it at `base`
    /// doubled per try (up to 64 times), as TCP's SYN retransmission; gives up after
    /// `max_retries`.
    pub fn on_timeout(&mut self, now: Time, base: Duration, max_retries: u32) -> ControlDue {
        if self.at.is_none_or(|t| t > now) {
            return ControlDue::No;
        }
        self.tries += 1;
        if self.tries > max_retries {
            return ControlDue::GiveUp;
        }
        self.at = Some(now + base * (1u32 << self.tries.min(6)));
        ControlDue::Resend
    }
}

/// The pull ids and the most recent pulls (§3.3.1: "every REQ packet carries the three most
/// recent pull requests", each in at least four REQs, then dropped so REQs are back to their
/// fixed size).
#[derive(Debug, Clone, Default)]
pub(crate) struct PullLog {
    /// Newest first, with the number of REQs each has ridden in.
    recent: VecDeque<(PullBlock, u8)>,
    /// The previous id handed out (ids start at 1 and skip 0 on wrapping).
    last_id: u32,
}

impl PullLog {
    /// A block pulling `[start, end)` with the next id.
    pub fn block(&mut self, start: u64, end: u64) -> PullBlock {
        self.last_id = self.last_id.wrapping_add(1).max(1);
        PullBlock {
            id: self.last_id,
            start,
            end,
        }
    }

    /// `b` is the newest pull.
    pub fn push(&mut self, b: PullBlock) {
        self.recent.push_front((b, 0));
        self.recent.truncate(MAX_REQUEST_BLOCKS);
    }

    /// The recent pulls, newest first, as a REQ's block list.
    pub fn recent(&self) -> ([PullBlock; MAX_REQUEST_BLOCKS], u8) {
        let mut blocks = [PullBlock::default(); MAX_REQUEST_BLOCKS];
        for (b, (x, _)) in blocks.iter_mut().zip(&self.recent) {
            *b = *x;
        }
        (blocks, self.recent.len() as u8)
    }

    /// The recent pulls, newest first.
    pub fn iter(&self) -> impl Iterator<Item = &PullBlock> {
        self.recent.iter().map(|(b, _)| b)
    }

    /// A REQ carrying `carried` leaves: each recent pull in it has ridden once more; those
    /// that have ridden four times are dropped.
    pub fn rode(&mut self, carried: &[PullBlock]) {
        for b in carried {
            if let Some(r) = self.recent.iter_mut().find(|(x, _)| x.id == b.id) {
                r.1 = r.1.saturating_add(1);
            }
        }
        self.recent.retain(|(_, rides)| *rides < PULL_RIDES);
    }
}

/// Where a receiver connection is, as far as a datagram from its sender is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// SYN sent, waiting for the SYN+ACK.
    Handshake,
    /// Requesting data.
    Open,
    /// FIN sent, waiting for the FIN+ACK.
    Closing,
}

/// What a datagram (not a reset: the engines handle RST themselves) means to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Nothing more to do with it (not the SYN+ACK awaited, or a repeated SYN+ACK: the
    /// handshake's ACK was lost and the next REQ carries it again).
    Ignored,
    /// The SYN+ACK: the connection is open; the sender's token (echoed until it opens the
    /// connection) and the object length it reported, if bounded. The caller opens the
    /// connection with [`RequestWire::on_syn_ack`] and goes on as for [`Arrival::Data`].
    SynAck {
        /// The sender's address-validation token.
        token: Option<Token>,
        /// The object's length, if the sender knows it.
        object_len: Option<u64>,
    },
    /// The FIN+ACK answering our FIN: the connection is closed.
    Fin,
    /// DATA or a window update of the open connection: take its timestamp and window
    /// ([`RequestWire::on_data`]), then its payload.
    Data,
}

/// One receiver connection's wire state towards its sender: what an RCP receiver and each
/// R²CP pipe keep alike.
#[derive(Debug, Clone)]
pub(crate) struct RequestWire {
    /// The connection id every datagram carries.
    pub conn_id: ConnId,
    /// The sender's most recent timestamp, echoed in `ts_ecr`.
    pub ts_recent: u32,
    /// The sender's window: the highest offset it lets us request (§3.3.4).
    pub snd_wnd: u64,
    /// The next REQ carries ACK (the handshake's third step, or its repetition).
    pub ack_pending: bool,
    /// The sender's token, echoed with the object name until it opens the connection.
    pub token: TokenEcho,
    /// SYN/FIN retransmission.
    pub control: ControlTimer,
    /// Pull ids and recent pulls.
    pub pulls: PullLog,
}

impl RequestWire {
    /// A connection whose SYN (for the range starting at `start`) is sent now and retransmitted
    /// after `syn_rto`.
    pub fn new(conn_id: ConnId, start: u64, now: Time, syn_rto: Duration) -> RequestWire {
        RequestWire {
            conn_id,
            ts_recent: 0,
            snd_wnd: start,
            ack_pending: false,
            token: TokenEcho::default(),
            control: ControlTimer::armed(now, syn_rto),
            pulls: PullLog::default(),
        }
    }

    /// The SYN+ACK arrived, with the sender's token: the handshake's third step is due.
    pub fn on_syn_ack(&mut self, token: Option<Token>) {
        self.token.on_syn_ack(token);
        self.control = ControlTimer::default();
        self.ack_pending = true;
    }

    /// What a datagram from the sender means in `phase` (§3.3.2's handshake and teardown, as
    /// TCP's; docs/HANDSHAKE-RCP.md for the token).
    pub fn classify(&mut self, phase: Phase, d: &Data<'_>) -> Arrival {
        if phase == Phase::Handshake {
            if !d.flags.contains(Flags::SYN | Flags::ACK) {
                return Arrival::Ignored;
            }
            return Arrival::SynAck {
                token: d.token,
                object_len: d.object_len.filter(|&l| l != UNKNOWN_LENGTH),
            };
        }
        if d.flags.contains(Flags::SYN) {
            // Our ACK was lost: the next request carries it again.
            self.ack_pending = true;
            return Arrival::Ignored;
        }
        // Only a sender that accepted the connection sends anything but SYN+ACK: the token
        // has done its work.
        self.token.on_accepted();
        if phase == Phase::Closing && d.flags.contains(Flags::FIN) {
            return Arrival::Fin;
        }
        Arrival::Data
    }

    /// Takes a DATA's timestamp and window; true if the window grew.
    pub fn on_data(&mut self, d: &Data<'_>) -> bool {
        self.ts_recent = d.ts_val;
        let grew = d.window > self.snd_wnd;
        self.snd_wnd = self.snd_wnd.max(d.window);
        grew
    }

    /// A REQ with cumulative edge `req` and `deq`, no flags, mode or blocks yet.
    pub fn request(&self, now: Time, req: u64, deq: u32) -> Request<'static> {
        Request {
            conn_id: self.conn_id,
            flags: Flags::default(),
            mode: RequestMode::default(),
            req,
            deq,
            ts_val: ts_val(now),
            ts_ecr: self.ts_recent,
            nblocks: 0,
            blocks: [PullBlock::default(); MAX_REQUEST_BLOCKS],
            object: &[],
            token: None,
        }
    }

    /// Makes `req` the SYN: it names the object, carries the range start in `req` and our
    /// segment size in `deq` (docs/RCP.md, "Wire format").
    pub fn make_syn<'a>(req: &mut Request<'a>, object: &'a [u8], mss: u64) {
        req.flags = Flags::SYN;
        req.deq = u32::try_from(mss).unwrap_or(u32::MAX);
        req.nblocks = 0;
        req.object = object;
    }

    /// Finishes a REQ after the SYN: as in TCP, every segment after the SYN carries ACK and
    /// the first one completes the handshake (§3.3.2); until the sender opens the connection
    /// it holds nothing, so the REQ brings back its token and the object name
    /// (docs/HANDSHAKE-RCP.md).
    pub fn finish_after_syn<'a>(&mut self, req: &mut Request<'a>, object: &'a [u8]) {
        req.flags.insert(Flags::ACK);
        self.ack_pending = false;
        self.token.apply(req, object);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_rides_in_four_reqs_and_ids_skip_zero() {
        let mut log = PullLog::default();
        let a = log.block(0, 10);
        assert_eq!(a.id, 1);
        log.push(a);
        for n in 0..4 {
            assert_eq!(log.iter().count(), 1, "ride {n}");
            let (blocks, k) = log.recent();
            log.rode(&blocks[..usize::from(k)]);
        }
        assert_eq!(log.iter().count(), 0);
        log.last_id = u32::MAX;
        assert_eq!(log.block(0, 1).id, 1);
    }

    #[test]
    fn the_control_timer_backs_off_and_gives_up() {
        let base = Duration::from_millis(100);
        let mut t = ControlTimer::armed(Time::ZERO, base);
        assert_eq!(t.on_timeout(Time::ZERO, base, 2), ControlDue::No);
        let at = Time::ZERO + base;
        assert_eq!(t.on_timeout(at, base, 2), ControlDue::Resend);
        assert_eq!(t.at, Some(at + base * 2));
        let at = at + base * 2;
        assert_eq!(t.on_timeout(at, base, 2), ControlDue::Resend);
        assert_eq!(t.at, Some(at + base * 4));
        assert_eq!(t.on_timeout(at + base * 4, base, 2), ControlDue::GiveUp);
    }

    fn datagram(flags: Flags) -> Data<'static> {
        Data {
            conn_id: ConnId(7),
            flags,
            seq: 0,
            window: 0,
            object_len: Some(UNKNOWN_LENGTH),
            ts_val: 1,
            ts_ecr: 0,
            pull_id: 0,
            token: Some(Token([3; roam_wire::TOKEN_LEN])),
            payload: &[],
        }
    }

    #[test]
    fn classify_follows_the_handshake_and_teardown() {
        let mut w = RequestWire::new(ConnId(7), 0, Time::ZERO, Duration::from_secs(1));
        let syn_ack = datagram(Flags::SYN | Flags::ACK);
        // Waiting for the SYN+ACK, anything else is ignored.
        let data = datagram(Flags::ACK);
        assert_eq!(w.classify(Phase::Handshake, &data), Arrival::Ignored);
        let Arrival::SynAck { token, object_len } = w.classify(Phase::Handshake, &syn_ack) else {
            panic!("the SYN+ACK opens the connection");
        };
        assert_eq!(object_len, None, "an unknown length is no length");
        w.on_syn_ack(token);
        assert!(w.ack_pending && w.control.at.is_none());
        // The token rides on every REQ until the first datagram that is not a SYN+ACK.
        let object = b"obj";
        let mut req = w.request(Time::ZERO, 0, 0);
        w.finish_after_syn(&mut req, object);
        assert!(req.token.is_some() && !w.ack_pending);
        // A repeated SYN+ACK (our ACK was lost) re-arms the ACK, in closing too.
        for phase in [Phase::Open, Phase::Closing] {
            assert_eq!(w.classify(phase, &syn_ack), Arrival::Ignored);
            assert!(w.ack_pending);
            w.ack_pending = false;
        }
        let mut req = w.request(Time::ZERO, 0, 0);
        w.token.apply(&mut req, object);
        assert!(req.token.is_some(), "a SYN+ACK does not end the echo");
        let fin = datagram(Flags::FIN | Flags::ACK);
        assert_eq!(w.classify(Phase::Open, &fin), Arrival::Data);
        let mut req = w.request(Time::ZERO, 0, 0);
        w.token.apply(&mut req, object);
        assert!(req.token.is_none() && req.object.is_empty());
        assert_eq!(w.classify(Phase::Closing, &fin), Arrival::Fin);
        assert_eq!(w.classify(Phase::Closing, &data), Arrival::Data);
    }

    #[test]
    fn echo_rtt_wraps_and_rejects_implausible_echoes() {
        let now = Time::ZERO + Duration::from_micros(5_000);
        assert_eq!(echo_rtt(now, 0), None);
        assert_eq!(echo_rtt(now, 4_000), Some(Duration::from_micros(1_000)));
        // An echo from the future wraps to about 71 minutes: not a sample.
        assert_eq!(echo_rtt(now, 6_000), None);
    }
}
