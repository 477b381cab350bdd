//! Untrusted input never panics, past the decoder too: during a transfer, well-formed segments
//! with the connection's own id but hostile fields — any flags, sequence and acknowledgement
//! numbers in and far out of the window and at the edges of the 64-bit space, SACK blocks that
//! cover nothing sent, absurd windows, probe answers and link reports nobody asked for,
//! payloads anywhere — are handed to either end. Both engines must keep running (a forged
//! in-window segment may of course corrupt the stream or reset the connection: TCP does not
//! authenticate its peer), and neither end's buffers may grow past their bounds. Before the
//! handshake completes, any segment from anyone reaches the server's stateless acceptor: it
//! answers with no more bytes than it got, opens no connection for a spoofer, and the real
//! client's transfer still arrives intact.

mod support;

use std::sync::Arc;

use proptest::prelude::*;
use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, Unknown};
use roam_proto::tcp::{Connection, RecoveryMode, TcpAcceptor, TcpConfig, MAX_ISN};
use roam_wire::{
    ConnId, Flags, LastLinkReport, LinkInfoReport, Options, ProbeKind, ProbeOption, SackBlock,
    Segment, MAX_SACK_BLOCKS,
};
use support::{data, Pair};

/// A sequence-space number: near either end's own numbers (their ISNs are random, anywhere
/// up to 2^62), at an edge of the 64-bit space, or anywhere at all.
#[derive(Debug, Clone, Copy)]
enum Num {
    /// The client's ISN plus this.
    Client(i64),
    /// The server's ISN plus this.
    Server(i64),
    /// This exact value.
    Exact(u64),
}

impl Num {
    fn resolve(self, client_isn: u64, server_isn: u64) -> u64 {
        match self {
            Num::Client(d) => client_isn.wrapping_add_signed(d),
            Num::Server(d) => server_isn.wrapping_add_signed(d),
            Num::Exact(n) => n,
        }
    }
}

fn seq_number() -> impl Strategy<Value = Num> {
    let edge = prop_oneof![
        Just(0u64),
        Just(1),
        Just(MAX_ISN),
        Just(MAX_ISN + 1),
        Just(1 << 63),
        Just(u64::MAX),
        u64::MAX - 3_000..=u64::MAX,
        MAX_ISN - 3_000..=MAX_ISN + 3_000,
    ];
    prop_oneof![
        3 => (-3_000i64..300_000).prop_map(Num::Client),
        3 => (-3_000i64..300_000).prop_map(Num::Server),
        1 => edge.prop_map(Num::Exact),
        1 => any::<u64>().prop_map(Num::Exact),
    ]
}

/// Options with SACK blocks still to be resolved against the connection's numbers.
#[derive(Debug, Clone)]
struct ForgedOptions {
    options: Options,
    blocks: Vec<(Num, Num)>,
}

impl ForgedOptions {
    fn resolve(&self, client_isn: u64, server_isn: u64) -> Options {
        let mut opts = self.options;
        for (a, b) in &self.blocks {
            let (a, b) = (
                a.resolve(client_isn, server_isn),
                b.resolve(client_isn, server_isn),
            );
            if a != b {
                opts.push_sack(SackBlock {
                    start: a.min(b),
                    end: a.max(b),
                });
            }
        }
        opts
    }
}

fn options() -> impl Strategy<Value = ForgedOptions> {
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
                let options = Options {
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
                ForgedOptions { options, blocks }
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
    seq: Num,
    ack: Num,
    window: u32,
    ts_val: u32,
    ts_ecr: u32,
    options: ForgedOptions,
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
            prop_oneof![Just(0u32), Just(1), Just(u32::MAX), any::<u32>()],
            any::<u32>(),
            any::<u32>(),
        ),
        options(),
        prop_oneof![Just(0usize), Just(1), 0usize..1500, 1500usize..9000],
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
    fn encode(&self, conn_id: ConnId, client_isn: u64, server_isn: u64) -> Vec<u8> {
        let payload = vec![0xA5; self.payload_len];
        let mut out = Vec::new();
        Segment {
            conn_id,
            flags: Flags(self.flags),
            seq: self.seq.resolve(client_isn, server_isn),
            ack: self.ack.resolve(client_isn, server_isn),
            window: self.window,
            ts_val: self.ts_val,
            ts_ecr: self.ts_ecr,
            options: self.options.resolve(client_isn, server_isn),
            payload: &payload,
        }
        .encode(&mut out);
        out
    }
}

/// Neither end holds more than its memory bound says, whatever it was sent.
fn within_bounds(c: &Connection, cfg: &TcpConfig) -> Result<(), TestCaseError> {
    let r = c.receiver();
    prop_assert!(
        r.buffered() as u64 <= cfg.recv_buffer,
        "{} buffered",
        r.buffered()
    );
    let (pieces, max) = r.out_of_order_pieces();
    prop_assert!(pieces <= max, "{pieces} > {max} out-of-order pieces");
    Ok(())
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
        let mut pair = Pair::new(cfg.clone(), seed);
        let conn_id = pair.client.conn_id();
        forged.sort_by_key(|f| f.after_step);
        let mut pending = forged.into_iter().peekable();
        let mut steps = 0u32;
        let payload = data(200_000, seed);
        let mut bounds = Ok(());
        pair.transfer_with(&payload, 300.0, |pair| {
            steps += 1;
            let client_isn = pair.client.initial_seq();
            let server_isn = pair.server.as_ref().map_or(0, Connection::initial_seq);
            while let Some(f) = pending.next_if(|f| f.after_step <= steps) {
                let bytes = f.encode(conn_id, client_isn, server_isn);
                let now = pair.now;
                if f.to_server {
                    if let Some(server) = pair.server.as_mut() {
                        let _ = server.handle_datagram(now, &bytes);
                    }
                } else {
                    let _ = pair.client.handle_datagram(now, &bytes);
                }
            }
            for c in [Some(&pair.client), pair.server.as_ref()].into_iter().flatten() {
                if bounds.is_ok() {
                    bounds = within_bounds(c, &cfg);
                }
            }
        });
        bounds?;
        // Both ends still answer the host's calls.
        let _ = pair.client.poll_timeout();
        let _ = pair.client.stats();
    }

    /// Before the server holds the connection, anyone may send it anything: spoofed segments
    /// from another address (with the real connection id or any other), before, between and
    /// after the real client's SYN and first segment. None may open a connection, each answer
    /// is at most as large as what earned it, and the real transfer arrives intact.
    #[test]
    fn spoofed_segments_before_the_handshake_open_nothing(
        seed in 1u64..10_000,
        sack in any::<bool>(),
        mut forged in proptest::collection::vec((forged(), any::<bool>(), any::<u64>()), 1..40),
    ) {
        let cfg = TcpConfig { sack, ..TcpConfig::default() };
        let mut pair = Pair::new(cfg.clone(), seed);
        let conn_id = pair.client.conn_id();
        let mut spoofer = TcpAcceptor::new(Arc::new(cfg), CcKind::NewReno).expect("valid");
        forged.sort_by_key(|f| f.0.after_step / 50);
        let mut pending = forged.into_iter().peekable();
        let mut steps = 0u32;
        let payload = data(30_000, seed);
        let mut verdict = Ok(());
        pair.transfer_with(&payload, 300.0, |pair| {
            steps += 1;
            while let Some((f, real_id, other_id)) = pending.next_if(|f| f.0.after_step / 50 <= steps) {
                // Only while the server holds nothing: afterwards the endpoint routes the
                // connection id to the connection (the other test covers that).
                if pair.server.is_some() {
                    continue;
                }
                let id = if real_id { conn_id } else { ConnId(other_id) };
                let bytes = f.encode(id, pair.client.initial_seq(), 0);
                let mut out = Vec::new();
                // From the attacker's own address, to the real server's acceptor and key...
                let u = pair.acceptor.on_unknown(pair.now, &pair.key, "10.6.6.6:6", &bytes, &mut out);
                let ok = match u {
                    Unknown::Accept(_) => Err("a spoofer opened a connection"),
                    Unknown::Reply { len } | Unknown::Reset { len } if len > bytes.len() => {
                        Err("an answer larger than its cause")
                    }
                    _ => Ok(()),
                };
                // ...and spoofing the client's address (to an acceptor of the same
                // configuration and key, so the real one's counters stay the client's): a
                // blind spoofer would have to guess the cookie, one chance in 2^45.
                let mut out = Vec::new();
                let u = spoofer.on_unknown(pair.now, &pair.key, support::CLIENT_ADDR, &bytes, &mut out);
                let ok = ok.and(match u {
                    Unknown::Accept(_) => Err("a guessed cookie"),
                    Unknown::Reply { len } | Unknown::Reset { len } if len > bytes.len() => {
                        Err("an answer larger than its cause")
                    }
                    _ => Ok(()),
                });
                if verdict.is_ok() {
                    verdict = ok;
                }
            }
        });
        prop_assert_eq!(verdict, Ok(()));
        prop_assert_eq!(pair.acceptor.stats().accepted, 1);
        prop_assert!(pair.received == payload, "the real transfer was disturbed");
    }
}

/// A peer's worst case for the receiver's memory: during a transfer, thousands of tiny
/// segments, overlapping and duplicated, ahead of the receiver's next expected byte (their
/// bytes are the stream's own, so the stream stays intact). The receiver holds no more than
/// its buffer and its piece bound, and the transfer completes.
#[test]
fn tiny_overlapping_segments_cannot_grow_the_receiver() {
    let cfg = TcpConfig {
        recv_buffer: 64_000,
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(cfg.clone(), 21);
    let conn_id = pair.client.conn_id();
    let payload = data(300_000, 21);
    let mut steps = 0;
    let mut most = (0, 0);
    pair.transfer_with(&payload, 300.0, |pair| {
        steps += 1;
        let now = pair.now;
        let Some(server) = pair.server.as_mut() else {
            return;
        };
        if steps % 10 == 0 {
            let first = server.receiver().rcv_nxt();
            let offset = first - pair.client.initial_seq() - 1;
            for k in 0..2_000u64 {
                let at = offset + 500 + (k * 7919) % 30_000;
                let len = 1 + k % 3;
                let (a, b) = (at as usize, (at + len) as usize);
                if b > payload.len() {
                    continue;
                }
                let mut seg = Vec::new();
                Segment {
                    conn_id,
                    flags: Flags::ACK,
                    seq: first + 500 + (k * 7919) % 30_000,
                    ack: server.sender().snd_nxt(),
                    window: 64_000,
                    ts_val: 0,
                    ts_ecr: 0,
                    options: Options::default(),
                    payload: &payload[a..b],
                }
                .encode(&mut seg);
                let _ = server.handle_datagram(now, &seg);
            }
        }
        let r = server.receiver();
        most.0 = most.0.max(r.buffered());
        most.1 = most.1.max(r.out_of_order_pieces().0);
        assert!(r.buffered() as u64 <= cfg.recv_buffer);
        assert!(r.out_of_order_pieces().0 <= r.out_of_order_pieces().1);
    });
    assert_eq!(pair.received, payload);
    let server = pair.server.as_ref().expect("accepted");
    assert!(
        server.receiver().refused_pieces() > 0,
        "the bound was reached"
    );
    assert!(most.1 <= 64_000 / 1000 + 2, "{most:?}");
}
