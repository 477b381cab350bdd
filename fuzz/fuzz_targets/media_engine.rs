//! Coverage-guided search through the RCP-ATL media engines' states: the input is a script of
//! API calls (clock steps forwards and back, timers of either end handled early or late, link
//! facts for either end, the source stopping), of what the wire does with each datagram
//! (deliver in any order, drop, duplicate), and of hostile datagrams injected at any moment —
//! before the sink exists too — to either end: arbitrary bytes, earlier datagrams replayed
//! with bytes changed, and well-formed media packets and reports with any connection ids,
//! tokens and fields over the whole u64 range, from the source's address or another. The
//! sink's host answers what names no sink it holds through its `MediaAcceptor`.
//!
//! Nothing may panic; no stateless answer is larger than the datagram it answers; a sink opens
//! only for the source's own echo; the source's rate stays finite and within its bounds.
#![no_main]

mod common;

use std::time::Duration;

use common::{cap_in_flight, Script};
use libfuzzer_sys::fuzz_target;
use roam_proto::endpoint::{token_slot, Acceptor, TokenKey, Unknown};
use roam_proto::media::{
    MediaAcceptor, MediaConfig, MediaReceiver, MediaSender, RateKind, MAX_PENDING_REPORTS,
};
use roam_proto::Time;
use roam_wire::{ConnId, Header, LinkInfoReport, MediaPacket, MediaReport, Token, TOKEN_LEN};

const SOURCE: &str = "source";
const ELSEWHERE: &str = "elsewhere";

/// A number from the script: small, plausible, or anywhere in the u64 range.
fn number(s: &mut Script<'_>) -> u64 {
    match s.byte() % 4 {
        0 => u64::from(s.byte()),
        1 => u64::from(s.u16()) * 1000,
        2 => u64::MAX - u64::from(s.u16()),
        _ => u64::from_le_bytes(std::array::from_fn(|_| s.byte())),
    }
}

fn token(s: &mut Script<'_>) -> Option<Token> {
    (s.byte() & 1 == 0).then(|| Token(std::array::from_fn::<u8, TOKEN_LEN, _>(|_| s.byte())))
}

/// A well-formed packet (for the sink) or report (for the source), every field from the
/// script.
fn forge(s: &mut Script<'_>, to_source: bool, conn: ConnId) -> Vec<u8> {
    let conn_id = if s.byte() & 3 == 0 {
        ConnId(number(s))
    } else {
        conn
    };
    let mut out = Vec::new();
    if to_source {
        MediaReport {
            conn_id,
            highest_seq: number(s),
            received: number(s),
            lost: number(s),
            fraction_lost: s.u16(),
            echo_time_us: number(s),
            hold_us: u32::from(s.u16()) << (s.byte() % 17),
            link: (s.byte() & 1 == 0).then(|| LinkInfoReport {
                p_w_ppm: u32::from(s.u16()) * 16,
                d_w_us: u32::from(s.u16()) << (s.byte() % 17),
                handoff_count: s.u16(),
            }),
            token: token(s),
        }
        .encode(&mut out);
    } else {
        let payload = vec![0x3C; usize::from(s.byte()) * 6];
        MediaPacket {
            conn_id,
            seq: number(s),
            send_time_us: number(s),
            rate_bps: number(s),
            token: token(s),
            payload: &payload,
        }
        .encode(&mut out);
    }
    out
}

/// The sink's host: the sink once opened, else its acceptor; the tokens it issued, by address.
struct SinkHost {
    acceptor: MediaAcceptor,
    key: TokenKey,
    sink: Option<MediaReceiver>,
    issued: Vec<(&'static str, Token)>,
}

impl SinkHost {
    fn deliver(
        &mut self,
        now: Time,
        bytes: &[u8],
        from: &'static str,
        wire: &mut Vec<(bool, Vec<u8>)>,
    ) {
        let ours = self
            .sink
            .as_ref()
            .is_some_and(|r| Header::peek_conn_id(bytes) == Ok(r.conn_id()));
        if ours {
            if let Some(r) = self.sink.as_mut() {
                let _ = r.handle_datagram(now, bytes);
            }
            return;
        }
        let mut out = Vec::new();
        match self
            .acceptor
            .on_unknown(now, &self.key, from, bytes, &mut out)
        {
            Unknown::Drop => {}
            Unknown::Reply { len } | Unknown::Reset { len } => {
                assert!(len <= bytes.len(), "stateless answer larger than its cause");
                if let Some(t) = MediaReport::decode(&out[..len]).ok().and_then(|r| r.token) {
                    self.issued.push((from, t));
                    if self.issued.len() > 4096 {
                        self.issued.remove(0);
                    }
                }
                wire.push((false, out[..len].to_vec()));
            }
            Unknown::Accept(r) => {
                // Only a token issued to this very address opens a sink — or one the fuzzer
                // derived from the acceptor's own MAC comparisons (libFuzzer traces them; a
                // real attacker sees nothing of them), which must still be a MAC over this
                // address and connection.
                let p = MediaPacket::decode(bytes).ok();
                let echoed = p.and_then(|p| p.token);
                let conn = p.map(|p| p.conn_id).unwrap_or_default();
                assert!(
                    echoed.is_some_and(|t| self.issued.contains(&(from, t))
                        || mac_binds(&self.key, from, conn, now, &t)),
                    "opened for a token that is no MAC over {from}"
                );
                self.sink = Some(r);
            }
        }
    }
}

/// An independent check of a media token: ten zero bytes, then the MAC over `from`, `conn`,
/// the slot of `now` or the one before, and the media domain.
fn mac_binds(key: &TokenKey, from: &str, conn: ConnId, now: Time, t: &Token) -> bool {
    let slot = token_slot(now);
    let (zeros, mac) = t.0.split_at(TOKEN_LEN - 8);
    zeros.iter().all(|b| *b == 0)
        && [Some(slot), slot.checked_sub(1)]
            .into_iter()
            .flatten()
            .any(|s| key.mac(from, conn, s, b"roam-media-v1").to_be_bytes() == mac)
}

fuzz_target!(|data: &[u8]| {
    let mut s = Script(data);
    let flags = s.byte();
    let min_rate_bps = 1 + u64::from(s.u16()) * 100;
    let max_rate_bps = min_rate_bps + u64::from(s.u16()) * 10_000;
    let cfg = MediaConfig {
        packet_size: 1 + u32::from(s.u16() % 1400),
        initial_rate_bps: 1 + u64::from(s.u16()) * 1000,
        min_rate_bps,
        max_rate_bps,
        report_link_info: flags & 1 != 0,
        idle_timeout: (flags & 2 != 0).then(|| Duration::from_millis(u64::from(s.u16()))),
        ..MediaConfig::default()
    };
    let kind = if flags & 4 != 0 {
        RateKind::Atl
    } else {
        RateKind::Aimd
    };
    let conn = ConnId(9);
    let mut tx = MediaSender::new(cfg, kind, conn);
    let mut host = SinkHost {
        acceptor: MediaAcceptor::new(cfg),
        key: TokenKey::new([s.byte(); 16]),
        sink: None,
        issued: Vec::new(),
    };
    let mut now = Time::from_millis(1);
    // In flight: (to the sink?, bytes). Everything ever sent, for replays.
    let mut wire: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut seen: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut buf = Vec::new();
    while !s.done() {
        let op = s.byte();
        match op % 12 {
            0 => now = now + Duration::from_micros(u64::from(s.u16()) * 50),
            1 => {
                let back = u64::from(s.u16()) * 1000;
                now = Time::from_nanos(now.as_nanos().saturating_sub(back));
            }
            2 => {
                if let Some(t) = tx.poll_timeout().filter(|_| op & 16 == 0) {
                    now = now.max(t);
                }
                tx.handle_timeout(now);
            }
            3 => {
                if let Some(r) = host.sink.as_mut() {
                    r.handle_timeout(now);
                }
                if host.sink.as_ref().is_some_and(MediaReceiver::is_expired) {
                    host.sink = None;
                }
            }
            4..=6 if !wire.is_empty() => {
                let i = usize::from(s.u16()) % wire.len();
                match op % 12 {
                    4 => {
                        let (to_sink, bytes) = wire.remove(i);
                        if to_sink {
                            host.deliver(now, &bytes, SOURCE, &mut wire);
                        } else {
                            let _ = tx.handle_datagram(now, &bytes);
                        }
                    }
                    5 => {
                        wire.remove(i);
                    }
                    _ => {
                        let copy = wire[i].clone();
                        wire.push(copy);
                    }
                }
            }
            7 => {
                let info = s.link_info();
                if s.byte() & 1 == 0 {
                    tx.set_link_info(now, info);
                } else if let Some(r) = host.sink.as_mut() {
                    r.set_link_info(now, info);
                }
            }
            8 => {
                if s.byte() == 0 {
                    tx.stop();
                }
            }
            9 => {
                // Arbitrary bytes.
                let to_sink = s.byte() & 1 == 0;
                let n = usize::from(s.byte() % 96);
                let bytes: Vec<u8> = (0..n).map(|_| s.byte()).collect();
                if to_sink {
                    host.deliver(now, &bytes, ELSEWHERE, &mut wire);
                } else {
                    let _ = tx.handle_datagram(now, &bytes);
                }
            }
            10 if !seen.is_empty() => {
                // An earlier datagram replayed, with bytes changed, from either address.
                let (to_sink, mut bytes) = seen[usize::from(s.u16()) % seen.len()].clone();
                for _ in 0..s.byte() % 4 {
                    if !bytes.is_empty() {
                        let i = usize::from(s.u16()) % bytes.len();
                        bytes[i] = s.byte();
                    }
                }
                if to_sink {
                    let from = if s.byte() & 1 == 0 { SOURCE } else { ELSEWHERE };
                    host.deliver(now, &bytes, from, &mut wire);
                } else {
                    let _ = tx.handle_datagram(now, &bytes);
                }
            }
            11 => {
                let to_sink = s.byte() & 1 == 0;
                let bytes = forge(&mut s, !to_sink, conn);
                if to_sink {
                    let from = if s.byte() & 1 == 0 { SOURCE } else { ELSEWHERE };
                    host.deliver(now, &bytes, from, &mut wire);
                } else {
                    let _ = tx.handle_datagram(now, &bytes);
                }
            }
            _ => {}
        }
        let before = wire.len();
        // The source sends what its rate allows now (bounded: a huge rate cannot make the
        // target loop for long).
        for _ in 0..32 {
            buf.clear();
            if tx.poll_transmit(now, &mut buf).is_none() {
                break;
            }
            wire.push((true, buf.clone()));
        }
        while tx.poll_event().is_some() {}
        if let Some(r) = host.sink.as_mut() {
            assert!(r.pending_reports() <= MAX_PENDING_REPORTS);
            buf.clear();
            while r.poll_transmit(now, &mut buf).is_some() {
                wire.push((false, std::mem::take(&mut buf)));
            }
        }
        seen.extend(wire[before.min(wire.len())..].iter().cloned());
        if seen.len() > 256 {
            seen.drain(..seen.len() - 256);
        }
        cap_in_flight(&mut wire);
        let rate = tx.rate_bps();
        assert!(rate.is_finite(), "rate {rate}");
        assert!(
            rate >= min_rate_bps as f64 * 0.999 && rate <= max_rate_bps as f64 * 1.001,
            "rate {rate} outside [{min_rate_bps}, {max_rate_bps}]"
        );
    }
});
