//! The TCP-like engine under the endpoint contract ([`crate::endpoint`]): a [`Connection`] is
//! a single-path [`EndpointConnection`] (its one path is [`PathId::PRIMARY`]); its acceptor is
//! [`super::TcpAcceptor`].

use roam_wire::ConnId;

use super::{Connection, State};
use crate::endpoint::{EndpointConnection, Outgoing, PathId};
use crate::Time;

impl EndpointConnection for Connection {
    fn conn_ids(&self, out: &mut Vec<(ConnId, PathId)>) {
        out.push((self.conn_id(), PathId::PRIMARY));
    }

    fn handle_datagram(&mut self, now: Time, _path: PathId, datagram: &[u8]) {
        // Undecodable datagrams are counted in the connection's stats.
        let _ = Connection::handle_datagram(self, now, datagram);
    }

    fn poll_transmit(&mut self, now: Time, buf: &mut Vec<u8>) -> Option<Outgoing> {
        Connection::poll_transmit(self, now, buf).map(|t| Outgoing {
            path: PathId::PRIMARY,
            len: t.len,
            more: t.more,
        })
    }

    fn poll_timeout(&self) -> Option<Time> {
        Connection::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Time) {
        Connection::handle_timeout(self, now);
    }

    /// Closed (cleanly, reset, timed out or aborted), its reset sent, its data read and its
    /// events taken.
    fn is_drained(&self) -> bool {
        self.state() == State::Closed && self.is_quiet() && self.receiver().readable() == 0
    }

    /// Our FIN acknowledged (so all our data: FIN-WAIT-2, TIME-WAIT) or closed.
    fn is_finished(&self) -> bool {
        matches!(
            self.state(),
            State::FinWait2 | State::TimeWait | State::Closed
        )
    }

    fn memory_bound(&self) -> usize {
        Connection::memory_bound(self)
    }
}
