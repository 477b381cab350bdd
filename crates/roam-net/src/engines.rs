//! The engines as the runtime's connections, and the server's acceptor.
//!
//! [`NetConn`] puts the engines' own [`EndpointConnection`] implementations behind one type so
//! that one endpoint (one set of sockets) serves every protocol; [`ServerAcceptor`] hands a
//! datagram for no connection to the engine its packet type names: the TCP-like engine's
//! [`TcpAcceptor`] (SYN cookies) or RCP's [`RcpAcceptor`] (a token the receiver echoes). Both
//! answer statelessly and open a connection only once the peer proved its address.

use std::hash::Hash;
use std::sync::Arc;

use roam_proto::cc::CcKind;
use roam_proto::endpoint::{Acceptor, EndpointConnection, Outgoing, PathId, TokenKey, Unknown};
use roam_proto::linkinfo::LinkInfo;
use roam_proto::r2cp::R2cpReceiver;
use roam_proto::rcp::{ObjectStore, RcpAcceptor, RcpConfig, RcpReceiver, RcpSender};
use roam_proto::tcp::{self, Facts, TcpAcceptor, TcpConfig};
use roam_proto::Time;
use roam_wire::{ConnId, Header, PacketType};

use crate::NetError;

/// One connection of any engine the runtime drives.
#[derive(Debug)]
pub enum NetConn {
    /// A TCP-like connection (either end).
    Tcp(Box<tcp::Connection>),
    /// The sending end of an RCP connection (a server).
    RcpSender(Box<RcpSender>),
    /// The receiving end of an RCP connection (a client fetching an object).
    RcpReceiver(Box<RcpReceiver>),
    /// An R²CP connection (a client fetching an object over several pipes).
    R2cp(Box<R2cpReceiver>),
}

impl NetConn {
    fn inner(&self) -> &dyn EndpointConnection {
        match self {
            NetConn::Tcp(c) => &**c,
            NetConn::RcpSender(c) => &**c,
            NetConn::RcpReceiver(c) => &**c,
            NetConn::R2cp(c) => &**c,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn EndpointConnection {
        match self {
            NetConn::Tcp(c) => &mut **c,
            NetConn::RcpSender(c) => &mut **c,
            NetConn::RcpReceiver(c) => &mut **c,
            NetConn::R2cp(c) => &mut **c,
        }
    }
}

impl EndpointConnection for NetConn {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        self.inner().conn_ids(out);
    }
    fn handle_datagram(&mut self, now: Time, path: PathId, datagram: &[u8]) {
        self.inner_mut().handle_datagram(now, path, datagram);
    }
    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        self.inner_mut().poll_transmit(now, buf)
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.inner().poll_timeout()
    }
    fn handle_timeout(&mut self, now: Time) {
        self.inner_mut().handle_timeout(now);
    }
    fn is_drained(&self) -> bool {
        self.inner().is_drained()
    }
    fn is_finished(&self) -> bool {
        self.inner().is_finished()
    }
    fn memory_bound(&self) -> usize {
        self.inner().memory_bound()
    }
}

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

/// A server's acceptor: TCP-like segments go to the TCP acceptor, RCP requests to the RCP
/// acceptor (serving objects of the store); anything else is dropped.
pub struct ServerAcceptor {
    tcp: TcpAcceptor,
    rcp: RcpAcceptor,
}

impl ServerAcceptor {
    /// Serves `store` over RCP and accepts TCP-like connections with controller `cc`.
    pub fn new(store: Arc<dyn ObjectStore>, cc: CcKind) -> Result<Self, NetError> {
        Ok(ServerAcceptor {
            tcp: TcpAcceptor::new(Arc::new(tcp_config()), cc)?,
            rcp: RcpAcceptor::new(Arc::new(rcp_config()), store),
        })
    }
}

fn boxed<C>(u: Unknown<C>, wrap: impl FnOnce(C) -> NetConn) -> Unknown<NetConn> {
    match u {
        Unknown::Drop => Unknown::Drop,
        Unknown::Reply { len } => Unknown::Reply { len },
        Unknown::Reset { len } => Unknown::Reset { len },
        Unknown::Accept(c) => Unknown::Accept(wrap(c)),
    }
}

impl Acceptor for ServerAcceptor {
    type Connection = NetConn;

    fn on_unknown<A: Hash + ?Sized>(
        &mut self,
        now: Time,
        key: &TokenKey,
        peer: &A,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Unknown<NetConn> {
        out.clear();
        match Header::peek_packet_type(datagram) {
            Ok(PacketType::Segment) => {
                boxed(self.tcp.on_unknown(now, key, peer, datagram, out), |c| {
                    NetConn::Tcp(Box::new(c))
                })
            }
            Ok(PacketType::Request) => {
                boxed(self.rcp.on_unknown(now, key, peer, datagram, out), |c| {
                    NetConn::RcpSender(Box::new(c))
                })
            }
            _ => Unknown::Drop,
        }
    }

    fn refuse(&mut self, now: Time, datagram: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        match Header::peek_packet_type(datagram) {
            Ok(PacketType::Segment) => self.tcp.refuse(now, datagram, out),
            Ok(PacketType::Request) => self.rcp.refuse(now, datagram, out),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

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
