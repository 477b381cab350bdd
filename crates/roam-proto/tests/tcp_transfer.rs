//! End-to-end behaviour of the TCP engine between two endpoints in virtual time.

mod support;

use roam_proto::tcp::{Event, SenderStats, State, TcpConfig};
use support::{assert_received, data, DropFilter, Impair, Pair};

#[test]
fn clean_path_delivers_everything_and_closes_both_ends() {
    let mut p = Pair::new(TcpConfig::default(), 1);
    let d = data(300_000, 1);
    p.transfer(&d, 60.0);
    assert_received(&p, &d);
    assert!(p.server_events.contains(&Event::Eof));
    assert_eq!(p.client.state(), State::Closed);
    assert_eq!(p.client.stats().sender.retransmitted_segments, 0);
}

#[test]
fn lossy_path_with_sack_delivers_everything() {
    let mut p = Pair::new(TcpConfig::default(), 2);
    p.fwd.loss = 0.05;
    p.rev.loss = 0.05;
    let d = data(200_000, 2);
    p.transfer(&d, 600.0);
    assert_eq!(p.received.len(), d.len());
    assert_received(&p, &d);
    assert!(p.client.stats().sender.retransmitted_segments > 0);
}

#[test]
fn lossy_path_with_newreno_delivers_everything() {
    let cfg = TcpConfig {
        sack: false,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, 3);
    p.fwd.loss = 0.03;
    p.rev.loss = 0.03;
    let d = data(200_000, 3);
    p.transfer(&d, 600.0);
    assert_received(&p, &d);
    assert!(!p.client.sack_enabled());
}

#[test]
fn reordering_duplication_and_blackout_preserve_the_stream() {
    let cfg = TcpConfig {
        delayed_ack: true,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, 4);
    p.fwd = Impair {
        loss: 0.02,
        reorder: 0.1,
        duplicate: 0.05,
        blackout: Some((1.0, 4.0)),
    };
    p.rev = Impair {
        loss: 0.02,
        reorder: 0.1,
        duplicate: 0.05,
        blackout: Some((1.5, 3.0)),
    };
    let d = data(400_000, 4);
    p.transfer(&d, 600.0);
    assert_received(&p, &d);
}

#[test]
fn lost_syn_is_retransmitted() {
    let mut p = Pair::new(TcpConfig::default(), 5);
    let mut first = true;
    p.drop_filter = Some(Box::new(move |to_server, _| {
        if to_server && first {
            first = false;
            return false;
        }
        true
    }));
    let d = data(10_000, 5);
    p.transfer(&d, 30.0);
    assert_received(&p, &d);
    assert!(
        p.now.as_secs_f64() > 1.0,
        "the SYN waited for the 1 s initial RTO"
    );
}

#[test]
fn retransmission_timer_backs_off_during_a_long_blackout() {
    let mut p = Pair::new(TcpConfig::default(), 6);
    // Everything from client to server is lost between 0.5 s and 20 s.
    p.fwd.blackout = Some((0.5, 20.0));
    let d = data(3_000_000, 6);
    p.transfer(&d, 120.0);
    assert!(
        p.received == d,
        "received {} state {:?} stats {:?} now {}",
        p.received.len(),
        p.client.state(),
        p.client.stats(),
        p.now
    );
    let st = p.client.stats().sender;
    // 1 s, 2 s, 4 s, 8 s … backoff: a handful of expiries cover 19.5 s, not dozens.
    assert!(
        st.timeouts >= 3 && st.timeouts <= 6,
        "timeouts = {}",
        st.timeouts
    );
}

/// Drops the `n`-th data-bearing datagram from the client, once.
fn drop_nth_data_segment(n: u32) -> DropFilter {
    let mut seen = 0;
    Box::new(move |to_server, bytes| {
        if to_server && bytes.len() > 500 {
            seen += 1;
            return seen != n;
        }
        true
    })
}

#[test]
fn fast_retransmit_repairs_a_single_loss_without_a_timeout() {
    for sack in [true, false] {
        let cfg = TcpConfig {
            sack,
            ..TcpConfig::default()
        };
        let mut p = Pair::new(cfg, 7);
        p.drop_filter = Some(drop_nth_data_segment(40));
        let d = data(300_000, 7);
        p.transfer(&d, 60.0);
        assert!(p.received == d);
        let st = p.client.stats().sender;
        assert_eq!(st.timeouts, 0, "sack={sack}");
        assert_eq!(st.recoveries, 1, "sack={sack}");
        assert_eq!(st.retransmitted_segments, 1, "sack={sack}");
    }
}

/// A transfer of 100 000 bytes (bounded at `limit` s) with a window of three segments, SACK
/// on or off, Limited Transmit on or off, over the pair `impair` leaves lossy; returns the
/// sender's statistics and when the transfer ended.
fn small_window_transfer(
    (sack, limited_transmit): (bool, bool),
    seed: u64,
    limit: f64,
    impair: impl Fn(&mut Pair),
) -> (SenderStats, roam_proto::Time) {
    let cfg = TcpConfig {
        sack,
        max_window_segments: 3,
        limited_transmit,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, seed);
    impair(&mut p);
    let d = data(100_000, seed);
    p.transfer(&d, limit);
    assert!(p.received == d, "limited_transmit={limited_transmit}");
    (p.client.stats().sender, p.now)
}

/// RFC 3042: with a window of three segments a loss yields only two duplicate ACKs, so
/// NewReno without SACK waits for its retransmission timer; Limited Transmit sends a new
/// segment on each of them, the third duplicate ACK arrives, and fast retransmit repairs it.
#[test]
fn limited_transmit_turns_a_small_window_timeout_into_a_fast_retransmit() {
    let run = |limited_transmit| {
        small_window_transfer((false, limited_transmit), 3, 60.0, |p| {
            p.drop_filter = Some(drop_nth_data_segment(30));
        })
    };
    let (without, slow) = run(false);
    assert_eq!(
        (without.timeouts, without.recoveries),
        (1, 0),
        "{without:?}"
    );
    let (with, fast) = run(true);
    assert_eq!((with.timeouts, with.recoveries), (0, 1), "{with:?}");
    assert_eq!(with.retransmitted_segments, 1);
    assert!(fast < slow, "{fast:?} vs {slow:?}");
}

/// With SACK the option changes nothing: the pipe already discounts SACKed segments.
#[test]
fn limited_transmit_leaves_a_sack_connection_unchanged() {
    let run = |limited_transmit| {
        small_window_transfer((true, limited_transmit), 5, 300.0, |p| p.fwd.loss = 0.03)
    };
    assert_eq!(run(false), run(true));
}

/// A transfer of 50 000 bytes into an 8 000-byte receive buffer whose reader does not read,
/// run until `until` seconds: returns the pair, the data and how much of it was written.
fn stalled_reader(seed: u64, until: f64) -> (Pair, Vec<u8>, usize) {
    let cfg = TcpConfig {
        recv_buffer: 8_000,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, seed);
    p.server_reads = false;
    let d = data(50_000, seed);
    let mut off = 0;
    while p.now.as_secs_f64() < until {
        off += p.client.write(&d[off..]);
        if !p.step() {
            break;
        }
    }
    (p, d, off)
}

#[test]
fn zero_window_is_probed_until_the_reader_drains() {
    let (mut p, d, off) = stalled_reader(8, 20.0);
    let server = p.server.as_ref().expect("connected");
    assert_eq!(server.receiver().readable(), 8_000, "the window filled up");
    assert_eq!(
        p.client.stats().sender.timeouts,
        0,
        "probing is not a timeout"
    );
    p.server_reads = true;
    p.transfer(&d[off..], 200.0);
    assert_eq!(p.received.len(), d.len());
    assert!(p.received == d);
}

#[test]
fn zero_window_probe_is_resent_at_every_expiry() {
    // RFC 1122 §4.2.2.17: the sender keeps probing a zero window for as long as it stays
    // closed. The probe byte is retransmitted at every (backed-off) expiry, not only the first.
    let (mut p, d, off) = stalled_reader(10, 60.0);
    // Expiries at about 2, 6, 14 and 30 s after the window closed.
    let probes = p.client.stats().sender.retransmitted_segments;
    assert!(probes >= 4, "probe resent {probes} times in 60 s");
    // A lost window update is covered by the next probe.
    p.rev.blackout = Some((60.0, 65.0));
    p.server_reads = true;
    p.transfer(&d[off..], 400.0);
    assert!(p.received == d);
}

#[test]
fn a_window_too_small_for_the_rest_is_filled_on_the_override_timeout() {
    // Found by the slow-reader property test: a one-segment receive buffer read two bytes at
    // a time. The window update after half the buffer was read offered 513 bytes for the 515
    // still queued; silly-window avoidance held the short segment, and the receiver (which
    // announces only growth of half its buffer) never spoke again: the transfer hung. RFC 1122
    // §4.2.3.4: a short segment leaves when it fills half the largest window offered, and the
    // persist timer doubles as the override timeout whenever nothing is outstanding.
    let cfg = TcpConfig {
        sack: false,
        mss: 1023,
        recv_buffer: 1023,
        send_buffer: 1023,
        ..TcpConfig::default()
    };
    let mut p = Pair::new(cfg, 0);
    p.read_budget = 2;
    let d = data(1538, 0);
    p.transfer(&d, 60.0);
    assert_eq!(p.received.len(), d.len());
    assert!(p.received == d);
    assert_eq!(p.client.stats().sender.timeouts, 0);
}

#[test]
fn handshake_gives_up_when_the_peer_never_answers() {
    let mut p = Pair::new(TcpConfig::default(), 9);
    p.fwd.loss = 1.0;
    p.run_until(1_000.0);
    assert_eq!(p.client.state(), State::Closed);
    assert!(p.client_events.contains(&Event::TimedOut));
}

#[test]
fn a_connection_opened_late_measures_the_path_not_the_clock() {
    // RFC 7323: the SYN's and SYN-ACK's TSval become TS.Recent, so the handshake's first RTT
    // sample is the path's ≈ 40 ms on either end, whenever the connection opens — not the
    // time since the clock's origin (as when the echo was 0).
    for start_s in [0.0, 20.0, 3000.0] {
        let start = roam_proto::Time::from_secs_f64(start_s);
        let mut p = Pair::starting_at(TcpConfig::default(), 3, start);
        while p.server.is_none() || p.client.state() != State::Established {
            assert!(p.step(), "handshake stalled");
        }
        p.run_until(start_s + 1.0);
        for (end, conn) in [
            ("client", &p.client),
            ("server", p.server.as_ref().unwrap()),
        ] {
            let srtt = conn.sender().rtt().srtt().expect("a handshake sample");
            assert!(
                srtt.as_secs_f64() < 0.1,
                "{end} opened at {start_s} s: SRTT {srtt:?}"
            );
        }
    }
}
