//! Untrusted input never panics, past the decoder too: a media source is handed well-formed
//! receiver reports with hostile fields (any sequence numbers, loss counts, fractions, echoed
//! times in the past or the future, hold times, link facts), and a media receiver well-formed
//! media packets with any sequence numbers, send times and rates, interleaved with the
//! engines' own traffic. Both keep running, and the source's rate stays a finite number.

use proptest::prelude::*;
use roam_proto::media::{MediaConfig, MediaReceiver, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::{ConnId, LinkInfoReport, MediaPacket, MediaReport};

/// The connection both engines belong to.
const CONN: ConnId = ConnId(5);

#[derive(Debug, Clone)]
enum Forged {
    /// A receiver report for the source.
    Report(MediaReport),
    /// A media packet for the receiver.
    Packet {
        seq: u64,
        send_time_us: u64,
        rate_bps: u64,
        len: usize,
    },
}

/// A number that is mostly plausible (near the run's own values), sometimes anything.
fn near(plausible: u64) -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0..plausible, 1 => any::<u64>()]
}

fn forged() -> impl Strategy<Value = Forged> {
    let report = (
        (near(5_000), near(5_000), near(5_000), any::<u16>()),
        (near(20_000_000), any::<u32>()),
        proptest::option::of((0u32..=1_000_000, any::<u32>(), any::<u16>())),
    )
        .prop_map(
            |((highest_seq, received, lost, fraction_lost), (echo_time_us, hold_us), link)| {
                Forged::Report(MediaReport {
                    conn_id: CONN,
                    highest_seq,
                    received,
                    lost,
                    fraction_lost,
                    echo_time_us,
                    hold_us,
                    link: link.map(|(p_w_ppm, d_w_us, handoff_count)| LinkInfoReport {
                        p_w_ppm,
                        d_w_us,
                        handoff_count,
                    }),
                })
            },
        );
    let packet = (near(5_000), near(20_000_000), any::<u64>(), 0usize..1400).prop_map(
        |(seq, send_time_us, rate_bps, len)| Forged::Packet {
            seq,
            send_time_us,
            rate_bps,
            len,
        },
    );
    prop_oneof![report, packet]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn forged_reports_and_packets_never_make_a_media_engine_panic(
        atl in any::<bool>(),
        forged in proptest::collection::vec((0u64..20_000, forged()), 1..60),
    ) {
        let kind = if atl { RateKind::Atl } else { RateKind::Aimd };
        let mut tx = MediaSender::new(MediaConfig::default(), kind, CONN);
        let mut rx = MediaReceiver::new(atl);
        let mut forged = forged;
        forged.sort_by_key(|(at_ms, _)| *at_ms);
        let mut pending = forged.into_iter().peekable();
        let mut buf = Vec::new();
        // 20 s in 1 ms steps: the engines talk to each other over a 20 ms path and the forged
        // datagrams are slipped in at their instants.
        let mut to_rx: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut to_tx: Vec<(u64, Vec<u8>)> = Vec::new();
        for ms in 0..20_000u64 {
            let now = Time::from_millis(ms);
            tx.handle_timeout(now);
            while tx.poll_transmit(now, &mut buf).is_some() {
                to_rx.push((ms + 20, std::mem::take(&mut buf)));
            }
            while rx.poll_transmit(now, &mut buf).is_some() {
                to_tx.push((ms + 20, std::mem::take(&mut buf)));
            }
            for (_, d) in to_rx.iter().filter(|(t, _)| *t == ms) {
                let _ = rx.handle_datagram(now, d);
            }
            for (_, d) in to_tx.iter().filter(|(t, _)| *t == ms) {
                let _ = tx.handle_datagram(now, d);
            }
            to_rx.retain(|(t, _)| *t > ms);
            to_tx.retain(|(t, _)| *t > ms);
            while let Some((_, f)) = pending.next_if(|(at, _)| *at <= ms) {
                let mut out = Vec::new();
                match f {
                    Forged::Report(report) => {
                        report.encode(&mut out);
                        let _ = tx.handle_datagram(now, &out);
                    }
                    Forged::Packet { seq, send_time_us, rate_bps, len } => {
                        let payload = vec![0x3C; len];
                        MediaPacket { conn_id: CONN, seq, send_time_us, rate_bps, payload: &payload }
                            .encode(&mut out);
                        let _ = rx.handle_datagram(now, &out);
                    }
                }
            }
        }
        prop_assert!(tx.rate_bps().is_finite() && tx.rate_bps() >= 0.0, "{}", tx.rate_bps());
    }
}
