//! The engines as the runtime configures them, and the server's acceptor built from them.
//!
//! The connection type of every engine ([`NetConn`]) and the acceptor that hands a datagram
//! for no connection to the engine its packet type names ([`ServerAcceptor`]) live in the
//! sans-IO core (`roam_proto::endpoint::any`), shared with every host; this module gives the
//! runtime's configurations ([`tcp_config`], [`rcp_config`]) and builds its
//! [`server_acceptor`].

use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::AnyConnection;
pub use roam_proto::endpoint::ServerAcceptor;
use roam_proto::linkinfo::LinkInfo;
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpConfig};
use roam_proto::tcp::{self, Facts, TcpAcceptor, TcpConfig};
use roam_proto::Time;
use roam_wire::ConnId;

use crate::NetError;

/// One connection of any engine the runtime drives: the endpoint layer's
/// [`AnyConnection`] (the simulator's hosts and the runtime hold the same type).
pub type NetConn = AnyConnection;

/// Initial congestion window of the runtime's engines, in segments: RFC 6928's ten, what Linux
/// has used since 2.6.39 and what every kernel stack beside roam in the test bed starts with.
/// The engines' default (one segment, the ns-2 setting the papers' experiments use) cost a
/// download over a 70 ms path three round trips of slow start: 1 MB over the T-Mobile LTE
/// trace took 1.3 s with `roam get` where kernel TCP took 0.7 (`roam testbed --quick`,
/// docs/EMU.md).
pub const INITIAL_WINDOW: u32 = 10;

/// TCP-like send and receive buffer the runtime configures.
pub const TCP_BUFFER: u64 = 4 << 20;

/// The TCP-like configuration the runtime uses: larger buffers and segments than the
/// simulator's defaults, for real links. A connection given facts about a wireless local link
/// (`--link`) reports them to its peer (atl.txt §IV-A, last-link-heuristics.txt). Without
/// stated facts the receiving end estimates them (issue 30: `facts = "estimated"`, Spike on
/// the one-way time; docs/CONTROLLERS.md) and marks holes it judges wireless with ELN, which
/// the sending end honours (`eln`); a link judged wireless is then reported with the estimate.
/// The initial window is [`INITIAL_WINDOW`] segments, as the kernel's.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1400,
        initial_window: INITIAL_WINDOW,
        send_buffer: TCP_BUFFER,
        recv_buffer: TCP_BUFFER,
        report_link_info: true,
        eln: true,
        facts: Facts::Estimated,
        ..TcpConfig::default()
    }
}

/// A client's TCP-like connection (random conn id and ISN) with controller `cc`, given the
/// facts of its local link if the user stated them.
pub fn tcp_connect(
    cc: CcKind,
    now: Time,
    link: Option<LinkInfo>,
) -> Result<tcp::Connection, NetError> {
    let isn = crate::random_u64()? % tcp::MAX_ISN;
    let mut c = tcp::Connection::connect(
        Arc::new(tcp_config()),
        cc,
        ConnId(crate::random_u64()?),
        isn,
        now,
    )?;
    if let Some(info) = link {
        // Stated facts replace the estimate (issue 30).
        c.set_facts_source(Facts::Oracle);
        c.set_link_info(now, info);
    }
    Ok(c)
}

/// The RCP configuration the runtime uses.
pub fn rcp_config() -> RcpConfig {
    RcpConfig {
        mss: 1400,
        initial_window: INITIAL_WINDOW,
        recv_buffer: 2 << 20,
        // RFC 6298 §2.1: 1 s until the first RTT sample. With 200 ms a pipe on a path of
        // 210 ms RTT timed its first request out, spuriously, and started from ssthresh 2:
        // R²CP over 8 + 2 Mb/s (30 / 210 ms) 8.87 Mb/s, 9.17 with 1 s (Linux MPTCP 9.18,
        // same emulated paths). Once sampled the RTO follows the RTT down to the minimum.
        initial_rto_ms: 1000,
        min_rto_ms: 200,
        ..RcpConfig::default()
    }
}

/// A server's acceptor (the endpoint layer's [`ServerAcceptor`]) with the runtime's
/// configurations: serves `store` over RCP and accepts TCP-like connections with controller
/// `cc`.
pub fn server_acceptor(
    store: Arc<dyn ObjectStore>,
    cc: CcKind,
) -> Result<ServerAcceptor, NetError> {
    Ok(ServerAcceptor::new(
        TcpAcceptor::new(Arc::new(tcp_config()), cc)?,
        RcpAcceptor::new(Arc::new(rcp_config()), store),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use roam_proto::endpoint::{Acceptor, TokenKey, Unknown};
    use roam_wire::Segment;

    use super::*;

    /// Drives a client through the server acceptor's SYN-cookie handshake; returns the
    /// client's datagrams (SYN, then the ACK completing the handshake).
    fn handshake(link: Option<LinkInfo>) -> Vec<Vec<u8>> {
        let now = Time::from_millis(1);
        let key = TokenKey::new([7; 16]);
        let mut client = tcp_connect(CcKind::NewReno, now, link).unwrap();
        let mut acceptor = TcpAcceptor::new(Arc::new(tcp_config()), CcKind::NewReno).unwrap();
        let mut sent = Vec::new();
        let mut buf = Vec::new();
        while client.poll_transmit(now, &mut buf).is_some() {
            sent.push(buf.clone());
        }
        let mut reply = Vec::new();
        let Unknown::Reply { len } = acceptor.on_unknown(now, &key, &1u8, &sent[0], &mut reply)
        else {
            panic!("no SYN-ACK");
        };
        client.handle_datagram(now, &reply[..len]).unwrap();
        while client.poll_transmit(now, &mut buf).is_some() {
            sent.push(buf.clone());
        }
        sent
    }

    #[test]
    fn stated_link_facts_reach_the_tcp_engine_and_its_reports() {
        let wireless = LinkInfo {
            wireless: true,
            loss_prob: 0.01,
            per: 0.02,
            one_way_delay: Duration::from_millis(20),
            bandwidth_bps: 2_000_000,
            ..LinkInfo::default()
        };
        let sent = handshake(Some(wireless));
        assert!(sent.len() >= 2, "the handshake did not complete");
        let ack = Segment::decode(sent.last().unwrap()).unwrap();
        let report = ack.options.link_info.expect("link facts reported");
        assert_eq!((report.p_w_ppm, report.d_w_us), (10_000, 20_000));
        let last = ack.options.last_link.expect("last-link facts reported");
        assert_eq!((last.bandwidth_bps, last.per_ppm), (2_000_000, 20_000));
        // Without facts nothing is reported.
        let plain = handshake(None);
        for d in &plain {
            let s = Segment::decode(d).unwrap();
            assert!(s.options.link_info.is_none() && s.options.last_link.is_none());
        }
    }

    /// Issue 30: without `--link` a connection estimates the loss facts itself; stated facts
    /// replace the estimate. (Where the estimate is reported: `tcp/estimated_facts.rs`.)
    #[test]
    fn facts_are_estimated_unless_stated() {
        let now = Time::from_millis(1);
        let c = tcp_connect(CcKind::NewReno, now, None).unwrap();
        assert_eq!(c.estimated_loss_prob(), Some(0.0));
        let stated = tcp_connect(CcKind::NewReno, now, Some(LinkInfo::default())).unwrap();
        assert_eq!(stated.estimated_loss_prob(), None);
        assert!(tcp_config().eln && tcp_config().facts == Facts::Estimated);
    }
}
