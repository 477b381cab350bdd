//! Data integrity under random impairments: every byte delivered once, in order, unchanged —
//! under loss, reordering, duplication and blackouts in both directions, over many seeds, with
//! the plain engine and with its wireless options.

mod support;

use proptest::prelude::*;
use roam_proto::cc::CcKind;
use roam_proto::linkinfo::LinkInfo;
use roam_proto::tcp::{LastLinkConfig, RecoveryMode, TcpConfig};
use roam_proto::Time;
use support::{data, Impair, Pair};

fn impair() -> impl Strategy<Value = Impair> {
    (
        0.0..0.15f64,
        0.0..0.2f64,
        0.0..0.1f64,
        proptest::option::of((0.0..5.0f64, 0.1..4.0f64)),
    )
        .prop_map(|(loss, reorder, duplicate, blackout)| Impair {
            loss,
            reorder,
            duplicate,
            blackout: blackout.map(|(s, d)| (s, s + d)),
        })
}

/// Options that never give up: under heavy loss plus a blackout, giving up is legitimate but
/// not what these tests check.
fn patient(cfg: TcpConfig) -> TcpConfig {
    TcpConfig {
        max_syn_retries: 20,
        max_retries: 30,
        ..cfg
    }
}

/// A pair whose sender runs `cc`, its directions impaired by `fwd` and `rev`.
fn impaired(cfg: TcpConfig, cc: CcKind, seed: u64, fwd: Impair, rev: Impair) -> Pair {
    let mut p = Pair::with_cc(cfg, cc, seed, Time::ZERO);
    p.fwd = fwd;
    p.rev = rev;
    p
}

/// Sends `len` seeded bytes (giving up at `limit` virtual seconds) and checks that every byte
/// arrived once, in order, unchanged.
fn check_transfer(p: &mut Pair, len: usize, seed: u64, limit: f64) -> Result<(), TestCaseError> {
    let d = data(len, seed);
    p.transfer(&d, limit);
    prop_assert_eq!(p.received.len(), d.len());
    prop_assert!(p.received == d, "delivered bytes differ from sent bytes");
    // A sender of full segments never meets the receiver's bound on out-of-order pieces.
    let refused = p
        .server
        .as_ref()
        .map_or(0, |s| s.receiver().refused_pieces());
    prop_assert_eq!(refused, 0, "out-of-order pieces refused");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn stream_arrives_intact_under_any_impairment(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        sack in any::<bool>(),
        delayed_ack in any::<bool>(),
        len in 1usize..150_000,
    ) {
        let cfg = TcpConfig { sack, delayed_ack, min_rto_ms: 200, ..TcpConfig::default() };
        let mut p = impaired(cfg, CcKind::NewReno, seed, fwd, rev);
        check_transfer(&mut p, len, seed, 3_000.0)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The wireless options (last-link heuristics fed by the receiver's reports, TCP-Probing,
    /// ELN) change when and what the sender retransmits; none of them may lose, duplicate or
    /// corrupt data.
    #[test]
    fn stream_arrives_intact_with_the_wireless_options(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        sack in any::<bool>(),
        (max_cwnd, initial, initial_burst, per_heuristic) in
            (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        probing in any::<bool>(),
        eln in any::<bool>(),
        per in 0.0..0.2f64,
        plr_window in prop_oneof![Just(0u32), 1u32..200, Just(3000)],
        len in 1usize..150_000,
    ) {
        let cfg = TcpConfig {
            sack,
            min_rto_ms: 200,
            report_link_info: true,
            eln,
            recovery: if probing { RecoveryMode::Probing } else { RecoveryMode::Standard },
            last_link: LastLinkConfig {
                max_cwnd,
                initial,
                initial_burst,
                per: per_heuristic,
                plr_window,
                ..LastLinkConfig::default()
            },
            ..TcpConfig::default()
        };
        let mut p = impaired(cfg, CcKind::NewReno, seed, fwd, rev);
        let d = data(len, seed);
        let info = LinkInfo {
            wireless: true,
            per,
            loss_prob: per,
            bandwidth_bps: 2_000_000,
            up: true,
            ..LinkInfo::default()
        };
        let mut informed = false;
        p.transfer_with(&d, 3_000.0, |p| {
            let now = p.now;
            if let Some(server) = p.server.as_mut().filter(|_| !informed) {
                server.set_link_info(now, info);
                informed = true;
            }
        });
        prop_assert_eq!(p.received.len(), d.len());
        prop_assert!(p.received == d, "delivered bytes differ from sent bytes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Flow control under impairments: small send and receive buffers, a slow writer (short
    /// segments, Nagle) and a slow reader that may stop reading for a while, so that the window
    /// closes and reopens (zero-window probes, window updates, either of which may be lost)
    /// while segments are lost, reordered and duplicated.
    #[test]
    fn stream_arrives_intact_through_small_buffers_and_a_slow_reader(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        sack in any::<bool>(),
        delayed_ack in any::<bool>(),
        mss in 200u16..1460,
        recv_segments in 1u64..24,
        send_segments in 1u64..48,
        read_budget in 1usize..6000,
        write_budget in proptest::option::of(1usize..4000),
        probing in any::<bool>(),
        pause in proptest::option::of((0.0..10.0f64, 0.1..20.0f64)),
        len in 1usize..80_000,
    ) {
        let cfg = TcpConfig {
            sack,
            delayed_ack,
            mss,
            recv_buffer: recv_segments * u64::from(mss),
            send_buffer: send_segments * u64::from(mss),
            recovery: if probing { RecoveryMode::Probing } else { RecoveryMode::Standard },
            min_rto_ms: 200,
            ..TcpConfig::default()
        };
        let mut p = impaired(patient(cfg), CcKind::NewReno, seed, fwd, rev);
        p.read_budget = read_budget;
        p.write_budget = write_budget.unwrap_or(usize::MAX);
        p.read_pause = pause.map(|(s, d)| (s, s + d));
        check_transfer(&mut p, len, seed, 5_000.0)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The engine's numeric knobs at the edges of their ranges (tiny and large initial and
    /// maximum windows, a duplicate-ACK threshold of one, short and long timers) with every
    /// congestion controller, both recoveries and Limited Transmit, under the same impairments.
    #[test]
    fn stream_arrives_intact_with_any_window_and_timer_settings(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        cc in proptest::sample::select(CcKind::ALL),
        sack in any::<bool>(),
        delayed_ack in any::<bool>(),
        probing in any::<bool>(),
        limited_transmit in any::<bool>(),
        initial_window in 1u32..64,
        max_window_segments in prop_oneof![Just(0u32), 1u32..64],
        dup_thresh in 1u32..8,
        delayed_ack_ms in 1u64..500,
        (min_rto_ms, max_rto_ms) in (1u64..1500).prop_flat_map(|lo| (Just(lo), lo..60_000)),
        initial_rto_ms in 1u64..3000,
        len in 1usize..100_000,
    ) {
        let cfg = TcpConfig {
            sack,
            delayed_ack,
            delayed_ack_ms,
            initial_window,
            max_window_segments,
            dup_thresh,
            min_rto_ms,
            max_rto_ms,
            initial_rto_ms,
            recovery: if probing { RecoveryMode::Probing } else { RecoveryMode::Standard },
            limited_transmit,
            ..TcpConfig::default()
        };
        prop_assume!(cfg.validate().is_ok());
        let mut p = impaired(patient(cfg), cc, seed, fwd, rev);
        check_transfer(&mut p, len, seed, 20_000.0)?;
    }
}
