//! Scenario tests in virtual time for the wireless single-path mechanisms: TCP-ELN, the
//! TCP-Probing probe cycle and the last-link PER heuristic.

mod support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use roam_proto::linkinfo::LinkInfo;
use roam_proto::tcp::{LastLinkConfig, RecoveryMode, TcpConfig};
use roam_wire::{ProbeKind, Segment};
use support::{data, Pair};

const MSS: usize = 1000;

/// Offset from the client's (random) ISN of the `n`-th data segment (0-based; data starts one
/// past the ISN).
fn seq_of(n: u64) -> u64 {
    1 + n * MSS as u64
}

/// Drops the first transmission of the data segments starting at `seqs` (offsets from the
/// client's ISN, client → server) and returns the dropped datagrams, so that a test can report
/// them as corrupted.
fn drop_once(pair: &mut Pair, seqs: &[u64]) -> Rc<RefCell<Vec<Vec<u8>>>> {
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let isn = pair.client.initial_seq();
    let mut pending: Vec<u64> = seqs.iter().map(|s| isn + s).collect();
    let sink = Rc::clone(&dropped);
    pair.drop_filter = Some(Box::new(move |to_server, bytes| {
        if !to_server {
            return true;
        }
        let Ok(seg) = Segment::decode(bytes) else {
            return true;
        };
        if seg.payload.is_empty() {
            return true;
        }
        if let Some(i) = pending.iter().position(|&s| s == seg.seq) {
            pending.remove(i);
            sink.borrow_mut().push(bytes.to_vec());
            return false;
        }
        true
    }));
    dropped
}

/// Runs a transfer, reporting every dropped datagram to the server as a wireless corruption
/// (what the simulator's `Agent::on_corrupted` does).
fn transfer_reporting(pair: &mut Pair, payload: &[u8], dropped: &Rc<RefCell<Vec<Vec<u8>>>>) {
    pair.transfer_with(payload, 120.0, |pair| {
        let now = pair.now;
        if let Some(server) = pair.server.as_mut() {
            for d in dropped.borrow_mut().drain(..) {
                server.handle_corrupted(now, &d);
            }
        }
    });
}

fn eln_config(sack: bool, eln: bool) -> TcpConfig {
    TcpConfig {
        sack,
        eln,
        initial_window: 4,
        ..TcpConfig::default()
    }
}

fn eln_run(sack: bool, eln: bool) -> (Pair, Vec<u8>) {
    let mut pair = Pair::new(eln_config(sack, eln), 3);
    let payload = data(200 * MSS, 9);
    let dropped = drop_once(&mut pair, &[seq_of(60)]);
    transfer_reporting(&mut pair, &payload, &dropped);
    (pair, payload)
}

#[test]
fn eln_marked_loss_leaves_cwnd_unchanged_in_sack_and_newreno_modes() {
    for sack in [true, false] {
        let (pair, payload) = eln_run(sack, true);
        assert_eq!(pair.received, payload, "sack={sack}: stream intact");
        let s = pair.client.stats().sender;
        assert_eq!(s.recoveries, 1, "sack={sack}: one recovery");
        assert_eq!(
            s.wireless_recoveries, 1,
            "sack={sack}: classified as wireless"
        );
        assert_eq!(s.timeouts, 0, "sack={sack}");
        // No congestion response: ssthresh was never set, cwnd kept growing.
        assert_eq!(pair.client.sender().ssthresh(), u64::MAX, "sack={sack}");

        // Without ELN the same loss halves the window.
        let (pair, payload) = eln_run(sack, false);
        assert_eq!(pair.received, payload);
        let s = pair.client.stats().sender;
        assert_eq!(s.wireless_recoveries, 0);
        assert!(
            pair.client.sender().ssthresh() < u64::MAX,
            "sack={sack}: halved"
        );
    }
}

#[test]
fn a_lost_probe_restarts_the_cycle_with_a_new_id() {
    let cfg = TcpConfig {
        sack: false,
        recovery: RecoveryMode::Probing,
        initial_window: 4,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 5);
    let payload = data(120 * MSS, 4);
    // Drop data segment 40 once (three dup-ACKs start a cycle) and the first PROBE1.
    let probe1_ids = Rc::new(RefCell::new(Vec::new()));
    let ids = Rc::clone(&probe1_ids);
    let mut data_dropped = false;
    let mut probe_dropped = false;
    let seg40 = pair.client.initial_seq() + seq_of(40);
    pair.drop_filter = Some(Box::new(move |to_server, bytes| {
        let Ok(seg) = Segment::decode(bytes) else {
            return true;
        };
        if to_server && !data_dropped && seg.seq == seg40 && !seg.payload.is_empty() {
            data_dropped = true;
            return false;
        }
        if let Some(p) = seg.options.probe {
            if p.kind == ProbeKind::Probe1 {
                ids.borrow_mut().push(p.id);
                if !probe_dropped {
                    probe_dropped = true;
                    return false;
                }
            }
            // Probes are header-only.
            assert!(seg.payload.is_empty());
        }
        true
    }));
    pair.transfer(&payload, 120.0);
    assert_eq!(pair.received, payload, "stream intact");
    let s = pair.client.stats().sender;
    assert!(s.probe_cycles >= 1, "a probe cycle ran");
    assert!(
        s.probe_restarts >= 1,
        "the lost PROBE1 restarted the exchange"
    );
    let ids = probe1_ids.borrow();
    assert!(ids.len() >= 2, "PROBE1 sent again: {ids:?}");
    assert_ne!(ids[0], ids[1], "the restarted exchange uses a new id");
    assert_eq!(
        s.probe_immediate + s.probe_gentle + s.probe_backoffs,
        s.probe_cycles,
        "every cycle ended in a decision"
    );
}

#[test]
fn probing_sends_no_data_during_the_cycle_and_recovers() {
    let cfg = TcpConfig {
        sack: false,
        recovery: RecoveryMode::Probing,
        initial_window: 4,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 6);
    let payload = data(300 * MSS, 2);
    pair.fwd.loss = 0.02;
    pair.rev.loss = 0.02;
    pair.transfer(&payload, 600.0);
    assert_eq!(
        pair.received, payload,
        "every byte once, in order, unchanged"
    );
    assert!(pair.client.stats().sender.probe_cycles > 0);
}

/// What a receiver on an up wireless link of this bandwidth and PER knows about it.
fn wireless_link(bandwidth_bps: u64, per: f64) -> LinkInfo {
    LinkInfo {
        wireless: true,
        per,
        bandwidth_bps,
        up: true,
        ..LinkInfo::default()
    }
}

fn per_run(drops: &[u64], per: f64) -> Pair {
    let cfg = TcpConfig {
        sack: false,
        report_link_info: true,
        initial_window: 4,
        last_link: LastLinkConfig {
            per: true,
            ..LastLinkConfig::default()
        },
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 7);
    pair.delay = Duration::from_millis(10);
    let payload = data(400 * MSS, 3);
    let _ = drop_once(&mut pair, drops);
    // Let the handshake finish, then the receiver learns its link's PER and reports it.
    let mut off = pair.client.write(&payload);
    while pair.server.is_none() && pair.step() {}
    let info = wireless_link(10_000_000, per);
    let now = pair.now;
    pair.server
        .as_mut()
        .expect("accepted")
        .set_link_info(now, info);
    let end = roam_proto::Time::from_secs_f64(200.0);
    let mut closed = false;
    while pair.now < end {
        if off < payload.len() {
            off += pair.client.write(&payload[off..]);
        } else if !closed {
            pair.client.close();
            closed = true;
        }
        if !pair.step() {
            break;
        }
    }
    assert_eq!(pair.received, payload, "stream intact");
    pair
}

#[test]
fn per_heuristic_keeps_the_window_while_plr_is_below_per() {
    let pair = per_run(&[seq_of(150)], 0.01);
    let s = pair.client.stats().sender;
    assert_eq!(s.recoveries, 1);
    assert_eq!(s.wireless_recoveries, 1, "PLR 0 <= PER 1 %: no back-off");
    assert_eq!(pair.client.sender().ssthresh(), u64::MAX);
}

#[test]
fn per_heuristic_backs_off_when_plr_exceeds_per() {
    // The second loss comes when PLR = 1 retransmission / ~60 segments ≈ 1.6 % > PER 0.5 %.
    let pair = per_run(&[seq_of(20), seq_of(60)], 0.005);
    let s = pair.client.stats().sender;
    assert_eq!(s.recoveries, 2, "{s:?}");
    assert_eq!(
        s.wireless_recoveries, 1,
        "first loss excused, second not: {s:?}"
    );
    assert!(pair.client.sender().ssthresh() < u64::MAX, "backed off");
}

#[test]
fn per_heuristic_is_consulted_again_on_a_partial_ack() {
    // Three losses in one window. The first is detected with PLR 0 and excused; the partial
    // ACK that reveals the second comes after one retransmission in ~100 segments (PLR ≈ 1 %
    // > PER 0.5 %), so the episode now takes the congestion response (§3.3, "whenever a
    // segment loss is detected"). One episode, cut once.
    let pair = per_run(&[seq_of(60), seq_of(62), seq_of(64)], 0.005);
    let s = pair.client.stats().sender;
    assert_eq!(s.recoveries, 1, "{s:?}");
    assert_eq!(s.wireless_recoveries, 1, "{s:?}");
    assert!(
        pair.client.sender().ssthresh() < u64::MAX,
        "cut within the episode: {s:?}"
    );
}

#[test]
fn per_heuristic_excuses_a_timeout_while_plr_is_below_per() {
    // The last data segment is lost: no duplicate ACKs, so the loss is detected by the
    // retransmission timer (§1.1). PLR 0 <= PER 1 %: retransmit it, keep the window.
    let pair = per_run(&[seq_of(399)], 0.01);
    let s = pair.client.stats().sender;
    assert_eq!(s.timeouts, 1, "{s:?}");
    assert_eq!(s.wireless_recoveries, 1, "{s:?}");
    assert_eq!(s.retransmitted_segments, 1, "no go-back-N: {s:?}");
    assert_eq!(pair.client.sender().ssthresh(), u64::MAX);
}

#[test]
fn per_heuristic_resends_a_lost_retransmission_after_an_excused_timeout() {
    // The last segment and its first retransmission are both lost: the second timeout must
    // retransmit it again (it is already marked retransmitted), or the transfer stalls.
    let pair = per_run(&[seq_of(399), seq_of(399)], 0.01);
    let s = pair.client.stats().sender;
    assert_eq!(s.timeouts, 2, "{s:?}");
    assert_eq!(s.wireless_recoveries, 2, "{s:?}");
    assert_eq!(s.retransmitted_segments, 2, "{s:?}");
}

#[test]
fn per_heuristic_treats_a_timeout_as_congestion_when_per_is_zero() {
    let pair = per_run(&[seq_of(399)], 0.0);
    let s = pair.client.stats().sender;
    assert_eq!(s.timeouts, 1, "{s:?}");
    assert_eq!(s.wireless_recoveries, 0, "{s:?}");
    assert!(pair.client.sender().ssthresh() < u64::MAX);
}

#[test]
fn gentle_recovery_lands_between_half_and_full_previous_window() {
    let cfg = TcpConfig {
        sack: false,
        recovery: RecoveryMode::Probing,
        initial_window: 4,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 8);
    let payload = data(1000 * MSS, 5);
    // Cycle 1 on a 20 ms path sets bestprtt; cycle 2 on a 200 ms path sets worstprtt (and, its
    // RTTs rising, ends in Slow Start); cycle 3 on a 150 ms path: acprtt falls to just above
    // this cycle's samples, right of (best + worst)/2, so both samples are below acprtt and the
    // sender recovers gently (tcp-probing.txt §3.2).
    let _ = drop_once(&mut pair, &[seq_of(30), seq_of(300), seq_of(700)]);
    let mut off = 0;
    let mut old_cwnd = None;
    let mut gentle = None;
    let end = roam_proto::Time::from_secs_f64(300.0);
    while pair.now < end && gentle.is_none() {
        if off < payload.len() {
            off += pair.client.write(&payload[off..]);
        }
        let before = pair.client.stats().sender;
        let cwnd_before = pair.client.sender().cwnd();
        if !pair.step() {
            break;
        }
        let after = pair.client.stats().sender;
        if after.probe_cycles > before.probe_cycles {
            old_cwnd = Some(cwnd_before);
        }
        if after.probe_gentle > before.probe_gentle {
            gentle = Some(pair.client.sender().cwnd());
        }
        let una = pair.client.sender().snd_una() - pair.client.initial_seq();
        pair.delay = Duration::from_millis(if una > seq_of(500) {
            150
        } else if una > seq_of(150) {
            200
        } else {
            20
        });
    }
    let s = pair.client.stats().sender;
    let old = old_cwnd.expect("a cycle ran");
    let new = gentle.unwrap_or_else(|| panic!("no Gentle Recovery: {s:?}"));
    assert!(
        new >= old / 2 && new <= old,
        "Gentle window {new} outside [{}, {old}]",
        old / 2
    );
}

/// A pair whose client has written as much of `payload` as it takes and whose server, once
/// the handshake is done, knows its link (`info`) and reports it in its ACKs. Returns the pair
/// and how much of `payload` was written.
fn pair_reporting(
    cfg: TcpConfig,
    seed: u64,
    delay: Duration,
    payload: &[u8],
    info: LinkInfo,
) -> (Pair, usize) {
    let mut pair = Pair::new(cfg, seed);
    pair.delay = delay;
    let off = pair.client.write(payload);
    while pair.server.is_none() && pair.step() {}
    let now = pair.now;
    pair.server
        .as_mut()
        .expect("accepted")
        .set_link_info(now, info);
    (pair, off)
}

/// Largest congestion window seen while sending 400 segments to a receiver that reports a
/// 2 Mb/s last link, with or without Max-Cwnd tuning.
fn max_window_seen(max_cwnd: bool) -> u64 {
    let cfg = TcpConfig {
        report_link_info: true,
        last_link: LastLinkConfig {
            max_cwnd,
            ..LastLinkConfig::default()
        },
        ..TcpConfig::default()
    };
    let payload = data(400 * MSS, 4);
    let info = wireless_link(2_000_000, 0.0);
    let (mut pair, mut off) = pair_reporting(cfg, 11, Duration::from_millis(10), &payload, info);
    let mut largest = 0;
    while pair.now < roam_proto::Time::from_secs_f64(60.0) && pair.received.len() < payload.len() {
        if off < payload.len() {
            off += pair.client.write(&payload[off..]);
        }
        if !pair.step() {
            break;
        }
        largest = largest.max(pair.client.sender().cwnd());
    }
    assert_eq!(pair.received, payload, "stream intact");
    largest
}

#[test]
fn max_cwnd_tuning_stops_growth_at_bandwidth_times_rtt() {
    // Cwnd_max = 2 Mb/s × ~21 ms min RTT / 8 ≈ 5 segments (last-link-heuristics.txt §3.1).
    let capped = max_window_seen(true);
    let free = max_window_seen(false);
    assert!(capped <= 6 * MSS as u64, "capped window {capped}");
    assert!(
        free > 2 * capped,
        "without the cap the window grows: {free} vs {capped}"
    );
}

/// Times at which new data left the sender in the first 300 ms after the receiver reported a
/// 20 Mb/s last link over a 100 ms path (Initial tuning: BW·RTT ≈ 250 segments at once).
fn initial_window_send_times(burst: bool) -> Vec<roam_proto::Time> {
    let cfg = TcpConfig {
        report_link_info: true,
        last_link: LastLinkConfig {
            initial: true,
            initial_burst: burst,
            ..LastLinkConfig::default()
        },
        ..TcpConfig::default()
    };
    let payload = data(600 * MSS, 5);
    let info = wireless_link(20_000_000, 0.0);
    let (mut pair, mut off) = pair_reporting(cfg, 13, Duration::from_millis(50), &payload, info);
    // A fast link, so that only the sender spaces the segments.
    pair.bytes_per_sec = 1e9;
    let mut times = Vec::new();
    let mut last = pair.client.sender().snd_nxt();
    let end = pair.now + Duration::from_millis(300);
    while pair.now < end {
        if off < payload.len() {
            off += pair.client.write(&payload[off..]);
        }
        if !pair.step() {
            break;
        }
        let nxt = pair.client.sender().snd_nxt();
        for _ in 0..(nxt.saturating_sub(last) / MSS as u64) {
            times.push(pair.now);
        }
        last = nxt;
    }
    times
}

#[test]
fn initial_tuning_paces_its_window_at_the_reported_bandwidth() {
    // 1000-byte segments at 20 Mb/s: one every 0.4 ms (last-link-heuristics.txt §3.2 with our
    // pacing, docs/DECISIONS.md). The window is installed once the first report arrives.
    let paced = initial_window_send_times(false);
    assert!(
        paced.len() > 200,
        "the initial window was sent: {}",
        paced.len()
    );
    let most_at_once =
        |t: &[roam_proto::Time]| t.chunk_by(|a, b| a == b).map(<[_]>::len).max().unwrap_or(0);
    assert!(
        most_at_once(&paced) <= 2,
        "paced window left in bursts of {}",
        most_at_once(&paced)
    );
    let gaps: Vec<Duration> = paced.windows(2).map(|w| w[1] - w[0]).collect();
    let spaced = gaps
        .iter()
        .filter(|g| **g >= Duration::from_micros(399))
        .count();
    assert!(
        spaced * 10 >= gaps.len() * 9,
        "{spaced} of {} gaps at least one packet time",
        gaps.len()
    );
    // Back to back (ns-2's behaviour) the same window leaves as one burst.
    let burst = initial_window_send_times(true);
    assert!(
        most_at_once(&burst) > 100,
        "burst of {}",
        most_at_once(&burst)
    );
}

#[test]
fn a_timeout_probe_cycle_with_sack_repairs_a_lost_tail_at_once() {
    // The last ten segments are lost: no duplicate ACK or SACK block can reveal them, so the
    // retransmission timer starts a probe cycle (tcp-probing.txt §3 case 1). Whatever it
    // decides, the timeout said the tail is gone (RFC 6675 §5.1): all of it is resent after
    // the cycle, not one segment per further timeout.
    let cfg = TcpConfig {
        sack: true,
        recovery: RecoveryMode::Probing,
        initial_window: 4,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg, 7);
    let payload = data(60 * MSS, 3);
    let tail: Vec<u64> = (50..60).map(seq_of).collect();
    drop_once(&mut pair, &tail);
    pair.transfer(&payload, 120.0);
    assert_eq!(pair.received, payload, "stream intact");
    let s = pair.client.stats().sender;
    assert_eq!(s.probe_cycles, 1, "one cycle: {s:?}");
    assert_eq!(s.timeouts, 1, "one timeout repairs the whole tail: {s:?}");
}
