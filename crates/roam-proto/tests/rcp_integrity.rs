//! Property test: under random loss, reordering, duplication and blackouts in both
//! directions, an RCP receiver delivers every byte of the object exactly once, in order,
//! unchanged (cumulative and pull modes, NewReno and RCP-STP, with and without ELN), also when
//! the sender's store reads through its host, which answers after a delay (a file read by a
//! runtime).

mod rcp_support;

use std::time::Duration;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rcp_support::{object_bytes, Fate, Filter, Net};
use roam_proto::cc::CcKind;
use roam_proto::rcp::{RcpCc, RcpConfig};
use roam_proto::Time;

#[derive(Debug, Clone, Copy)]
struct Impair {
    loss: f64,
    reorder: f64,
    duplicate: f64,
    blackout: Option<(u64, u64)>,
}

fn filter(seed: u64, i: Impair) -> Filter {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Box::new(move |now: Time, _b: &[u8]| {
        let ms = now.as_micros() / 1000;
        if i.blackout.is_some_and(|(a, len)| ms >= a && ms < a + len) {
            return Fate::Drop;
        }
        let x: f64 = rng.gen();
        if x < i.loss {
            Fate::Drop
        } else if x < i.loss + i.duplicate {
            Fate::Duplicate
        } else if x < i.loss + i.duplicate + i.reorder {
            Fate::Delay(Duration::from_millis(rng.gen_range(1..30)))
        } else {
            Fate::Deliver
        }
    })
}

fn impair() -> impl Strategy<Value = Impair> {
    (
        0.0..0.2f64,
        0.0..0.2f64,
        0.0..0.1f64,
        proptest::option::of((100u64..3000, 10u64..3000)),
    )
        .prop_map(|(loss, reorder, duplicate, blackout)| Impair {
            loss,
            reorder,
            duplicate,
            blackout,
        })
}

/// Options that never give up: under 20 % loss plus a blackout, giving up is legitimate but
/// not what these tests check.
fn patient(config: RcpConfig) -> RcpConfig {
    RcpConfig {
        max_syn_retries: 20,
        max_retries: 30,
        ..config
    }
}

/// A transfer of an object of `len` bytes over a 15 ms link whose data direction is impaired by
/// `fwd` and request direction by `rev`.
fn impaired(config: RcpConfig, cc: RcpCc, len: usize, seed: u64, fwd: Impair, rev: Impair) -> Net {
    let mut net = Net::new(patient(config), cc, len, Duration::from_millis(15));
    net.data_filter = filter(seed, fwd);
    net.req_filter = filter(seed ^ 0x5555, rev);
    net
}

/// Runs `net` for up to `seconds` and checks that every byte of the `len`-byte object arrived
/// once, in order, unchanged.
fn check_intact(net: &mut Net, len: usize, seconds: u64) -> Result<(), TestCaseError> {
    net.run_until(Time::from_millis(seconds * 1000));
    prop_assert_eq!(net.delivered.len(), len);
    prop_assert!(net.delivered == object_bytes(len), "bytes differ");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_byte_arrives_once_in_order_unchanged(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        len in 1usize..150_000,
        stp in any::<bool>(),
        eln in any::<bool>(),
        host_read_ms in proptest::option::of(0u64..40),
        read_ahead in prop_oneof![Just(65_536u64), 0u64..8000],
    ) {
        let config = RcpConfig { eln, read_ahead, ..RcpConfig::default() };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = impaired(config, cc, len, seed, fwd, rev);
        if let Some(ms) = host_read_ms {
            net = net.with_host_reads(Duration::from_millis(ms));
        }
        check_intact(&mut net, len, 2_000)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Flow control under impairments: a small receive buffer read slowly (requests wait for
    /// buffer space, §3.3.4), a small sender window and a slow producer at the sender (reverse
    /// flow control: window updates and persist probes), while requests and data are lost,
    /// reordered and duplicated.
    #[test]
    fn every_byte_arrives_through_small_buffers_and_a_slow_reader(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        len in 1usize..60_000,
        stp in any::<bool>(),
        mss in 200u16..1460,
        recv_segments in 2u64..24,
        sender_segments in proptest::option::of(1u64..40),
        read_budget in 1usize..6000,
        produce_per_ms in proptest::option::of(1u64..3000),
        host_read_ms in proptest::option::of(0u64..40),
    ) {
        let config = RcpConfig {
            mss,
            recv_buffer: recv_segments * u64::from(mss),
            sender_window: sender_segments.map_or(0, |k| k * u64::from(mss)),
            ..RcpConfig::default()
        };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = impaired(config, cc, len, seed, fwd, rev);
        if let Some(ms) = host_read_ms {
            net = net.with_host_reads(Duration::from_millis(ms));
        }
        net.read_budget = read_budget;
        if let Some(rate) = produce_per_ms {
            net.sender_available = Some(0);
            net.produce_per_ms = Some(rate);
        }
        check_intact(&mut net, len, 2_000)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// The receiver's numeric knobs at the edges of their ranges (initial and maximum windows,
    /// a hole threshold of one, short and long timers, status requests) with every controller
    /// (the shared ones and RCP-STP), with and without ELN, under the same impairments.
    #[test]
    fn every_byte_arrives_with_any_window_and_timer_settings(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        len in 1usize..100_000,
        cc in prop_oneof![
            proptest::sample::select(CcKind::ALL).prop_map(RcpCc::Shared),
            Just(RcpCc::Stp),
            Just(RcpCc::Rate),
        ],
        eln in any::<bool>(),
        initial_window in 1u32..64,
        max_window_segments in prop_oneof![Just(0u32), 1u32..64],
        dup_thresh in 1u32..8,
        (min_rto_ms, max_rto_ms) in (1u64..1500).prop_flat_map(|lo| (Just(lo), lo..60_000)),
        initial_rto_ms in 1u64..3000,
        status_interval_ms in prop_oneof![Just(0u64), 1u64..300],
    ) {
        let config = RcpConfig {
            eln,
            initial_window,
            max_window_segments,
            dup_thresh,
            min_rto_ms,
            max_rto_ms,
            initial_rto_ms,
            status_interval_ms,
            ..RcpConfig::default()
        };
        prop_assume!(config.validate().is_ok());
        let mut net = impaired(config, cc, len, seed, fwd, rev);
        check_intact(&mut net, len, 4_000)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Power management (§3.4.4) under impairments: the host freezes and thaws the connection
    /// at random times (sleeping through data that is then lost, or — with `deliver_to_frozen`
    /// — handed in while frozen); after every thaw the receiver requests its holes, and every
    /// byte still arrives once, in order, unchanged.
    #[test]
    fn every_byte_arrives_across_freezes_and_thaws(
        seed in any::<u64>(),
        fwd in impair(),
        rev in impair(),
        len in 1usize..100_000,
        stp in any::<bool>(),
        eln in any::<bool>(),
        deliver_to_frozen in any::<bool>(),
        sleeps in proptest::collection::vec((0u64..3000, 1u64..5000), 0..6),
    ) {
        let config = RcpConfig { eln, ..RcpConfig::default() };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = impaired(config, cc, len, seed, fwd, rev);
        net.deliver_to_frozen = deliver_to_frozen;
        // Sleep windows one after another: awake for `gap` ms, then asleep for `len` ms.
        let mut at = 0;
        for (gap, dur) in sleeps {
            let start = at + gap;
            net.sleeps.push((Time::from_millis(start), Time::from_millis(start + dur)));
            at = start + dur;
        }
        check_intact(&mut net, len, 4_000)?;
    }
}
