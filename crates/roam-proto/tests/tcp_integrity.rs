//! Data integrity under random impairments: every byte delivered once, in order, unchanged —
//! under loss, reordering, duplication and blackouts in both directions, over many seeds.

mod support;

use proptest::prelude::*;
use roam_proto::tcp::TcpConfig;
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
        let mut p = Pair::new(cfg, seed);
        p.fwd = fwd;
        p.rev = rev;
        let d = data(len, seed);
        p.transfer(&d, 3_000.0);
        prop_assert_eq!(p.received.len(), d.len());
        prop_assert!(p.received == d, "delivered bytes differ from sent bytes");
    }
}
