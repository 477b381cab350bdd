//! The RCP and R²CP receivers' errors are typed: a library user matches on the variant (a
//! refused configuration names its field, a datagram error says why it was not taken), and
//! the messages are the words the CLI has always shown.

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::r2cp::{R2cpError, R2cpReceiver, Scheme};
use roam_proto::rcp::{RcpCc, RcpConfig, RcpConfigError, RcpError, RcpReceiver};
use roam_proto::Time;
use roam_wire::{ConnId, Data, DecodeError, Flags};

fn connect(config: RcpConfig, range: (u64, u64)) -> Result<RcpReceiver, RcpError> {
    RcpReceiver::connect(
        Arc::new(config),
        RcpCc::Shared(CcKind::NewReno),
        ConnId(9),
        b"obj",
        range,
        Time::ZERO,
    )
}

/// A DATA of connection `conn_id`.
fn data(conn_id: u64) -> Vec<u8> {
    let d = Data {
        conn_id: ConnId(conn_id),
        flags: Flags::ACK,
        seq: 0,
        window: 1 << 20,
        object_len: None,
        ts_val: 1,
        ts_ecr: 0,
        pull_id: 0,
        token: None,
        payload: b"abc",
    };
    let mut out = Vec::new();
    d.encode(&mut out);
    out
}

#[test]
fn config_errors_name_the_field() {
    let cases = [
        (
            RcpConfig {
                mss: 10,
                ..RcpConfig::default()
            },
            RcpConfigError::MssTooSmall,
            "mss: must be at least 64",
        ),
        (
            RcpConfig {
                initial_window: 0,
                ..RcpConfig::default()
            },
            RcpConfigError::ZeroInitialWindow,
            "initial_window: must be at least 1",
        ),
        (
            RcpConfig {
                dup_thresh: 0,
                ..RcpConfig::default()
            },
            RcpConfigError::ZeroDupThresh,
            "dup_thresh: must be at least 1",
        ),
        (
            RcpConfig {
                recv_buffer: 100,
                ..RcpConfig::default()
            },
            RcpConfigError::RecvBufferTooSmall,
            "recv_buffer: must hold at least two segments",
        ),
        (
            RcpConfig {
                min_rto_ms: 0,
                ..RcpConfig::default()
            },
            RcpConfigError::RtoBounds,
            "min_rto_ms: must be positive and not above max_rto_ms",
        ),
    ];
    for (config, want, text) in cases {
        assert_eq!(config.validate(), Err(want));
        let err = connect(config.clone(), (0, u64::MAX)).unwrap_err();
        assert_eq!(err, RcpError::Config(want));
        assert_eq!(err.to_string(), text);
        let err = R2cpReceiver::new(Arc::new(config), Scheme::Rank, b"obj", (0, 10)).unwrap_err();
        assert_eq!(err, R2cpError::Config(want));
        assert_eq!(err.to_string(), format!("config: {text}"));
    }
}

#[test]
fn range_errors_are_typed() {
    let err = connect(RcpConfig::default(), (10, 5)).unwrap_err();
    assert_eq!(err, RcpError::Range);
    assert_eq!(err.to_string(), "range: end before start");
    let err = R2cpReceiver::new(
        Arc::new(RcpConfig::default()),
        Scheme::Rank,
        b"obj",
        (10, 5),
    )
    .unwrap_err();
    assert_eq!(err, R2cpError::Range);
}

#[test]
fn datagram_errors_say_why() {
    let mut rx = connect(RcpConfig::default(), (0, u64::MAX)).unwrap();
    let err = rx.handle_datagram(Time::ZERO, &[]).unwrap_err();
    assert!(
        matches!(err, RcpError::Decode(DecodeError::Truncated { .. })),
        "{err:?}"
    );
    let err = rx.handle_datagram(Time::ZERO, &data(10)).unwrap_err();
    assert_eq!(err, RcpError::ForeignConnection);
    assert_eq!(err.to_string(), "foreign connection id");

    let mut r2 = R2cpReceiver::new(
        Arc::new(RcpConfig::default()),
        Scheme::Rank,
        b"obj",
        (0, 10),
    )
    .unwrap();
    let err = r2.handle_datagram(Time::ZERO, &[]).unwrap_err();
    assert!(
        matches!(err, R2cpError::Datagram(DecodeError::Truncated { .. })),
        "{err:?}"
    );
    let err = r2.handle_datagram(Time::ZERO, &data(10)).unwrap_err();
    assert_eq!(err, R2cpError::ForeignConnection);
    assert_eq!(err.to_string(), "datagram: foreign connection id");
}
