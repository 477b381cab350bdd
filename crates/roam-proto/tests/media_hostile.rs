//! Untrusted input never panics, past the decoder too: at any moment of a media flow, from
//! before the sink's host has opened the sink to long after, a media source is handed
//! well-formed receiver reports with hostile fields (any sequence numbers, loss counts,
//! fractions, echoed times in the past or the future, hold times, link facts, tokens), and the
//! sink's host media packets with any sequence numbers, send times, rates and tokens — mostly
//! with the flow's own connection id, sometimes any — as well as arbitrary bytes and earlier
//! datagrams of the flow replayed with mutations, interleaved with the engines' own traffic.
//! Both keep running, the source's rate stays a finite number, and the sink's host never
//! answers with more than it received.

mod media_support;

use media_support::SinkHost;
use proptest::prelude::*;
use roam_proto::media::{MediaConfig, MediaSender, RateKind};
use roam_proto::Time;
use roam_wire::{ConnId, LinkInfoReport, MediaPacket, MediaReport, Token, TOKEN_LEN};

/// The connection both engines belong to.
const CONN: ConnId = ConnId(5);

#[derive(Debug, Clone)]
enum Forged {
    /// A receiver report for the source.
    Report(MediaReport),
    /// A media packet for the sink's host.
    Packet {
        conn: Option<u64>,
        seq: u64,
        send_time_us: u64,
        rate_bps: u64,
        token: Option<Token>,
        len: usize,
    },
    /// Arbitrary bytes to the source (true) or the sink's host.
    Raw(bool, Vec<u8>),
    /// An earlier datagram of the flow (chosen modulo their number) to the source (true) or
    /// the sink's host, with bytes changed.
    Replay(bool, prop::sample::Index, Vec<(prop::sample::Index, u8)>),
}

/// A number that is mostly plausible (near the run's own values), sometimes anything.
fn near(plausible: u64) -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0..plausible, 1 => any::<u64>()]
}

fn token() -> impl Strategy<Value = Option<Token>> {
    proptest::option::of(any::<[u8; TOKEN_LEN]>().prop_map(Token))
}

fn forged() -> impl Strategy<Value = Forged> {
    let report = (
        (near(5_000), near(5_000), near(5_000), any::<u16>()),
        (near(20_000_000), any::<u32>()),
        proptest::option::of((0u32..=1_000_000, any::<u32>(), any::<u16>())),
        (token(), prop_oneof![9 => Just(CONN.0), 1 => any::<u64>()]),
    )
        .prop_map(
            |(
                (highest_seq, received, lost, fraction_lost),
                (echo_time_us, hold_us),
                link,
                (token, conn),
            )| {
                Forged::Report(MediaReport {
                    conn_id: ConnId(conn),
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
                    token,
                })
            },
        );
    let packet = (
        (near(5_000), near(20_000_000), any::<u64>(), 0usize..1400),
        (
            token(),
            prop_oneof![9 => Just(None), 1 => any::<u64>().prop_map(Some)],
        ),
    )
        .prop_map(
            |((seq, send_time_us, rate_bps, len), (token, conn))| Forged::Packet {
                conn,
                seq,
                send_time_us,
                rate_bps,
                token,
                len,
            },
        );
    let raw = (
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..120),
    )
        .prop_map(|(to_source, b)| Forged::Raw(to_source, b));
    let replay = (
        any::<bool>(),
        any::<prop::sample::Index>(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    )
        .prop_map(|(to_source, pick, m)| Forged::Replay(to_source, pick, m));
    prop_oneof![4 => report, 4 => packet, 1 => raw, 2 => replay]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn forged_reports_and_packets_never_make_a_media_engine_panic(
        atl in any::<bool>(),
        forged in proptest::collection::vec((0u64..20_000, forged()), 1..60),
    ) {
        let kind = if atl { RateKind::Atl } else { RateKind::Aimd };
        let cfg = MediaConfig { report_link_info: atl, ..MediaConfig::default() };
        let mut tx = MediaSender::new(cfg, kind, CONN);
        let mut rx = SinkHost::new(cfg);
        let mut forged = forged;
        forged.sort_by_key(|(at_ms, _)| *at_ms);
        let mut pending = forged.into_iter().peekable();
        let mut buf = Vec::new();
        let mut answers = Vec::new();
        // Everything each end was sent, for replays.
        let (mut seen_by_tx, mut seen_by_rx): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
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
            rx.poll(now, &mut answers);
            to_tx.extend(answers.drain(..).map(|a| (ms + 20, a)));
            for (_, d) in to_rx.iter().filter(|(t, _)| *t == ms) {
                rx.handle(now, d, &mut answers);
                seen_by_rx.push(d.clone());
            }
            for (_, d) in to_tx.iter().filter(|(t, _)| *t == ms) {
                let _ = tx.handle_datagram(now, d);
                seen_by_tx.push(d.clone());
            }
            to_rx.retain(|(t, _)| *t > ms);
            to_tx.retain(|(t, _)| *t > ms);
            while let Some((_, f)) = pending.next_if(|(at, _)| *at <= ms) {
                let mut out = Vec::new();
                let to_source = match f {
                    Forged::Report(report) => {
                        report.encode(&mut out);
                        true
                    }
                    Forged::Packet { conn, seq, send_time_us, rate_bps, token, len } => {
                        let payload = vec![0x3C; len];
                        MediaPacket {
                            conn_id: conn.map_or(CONN, ConnId),
                            seq,
                            send_time_us,
                            rate_bps,
                            token,
                            payload: &payload,
                        }
                        .encode(&mut out);
                        false
                    }
                    Forged::Raw(to_source, bytes) => {
                        out = bytes;
                        to_source
                    }
                    Forged::Replay(to_source, pick, mutations) => {
                        let seen = if to_source { &seen_by_tx } else { &seen_by_rx };
                        if seen.is_empty() {
                            continue;
                        }
                        out = seen[pick.index(seen.len())].clone();
                        for (at, v) in mutations {
                            if !out.is_empty() {
                                let i = at.index(out.len());
                                out[i] = v;
                            }
                        }
                        to_source
                    }
                };
                if to_source {
                    let _ = tx.handle_datagram(now, &out);
                } else {
                    rx.handle(now, &out, &mut answers);
                }
            }
        }
        prop_assert!(tx.rate_bps().is_finite() && tx.rate_bps() >= 0.0, "{}", tx.rate_bps());
    }
}
