//! Property test: under random loss, reordering, duplication and blackouts in both
//! directions, an RCP receiver delivers every byte of the object exactly once, in order,
//! unchanged (cumulative and pull modes, NewReno and RCP-STP, with and without ELN).

mod rcp_support;

use std::time::Duration;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rcp_support::{object_bytes, Fate, Filter, Net};
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
    ) {
        let config = RcpConfig { eln, ..RcpConfig::default() };
        let cc = if stp { RcpCc::Stp } else { RcpCc::default() };
        let mut net = Net::new(config, cc, len, Duration::from_millis(15));
        net.data_filter = filter(seed, fwd);
        net.req_filter = filter(seed ^ 0x5555, rev);
        net.run_until(Time::from_millis(2_000_000));
        prop_assert_eq!(net.delivered.len(), len);
        prop_assert!(net.delivered == object_bytes(len), "bytes differ");
    }
}
