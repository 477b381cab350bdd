//! R²CP engine behaviour (rcp-r2cp.txt §4): rank scheduling, loss reassignment, pipe
//! deletion, server migration, over the small multi-path network of `r2cp_support`.

mod r2cp_support;

use std::time::Duration;

use r2cp_support::{Net, PathSpec};
use roam_proto::r2cp::{PipeId, PipeRole, R2cpEvent, RangeSet, Removal, Scheme, TokenPolicy};
use roam_proto::rcp::RcpConfig;
use roam_proto::Time;

fn path(server: usize, delay_ms: u64, mbps: f64, loss: f64) -> PathSpec {
    PathSpec {
        server,
        delay: Duration::from_millis(delay_ms),
        rate: mbps * 1e6 / 8.0,
        loss,
        burst: 0,
        queue: 0,
    }
}

fn config(buffer: u64) -> RcpConfig {
    RcpConfig {
        recv_buffer: buffer,
        initial_window: 2,
        ..RcpConfig::default()
    }
}

fn secs(s: u64) -> Time {
    Time::from_millis(s * 1000)
}

#[test]
fn one_pipe_transfers_the_object_intact() {
    let mut net = Net::new(config(1 << 20), Scheme::Rank, 300_000, 1, 1);
    net.add_pipe(path(0, 20, 4.0, 0.0), PipeRole::Primary);
    net.run_until(secs(30));
    assert!(net.intact());
    assert!(net.rx.is_closed());
    assert_eq!(net.rx.stats().bytes_rebound, 0);
}

/// Two pipes with RTTs 40 ms and 160 ms and a small buffer: by rank, data arrives nearly in
/// order (few arrivals find the buffer 3/4 full) and the transfer is faster than FCFS.
#[test]
fn rank_keeps_arrivals_in_order_where_fcfs_fills_the_buffer() {
    let run = |scheme| {
        let mut net = Net::new(config(64_000), scheme, 2_000_000, 2, 3);
        net.add_pipe(path(0, 20, 4.0, 0.0), PipeRole::Primary);
        net.add_pipe(path(1, 80, 4.0, 0.0), PipeRole::Primary);
        net.run_until(secs(60));
        assert!(net.intact(), "{scheme:?}");
        let done = net
            .events
            .iter()
            .find(|(_, e)| *e == R2cpEvent::Eof)
            .unwrap()
            .0;
        (done, net.rx.stats().arrivals_buffer_75)
    };
    let (t_rank, full_rank) = run(Scheme::Rank);
    let (t_fcfs, full_fcfs) = run(Scheme::Fcfs);
    assert!(t_rank < t_fcfs, "rank {t_rank:?} fcfs {t_fcfs:?}");
    assert!(full_rank < full_fcfs, "rank {full_rank} fcfs {full_fcfs}");
}

/// A loss on the slow pipe goes back to the engine and is re-requested by the fast pipe (the
/// pipe whose data arrives first: with a buffer that keeps its queue short, the fast one).
#[test]
fn losses_are_reassigned_to_a_pipe_with_room() {
    let mut net = Net::new(config(128_000), Scheme::Rank, 1_000_000, 2, 7);
    net.add_pipe(path(0, 10, 4.0, 0.0), PipeRole::Primary);
    net.add_pipe(path(1, 60, 4.0, 0.05), PipeRole::Primary);
    net.run_until(secs(60));
    assert!(net.intact());
    assert!(net.rx.stats().reassigned > 0, "{:?}", net.rx.stats());
}

/// Break-before-make: a pipe deleted with requests outstanding hands them all to the other.
#[test]
fn deleting_a_pipe_reassigns_everything_it_had_outstanding() {
    let mut net = Net::new(config(1 << 20), Scheme::Rank, 2_000_000, 2, 11);
    net.add_pipe(path(0, 20, 4.0, 0.0), PipeRole::Primary);
    net.add_pipe(path(1, 40, 4.0, 0.0), PipeRole::Primary);
    net.run_until(secs(1));
    let outstanding = net
        .rx
        .pipes()
        .find(|p| p.id == PipeId(1))
        .unwrap()
        .outstanding;
    assert!(outstanding > 0);
    net.path_down(1, Some(Removal::Break));
    let queued = net.rx.reassign_queue().bytes();
    assert!(queued > 0 && queued <= outstanding as u64 * 1000);
    assert_eq!(net.rx.pipes().count(), 1);
    net.run_until(secs(60));
    assert!(net.intact());
    assert!(net
        .events
        .iter()
        .any(|(_, e)| *e == R2cpEvent::PipeClosed(PipeId(1))));
}

/// Make-before-break: the old pipe drains (its outstanding requests are answered) while the
/// new one takes all new data; no stall.
#[test]
fn make_before_break_drains_the_old_pipe() {
    let mut net = Net::new(config(1 << 20), Scheme::Rank, 2_000_000, 2, 13);
    net.add_pipe(path(0, 20, 4.0, 0.0), PipeRole::Primary);
    net.run_until(secs(1));
    net.add_pipe(path(1, 20, 4.0, 0.0), PipeRole::Primary);
    net.rx.remove_pipe(net.now, PipeId(0), Removal::Drain);
    net.run_until(secs(60));
    assert!(net.intact());
    assert_eq!(net.rx.stats().bytes_rebound, 0, "nothing re-requested");
    // Deliveries never stop for more than 200 ms (one handshake and a bit).
    let mut times: Vec<Time> = net.delivered.iter().flatten().map(|(t, _)| *t).collect();
    times.sort();
    let gap = times
        .windows(2)
        .map(|w| w[1].saturating_since(w[0]))
        .max()
        .unwrap();
    assert!(gap < Duration::from_millis(200), "{gap:?}");
}

/// Server migration (§2.2.2): the first server vanishes mid-transfer; a pipe to a second
/// server requests exactly the holes and what was never requested — nothing already held.
#[test]
fn migration_requests_exactly_the_holes() {
    let len = 1_500_000;
    let mut net = Net::new(config(1 << 20), Scheme::Rank, len, 2, 17);
    net.add_pipe(path(0, 20, 4.0, 0.0), PipeRole::Primary);
    net.run_until(secs(1));
    net.kill_server(0);
    net.run_until(Time::from_millis(1100));
    let rcv_nxt = net.rx.rcv_nxt();
    net.rx.remove_pipe(net.now, PipeId(0), Removal::Break);
    // What the buffer lacks: the old pipe's outstanding requests, and what nobody asked for.
    let mut missing = net.rx.pending().clone();
    for (a, b) in net.rx.reassign_queue().iter() {
        missing.insert(a, b);
    }
    assert!(
        net.rx.reassign_queue().bytes() > 0,
        "the old pipe had requests outstanding"
    );
    net.add_pipe(path(1, 30, 4.0, 0.0), PipeRole::Primary);
    let pulls_before = net.pulls.len();
    net.run_until(secs(60));
    assert!(net.intact());
    // A pull rides in up to four REQs: the distinct ranges are what was asked for.
    let mut distinct: Vec<(u64, u64)> = net.pulls[pulls_before..]
        .iter()
        .map(|&(s, a, b)| {
            assert_eq!(s, 1);
            assert!(a >= rcv_nxt, "pulled [{a},{b}) below rcv_nxt {rcv_nxt}");
            (a, b)
        })
        .collect();
    distinct.sort();
    distinct.dedup();
    let mut asked = RangeSet::new();
    for &(a, b) in &distinct {
        asked.insert(a, b);
    }
    let asked_bytes: u64 = distinct.iter().map(|(a, b)| b - a).sum();
    assert_eq!(
        asked, missing,
        "exactly the holes and the never-requested rest"
    );
    assert_eq!(asked_bytes, missing.bytes(), "each byte asked for once");
}

/// A blackout of the primary (nothing passes, the pipe is not deleted): the holes its timeout
/// declares go to the secondary, which carries the in-order stream while the primary only
/// probes (§4.1.4: losses are "reassigned to another pipe that has space in its window"), and
/// the primary, probing at its un-backed-off RTO, is back in use about one RTO after its path
/// returns. Before the fix the primary took its own holes back and lost them again: in-order
/// delivery stopped for the whole blackout and the primary returned after seconds.
#[test]
fn a_blackout_of_the_primary_moves_its_holes_to_the_secondary() {
    let mut net = Net::new(config(1 << 20), Scheme::Rank, 20_000_000, 2, 11);
    net.add_pipe(path(0, 15, 8.0, 0.0), PipeRole::Primary);
    net.add_pipe(path(1, 105, 2.0, 0.0), PipeRole::Primary);
    net.run_until(secs(3));
    net.path_down(0, None);
    // The primary's RTO (1 s floor) declares its holes; from then on every second delivers.
    net.run_until(secs(5));
    let mut last = net.received.len();
    for t in 6..=10 {
        net.run_until(secs(t));
        let now = net.received.len();
        // The secondary alone: 2 Mb/s = 250 kB/s; at least 60 % of it in order each second.
        assert!(now - last > 150_000, "second {t}: {} bytes", now - last);
        last = now;
    }
    net.path_up(0);
    net.run_until(secs(12));
    let back = net.delivered[0]
        .iter()
        .find(|(t, _)| *t > secs(10))
        .map(|(t, _)| t.saturating_since(secs(10)));
    assert!(
        back.is_some_and(|d| d <= Duration::from_millis(1_500)),
        "primary back after {back:?}"
    );
    assert!(net.rx.stats().reassigned > 0);
}

/// §4.4.3's policy with losses on the primary and a faster secondary: the secondary must leave
/// the tokens to the primary, so it fetches nothing while the primary has room. Before the
/// fix the primary's rank skip still left the next bytes to the secondary (the faster pipe)
/// and bound units beyond the buffer span, which never fit: neither pipe requested anything
/// and the connection stopped for good (57 kB of 1 MB). Holes and reassigned units likewise
/// go to the primary rather than wait for such a secondary.
#[test]
fn under_a_policy_a_waiting_secondary_neither_skews_the_rank_nor_strands_holes() {
    let mut net = Net::new(config(256_000), Scheme::Rank, 1_000_000, 2, 5);
    net.add_pipe(path(0, 60, 1.0, 0.02), PipeRole::Primary);
    net.add_pipe(path(1, 10, 1.0, 0.0), PipeRole::Secondary);
    net.rx.set_policy(
        Time::ZERO,
        Some(TokenPolicy {
            rate_bps: 720_000.0,
            depth_bytes: 4_000,
        }),
    );
    // 1 MB at 720 kb/s is about 11 s.
    net.run_until(secs(40));
    assert!(net.intact(), "received {} of 1000000", net.received.len());
    assert!(net.rx.is_complete());
}

/// §3.3.4 over a whole transfer (a 64 KB buffer, RTTs 20 and 120 ms, losses on both pipes):
/// the buffer is never charged (held + requested and awaited) more than its size plus one
/// segment, rank binds the slow pipe's units beyond read point + buffer (which the former span
/// rule never did), and the object arrives intact.
#[test]
fn the_charge_stays_within_the_buffer_while_units_go_beyond_the_span() {
    let buffer = 64_000;
    let mss = u64::from(RcpConfig::default().mss);
    let mut net = Net::new(config(buffer), Scheme::Rank, 3_000_000, 2, 21);
    net.add_pipe(path(0, 10, 4.0, 0.01), PipeRole::Primary);
    net.add_pipe(path(1, 60, 4.0, 0.01), PipeRole::Primary);
    let mut beyond = 0;
    let mut seen = 0;
    for step in 1..=12_000 {
        net.run_until(Time::from_millis(step * 5));
        assert!(
            net.rx.charged() <= buffer + mss,
            "charged {} at {} ms",
            net.rx.charged(),
            step * 5
        );
        // The read point only grows: one read later than the pull understates the span.
        let read = net.rx.read_point();
        beyond += net.pulls[seen..]
            .iter()
            .filter(|&&(_, _, e)| e > read + buffer)
            .count();
        seen = net.pulls.len();
        if net.rx.is_closed() {
            break;
        }
    }
    assert!(net.intact(), "received {} bytes", net.received.len());
    assert!(beyond > 0, "no unit bound beyond the span");
}

/// A fast path whose queue sets its RTT (no base delay: 8 Mb/s, 1 ms, a drop-tail queue of
/// 100-400 kB, a token bucket of 64 kB) beside a slow one (0.2 Mb/s, 1 ms, 750 kB of queue), with and without a token
/// bucket whose burst lets its first bytes through at once (the namespace test bed's tbf,
/// issue 27). Head-of-line awareness keeps the slow pipe at about one unit outstanding while
/// its congestion window keeps growing on every delivery, and its RTT (one packet time) stays
/// below the fast pipe's queue-inflated one. Ranked as if the slow pipe fetched a whole window
/// per round trip, the fast pipe's requests skipped far ahead and left the slow pipe the
/// lowest units, one per 56 ms: the buffer filled above them and the transfer crawled at the
/// slow path's pace (here up to 11.2 s for 6.4 s on the fast path alone; over real sockets
/// 5.5 Mb/s for 7.6). Ranked by the window it fills, the two together beat the fast path
/// alone in every cell.
#[test]
fn a_budget_held_slow_pipe_is_ranked_by_the_window_it_fills() {
    let len = 6 << 20;
    let config = RcpConfig {
        mss: 1400,
        recv_buffer: 2 << 20,
        initial_rto_ms: 200,
        min_rto_ms: 200,
        ..RcpConfig::default()
    };
    let run = |paths: &[PathSpec]| {
        let mut net = Net::new(config.clone(), Scheme::Rank, len, 1, 1);
        for &p in paths {
            net.add_pipe(p, PipeRole::Primary);
        }
        net.run_until(secs(60));
        assert!(net.intact());
        net.events
            .iter()
            .find(|(_, e)| *e == R2cpEvent::Eof)
            .expect("the transfer completes")
            .0
    };
    for fast_queue in [100_000, 200_000, 400_000] {
        for slow_burst in [0, 16_000] {
            let fast = PathSpec {
                delay: Duration::from_micros(500),
                burst: 64_000,
                queue: fast_queue,
                ..path(0, 0, 8.0, 0.0)
            };
            let slow = PathSpec {
                delay: Duration::from_micros(500),
                burst: slow_burst,
                queue: 750_000,
                ..path(0, 0, 0.2, 0.0)
            };
            let alone = run(&[fast]);
            let both = run(&[fast, slow]);
            assert!(
                both <= alone,
                "fast queue {fast_queue} B, slow burst {slow_burst} B: both paths {both:?}, \
                 the fast path alone {alone:?}"
            );
        }
    }
}

/// Make-before-break (`head.rs`, `exit_slow_start_on_delay`): a pipe made while the
/// connection delivers leaves slow start on a standing queue, before it overflows its
/// 50-unit queue, so the old pipe's drain hands over without a loss on the new path; the
/// same path opened with the connection keeps the paper's slow start, and overshoots.
#[test]
fn a_pipe_made_while_the_connection_delivers_leaves_slow_start_before_its_queue_overflows() {
    let len = 20 << 20;
    let mut config = config(256 << 10);
    config.mss = 1000;
    let old = PathSpec {
        queue: 50_000,
        ..path(0, 15, 4.0, 0.0)
    };
    let new = PathSpec {
        queue: 50_000,
        ..path(0, 31, 4.0, 0.0)
    };
    let recoveries = |net: &Net, id: u32| {
        net.rx
            .pipes()
            .find(|p| p.id == PipeId(id))
            .map(|p| p.recoveries)
    };
    // The new path with the connection: slow start overshoots the queue.
    let mut alone = Net::new(config.clone(), Scheme::Rank, len, 1, 1);
    alone.add_pipe(new, PipeRole::Primary);
    alone.run_until(secs(5));
    assert!(
        recoveries(&alone, 0).is_some_and(|r| r >= 1),
        "opened with the connection, the pipe overshoots: {:?}",
        recoveries(&alone, 0)
    );
    // Make-before-break: made at 5 s, the old pipe drains from 5.5 s.
    let mut mbb = Net::new(config, Scheme::Rank, len, 1, 1);
    mbb.add_pipe(old, PipeRole::Primary);
    mbb.run_until(secs(5));
    mbb.add_pipe(new, PipeRole::Primary);
    mbb.run_until(Time::from_millis(5_500));
    mbb.rx.remove_pipe(mbb.now, PipeId(0), Removal::Drain);
    mbb.run_until(secs(10));
    assert_eq!(
        recoveries(&mbb, 1),
        Some(0),
        "the joining pipe left slow start before its queue overflowed"
    );
    assert!(
        mbb.rx.pipes().all(|p| p.id != PipeId(0)),
        "the old pipe drained"
    );
}
