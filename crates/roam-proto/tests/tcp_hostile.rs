//! Untrusted input never panics, past the decoder too: during a transfer, well-formed segments
//! with the connection's own id but hostile fields — any flags, sequence and acknowledgement
//! numbers in and far out of the window, SACK blocks that cover nothing sent, absurd windows,
//! probe answers and link reports nobody asked for, payloads anywhere — are handed to either
//! end. Both engines must keep running (a forged in-window segment may of course corrupt the
//! stream or reset the connection: TCP does not authenticate its peer).

mod support;

use proptest::prelude::*;
use roam_proto::tcp::{RecoveryMode, TcpConfig};
use roam_wire::{
    ConnId, Flags, LastLinkReport, LinkInfoReport, Options, ProbeKind, ProbeOption, SackBlock,
    Segment, MAX_SACK_BLOCKS,
};
use support::{data, Pair};

/// A sequence-space number: mostly near the transfer's own bytes, sometimes anywhere.
fn seq_number() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..300_000, 1 => any::<u64>()]
}

fn options() -> impl Strategy<Value = Options> {
    let probe_kind = prop_oneof![
        Just(ProbeKind::Probe1),
        Just(ProbeKind::Pr1Ack),
        Just(ProbeKind::Probe2),
        Just(ProbeKind::Pr2Ack),
    ];
    (
        proptest::option::of(any::<u16>()),
        any::<bool>(),
        proptest::collection::vec((seq_number(), seq_number()), 0..=MAX_SACK_BLOCKS),
        proptest::option::of((probe_kind, 0u32..8)),
        proptest::option::of((any::<u64>(), 0u32..=1_000_000)),
        proptest::option::of((0u32..=1_000_000, any::<u32>(), any::<u16>())),
    )
        .prop_map(
            |(mss, sack_permitted, blocks, probe, last_link, link_info)| {
                let mut opts = Options {
                    mss,
                    sack_permitted,
                    probe: probe.map(|(kind, id)| ProbeOption { kind, id }),
                    last_link: last_link.map(|(bandwidth_bps, per_ppm)| LastLinkReport {
                        bandwidth_bps,
                        per_ppm,
                    }),
                    link_info: link_info.map(|(p_w_ppm, d_w_us, handoff_count)| LinkInfoReport {
                        p_w_ppm,
                        d_w_us,
                        handoff_count,
                    }),
                    ..Options::default()
                };
                for (a, b) in blocks {
                    if a != b {
                        opts.push_sack(SackBlock {
                            start: a.min(b),
                            end: a.max(b),
                        });
                    }
                }
                opts
            },
        )
}

/// A forged segment, and when and to whom it is delivered.
#[derive(Debug, Clone)]
struct Forged {
    /// Delivered after this many steps of the transfer.
    after_step: u32,
    to_server: bool,
    flags: u16,
    seq: u64,
    ack: u64,
    window: u32,
    ts_val: u32,
    ts_ecr: u32,
    options: Options,
    payload_len: usize,
}

/// Any flags; a reset only now and then, so that most runs go on under fire.
fn flags() -> impl Strategy<Value = u16> {
    prop_oneof![
        9 => (0..=Flags::ALL.0).prop_map(|f| f & !Flags::RST.0),
        1 => 0..=Flags::ALL.0,
    ]
}

fn forged() -> impl Strategy<Value = Forged> {
    (
        (0u32..500, any::<bool>(), flags()),
        (
            seq_number(),
            seq_number(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        ),
        options(),
        0usize..1500,
    )
        .prop_map(
            |(
                (after_step, to_server, flags),
                (seq, ack, window, ts_val, ts_ecr),
                options,
                payload_len,
            )| Forged {
                after_step,
                to_server,
                flags,
                seq,
                ack,
                window,
                ts_val,
                ts_ecr,
                options,
                payload_len,
            },
        )
}

impl Forged {
    fn encode(&self, conn_id: ConnId) -> Vec<u8> {
        let payload = vec![0xA5; self.payload_len];
        let mut out = Vec::new();
        Segment {
            conn_id,
            flags: Flags(self.flags),
            seq: self.seq,
            ack: self.ack,
            window: self.window,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
            options: self.options,
            payload: &payload,
        }
        .encode(&mut out);
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn forged_segments_never_make_an_engine_panic(
        seed in 1u64..10_000,
        sack in any::<bool>(),
        probing in any::<bool>(),
        eln in any::<bool>(),
        mut forged in proptest::collection::vec(forged(), 1..40),
    ) {
        let cfg = TcpConfig {
            sack,
            eln,
            recovery: if probing { RecoveryMode::Probing } else { RecoveryMode::Standard },
            ..TcpConfig::default()
        };
        let mut pair = Pair::new(cfg, seed);
        let conn_id = pair.client.conn_id();
        forged.sort_by_key(|f| f.after_step);
        let mut pending = forged.into_iter().peekable();
        let mut steps = 0u32;
        let payload = data(200_000, seed);
        pair.transfer_with(&payload, 300.0, |pair| {
            steps += 1;
            while let Some(f) = pending.next_if(|f| f.after_step <= steps) {
                let bytes = f.encode(conn_id);
                let now = pair.now;
                if f.to_server {
                    if let Some(server) = pair.server.as_mut() {
                        let _ = server.handle_datagram(now, &bytes);
                    }
                } else {
                    let _ = pair.client.handle_datagram(now, &bytes);
                }
            }
        });
        // Both ends still answer the host's calls.
        let _ = pair.client.poll_timeout();
        let _ = pair.client.stats();
    }
}
