//! The media sink: counts what arrives, measures per-packet delay and jitter, and answers every
//! packet with a receiver report (atl.txt §IV-B: "the receiver sends back an ACK for any
//! received packet"), carrying its wireless hop's p_w/d_w/handoffs when it is the wireless end.
//!
//! A sink belongs to one connection and exists only once its source proved its address (the
//! host's [`super::MediaAcceptor`] opens it; `docs/HANDSHAKE-RCP.md`). It never answers a
//! packet with a report larger than the packet (the report is skipped; the next one carries
//! the counts, which are cumulative), and it counts loss from the first packet it accepted.

use std::collections::VecDeque;
use std::time::Duration;

use roam_wire::{ConnId, DecodeError, LinkInfoReport, MediaPacket, MediaReport};

use super::payload_byte;
use crate::linkinfo::LinkInfo;
use crate::Time;

/// Reports a sink keeps queued at most (the oldest are dropped: reports are cumulative).
pub const MAX_PENDING_REPORTS: usize = 64;

/// Delay and jitter of the packets received so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DelayStats {
    /// Packets measured.
    pub packets: u64,
    /// Sum of one-way delays (s), for the mean.
    pub delay_sum_s: f64,
    /// Sum of |d_i − d_{i−1}| over consecutive received packets (s): per-packet jitter.
    pub jitter_sum_s: f64,
    /// Largest |d_i − d_{i−1}| (s).
    pub jitter_max_s: f64,
    /// RFC 3550 §6.4.1 interarrival jitter estimate J (s), smoothed with gain 1/16.
    pub rfc3550_jitter_s: f64,
}

impl DelayStats {
    /// Mean one-way delay (s), 0 without packets.
    pub fn mean_delay_s(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.delay_sum_s / self.packets as f64
        }
    }

    /// Mean per-packet jitter |d_i − d_{i−1}| (s), 0 with fewer than two packets.
    pub fn mean_jitter_s(&self) -> f64 {
        if self.packets < 2 {
            0.0
        } else {
            self.jitter_sum_s / (self.packets - 1) as f64
        }
    }
}

/// Receiver counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MediaReceiverStats {
    /// Media packets received (duplicates included).
    pub packets: u64,
    /// Payload bytes received.
    pub bytes: u64,
    /// Payload bytes that differ from the sender's pattern (must stay zero).
    pub integrity_errors: u64,
    /// Delay and jitter.
    pub delay: DelayStats,
}

/// The receiving end of a media flow.
#[derive(Debug)]
pub struct MediaReceiver {
    conn_id: ConnId,
    /// The first sequence number accepted (RFC 3550's base_seq): loss counts from there.
    base: Option<u64>,
    highest: Option<u64>,
    received: u64,
    /// (highest, received) at the previous report, for the fraction lost.
    prev: (u64, u64),
    last_delay: Option<f64>,
    local_link: Option<LinkInfo>,
    report_link_info: bool,
    pending: VecDeque<MediaReport>,
    stats: MediaReceiverStats,
    /// When the last packet arrived, and how long the sink waits for another before it
    /// expires (`None`: never).
    last_heard: Time,
    idle_timeout: Option<Duration>,
    expired: bool,
}

impl MediaReceiver {
    /// The sink of connection `conn_id`, opened at `now`; with `report_link_info` its reports
    /// carry its wireless hop's facts. It expires after `idle_timeout` without packets
    /// (`None`: never). Hosts open sinks through [`super::MediaAcceptor`].
    pub fn new(
        conn_id: ConnId,
        report_link_info: bool,
        idle_timeout: Option<Duration>,
        now: Time,
    ) -> Self {
        MediaReceiver {
            conn_id,
            base: None,
            highest: None,
            received: 0,
            prev: (0, 0),
            last_delay: None,
            local_link: None,
            report_link_info,
            pending: VecDeque::new(),
            stats: MediaReceiverStats::default(),
            last_heard: now,
            idle_timeout,
            expired: false,
        }
    }

    /// The connection this sink belongs to.
    pub fn conn_id(&self) -> ConnId {
        self.conn_id
    }

    /// True once the sink has heard nothing for its idle timeout (the host may drop it).
    pub fn is_expired(&self) -> bool {
        self.expired
    }

    /// Reports waiting to be sent.
    pub fn pending_reports(&self) -> usize {
        self.pending.len()
    }

    /// When [`MediaReceiver::handle_timeout`] should next be called (the idle timeout).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.expired {
            return None;
        }
        self.idle_timeout.map(|t| self.last_heard + t)
    }

    /// Expires the sink if its idle timeout has passed (early calls do nothing).
    pub fn handle_timeout(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.expired = true;
            self.pending.clear();
        }
    }

    /// Bytes of memory this sink holds at most (its queued reports and fixed state).
    pub fn memory_bound(&self) -> usize {
        MAX_PENDING_REPORTS * std::mem::size_of::<MediaReport>()
            + std::mem::size_of::<MediaReceiver>()
    }

    /// The host's facts about the local link (reported to the source when wireless).
    pub fn set_link_info(&mut self, _now: Time, info: LinkInfo) {
        self.local_link = Some(info.sanitized());
    }

    /// Counters.
    pub fn stats(&self) -> MediaReceiverStats {
        self.stats
    }

    /// A media datagram arrived. Malformed datagrams are rejected with the decoding error; a
    /// packet of another connection, or one arriving after the sink expired, is ignored.
    pub fn handle_datagram(&mut self, now: Time, bytes: &[u8]) -> Result<(), DecodeError> {
        let p = MediaPacket::decode(bytes)?;
        if p.conn_id != self.conn_id || self.expired {
            return Ok(());
        }
        self.last_heard = self.last_heard.max(now);
        self.received += 1;
        self.base.get_or_insert(p.seq);
        self.highest = Some(self.highest.map_or(p.seq, |h| h.max(p.seq)));
        let s = &mut self.stats;
        s.packets += 1;
        s.bytes += p.payload.len() as u64;
        s.integrity_errors += p
            .payload
            .iter()
            .enumerate()
            .filter(|(i, b)| **b != payload_byte(p.seq, *i))
            .count() as u64;
        let delay = now
            .saturating_since(Time::from_micros(p.send_time_us))
            .as_secs_f64();
        let d = &mut s.delay;
        d.packets += 1;
        d.delay_sum_s += delay;
        if let Some(prev) = self.last_delay {
            let var = (delay - prev).abs();
            d.jitter_sum_s += var;
            d.jitter_max_s = d.jitter_max_s.max(var);
            d.rfc3550_jitter_s += (var - d.rfc3550_jitter_s) / 16.0;
        }
        self.last_delay = Some(delay);
        let report = self.report(now, p.send_time_us);
        // Never more bytes back than the packet brought (a forged source address must not
        // gain from it); the next report carries the counts.
        if report.encoded_len() <= bytes.len() {
            self.pending.push_back(report);
            if self.pending.len() > MAX_PENDING_REPORTS {
                self.pending.pop_front();
            }
        }
        Ok(())
    }

    fn report(&mut self, _now: Time, echo_time_us: u64) -> MediaReport {
        let highest = self.highest.unwrap_or(0);
        // RFC 3550 §6.4.1 / A.3: expected = highest − base + 1. Saturating: a peer may send
        // any sequence number, u64::MAX included, and one below the base.
        let base = self.base.unwrap_or(0);
        let expected = highest.saturating_sub(base).saturating_add(1);
        let lost = expected.saturating_sub(self.received);
        // RFC 3550 §6.4.1: fraction lost over the interval since the previous report.
        let (ph, pr) = self.prev;
        let exp_int = expected.saturating_sub(ph);
        let rec_int = self.received.saturating_sub(pr);
        let fraction = if exp_int == 0 || rec_int >= exp_int {
            0
        } else {
            // In u128: (exp_int − rec_int) · 65535 overflows u64 for hostile sequence numbers.
            (u128::from(exp_int - rec_int) * 65535 / u128::from(exp_int)) as u16
        };
        self.prev = (expected, self.received);
        let link = self
            .local_link
            .filter(|l| self.report_link_info && l.wireless)
            .map(|l| LinkInfoReport {
                p_w_ppm: (l.loss_prob * 1e6).round().clamp(0.0, 1e6) as u32,
                d_w_us: u32::try_from(l.one_way_delay.as_micros()).unwrap_or(u32::MAX),
                handoff_count: l.handoffs as u16,
            });
        MediaReport {
            conn_id: self.conn_id,
            highest_seq: highest,
            received: self.received,
            lost,
            fraction_lost: fraction,
            echo_time_us,
            hold_us: 0,
            link,
            token: None,
        }
    }

    /// The next report to send, appended to `buf`.
    pub fn poll_transmit(&mut self, _now: Time, buf: &mut Vec<u8>) -> Option<usize> {
        let r = self.pending.pop_front()?;
        let start = buf.len();
        r.encode(buf);
        Some(buf.len() - start)
    }
}

#[cfg(test)]
mod tests {
    use roam_wire::{ConnId, MediaPacket, MediaReport};

    use super::*;

    fn packet(seq: u64) -> Vec<u8> {
        let mut out = Vec::new();
        MediaPacket {
            conn_id: ConnId(3),
            seq,
            send_time_us: 0,
            rate_bps: 1_000_000,
            token: None,
            payload: &[0; 100],
        }
        .encode(&mut out);
        out
    }

    fn last_report(rx: &mut MediaReceiver) -> MediaReport {
        let mut buf = Vec::new();
        let mut last = None;
        while rx.poll_transmit(Time::ZERO, &mut buf).is_some() {
            last = Some(MediaReport::decode(&buf).expect("a report"));
            buf.clear();
        }
        last.expect("reports")
    }

    #[test]
    fn a_hostile_sequence_number_saturates_the_loss_count_instead_of_wrapping() {
        let mut rx = MediaReceiver::new(ConnId(3), false, None, Time::ZERO);
        rx.handle_datagram(Time::ZERO, &packet(0)).unwrap();
        rx.handle_datagram(Time::ZERO, &packet(u64::MAX)).unwrap();
        let r = last_report(&mut rx);
        assert_eq!(r.highest_seq, u64::MAX);
        assert_eq!(
            r.lost,
            u64::MAX - 2,
            "expected saturates at u64::MAX, 2 received"
        );
        assert_eq!(r.fraction_lost, 65534);
    }
}
