//! pTCP's dynamic reassignment (ptcp.txt §3, §4.2 `shrunk()`), driven through the engine
//! with hand-made acknowledgements: when a pipe's window shrinks, what it still owes (deemed
//! lost or passed by a SACKed segment, not SACKed, not sent again) beyond a window's worth of
//! it is unbound for the other pipes; segments still in flight stay bound (docs/PTCP.md,
//! "Which data a shrunk window unbinds").

use roam_proto::cc::CcKind;
use roam_proto::ptcp::PtcpSender;
use roam_proto::tcp::TcpConfig;
use roam_proto::Time;
use roam_wire::{ConnId, Flags, Options, PtcpHeader, PtcpSegment, SackBlock, Segment};

const LOCAL: ConnId = ConnId(0xa);
const REMOTE: ConnId = ConnId(0xb);
const PIPE0: ConnId = ConnId(100);
const PIPE1: ConnId = ConnId(101);

/// (pipe connection id, pipe sequence number, payload length, pSEQ) of each datagram sent.
fn flight(tx: &mut PtcpSender, now: Time) -> Vec<(ConnId, u64, u64, u64)> {
    let mut out = Vec::new();
    let mut sent = Vec::new();
    while let Some(t) = tx.poll_transmit(now, &mut out) {
        let d = PtcpSegment::decode(&out[..t.len]).expect("the sender's own datagram");
        sent.push((
            d.segment.conn_id,
            d.segment.seq,
            d.segment.payload.len() as u64,
            d.ptcp.seq,
        ));
    }
    sent
}

/// An acknowledgement on pipe `conn_id`: cumulative `ack`, SACK `blocks` (pipe sequence
/// numbers), pACK 0 and an open pTCP window.
fn ack(conn_id: ConnId, ack: u64, blocks: &[(u64, u64)]) -> Vec<u8> {
    let mut options = Options::default();
    for &(start, end) in blocks {
        assert!(options.push_sack(SackBlock { start, end }));
    }
    let mut out = Vec::new();
    PtcpSegment {
        ptcp: PtcpHeader {
            pipe: conn_id,
            src: REMOTE,
            dst: LOCAL,
            seq: 0,
            ack: 0,
            fin: false,
            syn: false,
        },
        handshake: None,
        segment: Segment {
            conn_id,
            flags: Flags::ACK,
            seq: 1,
            ack,
            window: 1 << 20,
            ts_val: 1,
            ts_ecr: 0,
            options,
            payload: &[],
        },
    }
    .encode(&mut out);
    out
}

fn cwnd(tx: &PtcpSender, path: u32) -> u64 {
    tx.pipes()
        .find(|p| p.0 == path)
        .map(|p| p.1)
        .expect("the pipe")
}

/// A halving unbinds what the pipe owes beyond a window's worth of it, and only that.
#[test]
fn a_halving_unbinds_the_lost_segments_beyond_a_window_of_them() {
    let cfg = TcpConfig {
        initial_window: 10,
        ..TcpConfig::default()
    };
    let mss = u64::from(cfg.mss);
    let mut tx = PtcpSender::new(&cfg, LOCAL, REMOTE);
    tx.add_pipe(0, PIPE0, CcKind::NewReno);
    tx.add_pipe(1, PIPE1, CcKind::NewReno);
    tx.write(&vec![7u8; 100 * mss as usize]);
    let sent = flight(&mut tx, Time::from_millis(1));
    let s: Vec<(u64, u64)> = sent
        .iter()
        .filter(|d| d.0 == PIPE0)
        .map(|&(_, seq, len, _)| (seq, seq + len))
        .collect();
    assert_eq!(s.len(), 10, "pipe 0 sent its initial window: {sent:?}");
    assert!(s.iter().all(|&(a, b)| b - a == mss));

    // Segment 0 is lost, and 4–6; 1–3 and 7–9 arrive: three duplicate ACKs that SACK new
    // data. RFC 6675 deems 0, 4, 5 and 6 lost (three segments SACKed above each).
    let una = s[0].0;
    let t = Time::from_millis(200);
    tx.handle_datagram(t, &ack(PIPE0, una, &[(s[1].0, s[2].0)]));
    tx.handle_datagram(t, &ack(PIPE0, una, &[(s[1].0, s[3].0)]));
    tx.handle_datagram(t, &ack(PIPE0, una, &[(s[7].0, s[9].1), (s[1].0, s[4].0)]));
    // The pipe owes 0, 4, 5, 6; the first window's worth of them it sends again itself, the
    // rest is unbound. 1–3 and 7–9 (SACKed) stay.
    let window_segments = cwnd(&tx, 0) / mss;
    assert!(
        window_segments < 4,
        "fast recovery shrank the window below what is owed"
    );
    assert_eq!(
        tx.stats().bytes_unbound,
        (4 - window_segments) * mss,
        "the owed segments beyond a window's worth are unbound"
    );
}

/// The case the rule is for: a halving with nothing yet known lost beyond the new window
/// unbinds nothing (the old reading sent the whole upper half again over the other pipe).
#[test]
fn a_halving_with_the_upper_half_in_flight_unbinds_nothing() {
    let cfg = TcpConfig {
        initial_window: 10,
        ..TcpConfig::default()
    };
    let mut tx = PtcpSender::new(&cfg, LOCAL, REMOTE);
    tx.add_pipe(0, PIPE0, CcKind::NewReno);
    tx.add_pipe(1, PIPE1, CcKind::NewReno);
    tx.write(&vec![7u8; 100 * usize::from(cfg.mss)]);
    let sent = flight(&mut tx, Time::from_millis(1));
    let s: Vec<(u64, u64)> = sent
        .iter()
        .filter(|d| d.0 == PIPE0)
        .map(|&(_, seq, len, _)| (seq, seq + len))
        .collect();
    let t = Time::from_millis(200);
    for k in 2..=4 {
        tx.handle_datagram(t, &ack(PIPE0, s[0].0, &[(s[1].0, s[k].0)]));
    }
    assert!(
        cwnd(&tx, 0) < 10 * u64::from(cfg.mss),
        "fast recovery halved the window"
    );
    assert_eq!(tx.stats().bytes_unbound, 0);
    // The other pipe gets new data, not a second copy of pipe 0's segments in flight.
    let bound_end = sent.iter().map(|d| d.3 + d.2).max().expect("a flight");
    let pipe1_end = sent
        .iter()
        .filter(|d| d.0 == PIPE1)
        .map(|d| d.1 + d.2)
        .max()
        .expect("pipe 1 sent");
    tx.handle_datagram(t, &ack(PIPE1, pipe1_end, &[]));
    let next: Vec<_> = flight(&mut tx, t)
        .into_iter()
        .filter(|d| d.0 == PIPE1)
        .collect();
    assert!(!next.is_empty(), "pipe 1 sends");
    assert!(
        next.iter().all(|d| d.3 >= bound_end),
        "pipe 1 carries new bytes only: {next:?}"
    );

    // Pipe 0 times out: its window collapses to one segment and every un-SACKed segment is
    // deemed lost. Segment 0 is striped redundantly, 4–9 are unbound, 1–3 (SACKed) stay.
    let mss = u64::from(cfg.mss);
    let rto = tx.poll_timeout().expect("the retransmission timer");
    tx.handle_timeout(rto);
    assert_eq!(cwnd(&tx, 0), mss, "the window collapsed");
    assert_eq!(tx.stats().redundant_stripes, 1);
    assert_eq!(tx.stats().bytes_unbound, 6 * mss);
}

/// While the pipe repairs a loss, later SACKs that pass segments sent once make them owed too
/// (the tail of a slow-start overshoot: nothing beyond them is sent to have them deemed lost
/// by RFC 6675), and what lies beyond a window's worth is unbound then, not only at the
/// halving.
#[test]
fn segments_passed_during_a_repair_are_unbound_beyond_a_window() {
    let cfg = TcpConfig {
        initial_window: 10,
        ..TcpConfig::default()
    };
    let mss = u64::from(cfg.mss);
    let mut tx = PtcpSender::new(&cfg, LOCAL, REMOTE);
    tx.add_pipe(0, PIPE0, CcKind::NewReno);
    tx.add_pipe(1, PIPE1, CcKind::NewReno);
    tx.write(&vec![7u8; 100 * mss as usize]);
    let sent = flight(&mut tx, Time::from_millis(1));
    let s: Vec<(u64, u64)> = sent
        .iter()
        .filter(|d| d.0 == PIPE0)
        .map(|&(_, seq, len, _)| (seq, seq + len))
        .collect();
    let (una, t) = (s[0].0, Time::from_millis(200));
    for k in 2..=4 {
        tx.handle_datagram(t, &ack(PIPE0, una, &[(s[1].0, s[k].0)]));
    }
    assert_eq!(tx.stats().bytes_unbound, 0, "only segment 0 is owed");
    // Segment 9 arrives: 4–8 were passed (sent once, below a SACKed segment).
    tx.handle_datagram(t, &ack(PIPE0, una, &[(s[9].0, s[9].1), (s[1].0, s[4].0)]));
    let window_segments = cwnd(&tx, 0) / mss;
    assert!(window_segments < 6);
    assert_eq!(
        tx.stats().bytes_unbound,
        (6 - window_segments) * mss,
        "0 and 4–8 are owed; beyond a window's worth of them they are unbound"
    );
}
