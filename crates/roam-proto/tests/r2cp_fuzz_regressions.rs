//! Findings of the `rcp_engine` fuzz target's R²CP half (`fuzz/fuzz_targets/rcp_engine/r2cp.rs`),
//! kept as regression tests.

mod r2cp_support;

use std::time::Duration;

use r2cp_support::{Net, PathSpec};
use roam_proto::r2cp::{PipeRole, Scheme};
use roam_proto::rcp::RcpConfig;
use roam_proto::Time;

fn path(server: usize, delay_ms: u64) -> PathSpec {
    PathSpec {
        server,
        delay: Duration::from_millis(delay_ms),
        rate: 4e6 / 8.0,
        loss: 0.0,
        burst: 0,
        queue: 0,
    }
}

/// APPS bounded each connection's stripes by its share of the buffer only. When connections
/// join, the stripes are dealt anew and each newcomer may bind its share while the old
/// connection's units (bound when it had the whole buffer) are still outstanding: the buffer
/// was charged up to 1 2/3 of its size (fuzz crash: 16 740 of 14 880 bytes). The §3.3.4
/// charge now bounds APPS too.
#[test]
fn apps_connections_joining_do_not_overdraw_the_buffer() {
    let buffer = 64_000;
    let mss = u64::from(RcpConfig::default().mss);
    let config = RcpConfig {
        recv_buffer: buffer,
        initial_window: 2,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, Scheme::Apps { stripe: 8000 }, 2_000_000, 3, 3);
    net.add_pipe(path(0, 40), PipeRole::Primary);
    net.run_until(Time::from_millis(1500));
    net.add_pipe(path(1, 10), PipeRole::Primary);
    net.add_pipe(path(2, 10), PipeRole::Primary);
    let mut peak = 0;
    for ms in 1500..=60_000 {
        net.run_until(Time::from_millis(ms));
        peak = peak.max(net.rx.charged());
        if net.rx.is_closed() {
            break;
        }
    }
    assert!(peak <= buffer + mss, "charged {peak} of {buffer}");
    assert!(net.intact(), "received {} bytes", net.received.len());
}
