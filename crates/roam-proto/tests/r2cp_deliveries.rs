//! `R2cpReceiver::record_deliveries`: which pipe delivered which bytes, over the small
//! multi-path network of `r2cp_support` (two pipes to two servers, one lossy).

mod r2cp_support;

use std::collections::BTreeMap;
use std::time::Duration;

use r2cp_support::{Net, PathSpec};
use roam_proto::r2cp::{PipeRole, RangeSet, Scheme};
use roam_proto::rcp::RcpConfig;
use roam_proto::Time;

fn path(server: usize, delay_ms: u64, loss: f64) -> PathSpec {
    PathSpec {
        server,
        delay: Duration::from_millis(delay_ms),
        rate: 4e6 / 8.0,
        loss,
        burst: 0,
        queue: 0,
    }
}

#[test]
fn every_stored_byte_is_recorded_once_with_the_pipe_that_delivered_it() {
    let len = 1_500_000;
    let config = RcpConfig {
        recv_buffer: 256_000,
        ..RcpConfig::default()
    };
    let mut net = Net::new(config, Scheme::Rank, len, 2, 5);
    net.rx.record_deliveries();
    net.add_pipe(path(0, 20, 0.0), PipeRole::Primary);
    net.add_pipe(path(1, 60, 0.02), PipeRole::Primary);
    net.run_until(Time::from_millis(60_000));
    assert!(net.intact());
    let log = net.rx.take_deliveries();
    let mut covered = RangeSet::new();
    let mut per_pipe = BTreeMap::new();
    for &(pipe, start, end) in &log {
        assert!(start < end && end <= len, "{start}..{end}");
        for (s, e) in covered.iter() {
            assert!(e <= start || s >= end, "{start}..{end} recorded twice");
        }
        covered.insert(start, end);
        *per_pipe.entry(pipe).or_insert(0u64) += end - start;
    }
    assert_eq!(covered.iter().collect::<Vec<_>>(), vec![(0, len)]);
    assert_eq!(per_pipe.len(), 2, "both pipes delivered: {per_pipe:?}");
    assert!(net.rx.take_deliveries().is_empty(), "drained");
}

#[test]
fn nothing_is_recorded_unless_asked() {
    let mut net = Net::new(RcpConfig::default(), Scheme::Rank, 200_000, 1, 1);
    net.add_pipe(path(0, 20, 0.0), PipeRole::Primary);
    net.run_until(Time::from_millis(30_000));
    assert!(net.intact());
    assert!(net.rx.take_deliveries().is_empty());
}
