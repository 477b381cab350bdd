//! Property tests for the RCP-ATL datagrams: valid media packets and receiver reports round-trip
//! exactly, and no input (arbitrary or a mutated valid datagram) makes their decoders panic.

use proptest::prelude::*;
use roam_wire::{ConnId, LinkInfoReport, MediaPacket, MediaReport, Token, TOKEN_LEN};

fn link() -> impl Strategy<Value = Option<LinkInfoReport>> {
    proptest::option::of((0u32..=1_000_000, any::<u32>(), any::<u16>()).prop_map(
        |(p_w_ppm, d_w_us, handoff_count)| LinkInfoReport {
            p_w_ppm,
            d_w_us,
            handoff_count,
        },
    ))
}

fn report() -> impl Strategy<Value = MediaReport> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u16>(),
        any::<u64>(),
        any::<u32>(),
        link(),
        token(),
    )
        .prop_map(
            |(
                id,
                highest_seq,
                received,
                lost,
                fraction_lost,
                echo_time_us,
                hold_us,
                link,
                token,
            )| {
                MediaReport {
                    conn_id: ConnId(id),
                    highest_seq,
                    received,
                    lost,
                    fraction_lost,
                    echo_time_us,
                    hold_us,
                    link,
                    token,
                }
            },
        )
}

fn token() -> impl Strategy<Value = Option<Token>> {
    proptest::option::of(any::<[u8; TOKEN_LEN]>().prop_map(Token))
}

proptest! {
    #[test]
    fn media_packets_round_trip(
        id in any::<u64>(),
        seq in any::<u64>(),
        send_time_us in any::<u64>(),
        rate_bps in any::<u64>(),
        payload in proptest::collection::vec(any::<u8>(), 0..1500),
        token in token(),
    ) {
        let p = MediaPacket { conn_id: ConnId(id), seq, send_time_us, rate_bps, token, payload: &payload };
        let mut out = Vec::new();
        p.encode(&mut out);
        prop_assert_eq!(out.len(), p.encoded_len());
        prop_assert_eq!(MediaPacket::decode(&out), Ok(p));
    }

    #[test]
    fn media_reports_round_trip(r in report()) {
        let mut out = Vec::new();
        r.encode(&mut out);
        prop_assert_eq!(out.len(), r.encoded_len());
        prop_assert_eq!(MediaReport::decode(&out), Ok(r));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        let _ = MediaPacket::decode(&bytes);
        let _ = MediaReport::decode(&bytes);
    }

    #[test]
    fn mutated_reports_never_panic_and_reencode(
        r in report(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut out = Vec::new();
        r.encode(&mut out);
        for (i, b) in flips {
            let i = i.index(out.len());
            out[i] = b;
        }
        let out = &out[..cut.index(out.len() + 1)];
        if let Ok(back) = MediaReport::decode(out) {
            let mut again = Vec::new();
            back.encode(&mut again);
            prop_assert_eq!(MediaReport::decode(&again), Ok(back));
        }
        let _ = MediaPacket::decode(out);
    }
}
