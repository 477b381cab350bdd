//! Independent random streams derived from the run seed and a stable name, so that adding a
//! flow or a link does not perturb the randomness of the others.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// FNV-1a hash of a stream name: stable across runs, platforms and versions.
pub(crate) fn stream_id(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The random stream called `name` of a run seeded with `seed`.
pub(crate) fn stream_rng(seed: u64, name: &str) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id(name));
    rng
}

/// The stream called `name` under the stream `parent` (an agent's own, say), drawn from the
/// same seed without consuming `parent`: an agent's new kind of draw (a TCP handshake's ISN
/// or token key) leaves its other draws where they were.
pub(crate) fn derived_rng(parent: &ChaCha8Rng, name: &str) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::from_seed(parent.get_seed());
    rng.set_stream(stream_id(&format!("{:016x}/{name}", parent.get_stream())));
    rng
}

/// The address-validation key of the host an agent plays (RCP senders, media sinks), from its
/// own `token-key` substream of the agent's stream.
pub(crate) fn token_key(agent_rng: &ChaCha8Rng) -> roam_proto::endpoint::TokenKey {
    let mut key = [0u8; 16];
    rand::RngCore::fill_bytes(&mut derived_rng(agent_rng, "token-key"), &mut key);
    roam_proto::endpoint::TokenKey::new(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn a_substream_leaves_its_parent_untouched_and_depends_on_it() {
        let mut parent = stream_rng(1, "agent:0:tx");
        let mut fresh = stream_rng(1, "agent:0:tx");
        let _: u64 = parent.gen();
        let a: u64 = derived_rng(&parent, "token-key").gen();
        let b: u64 = derived_rng(&fresh, "token-key").gen();
        assert_eq!(a, b, "independent of how much the parent has drawn");
        assert_eq!(parent.gen::<u64>(), {
            let _: u64 = fresh.gen();
            fresh.gen::<u64>()
        });
        let other: u64 = derived_rng(&stream_rng(2, "agent:0:tx"), "token-key").gen();
        assert_ne!(a, other);
        let sibling: u64 = derived_rng(&stream_rng(1, "agent:1:tx"), "token-key").gen();
        assert_ne!(a, sibling);
    }

    #[test]
    fn streams_differ_by_name_and_repeat_by_seed() {
        let a: u64 = stream_rng(1, "a").gen();
        let b: u64 = stream_rng(1, "b").gen();
        let a2: u64 = stream_rng(1, "a").gen();
        let a_other_seed: u64 = stream_rng(2, "a").gen();
        assert_ne!(a, b);
        assert_eq!(a, a2);
        assert_ne!(a, a_other_seed);
    }

    #[test]
    fn a_derived_stream_leaves_its_parent_alone() {
        let mut parent = stream_rng(1, "agent:0:rx");
        let mut untouched = stream_rng(1, "agent:0:rx");
        let d: u64 = derived_rng(&parent, "tcp:isn").gen();
        assert_eq!(parent.gen::<u64>(), untouched.gen::<u64>());
        // Deterministic, and distinct by name, parent and seed.
        assert_eq!(
            d,
            derived_rng(&stream_rng(1, "agent:0:rx"), "tcp:isn").gen::<u64>()
        );
        let others = [
            derived_rng(&parent, "tcp:token").gen::<u64>(),
            derived_rng(&stream_rng(1, "agent:1:rx"), "tcp:isn").gen(),
            derived_rng(&stream_rng(2, "agent:0:rx"), "tcp:isn").gen(),
        ];
        assert!(others.iter().all(|o| *o != d));
    }
}
